"""Tests of lwsim/backends/numba/lanes.py (laid out like the code: docs/testing.md).

The lanes kernels (train(fused="lanes"), docs/performance.md "Lanes kernels"): the same
mathematics as the step path in another summation order, so agreement to round-off, not bits:
  - float64: parameters, optimizer buffers and losses within 1e−12 relative of fused=False after a
    few steps (observed ≤ 1.3e−14 over the grid below, 10 steps);
  - float32: within 1e−4 relative of the largest entry of each array (observed ≤ 3.4e−6 after 10
    steps): a float32 sum of ~T·B products carries ~1e−6 relative round-off, which the optimizer's
    g/√v (Adam, RMSprop) can pass on at full size to a step;
determinism (the same bits twice), validation/checkpoints, both training modes, and the gradient
of one minibatch against the cell's own loss_and_grad (numba and NumPy reference) at 1e−12."""

import numpy as np
import pytest

import lwsim
from lwsim import tasks
from lwsim.backends.numba import lanes
from lwsim.train import train
from helpers import TRAINER_D, TRAINER_H, TRAINER_T, trainer_cell, trainer_data, trainer_task

pytest.importorskip("numba")

T, D, H = TRAINER_T, TRAINER_D, TRAINER_H
RTOL = {"float64": 1e-12, "float32": 1e-4}

CELLS = [("gru", {"convention": "torch"}), ("gru", {"convention": "torch", "bias": False}),
         ("gru", {}), ("lstm", {}), ("lstm", {"n_out": 2})]
