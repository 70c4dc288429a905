"""Tests of lwsim/optim.py (laid out like the code: docs/testing.md).

Optimizers: each update rule against an independent re-implementation of the textbook /
PyTorch formulas, rates (docs/diagnostics.md §2.4), state save/restore, clipping, errors.

Tests that kill the surviving mutants of mutmut on lwsim/optim.py (issue 32, docs/testing.md).

Each test pins a hand-computed number (the arithmetic is in the comments), a user-facing error message
in full, or a documented property (dtypes, copies, which arrays take the fused kernel and which the
NumPy path, where both must give the textbook update).

The fused numba Adam/AdamW step (lwsim._optim_kernels) against the NumPy reference, bit for bit,
and the shared diagnostics of A15/A16 (training.init_windows, a_windows without the envelope)."""


from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lwsim import optim


SHAPES = {"W_h": (3, 3), "b": (3,), "w": (2,)}


def _problem(seed=0):
    """A small quadratic problem: loss = ½ Σ_k ‖A_k p_k − c_k‖², grad_k = A_kᵀ(A_k p_k − c_k),
    so the gradient sequence depends on the trajectory."""
    rng = np.random.default_rng(seed)
    params = {k: rng.standard_normal(s) for k, s in SHAPES.items()}
    mats = {k: rng.standard_normal((int(np.prod(s)), int(np.prod(s)))) for k, s in SHAPES.items()}
    targets = {k: rng.standard_normal(int(np.prod(s))) for k, s in SHAPES.items()}

    def grad(p):
        out = {}
        for k, v in p.items():
            A = mats[k]
            out[k] = (A.T @ (A @ v.ravel() - targets[k])).reshape(v.shape)
        return out

    return params, grad


# ---- independent references (scalar textbook forms; not torch's operation order) ----------
def ref_sgd(p, g, st, t, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    d = g + weight_decay * p
    if momentum:
        st["buf"] = d.copy() if t == 1 else momentum * st["buf"] + (1 - dampening) * d
        d = d + momentum * st["buf"] if nesterov else st["buf"]
    return p - lr * d


def ref_adam(p, g, st, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
             decoupled=False):
    b1, b2 = betas
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    st["m"] = b1 * st.get("m", 0.0) + (1 - b1) * g
    st["v"] = b2 * st.get("v", 0.0) + (1 - b2) * g ** 2
    v = st["v"]
    if amsgrad:
        st["vmax"] = np.maximum(st.get("vmax", 0.0), v)
        v = st["vmax"]
    mhat = st["m"] / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    return p - lr * mhat / (np.sqrt(vhat) + eps)


def ref_rmsprop(p, g, st, t, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False):
    g = g + weight_decay * p
    st["v"] = alpha * st.get("v", 0.0) + (1 - alpha) * g ** 2
    if centered:
        st["ga"] = alpha * st.get("ga", 0.0) + (1 - alpha) * g
        den = np.sqrt(st["v"] - st["ga"] ** 2) + eps
    else:
        den = np.sqrt(st["v"]) + eps
    if momentum:
        st["buf"] = momentum * st.get("buf", 0.0) + g / den
        return p - lr * st["buf"]
    return p - lr * g / den


CASES = [
    ("sgd", {}, ref_sgd, {}),
    ("sgd", {"lr": 0.01, "weight_decay": 0.1}, ref_sgd, {}),
    ("sgd", {"lr": 0.01, "momentum": 0.5}, ref_sgd, {}),
    ("momentum", {"lr": 0.01}, ref_sgd, {"momentum": 0.9}),
    ("momentum", {"lr": 0.01, "dampening": 0.3, "weight_decay": 0.05}, ref_sgd, {"momentum": 0.9}),
    ("momentum", {"lr": 0.01, "nesterov": True}, ref_sgd, {"momentum": 0.9}),
    ("adam", {}, ref_adam, {}),
    ("adam", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.1}, ref_adam, {}),
    ("adam", {"lr": 0.05, "amsgrad": True}, ref_adam, {}),
    ("adamw", {}, ref_adam, {"decoupled": True, "weight_decay": 1e-2}),
    ("adamw", {"lr": 0.05, "weight_decay": 0.3, "betas": (0.5, 0.7)}, ref_adam, {"decoupled": True}),
    ("rmsprop", {}, ref_rmsprop, {}),
    ("rmsprop", {"lr": 1e-3, "alpha": 0.9, "weight_decay": 0.1}, ref_rmsprop, {}),
    ("rmsprop", {"lr": 1e-3, "momentum": 0.7}, ref_rmsprop, {}),
    ("rmsprop", {"lr": 1e-3, "centered": True}, ref_rmsprop, {}),
    ("rmsprop", {"lr": 1e-3, "centered": True, "momentum": 0.5, "eps": 1e-4}, ref_rmsprop, {}),
]


