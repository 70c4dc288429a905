"""Tests of theory/stable.py (laid out like the code: docs/testing.md).

theory.stable (docs/theory.md §4.3): κ_α and the SαS sample-mean scale σ N^{−1/κ_α}."""


from __future__ import annotations

import importlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings, strategies as st

from theory import stable as ts


SETTINGS = dict(deadline=None, derandomize=True, database=None)


def _iqr_slope(sampler, alpha, sigma, Ns, reps, seed):
    rng = np.random.default_rng(seed)
    iqr = []
    for N in Ns:
        m = sampler(alpha, sigma, (reps, N), rng).mean(axis=1)
        q75, q25 = np.percentile(m, [75, 25])
        iqr.append(q75 - q25)
    return np.polyfit(np.log(Ns), np.log(iqr), 1)[0]


NS = np.array([2, 16, 128])


def _sample_sas():
    try:
        mod = importlib.import_module("lwsim.stats")
    except Exception:  # noqa: BLE001
        return None
    fn = getattr(mod, "sample_sas", None)
    if fn is None:
        try:
            fn = importlib.import_module("lwsim.stats.stable").sample_sas
        except Exception:  # noqa: BLE001
            return None
    return fn


# ----------------------------------------------------------------------------------------------
# kappa_alpha
# ----------------------------------------------------------------------------------------------


def test_symbolic_results():
    a, sig, N, k = ts.alpha, ts.sigma, ts.N, ts.kappa
    assert sp.simplify(ts.kappa_alpha() - a / (a - 1)) == 0
    assert sp.simplify(ts.sample_mean_scale() - sig * N ** (1 / a - 1)) == 0
    assert sp.simplify(ts.mean_scale_exponent() - (1 / a - 1)) == 0
    assert sp.simplify(ts.sample_mean_scale_kappa() - sig * N ** (-1 / k)) == 0
    assert sp.simplify(ts.alpha_of_kappa().subs(k, ts.kappa_alpha()) - a) == 0
    assert ts.kappa_alpha().subs(a, 2) == 2  # Gaussian: the usual N^{-1/2}
    assert sp.simplify(ts.dkappa_dalpha() + 1 / (a - 1) ** 2) == 0


# ----------------------------------------------------------------------------------------------
# kappa_fn
# ----------------------------------------------------------------------------------------------


@settings(max_examples=30, **SETTINGS)
@given(alpha=st.floats(1.05, 2.0), sigma=st.floats(0.1, 5.0), N=st.integers(1, 10**6),
       t=st.floats(-10, 10))
@example(alpha=2.0, sigma=1.0, N=41223, t=1.0)          # found by a clean-clone run: rounding of φ near 1
def test_characteristic_function_of_mean(alpha, sigma, N, t):
    phi = ts.characteristic_function_fn()
    sN = ts.sample_mean_scale_fn()(sigma=sigma, N=N, alpha=alpha)
    # φ(t/N)^N computed in log space, and φ with the derived scale σ_N
    lhs = N * np.log(phi(abs(t) / N, sigma, alpha)) if t != 0 else 0.0
    rhs = np.log(phi(abs(t), sN, alpha)) if t != 0 else 0.0
    # φ(t/N) rounds to 1 ± 1.1e−16 in float64; N log φ(t/N) carries that rounding N times
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-12 + N * 2.3e-16)
    kap = ts.kappa_fn()(alpha)
    np.testing.assert_allclose(sN, sigma * N ** (-1.0 / kap), rtol=1e-12)
    assert kap >= 2.0 - 1e-12
    assert ts.kappa_fn()(alpha - 0.01) > kap  # heavier tails → larger κ


@settings(max_examples=4, **SETTINGS)
@given(alpha=st.floats(1.2, 2.0), seed=st.integers(0, 2**31 - 1))
def test_monte_carlo_slope_scipy(alpha, seed):
    """IQR of SαS sample means (scipy's CMS sampler, same parameterisation) vs N: slope −1/κ_α."""
    from scipy.stats import levy_stable

    def sampler(a, s, size, rng):
        return levy_stable.rvs(a, 0.0, scale=s, size=size, random_state=rng)

    slope = _iqr_slope(sampler, alpha, 1.3, NS, 3000, seed)
    expected = -1.0 / ts.kappa_fn()(alpha)
    assert abs(slope - expected) < 0.05, (slope, expected)


@settings(max_examples=4, **SETTINGS)
@given(alpha=st.floats(1.2, 2.0), sigma=st.floats(0.2, 3.0), seed=st.integers(0, 2**31 - 1))
def test_monte_carlo_slope_lwsim(alpha, sigma, seed):
    """Same with lwsim's sampler (skipped until lwsim.stats provides sample_sas)."""
    sample_sas = _sample_sas()
    if sample_sas is None:
        pytest.skip("lwsim.stats.sample_sas not available yet")

    def sampler(a, s, size, rng):
        return np.asarray(sample_sas(a, sigma=s, size=size, seed=rng))

    slope = _iqr_slope(sampler, alpha, sigma, NS, 3000, seed)
    expected = -1.0 / ts.kappa_fn()(alpha)
    assert abs(slope - expected) < 0.05, (slope, expected)
    # and the absolute scale: IQR(mean of N) / IQR(single) == N^{-1/κ}
    rng = np.random.default_rng(seed + 1)
    one = np.asarray(sample_sas(alpha, sigma=sigma, size=40000, seed=rng))
    many = np.asarray(sample_sas(alpha, sigma=sigma, size=(4000, 64), seed=rng)).mean(axis=1)
    ratio = np.subtract(*np.percentile(many, [75, 25])) / np.subtract(*np.percentile(one, [75, 25]))
    pred = ts.sample_mean_scale_fn()(sigma=1.0, N=64, alpha=alpha)
    assert abs(np.log(ratio / pred)) < 0.12, (ratio, pred)


@settings(max_examples=20, **SETTINGS)
@given(alpha=st.floats(1.01, 2.0), sigma=st.floats(0.1, 5.0), N=st.integers(1, 10**6))
def test_lwsim_closed_forms_match_derivation(alpha, sigma, N):
    """lwsim.stats' κ_α, 1/κ_α and mean scale equal the derived expressions."""
    try:
        mod = importlib.import_module("lwsim.stats")
    except Exception:  # noqa: BLE001
        pytest.skip("lwsim.stats not available yet")
    if not all(hasattr(mod, n) for n in ("kappa", "inv_kappa", "mean_scale")):
        pytest.skip("lwsim.stats lacks kappa / inv_kappa / mean_scale")
    k = ts.kappa_fn()(alpha)
    np.testing.assert_allclose(mod.kappa(alpha), k, rtol=1e-12)
    np.testing.assert_allclose(mod.inv_kappa(alpha), 1.0 / k, rtol=1e-12)
    np.testing.assert_allclose(mod.mean_scale(alpha, sigma, N),
                               ts.sample_mean_scale_fn()(sigma=sigma, N=N, alpha=alpha), rtol=1e-12)
