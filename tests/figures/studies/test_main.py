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

import math

import numpy as np
import pytest

import lwsim
import lwsim.figures.studies
from lwsim import stats
from lwsim.figures.presets import A_CELLS, PRESET_NAMES
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


RULE1 = ("rule: the exponential law not rejected by the tempered law that nests it (ΔBIC ≤ 10, or β = 0 and "
         "k = 1 inside the tempered fit's 95% intervals) in every seed of each cell, and Ĥ_N saturated "
         "(growth ≤ 10% of its maximum) in every seed; reproduced when every cell meets both, not reproduced "
         "when no cell meets either")


RULE2 = ("rule: the exponential law rejected (ΔBIC > 10, intervals excluding β = 0 or k = 1) in favour of a "
         "slower tail (k's interval below 1, or ℓ_c beyond the last lag) in every seed of each cell, and Ĥ_N "
         "still growing in every seed; reproduced when every cell meets both, not reproduced when no cell "
         "meets either")


# one seed's nested test (stats.nested_exponential().to_dict()) and its line, by hand
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


def _nested_r(fast_tests, slow_tests, fast_sel="tempered", slow_sel="exponential", slow_h=(0, 5, 10, 30)):
    a1 = {"sharedgate": {"N": N, "H_N_mean": [0, 5, 20, 20], "H_N_seeds": [[0, 5, 20, 20]] * 2},
          "gru": {"N": N, "H_N_mean": list(slow_h), "H_N_seeds": [list(slow_h)] * 2}}
    a2 = {"sharedgate": _a2(fast_sel, per_seed_nested_exp=fast_tests),
          "gru": _a2(slow_sel, per_seed_nested_exp=slow_tests)}
    return {"A1": a1, "A2": a2}


def _r3(hmax):
    cells = ["constgate", "sharedgate", "diaggate"]
    return {"A1": {c: {"H_N_mean": [0, 7, h]} for c, h in zip(cells, hmax)}, "A2": {c: {} for c in cells},
            "A3": {c: {"log10_tau_iqr": s} for c, s in zip(cells, (0.1, 0.2, 0.3))}}


RULE4 = "rule: slow-decay cells have mean α̂ lower by > 0.02, pooled and in every seed"


def _a6(fast, slow, fast_seeds=None, slow_seeds=None):
    """One fast cell (constgate) and one slow cell (gru): the difference of their means is exact."""
    return {"A6": {"constgate": {"mean": fast, "fraction_below_1.9": 0.5, "mean_seeds": fast_seeds or [fast]},
                   "gru": {"mean": slow, "fraction_below_1.9": 0.5, "mean_seeds": slow_seeds or [slow]}}}


def _a14(per_seed_nhat):
    per = [{"slope_mean_vs_f": 0.9, "slope_sigma_vs_f": 0.1, "predicted_master_slope": 0.8, "kappa_median": 2.0,
            "n_at_smallest_N": 1, "n_never": 2, "master_slope_nhat": 0.9, "master_slope_nstar": 1.1},
           {"slope_mean_vs_f": 1.1, "slope_sigma_vs_f": 0.1, "predicted_master_slope": 1.0, "kappa_median": 2.0,
            "n_at_smallest_N": 3, "n_never": 2, "master_slope_nhat": 1.1, "master_slope_nstar": 1.3}]
    summ = {"slope_mean_vs_f": {"mean": 1.0}, "slope_sigma_vs_f": {"mean": 0.1}, "n_at_smallest_N": {"mean": 2},
            "n_never": {"mean": 2}}
    pooled = {"nhat": {"slope": 0.95, "r2": 0.5}, "nstar": {"slope": 1.25}, "nhat_per_seed": per_seed_nhat,
              "nstar_per_seed": [1.2, 1.3], "author_per_cell": {"gru": 1.0, "lstm": None}}
    # "pooled" first: the cells after it must still be read
    return {"A14": {"pooled": pooled, "gru": {"per_seed": per, "summary": summ, "n_lags": 20}}}


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


def _a6_new_provenance_main(fast_mean, slow_mean, fast_frac, slow_frac):
    return {c: {"mean": fast_mean if c in fm.FAST else slow_mean,
                "fraction_below_1.9": fast_frac if c in fm.FAST else slow_frac,
                "mean_seeds": [fast_mean if c in fm.FAST else slow_mean] * 2} for c in A_CELLS}


