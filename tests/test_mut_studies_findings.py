"""Tests that kill the surviving mutants of mutmut on the studies' finding rules and report text
(issue 32, docs/testing.md): behaviour/findings.py (finding 9), b_s2/findings.py (finding 8),
conventions/findings.py (A13) and main/nulls.py (findings 1–5 per null). Every input is built by
hand and every expected number or line is written out; none compares the code with itself."""
from __future__ import annotations

import numpy as np
import pytest

from lwsim.figures.studies.behaviour import findings as fb


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


def _track(pooled, seeds):
    return {"pooled": pooled, "per_seed": dict(enumerate(seeds)), "within_N": None, "n": 9}


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


RULE9 = ("rule: Spearman ρ(Ĥ_N, H^beh_N) over cells × N × seeds; reproduced when the best null's pooled ρ ≥ 0.5 "
         "and ≥ 0.5 in every seed, not reproduced when every null's pooled ρ < 0.2; a null tracks better when its "
         "pooled ρ leads by ≥ 0.1 and leads in every seed; growth law: flat if the seed-mean H^beh rises ≤ 10% of "
         "its maximum, else the smaller RSS of a + b log N and A N^β ('indistinguishable' within a factor 1.25)")


def test_f9_rows_and_rule_whole():
    k, v, rows, rule = fb.f9({"A15": _a15_full()})
    assert (k, v) == (9, "inconclusive") and rule == RULE9
    tail = "; Ĥ_N at the largest N lag 3.0 ± 1.4 (2.0…4.0, 2 seeds), full 1.0 ± 0.0 (1.0…1.0, 1 seeds)"
    assert rows == [
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
    assert rows[2:] == ["which null: only one null (lag)"]       # no h_diag_points, no cells: nothing more



def test_spearman_reads_none_as_missing():
    assert fb.spearman([1, 2, 3, None], [1, 2, 3, 4]) == pytest.approx(1.0)
    assert fb.spearman([1, 2, 3, 4], [4, 3, 2, None]) == pytest.approx(-1.0)


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


def test_f9_growth_row_formats_nan_and_small_rss():
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

# ============================================================== b_s2/findings.py (finding 8)

from lwsim.figures.studies.b_anisotropy import findings as f8m  # noqa: E402


def test_f8_verdict_rule_boundaries():
    V = f8m._verdict
    assert V({"a": 0.4, "b": 0.1}, [(2, 1), (1, 1), (0, 1)]) == ("reproduced", 2, 2, 3)     # a tie is a win
    assert V({"a": 0.4, "b": 0.5}, [(2, 1)]) == ("inconclusive", 1, 1, 1)                  # 0.5 is not < 0.5
    assert V({"a": 0.4}, [(2, 1), (0, 1)]) == ("inconclusive", 1, 1, 2)                    # half is not most
    assert V({"a": 0.5}, [(2, 1), (0, 1)]) == ("not reproduced", 0, 1, 2)                  # half is ≤ half
    assert V({"a": 0.5}, [(2, 1), (2, 1), (0, 1)]) == ("inconclusive", 0, 2, 3)
    assert V({}, [(2, 1)]) == ("inconclusive", 0, 1, 1)                                    # no μ̃: not reproduced
    assert V({"a": 0.1}, []) == ("inconclusive", 1, 0, 0)                                  # no task
    assert V({}, []) == ("not reproduced", 0, 0, 0)


def test_last_mu_takes_the_last_key_and_its_last_value():
    d = {"mu_0": [1.0, 0.9], "author_mu_0": [0.1], "mu_5": [1.0, 0.25], "x": 3}
    assert f8m._last_mu(d, "mu_") == 0.25
    assert f8m._last_mu(d, "author_mu_") == 0.1
    assert f8m._last_mu({"x": 1}, "mu_") is None


def _b14():
    b1 = {"sharedgate": {"mu_0": [1, 0.5], "mu_5": [1, 0.25], "author_mu_5": [1, 0.25]},
          "gru": {"mu_0": [0.3], "author_mu_0": [0.2]}, "rnn": {"other": [1.0]}}
    b4 = {"t1": {"diaggate": {"median_last": [30.0, np.nan, 10.0], "median_last_author": [5.0]},
                 "rnn": {"median_last": [20.0, 40.0], "median_last_author": [4.0, 6.0]}},
          "t2": {"diaggate": {"median_last": [50.0]}, "rnn": {"median_last": [50.0]}},
          "t3": {"rnn": {"median_last": [1.0], "median_last_author": [1.0]}}}
    return b1, b4


def test_f8_conventions_rows_whole():
    b1, b4 = _b14()
    rows = f8m.f8_conventions({"B1": b1, "B4": b4})
    # lwsim: μ̃ 0.25, 0.3 (both < 0.5); t1 nanmedian 20 < 30, t2 50 ≥ 50: 1 of 2 → inconclusive
    # author: μ̃ 0.25, 0.2; t1 5 ≥ median(4, 6) = 5: 1 of 1 (t2 has no author AI) → reproduced
    assert rows == [
        "conventions 'lwsim': inconclusive — μ̃ at the largest lag sharedgate 0.25, gru 0.3; multi+SGD AI ≥ "
        "plain+Adam on 1/2 tasks; plain+Adam median AI at the largest lag: t1 40, t2 50",
        "conventions 'author': reproduced — μ̃ at the largest lag sharedgate 0.25, gru 0.2; multi+SGD AI ≥ "
        "plain+Adam on 1/1 tasks; plain+Adam median AI at the largest lag: t1 6",
        "the verdict CHANGES with the conventions (exact lwsim quantities vs [B]'s approximations)"]
    b4["t1"]["diaggate"]["median_last"] = [40.0]          # lwsim: 2 of 2 → reproduced too
    assert f8m.f8_conventions({"B1": b1, "B4": b4})[2] == (
        "the verdict does not change with the conventions (exact lwsim quantities vs [B]'s approximations)")


def test_f8_conventions_without_author_values_or_mu():
    b1, b4 = _b14()
    for t in b4.values():
        t.get("rnn", {}).pop("median_last_author", None)
    rows = f8m.f8_conventions({"B1": {"rnn": {}}, "B4": b4})
    # no μ̃ (0 below 0.5) and 1 win of 2 (not most): not reproduced
    assert rows == ["conventions 'lwsim': not reproduced — μ̃ at the largest lag not computed; multi+SGD AI ≥ "
                    "plain+Adam on 1/2 tasks; plain+Adam median AI at the largest lag: t1 40, t2 50"]
    assert f8m.f8_conventions({"B4": b4}) == [] and f8m.f8_conventions({"B1": b1, "B4": {}}) == []
    assert f8m.f8_conventions({"B1": b1, "B4": {"t": {"rnn": {"median_last": [1.0]}}}}) == []


def test_f8_rows_rule_and_findings():
    b1 = {"sharedgate": {"mu_0": [1, 0.9], "mu_5": [1, 0.123456]}, "gru": {"mu_0": [0.45]}}
    b4 = {"t1": {"diaggate": {"median_last": [3.0, 1.0, 2.0]}, "rnn": {"median_last": [1.0, np.nan]}},
          "t2": {"diaggate": {"median_last": [1.0]}, "rnn": {"median_last": [1.0]}},
          "t3": {"rnn": {"median_last": [9.0]}}}
    rule = ("rule: μ̃ < 0.5 at the largest lag for every gated model and multi-gate AI ≥ plain+Adam on most "
            "tasks")
    rows = ["B1 sharedgate: μ̃ at the largest lag (final checkpoint) = 0.123",
            "B1 gru: μ̃ at the largest lag (final checkpoint) = 0.45",
            "B4 t1: median AI multi+SGD 2 vs plain+Adam 1", "B4 t2: median AI multi+SGD 1 vs plain+Adam 1"]
    assert f8m.f8({"B1": b1, "B4": b4}) == [(8, "reproduced", rows, rule)]
    assert f8m.RULE == rule.removeprefix("rule: ")
    # one gated model at 0.5 (not < 0.5): inconclusive; none below and AI losing everywhere: not reproduced
    b1["gru"]["mu_0"] = [0.5]
    assert f8m.f8({"B1": b1, "B4": b4})[0][1] == "inconclusive"
    lose = {"t1": {"diaggate": {"median_last": [0.5]}, "rnn": {"median_last": [1.0]}}}
    assert f8m.f8({"B1": {"gru": {"mu_0": [0.5]}}, "B4": lose})[0][1] == "not reproduced"
    assert f8m.f8({"B1": {"gru": {"mu_0": [0.4]}}, "B4": lose})[0][1] == "inconclusive"
    assert f8m.f8({"B1": {"gru": {"mu_0": [0.4]}}, "B4": {"t3": b4["t3"]}})[0][1] == "inconclusive"   # no task
    assert f8m.f8({"B1": b1}) is None and f8m.f8({"B4": b4}) is None
    # findings(): {8: item} with the conventions rows appended; nothing without B1/B4
    b1, b4 = _b14()
    out = f8m.findings({"B1": {"gru": {"mu_0": [0.4], "author_mu_0": [0.4]}}, "B4": b4})
    assert list(out) == [8] and out[8][0] == 8 and out[8][3] == rule
    assert out[8][2][:3] == ["B1 gru: μ̃ at the largest lag (final checkpoint) = 0.4",
                             "B4 t1: median AI multi+SGD 20 vs plain+Adam 30",
                             "B4 t2: median AI multi+SGD 50 vs plain+Adam 50"]
    assert out[8][2][3].startswith("conventions 'lwsim': inconclusive") and len(out[8][2]) == 6
    assert f8m.findings({}) == {}
    assert f8m.extend_f8({"B1": b1, "B4": b4}, {1: (1, "x", [], "r")}) == {1: (1, "x", [], "r")}
    assert f8m.TITLES == {8: "[B] Gates make the effective learning rate lag-dependent; multi-gate anisotropy ≥ "
                             "plain RNN + Adam"}



def test_f8_reads_a_missing_mu_as_nan():
    """A μ̃ stored as None or as to_jsonable's "nan" string reads as NaN: never < 0.5, printed "nan"."""
    assert np.isnan(f8m._last_mu({"mu_0": [1.0, None]}, "mu_"))
    b4 = {"t": {"diaggate": {"median_last": [3.0, np.nan], "median_last_author": [1.0]},
                "rnn": {"median_last": [1.0, 2.0, np.nan], "median_last_author": [1.0, np.nan]}}}
    for missing in (None, "nan"):
        b1 = {"gru": {"mu_0": [1.0, missing], "author_mu_0": [0.1]}}
        item = f8m.f8({"B1": b1, "B4": b4})[0]
        assert item[1] == "inconclusive"              # μ̃ NaN: not lag-dependent; AI 3 ≥ 1.5: one win of one
        assert item[2] == ["B1 gru: μ̃ at the largest lag (final checkpoint) = nan",
                           "B4 t: median AI multi+SGD 3 vs plain+Adam 1.5"]
    b1 = {"gru": {"mu_0": [1.0, None], "author_mu_0": [0.1]}}
    rows = f8m.f8_conventions({"B1": b1, "B4": b4})
    assert rows[0] == ("conventions 'lwsim': inconclusive — μ̃ at the largest lag gru nan; multi+SGD AI ≥ "
                       "plain+Adam on 1/1 tasks; plain+Adam median AI at the largest lag: t nan")
    assert rows[1].startswith("conventions 'author': reproduced — μ̃ at the largest lag gru 0.1;")

# ============================================================== conventions/findings.py (A13)

from lwsim.figures.studies.conventions.findings import RULE_TEXT, conventions_lines  # noqa: E402

KEYS = ["slow_cells_decay_slower", "fast_cells_saturate", "slow_cells_keep_growing", "heavier_tails_in_slow_cells"]


def _a13(lw_rules, au_rules, cells=None):
    cells = cells or {"lwsim": {}, "author": {}}
    return {"A13": {"summary": {"lwsim": {"rules": lw_rules, "cells": cells["lwsim"]},
                                "author": {"rules": au_rules, "cells": cells["author"]}}}}


def test_conventions_lines_whole():
    lw = dict(zip(KEYS, [True, False, True, False]))
    au = dict(zip(KEYS, [True, True, True, False]))
    cells = {"lwsim": {"gru": {"lambda": 0.123456, "h_growth": 2.04, "alpha_mean": 1.6},
                       "lstm": {"lambda": None, "h_growth": -0.5, "alpha_mean": 1.23456}},
             "author": {"gru": {"lambda": None, "h_growth": 0.0, "alpha_mean": 1.5},
                        "lstm": {"lambda": 0.05, "h_growth": 3.0, "alpha_mean": 1.9}}}
    assert conventions_lines(_a13(lw, au, cells)) == [
        "## Conventions: lwsim vs the author's code (A13, docs/fidelity.md)", "",
        '**verdicts change** with conventions="author" (1 of 4 rules differ), same weights and sequences.', "",
        "- findings 1–2: every slow cell (DiagGate/GRU/LSTM) has a smaller exponential rate λ than every fast "
        "cell: lwsim yes, author yes",
        "- finding 1: Ĥ_N of ConstGate/SharedGate stops growing over the upper half of the N grid: lwsim no, "
        "author yes — **changes**",
        "- finding 2: Ĥ_N of the slow cells still grows over the upper half of the N grid: lwsim yes, author yes",
        "- finding 4: mean α̂ of the fast cells > mean α̂ of the slow cells: lwsim no, author no",
        "- gru: λ 0.1235 → n/a, Ĥ_N growth +2.0 → +0.0, mean α̂ 1.600 → 1.500",
        "- lstm: λ n/a → 0.0500, Ĥ_N growth -0.5 → +3.0, mean α̂ 1.235 → 1.900",
        ""]
    assert list(RULE_TEXT) == KEYS
    same = conventions_lines(_a13(lw, dict(lw)))
    assert same[2] == ('**no verdict changes** with conventions="author" (0 of 4 rules differ), same weights '
                       'and sequences.')
    assert not any("**changes**" in ln for ln in same) and same[-1] == "" and len(same) == 9


def test_conventions_lines_without_rules_or_a13():
    head = ["## Conventions: lwsim vs the author's code (A13, docs/fidelity.md)", ""]
    msg = ["Not enough cells with a decay fit in A13 to apply the rules.", ""]
    assert conventions_lines(_a13({}, dict(zip(KEYS, [True] * 4)))) == head + msg
    assert conventions_lines(_a13(dict(zip(KEYS, [True] * 4)), {})) == head + msg
    assert conventions_lines({"A1": {}}) == []


# ============================================================== main/nulls.py (findings 1–5 per null)

from lwsim.figures.studies.main import nulls as nl  # noqa: E402
from lwsim.figures.studies.main.findings import TITLES  # noqa: E402


def _run(cell, seed, **h):
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
        _run("lstm", 0, lag=[0, 0, 0.5], full=[2, 2, 2], author=[1, 1, 1], snr=[0, 1, 2]),
        _run("gru", 0, lag=[1, 2, 4], full=[0, 0, 0], author=[1, 2, nan], snr=[5, 5, 5]),
        _run("gru", 1, lag=[1, 3, 3], full=[0, 0, 1], author=[1, 2, 2], snr=[5, 5, 6]),
    ]}


