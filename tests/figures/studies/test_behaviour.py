"""Tests of lwsim/figures/studies/behaviour (laid out like the code: docs/testing.md).

Provenance of the behaviour study (A15, finding 9; lwsim/figures/studies/behaviour/): which inputs
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

A15 and finding 9: ĉ(ℓ) on a planted model, the H^beh rule, identical trainings across N, the
scatter data and the finding-9 rules (docs/diagnostics.md §2.11, docs/experiments.md §5.6).

Tests that kill the surviving mutants of mutmut on the studies' finding rules and report text
(issue 32, docs/testing.md): behaviour/findings.py (finding 9), b_s2/findings.py (finding 8),
conventions/findings.py (A13) and main/nulls.py (findings 1–5 per null). Every input is built by
hand and every expected number or line is written out; none compares the code with itself.

Mutation-testing pins (issue 32) for three study figure builders: A15 (behaviour/figures.py,
the data finding 9 reads), B4–B6 ([B]'s S2 figures, b_s2/figures.py) and A13 (conventions/figures.py).

Each test builds a small hand-made ``results`` ({group: [(config, result), ...]}) with known
numbers and pins the returned data dict and what the figure shows (line data, styles, labels,
scales, legends) by hand."""


from __future__ import annotations

import json
import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.markers import MarkerStyle

import lwsim
import lwsim.figures.studies
from lwsim import diagnostics as dg, optim, stats
from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import preset_sizes
from lwsim.figures.studies.behaviour import experiment as eb, figures as A15, findings as fb
from lwsim.figures.studies.behaviour.figures import collect, fig_a15
from lwsim.io import to_jsonable
from lwsim.tasks import Dataset, make as make_task
from lwsim.train import train
from lwsim.window import window_chain
from helpers import _edges, _legend


SMOKE = preset_sizes("smoke")


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
def run(point_detection):
    c = _cfg()
    return c, EXPERIMENTS["a_behaviour"](c), _retrain(c)


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


# ----------------------------------------------------------------------------- trainings across N
def _cfg_behaviour(cell="gru", N=8):
    c = {k: v for k, v in SMOKE["a_behaviour"].items() if k != "seeds"}
    return dict(c, cell=cell, seed=212, N=N, backend="numpy")


def _runs_behaviour(diag_full, diag_lag=None, seeds=(1, 2)):
    """Two cells × three N per seed; h_beh = 1…6 in seed 1, 7…12 in seed 2 (cell-major)."""
    out, i = [], 0
    for s in seeds:
        for cell in ("constgate", "gru"):
            for N in (10, 100, 1000):
                hb = float(i + 1)
                res = {"h_beh": hb, "h_beh_smooth": hb + 0.5, "nulls": ["lag", "full"],
                       "h_diag_lag": hb if diag_lag is None else diag_lag[i], "h_diag_full": diag_full[i]}
                if N == 1000:
                    lags = np.arange(1, 30.0)
                    res.update(f=np.exp(-0.1 * lags), lags=lags, decay={"selected_bic": "exponential"})
                out.append(({"cell": cell, "seed": s, "N": N}, res))
                i += 1
    return out


def _pt(seed, N, hb, lag, full=7.0, points=None):
    p = {"cell": "gru", "seed": seed, "N": N, "h_beh": hb, "h_beh_smooth": 10.0 - hb,
         "h_diag": {"lag": lag, "full": full}}
    if points is not None:
        p["h_diag_points"] = points
    return p


def _a15():
    """12 points: N = 10 (Ĥ_N = H^beh: ρ 1), N = 100 (first two swapped: ρ 0.8), N = 1000 (Ĥ_N
    constant: no ρ). The "full" null is constant (7) everywhere; the smooth H^beh reverses the order."""
    hb = [1.0, 2.0, 3.0, 4.0]
    seeds = [1, 1, 2, 2]
    pts = [_pt(s, 10, h, h) for s, h in zip(seeds, hb)]
    pts += [_pt(s, 100, h, d) for s, h, d in zip(seeds, hb, [2.0, 1.0, 3.0, 4.0])]
    pts += [_pt(s, 1000, h, 5.0) for s, h in zip(seeds, hb)]
    return {"scatter": pts, "nulls": ["lag", "full"], "cells": {}}


def _track(pooled, seeds):
    return {"pooled": pooled, "per_seed": dict(enumerate(seeds)), "within_N": None, "n": 9}


def _a15_full():
    a = _a15()
    for p in a["scatter"]:
        p["h_diag_points"] = ({"init": p["h_beh"], "early": 5.0 - p["h_beh"]} if p["N"] == 10 else
                              {"init": 2.5} if p["N"] == 100 else {})
    gd = {"lag": {"seeds_last": [2.0, 4.0]}, "full": {"seeds_last": [1.0]}}
    a["cells"] = {
        "gru": {"N": [10, 1000], "h_beh_sd": [0.54, 1.26], "h_beh_mean": [1.53, 3.46], "h_beh_seeds_last": [3.0, 4.0],
                "growth": {"law": "log", "rss_log": 0.01234, "rss_power": 2.5, "power_beta": 0.5},
                "envelope": {"selected_bic": "exponential", "per_seed_selected_bic": ["exponential", "tempered"]},
                "h_diag": gd},
        "lstm": {"N": [10, 1000], "h_beh_sd": [0.0, 2.0], "h_beh_mean": [None, 2.0], "h_beh_seeds_last": [],
                 "growth": {"law": "log", "rss_log": None, "rss_power": None, "power_beta": None},
                 "envelope": {"selected_bic": "power"}, "h_diag": gd},
        "constgate": {"N": [10, 1000], "h_beh_sd": [0.0, 0.0], "h_beh_mean": [1.0, 1.0], "h_beh_seeds_last": [1.0],
                      "growth": {"law": "power", "rss_log": 1.0, "rss_power": 0.5, "power_beta": 0.25},
                      "h_diag": gd},
        "diaggate": {"N": [10, 1000], "h_beh_sd": [0.0, 0.0], "h_beh_mean": [1.0, 1.0], "h_beh_seeds_last": [1.0],
                     "growth": {"law": "flat", "rss_log": None, "rss_power": None, "power_beta": None},
                     "envelope": {"selected_bic": "tempered"}, "h_diag": gd},
        "sharedgate": {"N": [10, 1000], "h_beh_sd": [0.0, 0.0], "h_beh_mean": [1.0, 1.0], "h_beh_seeds_last": [1.0],
                       "growth": {"law": "indistinguishable", "rss_log": 1.0, "rss_power": 1.1, "power_beta": 1.0},
                       "envelope": {"selected_bic": "power"}, "h_diag": gd},
    }
    return a


RULE9 = ("rule: the best null's 95% seed interval of the per-seed mean within-N Spearman ρ(Ĥ_N, H^beh_N) across "
         "cells above 0.3 (docs/experiments.md §5.5.2); described beside it: the pooled ρ over cells × N × seeds, a "
         "null tracks better when its pooled ρ leads by ≥ 0.1 and leads in every seed; growth law: flat if the "
         "seed-mean H^beh rises ≤ 10% of its maximum, else the smaller RSS of a + b log N and A N^β "
         "('indistinguishable' within a factor 1.25)")
