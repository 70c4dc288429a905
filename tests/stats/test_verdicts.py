"""lwsim.stats.verdicts: the verdict scheme of docs/experiments.md §5.5.1, on hand tables
(interval inside, outside, straddling each region; the three-valued AND; the permutation p)."""
import math

import numpy as np
import pytest

from lwsim.stats import verdicts as V
from lwsim.stats.verdicts import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, WITHHELD, Interval

T975_2 = 4.302652729749462   # t_{0.975, 2} (scipy; printed tables: 4.303)
T975_9 = 2.262157162798205   # t_{0.975, 9} (tables: 2.262)


# --- seed_interval ---------------------------------------------------------------------------------

def test_seed_interval_t_by_hand():
    iv = V.seed_interval([1.0, 2.0, 3.0])          # mean 2, s = 1
    half = T975_2 / math.sqrt(3)
    assert iv.mean == 2.0 and iv.n == 3 and iv.dropped == 0
    assert iv.lo == pytest.approx(2 - half, rel=1e-12) and iv.hi == pytest.approx(2 + half, rel=1e-12)
    assert iv.text(".2f") == "2.00 [-0.48, 4.48] (3 seeds)"


def test_seed_interval_uses_the_mean_and_sample_sd_not_the_median():
    x = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10.0]     # mean 1, median 0
    iv = V.seed_interval(x)
    s = np.std(x, ddof=1)
    assert iv.mean == 1.0
    assert iv.hi - iv.mean == pytest.approx(T975_9 * s / math.sqrt(10), rel=1e-12)


def test_seed_interval_drops_undefined_seeds_and_needs_two():
    iv = V.seed_interval([None, math.nan, 2.0, 4.0, math.inf])
    assert (iv.n, iv.dropped, iv.mean) == (2, 3, 3.0)
    one = V.seed_interval([5.0, None])
    assert one.n == 1 and not one.defined and math.isnan(one.lo)
    assert one.text() == "5 (1 seed, 1 undefined: no interval)"
    assert V.seed_interval([]).text() == "n/a"
    assert V.seed_interval([None]).text() == "n/a (1 seeds undefined)"
    assert V.decide(one, above=0.0) == INCONCLUSIVE


def test_seed_interval_level():
    assert V.seed_interval([1.0, 2.0, 3.0], level=0.5).hi == pytest.approx(2 + 0.8164965809 / math.sqrt(3), rel=1e-8)
    with pytest.raises(ValueError, match=r"\blevel\b"):
        V.seed_interval([1.0, 2.0], level=1.0)


# --- decide ----------------------------------------------------------------------------------------

def iv(lo, hi):
    return Interval((lo + hi) / 2, lo, hi, 3)


@pytest.mark.parametrize("lo, hi, want", [
    (0.5, 0.9, REPRODUCED),       # inside the claim's side
    (0.1, 0.25, NOT_REPRODUCED),  # wholly below
    (0.2, 0.4, INCONCLUSIVE),     # straddles
    (0.3, 0.4, INCONCLUSIVE),     # touches m: m is in the interval
    (0.1, 0.3, INCONCLUSIVE),
])
def test_decide_above(lo, hi, want):
    assert V.decide(iv(lo, hi), above=0.3) == want


@pytest.mark.parametrize("lo, hi, want", [
    (0.0, 0.08, REPRODUCED), (0.05, 0.10, REPRODUCED),    # ≤ m, closed
    (0.11, 0.3, NOT_REPRODUCED), (0.05, 0.2, INCONCLUSIVE), (0.10, 0.2, INCONCLUSIVE),
])
def test_decide_at_most(lo, hi, want):
    assert V.decide(iv(lo, hi), at_most=0.10) == want


@pytest.mark.parametrize("lo, hi, want", [
    (0.85, 1.1, REPRODUCED), (0.8, 1.2, REPRODUCED),       # closed box
    (1.25, 1.4, NOT_REPRODUCED), (0.2, 0.79, NOT_REPRODUCED),
    (0.7, 0.9, INCONCLUSIVE), (1.1, 1.3, INCONCLUSIVE), (0.5, 1.5, INCONCLUSIVE),
])
def test_decide_within(lo, hi, want):
    assert V.decide(iv(lo, hi), within=(1.0, 0.2)) == want


def test_decide_needs_one_region():
    with pytest.raises(ValueError, match="exactly one region"):
        V.decide(iv(0, 1))
    with pytest.raises(ValueError, match="exactly one region"):
        V.decide(iv(0, 1), above=0, at_most=1)
    with pytest.raises(ValueError, match=r"\bmargin\b"):
        V.decide(iv(0, 1), within=(0, -1))