OPTS = [("sgd", {"lr": 0.05}), ("momentum", {"lr": 0.02, "nesterov": True, "weight_decay": 1e-2}),
        ("rmsprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 1e-3}),
        ("adam", {"lr": 0.02, "amsgrad": True, "weight_decay": 1e-3}), ("adamw", {"lr": 0.02, "weight_decay": 1e-2})]


_task = trainer_task


_data, _cell = trainer_data, trainer_cell          # tests/helpers.py: the trainers' problem


def _rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = np.max(np.abs(a)) if a.size else 0.0
    return float(np.max(np.abs(a - b)) / scale) if scale > 0 else float(np.max(np.abs(a - b), initial=0.0))


def _assert_close(a, b, dtype):
    """Parameters, optimizer state, curves, checkpoints: within RTOL[dtype] (relative to each array's
    largest entry). Returns the largest relative difference seen."""
    tol, worst = RTOL[dtype], 0.0
    for k in a.params:
        assert b.params[k].dtype == a.params[k].dtype
        worst = max(worst, _rel(a.params[k], b.params[k]))
    assert a.opt_state["step"] == b.opt_state["step"]
    for k, st in a.opt_state["state"].items():
        assert set(st) == set(b.opt_state["state"][k])
        for s in st:
            worst = max(worst, _rel(st[s], b.opt_state["state"][k][s]))
    assert set(a.curves) == set(b.curves)
    for c in a.curves:
        assert len(a.curves[c]) == len(b.curves[c])
        for x, y in zip(a.curves[c], b.curves[c]):
            worst = max(worst, abs(x - y) / max(abs(x), 1e-300))
    assert sorted(a.checkpoints) == sorted(b.checkpoints)
    for s in a.checkpoints:
        for k in a.params:
            worst = max(worst, _rel(a.checkpoints[s][k], b.checkpoints[s][k]))
    assert worst <= tol, f"max relative difference {worst:.3g} > {tol}"
    return worst


def _both(cell, params, data, **kw):
    kw = dict(dict(backend="numba", seed=4, progress=False), **kw)
    return train(cell, params, data, fused=False, **kw), train(cell, params, data, fused="lanes", **kw)


# float64 (1e−12) checks every family's arithmetic; float32 runs for the GRU "torch" family only: its
# kernels are the same code at another dtype, and each (family, dtype) costs ≈ 20–35 s of numba
# compilation on a cold cache (the suite's budget)
_GRID = [(c, d) for c in CELLS for d in ("float32", "float64") if d == "float64" or c[1].get("convention") == "torch"]


@pytest.mark.parametrize("opt,hyper", OPTS, ids=[o[0] for o in OPTS])
@pytest.mark.parametrize("name,opts,dtype", [(c[0], c[1], d) for c, d in _GRID],
                         ids=[f"{c[0]}-{'-'.join(map(str, c[1].values())) or 'default'}-{d}" for c, d in _GRID])
def test_lanes_equal_the_step_path_to_round_off(name, opts, opt, hyper, dtype):
    cell = _cell(name, opts, dtype)
    ds = _data(cell.n_out)                                 # 21 = 2 × 8 + 5: a ragged last batch
    p0 = cell.init_params(seed=1, scheme="torch")
    clip = 0.1 if opt in ("adamw", "momentum", "sgd") else None
    a, b = _both(cell, p0, ds, optimizer=opt, optimizer_kwargs=hyper, steps=10, batch_size=8, clip=clip,
                 val_every=4, best_checkpoint=True, checkpoints=[3, 7])
    if clip:
        assert max(a.curves["grad_norm"]) > clip          # the clip is active
    _assert_close(a, b, dtype)
    assert (a.best_step, len(b.checkpoints)) == (b.best_step, 2)


@pytest.mark.parametrize("name,opts", CELLS[:4], ids=["torch", "torch-nobias", "cho", "lstm"])
def test_both_modes_mask_and_readout_last(name, opts):
    cell = _cell(name, opts, "float64")
    p0 = cell.init_params(seed=0)
    # mode A: epochs, a ragged last batch each epoch, no clip
    _assert_close(*_both(cell, p0, _task().dataset(n_train=20, n_val=6, seed=1), optimizer="adamw",
                         optimizer_kwargs={"lr": 0.01}, epochs=2, batch_size=6), "float64")
    # mode B: fresh batches each step, a mask, checkpoints, no validation
    mask = np.arange(T) % 3 != 0
    _assert_close(*_both(cell, p0, _task(), optimizer="sgd", optimizer_kwargs={"lr": 0.1}, steps=7, batch_size=5,
                         validate=False, mask=mask, clip=1.0, checkpoints=[0, 4]), "float64")
    # readout "last": targets at the last step only
    last = lwsim.make_cell(name, D, H, 1, readout="last", **opts)
    task = tasks.make("multilag", T=T, D=D, seed=3, lags=(1, 3), coefs=(0.8, 0.5), fill="running")
    _assert_close(*_both(last, last.init_params(seed=0), task.dataset(16, 4, seed=0), optimizer="adam",
                         optimizer_kwargs={"lr": 0.01}, steps=4, batch_size=8), "float64")


@pytest.mark.parametrize("name,opts", CELLS[:4], ids=["torch", "torch-nobias", "cho", "lstm"])
def test_the_gradient_of_one_minibatch_is_the_cells(name, opts):
    """loss and every gradient array against the cell's numba and NumPy-reference loss_and_grad."""
    cell = _cell(name, opts, "float64")
    p = cell.init_params(seed=3, scheme="torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, 7, D))
    y = rng.standard_normal((T, 7, 1))
    mask = np.arange(T) % 4 != 1
    L, g = lanes.loss_and_grad(cell, p, x, y, mask)
    for backend in ("numba", "numpy"):
        L0, g0 = cell.loss_and_grad(p, x, y, backend=backend, mask=mask)
        assert abs(L - L0) <= 1e-12 * abs(L0)
        assert set(g) == set(g0)
        for k in g0:
            assert _rel(g0[k], g[k]) <= 1e-12, (backend, k, _rel(g0[k], g[k]))


def test_same_seed_same_bits():
    cell = lwsim.make_cell("gru", D, H, 1, convention="torch", dtype="float32")
    ds = _task().dataset(n_train=16, n_val=4, seed=0)
    kw = dict(optimizer="adam", steps=4, batch_size=8, backend="numba", fused="lanes", progress=False)
    a, b = (train(cell, cell.init_params(seed=0), ds, seed=5, **kw) for _ in range(2))
    for k in a.params:
        np.testing.assert_array_equal(a.params[k], b.params[k])
    assert a.curves == b.curves


def test_covers():
    assert lanes.covers(lwsim.make_cell("gru", D, H, 1))[0]
    assert lanes.covers(lwsim.make_cell("lstm", D, H, 1))[0]
    ok, why = lanes.covers(lwsim.make_cell("gru", D, H, 1, layernorm=True))
    assert not ok and "layernorm" in why
    ok, why = lanes.covers(lwsim.make_cell("rnn", D, H, 1))
    assert not ok and "no lanes kernels" in why


def test_pays_is_advice_for_small_h_and_wide_batches():
    gru8 = lwsim.make_cell("gru", 4, 8, 1, convention="torch", dtype="float32")
    assert lanes.pays(gru8, 16, 32) and lanes.pays(gru8, 128, 25)        # 25 pads to 32 lanes
    assert lanes.pays(lwsim.make_cell("lstm", 4, 8, 1), 16, 64)
    assert not lanes.pays(gru8, 16, 16)                                  # 16 lanes: about even
    assert not lanes.pays(lwsim.make_cell("gru", 4, 16, 1), 128, 16)     # the behaviour size: slower
    assert not lanes.pays(lwsim.make_cell("gru", 4, 8, 1, layernorm=True), 16, 32)   # not covered
    assert not lanes.pays(lwsim.make_cell("rnn", 4, 8, 1), 16, 32)


def test_train_runs_the_lanes_kernels(monkeypatch):
    """fused="lanes" goes through LanesSteps (fused=True does not): the round-off tests above would
    also pass on the bit-identical fused kernels."""
    calls = []
    run = lanes.LanesSteps.run

    def spy(self, *a):
        calls.append(type(self).__name__)
        return run(self, *a)
    monkeypatch.setattr(lanes.LanesSteps, "run", spy)
    cell = lwsim.make_cell("lstm", D, H, 1)
    kw = dict(optimizer="sgd", steps=3, batch_size=8, backend="numba", progress=False, val_every=2)
    train(cell, cell.init_params(seed=0), _task().dataset(16, 4, seed=0), fused=True, **kw)
    assert calls == []
    train(cell, cell.init_params(seed=0), _task().dataset(16, 4, seed=0), fused="lanes", **kw)
    assert calls == ["LanesSteps", "LanesSteps"]
