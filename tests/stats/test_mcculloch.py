"""Tests of lwsim/stats/mcculloch.py (laid out like the code: docs/testing.md).

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ.

Tests that kill the surviving mutants of mutmut on lwsim/stats (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.

lwsim.stats tail-index fits (docs/statistics.md §3.2): table, ECF, McCulloch, bootstrap, selection rules.

The full accuracy grid {1.1, …, 2.0} × 40 repetitions at n = 10⁵ runs with LWSIM_SLOW=1."""


from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats as sps

from lwsim.stats import iqr_theory, mcculloch, ratio_theory, sample_sas
from lwsim.stats.make_mcculloch_table import gil_pelaez_cdf


R2 = 2 * 1.6448536269514722 / (2 * 0.6744897501960817)   # Gaussian (α = 2) quantile ratio, 2.4387


# ----------------------------------------------------------------------------------------------
# author_quantile_fit
# ----------------------------------------------------------------------------------------------


# ---- McCulloch: the author's 201-point table with R(1.005) = R(1) --------------------------------
def test_author_mcculloch_table_and_interpolation():
    tab = mcculloch.author_table()
    q75, q95 = sps.levy_stable.ppf([0.75, 0.95], 1.005, 0.0)     # what scipy gave the author
    np.testing.assert_allclose(tab["ratio"][1], q95 / q75, rtol=1e-7)
    np.testing.assert_allclose(tab["ratio"][1], np.tan(0.45 * np.pi), rtol=1e-9)   # = R(1), Cauchy
    np.testing.assert_allclose(tab["iqr"][100], 2 * sps.levy_stable.ppf(0.75, 1.5, 0.0), rtol=1e-7)
    # hand rule on one quantile row: R̂ = (q95 − q05)/(IQR + 1e−12), linear interpolation on sorted R
    fine = mcculloch.table()
    j = int(np.argmin(np.abs(fine["alpha"] - 1.3)))
    q = np.array([-fine["ratio"][j], -1.0, 1.0, fine["ratio"][j]]) * 0.7
    a_grid = np.linspace(1, 2, 201)
    R = np.interp(a_grid, fine["alpha"], fine["ratio"])
    I = np.interp(a_grid, fine["alpha"], fine["iqr"])
    R[1], I[1] = R[0], I[0]
    o = np.argsort(R)
    r_hat = (q[3] - q[0]) / (1.4 + 1e-12)
    a, s, _ = mcculloch.author_quantile_fit(q)
    np.testing.assert_allclose(a, np.interp(r_hat, R[o], a_grid[o]), rtol=1e-12)
    np.testing.assert_allclose(s, 1.4 / (np.interp(r_hat, R[o], I[o]) + 1e-12), rtol=1e-12)
    # near α = 1 they must differ: R̂ = R(1.004) lies between R(1.01) and the repeated R(1), where
    # the author interpolates linearly over [1, 1.01] (the largest effect, ≈ 5e−5 in α̂)
    k = int(np.argmin(np.abs(fine["alpha"] - 1.004)))
    q = np.array([-fine["ratio"][k], -1.0, 1.0, fine["ratio"][k]])
    a_auth = float(mcculloch.author_quantile_fit(q)[0])
    a_lw = float(mcculloch.alpha_from_quantiles(q, 1.0)[0])
    assert abs(a_lw - 1.004) < 1e-6 and abs(a_auth - a_lw) > 3e-5


def test_degenerate_iqr_is_gaussian_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, iqr = mcculloch.alpha_from_quantiles(np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]), 1.0)
        np.testing.assert_array_equal(a, [2.0, 2.0])
        np.testing.assert_array_equal(iqr, [0.0, 0.0])
        # author: IQR ≤ 1e−12 (here −1e−12, 0 and exactly 1e−12) or non-finite → (α, σ) = (2, 0)
        q = np.array([[0.0, 1e-12, 0.0, 1.0], [0.0, 1e-12, 0.0, 0.0], [0.0, 0.0, 0.0, 5.0],
                      [0.0, 0.0, 1e-12, 1.0], [np.nan, 0.0, np.nan, 1.0]])
        a, s, _ = mcculloch.author_quantile_fit(q)
    np.testing.assert_array_equal(a, [2.0] * 5)
    np.testing.assert_array_equal(s, [0.0] * 5)


