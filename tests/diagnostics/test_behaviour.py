"""Tests of lwsim/diagnostics/behaviour.py (laid out like the code: docs/testing.md).

Tests that kill the surviving mutants of mutmut on lwsim/diagnostics/behaviour.py (issue 32,
docs/testing.md). Each pins a hand-computed number or a documented property; none compares the code
with itself.

A15 and finding 9: ĉ(ℓ) on a planted model, the H^beh rule, identical trainings across N, the
scatter data and the finding-9 rules (docs/diagnostics.md §2.11, docs/experiments.md §5.6)."""


from __future__ import annotations

import numpy as np
import pytest

import lwsim
from lwsim.diagnostics.behaviour import LagCoefficients, behavioural_window, lag_coefficients


def _hand_case():
    """T = 3, B = 2, D = 1, lag 1: pairs z_{t−1} = [[1, 3], [2, 6]] (mean 3), ŷ_t = [[1, 2], [2, 7]]
    (mean 3). zc = [[−2, 0], [−1, 3]], yc = [[−2, −1], [−1, 4]]; Σ zc² = 14, Σ zc·yc = 17 → ĉ = 17/14.
    Residuals e = yc − ĉ zc: sequence 0: (6/14, 3/14), sequence 1: (−1, 5/14); scores S_0 = −15/14,
    S_1 = 15/14; SE = √(2/1 · 450/196) / 14 = (30/14)/14 = 15/98."""
    x = np.array([[1.0, 3.0], [2.0, 6.0], [5.0, -4.0]])[:, :, None]     # the last step has no pair
    y = np.array([[9.0, -9.0], [1.0, 2.0], [2.0, 7.0]])                   # ŷ_0 has no pair
    return x, y


_ARGS = dict(y_hat=np.zeros((5, 4)), x=np.ones((5, 4, 2)), u=[1.0, 0.0], lags=[1, 2])


# ----------------------------------------------------------------------------- the window rule
def _co(c_hat, se=0.1):
    lags = np.arange(1, 9)
    return LagCoefficients(lags=lags, c_hat=np.asarray(c_hat, float),
                           se=np.broadcast_to(np.asarray(se, float), (8,)), n_pairs=np.full(8, 100.0))


TL = [2, 4, 6, 8]


TL_behaviour, TC = [2, 4, 6, 8], [1.0, 1.0, 1.0, 1.0]


# ----------------------------------------------------------------------------------------------
# lag_coefficients
# ----------------------------------------------------------------------------------------------


def test_lag_coefficients_by_hand():
    x, y = _hand_case()
    co = lag_coefficients(y, x, [1.0], [1])
    assert co.c_hat[0] == pytest.approx(17 / 14, rel=1e-14)
    assert co.se[0] == pytest.approx(15 / 98, rel=1e-14)
    np.testing.assert_array_equal(co.lags, [1])
    np.testing.assert_array_equal(co.n_pairs, [4.0])
    # (T, B, 1) outputs, integer inputs and a scaled u give the same ĉ (z = uᵀx scales ĉ by 1/2 for u = 2)
    co3 = lag_coefficients(y[:, :, None].astype(int), x.astype(int), [2], [1])
    assert co3.c_hat[0] == pytest.approx(17 / 28, rel=1e-14) and co3.se[0] == pytest.approx(15 / 196, rel=1e-14)


def test_lag_coefficients_float32_outputs_are_read_as_float64():
    """ŷ is converted to float64 before centring: a float32 ŷ gives exactly the numbers of its
    float64 cast (a float32 mean of 1e4 + O(1) values is off by ~1e−3, which moves the SE)."""
    rng = np.random.default_rng(3)
    T, B = 50, 40
    x = rng.standard_normal((T, B, 1))
    y = (1e4 + rng.standard_normal((T, B))).astype(np.float32)
    a = lag_coefficients(y, x, [1.0], [1, 2])
    b = lag_coefficients(y.astype(np.float64), x, [1.0], [1, 2])
    np.testing.assert_array_equal(a.c_hat, b.c_hat)
    np.testing.assert_array_equal(a.se, b.se)


