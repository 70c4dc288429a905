"""Tests of theory/expansion.py (laid out like the code: docs/testing.md).

theory.expansion (docs/theory.md §4.2): ε-expansion of Jacobian products, Γ, constant-gate
transport, leaky / heavy-ball identities -- symbolic results against numerics."""


from __future__ import annotations

import importlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from theory import cells, expansion as ex


SETTINGS = dict(deadline=None, derandomize=True, database=None)


def _mats(rng, n, m, scale=1.0):
    return [rng.normal(0, scale / np.sqrt(m), (m, m)) for _ in range(n)]


def _fd1(As, Bs, h):
    return (ex.product_numeric(As, Bs, h) - ex.product_numeric(As, Bs, -h)) / (2 * h)


def _fd2(As, Bs, h):
    return (ex.product_numeric(As, Bs, h) - 2 * ex.product_numeric(As, Bs, 0.0)
            + ex.product_numeric(As, Bs, -h)) / (2 * h * h)


def _loglog_slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def _trajectory_jacobians(cell, n, seed, H=2, D=1):
    """Exact Jacobians of a real cell along a trajectory (from theory.cells' derived map)."""
    rng = np.random.default_rng(seed)
    P = {k: rng.normal(0, 0.6, shp) for k, shp in cells.param_shapes(cell, H, D).items()}
    step, jac = cells.step_fn(cell, H=H, D=D), cells.jacobian_fn(cell, H=H, D=D)
    h = np.zeros(H)
    Js, leaks = [], []
    for _ in range(n):
        x = rng.normal(size=D)
        J = jac(P, x, h)
        pre = P["W_s"] @ x + P["b_s"] + P["U_s"] @ h  # diaggate leak 1 − s_t
        leaks.append(1 - 1 / (1 + np.exp(-pre)))
        Js.append(J)
        h = step(P, x, h)
    return Js, np.array(leaks)


def _lwsim():
    try:
        lw = importlib.import_module("lwsim")
    except Exception:  # noqa: BLE001
        return None
    return lw if hasattr(lw, "make_cell") else None


# ----------------------------------------------------------------------------------------------
# product_expansion
# ----------------------------------------------------------------------------------------------


def test_noncommutativity_is_kept():
    A1, A2 = ex.product_expansion(2).A
    B1, B2 = ex.product_expansion(2).B
    L1 = ex.first_order_coefficient(2)
    assert sp.expand(L1 - (A1 * B2 + B1 * A2)) == 0
    assert sp.expand(L1 - (B2 * A1 + B1 * A2)) != 0


# ----------------------------------------------------------------------------------------------
# product_coefficient
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# symbolic structure
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_symbolic_coefficients(n):
    # diff-derived == expand/coeff-derived == the documented closed form
    assert sp.expand(ex.first_order_coefficient(n) - ex.product_coefficient(n, 1)) == 0
    assert sp.expand(ex.first_order_coefficient(n) - ex.first_order_closed_form(n)) == 0
    assert sp.expand(ex.second_order_coefficient(n) - ex.product_coefficient(n, 2)) == 0
    assert sp.expand(ex.second_order_coefficient(n) - ex.second_order_closed_form(n)) == 0
    pe = ex.product_expansion(n)
    assert ex.product_coefficient(n, 0) == sp.Mul(*pe.A)
    # word counts: n words at first order, C(n,2) at second order, 2^n in all
    assert len(sp.Add.make_args(ex.first_order_coefficient(n))) == n
    assert len(sp.Add.make_args(pe.expanded)) == 2**n
    if n >= 2:
        assert len(sp.Add.make_args(ex.second_order_coefficient(n))) == n * (n - 1) // 2


