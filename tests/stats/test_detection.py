"""Tests of lwsim/stats/detection.py (laid out like the code: docs/testing.md).

lwsim.stats.detection (docs/statistics.md §3.3, docs/theory.md §4.4): SNR rule, N̂, N*, Ĥ_N, noise floor, table.

Tests that kill the surviving mutants of mutmut on lwsim/stats/detection.py (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.
detection_table's own logic is checked with ``fit_alpha`` replaced by a stub that returns a fixed
(α̂, σ̂) and records its arguments, so that N̂, N* and Ĥ_N are hand-computable.

The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases."""


from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from lwsim import stats
from lwsim.stats import (
    detectable,
    detection as det,
    detection_table,
    kappa,
    learnability_window,
    n_star,
    noise_floor,
    sample_complexity,
    sample_sas,
    snr,
)
from lwsim.stats.tailfit import TailFit


# ------------------------------------------------ options of the author's runs (issue 13)
def _noise(n, seed=0):
    z = np.random.default_rng(seed).standard_normal(n)
    return (z - z.mean()) / z.std()


# ---- detection_table with a stub tail fit ----------------------------------------------------------
class _Stub:
    """fit_alpha's stand-in: (α̂, σ̂) from a table keyed by the row's size, reliable iff size ≥ 30."""

    def __init__(self, by_size=None):
        self.calls = []
        self.by_size = by_size or {}

    def __call__(self, x, method, n_boot, seed, conventions, tiny_iqr):
        self.calls.append(dict(x=np.array(x), method=method, n_boot=n_boot, seed=seed,
                               conventions=conventions, tiny_iqr=tiny_iqr))
        a, s = self.by_size.get(x.size, (2.0, 1.0))
        return TailFit(a, s, x.size >= 30, f"stub{x.size}", None, x.size)


@pytest.fixture
def stub(monkeypatch):
    s = _Stub()
    monkeypatch.setattr(det, "fit_alpha", s)
    return s


# ----------------------------------------------------------------------------------------------
# detection_table: κ̂ of each lag's fit
# ----------------------------------------------------------------------------------------------


def test_kappa_by_hand(stub):
    # κ̂ = α̂/(α̂ − 1) of each lag's fit, inf at α̂ = 1 (the stub's α̂ by row size)
    stub.by_size = {20: (1.0, 1.0), 21: (1.5, 1.0), 22: (2.0, 1.0), 23: (1.25, 1.0)}
    t = det.detection_table([np.ones(20), np.ones(21), np.ones(22), np.ones(23)], [1, 2, 3, 4], [10])
    np.testing.assert_allclose(t.kappa, [np.inf, 3.0, 2.0, 5.0], rtol=1e-15)
    assert t.kappa.shape == (4,)
    t = det.detection_table([np.ones(21)], [1], [10])
    assert t.kappa.shape == (1,) and t.kappa[0] == pytest.approx(3.0, rel=1e-15)


# ----------------------------------------------------------------------------------------------
# snr
# ----------------------------------------------------------------------------------------------


def test_snr_formula():
    assert snr(1.0, 2.0, 1.0, 100) == pytest.approx(10.0)              # κ = 2: √N
    assert snr(-2.0, 1.5, 4.0, 8.0) == pytest.approx(2.0 * 8 ** (1 / 3) / 4.0)  # κ = 3, |m̄|
    np.testing.assert_allclose(snr([1.0, 1.0], [2.0, 1.25], 1.0, 2**10), [32.0, 4.0])  # κ = 5
    assert snr(1.0, 1.0, 0.5, 1e9) == pytest.approx(2.0)                # α̂ = 1: no concentration


def test_n_star_solves_snr_equals_eps():
    m, a, s = np.array([0.3, 0.01, 2.0]), np.array([1.3, 1.7, 2.0]), np.array([1.0, 0.5, 3.0])
    np.testing.assert_allclose(snr(m, a, s, n_star(m, a, s, eps=7.0)), 7.0, rtol=1e-10)


# ---- snr, detectable ---------------------------------------------------------------------------
def test_snr_scalar_in_float_out_array_in_array_out():
    out = det.snr(1.0, 2.0, 1.0, 4.0)
    assert type(out) is float and out == 2.0
    out = det.snr([1.0], 2.0, 1.0, 4.0)
    assert isinstance(out, np.ndarray) and out.shape == (1,) and out[0] == 2.0


def test_snr_broadcast_message():
    with pytest.raises(ValueError, match=r"\bmean, alpha, sigma, N\b.*broadcast.*'mean': \(2,\), 'alpha': \(\), 'sigma': \(\), 'N': \(3,\)"):
        det.snr([1.0, 2.0], 1.5, 1.0, [10, 20, 30])


def test_snr_floor_zero_and_messages():
    # sigma_floor = 0 is allowed: σ̂ = 0 gives SNR 0 (σ̂ ≤ 0), not inf
    assert det.snr(1.0, 2.0, 0.0, 4.0, sigma_floor=0.0) == 0.0
    assert det.snr(1.0, 2.0, 0.0, 4.0) == np.inf
    # above the floor the SNR is unchanged: 2·√9/0.5 = 12
    assert det.snr(2.0, 2.0, 0.5, 9.0, sigma_floor=0.4) == pytest.approx(12.0)
    with pytest.raises(ValueError, match=r"\bsigma_floor\b.*>= 0.0"):
        det.snr(1.0, 2.0, 1.0, 10, sigma_floor=-1.0)
    with pytest.raises(ValueError, match=r"\bsigma\b.*>= 0"):
        det.snr(1.0, 2.0, -1.0, 10)
    with pytest.raises(ValueError, match=r"\bN\b.*> 0"):
        det.snr(1.0, 2.0, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"\bmean\b.*NaN"):
        det.snr(np.nan, 2.0, 1.0, 1.0)


# ----------------------------------------------------------------------------- author floors
def test_snr_floor_hand_computed():
    # |m̄| N^{1/2} / σ̂ with α̂ = 2 (κ = 2): 1e-13 · 100 / 1e-13 = 100, above ε = 20 ...
    assert stats.snr(1e-13, 2.0, 1e-13, 1e4) == pytest.approx(100.0)
    # ... but the author's compute_snr returns 0 whenever σ̂ ≤ 1e-12
    assert stats.snr(1e-13, 2.0, 1e-13, 1e4, sigma_floor=1e-12) == 0.0
    assert stats.snr(1e-13, 2.0, 1e-12, 1e4, sigma_floor=1e-12) == 0.0          # ≤, not <
    assert stats.snr(1e-11, 2.0, 2e-12, 1e4, sigma_floor=1e-12) == pytest.approx(500.0)
    assert stats.n_star(1e-13, 2.0, 1e-13, eps=20.0) == pytest.approx(400.0)     # (20·1)^2
    assert stats.n_star(1e-13, 2.0, 1e-13, eps=20.0, sigma_floor=1e-12) == np.inf


# ----------------------------------------------------------------------------------------------
# detectable
# ----------------------------------------------------------------------------------------------