def test_two_sequences_are_enough():
    x, y = _hand_case()
    assert lag_coefficients(y, x, [1.0], [1]).se[0] > 0                  # B = 2 accepted
    with pytest.raises(ValueError, match=r"^x must hold at least 2 sequences .*, got 1$"):
        lag_coefficients(y[:, :1], x[:, :1], [1.0], [1])


@pytest.mark.parametrize("kw,exc,err", [
    (dict(x=np.ones((5, 4))), ValueError, r"^x must have 3 dimensions"),
    (dict(y_hat=np.zeros((5, 3))), ValueError, r"^y_hat must have shape \(5, 4\)"),
    (dict(u=[1.0, 0.0, 0.0]), ValueError, r"^u must have shape \(2,\)"),
    (dict(u=[0.0, 0.0]), ValueError, r"^u must not be the zero vector$"),
    (dict(lags=[[1, 2]]), ValueError, r"^lags must be a non-empty 1-D sequence of integers$"),
    (dict(lags=[]), ValueError, r"^lags must be a non-empty 1-D sequence of integers$"),
    (dict(lags=[1.5]), TypeError, r"^lags must hold integers, got dtype float64$"),
])
def test_lag_coefficients_messages(kw, exc, err):
    with pytest.raises(exc, match=err):
        lag_coefficients(**dict(_ARGS, **kw))


def test_integer_valued_float_lags_are_accepted():
    x = np.random.default_rng(0).standard_normal((5, 4, 2))
    co = lag_coefficients(**dict(_ARGS, x=x, lags=[1.0, 3.0]))
    np.testing.assert_array_equal(co.lags, [1, 3])
    assert co.lags.dtype.kind == "i"


# ----------------------------------------------------------------------------- ĉ(ℓ)
def test_lag_coefficients_recover_a_planted_leaky_cell():
    """ConstGate with H = 1, no LayerNorm, W_h = 0, W_x = a uᵀ (a small: tanh linear to 1e−6),
    read-out r: h_t = (1 − s) h_{t−1} + s tanh(a z_t), so ŷ_t = r a s Σ_ℓ (1 − s)^ℓ z_{t−ℓ} and
    c(ℓ) = r a s (1 − s)^ℓ. ĉ must lie within 4 standard errors at every lag."""
    T, B, D, s, a, r = 64, 200, 3, 0.3, 1e-3, 2.0
    cell = lwsim.make_cell("constgate", D, 1, layernorm=False, s=s)
    u = np.array([2.0, -1.0, 2.0]) / 3.0
    p = {"W_x": a * u[None, :], "W_h": np.zeros((1, 1)), "b_x": np.zeros(1), "W_out": np.array([[r]]),
         "b_out": np.zeros(1)}
    x = np.random.default_rng(0).standard_normal((T, B, D))
    y = cell.forward(p, x).y
    lags = np.arange(1, 13)
    co = lag_coefficients(y, x, u, lags)
    c = r * a * s * (1 - s) ** lags
    zs = (co.c_hat - c) / co.se
    assert np.all(np.abs(zs) < 4), zs
    assert np.all(co.se < 0.05 * c[0])                       # the test has power
    np.testing.assert_array_equal(co.n_pairs, B * (T - lags))


def test_standard_error_matches_the_spread_over_datasets():
    """The sequence-clustered SE equals the spread of ĉ over independent held-out sets (±25%)."""
    T, B = 40, 60
    kernel = np.full(10, 0.3)          # a box: ĉ's terms are correlated within a sequence (clusters matter)
    est, ses = [], []
    for rep in range(60):
        rng = np.random.default_rng(rep)
        x = rng.standard_normal((T, B, 1))
        z = x[:, :, 0]
        y = 0.1 * rng.standard_normal((T, B))
        for lag, c in enumerate(kernel, start=1):
            y[lag:] += c * z[:T - lag]
        co = lag_coefficients(y, x, [1.0], [5])
        est.append(co.c_hat[0])
        ses.append(co.se[0])
    assert abs(np.mean(est) - kernel[4]) < 3 * np.std(est) / np.sqrt(len(est))   # unbiased
    assert 0.75 < np.mean(ses) / np.std(est, ddof=1) < 1.25


