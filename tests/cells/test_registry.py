"""Tests of lwsim/cells/registry.py (laid out like the code: docs/testing.md).

Each cell declares what it is (docs/cells.md §1.10): a cell defined here, outside lwsim, is
registered through the public function and works on the reference backend; backends without its
kernels say so by name; and every built-in cell's declarations agree with what its code does."""


import numpy as np
import pytest

import lwsim
from lwsim.cells import CellKind, cell_names, register, unregister
from lwsim.cells.registry import BUILTIN, KINDS


A = 0.3                                  # the toy's fixed leak rate


class ToyLeak(CellKind):
    """h_t = (1 − a) h_{t−1} + a tanh(W_x x_t + U_h h_{t−1} + b_x), a fixed (not trained);
    J_t = (1 − a) I + a diag(1 − h̃_t²) U_h."""
    name = "toyleak"
    gate_depends_on_state = False        # its "gate" a is a constant
    blocks = 1

    def param_shapes(self, cfg):
        H, D = cfg.n_hidden, cfg.n_in
        out = {"W_x": (H, D), "U_h": (H, H)}
        if cfg.bias:
            out["b_x"] = (H,)
        return out

    def gate_keys(self, cfg):
        return ()

    def recurrent_keys(self, cfg):
        return ("U_h",)

    @staticmethod
    def _pre(p, x, h):
        a = x @ p["W_x"].T + h @ p["U_h"].T
        return a + p["b_x"] if "b_x" in p else a

    def step(self, xp, p, cfg, x, state):
        (h,) = state
        cand = xp.tanh(self._pre(p, x, h))
        return (h + A * (cand - h),), {"cand": cand}

    def step_backward(self, xp, p, cfg, x, state, rec, dstate, grads):
        (h,), (dh,) = state, dstate
        da = dh * A * (1.0 - rec["cand"] ** 2)
        grads["W_x"] += da.T @ x
        grads["U_h"] += da.T @ h
        if "b_x" in grads:
            grads["b_x"] += da.sum(axis=0)
        return (dh * (1.0 - A) + da @ p["U_h"],)

    def step_jacobian(self, xp, p, cfg, state, rec):
        H = state[0].shape[-1]
        return (1.0 - A) * xp.eye(H) + (A * (1.0 - rec["cand"] ** 2))[:, :, None] * p["U_h"]

    def step_jacobian_diag(self, xp, p, cfg, state, rec):
        return (1.0 - A) + A * (1.0 - rec["cand"] ** 2) * p["U_h"].diagonal()

    def step_tangent(self, xp, p, cfg, x, state, rec, dstate, dp):
        (h,), (dh,) = state, dstate
        da = self._pre(dp, x, h) + dh @ p["U_h"].T
        return (dh * (1.0 - A) + A * (1.0 - rec["cand"] ** 2) * da,)

    def leak(self, xp, cfg, rec):
        return (1.0 - A) * xp.ones_like(rec["cand"])


@pytest.fixture
def toy():
    kind = register(ToyLeak())
    try:
        yield kind
    finally:
        unregister("toyleak")
    assert "toyleak" not in KINDS


def _toy_cell(**opts):
    return lwsim.make_cell("toyleak", 2, 3, 2, **opts)


def _data(cell, T=5, B=2, seed=0):
    rng = np.random.default_rng(seed)
    p = {k: 0.6 * rng.standard_normal(s) for k, s in cell.param_shapes().items()}
    return p, rng.standard_normal((T, B, cell.n_in)), rng.standard_normal((T, B, cell.n_out))


# ------------------------------------------------------------------ the built-in cells' declarations
def _builtin_cells(**opts):
    cells = [lwsim.make_cell(k.name, 1, 16, 1, **opts) for k in BUILTIN]
    return cells + [lwsim.make_cell("gru", 1, 16, 1, convention="torch", **opts)]


# ----------------------------------------------------------------------------------------------
# register
# ----------------------------------------------------------------------------------------------


def test_register_checks_its_argument(toy):
    with pytest.raises(ValueError, match="'toyleak' is already registered"):
        register(ToyLeak())
    with pytest.raises(ValueError, match="'gru' is already registered"):
        register(type("G", (ToyLeak,), {"name": "gru"})())
    with pytest.raises(TypeError, match="CellKind instance"):
        register(object())
    with pytest.raises(ValueError, match="identifier"):
        register(type("B", (ToyLeak,), {"name": "no name"})())
    with pytest.raises(TypeError, match="does not implement step_jacobian, step_jacobian_diag"):
        class Half(CellKind):
            name = "half"
            param_shapes = gate_keys = recurrent_keys = step = step_backward = ToyLeak.step
            step_tangent = leak = ToyLeak.leak
        register(Half())
    with pytest.raises(ValueError, match="built-in"):
        unregister("lstm")
    with pytest.raises(ValueError, match="no registered cell named 'elman'"):
        unregister("elman")


