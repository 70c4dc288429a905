"""fit_master_window: the master check the author's way (docs/statistics.md §3.5).

Hand-built (seeds, lags) tables where the seed-averaged N̂ lies exactly on log N̄ = 0.5 + 1·(−κ̄ log f̄)
inside the window, and every lag the rule must drop carries values that would bend the line.
"""
import numpy as np
import pytest

from lwsim.stats import fit_master, fit_master_window

LAGS = np.arange(1, 17, dtype=float)
WINDOW = (3, 14)                                  # 12 lags inside


def _table():
    S, L = 3, LAGS.size
    f = np.tile(np.exp(-0.1 * LAGS), (S, 1))
    kappa = np.tile(np.array([[1.8], [2.0], [2.2]]), (1, L))       # seed mean 2.0, median 2.0
    alpha = np.full((S, L), 1.5)
    n_bar = np.exp(0.5 + 2.0 * 0.1 * LAGS)                        # −κ̄ log f̄ = 0.2 ℓ
    d = 0.03 * LAGS                                              # seed factors: mean 1, median 1 + d
    n_hat = n_bar * np.stack([1 - 2 * d, 1 + d, 1 + d])
    # outside the window: a flat N̂ that would pull the slope towards 0
    for j in np.flatnonzero((LAGS < WINDOW[0]) | (LAGS > WINDOW[1])):
        n_hat[:, j] = 1e4
    j_inf = 5                                                    # ℓ = 6: never detectable for seed 1
    n_hat[:, j_inf] = [1e6, np.inf, 1e6]
    j_alpha = 8                                                  # ℓ = 9: mean α̂ = 1.0 < 1.01
    alpha[:, j_alpha] = 1.0
    n_hat[:, j_alpha] = 1e6
    return n_hat, kappa, f, alpha


def test_seed_average_window_alpha_and_inf_rules():
    n_hat, kappa, f, alpha = _table()
    m = fit_master_window(n_hat, kappa, f, alpha, LAGS, window=WINDOW)
    assert m.n == 10                                # 12 in the window − the inf lag − the α̂ lag
    assert m.slope == pytest.approx(1.0, abs=1e-10)
    assert m.intercept == pytest.approx(0.5, abs=1e-9)
    assert m.r2 == pytest.approx(1.0, abs=1e-12)


def test_without_window_the_flat_ends_bend_the_slope():
    n_hat, kappa, f, alpha = _table()
    m = fit_master_window(n_hat, kappa, f, alpha, LAGS)
    assert m.n == 14 and m.slope < 0.9


def test_alpha_threshold_is_strict():
    # one seed (1-D): α̂ = 1.01 exactly is dropped (> 1.01 is kept)
    n_hat, kappa, f, alpha = (a[1] for a in _table())
    n_hat = np.exp(0.5 + 2.0 * 0.1 * LAGS)
    alpha = np.full(LAGS.size, 1.5)
    alpha[10] = 1.01
    n_hat[10] = 1e7
    m = fit_master_window(n_hat, kappa, f, alpha, LAGS, window=WINDOW)
    assert m.n == 11 and m.slope == pytest.approx(1.0, abs=1e-10)
    alpha[10] = 1.0100001                          # now kept, and it bends the line
    assert fit_master_window(n_hat, kappa, f, alpha, LAGS, window=WINDOW).slope > 1.05


def test_equals_fit_master_on_the_kept_means():
    rng = np.random.default_rng(3)
    n_hat = rng.uniform(20, 5000, (4, LAGS.size)).round()
    kappa, f, alpha = rng.uniform(1.5, 3, (4, 16)), rng.uniform(0.01, 1, (4, 16)), rng.uniform(1.2, 2, (4, 16))
    m = fit_master_window(n_hat, kappa, f, alpha, LAGS, window=(2, 15))
    k = slice(1, 15)
    ref = fit_master(n_hat.mean(0)[k], kappa.mean(0)[k], f.mean(0)[k])
    assert (m.slope, m.intercept, m.n) == pytest.approx((ref.slope, ref.intercept, ref.n), rel=1e-12)


def test_input_errors_name_the_argument():
    n_hat, kappa, f, alpha = _table()
    with pytest.raises(ValueError, match="kappa"):
        fit_master_window(n_hat, kappa[:2], f, alpha, LAGS)
    with pytest.raises(ValueError, match="lags"):
        fit_master_window(n_hat, kappa, f, alpha, LAGS[:-1])
    with pytest.raises(ValueError, match="window"):
        fit_master_window(n_hat, kappa, f, alpha, LAGS, window=(10, 3))
    with pytest.raises(ValueError, match="alpha"):
        fit_master_window(n_hat, kappa, f, np.where(alpha > 0, np.nan, 0), LAGS)
    with pytest.raises(ValueError, match=">= 10 usable lags"):
        fit_master_window(n_hat, kappa, f, alpha, LAGS, window=(3, 8))
