"""Tests of lwsim/diagnostics/gamma.py (laid out like the code: docs/testing.md).

Γ and Γ⁰ (docs/diagnostics.md §2.3): prefix sums vs direct loop, numba vs NumPy, exactness of Γ⁰,
first-order accuracy O(‖E‖²), closed form of the linear constgate.

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ."""


from __future__ import annotations

import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim.diagnostics.gamma import gate_factors

from cellcases import random_params
from helpers import _params


RNG = np.random.default_rng(0)


def _factors(T=9, B=2, H=3, seed=0):
    rng = np.random.default_rng(seed)
    d = rng.uniform(0.3, 0.99, (T, B, H))
    r = 0.2 * rng.standard_normal((T, B, H))
    e = rng.uniform(0.1, 1.0, (T, B, H))
    return d, r, e


def _gamma_direct(d, r, lags, order, readout=None):
    """Γ_{t,ℓ} = Π_{j=t−ℓ+1}^{t} d_j (1 + Σ r_j/d_j), one (t, ℓ) at a time."""
    T, B, H = d.shape
    out = np.full((len(lags), T, B, H), np.nan)
    for i, ell in enumerate(lags):
        for t in range(ell + 1, T + 1):
            prod, s = np.ones((B, H)), np.zeros((B, H))
            for j in range(t - ell + 1, t + 1):
                prod = prod * d[j - 1]
                s = s + r[j - 1] / d[j - 1]
            g = prod * (1 + s) if order == 1 else prod
            out[i, t - 1] = g if readout is None else g * readout[t - 1]
    return out


CELL_CASES = [("constgate", {"s": 0.3}), ("sharedgate", {"layernorm": True}), ("diaggate", {}),
              ("gru", {}), ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True})]


T, B, D, H = 12, 3, 3, 5


def _cell(name, ln=True):
    opts = {"layernorm": ln}
    if name == "constgate":
        opts["s"] = 0.3
    return lwsim.make_cell(name, D, H, 1, **opts)


def _x(seed=1, b=B, t=T):
    return np.random.default_rng(seed).standard_normal((t, b, D))


# ---- r_t without the LayerNorm Jacobian --------------------------------------------------------
def _hand_r_leaky(name, p, tr):
    """Author: r = (h̃ − h_{t−1}) s' u_qq + s (1 − h̃²) W_h,qq, loop over t, b, q."""
    out = np.zeros((T, B, H))
    for t in range(T):
        for b in range(B):
            for q in range(H):
                s = 1.0 - tr.leak[t, b, q]
                hp, c = tr.h[t, b, q], tr.cand[t, b, q]
                v = s * (1.0 - c * c) * p["W_h"][q, q]
                if name == "diaggate":
                    v += (c - hp) * s * (1.0 - s) * p["U_s"][q, q]
                elif name == "sharedgate":
                    v += (c - hp) * s * (1.0 - s) * p["u_s"][q]
                out[t, b, q] = v
    return out


# ----------------------------------------------------------------------------------------------
# gate_factors
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["constgate", "sharedgate", "diaggate"])
def test_author_r_leaky_cells(name):
    cell = _cell(name)
    p, x = _params(cell), _x()
    fa = gate_factors(cell, p, x, conventions="author")
    np.testing.assert_allclose(fa.r, _hand_r_leaky(name, p, fa.trace), rtol=1e-12, atol=1e-14)
    fl = gate_factors(cell, p, x)
    assert np.abs(fa.r - fl.r).max() > 1e-2                 # LN on: they must differ
    plain = _cell(name, ln=False)                             # LN off: the same convention
    pp = {k: v for k, v in p.items() if not k.startswith("ln_")}
    np.testing.assert_allclose(gate_factors(plain, pp, x, conventions="author").r,
                               gate_factors(plain, pp, x).r, rtol=1e-10, atol=1e-13)


def test_author_lstm_r_and_readout():
    cell = _cell("lstm")
    p, x = _params(cell), _x()
    fa = gate_factors(cell, p, x, conventions="author")
    tr = fa.trace
    i, f, g, o = (tr.gates[k] for k in "ifgo")
    e = o * (1 - np.tanh(tr.c[1:]) ** 2)
    hand = np.zeros((T, B, H))
    for t in range(T):
        cd = (tr.c[t] * f[t] * (1 - f[t]) * np.diag(p["U_f"]) + i[t] * (1 - g[t] ** 2) * np.diag(p["U_g"])
              + g[t] * i[t] * (1 - i[t]) * np.diag(p["U_i"]))
        hand[t] = cd * (e[t - 1] if t > 0 else 0.0)
    np.testing.assert_allclose(fa.r, hand, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fa.readout, e, rtol=1e-12)
    assert np.abs(fa.r - gate_factors(cell, p, x).r).max() > 1e-2


