"""Tests of lwsim/stats/tailfit.py (laid out like the code: docs/testing.md).

Tests that kill the surviving mutants of mutmut on lwsim/stats/tailfit.py (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.
The ECF regression is fed an exact law |φ̂(t)|² = exp(−2 (c t)^α) (``_ecf_abs2`` replaced), so α̂
and σ̂ are known by hand; fit_alpha's selection rules are checked with the fits replaced by stubs.

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ.

The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases.

lwsim.stats: every bad input gets a ValueError/TypeError naming the argument (no silent NaN).

lwsim.stats tail-index fits (docs/statistics.md §3.2): table, ECF, McCulloch, bootstrap, selection rules.

The full accuracy grid {1.1, …, 2.0} × 40 repetitions at n = 10⁵ runs with LWSIM_SLOW=1."""


from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps

from lwsim import stats
from lwsim.stats import fit_alpha, iqr_theory, mcculloch, sample_sas, tailfit
from lwsim.stats.tailfit import ecf_fit


T = np.linspace(0.05, 3.0, 50)


X = np.arange(101.0)                 # quartiles 25, 50, 75: IQR 50, median 50


S = 50.0 / 1.349                     # the grid's scale s = IQR/1.349


def _law(c, a, t=T):
    return np.exp(-2.0 * (c * t) ** a)


def _feed(monkeypatch, phi2):
    seen = {}

    def fake(y, t):
        seen["y"], seen["t"] = np.array(y), np.array(t)
        return np.array(phi2, dtype=float)
    monkeypatch.setattr(tailfit, "_ecf_abs2", fake)
    return seen


def _weighted_means(phi2):
    keep = (phi2 > 0.01) & (phi2 < 0.95)
    lp = np.log(phi2[keep])
    w = np.exp(-2.0 * (lp + 0.7) ** 2)
    w /= w.sum()
    return w @ np.log(T[keep])


def _window_case(keep_idx, extra):
    """The exact law (c 0.7, α 1.5) at keep_idx; ``extra`` {index: value} off the law; 1 elsewhere."""
    phi2 = np.ones(50)
    phi2[keep_idx] = _law(0.7, 1.5)[keep_idx]
    for i, v in extra.items():
        phi2[i] = v
    return phi2


# ---- fit_alpha with stub fits ---------------------------------------------------------------------
class _Fits:
    """Stubs for ecf_fit and the McCulloch functions; record what fit_alpha passes."""

    def __init__(self, monkeypatch, ecf=(1.5, 2.0, 3.0, True), point=(1.7, 4.0, 5.0), boot=None):
        self.calls = {}
        self.ecf, self.point = ecf, point
        self.boot = np.full(50, 1.6) if boot is None else boot
        monkeypatch.setattr(tailfit, "ecf_fit", self._ecf)
        monkeypatch.setattr(mcculloch, "mcculloch_point", self._point)
        monkeypatch.setattr(mcculloch, "bootstrap_alphas", self._boot)
        monkeypatch.setattr(mcculloch, "iqr_theory", lambda a, conventions="lwsim": self._log("iqr", a, conventions) or 10.0 * a)

    def _log(self, key, *args):
        self.calls.setdefault(key, []).append(args)

    def _ecf(self, x, *args):
        self._log("ecf", np.array(x), *args)
        return self.ecf

    def _point(self, xs, *args):
        self._log("point", np.array(xs), *args)
        return self.point

    def _boot(self, xs, n_boot, rng, *args):
        self._log("boot", np.array(xs), n_boot, rng, *args)
        return self.boot


def _x(n):
    return np.random.default_rng(0).standard_normal(n)


# ---- ECF: σ̂ from the unclipped intercept ------------------------------------------------------
def _author_ecf(x):
    """The author's ECF regression, written from its formulas (raw units, direct cos/sin)."""
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    s = iqr / 1.349
    t = np.linspace(0.05 / s, 3.0 / s, 50)
    tx = np.outer(t, x)
    phi2 = np.cos(tx).mean(1) ** 2 + np.sin(tx).mean(1) ** 2
    m = (phi2 > 0.01) & (phi2 < 0.95)
    Y, X = np.log(-np.log(phi2[m])), np.log(t[m])
    w = np.exp(-2.0 * (np.log(phi2[m]) + 0.7) ** 2)
    w /= w.sum()
    Xb, Yb = np.average(X, weights=w), np.average(Y, weights=w)
    slope = np.sum(w * (X - Xb) * (Y - Yb)) / np.sum(w * (X - Xb) ** 2)
    a = float(np.clip(slope, 1.0, 2.0))
    return a, (np.exp(Yb - slope * Xb) / 2.0) ** (1.0 / a), slope


X_stats_errors = np.random.default_rng(0).standard_normal(1000)


SETTINGS = dict(deadline=None, derandomize=True, database=None)


ALPHAS = np.round(np.arange(1.1, 2.01, 0.1), 2)


slow = pytest.mark.skipif(os.environ.get("LWSIM_SLOW") != "1", reason="set LWSIM_SLOW=1")


