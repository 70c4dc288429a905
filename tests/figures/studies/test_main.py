"""Tests of lwsim/figures/studies/main (laid out like the code: docs/testing.md).

Mutation-testing kills for lwsim/figures/studies/main/findings.py (issue 32, docs/testing.md).

Every expected text and number here is written out by hand from small hand-built figure data; the
verdict-bearing parts (per-seed counting, the nested test, the exponential growth guard, the f4 and
f5 bounds) get inputs placed exactly at, or just across, each bound.

Mutation tests (issue 32) for lwsim/figures/studies/main/master.py: hand-made runs, hand numbers.

Provenance of the [A] main study (a_main; A1–A9, A14, findings 1–5 under each null;
lwsim/figures/studies/main/) and of the optimizer comparison (A10; studies/optimizers.py): which
inputs each stored number was computed from (issue 41 item 6).

``a_main`` runs through the registry below SMOKE's size (lag and full nulls, no floor ablations);
its outputs are recomputed from lwsim's public API (lwsim.tasks, lwsim.make_cell, lwsim.train,
lwsim.window, lwsim.stats) on the inputs they SHOULD use: the trained model (not its initial
parameters), its optimizer (not another optimizer's), the held-out rows (not the training rows),
the lag table for the unsuffixed keys and the full table for the ``_full`` keys; each decoy is
checked to give another value. Finding rules get hand-built figure data where the quantity they
should read and a decoy disagree.

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 a_main: the unsuffixed tables taken from the "full" null (null_tables.pop("full"))
     → test_tables_by_null_from_the_trained_model_on_held_out_rows
  P2 a_main: the "_full" master fit on the lag table (``_master(det, f)``) instead of its own
     → test_decay_and_master_fits_read_f_and_their_own_table
  P3 a_main: a_null_tables on ds.x_train, ds.y_train instead of the held-out rows
     → test_tables_by_null_from_the_trained_model_on_held_out_rows
  P4 a_main: the decay law fitted on f_gates instead of f
     → test_decay_and_master_fits_read_f_and_their_own_table
  P5 null_view: a variant's view keeps the lag run's "h_n" (NULL_KEYS without "h_n")
     → test_null_view_swaps_in_every_key_of_the_variant
  P6 f5: the verdict from the N* per-seed slopes instead of the N̂ ones
     → test_f5_reads_the_nhat_slopes_not_the_nstar_ones
  P7 f4: the fast/slow means from "fraction_below_1.9" instead of "mean"
     → test_f4_reads_mean_alpha_not_the_fraction
  P10 f1_f2: the law chosen by AIC ("selected") instead of BIC ("selected_bic")
     → test_f1_f2_read_the_bic_law_and_the_seed_mean_window
  P11 f3: Ĥ_N at the smallest N instead of the largest
     → test_f3_reads_the_tau_spread_and_the_last_window

Aggregates above the per-sequence math (docs/diagnostics.md §2.8–2.10, docs/experiments.md §5.4).

Each statistic is recomputed by hand from the per-pair / per-triple / per-seed values, on random
gated cells where mean and median differ (asserted), so a swapped aggregate fails.

The FINDINGS rules (lwsim.figures.findings, docs/experiments.md §5.5) on hand-built figure data.

Every rule gets cases whose verdict is known — reproduced, not reproduced, inconclusive — placed so
that a flipped comparison, a non-strict bound made strict (or the reverse), a mean for a median or
a seed-mean verdict that ignores one dissenting seed changes the outcome.

Tests that kill the surviving mutants of mutmut on the studies' finding rules and report text
(issue 32, docs/testing.md): behaviour/findings.py (finding 9), b_s2/findings.py (finding 8),
conventions/findings.py (A13) and main/nulls.py (findings 1–5 per null). Every input is built by
hand and every expected number or line is written out; none compares the code with itself.

The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases.

Aggregates on data where the alternatives disagree (docs/statistics.md §3.5, docs/experiments.md
§5.4–5.5, docs/fidelity.md): mean ≠ median ≠ lower median, even counts, ties at a threshold, a
majority of exactly half, values on a fence. Every expectation is computed by hand in a comment.

Covered: A14 per-seed κ̂ summary and the seed spread of fig_a14; the author's seed-averaged master
window; finding 8's rule (findings.f8 and findings_b.f8_conventions); spread_text; the A13 summary
(seed means of λ, Ĥ_N growth, mean α̂ and its rules); [B] B1 seed means, B4/B5 medians and IQR over
seeds, B6 quartiles and error bars, B7's robust seed filter."""


from __future__ import annotations


import numpy as np
import pytest

import lwsim
import lwsim.figures.studies
from lwsim import stats
from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import preset_sizes
from lwsim.figures.studies.main import findings as F, findings as fm, nulls as nl
from lwsim.figures.studies.main.findings import TITLES
from lwsim.figures.studies.main.master import _log, _pooled, _slope, fig_a14, seed_factors, spread
from lwsim.figures.style import plt
from lwsim.tasks import make as make_task
from lwsim.train import train
from lwsim.window import window_chain


N = [100, 1000, 10000, 100000]                     # mid index 2: growth = H[-1] − H[2]


T_EXP = {"delta_bic": 3.0, "beta": 0.1, "beta_ci": [-0.2, 0.4], "k": 1.25, "k_ci": [0.75, 1.5],
         "at_edge": False, "exponential_ok": True, "slower": False}


T_EXP_TEXT = "ΔBIC +3.0, β 0.10 [-0.20, 0.40], k 1.25 [0.75, 1.50] → exponential"


T_SLOW = {"delta_bic": 25.0, "beta": 0.5, "beta_ci": [0.25, 0.75], "k": 0.5, "k_ci": [0.3, 0.7],
          "at_edge": True, "exponential_ok": False, "slower": True}


T_SLOW_TEXT = "ΔBIC +25.0, β 0.50 [0.25, 0.75], k 0.50 [0.30, 0.70] (box edge) → slower than exponential"


T_NOT = {"delta_bic": -12.5, "beta": 0.0, "beta_ci": [0.0, 0.0], "k": 2.0, "k_ci": [1.5, 2.5],
         "at_edge": False, "exponential_ok": False, "slower": False}


T_NOT_TEXT = "ΔBIC -12.5, β 0.00 [0.00, 0.00], k 2.00 [1.50, 2.50] → not exponential"


def _a2(sel="exponential", **extra):
    return {"selected_bic": sel, "selected": sel} | extra


def _run(kap):
    lags = np.arange(1, 6)
    f = np.exp(-0.5 * lags)
    return {"f": f, "mean": f, "sigma_hat": np.ones(5), "kappa_hat": np.asarray(kap, float),
            "n_star": np.full(5, 50.0), "n_hat": np.array([10.0, 10.0, 100.0, np.inf, 100.0]),
            "n_grid": np.array([10.0, 100.0]), "lags": lags}


def _lin_run(a, b, kappa=2.0, n=8):
    # f = e^{−ℓ/4}; |m̄| = f^a, σ̂ = f^b; N* = (σ̂/|m̄|)^κ = f^{−κ(a−b)} → log N* = (a − b)·(−κ log f)
    lags = np.arange(1, n + 1, dtype=float)
    f = np.exp(-lags / 4)
    n_star = (f ** b / f ** a) ** kappa
    return {"f": f, "mean": f ** a, "sigma_hat": f ** b, "kappa_hat": np.full(n, kappa),
            "alpha_hat": np.full(n, kappa / (kappa - 1)), "n_star": n_star, "n_hat": n_star.copy(),
            "n_grid": np.array([1.0, 1e6]), "lags": lags}


PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}


SMOKE = PRESETS["smoke"]


def _cfg(cell="gru", optimizer="adamw", **kw):
    c = {k: v for k, v in SMOKE["a_main"].items()
         if k not in ("seeds", "optimizers")}
    return {**c, **dict(cell=cell, seed=212, optimizer=optimizer, backend="numpy", nulls=["lag", "full"],
                        floor_ablations=[], n_boot=20, epochs=2,
                        eps=2.0, n_grid=[2 ** i for i in range(1, 14)]), **kw}   # ε 2: N̂ finite and spread


def _retrain(c):
    """The run's training from the public API → (float64 cell, float64 p0, float64 result, data)."""
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"], coefs=c["task_coefs"],
                     sigma_y=c["sigma_y"])
    ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
    opts = {"layernorm": True, "readout": "every", "dtype": "float32"}
    if c["cell"] == "constgate":
        opts["s"] = c["s0"]
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], **opts)
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
    kw = {"lr": c["lr"]}
    if c["optimizer"] == "adamw":
        kw["weight_decay"] = c["weight_decay"]
    res = train(cell, p0, ds, optimizer=c["optimizer"], optimizer_kwargs=kw, epochs=c["epochs"],
                batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"], progress=False)
    return (cell.with_dtype("float64"), {k: np.asarray(v, np.float64) for k, v in p0.items()},
            res.astype("float64"), ds)


def _chain(cell, p, rates, x, y, c):
    return window_chain(cell, p, rates, x, y, np.asarray(c["lags"]), c["n_grid"], nulls=["lag", "full"], K=c["K"],
                        seed=c["seed"], backend=c["backend"], eps=c["eps"], n_boot=c["n_boot"])


def _table(ch, null):
    return next(iter(ch.tables[null].values()))


@pytest.fixture(scope="module")
def run():
    c = _cfg()
    out = EXPERIMENTS["a_main"](c)
    cell, p0, res, ds = _retrain(c)
    return c, out, (cell, p0, res, ds), _chain(cell, res.params, res.optimizer, ds.x_diag, ds.y_diag, c)


def _run_aggregates(a, b, kappa=2.0, eps=20.0, lags=np.arange(1, 21)):
    f = np.exp(-0.1 * lags)
    m, sig = -3.0 * f ** a, 2.0 * f ** b            # a negative mean: |m̄| is used
    n_star = (eps * sig / np.abs(m)) ** kappa
    grid = np.array([10.0, 100.0, 300.0, 1000.0])
    n_hat = np.array([grid[grid >= v][0] if (grid >= v).any() else np.inf for v in n_star])
    return {"f": f, "mean": m, "sigma_hat": sig, "kappa_hat": np.full(lags.size, kappa), "n_star": n_star,
            "n_hat": n_hat, "n_grid": grid, "lags": lags}


def _a14_findings(per_seed, a=1.0, b=0.0, ends=(0, 0)):
    per = [{"slope_mean_vs_f": a, "slope_sigma_vs_f": b, "predicted_master_slope": a - b, "kappa_median": 2.0,
            "n_at_smallest_N": ends[0], "n_never": ends[1], "master_slope_nhat": s, "master_slope_nstar": s}
           for s in per_seed]
    summ = {k: {"mean": float(np.mean([p[k] for p in per]))} for k in per[0]}
    fit = {"slope": float(np.mean(per_seed)), "r2": 0.9, "n": 40}
    return {"A14": {"gru": {"per_seed": per, "summary": summ, "n_lags": 20, "author": {"slope": 1.0}},
                    "pooled": {"nhat": fit, "nstar": fit, "nhat_per_seed": list(per_seed),
                               "nstar_per_seed": list(per_seed), "author_per_cell": {"gru": 1.0}}}}


def _run_studies_findings(cell, seed, **h):
    res = {"h_n": np.array(h["lag"], float)}
    res.update({k: f"{k}-lag" for k in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_hat", "n_star", "reliable",
                                        "master")})
    for n, v in h.items():
        if n != "lag":
            res[f"h_n_{n}"] = np.array(v, float)
            res.update({f"{k}_{n}": f"{k}-{n}" for k in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_hat",
                                                         "n_star", "reliable", "master")})
    return ({"cell": cell, "seed": seed}, res)