def _p(*values):
    return {"a": np.array(values, dtype=float)}


SHAPES_optim_fused = {"W": (16, 48), "b": (7,), "T3": (3, 5, 2), "s": ()}


def _pair(name, dtype, seed=0, **hyper):
    rng = np.random.default_rng(seed)
    p1 = {k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES_optim_fused.items()}
    p2 = {k: v.copy() for k, v in p1.items()}
    fused = optim.make(name, p1, **hyper)
    ref = optim.make(name, p2, **hyper)
    # private: the per-array NumPy reference path has no public switch
    ref._apply = lambda grads: optim.Optimizer._apply(ref, grads)     # the per-array NumPy _update
    return fused, ref


def _grads(rng, dtype, step):
    g = {k: (rng.standard_normal(s) * 10.0 ** rng.uniform(-6, 2)).astype(dtype) for k, s in SHAPES_optim_fused.items()}
    if step % 2:
        g["W"] = np.asfortranarray(g["W"])          # a strided gradient: read through a copy
    return g


@pytest.mark.parametrize("dtype,name,amsgrad,wd", list(itertools.product(
    [np.float32, np.float64], ["adam", "adamw"], [False, True], [0.0, 1e-2])))
def test_fused_adam_equals_the_numpy_reference_bit_for_bit(dtype, name, amsgrad, wd):
    fused, ref = _pair(name, dtype, lr=3e-2, weight_decay=wd, amsgrad=amsgrad)
    rng = np.random.default_rng(1)
    for step in range(40):
        g = _grads(rng, dtype, step)
        fused.step(g)
        ref.step(g)
    for k in SHAPES_optim_fused:
        assert fused.params[k].dtype == dtype
        np.testing.assert_array_equal(fused.params[k], ref.params[k], err_msg=k)
        for s in fused.state[k]:
            np.testing.assert_array_equal(fused.state[k][s], ref.state[k][s], err_msg=f"{k}.{s}")
    # and the update did something: 40 steps of lr 3e-2 move every weight
    assert not np.array_equal(fused.params["W"], _pair(name, dtype, lr=3e-2)[0].params["W"])


# ----------------------------------------------------------------------------------------------
# NonFiniteGradientError
# ----------------------------------------------------------------------------------------------


# ---- gradients ----------------------------------------------------------------------------
def test_grads_messages_name_the_step_that_failed():
    p = {"a": np.zeros(2), "b": np.zeros(1)}
    opt = optim.make("sgd", p, lr=0.1)
    with pytest.raises(TypeError, match=r"\bgrads\b.*\blist\b"):
        opt.step([np.zeros(2), np.zeros(1)])
    with pytest.raises(KeyError, match=r"\bgrads\b.*missing \['b'\]"):
        opt.step({"a": np.zeros(2)})
    bad = {"a": np.zeros(2), "b": np.array([np.inf])}
    with pytest.raises(optim.NonFiniteGradientError, match=r"'b'.*non-finite.*\bstep 1\b"):   # before any step: the 1st
        opt.step(bad)
    opt.step({"a": np.zeros(2), "b": np.zeros(1)})
    opt.step({"a": np.zeros(2), "b": np.zeros(1)})
    with pytest.raises(optim.NonFiniteGradientError, match=r"'b'.*non-finite.*\bstep 3\b"):   # after two: the 3rd
        opt.step(bad)


