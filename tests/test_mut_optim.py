"""Tests that kill the surviving mutants of mutmut on lwsim/optim.py (issue 32, docs/testing.md).

Each test pins a hand-computed number (the arithmetic is in the comments), a user-facing error message
in full, or a documented property (dtypes, copies, which arrays take the fused kernel and which the
NumPy path, where both must give the textbook update)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from lwsim import optim


def _exact(msg):
    """A pattern matching exactly ``msg``."""
    return "^" + re.escape(msg) + "$"


def _p(*values):
    return {"a": np.array(values, dtype=float)}


# ---- validation messages (the optimizer's user-facing errors, in full) ---------------------
@pytest.mark.parametrize("name,hyper,exc,msg", [
    ("sgd", {"lr": "0.1"}, TypeError, "lr must be a real number, got '0.1'"),     # float("0.1") would work
    ("sgd", {"lr": True}, TypeError, "lr must be a real number, got True"),       # a bool is not a rate
    ("sgd", {"lr": math.inf}, ValueError, "lr must be finite, got inf"),
    ("sgd", {"lr": 0.0}, ValueError, "lr must be > 0, got 0.0"),
    ("sgd", {"momentum": 1.0}, ValueError, "momentum must be in [0, 1), got 1.0"),
    ("sgd", {"momentum": math.nan}, ValueError, "momentum must be finite, got nan"),
    ("sgd", {"dampening": 1.5}, ValueError, "dampening must be in [0, 1), got 1.5"),
    ("sgd", {"weight_decay": -1}, ValueError, "weight_decay must be >= 0, got -1.0"),
    ("sgd", {"weight_decay": math.nan}, ValueError, "weight_decay must be finite, got nan"),
    ("sgd", {"nesterov": True, "momentum": 0.5, "dampening": 0.1}, ValueError,
     "nesterov momentum requires momentum > 0 and dampening = 0"),
    ("momentum", {"momentum": 0.0}, ValueError,
     "optimizer 'momentum' needs momentum > 0 (use 'sgd' for plain SGD)"),
    ("adam", {"betas": 0.9}, ValueError, "betas must be a pair (beta1, beta2), got 0.9"),
    ("adam", {"betas": (0.9, 0.99, 0.999)}, ValueError,
     "betas must be a pair (beta1, beta2), got (0.9, 0.99, 0.999)"),
    ("adam", {"betas": (1.0, 0.999)}, ValueError, "betas[0] must be in [0, 1), got 1.0"),
    ("adam", {"betas": (0.9, -0.1)}, ValueError, "betas[1] must be in [0, 1), got -0.1"),
    ("adam", {"eps": -1}, ValueError, "eps must be >= 0, got -1.0"),
    ("adam", {"eps": "x"}, TypeError, "eps must be a real number, got 'x'"),
    ("adamw", {"weight_decay": -0.5}, ValueError, "weight_decay must be >= 0, got -0.5"),
    ("rmsprop", {"alpha": 1.0}, ValueError, "alpha must be in [0, 1), got 1.0"),
    ("rmsprop", {"eps": -2}, ValueError, "eps must be >= 0, got -2.0"),
    ("rmsprop", {"weight_decay": -3}, ValueError, "weight_decay must be >= 0, got -3.0"),
    ("rmsprop", {"momentum": 1.0}, ValueError, "momentum must be in [0, 1), got 1.0"),
])
def test_hyper_parameter_messages(name, hyper, exc, msg):
    with pytest.raises(exc, match=_exact(msg)):
        optim.make(name, _p(0.0), **hyper)


def test_params_messages():
    with pytest.raises(TypeError, match=_exact("params must be a non-empty dict {name: numpy array}")):
        optim.make("sgd", {})
    with pytest.raises(TypeError, match=_exact("params must be a non-empty dict {name: numpy array}")):
        optim.make("sgd", [np.zeros(2)])                       # not a dict, though not empty
    with pytest.raises(TypeError, match=_exact("param 'a' must be a numpy array, got list")):
        optim.make("sgd", {"a": [0.0, 1.0]})
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=_exact("param 'a' is read-only; the optimizer updates params in place")):
        optim.make("sgd", {"a": ro})


def test_key_mismatch_error_prints_without_quotes_and_empty_without_arguments():
    assert str(optim.KeyMismatchError("x y")) == "x y"
    assert str(optim.KeyMismatchError()) == ""


def test_repr_lists_every_hyper_parameter_and_the_step():
    opt = optim.make("sgd", _p(0.0), lr=0.5)
    assert repr(opt) == "SGD('sgd', lr=0.5, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, step=0)"
    opt.step(_p(1.0))
    assert repr(opt).endswith(", step=1)")
    assert repr(optim.make("adam", _p(0.0))) == \
        "Adam('adam', lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, amsgrad=False, step=0)"


# ---- gradients ----------------------------------------------------------------------------
def test_grads_messages_name_the_step_that_failed():
    p = {"a": np.zeros(2), "b": np.zeros(1)}
    opt = optim.make("sgd", p, lr=0.1)
    with pytest.raises(TypeError, match=_exact("grads must be a dict like params, got list")):
        opt.step([np.zeros(2), np.zeros(1)])
    with pytest.raises(KeyError, match=_exact("grads keys do not match the parameters: missing ['b'], unexpected []")):
        opt.step({"a": np.zeros(2)})
    bad = {"a": np.zeros(2), "b": np.array([np.inf])}
    msg = "grad 'b' holds non-finite values (NaN/inf) at optimizer step {}; lower the lr, clip gradients, or check the data"
    with pytest.raises(optim.NonFiniteGradientError, match=_exact(msg.format(1))):   # before any step: the 1st
        opt.step(bad)
    opt.step({"a": np.zeros(2), "b": np.zeros(1)})
    opt.step({"a": np.zeros(2), "b": np.zeros(1)})
    with pytest.raises(optim.NonFiniteGradientError, match=_exact(msg.format(3))):   # after two: the 3rd
        opt.step(bad)


def test_prepared_grads_have_the_params_dtype_and_are_not_copied_when_they_already_do():
    opt = optim.make("sgd", {"a": np.zeros(3, np.float32), "b": np.zeros(2)})
    g64 = np.ones(3)
    same = np.ones(2)
    out = opt._prepare_grads({"a": g64, "b": same})
    assert out["a"].dtype == np.float32 and g64.dtype == np.float64     # cast, the caller's array untouched
    assert out["b"] is same                                              # already float64: no copy


# ---- weight decay of exactly 1 (every rule must still apply it) ------------------------------
def test_sgd_weight_decay_one():
    # g' = 0.5 + 1·2 = 2.5; p = 2 − 0.25·2.5 = 1.375
    p = _p(2.0)
    optim.make("sgd", p, lr=0.25, weight_decay=1.0).step(_p(0.5))
    assert p["a"][0] == 1.375


def test_rmsprop_weight_decay_one():
    # g = 0, g' = 0 + 1·2 = 2; v = (1 − 0.75)·4 = 1; p = 2 − 0.1·2/(1 + 1e−8)
    p = _p(2.0)
    optim.make("rmsprop", p, lr=0.1, alpha=0.75, weight_decay=1.0).step(_p(0.0))
    assert p["a"][0] == pytest.approx(2.0 - 0.2 / (1 + 1e-8), rel=1e-15)


@pytest.mark.parametrize("layout", ["contiguous (fused kernel)", "sliced (NumPy path)"])
def test_adam_and_adamw_weight_decay_one(layout):
    """g = 0, wd = 1, lr = 0.1, p = 2.
    AdamW: p ← 2·(1 − 0.1·1) = 1.8, then m = 0 so no Adam step.
    Adam (L2): g' = 2, m = 0.1·2 = 0.2, v = 0.001·4 = 0.004; step 0.1/(1 − 0.9) = 1,
    denom = √0.004/√0.001 + 1e−8 = 2 + 1e−8; p = 2 − 1·0.2/(2 + 1e−8) ≈ 1.9."""
    def params():
        base = np.full((2, 4), 2.0)
        return {"a": base if layout.startswith("contiguous") else base[:, :2]}
    for name, expect in (("adamw", 1.8), ("adam", 2.0 - 0.2 / (2 + 1e-8))):
        p = params()
        assert optim._fusable(p["a"], p["a"]) == layout.startswith("contiguous")
        optim.make(name, p, lr=0.1, weight_decay=1.0).step({"a": np.zeros(p["a"].shape)})
        np.testing.assert_allclose(p["a"], expect, rtol=1e-15, atol=0, err_msg=name)


# ---- which arrays take the fused kernel -------------------------------------------------------
def test_fusable_checks_every_buffer_dtype_and_layout():
    p = np.zeros((2, 3))
    assert optim._fusable(p, p, np.zeros((2, 3)))
    assert not optim._fusable(p, p, np.zeros((2, 3), np.float32))         # contiguous, other dtype
    assert not optim._fusable(p, p, np.asfortranarray(np.zeros((2, 3))))  # same dtype, not C-contiguous
    assert not optim._fusable(p.astype(np.float16), p.astype(np.float16))


def test_a_param_that_cannot_be_flattened_in_place_is_updated_and_the_next_one_too():
    """base[:, :2] is not contiguous: reshape(-1) would copy it, so it takes the NumPy path; the
    parameter after it (fused) is still updated. First Adam step: p ← p − lr·g/(|g| + eps)."""
    base = np.zeros((3, 4))
    p = {"s": base[:, :2], "c": np.zeros(2)}
    opt = optim.make("adam", p, lr=0.1)
    g = {"s": np.array([[1.0, -2.0], [3.0, -4.0], [0.5, -0.5]]), "c": np.array([2.0, -1.0])}
    opt.step(g)
    for k in p:
        np.testing.assert_allclose(p[k], -0.1 * g[k] / (np.abs(g[k]) + 1e-8), rtol=1e-15, err_msg=k)
    np.testing.assert_array_equal(base[:, 2:], 0.0)
    assert np.shares_memory(p["s"], base)                                  # updated in place


@pytest.mark.parametrize("buffer", ["m", "v"])
def test_a_fortran_ordered_buffer_from_a_state_dict_is_still_updated(buffer):
    """A buffer loaded Fortran-ordered (load_state_dict keeps the layout): the kernel cannot update it
    through a flat view, so the NumPy path runs. (Both buffers in turn: the state's key order is a set's.)
    Constant g, two steps: m = 0.1g then 0.1g + 0.1(g − 0.1g) = 0.19g; v = 0.001g² then 0.001999g²;
    bias-corrected m̂ = g, v̂ = g², so each step moves p by lr·g/(|g| + eps)."""
    p = {"W": np.zeros((2, 3))}
    opt = optim.make("adam", p, lr=0.1)
    sd = opt.state_dict()
    sd["state"]["W"][buffer] = np.asfortranarray(np.zeros((2, 3)))
    opt.load_state_dict(sd)
    assert not opt.state["W"][buffer].flags.c_contiguous
    g = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
    opt.step({"W": g})
    opt.step({"W": g})
    np.testing.assert_allclose(opt.state["W"]["m"], 0.19 * g, rtol=1e-14)
    np.testing.assert_allclose(opt.state["W"]["v"], 0.001999 * g * g, rtol=1e-12)
    np.testing.assert_allclose(p["W"], -2 * 0.1 * g / (np.abs(g) + 1e-8), rtol=1e-12)


# ---- buffers and rates --------------------------------------------------------------------------
def test_buffers_exist_only_for_the_options_that_need_them():
    assert optim.make("sgd", _p(0.0)).state == {"a": {}}
    assert set(optim.make("sgd", _p(0.0), momentum=0.5).state["a"]) == {"buf"}
    assert set(optim.make("adam", _p(0.0)).state["a"]) == {"m", "v"}
    assert set(optim.make("adam", _p(0.0), amsgrad=True).state["a"]) == {"m", "v", "v_max"}
    assert set(optim.make("rmsprop", _p(0.0)).state["a"]) == {"v"}
    assert set(optim.make("rmsprop", _p(0.0), momentum=0.5, centered=True).state["a"]) == {"v", "buf", "g_avg"}


def test_sgd_rates_have_the_params_shape():
    opt = optim.make("sgd", {"a": np.zeros((2, 3))}, lr=0.07)
    lam = opt.rates()["a"]
    assert lam.shape == (2, 3) and (lam == 0.07).all()


def test_adam_rates_after_one_step_and_with_amsgrad():
    # one step, g = 2: v = 0.001·4, v̂ = v/(1 − 0.999) = 4, λ = 0.1/(2 + 1e−8)
    opt = optim.make("adam", _p(0.0), lr=0.1)
    opt.step(_p(2.0))
    assert opt.rates()["a"][0] == pytest.approx(0.1 / (2 + 1e-8), rel=1e-12)
    # amsgrad, g = 2 then 0: v = 0.999·0.004 = 0.003996 < v_max = 0.004; λ uses v_max:
    # v̂ = 0.004/(1 − 0.999²) = 0.004/0.001999
    opt = optim.make("adam", _p(0.0), lr=0.1, amsgrad=True)
    opt.step(_p(2.0))
    opt.step(_p(0.0))
    assert opt.rates()["a"][0] == pytest.approx(0.1 / (math.sqrt(0.004 / 0.001999) + 1e-8), rel=1e-12)


# ---- state_dict ------------------------------------------------------------------------------
def test_load_state_dict_messages():
    opt = optim.make("adam", _p(0.0))
    sd = opt.state_dict()
    del sd["step"]
    with pytest.raises(KeyError, match=_exact("optimizer state_dict lacks 'step' (it needs name, hyper, step, state)")):
        opt.load_state_dict(sd)
    sd = opt.state_dict()
    sd["state"]["zz"] = sd["state"].pop("a")
    with pytest.raises(KeyError, match=_exact(
            "optimizer state keys do not match the parameters: missing ['a'], unexpected ['zz']")):
        opt.load_state_dict(sd)
    sd = opt.state_dict()
    del sd["state"]["a"]["v"]
    with pytest.raises(KeyError, match=_exact("optimizer state for 'a' has buffers ['m'], expected ['m', 'v']")):
        opt.load_state_dict(sd)


@pytest.mark.parametrize("step", [-1, 1.5, True, "2"])
def test_load_state_dict_refuses_a_step_that_is_not_an_int_at_least_zero(step):
    opt = optim.make("sgd", _p(0.0))
    sd = dict(opt.state_dict(), step=step)
    with pytest.raises(ValueError, match=_exact(f"state_dict step must be an int >= 0, got {step!r}")):
        opt.load_state_dict(sd)


def test_load_state_dict_accepts_step_zero_and_copies_buffers_in_the_params_dtype():
    p = {"a": np.zeros(2, np.float32)}
    opt = optim.make("adam", p, lr=0.5)
    fresh = optim.make("adam", {"a": np.zeros(2, np.float32)}).state_dict()
    opt.load_state_dict(fresh)                                          # step 0 is a valid state
    assert opt.step_count == 0 and opt.hyper["lr"] == 1e-3
    sd = {"name": "adam", "hyper": {}, "step": 4,
          "state": {"a": {"m": np.array([0.5, 1.0]), "v": np.array([1.0, 4.0], np.float32)}}}
    opt.load_state_dict(sd)
    for s in ("m", "v"):
        assert opt.state["a"][s].dtype == np.float32, s                  # float64 input cast to the param's dtype
        assert not np.shares_memory(opt.state["a"][s], sd["state"]["a"][s]), s   # copied, even when no cast
    opt.step({"a": np.ones(2, np.float32)})
    np.testing.assert_array_equal(sd["state"]["a"]["v"], [1.0, 4.0])       # the caller's arrays untouched


def test_from_state_dict_messages_and_unknown_hyper_parameters():
    with pytest.raises(TypeError, match=_exact("sd must be an optimizer state_dict (a dict), got list")):
        optim.from_state_dict(_p(0.0), [])
    with pytest.raises(KeyError, match=_exact("optimizer state_dict lacks 'hyper' (it needs name, hyper, step, state)")):
        optim.from_state_dict(_p(0.0), {"name": "sgd"})
    sd = optim.make("sgd", _p(0.0)).state_dict()
    sd["hyper"]["betas"] = (0.9, 0.99)                                  # not an SGD hyper-parameter
    with pytest.raises(TypeError, match="unknown hyper-parameter"):
        optim.from_state_dict(_p(0.0), sd)
    # the constructor's message (the optimizer is built from the state_dict's hyper-parameters)
    with pytest.raises(TypeError, match=_exact("optimizer 'sgd' got unknown hyper-parameter(s) ['betas']; accepted: "
                                               "['dampening', 'lr', 'momentum', 'nesterov', 'weight_decay']")):
        optim.from_state_dict(_p(0.0), sd)


# ---- clip_grad_norm ----------------------------------------------------------------------------
def test_clip_messages():
    with pytest.raises(TypeError, match=_exact("grads must be a dict of arrays, got list")):
        optim.clip_grad_norm([np.ones(2)], 1.0)
    with pytest.raises(TypeError, match=_exact("max_norm must be a real number, got 'x'")):
        optim.clip_grad_norm({"a": np.ones(2)}, "x")
    with pytest.raises(ValueError, match=_exact("norm_type must be 2 or inf, got 1.0")):
        optim.clip_grad_norm({"a": np.ones(2)}, 1.0, norm_type=1)


def test_clip_non_finite_norm_raises_only_when_asked():
    g = {"a": np.array([1.0, np.nan])}
    assert math.isnan(optim.clip_grad_norm(g, 1.0))                      # default: no error (torch's default)
    assert math.isnan(g["a"][1]) and g["a"][0] == 1.0                      # nan < 1 is False: not scaled
    with pytest.raises(optim.NonFiniteGradientError, match=_exact("the total gradient norm is inf")):
        optim.clip_grad_norm({"a": np.array([np.inf])}, 1.0, error_if_nonfinite=True)
    assert optim.clip_grad_norm({"a": np.array([3.0, 4.0])}, 10.0, error_if_nonfinite=True) == 5.0


def test_clip_empty_dict_and_empty_arrays():
    assert optim.clip_grad_norm({}, 1.0) == 0.0
    # inf norm: an empty array counts 0 (np.max of it would raise)
    assert optim.clip_grad_norm({"e": np.zeros(0), "b": np.array([0.5, -0.25])}, 1.0, norm_type=math.inf) == 0.5
    assert optim.clip_grad_norm({"e": np.zeros(0)}, 1.0, norm_type=math.inf) == 0.0


def test_clip_norm_squares_in_float64_and_keeps_the_gradient_dtype():
    # float32 1e20: its square overflows float32; in float64 ‖g‖ = √2·1.0000000200408773e20
    g = {"a": np.array([1e20, -1e20], np.float32)}
    total = optim.clip_grad_norm(g, 1.0)
    assert total == pytest.approx(math.sqrt(2) * 1.0000000200408773e20, rel=1e-15)
    assert g["a"].dtype == np.float32
    np.testing.assert_allclose(g["a"], [1 / math.sqrt(2), -1 / math.sqrt(2)], rtol=1e-6)


def test_clip_leaves_the_dict_alone_at_a_coefficient_of_exactly_one():
    # ‖g‖ = 1, max_norm = 1 + 1e−6: c = (1 + 1e−6)/(1 + 1e−6) = 1, not < 1: nothing replaced
    orig = np.array([1.0])
    g = {"a": orig}
    assert optim.clip_grad_norm(g, 1.0 + 1e-6) == 1.0
    assert g["a"] is orig