SCHEME_NA = ["null lag: per-seed mean within-N ρ(Ĥ_N, H^beh_N) across cells n/a (2 seeds undefined) → inconclusive "
             "(region > 0.3)",
             "null full: per-seed mean within-N ρ(Ĥ_N, H^beh_N) across cells n/a (2 seeds undefined) → inconclusive "
             "(region > 0.3)",
             "the earlier rule (pooled ρ ≥ 0.5 in every seed) would say: inconclusive"]


BLUE, RED, GREY = "#1f77b4", "#d62728", "#7f7f7f"        # constgate, gru, rnn


def _marker_is(coll, m):
    st = MarkerStyle(m)
    return np.allclose(coll.get_paths()[0].vertices, st.get_path().transformed(st.get_transform()).vertices)


def _pt_study_figures(cell, seed, N, hb, hs, lag, full, **extra):
    return ({"cell": cell, "seed": seed, "N": N},
            {"nulls": ["lag", "full"], "h_beh": hb, "h_beh_smooth": hs, "h_diag_lag": lag, "h_diag_full": full,
             **extra})


def _collect_runs():
    lags = np.arange(1, 30.0)
    e = np.exp(-0.1 * lags)
    return [
        # seed 2 first (seeds are sorted), an N only seed 2 has (5000: not in the intersection)
        _pt_study_figures("gru", np.int64(2), 10, 3, 2, 3, 0),
        _pt_study_figures("gru", np.int64(2), 100, 5, 4, 3, 2),
        _pt_study_figures("gru", np.int64(2), 1000, 9, 6, 5, 4, f=3 * e, lags=lags, decay={}),
        _pt_study_figures("gru", np.int64(2), 5000, 20, 20, 20, 20, f=np.exp(-lags), lags=lags, decay={"selected_bic": "power"}),
        _pt_study_figures("gru", 1, 10, 1, 2, 1, 0, h_diag_lag_init=0.25, h_diag_full_early=0.75, h_diag_author_init=9.0),
        _pt_study_figures("gru", 1, 100, 3, 4, 1, 2),
        _pt_study_figures("gru", 1, 1000, 5, 6, 1, 4, f=e, lags=lags, decay={"selected_bic": "exponential"}),
        # cells not in A_CELLS come after those that are, sorted; constgate before gru (A_CELLS order)
        _pt_study_figures("zz", 1, 10, 1, 1, 1, 1),
        _pt_study_figures("aa", 1, 10, 1, 1, 1, 1),
        _pt_study_figures("constgate", 1, 10, 4, 4, 4, 4),
    ]


NULLS4 = ["lag", "full", "author", "null4"]


def _a15_runs():
    """constgate: h_beh over seeds 1–3 = [0, 0, 6] at N=10 (mean 2, sd √8), [3, 3, 3] at N=100;
    gru: 1 and 2; smooth = −h_beh; Ĥ_N under the k-th null = h_beh + k. Given gru first."""
    out = []
    for cell, hb in (("gru", {10: [1, 1, 1], 100: [2, 2, 2]}), ("constgate", {10: [0, 0, 6], 100: [3, 3, 3]})):
        for N in (10, 100):
            for s in (1, 2, 3):
                h = float(hb[N][s - 1])
                r = {"nulls": NULLS4, "h_beh": h, "h_beh_smooth": -h}
                r.update({f"h_diag_{n}": h + k for k, n in enumerate(NULLS4)})
                out.append(({"cell": cell, "seed": s, "N": N}, r))
    return out


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


# ----------------------------------------------------------------------------------------------
# behaviour_dataset
# ----------------------------------------------------------------------------------------------


def test_trainings_for_different_N_differ_only_in_the_training_set(monkeypatch):
    seen = []
    real = eb.train

    def spy(cell, params, data, **kw):
        res = real(cell, params, data, **kw)
        seen.append((params, data, kw, res))
        return res

    monkeypatch.setattr(eb, "train", spy)
    for N in (8, 16):
        eb.a_behaviour(_cfg_behaviour(N=N))
    (p1, d1, k1, r1), (p2, d2, k2, r2) = seen
    assert k1 == k2 and k1["steps"] == SMOKE["a_behaviour"]["steps"] and k1["best_checkpoint"]
    assert len(r1.curves["step"]) == len(r2.curves["step"]) == k1["steps"]          # same number of steps
    assert all(np.array_equal(p1[k], p2[k]) for k in p1)                             # same initial weights
    for split in ("x_val", "y_val", "x_diag", "y_diag"):
        np.testing.assert_array_equal(getattr(d1, split), getattr(d2, split))
    assert (d1.n_train, d2.n_train) == (8, 16)
    assert not np.array_equal(d1.x_train[0, 0], d2.x_train[0, 0])                    # a fresh set per N
    np.testing.assert_array_equal(eb.behaviour_dataset(_cfg_behaviour(), 8).x_train, d1.x_train)   # deterministic
    # the planned runs of one cell and seed differ only in N
    runs = [r.config for r in eb.behaviour_runs("smoke", "numpy") if r.config["cell"] == "gru"]
    diffs = {k for a in runs for b in runs for k in a if a[k] != b[k]}
    assert diffs == {"N"} and sorted(r["N"] for r in runs) == SMOKE["a_behaviour"]["budgets"]


# ----------------------------------------------------------------------------------------------
# early_step
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------- three training points (issue 30 item 6)
def test_three_training_points_init_is_the_initial_parameters_with_eta():
    from lwsim import stats
    from lwsim.figures.training import _a_cell, _a_params, a_windows  # noqa: F401
    c = _cfg_behaviour(N=16)
    calls = []
    real = eb.a_windows

    def spy(cell, params, rates, *a, **kw):
        calls.append((params, rates))
        return real(cell, params, rates, *a, **kw)
    import pytest as _pt
    mp = _pt.MonkeyPatch()
    import lwsim.figures.training as training
    mp.setattr(eb, "a_windows", spy)
    mp.setattr(training, "a_windows", spy)          # the init point goes through training.init_windows
    mp.setattr(training, "_SHARED", {})
    try:
        out = eb.a_behaviour(c)
    finally:
        mp.undo()
    assert eb.early_step(dict(c, steps=240)) == 24 and eb.early_step(dict(c, steps=6)) == 1
    # calls: final (trained optimizer), init (initial parameters, P = η·I), early (checkpoint optimizer)
    p_init, r_init = calls[1]
    assert r_init == float(c["lr"])
    p0 = _a_params(_a_cell("gru", c), c)
    assert all(np.array_equal(np.asarray(p_init[k], np.float64), np.asarray(p0[k], np.float64)) for k in p0)
    assert not isinstance(calls[2][1], float)
    for n in ("lag", "full"):
        for p in ("init", "early"):
            assert f"h_diag_{n}_{p}" in out
    cell = _a_cell("gru", c).with_dtype("float64")
    p0 = {k: np.asarray(v, np.float64) for k, v in _a_params(cell, c).items()}
    ds = eb.behaviour_dataset(c, 16)
    t = a_windows(cell, p0, float(c["lr"]), ds.x_diag, ds.y_diag, c, nulls=("lag",))["lag"]
    assert out["h_diag_lag_init"] == float(stats.learnability_window(t.lags, t.n_hat, 16))
    # finding 9 states ρ at each point and H^beh's spread over seeds
    runs = [({"cell": cl, "seed": s, "N": N}, dict(out, h_beh=float(s * N % 7), h_diag_lag=float(N % 5),
                                                     h_diag_lag_init=float(N % 3)))
            for cl in ("gru", "lstm") for s in (1, 2) for N in (8, 16, 32)]
    rows = fb.f9({"A15": collect(runs)})[2]
    assert any("three training points" in r and "lag/init" in r for r in rows)
    assert any("spread over seeds" in r for r in rows)