def _reference_koutrouvelis(phi2, s):
    """Straight transcription of docs/statistics.md §3.2 (np.polyfit), in units where t ∈ [0.05, 3]."""
    t = np.linspace(0.05, 3.0, 50)
    for lo, hi, need in ((0.01, 0.95, 5), (1e-4, 0.999, 3)):
        keep = (phi2 > lo) & (phi2 < hi)
        if keep.sum() >= need:
            break
    w = np.exp(-2 * (np.log(phi2[keep]) + 0.7) ** 2)
    slope, icpt = np.polyfit(np.log(t[keep]), np.log(-np.log(phi2[keep])), 1, w=np.sqrt(w))
    return slope, s * (np.exp(icpt) / 2) ** (1 / slope)


# ---- σ̂ of every branch of fit_alpha: scale-equivariant and accurate (issue 14) -----------------
def _force_mcculloch(monkeypatch):
    monkeypatch.setattr(tailfit, "_ecf_abs2", lambda y, t: np.ones_like(t))   # ECF unusable


BRANCH_CASES = [(1.0, 2.0, 11), (1.6, 0.7, 12), (1.6, 3.0, 13)]   # (α, σ, seed): Cauchy and SαS(1.6)


# ----------------------------------------------------------------------------------------------
# TailFit
# ----------------------------------------------------------------------------------------------


def test_fit_alpha_explicit_ecf_keeps_an_unreliable_fit(monkeypatch):
    _Fits(monkeypatch)
    out = tailfit.fit_alpha(_x(100), method="ecf")          # n < 500: unreliable, still "ecf"
    assert out == tailfit.TailFit(1.5, 2.0, False, "ecf", None, 100)


def test_fit_alpha_ecf_falls_back_to_mcculloch(monkeypatch):
    f = _Fits(monkeypatch, ecf=(2.0, 0.0, 3.0, False))
    out = tailfit.fit_alpha(_x(600), method="ecf", n_boot=0)
    assert out == tailfit.TailFit(1.7, 4.0, True, "ecf->mcculloch", None, 600)
    assert len(f.calls["ecf"]) == 1


def test_tailfit_to_dict():
    d = tailfit.TailFit(1.5, 2.0, True, "ecf", (1.4, 1.6), 100).to_dict()
    assert d == {"alpha": 1.5, "sigma": 2.0, "reliable": True, "method": "ecf", "ci": (1.4, 1.6), "n": 100}


def test_selection_degenerate_data_defaults_to_gaussian():
    f = fit_alpha(np.full(1000, 3.0))
    assert f == tailfit.TailFit(2.0, 0.0, False, "default_gaussian", f.ci, 1000)
    assert np.isfinite(f.ci).all()


# ----------------------------------------------------------------------------------------------
# _ecf_abs2
# ----------------------------------------------------------------------------------------------


# ---- _ecf_abs2, _ecf_scale ---------------------------------------------------------------------
def test_ecf_abs2_hand_values():
    # private: no public function returns |φ̂(t)|² (ecf_fit only regresses on it)
    # y = {0, π/2}: t = 1: ((1 + 0)/2)² + ((0 + 1)/2)² = ½; t = 2: cos π = −1, sin π = 0 → 0;
    # t = 3: ((1 + 0)/2)² + ((0 − 1)/2)² = ½
    np.testing.assert_allclose(tailfit._ecf_abs2(np.array([0.0, np.pi / 2]), np.array([1.0, 2.0, 3.0])),
                               [0.5, 0.0, 0.5], atol=1e-15)
    # a point mass: |φ̂|² = 1 everywhere; integer input is read as float
    np.testing.assert_allclose(tailfit._ecf_abs2(np.zeros(3, dtype=np.int64), np.array([0.5, 1.0])), [1.0, 1.0])
    # y = {0, π}: t = 1 → cos mean 0 → 0; t = 2 → 1
    np.testing.assert_allclose(tailfit._ecf_abs2(np.array([0.0, np.pi]), np.array([1.0, 2.0])), [0.0, 1.0], atol=1e-15)


# ---- kernels ---------------------------------------------------------------------------------
def test_ecf_rotation_kernel_matches_direct_cos_sin():
    # private: no public function returns |φ̂(t)|² (ecf_fit only regresses on it)
    y = sample_sas(1.3, 1.0, size=3001, seed=3)
    t = np.linspace(0.05, 3.0, 50)
    tx = np.outer(t, y)
    direct = np.cos(tx).mean(1) ** 2 + np.sin(tx).mean(1) ** 2
    np.testing.assert_allclose(tailfit._ecf_abs2(y, t), direct, rtol=0, atol=1e-13)


# ----------------------------------------------------------------------------------------------
# _ecf_scale
# ----------------------------------------------------------------------------------------------


