"""Mutation tests (issue 32) for lwsim/figures/studies/main/master.py: hand-made runs, hand numbers."""
import numpy as np
import pytest

from lwsim.figures.studies.main.master import _log, _slope, seed_factors, spread


def _run(kap):
    lags = np.arange(1, 6)
    f = np.exp(-0.5 * lags)
    return {"f": f, "mean": f, "sigma_hat": np.ones(5), "kappa_hat": np.asarray(kap, float),
            "n_star": np.full(5, 50.0), "n_hat": np.array([10.0, 10.0, 100.0, np.inf, 100.0]),
            "n_grid": np.array([10.0, 100.0]), "lags": lags}


def test_log_of_zero_and_negative():
    # |−e| → log e = 1; 0 → nan (no −inf)
    out = _log([-np.e, 0.0, 1.0])
    assert out[0] == pytest.approx(1.0) and np.isnan(out[1]) and out[2] == 0.0


def test_slope_needs_three_points():
    assert _slope([1.0, 2.0], [1.0, 2.0]) is None
    assert _slope([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(2.0)


def test_seed_factors_kappa_range_and_counts():
    # κ̂ = [nan, 3, 1, 2, inf]: finite {3, 1, 2} → median 2, range [1, 3]
    s = seed_factors(_run([np.nan, 3.0, 1.0, 2.0, np.inf]))
    assert s["kappa_median"] == 2.0
    assert s["kappa_range"] == [1.0, 3.0]
    # N̂ = [10, 10, 100, inf, 100] on grid [10, 100]: 2 at the smallest N, 1 never, 2 inside
    assert (s["n_lags"], s["n_at_smallest_N"], s["n_never"], s["n_inside_grid"]) == (5, 2, 1, 2)
    # |m̄| = f → a = 1; σ̂ flat → b = 0; predicted slope 1
    assert s["slope_mean_vs_f"] == pytest.approx(1.0)
    assert s["slope_sigma_vs_f"] == pytest.approx(0.0, abs=1e-12)
    assert s["predicted_master_slope"] == pytest.approx(1.0)


def test_seed_factors_without_finite_kappa():
    s = seed_factors(_run([np.nan] * 5))
    assert s["kappa_median"] is None and s["kappa_range"] is None


def test_seed_factors_predicted_slope_none_when_a_missing():
    r = _run([1.0] * 5)
    r["mean"] = np.zeros(5)                               # log|0| = nan everywhere → a is None
    s = seed_factors(r)
    assert s["slope_mean_vs_f"] is None and s["predicted_master_slope"] is None


def test_spread_empty_and_single():
    assert spread([]) == {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    assert spread([None, 4.0]) == {"mean": 4.0, "sd": 0.0, "min": 4.0, "max": 4.0, "n": 1}
    # [1, 3]: mean 2, sd (ddof 1) = √2
    assert spread([3.0, 1.0]) == {"mean": 2.0, "sd": pytest.approx(np.sqrt(2.0)), "min": 1.0, "max": 3.0,
                                  "n": 2}


def _lin_run(a, b, kappa=2.0, n=8):
    # f = e^{−ℓ/4}; |m̄| = f^a, σ̂ = f^b; N* = (σ̂/|m̄|)^κ = f^{−κ(a−b)} → log N* = (a − b)·(−κ log f)
    lags = np.arange(1, n + 1, dtype=float)
    f = np.exp(-lags / 4)
    n_star = (f ** b / f ** a) ** kappa
    return {"f": f, "mean": f ** a, "sigma_hat": f ** b, "kappa_hat": np.full(n, kappa),
            "alpha_hat": np.full(n, kappa / (kappa - 1)), "n_star": n_star, "n_hat": n_star.copy(),
            "n_grid": np.array([1.0, 1e6]), "lags": lags}


def test_fig_a14_data_and_axes():
    from lwsim.figures.studies.main.master import fig_a14
    runs = [({"cell": "gru"}, _lin_run(1.0, 0.0)), ({"cell": "constgate"}, _lin_run(0.8, 0.3)),
            ({"cell": "constgate"}, _lin_run(0.6, 0.1)),
            ({"cell": "gru", "optimizer": "sgd"}, _lin_run(0.0, 1.0))]   # another optimizer: left out
    fig, data = fig_a14({"a_main": runs})
    # cells in A_CELLS order, then "pooled"
    assert list(data) == ["constgate", "gru", "pooled"]
    assert data["gru"]["n_lags"] == 8 and len(data["constgate"]["per_seed"]) == 2
    sm = data["constgate"]["summary"]
    # a over seeds {0.8, 0.6}: mean 0.7, sd √0.02, min 0.6, max 0.8; a − b = 0.5 for both (sd 0)
    assert sm["slope_mean_vs_f"]["mean"] == pytest.approx(0.7)
    assert sm["slope_mean_vs_f"]["sd"] == pytest.approx(np.sqrt(0.02))
    assert (sm["slope_mean_vs_f"]["min"], sm["slope_mean_vs_f"]["max"]) == pytest.approx((0.6, 0.8))
    assert sm["predicted_master_slope"]["mean"] == pytest.approx(0.5)
    assert sm["master_slope_nstar"]["mean"] == pytest.approx(0.5)
    assert sm["kappa_median"] == {"mean": 2.0, "sd": 0.0, "min": 2.0, "max": 2.0, "n": 2}
    assert set(sm) == {"slope_mean_vs_f", "slope_sigma_vs_f", "predicted_master_slope", "kappa_median",
                       "master_slope_nhat", "master_slope_nstar", "n_at_smallest_N", "n_never",
                       "n_inside_grid"}
    p = data["pooled"]
    # per seed: seed 0 = constgate (0.5) + gru (1.0) pooled, seed 1 = constgate only (0.5)
    assert p["nstar_per_seed"][1] == pytest.approx(0.5) and len(p["nstar_per_seed"]) == 2
    assert p["nhat_per_seed"][1] == pytest.approx(0.5)
    assert 0.5 < p["nstar_per_seed"][0] < 1.0 and 0.5 < p["nstar"]["slope"] < 1.0
    assert p["nstar"]["n"] == 24 and p["nhat"]["n"] == 24
    assert set(p["author_per_cell"]) == {"constgate", "gru"}
    ax = fig.axes
    assert [a.get_title() for a in ax[:4]] == ["A14 mean vs envelope (theory: slope 1)", "tail scale (theory: flat)",
                                               "κ̂ = α̂/(α̂−1)", "N̂ vs N* (dashed: grid ends)"]
    assert (ax[0].get_xscale(), ax[0].get_yscale()) == ("log", "log")
    assert (ax[1].get_xscale(), ax[1].get_yscale()) == ("linear", "log")
    assert (ax[3].get_xscale(), ax[3].get_yscale()) == ("log", "log")
    assert ax[0].get_xlabel() == "f(ℓ)" and ax[2].get_xlabel() == "lag ℓ"
    # grid [1, 1e6]: xlim [0.1, 1e7], diagonal + 2 grid-end lines after 3 seeds' points
    assert ax[3].get_xlim() == pytest.approx((0.1, 1e7))
    assert len(ax[3].lines) == 3 + 1 + 2
    assert [l.get_ydata()[0] for l in ax[3].lines[-2:]] == [1.0, 1e6]
    # legend: one entry per cell
    assert [t.get_text() for t in ax[0].get_legend().get_texts()] == ["constgate", "gru"]
    np.testing.assert_allclose(ax[2].lines[0].get_ydata(), 2.0)
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_author_fit_slope_and_errors():
    from lwsim.figures.studies.main.master import _author_fit
    # 12 lags of the exact law (a = 1, b = 0): window = every lag, slope 1, r² 1
    out = _author_fit([_lin_run(1.0, 0.0, n=12), _lin_run(1.0, 0.0, n=12)])
    assert out["slope"] == pytest.approx(1.0) and out["r2"] == pytest.approx(1.0)
    assert out["n"] == 12 and out["window"] == [1.0, 12.0] and out["intercept"] == pytest.approx(0.0, abs=1e-9)
    # 8 lags: the window is found, the master fit refuses (< 10 lags) → its message and the window
    out = _author_fit([_lin_run(1.0, 0.0)])
    assert out == {"error": "fit_master needs >= 10 usable lags (finite n_hat and kappa, f > 0) with >= 3 "
                            "distinct n_hat; got 8 lags, 8 distinct n_hat", "window": [1.0, 8.0]}
    r = _lin_run(1.0, 0.0, n=12)
    r["f"] = np.zeros(12)                                  # no positive f: no power-law window
    assert _author_fit([r])["error"].startswith("power-law window: f has only 0 usable points")