def _results():
    nan = float("nan")
    return {"a_main": [
        _run_studies_findings("lstm", 0, lag=[0, 0, 0.5], full=[2, 2, 2], author=[1, 1, 1], snr=[0, 1, 2]),
        _run_studies_findings("gru", 0, lag=[1, 2, 4], full=[0, 0, 0], author=[1, 2, nan], snr=[5, 5, 5]),
        _run_studies_findings("gru", 1, lag=[1, 3, 3], full=[0, 0, 1], author=[1, 2, 2], snr=[5, 5, 6]),
    ]}


L_LAG = "lag: each lag's statistic against its own spread"


L_FULL = "full: against the spread of the whole per-sequence update"


L_AUTHOR = "author: lag + σ̂ floor + ECF tiny-IQR grid + float32 diagnostics"


L_SNR = "lag + SNR = 0 for σ̂ ≤ 1e−12"


BV = {"lag": {1: (1, "reproduced", ["a1"], "rule one"), 2: (2, "not reproduced", [], "rule two"),
              3: (3, "inconclusive", ["c1", "c2"], "rule three"), 4: (4, "reproduced", [], "rule four"),
              5: (5, "inconclusive", [], "rule five")},
      "full": {1: (1, "inconclusive", ["f1"], "rule one"), 5: (5, "reproduced", [], "rule five")},
      "author": {1: (1, "not reproduced", [], "rule one")},
      "snr": {1: (1, "reproduced", [], "r"), 5: (5, "not reproduced", [], "r")}}


# ----------------------------------------------------------------------------- findings per null
def _runs():
    """Two seeds of one cell, with the "full" keys and a partial ablation on one seed only."""
    base = dict(lags=np.array([1.0, 2.0]), n_grid=np.array([10.0, 100.0, 1000.0]), f=np.array([1.0, 0.5]))
    out = []
    for seed, (h_lag, h_full) in enumerate((([1.0, 2.0, 2.0], [0.0, 1.0, 2.0]), ([2.0, 2.0, 2.0], [0.0, 0.0, 1.0]))):
        r = dict(base, h_n=np.array(h_lag), h_n_full=np.array(h_full))
        for k in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_hat", "n_star", "reliable", "master"):
            r[k], r[f"{k}_full"] = f"{k}-lag", f"{k}-full"
        if seed == 0:
            r["h_n_snr"] = np.array(h_lag)
        out.append(({"cell": "gru", "seed": seed, "optimizer": "adamw"}, r))
    return {"a_main": out, "b_s1": ["untouched"]}


# ----------------------------------------------------------------------------- A14
def _run_sharp_aggregates(a, b, kappa=2.0, eps=20.0, lags=np.arange(1, 21)):
    f = np.exp(-0.1 * lags)
    m, sig = -3.0 * f ** a, 2.0 * f ** b
    kap = np.broadcast_to(np.asarray(kappa, float), lags.shape).copy()
    n_star = (eps * sig / np.abs(m)) ** np.where(np.isfinite(kap), kap, 2.0)
    return {"f": f, "mean": m, "sigma_hat": sig, "kappa_hat": kap, "n_star": n_star,
            "n_hat": n_star.copy(), "n_grid": np.array([10.0, 100.0, 1000.0]), "lags": lags,
            "alpha_hat": np.full(lags.size, 1.5)}


def test_tables_by_null_from_the_trained_model_on_held_out_rows(run):
    c, out, (cell, p0, res, ds), ch = run
    lag, full = _table(ch, "lag"), _table(ch, "full")
    np.testing.assert_array_equal(out["f"], ch.envelope.f)
    np.testing.assert_array_equal(out["psi"], ch.matched.samples)
    for key, field in (("h_n", "h_n"), ("n_hat", "n_hat"), ("alpha_hat", "alpha"), ("n_star", "n_star"),
                       ("mean", "mean")):
        np.testing.assert_array_equal(out[key], getattr(lag, field), err_msg=key)
        np.testing.assert_array_equal(out[f"{key}_full"], getattr(full, field), err_msg=key)
    # decoys: the other null's table; the initial parameters; the training rows; the final weights
    # with the preconditioner of the first step (η·I)
    # (at this size the lower bound of |m̄| leaves every N* infinite: the fits tell the tables apart)
    assert not np.array_equal(lag.sigma, full.sigma)
    np.testing.assert_array_equal(out["sigma_hat"], lag.sigma)
    np.testing.assert_array_equal(out["sigma_hat_full"], full.sigma)
    for p, rates, x, y in ((p0, res.optimizer, ds.x_diag, ds.y_diag),
                           (res.params, res.optimizer, ds.x_train, ds.y_train),
                           (res.params, float(c["lr"]), ds.x_diag, ds.y_diag)):
        d = _chain(cell, p, rates, x, y, c)
        assert not np.array_equal(_table(d, "lag").mean, out["mean"])
        assert not np.array_equal(_table(d, "full").sigma, out["sigma_hat_full"])
        assert not np.array_equal(d.envelope.f, out["f"])


def test_decay_and_master_fits_read_f_and_their_own_table(run):
    c, out, _, ch = run
    lags, f = np.asarray(c["lags"]), ch.envelope.f
    dec = stats.fit_decay(lags, f)
    assert out["decay"]["selected_bic"] == dec.selected_bic
    assert out["decay"]["fits"]["exponential"]["params"] == dec.fits["exponential"].params
    assert stats.fit_decay(lags, out["f_gates"]).fits["exponential"].params != dec.fits["exponential"].params

    def master(t):           # the full table has too few distinct N̂ here: its error text is the value
        ok = np.isfinite(t.n_hat)
        try:
            return stats.fit_master(t.n_hat[ok], t.kappa[ok], f[ok]).__dict__
        except ValueError as exc:
            return {"error": str(exc)}

    lag, full = _table(ch, "lag"), _table(ch, "full")
    assert out["master"] == master(lag) and out["master_full"] == master(full)
    # at this size both tables' N̂ are all infinite under the lower bound of |m̄| (the same error
    # text); the tables themselves differ
    assert not np.array_equal(lag.sigma, full.sigma)


def test_final_r2_is_the_last_validation_evaluation(run):
    _, out, (_, _, res, _), _ = run
    assert out["final_val_r2"] == float(res.curves["val_r2"][-1])
    np.testing.assert_array_equal(out["curve_val_r2"], res.curves["val_r2"])
    assert res.curves["val_r2"][-1] != res.curves["val_r2"][0]


def test_the_run_trains_with_its_own_optimizer():
    """a_compare's runs are a_main runs with another optimizer: the trained model is that optimizer's."""
    c = _cfg(optimizer="sgd", epochs=1)
    out = EXPERIMENTS["a_main"](c)
    cell, _, res, ds = _retrain(c)
    np.testing.assert_array_equal(out["f"], _chain(cell, res.params, res.optimizer, ds.x_diag, ds.y_diag, c).envelope.f)
    cell, _, res_a, _ = _retrain(dict(c, optimizer="adamw"))
    assert not np.array_equal(out["f"], _chain(cell, res_a.params, res_a.optimizer, ds.x_diag, ds.y_diag, c).envelope.f)


# ----------------------------------------------------------------------------------------------
# f1_f2
# ----------------------------------------------------------------------------------------------


def test_f1_f2_need_both_figures():
    a1 = {"constgate": {"N": N, "H_N_mean": [0, 5, 20, 20]}}
    assert F.f1_f2({"A1": a1}) is None
    assert F.f1_f2({"A2": {"constgate": _a2()}}) is None


# ----------------------------------------------------------------------------------------------
# _nested_text
# ----------------------------------------------------------------------------------------------


def test_nested_text_each_outcome():
    # private: its public caller, finding 1 (main findings), needs the whole A-figure set
    assert F._nested_text(T_EXP) == T_EXP_TEXT
    assert F._nested_text(T_SLOW) == T_SLOW_TEXT
    assert F._nested_text(T_NOT) == T_NOT_TEXT
    # both flags set: "exponential" wins (the test says the exponential law is not rejected)
    assert F._nested_text(T_SLOW | {"exponential_ok": True}).endswith("(box edge) → exponential")


# ----------------------------------------------------------------------------------------------
# f3
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# f4
# ----------------------------------------------------------------------------------------------


def test_f4_one_group_missing():
    for a6 in ({"constgate": {"mean": 1.8, "fraction_below_1.9": 0.4}},
               {"gru": {"mean": 1.8, "fraction_below_1.9": 0.4}}):
        (n, verdict, rows, rule), = F.f4({"A6": a6})
        assert (n, verdict, rule) == (4, "inconclusive", "needs both groups")
        assert rows == [f"{next(iter(a6))}: mean α̂ = 1.800 (per seed n/a), fraction α̂ < 1.9 = 0.40"]


def test_f4_one_group_missing_findings():
    assert F.f4({"A6": {"constgate": {"mean": 1.8, "fraction_below_1.9": 0.4}}})[0][1] == "inconclusive"


# ----------------------------------------------------------------------------------------------
# master_diagnosis
# ----------------------------------------------------------------------------------------------


def test_master_diagnosis_missing_end_counts_are_zero():
    # exactly half of 20 lags at the ends is not "most", whichever count is missing
    assert F.master_diagnosis({"n_never": {"mean": 10}}, 20) == []
    assert F.master_diagnosis({"n_at_smallest_N": {"mean": 10}}, 20) == []
    assert F.master_diagnosis({"n_at_smallest_N": {"mean": 10}, "n_never": {"mean": 1}}, 20) == [
        "the grid clamps most lags (11.0 of 20 at its ends)"]


