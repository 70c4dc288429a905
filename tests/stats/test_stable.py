"""Tests of lwsim/stats/stable.py (laid out like the code: docs/testing.md).

lwsim.stats.stable (docs/statistics.md §3.1, docs/theory.md §4.3): CMS sampler, κ_α, sample-mean concentration.

Tests that kill the surviving mutants of mutmut on lwsim/stats (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.

lwsim.stats: every bad input gets a ValueError/TypeError naming the argument (no silent NaN)."""


from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps

from lwsim.stats import inv_kappa, kappa, mean_scale, sample_sas


SETTINGS = dict(deadline=None, derandomize=True, database=None)


# ----------------------------------------------------------------------------------------------
# sample_sas
# ----------------------------------------------------------------------------------------------


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


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(alpha=0.0), ValueError, "alpha"), (dict(alpha=2.01), ValueError, "alpha"),
    (dict(alpha=np.nan), ValueError, "alpha"), (dict(alpha="1.5"), TypeError, "alpha"),
    (dict(alpha=1.5, sigma=0.0), ValueError, "sigma"), (dict(alpha=1.5, sigma=-1.0), ValueError, "sigma"),
    (dict(alpha=1.5, loc=np.inf), ValueError, "loc"),
    (dict(alpha=1.5, size=-1), ValueError, "size"), (dict(alpha=1.5, size=(2, -3)), ValueError, r"size\[1\]"),
    (dict(alpha=1.5, size=2.5), TypeError, "size"),
    (dict(alpha=1.5, seed=-1), ValueError, "seed"), (dict(alpha=1.5, seed="x"), TypeError, "seed"),
])
def test_sample_sas_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sample_sas(**kwargs)


# ----------------------------------------------------------------------------------------------
# kappa
# ----------------------------------------------------------------------------------------------


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


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.5, [1.5, 1.0]])
def test_kappa_domain(alpha):
    with pytest.raises(ValueError, match="alpha"):
        kappa(alpha)


# ----------------------------------------------------------------------------------------------
# inv_kappa
# ----------------------------------------------------------------------------------------------


def test_kappa_inv_kappa_scalar_float_array_array_and_boundaries():
    assert type(kappa(1.5)) is float and kappa(1.5) == pytest.approx(3.0)
    assert type(inv_kappa(1.5)) is float and inv_kappa(1.5) == pytest.approx(1 / 3)
    np.testing.assert_allclose(inv_kappa(np.array([1.0, 1.25, 2.0])), [0.0, 0.2, 0.5])
    assert isinstance(inv_kappa(np.array([1.25])), np.ndarray)
    assert isinstance(kappa(np.array([1.25])), np.ndarray)


# ----------------------------------------------------------------------------------------------
# mean_scale
# ----------------------------------------------------------------------------------------------


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


def test_mean_scale_hand_numbers():
    # sigma n^(1/alpha - 1): alpha = 2, n = 4 -> 1/2; alpha = 1 -> sigma (no concentration)
    assert mean_scale(2.0, 1.0, 4.0) == 0.5 and type(mean_scale(2.0, 1.0, 4)) is float
    assert mean_scale(1.0, 3.0, 100.0) == pytest.approx(3.0)
    np.testing.assert_allclose(mean_scale(1.5, 2.0, np.array([1.0, 8.0, 64.0])), [2.0, 1.0, 0.5])
    assert mean_scale(0.5, 1.0, 2.0) == pytest.approx(2.0)   # alpha in (0, 1]: n^(+1)


# ----------------------------------------------------------------------------------------------
# sas_tail_quantile, mean_lower_bound (docs/statistics.md §3.3.3)
# ----------------------------------------------------------------------------------------------


def test_sas_tail_quantile_table_and_types(monkeypatch):
    from scipy.stats import cauchy, norm
    from lwsim.stats import stable as stb
    monkeypatch.setattr(stb, "_TAIL", None)                       # load the table in this test
    q2 = stb.sas_tail_quantile(2.0)
    assert type(q2) is float and q2 == pytest.approx(np.sqrt(2) * norm.ppf(0.9995), rel=1e-12)
    assert stb.sas_tail_quantile(1.0) == pytest.approx(cauchy.ppf(0.9995), rel=1e-12)
    q = stb.sas_tail_quantile(np.array([1.5, 1.9]))
    assert isinstance(q, np.ndarray) and q.shape == (2,) and q[0] > q[1] > q2
    for bad in (0.99, 2.01):
        with pytest.raises(ValueError, match=r"^alpha must lie in \[1, 2\]"):
            stb.sas_tail_quantile(bad)
    with pytest.raises(ValueError, match=r"\balpha\b"):
        stb.sas_tail_quantile(np.nan)
    # the message names the first value outside [1, 2], not an endpoint or an inside value before it
    with pytest.raises(ValueError, match=r"\balpha\b.*got 2\.5$"):
        stb.sas_tail_quantile(np.array([1.0, 1.5, 2.0, 2.5]))
    with pytest.raises(ValueError, match=r"\balpha\b.*got 0\.5$"):
        stb.sas_tail_quantile(np.array([2.0, 0.5]))


def test_mean_lower_bound_by_hand_and_bad_input():
    from lwsim.stats import stable as stb
    q2 = stb.sas_tail_quantile(2.0)
    v = stb.mean_lower_bound(-1.0, 2.0, 1.0, 100)                  # |m̄| 1 − q(2)·1·100^{−1/2}
    assert type(v) is float and v == pytest.approx(1 - q2 / 10, rel=1e-14)
    assert stb.mean_lower_bound(0.1, 2.0, 1.0, 100) == 0.0
    out = stb.mean_lower_bound([1.0, 2.0], 2.0, [1.0, 0.0], 100)
    assert isinstance(out, np.ndarray) and out.tolist() == pytest.approx([1 - q2 / 10, 2.0])
    for kw, name in ((dict(sigma=-1.0), "sigma"), (dict(n=0.0), "n"), (dict(mean=np.nan), "mean"),
                     (dict(alpha=np.nan), "alpha")):
        args = dict(mean=1.0, alpha=2.0, sigma=1.0, n=100.0) | kw
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            stb.mean_lower_bound(**args)