def test_detection_threshold_is_strict_and_n_hat_is_min_of_grid():
    # |m̄| = σ = 1, α = 2, ε = 20: SNR = √N > 20 ⇔ N > 400.
    assert not detectable(1.0, 2.0, 1.0, 400) and detectable(1.0, 2.0, 1.0, 401)
    assert sample_complexity(1.0, 2.0, 1.0, [1000, 401, 400, 100]) == 401
    np.testing.assert_array_equal(
        sample_complexity([1.0, 0.1, 0.0], 2.0, 1.0, [10, 1e3, 1e4, 1e5]), [1e3, 1e5, np.inf])  # N > 4e4
    assert n_star(1.0, 2.0, 1.0) == pytest.approx(400.0)
    assert n_star(0.5, 1.5, 2.0, eps=2.0) == pytest.approx(8.0**3)      # (εσ/|m̄|)^κ, κ = 3


def test_detectable_types_and_eps():
    assert det.detectable(1.0, 2.0, 1.0, 401) is True
    assert det.detectable(1.0, 2.0, 1.0, 400) is False
    out = det.detectable([1.0, 1.0], 2.0, 1.0, [400, 401])
    assert isinstance(out, np.ndarray) and out.tolist() == [False, True]
    # ε = 5: √N > 5 ⇔ N > 25
    assert det.detectable(1.0, 2.0, 1.0, 26, eps=5.0) and not det.detectable(1.0, 2.0, 1.0, 25, eps=5.0)
    # the floor is passed on: σ̂ = 1e−13 gives SNR 1e−13·100/1e−13 = 100 > 20 without it
    assert det.detectable(1e-13, 2.0, 1e-13, 1e4)
    assert not det.detectable(1e-13, 2.0, 1e-13, 1e4, sigma_floor=1e-12)
    with pytest.raises(ValueError, match=r"\beps\b.*> 0.0"):
        det.detectable(1.0, 2.0, 1.0, 10, eps=0.0)


# ----------------------------------------------------------------------------------------------
# sample_complexity
# ----------------------------------------------------------------------------------------------


# ---- sample_complexity --------------------------------------------------------------------------
def test_sample_complexity_eps_floor_shapes_and_types():
    # ε = 5: N > 25, the smallest such grid point
    assert det.sample_complexity(1.0, 2.0, 1.0, [100, 10, 26, 25], eps=5.0) == 26.0
    assert type(det.sample_complexity(1.0, 2.0, 1.0, [100])) is float
    assert det.sample_complexity(1e-13, 2.0, 1e-13, [1e4]) == 1e4
    assert det.sample_complexity(1e-13, 2.0, 1e-13, [1e4], sigma_floor=1e-12) == np.inf
    # a (2, 2) lag shape keeps its shape; α̂ broadcasts
    out = det.sample_complexity([[1.0, 0.1], [0.0, 2.0]], 2.0, 1.0, [10, 401, 1e3, 4e4 + 1])
    np.testing.assert_array_equal(out, [[401, 4e4 + 1], [np.inf, 401]])   # 2√N > 20 ⇔ N > 100
    # per-lag α̂: κ = 3 at α̂ = 1.5, SNR = N^{1/3} > 20 ⇔ N > 8000
    np.testing.assert_array_equal(det.sample_complexity([1.0, 1.0], [2.0, 1.5], 1.0, [401, 8001]), [401, 8001])
    with pytest.raises(ValueError, match=r"\balpha\b.*NaN"):
        det.sample_complexity(1.0, np.nan, 1.0, [10])
    with pytest.raises(ValueError, match=r"\bsigma\b.*>= 0"):
        det.sample_complexity(1.0, 2.0, -1.0, [10])
    with pytest.raises(ValueError, match=r"\bmean\b.*NaN"):
        det.sample_complexity(np.nan, 2.0, 1.0, [10])
    with pytest.raises(ValueError, match=r"\bn_grid\b.*1-dimensional"):
        det.sample_complexity(1.0, 2.0, 1.0, [[10]])
    with pytest.raises(ValueError, match=r"\bmean, alpha, sigma\b.*broadcast"):
        det.sample_complexity([1.0, 2.0], [1.5, 1.5, 1.5], 1.0, [10])


# ----------------------------------------------------------------------------------------------
# n_star
# ----------------------------------------------------------------------------------------------


def test_degenerate_conventions():
    np.testing.assert_array_equal(snr([0.0, 1.0, 0.0], 2.0, [1.0, 0.0, 0.0], 10), [0.0, np.inf, 0.0])
    np.testing.assert_array_equal(n_star([0.0, 1.0], 2.0, [1.0, 0.0]), [np.inf, 0.0])
    assert n_star(1.0, 1.0, 0.01, eps=20) == 0.0 and n_star(1.0, 1.0, 1.0, eps=20) == np.inf


def test_detection_table_planted_power_law():
    # X = c f(ℓ) + SαS(α, σ), f = ℓ^{-β}: N(ℓ) = (εσ/(c f))^κ = A^κ ℓ^{βκ}; H_N = (N^{1/κ}/A)^{1/β}.
    alpha, sigma, c, beta, eps = 1.6, 1.0, 2.0, 1.0, 2.0
    lags = np.arange(1, 13, dtype=float)
    x = c * lags[:, None] ** -beta + sample_sas(alpha, sigma, size=(lags.size, 40_000), seed=9)
    grid = np.geomspace(1, 1e6, 49)
    tab = detection_table(x, lags, grid, eps=eps, seed=1, mean_bound="none")
    assert tab.method == ("ecf",) * lags.size and tab.reliable.all()
    assert np.all(np.abs(tab.alpha - alpha) < 0.05)
    k = kappa(alpha)
    truth = (eps * sigma / (c * lags ** -beta)) ** k
    # N̂ is the first grid point above N*, and N* matches the planted N(ℓ) within the fit error
    np.testing.assert_allclose(tab.n_star, truth, rtol=0.5)
    idx = np.searchsorted(grid, tab.n_star, side="right")
    np.testing.assert_array_equal(tab.n_hat, grid[idx])
    h_true = np.floor(np.minimum((grid ** (1 / k) * c / (eps * sigma)) ** (1 / beta), lags[-1]))
    assert np.all(np.abs(tab.h_n - h_true) <= 1), np.c_[grid, tab.h_n, h_true]
    json.dumps(tab.to_dict())


def test_cap_budget_uses_min_of_budget_and_sample_count():
    z = _noise(60)
    base = detection_table([1.0 + z], [1], [10], method="ecf", mean_bound="none")
    k, s = base.kappa[0], base.sigma[0]
    eps = 40.0 ** (1 / k) * 1.0 / s                          # row 0: N* = 40 exactly
    rows = [1.0 + z, 1.0 / 3 + z]                            # row 1: N* = 40·3^κ > 60
    grid = [10, 100, 1000]
    free = detection_table(rows, [1, 2], grid, eps=eps, method="ecf", mean_bound="none")
    cap = detection_table(rows, [1, 2], grid, eps=eps, method="ecf", cap_budget=True, mean_bound="none")
    assert free.n_star[0] == pytest.approx(40.0) and 60 < free.n_star[1] < 1000
    np.testing.assert_array_equal(free.n_hat, [100, 1000])
    np.testing.assert_array_equal(cap.n_hat, [60, np.inf])   # capped: min(100, 60); never n ≥ N*
    np.testing.assert_array_equal(cap.h_n, [0, 1, 1])        # N̂ = 60 ≤ N for N = 100, 1000
    np.testing.assert_array_equal(cap.n_star, free.n_star)   # N* is not capped


