"""Mutation-testing kills for lwsim.stats.decay (issue 32, docs/testing.md).

Each test pins a hand-computed number, an exact error message or a documented property; the
nested-exponential verdicts are checked on hand-made fits (fit_decay and the interval half-widths
replaced), so every rule boundary is exercised exactly.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lwsim.stats.decay as decay
from lwsim.stats.decay import (LawFit, DecayFit, envelope_floor, fit_decay, fit_master, fit_master_window,
                               nested_exponential)

LAGS = np.arange(1.0, 41.0)
F = LAGS ** -1.0


# ---- argument errors name the argument (exact messages) ----------------------------------------
@pytest.mark.parametrize("call,msg", [
    (lambda: envelope_floor(np.ones((2, 2))), r"^f must be 1-dimensional"),
    (lambda: envelope_floor(F, quantile=-0.1), r"^quantile "),
    (lambda: envelope_floor(F, scale=-1.0), r"^scale "),
    (lambda: envelope_floor(F, min_floor=-1.0), r"^min_floor "),
    (lambda: envelope_floor(F, factor=-1.0), r"^factor "),
    (lambda: fit_decay(LAGS.reshape(2, 20), F), r"^lags must be 1-dimensional"),
    (lambda: fit_decay(np.r_[0.0, LAGS[1:]], F), r"^lags must be > 0"),
    (lambda: fit_decay(LAGS, F.reshape(2, 20)), r"^f must be 1-dimensional"),
    (lambda: fit_decay(LAGS, F, floor=-1.0), r"^floor "),
    (lambda: fit_decay(LAGS, F, trim=-0.1), r"^trim "),
    (lambda: fit_decay(LAGS, F, trim=0.5), r"^trim "),
    (lambda: fit_decay(LAGS, F, trim=0.7), r"^trim "),
    (lambda: fit_decay(LAGS, F, min_points=4), r"^min_points "),
    (lambda: fit_decay(np.r_[LAGS[:-1], 1.0], F), r"^lags must be distinct$"),
    (lambda: fit_decay(LAGS, np.zeros(40)), r"check floor/trim and that f is positive$"),
    (lambda: fit_decay(LAGS, F, k_grid=[[0.5]]), r"^k_grid must be 1-dimensional"),
    (lambda: fit_decay(LAGS, F, k_grid=[]), r"^k_grid needs at least 1"),
    (lambda: fit_decay(LAGS, F, k_grid=[-0.5]), r"^k_grid must be > 0"),
    (lambda: fit_decay(LAGS, F, lc_grid=[[5.0]]), r"^lc_grid must be 1-dimensional"),
    (lambda: fit_decay(LAGS, F, lc_grid=[]), r"^lc_grid needs at least 1"),
    (lambda: fit_decay(LAGS, F, lc_grid=[-5.0]), r"^lc_grid must be > 0"),
    (lambda: fit_master(np.ones((2, 6)), np.ones((2, 6)), np.ones((2, 6))), r"^n_hat must be 1-dimensional"),
    (lambda: fit_master(-np.ones(12), np.ones(12), F[:12]), r"^n_hat must be > 0"),
    (lambda: fit_master(np.ones(12), np.ones((2, 6)), F[:12]), r"^kappa must be 1-dimensional"),
    (lambda: fit_master(np.ones(12), -np.ones(12), F[:12]), r"^kappa must be > 0"),
    (lambda: fit_master(np.ones(12), np.ones(12), np.ones((2, 6))), r"^f must be 1-dimensional"),
    (lambda: fit_master(np.ones(12), np.ones(12), -F[:12]), r"^f must be >= 0"),
    (lambda: fit_master(np.ones(11), np.ones(12), F[:12]), r"^mismatched lengths"),
    (lambda: fit_master(np.ones(12), np.ones(12), F[:11]), r"^mismatched lengths"),
    (lambda: fit_master_window(-np.ones(12), np.ones(12), F[:12], np.full(12, 1.5), LAGS[:12]), r"^n_hat must be > 0"),
    (lambda: fit_master_window(np.ones(12), -np.ones(12), F[:12], np.full(12, 1.5), LAGS[:12]), r"^kappa must be > 0"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), -F[:12], np.full(12, 1.5), LAGS[:12]), r"^f must be >= 0"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), F[:12], -np.ones(12), LAGS[:12]), r"^alpha must be > 0"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), F[:12], np.full(12, 1.5), LAGS[:12].reshape(2, 6)),
     r"^lags must be 1-dimensional"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), F[:12], np.full(12, 1.5), -LAGS[:12]), r"^lags must be > 0"),
    (lambda: fit_master_window(np.ones((1, 2, 6)), np.ones((1, 2, 6)), np.ones((1, 2, 6)), np.ones((1, 2, 6)),
                               LAGS[:6]), r"^n_hat must be 1-D \(lags\) or 2-D"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), np.ones(11), np.ones(12), LAGS[:12]), r"^f must have the shape"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), np.ones(12), np.ones(11), LAGS[:12]), r"^alpha must have the shape"),
    (lambda: fit_master_window(np.ones(12), np.ones(11), np.ones(12), np.ones(12), LAGS[:12]), r"^kappa must have the shape"),
    (lambda: fit_master_window(np.ones(12), np.ones(12), F[:12], np.full(12, 1.5), LAGS[:12], alpha_min=0.5),
     r"^alpha_min "),
    (lambda: nested_exponential(LAGS, np.exp(-0.1 * LAGS), delta_bic=-1.0), r"^delta_bic "),
])
def test_errors_name_the_argument(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_boundary_arguments_accepted():
    # the bounds are lo = 0 (scale, min_floor, factor, quantile), min_points = 5, trim just below 0.5
    assert envelope_floor(np.arange(1.0, 1002.0), factor=0.5) == pytest.approx(0.5 * 0.01 * 2.0)
    assert envelope_floor(np.arange(1.0, 1002.0), quantile=0.0, scale=0.0, min_floor=0.0) == 0.0
    assert fit_decay(LAGS[:6], F[:6], min_points=5, laws=("power",)).n == 6
    assert fit_decay(LAGS, F, trim=0.4, min_points=5, laws=("power",)).n == 40 - 2 * 16


# ---- fit_decay -------------------------------------------------------------------------------------
def test_r2_is_one_minus_ssr_over_sst_in_log_space():
    # y = log f = −log ℓ + e with e = ±0.1 alternating; SST by hand from y
    e = 0.1 * (-1.0) ** np.arange(40)
    y = -np.log(LAGS) + e
    sst = float(((y - y.mean()) ** 2).sum())
    res = fit_decay(LAGS, np.exp(y), laws=("power", "exponential"))
    for fit in res.fits.values():
        assert fit.r2 == pytest.approx(1.0 - fit.ssr / sst, rel=1e-12)
    assert 0.0 < res.fits["exponential"].r2 < res.fits["power"].r2 < 1.0


def test_flat_envelope_r2_is_one():
    # SST = 0 and every law fits a constant exactly: R² = 1 (not 1 − 0/0)
    res = fit_decay(LAGS, np.full(40, 0.3), laws=("power", "exponential"))
    assert [res.fits[k].r2 for k in ("power", "exponential")] == [1.0, 1.0]


def test_unsorted_lags_are_sorted_first():
    order = np.random.default_rng(0).permutation(40)
    res = fit_decay(LAGS[order], F[order], laws=("power",))
    assert res.window == (1.0, 40.0)
    assert res.fits["power"].params["beta"] == pytest.approx(1.0, rel=1e-12)


def test_amplitude_beyond_float_range_is_inf():
    # f = 10^400 ℓ^−4 on ℓ ∈ [1e100, 1e150]: log C = 400 log 10 ≈ 921 > 709.78 → C = inf, β = 4
    lags = np.geomspace(1e100, 1e150, 10)
    f = (lags / 1e100) ** -4.0
    p = fit_decay(lags, f, laws=("power",)).fits["power"].params
    assert p["C"] == math.inf and p["beta"] == pytest.approx(4.0, rel=1e-9)


def test_rejected_tempered_law_first_does_not_stop_the_others():
    res = fit_decay(np.arange(1, 33), decay_env(), k_grid=[3.0], lc_grid=[1e-3], laws=("tempered", "power"))
    assert set(res.fits) == {"power"} and res.selected == "power"


def decay_env():
    return np.exp(-0.2 * np.arange(1, 33)) + 1e-3


def test_author_conventions_pass_the_given_grids():
    y = np.log(3.0) - 0.5 * np.log(LAGS) - 2.0 * (LAGS / 7.0) ** 0.6
    t = fit_decay(LAGS, np.exp(y), laws=("tempered",), conventions="author", k_grid=[0.6], lc_grid=[7.0])
    p = t.fits["tempered"].params
    assert (p["k"], p["l_c"]) == (0.6, 7.0) and p["cutoff_coeff"] == pytest.approx(2.0, rel=1e-9)
    assert t.fits["tempered"].p == 5


def test_refinement_runs_along_a_one_dimensional_grid():
    # exact tempered law k = 1.5, ℓ_c = 60: a one-value k grid still refines ℓ_c between 50 and 70,
    # a one-value ℓ_c grid still refines k between 1 and 2
    f = 4.0 * LAGS ** -0.5 * np.exp(-(LAGS / 60.0) ** 1.5)
    p = fit_decay(LAGS, f, laws=("tempered",), k_grid=[1.5], lc_grid=[50.0, 70.0]).fits["tempered"].params
    assert p["l_c"] == pytest.approx(60.0, rel=1e-5)
    p = fit_decay(LAGS, f, laws=("tempered",), k_grid=[1.0, 2.0], lc_grid=[60.0]).fits["tempered"].params
    assert p["k"] == pytest.approx(1.5, rel=1e-5)


def test_refined_tempered_fit_is_precise_and_silent():
    # noise-free law off every grid point: the refinement reaches it to 1e−6 (xatol 1e−8 in log k,
    # log ℓ_c), and neither the overflowing grid corners nor the solver raise a warning
    f = 0.8 * LAGS ** -0.3 * np.exp(-(LAGS / 13.7) ** 0.83)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = fit_decay(LAGS, f, laws=("tempered",), k_grid=[0.7, 0.85, 1.0], lc_grid=[10.0, 14.0, 18.0]).fits["tempered"].params
        fit_decay(np.arange(1, 33), decay_env(), k_grid=[3.0, 2.9], lc_grid=[1e-3, 2e-3])
    assert p["k"] == pytest.approx(0.83, rel=1e-6) and p["l_c"] == pytest.approx(13.7, rel=1e-6)
    assert p["beta"] == pytest.approx(0.3, rel=1e-6) and p["A"] == pytest.approx(0.8, rel=1e-6)


# ---- fit_master ------------------------------------------------------------------------------------
def _master_data(n=12):
    f = np.exp(-0.1 * np.arange(1, n + 1))               # −log f = 0.1 ℓ, κ = 2 → x = 0.2 ℓ
    return np.exp(0.5 + 0.2 * np.arange(1, n + 1)), np.full(n, 2.0), f


def test_master_r2_by_hand_and_zero_f_dropped():
    n_hat, kappa, f = _master_data()
    y = np.log(n_hat) + 0.05 * (-1.0) ** np.arange(12)     # residual ±0.05 about a slope-1 line
    x = 0.2 * np.arange(1, 13)
    coef = np.polyfit(x, y, 1)
    r = y - np.polyval(coef, x)
    m = fit_master(np.exp(y), kappa, f)
    assert m.r2 == pytest.approx(1.0 - (r @ r) / ((y - y.mean()) ** 2).sum(), rel=1e-12) and m.r2 < 1.0
    f2 = f.copy()
    f2[3] = 0.0                                            # no information: dropped, not log 0
    m = fit_master(n_hat, kappa, f2)
    assert m.n == 11 and m.slope == pytest.approx(1.0, rel=1e-10)


def test_master_three_distinct_n_hat_suffice_and_message_counts():
    n_hat = np.repeat([10.0, 100.0, 1000.0], 4)
    f = np.exp(-np.repeat([1.0, 2.0, 3.0], 4))
    m = fit_master(n_hat, np.ones(12), f)
    assert m.slope == pytest.approx(math.log(10.0), rel=1e-10) and m.n == 12
    with pytest.raises(ValueError, match="got 12 lags, 2 distinct n_hat$"):
        fit_master(np.repeat([10.0, 100.0], 6), np.ones(12), f)


def test_master_constant_x_raises_and_unit_spreads_are_fine():
    y = np.array([0.5, -0.5, 0.5, -0.5, 0, 0, 0, 0, 0, 0.0]) + np.arange(10) * 1e-3
    with pytest.raises(ValueError, match="slope undefined$"):
        fit_master(np.exp(y), np.ones(10), np.full(10, 0.5))            # x = log 2 everywhere
    # SST = 1 exactly and ptp(x) = 1 exactly are ordinary data
    y = np.array([0.5, -0.5, 0.5, -0.5, 0, 0, 0, 0, 0, 0.0])
    x_f = np.array([1.0, math.exp(-1.0)] * 5)                           # x ∈ {0, 1}
    m = fit_master(np.exp(y), np.ones(10), x_f)
    assert m.n == 10 and np.isfinite(m.slope)


def test_master_kappa_inf_lags_are_dropped():
    n_hat, kappa, f = _master_data()
    kappa[0] = np.inf
    m = fit_master(n_hat, kappa, f)
    assert m.n == 11 and m.slope == pytest.approx(1.0, rel=1e-10)


def test_master_window_of_one_lag_is_a_window():
    n_hat, kappa, f = _master_data()
    alpha = np.full(12, 1.5)
    with pytest.raises(ValueError, match="got 1 lags"):                  # (5, 5) accepted, 1 lag kept
        fit_master_window(n_hat, kappa, f, alpha, np.arange(1.0, 13.0), window=(5, 5))


# ---- nested_exponential's rules, on hand-made fits -------------------------------------------------
NL = np.arange(1.0, 11.0)          # window ℓ = 1…10: ℓ_c box [0.1, 1000]


def _nested(monkeypatch, *, d=20.0, beta=0.0, k=1.0, l_c=5.0, hw=(9.0, 0.5, 0.5, 9.0), lags=NL, f=None, **kw):
    seen = {}

    def fake_fit(lags_, f_, floor=0.0, trim=0.0, laws=()):
        seen.update(floor=floor, trim=trim, laws=laws)
        e = LawFit("exponential", {"C": 1.0, "lambda": 0.25}, 0.9, 1.0, 0.0, 100.0 + d, 10, 2)
        t = LawFit("tempered", {"A": 1.0, "beta": beta, "k": k, "l_c": l_c}, 0.9, 1.0, 0.0, 100.0, 10, 4)
        return DecayFit({"exponential": e, "tempered": t}, "tempered", "tempered", 7, (1.0, 10.0))

    def fake_cov(lg, y, p):
        seen.update(lg=lg, y=y)
        return np.array(hw)

    monkeypatch.setattr(decay, "fit_decay", fake_fit)
    monkeypatch.setattr(decay, "_tempered_cov", fake_cov)
    out = nested_exponential(lags, np.exp(-0.25 * np.asarray(lags, float)) if f is None else f, **kw)
    return out, seen


def test_nested_passes_window_and_laws_and_reports_fields(monkeypatch):
    t, seen = _nested(monkeypatch, beta=0.2, k=1.2, hw=(9.0, 0.5, 0.25, 7.0), floor=1e-9, trim=0.05)
    assert (seen["floor"], seen["trim"], seen["laws"]) == (1e-9, 0.05, ("exponential", "tempered"))
    assert t.beta_ci == pytest.approx((-0.3, 0.7)) and t.k_ci == pytest.approx((0.95, 1.45))
    assert t.beta == 0.2 and t.n == 7 and t.lam == 0.25 and t.delta_bic == 20.0
    assert t.exponential_ok and not t.at_edge           # both intervals contain (0, 1), interior


def test_nested_window_uses_float64_and_keeps_lag_one(monkeypatch):
    _, seen = _nested(monkeypatch, lags=list(range(1, 11)), f=np.exp(-0.25 * NL).astype(np.float32))
    assert seen["lg"].dtype == np.float64 and seen["y"].dtype == np.float64 and seen["lg"][0] == 1.0


def test_nested_not_tempered_message(monkeypatch):
    monkeypatch.setattr(decay, "fit_decay", lambda *a, **k: DecayFit(
        {"exponential": LawFit("exponential", {"C": 1.0, "lambda": 0.1}, 1, 1, 1, 1, 10, 2)},
        "exponential", "exponential", 10, (1.0, 10.0)))
    with pytest.raises(ValueError, match="^the tempered law has no finite fit on this envelope$"):
        nested_exponential(NL, np.exp(-0.1 * NL))


def test_nested_delta_bic_threshold_inclusive(monkeypatch):
    t, _ = _nested(monkeypatch, d=10.0, beta=5.0)              # intervals exclude β = 0
    assert t.exponential_ok and t.delta_bic == 10.0
    t, _ = _nested(monkeypatch, d=3.0, beta=5.0, delta_bic=3.0)
    assert t.exponential_ok
    t, _ = _nested(monkeypatch, d=0.5, beta=5.0, delta_bic=0.4)  # 0 < delta_bic < 1 allowed
    assert not t.exponential_ok


@pytest.mark.parametrize("beta,k,ok", [
    (0.5, 1.2, True), (-0.5, 1.2, True),       # β interval ends exactly at 0: [0, 1], [−1, 0]
    (0.2, 1.5, True), (0.2, 0.5, True),        # k interval ends exactly at 1: [1, 2], [0, 1]
    (0.6, 1.2, False), (0.2, 1.6, False),      # just outside
    (1.0, 1.2, False),                          # β interval [0.5, 1.5] contains 1 but not 0
])
def test_nested_interval_ends_are_inclusive(monkeypatch, beta, k, ok):
    t, _ = _nested(monkeypatch, beta=beta, k=k, hw=(9.0, 0.5, 0.5, 9.0))
    assert t.exponential_ok is ok and not t.at_edge


@pytest.mark.parametrize("k,l_c,edge", [
    (3.0, 5.0, True), (0.2, 5.0, True), (0.7, 5.0, False), (1.0, 5.0, False),
    (1.2, 0.1, True), (1.2, 0.1000001, True), (1.2, 0.15, False), (1.2, 0.25, False),
    (1.2, 1000.0, True), (1.2, 999.9995, True), (1.2, 999.0, False), (1.2, 500.0, False), (1.2, 950.0, False),
])
def test_nested_box_edge(monkeypatch, k, l_c, edge):
    t, _ = _nested(monkeypatch, k=k, l_c=l_c)
    assert t.at_edge is edge


@pytest.mark.parametrize("k,l_c,hw_k,slower", [
    (0.5, 5.0, 0.6, False),        # interior, k̂ < 1 but k's interval reaches 1.1: not slower
    (0.5, 5.0, 0.5, False),        # k's interval ends exactly at 1.0: not below 1
    (0.5, 5.0, 0.4, True),         # k's interval [0.1, 0.9] below 1
    (1.2, 10.0, 0.1, False),       # ℓ_c = ℓ_max exactly: not beyond the window
    (1.2, 10.0001, 0.1, True),
    (1.2, 9.5, 0.1, False),
    (1.0, 0.1, 0.1, False),        # on the edge: k̂ = 1 is not < 1
    (1.5, 0.1, 0.1, False),
    (0.9, 0.1, 0.1, True),
])
def test_nested_slower_rule(monkeypatch, k, l_c, hw_k, slower):
    t, _ = _nested(monkeypatch, beta=5.0, k=k, l_c=l_c, hw=(9.0, 0.5, hw_k, 9.0))
    assert not t.exponential_ok and t.slower is slower


def test_master_window_checks_every_lag_and_accepts_inf_kappa():
    n_hat, kappa, f = _master_data()
    alpha, lags = np.full(12, 1.5), np.arange(1.0, 13.0)
    for name, i in (("n_hat", 0), ("kappa", 1), ("f", 2)):     # a bad value in a lag the window drops
        args = [n_hat.copy(), kappa.copy(), f.copy()]
        args[i][0] = -1.0
        with pytest.raises(ValueError, match=f"^{name} must be"):
            fit_master_window(*args, alpha, lags, window=(2, 12))
    kappa[1] = np.inf                                          # allowed, then dropped by fit_master
    m = fit_master_window(n_hat, kappa, f, alpha, lags)
    assert m.n == 11 and m.slope == pytest.approx(1.0, rel=1e-10)


def test_r2_with_sst_below_one_and_flat_tempered():
    e = 0.001 * (-1.0) ** np.arange(40)
    y = -0.01 * np.log(LAGS) + e                               # SST ≈ 0.01 < 1
    sst = float(((y - y.mean()) ** 2).sum())
    assert 0 < sst < 1
    fit = fit_decay(LAGS, np.exp(y), laws=("power",)).fits["power"]
    assert fit.law == "power" and fit.r2 == pytest.approx(1.0 - fit.ssr / sst, rel=1e-12)
    # SST = 0: R² is 1 only if SSR ≤ 1e−20·n; the tempered law (cutoff coefficient fixed to 1)
    # cannot fit a constant exactly, so it gets R² = 0
    t = fit_decay(LAGS, np.full(40, 0.3), laws=("tempered",)).fits["tempered"]
    assert t.ssr > 1e-20 * 40 and t.r2 == 0.0


def test_decay_fit_to_dict_keys():
    d = fit_decay(LAGS, F, laws=("power", "exponential")).to_dict()
    assert set(d) == {"fits", "selected", "selected_bic", "n", "window"}
    assert d["window"] == [1.0, 40.0] and d["n"] == 40 and d["selected"] == d["selected_bic"] == "power"
    assert d["fits"]["power"]["law"] == "power" and d["fits"]["power"]["params"]["beta"] == pytest.approx(1.0)
