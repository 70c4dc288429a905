"""Tests that kill the surviving mutants of mutmut on lwsim/stats/tailfit.py (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.
The ECF regression is fed an exact law |φ̂(t)|² = exp(−2 (c t)^α) (``_ecf_abs2`` replaced), so α̂
and σ̂ are known by hand; fit_alpha's selection rules are checked with the fits replaced by stubs.
"""
from __future__ import annotations

import numpy as np
import pytest

from lwsim.stats import mcculloch, tailfit

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


# ---- _ecf_abs2, _ecf_scale ---------------------------------------------------------------------

def test_ecf_abs2_hand_values():
    # y = {0, π/2}: t = 1: ((1 + 0)/2)² + ((0 + 1)/2)² = ½; t = 2: cos π = −1, sin π = 0 → 0;
    # t = 3: ((1 + 0)/2)² + ((0 − 1)/2)² = ½
    np.testing.assert_allclose(tailfit._ecf_abs2(np.array([0.0, np.pi / 2]), np.array([1.0, 2.0, 3.0])),
                               [0.5, 0.0, 0.5], atol=1e-15)
    # a point mass: |φ̂|² = 1 everywhere; integer input is read as float
    np.testing.assert_allclose(tailfit._ecf_abs2(np.zeros(3, dtype=np.int64), np.array([0.5, 1.0])), [1.0, 1.0])
    # y = {0, π}: t = 1 → cos mean 0 → 0; t = 2 → 1
    np.testing.assert_allclose(tailfit._ecf_abs2(np.array([0.0, np.pi]), np.array([1.0, 2.0])), [0.0, 1.0], atol=1e-15)


def test_ecf_scale_rules():
    x = np.array([-1.0, 1.0])                     # std 1
    assert tailfit._ecf_scale(x, 1e-10, "lwsim") is None                  # ≤ 1e−10: give up
    assert tailfit._ecf_scale(x, 2e-10, "lwsim") == 2e-10 / 1.349
    assert tailfit._ecf_scale(x, 2e-12, "author") == 2e-12 / 1.349        # > 1e−12: IQR/1.349
    assert tailfit._ecf_scale(x, 1e-12, "author") == pytest.approx(1.0, rel=1e-15)   # std
    assert tailfit._ecf_scale(3 * x, 0.0, "author") == pytest.approx(3.0, rel=1e-15)
    assert tailfit._ecf_scale(1e-12 * x, 0.0, "author") == pytest.approx(1e-12, rel=1e-12)  # 1.349e−12 > 1e−12
    assert tailfit._ecf_scale(7e-13 * x, 0.0, "author") is None             # 0.944e−12 ≤ 1e−12
    assert tailfit.AUTHOR_IQR_FLOOR == 1e-12


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


def _weighted_means(phi2):
    keep = (phi2 > 0.01) & (phi2 < 0.95)
    lp = np.log(phi2[keep])
    w = np.exp(-2.0 * (lp + 0.7) ** 2)
    w /= w.sum()
    return w @ np.log(T[keep])


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


def _window_case(keep_idx, extra):
    """The exact law (c 0.7, α 1.5) at keep_idx; ``extra`` {index: value} off the law; 1 elsewhere."""
    phi2 = np.ones(50)
    phi2[keep_idx] = _law(0.7, 1.5)[keep_idx]
    for i, v in extra.items():
        phi2[i] = v
    return phi2


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
    with pytest.raises(ValueError, match=r"^tiny_iqr must be one of \['author', 'lwsim'\], got 'x'$"):
        tailfit.ecf_fit(X, tiny_iqr="x")
    with pytest.raises(ValueError, match=r"^conventions must be one of"):
        tailfit.ecf_fit(X, conventions="x")


# ---- _reliable ---------------------------------------------------------------------------------