def test_variants_order_and_intersection():
    R = _results()
    assert nl.variants(R) == ["lag", "full", "author", "snr"]
    del R["a_main"][1][1]["h_n_author"]                       # one run without "author": not a variant
    assert nl.variants(R) == ["lag", "full", "snr"]
    R["a_main"][0][1]["h_n_f32"] = 1                          # in one run only
    assert nl.variants(R) == ["lag", "full", "snr"]
    assert nl.variants({}) == [] and nl.variants({"a_main": []}) == [] and nl.variants({"a_main": None}) == []
    assert nl.ABLATIONS == ("snr", "ecf", "floors", "f32")


def test_null_view_message_names_the_run_and_the_missing_keys():
    R = {"a_main": [({"cell": "gru", "seed": 3}, {"h_n": 1, "h_n_full": 2})]}
    with pytest.raises(KeyError) as e:
        nl.null_view(R, "full")
    assert e.value.args[0] == ("run gru/3 has no 'full' keys ['mean', 'alpha_hat', 'sigma_hat', 'kappa_hat', "
                               "'n_hat', 'n_star', 'reliable', 'master']")


def test_tables_and_mean():
    R = _results()
    assert nl.h_last_table(R)["lag"] == {"gru": [4.0, 3.0], "lstm": [0.5]}           # A_CELLS order
    assert list(nl.h_last_table(R)["lag"]) == ["gru", "lstm"]
    assert nl.growth_table(R)["snr"] == {"gru": [0.0, 1.0], "lstm": [1.0]}             # last − middle
    assert nl._mean([1.0, None, float("nan"), 3.0]) == 2.0
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no "mean of empty slice" warning: NaN directly
        assert np.isnan(nl._mean([None, float("inf")])) and np.isnan(nl._mean([]))


