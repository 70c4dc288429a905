"""Provenance of the delay study (A16, finding 10; lwsim/figures/studies/delay.py): which inputs
each stored number was computed from (issue 41 item 6).

Each test recomputes an output of the ``a_delay`` experiment (run through the registry, at a size
below SMOKE's) from the inputs it SHOULD use, with the library's public functions (lwsim.tasks,
lwsim.make_cell, lwsim.train, lwsim.optim, lwsim.window, lwsim.diagnostics.behaviour), checks
equality, and checks that the inputs it should NOT use (the other training point, the other
optimizer state, the training rows, the other data stream) give a different value, so a swap
would be caught. The scoring tests feed hand-built rows whose right and decoy columns disagree.

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 a_delay: "early" uses the final optimizer's rates instead of the checkpoint's state
     → test_every_training_point_diagnosed_from_its_own_weights_and_rates
  P2 a_delay: the diagnostic reads ds.x_train/ds.y_train instead of the held-out rows
     → test_every_training_point_diagnosed_from_its_own_weights_and_rates
  P3 delay_dataset: training rows drawn without ℓ* in the stream (SeedSequence([seed, N, …]))
     → test_training_rows_come_from_the_seed_delay_budget_stream
  P4 a_delay: ĉ from the early checkpoint's forward pass instead of the final model's
     → test_learned_and_r2_read_the_final_model_on_the_held_out_rows
  P5 score: balanced accuracy of n_star ≤ N instead of n_hat ≤ N
     → test_score_reads_each_null_and_point_from_its_own_column
  P6 score: every point's AUC read from the "<null>/init" scores (with_ci(f"{null}/init"))
     → test_score_reads_each_null_and_point_from_its_own_column
  P7 _headline: the verdict read from another figure's score (rendered["A15"])
     → test_finding10_lines_read_the_rendered_a16_score
  P8 dynamic_range: the smallest and largest budgets swapped
     → test_dynamic_range_reads_learned_at_the_extreme_budgets_not_r2
"""
import numpy as np
import pytest

import lwsim
import lwsim.figures.studies  # noqa: F401  (registers the experiments)
from lwsim import optim
from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import delay as dl
from lwsim.tasks import Dataset
from lwsim.tasks import make as make_task
from lwsim.train import train
from lwsim.window import window_chain

N = 32          # = n_diag, so the training rows have the held-out rows' shape (a swap would not raise)


def _cfg(cell="gru"):
    c = {k: v for k, v in SMOKE["a_delay"].items() if k not in ("seeds", "delays")}
    return dict(c, cell=cell, seed=212, delay=2, N=N, backend="numpy", steps=6, early=2, val_every=2)


def _data(c, stream):
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=[c["delay"]], coefs=[c["coef"]],
                     sigma_y=c["sigma_y"])
    x, y = task.batch(c["N"], np.random.SeedSequence(stream))
    fixed = task.dataset(0, c["n_val"], c["n_diag"], seed=c["seed"])
    return Dataset(x_train=x, y_train=y, x_val=fixed.x_val, y_val=fixed.y_val, x_diag=fixed.x_diag,
                   y_diag=fixed.y_diag, readout=task.readout, task=task, seed=c["seed"])


def _retrain(c, stream=None):
    """The run's training redone from lwsim's public API: (float64 cell, p0, result, dataset)."""
    stream = stream or [c["seed"], c["delay"], c["N"], dl.TRAIN_STREAM]
    ds = _data(c, stream)
    opts = {"layernorm": True, "readout": "every", "dtype": "float32"}
    if c["cell"] == "constgate":
        opts["s"] = c["s0"]
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], **opts)
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
    res = train(cell, p0, ds, optimizer=c["optimizer"],
                optimizer_kwargs={"lr": c["lr"], "weight_decay": c["weight_decay"]}, steps=c["steps"],
                batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"],
                val_every=c["val_every"], best_checkpoint=True, progress=False, checkpoints=[c["early"]])
    p0 = {k: np.asarray(v, np.float64) for k, v in p0.items()}
    return cell.with_dtype("float64"), p0, res.astype("float64"), ds


def _window(cell, p, rates, x, y, c):
    """{null: (N*(ℓ*), N̂(ℓ*))} straight from lwsim.window's chain at the task lag."""
    ch = window_chain(cell, p, rates, x, y, [c["delay"]], c["n_grid"], nulls=dl.NULLS, envelope=False, K=c["K"],
                      seed=c["seed"], backend=c["backend"], eps=c["eps"])
    return {n: (float(next(iter(t.values())).n_star[0]), float(next(iter(t.values())).n_hat[0]))
            for n, t in ch.tables.items()}