# ----------------------------------------------------------------------------------------------
# gamma
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("with_readout", [False, True])
def test_prefix_sum_gamma_equals_direct_loop(order, with_readout):
    d, r, e = _factors()
    e = e if with_readout else None
    lags = [1, 2, 5, 8]
    want = _gamma_direct(d, r, lags, order, e)
    for engine in ("numpy", "numba"):
        got = dg.gamma(d, r, lags, order=order, readout=e, engine=engine)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


def test_numba_equals_numpy_long():
    d, r, e = _factors(T=300, B=3, H=5, seed=1)
    lags = np.arange(1, 120, 7)
    a = dg.gamma(d, r, lags, readout=e, engine="numpy")
    b = dg.gamma(d, r, lags, readout=e, engine="numba")
    np.testing.assert_allclose(b, a, rtol=1e-11, atol=1e-14 * np.nanmax(np.abs(a)), equal_nan=True)


# ----------------------------------------------------------------------------------------------
# transport_factors
# ----------------------------------------------------------------------------------------------


def test_gamma0_equals_leak_product_exactly():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=4, layernorm=True)
    p = random_params(cell, 1)
    x = RNG.standard_normal((10, 3, 2))
    leak = cell.forward(p, x).leak
    g0 = dg.transport_factors(cell, p, x, [1, 3, 9], order=0)
    for i, ell in enumerate([1, 3, 9]):
        for t in range(ell + 1, 11):
            want = np.prod(leak[t - ell:t], axis=0)
            np.testing.assert_allclose(g0[i, t - 1], want, rtol=1e-13)


def test_gamma_error_shrinks_as_E_squared():
    """J(ε) = diag(d) + ε E from real diaggate Jacobians: |Γ − diag M| = O(ε²)."""
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=5)
    p = random_params(cell, 2)
    x = RNG.standard_normal((12, 2, 2))
    J = cell.jacobians(p, x)
    d = cell.forward(p, x).leak
    E = J - d[..., None] * np.eye(5)
    lags = [1, 2, 4, 8]
    errs = []
    for eps in (0.02, 0.01, 0.005):
        exact = dg.transport_diagonals(d[..., None] * np.eye(5) + eps * E, lags)
        approx = dg.gamma(d, eps * np.diagonal(E, axis1=2, axis2=3), lags)
        assert np.array_equal(np.isnan(exact), np.isnan(approx))
        errs.append(np.nanmax(np.abs(approx - exact)))
    assert errs[2] < 1e-3
    for a, b in zip(errs, errs[1:]):
        assert 3.5 < a / b < 4.5, errs


@pytest.mark.parametrize("name,opts", CELL_CASES, ids=[c[0] + str(c[1]) for c in CELL_CASES])
def test_cell_gamma_matches_exact_transport_to_second_order(name, opts):
    """Scale the recurrent matrices by ε (LSTM: U_o = 0, see gamma.py): the error of Γ against the
    exact per-neuron transport diagonal (relative to its largest entry) falls like ε²."""
    cell = lwsim.make_cell(name, n_in=3, n_hidden=4, **opts)
    base = cell.init_params(0, scheme="normal", sigma_w=0.5)
    x = np.random.default_rng(3).standard_normal((10, 2, 3))
    errs = []
    for eps in (0.04, 0.02):
        p = dict(base)
        for k in list(cell.recurrent_keys) + ["u_s"]:
            if k in p:
                p[k] = base[k] * eps
        if name == "lstm":
            p["U_o"] = np.zeros_like(base["U_o"])
        g = dg.transport_factors(cell, p, x, [1, 3, 6])
        D = dg.neuron_transport_diagonals(cell, p, x, [1, 3, 6], progress=False)
        errs.append(np.nanmax(np.abs(g - D)) / np.nanmax(np.abs(D)))
    assert errs[1] < 0.01
    assert 3.0 < errs[0] / errs[1] < 5.0, errs


