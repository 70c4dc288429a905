"""Provenance of the behaviour study (A15, finding 9; lwsim/figures/studies/behaviour/): which inputs
each stored number was computed from (issue 41 item 6).

The ``a_behaviour`` experiment runs through the registry at a size below SMOKE's; every output is
recomputed from the inputs it SHOULD use with lwsim's public API (lwsim.tasks, lwsim.make_cell,
lwsim.train, lwsim.optim, lwsim.window, lwsim.stats, lwsim.diagnostics), and the inputs it should
NOT use (the other training point, the other optimizer state, the training rows, the other
stream) are checked to give different numbers. The configuration (ε, lag grid) is chosen so that
Ĥ_N of every decoy differs from the stored one; the tests assert that too, so they cannot pass
vacuously. Figure and finding tests feed hand-built runs whose right and decoy keys disagree.

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 a_behaviour: the "early" point with the final optimizer's rates instead of the checkpoint's
     → test_init_and_early_points_from_their_own_weights_and_rates
  P2 a_behaviour: the "init" point from the trained parameters (p) instead of p0
     → test_init_and_early_points_from_their_own_weights_and_rates
  P3 a_behaviour: the final tables on ds.x_train/ds.y_train instead of the held-out rows
     → test_final_tables_and_windows_from_the_final_model_on_held_out_rows
  P4 behaviour_dataset: the training rows from SeedSequence([seed, TRAIN_STREAM]) (N dropped)
     → test_training_rows_and_learned_window_from_the_seed_budget_stream
  P5 a_behaviour: the envelope on the early checkpoint's weights
     → test_envelope_from_the_final_model
  P6 collect: h_diag_points "init" filled from the "early" key
     → test_collect_copies_each_run_key_to_its_own_place
  P7 f9: the verdict from tracking against h_beh_smooth instead of h_beh
     → test_finding9_verdict_reads_h_beh_not_the_smooth_window
  P8 a_behaviour: best_step / final_val_r2 read at the last evaluation instead of the best
     → NOT caught at first (in the first configuration the best evaluation was the last one);
     test_best_step_and_r2_at_the_best_validation_evaluation (lr 0.1, best evaluation in the middle)
     was written for it and catches it
"""
import numpy as np
import pytest

import lwsim
import lwsim.figures.studies  # noqa: F401  (registers the experiments)
from lwsim import diagnostics as dg
from lwsim import optim, stats
from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies.behaviour import experiment as eb
from lwsim.figures.studies.behaviour import findings as fb
from lwsim.figures.studies.behaviour.figures import collect
from lwsim.tasks import Dataset
from lwsim.tasks import make as make_task
from lwsim.train import train
from lwsim.window import window_chain

N = 32       # the largest budget (the envelope is stored) and = n_diag (training rows of the held-out shape)
EPS = 0.5
NULLS3 = ("lag", "full", "author")


def _cfg(cell="gru", **kw):
    # lr 3e-2, ε 0.5, lags 1 … 16: a configuration where Ĥ_N of every decoy below differs (scanned)
    c = {k: v for k, v in SMOKE["a_behaviour"].items() if k != "seeds"}
    return {**c, **dict(cell=cell, seed=212, N=N, backend="numpy", eps=EPS, lags=list(range(1, 17)),
                        n_grid=[2, 4, 8, 16, 32, 64], lr=3e-2), **kw}


def _data(c, stream):
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"], coefs=c["task_coefs"],
                     sigma_y=c["sigma_y"])
    x, y = task.batch(c["N"], np.random.SeedSequence(stream))
    fixed = task.dataset(0, c["n_val"], c["n_diag"], seed=c["seed"])
    return Dataset(x_train=x, y_train=y, x_val=fixed.x_val, y_val=fixed.y_val, x_diag=fixed.x_diag,
                   y_diag=fixed.y_diag, readout=task.readout, task=task, seed=c["seed"])


