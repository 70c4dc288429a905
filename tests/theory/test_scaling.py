"""Tests of theory/scaling.py (laid out like the code: docs/testing.md).

theory.scaling (docs/statistics.md §3.3, docs/theory.md §4.4): sample complexity and the learnability window."""


from __future__ import annotations

import importlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from theory import scaling as sc


SETTINGS = dict(deadline=None, derandomize=True, database=None)


LAWS = sc.LAWS


PNAME = {"exponential": "lam", "power": "beta", "logarithmic": "gamma"}


def _params():
    """(law, kwargs) with N > 1 and windows in a numerically sane range."""
    return st.sampled_from(LAWS).flatmap(lambda law: st.fixed_dictionaries({
        "law": st.just(law),
        "N": st.floats(2.0, 1e6),
        "kappa": st.floats(1.0, 8.0),
        "C": st.floats(0.2, 5.0),
        "A": st.floats(0.2, 5.0),
        "p": st.floats(0.3, 3.0) if law != "logarithmic" else st.floats(1.0, 4.0),
    }))


def _window(d):
    law = d["law"]
    f = sc.learnability_window_fn(law)
    return f(N=d["N"], kappa=d["kappa"], C=d["C"], A=d["A"], **{PNAME[law]: d["p"]})


def _f(law, x, C, p):
    return sc.envelope_fn(law)(x, C, p)


def _finite(d):
    with np.errstate(all="ignore"):
        h = _window(d)
    return np.isfinite(h) and 1.0 < h < 1e12


# ----------------------------------------------------------------------------------------
# against lwsim's detection rule (skipped until lwsim.stats.detection exists)
# ----------------------------------------------------------------------------------------
def _detection():
    try:
        return importlib.import_module("lwsim.stats.detection")
    except Exception:  # noqa: BLE001
        return None


# ----------------------------------------------------------------------------------------
@settings(max_examples=40, **SETTINGS)
@given(d=_params())
def test_window_solves_threshold_equation(d):
    if not _finite(d):
        return
    law, N, k, C, A, p = d["law"], d["N"], d["kappa"], d["C"], d["A"], d["p"]
    H = _window(d)
    np.testing.assert_allclose(_f(law, H, C, p), A * N ** (-1 / k), rtol=1e-9)
    # sup{ℓ : f(ℓ) ≥ A N^{-1/κ}} on a fine grid around H_N (f decreasing)
    grid = np.linspace(max(1.0 + 1e-9, 0.5 * H), 2.0 * H, 4001)
    ok = grid[_f(law, grid, C, p) >= A * N ** (-1 / k)]
    assert ok.size and abs(ok.max() - H) <= (grid[1] - grid[0]) * 1.0001


# ----------------------------------------------------------------------------------------------
# law_parameter
# ----------------------------------------------------------------------------------------------


@settings(max_examples=30, **SETTINGS)
@given(d=_params())
def test_growth_exponents_against_finite_differences(d):
    if not _finite(d):
        return
    law = d["law"]
    g = float(sc.growth_exponent(law).subs({sc.kappa: d["kappa"], sc.law_parameter(law): d["p"]}))
    q = {"exponential": lambda h: h, "power": np.log, "logarithmic": lambda h: np.log(np.log(h))}[law]
    du = 1e-4
    hp = _window({**d, "N": d["N"] * np.exp(du)})
    hm = _window({**d, "N": d["N"] * np.exp(-du)})
    if not (np.isfinite(hp) and np.isfinite(hm)):
        return
    np.testing.assert_allclose((q(hp) - q(hm)) / (2 * du), g, rtol=1e-5)


@settings(max_examples=30, **SETTINGS)
@given(d=_params(), dk=st.floats(0.05, 2.0))
def test_heavier_tails_shrink_the_window_numeric(d, dk):
    if not _finite(d):
        return
    law = d["law"]
    H0 = _window(d)
    assert _window({**d, "kappa": d["kappa"] + dk}) < H0
    dH = sc.window_kappa_derivative(law)
    sub = {sc.N: d["N"], sc.kappa: d["kappa"], sc.C: d["C"], sc.A: d["A"], sc.law_parameter(law): d["p"]}
    h = 1e-6 * d["kappa"]
    fd = (_window({**d, "kappa": d["kappa"] + h}) - _window({**d, "kappa": d["kappa"] - h})) / (2 * h)
    np.testing.assert_allclose(float(dH.subs(sub)), fd, rtol=1e-5)


# ----------------------------------------------------------------------------------------------
# learnability_window
# ----------------------------------------------------------------------------------------------


