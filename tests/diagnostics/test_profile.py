"""Tests of lwsim/diagnostics/profile.py (laid out like the code: docs/testing.md).

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

import lwsim
from lwsim import diagnostics as dg
from lwsim.diagnostics import author_b as ab
from helpers import _product, _rev
from helpers import _author_J, _setup, _sig


def _cell(H=5, T=10, B=6, seed=0):
    cell = lwsim.make_cell("diaggate", 3, H, bias=False, readout="last")
    params = cell.init_params(seed=seed, scheme="normal", sigma_w=0.9)
    x = np.random.default_rng(seed).standard_normal((T, B, 3))
    return cell, params, x


T, B, D, H = 12, 3, 3, 5


# ----------------------------------------------------------------------------------------------
# gate_products
# ----------------------------------------------------------------------------------------------


def test_lr_profile_predictor_pbar_is_the_mean_over_pairs():
    cell, params, x = _cell(seed=1)
    prof = dg.lr_profile(cell, params, x, max_lag=6, min_points=5, progress=False)
    g = 1.0 - cell.forward(params, x).leak
    ret, inj = dg.profile.gate_products(g, prof.lags)
    for name, P in (("retention", ret), ("injection", inj)):
        Pl = P.reshape(prof.lags.size, -1)
        mean = np.nanmean(Pl, axis=1)
        assert np.max(np.abs(mean - np.nanmedian(Pl, axis=1)) / mean) > 1e-3
        np.testing.assert_allclose(prof.predictors[name].pbar, mean, rtol=1e-12)
        np.testing.assert_allclose(prof.predictors[name].mu0, mean / mean[0], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# fit_power
# ----------------------------------------------------------------------------------------------


def test_fit_power_counts_min_points_before_the_trim_for_the_author():
    rng = np.random.default_rng(0)
    P = rng.uniform(0.1, 1.0, 50)
    S = P ** 0.7
    assert np.isnan(dg.fit_power(S, P, min_points=50).s)                 # 48 after the trim
    assert dg.fit_power(S, P, min_points=50, count="valid").s == pytest.approx(0.7, rel=1e-10)
    assert np.isnan(dg.fit_power(S[:49], P[:49], min_points=50, count="valid").s)


# ----------------------------------------------------------------------------------------------
# lr_profile
# ----------------------------------------------------------------------------------------------


def test_lr_profile_median_of_transport_norms_over_pairs():
    cell, params, x = _cell()
    T, B = x.shape[:2]
    prof = dg.lr_profile(cell, params, x, max_lag=6, min_points=5, progress=False)
    J = cell.jacobians(params, x)
    med, gaps = [], []
    for ell in prof.lags:
        S = np.array([np.linalg.norm(_product(J, b, t, ell), 2)
                      for b in range(B) for t in range(ell + 1, T + 1)])
        med.append(np.median(S))
        gaps.append(abs(S.mean() - np.median(S)) / np.median(S))
        assert prof.n_pairs[ell - 1] == S.size
    assert max(gaps) > 0.02                            # mean ≠ median here
    np.testing.assert_allclose(prof.s_median, med, rtol=1e-10)
    np.testing.assert_allclose(prof.mu, np.array(med) / med[0], rtol=1e-10)


# ----------------------------------------------------------------------------- S1 profile
def test_lr_profile_author_assembly(monkeypatch):
    # power iterations replaced by the exact σ_max so the profile can be rebuilt by hand
    monkeypatch.setattr(ab, "power_norm", lambda W, iters, rng: np.linalg.svd(W, compute_uv=False)[..., 0])
    cell, p, x = _setup("diaggate", H=4, T=6, B=2)
    T, B = x.shape[:2]
    prof = dg.lr_profile(cell, p, x, progress=False, conventions="author", min_points=2)
    J = _author_J(cell, p, x)
    g = np.asarray(cell.forward(p, x).gates["s"])
    S = {h: [] for h in range(1, T)}
    P = {h: [] for h in range(1, T)}
    for b in range(B):
        for t in range(2, T + 1):
            for k in range(1, t):
                S[t - k].append(np.linalg.svd(_rev(J, b, t, k), compute_uv=False)[0])
                P[t - k].append(np.prod(g[k - 1:t, b], axis=0).mean())     # Π_{j=k}^{t} g_j
    lmed = lambda v: np.sort(v)[(len(v) - 1) // 2]
    medS = np.array([lmed(S[h]) for h in range(1, T)])
    np.testing.assert_allclose(prof.mu, medS / (medS[0] + 1e-12), rtol=1e-12)
    pbar = np.array([lmed(P[h]) for h in range(1, T)])
    inj = prof.predictors["injection"]
    np.testing.assert_allclose(inj.pbar, pbar, rtol=1e-12)
    np.testing.assert_allclose(inj.mu0, pbar / (pbar[0] + 1e-12), rtol=1e-12)
    np.testing.assert_allclose(inj.mu_fit, (inj.mu0 + 1e-12) ** inj.fit.s, rtol=1e-12)


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