class _Fig:
    def __init__(self, title):
        self.axes = [_Ax(title), _Ax("second")]


class _Ax:
    def __init__(self, title):
        self.title = title

    def get_title(self):
        return self.title

    def set_title(self, t):
        self.title = t


def test_findings_by_variant_rebuilds_only_the_null_figures(monkeypatch):
    R = _results()
    built, saved, closed, saved_data = [], [], [], []

    def builder(fid):
        def build(view):
            built.append((fid, view["a_main"][1][1]["h_n"][-1]))          # gru seed 0's last Ĥ_N in this view
            fig = _Fig(f"title {fid}")
            return fig, {"fid": fid, "h": float(view["a_main"][1][1]["h_n"][-1]), "fig": fig}
        return build
    figures = {fid: builder(fid) for fid in ("A1", "A4", "A5", "A6", "A7", "A14", "A2")}
    monkeypatch.setattr(nl, "save_figure", lambda fig, data, name, out, figure_id=None:
                        saved.append((name, out, figure_id, fig.axes[0].get_title(), fig.axes[1].get_title()))
                        or saved_data.append((data["fid"], data["fig"] is fig)))
    monkeypatch.setattr(nl.plt, "close", lambda fig: closed.append(fig.axes[0].get_title()))

    def fake_findings(data):
        v = f"{data['A1']['h']:g}/{data['A2']}/{data.get('A4', {}).get('fid')}"
        return {k: (k, v, [], "r") for k in (1, 5, 6, 9)}
    monkeypatch.setattr(nl, "findings", fake_findings)
    rendered = {"A1": {"h": -1}, "A2": "common", "A14": {}, "A8": "x"}
    out = nl.findings_by_variant(R, rendered, figures, out="OUT")
    # A1 and A14 rendered (A4…A7 not, A2 not a null figure): rebuilt per variant from its view
    assert [b[0] for b in built] == ["A1", "A14"] * 4
    np.testing.assert_array_equal([b[1] for b in built], [4, 4, 0, 0, np.nan, np.nan, 5, 5])
    assert list(out) == ["lag", "full", "author", "snr"]
    assert out["lag"] == {1: (1, "4/common/None", [], "r"), 5: (5, "4/common/None", [], "r")}
    assert out["full"][1] == (1, "0/common/None", [], "r") and list(out["full"]) == [1, 5]
    assert out["snr"][5] == (5, "5/common/None", [], "r") and out["author"][1][1] == "nan/common/None"
    # the nulls other than "lag" are saved with the null in the first axis' title; lag and snr closed
    assert saved == [("A1_full", "OUT", "A1", "title A1 [full null]", "second"),
                     ("A14_full", "OUT", "A14", "title A14 [full null]", "second"),
                     ("A1_author", "OUT", "A1", "title A1 [author null]", "second"),
                     ("A14_author", "OUT", "A14", "title A14 [author null]", "second")]
    assert closed == ["title A1", "title A14", "title A1", "title A14"]
    assert saved_data == [("A1", True), ("A14", True)] * 2             # each figure with its own data
    assert rendered == {"A1": {"h": -1}, "A2": "common", "A14": {}, "A8": "x"}       # not modified
    saved.clear(), closed.clear()
    nl.findings_by_variant(R, rendered, figures)                                      # out None: nothing saved
    assert saved == [] and len(closed) == 8


