"""Γ and Γ⁰ (docs/diagnostics.md §2.3): prefix sums vs direct loop, numba vs NumPy, exactness of Γ⁰,
first-order accuracy O(‖E‖²), closed form of the linear constgate."""
import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from cellcases import random_params

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


CELL_CASES = [("constgate", {"s": 0.3}), ("sharedgate", {"layernorm": True}), ("diaggate", {}),
              ("gru", {}), ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True})]


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