def test_train_skips_the_finite_check_only_when_the_norm_is_finite():
    """A finite total norm implies finite gradients; a NaN gradient still gets the named error."""
    p = {"w": np.ones(3)}
    opt = optim.make("adam", p, lr=0.1)
    with pytest.raises(optim.NonFiniteGradientError, match="grad 'w' holds non-finite"):
        opt.step({"w": np.array([1.0, np.nan, 0.0])})
    # private: train's unchecked path (check_finite=False, after a finite norm) has no public entry
    out = opt._prepare_grads({"w": np.array([1.0, np.nan, 0.0])}, check_finite=False)
    assert np.isnan(out["w"][1])                    # unchecked: the caller vouches for it


# ----------------------------------------------------------------------------------------------
# KeyMismatchError
# ----------------------------------------------------------------------------------------------


def test_key_mismatch_error_prints_without_quotes_and_empty_without_arguments():
    assert str(optim.KeyMismatchError("x y")) == "x y"
    assert str(optim.KeyMismatchError()) == ""


# ----------------------------------------------------------------------------------------------
# Adam: the fused kernel and the NumPy path
# ----------------------------------------------------------------------------------------------


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
        # private: which path an array takes is not observable through step (both give the same bits)
        assert optim._fusable(p["a"], p["a"]) == layout.startswith("contiguous")
        optim.make(name, p, lr=0.1, weight_decay=1.0).step({"a": np.zeros(p["a"].shape)})
        np.testing.assert_allclose(p["a"], expect, rtol=1e-15, atol=0, err_msg=name)


# ---- which arrays take the fused kernel -------------------------------------------------------
def test_fusable_checks_every_buffer_dtype_and_layout():
    # private: the path is not observable through step (same bits), and make() never builds buffers
    # of another dtype or layout than the parameter's
    p = np.zeros((2, 3))
    assert optim._fusable(p, p, np.zeros((2, 3)))
    assert not optim._fusable(p, p, np.zeros((2, 3), np.float32))         # contiguous, other dtype
    assert not optim._fusable(p, p, np.asfortranarray(np.zeros((2, 3))))  # same dtype, not C-contiguous
    assert not optim._fusable(p.astype(np.float16), p.astype(np.float16))


def test_non_contiguous_params_take_the_numpy_path_with_the_same_result():
    base = np.arange(24, dtype=np.float64).reshape(4, 6) / 10
    strided = {"w": base[:, ::2]}                   # a view the kernel cannot update through reshape
    contiguous = {"w": np.ascontiguousarray(base[:, ::2])}
    # private: which path an array takes is not observable through step (both give the same bits)
    assert not optim._fusable(strided["w"], strided["w"], np.zeros((4, 3)))
    assert optim._fusable(contiguous["w"], contiguous["w"], np.zeros((4, 3)))
    assert not optim._fusable(contiguous["w"], contiguous["w"].astype(np.float32))
    o1, o2 = optim.make("adam", strided, lr=0.1), optim.make("adam", contiguous, lr=0.1)
    g = {"w": np.linspace(-1, 1, 12).reshape(4, 3)}
    for _ in range(3):
        o1.step(g)
        o2.step(g)
    np.testing.assert_array_equal(strided["w"], contiguous["w"])
    np.testing.assert_array_equal(base[:, ::2], contiguous["w"])          # updated in place


# ----------------------------------------------------------------------------------------------
# make
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,hyper,ref,extra", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_update_rule_matches_reference(name, hyper, ref, extra):
    params, grad = _problem()
    ref_p = {k: v.copy() for k, v in params.items()}
    ref_st = {k: {} for k in params}
    opt = optim.make(name, params, **hyper)
    kw = dict(hyper)
    kw.update(extra)
    for t in range(1, 7):
        g = grad(params)
        g_ref = grad(ref_p)
        np.testing.assert_allclose(g["W_h"], g_ref["W_h"], rtol=1e-10, atol=1e-12)
        opt.step(g)
        ref_p = {k: ref(ref_p[k], g_ref[k], ref_st[k], t, **kw) for k in ref_p}
        assert opt.step_count == t
        for k in params:
            np.testing.assert_allclose(params[k], ref_p[k], rtol=1e-11, atol=1e-13, err_msg=f"{name} step {t} {k}")


def test_first_adam_step_is_lr_times_sign():
    p = {"a": np.array([1.0, 2.0, -3.0])}
    opt = optim.make("adam", p, lr=0.1, eps=0.0)
    opt.step({"a": np.array([5.0, -0.01, 2.0])})
    np.testing.assert_allclose(p["a"], [0.9, 2.1, -3.1], rtol=1e-14)