# ----------------------------------------------------------------------------------------
# numeric: finite differences in ε of products of random matrices
# ----------------------------------------------------------------------------------------
@settings(max_examples=15, **SETTINGS)
@given(n=st.integers(1, 6), m=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_coefficients_match_finite_differences(n, m, seed):
    rng = np.random.default_rng(seed)
    As, Bs = _mats(rng, n, m), _mats(rng, n, m)
    L1 = ex.first_order_numeric(As, Bs)
    L2 = ex.second_order_numeric(As, Bs)
    F0 = ex.product_numeric(As, Bs, 0.0)
    scale = max(1.0, np.abs(L1).max(), np.abs(L2).max(), np.abs(F0).max())
    np.testing.assert_allclose(ex.evaluate_words(ex.product_coefficient(n, 0), As, Bs), F0,
                               atol=1e-13 * scale)
    np.testing.assert_allclose(L1, _fd1(As, Bs, 1e-5), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(L2, _fd2(As, Bs, 1e-3), rtol=0, atol=1e-5 * scale)
    # the full polynomial: Σ_k ε^k coeff_k == F(ε) exactly, at ε = 0.7
    full = sum(0.7**kk * ex.evaluate_words(ex.product_coefficient(n, kk), As, Bs)
               for kk in range(n + 1))
    np.testing.assert_allclose(full, ex.product_numeric(As, Bs, 0.7), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# first_order_numeric
# ----------------------------------------------------------------------------------------------


@settings(max_examples=3, **SETTINGS)
@given(seed=st.integers(0, 1000))
def test_expansion_on_lwsim_jacobians(seed):
    lw = _lwsim()
    if lw is None:
        pytest.skip("lwsim.make_cell not available yet")
    c = lw.make_cell("diaggate", n_in=2, n_hidden=3, n_out=1, layernorm=True, bias=True,
                     dtype="float64")
    params = c.init_params(seed=seed, scheme="normal")
    x = np.random.default_rng(seed).normal(size=(5, 1, 2))
    J = np.asarray(c.jacobians(params, x, backend="numpy"))[:, 0]
    leak = np.asarray(c.forward(params, x, backend="numpy").leak)[:, 0]
    Js, d = list(J[::-1]), leak[::-1]
    As = [np.diag(dj) for dj in d]
    Bs = [Jj - A for Jj, A in zip(Js, As)]
    L1 = ex.first_order_numeric(As, Bs)
    np.testing.assert_allclose(L1, _fd1(As, Bs, 1e-5), rtol=0, atol=1e-9)
    r = np.stack([np.diag(B) for B in Bs])
    np.testing.assert_allclose(np.diag(ex.product_numeric(As, Bs, 0.0) + L1),
                               ex.gamma_fn(len(d))(d, r), rtol=1e-10, atol=1e-14)


@settings(max_examples=20, **SETTINGS)
@given(m=st.integers(1, 5), s=st.floats(0.01, 1.0), L=st.integers(1, 12),
       seed=st.integers(0, 2**31 - 1))
def test_constgate_closed_forms_vs_matrix_powers(m, s, L, seed):
    W = np.random.default_rng(seed).normal(0, 1 / np.sqrt(m), (m, m))
    exact = ex.constgate_exact_numeric(W, s, L)
    first = ex.constgate_first_order_numeric(W, s, L)
    rem = ex.constgate_remainder_numeric(W, s, L)
    scale = max(1.0, np.abs(exact).max())
    np.testing.assert_allclose(first + rem, exact, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(first, (1 - s) ** L * np.eye(m) + L * s * (1 - s) ** (L - 1) * W,
                               rtol=1e-12, atol=1e-14)
    nW = np.linalg.norm(W, 2)
    assert np.linalg.norm(rem, 2) <= ex.constgate_remainder_bound_fn()(s, L, nW) * (1 + 1e-9) + 1e-14
    if L <= 6:  # first order == F0 + L₁ of the product with A = (1−s)I, B = sW
        As = [(1 - s) * np.eye(m)] * L
        Bs = [s * W] * L
        np.testing.assert_allclose(first, ex.product_numeric(As, Bs, 0.0) + ex.first_order_numeric(As, Bs),
                                   rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------------------------
# product_numeric
# ----------------------------------------------------------------------------------------------


@settings(max_examples=10, **SETTINGS)
@given(n=st.integers(2, 6), m=st.integers(2, 4), seed=st.integers(0, 2**31 - 1))
def test_truncation_error_slopes(n, m, seed):
    rng = np.random.default_rng(seed)
    As, Bs = _mats(rng, n, m), _mats(rng, n, m)
    L1 = ex.first_order_numeric(As, Bs)
    L2 = ex.second_order_numeric(As, Bs)
    if np.linalg.norm(L2) < 1e-3 * (1 + np.linalg.norm(L1)):
        return  # degenerate draw (no ε² term to see)
    F0 = ex.product_numeric(As, Bs, 0.0)
    epss = np.logspace(-5, -3, 5)
    E1 = [np.linalg.norm(ex.product_numeric(As, Bs, e) - F0 - e * L1) for e in epss]
    assert abs(_loglog_slope(epss, E1) - 2.0) < 0.1
    # and the ε² coefficient is the limit of E/ε²
    np.testing.assert_allclose(E1[0] / epss[0] ** 2, np.linalg.norm(L2), rtol=1e-3)
    if n >= 3:
        L3 = ex.evaluate_words(ex.product_coefficient(n, 3), As, Bs)
        if np.linalg.norm(L3) > 1e-3:
            epss3 = np.logspace(-3, -2, 5)
            E2 = [np.linalg.norm(ex.product_numeric(As, Bs, e) - F0 - e * L1 - e * e * L2)
                  for e in epss3]
            assert abs(_loglog_slope(epss3, E2) - 3.0) < 0.1


@settings(max_examples=6, **SETTINGS)
@given(n=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_expansion_on_real_cell_jacobians(n, seed):
    Js, d = _trajectory_jacobians("diaggate", n, seed)
    # transport M = J_t ⋯ J_{t−n+1}: product order is latest first
    Js, d = Js[::-1], d[::-1]
    As = [np.diag(dj) for dj in d]
    Bs = [J - A for J, A in zip(Js, As)]
    np.testing.assert_allclose(ex.product_numeric(As, Bs, 1.0), np.linalg.multi_dot(Js + [np.eye(2)]),
                               rtol=1e-12, atol=1e-14)
    L1 = ex.first_order_numeric(As, Bs)
    np.testing.assert_allclose(L1, _fd1(As, Bs, 1e-5), rtol=0, atol=1e-8)
    r = np.stack([np.diag(B) for B in Bs])
    np.testing.assert_allclose(np.diag(ex.product_numeric(As, Bs, 0.0) + L1), ex.gamma_fn(n)(d, r),
                               rtol=1e-10, atol=1e-13)


# ----------------------------------------------------------------------------------------------
# gamma_expansion
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# Γ: diagonal-leak specialisation
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_gamma_symbolic(n):
    g = ex.gamma_expansion(n)
    expect_rel = 1 + sum(r / d for d, r in zip(g.d, g.r))
    assert sp.simplify(g.relative - expect_rel) == 0
    assert sp.expand(g.gamma - g.first_order) == 0
    assert g.zero_order == sp.Mul(*g.d)
    # generic-n (log-space) derivation agrees with the concrete-n series
    G, G0, (nn, j, d, r) = ex.gamma_general()
    sub = {d[jj + 1]: g.d[jj] for jj in range(n)}
    sub.update({r[jj + 1]: g.r[jj] for jj in range(n)})
    Gn = G.subs(nn, n).doit().subs(sub)
    assert sp.simplify(Gn - g.gamma) == 0
    assert sp.simplify(G0.subs(nn, n).doit().subs(sub) - g.zero_order) == 0


# ----------------------------------------------------------------------------------------------
# gamma_fn
# ----------------------------------------------------------------------------------------------


@settings(max_examples=15, **SETTINGS)
@given(n=st.integers(1, 7), m=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_gamma_equals_diagonal_of_product_expansion(n, m, seed):
    rng = np.random.default_rng(seed)
    d = rng.uniform(0.05, 1.0, size=(n, m))
    Es = _mats(rng, n, m, scale=0.5)  # full off-diagonal perturbations E_j
    r = np.stack([np.diag(E) for E in Es])
    As = [np.diag(dj) for dj in d]
    # diag(F(0) + F'(0)) (central differences in ε) == Γ; diag F(0) == Γ⁰
    first = np.diag(ex.product_numeric(As, Es, 0.0) + _fd1(As, Es, 1e-5))
    np.testing.assert_allclose(ex.gamma_fn(n)(d, r), first, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ex.gamma_zero_order_fn(n)(d), np.prod(d, axis=0), rtol=1e-13)
    # and through the symbolic L₁ evaluated on the matrices
    np.testing.assert_allclose(np.diag(ex.product_numeric(As, Es, 0.0) + ex.first_order_numeric(As, Es)),
                               ex.gamma_fn(n)(d, r), rtol=1e-10, atol=1e-12)
    # scalar products: Π(d_j + ε r_j) to first order
    q = 0
    f = lambda e: np.prod(d[:, q] + e * r[:, q])  # noqa: E731
    np.testing.assert_allclose(f(0) + (f(1e-6) - f(-1e-6)) / 2e-6, ex.gamma_fn(n)(d, r)[q],
                               rtol=1e-7, atol=1e-9)


# ----------------------------------------------------------------------------------------------
# constgate_transport
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# constant gate, linearised
# ----------------------------------------------------------------------------------------
def test_constgate_symbolic():
    t = ex.constgate_transport()
    s, ell, w, k = ex.s, ex.ell, ex.w, ex.k
    assert sp.simplify(t.first_order - ((1 - s) ** ell + ell * s * (1 - s) ** (ell - 1) * w)) == 0
    assert sp.simplify(t.coefficient - sp.binomial(ell, k) * s**k * (1 - s) ** (ell - k)) == 0
    for L in range(1, 8):
        poly = sp.Poly(sp.expand(t.exact.subs(ell, L)), w)
        for kk in range(L + 1):
            assert sp.simplify(poly.coeff_monomial(w**kk) - t.coefficient.subs({ell: L, k: kk})) == 0
        assert sp.expand(t.remainder.subs(ell, L).doit() - t.remainder_closed.subs(ell, L)) == 0


# ----------------------------------------------------------------------------------------------
# leaky_unrolled
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# [B]'s identities
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_leaky_and_heavy_ball_symbolic(n):
    h, u, h0 = ex.leaky_unrolled(n)
    i = ex.i_
    K, K0 = ex.leaky_kernel(), ex.leaky_initial_factor()
    closed = sum(K.subs(i, j) * u[n - 1 - j] for j in range(n)) + K0.subs(i, n) * h0
    assert sp.expand(h - closed) == 0
    v, g = ex.heavy_ball_unrolled(n)
    assert sp.expand(v - sum(ex.heavy_ball_kernel().subs(i, j) * g[n - 1 - j] for j in range(n))) == 0
    # leaky state (h_0 = 0) = s × heavy-ball sum with β = 1 − s
    assert sp.expand(h.subs(h0, 0) - ex.s * v.subs(ex.beta, 1 - ex.s).subs(dict(zip(g, u)))) == 0
    assert ex.leaky_over_heavy_ball() == ex.s


# ----------------------------------------------------------------------------------------------
# leaky_kernel
# ----------------------------------------------------------------------------------------------


@settings(max_examples=15, **SETTINGS)
@given(s=st.floats(0.01, 0.99), n=st.integers(1, 60), seed=st.integers(0, 2**31 - 1))
def test_leaky_and_heavy_ball_numeric(s, n, seed):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 3))
    h0 = rng.normal(size=3)
    kern = sp.lambdify([ex.s, ex.i_], ex.leaky_kernel(), "numpy")
    k0 = sp.lambdify([ex.s, ex.i_], ex.leaky_initial_factor(), "numpy")
    hb = sp.lambdify([ex.beta, ex.i_], ex.heavy_ball_kernel(), "numpy")
    h, v = h0.copy(), np.zeros(3)
    for t in range(n):
        h = (1 - s) * h + s * u[t]
        v = (1 - s) * v + u[t]  # heavy ball, β = 1 − s
    idx = np.arange(n)
    unrolled = (kern(s, idx)[:, None] * u[::-1]).sum(0) + k0(s, n) * h0
    np.testing.assert_allclose(h, unrolled, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(v, (hb(1 - s, idx)[:, None] * u[::-1]).sum(0), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(h - k0(s, n) * h0, s * v, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# lag_schedule
# ----------------------------------------------------------------------------------------------


@settings(max_examples=15, **SETTINGS)
@given(s=st.floats(0.005, 0.95), m=st.integers(1, 4))
def test_lag_schedule_and_time_constant(s, m):
    tau = ex.time_constant_fn()(s)
    mu = sp.lambdify([ex.s, ex.ell], ex.lag_schedule(), "numpy")
    ells = np.arange(1, 30)
    # zero-order transport of the linear constgate with W = 0: ((1−s)I)^ℓ, diagonal = μ_ℓ
    for L in (1, 7, 29):
        np.testing.assert_allclose(np.diag(np.linalg.matrix_power((1 - s) * np.eye(m), L)),
                                   mu(s, L), rtol=1e-12)
    np.testing.assert_allclose(mu(s, ells), np.exp(-ells / tau), rtol=1e-10)
    # the OLS fit of docs/diagnostics.md §2.6 (log μ = a + bℓ, τ = −1/b) recovers τ
    b = np.polyfit(ells, np.log(mu(s, ells)), 1)[0]
    np.testing.assert_allclose(-1 / b, tau, rtol=1e-8)
    assert sp.limit(ex.time_constant() * ex.s, ex.s, 0) == 1  # τ ≈ 1/s for small s
