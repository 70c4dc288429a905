"""Tests of lwsim/stats/decay_author.py (laid out like the code: docs/testing.md).

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ.

Tests that kill the surviving mutants of mutmut on lwsim/stats (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself."""


from __future__ import annotations

import math

import numpy as np
import pytest

from lwsim import stats
from lwsim.stats.decay_author import author_lc_grid, tempered_author


# ----------------------------------------------------------------------------------------------
# author_lc_grid
# ----------------------------------------------------------------------------------------------


def test_author_lc_grid_ends_by_hand():
    g = author_lc_grid([2.0, 5.0, 10.0])          # [0.5·2, 2·10] = [1, 20], 40 log-spaced values
    assert len(g) == 40
    np.testing.assert_allclose([g[0], g[-1]], [1.0, 20.0], rtol=1e-12)
    g = author_lc_grid([1e-13])                  # floor 1e−12, and hi = max(1.001·lo, 2e−13)
    np.testing.assert_allclose([g[0], g[-1]], [1e-12, 1.001e-12], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# tempered_author
# ----------------------------------------------------------------------------------------------


# ---- tempered law: free cutoff coefficient, p = 5 ------------------------------------------------
def test_author_tempered_law():
    ell = np.arange(1, 33, dtype=float)
    f = 3 * ell ** -0.4 * np.exp(-0.6 * (ell / 9) ** 0.8) * np.exp(0.02 * np.random.default_rng(1).standard_normal(32))
    laws = ("exponential", "power", "tempered")          # keeps ℓ = 1 (no log log ℓ)
    fit = stats.fit_decay(ell, f, laws=laws, conventions="author").fits["tempered"]
    y = np.log(f)
    lo, hi = 0.5, 64.0
    best = (np.inf,)
    for k in (0.25, 0.35, 0.5, 0.7, 1.0, 1.3, 1.6):
        for lc in np.logspace(np.log10(lo), np.log10(hi), 40):
            X = np.column_stack([np.ones(32), np.log(ell), (ell / lc) ** k])
            c = np.linalg.lstsq(X, y, rcond=None)[0]
            ssr = ((y - X @ c) ** 2).sum()
            if ssr < best[0]:
                best = (ssr, c, lc, k)
    ssr, c, lc, k = best
    assert fit.p == 5 and fit.params["k"] == k and fit.params["l_c"] == pytest.approx(lc, rel=1e-12)
    np.testing.assert_allclose([fit.params["beta"], fit.params["cutoff_coeff"], fit.ssr], [-c[1], -c[2], ssr],
                               rtol=1e-8)
    np.testing.assert_allclose(fit.aic, 32 * np.log(ssr / 32) + 10, rtol=1e-12)
    params, s2 = tempered_author(ell, y)
    assert params == fit.params and s2 == fit.ssr
    lw = stats.fit_decay(ell, f, laws=laws).fits["tempered"]
    assert lw.p == 4 and "cutoff_coeff" not in lw.params and lw.ssr != fit.ssr


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
