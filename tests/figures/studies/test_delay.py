"""Tests of lwsim/figures/studies/delay.py (laid out like the code: docs/testing.md).

Provenance of the delay study (A16, finding 10; lwsim/figures/studies/delay.py): which inputs
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

A16 (docs/experiments.md §5.7): the delay task, the diagnostic at three training points, the
study end to end at smoke size.

Tests that kill the surviving mutants of mutmut on lwsim/figures/studies/delay.py (A16, finding 10;
issue 32, docs/testing.md): the score's wiring and numbers on a hand-made 16-run table, the dynamic
range's boundaries, finding 10's whole text, the run table, the cost model and the run plan. Every
expected value is written out by hand; none compares the code with itself."""


from __future__ import annotations

import math

import numpy as np
import pytest

import lwsim
import lwsim.figures.studies
from lwsim import optim
from lwsim.diagnostics import matched_statistic
from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import delay as dl, preset_sizes
from lwsim.figures.training import _a_cell, _a_params, a_windows
from lwsim.stats import prediction as pr
from lwsim.tasks import Dataset, make as make_task
from lwsim.train import train
from lwsim.window import window_chain


SMOKE = preset_sizes("smoke")


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
def run(point_detection):
    c = _cfg()
    out = EXPERIMENTS["a_delay"](c)
    return c, out, _retrain(c)


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


def _cfg_delay(cell="gru", N=16, delay=3, **kw):
    c = {k: v for k, v in SMOKE["a_delay"].items() if k not in ("seeds", "delays")}
    return dict(c, cell=cell, seed=212, delay=delay, N=N, backend="numpy", **kw)


def _row(cell, seed, delay, N, learned):
    return {"cell": cell, "seed": seed, "delay": delay, "N": N, "learned": learned}


KEYS = ["lag/init", "lag/early", "lag/final", "full/init", "full/early", "full/final"]


# ------------------------------------------------------------------ a hand-made table of 16 runs
def _learned(cell, seed, delay, N):
    """ℓ* = 2 at N = 100 in both seeds, ℓ* = 2 at N = 10 in seed 1 (gru) or seed 2 (lstm) only: per
    cell 3 of 8 learned."""
    return delay == 2 and (N == 100 or seed == (1 if cell == "gru" else 2))


def _s(key, seed, delay, N, learned):
    """The diagnostic score −log(N*/N) in units of log 2 (N* = N·2^−s is exact)."""
    if key == "lag/init":
        return 1 if learned else 0          # AUC 1
    if key == "lag/early":
        return 1 if seed == 1 else 0        # AUC ½; per cell 9.5/15 (gru), 5.5/15 (lstm) (below)
    if key == "lag/final":
        return 0 if learned else 1          # AUC 0
    return None                             # full: N* = ∞ everywhere → −∞, AUC ½


def _rows_delay():
    rows = []
    for cell in ("lstm", "gru"):
        for seed in (1, 2):
            for delay in (2, 8):
                for N in (10, 100):
                    y = _learned(cell, seed, delay, N)
                    r = {"cell": cell, "seed": seed, "delay": delay, "N": N, "learned": y, "r2": 0.5, "c_hat": 0.4}
                    for k in KEYS:
                        null, pt = k.split("/")
                        s = _s(k, seed, delay, N, y)
                        r[f"n_star_{null}_{pt}"] = math.inf if s is None else N * 2.0 ** -s
                        # N̂ ≤ N: = learned at lag/init; N̂ = 50 at lag/early (N = 100 predicted); else N̂ = N
                        r[f"n_hat_{null}_{pt}"] = ((N if y else 2 * N) if k == "lag/init" else
                                                   50.0 if k == "lag/early" else float(N))
                    rows.append(r)
    return rows


class _Fakes:
    """Stand-ins for the logistic baselines and the bootstrap that record their arguments: the
    baseline scores are fixed functions of the design's columns, the intervals fixed numbers."""

    def __init__(self, lo_best=0.85, lo_base=0.81, other=(0.2, 0.95), hi_best=0.99):
        self.calls, self.boot = [], None
        self.lo_best, self.lo_base, self.other, self.hi_best = lo_best, lo_base, other, hi_best

    def cv(self, X, y, groups):
        self.calls.append((np.array(X), np.array(y), np.array(groups)))
        X = np.asarray(X)
        if X.shape[1] == 2:                  # (log ℓ*, log N): −log ℓ*
            return -X[:, 0]
        if X.shape[1] == 3:                  # + cell (one column, 2 cells): −log ℓ* + log N
            return -X[:, 0] + X[:, 1]
        if X.shape[1] == 5:                  # + cell + diagnostic (finding 10's nested model): the diagnostic
            return X[:, 3]
        return X[:, 2]                       # + diagnostic: the capped diagnostic itself

    def bootstrap(self, scores, y, blocks, n_boot=1000):
        self.boot = (list(scores), np.array(y), np.array(blocks), n_boot)
        out = {k: self.other for k in scores}
        out["logN_logl"], out["logN_logl_cell"] = (self.lo_base, 0.97), (0.71, 0.93)
        out["lag/init"] = (self.lo_best, self.hi_best)
        out["lag/init+base"] = (float("nan"), 0.98)
        return out


@pytest.fixture
def fakes(monkeypatch):
    f = _Fakes()
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    return f


# ---------------------------------------------------------------------------- dynamic range
def _r(cell, seed, delay, N, learned):
    return {"cell": cell, "seed": seed, "delay": delay, "N": N, "learned": learned}


# ------------------------------------------------------------------------- finding 10's text
SC = {"verdict": "inconclusive", "best": "lag/early", "n": 16, "n_learned": 6,
      "earlier_verdict": "not reproduced", "earlier_best": "full/final",
      "intervals": {"lag/early": [0.12, 0.05, 0.19, 3], "full/final": [None, None, None, 0]},
      "baselines": {"logN_logl": [0.9, 0.8123, None], "logN_logl_cell": [None, 0.5, 0.99999]},
      "points": {"lag/early": {"auc": [0.63333, 0.2, 0.95], "balanced_accuracy": None,
                               "baseline_plus_diag": [1.0, None, 0.98], "per_cell": {"gru": 0.5, "lstm": None},
                               "nested": {"deviance_reduction_seeds": [0.1, None, 0.3], "auc_within_strata": 0.6,
                                          "violation_rate": 0.25}},
                 "full/final": {"auc": [None, None, None], "balanced_accuracy": 0.5,
                                "baseline_plus_diag": [0.5, 0.25, 0.75], "per_cell": {}}}}


