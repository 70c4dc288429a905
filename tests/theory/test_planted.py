"""Tests of theory/planted.py (laid out like the code: docs/testing.md).

Mutation tests for theory/planted.py (issue 32, docs/testing.md): the planted-model checker's pieces
pinned on hand-computed cases.

Hand cases use α = 2 (κ = α/(α − 1) = 2) and the power law f(ℓ) = C ℓ^{−β}, where every closed form
is elementary: N(ℓ) = (A ℓ^β / C)^κ, H_N = N^{1/(βκ)} (C/A)^{1/β}, A = εσ/c (docs/theory.md §4.4).

The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases.

theory.planted (docs/theory.md §4.4): the planted-model theory checker.

X = c f(ℓ) + SαS(α, σ) per lag → lwsim's pipeline (tail fit, SNR rule, N̂(ℓ), Ĥ_N) → compared with
the SymPy-derived H_N and growth exponent. Stated tolerances (theory/planted.py, measured on
360 random configurations at 40 lags × 2·10⁴ samples and 240 at 60 × 5·10⁴, see theory/README.md):

* α ≥ 1.2: ≥ 90 % of the N points have Ĥ_N within one lag step of the grid version of H_N;
* every α in (1.1, 2]: ≥ 80 % inside the derived band (α ± 0.03, A(1 ± 5 %)) ± one lag step;
* growth exponent: relative error ≤ 0.04 + |κ(α − 0.015)/κ(α) − 1| (0.048 at α = 2, 0.20 at 1.1).

Mutations (κ_α → α in the theory, wrong envelope law, κ̂ → α̂ in the detection rule, a Gaussian
tail fit) must make the same comparison fail. LWSIM_SLOW=1: more examples, 60 lags × 5·10⁴."""


from __future__ import annotations

import functools
import math
import os

import numpy as np
import pytest
from hypothesis import Phase, assume, given, settings, strategies as st

from lwsim import stats
from theory import planted as P, scaling as sc
from theory.planted import planted_check


LAGS40 = np.arange(2, 42, dtype=float)          # lag_lo = 3, lag_hi = 0.8·41 = 32.8


# ------------------------------------------------------------------ the check object
def _check(alpha=1.5, h_measured=(2.0, 3.0, 4.0, 9.0, 9.0), h_theory=(2.0, 4.0, 6.0, 7.0, 9.0),
           lo=(2.0, 2.0, 2.0, 2.0, 2.0), hi=(2.0, 4.0, 6.0, 7.0, 7.0), e_meas=0.51, e_th=0.5):
    lags = np.arange(1.0, 11.0)
    grid = P.GridChoice(c=3.0, n_grid=np.arange(1.0, 6.0), lag_lo=3.0, lag_hi=8.0, n_cap=100.0,
                        margin_top=123.0, edge_ok=True)
    arr = lambda v: np.asarray(v, dtype=float)  # noqa: E731
    return P.PlantedCheck(
        law="power", param_name="beta", param=1.0, C=1.0, alpha=alpha, kappa=3.0, sigma=1.0, c=3.0,
        eps=200.0, n_samples=1000, seed=5, lags=lags, f=1 / lags, n_grid=grid.n_grid,
        h_measured=arr(h_measured), h_theory=arr(h_theory), h_theory_lo=arr(lo), h_theory_hi=arr(hi),
        h_expected=arr(h_theory), resolution=1.0, exponent_measured=e_meas, exponent_theory=e_th,
        fit_mask=np.ones(5, bool), mean_rel_error=np.array([0.1, 0.5, 0.6, 0.0] + [0.0] * 6),
        grid=grid, table=None)


SLOW = os.environ.get("LWSIM_SLOW") == "1"


N_SAMPLES, N_LAGS = (50_000, 60) if SLOW else (20_000, 40)


# no shrinking: a failing example is reported as drawn (each costs a full pipeline run)
SETTINGS = dict(deadline=None, derandomize=True, database=None, max_examples=40 if SLOW else 7,
                phases=(Phase.explicit, Phase.generate))


PRANGE = {"exponential": (0.04, 0.2), "power": (0.5, 2.0), "logarithmic": (0.5, 3.0)}


def KAPPA_IS_ALPHA(a):  # noqa: N802  (the mutation: κ_α replaced by α)
    return a


@functools.lru_cache(maxsize=None)
def _run(law, alpha, p, sigma=1.0, C=1.0, seed=0):
    return P.planted_check(law, alpha, params={P.PARAM_NAMES[law]: p, "C": C}, sigma=sigma,
                           n_samples=N_SAMPLES, n_lags=N_LAGS, seed=seed)


def _why(r, v):
    return (f"{r.law} {r.param_name}={r.param:.4g} alpha={r.alpha:.4g}: {v}\n"
            f"N={np.round(r.n_grid, 4).tolist()}\nH_hat={r.h_measured.tolist()}\n"
            f"H={np.round(r.h_theory, 2).tolist()}")


# ---------------------------------------------------------------------------------- mutations
def _mutated_kappa(r):
    pp = {r.param_name: r.param, "C": r.C}
    args = (r.law, r.n_grid, r.alpha, r.sigma, r.c, r.eps, pp)
    lo, hi = P.theory_band(*args, kappa_of=KAPPA_IS_ALPHA)
    return r.verdict(P.theory_window(*args, kappa_of=KAPPA_IS_ALPHA), lo, hi,
                     P.theory_exponent(r.law, r.alpha, pp, kappa_of=KAPPA_IS_ALPHA))


def _best_fit(law, lags, f):
    """Least-squares parameters of ``law`` fitted to log f (the closest wrong envelope)."""
    x = {"exponential": lags, "power": np.log(lags), "logarithmic": np.log(np.log(lags))}[law]
    b, a = np.polyfit(x, np.log(f), 1)
    return {P.PARAM_NAMES[law]: -b, "C": float(np.exp(a))}


# ---------------------------------------------------------------------------------- agreement
@pytest.mark.parametrize("law", sc.LAWS)
@settings(**SETTINGS)
@given(alpha=st.floats(1.1, 2.0, exclude_min=True), u=st.floats(0.0, 1.0),
       sigma=st.floats(0.1, 10.0), C=st.floats(0.2, 5.0), seed=st.integers(0, 2**16))