def _stored(out, point):
    return {n: (out[f"n_star_{n}_{point}"], out[f"n_hat_{n}_{point}"]) for n in dl.NULLS}


def _n_stars(w):
    return [w[n][0] for n in dl.NULLS]


@pytest.fixture(scope="module")
def run():
    c = _cfg()
    out = EXPERIMENTS["a_delay"](c)
    return c, out, _retrain(c)


def test_every_training_point_diagnosed_from_its_own_weights_and_rates(run):
    c, out, (cell, p0, res, ds) = run
    k = c["early"]
    pk = res.checkpoints[k]
    opt_k = optim.from_state_dict(pk, res.checkpoint_opt_states[k])
    x, y = ds.x_diag, ds.y_diag
    right = {"init": (p0, float(c["lr"])), "early": (pk, opt_k), "final": (res.params, res.optimizer)}
    for point, (p, rates) in right.items():
        assert _stored(out, point) == _window(cell, p, rates, x, y, c), point
    # decoys: each differs from the stored numbers, so a swap would be seen
    decoys = {
        "init": [(res.params, float(c["lr"]), x, y), (p0, res.optimizer, x, y),
                 (p0, float(c["lr"]), ds.x_train, ds.y_train)],
        "early": [(pk, res.optimizer, x, y), (res.params, opt_k, x, y), (p0, opt_k, x, y),
                  (pk, opt_k, ds.x_train, ds.y_train)],
        "final": [(pk, opt_k, x, y), (res.params, opt_k, x, y), (pk, res.optimizer, x, y),
                  (res.params, res.optimizer, ds.x_train, ds.y_train)],
    }
    for point, cases in decoys.items():
        for i, (p, rates, xx, yy) in enumerate(cases):
            assert _n_stars(_window(cell, p, rates, xx, yy, c)) != _n_stars(_stored(out, point)), (point, i)


def test_early_point_is_the_model_after_early_steps(run):
    """The stored early checkpoint = a training stopped after ``early`` steps (not one step off)."""
    c, _, (_, _, res, ds) = run
    k = c["early"]
    for steps, same in ((k, True), (k + 1, False), (k - 1, False)):
        opts = {"layernorm": True, "readout": "every", "dtype": "float32"}
        cell = lwsim.make_cell(c["cell"], c["D"], c["H"], **opts)
        p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
        r = train(cell, p0, ds, optimizer=c["optimizer"],
                  optimizer_kwargs={"lr": c["lr"], "weight_decay": c["weight_decay"]}, steps=steps,
                  batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"],
                  val_every=c["val_every"], best_checkpoint=False, progress=False).astype("float64")
        eq = all(np.array_equal(res.checkpoints[k][n], r.params[n]) for n in r.params)
        assert eq == same, steps


def test_training_rows_come_from_the_seed_delay_budget_stream(run):
    c, out, (cell, _, res, ds) = run
    y_hat = np.asarray(cell.forward(res.params, ds.x_diag, backend="numpy").y)
    co = lag_coefficients(y_hat, ds.x_diag, ds.task.u, [c["delay"]])
    assert out["c_hat"] == float(co.c_hat[0])
    # the same training with the seed's own stream, or without ℓ* or N in it, learns another ĉ
    for stream in ([c["seed"]], [c["seed"], c["N"], dl.TRAIN_STREAM], [c["seed"], c["delay"], dl.TRAIN_STREAM],
                   [c["seed"], c["delay"] + 1, c["N"], dl.TRAIN_STREAM]):
        cl, _, r2, d2 = _retrain(c, stream)
        yh = np.asarray(cl.forward(r2.params, d2.x_diag, backend="numpy").y)
        assert float(lag_coefficients(yh, d2.x_diag, d2.task.u, [c["delay"]]).c_hat[0]) != out["c_hat"], stream


