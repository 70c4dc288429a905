"""Checks across the project (cross-cutting; docs/testing.md).

The scripts in examples/ run at their tiny size and say what they claim (docs/examples.md)."""


from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest


EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_example_is_tested():
    scripts = {p.stem for p in EXAMPLES.glob("*.py")}
    assert scripts == {"torch_to_lwsim", "planted_theory_check", "diaggate_lr_profile",
                       "own_cell_gradients"}


def test_torch_weights_to_lwsim(capsys):
    ex = _load("torch_to_lwsim")
    r = ex.main("tiny")                      # saved weights: no torch needed
    assert r["torch_error"] < 1e-5           # lwsim's GRU reproduces torch's output
    assert np.all(np.isfinite(r["f"])) and np.all(np.diff(r["f"]) < 0)
    assert np.all((r["alpha"] >= 1.0) & (r["alpha"] <= 2.0))
    assert np.all(np.diff(r["h_n"]) >= 0)    # Ĥ_N never shrinks with N
    assert "max |lwsim − torch|" in capsys.readouterr().out
    with pytest.raises(ValueError, match="size"):
        ex.main("huge")


def test_torch_weights_mismatch_is_caught():
    ex = _load("torch_to_lwsim")
    sd, _ = ex.load_weights()
    sd = dict(sd)
    sd["weight_hh_l0"] = sd["weight_hh_l0"].copy()
    sd["weight_hh_l0"][:ex.H] *= 1.1         # perturb W_hr: the probe check must fail
    import lwsim
    cell = lwsim.make_cell("gru", n_in=ex.D, n_hidden=ex.H, convention="torch", dtype="float64")
    params = cell.params_from_torch({k: v for k, v in sd.items() if not k.startswith("probe.")})
    with pytest.raises(AssertionError, match="differs from torch"):
        ex.check_against_torch(cell, params, sd)


def test_planted_theory_check_three_regimes():
    out = _load("planted_theory_check").main("tiny")
    assert set(out) == {"exponential", "power", "logarithmic"}
    for r in out.values():
        assert r.passes


def test_diaggate_lr_profile():
    profiles = _load("diaggate_lr_profile").main("tiny")
    assert sorted(profiles) == [0, 10, 20]
    for prof in profiles.values():
        assert prof.mu[0] == pytest.approx(1.0)
        assert np.all(np.diff(prof.mu) < 0)  # gates make the rate decay with the lag


def test_own_cell_gradients_agree_and_a_wrong_gradient_is_caught():
    ex = _load("own_cell_gradients")
    rel = ex.main("tiny")
    assert max(rel.values()) < 1e-10
    import lwsim

    def wrong(p, x, y):                      # a 0.1 % error in dL/dW_h must be flagged
        loss, g = ex.my_loss_and_grad(p, x, y)
        g["W_h"] = g["W_h"] * 1.001
        return loss, g

    cell = lwsim.make_cell("rnn", n_in=2, n_hidden=5, n_out=1, dtype="float64")
    params = cell.init_params(seed=0, scheme="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 2, 2)), rng.standard_normal((6, 2, 1))
    assert ex.compare(cell, params, x, y, wrong)["W_h"] > 1e-4