def test_measured_window_matches_derived(law, alpha, u, sigma, C, seed):
    lo, hi = PRANGE[law]
    r = _run(law, alpha, lo + u * (hi - lo), sigma, C, seed)
    # one lag whose sample mean is off by > 50 % of the signal is a rare genuine SαS draw
    # (≈ 1e-5 per lag; PlantedCheck.extreme_lags): Ĥ_N = max detectable lag then jumps to it at
    # every N. Such a run is discarded; a faulty mean/fit would hit many lags and still fail.
    assume(r.extreme_lags != 1)
    v = r.verdict()
    assert r.grid.edge_ok and r.fit_mask.sum() >= 5, _why(r, v)
    assert v["frac_band"] >= P.BAND_FRAC, _why(r, v)
    if alpha >= P.ALPHA_STRICT:
        assert v["frac_resolution"] >= P.RES_FRAC, _why(r, v)
    assert v["exponent_rel_error"] <= v["exponent_tol"], _why(r, v)
    assert v["passes"]


@pytest.mark.parametrize("law,p", [("exponential", 0.08), ("power", 1.0), ("logarithmic", 1.0)])
def test_defaults_match_within_one_lag_step(law, p):
    """Default envelopes, α = 1.5: ≥ 95 % of N points within one lag step, exponent within 3 %
    (measured: 100 % at 40 lags × 2·10⁴, 98 % at 60 × 5·10⁴)."""
    r = _run(law, 1.5, p)
    v = r.verdict()
    assert v["frac_resolution"] >= 0.95 and v["exponent_rel_error"] <= 0.03, _why(r, v)


@pytest.mark.parametrize("law,p", [("exponential", 0.08), ("power", 1.0), ("logarithmic", 1.0)])
@pytest.mark.parametrize("alpha", [1.25, 1.5, 1.75])
def test_mutation_alpha_for_kappa_in_theory_fails(law, p, alpha):
    """κ_α → α in the derived law (α away from 2, where κ = α): the check must fail."""
    r = _run(law, alpha, p)
    assert r.passes
    vm = _mutated_kappa(r)
    assert not vm["passes"] and not vm["ok_exponent"], vm
    if alpha <= 1.5:  # the window itself is off, not only its growth rate
        assert not vm["ok_band"] and not vm["ok_resolution"], vm


@settings(**{**SETTINGS, "max_examples": 30 if SLOW else 6})
@given(law=st.sampled_from(sc.LAWS), alpha=st.floats(1.15, 1.75), u=st.floats(0.0, 1.0))
def test_mutation_alpha_for_kappa_fails_broadly(law, alpha, u):
    lo, hi = PRANGE[law]
    r = _run(law, alpha, lo + u * (hi - lo))
    assert r.passes and not _mutated_kappa(r)["passes"]


# ----------------------------------------------------------------------------------------------
# envelope: the law and its parameters
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ parameters and envelopes
def test_law_and_params():
    # through the envelope f(ℓ): exponential C e^{−λℓ}, power C ℓ^{−β}, logarithmic C (ln ℓ)^{−γ}
    def f(law, lag, params=None):
        return float(P.envelope(law, [lag], params)[0])

    e2 = math.exp(2.0)
    with pytest.raises(ValueError) as e:
        P.envelope("cubic", [2.0])
    assert str(e.value) == "law must be one of ('exponential', 'power', 'logarithmic'), got 'cubic'"
    assert f("exponential", 2.0) == pytest.approx(math.exp(-0.08 * 2.0), rel=1e-14)     # λ = 0.08
    assert f("power", 2.0) == pytest.approx(0.5, rel=1e-14)                              # β = 1
    assert f("logarithmic", e2) == pytest.approx(0.5, rel=1e-14)                         # γ = 1
    assert f("power", 2.0, {"beta": 2.5, "C": 3.0}) == pytest.approx(3.0 * 2.0 ** -2.5, rel=1e-14)
    assert f("power", 2.0, {"C": 3.0}) == pytest.approx(1.5, rel=1e-14)          # the law's default β
    assert f("logarithmic", e2, {}) == pytest.approx(0.5, rel=1e-14)
    assert f("power", 2.0, 2) == pytest.approx(0.25, rel=1e-14)                  # a number: the parameter, C = 1
    with pytest.raises(ValueError) as e:
        P.envelope("power", [2.0], {"lam": 0.1, "C": 1.0})
    assert str(e.value) == "params for 'power' take 'beta' (and 'C'), got ['C', 'lam']"
    assert f("power", 2.0, {"C": 2.5}) == pytest.approx(1.25, rel=1e-14)
    assert f("power", 2.0, {"beta": 2.0}) == pytest.approx(0.25, rel=1e-14)       # C defaults to 1
    assert f("power", 2.0, 0.3) == pytest.approx(2.0 ** -0.3, rel=1e-14)          # C = 1 with a number


# ----------------------------------------------------------------------------------------------
# envelope
# ----------------------------------------------------------------------------------------------


def test_envelope_by_hand():
    np.testing.assert_allclose(P.envelope("exponential", [0.0, 2.0], {"lam": 0.5, "C": 2.0}),
                               [2.0, 2.0 * math.exp(-1.0)], rtol=1e-15)
    np.testing.assert_allclose(P.envelope("exponential", [10.0]), [math.exp(-0.8)], rtol=1e-15)
    np.testing.assert_allclose(P.envelope("power", [2, 4]), [0.5, 0.25], rtol=1e-15)
    np.testing.assert_allclose(P.envelope("power", [2.0, 4.0], 2.0), [0.25, 0.0625], rtol=1e-15)
    np.testing.assert_allclose(P.envelope("logarithmic", [math.e, math.e ** 2], {"gamma": 1.0, "C": 3.0}),
                               [3.0, 1.5], rtol=1e-15)
    f = P.envelope("power", 4.0)
    assert f.shape == () and f == 0.25
    assert P.envelope("power", [2, 4]).dtype == np.float64
    P.envelope("logarithmic", [1.0 + 1e-9])                  # just above 1 is fine
    with pytest.raises(ValueError) as e:
        P.envelope("logarithmic", [1.0, 2.0])
    assert str(e.value) == "the logarithmic law needs lags > 1"