# ----------------------------------------------------------------------------------------------
# nulls_of
# ----------------------------------------------------------------------------------------------


# ============================================================================ A15 (behaviour)
def test_a15_nulls_of_keeps_the_first_runs_order_and_only_nulls_in_every_run():
    runs = [({}, {"nulls": ["lag", "full", "author"]}), ({}, {"nulls": ["full", "lag"]})]
    assert A15.nulls_of(runs) == ["lag", "full"]            # author missing from run 2; run 1's order
    assert A15.nulls_of(runs[1:] + runs[:1]) == ["full", "lag"]


# ----------------------------------------------------------------------------------------------
# collect
# ----------------------------------------------------------------------------------------------


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


def test_scatter_data_and_tracking_verdict():
    full = [2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11]
    data = collect(_runs_behaviour(full))
    assert len(data["scatter"]) == 12 and data["nulls"] == ["lag", "full"]
    p = data["scatter"][4]
    assert p == {"cell": "gru", "seed": 1, "N": 100.0, "h_beh": 5.0, "h_beh_smooth": 5.5,
                 "h_diag": {"lag": 5.0, "full": 6.0}}
    d = data["cells"]["gru"]
    np.testing.assert_allclose(d["h_beh_mean"], [7, 8, 9])                         # (4+10)/2 …
    assert d["envelope"]["selected_bic"] in ("exponential", "tempered")
    t = fb.tracking(data)
    assert t["lag"]["pooled"] == pytest.approx(1.0)
    assert t["full"]["pooled"] == pytest.approx(1 - 6 * 12 / (12 * 143))            # 0.958042
    assert t["full"]["per_seed"] == {"1": pytest.approx(1 - 36 / 210), "2": pytest.approx(1 - 36 / 210)}
    v, best, which = fb.verdict(t)
    assert (v, best) == ("reproduced", "lag") and which.startswith("no null clearly better")
    # full further behind: lead 1 − 0.888 ≥ 0.1 and behind in every seed
    t = fb.tracking(collect(_runs_behaviour([3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10])))
    assert t["full"]["pooled"] == pytest.approx(1 - 6 * 32 / (12 * 143))            # 0.888112
    assert fb.verdict(t)[2].startswith("lag tracks behaviour better")


def test_finding9_not_reproduced_and_inconclusive():
    rev = [6, 5, 4, 3, 2, 1]
    t = fb.tracking(collect(_runs_behaviour([3.0] * 6, diag_lag=rev, seeds=(1,))))
    assert t["lag"]["pooled"] == pytest.approx(-1.0) and t["full"]["pooled"] is None
    assert fb.verdict(t)[0] == "not reproduced"
    t = fb.tracking(collect(_runs_behaviour([3.0] * 6, diag_lag=[1, 2, 3, 6, 5, 4], seeds=(1,))))
    assert t["lag"]["pooled"] == pytest.approx(1 - 6 * 8 / 210)                     # 0.771: one seed ≥ 0.5
    assert fb.verdict(t)[0] == "reproduced"
    two = fb.tracking(collect(_runs_behaviour([3.0] * 12, diag_lag=[1, 2, 3, 4, 5, 6, 12, 11, 10, 9, 8, 7])))
    assert two["lag"]["per_seed"]["2"] == pytest.approx(-1.0)                       # fails in one seed
    assert fb.verdict(two)[0] == "inconclusive"
    rows = fb.finding9_lines({"A15": collect(_runs_behaviour([3.0] * 12))})
    assert rows[0].startswith("## 9.") and rows[2].startswith("**inconclusive**")   # two cells per N: no within-N ρ
    assert fb.finding9_lines({})[2].startswith("Not run")


def test_a15_collect_points_and_per_cell_seed_arrays():
    data = A15.collect(_collect_runs())
    assert data["nulls"] == ["lag", "full"]
    assert list(data["cells"]) == ["constgate", "gru", "aa", "zz"]
    sc = data["scatter"]
    assert len(sc) == 10
    assert sc[0] == {"cell": "gru", "seed": 2, "N": 10.0, "h_beh": 3.0, "h_beh_smooth": 2.0,
                     "h_diag": {"lag": 3.0, "full": 0.0}}
    assert type(sc[0]["seed"]) is int and type(sc[0]["N"]) is float
    assert all(type(v) is float for v in (sc[0]["h_beh"], sc[0]["h_beh_smooth"], *sc[0]["h_diag"].values()))
    # Ĥ_N at init / early: only the lag and full nulls, keyed "null/point"; absent when none is given
    assert sc[4]["h_diag_points"] == {"lag/init": 0.25, "full/early": 0.75}
    assert all(type(v) is float for v in sc[4]["h_diag_points"].values())
    assert "h_diag_points" not in sc[5]

    d = data["cells"]["gru"]
    assert d["N"] == [10.0, 100.0, 1000.0] and d["seeds"] == [1, 2]
    # h_beh rows: seed 1 [1, 3, 5], seed 2 [3, 5, 9] → mean [2, 4, 7], population sd [1, 1, 2]
    np.testing.assert_array_equal(d["h_beh_seeds"], [[1, 3, 5], [3, 5, 9]])
    np.testing.assert_array_equal(d["h_beh_mean"], [2, 4, 7])
    np.testing.assert_array_equal(d["h_beh_sd"], [1, 1, 2])
    np.testing.assert_array_equal(d["h_beh_seeds_last"], [5, 9])
    np.testing.assert_array_equal(d["h_beh_smooth_seeds"], [[2, 4, 6], [2, 4, 6]])
    np.testing.assert_array_equal(d["h_beh_smooth_mean"], [2, 4, 6])
    # growth law on the seed means: rise 7 − 2 = 5; log slope = Σ(x−x̄)(H−H̄)/Σ(x−x̄)², x = ln10·(1,2,3)
    # → 5 ln10 / (2 ln²10) = 2.5/ln10; smooth: rise 4, slope 4 ln10/(2 ln²10) = 2/ln10
    assert d["growth"]["rise"] == 5.0 and d["growth"]["log_slope"] == pytest.approx(2.5 / math.log(10))
    assert d["growth_smooth"]["rise"] == 4.0
    assert d["growth_smooth"]["log_slope"] == pytest.approx(2 / math.log(10))
    lag, full = d["h_diag"]["lag"], d["h_diag"]["full"]
    np.testing.assert_array_equal(lag["seeds"], [[1, 1, 1], [3, 3, 5]])
    np.testing.assert_array_equal(lag["mean"], [2, 2, 3])
    np.testing.assert_array_equal(lag["sd"], [1, 1, 2])
    np.testing.assert_array_equal(lag["seeds_last"], [1, 5])
    np.testing.assert_array_equal(full["mean"], [0, 2, 4])
    np.testing.assert_array_equal(full["sd"], [0, 0, 0])
    # the envelope at the largest common N (1000): f = e^{−0.1ℓ} and 3 e^{−0.1ℓ} → mean 2 e^{−0.1ℓ}
    env = d["envelope"]
    assert env["per_seed_selected_bic"] == ["exponential", None]         # seed 2's decay has none
    assert env["selected_bic"] == "exponential" and env["selected"] == "exponential"
    assert env["lam"] == pytest.approx(0.1, rel=1e-9) and type(env["lam"]) is float
    c = data["cells"]["constgate"]
    assert c["N"] == [10.0] and c["seeds"] == [1] and c["growth"]["law"] == "flat"
    assert c["envelope"] == {"per_seed_selected_bic": []}             # no f at its largest N


