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
