"""The fused numba Adam/AdamW step (lwsim._optim_kernels) against the NumPy reference, bit for bit,
and the shared diagnostics of A15/A16 (training.init_windows, a_windows without the envelope)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from lwsim import optim

SHAPES = {"W": (16, 48), "b": (7,), "T3": (3, 5, 2), "s": ()}


def _pair(name, dtype, seed=0, **hyper):
    rng = np.random.default_rng(seed)
    p1 = {k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES.items()}
    p2 = {k: v.copy() for k, v in p1.items()}
    fused = optim.make(name, p1, **hyper)
    ref = optim.make(name, p2, **hyper)
    ref._apply = lambda grads: optim.Optimizer._apply(ref, grads)     # the per-array NumPy _update
    return fused, ref


def _grads(rng, dtype, step):
    g = {k: (rng.standard_normal(s) * 10.0 ** rng.uniform(-6, 2)).astype(dtype) for k, s in SHAPES.items()}
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
    for k in SHAPES:
        assert fused.params[k].dtype == dtype
        np.testing.assert_array_equal(fused.params[k], ref.params[k], err_msg=k)
        for s in fused.state[k]:
            np.testing.assert_array_equal(fused.state[k][s], ref.state[k][s], err_msg=f"{k}.{s}")
    # and the update did something: 40 steps of lr 3e-2 move every weight
    assert not np.array_equal(fused.params["W"], _pair(name, dtype, lr=3e-2)[0].params["W"])


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


def test_non_contiguous_params_take_the_numpy_path_with_the_same_result():
    base = np.arange(24, dtype=np.float64).reshape(4, 6) / 10
    strided = {"w": base[:, ::2]}                   # a view the kernel cannot update through reshape
    contiguous = {"w": np.ascontiguousarray(base[:, ::2])}
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


def test_amsgrad_keeps_the_running_max():
    p = {"w": np.zeros(2)}
    opt = optim.make("adam", p, lr=0.1, amsgrad=True)
    opt.step({"w": np.array([2.0, 0.0])})
    opt.step({"w": np.array([0.0, 0.0])})
    # v after two steps: 0.999·0.001·4 = 0.003996 < v_max = 0.004 from the first step
    np.testing.assert_allclose(opt.state["w"]["v"], [0.003996, 0.0], rtol=1e-12)
    np.testing.assert_allclose(opt.state["w"]["v_max"], [0.004, 0.0], rtol=1e-12)


def test_train_skips_the_finite_check_only_when_the_norm_is_finite():
    """A finite total norm implies finite gradients; a NaN gradient still gets the named error."""
    p = {"w": np.ones(3)}
    opt = optim.make("adam", p, lr=0.1)
    with pytest.raises(optim.NonFiniteGradientError, match="grad 'w' holds non-finite"):
        opt._apply(opt._prepare_grads({"w": np.array([1.0, np.nan, 0.0])}))
    out = opt._prepare_grads({"w": np.array([1.0, np.nan, 0.0])}, check_finite=False)
    assert np.isnan(out["w"][1])                    # unchecked: the caller vouches for it


# ---- the A15/A16 diagnostics: the envelope skipped, the initial point shared ------------------

def _tiny():
    import lwsim
    from lwsim.figures.training import a_null_tables
    cell = lwsim.make_cell("gru", 3, 4)
    p = cell.init_params(seed=2)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((12, 40, 3)), rng.standard_normal((12, 40, 1))
    c = dict(lags=[1, 2, 4], n_grid=[10, 40], eps=2.0, K=1, seed=5, backend="numba", n_boot=20)
    return cell, p, x, y, c, a_null_tables


def test_a_windows_without_the_envelope_are_the_same_tables():
    cell, p, x, y, c, a_null_tables = _tiny()
    env, _, with_env = a_null_tables(cell, p, 0.01, x, y, c, nulls=("lag", "full"))
    none, _, alone = a_null_tables(cell, p, 0.01, x, y, c, nulls=("lag", "full"), need_envelope=False)
    assert env is not None and none is None
    for n in ("lag", "full"):
        a, b = next(iter(with_env[n].values())), next(iter(alone[n].values()))
        for field in ("n_hat", "n_star", "mean", "alpha", "sigma"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=f"{n}.{field}")


def test_init_windows_computes_once_per_input_and_ignores_only_n(monkeypatch):
    import lwsim.figures.training as training
    cell, p, x, y, c, _ = _tiny()
    calls = []
    real = training.a_windows

    def spy(*a, **kw):
        calls.append(1)
        return real(*a, **kw)
    monkeypatch.setattr(training, "a_windows", spy)
    monkeypatch.setattr(training, "_SHARED", {})
    first = training.init_windows(cell, p, 0.01, x, y, dict(c, N=10), nulls=("lag",))
    again = training.init_windows(cell, p, 0.01, x, y, dict(c, N=40), nulls=("lag",))   # another N: a hit
    assert len(calls) == 1 and again is first
    fresh = real(cell, p, 0.01, x, y, c, nulls=("lag",))
    np.testing.assert_array_equal(first["lag"].n_hat, fresh["lag"].n_hat)
    p2 = dict(p, W_out=p["W_out"] + 1e-12)                                   # other weights: a miss
    training.init_windows(cell, p2, 0.01, x, y, dict(c, N=10), nulls=("lag",))
    training.init_windows(cell, p, 0.02, x, y, dict(c, N=10), nulls=("lag",))   # other η: a miss
    training.init_windows(cell, p, 0.01, x, y, dict(c, N=10, eps=1.0), nulls=("lag",))  # other config
    y2 = y.copy()
    y2[0, 0, 0] += 1.0
    training.init_windows(cell, p, 0.01, x, y2, dict(c, N=10), nulls=("lag",))  # other sequences
    assert len(calls) == 5 and len(training._SHARED) == 5
    monkeypatch.setattr(training, "_SHARED_MAX", 5)
    training.init_windows(cell, p, 0.03, x, y, c, nulls=("lag",))                # the oldest goes
    assert len(training._SHARED) == 5 and len(calls) == 6
    training.init_windows(cell, p, 0.01, x, y, c, nulls=("lag",))
    assert len(calls) == 7                                                      # it was the first