HEAD = [
    "## 10. The window predicts which delays are learnable, beyond ℓ*, N and the cell (A16)", "",
    "**inconclusive** (best null/point: lag/early; relative Brier reduction per held-out seed 0.12 [0.050, 0.190] "
    "(3 seeds)). Rule (docs/experiments.md §5.5.2): per held-out seed (leave one seed out), the relative reduction "
    "of the Brier score of the L2 logistic model (log ℓ*, log N, cell, diagnostic) against (log ℓ*, log N, cell), "
    "1 − B₊/B₀; reproduced when the best null × point's 95% seed interval lies above 0.05, not reproduced when it "
    "lies below, inconclusive otherwise. The earlier rule (pooled AUC against the baselines' AUC) would say: "
    "not reproduced (best full/final).", "",
    "16 runs, 6 learned. Baselines: (log ℓ*, log N) AUC 0.900 [0.812, —]; + cell — [0.500, 1.000].", "",
    "| null/point | Brier reduction per seed [95%] | deviance reduction (mean over seeds) | AUC within (ℓ*, N) "
    "| violation rate (learned, N̂ > N) | AUC [95%] | balanced acc. (N̂ ≤ N) | (log ℓ*, log N) + diagnostic AUC "
    "| per cell |",
    "|---|---|---|---|---|---|---|---|---|",
    "| lag/early | 0.120 [0.050, 0.190] | 0.200 | 0.600 | 0.250 | 0.633 [0.200, 0.950] | — | 1.000 [—, 0.980] "
    "| gru 0.500, lstm — |",
    "| full/final | — [—, —] | — | — | — | — [—, —] | 0.500 | 0.500 [0.250, 0.750] |  |",
]


# ------------------------------------------------------------------------------ plan and inputs
def _cfg_delay_(**kw):
    c = {k: v for k, v in SMOKE["a_delay"].items() if k not in ("seeds", "delays")}
    return dict(c, **{"cell": "gru", "seed": 212, "delay": 3, "N": 16, "backend": "numpy", **kw})


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


# ----------------------------------------------------------------------------------------------
# delay_task
# ----------------------------------------------------------------------------------------------


