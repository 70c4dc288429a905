"""Tests that kill the surviving mutants of mutmut on lwsim/analyze/core.py's helpers (issue 32,
docs/testing.md): the default grids, resolve_rates and the n_grid check, on hand values."""
from __future__ import annotations

import numpy as np
import pytest

import lwsim
from lwsim.analyze import core


def test_default_lags_bounds():
    assert core.default_lags(1) == [1] and core.default_lags(2) == [1] and core.default_lags(3) == [1]
    assert core.default_lags(65) == list(range(1, 33))              # ⌊65/2⌋ = 32: every lag
    # ⌊66/2⌋ = 33 > 32: round(33^(k/31)), k = 0 … 31, duplicates merged
    assert core.default_lags(66) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 17, 19, 21, 24, 26, 29, 33]


def test_default_n_grid_by_hand():
    assert core.default_n_grid(25) == [25] and core.default_n_grid(10) == [10]
    assert core.default_n_grid(26) == [25, 26]
    # 25 · 40^(k/9): 25, 37.7, 56.8, 85.5, 128.9, 194.3, 292.5, 440.9, 664.4, 1000
    assert core.default_n_grid(1000) == [25, 38, 57, 85, 129, 194, 292, 441, 664, 1000]


def test_resolve_rates_descriptions_and_forms():
    p = {"a": np.ones(2)}
    assert core.resolve_rates(None, p) == (
        1.0, "none given: unit SGD rate η = 1 (Λ = 1, f(ℓ) is the gates' transport alone)")
    assert core.resolve_rates(0.5, p) == (0.5, "SGD, η = 0.5")
    assert core.resolve_rates(2, p) == (2.0, "SGD, η = 2")
    opt, desc = core.resolve_rates("sgd", p)
    assert desc == repr(opt) and desc.startswith("SGD('sgd', lr=0.001,")
    opt, desc = core.resolve_rates(["momentum", {"lr": 0.2}], p)
    assert desc.startswith("Momentum('momentum', lr=0.2,") and opt.rates()["a"].tolist() == [0.2, 0.2]
    mine = lwsim.optim.make("sgd", {"a": np.ones(2)}, lr=0.3)
    got, desc = core.resolve_rates(mine, p)
    assert got is mine and desc == repr(mine)
    full = ("rates must be None, a number (SGD η), an optimizer, an optimizer state_dict, a name or "
            "(name, hyper-parameters), got ")
    for bad, name in ((True, "bool"), (("sgd", 1), "tuple"), (("sgd", {}, 1), "tuple"), ({"lr": 1}, "dict")):
        with pytest.raises(TypeError) as e:
            core.resolve_rates(bad, p)
        assert str(e.value) == full + name
    for name in ("ADAM", "adamw", "RMSprop"):
        with pytest.raises(ValueError) as e:
            core.resolve_rates(name, p)
        assert str(e.value) == (f"rates: optimizer {name!r} is adaptive, its rates λ need its second-moment "
                                "state; pass the optimizer, its state_dict, or the state file (--optimizer-state)")


def test_resolve_rates_does_not_touch_the_callers_params():
    p = {"a": np.ones(2)}
    opt, _ = core.resolve_rates(("sgd", {"lr": 0.5}), p)
    opt.step({"a": np.ones(2)})
    assert p["a"].tolist() == [1.0, 1.0]


def test_check_n_grid():
    assert core._check_n_grid(None) is None
    assert core._check_n_grid(5) == [5] and core._check_n_grid(np.int64(7)) == [7]
    assert core._check_n_grid([3, 4]) == [3, 4]
    with pytest.raises(TypeError, match=r"^n_grid must be a real numeric array, got dtype bool$"):
        core._check_n_grid(True)
    with pytest.raises(ValueError, match=r"^n_grid must be > 0 everywhere"):
        core._check_n_grid([0])
    with pytest.raises(ValueError, match=r"^n_grid needs at least 1 values"):
        core._check_n_grid([])
    with pytest.raises(ValueError, match=r"^n_grid must be 1-dimensional"):
        core._check_n_grid([[1]])