# ------------------------------------------------------------------ inputs of other dtypes, warnings
def test_float32_inputs_are_computed_in_float64():
    # float32(3) is exactly 3: f(3) = 1/3 and H = √3/2 (κ = 2, A = 2) in float64, not float32's
    # 0.33333334 / 0.8660254 (NumPy keeps float32 arrays float32 against Python floats)
    lags32 = np.array([3.0], dtype=np.float32)
    assert P.envelope("power", lags32)[0] == pytest.approx(1 / 3, rel=1e-15)
    assert P.envelope("exponential", lags32, 0.5)[0] == pytest.approx(math.exp(-1.5), rel=1e-15)
    assert P.theory_window("power", lags32, 2.0, 1.0, 1.0, 2.0)[0] == pytest.approx(math.sqrt(3) / 2,
                                                                                   rel=1e-15)
    # growth fit, float32 budgets 2^0..2^5 (exact): crossings at x = (j − ½) log 2, y = j + 2:
    # slope 1/log 2 (float32's log 2 is off by 3·10⁻⁸)
    lags = np.arange(1.0, 11.0)
    n32 = np.array([1, 2, 4, 8, 16, 32], dtype=np.float32)
    slope, _ = P.growth_fit("exponential", lags, n32, [2.0, 3.0, 4.0, 5.0, 6.0, 6.0])
    assert slope == pytest.approx(1 / math.log(2), rel=1e-12)
    # float32 windows 2, 4, .., 32 (exact), power law: log H = k log 2 at x = 2k − 1: slope log 2 / 2
    h32 = np.array([2, 4, 8, 16, 32], dtype=np.float32)
    slope, _ = P.growth_fit("power", [1.0, 100.0], np.exp([0.0, 2, 4, 6, 8]), h32)
    assert slope == pytest.approx(math.log(2) / 2, rel=1e-12)


# ----------------------------------------------------------------------------------------------
# planted_samples
# ----------------------------------------------------------------------------------------------


def test_planted_samples_are_signal_plus_lwsim_noise():
    X = P.planted_samples("power", {"beta": 1.0, "C": 2.0}, 1.5, 0.5, 3.0, [2.0, 4.0], 5.0, seed=7)
    noise = stats.sample_sas(1.5, 0.5, size=(2, 5), seed=7)
    np.testing.assert_allclose(X - np.array([[3.0], [1.5]]), noise, rtol=0, atol=1e-12)
    X0 = P.planted_samples("power", None, 2.0, 1.0, 1.0, [2.0], 3)
    np.testing.assert_allclose(X0 - 0.5, stats.sample_sas(2.0, 1.0, size=(1, 3), seed=0), atol=1e-12)


# ---------------------------------------------------------------------------------- pieces
def test_planted_samples_shape_mean_and_determinism():
    lags = np.arange(2, 12, dtype=float)
    X = P.planted_samples("power", {"beta": 1.0, "C": 2.0}, 2.0, 0.5, 3.0, lags, 4000, seed=1)
    assert X.shape == (10, 4000)
    np.testing.assert_allclose(X.mean(axis=1), 3.0 * 2.0 / lags, atol=5 * 0.5 * np.sqrt(2 / 4000))
    np.testing.assert_array_equal(X, P.planted_samples("power", {"beta": 1.0, "C": 2.0}, 2.0, 0.5,
                                                       3.0, lags, 4000, seed=1))
    with pytest.raises(ValueError):
        P.planted_samples("logarithmic", 1.0, 1.5, 1.0, 1.0, [1.0, 2.0], 10)
    with pytest.raises(ValueError):
        P.planted_check("cubic", 1.5)


# ----------------------------------------------------------------------------------------------
# choose_grid: the default lag range
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ grid
def _edges(lags):
    """choose_grid's default lag range (lag_lo, lag_hi) on ``lags`` (power law, α 1.5, a large sample)."""
    g = P.choose_grid("power", None, 1.5, 1.0, 20.0, lags, 1e9)
    return g.lag_lo, g.lag_hi


def test_edges_by_hand():
    assert _edges(LAGS40) == (3.0, pytest.approx(32.8))
    assert _edges([10.0, 6.0, 5.0]) == (6.0, 8.0)          # sorted; lags[0] ≥ 3: the 2nd lag
    assert _edges([3.0, 4.0, 10.0]) == (4.0, 8.0)          # 3 is not above lags[0] = 3
    assert _edges([1.0, 3.0]) == (3.0, 4.0)                # 3 = the last lag is allowed; lo + 1
    assert _edges([1.0, 2.0]) == (2.0, 3.0)                # 3 beyond the last lag
    assert _edges([5.0]) == (5.0, 6.0)                     # one lag


def test_edges_lag_lo_three_between_lags():
    # lo = 3 lies inside [lags[0], lags[-1]] but is no lag: 3 itself, not the 2nd lag (2)
    assert _edges([1.0, 2.0, 10.0]) == (3.0, 8.0)
    # the last lag is 3 (3 ≤ lags[-1] holds): 3, and lag_hi = max(0.8·3, 3 + 1)
    assert _edges([1.0, 2.0, 3.0]) == (3.0, 4.0)


# ----------------------------------------------------------------------------------------------
# choose_grid
# ----------------------------------------------------------------------------------------------


def test_choose_grid_centred_by_hand():
    # κ = 2, f = 1/ℓ: span = (32.8/3)², n_lo = span^{−1/2} = 3/32.8, c = εσ/(f_lo n_lo^{1/2}), A = εσ/c
    g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000)
    assert g.lag_lo == 3.0 and g.lag_hi == pytest.approx(32.8)
    assert g.c == pytest.approx(600.0 / math.sqrt(3 / 32.8), rel=1e-12)
    assert g.n_cap == pytest.approx(80_000.0, rel=1e-12)      # 2·10⁴ (200/100)²
    assert g.n_grid.size == 60 and g.edge_ok is True
    assert g.n_grid[0] == pytest.approx(3 / 32.8, rel=1e-12)
    assert g.n_grid[-1] == pytest.approx(32.8 / 3, rel=1e-12)
    np.testing.assert_allclose(np.diff(np.log(g.n_grid)), np.log(32.8 ** 2 / 9) / 59, rtol=1e-9)
    assert g.margin_top == pytest.approx(200.0 * math.sqrt(20_000 * 3 / 32.8), rel=1e-12)
    assert type(g.c) is float and type(g.margin_top) is float
    # σ only scales the gain
    assert P.choose_grid("power", None, 2.0, 2.0, 200.0, LAGS40, 20_000).c == pytest.approx(2 * g.c)


def test_choose_grid_start_and_lags_by_hand():
    g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, anchor="start", n_points=5.0)
    assert g.c == pytest.approx(600.0, rel=1e-12)             # n_lo = 1: c = εσ/f_lo
    np.testing.assert_allclose(g.n_grid, np.geomspace(1.0, (32.8 / 3) ** 2, 5), rtol=1e-12)
    g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, c=600.0, lag_lo=4, lag_hi=20)
    assert (g.lag_lo, g.lag_hi, g.c) == (4.0, 20.0, 600.0)
    assert g.n_grid[0] == pytest.approx(16 / 9) and g.n_grid[-1] == pytest.approx(400 / 9)
    # the margin: n_cap = n (ε/margin)^κ
    g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, c=600.0, margin=50.0)
    assert g.n_cap == pytest.approx(320_000.0)
    # C enters N(ℓ) = (A ℓ^β/C)^κ: C = 2 halves A ℓ, the budgets drop by 4
    g = P.choose_grid("power", {"C": 2.0}, 2.0, 1.0, 200.0, LAGS40, 20_000, c=600.0)
    assert g.n_grid[0] == pytest.approx(0.25) and g.n_grid[-1] == pytest.approx(32.8 ** 2 / 36)
    with pytest.raises(ValueError) as e:
        P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, anchor="middle")
    assert str(e.value) == "anchor must be 'center' or 'start', got 'middle'"