def test_sgd_single_step_exact():
    p = {"a": np.array([1.0, -1.0])}
    optim.make("sgd", p, lr=0.5, weight_decay=0.1).step({"a": np.array([2.0, 4.0])})
    np.testing.assert_allclose(p["a"], [1.0 - 0.5 * (2.0 + 0.1), -1.0 - 0.5 * (4.0 - 0.1)], rtol=1e-15)


def test_adamw_decay_is_decoupled_from_adaptive_scaling():
    # zero gradient: Adam's L2 decay goes through the normalisation (a full lr-sized step),
    # AdamW only shrinks p by (1 - lr*wd).
    p1, p2 = {"a": np.array([2.0])}, {"a": np.array([2.0])}
    optim.make("adamw", p1, lr=0.1, weight_decay=0.5).step({"a": np.zeros(1)})
    optim.make("adam", p2, lr=0.1, weight_decay=0.5).step({"a": np.zeros(1)})
    np.testing.assert_allclose(p1["a"], [2.0 * (1 - 0.05)], rtol=1e-15)
    np.testing.assert_allclose(p2["a"], [2.0 - 0.1], rtol=1e-9)


def test_torch_defaults():
    p = {"a": np.zeros(2)}
    assert optim.make("sgd", p).hyper == dict(lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False)
    assert optim.make("momentum", p).hyper["momentum"] == 0.9
    assert optim.make("adam", p).hyper == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False)
    assert optim.make("adamw", p).hyper["weight_decay"] == 1e-2
    assert optim.make("rmsprop", p).hyper == dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                                                  momentum=0.0, centered=False)


def test_float32_params_stay_float32():
    p = {"a": np.ones(4, np.float32)}
    opt = optim.make("adam", p, lr=0.1)
    opt.step({"a": np.ones(4)})
    assert p["a"].dtype == np.float32 and opt.state["a"]["v"].dtype == np.float32
    np.testing.assert_allclose(p["a"], 0.9, rtol=1e-6)


# ---- rates (docs/diagnostics.md §2.4) -----------------------------------------------------------------------
def test_adam_rates_on_hand_built_state():
    p = {"U": np.zeros((2, 2)), "b": np.zeros(2)}
    lr, b2, eps, t = 3e-3, 0.95, 1e-6, 7
    opt = optim.make("adamw", p, lr=lr, betas=(0.9, b2), eps=eps)
    v = {"U": np.array([[1e-4, 4.0], [0.0, 2.5e-3]]), "b": np.array([9.0, 1e-12])}
    sd = opt.state_dict()
    sd["step"] = t
    for k in p:
        sd["state"][k]["v"] = v[k]
        sd["state"][k]["m"] = np.full_like(v[k], 123.0)  # m must not matter
    opt.load_state_dict(sd)
    lam = opt.rates()
    for k in p:
        expected = lr / (np.sqrt(v[k] / (1 - b2 ** t)) + eps)
        np.testing.assert_allclose(lam[k], expected, rtol=1e-13)
        assert lam[k].shape == p[k].shape
    assert lam["U"][1, 0] == pytest.approx(lr / eps)


def test_adam_rates_after_steps_and_at_step_zero():
    params, grad = _problem(1)
    opt = optim.make("adam", params, lr=0.01, betas=(0.9, 0.99))
    lam0 = opt.rates()
    np.testing.assert_allclose(lam0["b"], 0.01 / 1e-8)
    gs = []
    for _ in range(4):
        g = grad(params)
        gs.append(g["b"])
        opt.step(g)
    v = sum(0.01 * 0.99 ** (3 - i) * gs[i] ** 2 for i in range(4))
    np.testing.assert_allclose(opt.rates()["b"], 0.01 / (np.sqrt(v / (1 - 0.99 ** 4)) + 1e-8), rtol=1e-10)