@pytest.mark.parametrize("kw,err", [
    (dict(y_hat=np.zeros((5, 4, 2))), "one output channel"),
    (dict(u=[0.0, 0.0]), "zero vector"),
    (dict(lags=[0, 1]), "lags must be >= 1"),
    (dict(lags=[5]), "lags must be < T"),
    (dict(lags=[1, 1]), "repeat"),
])
def test_lag_coefficients_validate(kw, err):
    args = dict(y_hat=np.zeros((5, 4)), x=np.ones((5, 4, 2)), u=[1.0, 0.0], lags=[1, 2])
    args.update(kw)
    with pytest.raises(ValueError, match=err):
        lag_coefficients(**args)


# ----------------------------------------------------------------------------------------------
# behavioural_window
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kw,exc,err", [
    (dict(coefs=np.ones(8)), TypeError, r"^coefs must be a LagCoefficients, got ndarray$"),
    (dict(task_lags=[0, 4, 6, 8]), ValueError, r"^task_lags must be >= 1, got 0$"),
    (dict(task_coefs=[[1.0, 1.0, 1.0, 1.0]]), ValueError, r"^task_coefs must have 1 dimensions"),
    (dict(task_coefs=[1.0, np.nan, 1.0, 1.0]), ValueError, r"^task_coefs contains NaN"),
    (dict(task_coefs=[1.0, 0.0, 1.0, 1.0]), ValueError, r"^task_coefs must be nonzero$"),
    (dict(frac=1.5), ValueError, r"^frac must be <= 1.0, got 1.5$"),
    (dict(z_band=-1.0), ValueError, r"^z_band must be >= 0.0, got -1.0$"),
])
def test_window_messages(kw, exc, err):
    with pytest.raises(exc, match=err):
        behavioural_window(**dict(dict(coefs=_co(np.ones(8)), task_lags=TL, task_coefs=[1.0] * 4), **kw))


def test_window_bounds_of_frac_and_z_band_are_accepted_and_returned():
    w = behavioural_window(_co(np.ones(8)), TL, [1.0] * 4, frac=1.0, z_band=0.5)
    assert (w.frac, w.z_band, w.h) == (1.0, 0.5, 8.0)
    w = behavioural_window(_co(np.zeros(8)), TL, [1.0] * 4, z_band=0.0)   # |0| > 0 is false
    assert (w.z_band, w.h) == (0.0, 0.0) and not w.outside_band.any()


def test_window_ratio_divides_by_the_task_coefficient():
    c = np.full(8, 2.0)
    c[3] = -1.0                                        # lag 4: ĉ = −1 against c = −0.5 → ratio 2
    w = behavioural_window(_co(c), TL, [2.0, -0.5, 2.0, 2.0])
    np.testing.assert_array_equal(w.ratio, [1.0, 2.0, 1.0, 1.0])
    assert w.h == 2.0 and list(w.recovered) == [True, False, True, True]


def test_window_boundaries_are_inclusive_or_strict_as_documented():
    # |ĉ| = z_band·SE exactly (1.0 = 4 × 0.25): inside the band (strict >)
    c = np.ones(8)
    w = behavioural_window(_co(c, 0.25), TL, [1.0] * 4, z_band=4.0)
    assert not w.outside_band.any() and w.h == 0.0
    # |ĉ/c − 1| = frac exactly (1.5 against 1, frac ½): recovered (≤)
    w = behavioural_window(_co(np.full(8, 1.5)), TL, [1.0] * 4)
    assert w.recovered.all() and w.h == 8.0
    # ratio exactly ½ is not below ½: no crossing
    c[3] = 0.5
    w = behavioural_window(_co(c), TL, [1.0] * 4)
    assert w.h_smooth == 8.0 and w.h == 8.0


