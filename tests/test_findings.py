"""The FINDINGS rules (lwsim.figures.findings, docs/experiments.md §5.5) on hand-built figure data.

Every rule gets cases whose verdict is known — reproduced, not reproduced, inconclusive — placed so
that a flipped comparison, a non-strict bound made strict (or the reverse), a mean for a median or
a seed-mean verdict that ignores one dissenting seed changes the outcome.
"""
import numpy as np
import pytest

from lwsim.figures import common, findings as report
from lwsim.figures.studies import b_expansion, fidelity
from lwsim.figures.studies.b_anisotropy import findings as S2F
from lwsim.figures.studies.main import findings as F

N = [100, 1000, 10000, 100000]                   # mid index 2: growth = H[-1] − H[2]


def _a2(law, lam=0.05, seed_laws=None):
    return {"selected_bic": law, "selected": law, "per_seed_selected_bic": seed_laws or [law, law],
            "per_seed_lambda": [lam, lam],
            "fits": {"exponential": {"params": {"C": 1.0, "lambda": lam}},
                     "tempered": {"params": {"beta": 0.1, "k": 0.9, "l_c": 10.0}}}}


def _a1(*seeds):
    h = np.array(seeds, float)
    return {"N": N, "H_N_mean": h.mean(0).tolist(), "H_N_seeds": h.tolist()}


def _r12(fast_law, fast_h, slow_law, slow_h, **kw):
    a1 = {c: _a1(*fast_h) for c in F.FAST} | {c: _a1(*slow_h) for c in F.SLOW}
    a2 = {c: _a2(fast_law, **kw) for c in F.FAST} | {c: _a2(slow_law) for c in F.SLOW}
    return {"A1": a1, "A2": a2}


FLAT = ([0, 5, 20, 20], [0, 5, 20, 20])          # growth 0
GROW = ([0, 5, 10, 40], [0, 5, 10, 30])          # growth 30, 20


def _verdicts(r):
    return {k: v for k, v, *_ in F.f1_f2(r)}


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


def test_exponential_growth_prediction_is_log_ratio_over_kappa_lambda():
    # ΔH = log(N_last / N_mid) / (κ̂ λ) = log(10) / (2 · 0.1) = 11.51
    assert F._exp_growth({"N": N}, 0.1, 2.0) == pytest.approx(np.log(10) / 0.2, rel=1e-12)
    r = _r12("exponential", FLAT, "tempered", GROW, lam=0.1)
    r["A14"] = {c: {"summary": {"kappa_median": {"mean": 2.0}}} for c in F.FAST}
    row = F.f1_f2(r)[0][2][0]
    assert "predicts +11.5 lags" in row


def _r3(spread, hmax):
    cells = ["constgate", "sharedgate", "diaggate"][:len(spread)]
    return {"A1": {c: {"H_N_mean": [0, h]} for c, h in zip(cells, hmax)}, "A2": {c: {} for c in cells},
            "A3": {c: {"log10_tau_iqr": s} for c, s in zip(cells, spread)}}


@pytest.mark.parametrize("hmax, verdict", [([10, 20, 30], "reproduced"),          # ρ = 1
                                            ([10, 30, 20], "inconclusive"),        # ρ = 0.5 (rule: > 0.5)
                                            ([20, 10, 30], "inconclusive"),        # ρ = 0.5
                                            ([30, 10, 20], "not reproduced"),      # ρ = −0.5
                                            ([30, 20, 10], "not reproduced")])     # ρ = −1
def test_f3_spearman_rule(hmax, verdict):
    out = F.f3(_r3([0.1, 0.2, 0.3], hmax))
    assert out[0][1] == verdict


def test_f3_two_cells_is_inconclusive():
    assert F.f3(_r3([0.1, 0.2], [10, 20]))[0][1] == "inconclusive"


def _r4(fast, slow, seeds=None):
    a6 = {}
    for c, m in zip(F.FAST, fast):
        a6[c] = {"mean": m, "fraction_below_1.9": 0.5, "mean_seeds": (seeds or {}).get(c, [m, m])}
    for c, m in zip(F.SLOW, slow):
        a6[c] = {"mean": m, "fraction_below_1.9": 0.5, "mean_seeds": (seeds or {}).get(c, [m, m])}
    return {"A6": a6}


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


def test_f4_one_group_missing():
    assert F.f4({"A6": {"constgate": {"mean": 1.8, "fraction_below_1.9": 0.4}}})[0][1] == "inconclusive"


