"""Mutation-testing kills for lwsim/figures/studies/main/findings.py (issue 32, docs/testing.md).

Every expected text and number here is written out by hand from small hand-built figure data; the
verdict-bearing parts (per-seed counting, the nested test, the exponential growth guard, the f4 and
f5 bounds) get inputs placed exactly at, or just across, each bound.
"""
import math

import numpy as np
import pytest

from lwsim.figures.studies.main import findings as F

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


def test_nested_text_each_outcome():
    assert F._nested_text(T_EXP) == T_EXP_TEXT
    assert F._nested_text(T_SLOW) == T_SLOW_TEXT
    assert F._nested_text(T_NOT) == T_NOT_TEXT
    # both flags set: "exponential" wins (the test says the exponential law is not rejected)
    assert F._nested_text(T_SLOW | {"exponential_ok": True}).endswith("(box edge) → exponential")


def _a2(sel="exponential", **extra):
    return {"selected_bic": sel, "selected": sel} | extra


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


def _nested_r(fast_tests, slow_tests, fast_sel="tempered", slow_sel="exponential", slow_h=(0, 5, 10, 30)):
    a1 = {"sharedgate": {"N": N, "H_N_mean": [0, 5, 20, 20], "H_N_seeds": [[0, 5, 20, 20]] * 2},
          "gru": {"N": N, "H_N_mean": list(slow_h), "H_N_seeds": [list(slow_h)] * 2}}
    a2 = {"sharedgate": _a2(fast_sel, per_seed_nested_exp=fast_tests),
          "gru": _a2(slow_sel, per_seed_nested_exp=slow_tests)}
    return {"A1": a1, "A2": a2}


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


@pytest.mark.parametrize("lam, kappa", [(0.0, 2.0), (0.1, 0.0), (-0.1, 2.0), (0.1, -2.0), (-0.1, -2.0),
                                        (None, 2.0), (0.1, None), (np.nan, 2.0), (0.1, np.nan)])
def test_exp_growth_guard(lam, kappa):
    assert F._exp_growth({"N": N}, lam, kappa) is None


def test_exp_growth_uses_the_middle_of_the_grid():
    # N = 1, 10, 100, 1000, 10000: mid index 2 (N = 100); ΔH = log(100)/(0.5 · 0.5) = 18.42
    got = F._exp_growth({"N": [1, 10, 100, 1000, 10000]}, 0.5, 0.5)
    assert got == pytest.approx(math.log(100) / 0.25, rel=1e-12)


def _r3(hmax):
    cells = ["constgate", "sharedgate", "diaggate"]
    return {"A1": {c: {"H_N_mean": [0, 7, h]} for c, h in zip(cells, hmax)}, "A2": {c: {} for c in cells},
            "A3": {c: {"log10_tau_iqr": s} for c, s in zip(cells, (0.1, 0.2, 0.3))}}


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


RULE4 = "rule: slow-decay cells have mean α̂ lower by > 0.02, pooled and in every seed"


def _a6(fast, slow, fast_seeds=None, slow_seeds=None):
    """One fast cell (constgate) and one slow cell (gru): the difference of their means is exact."""
    return {"A6": {"constgate": {"mean": fast, "fraction_below_1.9": 0.5, "mean_seeds": fast_seeds or [fast]},
                   "gru": {"mean": slow, "fraction_below_1.9": 0.5, "mean_seeds": slow_seeds or [slow]}}}


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


def test_f5_a5_only_without_a_slope():
    (n, verdict, rows, rule), = F.f5({"A5": {"pooled": {"slope": None, "r2": None, "n": 0}}})
    assert (n, verdict, rule) == (5, "inconclusive", "rule: |pooled slope − 1| ≤ 0.3")
    assert rows == ["pooled slope of log N̂ on −κ̂ log f (A5): n/a, R² n/a, n 0"]
    assert F._sig(None) == "n/a" and F._sig(0.123456) == "0.123" and F._sig(0.123456, 2) == "0.12"


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


def test_master_diagnosis_missing_end_counts_are_zero():
    # exactly half of 20 lags at the ends is not "most", whichever count is missing
    assert F.master_diagnosis({"n_never": {"mean": 10}}, 20) == []
    assert F.master_diagnosis({"n_at_smallest_N": {"mean": 10}}, 20) == []
    assert F.master_diagnosis({"n_at_smallest_N": {"mean": 10}, "n_never": {"mean": 1}}, 20) == [
        "the grid clamps most lags (11.0 of 20 at its ends)"]


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