def test_master_diagnosis_names_each_factor():
    S = lambda a, b, lo, never: {"slope_mean_vs_f": {"mean": a}, "slope_sigma_vs_f": {"mean": b},  # noqa: E731
                                 "n_at_smallest_N": {"mean": lo}, "n_never": {"mean": never}}
    assert F.master_diagnosis(S(1.0, 0.1, 2, 3), 20) == []
    why = F.master_diagnosis(S(0.5, 0.9, 4, 7), 20)
    assert len(why) == 3
    assert why[0].startswith("|m̄| falls more slowly than f (a = 0.50")
    assert why[1].startswith("σ̂ falls with ℓ (b = 0.90")
    assert why[2].startswith("the grid clamps most lags (11.0 of 20")
    # the bounds: a = 0.7 and b = 0.3 are not flagged, exactly half of the lags at the ends is not "most"
    assert F.master_diagnosis(S(0.7, 0.3, 5, 5), 20) == []
    assert F.master_diagnosis(S(0.69, 0.31, 6, 5), 20) == [
        "|m̄| falls more slowly than f (a = 0.69 < 0.7)", "σ̂ falls with ℓ (b = 0.31 > 0.3)",
        "the grid clamps most lags (11.0 of 20 at its ends)"]


# ----------------------------------------------------------------------------------------------
# _sig
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# f5
# ----------------------------------------------------------------------------------------------


def test_f5_rows_carry_the_decomposition():
    rows = F.f5(_a14_findings([0.9, 1.1], a=0.5, b=0.4, ends=(3, 9)))[0][2]
    gru = [r for r in rows if r.startswith("gru:")][0]
    assert "a = 0.50 ± 0.00" in gru and "b = 0.40" in gru and "predicted slope a − b = 0.10" in gru
    assert gru.endswith("|m̄| falls more slowly than f (a = 0.50 < 0.7); σ̂ falls with ℓ (b = 0.40 > 0.3); "
                        "the grid clamps most lags (12.0 of 20 at its ends)")


# ----------------------------------------------------------------------------------------------
# training_lines
# ----------------------------------------------------------------------------------------------


def test_training_lines_whole_text():
    a8 = {"gru": {"final_val_r2": [0.91234, None]}, "lstm": {}}
    assert F.training_lines({"A8": a8}) == ["Final validation R² of the [A] main trainings (A8), per seed:", "",
                                            "- gru: 0.912, n/a", "- lstm: ", ""]
    a8 = {"gru": {"final_val_r2": [0.5], "r2_ceiling": 0.8, "sigma_y": 0.25}}
    assert F.training_lines({"A8": a8}) == [
        "Final validation R² of the [A] main trainings (A8), per seed, against its ceiling R²* = 0.800: the exact "
        "predictor's R², the best any network can reach given the task's noise σ_y = 0.25 (R²* = 1 − T σ_y² / "
        "Σ_t Var y_t, `lwsim.tasks.multilag_r2_ceiling`); the share of the ceiling reached in brackets:", "",
        "- gru: 0.500 (62%)", ""]                                          # 0.5 / 0.8 = 62.5 % → 62 %


def test_training_lines_read_a8_r2():
    lines = fm.training_lines({"A8": {"gru": {"final_val_r2": [0.25, 0.5], "r2_ceiling": None}},
                               "A1": {"gru": {"final_val_r2": [0.9]}}})
    assert lines[-2] == "- gru: 0.250, 0.500"


def test_training_lines_list_every_run():
    lines = F.training_lines({"A8": {"gru": {"final_val_r2": [0.91234, None]}}})
    assert lines[2] == "- gru: 0.912, n/a"
    assert F.training_lines({}) == []


def test_training_lines_print_the_r2_ceiling():
    """Validation R² beside its ceiling R²* from σ_y and the share reached (issue 33 item 5)."""
    a8 = {"gru": {"final_val_r2": [0.0906, None], "r2_ceiling": 0.905, "sigma_y": 0.3}}
    lines = F.training_lines({"A8": a8})
    assert "ceiling R²* = 0.905" in lines[0] and "σ_y = 0.3" in lines[0]
    assert lines[2] == "- gru: 0.091 (10%), n/a"                       # 0.0906 / 0.905 = 10.0 %
    old = F.training_lines({"A8": {"gru": {"final_val_r2": [0.5]}}})      # a JSON without the ceiling
    assert old[2] == "- gru: 0.500"


# ----------------------------------------------------------------------------------------------
# _slope
# ----------------------------------------------------------------------------------------------


