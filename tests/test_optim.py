"""Optimizers: each update rule against an independent re-implementation of the textbook /
PyTorch formulas, rates (docs/diagnostics.md §2.4), state save/restore, clipping, errors."""

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