def test_a15_cell_arrays_are_float64_like_the_points():
    runs = [_pt_study_figures("gru", s, N, np.float32(0.1), np.float32(0.2), 1.0, 2.0) for s in (1, 2) for N in (10, 100)]
    d = A15.collect(runs)["cells"]["gru"]
    # the points hold float(np.float32(0.1)) = 0.10000000149011612; the seed arrays are built from them
    assert d["h_beh_seeds"].dtype == np.float64 and d["h_beh_smooth_seeds"].dtype == np.float64
    assert d["h_beh_seeds"][0, 0] == float(np.float32(0.1))


# ----------------------------------------------------------------------------------------------
# envelope_law
# ----------------------------------------------------------------------------------------------


def test_a15_envelope_law_power_error_and_empty():
    lags = np.arange(1, 30.0)
    p = lags ** -1.5
    out = A15.envelope_law([{"f": p, "lags": lags, "decay": {"selected_bic": "power"}},
                            {"f": 3 * p, "lags": lags}, {"decay": {"selected_bic": "x"}}])
    # mean f = 2 ℓ^{−1.5}: the power law is exact, β = 1.5
    assert out["per_seed_selected_bic"] == ["power"]      # only results with an f count; the 2nd has no decay
    assert out["selected"] == "power" and out["beta"] == pytest.approx(1.5, rel=1e-9)
    assert type(out["beta"]) is float and type(out["lam"]) is float and "error" not in out
    # the seed mean is taken in float64: two float32 envelopes of 2e38 e^{−0.1ℓ} would overflow float32's
    # sum (max 3.4e38) to inf
    big = np.float32(2e38) * np.exp(-0.1 * lags).astype(np.float32)
    out = A15.envelope_law([{"f": big, "lags": lags}, {"f": big, "lags": lags}])
    assert "error" not in out and out["lam"] == pytest.approx(0.1, rel=1e-5)
    assert A15.envelope_law([]) == {"per_seed_selected_bic": []}
    assert A15.envelope_law([{"decay": {"selected_bic": "power"}}]) == {"per_seed_selected_bic": []}
    bad = A15.envelope_law([{"f": [1.0, 0.5, 0.25], "lags": [1, 2, 3], "decay": {"selected_bic": "power"}}])
    assert bad == {"per_seed_selected_bic": ["power"],
                   "error": "f has only 2 usable points in the fit window (need min_points=8); "
                            "check floor/trim and that f is positive"}


# ----------------------------------------------------------------------------------------------
# fig_a15
# ----------------------------------------------------------------------------------------------


def test_smoke_runs_render_a15(tmp_path):
    """Smoke-size A15 end to end for two cells: finite JSON, one legend entry per cell and null."""
    from lwsim.figures.runner import Run, run_grid
    runs = [Run.make("a_behaviour", **_cfg_behaviour(cell, N)) for cell in ("constgate", "lstm")
            for N in SMOKE["a_behaviour"]["budgets"]]
    out = run_grid(runs, cache_dir=tmp_path, jobs=1, progress=False)
    fig, data = fig_a15({"a_behaviour": [(r.config, out[r]) for r in runs]})
    labels = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert labels == ["constgate", "lstm"] + [f"null {n}" for n in data["nulls"]]
    assert set(data["nulls"]) >= {"lag"}
    text = json.dumps(to_jsonable(data), allow_nan=False)
    assert '"nan"' not in text and '"inf"' not in text
    r = out[runs[0]]
    assert r["c_hat"].shape == (SMOKE["a_behaviour"]["beh_max_lag"],) and 0 <= r["h_beh"] <= 12