def test_f5_from_a5_only():
    a5 = lambda s: {"A5": {"pooled": {"slope": s, "r2": 0.5, "n": 30}}}      # noqa: E731
    assert F.f5(a5(1.25))[0][1] == "reproduced"
    assert F.f5(a5(0.75))[0][1] == "reproduced"
    assert F.f5(a5(0.65))[0][1] == "not reproduced"
    assert F.f5(a5(1.35))[0][1] == "not reproduced"
    assert F.f5(a5(None))[0][1] == "inconclusive"


def _a14(per_seed, a=1.0, b=0.0, ends=(0, 0)):
    per = [{"slope_mean_vs_f": a, "slope_sigma_vs_f": b, "predicted_master_slope": a - b, "kappa_median": 2.0,
            "n_at_smallest_N": ends[0], "n_never": ends[1], "master_slope_nhat": s, "master_slope_nstar": s}
           for s in per_seed]
    summ = {k: {"mean": float(np.mean([p[k] for p in per]))} for k in per[0]}
    fit = {"slope": float(np.mean(per_seed)), "r2": 0.9, "n": 40}
    return {"A14": {"gru": {"per_seed": per, "summary": summ, "n_lags": 20, "author": {"slope": 1.0}},
                    "pooled": {"nhat": fit, "nstar": fit, "nhat_per_seed": list(per_seed),
                               "nstar_per_seed": list(per_seed), "author_per_cell": {"gru": 1.0}}}}


def test_f5_per_seed_rule():
    assert F.f5(_a14([0.9, 1.1, 0.95]))[0][1] == "reproduced"
    assert F.f5(_a14([0.9, 0.5, 1.0]))[0][1] == "inconclusive"       # mean 0.8 is near 1, seed 2 is not
    assert F.f5(_a14([0.2, 0.1, 1.5]))[0][1] == "not reproduced"
    assert F.f5(_a14([1.25, 0.75]))[0][1] == "reproduced"


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


def test_f5_rows_carry_the_decomposition():
    rows = F.f5(_a14([0.9, 1.1], a=0.5, b=0.4, ends=(3, 9)))[0][2]
    gru = [r for r in rows if r.startswith("gru:")][0]
    assert "a = 0.50 ± 0.00" in gru and "b = 0.40" in gru and "predicted slope a − b = 0.10" in gru
    assert gru.endswith("|m̄| falls more slowly than f (a = 0.50 < 0.7); σ̂ falls with ℓ (b = 0.40 > 0.3); "
                        "the grid clamps most lags (12.0 of 20 at its ends)")


def _r6(rhos):
    return {"A11": {"table": [{"cell": "gru", "optimizer": "sgd", "seed": i, "spearman": r, "slope_ratio": 1.0,
                               "offdiag_mean": 0.1} for i, r in enumerate(rhos)]}}


def test_f6_median_rule():
    assert fidelity.f6(_r6([0.95, 0.2, 0.92]))[0][1] == "reproduced"         # median 0.92 (mean 0.69)
    assert fidelity.f6(_r6([0.9, 0.9, 0.1]))[0][1] == "reproduced"           # median exactly 0.9: ≥
    assert fidelity.f6(_r6([0.89, 0.95, 0.1]))[0][1] == "inconclusive"
    assert fidelity.f6(_r6([0.5, 0.5, 0.1]))[0][1] == "inconclusive"         # 0.5 is not < 0.5
    assert fidelity.f6(_r6([0.49, 0.95, 0.1]))[0][1] == "not reproduced"
    assert fidelity.f6(_r6([0.95, np.nan, 0.93]))[0][1] == "reproduced"      # NaN rows ignored


def test_f7_every_slope_within_two_pm_tenth():
    b7 = lambda *s: {"B7": {"diaggate": [{"slope": v} for v in s]}}  # noqa: E731
    assert b_expansion.f7(b7(2.0, 2.09, 1.91))[0][1] == "reproduced"
    assert b_expansion.f7(b7(2.0, 2.11))[0][1] == "not reproduced"
    assert b_expansion.f7(b7(1.89, 2.0))[0][1] == "not reproduced"


def _r8(mu_first, mu_final, multi, plain):
    b1 = {m: {"mu_0": [1.0, mu_first], "mu_300": [1.0, mu_final]} for m in ("constgate", "diaggate")}
    b4 = {t: {"diaggate": {"median_last": a}, "rnn": {"median_last": b}} for t, (a, b) in
          enumerate(zip(multi, plain))}
    return {"B1": b1, "B4": b4}


def test_f8_rule():
    wins = ([[5, 5]] * 3, [[1, 1]] * 3)
    loses = ([[1, 1]] * 3, [[5, 5]] * 3)
    assert S2F.f8(_r8(0.9, 0.1, *wins))[0][1] == "reproduced"
    assert S2F.f8(_r8(0.1, 0.9, *loses))[0][1] == "not reproduced"       # final checkpoint decides
    assert S2F.f8(_r8(0.9, 0.1, *loses))[0][1] == "inconclusive"
    assert S2F.f8(_r8(0.9, 0.5, *wins))[0][1] == "inconclusive"          # μ̃ = 0.5 is not < 0.5