def _null_builders(built):
    def builder(fid):
        def build(view):
            built.append(fid)
            return _Fig(f"title {fid}"), {"fid": fid, "h": float(view["a_main"][1][1]["h_n"][-1])}
        return build
    return {fid: builder(fid) for fid in ("A1", "A4", "A5", "A6", "A7", "A14", "A2")}


def test_null_drawings_are_the_jobs_findings_by_variant_would_run(monkeypatch):
    R = dict(_results(), b_s1=["not a null figure's group"])
    built, saved, closed = [], [], []
    figures = _null_builders(built)
    monkeypatch.setattr(nl, "save_figure", lambda fig, data, name, out, figure_id=None:
                        saved.append((name, out, figure_id, fig.axes[0].get_title())))
    monkeypatch.setattr(nl.plt, "close", lambda fig: closed.append(fig.axes[0].get_title()))
    jobs = nl.null_drawings(R, ["A14", "A2", "A1", "B1"], figures, out="OUT")
    # every variant × every rendered null figure (A2 is shared, B1 not [A]'s), in variant then NULL_FIGS order
    assert list(jobs) == ["A1_lag", "A14_lag", "A1_full", "A14_full", "A1_author", "A14_author", "A1_snr", "A14_snr"]
    fn, args = jobs["A14_full"]
    assert fn is nl.draw_null_figure and args[:3] == ("full", "A14", figures["A14"]) and args[4] == "OUT"
    assert list(args[3]) == ["a_main"] and args[3]["a_main"] is R["a_main"]     # only the [A] main runs travel
    drawn = {k: f(*a) for k, (f, a) in jobs.items()}
    assert drawn["A1_lag"] == {"fid": "A1", "h": 4.0} and drawn["A1_full"] == {"fid": "A1", "h": 0.0}
    assert drawn["A14_snr"] == {"fid": "A14", "h": 5.0} and np.isnan(drawn["A1_author"]["h"])
    assert saved == [("A1_full", "OUT", "A1", "title A1 [full null]"), ("A14_full", "OUT", "A14", "title A14 [full null]"),
                     ("A1_author", "OUT", "A1", "title A1 [author null]"),
                     ("A14_author", "OUT", "A14", "title A14 [author null]")]
    assert closed == ["title A1", "title A14"] * 2                              # lag and snr: not written
    assert nl.null_drawings({}, ["A1"], figures) == {} and nl.null_drawings(R, ["A2", "A8"], figures) == {}
    # findings_by_variant with the drawn values builds nothing and gives the same rows as rebuilding
    monkeypatch.setattr(nl, "findings", lambda data: {k: (k, f"{data['A1']['h']:g}/{data['A14']['h']:g}", [], "r")
                                                      for k in (1, 5)})
    rendered = {"A1": {}, "A14": {}, "A2": "common"}
    built.clear(), saved.clear()
    with_drawn = nl.findings_by_variant(R, rendered, figures, out="OUT", drawn=drawn)
    assert built == [] and saved == []
    assert with_drawn == nl.findings_by_variant(R, rendered, figures)
    assert with_drawn["lag"][1] == (1, "4/4", [], "r") and with_drawn["snr"][5] == (5, "5/5", [], "r")
    built.clear()
    partial = nl.findings_by_variant(R, rendered, figures, drawn={"A1_full": {"h": 7.0}})   # the rest rebuilt
    assert partial["full"][1][1] == "7/0" and built.count("A1") == 3 and built.count("A14") == 4



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