def test_learned_and_r2_read_the_final_model_on_the_held_out_rows(run):
    c, out, (cell, p0, res, ds) = run
    lag = c["delay"]

    def outcome(p, x, y):
        yh = np.asarray(cell.forward(p, x, backend="numpy").y)
        co = lag_coefficients(yh, x, ds.task.u, [lag])
        win = behavioural_window(co, [lag], [c["coef"]], frac=c["frac"], z_band=c["z_band"])
        yd = np.asarray(y, float).reshape(yh.shape)
        return float(co.c_hat[0]), float(co.se[0]), bool(win.recovered[0]), 1.0 - float(np.mean((yd - yh) ** 2) / np.var(yd))

    right = outcome(res.params, ds.x_diag, ds.y_diag)
    assert (out["c_hat"], out["c_se"], out["learned"], out["r2"]) == right
    for p, x, y in ((res.checkpoints[c["early"]], ds.x_diag, ds.y_diag), (p0, ds.x_diag, ds.y_diag),
                    (res.params, ds.x_train, ds.y_train)):
        wrong = outcome(p, x, y)
        assert wrong[0] != right[0] and wrong[1] != right[1] and wrong[3] != right[3]


# --- scoring: hand-built rows where the right column and the decoys disagree ----------------------

def _rows(good_key, seeds=(1, 2, 3)):
    """Runs where −log(N*/N) of ``good_key``'s column ranks learned perfectly, every other column
    inversely; n_hat columns: N̂ ≤ N exactly when learned for ``good_key``, never otherwise."""
    runs = []
    rng = np.random.default_rng(0)
    for cell in ("constgate", "gru"):
        for s in seeds:
            for d, n in ((2, 8), (2, 32), (5, 8), (5, 32)):
                learned = bool(rng.random() < 0.5) if (d, n) != (2, 32) else True
                learned = learned if (d, n) != (5, 8) else False
                r = {"N": n, "delay": d, "learned": learned, "r2": 0.0 if learned else 0.9, "c_hat": 0.1}
                for null in dl.NULLS:
                    for pt in dl.POINTS:
                        good = f"{null}/{pt}" == good_key
                        ratio = (0.1 if learned else 10.0) if good else (10.0 if learned else 0.1)
                        r[f"n_star_{null}_{pt}"] = ratio * n
                        r[f"n_hat_{null}_{pt}"] = (n if learned else 10 * n) if good else 10 * n
                runs.append(({"cell": cell, "seed": s}, r))
    return runs


def test_table_copies_each_column_to_its_own_key():
    cfg = {"cell": "lstm", "seed": 7}
    r = {"N": 32, "delay": 5, "learned": True, "r2": 0.5, "c_hat": 0.25}
    for i, null in enumerate(dl.NULLS):
        for j, pt in enumerate(dl.POINTS):
            r[f"n_star_{null}_{pt}"], r[f"n_hat_{null}_{pt}"] = 10.0 * i + j, 100.0 + 10 * i + j
    (row,) = dl.table([(cfg, r)])
    for key in ("n_star", "n_hat"):
        for null in dl.NULLS:
            for pt in dl.POINTS:
                assert row[f"{key}_{null}_{pt}"] == r[f"{key}_{null}_{pt}"]
    assert (row["cell"], row["seed"], row["delay"], row["N"], row["learned"]) == ("lstm", 7, 5, 32, True)


@pytest.mark.parametrize("good", ["lag/final", "full/early", "lag/init"])
def test_score_reads_each_null_and_point_from_its_own_column(good):
    sc = dl.score(dl.table(_rows(good)), n_boot=20)
    for key, v in sc["points"].items():
        want = 1.0 if key == good else 0.0
        assert v["auc"][0] == want, key
        assert all(x == want for x in v["per_cell"].values()), key
        # balanced accuracy reads N̂ ≤ N (n_hat), not N* (whose column ranks the decoys inversely)
        assert v["balanced_accuracy"] == (1.0 if key == good else 0.5), key
    assert sc["best"] == good


def test_dynamic_range_reads_learned_at_the_extreme_budgets_not_r2():
    rows = dl.table(_rows("lag/final"))
    for r in rows:
        r["learned"] = r["N"] == 32            # learned exactly at the largest N; r2 says the opposite
    dr = dl.dynamic_range(rows)
    assert dr["gru"] == {"unlearned_at_max_N": [], "learned_at_min_N": []}


def test_finding10_lines_read_the_rendered_a16_score():
    sc = dl.score(dl.table(_rows("full/final")), n_boot=20)
    decoy = dict(sc, verdict="decoy verdict")
    rendered = {"A16": {"score": sc, "dynamic_range": {}}, "A15": {"score": decoy}}
    assert dl._headline(rendered) == [(10, dl.TITLE, sc["verdict"])]
    lines = dl.finding10_lines(rendered)
    assert f"**{sc['verdict']}** (best null/point: full/final)" in lines[2]