def test_window_matches_spec_table():
    """The derived H_N equals the closed forms of the docs/theory.md §4.4 table."""
    N, k, C, A = sc.N, sc.kappa, sc.C, sc.A
    table = {
        "exponential": (1 / sc.lam) * (sp.log(C / A) + sp.log(N) / k),
        "power": (C / A) ** (1 / sc.beta) * N ** (1 / (k * sc.beta)),
        "logarithmic": sp.exp((C / A) ** (1 / sc.gamma) * N ** (1 / (k * sc.gamma))),
    }
    for law, expr in table.items():
        diff = sc.learnability_window(law) - expr
        assert sp.simplify(sp.expand_log(sp.powdenest(diff, force=True), force=True)) == 0, law
    # γ = 1 special case of the table
    g1 = sc.learnability_window("logarithmic").subs(sc.gamma, 1)
    assert sp.simplify(g1 - sp.exp((C / A) * N ** (1 / k))) == 0
    expected = {"exponential": 1 / (sc.lam * k), "power": 1 / (k * sc.beta),
                "logarithmic": 1 / (k * sc.gamma)}
    for law, e in expected.items():
        assert sp.simplify(sc.growth_exponent(law) - e) == 0


@settings(max_examples=10, **SETTINGS)
@given(law=st.sampled_from(LAWS), alpha=st.floats(1.2, 2.0), sigma=st.floats(0.1, 2.0),
       c=st.floats(0.5, 5.0), p=st.floats(0.5, 2.0), eps=st.floats(1.0, 30.0))
def test_lwsim_detection_rule_matches(law, alpha, sigma, c, p, eps):
    det = _detection()
    if det is None:
        pytest.skip("lwsim.stats.detection not available yet")
    from theory import stable as ts

    kap = ts.kappa_fn()(alpha)
    A = eps * sigma / c
    lags = np.arange(2, 200, dtype=float)
    f = _f(law, lags, 1.0, p)
    with np.errstate(over="ignore"):
        n_star = np.asarray(det.n_star(c * f, alpha, sigma, eps=eps))
        Nl = sc.samples_needed_fn(law)(H=lags, kappa=kap, C=1.0, A=A, **{PNAME[law]: p})
    np.testing.assert_allclose(n_star, Nl, rtol=1e-9)
    # Ĥ_N on the lag grid (with N̂ = N*) is the derived H_N rounded down to the grid
    for N in (1e2, 1e4, 1e6):
        Hhat = float(det.learnability_window(lags, n_star, N))
        with np.errstate(over="ignore"):
            H = sc.learnability_window_fn(law)(N=N, kappa=kap, C=1.0, A=A, **{PNAME[law]: p})
        expect = lags[lags <= H].max() if (lags <= H).any() else 0.0
        assert Hhat == expect, (Hhat, H)


# ----------------------------------------------------------------------------------------------
# samples_needed
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("law", LAWS)
def test_samples_needed_symbolic(law):
    # SNR at the derived N(ℓ) equals the threshold ε (A = εσ/c)
    Nl = sc.sample_complexity(law)
    snr_at = sc.snr(law).subs(sc.N, Nl).subs(sc.A, sc.A_definition())
    assert sp.simplify(sp.powdenest(snr_at, force=True) - sc.epsilon) == 0
    # inverse of the window, symbolically
    back = sc.samples_needed(law).subs(sc.H, sc.learnability_window(law))
    assert sp.simplify(sp.powdenest(sp.expand_log(back, force=True), force=True) - sc.N) == 0
    expect = sc.A**sc.kappa * sc.envelope(law, sc.H) ** (-sc.kappa)
    ratio = sp.expand_power_base(sp.powdenest(sc.samples_needed(law) / expect, force=True), force=True)
    assert sp.simplify(sp.powsimp(ratio, force=True)) == 1


# ----------------------------------------------------------------------------------------------
# samples_needed_fn
# ----------------------------------------------------------------------------------------------


@settings(max_examples=30, **SETTINGS)
@given(d=_params())
def test_samples_needed_is_the_inverse(d):
    if not _finite(d):
        return
    law, k, C, A, p = d["law"], d["kappa"], d["C"], d["A"], d["p"]
    H = _window(d)
    Nf = sc.samples_needed_fn(law)
    np.testing.assert_allclose(Nf(H=H, kappa=k, C=C, A=A, **{PNAME[law]: p}), d["N"], rtol=1e-7)
    # N(ℓ) = A^κ f(ℓ)^{−κ}
    np.testing.assert_allclose(Nf(H=H, kappa=k, C=C, A=A, **{PNAME[law]: p}),
                               A**k * _f(law, H, C, p) ** (-k), rtol=1e-9)


# ----------------------------------------------------------------------------------------------
# window_shrinks_with_kappa
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("law", LAWS)
def test_heavier_tails_shrink_the_window_symbolic(law):
    assert sc.window_shrinks_with_kappa(law) is True