def test_rmsprop_and_sgd_rates():
    params, grad = _problem(2)
    opt = optim.make("rmsprop", params, lr=0.02, alpha=0.9, momentum=0.5)
    gs = []
    for _ in range(3):
        g = grad(params)
        gs.append(g["w"])
        opt.step(g)
    v = sum(0.1 * 0.9 ** (2 - i) * gs[i] ** 2 for i in range(3))
    np.testing.assert_allclose(opt.rates()["w"], 0.02 / (np.sqrt(v) + 1e-8), rtol=1e-10)
    for name in ("sgd", "momentum"):
        o = optim.make(name, {"a": np.zeros((2, 3))}, lr=0.07)
        o.step({"a": np.ones((2, 3))})
        np.testing.assert_array_equal(o.rates()["a"], np.full((2, 3), 0.07))


# ---- state save / restore ------------------------------------------------------------------
@pytest.mark.parametrize("name,hyper", [("momentum", {"lr": 0.01}), ("adam", {"amsgrad": True}),
                                        ("adamw", {"lr": 0.01}), ("rmsprop", {"centered": True, "momentum": 0.3})])
def test_state_dict_round_trip(name, hyper):
    params, grad = _problem(3)
    opt = optim.make(name, params, **hyper)
    for _ in range(3):
        opt.step(grad(params))
    sd = opt.state_dict()
    saved = {k: v.copy() for k, v in params.items()}
    for _ in range(3):
        opt.step(grad(params))
    # the state_dict is a copy, unaffected by later steps
    assert sd["step"] == 3
    params2 = saved
    opt2 = optim.from_state_dict(params2, sd)
    assert opt2.step_count == 3 and opt2.hyper == opt.hyper
    for _ in range(3):
        opt2.step(grad(params2))
    for k in params:
        np.testing.assert_array_equal(params[k], params2[k])


def test_load_state_dict_errors():
    p = {"a": np.zeros(2)}
    opt = optim.make("adam", p)
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="for optimizer 'adam'"):
        optim.make("sgd", p).load_state_dict(sd)
    bad = opt.state_dict()
    bad["state"]["a"]["v"] = np.zeros(3)
    with pytest.raises(ValueError, match="shape"):
        opt.load_state_dict(bad)
    bad = opt.state_dict()
    bad["state"]["zz"] = bad["state"].pop("a")
    with pytest.raises(KeyError, match="missing"):
        opt.load_state_dict(bad)
    bad = opt.state_dict()
    bad["hyper"]["momentum"] = 0.9            # not Adam's: refused as make("adam", p, momentum=0.9) is
    with pytest.raises(TypeError) as e:
        opt.load_state_dict(bad)
    assert str(e.value) == ("optimizer state_dict for 'adam' has unknown hyper-parameter(s) ['momentum']; "
                            "accepted: ['amsgrad', 'betas', 'eps', 'lr', 'weight_decay']")
    assert opt.hyper["lr"] == 1e-3 and "momentum" not in opt.hyper       # nothing changed


def test_clip_then_step_matches_reference():
    params, grad = _problem(4)
    ref_p = {k: v.copy() for k, v in params.items()}
    opt = optim.make("momentum", params, lr=0.01)
    ref_st = {k: {} for k in params}
    for t in range(1, 5):
        g = grad(params)
        optim.clip_grad_norm(g, 0.5)
        opt.step(g)
        gr = grad(ref_p)
        norm = math.sqrt(sum(float(np.sum(v ** 2)) for v in gr.values()))
        c = min(1.0, 0.5 / (norm + 1e-6))
        ref_p = {k: ref_sgd(ref_p[k], c * gr[k], ref_st[k], t, lr=0.01, momentum=0.9) for k in ref_p}
    for k in params:
        np.testing.assert_allclose(params[k], ref_p[k], rtol=1e-12)


