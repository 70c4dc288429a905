"""Tests of lwsim/cells/base.py (laid out like the code: docs/testing.md).

Public cell API: init schemes, options, PyTorch layouts, input validation (docs/cells.md §1.4–1.9).

Casts and copies keep every option (docs/cells.md §1.9, docs/experiments.md §5.2, docs/analyze.md):
``Cell.with_dtype`` over every cell and every option (s, convention, read-out, LayerNorm, bias),
``TrainResult.astype`` over every optimizer with non-default hyper-parameters and checkpoints, and
the ``python -m lwsim.analyze`` loader (weights written by lwsim, read back into the cell the CLI
builds) over every cell and option it can express."""


import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lwsim

from cellcases import make, random_data, random_params, rel_err
from helpers import _options


# ---------------------------------------------------------------- PyTorch layouts
def _torch_gru_step(sd, x, h):
    """torch.nn.GRU's documented equations, written from its stacked (r, z, n) layout."""
    H = h.shape[-1]
    gi = x @ sd["weight_ih_l0"].T + sd["bias_ih_l0"]
    gh = h @ sd["weight_hh_l0"].T + sd["bias_hh_l0"]
    sig = lambda v: 1 / (1 + np.exp(-v))   # noqa: E731
    r = sig(gi[:, :H] + gh[:, :H])
    z = sig(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h


def _torch_lstm_step(sd, x, h, c):
    H = h.shape[-1]
    g = x @ sd["weight_ih_l0"].T + sd["bias_ih_l0"] + h @ sd["weight_hh_l0"].T + sd["bias_hh_l0"]
    sig = lambda v: 1 / (1 + np.exp(-v))   # noqa: E731
    i, f, gg, o = sig(g[:, :H]), sig(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), sig(g[:, 3 * H:])
    c = f * c + i * gg
    return o * np.tanh(c), c


def _variants():
    """(name, options) for every cell and every combination of its options."""
    out = []
    for name in lwsim.CELL_NAMES:
        extra = {"constgate": [{"s": 0.3}, {"s": 0.05}], "gru": [{"convention": "cho"}, {"convention": "torch"}]}
        for ln, bias, readout, e in itertools.product((False, True), (False, True), ("every", "last"),
                                                      extra.get(name, [{}])):
            if ln and e.get("convention") == "torch":
                continue                                  # torch.nn.GRU has no LayerNorm
            out.append((name, dict(layernorm=ln, bias=bias, readout=readout, **e)))
    return out


VARIANTS = _variants()


# ---------------------------------------------------------------- initialisation, §1.5
def test_init_is_deterministic_and_keyed():
    cell = lwsim.make_cell("diaggate", 3, 6, layernorm=True)
    a, b = cell.init_params(seed=4), cell.init_params(seed=4)
    assert set(a) == set(cell.param_shapes())
    assert all(np.array_equal(a[k], b[k]) for k in a)
    c = cell.init_params(seed=5)
    assert not np.array_equal(a["W_h"], c["W_h"])


def test_paper_a_init():
    for name, gate_bias in [("sharedgate", "b_s"), ("diaggate", "b_s"), ("gru", "b_z")]:
        cell = lwsim.make_cell(name, 3, 8)
        p = cell.init_params(seed=0, scheme="paper_a", s0=0.05)
        np.testing.assert_allclose(1 / (1 + np.exp(-p[gate_bias])), 0.05)
        for k in cell.gate_keys:
            assert not p[k].any()
    p = lwsim.make_cell("rnn", 3, 8).init_params(0)
    np.testing.assert_allclose(p["W_h"] @ p["W_h"].T, np.eye(8), atol=1e-12)
    np.testing.assert_allclose(p["W_x"].T @ p["W_x"], np.eye(3), atol=1e-12)   # semi-orthogonal
    lstm = lwsim.make_cell("lstm", 3, 8).init_params(0, f0=0.95)
    np.testing.assert_allclose(1 / (1 + np.exp(-lstm["b_f"])), 0.95)
    torch_gru = lwsim.make_cell("gru", 3, 8, convention="torch").init_params(0, s0=0.05)
    np.testing.assert_allclose(1 / (1 + np.exp(-torch_gru["b_iz"])), 0.95)   # z is the retention


def test_torch_and_normal_init_ranges():
    p = lwsim.make_cell("lstm", 3, 16).init_params(0, scheme="torch")
    for v in p.values():
        assert np.abs(v).max() <= 1 / np.sqrt(16) + 1e-15
    q = lwsim.make_cell("rnn", 3, 64).init_params(0, scheme="normal", sigma_w=0.2)
    assert abs(q["W_h"].std() - 0.2) < 0.01 and not q["b_x"].any()


def test_constgate_with_s_one_is_rnn():
    rnn = lwsim.make_cell("rnn", 2, 4)
    cg = lwsim.make_cell("constgate", 2, 4, s=1.0)
    p = random_params(rnn, 0)
    x, _ = random_data(rnn, 5, 3, 0)
    np.testing.assert_allclose(cg.forward(p, x).h, rnn.forward(p, x).h, rtol=0, atol=1e-15)


def test_trace_contents():
    cell = lwsim.make_cell("lstm", 2, 4, n_out=3)
    p = random_params(cell, 0)
    x, _ = random_data(cell, 5, 2, 0)
    tr = cell.forward(p, x)
    assert tr.h.shape == (6, 2, 4) and tr.c.shape == (6, 2, 4) and tr.y.shape == (5, 2, 3)
    assert not tr.h[0].any() and not tr.c[0].any()
    assert set(tr.gates) == {"i", "f", "g", "o"}
    np.testing.assert_array_equal(tr.leak, tr.gates["f"])
    sg = lwsim.make_cell("sharedgate", 2, 4)
    tr = sg.forward(random_params(sg, 0), x)
    assert tr.gates["s"].shape == (5, 2, 1) and tr.leak.shape == (5, 2, 4)


@pytest.mark.parametrize("name", ["gru", "lstm"])
def test_params_from_torch_layout(name):
    H, D, T, B = 4, 3, 6, 2
    G = 3 if name == "gru" else 4
    rng = np.random.default_rng(0)
    sd = {"weight_ih_l0": rng.standard_normal((G * H, D)), "weight_hh_l0": rng.standard_normal((G * H, H)),
          "bias_ih_l0": rng.standard_normal(G * H), "bias_hh_l0": rng.standard_normal(G * H),
          "readout.weight": rng.standard_normal((1, H)), "readout.bias": rng.standard_normal(1)}
    opts = {"convention": "torch"} if name == "gru" else {}
    cell = lwsim.make_cell(name, D, H, **opts)
    p = cell.params_from_torch(sd)
    x = rng.standard_normal((T, B, D))
    tr = cell.forward(p, x)
    h, c = np.zeros((B, H)), np.zeros((B, H))
    for t in range(T):
        if name == "gru":
            h = _torch_gru_step(sd, x[t], h)
        else:
            h, c = _torch_lstm_step(sd, x[t], h, c)
        np.testing.assert_allclose(tr.h[t + 1], h, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(tr.y[-1], h @ sd["readout.weight"].T + sd["readout.bias"], rtol=1e-13)
    back = cell.params_to_torch(p)
    np.testing.assert_array_equal(back["weight_ih_l0"], sd["weight_ih_l0"])
    np.testing.assert_array_equal(back["weight_hh_l0"], sd["weight_hh_l0"])
    if name == "gru":
        np.testing.assert_array_equal(back["bias_hh_l0"], sd["bias_hh_l0"])
    else:
        np.testing.assert_allclose(back["bias_ih_l0"] + back["bias_hh_l0"], sd["bias_ih_l0"] + sd["bias_hh_l0"])
    assert rel_err(cell.params_from_torch(back)["W_hn" if name == "gru" else "U_g"],
                   p["W_hn" if name == "gru" else "U_g"]) == 0


def test_params_from_torch_errors():
    cell = lwsim.make_cell("gru", 3, 4, convention="torch")
    with pytest.raises(ValueError, match="missing"):
        cell.params_from_torch({"weight_ih_l0": np.zeros((12, 3))})
    with pytest.raises(ValueError, match="weight_hh_l0"):
        cell.params_from_torch({"weight_ih_l0": np.zeros((12, 3)), "weight_hh_l0": np.zeros((12, 5)),
                                "bias_ih_l0": np.zeros(12), "bias_hh_l0": np.zeros(12)})
    with pytest.raises(ValueError, match="gru"):
        lwsim.make_cell("gru", 3, 4).params_from_torch({})


# ---------------------------------------------------------------- validation
def test_bad_cell_options():
    with pytest.raises(ValueError, match="name"):
        lwsim.make_cell("transformer", 2, 4)
    with pytest.raises(ValueError, match="n_hidden"):
        lwsim.make_cell("rnn", 2, 0)
    with pytest.raises(TypeError, match="n_in"):
        lwsim.make_cell("rnn", 2.5, 4)
    with pytest.raises(ValueError, match="readout"):
        lwsim.make_cell("rnn", 2, 4, readout="first")
    with pytest.raises(ValueError, match="dtype"):
        lwsim.make_cell("rnn", 2, 4, dtype="float16")
    with pytest.raises(ValueError, match="s must be"):
        lwsim.make_cell("constgate", 2, 4, s=0.0)
    with pytest.raises(ValueError, match="convention"):
        lwsim.make_cell("gru", 2, 4, convention="keras")
    with pytest.raises(ValueError, match="layernorm"):
        lwsim.make_cell("gru", 2, 4, convention="torch", layernorm=True)
    with pytest.raises(TypeError, match="colour"):
        lwsim.make_cell("rnn", 2, 4, colour="red")
    with pytest.raises(ValueError, match="scheme"):
        lwsim.make_cell("rnn", 2, 4).init_params(0, scheme="xavier")
    with pytest.raises(ValueError, match="s0"):
        lwsim.make_cell("diaggate", 2, 4).init_params(0, s0=1.0)


def test_bad_call_inputs():
    cell = lwsim.make_cell("diaggate", 2, 4)
    p = cell.init_params(0)
    x, y = random_data(cell, 5, 3, 0)
    with pytest.raises(ValueError, match="x must have shape"):
        cell.forward(p, x[:, :, :1])
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        cell.forward(p, x[0])
    with pytest.raises(ValueError, match="x contains NaN"):
        cell.forward(p, np.where(x > 1, np.nan, x))
    with pytest.raises(TypeError, match="x must be a real"):
        cell.forward(p, x.astype(complex))
    with pytest.raises(ValueError, match="missing \\['W_h'\\]"):
        cell.forward({k: v for k, v in p.items() if k != "W_h"}, x)
    with pytest.raises(ValueError, match="unexpected \\['W_z'\\]"):
        cell.forward({**p, "W_z": p["W_h"]}, x)
    with pytest.raises(ValueError, match="params\\['U_s'\\] must have shape"):
        cell.forward({**p, "U_s": p["W_x"]}, x)
    with pytest.raises(ValueError, match="params\\['b_s'\\] contains NaN"):
        cell.forward({**p, "b_s": np.full(4, np.inf)}, x)
    with pytest.raises(TypeError, match="params must be a dict"):
        cell.forward([1, 2], x)
    with pytest.raises(ValueError, match="y must have shape"):
        cell.loss_and_grad(p, x, y[:, :, :0])
    with pytest.raises(ValueError, match="y contains NaN"):
        cell.loss_and_grad(p, x, np.full_like(y, np.nan))
    with pytest.raises(ValueError, match="backend"):
        cell.forward(p, x, backend="jax")
    with pytest.raises(ValueError, match="mask"):
        cell.loss_and_grad(p, x, y, mask=np.ones(4, bool))
    with pytest.raises(ValueError, match="mask"):
        cell.loss_and_grad(p, x, y, mask=np.zeros(5, bool))
    with pytest.raises(ValueError, match="x must have T >= 1"):
        cell.forward(p, np.zeros((0, 3, 2)))
    with pytest.raises(ValueError, match="max_lag"):
        cell.lag_gradients(p, x, y, max_lag=-1)


# ---------------------------------------------------------------- hypothesis over shapes/options
@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["rnn", "constgate", "sharedgate", "diaggate", "gru", "gru-torch", "lstm"]),
       T=st.integers(1, 5), B=st.integers(1, 3), D=st.integers(1, 3), H=st.integers(1, 5),
       n_out=st.integers(1, 2), ln=st.booleans(), bias=st.booleans(),
       readout=st.sampled_from(["every", "last"]), seed=st.integers(0, 2**16))