def test_choose_grid_cap_by_hand():
    # n_samples = 1: n_cap = 4 < span^{1/2}: the centred grid is moved down to end at the cap
    g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 1)
    assert g.n_cap == pytest.approx(4.0)
    assert g.n_grid[-1] == pytest.approx(4.0) and g.n_grid[0] == pytest.approx(4 * 9 / 32.8 ** 2)
    assert g.edge_ok is True and g.margin_top == pytest.approx(100.0)
    # a given gain with N(lag_hi) = 1.5 n_cap: cut at the cap
    A = math.sqrt(120_000.0) / 32.8
    g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, c=200.0 / A)
    assert g.edge_ok is False and g.n_grid[-1] == pytest.approx(80_000.0)
    assert g.margin_top == pytest.approx(200.0 * math.sqrt(20_000 / 80_000))
    # A = 1000/3: N(3) = 10⁶ above the cap
    with pytest.raises(ValueError) as e:
        P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, c=0.6)
    assert str(e.value) == ("no N grid: the sample-mean noise cap N_cap = 8e+04 is below "
                            "N(lag_lo) = 1e+06; raise c, eps or n_samples")
    # top exactly at N(lag_lo): no grid either
    with pytest.raises(ValueError, match="no N grid"):
        P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, c=600.0, lag_lo=5, lag_hi=5)


def test_choose_grid_gain_uses_the_params():
    # β = 2, C = 2, κ = 2: f = 2/ℓ², span = (f(3)/f(32.8))² = (32.8/3)⁴, n_lo = span^{−1/2} = (3/32.8)²,
    # c = εσ/(f(3) n_lo^{1/2}) = 200/((2/9)(3/32.8)) = 9840
    g = P.choose_grid("power", {"beta": 2.0, "C": 2.0}, 2.0, 1.0, 200.0, LAGS40, 20_000)
    assert g.c == pytest.approx(9840.0, rel=1e-12)
    assert g.n_grid[0] == pytest.approx((3 / 32.8) ** 2, rel=1e-12)
    assert g.n_grid[-1] == pytest.approx((32.8 / 3) ** 2, rel=1e-12)


def test_choose_grid_edge_at_the_cap_tolerance(monkeypatch):
    # N(lag_hi) exactly n_cap (1 + 10⁻⁹) is still on the edge; the next float above is cut at the cap
    n_cap = 20_000.0 * 2.0 ** 2                                   # n (ε/margin)^κ = 8·10⁴ exactly
    top = n_cap * (1 + 1e-9)
    for n_hi, edge in ((top, True), (np.nextafter(top, np.inf), False)):
        monkeypatch.setattr(P.scaling, "samples_needed_fn",
                            lambda law, n_hi=n_hi: (lambda H, **kw: n_hi if H == 30.0 else 1.0))
        g = P.choose_grid("power", None, 2.0, 1.0, 200.0, LAGS40, 20_000, c=600.0, lag_lo=3, lag_hi=30)
        assert g.edge_ok is edge and g.n_grid[-1] == (n_hi if edge else n_cap)


@pytest.mark.parametrize("law", sc.LAWS)
@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.0])
def test_choose_grid_spans_lags_with_margin(law, alpha):
    lags = np.arange(2, 42, dtype=float)
    g = P.choose_grid(law, None, alpha, 2.0, P.EPS, lags, 20_000)
    h = P.theory_window(law, g.n_grid[[0, -1]], alpha, 2.0, g.c, P.EPS)
    np.testing.assert_allclose(h, [3.0, 0.8 * 41], rtol=1e-9)
    k = alpha / (alpha - 1)
    margins = P.EPS * (20_000 / g.n_grid) ** (1 / k)
    assert g.edge_ok and margins.min() >= P.MARGIN and g.margin_top == pytest.approx(margins.min())
    # the signal at the window edge vs the sample-mean noise scale σ n^{-1/κ}, directly
    f_edge = P.envelope(law, h[-1:])[0]
    assert g.c * f_edge / (2.0 * 20_000 ** (-1 / k)) == pytest.approx(margins[-1], rel=1e-9)
    # a fixed gain whose N(lag_hi) is 10× the cap: the grid is cut at the cap and says so
    cap = 20_000 * (20.0 / P.MARGIN) ** 3
    c = 20.0 / (P.envelope(law, [32.8])[0] * (10 * cap) ** (1 / 3))
    g2 = P.choose_grid(law, None, 1.5, 1.0, 20.0, lags, 20_000, c=c)
    assert not g2.edge_ok and g2.n_grid[-1] == pytest.approx(g2.n_cap) == pytest.approx(cap)
    with pytest.raises(ValueError, match="no N grid"):  # even lag_lo needs more than the cap
        P.choose_grid(law, None, 1.5, 1.0, 20.0, lags, 20_000, c=c / 1e3)


@pytest.mark.parametrize("law,p", [("exponential", 0.1), ("power", 0.7), ("logarithmic", 1.5)])
def test_growth_fit_recovers_exponent_of_exact_grid_window(law, p):
    """No noise: the grid version of the derived H_N itself gives the exponent within 1 %."""
    lags = np.arange(2, 62, dtype=float)
    g = P.choose_grid(law, p, 1.6, 1.0, P.EPS, lags, 10**6, n_points=200)
    h = P.theory_window(law, g.n_grid, 1.6, 1.0, g.c, P.EPS, p)
    i = P.grid_index(lags, h)
    h_grid = np.where(i > 0, lags[np.maximum(i, 1) - 1], 0.0)
    slope, mask = P.growth_fit(law, lags, g.n_grid, h_grid)
    assert mask.sum() > 20
    assert slope == pytest.approx(P.theory_exponent(law, 1.6, p), rel=0.01)