@pytest.mark.parametrize("name,opts", CELL_CASES[1:], ids=[c[0] + str(c[1]) for c in CELL_CASES[1:]])
def test_gate_factors_match_jacobian(name, opts):
    cell = lwsim.make_cell(name, n_in=2, n_hidden=3, **opts)
    p = random_params(cell, 4)
    x = RNG.standard_normal((6, 2, 2))
    fac = dg.gate_factors(cell, p, x)
    J = cell.jacobians(p, x)
    H = 3
    if name == "lstm":
        dgJ = np.diagonal(J, axis1=2, axis2=3)
        np.testing.assert_allclose(fac.d, dgJ[..., H:], rtol=1e-14)          # ∂c/∂c = diag(f)
        e = fac.readout
        e_prev = np.concatenate([np.zeros_like(e[:1]), e[:-1]])
        np.testing.assert_allclose(fac.r, np.diagonal(J[:, :, H:, :H], axis1=2, axis2=3) * e_prev,
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(np.diagonal(J[:, :, :H, H:], axis1=2, axis2=3), e * fac.d, rtol=1e-12)
    else:
        np.testing.assert_allclose(fac.d + fac.r, np.diagonal(J, axis1=2, axis2=3), rtol=1e-12, atol=1e-15)


def test_constgate_linear_closed_form():
    """W_h = 0: J = (1 − s) I, so Γ = Γ⁰ = (1 − s)^ℓ = diag M exactly."""
    s = 0.2
    cell = lwsim.make_cell("constgate", n_in=2, n_hidden=3, s=s)
    p = random_params(cell, 5)
    p["W_h"] = np.zeros_like(p["W_h"])
    x = RNG.standard_normal((8, 2, 2))
    lags = [1, 2, 7]
    want = np.array([(1 - s) ** ell for ell in lags])[:, None, None, None]
    for order in (0, 1):
        g = dg.transport_factors(cell, p, x, lags, order=order)
        ok = ~np.isnan(g)
        np.testing.assert_allclose(g, np.broadcast_to(want, g.shape) * np.where(ok, 1, np.nan),
                                   rtol=1e-13, equal_nan=True)
    D = dg.neuron_transport_diagonals(cell, p, x, lags, progress=False)
    np.testing.assert_allclose(D, dg.transport_factors(cell, p, x, lags), rtol=1e-13, equal_nan=True)


def test_rnn_has_no_gamma():
    cell = lwsim.make_cell("rnn", n_in=2, n_hidden=3)
    p = random_params(cell, 6)
    with pytest.raises(ValueError, match="rnn"):
        dg.transport_factors(cell, p, RNG.standard_normal((5, 1, 2)), 2)


# ---- GRU: diag(U_g)·diag(U_r) and Γ⁰ = Π(1−z) + Π r + Π(1−z) r ---------------------------------
def test_author_gru_r_and_gamma():
    cell = _cell("gru", ln=False)
    p, x = _params(cell), _x()
    fa = gate_factors(cell, p, x, conventions="author")
    z, r, g = (fa.trace.gates[k] for k in "zrg")
    hp = fa.trace.h[:-1]
    rd = (g - hp) * z * (1 - z) * np.diag(p["U_z"]) + z * (1 - g ** 2) * np.diag(p["U_g"]) * (
        r + hp * r * (1 - r) * np.diag(p["U_r"]))
    np.testing.assert_allclose(fa.r, rd, rtol=1e-12, atol=1e-14)
    assert np.abs(fa.r - gate_factors(cell, p, x).r).max() > 1e-3   # diag(U_g diag(h r') U_r) ≠
    lags = [1, 3, 7]
    G = dg.transport_factors(cell, p, x, lags, conventions="author")
    G0 = dg.transport_factors(cell, p, x, lags, order=0, conventions="author")
    d = 1 - z
    for i, ell in enumerate(lags):
        for t in range(ell + 1, T + 1):                      # windows j = t−ℓ+1 … t (1-based)
            w = slice(t - ell, t)
            g0 = d[w].prod(0) + r[w].prod(0) + (d[w] * r[w]).prod(0)
            np.testing.assert_allclose(G0[i, t - 1], g0, rtol=1e-12)
            np.testing.assert_allclose(G[i, t - 1], g0 + d[w].prod(0) * (rd[w] / d[w]).sum(0), rtol=1e-11)
        assert np.isnan(G[i, :ell]).all()
    Gl = dg.transport_factors(cell, p, x, lags)
    assert np.nanmax(np.abs(G - Gl)) > 1e-2