def _a14_new_provenance_main(nhat_seeds, nstar_seeds):
    return {"pooled": {"nhat": {"slope": 1.0, "r2": 0.9}, "nhat_per_seed": nhat_seeds, "author_per_cell": {},
                       "nstar": {"slope": 1.0}, "nstar_per_seed": nstar_seeds}}


def _a1_a2(sel_bic, sel_aic, h_last):
    a1 = {c: {"H_N_mean": [0.0, 5.0, h_last(c)], "N": [1.0, 10.0, 100.0]} for c in A_CELLS}
    a2 = {c: {"selected_bic": sel_bic(c), "selected": sel_aic(c), "fits": {}} for c in A_CELLS}
    return {"A1": a1, "A2": a2}


def _run_aggregates(a, b, kappa=2.0, eps=20.0, lags=np.arange(1, 21)):
    f = np.exp(-0.1 * lags)
    m, sig = -3.0 * f ** a, 2.0 * f ** b            # a negative mean: |m̄| is used
    n_star = (eps * sig / np.abs(m)) ** kappa
    grid = np.array([10.0, 100.0, 300.0, 1000.0])
    n_hat = np.array([grid[grid >= v][0] if (grid >= v).any() else np.inf for v in n_star])
    return {"f": f, "mean": m, "sigma_hat": sig, "kappa_hat": np.full(lags.size, kappa), "n_star": n_star,
            "n_hat": n_hat, "n_grid": grid, "lags": lags}


def _a2_findings(law, lam=0.05, seed_laws=None):
    return {"selected_bic": law, "selected": law, "per_seed_selected_bic": seed_laws or [law, law],
            "per_seed_lambda": [lam, lam],
            "fits": {"exponential": {"params": {"C": 1.0, "lambda": lam}},
                     "tempered": {"params": {"beta": 0.1, "k": 0.9, "l_c": 10.0}}}}


def _a1(*seeds):
    h = np.array(seeds, float)
    return {"N": N, "H_N_mean": h.mean(0).tolist(), "H_N_seeds": h.tolist()}


def _r12(fast_law, fast_h, slow_law, slow_h, **kw):
    a1 = {c: _a1(*fast_h) for c in F.FAST} | {c: _a1(*slow_h) for c in F.SLOW}
    a2 = {c: _a2_findings(fast_law, **kw) for c in F.FAST} | {c: _a2_findings(slow_law) for c in F.SLOW}
    return {"A1": a1, "A2": a2}


FLAT = ([0, 5, 20, 20], [0, 5, 20, 20])          # growth 0


GROW = ([0, 5, 10, 40], [0, 5, 10, 30])          # growth 30, 20


def _verdicts(r):
    return {k: v for k, v, *_ in F.f1_f2(r)}


def _r3_findings(spread, hmax):
    cells = ["constgate", "sharedgate", "diaggate"][:len(spread)]
    return {"A1": {c: {"H_N_mean": [0, h]} for c, h in zip(cells, hmax)}, "A2": {c: {} for c in cells},
            "A3": {c: {"log10_tau_iqr": s} for c, s in zip(cells, spread)}}


def _r4(fast, slow, seeds=None):
    a6 = {}
    for c, m in zip(F.FAST, fast):
        a6[c] = {"mean": m, "fraction_below_1.9": 0.5, "mean_seeds": (seeds or {}).get(c, [m, m])}
    for c, m in zip(F.SLOW, slow):
        a6[c] = {"mean": m, "fraction_below_1.9": 0.5, "mean_seeds": (seeds or {}).get(c, [m, m])}
    return {"A6": a6}


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
    assert not np.array_equal(lag.n_star, full.n_star)
    for p, rates, x, y in ((p0, res.optimizer, ds.x_diag, ds.y_diag),
                           (res.params, res.optimizer, ds.x_train, ds.y_train),
                           (res.params, float(c["lr"]), ds.x_diag, ds.y_diag)):
        d = _chain(cell, p, rates, x, y, c)
        assert not np.array_equal(_table(d, "lag").n_star, out["n_star"])
        assert not np.array_equal(_table(d, "full").n_star, out["n_star_full"])
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
    assert master(lag) != master(full)


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