# ----------------------------------------------------------------------------------------------
# theory_window
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ theory
def test_theory_window_by_hand():
    # κ = 2, β = 1, A = εσ/c = 2: H = N^{1/2}/2; C = 4: H = 2 N^{1/2}
    np.testing.assert_allclose(P.theory_window("power", [4.0, 16.0], 2.0, 1.0, 1.0, 2.0), [1.0, 2.0])
    np.testing.assert_allclose(P.theory_window("power", [4.0, 16.0], 2.0, 1.0, 1.0, 2.0, {"C": 4.0}),
                               [4.0, 8.0])
    np.testing.assert_allclose(P.theory_window("power", [4.0], 2.0, 2.0, 4.0, 2.0), [2.0])  # A = 1
    np.testing.assert_allclose(P.theory_window("power", [16.0], 2.0, 1.0, 1.0, 2.0,
                                               kappa_of=lambda a: 4.0), [1.0])
    # exponential: H = (log(C/A) + log N/κ)/λ, A = 1, κ = 2, λ = 0.5
    np.testing.assert_allclose(P.theory_window("exponential", [math.e ** 2], 2.0, 1.0, 1.0, 1.0, 0.5),
                               [2.0])
    h = P.theory_window("power", 16.0, 2.0, 1.0, 1.0, 2.0)
    assert np.shape(h) == () and h == pytest.approx(2.0)


def test_nan_windows_raise_no_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(P.theory_window("power", [-1.0], 2.0, 1.0, 1.0, 1.0)[0])   # (−1)^{1/2}
        # log log 0.8 is undefined: that crossing is left out without a warning
        t = np.array([1.0, 2.0, 3.0, 4.0])
        h = np.concatenate([[0.6, 0.8], np.exp(np.exp(t))])
        slope, _ = P.growth_fit("logarithmic", [0.5, 1e30], np.exp(np.arange(6.0)), h)
        assert slope == pytest.approx(1.0)


@pytest.mark.parametrize("law,p,wrong", [("exponential", 0.08, "power"),
                                         ("power", 1.0, "exponential"),
                                         ("logarithmic", 2.0, "exponential")])
@pytest.mark.parametrize("alpha", [1.3, 1.9])
def test_mutation_wrong_envelope_law_fails(law, p, wrong, alpha):
    """The derived window of the wrong law, with that law's parameters fitted to the planted
    envelope over the checked lags, and its growth law fitted to Ĥ_N: must fail. (A power law
    fitted to a logarithmic envelope over 3..32 lags is too close to be told apart reliably.)"""
    r = _run(law, alpha, p)
    sel = (r.lags >= r.grid.lag_lo) & (r.lags <= r.grid.lag_hi)
    q = _best_fit(wrong, r.lags[sel], r.f[sel])
    args = (wrong, r.n_grid, r.alpha, r.sigma, r.c, r.eps, q)
    v = r.verdict(P.theory_window(*args), *P.theory_band(*args), P.theory_exponent(wrong, alpha, q),
                  P.growth_fit(wrong, r.lags, r.n_grid, r.h_measured)[0])
    assert r.passes and not v["passes"] and v["frac_resolution"] < 0.5, v


# ----------------------------------------------------------------------------------------------
# grid_index
# ----------------------------------------------------------------------------------------------


def test_grid_index_by_hand():
    lags = [4.0, 2.0, 3.0]                                   # sorted first
    h = [1.9, 2.0, 2.5, 3 * (1 - 1e-13), 4.0, 10.0, np.nan, 2 * (1 - 1e-12)]
    np.testing.assert_array_equal(P.grid_index(lags, h), [0, 1, 1, 2, 3, 3, 0, 1])
    assert P.grid_index([0.0, 1.0], [np.nan]).tolist() == [0]   # NaN counts no lag, not lag 0


def test_grid_index_float32_lags_keep_the_rounding_tolerance():
    # float32 lags are compared in float64: H_N = 3(1 − 10⁻¹³) still counts lag 3 (in float32,
    # 3(1 − 10⁻¹²) rounds back to 3 and the tolerance is lost)
    assert P.grid_index(np.array([4.0, 2.0, 3.0], dtype=np.float32), [3 * (1 - 1e-13)]).tolist() == [2]


# ----------------------------------------------------------------------------------------------
# growth_fit
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ growth fit
def test_growth_fit_by_hand():
    lags = np.arange(1.0, 11.0)
    n = np.exp(np.arange(6.0))
    slope, mask = P.growth_fit("exponential", lags, n, [2.0, 3.0, 4.0, 5.0, 6.0, 6.0])
    assert slope == pytest.approx(1.0)                        # y = 3..6 at x = 0.5..3.5
    np.testing.assert_array_equal(mask, [False, True, True, True, True, False])
    slope, mask = P.growth_fit("exponential", lags, n, [2.0, 3.0, 4.0, 5.0, 6.0, 6.0], min_points=5)
    assert math.isnan(slope) and mask.sum() == 4
    # the lag grid's ends are not crossings: 1 → 2 at lags[0] = 1 ... 9 → 10 at lags[-1]
    slope, mask = P.growth_fit("exponential", lags, n, [1.0, 3.0, 5.0, 7.0, 9.0, 10.0], min_points=3)
    np.testing.assert_array_equal(mask, [False, True, True, True, True, False])
    assert slope == pytest.approx(2.0)
    slope, mask = P.growth_fit("exponential", lags, n, [0.5, 1.0, 2.0, 3.0, 4.0, 5.0], min_points=4)
    np.testing.assert_array_equal(mask, [False, False, True, True, True, True])
    # power: log H against log N; H doubles every 2 in log N: slope log 2 / 2
    slope, _ = P.growth_fit("power", [1.0, 100.0], np.exp([0.0, 2, 4, 6, 8]), [2.0, 4, 8, 16, 32])
    assert slope == pytest.approx(math.log(2) / 2)
    # logarithmic: log log H; a crossing at H = 0.8 (log log undefined) is left out of the fit
    t = np.array([1.0, 2.0, 3.0, 4.0])
    h = np.concatenate([[0.6, 0.8], np.exp(np.exp(t))])
    slope, mask = P.growth_fit("logarithmic", [0.5, 1e30], np.exp(np.arange(6.0)), h)
    assert mask.sum() == 5 and slope == pytest.approx(1.0)
    # one crossing: no slope, even when one crossing is enough
    slope, _ = P.growth_fit("exponential", lags, n[:2], [2.0, 3.0], min_points=1)
    assert math.isnan(slope)
    slope, mask = P.growth_fit("exponential", lags, n[:1], [2.0])
    assert math.isnan(slope) and mask.tolist() == [False]
    with pytest.raises(ValueError) as e:
        P.growth_fit("exponential", lags, n, [2.0])
    assert str(e.value) == "n_grid must be increasing and match h"
    with pytest.raises(ValueError, match="increasing"):
        P.growth_fit("exponential", lags, [1.0, 1.0], [2.0, 3.0])


# ----------------------------------------------------------------------------------------------
# theory_band
# ----------------------------------------------------------------------------------------------


