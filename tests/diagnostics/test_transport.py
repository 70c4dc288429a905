"""Tests of lwsim/diagnostics/transport.py (laid out like the code: docs/testing.md).

Exact transport products, diagonals, spectral norms (docs/diagnostics.md §2.1, §2.8)."""


import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg

from cellcases import random_params


RNG = np.random.default_rng(30)


def _explicit(J, t, ell):
    M = np.broadcast_to(np.eye(J.shape[-1]), J.shape[1:]).copy()
    for j in range(t - ell + 1, t + 1):         # M_{t,t−ℓ} = J_t ⋯ J_{t−ℓ+1}
        M = J[j - 1] @ M
    return M


# ----------------------------------------------------------------------------------------------
# transport_products
# ----------------------------------------------------------------------------------------------


def test_products_diagonals_and_norms_match_explicit_products():
    cell = lwsim.make_cell("gru", n_in=2, n_hidden=4, layernorm=True)
    p = random_params(cell, 0)
    x = RNG.standard_normal((8, 2, 2))
    J = cell.jacobians(p, x)
    lags = [1, 2, 5, 7]
    M = dg.transport_products(J, lags)
    D = dg.transport_diagonals(J, lags)
    S = dg.transport_norms(J, lags)
    for i, ell in enumerate(lags):
        for t in range(1, 9):
            if t - ell < 1:
                assert np.isnan(M[i, t - 1]).all() and np.isnan(D[i, t - 1]).all() and np.isnan(S[i, t - 1]).all()
                continue
            want = _explicit(J, t, ell)
            np.testing.assert_allclose(M[i, t - 1], want, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(D[i, t - 1], np.diagonal(want, axis1=1, axis2=2), rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(S[i, t - 1], [np.linalg.norm(m, 2) for m in want], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# neuron_transport_diagonals
# ----------------------------------------------------------------------------------------------


def test_lstm_neuron_diagonal_is_total_cell_path():
    cell = lwsim.make_cell("lstm", n_in=2, n_hidden=3)
    p = random_params(cell, 1)
    x = RNG.standard_normal((7, 2, 2))
    J = cell.jacobians(p, x)
    tr = cell.forward(p, x)
    e = tr.gates["o"] * (1 - np.tanh(tr.c[1:]) ** 2)
    D, off = dg.neuron_transport_diagonals(cell, p, x, [1, 3, 6], chunk=1, progress=False, with_offdiag=True)
    H = 3
    for i, ell in enumerate([1, 3, 6]):
        for t in range(ell + 1, 8):
            M = _explicit(J, t, ell)
            k = t - ell
            total = M[:, :H, :H] @ (e[k - 1][:, :, None] * np.eye(H)) + M[:, :H, H:]     # ∂h_t/∂c_k
            np.testing.assert_allclose(D[i, t - 1], np.diagonal(total, axis1=1, axis2=2), rtol=1e-12)
            fro = np.linalg.norm(M, axis=(1, 2))
            offd = np.linalg.norm(M - np.diagonal(M, axis1=1, axis2=2)[:, :, None] * np.eye(2 * H), axis=(1, 2))
            np.testing.assert_allclose(off[i, t - 1], offd / fro, rtol=1e-12)


def test_offdiag_fraction_known():
    M = np.array([[[3.0, 4.0], [0.0, 0.0]], [[2.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    np.testing.assert_allclose(dg.offdiag_fraction(M), [0.8, 0.0, 0.0])


def test_bad_jacobians():
    with pytest.raises(ValueError, match="J"):
        dg.transport_diagonals(np.zeros((3, 2, 2)), 1)
    with pytest.raises(ValueError, match="lags"):
        dg.transport_diagonals(np.zeros((3, 1, 2, 2)), 3)