def test_window_smooth_crossing_uses_the_lag_before():
    c = np.ones(8)
    c[1], c[3], c[5], c[7] = 0.9, 0.3, 1.0, 0.8       # ratios 0.9, 0.3, 1.0, 0.8 at lags 2, 4, 6, 8
    w = behavioural_window(_co(c), TL, [1.0] * 4)
    assert w.h_smooth == pytest.approx(2 + 0.4 / 0.6 * 2, rel=1e-14)      # 10/3
    np.testing.assert_allclose(w.ratio, [0.9, 0.3, 1.0, 0.8])


def test_window_defaults_are_half_and_three_standard_errors():
    w = behavioural_window(_co(np.ones(8), 0.3), TL, [1.0] * 4)          # |ĉ| = 1 > 3 × 0.3, < 4 × 0.3
    assert (w.frac, w.z_band) == (0.5, 3.0)
    assert w.outside_band.all() and w.h == 8.0


def test_window_every_lag_recovered():
    w = behavioural_window(_co(np.ones(8)), TL_behaviour, TC)
    assert (w.h, w.h_smooth) == (8.0, 8.0) and w.recovered.all()


def test_window_gap_stops_the_window_and_the_smooth_crossing_interpolates():
    c = np.ones(8)
    c[3] = 0.3                                         # lag 4: ratio 0.3
    w = behavioural_window(_co(c), TL_behaviour, TC)
    assert w.h == 2.0                                  # lags 6, 8 recovered but after a gap
    assert w.h_smooth == pytest.approx(2 + 0.5 / 0.7 * 2)   # ratio 1 at lag 2, 0.3 at lag 4
    np.testing.assert_array_equal(w.recovered, [True, False, True, True])


def test_window_null_band_and_fraction():
    se = np.full(8, 0.1)
    se[5] = 0.5                                        # lag 6: |ĉ| = 1 < 3 × 0.5 → inside the band
    w = behavioural_window(_co(np.ones(8), se), TL_behaviour, TC)
    assert (w.h, w.h_smooth) == (4.0, 8.0)
    np.testing.assert_array_equal(w.outside_band, [True, True, False, True])
    c = np.ones(8)
    c[1] = 1.6                                         # lag 2: |ĉ/c − 1| = 0.6 > 0.5
    w = behavioural_window(_co(c), TL_behaviour, TC)
    assert (w.h, w.h_smooth) == (0.0, 8.0)
    assert behavioural_window(_co(c), TL_behaviour, TC, frac=0.7).h == 8.0
    c[1] = 0.2                                         # below ½ at the first task lag
    w = behavioural_window(_co(c), TL_behaviour, TC)
    assert (w.h, w.h_smooth) == (0.0, 0.0)


def test_window_signs_and_order():
    c = np.ones(8)
    c[5] = -1.0
    w = behavioural_window(_co(c), [8, 6, 4, 2], [1.0, -1.0, 1.0, 1.0])     # unsorted, a negative c
    assert w.h == 8.0 and list(w.task_lags) == [2, 4, 6, 8]


@pytest.mark.parametrize("kw,exc,err", [
    (dict(task_lags=[2, 4, 6, 9]), ValueError, "not among"),
    (dict(task_coefs=[1.0, 0.0, 1.0, 1.0]), ValueError, "nonzero"),
    (dict(task_coefs=[1.0]), ValueError, "one value per task lag"),
    (dict(frac=0.0), ValueError, "frac"),
    (dict(z_band=-1.0), ValueError, "z_band"),
    (dict(coefs=np.ones(8)), TypeError, "coefs"),
])
def test_window_validates(kw, exc, err):
    args = dict(coefs=_co(np.ones(8)), task_lags=TL_behaviour, task_coefs=TC)
    args.update(kw)
    with pytest.raises(exc, match=err):
        behavioural_window(**args)