def test_theory_band_by_hand():
    # d_A = 0.5: A ∈ {1, 2, 3}, H = 2/A at N = 4
    lo, hi = P.theory_band("power", [4.0], 2.0, 1.0, 1.0, 2.0, None, d_alpha=0.0, d_A=0.5)
    np.testing.assert_allclose([lo[0], hi[0]], [2 / 3, 2.0])
    # κ = α: α' ∈ {1.5 − 0.5 (left out: ≤ 1), 1.5, 2}; H = 16^{1/κ}
    lo, hi = P.theory_band("power", [16.0], 1.5, 1.0, 1.0, 1.0, None, d_alpha=0.5, d_A=0.0,
                           kappa_of=lambda a: a)
    np.testing.assert_allclose([lo[0], hi[0]], [4.0, 16 ** (2 / 3)])
    # α + d_alpha capped at 2: α' ∈ {1.3, 1.8, 2}
    lo, hi = P.theory_band("power", [16.0], 1.8, 1.0, 1.0, 1.0, None, d_alpha=0.5, d_A=0.0,
                           kappa_of=lambda a: a)
    np.testing.assert_allclose([lo[0], hi[0]], [4.0, 16 ** (1 / 1.3)])
    # the defaults: α ± 0.03, A(1 ± 5 %)
    k = lambda a: a / (a - 1)  # noqa: E731
    lo, hi = P.theory_band("power", [16.0], 1.5, 1.0, 1.0, 1.0)
    np.testing.assert_allclose([lo[0], hi[0]], [16 ** (1 / k(1.47)) / 1.05, 16 ** (1 / k(1.53)) / 0.95])
    # a NaN window (N < 0) is −inf at both ends
    lo, hi = P.theory_band("power", [-1.0], 2.0, 1.0, 1.0, 1.0)
    assert lo[0] == hi[0] == -np.inf


# ----------------------------------------------------------------------------------------------
# theory_exponent
# ----------------------------------------------------------------------------------------------


def test_exponent_and_tolerance_by_hand():
    assert P.theory_exponent("power", 2.0) == pytest.approx(0.5)                    # 1/(κβ)
    assert P.theory_exponent("exponential", 2.0, {"lam": 0.25}) == pytest.approx(2.0)
    assert P.theory_exponent("power", 2.0, 1.0, kappa_of=lambda a: 4.0) == pytest.approx(0.25)
    # 0.04 + |κ(1.985)/κ(2) − 1|, κ(1.985) = 1.985/0.985
    assert P.exponent_tolerance(2.0) == pytest.approx(0.04 + 1.985 / 0.985 / 2 - 1, rel=1e-12)
    # α − 0.015 below 1 + 10⁻³: κ(1.001) = 1001
    assert P.exponent_tolerance(1.01) == pytest.approx(0.04 + 1001 / 101 - 1, rel=1e-9)
    assert P.exponent_tolerance(2.0, d_alpha=0.5, base=0.0) == pytest.approx(1.5 / 0.5 / 2 - 1)


def test_exponent_matches_sympy_and_tolerance_values():
    k = 1.5 / 0.5
    assert P.theory_exponent("exponential", 1.5, 0.1) == pytest.approx(1 / (0.1 * k))
    assert P.theory_exponent("power", 1.5, 2.0) == pytest.approx(1 / (k * 2.0))
    assert P.theory_exponent("logarithmic", 1.5, 0.5) == pytest.approx(1 / (k * 0.5))
    assert P.exponent_tolerance(2.0) < 0.05 < 0.15 < P.exponent_tolerance(1.1) < 0.25


# ----------------------------------------------------------------------------------------------
# exponent_tolerance
# ----------------------------------------------------------------------------------------------


def test_verdict_by_hand(monkeypatch):
    r = _check()
    # index = h here; |index diff|: 0, 1, 2, 2, 0 → 3/5 within one step; band: index ≤ hi + 1 =
    # 3, 5, 7, 8, 8 holds for 2, 3, 4 and not for 9, 9 → 3/5
    v = r.verdict()
    tol = P.exponent_tolerance(1.5)
    assert v == {"frac_resolution": 0.6, "frac_band": 0.6, "exponent_rel_error": pytest.approx(0.02),
                 "exponent_tol": tol, "ok_resolution": False, "ok_band": False, "ok_exponent": True,
                 "passes": False}
    assert r.frac_resolution == 0.6 and r.frac_band == 0.6 and r.passes is False
    # another theory: lo and hi default to it
    v = r.verdict(h_theory=np.array([2.0, 3.0, 4.0, 9.0, 9.0]))
    assert v["frac_resolution"] == 1.0 and v["frac_band"] == 1.0 and v["ok_resolution"] is True
    assert v["ok_band"] is True and v["passes"] is True
    v = r.verdict(h_theory=np.array([2.0, 3.0, 4.0, 9.0, 9.0]), h_lo=np.array([5.0] * 5))
    assert v["frac_band"] == 0.6                               # index ≥ 5 − 1: 4, 9, 9
    v = r.verdict(h_theory=np.array([2.0, 3.0, 4.0, 9.0, 9.0]), h_hi=np.array([1.0] * 5))
    assert v["frac_band"] == 0.2                               # index ≤ 1 + 1: 2 only
    v = r.verdict(h_theory=np.array([5.0] * 5), h_hi=np.array([10.0] * 5))
    assert v["frac_band"] == 0.6                               # h_lo = h_theory: index ≥ 4
    # exponents: the given ones replace this run's
    v = r.verdict(exponent_theory=0.25, exponent_measured=0.5)
    assert v["exponent_rel_error"] == 1.0 and v["ok_exponent"] is False
    assert r.verdict(exponent_measured=0.5)["exponent_rel_error"] == 0.0
    v = r.verdict(exponent_measured=float("nan"))
    assert v["exponent_rel_error"] == np.inf and v["ok_exponent"] is False
    # exactly at the tolerance passes (a tolerance of 1/4, exact in binary)
    monkeypatch.setattr(P, "exponent_tolerance", lambda a: 0.25)
    assert r.verdict(exponent_theory=1.0, exponent_measured=1.25)["ok_exponent"] is True
    monkeypatch.undo()
    # frac_band 0.8 exactly is enough; resolution 0.9 only required from α = 1.2
    r = _check(h_measured=(2.0, 4.0, 6.0, 7.0, 9.0), hi=(2.0, 4.0, 6.0, 7.0, 9.0),
               lo=(2.0, 4.0, 6.0, 7.0, 2.0))
    assert r.verdict(h_lo=np.array([2.0, 4.0, 6.0, 7.0, 2.0]),
                     h_theory=np.array([2.0, 4.0, 6.0, 7.0, 9.0]),
                     h_hi=np.array([2.0, 4.0, 6.0, 7.0, 9.0]))["passes"] is True
    band08 = _check(h_measured=(2.0, 4.0, 6.0, 7.0, 1.0), h_theory=(2.0, 4.0, 6.0, 7.0, 9.0),
                    lo=(2.0, 4.0, 6.0, 7.0, 9.0), hi=(2.0, 4.0, 6.0, 7.0, 9.0))
    v = band08.verdict()
    assert v["frac_band"] == 0.8 and v["ok_band"] is True and v["frac_resolution"] == 0.8
    assert v["ok_resolution"] is False and v["passes"] is False
    assert _check(alpha=1.19, h_measured=(2.0, 4.0, 6.0, 7.0, 1.0), h_theory=(2.0, 4.0, 6.0, 7.0, 9.0),
                  lo=(2.0, 4.0, 6.0, 7.0, 9.0), hi=(2.0, 4.0, 6.0, 7.0, 9.0)).passes is True
    assert _check(alpha=1.2, h_measured=(2.0, 4.0, 6.0, 7.0, 1.0), h_theory=(2.0, 4.0, 6.0, 7.0, 9.0),
                  lo=(2.0, 4.0, 6.0, 7.0, 9.0), hi=(2.0, 4.0, 6.0, 7.0, 9.0)).passes is False
    # frac_resolution 0.9 exactly (10 points) is enough
    lags10 = np.arange(1.0, 11.0)
    r10 = _check(alpha=1.5, h_measured=lags10, h_theory=lags10, lo=lags10, hi=lags10)
    h9 = lags10.copy()
    h9[5] = 9.0
    v = r10.verdict(h_theory=h9)
    assert v["frac_resolution"] == 0.9 and v["ok_resolution"] is True