# ============================================================== fidelity.py (finding 6), b_expansion.py (7)

from lwsim.figures.studies import b_expansion as bx  # noqa: E402
from lwsim.figures.studies import fidelity as fid  # noqa: E402

READ = ("how to read it: the verdict is on the ranking of the lags (Spearman ρ), not on the decay rate. The "
        "log–log slope of the first-order envelope over the exact one's is {} (1 = same rate): {} "
        "(docs/diagnostics.md §2.10)")
FASTER = ("the first-order envelope falls faster than the exact one, so it tracks which lags carry more signal but "
          "overstates how fast the signal decays")
SLOWER = ("the first-order envelope falls more slowly than the exact one, so it tracks which lags carry more signal "
          "but understates how fast the signal decays")
SAME = "the two decay at about the same rate"
MIXED = "the rates agree in some runs and not in others, so only the ranking is tracked throughout"


def _t6(rows):
    return {"A11": {"table": [{"cell": c, "optimizer": o, "seed": s, "spearman": r, "slope_ratio": q,
                               "offdiag_mean": e} for c, o, s, r, q, e in rows]}}


def test_f6_whole():
    r = _t6([("gru", "adamw", 1, 0.95, 1.234, 0.1), ("lstm", "sgd", 2, np.nan, np.nan, 0.25),
             ("gru", "sgd", 3, 0.93, 1.5, 0.3456)])
    rule = "rule: median Spearman ρ ≥ 0.9 across cells × optimizers × seeds"
    assert fid.f6(r) == [(6, "reproduced", [
        "gru/adamw/seed 1: Spearman ρ 0.950, slope ratio 1.234, off-diagonal energy 0.100",
        "lstm/sgd/seed 2: Spearman ρ nan, slope ratio nan, off-diagonal energy 0.250",
        "gru/sgd/seed 3: Spearman ρ 0.930, slope ratio 1.500, off-diagonal energy 0.346",
        "median Spearman ρ = 0.940",                                         # NaN left out of the median
        READ.format("1.2–1.5", FASTER)], rule)]
    assert fid.findings(r) == {6: fid.f6(r)[0]}
    assert fid.findings({}) == {} and fid.f6({"A11": None}) is None
    assert fid.TITLES == {6: "The first-order envelope tracks the exact one"}