# ---- errors ----------------------------------------------------------------------------------
def test_errors():
    p = {"a": np.zeros(2), "b": np.zeros(3)}
    with pytest.raises(ValueError, match="unknown optimizer 'adagrad'.*sgd, momentum, adam, adamw, rmsprop"):
        optim.make("adagrad", p)
    for lr in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="lr"):
            optim.make("adam", p, lr=lr)
    for betas in ((1.0, 0.999), (0.9, -0.1), (0.9, 1.5)):
        with pytest.raises(ValueError, match="betas"):
            optim.make("adamw", p, betas=betas)
    with pytest.raises(TypeError, match="unknown hyper-parameter"):
        optim.make("sgd", p, betas=(0.9, 0.99))
    with pytest.raises(ValueError, match="nesterov"):
        optim.make("sgd", p, nesterov=True)
    with pytest.raises(ValueError, match="momentum"):
        optim.make("rmsprop", p, momentum=-0.1)
    opt = optim.make("sgd", p)
    with pytest.raises(KeyError, match=r"missing \['b'\]"):
        opt.step({"a": np.zeros(2)})
    with pytest.raises(KeyError, match=r"unexpected \['c'\]"):
        opt.step({"a": np.zeros(2), "b": np.zeros(3), "c": np.zeros(1)})
    with pytest.raises(ValueError, match="shape"):
        opt.step({"a": np.zeros(2), "b": np.zeros(4)})
    with pytest.raises(FloatingPointError, match="'b'.*non-finite"):
        opt.step({"a": np.zeros(2), "b": np.array([0.0, np.nan, 0.0])})
    with pytest.raises(ValueError, match="non-finite"):
        opt.step({"a": np.array([np.inf, 0.0]), "b": np.zeros(3)})
    assert opt.step_count == 0
    np.testing.assert_array_equal(p["a"], 0.0)
    with pytest.raises(TypeError, match="floating"):
        optim.make("sgd", {"a": np.zeros(2, dtype=int)})


# ---- validation messages (the optimizer's user-facing errors, in full) ---------------------
@pytest.mark.parametrize("name,hyper,exc,msg", [
    ("sgd", {"lr": "0.1"}, TypeError, "lr must be a real number, got '0.1'"),     # float("0.1") would work
    ("sgd", {"lr": True}, TypeError, "lr must be a real number, got True"),       # a bool is not a rate
    ("sgd", {"lr": math.inf}, ValueError, "lr must be finite, got inf"),
    ("sgd", {"lr": 0.0}, ValueError, r"\blr\b"),
    ("sgd", {"momentum": 1.0}, ValueError, r"\bmomentum\b.*\[0, 1\)"),
    ("sgd", {"momentum": math.nan}, ValueError, r"\bmomentum\b.*finite"),
    ("sgd", {"dampening": 1.5}, ValueError, r"\bdampening\b.*\[0, 1\)"),
    ("sgd", {"weight_decay": -1}, ValueError, r"\bweight_decay\b.*>= 0"),
    ("sgd", {"weight_decay": math.nan}, ValueError, r"\bweight_decay\b.*finite"),
    ("sgd", {"nesterov": True, "momentum": 0.5, "dampening": 0.1}, ValueError,
     r"\bnesterov\b"),
    ("momentum", {"momentum": 0.0}, ValueError,
     r"\bmomentum\b.*> 0"),
    ("adam", {"betas": 0.9}, ValueError, r"\bbetas\b.*pair"),
    ("adam", {"betas": (0.9, 0.99, 0.999)}, ValueError,
     r"\bbetas\b.*pair"),
    ("adam", {"betas": (1.0, 0.999)}, ValueError, r"\bbetas\[0\]"),
    ("adam", {"betas": (0.9, -0.1)}, ValueError, r"\bbetas\[1\]"),
    ("adam", {"eps": -1}, ValueError, r"\beps\b.*>= 0"),
    ("adam", {"eps": "x"}, TypeError, r"\beps\b"),
    ("adamw", {"weight_decay": -0.5}, ValueError, r"\bweight_decay\b.*>= 0"),
    ("rmsprop", {"alpha": 1.0}, ValueError, r"\balpha\b.*\[0, 1\)"),
    ("rmsprop", {"eps": -2}, ValueError, r"\beps\b.*>= 0"),
    ("rmsprop", {"weight_decay": -3}, ValueError, r"\bweight_decay\b.*>= 0"),
    ("rmsprop", {"momentum": 1.0}, ValueError, r"\bmomentum\b.*\[0, 1\)"),
])
def test_hyper_parameter_messages(name, hyper, exc, msg):
    with pytest.raises(exc, match=msg):
        optim.make(name, _p(0.0), **hyper)