def test_extreme_lags_and_summary():
    r = _check()
    assert r.extreme_lags == 1                                 # 0.5 is not above one half
    s = r.summary()
    assert s == {"law": "power", "param_name": "beta", "param": 1.0, "C": 1.0, "alpha": 1.5,
                 "kappa": 3.0, "sigma": 1.0, "c": 3.0, "eps": 200.0, "n_samples": 1000, "n_lags": 10,
                 "seed": 5, "n_lo": 1.0, "n_hi": 5.0, "margin_top": 123.0, "edge_ok": True,
                 "extreme_lags": 1, "exponent_measured": 0.51, "exponent_theory": 0.5, **r.verdict()}
    assert type(s["n_lags"]) is int and type(s["n_lo"]) is float


# ----------------------------------------------------------------------------------------------
# planted_check
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ planted_check
def test_planted_check_arguments():
    with pytest.raises(ValueError) as e:
        P.planted_check("power", 1.5, noise="bogus")
    assert str(e.value) == "noise must be 'lag' or 'full', got 'bogus'"
    for a in (1.0, 2.5):
        with pytest.raises(ValueError) as e:
            P.planted_check("power", a)
        assert str(e.value) == f"alpha must lie in (1, 2], got {a}"
    with pytest.raises(ValueError, match="law must be one of"):
        P.planted_check("cubic", 1.5)


def test_planted_check_fields_by_hand():
    kw = dict(n_lags=8, n_samples=1000, n_points=12, seed=2)
    pp = {"beta": 0.5, "C": 2.0}
    r = P.planted_check("power", 2, params=pp, sigma=0.5, **kw)
    np.testing.assert_array_equal(r.lags, np.arange(2.0, 10.0))
    assert r.lags.dtype == np.float64
    assert (r.law, r.param_name, r.param, r.C, r.alpha, r.kappa) == ("power", "beta", 0.5, 2.0, 2.0, 2.0)
    assert (r.sigma, r.eps, r.n_samples, r.seed, r.resolution) == (0.5, 200.0, 1000, 2, 1.0)
    assert type(r.alpha) is float and type(r.n_samples) is int
    np.testing.assert_allclose(r.f, 2.0 / np.sqrt(r.lags))
    assert r.c == r.grid.c and r.n_grid is r.grid.n_grid and r.n_grid.size == 12
    # H_N = N^{1/(βκ)} (C/A)^{1/β} = N (2/A)², A = εσ/c; the grid sweeps lag_lo = 3 → 0.8·9
    A = 200.0 * 0.5 / r.c
    np.testing.assert_allclose(r.h_theory, r.n_grid * (2.0 / A) ** 2, rtol=1e-12)
    np.testing.assert_allclose(r.h_theory[[0, -1]], [3.0, 7.2], rtol=1e-9)
    assert (r.h_theory_lo <= r.h_theory).all() and (r.h_theory <= r.h_theory_hi).all()
    assert (r.h_theory_lo < r.h_theory).any()
    idx = np.searchsorted(r.lags, r.h_theory * (1 + 1e-12), side="right")
    np.testing.assert_array_equal(r.h_expected, np.where(idx > 0, r.lags[np.maximum(idx, 1) - 1], 0.0))
    assert r.exponent_theory == pytest.approx(1.0)                          # 1/(κβ)
    assert r.fit_mask.dtype == bool and r.fit_mask.shape == (12,) and r.fit_mask.sum() >= 4
    np.testing.assert_array_equal(r.h_measured, r.table.h_n)
    np.testing.assert_allclose(r.mean_rel_error, np.abs(r.table.mean / (r.c * r.f) - 1))
    assert r.mean_rel_error.max() < 0.05
    # the same seed draws the same samples; another seed others
    r2 = P.planted_check("power", 2, params=pp, sigma=0.5, **kw)
    np.testing.assert_array_equal(r.table.mean, r2.table.mean)
    np.testing.assert_array_equal(r.h_measured, r2.h_measured)
    assert r.verdict()["frac_resolution"] >= 0.9 and r.exponent_measured > 0
    r3 = P.planted_check("power", 2, params=pp, sigma=0.5, **{**kw, "seed": 3})
    assert not np.array_equal(r.table.mean, r3.table.mean)
    # without a band, lo = hi = H_N; with d_A = 0.5 alone lo = H/1.5, hi = H/0.5 (H ∝ 1/A)
    r0 = P.planted_check("power", 2.0, d_alpha=0.0, d_A=0.5, **kw)
    np.testing.assert_allclose(r0.h_theory_lo, r0.h_theory / 1.5, rtol=1e-12)
    np.testing.assert_allclose(r0.h_theory_hi, r0.h_theory / 0.5, rtol=1e-12)


