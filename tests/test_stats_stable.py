"""lwsim.stats.stable (docs/statistics.md §3.1, docs/theory.md §4.3): CMS sampler, κ_α, sample-mean concentration."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from lwsim.stats import inv_kappa, kappa, mean_scale, sample_sas

SETTINGS = dict(deadline=None, derandomize=True, database=None)


@pytest.mark.parametrize("alpha", [0.7, 1.1, 1.5, 1.9])
def test_sampler_matches_scipy_levy_stable(alpha):
    # KS against scipy's S1 cdf with β = 0, same scale: φ = exp(−σ^α|t|^α).
    sigma = 1.7
    x = sample_sas(alpha, sigma, size=1500, seed=11)
    res = sps.kstest(x, lambda v: sps.levy_stable.cdf(v, alpha, 0.0, scale=sigma))
    assert res.pvalue > 0.01, res


def test_alpha_two_is_gaussian_variance_two_sigma_squared():
    x = sample_sas(2.0, 1.5, size=200_000, seed=1, loc=3.0)
    assert abs(x.mean() - 3.0) < 0.02
    np.testing.assert_allclose(x.var(), 2 * 1.5**2, rtol=0.01)
    assert sps.kstest(x, sps.norm(3.0, np.sqrt(2) * 1.5).cdf).pvalue > 0.01


def test_alpha_one_is_cauchy():
    x = sample_sas(1.0, 2.0, size=20_000, seed=2)
    assert sps.kstest(x, sps.cauchy(0, 2.0).cdf).pvalue > 0.01


def test_seeding_and_shapes():
    a = sample_sas(1.5, size=(3, 4), seed=5)
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, sample_sas(1.5, size=(3, 4), seed=5))
    assert not np.array_equal(a, sample_sas(1.5, size=(3, 4), seed=6))
    g = np.random.default_rng(5)
    first, second = sample_sas(1.5, size=4, seed=g), sample_sas(1.5, size=4, seed=g)
    assert not np.array_equal(first, second)  # a Generator is advanced, not reset
    assert sample_sas(1.5, size=0, seed=1).shape == (0,)


def test_kappa():
    assert kappa(2.0) == 2.0
    np.testing.assert_allclose(kappa([1.5, 1.25]), [3.0, 5.0])
    assert inv_kappa(1.0) == 0.0 and inv_kappa(2.0) == 0.5
    np.testing.assert_allclose(mean_scale(1.5, 2.0, 8.0), 2.0 * 8.0 ** (-1 / 3))


@settings(max_examples=6, **SETTINGS)
@given(alpha=st.floats(1.15, 1.8), seed=st.integers(0, 2**16))
def test_sample_mean_concentrates_at_rate_n_to_minus_one_over_kappa(alpha, seed):
    # The mean of N SαS(α, σ) is SαS(α, σ N^{−1/κ}): IQR of means vs N has log-log slope −1/κ.
    rng = np.random.default_rng(seed)
    ns = np.array([1, 4, 16, 64, 256])
    iqr = [np.subtract(*np.percentile(sample_sas(alpha, 1.0, size=(4000, n), seed=rng).mean(1), [75, 25]))
           for n in ns]
    slope = np.polyfit(np.log(ns), np.log(iqr), 1)[0]
    assert abs(slope + 1.0 / kappa(alpha)) < 0.04, (slope, -1 / kappa(alpha))