def test_snr_no_floating_point_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(det.snr([0.0, 1.0, 0.0], 2.0, [0.0, 0.0, 1.0], 4.0), [0.0, np.inf, 0.0])
        np.testing.assert_array_equal(det.n_star([0.0, 1.0, 0.0, 1.0], [2.0, 2.0, 1.0, 1.0],
                                                 [0.0, 0.0, 1.0, 1.0]), [np.inf, 0.0, np.inf, np.inf])
        np.testing.assert_array_equal(det.n_star([1.0, 1.0], 2.0, [0.0, 1e-13], sigma_floor=1e-12),
                                      [np.inf, np.inf])


def test_n_star_overflow_is_inf_silently():
    # (ε σ̂/|m̄|)^κ̂ beyond the float range is N* = inf, without a floating-point warning:
    # (20·1e200/1)³ = 8e603 > 1.8e308; (20·1e200/1)² = 4e402 too; the base itself overflows at 1e300/1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert det.n_star(1.0, 1.5, 1e200) == np.inf
        np.testing.assert_allclose(det.n_star([1.0, 1.0], [2.0, 1.5], [1e200, 1.0], eps=2.0), [np.inf, 8.0])
        assert det.n_star(1e-10, 2.0, 1e300) == np.inf


# ---- n_star -------------------------------------------------------------------------------------
def test_n_star_hand_values():
    assert type(det.n_star(1.0, 2.0, 1.0)) is float
    assert det.n_star(-1.0, 2.0, 1.0) == pytest.approx(400.0)             # |m̄|
    assert det.n_star(1.0, 1.5, 1.0, eps=2.0) == pytest.approx(8.0)        # κ = 3
    assert det.n_star(1.0, 1.25, 1.0, eps=2.0) == pytest.approx(32.0)      # κ = 5
    assert det.n_star(2.0, 2.0, 3.0, eps=4.0) == pytest.approx(36.0)       # (4·3/2)²
    assert det.n_star(1.0, 1.0, 0.05, eps=20.0) == 1.0                     # base 1: 1^inf = 1
    np.testing.assert_allclose(det.n_star([1.0, 2.0], [2.0, 1.5], 1.0, eps=2.0), [4.0, 1.0])
    # the floor: σ̂ ≤ floor → inf (≤, not <), just above → (20·2)² = 1600
    assert det.n_star(1.0, 2.0, 1e-12, sigma_floor=1e-12) == np.inf
    assert det.n_star(1e-12, 2.0, 2e-12, sigma_floor=1e-12) == pytest.approx(1600.0)
    assert det.n_star(1.0, 2.0, 0.0, sigma_floor=0.0) == np.inf
    with pytest.raises(ValueError, match=r"\beps\b.*> 0.0"):
        det.n_star(1.0, 2.0, 1.0, eps=0.0)
    with pytest.raises(ValueError, match=r"\bsigma_floor\b.*>= 0.0"):
        det.n_star(1.0, 2.0, 1.0, sigma_floor=-1.0)
    with pytest.raises(ValueError, match=r"\bsigma\b.*>= 0"):
        det.n_star(1.0, 2.0, -1.0)
    with pytest.raises(ValueError, match=r"\bmean\b.*NaN"):
        det.n_star(np.nan, 2.0, 1.0)
    with pytest.raises(ValueError, match=r"\bmean, sigma, alpha\b.*broadcast"):
        det.n_star([1.0, 2.0], 1.5, [1.0, 1.0, 1.0])


