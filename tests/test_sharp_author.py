"""conventions="author": the summary statistics returned beside f, Λ and σ̂, against loops written
here from the author's formulas (docs/fidelity.md; docs/diagnostics.md §2.5, §2.8–2.9), on cases
where the two conventions differ, and the [B] cut-off metrics with a cut-off below the number of
singular values (CE over the first ``n_energy`` values only, not all of them)."""
import numpy as np
import pytest

from lwsim import diagnostics as dg
from lwsim.diagnostics import author_b as ab
from lwsim.diagnostics.gamma import gate_factors

from test_conventions_author import B, H, T, _cell, _params, _rates, _x
from test_conventions_b import _author_J, _rev, _setup


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


# ----------------------------------------------------------------------------- envelope
def _author_lambda(cell, p, x, lam):
    """Λ at h_k for every source k = 0 … T (row k), (T+1, B, H): Rayleigh quotient of the mean
    rate matrix at h_k, the row mean where h_k = 0."""
    h = gate_factors(cell, p, x, conventions="author").trace.h
    lam_bar = sum(lam.values()) / len(lam)
    out = np.empty(h.shape[:2] + (H,))
    for k in range(h.shape[0]):
        for b in range(h.shape[1]):
            hk = h[k, b]
            out[k, b] = lam_bar.mean(1) if not hk.any() else (lam_bar @ hk ** 2) / (hk ** 2).sum()
    return out


@pytest.mark.parametrize("name", ["diaggate", "gru"])
def test_author_envelope_lambda_statistics_counts_and_per_neuron_means(name):
    cell = _cell(name, ln=(name != "gru"))
    p, x, lam = _params(cell), _x(), _rates(cell)
    lags = [1, 2, 5]
    env = dg.envelope(cell, p, x, lam, lags, eta=0.3, progress=False, conventions="author")
    lw = dg.envelope(cell, p, x, lam, lags, eta=0.3, progress=False)
    L = _author_lambda(cell, p, x, lam)
    first_src = 0 if name == "diaggate" else 1                # diaggate counts the window from h₀
    for i, ell in enumerate(lags):
        src = L[first_src:T - ell + 1]                         # sources k = first … T − ℓ
        assert env.lam_mean[i] == pytest.approx(src.mean(), rel=1e-12)
        assert env.lam_std[i] == pytest.approx(src.std(), rel=1e-9)
        assert env.count[i] == B * (T - ell + 1 - first_src)
    np.testing.assert_allclose(env.lam_neuron, L.mean(axis=(0, 1)), rtol=1e-12)   # every k = 0 … T
    np.testing.assert_allclose(env.m.sum(axis=1) / H, env.f, rtol=1e-12)         # m per neuron, f ÷ H
    np.testing.assert_allclose(env.ratio, env.f / env.f_gates, rtol=1e-12)
    # the conventions differ in each of these
    assert np.all(np.abs(env.lam_mean - lw.lam_mean) > 1e-6 * np.abs(lw.lam_mean))
    assert np.max(np.abs(env.lam_neuron - lw.lam_neuron)) > 1e-6
    if name == "diaggate":
        assert np.all(env.count == lw.count + B)


# ----------------------------------------------------------------------------- S1 profile
def test_lr_profile_author_medians_pairs_and_failed_fit(monkeypatch):
    monkeypatch.setattr(ab, "power_norm", lambda W, iters, rng: np.linalg.svd(W, compute_uv=False)[..., 0])
    cell, p, x = _setup("diaggate", H=4, T=6, B=2)
    Tn, Bn = x.shape[:2]
    prof = dg.lr_profile(cell, p, x, progress=False, conventions="author", min_points=10 ** 6)
    J = _author_J(cell, p, x)
    g = np.asarray(cell.forward(p, x).gates["s"])
    S = {h: [] for h in range(1, Tn)}
    R = {h: [] for h in range(1, Tn)}
    for b in range(Bn):
        for t in range(2, Tn + 1):
            for k in range(1, t):
                S[t - k].append(np.linalg.svd(_rev(J, b, t, k), compute_uv=False)[0])
                R[t - k].append(np.prod(1 - g[k:t, b], axis=0).mean())       # Π_{j=k+1}^{t} (1 − g_j)
    lmed = lambda v: np.sort(v)[(len(v) - 1) // 2]                          # noqa: E731
    # lag 1: 10 pairs (even): the lower median, not the mean of the middle two
    np.testing.assert_allclose(prof.s_median, [lmed(S[h]) for h in range(1, Tn)], rtol=1e-12)
    assert list(prof.n_pairs) == [len(S[h]) for h in range(1, Tn)] == [10, 8, 6, 4, 2]
    ret = prof.predictors["retention"]
    pbar = np.array([lmed(R[h]) for h in range(1, Tn)])
    np.testing.assert_allclose(ret.pbar, pbar, rtol=1e-12)
    assert np.isnan(ret.fit.s)                                 # too few points: the fit fails …
    np.testing.assert_allclose(ret.mu_fit, ret.mu0 + 1e-12, rtol=1e-15)   # … and s = 1 is used
    np.testing.assert_allclose(ret.mu0, pbar / (pbar[0] + 1e-12), rtol=1e-12)


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
