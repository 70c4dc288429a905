"""Tests of lwsim/diagnostics/author_b.py (laid out like the code: docs/testing.md).

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way."""


import numpy as np
import pytest

import lwsim
from lwsim.diagnostics import author_b as ab
from helpers import _rev
from helpers import _author_J, _setup, _sig


# ----------------------------------------------------------------------------------------------
# author_jacobians
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------- item 1: gate term
@pytest.mark.parametrize("name", ["diaggate", "sharedgate"])
def test_author_jacobians_use_the_state_after_the_step(name):
    cell, p, x = _setup(name)
    Ja = ab.author_jacobians(cell, p, x)
    np.testing.assert_allclose(Ja, _author_J(cell, p, x), atol=1e-13)
    assert np.abs(Ja - np.asarray(cell.jacobians(p, x))).max() > 1e-3     # not the exact J


def test_author_jacobians_of_plain_and_leaky_are_exact():
    for name in ("rnn", "constgate"):
        cell, p, x = _setup(name)
        np.testing.assert_array_equal(ab.author_jacobians(cell, p, x), np.asarray(cell.jacobians(p, x)))


# ----------------------------------------------------------------------------------------------
# sampled_products
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------- item 2: order
def test_reversed_products():
    rng = np.random.default_rng(3)
    J = rng.standard_normal((6, 2, 3, 3))
    b, t = np.array([0, 1, 1]), np.array([5, 6, 4])
    W = ab.sampled_products(J, b, t, 3, "reversed")
    for i in range(3):
        np.testing.assert_allclose(W[i], _rev(J, b[i], t[i], t[i] - 3), atol=1e-13)
    E = ab.sampled_products(J, b, t, 3, "exact")
    np.testing.assert_allclose(E[0], J[4, 0] @ J[3, 0] @ J[2, 0], atol=1e-13)
    for tt, Wt in ab.iterate_products(J, 4, "reversed"):
        for ell in range(1, Wt.shape[0] + 1):
            np.testing.assert_allclose(Wt[ell - 1, 1], _rev(J, 1, tt, tt - ell), atol=1e-13)


# ----------------------------------------------------------------------------------------------
# lower_median
# ----------------------------------------------------------------------------------------------


def test_lower_median():
    assert ab.lower_median([4.0, 1.0, 3.0, 2.0]) == 2.0       # np.median: 2.5
    assert ab.lower_median([5.0, np.nan, 1.0, 3.0]) == 3.0
    assert ab.lower_median([3.0, 1.0, 2.0]) == 2.0


# ----------------------------------------------------------------------------------------------
# power_norm
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------- items 3–5
def test_power_norm_estimates_the_eigenvalue_not_the_norm():
    M = np.array([[0.5, 10.0], [0.0, 0.4]])                  # σ_max ≈ 10.0, |λ_max| = 0.5
    est = ab.power_norm(M[None], iters=400, rng=0)[0]
    assert est == pytest.approx(0.5, rel=1e-6)
    v = np.random.default_rng(1).standard_normal(2)            # 5 iterations by hand
    v /= np.linalg.norm(v) + 1e-12
    for _ in range(5):
        v = M @ v
        v /= np.linalg.norm(v) + 1e-12
    assert ab.power_norm(M[None], iters=5, rng=1)[0] == pytest.approx(np.linalg.norm(M @ v), rel=1e-14)


# ----------------------------------------------------------------------------------------------
# floored_metrics
# ----------------------------------------------------------------------------------------------


def test_floored_metrics():
    sv = np.array([2.0, 1.0, 1e-13])
    ai, ce = ab.floored_metrics(sv, r=3, n_energy=3)
    assert ai == pytest.approx(2.0 / (1e-13 + 1e-12), rel=1e-14)
    assert ce == pytest.approx(5.00000000000000001 / (5.0 + 1e-12), rel=1e-14)