def test_table_hand_computed_with_stub(stub):
    # α̂ = 2, σ̂ = 1: SNR = m̄ √N > ε = 20 ⇔ N > (20/m̄)²; m̄ = 2, 1, 0.5 → N* = 100, 400, 1600
    rows = np.array([2.0, 1.0, 0.5])[:, None] + np.tile([-1.0, 1.0], 20)
    t = det.detection_table(rows, [1, 2, 3], [100, 101, 401, 1e4], mean_bound="none")
    np.testing.assert_allclose(t.mean, [2.0, 1.0, 0.5])
    np.testing.assert_allclose(t.n_star, [100.0, 400.0, 1600.0])
    np.testing.assert_array_equal(t.n_hat, [101, 401, 1e4])
    np.testing.assert_array_equal(t.h_n, [0, 1, 2, 3])
    np.testing.assert_array_equal(t.kappa, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(t.alpha, [2.0] * 3)
    np.testing.assert_array_equal(t.sigma, [1.0] * 3)
    assert t.reliable.tolist() == [True] * 3 and t.method == ("stub40",) * 3
    np.testing.assert_array_equal(t.n_samples, [40.0] * 3)
    assert t.n_samples.dtype == np.float64
    assert t.eps == 20.0 and type(t.eps) is float and t.noise == "lag" and t.floors == ()
    np.testing.assert_array_equal(t.n_grid, [100, 101, 401, 1e4])
    np.testing.assert_array_equal(t.lags, [1.0, 2.0, 3.0])
    # the defaults passed to the fit: method auto, n_boot 200, lwsim conventions and tiny IQR, one
    # Generator seeded 0 shared by the lags; each row centred on its mean
    assert [c["method"] for c in stub.calls] == ["auto"] * 3
    assert {c["n_boot"] for c in stub.calls} == {200} and {c["conventions"] for c in stub.calls} == {"lwsim"}
    assert {c["tiny_iqr"] for c in stub.calls} == {"lwsim"}
    gens = [c["seed"] for c in stub.calls]
    assert all(isinstance(g, np.random.Generator) for g in gens) and gens[0] is gens[1] is gens[2]
    assert gens[0].integers(0, 2**32) == np.random.default_rng(0).integers(0, 2**32)
    for c in stub.calls:
        np.testing.assert_array_equal(c["x"], np.tile([-1.0, 1.0], 20))
    d = t.to_dict()
    assert d["n_hat"] == [101.0, 401.0, 10000.0] and d["method"] == ["stub40"] * 3 and d["floors"] == []
    assert d["eps"] == 20.0 and d["noise"] == "lag" and d["reliable"] == [True] * 3
    assert set(d) == {"lags", "mean", "alpha", "sigma", "kappa", "n_hat", "n_star", "reliable", "method",
                      "n_grid", "h_n", "eps", "n_samples", "noise", "floors", "mean_bound", "mean_lo"}
    assert d["mean_bound"] == "none" and d["mean_lo"] is None


def test_table_snr_floor_from_floors(monkeypatch):
    s = _Stub({40: (2.0, 1e-12), 41: (2.0, 2e-12)})
    monkeypatch.setattr(det, "fit_alpha", s)
    rows = [1e-11 + np.tile([-1e-13, 1e-13], 20), 1e-11 + np.r_[np.tile([-1e-13, 1e-13], 20), 0.0]]
    # SNR = 1e−11 √N / σ̂ > 20: σ̂ = 1e−12 → N > 4; σ̂ = 2e−12 → N > 16
    plain = det.detection_table(rows, [1, 2], [5, 17], mean_bound="none")
    np.testing.assert_array_equal(plain.n_hat, [5, 17])
    np.testing.assert_allclose(plain.n_star, [4.0, 16.0])
    flo = det.detection_table(rows, [1, 2], [5, 17], floors="snr", mean_bound="none")       # σ̂ ≤ 1e−12 → SNR 0
    np.testing.assert_array_equal(flo.n_hat, [np.inf, 17])
    assert flo.n_star[0] == np.inf and flo.n_star[1] == pytest.approx(16.0)
    assert det.AUTHOR_SIGMA_FLOOR == 1e-12
    cap = det.detection_table(rows, [1, 2], [5, 17], floors="snr", cap_budget=True, mean_bound="none")
    np.testing.assert_array_equal(cap.n_hat, [np.inf, 17])


def test_table_full_null_rows_mapped_to_lags(monkeypatch):
    # two noise rows with different sizes are impossible in one array; tell them apart by scale
    class ByScale(_Stub):
        def __call__(self, x, **kw):
            self.calls.append(x)
            return TailFit(1.5 if np.ptp(x) > 3 else 2.0, float(np.ptp(x)), True, "m", None, x.size)
    s = ByScale()
    monkeypatch.setattr(det, "fit_alpha", s)
    rows = np.array([4.0, 1.0])[:, None] + np.tile([-1.0, 1.0], 20)
    noise = np.vstack([np.tile([-1.0, 1.0], 25), np.tile([-3.0, 3.0], 25)])   # lag 1: ptp 2, lag 2: ptp 6
    t = det.detection_table(rows, [1, 2], [10], eps=2.0, noise="full", noise_samples=noise, mean_bound="none")
    np.testing.assert_array_equal(t.alpha, [2.0, 1.5])
    np.testing.assert_array_equal(t.sigma, [2.0, 6.0])
    np.testing.assert_allclose(t.n_star, [1.0, 1728.0])                     # (2·2/4)², (2·6/1)³


# ----------------------------------------------------------------------------- the two nulls
def test_planted_nulls_differ_in_a_known_way():
    """A transported signal with its own transported noise, ψ(ℓ) = f(ℓ)(c + Z_ℓ), plus a big
    lag-1 term in the whole update: under "lag" the SNR is flat in ℓ (every lag detectable at the
    same N), under "full" N̂(ℓ) = (ε σ_full / (c f(ℓ)))^κ grows as f falls."""
    rng = np.random.default_rng(7)
    n, c = 4000, 0.5
    lags = np.array([1.0, 2.0, 4.0, 8.0])
    f = np.exp(-0.5 * lags)
    z = rng.standard_normal((lags.size, n))
    psi = f[:, None] * (c + z)
    full = 5.0 * rng.standard_normal(n) + psi.sum(axis=0)        # big lag-1 term + every lag's share
    grid = np.geomspace(1, 1e7, 57)
    lag = stats.detection_table(psi, lags, grid, method="ecf", eps=2.0, mean_bound="none")
    ful = stats.detection_table(psi, lags, grid, method="ecf", eps=2.0, noise="full", noise_samples=full, mean_bound="none")
    assert np.ptp(np.log(lag.n_hat)) < np.log(grid[1] / grid[0]) * 2.5      # flat up to grid steps
    # the full fit is one (α̂, σ̂) for every lag, of the whole update's samples
    sig_full = stats.fit_alpha(full - full.mean(), method="ecf").sigma
    assert np.all(ful.sigma == sig_full) and np.all(ful.alpha == ful.alpha[0])
    expect = (2.0 * sig_full / np.abs(ful.mean)) ** ful.kappa
    np.testing.assert_allclose(ful.n_star, expect, rtol=1e-12)
    assert np.all(np.diff(ful.n_hat) > 0)                          # N̂ grows with ℓ under "full"
    # N*(ℓ)/N*(1) = (f(1)/f(ℓ))^κ̂ = e^{κ̂ (ℓ − 1)/2}, within the sample means' 3% error (per factor)
    ratio = ful.n_star / ful.n_star[0]
    np.testing.assert_allclose(np.log(ratio), ful.kappa[0] * 0.5 * (lags - 1), atol=ful.kappa[0] * 0.1)
    assert ful.noise == "full" and lag.noise == "lag"


# ----------------------------------------------------------------------------------------------
# learnability_window
# ----------------------------------------------------------------------------------------------


def test_learnability_window_hand_built():
    lags = [1, 2, 3, 4]
    n_hat = [10, 100, np.inf, 1000]
    np.testing.assert_array_equal(learnability_window(lags, n_hat, [5, 10, 99, 500, 1000, 1e9]),
                                  [0, 1, 1, 2, 4, 4])   # max detectable lag, not first gap
    assert learnability_window(lags, n_hat, 100) == 2.0


# ---- learnability_window ------------------------------------------------------------------------
def test_learnability_window_types_zero_n_hat_and_grid_shapes():
    out = det.learnability_window([1, 2], [0.0, 5.0], 1.0)
    assert type(out) is float and out == 1.0                               # N̂ = 0 ≤ any N
    out = det.learnability_window([1, 2], [3.0, 5.0], [[1.0, 3.0], [5.0, 4.0]])
    np.testing.assert_array_equal(out, [[0.0, 1.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match=r"\bn_hat\b.*-inf"):
        det.learnability_window([1, 2], [-np.inf, 5.0], 1.0)
    with pytest.raises(ValueError, match=r"\blags\b.*at least 1"):
        det.learnability_window([], [], 1.0)
    with pytest.raises(ValueError, match=r"\bN\b.*> 0"):
        det.learnability_window([1], [1.0], 0.0)
    with pytest.raises(ValueError, match=r"mismatched lengths"):
        det.learnability_window([1, 2], [1.0], 1.0)
    with pytest.raises(ValueError, match=r"\bn_hat\b.*1-dimensional"):
        det.learnability_window([1], [[1.0]], 1.0)
    with pytest.raises(ValueError, match=r"\blags\b.*1-dimensional"):       # a column of lags
        det.learnability_window([[1.0], [2.0]], [1.0, 2.0], 5.0)


# ----------------------------------------------------------------------------------------------
# noise_floor
# ----------------------------------------------------------------------------------------------


def test_noise_floor():
    f, n_hat, k = np.array([1.0, 0.5, 0.2]), np.array([400.0, np.inf, 1e4]), np.array([2.0, 2.0, np.inf])
    out = noise_floor(f, n_hat, 1600.0, k)
    np.testing.assert_allclose(out, [0.5, np.inf, 0.2])
    grid = noise_floor(f, n_hat, [400.0, 1600.0], k)
    assert grid.shape == (2, 3)
    np.testing.assert_allclose(grid[0], [1.0, np.inf, 0.2])            # at N = N̂: ε_th = f


# ---- noise_floor ----------------------------------------------------------------------------------
def test_noise_floor_hand_values_and_shapes():
    # f (N̂/N)^{1/κ}: 2·4^{1/4} = 2√2; N̂ = inf → inf; κ = inf → f
    out = det.noise_floor([2.0, 1.0, 3.0], [100.0, np.inf, 50.0], 25.0, [4.0, 2.0, np.inf])
    np.testing.assert_allclose(out, [2 * np.sqrt(2.0), np.inf, 3.0])
    assert out.shape == (3,)
    out = det.noise_floor([2.0], [100.0], [25.0], [4.0])                     # N as a 1-element array
    assert out.shape == (1, 1)
    out = det.noise_floor([2.0, 1.0], [100.0, 16.0], [25.0, 1.0, 100.0], [4.0, 2.0])
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out, [[2 * np.sqrt(2), 0.8], [2 * np.sqrt(10), 4.0], [2.0, 0.4]])
    with warnings.catch_warnings():                                          # f = 0 at N̂ = inf: inf, silently
        warnings.simplefilter("error")
        assert det.noise_floor([0.0], [np.inf], 10.0, [2.0])[0] == np.inf
    assert det.noise_floor([0.0], [4.0], 1.0, [2.0])[0] == 0.0               # f = 0 is allowed


def test_noise_floor_kappa_bound_and_messages():
    assert det.noise_floor([1.0], [4.0], 1.0, [2.0 - 1e-13])[0] == pytest.approx(2.0)
    assert det.noise_floor([1.0], [4.0], 1.0, [2.0 - 1e-12])[0] == pytest.approx(2.0)   # the bound itself
    with pytest.raises(ValueError, match=r"\bkappa\b.*>= 2.*\b1\.5\b"):
        det.noise_floor([1.0, 1.0], [4.0, 4.0], 1.0, [1.5, 3.0])
    with pytest.raises(ValueError, match=r"\bkappa\b.*>= 2"):
        det.noise_floor([1.0], [4.0], 1.0, [2.0 - 1e-11])
    with pytest.raises(ValueError, match=r"\bf\b.*>= 0"):
        det.noise_floor([-1.0], [4.0], 1.0, [2.0])
    with pytest.raises(ValueError, match=r"\bn_hat\b.*> 0"):
        det.noise_floor([1.0], [0.0], 1.0, [2.0])
    with pytest.raises(ValueError, match=r"\bf\b.*1-dimensional"):
        det.noise_floor([[1.0]], [4.0], 1.0, [2.0])
    with pytest.raises(ValueError, match=r"\bn_hat\b.*1-dimensional"):
        det.noise_floor([1.0], [[4.0]], 1.0, [2.0])
    with pytest.raises(ValueError, match=r"\bkappa\b.*1-dimensional"):
        det.noise_floor([1.0], [4.0], 1.0, [[2.0]])
    with pytest.raises(ValueError, match=r"\bkappa\b.*NaN"):
        det.noise_floor([1.0], [4.0], 1.0, [np.nan])
    with pytest.raises(ValueError, match=r"mismatched lengths"):
        det.noise_floor([1.0], [4.0], 1.0, [2.0, 2.0])
    with pytest.raises(ValueError, match=r"\bN\b.*> 0"):
        det.noise_floor([1.0], [4.0], 0.0, [2.0])
    assert det.noise_floor([1.0], [4.0], 1.0, [np.inf])[0] == 1.0          # κ = inf allowed


# ----------------------------------------------------------------------------------------------
# detection_table: the samples, ragged or rectangular
# ----------------------------------------------------------------------------------------------


def test_rows_ragged_and_rectangular(stub):
    # the fit sees each row centred on its mean: x − m̄
    a, b = np.arange(20), list(range(1, 22))
    t = det.detection_table([a, b], [1, 2], [10])
    assert [(c["x"] + m).tolist() for c, m in zip(stub.calls, t.mean)] == [list(map(float, a)), list(map(float, b))]
    np.testing.assert_array_equal(t.mean, [9.5, 11.0])
    np.testing.assert_array_equal(t.n_samples, [20.0, 21.0])
    stub.calls.clear()
    t = det.detection_table((np.zeros(20), np.ones(30)), [1, 2], [10])
    assert [c["x"].size for c in stub.calls] == [20, 30] and t.mean.tolist() == [0.0, 1.0]
    stub.calls.clear()
    t = det.detection_table(np.arange(40).reshape(2, 20), [1, 2], [10])
    assert len(stub.calls) == 2 and stub.calls[1]["x"].dtype == np.float64
    np.testing.assert_array_equal(stub.calls[1]["x"] + t.mean[1], np.arange(20.0, 40.0))
    np.testing.assert_array_equal(t.mean, [9.5, 29.5])
    stub.calls.clear()
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\[1\].*NaN"):
        det.detection_table([np.zeros(30), np.array([1.0, np.nan] * 15)], [1, 2], [10])
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\[1\].*1-dimensional"):
        det.detection_table([np.zeros(30), np.zeros((20, 2))], [1, 2], [10])
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\b.*2-dimensional"):
        det.detection_table([], [1], [10])
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\b.*2-dimensional"):
        det.detection_table(np.zeros(40), [1], [10])
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\b.*NaN"):
        det.detection_table(np.full((2, 20), np.nan), [1, 2], [10])
    assert stub.calls == []                                              # the errors come before any fit


# ----------------------------------------------------------------------------------------------
# detection_table: the floors
# ----------------------------------------------------------------------------------------------


def test_check_floors_forms_and_messages(stub):
    rows = np.ones((2, 20))

    def floors(f, conventions="lwsim"):
        return det.detection_table(rows, [1, 2], [10], conventions=conventions, floors=f).floors

    assert floors(None) == ()
    assert floors(None, "author") == ("snr", "ecf")
    assert floors("ecf") == ("ecf",)
    assert floors(("ecf", "snr", "ecf")) == ("snr", "ecf")     # canonical order
    assert floors([], "author") == ()
    stub.calls.clear()
    with pytest.raises(TypeError, match=r"\bfloors\b"):
        floors(3)
    with pytest.raises(ValueError, match=r"\bfloors\b.*\['sigma', 'x'\]"):
        floors(("snr", "sigma", "x"))
    assert stub.calls == []


# ----------------------------------------------------------------------------------------------
# detection_table: the "full" null's samples
# ----------------------------------------------------------------------------------------------


def test_noise_rows_forms_and_messages(stub, monkeypatch):
    rows = np.ones((4, 20))
    t = det.detection_table(rows, [1, 2, 3, 4], [10], noise="full", noise_samples=np.arange(30.0))
    assert len(stub.calls) == 1                                         # one row for every lag, fitted once
    np.testing.assert_array_equal(stub.calls[0]["x"], np.arange(30.0) - 14.5)
    assert t.method == ("stub30",) * 4 and t.n_samples.tolist() == [30.0] * 4
    # (n_lags, n): one row per lag, each lag its own fit (σ̂ here: the row's range, 24 and 48)
    monkeypatch.setattr(det, "fit_alpha", lambda x, **kw: TailFit(2.0, float(np.ptp(x)), True, "ptp", None, x.size))
    t = det.detection_table(rows[:2], [1, 2], [10], noise="full",
                            noise_samples=np.vstack([np.arange(25.0), 2 * np.arange(25.0)]))
    assert t.sigma.tolist() == [24.0, 48.0] and t.n_samples.tolist() == [25.0, 25.0]
    monkeypatch.setattr(det, "fit_alpha", stub)
    stub.calls.clear()
    with pytest.raises(ValueError, match=r"\bnoise_samples\b.*\(2, n\).*\(3, 4\)"):
        det.detection_table(rows[:2], [1, 2], [10], noise="full", noise_samples=np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"\bnoise_samples\b.*\(2, n\).*\(2, 4, 1\)"):
        det.detection_table(rows[:2], [1, 2], [10], noise="full", noise_samples=np.ones((2, 4, 1)))
    with pytest.raises(ValueError, match=r"\bnoise_samples\b.*NaN"):
        det.detection_table(rows[:2], [1, 2], [10], noise="full", noise_samples=[np.nan])
    assert stub.calls == []


# ----------------------------------------------------------------------------------------------
# detection_table
# ----------------------------------------------------------------------------------------------


def test_detection_table_degenerate_lags_are_never_detectable():
    # Long lags whose matched statistic underflowed to exactly 0: σ̂ = 0, m̄ = 0 → N̂ = inf, no NaN.
    x = np.vstack([1.0 + sample_sas(2.0, 0.1, size=(1, 1000), seed=1), np.zeros((2, 1000))])
    tab = detection_table(x, [1, 2, 3], [1, 10, 100])
    np.testing.assert_array_equal(tab.n_hat, [10, np.inf, np.inf])   # SNR ≈ 1·√N/0.1 > 20 ⇔ N > 4
    assert tab.method[1:] == ("default_gaussian",) * 2 and not tab.reliable[1:].any()
    np.testing.assert_array_equal(tab.h_n, [0, 1, 1])
    assert tab.to_dict()["n_hat"] == [10.0, "inf", "inf"]


def test_min_samples_rule_never_detects_short_lags():
    z = _noise(60)
    rows = [0.5 + z[:30], 0.5 + z]                          # ragged: 30 and 60 samples
    t = detection_table(rows, [4, 8], [10, 100, 1000], eps=1.0, method="ecf", min_samples=50)
    ref = detection_table([0.5 + z], [8], [10, 100, 1000], eps=1.0, method="ecf")
    assert t.alpha[0] == 2.0 and t.sigma[0] == 0.0 and not t.reliable[0] and t.method[0] == "too_few"
    assert t.n_hat[0] == np.inf and t.n_star[0] == np.inf     # σ̂ = 0 alone would give SNR = inf
    assert (t.alpha[1], t.sigma[1], t.n_hat[1]) == (ref.alpha[0], ref.sigma[0], ref.n_hat[0])
    np.testing.assert_array_equal(t.n_samples, [30, 60])
    np.testing.assert_array_equal(t.h_n, [8 if ref.n_hat[0] <= N else 0 for N in (10, 100, 1000)])
    assert t.mean[0] == pytest.approx(0.5 + z[:30].mean())
    with pytest.raises(ValueError, match="at least 20 values per lag"):
        detection_table(rows[:1] + [z[:10]], [4, 8], [10])  # without min_samples, 10 samples fail
    with pytest.raises(ValueError, match="min_samples"):
        detection_table(rows, [4, 8], [10], min_samples=5)


def test_fit_subsample_fits_the_tail_on_a_seeded_subset():
    from lwsim.stats import fit_alpha
    row = 0.2 + np.random.default_rng(3).standard_t(3, 1000)
    t = detection_table([row], [5], [100], method="ecf", seed=7, fit_subsample=100)
    idx = np.sort(np.random.default_rng(7).choice(1000, 100, replace=False))
    ref = fit_alpha(row[idx] - row.mean(), method="ecf")
    assert (t.alpha[0], t.sigma[0]) == (ref.alpha, ref.sigma)
    assert t.mean[0] == row.mean()                           # the mean uses every sample
    full = detection_table([row], [5], [100], method="ecf", seed=7)
    assert full.alpha[0] != t.alpha[0]


def test_table_to_dict_writes_inf_as_a_string(stub):
    rows = np.vstack([np.zeros(40), 1.0 + np.tile([-1.0, 1.0], 20)])
    t = det.detection_table(rows, [1, 2], [10, 1e3], eps=2.0, mean_bound="none")            # m̄ = 0: never detectable
    d = t.to_dict()
    assert d["n_hat"] == ["inf", 10.0] and d["n_star"] == ["inf", 4.0] and d["h_n"] == [2.0, 2.0]


def test_table_arguments_passed_to_the_fit(stub):
    rows = 3.0 + np.tile([-1.0, 1.0], (2, 20))
    t = det.detection_table(rows, [1, 2], [10], eps=5.0, method="ecf", seed=4, n_boot=7, conventions="author")
    assert [c["method"] for c in stub.calls] == ["ecf", "ecf"] and {c["n_boot"] for c in stub.calls} == {7}
    assert {c["conventions"] for c in stub.calls} == {"author"}
    assert {c["tiny_iqr"] for c in stub.calls} == {"author"}                 # the author's floors by default
    assert stub.calls[0]["seed"].integers(0, 2**32) == np.random.default_rng(4).integers(0, 2**32)
    assert t.floors == ("snr", "ecf") and t.eps == 5.0
    np.testing.assert_allclose(t.n_star, [(5.0 / 3.0) ** 2] * 2)
    stub.calls.clear()
    t = det.detection_table(rows, [1, 2], [10], floors=("ecf",))
    assert {c["tiny_iqr"] for c in stub.calls} == {"author"} and t.floors == ("ecf",)
    stub.calls.clear()
    t = det.detection_table(rows, [1, 2], [10], conventions="author", floors=("snr",))
    assert {c["tiny_iqr"] for c in stub.calls} == {"lwsim"} and t.floors == ("snr",)


def test_table_full_null_uses_the_noise_fit_and_the_signal_mean(monkeypatch):
    s = _Stub({50: (1.5, 2.0), 60: (2.0, 0.5)})
    monkeypatch.setattr(det, "fit_alpha", s)
    rows = np.array([4.0, 1.0])[:, None] + np.tile([-1.0, 1.0], 20)       # 40 samples: would be (2, 1)
    noise = 7.0 + np.tile([-3.0, 3.0], 25)                               # 50 samples, one row for all
    t = det.detection_table(rows, [1, 2], [10, 1e4], eps=2.0, noise="full", noise_samples=noise, mean_bound="none")
    assert len(s.calls) == 1                                              # fitted once
    np.testing.assert_array_equal(s.calls[0]["x"], np.tile([-3.0, 3.0], 25))   # centred noise
    np.testing.assert_allclose(t.mean, [4.0, 1.0])                        # the signal's mean
    np.testing.assert_array_equal(t.alpha, [1.5, 1.5]) and np.testing.assert_array_equal(t.sigma, [2.0, 2.0])
    np.testing.assert_allclose(t.kappa, [3.0, 3.0], rtol=1e-15)
    np.testing.assert_allclose(t.n_star, [1.0, 64.0])                      # (2·2/m̄)³
    np.testing.assert_array_equal(t.n_samples, [50.0, 50.0])
    assert t.method == ("stub50", "stub50") and t.reliable.tolist() == [True, True] and t.noise == "full"
    # per-lag noise rows: each lag its own fit
    s.calls.clear()
    t = det.detection_table(rows, [1, 2], [10, 1e4], eps=2.0, noise="full",
                            noise_samples=np.tile([-3.0, 3.0], (2, 25)), mean_bound="none")
    assert len(s.calls) == 2 and t.method == ("stub50", "stub50")


def test_table_min_samples_and_count_floor(stub):
    rows = [1.0 + np.tile([-1.0, 1.0], 10), 1.0 + np.tile([-1.0, 1.0], 15), 1.0 + np.tile([-1.0, 1.0], 3)]
    t = det.detection_table(rows, [1, 2, 3], [401, 1e3], min_samples=30, mean_bound="none")
    assert [c["x"].size for c in stub.calls] == [30]                     # only the 30-sample row is fitted
    assert t.method == ("too_few", "stub30", "too_few")
    np.testing.assert_array_equal(t.alpha, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(t.sigma, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(t.n_hat, [np.inf, 401, np.inf])
    np.testing.assert_array_equal(t.n_star, [np.inf, 400.0, np.inf])
    assert t.reliable.tolist() == [False, True, False]
    np.testing.assert_array_equal(t.n_samples, [20.0, 30.0, 6.0])
    np.testing.assert_array_equal(t.h_n, [2.0, 2.0])
    # min_samples = 20 (the minimum) keeps a 20-sample row
    stub.calls.clear()
    t = det.detection_table(rows[:1], [1], [401], min_samples=20, mean_bound="none")
    assert t.method == ("stub20",)
    # a row with one sample is allowed with min_samples (never fitted); zero samples are not
    t = det.detection_table([np.ones(1), np.ones(40)], [1, 2], [10], min_samples=20, mean_bound="none")
    assert t.method[0] == "too_few"
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\b.*at least 20\b.*\bat lag 5\b"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)                      # the empty row's mean
        det.detection_table([np.ones(40), np.ones(0)], [1, 5], [10], min_samples=20)
    with pytest.raises(ValueError, match=r"\bsamples_per_lag\b.*at least 20\b.*\bgot 19 at lag 2\.5\b"):
        det.detection_table([np.ones(40), np.ones(19), np.ones(25)], [1, 2.5, 3], [10])
    det.detection_table([np.ones(20)], [1], [10])                          # exactly 20 is enough
    with pytest.raises(ValueError, match=r"\bmin_samples\b.*>= 20"):
        det.detection_table(rows, [1, 2, 3], [10], min_samples=19)


def test_table_cap_budget_by_hand(stub):
    # m̄ = 1, 0.5 with 40 and 2000 samples: SNR(min(N, n)) > 20 ⇔ min(N, n) > 400 (m̄ 1), 1600 (m̄ ½)
    rows = [1.0 + np.tile([-1.0, 1.0], 20), 0.5 + np.tile([-1.0, 1.0], 1000)]
    t = det.detection_table(rows, [1, 2], [100, 500, 1e4], cap_budget=True, mean_bound="none")
    np.testing.assert_array_equal(t.n_hat, [np.inf, 2000.0])               # lag 1 never has 401 samples
    np.testing.assert_allclose(t.n_star, [400.0, 1600.0])
    np.testing.assert_array_equal(t.h_n, [0.0, 0.0, 2.0])
    t = det.detection_table([0.5 + np.tile([-1.0, 1.0], 1000)], [1], [100, 1601, 1e4], cap_budget=True, mean_bound="none")
    np.testing.assert_array_equal(t.n_hat, [1601.0])
    with pytest.raises(TypeError, match=r"\bcap_budget\b"):
        det.detection_table(rows, [1, 2], [10], cap_budget=1)


def test_table_fit_subsample_by_hand(stub):
    big = np.arange(100.0)
    rows = [np.arange(30.0), big]
    det.detection_table(rows, [1, 2], [10], seed=3, fit_subsample=30)
    x0, x1 = stub.calls[0]["x"], stub.calls[1]["x"]
    np.testing.assert_array_equal(x0, np.arange(30.0) - 14.5)               # size == cap: every sample
    # the bigger row: 30 of its samples, drawn without replacement from the seed's first draw, sorted
    idx = np.sort(np.random.default_rng(3).choice(100, 30, replace=False))
    np.testing.assert_array_equal(x1, big[idx] - 49.5)                       # centred on the full mean
    with pytest.raises(ValueError, match=r"\bfit_subsample\b.*>= 20"):
        det.detection_table(rows, [1, 2], [10], fit_subsample=19)
    stub.calls.clear()
    det.detection_table(rows, [1, 2], [10], fit_subsample=20)
    assert [c["x"].size for c in stub.calls] == [20, 20]


def test_table_argument_messages(stub):
    rows = np.ones((2, 40))
    with pytest.raises(ValueError, match=r"mismatched lengths"):
        det.detection_table(rows, [1, 2, 3], [10])
    with pytest.raises(ValueError, match=r"\bnoise\b.*'all'"):
        det.detection_table(rows, [1, 2], [10], noise="all")
    with pytest.raises(ValueError, match=r"\bnoise_samples\b.*required"):
        det.detection_table(rows, [1, 2], [10], noise="full")
    with pytest.raises(ValueError, match=r"\blags\b.*> 0"):
        det.detection_table(rows, [0, 2], [10])
    with pytest.raises(ValueError, match=r"\bn_grid\b.*> 0"):
        det.detection_table(rows, [1, 2], [0])
    with pytest.raises(ValueError, match=r"\bn_grid\b.*at least 1"):
        det.detection_table(rows, [1, 2], [])
    with pytest.raises(ValueError, match=r"\beps\b.*> 0.0"):
        det.detection_table(rows, [1, 2], [10], eps=0.0)
    with pytest.raises(ValueError, match=r"\bfloors\b"):
        det.detection_table(rows, [1, 2], [10], floors="sigma")
    with pytest.raises(ValueError, match=r"\blags\b.*1-dimensional"):
        det.detection_table(rows, [[1], [2]], [10])
    with pytest.raises(ValueError, match=r"\bn_grid\b.*1-dimensional"):
        det.detection_table(rows, [1, 2], [[10, 100]])
    assert stub.calls == []                                                   # nothing fitted before the checks


def test_table_full_null_with_one_lag(stub):
    t = det.detection_table([1.0 + np.tile([-1.0, 1.0], 20)], [3], [401], noise="full",
                            noise_samples=np.tile([-1.0, 1.0], 25), mean_bound="none")
    assert t.n_hat.tolist() == [401.0] and t.n_samples.tolist() == [50.0]


def test_detection_table_snr_floor_makes_tiny_lags_undetectable():
    rng = np.random.default_rng(0)
    base = rng.standard_normal(2000)
    # lag 1: scale 1 (σ̂ ≈ 0.71 for N(0,1): SαS σ = std/√2); lag 2: the same shape at 1e-13
    rows = np.stack([0.5 + base, 1e-13 * (0.5 + base)])
    grid = [10, 100, 1000]
    lag = stats.detection_table(rows, [1, 2], grid, method="ecf")
    flo = stats.detection_table(rows, [1, 2], grid, method="ecf", floors=("snr",))
    assert lag.n_hat[0] == lag.n_hat[1] == flo.n_hat[0]          # scale-free without the floor
    assert flo.n_hat[1] == np.inf and flo.n_star[1] == np.inf
    assert list(flo.h_n) == [0.0 if n < lag.n_hat[0] else 1.0 for n in grid]
    assert flo.floors == ("snr",) and lag.floors == ()
    auth = stats.detection_table(rows, [1, 2], grid, method="ecf", conventions="author")
    assert auth.floors == ("snr", "ecf") and auth.n_hat[1] == np.inf


def test_floors_argument_checks():
    x = np.random.default_rng(0).standard_normal((2, 100))
    with pytest.raises(ValueError, match="floors"):
        stats.detection_table(x, [1, 2], [10], floors=("sigma",))
    with pytest.raises(TypeError, match="floors"):
        stats.detection_table(x, [1, 2], [10], floors=3)
    with pytest.raises(ValueError, match="sigma_floor"):
        stats.snr(1.0, 2.0, 1.0, 10, sigma_floor=-1.0)


def test_full_null_argument_checks():
    x = np.random.default_rng(0).standard_normal((2, 100))
    with pytest.raises(ValueError, match="noise_samples is required"):
        stats.detection_table(x, [1, 2], [10], noise="full")
    with pytest.raises(ValueError, match="noise_samples is required"):
        stats.detection_table(x, [1, 2], [10], noise_samples=x[0])
    with pytest.raises(ValueError, match="noise must be"):
        stats.detection_table(x, [1, 2], [10], noise="global", noise_samples=x[0])
    with pytest.raises(ValueError, match=r"\(2, n\)"):
        stats.detection_table(x, [1, 2], [10], noise="full", noise_samples=np.ones((3, 100)))


# ----------------------------------------------------------------------------------------------
# detection within the data: the lower 99.9% bound of |m̄| (docs/statistics.md §3.3.3)
# ----------------------------------------------------------------------------------------------

Q2 = 4.653507531027093     # q_{0.9995} of unit SαS(2) = N(0, 2): √2 Φ⁻¹(0.9995)


def test_lower_bound_by_hand_with_stub(stub):
    # α̂ = 2, σ̂ = 1, n = 40: the bound is |m̄| − Q2/√40 = |m̄| − 0.73578; m̄ = 2 → 1.26422,
    # N* = (20/1.26422)² = 250.27; m̄ = −1 → 0.26422, N* = 5729.6; m̄ = 0.5 → 0: never
    rows = np.array([2.0, -1.0, 0.5])[:, None] + np.tile([-1.0, 1.0], 20)
    t = det.detection_table(rows, [1, 2, 3], [100, 251, 6000, 1e9])
    lo = np.array([2.0, 1.0, 0.5]) - Q2 / np.sqrt(40)
    assert t.mean_bound == "lower"
    np.testing.assert_allclose(t.mean_lo, [lo[0], lo[1], 0.0], rtol=1e-12)
    np.testing.assert_allclose(t.mean, [2.0, -1.0, 0.5])             # the point estimate stays
    np.testing.assert_allclose(t.n_star[:2], (20 / lo[:2]) ** 2, rtol=1e-12)
    assert t.n_star[2] == np.inf
    np.testing.assert_array_equal(t.n_hat, [251, 6000, np.inf])
    np.testing.assert_array_equal(t.h_n, [0, 1, 2, 2])
    d = t.to_dict()
    assert d["mean_bound"] == "lower" and d["mean_lo"][2] == 0.0


def test_lower_bound_follows_the_conventions_and_can_be_chosen():
    x = 0.05 + sample_sas(1.9, 1.0, size=(2, 600), seed=4)
    lw, au = det.detection_table(x, [1, 2], [25, 1e12]), det.detection_table(x, [1, 2], [25, 1e12], conventions="author")
    assert (lw.mean_bound, au.mean_bound) == ("lower", "none")
    assert det.detection_table(x, [1, 2], [25], conventions="author", mean_bound="lower").mean_bound == "lower"
    assert det.detection_table(x, [1, 2], [25], mean_bound="none").mean_lo is None
    with pytest.raises(ValueError, match=r"\bmean_bound\b"):
        det.detection_table(x, [1, 2], [25], mean_bound="upper")


def test_a_planted_zero_mean_lag_is_never_detected_far_beyond_the_data():
    # 40 lags with true mean 0 and n = 512 samples each (quick's n_diag), at budgets up to
    # 10⁶ × n: the point estimate passes ε = 20 through m̄'s estimation error at nearly every lag;
    # the lower bound detects none (a 0.1% chance per lag)
    for alpha in (2.0, 1.9, 1.5):
        x = sample_sas(alpha, 1.0, size=(40, 512), seed=11)
        grid = 512.0 * np.geomspace(1, 1e6, 13)
        point = det.detection_table(x, np.arange(1, 41), grid, method="mcculloch", mean_bound="none")
        lower = det.detection_table(x, np.arange(1, 41), grid, method="mcculloch")
        assert np.isfinite(point.n_hat).sum() >= 30
        assert np.isinf(lower.n_hat).all() and np.isinf(lower.n_star).all() and (lower.h_n == 0).all()


def test_a_planted_signal_is_still_detected_under_the_bound():
    # m = 2, σ = 1, α = 1.9, n = 512: the bound is 2 − q(α̂) 512^{−1/κ̂}, about 1.4 at α̂ = 1.9 and
    # still > 0.5 at α̂ = 1.75 (q = 21): the bound's cost grows fast as α̂ falls
    x = 2.0 + sample_sas(1.9, 1.0, size=(3, 512), seed=5)
    t = det.detection_table(x, [1, 2, 3], [25, 1e4, 1e8], method="mcculloch")
    assert (t.mean_lo > 0.5).all() and (t.mean_lo < t.mean).all()
    assert np.isfinite(t.n_hat).all()


def test_lower_bound_under_the_full_null_uses_the_lags_own_samples():
    rng = np.random.default_rng(2)
    x = 0.3 + rng.standard_normal((2, 400)) * np.array([[0.01], [1.0]])   # lag 1 tight, lag 2 wide
    noise = sample_sas(2.0, 5.0, size=400, seed=3)                          # the noise is wider still
    t = det.detection_table(x, [1, 2], [25, 1e6], noise="full", noise_samples=noise, method="mcculloch")
    own = [det.mcculloch_point(np.sort(r - r.mean())) for r in x]
    want = [max(0.0, abs(r.mean()) - stable_q(a) * s * 400 ** -(1 - 1 / a)) for r, (a, s, _) in zip(x, own)]
    np.testing.assert_allclose(t.mean_lo, want, rtol=1e-12)
    assert t.mean_lo[0] > 0.29 and t.mean_lo[1] < t.mean_lo[0]     # the tight lag keeps almost all of m̄


def stable_q(a):
    from lwsim.stats.stable import sas_tail_quantile
    return sas_tail_quantile(a)


def test_lower_bound_full_null_own_fit_is_the_centred_mcculloch_fit_to_the_last_bit():
    # under noise="full" the lag's own (α̂, σ̂) is the McCulloch fit of its samples around m̄, the
    # same fit noise="lag" makes with method="mcculloch" and no bootstrap: the two bounds agree
    # exactly. The samples sit at 2²⁰ with a spread of a few hundred ulps (2⁻³² each), so any
    # offset (e.g. around +m̄ ≈ 2²¹, where the ulp doubles) would round the quantiles and move σ̂
    rng = np.random.default_rng(3)
    x = 2.0 ** 20 + np.round(rng.standard_cauchy(2000) * 50) * 2.0 ** -32
    full = det.detection_table([x], [1], [10, 100], noise="full", noise_samples=rng.standard_normal(200))
    lag = det.detection_table([x], [1], [10, 100], method="mcculloch", n_boot=0)
    assert full.mean_bound == lag.mean_bound == "lower"
    assert 0.0 < full.mean_lo[0] < full.mean[0]
    np.testing.assert_array_equal(full.mean_lo, lag.mean_lo)


def test_table_argument_errors_name_the_argument_and_what_was_given():
    # no lags at all, under either null: the lags are refused (not an index error on the empty rows)
    for kw in (dict(), dict(noise="full", noise_samples=np.ones(50))):
        with pytest.raises(ValueError, match=r"\blags\b.*at least 1"):
            det.detection_table(np.empty((0, 50)), [], [10], **kw)
    rows = [1.0 + np.tile([-1.0, 1.0], 20)]
    with pytest.raises(TypeError, match=r"\bcap_budget\b.*got int$"):
        det.detection_table(rows, [1], [10], cap_budget=1)