def test_params_messages():
    with pytest.raises(TypeError, match=r"\bparams\b"):
        optim.make("sgd", {})
    with pytest.raises(TypeError, match=r"\bparams\b"):
        optim.make("sgd", [np.zeros(2)])                       # not a dict, though not empty
    with pytest.raises(TypeError, match=r"\bparam 'a'.*numpy array"):
        optim.make("sgd", {"a": [0.0, 1.0]})
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"\bparam 'a'.*read-only"):
        optim.make("sgd", {"a": ro})


def test_repr_lists_every_hyper_parameter_and_the_step():
    opt = optim.make("sgd", _p(0.0), lr=0.5)
    assert repr(opt) == "SGD('sgd', lr=0.5, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, step=0)"
    opt.step(_p(1.0))
    assert repr(opt).endswith(", step=1)")
    assert repr(optim.make("adam", _p(0.0))) == \
        "Adam('adam', lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, amsgrad=False, step=0)"


def test_prepared_grads_have_the_params_dtype_and_are_not_copied_when_they_already_do():
    opt = optim.make("sgd", {"a": np.zeros(3, np.float32), "b": np.zeros(2)})
    g64 = np.ones(3)
    same = np.ones(2)
    opt.step({"a": g64, "b": same})                                      # SGD, lr 1e-3: p = −lr·g
    assert opt.params["a"].dtype == np.float32 and opt.params["a"][0] == np.float32(-0.001)
    assert g64.dtype == np.float64 and g64.tolist() == [1.0] * 3        # cast, the caller's array untouched
    # float64 gradients of float32 parameters are cast first: the update is float32 arithmetic throughout
    g = np.random.default_rng(3).standard_normal(1000) * 1e-3
    for name in ("adam", "sgd"):
        p1, p2 = {"w": np.full(1000, 0.1, np.float32)}, {"w": np.full(1000, 0.1, np.float32)}
        o1, o2 = optim.make(name, p1, lr=0.3), optim.make(name, p2, lr=0.3)
        for _ in range(3):
            o1.step({"w": g})
            o2.step({"w": g.astype(np.float32)})
        np.testing.assert_array_equal(p1["w"], p2["w"])
    # private: that a gradient already in the parameter's dtype is not copied is not observable through step
    assert opt._prepare_grads({"a": g64, "b": same})["b"] is same


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
    with pytest.raises(KeyError, match=r"\bstate_dict\b.*'step'"):
        opt.load_state_dict(sd)
    sd = opt.state_dict()
    sd["state"]["zz"] = sd["state"].pop("a")
    with pytest.raises(KeyError, match=r"\bstate keys\b.*missing \['a'\], unexpected \['zz'\]"):
        opt.load_state_dict(sd)
    sd = opt.state_dict()
    del sd["state"]["a"]["v"]
    with pytest.raises(KeyError, match=r"\bstate for 'a'.*buffers"):
        opt.load_state_dict(sd)


@pytest.mark.parametrize("step", [-1, 1.5, True, "2"])
def test_load_state_dict_refuses_a_step_that_is_not_an_int_at_least_zero(step):
    opt = optim.make("sgd", _p(0.0))
    sd = dict(opt.state_dict(), step=step)
    with pytest.raises(ValueError, match=r"\bstate_dict step\b"):
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


def test_fused_step_equals_torch_formula_by_hand():
    """One AdamW step from zero state, float64: p·(1 − lr·wd) − lr/(1−β₁)·m/(√(v/(1−β₂)) + eps)
    with m = (1−β₁)g, v = (1−β₂)g² is p(1 − lr·wd) − lr·sign(g)·|g|/(|g| + eps) (to round-off)."""
    p = {"w": np.array([1.0, -2.0, 0.5])}
    opt = optim.make("adamw", p, lr=0.1, weight_decay=0.01)
    g = np.array([0.5, -3.0, 1e-3])
    opt.step({"w": g})
    expect = np.array([1.0, -2.0, 0.5]) * (1 - 0.1 * 0.01) - 0.1 * g / (np.abs(g) + 1e-8)
    np.testing.assert_allclose(p["w"], expect, rtol=1e-12)
    np.testing.assert_allclose(p["w"], [0.899, -1.898, 0.399501], rtol=1e-7)