def test_planted_check_defaults():
    r = P.planted_check("power", 1.5)
    assert (r.n_samples, r.seed, r.eps, r.sigma, r.param, r.C) == (20_000, 0, 200.0, 1.0, 1.0, 1.0)
    np.testing.assert_array_equal(r.lags, np.arange(2.0, 42.0))
    assert r.n_grid.size == 60 and r.grid.edge_ok
    assert r.grid.n_cap == pytest.approx(20_000 * 2.0 ** 3)                 # n (200/100)^κ, κ = 3
    assert r.table.noise == "lag" and r.passes


def test_planted_check_grid_options():
    kw = dict(n_lags=8, n_samples=1000, seed=1)
    r = P.planted_check("power", 2.0, n_points=7, anchor="start", **kw)
    assert r.n_grid.size == 7 and r.n_grid[0] == pytest.approx(1.0)        # anchor passed
    r = P.planted_check("power", 2.0, eps=100.0, margin=50.0, c=100.0, **kw)
    assert r.c == 100.0 and r.eps == 100.0
    assert r.grid.n_cap == pytest.approx(1000 * 4.0)                      # n (ε/margin)^κ
    assert r.n_grid[0] == pytest.approx(9.0)                              # N(3) = (3 A)², A = 1
    # H_N ∝ √N: budgets 0.1, 0.5, 1 × N(3) give H = 0.95, 2.12, 3 → grid windows 0 (none), 2, 3
    n0 = P.choose_grid("power", None, 2.0, 1.0, 200.0, np.arange(2.0, 10.0), 1000).n_grid[0]
    r = P.planted_check("power", 2.0, n_grid=n0 * np.array([0.1, 0.5, 1.0]), n_lags=8, n_samples=1000)
    assert r.h_expected.tolist() == [0.0, 2.0, 3.0]
    r = P.planted_check("power", 2.0, lags=[2.0, 5.0], n_samples=300, n_points=3)
    assert r.resolution == 3.0
    r = P.planted_check("power", 2.0, n_grid=[1, 2, 4], **kw)
    np.testing.assert_array_equal(r.n_grid, [1.0, 2.0, 4.0])
    assert r.n_grid.dtype == np.float64
    assert r.h_measured.shape == (3,)
    r = P.planted_check("power", 2.0, lags=[9, 2, 3, 5], n_samples=500, n_points=4)
    np.testing.assert_array_equal(r.lags, [2.0, 3.0, 5.0, 9.0])
    assert r.lags.dtype == np.float64
    assert r.resolution == 4.0
    # noise="full": every lag's null is one further draw, so every lag gets the same (α̂, σ̂)
    # of SαS(α, σ) (here α = 2, σ = 0.5), drawn from the run's own seeded generator
    r = P.planted_check("power", 2.0, sigma=0.5, noise="full", **kw)
    assert r.table.noise == "full" and np.ptp(r.table.alpha) == 0.0 and np.ptp(r.table.sigma) == 0.0
    assert r.table.alpha[0] > 1.8 and r.table.sigma[0] == pytest.approx(0.5, rel=0.1)
    r2 = P.planted_check("power", 2.0, sigma=0.5, noise="full", **kw)
    assert r2.table.sigma[0] == r.table.sigma[0] and r2.table.alpha[0] == r.table.alpha[0]


def test_planted_check_default_method_and_single_lag():
    r = P.planted_check("exponential", 1.8, lags=[5.0], n_samples=300, n_points=3)
    assert r.resolution == 1.0 and r.lags.tolist() == [5.0]


def test_planted_check_method_and_bootstrap_seed():
    kw = dict(lags=[5.0, 6.0], n_samples=499, n_points=3)
    # the tail-fit method is passed on
    r = P.planted_check("power", 1.9, seed=4, method="mcculloch", **kw)
    assert r.table.method == ("mcculloch", "mcculloch")
    # below 500 samples "auto" takes the McCulloch bootstrap median: the bootstrap continues the
    # run's own generator (seed 4: first the samples, then the resamples), so a run is reproducible
    # and equals lwsim's pipeline fed from that generator by hand
    r = P.planted_check("power", 1.9, seed=4, **kw)
    assert r.table.method == ("mcculloch_boot", "mcculloch_boot")
    assert 1.9 <= r.table.alpha[0] < 2.0
    np.testing.assert_array_equal(P.planted_check("power", 1.9, seed=4, **kw).table.alpha, r.table.alpha)
    rng = np.random.default_rng(4)
    X = P.planted_samples("power", None, 1.9, 1.0, r.c, r.lags, 499, seed=rng)
    t = stats.detection_table(X, r.lags, r.n_grid, eps=200.0, seed=rng)
    np.testing.assert_array_equal(r.table.alpha, t.alpha)
    np.testing.assert_array_equal(r.table.sigma, t.sigma)


@pytest.mark.parametrize("law", ["exponential", "power", "logarithmic"])
def test_planted_checker_nulls_agree(law):
    """The planted noise does not depend on ℓ: both nulls pass the checker, with windows one
    lag step apart at most."""
    lag = planted_check(law, 1.6, n_lags=30, n_samples=8000, seed=3)
    full = planted_check(law, 1.6, n_lags=30, n_samples=8000, seed=3, noise="full")
    assert lag.passes and full.passes
    assert np.max(np.abs(lag.h_measured - full.h_measured)) <= lag.resolution
    assert full.table.noise == "full" and np.ptp(full.table.sigma) == 0.0


@pytest.mark.parametrize("law,p", [("exponential", 0.08), ("power", 1.0), ("logarithmic", 1.0)])
def test_mutation_detection_rule_fails(law, p, monkeypatch):
    """Pipeline mutation: the SNR rule concentrating as N^{1/α̂} instead of N^{1/κ̂}."""
    from lwsim.stats import detection
    monkeypatch.setattr(detection, "inv_kappa", lambda a: 1.0 / np.asarray(a, dtype=float))
    r = P.planted_check(law, 1.4, params=p, n_samples=N_SAMPLES, n_lags=N_LAGS, seed=3)
    assert not r.passes, r.verdict()


def test_mutation_gaussian_tail_fit_fails(monkeypatch):
    """Estimator mutation: a tail fit that always reports α̂ = 2 (Gaussian), σ̂ from the IQR."""
    from lwsim.stats import detection, tailfit

    def gaussian(x, **kw):
        q = np.percentile(x, [25, 75])
        return tailfit.TailFit(2.0, float((q[1] - q[0]) / 1.349 / np.sqrt(2)), True, "ecf", None, x.size)
    monkeypatch.setattr(detection, "fit_alpha", gaussian)
    for law, p in (("power", 1.0), ("exponential", 0.08)):
        r = P.planted_check(law, 1.4, params=p, n_samples=N_SAMPLES, n_lags=N_LAGS, seed=4)
        assert not r.passes, r.verdict()