def test_slope_needs_three_points():
    assert _slope([1.0, 2.0], [1.0, 2.0]) is None
    assert _slope([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(2.0)


# ----------------------------------------------------------------------------------------------
# _log
# ----------------------------------------------------------------------------------------------


def test_log_of_zero_and_negative():
    # |−e| → log e = 1; 0 → nan (no −inf)
    out = _log([-np.e, 0.0, 1.0])
    assert out[0] == pytest.approx(1.0) and np.isnan(out[1]) and out[2] == 0.0


# ----------------------------------------------------------------------------------------------
# seed_factors
# ----------------------------------------------------------------------------------------------


def test_seed_factors_kappa_range_and_counts():
    # κ̂ = [nan, 3, 1, 2, inf]: finite {3, 1, 2} → median 2, range [1, 3]
    s = seed_factors(_run([np.nan, 3.0, 1.0, 2.0, np.inf]))
    assert s["kappa_median"] == 2.0
    assert s["kappa_range"] == [1.0, 3.0]
    # N̂ = [10, 10, 100, inf, 100] on grid [10, 100]: 2 at the smallest N, 1 never, 2 inside
    assert (s["n_lags"], s["n_at_smallest_N"], s["n_never"], s["n_inside_grid"]) == (5, 2, 1, 2)
    # |m̄| = f → a = 1; σ̂ flat → b = 0; predicted slope 1
    assert s["slope_mean_vs_f"] == pytest.approx(1.0)
    assert s["slope_sigma_vs_f"] == pytest.approx(0.0, abs=1e-12)
    assert s["predicted_master_slope"] == pytest.approx(1.0)


def test_seed_factors_without_finite_kappa():
    s = seed_factors(_run([np.nan] * 5))
    assert s["kappa_median"] is None and s["kappa_range"] is None


def test_seed_factors_predicted_slope_none_when_a_missing():
    r = _run([1.0] * 5)
    r["mean"] = np.zeros(5)                               # log|0| = nan everywhere → a is None
    s = seed_factors(r)
    assert s["slope_mean_vs_f"] is None and s["predicted_master_slope"] is None


def test_seed_factors_decomposition():
    # |m̄| ∝ f^0.8, σ̂ ∝ f^0.3: N* ∝ f^{−κ(0.8 − 0.3)} → master slope with N* = a − b = 0.5
    r = _run_aggregates(0.8, 0.3)
    s = seed_factors(r)
    assert s["slope_mean_vs_f"] == pytest.approx(0.8, abs=1e-12)
    assert s["slope_sigma_vs_f"] == pytest.approx(0.3, abs=1e-12)
    assert s["predicted_master_slope"] == pytest.approx(0.5, abs=1e-12)
    assert s["master_slope_nstar"] == pytest.approx(0.5, abs=1e-12)
    assert s["kappa_median"] == 2.0
    # N* = (20·2/3)² e^{0.1ℓ} = 177.8 e^{0.1ℓ}: none ≤ 10; above 1000 iff ℓ > 10 log 5.625 = 17.3
    n_star = r["n_star"]
    assert s["n_at_smallest_N"] == 0
    assert s["n_never"] == int((n_star > 1e3).sum()) == 3
    assert s["n_inside_grid"] == 17


def test_seed_factors_counts_the_smallest_budget():
    r = _run_aggregates(1.0, 0.0, eps=0.1)                          # N* = (0.1·2/3)² ≈ 0.0044 < 10 for every lag
    s = seed_factors(r)
    assert (s["n_at_smallest_N"], s["n_never"], s["n_inside_grid"]) == (20, 0, 0)
    assert s["master_slope_nhat"] == pytest.approx(0.0, abs=1e-12)   # clamped N̂: slope 0
    assert s["master_slope_nstar"] == pytest.approx(1.0, abs=1e-12)  # a − b = 1: the law holds for N*


def test_seed_factors_kappa_median_and_range_skewed():
    kap = np.array([1.5, 2.0, 3.0, 10.0, np.nan, np.inf])
    s = seed_factors(_run_sharp_aggregates(1.0, 0.0, kappa=kap, lags=np.arange(1, 7)))
    # finite κ̂: 1.5, 2, 3, 10 → median (2 + 3)/2 = 2.5 (lower median 2, mean 4.125)
    assert s["kappa_median"] == 2.5
    assert s["kappa_range"] == [1.5, 10.0]                 # inf and NaN left out
    s = seed_factors(_run_sharp_aggregates(1.0, 0.0, kappa=np.array([1.5, 1.5, 2.0, 9.0, 9.5]), lags=np.arange(1, 6)))
    assert s["kappa_median"] == 2.0                        # odd count: the middle value (mean 4.7)
    none = seed_factors(_run_sharp_aggregates(1.0, 0.0, kappa=np.full(3, np.inf), lags=np.arange(1, 4)))
    assert none["kappa_median"] is None and none["kappa_range"] is None


# ----------------------------------------------------------------------------------------------
# _author_fit
# ----------------------------------------------------------------------------------------------


def test_author_fit_slope_and_errors():
    from lwsim.figures.studies.main.master import _author_fit
    # 12 lags of the exact law (a = 1, b = 0): window = every lag, slope 1, r² 1
    out = _author_fit([_lin_run(1.0, 0.0, n=12), _lin_run(1.0, 0.0, n=12)])
    assert out["slope"] == pytest.approx(1.0) and out["r2"] == pytest.approx(1.0)
    assert out["n"] == 12 and out["window"] == [1.0, 12.0] and out["intercept"] == pytest.approx(0.0, abs=1e-9)
    # 8 lags: the window is found, the master fit refuses (< 10 lags) → its message and the window
    out = _author_fit([_lin_run(1.0, 0.0)])
    assert out == {"error": "fit_master needs >= 10 usable lags (finite n_hat and kappa, f > 0) with >= 3 "
                            "distinct n_hat; got 8 lags, 8 distinct n_hat", "window": [1.0, 8.0]}
    r = _lin_run(1.0, 0.0, n=12)
    r["f"] = np.zeros(12)                                  # no positive f: no power-law window
    assert _author_fit([r])["error"].startswith("power-law window: f has only 0 usable points")


# ----------------------------------------------------------------------------------------------
# spread
# ----------------------------------------------------------------------------------------------


def test_spread_empty_and_single():
    assert spread([]) == {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    assert spread([None, 4.0]) == {"mean": 4.0, "sd": 0.0, "min": 4.0, "max": 4.0, "n": 1}
    # [1, 3]: mean 2, sd (ddof 1) = √2
    assert spread([3.0, 1.0]) == {"mean": 2.0, "sd": pytest.approx(np.sqrt(2.0)), "min": 1.0, "max": 3.0,
                                  "n": 2}


def test_spread_over_seeds():
    assert spread([1.0, 2.0, 6.0]) == {"mean": 3.0, "sd": pytest.approx(np.sqrt(7.0)), "min": 1.0,
                                       "max": 6.0, "n": 3}
    assert spread([None, 2.0])["sd"] == 0.0
    assert spread([None])["n"] == 0


# ----------------------------------------------------------------------------------------------
# _pooled
# ----------------------------------------------------------------------------------------------


def test_pooled_master_slope_over_cells_and_per_seed():
    # cell A slope 0.5 (a − b), cell B slope 1.0; pooled over both: x ranges overlap → in between
    runs = {"a": [_run_aggregates(0.8, 0.3), _run_aggregates(0.9, 0.4)], "b": [_run_aggregates(1.0, 0.0), _run_aggregates(1.0, 0.0)]}
    p0 = _pooled(runs, "n_star", 0)
    x = np.concatenate([-2.0 * np.log(runs[c][0]["f"]) for c in runs])
    y = np.concatenate([np.log(runs[c][0]["n_star"]) for c in runs])
    assert p0["slope"] == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-12)
    assert 0.5 < p0["slope"] < 1.0 and p0["n"] == 40
    assert _pooled(runs, "n_star")["n"] == 80


# ----------------------------------------------------------------------------------------------
# fig_a14
# ----------------------------------------------------------------------------------------------


def test_fig_a14_data_and_axes():
    from lwsim.figures.studies.main.master import fig_a14
    runs = [({"cell": "gru"}, _lin_run(1.0, 0.0)), ({"cell": "constgate"}, _lin_run(0.8, 0.3)),
            ({"cell": "constgate"}, _lin_run(0.6, 0.1)),
            ({"cell": "gru", "optimizer": "sgd"}, _lin_run(0.0, 1.0))]   # another optimizer: left out
    fig, data = fig_a14({"a_main": runs})
    # cells in A_CELLS order, then "pooled"
    assert list(data) == ["constgate", "gru", "pooled"]
    assert data["gru"]["n_lags"] == 8 and len(data["constgate"]["per_seed"]) == 2
    sm = data["constgate"]["summary"]
    # a over seeds {0.8, 0.6}: mean 0.7, sd √0.02, min 0.6, max 0.8; a − b = 0.5 for both (sd 0)
    assert sm["slope_mean_vs_f"]["mean"] == pytest.approx(0.7)
    assert sm["slope_mean_vs_f"]["sd"] == pytest.approx(np.sqrt(0.02))
    assert (sm["slope_mean_vs_f"]["min"], sm["slope_mean_vs_f"]["max"]) == pytest.approx((0.6, 0.8))
    assert sm["predicted_master_slope"]["mean"] == pytest.approx(0.5)
    assert sm["master_slope_nstar"]["mean"] == pytest.approx(0.5)
    assert sm["kappa_median"] == {"mean": 2.0, "sd": 0.0, "min": 2.0, "max": 2.0, "n": 2}
    assert set(sm) == {"slope_mean_vs_f", "slope_sigma_vs_f", "predicted_master_slope", "kappa_median",
                       "master_slope_nhat", "master_slope_nstar", "n_at_smallest_N", "n_never",
                       "n_inside_grid"}
    p = data["pooled"]
    # per seed: seed 0 = constgate (0.5) + gru (1.0) pooled, seed 1 = constgate only (0.5)
    assert p["nstar_per_seed"][1] == pytest.approx(0.5) and len(p["nstar_per_seed"]) == 2
    assert p["nhat_per_seed"][1] == pytest.approx(0.5)
    assert 0.5 < p["nstar_per_seed"][0] < 1.0 and 0.5 < p["nstar"]["slope"] < 1.0
    assert p["nstar"]["n"] == 24 and p["nhat"]["n"] == 24
    assert set(p["author_per_cell"]) == {"constgate", "gru"}
    ax = fig.axes
    assert [a.get_title() for a in ax[:4]] == ["A14 mean vs envelope (theory: slope 1)", "tail scale (theory: flat)",
                                               "κ̂ = α̂/(α̂−1)", "N̂ vs N* (dashed: grid ends)"]
    assert (ax[0].get_xscale(), ax[0].get_yscale()) == ("log", "log")
    assert (ax[1].get_xscale(), ax[1].get_yscale()) == ("linear", "log")
    assert (ax[3].get_xscale(), ax[3].get_yscale()) == ("log", "log")
    assert ax[0].get_xlabel() == "f(ℓ)" and ax[2].get_xlabel() == "lag ℓ"
    # grid [1, 1e6]: xlim [0.1, 1e7], diagonal + 2 grid-end lines after 3 seeds' points
    assert ax[3].get_xlim() == pytest.approx((0.1, 1e7))
    assert len(ax[3].lines) == 3 + 1 + 2
    assert [l.get_ydata()[0] for l in ax[3].lines[-2:]] == [1.0, 1e6]
    # legend: one entry per cell
    assert [t.get_text() for t in ax[0].get_legend().get_texts()] == ["constgate", "gru"]
    np.testing.assert_allclose(ax[2].lines[0].get_ydata(), 2.0)
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_fig_a14_author_fit_and_pooled_per_seed():
    from lwsim.figures.studies.main.master import fig_a14
    from lwsim.figures.style import plt

    def run(a, b):
        r = _run_aggregates(a, b)
        r["n_hat"] = r["n_star"].copy()                 # continuous N: the author fit sees a − b exactly
        r["alpha_hat"] = np.full(r["f"].size, 1.5)
        return r
    R = {"a_main": [({"cell": "gru", "seed": s, "optimizer": "adamw"}, run(0.8, 0.3)) for s in (1, 2)]
         + [({"cell": "lstm", "seed": s, "optimizer": "adamw"}, run(1.0, 0.0)) for s in (1, 2)]}
    fig, data = fig_a14(R)
    plt.close(fig)
    assert data["gru"]["author"]["slope"] == pytest.approx(0.5, abs=1e-10)
    assert data["lstm"]["author"]["slope"] == pytest.approx(1.0, abs=1e-10)
    assert data["gru"]["summary"]["slope_sigma_vs_f"]["mean"] == pytest.approx(0.3, abs=1e-12)
    assert data["pooled"]["author_per_cell"] == {"gru": pytest.approx(0.5), "lstm": pytest.approx(1.0)}
    assert len(data["pooled"]["nhat_per_seed"]) == 2


def test_fig_a14_summary_is_the_spread_over_three_unequal_seeds():
    # GRU seeds with a = 0.5, 0.6, 1.0 (b = 0.1): a − b = 0.4, 0.5, 0.9
    R = {"a_main": [({"cell": "gru", "seed": s, "optimizer": "adamw"}, _run_sharp_aggregates(a, 0.1, kappa=k))
                    for s, (a, k) in enumerate(((0.5, 2.0), (0.6, 2.0), (1.0, 8.0)))]}
    fig, data = fig_a14(R)
    plt.close(fig)
    S = data["gru"]["summary"]
    # mean 0.7 (median 0.6); sd ddof 1 = √((0.04 + 0.01 + 0.09)/2) = √0.07
    assert S["slope_mean_vs_f"]["mean"] == pytest.approx(0.7, abs=1e-12)
    assert S["slope_mean_vs_f"]["sd"] == pytest.approx(np.sqrt(0.07), abs=1e-12)
    assert (S["slope_mean_vs_f"]["min"], S["slope_mean_vs_f"]["max"]) == (pytest.approx(0.5), pytest.approx(1.0))
    assert S["predicted_master_slope"]["mean"] == pytest.approx(0.6, abs=1e-12)   # (0.4+0.5+0.9)/3
    assert S["kappa_median"]["mean"] == pytest.approx(4.0) and S["kappa_median"]["n"] == 3   # (2+2+8)/3
    # one cell: each seed's pooled slope is its own a − b, in seed order
    assert data["pooled"]["nstar_per_seed"] == [pytest.approx(0.4), pytest.approx(0.5), pytest.approx(0.9)]


# ----------------------------------------------------------------------------------------------
# variants
# ----------------------------------------------------------------------------------------------


def test_variants_order_and_intersection():
    R = _results()
    assert nl.variants(R) == ["lag", "full", "author", "snr"]
    del R["a_main"][1][1]["h_n_author"]                       # one run without "author": not a variant
    assert nl.variants(R) == ["lag", "full", "snr"]
    R["a_main"][0][1]["h_n_f32"] = 1                          # in one run only
    assert nl.variants(R) == ["lag", "full", "snr"]
    assert nl.variants({}) == [] and nl.variants({"a_main": []}) == [] and nl.variants({"a_main": None}) == []
    assert nl.ABLATIONS == ("snr", "ecf", "floors", "f32")


# ----------------------------------------------------------------------------------------------
# null_view
# ----------------------------------------------------------------------------------------------


# --- nulls and findings: hand-built data ---------------------------------------------------------
def test_null_view_swaps_in_every_key_of_the_variant():
    res = {}
    for i, k in enumerate(nl.NULL_KEYS):
        res[k] = np.array([float(i)])
        res[f"{k}_full"] = np.array([100.0 + i])
        res[f"{k}_author"] = np.array([200.0 + i])
    results = {"a_main": [({"cell": "gru", "seed": 1}, res)], "a_compare": ["shared"]}
    view = nl.null_view(results, "full")
    (cfg, r), = view["a_main"]
    for i, k in enumerate(nl.NULL_KEYS):
        assert r[k][0] == 100.0 + i, k
    assert view["a_compare"] is results["a_compare"] and nl.null_view(results, "lag") is results
    assert nl.variants(results) == ["lag", "full", "author"]
    assert nl.h_last_table(results) == {"lag": {"gru": [float(nl.NULL_KEYS.index("h_n"))]},
                                        "full": {"gru": [100.0 + nl.NULL_KEYS.index("h_n")]},
                                        "author": {"gru": [200.0 + nl.NULL_KEYS.index("h_n")]}}


def test_null_view_message_names_the_run_and_the_missing_keys():
    R = {"a_main": [({"cell": "gru", "seed": 3}, {"h_n": 1, "h_n_full": 2})]}
    with pytest.raises(KeyError) as e:
        nl.null_view(R, "full")
    assert e.value.args[0] == ("run gru/3 has no 'full' keys ['mean', 'alpha_hat', 'sigma_hat', 'kappa_hat', "
                               "'n_hat', 'n_star', 'reliable', 'master']")


def test_null_view_swaps_only_the_detection_keys():
    from lwsim.figures.studies.main.nulls import null_view, variants
    R = _runs()
    assert variants(R) == ["lag", "full"]            # "snr" is missing in one run: not a variant
    assert null_view(R, "lag") is R
    V = null_view(R, "full")
    assert V["b_s1"] is R["b_s1"]
    (_, r0), (_, r1) = V["a_main"]
    assert list(r0["h_n"]) == [0.0, 1.0, 2.0] and r0["mean"] == "mean-full" and r0["master"] == "master-full"
    assert list(r0["f"]) == [1.0, 0.5]                # the envelope is shared by every null
    assert list(R["a_main"][0][1]["h_n"]) == [1.0, 2.0, 2.0]      # the input is not modified
    with pytest.raises(KeyError, match="snr"):
        null_view(R, "snr")


# ----------------------------------------------------------------------------------------------
# h_last_table
# ----------------------------------------------------------------------------------------------


def test_h_last_and_growth_tables_hand_computed():
    from lwsim.figures.studies.main.nulls import growth_table, h_last_table
    R = _runs()
    assert h_last_table(R) == {"lag": {"gru": [2.0, 2.0]}, "full": {"gru": [2.0, 1.0]}}
    # growth = last − middle of the N grid: lag 2−2, 2−2; full 2−1, 1−0
    assert growth_table(R) == {"lag": {"gru": [0.0, 0.0]}, "full": {"gru": [1.0, 1.0]}}


# ----------------------------------------------------------------------------------------------
# _mean
# ----------------------------------------------------------------------------------------------


def test_tables_and_mean():
    # private: its public caller, the nulls summary, needs every null's rendered figure data
    R = _results()
    assert nl.h_last_table(R)["lag"] == {"gru": [4.0, 3.0], "lstm": [0.5]}           # A_CELLS order
    assert list(nl.h_last_table(R)["lag"]) == ["gru", "lstm"]
    assert nl.growth_table(R)["snr"] == {"gru": [0.0, 1.0], "lstm": [1.0]}             # last − middle
    assert nl._mean([1.0, None, float("nan"), 3.0]) == 2.0
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no "mean of empty slice" warning: NaN directly
        assert np.isnan(nl._mean([None, float("inf")])) and np.isnan(nl._mean([]))


# ----------------------------------------------------------------------------------------------
# null_lines
# ----------------------------------------------------------------------------------------------


def test_null_lines_whole():
    T = TITLES
    assert nl.null_lines(BV, _results()) == [
        "## Findings 1–5 under each null", "",
        "The same rules on the same trained models; only the detection table changes (docs/statistics.md §3.3). "
        f"**{L_LAG}**; **{L_FULL}**; **{L_AUTHOR}**.", "",
        "| # | finding | lag | full | author |", "|---|---|---|---|---|",
        f"| 1 | {T[1]} | reproduced | inconclusive | not reproduced |",
        f"| 2 | {T[2]} | not reproduced | not run | not run |",
        f"| 3 | {T[3]} | inconclusive | not run | not run |",
        f"| 4 | {T[4]} | reproduced | not run | not run |",
        f"| 5 | {T[5]} | inconclusive | reproduced | not run |",
        "",
        "Ĥ_N at the largest N (mean over seeds; min…max) and, in brackets, its growth over the upper half of the "
        "N grid (mean over seeds), per cell and variant:", "",
        "| variant | gru | lstm |", "|---|---|---|",
        f"| {L_LAG} | 3.5 (3…4) [+1.0] | 0.5 (0.5…0.5) [+0.5] |",
        f"| {L_FULL} | 0.5 (0…1) [+0.5] | 2.0 (2…2) [+0.0] |",
        f"| {L_AUTHOR} | 2.0 (nan…nan) [+0.0] | 1.0 (1…1) [+0.0] |",       # a NaN seed left out of the means
        f"| {L_SNR} | 5.5 (5…6) [+0.5] | 2.0 (2…2) [+1.0] |",
        "",
        "The author's floors one at a time (findings 1 and 5):", "",
        "| variant | finding 1 | finding 5 |", "|---|---|---|",
        f"| {L_LAG} | reproduced | inconclusive |",
        f"| {L_SNR} | reproduced | not reproduced |",
        f"| {L_AUTHOR} | not reproduced | not run |",
        "",
        "### Under the 'lag' null", "",
        f"**1. {T[1]}: reproduced** — rule one.", "", "- a1", "",
        f"**2. {T[2]}: not reproduced** — rule two.", "", "",
        f"**3. {T[3]}: inconclusive** — rule three.", "", "- c1", "- c2", "",
        f"**4. {T[4]}: reproduced** — rule four.", "", "",
        f"**5. {T[5]}: inconclusive** — rule five.", "", "",
        "### Under the 'full' null", "",
        f"**1. {T[1]}: inconclusive** — rule one.", "", "- f1", "",
        f"**5. {T[5]}: reproduced** — rule five.", "", "",
        "### Under the 'author' null", "",
        f"**1. {T[1]}: not reproduced** — rule one.", "", ""]


def test_null_lines_without_ablations_author_or_runs():
    T = TITLES
    bv = {"lag": BV["lag"], "snr": BV["snr"]}
    lines = nl.null_lines(bv, {})
    assert lines[:7] == ["## Findings 1–5 under each null", "",
                         "The same rules on the same trained models; only the detection table changes "
                         f"(docs/statistics.md §3.3). **{L_LAG}**.", "", "| # | finding | lag |", "|---|---|---|",
                         f"| 1 | {T[1]} | reproduced |"]
    i = lines.index("The author's floors one at a time (findings 1 and 5):")
    assert lines[i - 1] == "" and lines[i - 2] == f"| 5 | {T[5]} | inconclusive |"        # no Ĥ_N table
    assert lines[i + 4:i + 7] == [f"| {L_LAG} | reproduced | inconclusive |",
                                  f"| {L_SNR} | reproduced | not reproduced |", ""]       # no author row
    lines = nl.null_lines({"lag": BV["lag"]}, {})
    assert "The author's floors one at a time (findings 1 and 5):" not in lines
    assert lines[11:13] == ["", "### Under the 'lag' null"]
    assert nl.null_lines({}, _results()) == []


# ----------------------------------------------------------------------------------------------
# findings 1–5 by the verdict scheme (docs/experiments.md §5.5.2), hand tables
# ----------------------------------------------------------------------------------------------

T2 = 4.302652729749462            # t_{0.975, 2}: three seeds
HALF3 = T2 / np.sqrt(3)           # half-width per unit sample sd with three seeds
N8 = [25.0 * 2 ** i for i in range(8)]
CELLS5 = ("constgate", "sharedgate", "diaggate", "gru", "lstm")


def _h_rate(rate, offset=-30.0):
    """Ĥ_N = rate ln N + offset on N8 (all inside (0, 100) for rate 10)."""
    return list(rate * np.log(N8) + offset)


def _scheme_r(k=(1.0, 1.05, 0.95), beta=(0.0, 0.05, -0.05), lam=(0.05, 0.055, 0.05 / 1.1), kappa=2.0,
              h=None, h_full=None, h_author=None, r2=(0.6, 0.6, 0.6), slow_k=(0.5, 0.55, 0.45)):
    """Every cell with three seeds: the fast cells' nested fits (k, β), the slow cells' k; Ĥ_N under
    the lag, full and author nulls; R² as a share of a 0.9 ceiling."""
    h = h or [_h_rate(10)] * 3
    r = {"A1": {}, "A1_full": {}, "A1_author": {}, "A2": {}, "A8": {}, "A14_full": {}}
    for c in CELLS5:
        ks = k if c in F.FAST else slow_k
        r["A2"][c] = {"lags": list(range(1, 101)), "per_seed_lambda": list(lam),
                      "per_seed_nested_exp": [{"k": a, "beta": b} for a, b in zip(ks, beta)]}
        r["A1"][c] = {"N": N8, "H_N_seeds": h}
        r["A1_full"][c] = {"N": N8, "H_N_seeds": h_full or h}
        r["A1_author"][c] = {"N": N8, "H_N_seeds": h_author or h}
        r["A8"][c] = {"final_val_r2": [x * 0.9 for x in r2], "r2_ceiling": 0.9}
        r["A14_full"][c] = {"per_seed": [{"kappa_median": kappa}] * 3}
    return r


def test_growth_share_and_cap_by_hand():
    assert F.growth_share([0, 2, 4, 8, 10], last_lag=None) == pytest.approx(6 / 10)   # h[-1] − h[2] = 6, max 10
    assert F.growth_share([0, 0.5, 0.5, 0.5], last_lag=20) == 0.0                      # max(1, 0.5) = 1
    assert F.growth_share([0, 2, 4, 20], last_lag=20) is None                          # capped in the upper half
    assert F.growth_share([20, 2, 4, 6], last_lag=20) == pytest.approx(2 / 20)          # a cap in the lower half counts


def test_growth_rate_log2_by_hand():
    # slope 10 per ln N; [A]'s rate 1/(κλ) = 1/(2 · 0.05) = 10 → ratio 1, log2 0
    assert F.growth_rate_log2(_h_rate(10), N8, 0.05, 2.0, 100) == pytest.approx(0.0, abs=1e-12)
    assert F.growth_rate_log2(_h_rate(20), N8, 0.05, 2.0, 100) == pytest.approx(1.0)
    assert F.growth_rate_log2(_h_rate(10), N8, 0.05, 4.0, 100) == pytest.approx(1.0)   # κ doubles the ratio
    # only points with 0 < Ĥ_N < last lag: rate 10 below 40, then capped at 40
    h = [min(x, 40.0) for x in _h_rate(10)]
    assert F.growth_rate_log2(h, N8, 0.05, 2.0, 40) == pytest.approx(0.0, abs=1e-12)
    assert F.growth_rate_log2([0, 0, 0, 0, 1, 2, 40, 40], N8, 0.05, 2.0, 40) is None   # two usable points
    assert F.growth_rate_log2([5.0] * 8, N8, 0.05, 2.0, 100) == F.RATIO_FLOOR_LOG2    # flat: ratio 0 → 1/64
    for lam, kap in ((None, 2.0), (0.05, None), (0.0, 2.0), (np.nan, 2.0), (0.05, -1.0)):
        assert F.growth_rate_log2(_h_rate(10), N8, lam, kap, 100) is None


def _rows(out, k):
    return {n: (v, rows) for n, v, rows, _ in out}[k]


def test_f1_parts_by_hand():
    flat = [[0, 0, 0, 0, 5, 5, 5, 5]] * 3
    out = F.f1_f2(_scheme_r(h_author=flat))
    v1, rows1 = _rows(out, 1)
    assert v1 == "reproduced"
    assert rows1[0] == "parts: 1a reproduced, 1b reproduced, 1c reproduced"
    k_half, b_half = 0.05 * HALF3, 0.05 * HALF3
    assert rows1[1] == (f"constgate — 1a decay class: k 1 [{1 - k_half:.3g}, {1 + k_half:.3g}] (3 seeds), "
                        f"β 0 [{-b_half:.3g}, {b_half:.3g}] (3 seeds) → reproduced (exponential class: "
                        "|k − 1| ≤ 0.2 and |β| ≤ 0.2)")
    # 1b: log2 ratios 0, log2 1.1, −log2 1.1 (λ per seed 0.05, 0.055, 0.05/1.1)
    s = np.std([0.0, np.log2(1.1), -np.log2(1.1)], ddof=1)
    assert rows1[2].startswith("constgate — 1b log2(measured Ĥ_N rate / [A]'s 1/(κ̂λ)) under the full null: ")
    assert f" [{-s * HALF3:.3g}, {s * HALF3:.3g}] (3 seeds) → reproduced (region |log2 ratio| ≤ 1" in rows1[2]
    assert rows1[3].startswith("constgate — 1c Ĥ_N growth share under the author null: 0 [0, 0] (3 seeds) → "
                               "reproduced (region ≤ 0.1; 3 of 3 seeds)")


def test_f1_each_part_can_fail_alone():
    flat = [[0, 0, 0, 0, 5, 5, 5, 5]] * 3
    # 1a: k far from 1 in every seed
    v, rows = _rows(F.f1_f2(_scheme_r(k=(0.5, 0.55, 0.45), h_author=flat)), 1)
    assert v == "not reproduced" and rows[0] == "parts: 1a not reproduced, 1b reproduced, 1c reproduced"
    # 1b: Ĥ_N grows 4× faster than [A]'s rate (log2 = 2)
    v, rows = _rows(F.f1_f2(_scheme_r(h_full=[_h_rate(40, -125)] * 3, h_author=flat)), 1)
    assert rows[0].startswith("parts: 1a reproduced, 1b not reproduced")
    # 1c: under the author null Ĥ_N keeps growing (share (h[-1] − h[4]) / h[-1] > 0.1)
    v, rows = _rows(F.f1_f2(_scheme_r()), 1)
    assert v == "not reproduced" and rows[0] == "parts: 1a reproduced, 1b reproduced, 1c not reproduced"


def test_f2_parts_by_hand():
    grow = [_h_rate(10)] * 3                        # share (h[-1] − h[4]) / h[-1] = 3 ln 2 · 10 / h[-1]
    share = (grow[0][-1] - grow[0][4]) / grow[0][-1]
    v, rows = _rows(F.f1_f2(_scheme_r()), 2)
    assert v == "reproduced" and rows[0] == "parts: 2a reproduced, 2b reproduced"
    assert rows[1].startswith("diaggate — 2a decay class: k 0.5 [") and "→ reproduced" in rows[1]
    assert rows[2] == (f"diaggate — 2b Ĥ_N growth share under the full null: {share:.3g} [{share:.3g}, {share:.3g}] "
                       "(3 seeds) → reproduced (region > 0.1; 3 of 3 seeds)")
    # exponential-class slow cells: 2a not reproduced; flat windows: 2b not reproduced
    flat = [[0, 0, 0, 0, 5, 5, 5, 5]] * 3
    v, rows = _rows(F.f1_f2(_scheme_r(slow_k=(1.0, 1.05, 0.95), h_full=flat)), 2)
    assert v == "not reproduced" and rows[0] == "parts: 2a not reproduced, 2b not reproduced"
    # k's interval straddling 0.8: inconclusive
    v, rows = _rows(F.f1_f2(_scheme_r(slow_k=(0.7, 0.8, 0.9))), 2)
    assert rows[0] == "parts: 2a inconclusive, 2b reproduced" and v == "inconclusive"


def test_f1_f2_headline_reads_the_named_nulls_and_a_variant_reads_its_own():
    flat = [[0, 0, 0, 0, 5, 5, 5, 5]] * 3
    grow = [_h_rate(10)] * 3
    # lag null flat, full null growing: the headline's 2b reads the full null
    r = _scheme_r(h=flat, h_full=grow, h_author=flat)
    assert _rows(F.f1_f2(r), 2)[1][0] == "parts: 2a reproduced, 2b reproduced"
    r = _scheme_r(h=grow, h_full=flat, h_author=grow)
    assert _rows(F.f1_f2(r), 2)[1][0] == "parts: 2a reproduced, 2b not reproduced"
    assert _rows(F.f1_f2(r), 1)[1][0].endswith("1c not reproduced")
    # a single null's data (no suffixed keys) reads that null for every part
    one = {k: v for k, v in _scheme_r(h=flat, h_full=grow).items() if "_" not in k}
    v, rows = _rows(F.f1_f2(one), 2)
    assert rows[0] == "parts: 2a reproduced, 2b not reproduced"
    assert "under the null of this section" in rows[2]


def test_findings_1_5_withheld_below_half_the_ceiling():
    r = _scheme_r(r2=(0.6, 0.5, 0.3))               # seed mean 46.7% of the ceiling
    for n, v, rows, rule in F.f1_f2(r):
        assert v == "withheld"
        assert rows[0].endswith("**withheld**: networks at 47% of the ceiling (constgate; the rule needs 50% in every cell)")
        assert rule.endswith("withheld below 50% of the R² ceiling")
    assert F.gate(_scheme_r(r2=(0.5, 0.5, 0.5))) is None
    assert F.gate({}) == "no A8 (the networks' R²) in this call"


def _r3_scheme(sign=1.0):
    """Three seeds × five cells: IQR rising over the cells; −λ and Ĥ_N rising (sign 1) or falling."""
    r = _scheme_r()
    r["A3"] = {c: {"log10_tau_iqr_seeds": [0.1 * (i + 1) + 0.01 * s for s in range(3)]} for i, c in enumerate(CELLS5)}
    for i, c in enumerate(CELLS5):
        r["A2"][c]["per_seed_lambda"] = [0.1 - sign * 0.01 * i] * 3
        r["A1_full"][c]["H_N_seeds"] = [[0] * 7 + [10 + sign * i]] * 3
    return r


def test_f3_both_halves_by_hand():
    (n, v, rows, rule), = F.f3(_r3_scheme())
    assert (n, v) == (3, "reproduced")
    assert rows[-2].startswith("per-seed Spearman ρ(IQR log10 τ, decay (−λ)) over 5 cells: 1 [1, 1] (3 seeds) → "
                               "reproduced (region > 0.3; 3 of 3 seeds); pooled within-seed ρ 1.00, permutation p ")
    assert rows[-1].startswith("per-seed Spearman ρ(IQR log10 τ, Ĥ_N) over 5 cells: 1 [1, 1]")
    assert rule == "rule: both halves' 95% seed intervals of ρ above 0.3 (docs/experiments.md §5.5.2)"
    (_, v, rows, _), = F.f3(_r3_scheme(-1.0))
    assert v == "not reproduced" and " -1 [-1, -1] (3 seeds) → not reproduced" in rows[-1]
    # one half reversed: AND
    r = _r3_scheme()
    for i, c in enumerate(CELLS5):
        r["A1_full"][c]["H_N_seeds"] = [[0] * 7 + [10 - i]] * 3
    assert F.f3(r)[0][1] == "not reproduced"


def test_f3_reads_the_full_null_window():
    r = _r3_scheme()
    for i, c in enumerate(CELLS5):
        r["A1"][c]["H_N_seeds"] = [[0] * 7 + [10 - i]] * 3      # the lag null: reversed
    assert F.f3(r)[0][1] == "reproduced"


def _a6_scheme(gaps):
    """Fast cells' mean α̂ per seed 1.9 + gap, slow cells' 1.9."""
    a6 = {c: {"mean": 1.9, "fraction_below_1.9": 0.5, "mean_seeds": [1.9 + g for g in gaps] if c in F.FAST
              else [1.9] * len(gaps)} for c in CELLS5}
    return {"A6": a6, "A8": _scheme_r()["A8"]}


@pytest.mark.parametrize("gaps, verdict", [
    ((0.05, 0.06, 0.04), "reproduced"),          # [0.0252, 0.0748]
    ((0.01, 0.03, 0.02), "inconclusive"),        # mean 0.02: contains the margin
    ((-0.05, -0.06, -0.04), "not reproduced"),
    ((0.5, 0.5, -0.9), "inconclusive"),          # mean +0.033, wide: the mean alone does not decide
])
def test_f4_gap_interval(gaps, verdict):
    (n, v, rows, rule), = F.f4(_a6_scheme(gaps))
    assert (n, v) == (4, verdict)
    assert rule == "rule: the 95% seed interval of the gap above 0.02 (docs/experiments.md §5.5.2)"


def test_f4_row_by_hand():
    (_, _, rows, _), = F.f4(_a6_scheme((0.05, 0.06, 0.04)))
    h = 0.01 * HALF3
    assert rows[-1].startswith(f"mean α̂ (constgate, sharedgate) − mean α̂ (diaggate, gru, lstm), per seed: "
                               f"0.05 [{0.05 - h:.3g}, {0.05 + h:.3g}] (3 seeds) → reproduced (region > 0.02; 3 of 3 seeds)")


def _a14_scheme(slopes):
    a14 = {c: {"per_seed": [{"master_slope_nstar": s, "slope_mean_vs_f": 1.0, "slope_sigma_vs_f": 0.0,
                             "predicted_master_slope": 1.0, "kappa_median": 2.0, "n_at_smallest_N": 0,
                             "n_never": 0, "master_slope_nhat": 0.3} for s in slopes.get(c, (1.0, 1.1, 0.9))],
               "summary": {}, "n_lags": 20} for c in CELLS5}
    a14["pooled"] = {"nhat": {"slope": 1.0, "r2": 0.9}, "nstar": {"slope": 1.0}, "nhat_per_seed": [0.5, 0.6, 0.4],
                     "nstar_per_seed": [1.0, 1.0, 1.0], "author_per_cell": {}}
    return {"A14": a14, "A8": _scheme_r()["A8"]}


def test_f5_per_cell_nstar_slopes_decide():
    (n, v, rows, rule), = F.f5(_a14_scheme({}))
    assert (n, v) == (5, "reproduced")                      # each cell 1 ± 0.1·4.30/√3 = [0.752, 1.248]
    assert f"constgate — master slope with N* per seed: 1 [{1 - 0.1 * HALF3:.3g}, {1 + 0.1 * HALF3:.3g}] (3 seeds) → reproduced" in rows[-6]
    # the pooled N̂ slope (0.5 per seed) is beside it and does not decide
    assert rows[-1].startswith("beside it, the pooled slope (all cells, N̂) per seed: 0.5 [") and "does not decide" in rows[-1]
    (_, v, _, _), = F.f5(_a14_scheme({"gru": (2.0, 2.1, 1.9)}))
    assert v == "not reproduced"                             # one cell out: AND
    (_, v, _, _), = F.f5(_a14_scheme({"gru": (1.2, 1.5, 1.3)}))
    assert v == "inconclusive"                               # straddles 1.3


# ----------------------------------------------------------------------------------------------
# findings 1–5 whole, on one rich hand table (every helper reached through the public rules)
# ----------------------------------------------------------------------------------------------


def _rich():
    """_r3_scheme plus: a seed whose nested fit failed; a last lag (40) that differs from the one
    before it (30); author-null windows capped only below the upper half or only under the
    second-to-last lag; σ̂ that reaches the 1e−12 floor exactly at lag 5; a run without R²; α̂ per
    seed; A14 with a second cell; A5."""
    r = _r3_scheme()
    r["A2"]["sharedgate"]["per_seed_nested_exp"][1] = {"error": "did not converge"}
    r["A2"]["constgate"]["lags"] = list(range(1, 31)) + [40.0]
    r["A1_author"]["constgate"]["H_N_seeds"] = [[0, 0, 0, 0, 5, 6, 35, 1.5]] * 3      # 35 < 40, ≥ 30
    r["A1_author"]["sharedgate"]["H_N_seeds"] = [[0, 0, 120, 0, 5, 6, 7, 8]] * 3      # 120 ≥ 100, lower half
    r["A1_full"]["constgate"]["H_N_seeds"] = [_h_rate(10)] * 3
    r["A1_full"]["lstm"]["H_N_seeds"] = [[0, 0, 0, 0, 0, 0, 0, 1.5]] * 3             # share 1.5 / max(1, 1.5)
    r["A7_author"] = {"constgate": {"lags": [1, 5, 9], "sigma_hat": [1e-3, 1e-12, 0.0]},
                      "sharedgate": {"lags": [1, 5, 9], "sigma_hat": [1e-3, 1e-6, 1e-9]}}
    r["A8"]["gru"]["final_val_r2"] = [0.54, None, 0.54]
    r["A6"] = {c: {"mean": 1.9 - 0.01 * i, "fraction_below_1.9": 0.1 * i,
                   "mean_seeds": [1.9 - 0.01 * i + 0.001 * s for s in range(3)]} for i, c in enumerate(CELLS5)}
    a14 = _a14_findings([0.9, 1.1, 1.0], a=0.5, b=0.4, ends=(3, 9))["A14"]
    a14["lstm"] = _a14_findings([1.5, 1.7, 1.6])["A14"]["gru"]
    r["A14"] = a14
    r["A5"] = {"pooled": {"slope": 1.04321, "r2": 0.91234, "n": 40}, "gru": {"fit": {"slope": 0.95678}}}
    return r


RICH_EXPECTED = {1: ('inconclusive',
     ['parts: 1a inconclusive, 1b inconclusive, 1c reproduced',
      'constgate — 1a decay class: k 1 [0.876, 1.12] (3 seeds), β 0 [-0.124, 0.124] (3 seeds) → reproduced '
      '(exponential class: |k − 1| ≤ 0.2 and |β| ≤ 0.2)',
      "constgate — 1b log2(measured Ĥ_N rate / [A]'s 1/(κ̂λ)) under the full null: 1 [1, 1] (3 seeds) → "
      'reproduced (region |log2 ratio| ≤ 1; 3 of 3 seeds)',
      'constgate — 1c Ĥ_N growth share under the author null: -0.1 [-0.1, -0.1] (3 seeds) → reproduced (region ≤ '
      '0.1; 3 of 3 seeds); σ̂ reaches the floor 1e−12 first at lag 5 (first seed)',
      'sharedgate — 1a decay class: k 0.975 [0.657, 1.29] (2 seeds, 1 undefined), β -0.025 [-0.343, 0.293] (2 '
      'seeds, 1 undefined) → inconclusive (exponential class: |k − 1| ≤ 0.2 and |β| ≤ 0.2)',
      "sharedgate — 1b log2(measured Ĥ_N rate / [A]'s 1/(κ̂λ)) under the full null: n/a (3 seeds undefined) → "
      'inconclusive (region |log2 ratio| ≤ 1; 0 of 0 seeds)',
      'sharedgate — 1c Ĥ_N growth share under the author null: 0.025 [0.025, 0.025] (3 seeds) → reproduced '
      '(region ≤ 0.1; 3 of 3 seeds); σ̂ reaches the floor 1e−12 first at lag none (never) (first seed)'],
     "rule (docs/experiments.md §5.5.2): each part's 95% seed interval against its region, AND over parts and "
     'cells'),
 2: ('reproduced',
     ['parts: 2a reproduced, 2b reproduced',
      'diaggate — 2a decay class: k 0.5 [0.376, 0.624] (3 seeds), β 0 [-0.124, 0.124] (3 seeds) → reproduced '
      "(exponential class: |k − 1| ≤ 0.2 and |β| ≤ 0.2; slower: k's interval below 0.8 or β's above 0.2)",
      'diaggate — 2b Ĥ_N growth share under the full null: 1 [1, 1] (3 seeds) → reproduced (region > 0.1; 3 of 3 '
      'seeds)',
      'gru — 2a decay class: k 0.5 [0.376, 0.624] (3 seeds), β 0 [-0.124, 0.124] (3 seeds) → reproduced '
      "(exponential class: |k − 1| ≤ 0.2 and |β| ≤ 0.2; slower: k's interval below 0.8 or β's above 0.2)",
      'gru — 2b Ĥ_N growth share under the full null: 1 [1, 1] (3 seeds) → reproduced (region > 0.1; 3 of 3 '
      'seeds)',
      'lstm — 2a decay class: k 0.5 [0.376, 0.624] (3 seeds), β 0 [-0.124, 0.124] (3 seeds) → reproduced '
      "(exponential class: |k − 1| ≤ 0.2 and |β| ≤ 0.2; slower: k's interval below 0.8 or β's above 0.2)",
      'lstm — 2b Ĥ_N growth share under the full null: 1 [1, 1] (3 seeds) → reproduced (region > 0.1; 3 of 3 '
      'seeds)'],
     "rule (docs/experiments.md §5.5.2): each part's 95% seed interval against its region, AND over parts and "
     'cells'),
 3: ('not reproduced',
     ['constgate: IQR of log10 τ per seed 0.11 ± 0.01 (0.1…0.12, 3 seeds), −λ -0.1 ± 1.7e-17 (-0.1…-0.1, 3 '
      'seeds), Ĥ_N at the largest N (full null) 50.7 ± 0 (50.7…50.7, 3 seeds)',
      'sharedgate: IQR of log10 τ per seed 0.21 ± 0.01 (0.2…0.22, 3 seeds), −λ -0.09 ± 0 (-0.09…-0.09, 3 seeds), '
      'Ĥ_N at the largest N (full null) 11 ± 0 (11…11, 3 seeds)',
      'diaggate: IQR of log10 τ per seed 0.31 ± 0.01 (0.3…0.32, 3 seeds), −λ -0.08 ± 0 (-0.08…-0.08, 3 seeds), '
      'Ĥ_N at the largest N (full null) 12 ± 0 (12…12, 3 seeds)',
      'gru: IQR of log10 τ per seed 0.41 ± 0.01 (0.4…0.42, 3 seeds), −λ -0.07 ± 0 (-0.07…-0.07, 3 seeds), Ĥ_N at '
      'the largest N (full null) 13 ± 0 (13…13, 3 seeds)',
      'lstm: IQR of log10 τ per seed 0.51 ± 0.01 (0.5…0.52, 3 seeds), −λ -0.06 ± 0 (-0.06…-0.06, 3 seeds), Ĥ_N at '
      'the largest N (full null) 1.5 ± 0 (1.5…1.5, 3 seeds)',
      'per-seed Spearman ρ(IQR log10 τ, decay (−λ)) over 5 cells: 1 [1, 1] (3 seeds) → reproduced (region > 0.3; '
      '3 of 3 seeds); pooled within-seed ρ 1.00, permutation p 0.0001',
      'per-seed Spearman ρ(IQR log10 τ, Ĥ_N) over 5 cells: -0.6 [-0.6, -0.6] (3 seeds) → not reproduced (region > '
      '0.3; 0 of 3 seeds); pooled within-seed ρ -0.60, permutation p 0.0405'],
     "rule: both halves' 95% seed intervals of ρ above 0.3 (docs/experiments.md §5.5.2)"),
 4: ('reproduced',
     ['constgate: mean α̂ = 1.900 (per seed 1.9 ± 0.001 (1.9…1.9, 3 seeds)), fraction α̂ < 1.9 = 0.00',
      'sharedgate: mean α̂ = 1.890 (per seed 1.89 ± 0.001 (1.89…1.89, 3 seeds)), fraction α̂ < 1.9 = 0.10',
      'diaggate: mean α̂ = 1.880 (per seed 1.88 ± 0.001 (1.88…1.88, 3 seeds)), fraction α̂ < 1.9 = 0.20',
      'gru: mean α̂ = 1.870 (per seed 1.87 ± 0.001 (1.87…1.87, 3 seeds)), fraction α̂ < 1.9 = 0.30',
      'lstm: mean α̂ = 1.860 (per seed 1.86 ± 0.001 (1.86…1.86, 3 seeds)), fraction α̂ < 1.9 = 0.40',
      'mean α̂ (constgate, sharedgate) − mean α̂ (diaggate, gru, lstm), per seed: 0.025 [0.025, 0.025] (3 seeds) '
      '→ reproduced (region > 0.02; 3 of 3 seeds); through κ: 1/κ̂ of the slow cells is -1.5% against the fast '
      "cells' ([A]'s growth exponents scale as 1/κ)"],
     'rule: the 95% seed interval of the gap above 0.02 (docs/experiments.md §5.5.2)'),
 5: ('not reproduced',
     ['pooled slope of log N̂ on −κ̂ log f (A5): 1.04, R² 0.912, n 40',
      'gru: slope 0.957',
      'master slope, three ways: pooled points 1.00 (R² 0.90, per seed 1.00 ± 0.10 (0.90…1.10, 3 seeds)); '
      "author's way (seed means in the power-law window, α̂ > 1.01) per cell gru 1.00; with N* for N̂ 1.00 (per "
      'seed 1.00 ± 0.10 (0.90…1.10, 3 seeds))',
      'gru: |m̄| ∝ f^a, a = 0.50 ± 0.00 (0.50…0.50, 3 seeds); σ̂ ∝ f^b, b = 0.40 ± 0.00 (0.40…0.40, 3 seeds); '
      'predicted slope a − b = 0.10 ± 0.00 (0.10…0.10, 3 seeds); median κ̂ 2.00 ± 0.00 (2.00…2.00, 3 seeds); of '
      '20 lags, at the smallest N 3.0 ± 0.0 (3.0…3.0, 3 seeds), never 9.0 ± 0.0 (9.0…9.0, 3 seeds); slope with N̂ '
      '1.00 ± 0.10 (0.90…1.10, 3 seeds), with N* 1.00 ± 0.10 (0.90…1.10, 3 seeds) → |m̄| falls more slowly than f '
      '(a = 0.50 < 0.7); σ̂ falls with ℓ (b = 0.40 > 0.3); the grid clamps most lags (12.0 of 20 at its ends)',
      'lstm: |m̄| ∝ f^a, a = 1.00 ± 0.00 (1.00…1.00, 3 seeds); σ̂ ∝ f^b, b = 0.00 ± 0.00 (0.00…0.00, 3 seeds); '
      'predicted slope a − b = 1.00 ± 0.00 (1.00…1.00, 3 seeds); median κ̂ 2.00 ± 0.00 (2.00…2.00, 3 seeds); of '
      '20 lags, at the smallest N 0.0 ± 0.0 (0.0…0.0, 3 seeds), never 0.0 ± 0.0 (0.0…0.0, 3 seeds); slope with N̂ '
      '1.60 ± 0.10 (1.50…1.70, 3 seeds), with N* 1.60 ± 0.10 (1.50…1.70, 3 seeds) → no single factor breaks it',
      'gru — master slope with N* per seed: 1 [0.752, 1.25] (3 seeds) → reproduced (region |slope − 1| ≤ 0.3; 3 '
      'of 3 seeds)',
      'lstm — master slope with N* per seed: 1.6 [1.35, 1.85] (3 seeds) → not reproduced (region |slope − 1| ≤ '
      '0.3; 0 of 3 seeds)',
      'beside it, the pooled slope (all cells, N̂) per seed: 1 [0.752, 1.25] (3 seeds) → reproduced by the same '
      'region (does not decide)'],
     "rule: each cell's 95% seed interval of the N* slope inside 1 ± 0.3, AND over cells (docs/experiments.md "
     '§5.5.2)')}


def test_findings_1_to_5_whole_on_a_rich_table():
    """Checked by hand: constgate 1b — slope 10 per ln N against [A]'s 1/(κλ) = 1/(2 · 0.1) = 5: log2 2 = 1;
    1c — (1.5 − 5)/35 = −0.1 (35 < the last lag 40: not capped); sharedgate 1c — (8 − 5)/120 = 0.025; the
    floor first at lag 5 (σ̂ = 1e−12 counts); lstm 2b — 1.5/1.5 = 1; finding 4's gap 0.025 per seed."""
    out = F.findings(_rich())
    assert {k: (v[1], v[2], v[3]) for k, v in out.items()} == RICH_EXPECTED
    assert list(out) == [1, 2, 3, 4, 5] and all(v[0] == k for k, v in out.items())
    r = _rich()
    del r["A7_author"]["sharedgate"]                     # no σ̂ for that cell under the author null
    assert F.findings(r)[1][2][-1].endswith("σ̂ reaches the floor 1e−12 first at lag n/a (first seed)")


def test_view_swaps_in_every_figure_of_the_null():
    r = {"A1": 1, "A2": 2, "A1_full": 11, "A4_full": 14, "A5_full": 15, "A6_full": 16, "A7_full": 17, "A14_full": 24}
    data, name = F.view(r, "full")
    assert name == "full" and data == {**r, "A1": 11, "A4": 14, "A5": 15, "A6": 16, "A7": 17, "A14": 24}
    assert F.view(r, "lag") == (r, "lag")
    assert F.view({"A1": 1}, "author") == ({"A1": 1}, None)
    assert F.gate({"A8": {"gru": {"r2_ceiling": 0.9}}}) == "no R² for gru's networks"


def test_f1_f2_edges_missing_cells_fallbacks_caps_and_boundaries():
    flat = [[0, 0, 0, 0, 5, 5, 5, 5]] * 3
    # a fast cell without A2 is skipped (the other still read); a cell missing under a null reads A1
    r = _scheme_r(h_author=flat)
    del r["A2"]["constgate"], r["A1_full"]["sharedgate"], r["A1_author"]["sharedgate"]
    (_, rows1), (_, rows2) = _rows(F.f1_f2(r), 1), _rows(F.f1_f2(r), 2)
    assert [x.split(" — ")[0] for x in rows1[1:]] == ["sharedgate"] * 3
    r2 = _scheme_r(h_author=flat)
    assert rows1[2] == _rows(F.f1_f2(r2), 1)[1][5]           # 1b from A1 = A1_full here: the same row
    # A1's windows: (h[-1] − h[4]) / h[-1] = 10 ln 8 / (10 ln 3200 − 30) = 0.41
    assert rows1[3].startswith("sharedgate — 1c Ĥ_N growth share under the author null: 0.41 [0.41, 0.41]")
    # 1b counts the seeds within 0 ± 1 (log2 ratios 0, ±0.14): all three
    assert _rows(F.f1_f2(r2), 1)[1][2].endswith("(region |log2 ratio| ≤ 1; 3 of 3 seeds)")
    # single-null data: every part names "the null of this section"
    one = {k: v for k, v in _scheme_r(h_author=flat).items() if "_" not in k}
    rows = _rows(F.f1_f2(one), 1)[1]
    assert "1b log2(measured Ĥ_N rate / [A]'s 1/(κ̂λ)) under the null of this section:" in rows[2]
    assert "1c Ĥ_N growth share under the null of this section:" in rows[3]
    # windows reaching the last lag (100) in the upper half: the growth cannot be read (n/a)
    capped = [[0, 0, 0, 0, 50, 80, 100, 100]] * 3
    rows = _rows(F.f1_f2(_scheme_r(h_full=capped, h_author=capped)), 2)[1]
    assert rows[2].startswith("diaggate — 2b Ĥ_N growth share under the full null: n/a (3 seeds undefined)")
    rows = _rows(F.f1_f2(_scheme_r(h_full=capped, h_author=capped)), 1)[1]
    assert rows[3].startswith("constgate — 1c Ĥ_N growth share under the author null: n/a (3 seeds undefined)")
    assert "under the full null: n/a (3 seeds undefined)" in rows[2]          # 1b: one point below the cap
    # 2a at its boundaries (two seeds: exact intervals): k's interval at 0.8 is not below it, and an
    # exponential-class cell (k ≥ 0.8, |β| ≤ 0.2) is "not reproduced"
    v, rows = _rows(F.f1_f2(_scheme_r(k=(1.0, 1.0), slow_k=(0.8, 0.8), beta=(0.0, 0.0))), 2)
    assert rows[1].endswith("→ not reproduced (exponential class: |k − 1| ≤ 0.2 and |β| ≤ 0.2; slower: k's "
                            "interval below 0.8 or β's above 0.2)")
    v, rows = _rows(F.f1_f2(_scheme_r(k=(1.0, 1.0), slow_k=(0.9, 0.9), beta=(0.2, 0.2))), 2)
    assert " → not reproduced (" in rows[1]


def test_f3_needs_three_cells_with_spectra_and_reads_each_null():
    r = _r3_scheme()
    r["A3"] = {c: r["A3"][c] for c in CELLS5[:2]}
    assert F.f3(r) == [(3, "inconclusive", F.f3(r)[0][2], "needs at least 3 cells and per-seed spectra (A3)")]
    r["A8"]["gru"]["final_val_r2"] = [0.1, 0.1, 0.1]
    assert F.f3(r)[0][1] == "withheld"
    # three cells suffice; a cell without A2 is left out; a cell missing under the full null reads A1
    r = _r3_scheme()
    r["A3"] = {c: r["A3"][c] for c in CELLS5[:3]} | {"rnn": r["A3"]["lstm"]}
    del r["A1_full"]["diaggate"]
    (_, v, rows, _), = F.f3(r)
    assert [x.split(":")[0] for x in rows[:3]] == ["constgate", "sharedgate", "diaggate"]
    assert rows[2].endswith("Ĥ_N at the largest N (full null) 50.7 ± 0 (50.7…50.7, 3 seeds)")  # A1: 10 ln 3200 − 30
    assert "over 3 cells" in rows[3]
    # one seed: no interval, but the per-seed ρ rows are still written
    r = _r3_scheme()
    for c in CELLS5:
        r["A3"][c]["log10_tau_iqr_seeds"] = r["A3"][c]["log10_tau_iqr_seeds"][:1]
    (_, v, rows, _), = F.f3(r)
    assert v == "inconclusive" and rows[5].startswith("per-seed Spearman ρ(IQR log10 τ, decay (−λ)) over 5 cells: 1 (1 seed: no interval) → inconclusive")
    # single-null data names the lag null; below the ceiling the rows end "withheld"
    one = {k: v for k, v in _r3_scheme().items() if "_" not in k}
    one["A1"] = _r3_scheme()["A1_full"]                   # windows that differ across cells
    assert "(lag null)" in F.f3(one)[0][2][0]
    low = _r3_scheme(); low["A8"]["gru"]["final_val_r2"] = [0.1, 0.1, 0.1]
    (_, v, rows, _), = F.f3(low)
    assert v == "withheld" and rows[-1].startswith("**withheld**: networks at")


def test_f4_f5_withheld_and_f5_without_a14():
    low = _rich()
    low["A8"]["gru"]["final_val_r2"] = [0.1, 0.1, 0.1]
    for fn in (F.f4, F.f5):
        (_, v, rows, _), = fn(low)
        assert v == "withheld" and rows[-1].startswith("**withheld**: networks at")
    only_a5 = {"A5": {"pooled": {"slope": None, "r2": 0.5, "n": 3}}}
    assert F.f5(only_a5) == [(5, "inconclusive", ["pooled slope of log N̂ on −κ̂ log f (A5): n/a, R² 0.5, n 3"],
                              "needs A14 (the per-seed N* slopes)")]
    r = _rich()
    r["A14"]["pooled"]["author_per_cell"] = {"gru": 1.0, "lstm": 1.5}
    assert any("per cell gru 1.00, lstm 1.50; with N*" in x for x in F.f5(r)[0][2])


def test_growth_rate_log2_edges():
    h3 = [0, 0, 0, 0, 0] + _h_rate(10)[5:]                 # exactly three usable points: defined
    assert F.growth_rate_log2(h3, N8, 0.05, 2.0, 100) == pytest.approx(0.0, abs=1e-9)
    h_small = [x / 100 for x in _h_rate(10, 0.0)]           # Ĥ_N in (0, 1): every point usable
    assert F.growth_rate_log2(h_small, N8, 0.05, 2.0, None) == F.RATIO_FLOOR_LOG2 == -6.0  # ratio 0.01 < 1/64
    assert F.growth_rate_log2(_h_rate(10), N8, 0.1, 0.5, None) == pytest.approx(np.log2(0.5))    # κ in (0, 1]
    assert F.growth_rate_log2(_h_rate(10), N8, 0.05, 0.0, 100) is None


def test_view_of_the_lag_null_is_the_data_itself():
    r = {"A1": 1, "A1_lag": 2}
    assert F.view(r, "lag") == (r, "lag")


def test_f1_f2_without_fast_cells_still_gives_finding_2_and_f3_needs_a2():
    r = _scheme_r()
    for c in F.FAST:
        del r["A1"][c], r["A2"][c]
    assert [n for n, *_ in F.f1_f2(r)] == [2]
    r = _r3_scheme()
    r["A3"]["rnn"] = r["A3"]["lstm"]
    r["A1"]["rnn"] = r["A1"]["lstm"]                     # in A1 but not in A2: left out
    assert "over 5 cells" in F.f3(r)[0][2][-1]