def test_ecf_scale_rules():
    # private: ecf_fit's outputs do not show the grid's scale s itself (it only conditions the regression)
    x = np.array([-1.0, 1.0])                     # std 1
    assert tailfit._ecf_scale(x, 1e-10, "lwsim") is None                  # ≤ 1e−10: give up
    assert tailfit._ecf_scale(x, 2e-10, "lwsim") == 2e-10 / 1.349
    assert tailfit._ecf_scale(x, 2e-12, "author") == 2e-12 / 1.349        # > 1e−12: IQR/1.349
    assert tailfit._ecf_scale(x, 1e-12, "author") == pytest.approx(1.0, rel=1e-15)   # std
    assert tailfit._ecf_scale(3 * x, 0.0, "author") == pytest.approx(3.0, rel=1e-15)
    assert tailfit._ecf_scale(1e-12 * x, 0.0, "author") == pytest.approx(1e-12, rel=1e-12)  # 1.349e−12 > 1e−12
    assert tailfit._ecf_scale(7e-13 * x, 0.0, "author") is None             # 0.944e−12 ≤ 1e−12
    assert tailfit.AUTHOR_IQR_FLOOR == 1e-12


# ----------------------------------------------------------------------------------------------
# ecf_fit
# ----------------------------------------------------------------------------------------------


# ---- ecf_fit ---------------------------------------------------------------------------------
@pytest.mark.parametrize("conventions", ["lwsim", "author"])
def test_ecf_fit_recovers_an_exact_law(monkeypatch, conventions):
    seen = _feed(monkeypatch, _law(0.7, 1.5))
    a, s, iqr, ok = tailfit.ecf_fit(X, conventions=conventions)
    assert ok is True and iqr == 50.0 and type(a) is float and type(s) is float and type(iqr) is float
    assert a == pytest.approx(1.5, abs=1e-12)
    assert s == pytest.approx(0.7 * S, rel=1e-12)                # σ̂ = s · c
    np.testing.assert_allclose(seen["y"], (X - 50.0) / S, rtol=1e-15)   # centred on the median, scaled
    np.testing.assert_allclose(seen["t"], T, rtol=1e-15)


def test_ecf_fit_clipped_slope_sigma_by_hand(monkeypatch):
    # slope 2.4 clipped to 2: lwsim refits the intercept with slope 2, σ̂ = s (c^α e^{(α−2) ū})^{1/2};
    # the author keeps the unclipped intercept, σ̂ = (c s)^{α/2} in the data's units
    c, alpha = 0.5, 2.4
    phi2 = _law(c, alpha)
    _feed(monkeypatch, phi2)
    um = _weighted_means(phi2)
    a, s, _, ok = tailfit.ecf_fit(X)
    assert ok and a == 2.0
    assert s == pytest.approx(S * (c ** alpha * np.exp((alpha - 2.0) * um)) ** 0.5, rel=1e-10)
    a, s, _, ok = tailfit.ecf_fit(X, conventions="author")
    assert ok and a == 2.0
    assert s == pytest.approx((c * S) ** (alpha / 2.0), rel=1e-10)
    # slope 0.8: clipped to alpha_lo = 1 by default, kept at alpha_lo = 0.5
    phi2 = _law(0.9, 0.8)
    _feed(monkeypatch, phi2)
    um = _weighted_means(phi2)
    a, s, _, _ = tailfit.ecf_fit(X)
    assert a == 1.0
    assert s == pytest.approx(S * (0.9 ** 0.8 * np.exp((0.8 - 1.0) * um)), rel=1e-10)
    a, s, _, _ = tailfit.ecf_fit(X, alpha_lo=0.5)
    assert a == pytest.approx(0.8, abs=1e-12) and s == pytest.approx(0.9 * S, rel=1e-12)
    a, s, _, _ = tailfit.ecf_fit(X, alpha_lo=0.5, conventions="author")
    assert a == pytest.approx(0.8, abs=1e-12) and s == pytest.approx(0.9 * S, rel=1e-12)


def test_ecf_fit_windows(monkeypatch):
    five = [10, 11, 12, 13, 14]
    assert all(0.01 < v < 0.95 for v in _law(0.7, 1.5)[five])
    # 5 points in (0.01, 0.95): the strict window alone, exact; the points at 0.97 and 0.98 (relaxed
    # window only) and exactly at the window's ends (0.95, 0.01) are not used
    _feed(monkeypatch, _window_case(five, {0: 0.98, 1: 0.97, 2: 0.95, 40: 0.01}))
    a, s, _, ok = tailfit.ecf_fit(X, alpha_lo=0.1)
    assert ok and a == pytest.approx(1.5, abs=1e-12) and s == pytest.approx(0.7 * S, rel=1e-12)
    # 4 points: the relaxed window (1e−4, 0.999) is used and takes the off-law points in
    _feed(monkeypatch, _window_case(five[:4], {0: 0.98, 1: 0.97}))
    a, _, _, ok = tailfit.ecf_fit(X, alpha_lo=0.1)
    assert ok and abs(a - 1.5) > 0.05
    # 3 points in the relaxed window only: enough; exactly 0.999 and 1e−4 are outside it
    _feed(monkeypatch, _window_case([], {0: 0.99, 1: 0.98, 2: 0.97, 3: 0.999, 45: 1e-4}))
    a, s, iqr, ok = tailfit.ecf_fit(X, alpha_lo=0.1)
    u, y = np.log(T[:3]), np.log(-np.log([0.99, 0.98, 0.97]))
    w = np.exp(-2.0 * (np.log([0.99, 0.98, 0.97]) + 0.7) ** 2)
    w /= w.sum()
    slope = (w @ ((u - w @ u) * (y - w @ y))) / (w @ ((u - w @ u) ** 2))
    assert ok and a == pytest.approx(min(slope, 2.0), rel=1e-12)
    # 2 points: no fit
    _feed(monkeypatch, _window_case([], {0: 0.99, 1: 0.98, 3: 0.999, 45: 1e-4}))
    assert tailfit.ecf_fit(X) == (2.0, 0.0, 50.0, False)