def test_f1_f2_reproduced_and_not():
    assert _verdicts(_r12("exponential", FLAT, "tempered", GROW)) == {1: "reproduced", 2: "reproduced"}
    assert _verdicts(_r12("tempered", GROW, "exponential", FLAT)) == {1: "not reproduced", 2: "not reproduced"}
    assert _verdicts(_r12("power", GROW, "power", GROW)) == {1: "not reproduced", 2: "reproduced"}


def test_f1_f2_inconclusive_when_law_and_growth_disagree():
    assert _verdicts(_r12("exponential", GROW, "tempered", FLAT)) == {1: "inconclusive", 2: "inconclusive"}


def test_f1_saturation_bound_is_ten_percent_inclusive():
    # max Ĥ = 20, growth 2 = 10% → saturated; growth 3 → not
    at = ([0, 5, 18, 20], [0, 5, 18, 20])
    over = ([0, 5, 17, 20], [0, 5, 17, 20])
    assert _verdicts(_r12("exponential", at, "tempered", GROW))[1] == "reproduced"
    assert _verdicts(_r12("exponential", over, "tempered", GROW))[1] == "inconclusive"


def test_f1_f2_need_every_seed():
    # the seed mean saturates (growth 1.5 ≤ 2) but seed 2 grows by 3 (> 2): not reproduced in every seed
    mixed = ([0, 5, 20, 20], [0, 5, 17, 20])
    assert _verdicts(_r12("exponential", mixed, "tempered", GROW))[1] == "inconclusive"
    # Ĥ_N flat in one seed of the slow cells: growth must hold in every seed
    assert _verdicts(_r12("exponential", FLAT, "tempered", ([0, 5, 10, 40], [0, 5, 10, 10])))[2] == "inconclusive"
    # the seed-mean law is exponential but one seed's BIC picks the tempered law
    r = _r12("exponential", FLAT, "tempered", GROW, seed_laws=["exponential", "tempered"])
    assert _verdicts(r)[1] == "inconclusive"


# ----------------------------------------------------------------------------------------------
# _exp_growth
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam, kappa", [(0.0, 2.0), (0.1, 0.0), (-0.1, 2.0), (0.1, -2.0), (-0.1, -2.0),
                                        (None, 2.0), (0.1, None), (np.nan, 2.0), (0.1, np.nan)])
def test_exp_growth_guard(lam, kappa):
    # private: its public caller, finding 1 (main findings), needs the whole A-figure set
    assert F._exp_growth({"N": N}, lam, kappa) is None


def test_exp_growth_uses_the_middle_of_the_grid():
    # private: its public caller, finding 1 (main findings), needs the whole A-figure set
    # N = 1, 10, 100, 1000, 10000: mid index 2 (N = 100); ΔH = log(100)/(0.5 · 0.5) = 18.42
    got = F._exp_growth({"N": [1, 10, 100, 1000, 10000]}, 0.5, 0.5)
    assert got == pytest.approx(math.log(100) / 0.25, rel=1e-12)


def test_exponential_growth_prediction_is_log_ratio_over_kappa_lambda():
    # private: its public caller, finding 1 (main findings), needs the whole A-figure set
    # ΔH = log(N_last / N_mid) / (κ̂ λ) = log(10) / (2 · 0.1) = 11.51
    assert F._exp_growth({"N": N}, 0.1, 2.0) == pytest.approx(np.log(10) / 0.2, rel=1e-12)
    r = _r12("exponential", FLAT, "tempered", GROW, lam=0.1)
    r["A14"] = {c: {"summary": {"kappa_median": {"mean": 2.0}}} for c in F.FAST}
    row = F.f1_f2(r)[0][2][0]
    assert "predicts +11.5 lags" in row


# ----------------------------------------------------------------------------------------------
# f1_f2
# ----------------------------------------------------------------------------------------------


