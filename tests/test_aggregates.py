"""Aggregates above the per-sequence math (docs/diagnostics.md §2.8–2.10, docs/experiments.md §5.4).

Each statistic is recomputed by hand from the per-pair / per-triple / per-seed values, on random
gated cells where mean and median differ (asserted), so a swapped aggregate fails.
"""
import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim.figures.studies.main.master import _pooled, seed_factors, spread


def _cell(H=5, T=10, B=6, seed=0):
    cell = lwsim.make_cell("diaggate", 3, H, bias=False, readout="last")
    params = cell.init_params(seed=seed, scheme="normal", sigma_w=0.9)
    x = np.random.default_rng(seed).standard_normal((T, B, 3))
    return cell, params, x


def _product(J, b, t, ell):
    """M_{t,ℓ} = J_t J_{t−1} ⋯ J_{t−ℓ+1} with J[t−1] = ∂h_t/∂h_{t−1} (source k = t − ℓ)."""
    W = np.eye(J.shape[-1])
    for s in range(t - ell + 1, t + 1):
        W = J[s - 1, b] @ W
    return W


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


def test_median_iqr_over_seeds():
    v = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, np.nan], [4.0, 40.0], [100.0, 50.0]])
    med, iqr = dg.anisotropy.median_iqr(v, axis=0)
    # column 0: median 3 (mean 22), q25 = 2, q75 = 4; column 1 (NaN dropped): 10, 20, 40, 50 →
    # median 30, q25 = 17.5, q75 = 42.5 (linear interpolation)
    np.testing.assert_allclose(med, [3.0, 30.0])
    np.testing.assert_allclose(iqr, [2.0, 25.0])


def _run(a, b, kappa=2.0, eps=20.0, lags=np.arange(1, 21)):
    f = np.exp(-0.1 * lags)
    m, sig = -3.0 * f ** a, 2.0 * f ** b            # a negative mean: |m̄| is used
    n_star = (eps * sig / np.abs(m)) ** kappa
    grid = np.array([10.0, 100.0, 300.0, 1000.0])
    n_hat = np.array([grid[grid >= v][0] if (grid >= v).any() else np.inf for v in n_star])
    return {"f": f, "mean": m, "sigma_hat": sig, "kappa_hat": np.full(lags.size, kappa), "n_star": n_star,
            "n_hat": n_hat, "n_grid": grid, "lags": lags}


def test_seed_factors_decomposition():
    # |m̄| ∝ f^0.8, σ̂ ∝ f^0.3: N* ∝ f^{−κ(0.8 − 0.3)} → master slope with N* = a − b = 0.5
    r = _run(0.8, 0.3)
    s = seed_factors(r)
    assert s["slope_mean_vs_f"] == pytest.approx(0.8, abs=1e-12)
    assert s["slope_sigma_vs_f"] == pytest.approx(0.3, abs=1e-12)
    assert s["predicted_master_slope"] == pytest.approx(0.5, abs=1e-12)
    assert s["master_slope_nstar"] == pytest.approx(0.5, abs=1e-12)
    assert s["kappa_median"] == 2.0
    # N* = (20·2/3)² e^{0.1ℓ} = 177.8 e^{0.1ℓ}: none ≤ 10; above 1000 iff ℓ > 10 log 5.625 = 17.3
    n_star = r["n_star"]
    assert s["n_at_smallest_N"] == 0
    assert s["n_never"] == int((n_star > 1e3).sum()) == 3
    assert s["n_inside_grid"] == 17


def test_seed_factors_counts_the_smallest_budget():
    r = _run(1.0, 0.0, eps=0.1)                          # N* = (0.1·2/3)² ≈ 0.0044 < 10 for every lag
    s = seed_factors(r)
    assert (s["n_at_smallest_N"], s["n_never"], s["n_inside_grid"]) == (20, 0, 0)
    assert s["master_slope_nhat"] == pytest.approx(0.0, abs=1e-12)   # clamped N̂: slope 0
    assert s["master_slope_nstar"] == pytest.approx(1.0, abs=1e-12)  # a − b = 1: the law holds for N*


def test_spread_over_seeds():
    assert spread([1.0, 2.0, 6.0]) == {"mean": 3.0, "sd": pytest.approx(np.sqrt(7.0)), "min": 1.0,
                                       "max": 6.0, "n": 3}
    assert spread([None, 2.0])["sd"] == 0.0
    assert spread([None])["n"] == 0


def test_pooled_master_slope_over_cells_and_per_seed():
    # cell A slope 0.5 (a − b), cell B slope 1.0; pooled over both: x ranges overlap → in between
    runs = {"a": [_run(0.8, 0.3), _run(0.9, 0.4)], "b": [_run(1.0, 0.0), _run(1.0, 0.0)]}
    p0 = _pooled(runs, "n_star", 0)
    x = np.concatenate([-2.0 * np.log(runs[c][0]["f"]) for c in runs])
    y = np.concatenate([np.log(runs[c][0]["n_star"]) for c in runs])
    assert p0["slope"] == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-12)
    assert 0.5 < p0["slope"] < 1.0 and p0["n"] == 40
    assert _pooled(runs, "n_star")["n"] == 80


def test_fig_a14_author_fit_and_pooled_per_seed():
    from lwsim.figures.studies.main.master import fig_a14
    from lwsim.figures.style import plt

    def run(a, b):
        r = _run(a, b)
        r["n_hat"] = r["n_star"].copy()                 # continuous N: the author fit sees a − b exactly
        r["alpha_hat"] = np.full(r["f"].size, 1.5)
        return r
    R = {"a_main": [({"cell": "gru", "seed": s, "optimizer": "adamw"}, run(0.8, 0.3)) for s in (1, 2)]
         + [({"cell": "lstm", "seed": s, "optimizer": "adamw"}, run(1.0, 0.0)) for s in (1, 2)]}
    fig, data = fig_a14(R)
    plt.close(fig)
    assert data["gru"]["author"]["slope"] == pytest.approx(0.5, abs=1e-10)
    assert data["lstm"]["author"]["slope"] == pytest.approx(1.0, abs=1e-10)
    assert data["gru"]["summary"]["slope_sigma_vs_f"]["mean"] == pytest.approx(0.3, abs=1e-12)
    assert data["pooled"]["author_per_cell"] == {"gru": pytest.approx(0.5), "lstm": pytest.approx(1.0)}
    assert len(data["pooled"]["nhat_per_seed"]) == 2