def test_ecf_fit_gives_up_on_a_tiny_iqr():
    out = tailfit.ecf_fit(np.full(100, 3.0))
    assert out == (2.0, 0.0, 0.0, False) and type(out[2]) is float
    x = np.zeros(100)
    x[:60] = 1e-11 * np.linspace(-1, 1, 60)
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    assert 0 < iqr <= 1e-10
    assert tailfit.ecf_fit(x) == (2.0, 0.0, iqr, False)


def test_ecf_fit_author_tiny_iqr_scales_by_std(monkeypatch):
    x = np.zeros(100)
    x[0], x[-1] = -1e-3, 1e-3                                 # IQR 0, std √(2e−6/100)
    seen = _feed(monkeypatch, _law(0.7, 1.5))
    a, s, iqr, ok = tailfit.ecf_fit(x, tiny_iqr="author")
    sd = np.sqrt(2e-6 / 100)
    assert ok and iqr == 0.0 and a == pytest.approx(1.5, abs=1e-12) and s == pytest.approx(0.7 * sd, rel=1e-9)
    np.testing.assert_allclose(seen["y"], x / sd, rtol=1e-9)
    assert tailfit.ecf_fit(x)[3] is False                     # lwsim gives up


def test_ecf_fit_argument_messages():
    with pytest.raises(ValueError, match=r"\btiny_iqr\b"):
        tailfit.ecf_fit(X, tiny_iqr="x")
    with pytest.raises(ValueError, match=r"\bconventions\b"):
        tailfit.ecf_fit(X, conventions="x")


def test_ecf_tiny_iqr_author_grid_hand_case():
    """Half the samples at one value (IQR ≤ 1e-12 when spread 1e-11 sits in the tails only):
    lwsim gives up (IQR ≤ 1e-10), the author sets the grid from 1.349·std."""
    x = np.zeros(1000)
    x[:100] = 1e-11 * np.linspace(-3, 3, 100)
    x[100:200] = 1e-11 * np.linspace(-3, 3, 100)
    q25, q75 = np.percentile(x, [25, 75])
    assert q75 - q25 <= 1e-12
    a, s, iqr, ok = ecf_fit(x)
    assert not ok and s == 0.0
    a2, s2, _, ok2 = ecf_fit(x, tiny_iqr="author")
    assert ok2 and s2 > 0
    # IQR in (1e-12, 1e-10]: the author fits on IQR/1.349 like lwsim does above 1e-10
    y = 1e-11 * np.random.default_rng(1).standard_normal(4000)
    ay, sy, _, oky = ecf_fit(y, tiny_iqr="author")
    az, sz, _, okz = ecf_fit(y * 1e3)                       # the same data, scaled above lwsim's floor
    assert oky and okz and ay == pytest.approx(az, abs=1e-9) and sy * 1e3 == pytest.approx(sz, rel=1e-9)
    assert not ecf_fit(y)[3]
    # nothing at all: std = 0 → both give up
    assert not ecf_fit(np.zeros(100), tiny_iqr="author")[3]


@pytest.mark.parametrize("alpha,scale,n_keep", [(1.5, 1.0, 50), (1.3, 0.4, 50), (1.8, 30.0, 4)])
def test_ecf_regression_matches_spec_transcription(monkeypatch, alpha, scale, n_keep):
    # Feed the regression a noisy |φ̂|² curve (t in units of 1/s) and compare with the transcription.
    x = sample_sas(alpha, 1.0, size=2000, seed=6)
    s = np.subtract(*np.percentile(x, [75, 25])) / 1.349
    t = np.linspace(0.05, 3.0, 50)
    phi2 = np.exp(-2 * (scale * t) ** alpha) * np.exp(0.05 * np.random.default_rng(7).standard_normal(50))
    if n_keep < 5:  # only 4 points inside (0.01, 0.95): the relaxed window must be used
        phi2 = np.r_[np.full(20, 0.96), np.geomspace(0.9, 0.02, 4), np.full(26, 0.005)]
    phi2 = np.minimum(phi2, 0.9999)
    monkeypatch.setattr(tailfit, "_ecf_abs2", lambda y, tt: phi2)
    a, sig, _, ok = tailfit.ecf_fit(x, alpha_lo=0.1)
    want_a, want_sig = _reference_koutrouvelis(phi2, s)
    assert ok
    np.testing.assert_allclose([a, sig], [want_a, want_sig], rtol=1e-10)


# ----------------------------------------------------------------------------------------------
# fit_alpha: the reliability rule
# ----------------------------------------------------------------------------------------------