def test_a15_figure_panels_scatter_legends_and_tracking():
    fig, data = A15.fig_a15({"a_behaviour": _a15_runs()})
    assert tuple(fig.get_size_inches()) == (12.0, 3.2)          # 3 panels in one row, 4.0 × 3.2 each
    axes = [a for a in fig.axes if a.get_visible()]
    assert len(axes) == 3
    ax = axes[0]                                                # constgate (A_CELLS order)
    assert ax.get_title() == "A15 constgate" and ax.get_xscale() == "log"
    assert ax.get_xlabel() == "N (training sequences)" and ax.get_ylabel() == "window (lags)"
    beh, smooth, *diag = ax.get_lines()
    np.testing.assert_array_equal(beh.get_xdata(), [10, 100])
    np.testing.assert_array_equal(beh.get_ydata(), [2, 3])
    assert beh.get_color() == BLUE and beh.get_linestyle() == "-" and beh.get_label() == r"$H^{beh}_N$"
    np.testing.assert_array_equal(smooth.get_xdata(), [10, 100])
    np.testing.assert_array_equal(smooth.get_ydata(), [-2, -3])
    assert (smooth.get_marker(), smooth.get_linestyle(), smooth.get_markersize(), smooth.get_color(),
            smooth.get_label()) == ("x", "None", 5, BLUE, r"$H^{beh}_{1/2}$")
    assert len(diag) == 4
    for k, (line, n) in enumerate(zip(diag, NULLS4)):
        np.testing.assert_array_equal(line.get_ydata(), [2 + k, 3 + k])
        assert line.get_label() == rf"$\hat H_N$ ({n})" and line.get_color() == "black"
        assert line.get_linestyle() == ("--", "-.", ":", "--")[k]          # styles cycle over 3
        assert line.get_marker() == ("o", "^", "s", "D")[k]
        assert (line.get_linewidth(), line.get_markersize(), line.get_markerfacecolor(), line.get_zorder()) \
            == (1.2, 3.5, "none", 3 + k)
    # bands: lower edge mean − sd floored at 0: 2 − √8 < 0 → 0 for h_beh and the first null;
    # the 2nd null: 3 − √8 = 0.172; upper edge mean + sd
    bands = ax.collections
    assert len(bands) == 5
    s8 = math.sqrt(8)
    assert _edges(bands[0])[10.0] == pytest.approx((0.0, 2 + s8))
    assert _edges(bands[1])[10.0] == pytest.approx((0.0, 2 + s8))
    assert _edges(bands[2])[10.0] == pytest.approx((3 - s8, 3 + s8))
    assert _edges(bands[0])[100.0] == pytest.approx((3.0, 3.0))
    assert to_rgba(bands[2].get_facecolor()[0])[:3] == (0.0, 0.0, 0.0)
    texts, size = _legend(ax)
    assert texts == [r"$H^{beh}_N$", r"$H^{beh}_{1/2}$"] + [rf"$\hat H_N$ ({n})" for n in NULLS4]
    assert size == 6
    assert axes[1].get_title() == "A15 gru" and axes[1].get_lines()[0].get_color() == RED

    ax = axes[2]
    assert ax.get_title() == "A15 all cells × N × seeds"
    assert ax.get_xlabel() == r"learned $H^{beh}_N$" and ax.get_ylabel() == r"diagnostic $\hat H_N$"
    pts = ax.collections
    assert len(pts) == 12 * 4                               # every point under every null
    first = pts[0]                                          # gru, N=10, seed 1, null lag: (1, 1)
    np.testing.assert_array_equal(first.get_offsets(), [[1.0, 1.0]])
    np.testing.assert_array_equal(first.get_sizes(), [14])
    np.testing.assert_array_equal(first.get_linewidths(), [0])
    assert tuple(first.get_facecolor()[0]) == to_rgba(RED, 0.7)
    assert _marker_is(first, "o")
    assert _marker_is(pts[3], "D") and _marker_is(pts[1], "^")
    np.testing.assert_array_equal(pts[3].get_offsets(), [[1.0, 4.0]])        # null4: h_beh + 3
    last = pts[-1]                                          # constgate, N=100, seed 3, null4: (3, 6)
    np.testing.assert_array_equal(last.get_offsets(), [[3.0, 6.0]])
    assert tuple(last.get_facecolor()[0]) == to_rgba(BLUE, 0.7)
    # the diagonal up to the largest value drawn: max(1, h_beh ≤ 6, Ĥ_N ≤ 6 + 3) = 9
    (diag_line,) = ax.get_lines()
    np.testing.assert_array_equal(diag_line.get_xdata(), [0, 9])
    np.testing.assert_array_equal(diag_line.get_ydata(), [0, 9])
    assert to_rgba(diag_line.get_color()) == (0.6, 0.6, 0.6, 1.0) and diag_line.get_linewidth() == 0.8
    texts, size = _legend(ax)
    assert texts == ["constgate", "gru"] + [f"null {n}" for n in NULLS4] and size == 6
    hs = ax.get_legend().legend_handles
    assert [h.get_marker() for h in hs] == ["o", "o", "o", "^", "s", "D"]
    assert [h.get_color() for h in hs] == [BLUE, RED] + ["black"] * 4
    assert all(h.get_linestyle() == "None" for h in hs)
    # finding 9's numbers: Ĥ_N = h_beh + k ranks as h_beh (ρ = 1); smooth = −h_beh ranks reversed (ρ = −1)
    assert set(data["tracking"]) == set(NULLS4)
    assert data["tracking"]["lag"]["pooled"] == pytest.approx(1.0) and data["tracking"]["lag"]["n"] == 12
    assert data["tracking_smooth"]["full"]["pooled"] == pytest.approx(-1.0)
    assert data["nulls"] == NULLS4 and list(data["cells"]) == ["constgate", "gru"]


def test_a15_diagonal_reaches_at_least_one():
    runs = [_pt_study_figures(c, s, N, 0.25 * s, 0.1, 0.5, 0.25) for c in ("gru", "lstm", "diaggate") for s in (1, 2)
            for N in (10, 100)]
    fig, data = A15.fig_a15({"a_behaviour": runs})
    ax = [a for a in fig.axes if a.get_visible()][-1]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [0, 1.0])    # every value ≤ 0.5 < 1
    # 3 cells + the scatter = 4 panels: 3 per row → 2 rows of 4.0 × 3.2
    assert tuple(fig.get_size_inches()) == pytest.approx((12.0, 6.4))
    assert len([a for a in fig.axes if a.get_visible()]) == 4
    fig, _ = A15.fig_a15({"a_behaviour": runs[:4]})
    assert tuple(fig.get_size_inches()) == (8.0, 3.2)                      # 2 panels: 2 × 4.0


# ----------------------------------------------------------------------------------------------
# spearman
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------- finding 9
def test_spearman_is_on_ranks():
    assert fb.spearman([1, 2, 3, 4, 5], [20, 10, 400, 300, 5000]) == pytest.approx(0.8)   # 1 − 6·4/120
    assert fb.spearman([1, 2, 3], [5, 5, 5]) is None and fb.spearman([1, 2], [1, 2]) is None


# ============================================================== behaviour/findings.py (finding 9)
def test_spearman_filters_pairs_with_a_non_finite_side_and_averages_ties():
    # 3 finite pairs remain (enough: the rule needs ≥ 3); ties → average ranks: x ranks 1.5, 1.5, 3,
    # y ranks 1, 2, 3 → ρ = 1.5 / √(1.5 · 2) = √3/2
    assert fb.spearman([1, 1, 2, np.nan], [1, 2, 3, 4]) == pytest.approx(np.sqrt(3) / 2, abs=1e-12)
    assert fb.spearman([1, 1, 2, 5], [1, 2, 3, np.inf]) == pytest.approx(np.sqrt(3) / 2, abs=1e-12)
    assert fb.spearman([3, 1, 2], [30, 10, 20]) == pytest.approx(1.0)
    assert fb.spearman([5, 5, 5], [1, 2, 3]) is None                         # constant x
    assert fb.spearman([1, 2, np.nan], [1, 2, 3]) is None                    # 2 finite pairs
    assert isinstance(fb.spearman([1, 2, 3], [3, 2, 1]), float)


def test_spearman_reads_none_as_missing():
    assert fb.spearman([1, 2, 3, None], [1, 2, 3, 4]) == pytest.approx(1.0)
    assert fb.spearman([1, 2, 3, 4], [4, 3, 2, None]) == pytest.approx(-1.0)


# ----------------------------------------------------------------------------------------------
# growth_law
# ----------------------------------------------------------------------------------------------


def test_growth_law_rule():
    N = np.array([10, 100, 1000, 10000.0])
    assert fb.growth_law(N, 5 + 10 * np.log10(N))["law"] == "log"
    g = fb.growth_law(N, 2 * N ** 0.5)
    assert g["law"] == "power" and g["power_beta"] == pytest.approx(0.5)
    assert fb.growth_law(N, [50, 52, 51, 53])["law"] == "flat"          # rise 3 ≤ 10% of 53