def test_f1_row_text_and_rules_by_hand():
    a1 = {"constgate": {"N": N, "H_N_mean": [0, 5, 18.5, 20], "H_N_seeds": [[0, 5, 20, 20], [0, 5, 17, 20]]}}
    a2 = {"constgate": _a2("exponential", selected="tempered",
                           per_seed_selected_bic=["exponential", None, "tempered"], per_seed_lambda=[0.1, 0.3],
                           fits={"exponential": {"params": {"lambda": 0.2}},
                                 "tempered": {"params": {"beta": 0.25, "k": 0.75, "l_c": 12.5}}})}
    a14 = {"constgate": {"summary": {"kappa_median": {"mean": 2.5}}}}
    (n1, v1, rows1, rule1), (n2, v2, rows2, rule2) = F.f1_f2({"A1": a1, "A2": a2, "A14": a14})
    # growth per seed 0 and 3 (mean 1.5, sd 2.12); ΔH = log(10)/(2.5 · 0.2) = 4.61
    assert rows1 == ["constgate: selected law exponential by BIC on the seed mean (tempered by AIC; per seed "
                     "exponential, tempered); exponential λ = 0.2 (per seed 0.2 ± 0.141 (0.1…0.3, 2 seeds)), "
                     "tempered β = 0.25, k = 0.75, ℓ_c = 12.5; Ĥ_N growth over the upper half of the N grid "
                     "+1.5 ± +2.1 (+0.0…+3.0, 2 seeds) lags; the exponential law itself predicts +4.6 lags over "
                     "that range (log(N_last/N_mid)/(κ̂ λ), median κ̂ 2.50): it predicts H_N ∝ log N, not "
                     "saturation, until Ĥ_N reaches the end of the lag grid"]
    # seed 2's BIC picks the tempered law and seed 2 grows by 3 > 2: the cell meets neither
    assert (n1, v1, rule1) == (1, "not reproduced", RULE1)
    # no slow cell in A2: nothing to judge
    assert (n2, v2, rows2, rule2) == (2, "inconclusive", [], RULE2)


def test_f1_f2_need_both_figures():
    a1 = {"constgate": {"N": N, "H_N_mean": [0, 5, 20, 20]}}
    assert F.f1_f2({"A1": a1}) is None
    assert F.f1_f2({"A2": {"constgate": _a2()}}) is None


def test_f1_row_when_fits_and_per_seed_data_are_missing():
    """A failed decay fit (no fits, or no params) prints nan, no per-seed data prints n/a, the seed mean
    Ĥ_N stands in for missing seeds, and a NaN λ predicts nothing (it printed "+nan lags")."""
    a1 = {c: {"N": N, "H_N_mean": [0, 5, 20, 20]} for c in F.FAST}
    a1["sharedgate"]["H_N_seeds"] = []                                  # empty: the seed mean stands in
    a2 = {"constgate": _a2(),
          "sharedgate": _a2(fits={"exponential": {}, "tempered": {}})}
    a14 = {c: {"summary": {"kappa_median": {"mean": 2.0}}} for c in F.FAST}
    (_, v1, rows, _), _ = F.f1_f2({"A1": a1, "A2": a2, "A14": a14})
    tail = ("exponential λ = nan (per seed n/a), tempered β = nan, k = nan, ℓ_c = nan; Ĥ_N growth over the upper "
            "half of the N grid +0.0 ± +0.0 (+0.0…+0.0, 1 seeds) lags")
    assert rows == [f"{c}: selected law exponential by BIC on the seed mean (exponential by AIC; per seed n/a); "
                    + tail for c in F.FAST]
    assert v1 == "reproduced"                # exponential by BIC, flat Ĥ_N (growth 0 ≤ 2)
    a2 = {"constgate": _a2(fits={"exponential": {"params": {}}, "tempered": {"params": {}}})}
    (_, _, rows, _), _ = F.f1_f2({"A1": a1, "A2": a2, "A14": a14})
    assert rows[0].endswith(tail)


def test_f1_skips_a_cell_missing_from_a2_and_judges_the_next():
    a1 = {c: {"N": N, "H_N_mean": [0, 5, 20, 20]} for c in F.FAST}
    (_, v1, rows, _), _ = F.f1_f2({"A1": a1, "A2": {"sharedgate": _a2()}})
    assert v1 == "reproduced" and len(rows) == 1 and rows[0].startswith("sharedgate:")