def _reliable_via_fit(monkeypatch, n, a, s, iqr, alpha_lo=1.0):
    """fit_alpha's ``reliable`` for a fit (α̂, σ̂, IQR) of n samples: the ECF's (stable range, floor 1.0)
    or, with alpha_lo = 0.5, McCulloch's in the open range (its table starts at α = 0.5)."""
    if alpha_lo == 1.0:
        _Fits(monkeypatch, ecf=(a, s, iqr, True))
        return fit_alpha(_x(n), method="ecf", n_boot=0).reliable
    assert alpha_lo == 0.5
    _Fits(monkeypatch, point=(a, s, iqr))
    return fit_alpha(_x(n), method="mcculloch", n_boot=0, alpha_range="open").reliable


def test_reliable_boundaries(monkeypatch):
    def r(*args):
        return _reliable_via_fit(monkeypatch, *args)

    assert r(500, 1.5, 1.0, 1.0, 1.0) and not r(499, 1.5, 1.0, 1.0, 1.0)
    assert not r(10_000, 1.5, 1e-12, 1.0, 1.0) and r(10_000, 1.5, 1.1e-12, 1.0, 1.0)
    assert not r(10_000, 1.5, 1.0, 1e-10, 1.0) and r(10_000, 1.5, 1.0, 1.1e-10, 1.0)
    # the lower edge is alpha_lo + 0.01 (≤), the upper 1.99 (≥), both only below n = 2000
    assert not r(1999, 1.01, 1.0, 1.0, 1.0) and r(1999, 1.0101, 1.0, 1.0, 1.0)
    assert not r(1999, 1.99, 1.0, 1.0, 1.0) and r(1999, 1.9899, 1.0, 1.0, 1.0)
    assert not r(1999, 0.51, 1.0, 1.0, 0.5) and r(1999, 1.0, 1.0, 1.0, 0.5)
    assert r(2000, 1.99, 1.0, 1.0, 1.0) and r(2000, 1.01, 1.0, 1.0, 1.0)
    assert r(1999, 1.5, 1.0, 1.0, 1.0) is True and r(499, 1.5, 1.0, 1.0, 1.0) is False


def test_reliability_rule(monkeypatch):
    def r(*args):
        return _reliable_via_fit(monkeypatch, *args)

    assert r(10_000, 1.5, 1.0, 1.0, 1.0)
    assert not r(499, 1.5, 1.0, 1.0, 1.0)               # n < 500
    assert not r(10_000, 1.5, 1e-13, 1.0, 1.0)          # σ̂ ≤ 1e−12
    assert not r(10_000, 1.5, 1.0, 1e-11, 1.0)          # IQR ≤ 1e−10
    assert not r(1999, 1.995, 1.0, 1.0, 1.0) and not r(1999, 1.005, 1.0, 1.0, 1.0)
    assert r(2000, 1.995, 1.0, 1.0, 1.0) and r(2000, 1.0, 1.0, 1.0, 1.0)


# ----------------------------------------------------------------------------------------------
# fit_alpha
# ----------------------------------------------------------------------------------------------


def test_fit_alpha_ecf_branch_and_defaults(monkeypatch):
    f = _Fits(monkeypatch)
    x = _x(3000)
    out = tailfit.fit_alpha(x)
    assert out == tailfit.TailFit(1.5, 2.0, True, "ecf", None, 3000)
    (xx, lo, conv, tiny), = f.calls["ecf"]
    np.testing.assert_array_equal(xx, x)
    assert (lo, conv, tiny) == (1.0, "lwsim", "lwsim")
    assert "point" not in f.calls
    tailfit.fit_alpha(x, alpha_range="open", tiny_iqr="author")
    assert f.calls["ecf"][1][1:] == (0.1, "lwsim", "author")
    tailfit.fit_alpha(x, conventions="author")
    assert f.calls["ecf"][2][1:] == (1.0, "author", "lwsim")


def test_fit_alpha_auto_falls_back_to_the_bootstrap_median(monkeypatch):
    boot = np.linspace(1.5, 1.7, 201)                       # CI (1.505, 1.695): width 0.19 < 0.3
    f = _Fits(monkeypatch, boot=boot)
    x = _x(100)                                              # ECF unreliable (n < 500)
    out = tailfit.fit_alpha(x, seed=3, n_boot=25)
    assert out.method == "mcculloch_boot" and out.n == 100 and out.reliable is False
    assert out.alpha == pytest.approx(1.6, abs=1e-12)
    assert out.sigma == pytest.approx(5.0 / 16.0, rel=1e-12)     # IQR / iqr_theory(1.6) = 5/(10·1.6)
    assert out.ci == pytest.approx((1.505, 1.695), abs=1e-12) and all(type(v) is float for v in out.ci)
    (xs, lo_m, conv), = f.calls["point"]
    np.testing.assert_array_equal(xs, np.sort(x))
    assert (lo_m, conv) == (1.0, "lwsim")
    (xs, n_boot, rng, lo_m, conv), = f.calls["boot"]
    np.testing.assert_array_equal(xs, np.sort(x))
    assert (n_boot, lo_m, conv) == (25, 1.0, "lwsim")
    assert rng.integers(0, 2**32) == np.random.default_rng(3).integers(0, 2**32)
    assert f.calls["iqr"] == [(pytest.approx(1.6), "lwsim")]


