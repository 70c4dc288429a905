"""Checks across the project (cross-cutting; docs/testing.md).

Tests that kill the surviving mutants of mutmut on lwsim/stats (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself."""


from __future__ import annotations

import numpy as np
import pytest

# private: this file tests lwsim/stats/_checks.py itself (laid out like the code)
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