def test_an_unregistered_cell_is_gone():
    register(ToyLeak())
    unregister("toyleak")
    with pytest.raises(ValueError, match="name must be one of"):
        _toy_cell()


# ----------------------------------------------------------------------------------------------
# cell_names
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ the toy cell
def test_a_registered_cell_is_built_initialised_and_run_on_numpy(toy):
    assert "toyleak" in cell_names() and "toyleak" not in lwsim.CELL_NAMES   # CELL_NAMES: built-ins
    cell = _toy_cell()
    assert cell.kind is toy and cell.state_size == 3
    p = cell.init_params(seed=1)
    assert set(p) == {"W_x", "U_h", "b_x", "W_out", "b_out"}
    np.testing.assert_allclose(p["U_h"] @ p["U_h"].T, np.eye(3), atol=1e-12)    # paper_a: orthogonal
    x = np.random.default_rng(2).standard_normal((4, 2, 2))
    tr = cell.forward(p, x)
    assert tr.h.shape == (5, 2, 3) and tr.y.shape == (4, 2, 2) and tr.c is None
    np.testing.assert_allclose(tr.leak, 1.0 - A)
    loss, grads = cell.loss_and_grad(p, x, np.zeros((4, 2, 2)))
    assert np.isfinite(loss) and set(grads) == set(p)


@pytest.mark.parametrize("bias", [True, False])
def test_the_toy_gradient_matches_central_differences(toy, bias):
    cell = _toy_cell(bias=bias)
    p, x, y = _data(cell)
    _, g = cell.loss_and_grad(p, x, y)
    eps = 1e-6
    for k, v in p.items():
        fd = np.zeros_like(v)
        for i in np.ndindex(v.shape):
            for sign in (1, -1):
                q = {kk: vv.copy() for kk, vv in p.items()}
                q[k][i] += sign * eps
                fd[i] += sign * cell.loss_and_grad(q, x, y)[0] / (2 * eps)
        np.testing.assert_allclose(g[k], fd, rtol=1e-6, atol=1e-9, err_msg=k)