def test_a_planted_effect_is_found_and_a_planted_null_is_not():
    rng = np.random.default_rng(3)
    effect = V.seed_interval(0.6 + 0.05 * rng.standard_normal(10))
    null = V.seed_interval(0.05 * rng.standard_normal(10))
    assert V.decide(effect, above=0.3) == REPRODUCED
    assert V.decide(null, above=0.3) == NOT_REPRODUCED
    assert V.decide(null, within=(0.0, 0.1)) == REPRODUCED


def test_more_seeds_do_not_make_a_true_effect_less_likely_reproduced():
    # the "every seed" rule fails as soon as one noisy seed falls below the margin; the interval
    # rule only gets sharper with more seeds
    rng = np.random.default_rng(3)
    x = 0.5 + 0.15 * rng.standard_normal(40)
    assert min(x) < 0.3                                   # every-seed would say no
    assert V.decide(V.seed_interval(x[:3]), above=0.3) == INCONCLUSIVE
    assert V.decide(V.seed_interval(x), above=0.3) == REPRODUCED
    assert V.seeds_on_side(x[:10], above=0.3) == f"{sum(x[:10] > 0.3)} of 10 seeds"


# --- combining ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("parts, want", [
    ([REPRODUCED, REPRODUCED], REPRODUCED),
    ([REPRODUCED, INCONCLUSIVE], INCONCLUSIVE),
    ([REPRODUCED, NOT_REPRODUCED], NOT_REPRODUCED),
    ([INCONCLUSIVE, NOT_REPRODUCED], NOT_REPRODUCED),
    ([NOT_REPRODUCED, WITHHELD], WITHHELD),
    ([], INCONCLUSIVE),
])
def test_all_of(parts, want):
    assert V.all_of(parts) == want


def test_all_of_refuses_unknown_words():
    with pytest.raises(ValueError, match=r"\bverdicts\b"):
        V.all_of(["yes"])


@pytest.mark.parametrize("parts, want", [
    ([REPRODUCED, REPRODUCED, NOT_REPRODUCED], REPRODUCED),
    ([REPRODUCED, NOT_REPRODUCED], INCONCLUSIVE),          # exactly half is not most
    ([NOT_REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE], NOT_REPRODUCED),
    ([REPRODUCED, INCONCLUSIVE, INCONCLUSIVE, REPRODUCED], INCONCLUSIVE),
])
def test_most_of(parts, want):
    assert V.most_of(parts) == want


def test_seeds_on_side_counts_each_region():
    x = [0.05, 0.1, 0.2, None]
    assert V.seeds_on_side(x, at_most=0.1) == "2 of 3 seeds"
    assert V.seeds_on_side(x, above=0.1) == "1 of 3 seeds"
    assert V.seeds_on_side(x, within=(0.15, 0.06)) == "2 of 3 seeds"
    with pytest.raises(ValueError, match="exactly one region"):
        V.seeds_on_side(x)


def test_ceiling_gate():
    assert V.ceiling_gate({"a": [0.6, 0.5], "b": [0.5]}) is None         # 55%, 50%: at the threshold passes
    why = V.ceiling_gate({"a": [0.6, 0.7], "b": [0.1, 0.08]})
    assert why == "networks at 9% of the ceiling (b; the rule needs 50% in every cell)"
    assert V.ceiling_gate({"a": [0.9], "b": [None]}) == "no R² for b's networks"
    assert V.ceiling_gate({"a": [0.4]}, threshold=0.3) is None


# --- spearman_p ----------------------------------------------------------------------------------------

def test_spearman_exact_p_by_enumeration():
    rho, p = V.spearman_p([1, 2, 3, 4], [10, 20, 30, 40])
    assert rho == pytest.approx(1.0) and p == pytest.approx(2 / 24)       # ρ = ±1: 2 of 24 orderings
    rho, p = V.spearman_p([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])
    assert rho == pytest.approx(-1.0) and p == pytest.approx(2 / 120)
    # ρ = 0.8 with n = 4: orderings with |ρ| ≥ 0.8 are 4 of 24 (the two ±1 and the two one-swap-at-an-end)
    rho, p = V.spearman_p([1, 2, 3, 4], [1, 2, 4, 3])
    assert rho == pytest.approx(0.8) and p == pytest.approx(8 / 24)


