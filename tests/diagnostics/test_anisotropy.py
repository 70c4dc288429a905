"""Tests of lwsim/diagnostics/anisotropy.py (laid out like the code: docs/testing.md).

Anisotropy metrics (docs/diagnostics.md §2.9) on matrices with known singular values; [B] LR profile (§2.8).

Aggregates above the per-sequence math (docs/diagnostics.md §2.8–2.10, docs/experiments.md §5.4).

Each statistic is recomputed by hand from the per-pair / per-triple / per-seed values, on random
gated cells where mean and median differ (asserted), so a swapped aggregate fails.

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way.

conventions="author": the summary statistics returned beside f, Λ and σ̂, against loops written
here from the author's formulas (docs/fidelity.md; docs/diagnostics.md §2.5, §2.8–2.9), on cases
where the two conventions differ, and the [B] cut-off metrics with a cut-off below the number of
singular values (CE over the first ``n_energy`` values only, not all of them)."""


import numpy as np
import pytest
from scipy.linalg import hadamard

import lwsim
from lwsim import diagnostics as dg
from lwsim.diagnostics import author_b as ab
from lwsim.diagnostics.anisotropy import sample_triples

from cellcases import random_params
from helpers import _product, _rev
from helpers import _author_J, _setup, _sig


RNG = np.random.default_rng(40)


def _cell(H=5, T=10, B=6, seed=0):
    cell = lwsim.make_cell("diaggate", 3, H, bias=False, readout="last")
    params = cell.init_params(seed=seed, scheme="normal", sigma_w=0.9)
    x = np.random.default_rng(seed).standard_normal((T, B, 3))
    return cell, params, x


T, B, D, H = 12, 3, 3, 5


# ----------------------------------------------------------------------------------------------
# singular_value_metrics
# ----------------------------------------------------------------------------------------------


def test_singular_value_metrics_known():
    sv = np.arange(20, 0, -1, dtype=float)                    # 20, 19, …, 1
    ai, ce = dg.singular_value_metrics(sv, r=10, n_energy=16)
    assert ai == pytest.approx(20 / 11)
    assert ce == pytest.approx((sv[:10] ** 2).sum() / (sv[:16] ** 2).sum())
    with pytest.raises(ValueError, match="singular values"):
        dg.singular_value_metrics(sv[:12])


