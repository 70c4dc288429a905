"""Aggregates on data where the alternatives disagree (docs/statistics.md §3.5, docs/experiments.md
§5.4–5.5, docs/fidelity.md): mean ≠ median ≠ lower median, even counts, ties at a threshold, a
majority of exactly half, values on a fence. Every expectation is computed by hand in a comment.

Covered: A14 per-seed κ̂ summary and the seed spread of fig_a14; the author's seed-averaged master
window; finding 8's rule (findings.f8 and findings_b.f8_conventions); spread_text; the A13 summary
(seed means of λ, Ĥ_N growth, mean α̂ and its rules); [B] B1 seed means, B4/B5 medians and IQR over
seeds, B6 quartiles and error bars, B7's robust seed filter.
"""
import numpy as np
import pytest

from lwsim import stats
from lwsim.figures.studies import b_expansion, b_rates
from lwsim.figures.studies.b_anisotropy import figures as b_s2_figures
from lwsim.figures import common
from lwsim.figures.studies.b_anisotropy import findings as S2F
from lwsim.figures.studies.main.master import fig_a14, seed_factors
from lwsim.figures.studies.b_anisotropy.findings import f8_conventions
from lwsim.figures.style import plt


# ----------------------------------------------------------------------------- A14
def _run(a, b, kappa=2.0, eps=20.0, lags=np.arange(1, 21)):
    f = np.exp(-0.1 * lags)
    m, sig = -3.0 * f ** a, 2.0 * f ** b
    kap = np.broadcast_to(np.asarray(kappa, float), lags.shape).copy()
    n_star = (eps * sig / np.abs(m)) ** np.where(np.isfinite(kap), kap, 2.0)
    return {"f": f, "mean": m, "sigma_hat": sig, "kappa_hat": kap, "n_star": n_star,
            "n_hat": n_star.copy(), "n_grid": np.array([10.0, 100.0, 1000.0]), "lags": lags,
            "alpha_hat": np.full(lags.size, 1.5)}


def test_seed_factors_kappa_median_and_range_skewed():
    kap = np.array([1.5, 2.0, 3.0, 10.0, np.nan, np.inf])
    s = seed_factors(_run(1.0, 0.0, kappa=kap, lags=np.arange(1, 7)))
    # finite κ̂: 1.5, 2, 3, 10 → median (2 + 3)/2 = 2.5 (lower median 2, mean 4.125)
    assert s["kappa_median"] == 2.5
    assert s["kappa_range"] == [1.5, 10.0]                 # inf and NaN left out
    s = seed_factors(_run(1.0, 0.0, kappa=np.array([1.5, 1.5, 2.0, 9.0, 9.5]), lags=np.arange(1, 6)))
    assert s["kappa_median"] == 2.0                        # odd count: the middle value (mean 4.7)
    none = seed_factors(_run(1.0, 0.0, kappa=np.full(3, np.inf), lags=np.arange(1, 4)))
    assert none["kappa_median"] is None and none["kappa_range"] is None


