"""Anisotropy metrics (docs/diagnostics.md §2.9) on matrices with known singular values; [B] LR profile (§2.8)."""
import numpy as np
import pytest
from scipy.linalg import hadamard

import lwsim
from lwsim import diagnostics as dg
from cellcases import random_params

RNG = np.random.default_rng(40)


def test_singular_value_metrics_known():
    sv = np.arange(20, 0, -1, dtype=float)                    # 20, 19, …, 1
    ai, ce = dg.singular_value_metrics(sv, r=10, n_energy=16)
    assert ai == pytest.approx(20 / 11)
    assert ce == pytest.approx((sv[:10] ** 2).sum() / (sv[:16] ** 2).sum())
    with pytest.raises(ValueError, match="singular values"):
        dg.singular_value_metrics(sv[:12])


def test_gradient_covariance_metrics_known_spectrum():
    """G = U diag(s) Vᵀ with Hadamard U (columns ⟂ 1, rows of equal norm) is left unchanged by the
    row normalisation and column centring (up to one global scale), so its spectrum is s."""
    M, n, P = 16, 12, 40
    U = hadamard(M)[:, 1:n + 1] / np.sqrt(M)
    s = np.linspace(3.0, 0.5, n)
    s *= np.sqrt(M / (s ** 2).sum())                          # rows of unit norm
    V, _ = np.linalg.qr(RNG.standard_normal((P, n)))
    G = U @ np.diag(s) @ V.T
    np.testing.assert_allclose(np.linalg.norm(G, axis=1), 1.0)
    G = np.concatenate([G, np.full((M, 1), 0.7)], axis=1)     # a constant column: dropped
    res = dg.gradient_covariance_metrics(G, r=10)
    assert res.n_dropped == 1 and res.n_columns == P
    e = s ** 2
    assert res.ai == pytest.approx(s[0] / s[9], rel=1e-10)
    assert res.ce == pytest.approx(e[:10].sum() / e.sum(), rel=1e-10)
    assert res.pr == pytest.approx(e.sum() ** 2 / (e ** 2).sum(), rel=1e-10)
    np.testing.assert_allclose(res.singular_values[:n] / res.singular_values[0], s / s[0], rtol=1e-10)


def test_per_example_gradients_and_gradient_anisotropy():
    cell = lwsim.make_cell("sharedgate", n_in=2, n_hidden=3, readout="last")
    p = random_params(cell, 0)
    x = RNG.standard_normal((6, 12, 2))
    y = RNG.standard_normal((12, 1))
    G, keys = dg.per_example_gradients(cell, p, x, y, progress=False)
    _, g3 = cell.loss_and_grad(p, x[:, 3:4], y[3:4])
    np.testing.assert_allclose(G[3], np.concatenate([g3[k].ravel() for k in keys]))
    res = dg.gradient_anisotropy(cell, p, x, y, r=5, progress=False)
    assert res.ai >= 1 and 0 < res.ce <= 1 and 1 <= res.pr <= 11
    rates = {k: np.random.default_rng(1).uniform(0.1, 2, v.shape) for k, v in p.items()}
    pre = dg.gradient_anisotropy(cell, p, x, y, r=5, rates=rates, progress=False)
    want = dg.gradient_covariance_metrics(G * np.concatenate([rates[k].ravel() for k in keys]), r=5)
    assert pre.ai == pytest.approx(want.ai) and pre.ai != pytest.approx(res.ai)


def test_jacobian_anisotropy_samples_and_identity_case():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=16)
    p = random_params(cell, 1, scale=0.3)
    x = RNG.standard_normal((12, 3, 2))
    res = dg.jacobian_anisotropy(cell, p, x, lags=(1, 2, 8), n_samples=5, seed=3, progress=False)
    J = cell.jacobians(p, x)
    b, t = res.samples[2, 4]
    M = np.eye(16)
    for j in range(t - 8 + 1, t + 1):
        M = J[j - 1, b] @ M
    sv = np.linalg.svd(M, compute_uv=False)
    assert res.ai[2, 4] == pytest.approx(sv[0] / sv[9], rel=1e-10)
    assert res.ce[2, 4] == pytest.approx((sv[:10] ** 2).sum() / (sv ** 2).sum(), rel=1e-10)
    assert res.ai_median.shape == (3,)
    # W_h = 0 constgate: M = (1 − s)^h I → AI = 1, CE = 10/16
    cg = lwsim.make_cell("constgate", n_in=2, n_hidden=16, s=0.3)
    q = random_params(cg, 2)
    q["W_h"][:] = 0
    r = dg.jacobian_anisotropy(cg, q, x, lags=(1, 4), n_samples=3, progress=False)
    np.testing.assert_allclose(r.ai, 1.0)
    np.testing.assert_allclose(r.ce, 10 / 16)
    med, iqr = dg.median_iqr(np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 7.0], [4.0, 8.0]]))
    np.testing.assert_allclose(med, [2.5, 6.5])
    np.testing.assert_allclose(iqr, [1.5, 1.5])


def test_lr_profile_constgate_closed_form():
    s, T = 0.3, 12
    cell = lwsim.make_cell("constgate", n_in=2, n_hidden=2, s=s, bias=False, readout="last")
    p = random_params(cell, 3)
    p["W_h"][:] = 0
    x = RNG.standard_normal((T, 3, 2))
    prof = dg.lr_profile(cell, p, x, progress=False)
    h = np.arange(1, T)
    np.testing.assert_allclose(prof.mu, (1 - s) ** (h - 1), rtol=1e-12)
    ret, inj = prof.predictors["retention"], prof.predictors["injection"]
    np.testing.assert_allclose(ret.mu0, (1 - s) ** (h - 1), rtol=1e-12)
    assert ret.fit.s == pytest.approx(1.0) and ret.fit.r2 == pytest.approx(1.0)
    np.testing.assert_allclose(inj.mu0, s ** (h - 1), rtol=1e-12)
    assert inj.fit.s == pytest.approx(np.log(1 - s) / np.log(s))
    np.testing.assert_allclose(inj.mu_fit, prof.mu, rtol=1e-9)
    assert list(prof.n_pairs) == [3 * (T - hh) for hh in h]


def test_gate_products_direct():
    g = RNG.uniform(0.05, 0.95, (7, 2, 3))
    ret, inj = dg.gate_products(g, [1, 3])
    for i, ell in enumerate([1, 3]):
        for t in range(ell + 1, 8):
            k = t - ell
            np.testing.assert_allclose(ret[i, t - 1], np.prod(1 - g[k:t], axis=0).mean(-1), rtol=1e-12)
            np.testing.assert_allclose(inj[i, t - 1], np.prod(g[k - 1:t], axis=0).mean(-1), rtol=1e-12)
        assert np.isnan(ret[i, :ell]).all()
    P = RNG.uniform(0.01, 1, 500)
    fit = dg.fit_power(2.0 * P ** 0.5, P)
    assert fit.s == pytest.approx(0.5) and fit.r2 == pytest.approx(1.0) and fit.n_points <= 500
    assert np.isnan(dg.fit_power(P[:10], P[:10]).s)                 # < 50 points
