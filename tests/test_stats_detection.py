"""lwsim.stats.detection (docs/statistics.md §3.3, docs/theory.md §4.4): SNR rule, N̂, N*, Ĥ_N, noise floor, table."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lwsim.stats import (detectable, detection_table, kappa, learnability_window, n_star,
                         noise_floor, sample_complexity, sample_sas, snr)


def test_snr_formula():
    assert snr(1.0, 2.0, 1.0, 100) == pytest.approx(10.0)              # κ = 2: √N
    assert snr(-2.0, 1.5, 4.0, 8.0) == pytest.approx(2.0 * 8 ** (1 / 3) / 4.0)  # κ = 3, |m̄|
    np.testing.assert_allclose(snr([1.0, 1.0], [2.0, 1.25], 1.0, 2**10), [32.0, 4.0])  # κ = 5
    assert snr(1.0, 1.0, 0.5, 1e9) == pytest.approx(2.0)                # α̂ = 1: no concentration


def test_degenerate_conventions():
    np.testing.assert_array_equal(snr([0.0, 1.0, 0.0], 2.0, [1.0, 0.0, 0.0], 10), [0.0, np.inf, 0.0])
    np.testing.assert_array_equal(n_star([0.0, 1.0], 2.0, [1.0, 0.0]), [np.inf, 0.0])
    assert n_star(1.0, 1.0, 0.01, eps=20) == 0.0 and n_star(1.0, 1.0, 1.0, eps=20) == np.inf


def test_detection_threshold_is_strict_and_n_hat_is_min_of_grid():
    # |m̄| = σ = 1, α = 2, ε = 20: SNR = √N > 20 ⇔ N > 400.
    assert not detectable(1.0, 2.0, 1.0, 400) and detectable(1.0, 2.0, 1.0, 401)
    assert sample_complexity(1.0, 2.0, 1.0, [1000, 401, 400, 100]) == 401
    np.testing.assert_array_equal(
        sample_complexity([1.0, 0.1, 0.0], 2.0, 1.0, [10, 1e3, 1e4, 1e5]), [1e3, 1e5, np.inf])  # N > 4e4
    assert n_star(1.0, 2.0, 1.0) == pytest.approx(400.0)
    assert n_star(0.5, 1.5, 2.0, eps=2.0) == pytest.approx(8.0**3)      # (εσ/|m̄|)^κ, κ = 3


def test_n_star_solves_snr_equals_eps():
    m, a, s = np.array([0.3, 0.01, 2.0]), np.array([1.3, 1.7, 2.0]), np.array([1.0, 0.5, 3.0])
    np.testing.assert_allclose(snr(m, a, s, n_star(m, a, s, eps=7.0)), 7.0, rtol=1e-10)


def test_learnability_window_hand_built():
    lags = [1, 2, 3, 4]
    n_hat = [10, 100, np.inf, 1000]
    np.testing.assert_array_equal(learnability_window(lags, n_hat, [5, 10, 99, 500, 1000, 1e9]),
                                  [0, 1, 1, 2, 4, 4])   # max detectable lag, not first gap
    assert learnability_window(lags, n_hat, 100) == 2.0


def test_noise_floor():
    f, n_hat, k = np.array([1.0, 0.5, 0.2]), np.array([400.0, np.inf, 1e4]), np.array([2.0, 2.0, np.inf])
    out = noise_floor(f, n_hat, 1600.0, k)
    np.testing.assert_allclose(out, [0.5, np.inf, 0.2])
    grid = noise_floor(f, n_hat, [400.0, 1600.0], k)
    assert grid.shape == (2, 3)
    np.testing.assert_allclose(grid[0], [1.0, np.inf, 0.2])            # at N = N̂: ε_th = f


def test_detection_table_planted_power_law():
    # X = c f(ℓ) + SαS(α, σ), f = ℓ^{-β}: N(ℓ) = (εσ/(c f))^κ = A^κ ℓ^{βκ}; H_N = (N^{1/κ}/A)^{1/β}.
    alpha, sigma, c, beta, eps = 1.6, 1.0, 2.0, 1.0, 2.0
    lags = np.arange(1, 13, dtype=float)
    x = c * lags[:, None] ** -beta + sample_sas(alpha, sigma, size=(lags.size, 40_000), seed=9)
    grid = np.geomspace(1, 1e6, 49)
    tab = detection_table(x, lags, grid, eps=eps, seed=1)
    assert tab.method == ("ecf",) * lags.size and tab.reliable.all()
    assert np.all(np.abs(tab.alpha - alpha) < 0.05)
    k = kappa(alpha)
    truth = (eps * sigma / (c * lags ** -beta)) ** k
    # N̂ is the first grid point above N*, and N* matches the planted N(ℓ) within the fit error
    np.testing.assert_allclose(tab.n_star, truth, rtol=0.5)
    idx = np.searchsorted(grid, tab.n_star, side="right")
    np.testing.assert_array_equal(tab.n_hat, grid[idx])
    h_true = np.floor(np.minimum((grid ** (1 / k) * c / (eps * sigma)) ** (1 / beta), lags[-1]))
    assert np.all(np.abs(tab.h_n - h_true) <= 1), np.c_[grid, tab.h_n, h_true]
    json.dumps(tab.to_dict())


def test_detection_table_degenerate_lags_are_never_detectable():
    # Long lags whose matched statistic underflowed to exactly 0: σ̂ = 0, m̄ = 0 → N̂ = inf, no NaN.
    x = np.vstack([1.0 + sample_sas(2.0, 0.1, size=(1, 1000), seed=1), np.zeros((2, 1000))])
    tab = detection_table(x, [1, 2, 3], [1, 10, 100])
    np.testing.assert_array_equal(tab.n_hat, [10, np.inf, np.inf])   # SNR ≈ 1·√N/0.1 > 20 ⇔ N > 4
    assert tab.method[1:] == ("default_gaussian",) * 2 and not tab.reliable[1:].any()
    np.testing.assert_array_equal(tab.h_n, [0, 1, 1])
    assert tab.to_dict()["n_hat"] == [10.0, "inf", "inf"]


# ------------------------------------------------ options of the author's runs (issue 13)
def _noise(n, seed=0):
    z = np.random.default_rng(seed).standard_normal(n)
    return (z - z.mean()) / z.std()


def test_min_samples_rule_never_detects_short_lags():
    z = _noise(60)
    rows = [0.5 + z[:30], 0.5 + z]                          # ragged: 30 and 60 samples
    t = detection_table(rows, [4, 8], [10, 100, 1000], eps=1.0, method="ecf", min_samples=50)
    ref = detection_table([0.5 + z], [8], [10, 100, 1000], eps=1.0, method="ecf")
    assert t.alpha[0] == 2.0 and t.sigma[0] == 0.0 and not t.reliable[0] and t.method[0] == "too_few"
    assert t.n_hat[0] == np.inf and t.n_star[0] == np.inf     # σ̂ = 0 alone would give SNR = inf
    assert (t.alpha[1], t.sigma[1], t.n_hat[1]) == (ref.alpha[0], ref.sigma[0], ref.n_hat[0])
    np.testing.assert_array_equal(t.n_samples, [30, 60])
    np.testing.assert_array_equal(t.h_n, [8 if ref.n_hat[0] <= N else 0 for N in (10, 100, 1000)])
    assert t.mean[0] == pytest.approx(0.5 + z[:30].mean())
    with pytest.raises(ValueError, match="at least 20 values per lag"):
        detection_table(rows[:1] + [z[:10]], [4, 8], [10])  # without min_samples, 10 samples fail
    with pytest.raises(ValueError, match="min_samples"):
        detection_table(rows, [4, 8], [10], min_samples=5)


def test_cap_budget_uses_min_of_budget_and_sample_count():
    z = _noise(60)
    base = detection_table([1.0 + z], [1], [10], method="ecf")
    k, s = base.kappa[0], base.sigma[0]
    eps = 40.0 ** (1 / k) * 1.0 / s                          # row 0: N* = 40 exactly
    rows = [1.0 + z, 1.0 / 3 + z]                            # row 1: N* = 40·3^κ > 60
    grid = [10, 100, 1000]
    free = detection_table(rows, [1, 2], grid, eps=eps, method="ecf")
    cap = detection_table(rows, [1, 2], grid, eps=eps, method="ecf", cap_budget=True)
    assert free.n_star[0] == pytest.approx(40.0) and 60 < free.n_star[1] < 1000
    np.testing.assert_array_equal(free.n_hat, [100, 1000])
    np.testing.assert_array_equal(cap.n_hat, [60, np.inf])   # capped: min(100, 60); never n ≥ N*
    np.testing.assert_array_equal(cap.h_n, [0, 1, 1])        # N̂ = 60 ≤ N for N = 100, 1000
    np.testing.assert_array_equal(cap.n_star, free.n_star)   # N* is not capped


def test_fit_subsample_fits_the_tail_on_a_seeded_subset():
    from lwsim.stats import fit_alpha
    row = 0.2 + np.random.default_rng(3).standard_t(3, 1000)
    t = detection_table([row], [5], [100], method="ecf", seed=7, fit_subsample=100)
    idx = np.sort(np.random.default_rng(7).choice(1000, 100, replace=False))
    ref = fit_alpha(row[idx] - row.mean(), method="ecf")
    assert (t.alpha[0], t.sigma[0]) == (ref.alpha, ref.sigma)
    assert t.mean[0] == row.mean()                           # the mean uses every sample
    full = detection_table([row], [5], [100], method="ecf", seed=7)
    assert full.alpha[0] != t.alpha[0]