def test_invariants_random_shapes(name, T, B, D, H, n_out, ln, bias, readout, seed):
    opts = {"bias": bias, "readout": readout}
    if name == "gru-torch":
        name, opts["convention"] = "gru", "torch"
    else:
        opts["layernorm"] = ln and H > 1
    cell = make((name, opts), n_in=D, n_hidden=H, n_out=n_out)
    p = random_params(cell, seed)
    x, y = random_data(cell, T, B, seed)
    loss, grads = cell.loss_and_grad(p, x, y)
    assert np.isfinite(loss) and all(np.isfinite(g).all() for g in grads.values())
    _, per_lag = cell.lag_gradients(p, x, y)
    # a key whose gradient cancels to ~1e−11 of the others (LayerNorm at H = 2) can only be held to
    # round-off of the whole gradient's scale, not of its own
    scale = max(np.abs(g).max() for g in grads.values())
    for k in p:
        s = sum(g[k] for g in per_lag)
        assert rel_err(s, grads[k]) <= 1e-10 or np.abs(s - grads[k]).max() <= 1e-13 * scale
    # directional derivative of L along a random direction == <grad, w>
    rng = np.random.default_rng(seed)
    w = {k: rng.standard_normal(v.shape) for k, v in p.items()}
    eps = 1e-6
    lp = cell.loss_and_grad({k: p[k] + eps * w[k] for k in p}, x, y)[0]
    lm = cell.loss_and_grad({k: p[k] - eps * w[k] for k in p}, x, y)[0]
    exact = sum(float((grads[k] * w[k]).sum()) for k in p)
    assert abs((lp - lm) / (2 * eps) - exact) <= 1e-6 * max(1.0, abs(exact))
    J = cell.jacobians(p, x)
    np.testing.assert_allclose(cell.jacobian_diagonal(p, x), np.diagonal(J, axis1=2, axis2=3), atol=1e-13)


def test_with_dtype_keeps_every_option_of_every_cell():
    assert len(VARIANTS) == 60          # 8 per cell and option value (GRU torch: no LayerNorm, 4)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    for name, opts in VARIANTS:
        c64 = lwsim.make_cell(name, 3, 4, 2, **opts)
        c32 = c64.with_dtype("float32")
        assert c32.dtype == np.float32 and c64.dtype == np.float64
        assert _options(c32) == _options(c64), (name, opts)
        back = c32.with_dtype("float64")
        assert _options(back) == _options(c64) and back.dtype == np.float64
        assert c32.param_shapes() == c64.param_shapes()
        p = c64.init_params(seed=1, scheme="normal", sigma_w=0.5)
        if name == "gru" and opts["bias"]:
            p = {k: v + 0.1 for k, v in p.items()}           # non-zero biases: torch vs cho differ
        # the same computation: the output of the cast cell equals the original's to float32 accuracy
        y64 = np.asarray(c64.forward(p, x).y)
        y32 = np.asarray(c32.forward({k: v.astype(np.float32) for k, v in p.items()}, x.astype(np.float32)).y)
        np.testing.assert_allclose(y32, y64, rtol=2e-5, atol=2e-6, err_msg=f"{name} {opts}")