def test_f8_median_over_seeds_and_majority():
    # diaggate AI per seed [10, 1, 1]: median 1 < rnn's 2 (the mean, 4, would win)
    assert S2F.f8(_r8(0.9, 0.1, [[10, 1, 1]] * 3, [[2, 2, 2]] * 3))[0][1] == "inconclusive"
    # 2 wins out of 4 tasks is not "most"; 3 of 4 is; ties count as wins (≥)
    assert S2F.f8(_r8(0.9, 0.1, [[5]] * 2 + [[1]] * 2, [[1]] * 2 + [[2]] * 2))[0][1] == "inconclusive"
    assert S2F.f8(_r8(0.9, 0.1, [[5]] * 2 + [[1]] * 2, [[1]] * 3 + [[2]]))[0][1] == "reproduced"


def test_spread_text():
    assert common.spread_text([1.0, 2.0, 3.0], ".2f") == "2.00 ± 1.00 (1.00…3.00, 3 seeds)"
    assert common.spread_text([None, 4.0]) == "4 ± 0 (4…4, 1 seeds)"
    assert common.spread_text([]) == "n/a"


def test_write_findings_table(tmp_path):
    r = _r12("exponential", FLAT, "tempered", GROW) | _r6([0.95, 0.96])
    rows = report.write_findings(r, "quick", tmp_path / "F.md")
    text = (tmp_path / "F.md").read_text()
    assert rows[1][1] == "reproduced" and rows[6][1] == "reproduced"
    assert "| 1 | ConstGate and SharedGate envelopes decay exponentially; their Ĥ_N saturates | reproduced |" in text
    assert "| 7 | [B] Fréchet truncation error scales as ε² | not run |" in text


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


def test_f5_numbers_at_three_significant_digits():
    """Finding 5 printed 17-digit floats (issue 33 item 5)."""
    a5 = {"pooled": {"slope": 0.03891791594325117, "r2": 0.021850309466029505, "n": 270},
          "gru": {"fit": {"slope": 1.0088413733960995}}}
    (num, verdict, rows, rule), = F.f5({"A5": a5})
    assert rows[0] == "pooled slope of log N̂ on −κ̂ log f (A5): 0.0389, R² 0.0219, n 270"
    assert rows[1] == "gru: slope 1.01"
    assert verdict == "not reproduced"


def test_f6_reads_the_slope_ratio_in_words():
    """Finding 6 is reproduced on Spearman ρ while the slope ratios are 1.3–2.5: said in words."""
    table = [{"cell": "gru", "optimizer": "sgd", "seed": 42, "spearman": 0.99, "slope_ratio": r,
              "offdiag_mean": 0.6} for r in (1.3, 2.51, float("nan"))]
    (num, verdict, rows, rule), = fidelity.f6({"A11": {"table": table}})
    assert verdict == "reproduced"
    assert "slope ratio 2.510" in rows[1]
    assert "exact one's is 1.3–2.5 (1 = same rate): the first-order envelope falls faster" in rows[-1]
    assert "overstates how fast the signal decays" in rows[-1]


def test_verdict_words_defined_once_at_the_top(tmp_path):
    """The verdict words are defined once, above the headline table (issue 33 item 5)."""
    r = _r12("exponential", FLAT, "tempered", GROW) | _r6([0.95, 0.96])
    report.write_findings(r, "quick", tmp_path / "F.md")
    text = (tmp_path / "F.md").read_text()
    head = text.split("| # | finding | verdict |")[0]
    for word in ("**reproduced**", "**not reproduced**", "**inconclusive**", "**not run**"):
        assert head.count(word + " — ") == 1 and text.count(word + " — ") <= 1 + text.count(f"\n{word} — rule"), word
    assert text.count("Verdicts: ") == 1 and "Verdicts: " in head


@pytest.mark.parametrize("ratios, words", [((0.95, 1.2), "agree in some runs and not in others"),
                                           ((0.95, 1.05), "about the same rate"),
                                           ((0.5, 0.8), "understates how fast")])
def test_f6_slope_ratio_words_per_range(ratios, words):
    table = [{"cell": "gru", "optimizer": "sgd", "seed": 42, "spearman": 0.99, "slope_ratio": r,
              "offdiag_mean": 0.6} for r in ratios]
    (_, _, rows, _), = fidelity.f6({"A11": {"table": table}})
    assert words in rows[-1]
