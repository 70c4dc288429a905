"""Tests that kill the surviving mutants of mutmut on lwsim/stats (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself.
"""
from __future__ import annotations

import numpy as np
import pytest

from lwsim.stats import inv_kappa, kappa, mean_scale, sample_sas
from lwsim.stats._checks import as_rng, as_size, real_array


# ---- _checks -------------------------------------------------------------------------------

def test_as_rng_accepts_seed_zero_and_names_the_bad_type():
    assert as_rng(0).integers(0, 10**9) == np.random.default_rng(0).integers(0, 10**9)
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        as_rng(-1)
    with pytest.raises(TypeError, match="got str"):
        as_rng("3")


def test_as_size_allows_zero_length_axes_and_names_size():
    assert as_size((0, 3)) == (0, 3)
    assert as_size(0) == (0,)
    with pytest.raises(ValueError, match=r"^size\b"):
        as_size(-1)


def test_real_array_inf_rules_and_nonneg_boundary():
    out = real_array("x", [1.0, np.inf], allow_inf=True)   # +inf allowed
    assert out[1] == np.inf
    with pytest.raises(ValueError, match="x contains -inf"):
        real_array("x", [1.0, -np.inf], allow_inf=True)
    np.testing.assert_array_equal(real_array("x", [0.0, 0.5], nonneg=True), [0.0, 0.5])  # 0 is >= 0
    with pytest.raises(ValueError, match="x must be >= 0"):
        real_array("x", [0.0, -0.5], nonneg=True)


# ---- stable ---------------------------------------------------------------------------------

def test_sample_sas_defaults_are_unit_scale_and_one_draw():
    # alpha = 1 is Cauchy: X = loc + sigma tan V with V = U(-pi/2, pi/2) the generator's first draw
    v = np.random.default_rng(11).uniform(-np.pi / 2, np.pi / 2, size=(1,))
    x = sample_sas(1.0, seed=11)
    assert x.shape == (1,)
    np.testing.assert_allclose(x, np.tan(v), rtol=1e-12)


def test_sample_sas_alpha_two_is_two_sin_v_sqrt_w_scaled_and_shifted():
    # CMS at alpha = 2: sin(2V)/cos(V)^(1/2) * (cos(-V)/W)^(-1/2) = 2 sin V sqrt(W)  (N(0, 2) for sigma = 1)
    g = np.random.default_rng(7)
    v = g.uniform(-np.pi / 2, np.pi / 2, size=(5,))
    w = g.standard_exponential(size=(5,))
    x = sample_sas(2.0, sigma=3.0, size=5, seed=7, loc=-1.5)
    np.testing.assert_allclose(x, -1.5 + 3.0 * 2.0 * np.sin(v) * np.sqrt(w), rtol=1e-10)


def test_sample_sas_alpha_three_halves_by_hand_formula():
    a = 1.5
    g = np.random.default_rng(3)
    v = g.uniform(-np.pi / 2, np.pi / 2, size=(4,))
    w = g.standard_exponential(size=(4,))
    by_hand = np.sin(a * v) / np.cos(v) ** (1 / a) * (np.cos((1 - a) * v) / w) ** ((1 - a) / a)
    np.testing.assert_allclose(sample_sas(a, sigma=0.5, size=4, seed=3, loc=2.0), 2.0 + 0.5 * by_hand,
                               rtol=1e-10)


@pytest.mark.parametrize("call, name", [
    (lambda: sample_sas(2.5), "alpha"), (lambda: sample_sas(1.5, sigma=0.0), "sigma"),
    (lambda: sample_sas(1.5, loc=np.nan), "loc"),
    (lambda: kappa(1.0), "alpha"), (lambda: kappa(np.nan), "alpha"), (lambda: kappa(2.5), "alpha"),
    (lambda: inv_kappa(0.5), "alpha"), (lambda: inv_kappa(np.nan), "alpha"), (lambda: inv_kappa(2.01), "alpha"),
    (lambda: mean_scale(0.0, 1.0, 4.0), "alpha"), (lambda: mean_scale(2.5, 1.0, 4.0), "alpha"),
    (lambda: mean_scale(1.5, 0.0, 4.0), "sigma"), (lambda: mean_scale(1.5, 1.0, 0.0), "n"),
    (lambda: mean_scale(1.5, 1.0, np.nan), "n"),
])
def test_stable_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


def test_kappa_inv_kappa_scalar_float_array_array_and_boundaries():
    assert type(kappa(1.5)) is float and kappa(1.5) == pytest.approx(3.0)
    assert type(inv_kappa(1.5)) is float and inv_kappa(1.5) == pytest.approx(1 / 3)
    np.testing.assert_allclose(inv_kappa(np.array([1.0, 1.25, 2.0])), [0.0, 0.2, 0.5])
    assert isinstance(inv_kappa(np.array([1.25])), np.ndarray)
    assert isinstance(kappa(np.array([1.25])), np.ndarray)


def test_mean_scale_hand_numbers():
    # sigma n^(1/alpha - 1): alpha = 2, n = 4 -> 1/2; alpha = 1 -> sigma (no concentration)
    assert mean_scale(2.0, 1.0, 4.0) == 0.5 and type(mean_scale(2.0, 1.0, 4)) is float
    assert mean_scale(1.0, 3.0, 100.0) == pytest.approx(3.0)
    np.testing.assert_allclose(mean_scale(1.5, 2.0, np.array([1.0, 8.0, 64.0])), [2.0, 1.0, 0.5])
    assert mean_scale(0.5, 1.0, 2.0) == pytest.approx(2.0)   # alpha in (0, 1]: n^(+1)