def test_growth_law_flat_boundary_and_floor():
    # rise 1 = 10% of max(1, 10): flat (≤)
    g = fb.growth_law([10, 100], [9.0, 10.0])
    assert g == {"law": "flat", "log_slope": None, "power_beta": None, "rss_log": None, "rss_power": None,
                 "rise": 1.0}
    # max H = 0.1 < 1: the floor 1 makes 10% = 0.1, and a rise 0.1 is flat
    assert fb.growth_law([10, 100], [0.0, 0.1])["law"] == "flat"
    # a rise 0.15 is not flat (the floor is 1, not more)
    assert fb.growth_law([10, 100, 1000], [0.0, 0.1, 0.15])["law"] != "flat"


def test_growth_law_numbers_by_hand():
    e = np.e
    # log N = 0, 1, 2 and H = 1, 2, 4 = N^(ln 2): linear fit slope (4 − 1)/2 = 1.5, intercept 7/3 − 1.5,
    # residuals 1/6, −1/3, 1/6 → RSS 1/6; the power law is exact (β = ln 2, RSS 0) → "power"
    g = fb.growth_law([1, e, e * e], [1.0, 2.0, 4.0])
    assert g["law"] == "power" and g["rise"] == 3.0
    assert g["log_slope"] == pytest.approx(1.5, abs=1e-12)
    assert g["rss_log"] == pytest.approx(1 / 6, abs=1e-12)
    assert g["power_beta"] == pytest.approx(np.log(2), abs=1e-12)
    assert g["rss_power"] == pytest.approx(0.0, abs=1e-20)
    # H = 1 + 2 log N exactly: the log law wins (RSS 0 against the power law's > 0)
    g = fb.growth_law([1, e, e * e], [1.0, 3.0, 5.0])
    assert g["law"] == "log" and g["log_slope"] == pytest.approx(2.0) and g["rss_log"] == pytest.approx(0, abs=1e-20)
    assert g["rss_power"] > 0.01


def test_growth_law_power_needs_two_positive_points_at_distinct_N():
    e = np.e
    g = fb.growth_law([1, e, e * e], [0.0, 0.0, 5.0])             # one H > 0: no power fit → "log"
    assert g["law"] == "log" and g["rss_power"] is None and g["power_beta"] is None
    g = fb.growth_law([1, e, e * e], [0.0, 3.0, 5.0])             # two H > 0: fitted
    assert g["power_beta"] == pytest.approx(np.log(5 / 3), abs=1e-12)   # exact through (1, 3), (2, 5)
    # the RSS is over every point: at N = 1 the power law gives 3/(5/3) = 1.8 against H = 0 → 3.24;
    # linear fit 1/6 + 2.5 log N, residuals −1/6, 1/3, −1/6 → 1/6: "log"
    assert g["rss_power"] == pytest.approx(3.24, abs=1e-12) and g["rss_log"] == pytest.approx(1 / 6, abs=1e-12)
    assert g["law"] == "log"
    g = fb.growth_law([1, 10, 10], [0.0, 5.0, 6.0])              # H > 0 only at one N: no power fit
    assert g["law"] == "log" and g["rss_power"] is None


def test_growth_law_indistinguishable_within_the_ratio():
    e = np.e
    # H = 1, 2.5, 4.75 at log N = 0, 1, 2: linear fit 0.875 + 1.875 log N, residuals 1/8, −1/4, 1/8 →
    # RSS 3/32 = 0.09375; the power fit's RSS is 0.09937 (ratio 1.06 < 1.25): indistinguishable
    g = fb.growth_law([1, e, e * e], [1.0, 2.5, 4.75])
    assert g["law"] == "indistinguishable"
    assert g["rss_log"] == pytest.approx(0.09375, abs=1e-12) and g["rss_power"] == pytest.approx(0.0993747, abs=1e-6)
    # H = 1, 2.25, 4: linear RSS 1/24 = 0.041667 against the power fit's 0.056129 (ratio 1.35 ≥ 1.25): log
    g = fb.growth_law([1, e, e * e], [1.0, 2.25, 4.0])
    assert g["law"] == "log"
    assert g["rss_log"] == pytest.approx(1 / 24, abs=1e-12) and g["rss_power"] == pytest.approx(0.0561285, abs=1e-6)
    assert fb.RSS_RATIO == 1.25 and fb.RHO_YES == 0.5 and fb.RHO_NO == 0.2 and fb.RHO_LEAD == 0.1


def test_growth_law_a_tie_of_two_exact_fits_is_not_indistinguishable(monkeypatch):
    # two points, both laws exact: N = 1, e and H = 1, e (log N = 0, 1; log H = 0, 1). The least-squares
    # fits are replaced by the exact two-point line so that both RSS are 0.0 on any LAPACK (the real
    # polyfit leaves ~1e-31 on some builds): the log law a = 1, b = e − 1 gives 1 + (e − 1) = e exactly,
    # the power law β = 1, C = 1 gives N exactly. "indistinguishable" needs the larger RSS < 1.25 × the
    # smaller (0 < 0: no), and a tie is not a smaller log RSS: the power law
    def two_point_line(x, y, deg):
        assert deg == 1 and len(x) == 2
        b = (y[1] - y[0]) / (x[1] - x[0])
        return np.array([b, y[0] - b * x[0]])
    monkeypatch.setattr(fb.np, "polyfit", two_point_line)
    g = fb.growth_law([1.0, np.e], [1.0, np.e])
    assert g["rss_log"] == 0.0 and g["rss_power"] == 0.0
    assert g["law"] == "power"


# ----------------------------------------------------------------------------------------------
# tracking
# ----------------------------------------------------------------------------------------------


def test_tracking_pooled_per_seed_and_within_N():
    t = fb.tracking(_a15())
    assert list(t) == ["lag", "full"]
    lag = t["lag"]
    assert lag["n"] == 12
    assert lag["pooled"] == pytest.approx(0.3985266984930429, abs=1e-12)     # scipy.stats.spearmanr
    # seed 1: x 1,2,1,2,1,2 vs 1,2,2,1,5,5 → ρ 0; seed 2: x 3,4,3,4,3,4 vs 3,4,3,4,5,5 → 1/√6
    assert list(lag["per_seed"]) == ["1", "2"]
    assert lag["per_seed"]["1"] == pytest.approx(0.0, abs=1e-12)
    assert lag["per_seed"]["2"] == pytest.approx(1 / np.sqrt(6), abs=1e-12)
    assert lag["within_N"] == pytest.approx(0.9, abs=1e-12)                    # mean(1, 0.8); N = 1000 left out
    assert t["full"] == {"pooled": None, "per_seed": {"1": None, "2": None}, "within_N": None, "n": 12}
    s = fb.tracking(_a15(), "h_beh_smooth")                                   # 10 − h_beh: every ρ negated
    assert s["lag"]["pooled"] == pytest.approx(-0.3985266984930429, abs=1e-12)
    assert s["lag"]["within_N"] == pytest.approx(-0.9, abs=1e-12)


# ----------------------------------------------------------------------------------------------
# verdict
# ----------------------------------------------------------------------------------------------