def test_fit_alpha_auto_defaults_and_open_range(monkeypatch):
    f = _Fits(monkeypatch, ecf=(1.5, 2.0, 3.0, False))
    out = tailfit.fit_alpha(_x(3000), alpha_range="open", conventions="lwsim")
    assert out.method == "mcculloch_boot" and out.alpha == 1.6 and out.reliable is True
    assert f.calls["point"][0][1] == 0.5                     # max(0.1, the table's first α = 0.5)
    _, n_boot, rng, lo_m, _ = f.calls["boot"][0]
    assert n_boot == 200 and lo_m == 0.5
    assert rng.integers(0, 2**32) == np.random.default_rng(0).integers(0, 2**32)


def test_fit_alpha_auto_rejects_a_wide_or_degenerate_bootstrap(monkeypatch):
    # CI width exactly the limit is not narrower: α̂ = 2 flagged unreliable, σ̂ = IQR/iqr_theory(2)
    f = _Fits(monkeypatch)
    monkeypatch.setattr(tailfit, "CI_MAX_WIDTH", 0.0)
    out = tailfit.fit_alpha(_x(100), conventions="author")
    assert out == tailfit.TailFit(2.0, 0.25, False, "default_gaussian", (1.6, 1.6), 100)
    assert type(out.sigma) is float
    assert f.calls["iqr"] == [(2.0, "author")]
    assert f.calls["point"][0][2] == "author" and f.calls["boot"][0][4] == "author"
    monkeypatch.setattr(tailfit, "CI_MAX_WIDTH", 0.3)
    # a narrow CI but IQR ≤ 1e−10: no σ̂ to trust
    f = _Fits(monkeypatch, point=(1.7, 0.0, 1e-10))
    assert tailfit.fit_alpha(_x(100)).method == "default_gaussian"
    f = _Fits(monkeypatch, point=(1.7, 0.0, 2e-10))
    out = tailfit.fit_alpha(_x(100))
    assert out.method == "mcculloch_boot" and out.sigma == pytest.approx(2e-10 / 16.0)


def test_fit_alpha_explicit_mcculloch(monkeypatch):
    f = _Fits(monkeypatch)
    out = tailfit.fit_alpha(_x(3000), method="mcculloch", n_boot=0)
    assert out == tailfit.TailFit(1.7, 4.0, True, "mcculloch", None, 3000)
    assert "boot" not in f.calls and "ecf" not in f.calls
    out = tailfit.fit_alpha(_x(3000), method="mcculloch", n_boot=1)
    assert out.ci == (1.6, 1.6) and f.calls["boot"][0][1] == 1
    # the McCulloch fit's reliability uses its own floor: α̂ at 0.505 ≤ 0.5 + 0.01 with n < 2000
    f = _Fits(monkeypatch, point=(0.505, 4.0, 5.0))
    assert not tailfit.fit_alpha(_x(1000), method="mcculloch", alpha_range="open", n_boot=0).reliable
    f = _Fits(monkeypatch, point=(1.005, 4.0, 5.0))
    assert tailfit.fit_alpha(_x(1000), method="mcculloch", alpha_range="open", n_boot=0).reliable


def test_fit_alpha_argument_messages():
    x = _x(100)
    with pytest.raises(ValueError, match=r"\bmethod\b"):
        tailfit.fit_alpha(x, method="x")
    with pytest.raises(ValueError, match=r"\balpha_range\b.*one of"):
        tailfit.fit_alpha(x, alpha_range="x")
    with pytest.raises(ValueError, match=r"\balpha_range\b.*conventions='author'"):
        tailfit.fit_alpha(x, alpha_range="open", conventions="author")
    with pytest.raises(ValueError, match=r"\bn_boot\b.*>= 20"):
        tailfit.fit_alpha(x, n_boot=19)
    with pytest.raises(ValueError, match=r"\bn_boot\b.*>= 0"):
        tailfit.fit_alpha(x, method="ecf", n_boot=-1)
    with pytest.raises(ValueError, match=r"\bx\b.*at least 20"):
        tailfit.fit_alpha(x[:19], method="ecf")
    with pytest.raises(ValueError, match=r"\bx\b.*1-dimensional"):
        tailfit.fit_alpha(x.reshape(2, 50), method="ecf")
    assert tailfit.fit_alpha(x[:20], method="ecf", n_boot=0).n == 20
    assert tailfit.fit_alpha(x, n_boot=20).n == 100