def _retrain(c, stream=None):
    """The run's training from lwsim's public API → (float64 cell, float64 p0, float64 result, data)."""
    ds = _data(c, stream or [c["seed"], c["N"], eb.TRAIN_STREAM])
    opts = {"layernorm": True, "readout": "every", "dtype": "float32"}
    if c["cell"] == "constgate":
        opts["s"] = c["s0"]
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], **opts)
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
    res = train(cell, p0, ds, optimizer=c["optimizer"],
                optimizer_kwargs={"lr": c["lr"], "weight_decay": c["weight_decay"]}, steps=c["steps"],
                batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"],
                val_every=c["val_every"], best_checkpoint=True, progress=False,
                checkpoints=[max(1, c["steps"] // 10)])
    return (cell.with_dtype("float64"), {k: np.asarray(v, np.float64) for k, v in p0.items()},
            res.astype("float64"), ds)


def _tables(cell, p, rates, x, y, c, nulls):
    ch = window_chain(cell, p, rates, x, y, c["lags"], c["n_grid"], nulls=nulls, envelope=False, K=c["K"],
                      seed=c["seed"], backend=c["backend"], eps=c["eps"])
    return {n: next(iter(t.values())) for n, t in ch.tables.items()}


def _h(cell, p, rates, x, y, c, nulls):
    return {n: float(stats.learnability_window(t.lags, t.n_hat, c["N"]))
            for n, t in _tables(cell, p, rates, x, y, c, nulls).items()}


@pytest.fixture(scope="module")
def run():
    c = _cfg()
    return c, EXPERIMENTS["a_behaviour"](c), _retrain(c)


def test_final_tables_and_windows_from_the_final_model_on_held_out_rows(run):
    c, out, (cell, p0, res, ds) = run
    t = _tables(cell, res.params, res.optimizer, ds.x_diag, ds.y_diag, c, NULLS3)
    assert out["nulls"] == list(NULLS3)
    for n in NULLS3:
        np.testing.assert_array_equal(out[f"n_hat_{n}"], t[n].n_hat)
        assert out[f"h_diag_{n}"] == float(stats.learnability_window(t[n].lags, t[n].n_hat, N))
    k = max(1, c["steps"] // 10)
    opt_k = optim.from_state_dict(res.checkpoints[k], res.checkpoint_opt_states[k])
    for p, rates, x, y in ((res.checkpoints[k], opt_k, ds.x_diag, ds.y_diag),
                           (res.params, opt_k, ds.x_diag, ds.y_diag),
                           (res.params, res.optimizer, ds.x_train, ds.y_train)):
        d = _tables(cell, p, rates, x, y, c, NULLS3)
        assert any(not np.array_equal(out[f"n_hat_{n}"], d[n].n_hat) for n in NULLS3)


def test_init_and_early_points_from_their_own_weights_and_rates(run):
    c, out, (cell, p0, res, ds) = run
    k = max(1, c["steps"] // 10)
    pk = res.checkpoints[k]
    opt_k = optim.from_state_dict(pk, res.checkpoint_opt_states[k])
    lr = float(c["lr"])
    x, y = ds.x_diag, ds.y_diag
    right = {"init": (p0, lr), "early": (pk, opt_k)}
    stored = {pt: {n: out[f"h_diag_{n}_{pt}"] for n in ("lag", "full")} for pt in right}
    for pt, (p, rates) in right.items():
        assert stored[pt] == _h(cell, p, rates, x, y, c, ("lag", "full")), pt
    decoys = {"init": [(res.params, lr, x, y), (pk, lr, x, y), (p0, opt_k, x, y), (p0, lr, ds.x_train, ds.y_train)],
              "early": [(pk, res.optimizer, x, y), (res.params, opt_k, x, y), (p0, lr, x, y),
                        (pk, opt_k, ds.x_train, ds.y_train)]}
    for pt, cases in decoys.items():
        for i, (p, rates, xx, yy) in enumerate(cases):
            assert _h(cell, p, rates, xx, yy, c, ("lag", "full")) != stored[pt], (pt, i)


def test_training_rows_and_learned_window_from_the_seed_budget_stream(run):
    c, out, (cell, _, res, ds) = run

    def learned(cl, p, d):
        yh = cl.forward(p, d.x_diag, backend="numpy").y
        co = lag_coefficients(yh, d.x_diag, d.task.u, np.arange(1, c["beh_max_lag"] + 1))
        return co, behavioural_window(co, c["task_lags"], c["task_coefs"], frac=c["frac"], z_band=c["z_band"])

    co, win = learned(cell, res.params, ds)
    np.testing.assert_array_equal(out["beh_lags"], np.arange(1, c["beh_max_lag"] + 1))
    np.testing.assert_array_equal(out["c_hat"], co.c_hat)
    np.testing.assert_array_equal(out["c_se"], co.se)
    assert (out["h_beh"], out["h_beh_smooth"]) == (win.h, win.h_smooth)
    np.testing.assert_array_equal(out["ratio"], win.ratio)
    # the early checkpoint, or another stream, gives another ĉ
    k = max(1, c["steps"] // 10)
    assert not np.array_equal(learned(cell, res.checkpoints[k], ds)[0].c_hat, out["c_hat"])
    for stream in ([c["seed"]], [c["seed"], eb.TRAIN_STREAM], [c["seed"], c["N"] // 2, eb.TRAIN_STREAM]):
        cl, _, r2, d2 = _retrain(c, stream)
        assert not np.array_equal(learned(cl, r2.params, d2)[0].c_hat, out["c_hat"]), stream


def test_envelope_from_the_final_model(run):
    c, out, (cell, p0, res, ds) = run
    lags = np.asarray(c["lags"])
    env = dg.envelope(cell, res.params, ds.x_diag, res.optimizer, lags, backend="numpy", progress=False)
    np.testing.assert_array_equal(out["f"], env.f)
    k = max(1, c["steps"] // 10)
    opt_k = optim.from_state_dict(res.checkpoints[k], res.checkpoint_opt_states[k])
    for p, rates, x in ((res.checkpoints[k], opt_k, ds.x_diag), (res.params, opt_k, ds.x_diag),
                        (res.params, res.optimizer, ds.x_train)):
        assert not np.array_equal(dg.envelope(cell, p, x, rates, lags, backend="numpy", progress=False).f, out["f"])
    assert "f" not in EXPERIMENTS["a_behaviour"](dict(c, N=16))    # only the largest budget stores it


def test_best_step_and_r2_at_the_best_validation_evaluation():
    """lr 0.1, 12 steps: the best validation evaluation is neither the first nor the last."""
    c = _cfg(lr=0.1, steps=12, N=16)
    out = EXPERIMENTS["a_behaviour"](c)
    cv = _retrain(c)[2].curves
    i = int(np.argmin(cv["val_mse"]))
    assert 0 < i < len(cv["val_mse"]) - 1
    assert out["best_step"] == int(cv["val_step"][i]) and out["final_val_r2"] == float(cv["val_r2"][i])
    assert out["final_val_r2"] not in (float(cv["val_r2"][-1]), float(cv["val_r2"][0]))


# --- figure data and finding 9: hand-built runs --------------------------------------------------

def _runs(h_beh, h_smooth, h_lag, h_full, seeds=(1, 2, 3), Ns=(8, 16, 32), cells=("gru", "lstm")):
    """Runs with h_beh etc. given as functions of (cell index, seed, N)."""
    runs = []
    for ci, cl in enumerate(cells):
        for s in seeds:
            for n in Ns:
                r = {"h_beh": h_beh(ci, s, n), "h_beh_smooth": h_smooth(ci, s, n), "nulls": ["lag", "full"],
                     "h_diag_lag": h_lag(ci, s, n), "h_diag_full": h_full(ci, s, n),
                     "h_diag_lag_init": 100.0 + ci, "h_diag_lag_early": 200.0 + s,
                     "h_diag_full_init": 300.0 + n, "h_diag_full_early": 400.0}
                runs.append(({"cell": cl, "seed": s, "N": n}, r))
    return runs


def test_collect_copies_each_run_key_to_its_own_place():
    runs = _runs(lambda c, s, n: float(n + s), lambda c, s, n: float(-n), lambda c, s, n: float(c + 10 * s),
                 lambda c, s, n: float(n * 1000 + c))
    data = collect(runs)
    for (cfg, r), p in zip(runs, data["scatter"]):
        assert (p["cell"], p["seed"], p["N"]) == (cfg["cell"], cfg["seed"], cfg["N"])
        assert (p["h_beh"], p["h_beh_smooth"]) == (r["h_beh"], r["h_beh_smooth"])
        assert p["h_diag"] == {"lag": r["h_diag_lag"], "full": r["h_diag_full"]}
        assert p["h_diag_points"] == {f"{n}/{q}": r[f"h_diag_{n}_{q}"] for n in ("lag", "full")
                                      for q in ("init", "early")}
    d = data["cells"]["gru"]
    hb = np.array([[n + s for n in (8, 16, 32)] for s in (1, 2, 3)], float)
    np.testing.assert_array_equal(d["h_beh_seeds"], hb)
    assert d["growth"] == fb.growth_law([8, 16, 32], hb.mean(0))                 # H^beh, not the smooth one
    np.testing.assert_array_equal(d["h_diag"]["full"]["seeds"], np.array([[n * 1000.0 for n in (8, 16, 32)]] * 3))
    np.testing.assert_array_equal(d["h_diag"]["lag"]["seeds"], np.array([[10.0 * s] * 3 for s in (1, 2, 3)]))


def test_finding9_verdict_reads_h_beh_not_the_smooth_window():
    # Ĥ_N (lag) follows H^beh exactly and runs against the smooth window; the full null is noise
    rng = np.random.default_rng(3)
    runs = _runs(lambda c, s, n: float(n + 7 * c + 0.1 * s), lambda c, s, n: -float(n + 7 * c + 0.1 * s),
                 lambda c, s, n: float(n + 7 * c + 0.1 * s), lambda c, s, n: float(rng.random()))
    a15 = collect(runs)
    nine = fb.f9({"A15": a15})
    assert nine[1] == "reproduced"
    track = fb.tracking(a15, "h_beh")
    assert track["lag"]["pooled"] == 1.0 and fb.verdict(track)[1] == "lag"
    assert fb.tracking(a15, "h_beh_smooth")["lag"]["pooled"] == -1.0
    # swapped: the smooth window follows Ĥ_N, H^beh runs against it → not reproduced
    runs2 = _runs(lambda c, s, n: -float(n + 7 * c + 0.1 * s), lambda c, s, n: float(n + 7 * c + 0.1 * s),
                  lambda c, s, n: float(n + 7 * c + 0.1 * s), lambda c, s, n: float(n + 7 * c + 0.1 * s))
    assert fb.f9({"A15": collect(runs2)})[1] == "not reproduced"
    # the finding reads rendered["A15"], not another figure's data
    assert fb.f9({"A16": a15}) is None
