"""Tests that kill the surviving mutants of mutmut on lwsim/stats (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from lwsim.stats import inv_kappa, kappa, mean_scale, sample_sas
from lwsim.stats._checks import as_rng, as_size, real_array


# ---- _checks -------------------------------------------------------------------------------

def test_as_rng_accepts_seed_zero_and_names_the_bad_type():
    assert as_rng(0).integers(0, 10**9) == np.random.default_rng(0).integers(0, 10**9)
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        as_rng(-1)
    with pytest.raises(TypeError, match="got str"):
        as_rng("3")


def test_as_size_allows_zero_length_axes_and_names_size():
    assert as_size((0, 3)) == (0, 3)
    assert as_size(0) == (0,)
    with pytest.raises(ValueError, match=r"^size\b"):
        as_size(-1)


def test_real_array_inf_rules_and_nonneg_boundary():
    out = real_array("x", [1.0, np.inf], allow_inf=True)   # +inf allowed
    assert out[1] == np.inf
    with pytest.raises(ValueError, match="x contains -inf"):
        real_array("x", [1.0, -np.inf], allow_inf=True)
    np.testing.assert_array_equal(real_array("x", [0.0, 0.5], nonneg=True), [0.0, 0.5])  # 0 is >= 0
    with pytest.raises(ValueError, match="x must be >= 0"):
        real_array("x", [0.0, -0.5], nonneg=True)


# ---- stable ---------------------------------------------------------------------------------

def test_sample_sas_defaults_are_unit_scale_and_one_draw():
    # alpha = 1 is Cauchy: X = loc + sigma tan V with V = U(-pi/2, pi/2) the generator's first draw
    v = np.random.default_rng(11).uniform(-np.pi / 2, np.pi / 2, size=(1,))
    x = sample_sas(1.0, seed=11)
    assert x.shape == (1,)
    np.testing.assert_allclose(x, np.tan(v), rtol=1e-12)


def test_sample_sas_alpha_two_is_two_sin_v_sqrt_w_scaled_and_shifted():
    # CMS at alpha = 2: sin(2V)/cos(V)^(1/2) * (cos(-V)/W)^(-1/2) = 2 sin V sqrt(W)  (N(0, 2) for sigma = 1)
    g = np.random.default_rng(7)
    v = g.uniform(-np.pi / 2, np.pi / 2, size=(5,))
    w = g.standard_exponential(size=(5,))
    x = sample_sas(2.0, sigma=3.0, size=5, seed=7, loc=-1.5)
    np.testing.assert_allclose(x, -1.5 + 3.0 * 2.0 * np.sin(v) * np.sqrt(w), rtol=1e-10)


def test_sample_sas_alpha_three_halves_by_hand_formula():
    a = 1.5
    g = np.random.default_rng(3)
    v = g.uniform(-np.pi / 2, np.pi / 2, size=(4,))
    w = g.standard_exponential(size=(4,))
    by_hand = np.sin(a * v) / np.cos(v) ** (1 / a) * (np.cos((1 - a) * v) / w) ** ((1 - a) / a)
    np.testing.assert_allclose(sample_sas(a, sigma=0.5, size=4, seed=3, loc=2.0), 2.0 + 0.5 * by_hand,
                               rtol=1e-10)


@pytest.mark.parametrize("call, name", [
    (lambda: sample_sas(2.5), "alpha"), (lambda: sample_sas(1.5, sigma=0.0), "sigma"),
    (lambda: sample_sas(1.5, loc=np.nan), "loc"),
    (lambda: kappa(1.0), "alpha"), (lambda: kappa(np.nan), "alpha"), (lambda: kappa(2.5), "alpha"),
    (lambda: inv_kappa(0.5), "alpha"), (lambda: inv_kappa(np.nan), "alpha"), (lambda: inv_kappa(2.01), "alpha"),
    (lambda: mean_scale(0.0, 1.0, 4.0), "alpha"), (lambda: mean_scale(2.5, 1.0, 4.0), "alpha"),
    (lambda: mean_scale(1.5, 0.0, 4.0), "sigma"), (lambda: mean_scale(1.5, 1.0, 0.0), "n"),
    (lambda: mean_scale(1.5, 1.0, np.nan), "n"),
])
def test_stable_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


def test_kappa_inv_kappa_scalar_float_array_array_and_boundaries():
    assert type(kappa(1.5)) is float and kappa(1.5) == pytest.approx(3.0)
    assert type(inv_kappa(1.5)) is float and inv_kappa(1.5) == pytest.approx(1 / 3)
    np.testing.assert_allclose(inv_kappa(np.array([1.0, 1.25, 2.0])), [0.0, 0.2, 0.5])
    assert isinstance(inv_kappa(np.array([1.25])), np.ndarray)
    assert isinstance(kappa(np.array([1.25])), np.ndarray)


def test_mean_scale_hand_numbers():
    # sigma n^(1/alpha - 1): alpha = 2, n = 4 -> 1/2; alpha = 1 -> sigma (no concentration)
    assert mean_scale(2.0, 1.0, 4.0) == 0.5 and type(mean_scale(2.0, 1.0, 4)) is float
    assert mean_scale(1.0, 3.0, 100.0) == pytest.approx(3.0)
    np.testing.assert_allclose(mean_scale(1.5, 2.0, np.array([1.0, 8.0, 64.0])), [2.0, 1.0, 0.5])
    assert mean_scale(0.5, 1.0, 2.0) == pytest.approx(2.0)   # alpha in (0, 1]: n^(+1)


# ---- mcculloch -------------------------------------------------------------------------------

import warnings  # noqa: E402

from lwsim.stats import mcculloch  # noqa: E402

R2 = 2 * 1.6448536269514722 / (2 * 0.6744897501960817)   # Gaussian (α = 2) quantile ratio, 2.4387


def test_iqr_theory_author_at_cauchy_and_gaussian():
    # unit SαS: α = 1 is Cauchy(0, 1), quartiles ±1; α = 2 is N(0, 2), IQR = 2·√2·z.75
    np.testing.assert_allclose(mcculloch.iqr_theory(np.array([1.0, 2.0]), "author"),
                               [2.0, 2 * np.sqrt(2) * 0.6744897501960817], rtol=1e-6)
    np.testing.assert_allclose(mcculloch.iqr_theory(2.0), 2 * np.sqrt(2) * 0.6744897501960817, rtol=1e-6)


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


def test_bootstrap_alphas_pass_the_conventions():
    x = np.sort(sample_sas(1.0, size=2000, seed=1))          # Cauchy: R ≈ 6.3
    lw = mcculloch.bootstrap_alphas(x, 20, np.random.default_rng(2), alpha_lo=1.2)
    au = mcculloch.bootstrap_alphas(x, 20, np.random.default_rng(2), alpha_lo=1.2, conventions="author")
    assert lw.min() >= 1.2 and au.max() < 1.2


def test_iqr_theory_author_is_flat_over_the_snapped_first_step():
    # the author's IQR(1.005) := IQR(1) = 2, so linear interpolation at 1.0025 gives exactly 2;
    # lwsim's PCHIP on the exact table does not (IQR(α) decreases from 2 at α = 1)
    assert mcculloch.iqr_theory(1.0025, "author") == pytest.approx(2.0, rel=1e-12)
    assert mcculloch.iqr_theory(1.0025) < 2.0 - 1e-4


def test_mcculloch_point_defaults_clip_at_one():
    x = np.sort(sample_sas(1.0, size=4000, seed=5))   # this Cauchy sample's ratio exceeds R(1)
    a, s, iqr = mcculloch.mcculloch_point(x)          # default alpha_lo = 1, conventions "lwsim"
    assert a == 1.0 and s == pytest.approx(iqr / 2.0, rel=1e-9)   # σ̂ = IQR / IQR(1), IQR(1) = 2


# ---- decay_author ----------------------------------------------------------------------------

from lwsim.stats.decay_author import author_lc_grid, tempered_author  # noqa: E402


def test_author_lc_grid_ends_by_hand():
    g = author_lc_grid([2.0, 5.0, 10.0])          # [0.5·2, 2·10] = [1, 20], 40 log-spaced values
    assert len(g) == 40
    np.testing.assert_allclose([g[0], g[-1]], [1.0, 20.0], rtol=1e-12)
    g = author_lc_grid([1e-13])                  # floor 1e−12, and hi = max(1.001·lo, 2e−13)
    np.testing.assert_allclose([g[0], g[-1]], [1e-12, 1.001e-12], rtol=1e-12)


def test_tempered_author_recovers_exact_law_on_given_grids():
    lags = np.arange(1.0, 41.0)
    y = np.log(3.0) - 0.5 * np.log(lags) - 2.0 * (lags / 7.0) ** 0.6
    p, ssr = tempered_author(lags, y, k_grid=(0.6,), lc_grid=(7.0,))   # 7 and 0.6: in neither default grid
    assert ssr < 1e-20 and (p["l_c"], p["k"]) == (7.0, 0.6)
    assert p["A"] == pytest.approx(3.0, rel=1e-9) and p["beta"] == pytest.approx(0.5, rel=1e-9)
    assert p["cutoff_coeff"] == pytest.approx(2.0, rel=1e-9)


def test_tempered_author_amplitude_overflow_is_inf():
    lags = np.arange(1.0, 21.0)
    for c, finite in ((800.0, False), (709.5, False), (708.0, True)):   # exp overflows past ~709.78
        y = c - 0.5 * np.log(lags) - (lags / 5.0) ** 0.5
        p, _ = tempered_author(lags, y, k_grid=(0.5,), lc_grid=(5.0,))
        assert (p["A"] == math.inf) != finite
        if finite:
            assert p["A"] == pytest.approx(math.exp(708.0), rel=1e-9)


def test_tempered_author_keeps_first_grid_point_on_ties():
    # y ≡ 0 is fitted exactly (coef = 0, SSR = 0) at every (k, ℓ_c): the first one is kept
    lags = np.arange(1.0, 41.0)
    p, ssr = tempered_author(lags, np.zeros(40))
    assert ssr == 0.0 and p["A"] == 1.0
    assert (p["k"], p["l_c"]) == (0.25, pytest.approx(0.5, rel=1e-12))   # k_grid[0], 0.5·ℓ_min


def test_tempered_author_amplitude_threshold_is_strict_at_709():
    # one lag ℓ = 1: X = [1, log 1, (1/1e200)^k] = [1, 0, ~0], so c = y exactly
    for y0, A in ((709.0, math.inf), (708.0, math.exp(708.0))):
        p, _ = tempered_author([1.0], [y0], k_grid=(1.0,), lc_grid=(1e200,))
        assert p["A"] == A


def test_tempered_author_casts_inputs_to_float64():
    lags = np.arange(1.0, 41.0)
    y = np.log(3.0) - 0.5 * np.log(lags) - 2.0 * (lags / 7.0) ** 0.6
    # float32 lags (exact integers) are fitted in float64: the law is still recovered to 1e−20
    p, ssr = tempered_author(lags.astype(np.float32), y, k_grid=(0.6,), lc_grid=(7.0,))
    assert ssr < 1e-20 and p["beta"] == pytest.approx(0.5, rel=1e-9)
    # extended-precision y (linalg refuses float128) is accepted
    p, ssr = tempered_author(lags, y.astype(np.longdouble), k_grid=(0.6,), lc_grid=(7.0,))
    assert ssr < 1e-20 and p["A"] == pytest.approx(3.0, rel=1e-9)