def test_spearman_p_within_groups():
    x = np.r_[np.arange(6), np.arange(6)]
    y = np.r_[np.arange(6) + 100, -np.arange(6)]     # rising in group 0, falling in group 1
    rho, p = V.spearman_p(x, y, groups=[0] * 6 + [1] * 6, n_perm=999)
    assert rho == pytest.approx(0.0)                 # ranked within groups: +1 and −1 cancel
    assert p == pytest.approx(1.0)
    y2 = np.r_[np.arange(6) + 100, np.arange(6)]
    rho, p = V.spearman_p(x, y2, groups=[0] * 6 + [1] * 6, n_perm=999)
    assert rho == pytest.approx(1.0) and p == pytest.approx(1 / 1000)


def test_spearman_p_bad_input():
    with pytest.raises(ValueError, match=r"\bx and y\b"):
        V.spearman_p([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"\bgroups\b"):
        V.spearman_p([1, 2], [1, 2], groups=[0])
    rho, p = V.spearman_p([1, 1, 1], [1, 2, 3])
    assert math.isnan(rho) and math.isnan(p)


# --- edges found by mutation testing ---------------------------------------------------------------

def test_undefined_intervals_are_nan_and_level_zero_is_refused():
    for iv in (V.seed_interval([]), V.seed_interval([None])):
        assert math.isnan(iv.mean) and math.isnan(iv.lo) and math.isnan(iv.hi)
    one = V.seed_interval([3.0])
    assert one.mean == 3.0 and math.isnan(one.lo) and math.isnan(one.hi)
    with pytest.raises(ValueError, match=r"\blevel\b"):
        V.seed_interval([1.0, 2.0], level=0.0)
    assert Interval(1e-5, 0.5e-5, 2e-5, 3).text() == "1e-05 [5e-06, 2e-05] (3 seeds)"     # lower-case exponent


def test_decide_equivalence_edges():
    assert V.decide(iv(1.0, 1.0), within=(1.0, 0.0)) == REPRODUCED           # a zero margin is allowed
    assert V.decide(iv(0.5, 0.8), within=(1.0, 0.2)) == INCONCLUSIVE         # hi touches c − m
    assert V.decide(iv(1.2, 1.5), within=(1.0, 0.2)) == INCONCLUSIVE         # lo touches c + m


def test_seeds_on_side_within_centre_and_closed_edge():
    assert V.seeds_on_side([1.0, 1.05], within=(1.0, 0.1)) == "2 of 2 seeds"
    assert V.seeds_on_side([0.5, -0.5], within=(0.0, 0.5)) == "2 of 2 seeds"


def test_ceiling_gate_names_the_first_of_equally_low_cells():
    assert V.ceiling_gate({"a": [0.1], "b": [0.1]}).endswith("(a; the rule needs 50% in every cell)")


def test_spearman_p_small_n_and_exact_boundary():
    assert V.spearman_p([1, 2], [1, 2]) == (pytest.approx(1.0), pytest.approx(1.0))      # n = 2: ρ 1, p 2/2
    x = np.arange(8.0)
    assert V.spearman_p(x, x)[1] == pytest.approx(2 / 40320)                  # n = 8: exact
    x9 = np.arange(9.0)
    assert V.spearman_p(x9, x9)[1] == pytest.approx(2 / 10000)               # n = 9: 9 999 permutations (one hit)
    # two groups of three, monotone in both: within-group permutations give |ρ| = 1 in 2 of 36
    # orderings (both identity or both reversed); pooled over all 720 orderings it would be rarer
    p = V.spearman_p([1, 2, 3, 1, 2, 3], [1, 2, 3, 1, 2, 3], groups=[0, 0, 0, 1, 1, 1])[1]
    assert p == pytest.approx(2 / 36, abs=0.01)


def test_spearman_p_default_permutations_are_seeded():
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(12), rng.standard_normal(12)
    rho, p = V.spearman_p(x, y)
    assert V.spearman_p(x, y) == (rho, p)                                     # same seed, same p
    assert p == V.spearman_p(x, y, n_perm=9999, seed=0)[1]
    assert p != V.spearman_p(x, y, seed=1)[1] and p != V.spearman_p(x, y, n_perm=10000)[1]


def test_judge_is_interval_decision_and_seed_count():
    iv_, v, side = V.judge([0.05, 0.06, 0.04, None], above=0.02)
    assert iv_ == V.seed_interval([0.05, 0.06, 0.04, None]) and v == REPRODUCED and side == "3 of 3 seeds"
    assert V.judge([1.0, 1.3], within=(1.0, 0.2))[1:] == (INCONCLUSIVE, "1 of 2 seeds")