def test_nested_test_decides_the_law_over_bic():
    """With per-seed nested tests, finding 1 needs every seed's exponential_ok and finding 2 every seed's
    `slower`, whatever BIC selected (tempered for the fast cell, exponential for the slow one here); a seed
    without a test (None, {}, or an error) is left out."""
    fast = [T_EXP, None, {}, {"error": "too few lags"}, T_EXP | {"at_edge": True}]
    out = F.f1_f2(_nested_r(fast, [T_SLOW, T_SLOW]))
    assert [(n, v) for n, v, *_ in out] == [(1, "reproduced"), (2, "reproduced")]
    assert out[0][2][0].endswith("lags; exponential vs the tempered law that nests it, per seed: "
                                 + T_EXP_TEXT + "; " + T_EXP_TEXT.replace(" → ", " (box edge) → "))
    assert out[1][2][0].endswith("lags; exponential vs the tempered law that nests it, per seed: "
                                 + T_SLOW_TEXT + "; " + T_SLOW_TEXT)
    # swapped: an exponential seed does not count as slower, a slower one not as exponential
    out = F.f1_f2(_nested_r([T_SLOW, T_SLOW], [T_EXP, T_EXP], fast_sel="exponential", slow_sel="tempered"))
    assert [(n, v) for n, v, *_ in out] == [(1, "inconclusive"), (2, "inconclusive")]
    # "not exponential" but not slower either: finding 2's law fails although BIC chose a slow law
    out = F.f1_f2(_nested_r([T_EXP], [T_NOT, T_SLOW], slow_sel="power"))
    assert out[1][1] == "inconclusive"


def test_only_error_tests_fall_back_to_bic():
    out = F.f1_f2(_nested_r([{"error": "x"}], [None], fast_sel="exponential", slow_sel="power"))
    assert [(n, v) for n, v, *_ in out] == [(1, "reproduced"), (2, "reproduced")]
    assert "nests it" not in out[0][2][0] and "nests it" not in out[1][2][0]


def test_growth_half_a_lag_counts_as_growing():
    """Ĥ_N still growing means growth > 0 in every seed: +0.5 lags is growing."""
    out = F.f1_f2(_nested_r([T_EXP], [T_SLOW], slow_h=(0, 5, 10, 10.5)))
    assert out[1][1] == "reproduced"
    out = F.f1_f2(_nested_r([T_EXP], [T_SLOW], slow_h=(0, 5, 10, 10)))       # growth 0: not growing
    assert out[1][1] == "inconclusive"


def test_per_seed_counting_over_cells():
    """The verdict counts cells: law met in one of two cells, growth in none → inconclusive (not "not
    reproduced", which needs no cell to meet either)."""
    a1 = {"constgate": {"N": N, "H_N_mean": [0, 5, 10, 40], "H_N_seeds": [[0, 5, 10, 40]]},
          "sharedgate": {"N": N, "H_N_mean": [0, 5, 10, 40], "H_N_seeds": [[0, 5, 10, 40]]}}
    a2 = {"constgate": _a2("exponential"), "sharedgate": _a2("tempered")}
    assert F.f1_f2({"A1": a1, "A2": a2})[0][1] == "inconclusive"
    # growth met in the first cell only, law in none
    a1["constgate"] = {"N": N, "H_N_mean": [0, 5, 20, 20], "H_N_seeds": [[0, 5, 20, 20]]}
    a2 = {"constgate": _a2("tempered"), "sharedgate": _a2("tempered")}
    assert F.f1_f2({"A1": a1, "A2": a2})[0][1] == "inconclusive"


def test_f1_f2_read_the_bic_law_and_the_seed_mean_window():
    fast = lambda c: c in fm.FAST           # noqa: E731
    bic = lambda c: "exponential" if fast(c) else "power"        # noqa: E731
    aic = lambda c: "power" if fast(c) else "exponential"        # noqa: E731
    h = lambda c: 5.0 if fast(c) else 9.0                        # noqa: E731
    rows = {k: v for k, v, *_ in fm.f1_f2(_a1_a2(bic, aic, h))}
    assert rows == {1: "reproduced", 2: "reproduced"}
    rows = {k: v for k, v, *_ in fm.f1_f2(_a1_a2(aic, bic, lambda c: 9.0 if fast(c) else 5.0))}
    assert rows == {1: "not reproduced", 2: "not reproduced"}


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


def test_f3_rows_and_rule_by_hand():
    (n, verdict, rows, rule), = F.f3(_r3([10, 20, 30]))
    assert (n, verdict, rule) == (3, "reproduced", "rule: Spearman ρ > 0.5 across cells")
    assert rows == ["constgate: IQR of log10 τ = 0.100, Ĥ_N at the largest N = 10.0",
                    "sharedgate: IQR of log10 τ = 0.200, Ĥ_N at the largest N = 20.0",
                    "diaggate: IQR of log10 τ = 0.300, Ĥ_N at the largest N = 30.0",
                    "Spearman ρ(spread, Ĥ_N) across cells = 1.00"]