def test_delay_task_exact_at_zero_noise():
    c = _cfg_delay(sigma_y=0.0, delay=4)
    task = dl.delay_task(c)
    x, y = task.batch(5, np.random.SeedSequence(1))
    z = np.einsum("tbd,d->tb", np.asarray(x, float), task.u)
    y = np.asarray(y, float).reshape(z.shape)
    np.testing.assert_allclose(y[4:], c["coef"] * z[:-4], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(y[:4], 0.0)


# ----------------------------------------------------------------------------------------------
# delay_dataset
# ----------------------------------------------------------------------------------------------


def test_diagnostic_at_init_is_matched_statistic_on_initial_params():
    c = _cfg_delay()
    ds = dl.delay_dataset(c, c["N"])
    cell = _a_cell(c["cell"], c).with_dtype("float64")
    p0 = {k: np.asarray(v, np.float64) for k, v in _a_params(cell, c).items()}
    got = dl.diagnostic(cell, p0, float(c["lr"]), ds, c)
    # independently: the matched statistic ψ̄ on the initial parameters with P = η·I and its table
    ms = matched_statistic(cell, p0, ds.x_diag, ds.y_diag, float(c["lr"]), [c["delay"]], n_directions=c["K"],
                           seed=c["seed"], progress=False)
    ref = a_windows(cell, p0, float(c["lr"]), ds.x_diag, ds.y_diag, dict(c, lags=[c["delay"]]), nulls=("lag",))
    assert got["lag"] == (float(ref["lag"].n_star[0]), float(ref["lag"].n_hat[0]))
    m = float(np.mean(np.asarray(ms.samples)[0]))
    assert np.isclose(abs(m), abs(float(ref["lag"].mean[0])), rtol=1e-6)


def test_checkpoint_equals_training_stopped_there():
    c = _cfg_delay()
    ds = dl.delay_dataset(c, c["N"])
    cell = _a_cell(c["cell"], c)
    kw = dl.delay_train_kwargs(c)
    full = train(cell, _a_params(cell, c), ds, **kw)
    short = train(cell, _a_params(cell, c), ds, **dict(kw, steps=c["early"], checkpoints=[], best_checkpoint=False))
    k = c["early"]
    for name in short.params:
        np.testing.assert_array_equal(full.checkpoints[k][name], short.params[name])
    from lwsim import optim
    r_ck = optim.from_state_dict(full.checkpoints[k], full.checkpoint_opt_states[k]).rates()
    r_sh = short.optimizer.rates()
    for name in r_sh:
        np.testing.assert_allclose(np.asarray(r_ck[name]), np.asarray(r_sh[name]), rtol=1e-6)


def test_task_and_dataset_by_hand():
    c = _cfg_delay_(T=7, D=2, delay=3, N=5)
    task = dl.delay_task(c)
    assert task.T == 7 and task.D == 2 and task.seed == 212
    ds = dl.delay_dataset(c, 5)
    assert ds.x_train.shape == (7, 5, 2) and ds.x_val.shape[1] == c["n_val"] and ds.x_diag.shape[1] == c["n_diag"]
    assert ds.seed == 212 and ds.task.T == 7 and ds.readout == "every"
    fixed = task.dataset(0, c["n_val"], c["n_diag"], seed=212)       # validation and held-out: the seed's own
    for k in ("x_val", "y_val", "x_diag", "y_diag"):
        np.testing.assert_array_equal(getattr(ds, k), getattr(fixed, k))
    assert not np.array_equal(dl.delay_dataset(dict(c, seed=213), 5).x_diag, ds.x_diag)
    again = dl.delay_dataset(c, 5)
    np.testing.assert_array_equal(ds.x_train, again.x_train)         # the training stream is seeded
    other = dl.delay_dataset(dict(c, seed=213), 5)
    assert not np.array_equal(ds.x_train, other.x_train)


# ----------------------------------------------------------------------------------------------
# delay_train_kwargs
# ----------------------------------------------------------------------------------------------


def test_runs_cover_the_grid_and_differ_only_in_data():
    runs = dl.delay_runs("smoke", "numpy")
    s = SMOKE["a_delay"]
    assert len(runs) == 5 * len(s["seeds"]) * len(s["delays"]) * len(s["budgets"])
    assert dl.delay_train_kwargs(_cfg_delay(N=8)) == dl.delay_train_kwargs(_cfg_delay(N=32))


def test_train_kwargs_by_hand():
    c = _cfg_delay_(clip=0.7, val_every=4, early=3, steps=11, batch=5, lr=0.02, weight_decay=0.001)
    assert dl.delay_train_kwargs(c) == dict(
        optimizer="adamw", optimizer_kwargs={"lr": 0.02, "weight_decay": 0.001}, steps=11, batch_size=5, clip=0.7,
        backend="numpy", seed=212, val_every=4, best_checkpoint=True, progress=False, checkpoints=[3])
    assert dl.delay_train_kwargs(dict(c, optimizer="sgd"))["optimizer_kwargs"] == {"lr": 0.02}


# ----------------------------------------------------------------------------------------------
# delay_runs
# ----------------------------------------------------------------------------------------------


def test_runs_plan_by_hand():
    runs = dl.delay_runs("smoke", "numba")
    assert {r.experiment for r in runs} == {"a_delay"}
    first = runs[0].config
    assert first["cell"] == "constgate" and first["seed"] == 212 and first["delay"] == 2 and first["N"] == 8
    assert first["backend"] == "numba" and "seeds" not in first and "delays" not in first
    assert first["T"] == 16 and first["steps"] == 10 and first["budgets"] == [8, 32]
    assert [(r.config["cell"], r.config["seed"], r.config["delay"], r.config["N"]) for r in runs[:8]] == [
        ("constgate", 212, 2, 8), ("constgate", 212, 2, 32), ("constgate", 212, 5, 8), ("constgate", 212, 5, 32),
        ("constgate", 1001, 2, 8), ("constgate", 1001, 2, 32), ("constgate", 1001, 5, 8),
        ("constgate", 1001, 5, 32)]
    assert runs[-1].config["cell"] == "lstm" and len(runs) == 40


# ----------------------------------------------------------------------------------------------
# diagnostic
# ----------------------------------------------------------------------------------------------


def test_diagnostic_asks_both_nulls_at_the_task_lag(monkeypatch):
    from types import SimpleNamespace
    seen = {}

    def fake(cell, params, rates, x, y, cc, nulls=("lag",), lags=None):
        seen.update(cell=cell, params=params, rates=rates, x=x, y=y, lags=lags, nulls=nulls, n=cc["n_diag"])
        return {n: SimpleNamespace(n_star=np.array([np.float32(40.0 + i)]), n_hat=np.array([100 + i]))
                for i, n in enumerate(nulls)}
    monkeypatch.setattr(dl, "a_windows", fake)
    ds = SimpleNamespace(x_diag="X", y_diag="Y")
    out = dl.diagnostic("cell", "p", 0.5, ds, {"delay": 7.0, "n_diag": 9})
    assert out == {"lag": (40.0, 100.0), "full": (41.0, 101.0)}
    assert all(type(v) is float for t in out.values() for v in t)
    assert seen == dict(cell="cell", params="p", rates=0.5, x="X", y="Y", lags=[7], nulls=("lag", "full"), n=9)
    assert type(seen["lags"][0]) is int
    if hasattr(dl, "init_windows"):          # shared=True: the initial model's cached windows instead
        monkeypatch.setattr(dl, "a_windows", None)
        monkeypatch.setattr(dl, "init_windows", fake)
        assert dl.diagnostic("cell", "p", 0.5, ds, {"delay": 7.0, "n_diag": 9}, shared=True) == out


# ----------------------------------------------------------------------------------------------
# a_delay
# ----------------------------------------------------------------------------------------------


def test_smoke_end_to_end():
    out = dl.a_delay(_cfg_delay(cell="constgate"))
    assert set(out) >= {"learned", "r2", "c_hat"} | {f"n_star_{n}_{p}" for n in dl.NULLS for p in dl.POINTS}
    rows = []
    for cell in ("constgate", "gru"):
        for s in (1, 2):
            for d, N, learned in ((2, 8, False), (2, 32, True), (5, 8, False), (5, 32, s == 1)):
                r = {"N": N, "delay": d, "learned": learned, "r2": 0.1, "c_hat": 0.3}
                for n in dl.NULLS:
                    for p in dl.POINTS:
                        r[f"n_star_{n}_{p}"] = 10.0 * d
                        r[f"n_hat_{n}_{p}"] = 32.0
                rows.append(({"cell": cell, "seed": s}, r))
    fig, data = dl.fig_a16({"a_delay": rows})
    sc = data["score"]
    assert sc["verdict"] in ("reproduced", "not reproduced", "inconclusive")
    assert sc["points"]["lag/final"]["auc"][0] is not None


# ----------------------------------------------------------------------------------------------
# table
# ----------------------------------------------------------------------------------------------


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
    assert sc["earlier_best"] == good


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
    assert dl.STUDY.headline(rendered) == [(10, dl.TITLE, sc["verdict"])]
    lines = dl.finding10_lines(rendered)
    assert lines[2].startswith(f"**{sc['verdict']}** (best null/point: {sc['best']}; ")
    assert "would say: reproduced (best full/final)." in lines[2]


# ------------------------------------------------------------------------------- the run table
def test_table_row_by_hand():
    res = {"delay": np.int64(4), "N": 32.0, "learned": np.bool_(True), "r2": np.float32(0.5), "c_hat": 1,
           "extra": "ignored"}
    for i, k in enumerate(KEYS):
        null, pt = k.split("/")
        res[f"n_star_{null}_{pt}"] = i + 1
        res[f"n_hat_{null}_{pt}"] = 10 * (i + 1)
    rows = dl.table([({"cell": "gru", "seed": "7", "other": 1}, res)])
    want = {"cell": "gru", "seed": 7, "delay": 4, "N": 32, "learned": True, "r2": 0.5, "c_hat": 1.0}
    for i, k in enumerate(KEYS):
        null, pt = k.split("/")
        want[f"n_star_{null}_{pt}"] = float(i + 1)
        want[f"n_hat_{null}_{pt}"] = float(10 * (i + 1))
    assert rows == [want]
    assert list(rows[0]) == list(want)
    r = rows[0]
    assert type(r["seed"]) is int and type(r["delay"]) is int and type(r["N"]) is int
    assert type(r["learned"]) is bool and type(r["r2"]) is float and type(r["c_hat"]) is float
    assert all(type(r[k]) is float for k in r if k.startswith("n_"))
    assert dl.table([]) == []


# ----------------------------------------------------------------------------------------------
# _nan_none
# ----------------------------------------------------------------------------------------------


def test_nan_none():
    # private: score() hands it only AUCs and their bootstrap bounds (finite or NaN); None, ±inf and ints need the helper
    assert dl._nan_none(None) is None and dl._nan_none(float("nan")) is None and dl._nan_none(np.inf) is None
    assert dl._nan_none(-np.inf) is None
    v = dl._nan_none(np.float64(0.25))
    assert v == 0.25 and type(v) is float
    assert type(dl._nan_none(1)) is float


# ----------------------------------------------------------------------------------------------
# score
# ----------------------------------------------------------------------------------------------


def test_score_passes_the_designs_groups_and_blocks(fakes):
    rows = _rows_delay()
    dl.score(rows)
    y = np.array([_learned(r["cell"], r["seed"], r["delay"], r["N"]) for r in rows])
    assert len(fakes.calls) == 2 + 2 * 6           # per null × point: + diagnostic, and + cell + diagnostic
    ll = np.log([r["delay"] for r in rows])
    ln = np.log([r["N"] for r in rows])
    lstm = np.array([1.0] * 8 + [0.0] * 8)        # one-hot of the second cell name in sorted order ("lstm")
    (X0, y0, g0), (X1, y1, g1) = fakes.calls[:2]
    np.testing.assert_array_equal(X0, np.column_stack([ll, ln]))
    np.testing.assert_array_equal(X1, np.column_stack([ll, ln, lstm]))
    for X, yy, g in fakes.calls:
        np.testing.assert_array_equal(yy, y)
        np.testing.assert_array_equal(g, [r["seed"] for r in rows])           # leave one seed out
    # the diagnostic designs, in NULLS × POINTS order: lag/init's diagnostic is log 2 on learned runs
    X2 = fakes.calls[2][0]
    np.testing.assert_array_equal(X2[:, :2], np.column_stack([ll, ln]))
    np.testing.assert_allclose(X2[:, 2], np.where(y, np.log(2), 0.0), atol=1e-15)
    np.testing.assert_array_equal(X2[:, 3], 1.0)
    Xn = fakes.calls[3][0]                              # lag/init's nested model: + cell + diagnostic
    np.testing.assert_array_equal(Xn[:, :3], np.column_stack([ll, ln, lstm]))
    np.testing.assert_array_equal(Xn[:, 3:], X2[:, 2:])
    Xf = fakes.calls[8][0]                                                     # full/init: N* = ∞
    np.testing.assert_array_equal(Xf[:, 2], -30.0)
    np.testing.assert_array_equal(Xf[:, 3], 0.0)
    keys, yb, blocks, n_boot = fakes.boot
    assert keys == ["logN_logl", "logN_logl_cell"] + [k + s for k in KEYS for s in ("", "+base")]
    np.testing.assert_array_equal(yb, y)
    assert list(blocks) == [f"{c}/{s}" for c in ("lstm", "gru") for s in (1, 2) for _ in range(4)]
    assert n_boot == 500
    dl.score(rows, n_boot=7)
    assert fakes.boot[3] == 7


def test_score_numbers_by_hand(fakes):
    sc = dl.score(_rows_delay())
    assert sc["n"] == 16 and sc["n_learned"] == 6 and sc["cells"] == ["gru", "lstm"]
    assert isinstance(sc["n"], int) and isinstance(sc["n_learned"], int)
    # baselines: −log ℓ*: the 6 learned (ℓ* 2) beat the 8 at ℓ* 8 and tie the 2 unlearned at ℓ* 2 → 54/60;
    # −log ℓ* + log N: 50/60 (module docstring of this test file's _Fakes)
    assert sc["baselines"] == {"logN_logl": [pytest.approx(0.9), 0.81, 0.97],
                               "logN_logl_cell": [pytest.approx(50 / 60), 0.71, 0.93]}
    assert list(sc["points"]) == KEYS
    p = sc["points"]
    assert {k: v for k, v in p["lag/init"].items() if k != "nested"} == {"auc": [1.0, 0.85, 0.99], "per_cell": {"gru": 1.0, "lstm": 1.0},
                             "balanced_accuracy": 1.0, "baseline_plus_diag": [1.0, None, 0.98]}
    # lag/early (s = 1 in seed 1): learned with s = 1: 3, s = 0: 3; unlearned s = 1: 5, s = 0: 5 → U = 15 + 7.5
    # + 7.5 = 30 of 60; gru: learned s = 1: 2, s = 0: 1, unlearned s = 1: 2, s = 0: 3 → U = 6 + 2 + 1.5 = 9.5 of 15;
    # lstm: learned s = 1: 1, s = 0: 2, unlearned s = 1: 3, s = 0: 2 → U = 2 + 1.5 + 2 = 5.5 of 15;
    # N̂ = 50 (N = 100 predicted learned): TPR 4/6, TNR 6/10
    e = p["lag/early"]
    assert e["auc"] == [0.5, 0.2, 0.95]
    assert e["per_cell"] == {"gru": pytest.approx(9.5 / 15), "lstm": pytest.approx(5.5 / 15)}
    assert e["balanced_accuracy"] == pytest.approx((4 / 6 + 6 / 10) / 2)
    assert p["lag/final"]["auc"][0] == 0.0 and p["lag/final"]["per_cell"] == {"gru": 0.0, "lstm": 0.0}
    f = p["full/final"]
    assert {k: v for k, v in f.items() if k != "nested"} == {"auc": [0.5, 0.2, 0.95], "per_cell": {"gru": 0.5, "lstm": 0.5}, "balanced_accuracy": 0.5,
                 "baseline_plus_diag": [0.5, 0.2, 0.95]}
    # best lag/init (AUC 1): its interval's low end 0.85 > the cell baseline's 50/60 → reproduced
    assert (sc["earlier_verdict"], sc["earlier_best"]) == ("reproduced", "lag/init")


def test_score_verdict_inconclusive_and_not_reproduced(monkeypatch):
    f = _Fakes(lo_best=0.8)                  # 0.8 < 50/60: not above the cell baseline; AUC 1 > 0.9: not "not"
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    sc = dl.score(_rows_delay())
    assert (sc["earlier_verdict"], sc["earlier_best"]) == ("inconclusive", "lag/init")
    f.lo_best = float("nan")                 # an undefined interval (None in the output) is not "above"
    sc = dl.score(_rows_delay())
    assert sc["points"]["lag/init"]["auc"] == [1.0, None, 0.99]
    assert (sc["earlier_verdict"], sc["earlier_best"]) == ("inconclusive", "lag/init")
    rows = [r for r in _rows_delay() if r["delay"] == 8 or r["learned"]]
    for r in rows:                           # the diagnostics say nothing: every AUC ½ < the baselines' 1
        for k in KEYS:
            null, pt = k.split("/")
            r[f"n_star_{null}_{pt}"] = float(r["N"])
    sc = dl.score(rows)
    assert sc["baselines"]["logN_logl"][0] == 1.0
    assert sc["earlier_verdict"] == "not reproduced"
    f.lo_base = 0.4                          # the rule compares with the baseline's AUC (1), not its interval
    assert dl.score(rows)["earlier_verdict"] == "not reproduced"


def test_score_one_class_only_is_inconclusive(fakes):
    rows = [dict(r, learned=True) for r in _rows_delay()]
    sc = dl.score(rows)
    assert sc["n_learned"] == 16 and (sc["verdict"], sc["best"]) == ("inconclusive", None)
    assert (sc["earlier_verdict"], sc["earlier_best"]) == ("inconclusive", None)
    assert sc["baselines"]["logN_logl"][0] is None and sc["points"]["lag/init"]["auc"][0] is None
    assert sc["points"]["lag/init"]["per_cell"] == {"gru": None, "lstm": None}
    assert sc["points"]["lag/init"]["balanced_accuracy"] is None


def test_score_end_to_end_without_fakes():
    """The real baselines and bootstrap on the hand table: the diagnostic AUCs are those above, and
    (log ℓ*, log N) separates the learned runs except the 2 ties at (2, 10): a finite AUC in [½, 1]."""
    sc = dl.score(_rows_delay(), n_boot=20)
    assert sc["points"]["lag/init"]["auc"][0] == 1.0
    assert sc["points"]["lag/early"]["auc"][0] == 0.5
    assert sc["points"]["lag/early"]["per_cell"] == {"gru": pytest.approx(9.5 / 15), "lstm": pytest.approx(5.5 / 15)}
    lo, hi = sc["points"]["lag/init"]["auc"][1:]
    assert lo == 1.0 and hi == 1.0                     # AUC 1 in every resample with both classes
    assert 0.5 <= sc["baselines"]["logN_logl"][0] <= 1.0


# ----------------------------------------------------------------------------------------------
# _cell_order
# ----------------------------------------------------------------------------------------------


def test_cell_order():
    # private: score() reaches it only with A cells (its table rows come from trained runs); unknown cells need the helper
    assert dl._cell_order({"zz", "lstm", "aa", "gru"}) == ["gru", "lstm", "aa", "zz"]
    assert dl._cell_order(set()) == []


# ----------------------------------------------------------------------------------------------
# dynamic_range
# ----------------------------------------------------------------------------------------------


def test_dynamic_range_by_hand():
    # lstm: ℓ* 2 learned at the smallest N in 2 of 3 seeds (majority), ℓ* 8 unlearned at the largest
    # in 2 of 3; gru: ℓ* 2 learned at the smallest N in 1 of 2 seeds (half: counts as learned),
    # nothing unlearned at the largest N
    rows = [_row("lstm", s, 2, 32, s != 3) for s in (1, 2, 3)] + \
           [_row("lstm", s, 8, 3200, s == 3) for s in (1, 2, 3)] + \
           [_row("lstm", s, 8, 32, False) for s in (1, 2, 3)] + [_row("lstm", s, 2, 3200, True) for s in (1, 2, 3)] + \
           [_row("gru", s, 2, 32, s == 1) for s in (1, 2)] + [_row("gru", s, 2, 3200, True) for s in (1, 2)]
    dr = dl.dynamic_range(rows)
    assert list(dr) == ["gru", "lstm"]                              # A_CELLS order, not alphabetical
    assert dr["lstm"] == {"unlearned_at_max_N": [8], "learned_at_min_N": [2]}
    assert dr["gru"] == {"unlearned_at_max_N": [], "learned_at_min_N": [2]}   # ℓ* 8 absent for gru


def test_dynamic_range_counts_only_the_extreme_N_and_half_is_learned():
    rows = [
        # N = 10 (min): ℓ* 2 learned in 1 of 2 seeds (½ → learned); ℓ* 4 in 0 of 2
        _r("lstm", 1, 2, 10, True), _r("lstm", 2, 2, 10, False), _r("lstm", 1, 4, 10, False),
        _r("lstm", 2, 4, 10, False),
        # N = 50 (middle): the opposite everywhere; it must not count
        _r("lstm", 1, 2, 50, False), _r("lstm", 2, 2, 50, False), _r("lstm", 1, 4, 50, True),
        _r("lstm", 2, 4, 50, True),
        # N = 100 (max): ℓ* 2 learned in both; ℓ* 4 in 1 of 2 (½: not unlearned)
        _r("lstm", 1, 2, 100, True), _r("lstm", 2, 2, 100, True), _r("lstm", 1, 4, 100, True),
        _r("lstm", 2, 4, 100, False),
        # a cell outside A_CELLS comes after them; ℓ* 4 unlearned at N = 100 in both seeds
        _r("zz", 1, 4, 100, False), _r("zz", 2, 4, 100, False),
        _r("constgate", 1, 2, 10, True),
    ]
    dr = dl.dynamic_range(rows)
    assert list(dr) == ["constgate", "lstm", "zz"]
    assert dr["lstm"] == {"unlearned_at_max_N": [], "learned_at_min_N": [2]}
    assert dr["zz"] == {"unlearned_at_max_N": [4], "learned_at_min_N": []}
    assert dr["constgate"] == {"unlearned_at_max_N": [], "learned_at_min_N": [2]}
    rows[9] = _r("lstm", 2, 2, 100, False)          # ℓ* 2 at the max: ½ → still learned
    rows[10] = _r("lstm", 1, 4, 100, False)         # ℓ* 4 at the max: 0 of 2 → unlearned
    assert dl.dynamic_range(rows)["lstm"]["unlearned_at_max_N"] == [4]


# ----------------------------------------------------------------------------------------------
# fig_a16
# ----------------------------------------------------------------------------------------------


def test_fig_a16_draws_a_point_outside_its_percentile_interval(monkeypatch):
    """A percentile bootstrap interval need not contain the point AUC (here 1.0 against [0.9, 0.95]):
    the error bar is clipped at the point instead of matplotlib refusing a negative length."""
    import matplotlib.pyplot as plt

    from lwsim.figures.studies import delay as dl
    from lwsim.stats import prediction as pr
    # (_Fakes, _rows: from tests.test_mut_delay, defined in this module since the relayout)
    _rows = _rows_delay
    f = _Fakes(lo_best=0.9, hi_best=0.95)
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    fig, data = dl.fig_a16({"a_delay": [({"cell": r["cell"], "seed": r["seed"]}, r) for r in _rows()]})
    try:
        assert data["score"]["points"]["lag/init"]["auc"] == [1.0, 0.9, 0.95]
        line, _, (bars,) = fig.axes[-1].containers[0]
        np.testing.assert_allclose(bars.get_segments()[0], [[0, 0.9], [0, 1.0]], atol=1e-12)
    finally:
        plt.close(fig)


# ------------------------------------------------------------------------------- figure A16
def test_fig_a16_panels_by_hand(monkeypatch):
    """gru with both seeds, lstm with seed 1 only (12 runs); fake baselines and intervals (above)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from lwsim.figures.style import color
    f = _Fakes(lo_best=0.9, other=(float("nan"), float("nan")), hi_best=1.0)     # other intervals undefined
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    import warnings
    rows = [r for r in _rows_delay() if not (r["cell"] == "lstm" and r["seed"] == 2)]
    for r in rows:          # lstm's full/init at ℓ* 2: N* 1e−11 (N = 10) and ∞ (N = 100), the rest ∞
        if r["cell"] == "lstm" and r["delay"] == 2 and r["N"] == 10:
            r["n_star_full_init"] = 1e-11
    res = [({"cell": r["cell"], "seed": r["seed"]}, r) for r in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # drawn without a warning (no mean of an empty cell either)
        fig, data = dl.fig_a16({"a_delay": res})
    try:
        assert data["delays"] == [2, 8] and data["budgets"] == [10, 100] and len(data["rows"]) == 12
        assert data["dynamic_range"] == {"gru": {"unlearned_at_max_N": [8], "learned_at_min_N": [2]},
                                         "lstm": {"unlearned_at_max_N": [8], "learned_at_min_N": []}}
        # baselines (fakes): −log ℓ*: 4 learned at ℓ* 2 against 2 unlearned at ℓ* 2 and 6 at ℓ* 8 → 28/32;
        # −log ℓ* + log N: 28/32 too; lag/init's AUC 1 with its low end 0.9 > 0.875: reproduced
        assert data["score"]["baselines"]["logN_logl"][0] == 0.875 and data["score"]["verdict"] == "reproduced"
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert len(axes) == 3
        # learned fraction over seeds, rows N = 10, 100 × columns ℓ* = 2, 8
        want_m = {"gru": [[0.5, 0.0], [1.0, 0.0]], "lstm": [[0.0, 0.0], [1.0, 0.0]]}
        # the boundary N* = N: seed-and-N geometric mean of N* at each ℓ*, at log10(N*/10) on the N axis
        # (N = 10 → 0, N = 100 → 1); N* = ∞ (full) is clipped to 1e12, beyond N = 100 → 1.5; lstm's
        # full/init at ℓ* 2: √(1e−11 · 1e12) = √10 < 10, below the smallest N → −0.5
        want_y = {"gru": {"lag/init": [0.25 * np.log10(125000) - 1, 0.5],        # N* 5, 50, 10, 50 | 10, 100, 10, 100
                          "lag/final": [0.25 * np.log10(500000) - 1, 0.25 * np.log10(62500) - 1]},
                  "lstm": {"lag/init": [0.5 * np.log10(500) - 1, 0.5], "lag/final": [0.5 * np.log10(500) - 1,
                                                                                     0.5 * np.log10(250) - 1]}}
        for ax, cl in zip(axes[:2], ("gru", "lstm")):
            mesh = ax.collections[0]
            np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(2, 2), want_m[cl])
            assert mesh.get_clim() == (0, 1) and mesh.get_cmap().name == "Greens"
            np.testing.assert_array_equal(mesh.get_coordinates()[0, :, 0], [-0.5, 0.5, 1.5])
            np.testing.assert_array_equal(mesh.get_coordinates()[:, 0, 1], [-0.5, 0.5, 1.5])
            lines = ax.get_lines()
            assert [ln.get_label() for ln in lines] == ["N* = N, lag/init", "N* = N, lag/final", "N* = N, full/init",
                                                        "N* = N, full/final"]
            assert [(to_hex(ln.get_color()), ln.get_linestyle(), ln.get_linewidth()) for ln in lines] == [
                (to_hex("C0"), ":", 1.2), (to_hex("C0"), "-", 1.2), (to_hex("C3"), ":", 1.2), (to_hex("C3"), "-", 1.2)]
            for ln in lines:
                np.testing.assert_array_equal(ln.get_xdata(), [0, 1])
            np.testing.assert_allclose(lines[0].get_ydata(), want_y[cl]["lag/init"], rtol=1e-12)
            np.testing.assert_allclose(lines[1].get_ydata(), want_y[cl]["lag/final"], rtol=1e-12)
            np.testing.assert_array_equal(lines[2].get_ydata(), [1.5, 1.5] if cl == "gru" else [-0.5, 1.5])
            np.testing.assert_array_equal(lines[3].get_ydata(), [1.5, 1.5])
            assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "8"] and list(ax.get_xticks()) == [0, 1]
            assert [t.get_text() for t in ax.get_yticklabels()] == ["10", "100"] and list(ax.get_yticks()) == [0, 1]
            assert ax.get_xlabel() == "ℓ*" and ax.get_title() == cl
            assert to_hex(ax.title.get_color()) == to_hex(color(cl))
        assert axes[0].get_ylabel() == "N (training sequences)" and axes[1].get_ylabel() == ""
        leg = axes[0].get_legend()
        assert [t.get_text() for t in leg.get_texts()] == ["N* = N, lag/init", "N* = N, lag/final",
                                                            "N* = N, full/init", "N* = N, full/final"]
        # private: matplotlib's Legend has no public getter for its loc (matplotlib's name, not lwsim's)
        assert leg._loc == 2 and leg.get_texts()[0].get_fontsize() == 6 and axes[1].get_legend() is None
        # last panel: each AUC with its interval, lag in C0 and full in C3, then the two baselines
        ax = axes[2]
        # lag/early: 3 + 1 learned, 5 + 3 unlearned: U = 9 + 7.5 + 1.5; full/init: the 4 learned at −∞ tie
        # 7 unlearned at −∞ and lose to lstm's (2, 10) at −log(1e−12): U = 14
        aucs = [1.0, 18 / 32, 0.0, 14 / 32, 0.5, 0.5]
        lims = [(0.9, 1.0)] + [(a, a) for a in aucs[1:]]          # an undefined end: a bar of length 0
        assert len(ax.containers) == 6
        for i, (c, a, (lo, hi)) in enumerate(zip(ax.containers, aucs, lims)):
            line, _, (bars,) = c
            assert list(line.get_xdata()) == [i] and line.get_ydata()[0] == pytest.approx(a)
            assert line.get_marker() == "o" and line.get_linestyle() == "None"
            assert to_hex(line.get_color()) == to_hex("C0" if i < 3 else "C3")
            np.testing.assert_allclose(bars.get_segments()[0], [[i, lo], [i, hi]], atol=1e-12)
        base = [ln for ln in ax.get_lines() if ln.get_label() in ("logN_logl", "logN_logl_cell")]
        assert [(ln.get_label(), list(ln.get_ydata()), ln.get_linestyle(), to_hex(ln.get_color()), ln.get_linewidth())
                for ln in base] == [("logN_logl", [0.875, 0.875], "--", "#000000", 1.0),
                                    ("logN_logl_cell", [0.875, 0.875], "-.", "#000000", 1.0)]
        assert [t.get_text() for t in ax.get_xticklabels()] == KEYS and list(ax.get_xticks()) == list(range(6))
        assert ax.get_xticklabels()[0].get_rotation() == 60 and ax.get_xticklabels()[0].get_fontsize() == 7
        assert ax.get_ylabel() == "AUC of −log(N*/N)" and ax.get_title() == "finding 10: reproduced"
        leg = ax.get_legend()
        assert [t.get_text() for t in leg.get_texts()] == ["logN_logl", "logN_logl_cell"]
        assert leg.get_texts()[0].get_fontsize() == 6
    finally:
        plt.close(fig)


def test_fig_a16_one_class_only_draws_no_aucs_or_baselines(fakes):
    import matplotlib.pyplot as plt
    rows = [dict(r, learned=True) for r in _rows_delay()]
    rows += [dict(r, cell="constgate") for r in rows if r["cell"] == "gru"]      # 3 cells: 4 panels
    fig, data = dl.fig_a16({"a_delay": [({"cell": r["cell"], "seed": r["seed"]}, r) for r in rows]})
    none = [dict(r, learned=False) for r in rows if r["cell"] == "gru" and not (r["delay"] == 8 and r["N"] == 10)]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a (N, ℓ*) without runs is NaN without a mean-of-empty warning
        fig0, _ = dl.fig_a16({"a_delay": [({"cell": r["cell"], "seed": r["seed"]}, r) for r in none]})
    try:
        # the colour scale is the fraction's [0, 1] whatever the data: all learned (1) and none learned (0)
        assert fig.axes[0].collections[0].get_clim() == (0, 1) and fig0.axes[0].collections[0].get_clim() == (0, 1)
        m0 = np.asarray(fig0.axes[0].collections[0].get_array()).reshape(2, 2)
        assert m0[0, 0] == 0.0 and np.isnan(m0[0, 1]) and list(m0[1]) == [0.0, 0.0]   # (N 10, ℓ* 8): no runs
        assert list(fig.get_size_inches()) == pytest.approx([3 * 4.2, 2 * 3.3])    # 3 columns, 2 rows
        assert [a.get_title() for a in fig.axes if a.get_visible()][:3] == ["constgate", "gru", "lstm"]
        ax = [a for a in fig.axes if a.get_visible()][-1]
        assert ax.containers == [] and ax.get_lines() == [] and ax.get_legend() is None
        assert ax.get_title() == "finding 10: inconclusive"
    finally:
        plt.close(fig)
        plt.close(fig0)


# ----------------------------------------------------------------------------------------------
# _headline
# ----------------------------------------------------------------------------------------------


def test_finding10_section_states_rule_numbers_and_range():
    sc = {"verdict": "not reproduced", "best": "full/init", "n": 450, "n_learned": 143,
          "baselines": {"logN_logl": [0.92, 0.893, 0.952], "logN_logl_cell": [0.975, 0.966, 0.982]},
          "points": {"full/init": {"auc": [0.77, 0.7, 0.846], "balanced_accuracy": 0.699,
                                   "baseline_plus_diag": [0.929, 0.91, 0.955], "per_cell": {"gru": 0.79, "lstm": None}}}}
    lines = dl.finding10_lines({"A16": {"score": sc, "dynamic_range": {"lstm": {"unlearned_at_max_N": [8],
                                                                                "learned_at_min_N": [2]}}}})
    text = "\n".join(lines)
    assert "**not reproduced** (best null/point: full/init; relative Brier reduction per held-out seed n/a)" in text
    assert "450 runs, 143 learned. Baselines: (log ℓ*, log N) AUC 0.920 [0.893, 0.952]; + cell 0.975 [0.966, 0.982]." in text
    assert ("| full/init | — [—, —] | — | — | — | 0.770 [0.700, 0.846] | 0.699 | 0.929 [0.910, 0.955] "
            "| gru 0.790, lstm — |") in text
    assert "lstm: unlearned at max N [8], learned at min N [2]" in text
    assert dl.STUDY.headline({"A16": {"score": sc}}) == [(10, dl.TITLE, "not reproduced")]
    assert dl.STUDY.headline({}) == [(10, dl.TITLE, None)] and dl.finding10_lines({}) == []


# ----------------------------------------------------------------------------------------------
# finding10_lines
# ----------------------------------------------------------------------------------------------


def test_finding10_lines_whole():
    dr = {"gru": {"unlearned_at_max_N": [8, 16], "learned_at_min_N": []},
          "lstm": {"unlearned_at_max_N": [], "learned_at_min_N": [2]}}
    lines = dl.finding10_lines({"A16": {"score": SC, "dynamic_range": dr}})
    assert lines == HEAD + ["", "Dynamic range (issue 30 item 5): gru: unlearned at max N [8, 16], learned at "
                                "min N []; lstm: unlearned at max N [], learned at min N [2]", ""]
    assert dl.STUDY.after({"A16": {"score": SC, "dynamic_range": dr}}, None, None) == lines
    assert dl.finding10_lines({"A16": {"score": SC}}) == HEAD + [""]
    assert dl.finding10_lines({"A16": {"score": SC, "dynamic_range": {}}}) == HEAD + [""]
    assert dl.finding10_lines({"A16": None}) == [] and dl.STUDY.after({}, None, None) == []
    assert dl.STUDY.headline({"A16": None}) == [(10, dl.TITLE, None)]
    # delay's number format: None as "—", three decimals, rounded (0.12345 → 0.123)
    one = {**SC, "points": {"lag/init": {**SC["points"][next(iter(SC["points"]))], "balanced_accuracy": 0.12345}}}
    assert "| 0.123 |" in dl.finding10_lines({"A16": {"score": one}})[-2]


# ----------------------------------------------------------------------------------------------
# _work
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------- the cost model
def test_work_by_hand():
    # GRU (3 gates), H 2, D 1: forward cost 2·3·2·(2 + 1) + 12·3·2 = 108 per step and sequence
    c = dict(T=10, H=2, D=1, cell="gru", steps=22, batch=4, n_val=3, val_every=5, n_diag=6, K=2,
             n_grid=[1, 2, 3], n_boot=300)
    # evaluations 22 // 5 + 1 = 5; diagnostic evaluations 3 points × 2 nulls = 6
    assert dl.STUDY.work["a_delay"](c) == {"one": 1.0,
                           "train": 22 * 4 * 10 * 3 * 108 + 5 * 3 * 10 * 108,          # 301320
                           "diag": 6 * 10 * 108 + 6 * 6 * 10 * (2 * 108 + 2 * (3 * 108 + 8 * 2)),   # 329040
                           "stats": 6 * 6 * (3 + 3.0),                                   # 216
                           "steps": 22 + 5 + 6}
    assert dl.STUDY.work["a_delay"](c)["train"] == 301320 and dl.STUDY.work["a_delay"](c)["diag"] == 329040 and dl.STUDY.work["a_delay"](c)["steps"] == 33
    # defaults: K 1, no validation set, val_every 1 (21 evaluations), one N, 200 bootstrap draws
    d = dict(T=10, H=2, D=1, cell="gru", steps=20, batch=4, n_diag=6)
    assert dl.STUDY.work["a_delay"](d) == {"one": 1.0, "train": 259200, "diag": 6480 + 360 * 556, "stats": 36 * 3.0,
                           "steps": 47}
    assert dl.STUDY.work["a_delay"](dict(d, val_every=0))["steps"] == 47                 # val_every 0 counts as 1


def test_score_scheme_reads_the_nested_models_per_held_out_seed(fakes):
    rows = _rows_delay()
    sc = dl.score(rows)
    y = np.array([r["learned"] for r in rows])
    seed = np.array([r["seed"] for r in rows])
    ll, ln = np.log([r["delay"] for r in rows]), np.log([r["N"] for r in rows])
    base = -ll + ln                                        # the fakes' (log ℓ*, log N, cell) score
    d = pr.diagnostic_score(np.array([r["n_star_lag_init"] for r in rows]), np.array([r["N"] for r in rows], float))
    want = pr.nested_by_group(base, np.clip(d, -pr.DIAG_CAP, pr.DIAG_CAP), y, seed)
    red = [v["brier_reduction"] for v in want.values()]
    iv = sc["intervals"]["lag/init"]
    assert iv[0] == pytest.approx(np.mean(red)) and iv[3] == 2
    assert sc["points"]["lag/init"]["nested"]["brier_reduction_seeds"] == pytest.approx(red)
    from lwsim.stats import verdicts as V
    best = max(sc["intervals"], key=lambda k: (sc["intervals"][k][0], k))
    assert sc["best"] == best
    assert sc["verdict"] == V.decide(V.seed_interval(sc["points"][best]["nested"]["brier_reduction_seeds"]), above=0.05)
    # violation rate: learned runs whose N̂ exceeds their N
    nh = np.array([r["n_hat_lag_init"] for r in rows])
    N = np.array([r["N"] for r in rows], float)
    assert sc["points"]["lag/init"]["nested"]["violation_rate"] == pytest.approx(np.mean(nh[y] > N[y]))


def _planted_rows(informative, seed=0, only=None):
    """2 cells × 8 seeds × ℓ* (2, 4, 8, 16) × N (10 … 1000): learned iff a hidden u > 0 that the
    cell, ℓ* and N do not carry; the diagnostic N* = N·2^(−3v) carries v = u (informative) or an
    independent draw (a planted null)."""
    rng = np.random.default_rng(seed)
    rows = []
    for cell in ("gru", "lstm"):
        for s in range(8):
            for delay in (2, 4, 8, 16):
                for N in (10, 30, 100, 300, 1000):
                    u = rng.normal()
                    v = u if informative else rng.normal()
                    r = {"cell": cell, "seed": s, "delay": delay, "N": N, "learned": bool(u > 0), "r2": 0.5,
                         "c_hat": 0.4}
                    for k in KEYS:
                        null, pt = k.split("/")
                        vk = v if only in (None, k) else rng.normal()
                        r[f"n_star_{null}_{pt}"] = r[f"n_hat_{null}_{pt}"] = N * 2.0 ** (-3 * vk)
                    rows.append(r)
    return rows


def test_score_finds_a_planted_diagnostic_and_not_a_planted_null():
    """Finding 10 end to end (real leave-one-seed-out logistic models): a diagnostic that carries what
    the cell, ℓ* and N do not is found (Brier-reduction interval above 0.05); an independent one is
    not (interval below 0.05)."""
    found = dl.score(_planted_rows(True), n_boot=20)
    assert found["verdict"] == "reproduced" and found["intervals"][found["best"]][1] > 0.8
    null = dl.score(_planted_rows(False), n_boot=20)
    assert null["verdict"] == "not reproduced"
    assert all(iv[2] < dl.BRIER_MARGIN for iv in null["intervals"].values())
    # only full/early carries u: it is the best null × point (by its mean, not by its name)
    rows = _planted_rows(True, only="full/early")
    sc = dl.score(rows, n_boot=20)
    assert sc["best"] == "full/early" and sc["verdict"] == "reproduced"
    # the nested table's other columns, recomputed from the same scores
    y = np.array([r["learned"] for r in rows])
    N = np.array([r["N"] for r in rows], float)
    d = pr.diagnostic_score(np.array([r["n_star_full_early"] for r in rows]), N)
    strata = np.array([f"{float(r['delay'])}/{float(r['N'])}" for r in rows])
    ne = sc["points"]["full/early"]["nested"]
    assert ne["auc_within_strata"] == pytest.approx(pr.stratified_auc(d, y, strata))
    assert ne["auc_within_strata"] > 0.9 > sc["points"]["lag/init"]["nested"]["auc_within_strata"]
    dev = ne["deviance_reduction_seeds"]
    assert len(dev) == 8 and all(x > 0 for x in dev)                  # the informative model fits better
    assert all(x < 0.1 for x in sc["points"]["lag/init"]["nested"]["deviance_reduction_seeds"])


def test_finding10_lines_one_seed_no_interval_and_no_earlier_rule():
    # one held-out seed: a mean without an interval; a score written before the earlier rule was kept
    sc = {k: v for k, v in SC.items() if k not in ("earlier_verdict", "earlier_best")}
    sc["intervals"] = {**SC["intervals"], "lag/early": [0.12, None, None, 1]}
    head = dl.finding10_lines({"A16": {"score": sc}})[2]
    assert "relative Brier reduction per held-out seed 0.12 (1 seed))" in head
    assert head.endswith("would say: n/a (best None).")
    sc["intervals"]["lag/early"] = [None, None, None, 0]
    assert "relative Brier reduction per held-out seed n/a)" in dl.finding10_lines({"A16": {"score": sc}})[2]