def test_fig_a14_summary_is_the_spread_over_three_unequal_seeds():
    # GRU seeds with a = 0.5, 0.6, 1.0 (b = 0.1): a − b = 0.4, 0.5, 0.9
    R = {"a_main": [({"cell": "gru", "seed": s, "optimizer": "adamw"}, _run(a, 0.1, kappa=k))
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


def _master_table():
    """(seeds, lags) tables whose seed *means* lie exactly on log N̄ = 0.5 + 1·(−κ̄ log f̄); the
    seed factors have mean 1 and a different median, so any other average leaves the line."""
    lags = np.arange(1, 17, dtype=float)
    fbar, kbar, nbar = np.exp(-0.1 * lags), 2.0, np.exp(0.5 + 0.2 * lags)
    f = np.outer([0.5, 0.7, 1.8], fbar)                  # factor mean 1, median 0.7
    kappa = np.outer([0.5, 0.7, 1.8], np.full(lags.size, kbar))
    n_hat = np.outer([0.2, 0.5, 2.3], nbar)              # factor mean 1, median 0.5
    alpha = np.full((3, lags.size), 1.5)
    alpha[:, 5] = [1.0, 1.005, 1.5]                      # lag 6: mean 1.168 > 1.01, median 1.005
    n_hat[2, 7] = np.inf                                 # lag 8: mean inf (dropped), median finite
    return n_hat, kappa, f, alpha, lags


def test_fit_master_window_averages_seeds_arithmetically():
    m = stats.fit_master_window(*_master_table(), window=(3, 14))
    assert m.n == 11                                     # lags 3 … 14 less lag 8
    assert m.slope == pytest.approx(1.0, abs=1e-10)
    assert m.intercept == pytest.approx(0.5, abs=1e-9)


# ----------------------------------------------------------------------------- finding 8
def _b(mu_by_ck, multi, plain, author=False):
    """B1/B4 data: μ̃ per checkpoint for two models; B4 per task: diaggate vs rnn AI over lags."""
    p = "author_mu_" if author else "mu_"
    b1 = {m: {f"{p}{ck}": v for ck, v in mu_by_ck.items()} for m in ("constgate", "diaggate")}
    key = "median_last_author" if author else "median_last"
    b4 = {f"t{i}": {"diaggate": {key: a}, "rnn": {key: b}} for i, (a, b) in enumerate(zip(multi, plain))}
    return {"B1": b1, "B4": b4}


LAGDEP = {0: [1.0, 0.9], 300: [1.0, 0.6, 0.2]}          # final checkpoint, largest lag: 0.2 < 0.5
FLAT = {0: [1.0, 0.2], 300: [1.0, 0.3, 0.7]}             # final: 0.7 (the first checkpoint says 0.2)


@pytest.mark.parametrize("author", [False, True])
def test_finding8_majority_ties_and_halves(author):
    def verdict(mu, multi, plain):
        r = _b(mu, multi, plain, author)
        if author:
            rows = f8_conventions(r)
            assert len(rows) == 1 and rows[0].startswith("conventions 'author'")
            return rows[0].split(":")[1].split("—")[0].strip()
        return S2F.f8(r)[0][1]
    tie = ([[2.0, 2.0]] * 3, [[2.0, 2.0]] * 3)
    assert verdict(LAGDEP, *tie) == "reproduced"                  # a tie counts as a win (≥)
    half = ([[5.0]] * 2 + [[1.0]] * 2, [[2.0]] * 4)               # 2 of 4: not "most"
    assert verdict(LAGDEP, *half) == "inconclusive"
    assert verdict(FLAT, *half) == "not reproduced"               # no lag dependence and ≤ half
    three = ([[5.0]] * 3 + [[1.0]], [[2.0]] * 4)                  # 3 of 4
    assert verdict(LAGDEP, *three) == "reproduced"
    assert verdict(FLAT, *three) == "inconclusive"
    # AI over lags [10, 1, 1]: median 1 < 2 (mean 4 would win)
    skew = ([[10.0, 1.0, 1.0]] * 3, [[2.0, 2.0, 2.0]] * 3)
    assert verdict(LAGDEP, *skew) == "inconclusive"
    # plain [1, 1, 1.5, 9]: median 1.25 (lower median 1, mean 3.125): 1.1 loses, 1.3 wins
    assert verdict(LAGDEP, [[1.1] * 4] * 3, [[1.0, 1.0, 1.5, 9.0]] * 3) == "inconclusive"
    assert verdict(LAGDEP, [[1.3, 1.3, 1.3, 1.3]] * 3, [[1.0, 1.0, 1.5, 9.0]] * 3) == "reproduced"
    # μ̃ = 0.5 exactly at the largest lag is not < 0.5
    assert verdict({0: [1.0, 0.5]}, *tie) == "inconclusive"


def test_f8_conventions_rows_and_the_change_line():
    r = _b(LAGDEP, [[2.0]] * 4, [[2.0, 7.0]] * 4)
    a = _b(FLAT, [[2.0]] * 4, [[2.0, 7.0]] * 4, author=True)
    for m in r["B1"]:
        r["B1"][m].update(a["B1"][m])
    for t in r["B4"]:
        for m in r["B4"][t]:
            r["B4"][t][m].update(a["B4"][t][m])
    rows = f8_conventions(r)
    # lwsim: μ̃ 0.2 (< 0.5) and AI 2 vs median(2, 7) = 4.5: 0/4 wins → inconclusive
    assert rows[0].startswith("conventions 'lwsim': inconclusive") and "0/4" in rows[0]
    assert "constgate 0.2," in rows[0] and "t0 7" in rows[0]      # plain+Adam AI at the largest lag
    # author: μ̃ 0.7, 0/4 wins → not reproduced; the verdict changes
    assert rows[1].startswith("conventions 'author': not reproduced") and "0/4" in rows[1]
    assert "CHANGES" in rows[2]


def test_spread_text_mean_not_median():
    # 1, 2, 6: mean 3 (median 2), sd ddof 1 = √7 = 2.65 (ddof 0: 2.16); NaN and None left out
    assert common.spread_text([1.0, None, 2.0, np.nan, 6.0], ".2f") == "3.00 ± 2.65 (1.00…6.00, 3 seeds)"


# ----------------------------------------------------------------------------- A13 summary
def _a13(table):
    """table: {cell: [(λ or None for a failed fit, Ĥ_N growth, α̂ over lags) per seed]}."""
    cells = {}
    for cell, seeds in table.items():
        runs = []
        for lam, growth, alpha in seeds:
            h = np.zeros(6)
            h[3:] = 5.0
            h[-1] = 5.0 + growth                           # growth = h[-1] − h[3]
            r = {}
            for conv in ("lwsim", "author"):
                r[f"decay_{conv}"] = ({"error": "no fit"} if lam is None else
                                      {"lambda": lam, "selected_bic": "exponential"})
                r[f"h_n_{conv}"] = h
                r[f"alpha_{conv}"] = np.asarray(alpha, float)
            runs.append(r)
        cells[cell] = runs
    return cells


SKEW_A = [1.0, 1.0, 1.0, 2.6]                              # mean 1.4, median 1.0
FLAT_A = [1.2] * 4


def test_a13_summary_seed_means_and_rules():
    from lwsim.figures.studies.conventions.figures import summary
    spec = {
        "constgate": [(0.25, -1.0, SKEW_A), (0.25, -1.0, SKEW_A), (1.0, 2.5, SKEW_A)],
        "sharedgate": [(0.25, 0.0, SKEW_A)] * 3,
        "diaggate": [(0.0625, 1.0, FLAT_A)] * 3,
        "gru": [(0.0625, 0.0, FLAT_A), (0.0625, 0.0, FLAT_A), (None, 3.0, FLAT_A)],
        "lstm": [(0.0625, 1.0, FLAT_A), (0.0625, 1.0, FLAT_A), (0.625, 1.0, FLAT_A)],
    }
    s = summary(_a13(spec))["author"]
    c = s["cells"]
    assert c["constgate"]["lambda"] == 0.5                 # (0.25 + 0.25 + 1)/3 (median 0.25)
    assert c["lstm"]["lambda"] == 0.25                     # (0.0625·2 + 0.625)/3 (median 0.0625)
    assert c["gru"]["lambda"] == 0.0625                    # the failed fit is left out
    assert c["gru"]["selected_bic"] == ["exponential"] * 2
    assert c["constgate"]["h_growth"] == 0.5 / 3 and c["gru"]["h_growth"] == 1.0   # medians −1, 0
    assert c["sharedgate"]["alpha_mean"] == pytest.approx(1.4, abs=1e-12)            # median 1.0
    rules = s["rules"]
    # λ: min fast 0.25 (sharedgate) is not > max slow 0.25 (lstm); with medians 0.25 > 0.0625
    assert rules["slow_cells_decay_slower"] is False
    assert rules["fast_cells_saturate"] is False           # constgate mean growth 1/6 > 0
    assert rules["slow_cells_keep_growing"] is True        # gru mean growth 1 > 0 (median 0)
    assert rules["heavier_tails_in_slow_cells"] is True    # mean α̂ 1.4 > 1.2 (medians 1.0 < 1.2)


# ----------------------------------------------------------------------------- [B] figures
def _s2_runs(values, first, author=None, task="adding"):
    """b_s2 runs of the three [B] models; the rnn's AI per seed over two lags."""
    runs = []
    for m, _, _ in b_s2_figures.B_S2_MODELS:
        for seed, (v, v0) in enumerate(zip(values, first)):
            r = {"lags": [1, 2], "ai_0": np.asarray(v0, float), "ai_9": np.asarray(v, float)}
            if author is not None:
                r["ai_author_9"] = np.asarray(v, float) * author
            runs.append(({"cell": m, "task": task, "checkpoints": [0, 9], "seed": seed}, r))
    return runs


def test_b4_median_and_iqr_over_seeds():
    last = [[1.0, 5.0], [2.0, np.nan], [4.0, 1.0], [100.0, 3.0]]
    first = [[3.0, 1.0], [3.0, 1.0], [3.0, 1.0], [9.0, 1.0]]
    fig, d = b_s2_figures.fig_b4({"b_s2": _s2_runs(last, first, author=0.5)})
    plt.close(fig)
    rnn = d["adding"]["rnn"]
    # lag 1: 1, 2, 4, 100 → median 3 (lower 2, mean 26.75), q25 1.75, q75 28 → IQR 26.25
    # lag 2: 5, NaN, 1, 3 → NaN ignored: median 3, q25 2, q75 4
    np.testing.assert_allclose(rnn["median_last"], [3.0, 3.0])
    np.testing.assert_allclose(rnn["iqr_last"], [26.25, 2.0])
    np.testing.assert_allclose(rnn["median_first"], [3.0, 1.0])          # mean would be 4.5
    np.testing.assert_allclose(rnn["median_last_author"], [1.5, 1.5])


def test_b6_quartiles_of_four_seeds_and_both_error_bars():
    for mode, seg in (("quartiles", [1.75, 28.0]), ("iqr", [3.0 - 13.125, 3.0 + 13.125])):
        runs = []
        for m, _, _ in b_s2_figures.B_S2_MODELS:
            for seed, v in enumerate((1.0, 100.0, 2.0, 4.0)):
                runs.append(({"cell": m, "task": "adding", "checkpoints": [0], "seed": seed,
                              "b6_errorbars": mode}, {"gai_0": v, "gce_0": v, "gpr_0": v}))
        fig, d = b_s2_figures.fig_b6({"b_s2": runs})
        eb = [c for c in fig.axes[0].containers if hasattr(c, "has_yerr")][0]
        got = sorted(eb.lines[2][0].get_segments()[0][:, 1])
        plt.close(fig)
        np.testing.assert_allclose(got, seg)              # quartiles: q25 … q75; iqr: median ± IQR/2
        assert d["adding"]["rnn"]["AI"] == {"median": 3.0, "iqr": 26.25, "q25": 1.75, "q75": 28.0}


def test_b7_robust_fences_are_inclusive():
    # 2, 3, 4, 5, 8: q25 3, q75 5, IQR 2 → fences [0, 8]: 8 on the fence is kept
    np.testing.assert_array_equal(b_expansion.robust_seeds([2.0, 3.0, 4.0, 5.0, 8.0], [2.0] * 5), [True] * 5)
    np.testing.assert_array_equal(b_expansion.robust_seeds([2.0, 3.0, 4.0, 5.0, 8.01], [2.0] * 5),
                                  [True] * 4 + [False])
    np.testing.assert_array_equal(b_expansion.robust_seeds([0.0, 3.0, 4.0, 5.0, 6.0], [2.0] * 5), [True] * 5)
    np.testing.assert_array_equal(b_expansion.robust_seeds([-0.01, 3.0, 4.0, 5.0, 6.0], [2.0] * 5),
                                  [False] + [True] * 4)
    # median over the kept seeds only, even count: C₂ 1, 2, 3, 10 → 2.5 (lower 2, mean 4)
    eps = np.array([0.1, 1.0])
    runs = [({"cell": "gru", "seed": s, "b7_aggregate": "robust"},
             {"eps": eps, "E": np.array([0.01, 1.0]) * e1, "C2": np.full(2, c2), "slope": 2.0})
            for s, (e1, c2) in enumerate(((2.0, 1.0), (3.0, 2.0), (4.0, 3.0), (5.0, 10.0), (9.0, 50.0)))]
    fig, d = b_expansion.fig_b7({"b_expansion": runs})
    plt.close(fig)
    assert list(d["gru"]["kept"]) == [True] * 4 + [False]
    np.testing.assert_allclose(d["gru"]["C2_median"], 2.5)
    np.testing.assert_allclose(d["gru"]["E_median"], np.array([0.01, 1.0]) * 3.5)   # E(1): 2,3,4,5 → 3.5


def test_b1_author_mu_and_predictors_are_seed_means():
    runs = []
    for seed, v in enumerate((0.1, 0.2, 0.9)):            # mean 0.4, median 0.2
        r = {"lags": [1, 2], "mu_5": np.array([1.0, v]), "mu_author_5": np.array([1.0, 2 * v]),
             "injection_mufit_5": np.array([1.0, v]), "injection_mu0_5": np.array([1.0, np.nan if seed == 1 else v])}
        runs.append(({"cell": "diaggate", "checkpoints": [5], "seed": seed}, r))
    fig, d = b_rates.fig_b1({"b_s1": runs})
    plt.close(fig)
    np.testing.assert_allclose(d["diaggate"]["mu_5"], [1.0, 0.4])
    np.testing.assert_allclose(d["diaggate"]["author_mu_5"], [1.0, 0.8])
    np.testing.assert_allclose(d["diaggate"]["injection_fit_5"], [1.0, 0.4])
    np.testing.assert_allclose(d["diaggate"]["injection_mu0_5"], [1.0, 0.5])     # NaN seed left out