def test_author_quantile_fit_unit_iqr_row_is_not_degenerate():
    # Cauchy quartiles ±0.5 → IQR = 1 (not ≤ 1e−12): α̂ near 1, σ̂ = 1/IQR(1) = 0.5
    t = np.tan(0.45 * np.pi) * 0.5
    a, s, iqr = mcculloch.author_quantile_fit(np.array([-t, -0.5, 0.5, t]))
    assert iqr == 1.0 and 1.0 <= a <= 1.01 and s == pytest.approx(0.5, rel=1e-3)


# ----------------------------------------------------------------------------------------------
# ratio_theory
# ----------------------------------------------------------------------------------------------


# ---- the shipped table ------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.613, 1.0437, 1.5, 1.8765, 1.9993])
def test_table_matches_fresh_scipy(alpha):  # off-grid points: tests the interpolation as well
    q75, q95 = sps.levy_stable.ppf([0.75, 0.95], alpha, 0.0)
    np.testing.assert_allclose(ratio_theory(alpha), q95 / q75, rtol=1e-7)
    np.testing.assert_allclose(iqr_theory(alpha), 2 * q75, rtol=1e-7)


def test_table_near_one_and_closed_forms():
    # scipy snaps |α − 1| < 0.005 to α = 1; the table uses Gil-Pelaez there: check F(q75) = 0.75.
    q75 = iqr_theory(0.998) / 2
    assert abs(gil_pelaez_cdf(q75, 0.998) - 0.75) < 1e-9
    np.testing.assert_allclose(ratio_theory(2.0), sps.norm.ppf(0.95) / sps.norm.ppf(0.75), rtol=1e-10)
    np.testing.assert_allclose(iqr_theory(2.0), 2 * np.sqrt(2) * sps.norm.ppf(0.75), rtol=1e-10)
    np.testing.assert_allclose(ratio_theory(1.0), np.tan(0.45 * np.pi), rtol=1e-10)
    assert np.all(np.diff(mcculloch.table()["ratio"]) < 0)


# ----------------------------------------------------------------------------------------------
# iqr_theory
# ----------------------------------------------------------------------------------------------


def test_iqr_theory_author_at_cauchy_and_gaussian():
    # unit SαS: α = 1 is Cauchy(0, 1), quartiles ±1; α = 2 is N(0, 2), IQR = 2·√2·z.75
    np.testing.assert_allclose(mcculloch.iqr_theory(np.array([1.0, 2.0]), "author"),
                               [2.0, 2 * np.sqrt(2) * 0.6744897501960817], rtol=1e-6)
    np.testing.assert_allclose(mcculloch.iqr_theory(2.0), 2 * np.sqrt(2) * 0.6744897501960817, rtol=1e-6)


def test_iqr_theory_author_is_flat_over_the_snapped_first_step():
    # the author's IQR(1.005) := IQR(1) = 2, so linear interpolation at 1.0025 gives exactly 2;
    # lwsim's PCHIP on the exact table does not (IQR(α) decreases from 2 at α = 1)
    assert mcculloch.iqr_theory(1.0025, "author") == pytest.approx(2.0, rel=1e-12)
    assert mcculloch.iqr_theory(1.0025) < 2.0 - 1e-4


# ----------------------------------------------------------------------------------------------
# alpha_from_quantiles
# ----------------------------------------------------------------------------------------------


def test_alpha_from_quantiles_clips_to_alpha_lo_but_author_ignores_it():
    q = np.array([-20.0, -1.0, 1.0, 20.0])          # ratio 20: heavier than any α ≥ 1.2
    assert mcculloch.alpha_from_quantiles(q, 1.2)[0] == 1.2
    # author: α̂ in [1, 2] from its own table, alpha_lo unused (the clamped end of the R-sorted grid
    # is one of the two R(1) entries, α = 1 or 1.005)
    a_auth = float(mcculloch.alpha_from_quantiles(q, 1.2, "author")[0])
    assert 1.0 <= a_auth <= 1.005
    # alpha_lo below the table: clipped to the table's first α, 0.5
    assert mcculloch.alpha_from_quantiles(np.array([-1e6, -1.0, 1.0, 1e6]), 0.0)[0] == 0.5
    # lighter than Gaussian: α̂ = 2 exactly
    assert mcculloch.alpha_from_quantiles(np.array([-1.1, -1.0, 1.0, 1.1]), 1.0)[0] == 2.0
    assert mcculloch.alpha_from_quantiles(np.array([-R2, -1.0, 1.0, R2]), 1.0)[0] == pytest.approx(2.0, abs=1e-9)