@pytest.mark.parametrize("kind", ["gauss", "sas15"])
def test_author_ecf_sigma(kind):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3000) * 0.8 if kind == "gauss" else sps.levy_stable.rvs(1.5, 0, size=3000, random_state=8)
    a, s, slope = _author_ecf(x)
    f = stats.fit_alpha(x, method="ecf", conventions="author")
    assert f.method == "ecf"
    np.testing.assert_allclose([f.alpha, f.sigma], [a, s], rtol=1e-9)
    lw = stats.fit_alpha(x, method="ecf")
    if kind == "gauss":                      # α̂ clipped at 2: σ̂ differs and is not scale-equivariant
        assert slope > 2.0 and abs(f.sigma / lw.sigma - 1) > 1e-4
        g = stats.fit_alpha(100 * x, method="ecf", conventions="author")
        np.testing.assert_allclose(g.sigma / f.sigma, 100 ** (slope / 2.0), rtol=1e-8)
    else:                                    # no clipping: the same σ̂
        assert 1 < slope < 2
        np.testing.assert_allclose(f.sigma, lw.sigma, rtol=1e-10)


def test_author_fit_alpha_mcculloch_uses_author_table():
    x = stats.sample_sas(1.0, 1.0, size=4000, seed=3)
    f = stats.fit_alpha(x, method="mcculloch", n_boot=0, conventions="author")
    q = np.quantile(np.sort(x), mcculloch.PROBS)
    a, s, _ = mcculloch.author_quantile_fit(q)
    assert (f.alpha, f.sigma) == (float(a), float(s))
    det = stats.detection_table(x[None], [1], [100, 1000], method="mcculloch", n_boot=20, conventions="author")
    assert det.alpha[0] == pytest.approx(stats.fit_alpha(x - x.mean(), method="mcculloch", n_boot=0,
                                                         conventions="author").alpha, abs=1e-12)