def test_reliable_boundaries():
    r = tailfit._reliable
    assert r(500, 1.5, 1.0, 1.0, 1.0) and not r(499, 1.5, 1.0, 1.0, 1.0)
    assert not r(10_000, 1.5, 1e-12, 1.0, 1.0) and r(10_000, 1.5, 1.1e-12, 1.0, 1.0)
    assert not r(10_000, 1.5, 1.0, 1e-10, 1.0) and r(10_000, 1.5, 1.0, 1.1e-10, 1.0)
    # the lower edge is alpha_lo + 0.01 (≤), the upper 1.99 (≥), both only below n = 2000
    assert not r(1999, 1.01, 1.0, 1.0, 1.0) and r(1999, 1.0101, 1.0, 1.0, 1.0)
    assert not r(1999, 1.99, 1.0, 1.0, 1.0) and r(1999, 1.9899, 1.0, 1.0, 1.0)
    assert not r(1999, 0.51, 1.0, 1.0, 0.5) and r(1999, 1.0, 1.0, 1.0, 0.5)
    assert r(2000, 1.99, 1.0, 1.0, 1.0) and r(2000, 1.01, 1.0, 1.0, 1.0)
    assert r(1999, 1.5, 1.0, 1.0, 1.0) is True and r(499, 1.5, 1.0, 1.0, 1.0) is False


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


def test_fit_alpha_explicit_ecf_keeps_an_unreliable_fit(monkeypatch):
    _Fits(monkeypatch)
    out = tailfit.fit_alpha(_x(100), method="ecf")          # n < 500: unreliable, still "ecf"
    assert out == tailfit.TailFit(1.5, 2.0, False, "ecf", None, 100)


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


def test_fit_alpha_ecf_falls_back_to_mcculloch(monkeypatch):
    f = _Fits(monkeypatch, ecf=(2.0, 0.0, 3.0, False))
    out = tailfit.fit_alpha(_x(600), method="ecf", n_boot=0)
    assert out == tailfit.TailFit(1.7, 4.0, True, "ecf->mcculloch", None, 600)
    assert len(f.calls["ecf"]) == 1


def test_fit_alpha_argument_messages():
    x = _x(100)
    with pytest.raises(ValueError, match=r"^method must be one of \['auto', 'ecf', 'mcculloch'\], got 'x'$"):
        tailfit.fit_alpha(x, method="x")
    with pytest.raises(ValueError, match=r"^alpha_range must be one of \['open', 'stable'\], got 'x'$"):
        tailfit.fit_alpha(x, alpha_range="x")
    with pytest.raises(ValueError, match=r"^alpha_range must be 'stable' with conventions='author' "
                                         r"\(the author clips α̂ to \[1, 2\]\)$"):
        tailfit.fit_alpha(x, alpha_range="open", conventions="author")
    with pytest.raises(ValueError, match=r"^n_boot must be >= 20 for method='auto' \(it needs a bootstrap CI\), got 19$"):
        tailfit.fit_alpha(x, n_boot=19)
    with pytest.raises(ValueError, match=r"^n_boot must be >= 0, got -1$"):
        tailfit.fit_alpha(x, method="ecf", n_boot=-1)
    with pytest.raises(ValueError, match=r"^x needs at least 20 values, got 19$"):
        tailfit.fit_alpha(x[:19], method="ecf")
    with pytest.raises(ValueError, match=r"^x must be 1-dimensional"):
        tailfit.fit_alpha(x.reshape(2, 50), method="ecf")
    assert tailfit.fit_alpha(x[:20], method="ecf", n_boot=0).n == 20
    assert tailfit.fit_alpha(x, n_boot=20).n == 100


def test_tailfit_to_dict():
    d = tailfit.TailFit(1.5, 2.0, True, "ecf", (1.4, 1.6), 100).to_dict()
    assert d == {"alpha": 1.5, "sigma": 2.0, "reliable": True, "method": "ecf", "ci": (1.4, 1.6), "n": 100}