def test_order_statistic_bootstrap_matches_naive_resampling():
    xs = np.sort(sample_sas(1.5, 1.0, size=800, seed=4))
    rng = np.random.default_rng(0)
    fast = mcculloch.bootstrap_alphas(xs, 3000, rng)
    naive = np.array([mcculloch.alpha_from_quantiles(np.quantile(rng.choice(xs, xs.size), mcculloch.PROBS), 1.0)[0]
                      for _ in range(3000)])
    assert sps.ks_2samp(fast, naive).pvalue > 0.01
    np.testing.assert_allclose(fast.std(), naive.std(), rtol=0.1)


# ----------------------------------------------------------------------------------------------
# mcculloch_point
# ----------------------------------------------------------------------------------------------


def test_mcculloch_point_defaults_clip_at_one():
    x = np.sort(sample_sas(1.0, size=4000, seed=5))   # this Cauchy sample's ratio exceeds R(1)
    a, s, iqr = mcculloch.mcculloch_point(x)          # default alpha_lo = 1, conventions "lwsim"
    assert a == 1.0 and s == pytest.approx(iqr / 2.0, rel=1e-9)   # σ̂ = IQR / IQR(1), IQR(1) = 2


# ----------------------------------------------------------------------------------------------
# bootstrap_quantiles
# ----------------------------------------------------------------------------------------------


def test_bootstrap_quantiles_reach_the_sample_ends_and_interpolate():
    rng = np.random.default_rng(0)
    # n = 2: the linear rule interpolates between the resample's two order statistics, so a
    # resample {0, 1} gives q95 = 0.95 (probability 1/2), never only 0 or 1
    b = mcculloch.bootstrap_quantiles(np.array([0.0, 1.0]), 200, rng)
    assert np.isin(0.95, b[:, 3]) and np.isin(0.05, b[:, 0])
    # n = 5: every bootstrap quantile lies in [min, max] and q95 reaches the maximum 4 (resample all 4s
    # is rare, but q95 = 4 needs only the two largest order statistics to be 4: probability ≈ 0.26)
    b = mcculloch.bootstrap_quantiles(np.arange(5.0), 400, rng)
    assert b.min() >= 0.0 and b.max() == 4.0 and b[:, 0].min() == 0.0


def test_order_statistic_bootstrap_quantiles_small_n():
    # At n = 25 a one-rank slip moves each quantile by a whole spacing: compare with naive resampling.
    xs = np.sort(np.random.default_rng(5).standard_normal(25))
    rng = np.random.default_rng(1)
    fast = mcculloch.bootstrap_quantiles(xs, 20_000, rng)
    naive = np.quantile(rng.choice(xs, (20_000, xs.size)), mcculloch.PROBS, axis=1).T
    se = naive.std(0) / np.sqrt(20_000)
    assert np.all(np.abs(fast.mean(0) - naive.mean(0)) < 5 * np.sqrt(2) * se), (fast.mean(0), naive.mean(0))
    np.testing.assert_allclose(fast.std(0), naive.std(0), rtol=0.05)


# ----------------------------------------------------------------------------------------------
# bootstrap_alphas
# ----------------------------------------------------------------------------------------------


def test_bootstrap_alphas_pass_the_conventions():
    x = np.sort(sample_sas(1.0, size=2000, seed=1))          # Cauchy: R ≈ 6.3
    lw = mcculloch.bootstrap_alphas(x, 20, np.random.default_rng(2), alpha_lo=1.2)
    au = mcculloch.bootstrap_alphas(x, 20, np.random.default_rng(2), alpha_lo=1.2, conventions="author")
    assert lw.min() >= 1.2 and au.max() < 1.2