@pytest.mark.parametrize("x,kwargs,exc,match", [
    (X_stats_errors[:19], {}, ValueError, "at least 20"), (np.r_[X_stats_errors, np.nan], {}, ValueError, "x contains NaN"),
    (np.r_[X_stats_errors, np.inf], {}, ValueError, "x contains Inf"), (X_stats_errors.reshape(10, 100), {}, ValueError, "x must be 1"),
    (X_stats_errors.astype(complex), {}, TypeError, "x must be a real"), (X_stats_errors, dict(method="mle"), ValueError, "method"),
    (X_stats_errors, dict(alpha_range="(0,2]"), ValueError, "alpha_range"), (X_stats_errors, dict(n_boot=-1), ValueError, "n_boot"),
    (X_stats_errors, dict(n_boot=10), ValueError, "n_boot"), (X_stats_errors, dict(n_boot=2.0), TypeError, "n_boot"),
    (X_stats_errors, dict(seed="s"), TypeError, "seed"),
])
def test_fit_alpha_errors(x, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fit_alpha(x, **kwargs)


# ---- accuracy at n = 10⁵ ------------------------------------------------------------------------
@settings(max_examples=4, **SETTINGS)
@given(alpha=st.floats(1.1, 2.0), sigma=st.floats(0.01, 100.0), seed=st.integers(0, 2**16))
def test_ecf_and_mcculloch_accuracy(alpha, sigma, seed):
    x = sample_sas(alpha, sigma, size=100_000, seed=seed, loc=sigma)
    ecf = fit_alpha(x, method="ecf")
    mc = fit_alpha(x, method="mcculloch", seed=seed)
    # single-sample sd of α̂ is ≤ 0.013 for both (see the slow test); 0.045 ≈ 3.5 sd
    assert ecf.method == "ecf" and ecf.reliable and abs(ecf.alpha - alpha) < 0.045
    assert mc.method == "mcculloch" and abs(mc.alpha - alpha) < 0.045
    assert abs(ecf.sigma / sigma - 1) < 0.03 and abs(mc.sigma / sigma - 1) < 0.03
    assert mc.ci[0] <= mc.alpha <= mc.ci[1]


def test_bootstrap_ci_coverage_fast():
    rng = np.random.default_rng(1)
    hits = [(lambda f: f.ci[0] <= a <= f.ci[1])(fit_alpha(sample_sas(a, 1.0, size=5000, seed=rng),
                                                           method="mcculloch", seed=rng))
            for a in (1.3, 1.7) for _ in range(40)]
    assert np.mean(hits) >= 0.85


@slow
def test_accuracy_full_grid_slow():
    rng = np.random.default_rng(2026)
    for a in ALPHAS:
        fits = [(fit_alpha(x, method="ecf"), fit_alpha(x, method="mcculloch", seed=rng))
                for x in (sample_sas(a, 1.0, size=100_000, seed=rng) for _ in range(40))]
        mae_ecf = np.mean([abs(e.alpha - a) for e, _ in fits])
        mae_mc = np.mean([abs(m.alpha - a) for _, m in fits])
        cover = np.mean([m.ci[0] <= a <= m.ci[1] for _, m in fits])
        assert mae_ecf <= 0.01 and mae_mc <= 0.011 and cover >= 0.85, (a, mae_ecf, mae_mc, cover)


# ---- ranges, reliability and selection ----------------------------------------------------------
def test_alpha_range_open_and_stable_clip():
    x = sample_sas(0.8, 1.0, size=50_000, seed=5)
    assert abs(fit_alpha(x, method="ecf", alpha_range="open").alpha - 0.8) < 0.03
    assert abs(fit_alpha(x, method="mcculloch", alpha_range="open", n_boot=0).alpha - 0.8) < 0.03
    assert fit_alpha(x, method="ecf").alpha == 1.0
    assert fit_alpha(x, method="mcculloch", n_boot=0).alpha == 1.0


def test_selection_ecf_when_reliable_and_deterministic():
    x = sample_sas(1.6, 1.0, size=20_000, seed=6)
    f = fit_alpha(x)
    assert f.method == "ecf" and f.reliable and f.ci is None and f.n == 20_000
    assert f == fit_alpha(x)


def test_selection_falls_back_to_mcculloch_bootstrap(monkeypatch):
    x = sample_sas(1.6, 1.0, size=20_000, seed=7)
    # An ECF with no usable |φ̂|² points (all ≥ 0.999) forces the fallbacks.
    monkeypatch.setattr(tailfit, "_ecf_abs2", lambda y, t: np.ones_like(t))
    forced = fit_alpha(x, method="ecf")
    assert forced.method == "ecf->mcculloch" and forced.ci is not None
    auto = fit_alpha(x)
    assert auto.method == "mcculloch_boot" and auto.ci[1] - auto.ci[0] < 0.3 and auto.reliable
    assert abs(auto.alpha - 1.6) < 0.1 and auto.ci[0] <= auto.alpha <= auto.ci[1]


def test_selection_small_sample_defaults_to_gaussian_when_ci_is_wide():
    f = fit_alpha(sample_sas(1.5, 1.0, size=400, seed=8))  # ECF unreliable (n < 500), CI ≈ 0.48 wide
    assert f.method == "default_gaussian" and not f.reliable and f.alpha == 2.0
    assert f.ci[1] - f.ci[0] >= 0.3
    np.testing.assert_allclose(f.sigma, np.subtract(*np.percentile(sample_sas(1.5, 1.0, size=400, seed=8),
                                                                   [75, 25])) / iqr_theory(2.0))


@pytest.mark.parametrize("alpha,sigma,seed", BRANCH_CASES)
def test_mcculloch_bootstrap_sigma_equivariant_and_accurate(monkeypatch, alpha, sigma, seed):
    _force_mcculloch(monkeypatch)
    x = sample_sas(alpha, sigma, size=20_000, seed=seed)
    f = fit_alpha(x, seed=1)
    assert f.method == "mcculloch_boot"
    assert abs(f.sigma / sigma - 1) < 0.04                      # sd of σ̂ at n = 2·10⁴ ≈ 1%
    for c in (1e-3, 37.0):
        g = fit_alpha(c * x, seed=1)
        assert g.method == "mcculloch_boot" and g.alpha == pytest.approx(f.alpha, abs=1e-12)
        np.testing.assert_allclose(g.sigma, c * f.sigma, rtol=1e-12)


@pytest.mark.parametrize("alpha,sigma,seed", BRANCH_CASES)
def test_ecf_branch_sigma_equivariant_and_accurate(alpha, sigma, seed):
    x = sample_sas(alpha, sigma, size=20_000, seed=seed)
    f = fit_alpha(x)
    assert f.method == "ecf" or alpha == 1.0    # Cauchy: α̂ ≈ 1 is on the boundary (n < 2000 rule)
    assert abs(f.sigma / sigma - 1) < 0.04
    for c in (1e-3, 37.0):
        g = fit_alpha(c * x)
        assert g.method == f.method
        np.testing.assert_allclose(g.sigma, c * f.sigma, rtol=1e-9)


@pytest.mark.parametrize("method", ["ecf", "mcculloch"])
def test_explicit_methods_sigma_equivariant_when_alpha_clipped(method):
    x = np.random.default_rng(3).standard_normal(20_000) * 1.3     # α̂ clipped at 2 (ECF slope > 2)
    f = fit_alpha(x, method=method, n_boot=0)
    assert f.alpha == 2.0 and abs(f.sigma / (1.3 / np.sqrt(2)) - 1) < 0.03
    for c in (1e-3, 37.0):
        np.testing.assert_allclose(fit_alpha(c * x, method=method, n_boot=0).sigma, c * f.sigma, rtol=1e-9)


def test_default_gaussian_branch_sigma_equivariant_and_accurate(monkeypatch):
    _force_mcculloch(monkeypatch)
    monkeypatch.setattr(tailfit, "CI_MAX_WIDTH", 0.0)              # no CI is narrow enough
    x = np.random.default_rng(4).standard_normal(20_000) * 2.5     # SαS(2, σ) is N(0, 2σ²)
    f = fit_alpha(x, seed=2)
    assert f.method == "default_gaussian"
    assert abs(f.sigma / (2.5 / np.sqrt(2)) - 1) < 0.03
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    np.testing.assert_allclose(f.sigma, iqr / (2 * np.sqrt(2) * sps.norm.ppf(0.75)), rtol=1e-9)
    for c in (1e-3, 37.0):
        np.testing.assert_allclose(fit_alpha(c * x, seed=2).sigma, c * f.sigma, rtol=1e-12)