def test_verdict_boundaries():
    V = fb.verdict
    # reproduced exactly at ρ = 0.5 pooled and in every seed
    assert V({"lag": _track(0.5, [0.5, 0.5])})[0] == "reproduced"
    assert V({"lag": _track(0.5, [0.5, 0.49])})[0] == "inconclusive"
    assert V({"lag": _track(0.49, [0.9, 0.9])})[0] == "inconclusive"
    assert V({"lag": _track(0.9, [0.9, None])})[0] == "inconclusive"         # an undefined seed fails
    assert V({"lag": _track(0.9, [])})[0] == "inconclusive"                  # no seed at all
    # not reproduced when every defined pooled ρ < 0.2; 0.2 itself is not below
    assert V({"lag": _track(0.19, [0.9]), "full": _track(-0.5, [0.9])})[:2] == ("not reproduced", "lag")
    assert V({"lag": _track(0.2, [0.9]), "full": _track(-0.5, [0.9])})[0] == "inconclusive"
    assert V({"lag": _track(None, [None]), "full": _track(0.1, [0.9])}) == (
        "not reproduced", "full", "only one null (full)")
    assert V({"lag": _track(None, [None])}) == (
        "inconclusive", None, "ρ undefined for every null (a window constant over the points)")


def test_verdict_which_null_is_better():
    V = fb.verdict
    better = "full tracks behaviour better (pooled ρ ahead by ≥ 0.1 and ahead in every seed)"
    assert V({"lag": _track(0.1, [0.1, 0.1]), "full": _track(0.6, [0.6, 0.6])}) == ("reproduced", "full", better)
    # a lead of exactly 0.1 (0.3 − (0.3 − 0.1) is 0.1 in binary) is enough
    lead = {"lag": _track(0.3 - 0.1, [0.0, 0.0]), "full": _track(0.3, [0.2, 0.2])}
    assert V(lead) == ("inconclusive", "full", better)
    # behind in one seed: not clearly better
    assert V({"lag": _track(0.1, [0.1, 0.3]), "full": _track(0.6, [0.6, 0.3])})[2] == (
        "no null clearly better (largest pooled ρ: full)")
    # the other null undefined in a seed: the best still leads there; the best undefined in one: not
    assert V({"lag": _track(0.1, [0.1, None]), "full": _track(0.6, [0.6, 0.6])})[2] == better
    assert V({"lag": _track(0.1, [0.1, 0.1]), "full": _track(0.6, [0.6, None])})[2].startswith("no null clearly")
    # two others: both must be clearly behind
    three = {"lag": _track(0.1, [0.1]), "full": _track(0.6, [0.6]), "author": _track(0.55, [0.5])}
    assert V(three)[2] == "no null clearly better (largest pooled ρ: full)"
    three["author"] = _track(0.4, [0.5])
    assert V(three)[2] == better


# ----------------------------------------------------------------------------------------------
# _f
# ----------------------------------------------------------------------------------------------


def test_f9_growth_row_formats_nan_and_small_rss():
    # private: its public caller is the behaviour finding's text, which needs the rendered behaviour figures
    a = _a15()
    a["cells"] = {"gru": {"N": [10, 100, 1000], "h_beh_sd": [0.0, 0.0, 0.0], "h_beh_mean": [np.nan, 2.04, 3.06],
                          "h_beh_seeds_last": [3.0], "growth": {"law": "power", "rss_log": 1.234e-05,
                                                                "rss_power": np.nan, "power_beta": 0.5},
                          "envelope": {}, "h_diag": {"lag": {"seeds_last": []}, "full": {"seeds_last": [1.0]}}}}
    rows = fb.f9({"A15": a})[2]
    assert rows[-1] == ("gru: H^beh_N from nan (N = 10) to 3.1 (N = 1000), at the largest N 3.0 ± 0.0 (3.0…3.0, "
                        "1 seeds); growth law power (RSS log 1.23e-05, power nan, β 0.50); envelope law n/a by BIC "
                        "(per seed n/a) → [A] predicts n/a growth; Ĥ_N at the largest N lag n/a, full 1.0 ± 0.0 "
                        "(1.0…1.0, 1 seeds)")
    assert rows[-2] == "gru: H^beh_N spread over seeds (sd) at N = 10: 0.0, 100: 0.0, 1000: 0.0"
    a["cells"]["gru"]["h_beh_mean"] = [1.0, 2.0, np.nan]
    assert fb.f9({"A15": a})[2][-1].startswith("gru: H^beh_N from 1.0 (N = 10) to nan (N = 1000), at the largest N ")
    assert fb._f(np.nan) == "nan" and fb._f(None) == "n/a" and fb._f(0.125) == "0.12"


# ----------------------------------------------------------------------------------------------
# f9
# ----------------------------------------------------------------------------------------------


def test_finding9_verdict_reads_h_beh_not_the_smooth_window():
    # Ĥ_N (lag) follows H^beh exactly and runs against the smooth window; the full null is noise
    rng = np.random.default_rng(3)
    three = ("gru", "lstm", "constgate")          # a within-N ρ needs three cells
    runs = _runs(lambda c, s, n: float(n + 7 * c + 0.1 * s), lambda c, s, n: -float(n + 7 * c + 0.1 * s),
                 lambda c, s, n: float(n + 7 * c + 0.1 * s), lambda c, s, n: float(rng.random()), cells=three)
    a15 = collect(runs)
    nine = fb.f9({"A15": a15})
    assert nine[1] == "reproduced"
    assert nine[2][0].startswith("null lag: per-seed mean within-N ρ(Ĥ_N, H^beh_N) across cells 1 [1, 1] (3 seeds)")
    assert fb.within_n_by_seed(a15, "lag") == {1: pytest.approx(1.0), 2: pytest.approx(1.0), 3: pytest.approx(1.0)}
    assert ("one-sided reading (null lag): learned beyond the diagnostic window (H^beh_N > Ĥ_N) in 0 of 27 runs (0%)"
            in nine[2])
    track = fb.tracking(a15, "h_beh")
    assert track["lag"]["pooled"] == pytest.approx(1.0) and fb.verdict(track)[1] == "lag"
    assert fb.tracking(a15, "h_beh_smooth")["lag"]["pooled"] == pytest.approx(-1.0)
    # swapped: the smooth window follows Ĥ_N, H^beh runs against it → not reproduced
    runs2 = _runs(lambda c, s, n: -float(n + 7 * c + 0.1 * s), lambda c, s, n: float(n + 7 * c + 0.1 * s),
                  lambda c, s, n: float(n + 7 * c + 0.1 * s), lambda c, s, n: float(n + 7 * c + 0.1 * s), cells=three)
    assert fb.f9({"A15": collect(runs2)})[1] == "not reproduced"
    # the finding reads rendered["A15"], not another figure's data
    assert fb.f9({"A16": a15}) is None