# ----------------------------------------------------------------------------- cut-offs
def test_cut_off_metrics_with_fewer_energy_values_than_singular_values():
    sv = np.array([4.0, 3.0, 2.0, 1.0, 1.0])
    # r = 2, n_energy = 3 < 5 values: AI = 4/3, CE = (16 + 9)/(16 + 9 + 4) = 25/29 (all five: 25/31)
    ai, ce = dg.singular_value_metrics(sv, r=2, n_energy=3)
    assert (ai, ce) == (pytest.approx(4 / 3, rel=1e-15, abs=0), pytest.approx(25 / 29, rel=1e-15, abs=0))
    ai, ce = ab.floored_metrics(sv, r=2, n_energy=3)
    assert ai == pytest.approx(4 / (3 + 1e-12), rel=1e-15, abs=0) and ai != 4 / 3       # floored
    assert ce == pytest.approx(25 / (29 + 1e-12), rel=1e-15, abs=0)
    # a stack: one row per triple
    ai, ce = ab.floored_metrics(np.stack([sv, 2 * sv]), r=2, n_energy=4)
    np.testing.assert_allclose(ce, [25 / 30, 100 / 120], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# sample_triples
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------- S2
def test_author_sampling():
    bs, ts = sample_triples(2, 6, [2], 100, 0, "author")             # all 8 candidates
    got = sorted(zip(bs[0][bs[0] >= 0], ts[0][ts[0] >= 0]))
    assert got == [(b, t) for b in range(2) for t in range(2, 6)]      # t ≤ T − 1, k = t − 2 ≥ 0
    assert (bs[0] < 0).sum() == 92
    bs, ts = sample_triples(3, 10, [4], 5, 7, "author")
    pick = np.random.RandomState(7).choice(18, size=5, replace=False)  # without replacement
    np.testing.assert_array_equal(bs[0], pick // 6)
    np.testing.assert_array_equal(ts[0], pick % 6 + 4)


# ----------------------------------------------------------------------------------------------
# jacobian_anisotropy
# ----------------------------------------------------------------------------------------------


def test_jacobian_anisotropy_median_over_triples():
    cell, params, x = _cell(H=16, T=12, B=4, seed=2)
    lags = [1, 3, 6]
    ja = dg.jacobian_anisotropy(cell, params, x, lags, n_samples=9, seed=3, r=4, n_energy=8, progress=False)
    J = cell.jacobians(params, x)
    for i, ell in enumerate(lags):
        ai, ce = [], []
        for b, t in ja.samples[i]:
            sv = np.linalg.svd(_product(J, int(b), int(t), ell), compute_uv=False)
            ai.append(sv[0] / sv[3])
            ce.append((sv[:4] ** 2).sum() / (sv[:8] ** 2).sum())
        np.testing.assert_allclose(ja.ai[i], ai, rtol=1e-9)
        assert abs(np.mean(ai) - np.median(ai)) > 1e-3 * np.median(ai)
        assert ja.ai_median[i] == pytest.approx(np.median(ai), rel=1e-9)
        assert ja.ce_median[i] == pytest.approx(np.median(ce), rel=1e-9)


def test_jacobian_anisotropy_author():
    cell, p, x = _setup("diaggate", H=6, T=8, B=3)
    ja = dg.jacobian_anisotropy(cell, p, x, [1, 3], n_samples=5, seed=2, r=3, n_energy=5,
                                progress=False, conventions="author", sampling="author")
    J = _author_J(cell, p, x)
    for i, h in enumerate([1, 3]):
        ai = []
        for b, t in ja.samples[i]:
            sv = np.linalg.svd(_rev(J, b, t, t - h), compute_uv=False)
            ai.append(sv[0] / (sv[2] + 1e-12))
        np.testing.assert_allclose(ja.ai[i], ai, rtol=1e-12)
        assert ja.ai_median[i] == pytest.approx(np.median(ai), rel=1e-12)


def test_jacobian_anisotropy_author_ce_over_the_first_n_energy_values():
    cell, p, x = _setup("diaggate", H=6, T=8, B=3)
    ja = dg.jacobian_anisotropy(cell, p, x, [1, 3], n_samples=5, seed=2, r=3, n_energy=5,
                                progress=False, conventions="author", sampling="author")
    J = _author_J(cell, p, x)
    for i, h in enumerate([1, 3]):
        ce = []
        for b, t in ja.samples[i]:
            e = np.linalg.svd(_rev(J, b, t, t - h), compute_uv=False) ** 2
            ce.append(e[:3].sum() / (e[:5].sum() + 1e-12))        # 5 of the 6 values
        np.testing.assert_allclose(ja.ce[i], ce, rtol=1e-12)
        lower = np.sort(ce)[2]                                     # 5 samples: the middle one
        assert ja.ce_median[i] == pytest.approx(lower, rel=1e-12)


# ----------------------------------------------------------------------------------------------
# gradient_covariance_metrics
# ----------------------------------------------------------------------------------------------


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


def test_gradient_covariance_author_floors_and_column_rule():
    rng = np.random.default_rng(0)
    G = rng.standard_normal((8, 6))
    G[:, 5] = 1e-9 * rng.standard_normal(8)      # std ~1e-9 of the others: below lwsim's rtol
    ex = dg.gradient_covariance_metrics(G, r=3)
    au = dg.gradient_covariance_metrics(G, r=3, conventions="author")
    assert ex.n_columns == 5 and au.n_columns == 6       # lwsim drops it, the author's rule keeps it
    s = au.singular_values
    assert au.ai == pytest.approx(s[0] / (s[2] + 1e-12), rel=1e-14, abs=0)
    assert au.ce == pytest.approx((s[:3] ** 2).sum() / ((s ** 2).sum() + 1e-12), rel=1e-14, abs=0)
    # the author's threshold is absolute, 1e−10·√M (≈ 2.83e−10 for M = 8), not relative
    G = rng.standard_normal((8, 6))
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    for j, norm in ((4, 5e-10), (5, 2e-10)):
        v = rng.standard_normal(8)
        v -= v.mean()
        G[:, j] = norm * v / np.linalg.norm(v)
    au = dg.gradient_covariance_metrics(G, r=3, conventions="author")
    assert au.n_columns == 5 and au.n_dropped == 1


# ----------------------------------------------------------------------------- S2 covariance
def test_gradient_covariance_author_participation_ratio():
    rng = np.random.default_rng(4)
    G = rng.standard_normal((12, 7)) * np.array([5.0, 3.0, 1.0, 1.0, 0.5, 0.2, 0.1])
    au = dg.gradient_covariance_metrics(G, r=3, conventions="author")
    Gn = G / (np.linalg.norm(G, axis=1, keepdims=True) + 1e-12)
    Gn -= Gn.mean(axis=0)
    s = np.linalg.svd(Gn, compute_uv=False)
    e = s ** 2
    np.testing.assert_allclose(au.singular_values, s, rtol=1e-12)
    assert au.pr == pytest.approx(e.sum() ** 2 / (e ** 2).sum(), rel=1e-12)
    assert au.ce == pytest.approx(e[:3].sum() / (e.sum() + 1e-12), rel=1e-12)
    assert (au.n_examples, au.n_columns, au.n_dropped) == (12, 7, 0)


# ----------------------------------------------------------------------------------------------
# gradient_anisotropy
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# median_iqr
# ----------------------------------------------------------------------------------------------


def test_median_iqr_over_seeds():
    v = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, np.nan], [4.0, 40.0], [100.0, 50.0]])
    med, iqr = dg.anisotropy.median_iqr(v, axis=0)
    # column 0: median 3 (mean 22), q25 = 2, q75 = 4; column 1 (NaN dropped): 10, 20, 40, 50 →
    # median 30, q25 = 17.5, q75 = 42.5 (linear interpolation)
    np.testing.assert_allclose(med, [3.0, 30.0])
    np.testing.assert_allclose(iqr, [2.0, 25.0])