def test_the_toy_jacobians_match_differences_of_the_forward_map(toy):
    cell = _toy_cell()
    p, x, _ = _data(cell, seed=3)
    J = cell.jacobians(p, x)
    tr = cell.forward(p, x)
    eps = 1e-6
    for t in range(x.shape[0]):
        h = tr.h[t]
        fd = np.zeros_like(J[t])
        for j in range(3):
            e = np.zeros_like(h)
            e[:, j] = eps
            up = toy.step(np, p, cell, x[t], (h + e,))[0][0]
            down = toy.step(np, p, cell, x[t], (h - e,))[0][0]
            fd[:, :, j] = (up - down) / (2 * eps)
        np.testing.assert_allclose(J[t], fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(cell.jacobian_diagonal(p, x), np.diagonal(J, axis1=2, axis2=3), rtol=1e-13)


def test_the_toy_tangent_matches_differences_of_the_states(toy):
    cell = _toy_cell()
    p, x, _ = _data(cell, seed=4)
    w = {k: np.random.default_rng(5).standard_normal(v.shape) for k, v in p.items()}
    v = cell.tangents(p, x, w)
    eps = 1e-6
    up = cell.forward({k: p[k] + eps * w[k] for k in p}, x).h
    down = cell.forward({k: p[k] - eps * w[k] for k in p}, x).h
    np.testing.assert_allclose(v, (up - down) / (2 * eps), rtol=1e-6, atol=1e-9)


def test_backends_without_the_toys_kernels_name_it(toy, monkeypatch):
    from lwsim.backends.numba import fused
    cell = _toy_cell()
    p, x, y = _data(cell)
    calls = [lambda: cell.forward(p, x, backend="numba"),
             lambda: cell.loss_and_grad(p, x, y, backend="numba"),
             lambda: cell.jacobian_diagonal(p, x, backend="numba"),
             lambda: cell.tangents(p, x, p, backend="numba")]
    for call in calls:
        with pytest.raises(ValueError, match="backend 'numba' has no kernels for cell 'toyleak'"):
            call()
    with pytest.raises(ValueError, match=r"fused trainer has no kernels for cell 'toyleak' \(backend 'numba'\)"):
        fused.family(cell)
    monkeypatch.setattr(toy, "cupy", False)       # checked before CuPy is imported: no GPU needed
    with pytest.raises(ValueError, match="backend 'cupy' has no kernels for cell 'toyleak'"):
        cell.forward(p, x, backend="cupy")


def test_the_toy_is_asked_not_named(toy):
    """Property questions elsewhere in lwsim read the toy's declarations."""
    from lwsim.diagnostics import gate_derivative_term
    from lwsim.diagnostics.author_b import author_jacobians
    from lwsim.figures.workload import gates
    cell = _toy_cell()
    p, x, _ = _data(cell)
    assert gates("toyleak") == 1
    np.testing.assert_array_equal(gate_derivative_term(cell, p, x), 0.0)   # gate_depends_on_state False
    with pytest.raises(ValueError, match="author's models .*not for 'toyleak'"):
        author_jacobians(cell, p, x)
    with pytest.raises(ValueError, match="s=0.5 applies only to the constgate cell, not to 'toyleak'"):
        _toy_cell(s=0.5)


# ----------------------------------------------------------------------------------------------
# kind
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cell", _builtin_cells(), ids=lambda c: f"{c.name}-{c.convention}")
def test_builtin_declarations_agree_with_the_code(cell):
    from lwsim.backends.numba import fused, tangent_kernels
    from lwsim.diagnostics import gate_derivative_term
    kind, H, D = cell.kind, cell.n_hidden, cell.n_in
    shapes = cell.param_shapes()
    assert cell.state_size == (2 * H if kind.has_cell_state else H)
    assert kind.blocks == sum(s == (H, D) for s in shapes.values())       # H-row input blocks
    assert set(cell.gate_keys) <= set(shapes) and set(cell.recurrent_keys) <= set(shapes)
    assert all(shapes[k] == (H, H) for k in cell.recurrent_keys)
    assert bool(cell.gate_keys) == kind.gate_depends_on_state
    p = {k: 0.5 * np.random.default_rng(0).standard_normal(s) for k, s in shapes.items()}
    x = np.random.default_rng(1).standard_normal((6, 3, D))
    tr = cell.forward(p, x)
    assert (tr.leak is not None) == kind.has_leak
    if kind.has_leak:                                   # a gate reading h varies; a constant does not
        assert (np.ptp(tr.leak) > 0) == kind.gate_depends_on_state
    assert bool(np.any(gate_derivative_term(cell, p, x) != 0)) == kind.gate_depends_on_state
    init = cell.init_params(seed=0, s0=0.2, f0=0.9)
    for k, v in kind.gate_biases(cell, 0.2, 0.9).items():
        np.testing.assert_array_equal(init[k], v)
    k_in = 1.0 / np.sqrt(H if kind.torch_fan_in else D)
    w = cell.init_params(seed=0, scheme="torch")[next(k for k, s in shapes.items() if s == (H, D))]
    assert np.abs(w).max() <= k_in and (np.abs(w).max() > 1.0 / np.sqrt(H)) == (not kind.torch_fan_in)
    for opt, value in (("s", 0.5), ("convention", "torch")):
        if opt in kind.options:
            lwsim.make_cell(cell.name, D, H, **{opt: value})
        else:
            with pytest.raises(ValueError, match="applies only to"):
                lwsim.make_cell(cell.name, D, H, **{opt: value})
    assert kind.author_b == (kind.family == "leaky")
    assert kind.numba_kernels == f"lwsim.backends.numba.{kind.family}"
    assert kind.numba_variant(cell) in fused.FAMILIES and kind.numba_variant(cell) in tangent_kernels._VARIANTS
    if kind.torch_gates is not None and cell.convention != "cho":
        assert len(kind.torch_gates) == kind.blocks
        tp = cell.params_to_torch(p)
        assert tp["weight_ih_l0"].shape == (kind.blocks * H, D)
    else:
        with pytest.raises(ValueError, match="params_from_torch supports"):
            cell.params_to_torch(p)


def test_builtin_kinds_are_registered_under_their_names():
    assert lwsim.CELL_NAMES == tuple(k.name for k in BUILTIN) == tuple(KINDS)[:len(BUILTIN)]
    assert all(lwsim.cells.kind(k.name) is k for k in BUILTIN)