def test_f3_rho_zero_is_inconclusive():
    # Ĥ_N ranks 1.5, 3, 1.5 against 1, 2, 3: ρ = 0 (the rule's "not reproduced" needs ρ < 0)
    (_, verdict, rows, _), = F.f3(_r3([10, 20, 10]))
    assert rows[-1] == "Spearman ρ(spread, Ĥ_N) across cells = 0.00"
    assert verdict == "inconclusive"


def test_f3_reads_the_tau_spread_and_the_last_window():
    cells = ["constgate", "sharedgate", "diaggate", "gru"]
    a3 = {c: {"log10_tau_iqr": float(i), "log10_tau_median": -float(i)} for i, c in enumerate(cells)}
    up = {c: {"H_N_mean": [10.0 - i, float(i)]} for i, c in enumerate(cells)}       # last grows, first falls
    down = {c: {"H_N_mean": [float(i), 10.0 - i]} for i, c in enumerate(cells)}
    assert fm.f3({"A1": up, "A2": {"gru": {}}, "A3": a3})[0][1] == "reproduced"
    assert fm.f3({"A1": down, "A2": {"gru": {}}, "A3": a3})[0][1] == "not reproduced"


@pytest.mark.parametrize("hmax, verdict", [([10, 20, 30], "reproduced"),          # ρ = 1
                                            ([10, 30, 20], "inconclusive"),        # ρ = 0.5 (rule: > 0.5)
                                            ([20, 10, 30], "inconclusive"),        # ρ = 0.5
                                            ([30, 10, 20], "not reproduced"),      # ρ = −0.5
                                            ([30, 20, 10], "not reproduced")])     # ρ = −1
def test_f3_spearman_rule(hmax, verdict):
    out = F.f3(_r3_findings([0.1, 0.2, 0.3], hmax))
    assert out[0][1] == verdict


def test_f3_two_cells_is_inconclusive():
    assert F.f3(_r3_findings([0.1, 0.2], [10, 20]))[0][1] == "inconclusive"


# ----------------------------------------------------------------------------------------------
# f4
# ----------------------------------------------------------------------------------------------


def test_f4_rows_and_rule_by_hand():
    a6 = {}
    for c in F.FAST:
        a6[c] = {"mean": 1.85, "fraction_below_1.9": 0.25, "mean_seeds": [1.8, 1.9]}
    for c in F.SLOW:
        a6[c] = {"mean": 1.65, "fraction_below_1.9": 0.75, "mean_seeds": [1.7, 1.6]}
    (n, verdict, rows, rule), = F.f4({"A6": a6})
    assert (n, verdict, rule) == (4, "reproduced", RULE4)
    assert rows[0] == "constgate: mean α̂ = 1.850 (per seed 1.85 ± 0.0707 (1.8…1.9, 2 seeds)), fraction α̂ < 1.9 = 0.25"
    assert rows[4] == "lstm: mean α̂ = 1.650 (per seed 1.65 ± 0.0707 (1.6…1.7, 2 seeds)), fraction α̂ < 1.9 = 0.75"
    # seed 1: 1.8 − 1.7 = 0.1, seed 2: 1.9 − 1.6 = 0.3
    assert rows[5:] == ["mean α̂ (constgate, sharedgate) − mean α̂ (diaggate, gru, lstm) = +0.200",
                        "the same difference per seed: +0.200 ± +0.141 (+0.100…+0.300, 2 seeds)"]


def test_f4_one_group_missing():
    for a6 in ({"constgate": {"mean": 1.8, "fraction_below_1.9": 0.4}},
               {"gru": {"mean": 1.8, "fraction_below_1.9": 0.4}}):
        (n, verdict, rows, rule), = F.f4({"A6": a6})
        assert (n, verdict, rule) == (4, "inconclusive", "needs both groups")
        assert rows == [f"{next(iter(a6))}: mean α̂ = 1.800 (per seed n/a), fraction α̂ < 1.9 = 0.40"]


def test_f4_without_per_seed_means_uses_the_pooled_difference():
    r = _a6(1.9, 1.7)
    del r["A6"]["constgate"]["mean_seeds"]
    (_, verdict, rows, _), = F.f4(r)
    assert verdict == "reproduced" and len(rows) == 3          # two cells and the pooled difference
    r["A6"]["constgate"]["mean_seeds"] = []
    assert F.f4(r)[0][1] == "reproduced" and len(F.f4(r)[0][2]) == 3