def test_f9_rows_and_rule_whole():
    k, v, rows, rule = fb.f9({"A15": _a15_full()})
    assert (k, v) == (9, "inconclusive") and rule == RULE9
    tail = "; Ĥ_N at the largest N lag 3.0 ± 1.4 (2.0…4.0, 2 seeds), full 1.0 ± 0.0 (1.0…1.0, 1 seeds)"
    assert rows == SCHEME_NA + [     # within one seed and N there are too few cells for a ρ
        "null lag: Spearman ρ(Ĥ_N, H^beh_N) pooled over 12 cell × N × seed points 0.40 (per seed "
        "0.20 ± 0.29 (0.00…0.41, 2 seeds); mean within-N ρ across cells × seeds 0.90); against the smooth "
        "H^beh_½ -0.40",
        "null full: Spearman ρ(Ĥ_N, H^beh_N) pooled over 12 cell × N × seed points n/a (per seed n/a; mean "
        "within-N ρ across cells × seeds n/a); against the smooth H^beh_½ n/a",
        "which null: only one null (lag)",
        "Ĥ_N at three training points (init: initial parameters, P = η·I; early: step steps/10; final: above), "
        "pooled Spearman ρ with H^beh_N: early -1.00; init 0.68; lag/final 0.40; full/final n/a",
        "gru: H^beh_N spread over seeds (sd) at N = 10: 0.5, 1000: 1.3",
        "lstm: H^beh_N spread over seeds (sd) at N = 10: 0.0, 1000: 2.0",
        "constgate: H^beh_N spread over seeds (sd) at N = 10: 0.0, 1000: 0.0",
        "diaggate: H^beh_N spread over seeds (sd) at N = 10: 0.0, 1000: 0.0",
        "sharedgate: H^beh_N spread over seeds (sd) at N = 10: 0.0, 1000: 0.0",
        "gru: H^beh_N from 1.5 (N = 10) to 3.5 (N = 1000), at the largest N 3.5 ± 0.7 (3.0…4.0, 2 seeds); growth "
        "law log (RSS log 0.0123, power 2.5, β 0.50); envelope law exponential by BIC (per seed exponential, "
        "tempered) → [A] predicts log growth (agrees)" + tail,
        "lstm: H^beh_N from n/a (N = 10) to 2.0 (N = 1000), at the largest N n/a; growth law log (RSS log n/a, "
        "power n/a, β n/a); envelope law power by BIC (per seed n/a) → [A] predicts power growth (disagrees)" + tail,
        "constgate: H^beh_N from 1.0 (N = 10) to 1.0 (N = 1000), at the largest N 1.0 ± 0.0 (1.0…1.0, 1 seeds); "
        "growth law power (RSS log 1, power 0.5, β 0.25); envelope law n/a by BIC (per seed n/a) → [A] predicts "
        "n/a growth" + tail,
        "diaggate: H^beh_N from 1.0 (N = 10) to 1.0 (N = 1000), at the largest N 1.0 ± 0.0 (1.0…1.0, 1 seeds); "
        "growth law flat (RSS log n/a, power n/a, β n/a); envelope law tempered by BIC (per seed n/a) → [A] "
        "predicts log growth" + tail,
        "sharedgate: H^beh_N from 1.0 (N = 10) to 1.0 (N = 1000), at the largest N 1.0 ± 0.0 (1.0…1.0, 1 seeds); "
        "growth law indistinguishable (RSS log 1, power 1.1, β 1.00); envelope law power by BIC (per seed n/a) "
        "→ [A] predicts power growth" + tail,
    ]
    lines = fb.finding9_lines({"A15": _a15_full()})
    assert lines[:4] == ["## 9. The diagnostic window Ĥ_N tracks the learned window H^beh_N (A15)", "",
                         f"**inconclusive** — {RULE9}.", ""]
    assert lines[4:] == [f"- {r}" for r in rows] + [""]
    assert fb.f9({}) is None and fb.f9({"A15": None}) is None
    assert fb.finding9_lines({}) == ["## 9. The diagnostic window Ĥ_N tracks the learned window H^beh_N (A15)", "",
                                     "Not run in this call (A15 was not requested).", ""]


def test_f9_without_training_points():
    a = _a15()
    k, v, rows, rule = fb.f9({"A15": a})
    assert rows[5:] == ["which null: only one null (lag)"]       # no h_diag_points, no cells: nothing more


def test_finding9_finds_a_planted_tracking_window_and_not_a_planted_null():
    """Five cells, eight seeds: a diagnostic window that orders the cells as H^beh_N does at each N
    (plus noise) is found; one drawn independently of H^beh_N, under both nulls, is not."""
    rng = np.random.default_rng(5)
    five, seeds = ("gru", "lstm", "constgate", "diaggate", "sharedgate"), tuple(range(1, 9))
    beh = {(c, s, n): float(n + 7 * c) + rng.normal() for c in range(5) for s in seeds for n in (8, 16, 32)}
    found = collect(_runs(lambda c, s, n: beh[c, s, n], lambda c, s, n: 0.0,
                          lambda c, s, n: beh[c, s, n] + 2 * rng.normal(), lambda c, s, n: float(rng.random()),
                          seeds=seeds, cells=five))
    assert fb.f9({"A15": found})[1] == "reproduced"
    null = collect(_runs(lambda c, s, n: beh[c, s, n], lambda c, s, n: 0.0, lambda c, s, n: float(rng.random()),
                         lambda c, s, n: float(rng.random()), seeds=seeds, cells=five))
    verdict, best, _ = fb.scheme(null)
    assert verdict == "not reproduced"
    assert all(abs(r) < 1 for r in fb.within_n_by_seed(null, best).values())


def test_within_n_by_seed_reads_each_seeds_own_budgets_and_none_without_a_rho():
    # seed 1 at N 8 (ρ 1) and 16 (ρ −1); seed 2 at N 8 (ρ 1) and 32 (ρ 1): seed 1's mean is 0, not 1
    pts = ([_pt(1, 8, h, h) for h in (1.0, 2.0, 3.0)] + [_pt(1, 16, h, -h) for h in (1.0, 2.0, 3.0)]
           + [_pt(2, 8, h, h) for h in (1.0, 2.0, 3.0)] + [_pt(2, 32, h, h) for h in (1.0, 2.0, 3.0)])
    a15 = {"scatter": pts, "nulls": ["lag"]}
    assert fb.within_n_by_seed(a15, "lag") == {1: pytest.approx(0.0), 2: pytest.approx(1.0)}
    # two points per N give no ρ: that seed's value is None, not NaN
    assert fb.within_n_by_seed({"scatter": pts[:2], "nulls": ["lag"]}, "lag") == {1: None}


def test_scheme_best_null_by_mean_and_the_one_sided_rate_over_finite_pairs():
    # the full null tracks H^beh (ρ 1 at each N), the lag null runs against it (ρ −1): best is "full",
    # although "lag" sorts after it
    pts = [dict(_pt(s, n, h, -h, full=h)) for s in (1, 2, 3) for n in (8, 16) for h in (1.0, 2.0, 3.0)]
    pts[0]["h_beh"] = 9.0                          # beyond its full window (1.0): one of the finite pairs
    pts[1]["h_diag"] = {"lag": -2.0, "full": float("nan")}      # no full window: left out of the rate
    verdict, best, rows = fb.scheme({"scatter": pts, "nulls": ["lag", "full"]})
    assert best == "full"
    assert rows[-1] == ("one-sided reading (null full): learned beyond the diagnostic window (H^beh_N > Ĥ_N) in "
                        "1 of 17 runs (6%)")