def test_amsgrad_keeps_the_running_max():
    p = {"w": np.zeros(2)}
    opt = optim.make("adam", p, lr=0.1, amsgrad=True)
    opt.step({"w": np.array([2.0, 0.0])})
    opt.step({"w": np.array([0.0, 0.0])})
    # v after two steps: 0.999·0.001·4 = 0.003996 < v_max = 0.004 from the first step
    np.testing.assert_allclose(opt.state["w"]["v"], [0.003996, 0.0], rtol=1e-12)
    np.testing.assert_allclose(opt.state["w"]["v_max"], [0.004, 0.0], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# from_state_dict
# ----------------------------------------------------------------------------------------------


def test_from_state_dict_messages_and_unknown_hyper_parameters():
    with pytest.raises(TypeError, match=r"\bsd\b"):
        optim.from_state_dict(_p(0.0), [])
    with pytest.raises(KeyError, match=r"\bstate_dict\b.*'hyper'"):
        optim.from_state_dict(_p(0.0), {"name": "sgd"})
    sd = optim.make("sgd", _p(0.0)).state_dict()
    sd["hyper"]["betas"] = (0.9, 0.99)                                  # not an SGD hyper-parameter
    with pytest.raises(TypeError, match="unknown hyper-parameter"):
        optim.from_state_dict(_p(0.0), sd)
    # the constructor's message (the optimizer is built from the state_dict's hyper-parameters)
    with pytest.raises(TypeError, match=r"unknown hyper-parameter.*\['betas'\]"):
        optim.from_state_dict(_p(0.0), sd)


# ----------------------------------------------------------------------------------------------
# clip_grad_norm
# ----------------------------------------------------------------------------------------------


# ---- clipping --------------------------------------------------------------------------------
def test_clip_grad_norm():
    g = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}
    orig_a = g["a"]
    total = optim.clip_grad_norm(g, 1.0)
    assert total == pytest.approx(5.0, rel=1e-15)
    coef = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(g["a"], [3.0 * coef, 0.0], rtol=1e-15)
    np.testing.assert_allclose(g["b"], [[4.0 * coef]], rtol=1e-15)
    np.testing.assert_array_equal(orig_a, [3.0, 0.0])  # the arrays passed in are not modified
    new_norm = math.sqrt(float(np.sum(g["a"] ** 2) + np.sum(g["b"] ** 2)))
    assert new_norm < 1.0 and new_norm == pytest.approx(1.0, rel=1e-6)
    g2 = {"a": np.array([0.3, 0.4])}
    assert optim.clip_grad_norm(g2, 1.0) == pytest.approx(0.5)
    np.testing.assert_array_equal(g2["a"], [0.3, 0.4])
    # max-norm 0.5 exactly at the norm: coef = 0.5/(0.5+1e-6) < 1 scales slightly (torch)
    g3 = {"a": np.array([0.3, 0.4])}
    optim.clip_grad_norm(g3, 0.5)
    np.testing.assert_allclose(g3["a"], np.array([0.3, 0.4]) * 0.5 / (0.5 + 1e-6), rtol=1e-15)
    g4 = {"a": np.array([3.0, 4.0])}
    assert optim.clip_grad_norm(g4, 1.0, norm_type=math.inf) == 4.0
    with pytest.raises(ValueError, match="max_norm"):
        optim.clip_grad_norm(g4, 0.0)


# ---- clip_grad_norm ----------------------------------------------------------------------------
def test_clip_messages():
    with pytest.raises(TypeError, match=r"\bgrads\b"):
        optim.clip_grad_norm([np.ones(2)], 1.0)
    with pytest.raises(TypeError, match=r"\bmax_norm\b"):
        optim.clip_grad_norm({"a": np.ones(2)}, "x")
    with pytest.raises(ValueError, match=r"\bnorm_type\b"):
        optim.clip_grad_norm({"a": np.ones(2)}, 1.0, norm_type=1)


def test_clip_non_finite_norm_raises_only_when_asked():
    g = {"a": np.array([1.0, np.nan])}
    assert math.isnan(optim.clip_grad_norm(g, 1.0))                      # default: no error (torch's default)
    assert math.isnan(g["a"][1]) and g["a"][0] == 1.0                      # nan < 1 is False: not scaled
    with pytest.raises(optim.NonFiniteGradientError, match=r"\btotal gradient norm\b"):
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