@pytest.mark.parametrize("r, verdict", [
    (_a6(0.04, 0.02, [0.05], [0.02]), "inconclusive"),          # pooled exactly +0.02 (rule: > 0.02)
    (_a6(0.12, 0.02, [0.04], [0.02]), "inconclusive"),          # a seed exactly +0.02
    (_a6(0.02, 0.04, [0.02], [0.12]), "inconclusive"),          # pooled exactly −0.02 (rule: < −0.02)
    (_a6(0.02, 0.12, [0.02], [0.04]), "inconclusive"),          # a seed exactly −0.02
    (_a6(0.5, 0.5, [0.02], [0.12]), "inconclusive"),            # pooled 0, every seed −0.1
    (_a6(0.02, 0.12, [0.5], [0.5]), "inconclusive"),            # pooled −0.1, every seed 0
    (_a6(0.02, 0.12, [0.02], [0.12]), "not reproduced"),
])
def test_f4_bounds_are_strict_pooled_and_per_seed(r, verdict):
    # small α̂ values on purpose: 0.04 − 0.02 is exactly 0.02 in binary floating point (1.84 − 1.82 is not)
    assert F.f4(r)[0][1] == verdict


def test_f4_reads_mean_alpha_not_the_fraction():
    assert fm.f4({"A6": _a6_new_provenance_main(1.9, 1.5, 0.0, 1.0)})[0][1] == "reproduced"
    assert fm.f4({"A6": _a6_new_provenance_main(1.5, 1.9, 1.0, 0.0)})[0][1] == "not reproduced"


def test_f4_direction_and_mean_over_cells():
    # slow means 1.6, 1.9, 1.92: mean 1.8067, median 1.9; fast mean 1.85 → diff +0.043 (median: −0.05)
    assert F.f4(_r4([1.85, 1.85], [1.6, 1.9, 1.92]))[0][1] == "reproduced"
    assert F.f4(_r4([1.7, 1.7], [1.8, 1.8, 1.8]))[0][1] == "not reproduced"
    assert F.f4(_r4([1.81, 1.81], [1.8, 1.8, 1.8]))[0][1] == "inconclusive"       # |diff| = 0.01


def test_f4_needs_every_seed():
    # pooled diff +0.1, but in seed 2 the slow cells have the higher α̂
    seeds = {c: [1.9, 1.7] for c in F.FAST} | {c: [1.7, 1.75] for c in F.SLOW}
    r = _r4([1.8, 1.8], [1.7, 1.7, 1.7], seeds)
    out = F.f4(r)[0]
    assert out[1] == "inconclusive"
    assert "+0.100" in out[2][-2]                       # the pooled difference is still reported


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


def test_f5_a5_only_without_a_slope():
    # private: its public callers are the main findings' texts, which need the whole A-figure set
    (n, verdict, rows, rule), = F.f5({"A5": {"pooled": {"slope": None, "r2": None, "n": 0}}})
    assert (n, verdict, rule) == (5, "inconclusive", "rule: |pooled slope − 1| ≤ 0.3")
    assert rows == ["pooled slope of log N̂ on −κ̂ log f (A5): n/a, R² n/a, n 0"]
    assert F._sig(None) == "n/a" and F._sig(0.123456) == "0.123" and F._sig(0.123456, 2) == "0.12"


# ----------------------------------------------------------------------------------------------
# f5
# ----------------------------------------------------------------------------------------------