@pytest.mark.parametrize("ratios, text", [
    ((1.1, 1.1), READ.format("1.1–1.1", SAME)),          # lo = 1.1 is not > 1.1; hi ≤ 1.1
    ((1.11, 1.2), READ.format("1.1–1.2", FASTER)),
    ((0.9, 1.0), READ.format("0.9–1", SAME)),             # hi ≥ 0.9 and lo = 0.9: same rate
    ((0.5, 0.89), READ.format("0.5–0.89", SLOWER)),
    ((0.5, 0.9), READ.format("0.5–0.9", MIXED)),          # hi = 0.9 is not < 0.9
    ((0.89, 1.05), READ.format("0.89–1.1", MIXED)),
    ((0.95, 1.11), READ.format("0.95–1.1", MIXED)),
])
def test_f6_reading_boundaries(ratios, text):
    rows = fid.f6(_t6([("gru", "sgd", i, 0.95, q, 0.1) for i, q in enumerate(ratios)]))[0][2]
    assert rows[-1] == text


def test_f6_without_finite_ratios_has_no_reading():
    rows = fid.f6(_t6([("gru", "sgd", 1, 0.4, np.nan, 0.1), ("gru", "sgd", 2, 0.45, np.inf, 0.1)]))[0]
    assert rows[1] == "not reproduced" and rows[2][-1] == "median Spearman ρ = 0.425" and len(rows[2]) == 3


def test_f7_whole():
    r = {"B7": {"diaggate": [{"slope": 2.0}, {"slope": 2.0916}], "gru": [{"slope": 1.90049}]}}
    rule = "rule: every log–log slope over the five smallest ε within 2 ± 0.1"
    assert bx.f7(r) == [(7, "reproduced", ["diaggate: slopes [2.0, 2.092]", "gru: slopes [1.9]"], rule)]
    assert bx.findings(r) == {7: bx.f7(r)[0]}
    r["B7"]["gru"].append({"slope": 1.8})
    assert bx.f7(r)[0][1] == "not reproduced" and bx.f7(r)[0][2][1] == "gru: slopes [1.9, 1.8]"
    assert bx.f7({}) is None and bx.findings({"B7": {}}) == {}
    assert bx.f7({"B7": {"gru": [{"slope": 2.2}]}})[0][1] == "not reproduced"
