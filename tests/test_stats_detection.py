"""lwsim.stats.detection (spec 03 §3.3, 04 §4.4): SNR rule, N̂, N*, Ĥ_N, noise floor, table."""
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