def test_f5_rows_and_rule_by_hand():
    (n, verdict, rows, rule), = F.f5(_a14([0.9, 1.0]))
    assert (n, verdict) == (5, "reproduced")
    assert rule == ("rule: |slope − 1| ≤ 0.3 for the pooled slope (log N̂ on −κ̂ log f, all cells) of every seed; "
                    "reproduced only if it holds in every seed")
    assert rows == [
        "master slope, three ways: pooled points 0.95 (R² 0.50, per seed 0.95 ± 0.07 (0.90…1.00, 2 seeds)); "
        "author's way (seed means in the power-law window, α̂ > 1.01) per cell gru 1.00, lstm n/a; with N* for N̂ "
        "1.25 (per seed 1.25 ± 0.07 (1.20…1.30, 2 seeds))",
        "gru: |m̄| ∝ f^a, a = 1.00 ± 0.14 (0.90…1.10, 2 seeds); σ̂ ∝ f^b, b = 0.10 ± 0.00 (0.10…0.10, 2 seeds); "
        "predicted slope a − b = 0.90 ± 0.14 (0.80…1.00, 2 seeds); median κ̂ 2.00 ± 0.00 (2.00…2.00, 2 seeds); "
        "of 20 lags, at the smallest N 2.0 ± 1.4 (1.0…3.0, 2 seeds), never 2.0 ± 0.0 (2.0…2.0, 2 seeds); "
        "slope with N̂ 1.00 ± 0.14 (0.90…1.10, 2 seeds), with N* 1.20 ± 0.14 (1.10…1.30, 2 seeds) "
        "→ no single factor breaks it"]


def test_f5_no_seed_slopes_is_inconclusive():
    (n, verdict, rows, rule), = F.f5(_a14([None, None]))
    assert (n, verdict, rule) == (5, "inconclusive", "rule: |slope − 1| ≤ 0.3 for the pooled slope of every seed")
    assert len(rows) == 2 and "per seed n/a" in rows[0]


def test_f5_reads_the_nhat_slopes_not_the_nstar_ones():
    assert fm.f5({"A14": _a14_new_provenance_main([1.0, 1.1], [3.0, 3.0])})[0][1] == "reproduced"
    assert fm.f5({"A14": _a14_new_provenance_main([3.0, 3.0], [1.0, 1.1])})[0][1] == "not reproduced"
    # without A14, the pooled A5 slope decides (not a per-cell one)
    a5 = {"pooled": {"slope": 1.05, "r2": 0.9, "n": 10}, "gru": {"fit": {"slope": 5.0}}}
    assert fm.f5({"A5": a5})[0][1] == "reproduced"
    assert fm.f5({"A5": dict(a5, pooled={"slope": 5.0, "r2": 0.9, "n": 10}, gru={"fit": {"slope": 1.0}})})[0][1] \
        == "not reproduced"


def test_f5_from_a5_only():
    a5 = lambda s: {"A5": {"pooled": {"slope": s, "r2": 0.5, "n": 30}}}      # noqa: E731
    assert F.f5(a5(1.25))[0][1] == "reproduced"
    assert F.f5(a5(0.75))[0][1] == "reproduced"
    assert F.f5(a5(0.65))[0][1] == "not reproduced"
    assert F.f5(a5(1.35))[0][1] == "not reproduced"
    assert F.f5(a5(None))[0][1] == "inconclusive"


def test_f5_per_seed_rule():
    assert F.f5(_a14_findings([0.9, 1.1, 0.95]))[0][1] == "reproduced"
    assert F.f5(_a14_findings([0.9, 0.5, 1.0]))[0][1] == "inconclusive"       # mean 0.8 is near 1, seed 2 is not
    assert F.f5(_a14_findings([0.2, 0.1, 1.5]))[0][1] == "not reproduced"
    assert F.f5(_a14_findings([1.25, 0.75]))[0][1] == "reproduced"


def test_f5_rows_carry_the_decomposition():
    rows = F.f5(_a14_findings([0.9, 1.1], a=0.5, b=0.4, ends=(3, 9)))[0][2]
    gru = [r for r in rows if r.startswith("gru:")][0]
    assert "a = 0.50 ± 0.00" in gru and "b = 0.40" in gru and "predicted slope a − b = 0.10" in gru
    assert gru.endswith("|m̄| falls more slowly than f (a = 0.50 < 0.7); σ̂ falls with ℓ (b = 0.40 > 0.3); "
                        "the grid clamps most lags (12.0 of 20 at its ends)")


def test_f5_numbers_at_three_significant_digits():
    """Finding 5 printed 17-digit floats (issue 33 item 5)."""
    a5 = {"pooled": {"slope": 0.03891791594325117, "r2": 0.021850309466029505, "n": 270},
          "gru": {"fit": {"slope": 1.0088413733960995}}}
    (num, verdict, rows, rule), = F.f5({"A5": a5})
    assert rows[0] == "pooled slope of log N̂ on −κ̂ log f (A5): 0.0389, R² 0.0219, n 270"
    assert rows[1] == "gru: slope 1.01"
    assert verdict == "not reproduced"


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
