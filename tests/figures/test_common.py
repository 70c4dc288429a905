"""Tests of lwsim/figures/common.py (laid out like the code: docs/testing.md).

Mutation-testing survivors of lwsim/figures/common.py (issue 32; docs/testing.md), killed with
hand-computed numbers: the log–log fit, the saturation rule, the seed-spread text, runs by cell.

The FINDINGS rules (lwsim.figures.findings, docs/experiments.md §5.5) on hand-built figure data.

Every rule gets cases whose verdict is known — reproduced, not reproduced, inconclusive — placed so
that a flipped comparison, a non-strict bound made strict (or the reverse), a mean for a median or
a seed-mean verdict that ignores one dissenting seed changes the outcome.

Aggregates on data where the alternatives disagree (docs/statistics.md §3.5, docs/experiments.md
§5.4–5.5, docs/fidelity.md): mean ≠ median ≠ lower median, even counts, ties at a threshold, a
majority of exactly half, values on a fence. Every expectation is computed by hand in a comment.

Covered: A14 per-seed κ̂ summary and the seed spread of fig_a14; the author's seed-averaged master
window; finding 8's rule (findings.f8 and findings_b.f8_conventions); spread_text; the A13 summary
(seed means of λ, Ĥ_N growth, mean α̂ and its rules); [B] B1 seed means, B4/B5 medians and IQR over
seeds, B6 quartiles and error bars, B7's robust seed filter."""


import math

import numpy as np

from lwsim.figures import common


# ----------------------------------------------------------------------------------------------
# by_cell
# ----------------------------------------------------------------------------------------------


def test_by_cell_filters_optimizer_default_adamw_and_orders_by_a_cells():
    runs = [({"cell": "lstm"}, "r1"), ({"cell": "gru", "optimizer": "sgd"}, "r2"),
            ({"cell": "gru", "optimizer": "adamw"}, "r3"), ({"cell": "lstm", "optimizer": "adamw"}, "r4")]
    out = common.by_cell(runs)
    assert out == {"gru": ["r3"], "lstm": ["r1", "r4"]} and list(out) == ["gru", "lstm"]
    assert common.by_cell(runs, "sgd") == {"gru": ["r2"]}


# ----------------------------------------------------------------------------------------------
# stack
# ----------------------------------------------------------------------------------------------


def test_stack_casts_to_float_rows():
    s = common.stack([{"h": [1, 2]}, {"h": [3, 4]}], "h")
    assert s.dtype == np.float64 and s.tolist() == [[1.0, 2.0], [3.0, 4.0]]


# ----------------------------------------------------------------------------------------------
# _finite_logfit
# ----------------------------------------------------------------------------------------------


def test_finite_logfit_four_points_hand_computed():
    # private: its public callers (A5/A6/A14 figures) draw a figure from a_main runs; seed_factors gives only the slope
    # x̄ = ȳ = 1.5, Sxy = 4, Sxx = 5, Syy = 5: slope 0.8, intercept 0.3, R² = 16/25.
    f = common._finite_logfit(np.array([0.0, 1.0, 2.0, 3.0, np.nan]), np.array([0.0, 2.0, 1.0, 3.0, 7.0]))
    assert math.isclose(f["slope"], 0.8) and math.isclose(f["intercept"], 0.3)
    assert math.isclose(f["r2"], 0.64) and f["n"] == 4
    assert set(f) == {"slope", "intercept", "r2", "n"}


def test_finite_logfit_small_spread_keeps_r2():
    # private: its public callers (A5/A6/A14 figures) draw a figure from a_main runs; seed_factors gives only the slope
    # y scaled by 0.1: total sum of squares 0.05 (< 1), R² unchanged at 0.64, slope 0.08, intercept 0.03.
    f = common._finite_logfit(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 0.2, 0.1, 0.3]))
    assert math.isclose(f["r2"], 0.64) and math.isclose(f["slope"], 0.08) and math.isclose(f["intercept"], 0.03)


def test_finite_logfit_three_points_unit_range_is_fitted():
    # private: its public callers (A5/A6/A14 figures) draw a figure from a_main runs; seed_factors gives only the slope
    # Three finite points are enough; x spans exactly 1. x̄ = 0.5, ȳ = 2/3, Sxy = 0.75, Sxx = 0.5.
    f = common._finite_logfit(np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.5, 1.5]))
    assert f["n"] == 3 and math.isclose(f["slope"], 1.5) and math.isclose(f["intercept"], -1 / 12)


def test_finite_logfit_refuses_two_points_or_constant_x():
    # private: its public callers (A5/A6/A14 figures) draw a figure from a_main runs; seed_factors gives only the slope
    assert common._finite_logfit(np.array([0.0, 1.0, np.nan]), np.array([1.0, 2.0, 3.0])) == \
        {"slope": None, "intercept": None, "r2": None, "n": 2}
    assert common._finite_logfit(np.array([2.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0]))["slope"] is None


def test_finite_logfit_constant_y_has_no_r2():
    # private: its public callers (A5/A6/A14 figures) draw a figure from a_main runs; seed_factors gives only the slope
    f = common._finite_logfit(np.array([0.0, 1.0, 2.0]), np.array([2.0, 2.0, 2.0]))
    assert f["r2"] is None and abs(f["slope"]) < 1e-12 and math.isclose(f["intercept"], 2.0)


def test_growth_is_last_minus_middle():
    assert common._growth([0.0, 0.5, 0.65]) == 0.65 - 0.5       # private: finding 1's parts read it via growth_share


# ----------------------------------------------------------------------------------------------
# spread_text
# ----------------------------------------------------------------------------------------------


def test_spread_text_two_seeds_has_sample_sd():
    # mean 2, sd (ddof 1) = √2 = 1.41.
    assert common.spread_text([1.0, 3.0]) == "2 ± 1.41 (1…3, 2 seeds)"
    assert common.spread_text([5.0]) == "5 ± 0 (5…5, 1 seeds)"
    assert common.spread_text([None, np.nan]) == "n/a"


def test_spread_text_default_format_is_lowercase_g():
    # mean 2e-05, sd √2·1e-05: the default '.3g' writes a lower-case exponent.
    assert common.spread_text([1e-5, 3e-5]) == "2e-05 ± 1.41e-05 (1e-05…3e-05, 2 seeds)"


def test_spread_text():
    assert common.spread_text([1.0, 2.0, 3.0], ".2f") == "2.00 ± 1.00 (1.00…3.00, 3 seeds)"
    assert common.spread_text([None, 4.0]) == "4 ± 0 (4…4, 1 seeds)"
    assert common.spread_text([]) == "n/a"


def test_spread_text_mean_not_median():
    # 1, 2, 6: mean 3 (median 2), sd ddof 1 = √7 = 2.65 (ddof 0: 2.16); NaN and None left out
    assert common.spread_text([1.0, None, 2.0, np.nan, 6.0], ".2f") == "3.00 ± 2.65 (1.00…6.00, 3 seeds)"


# ----------------------------------------------------------------------------------------------
# _fmt
# ----------------------------------------------------------------------------------------------


def test_fmt_none_and_number():
    # private: its public caller is the main study's finding text, which needs the whole A-figure set
    assert common._fmt(None) == "n/a"
    assert common._fmt(1.234) == "1.23"
    assert common._fmt(0.5, ".1f") == "0.5"


def test_fmt_default_format_writes_nan_lowercase():
    # private: its public caller is the main study's finding text, which needs the whole A-figure set
    assert common._fmt(float("nan")) == "nan" and common._fmt(float("inf")) == "inf"
