"""Tests of lwsim/backends/numba/fused.py (laid out like the code: docs/testing.md).

The fused trainer (lwsim/backends/numba/fused.py, docs/experiments.md §5.2): bit for bit the
step-by-step path of train() for every cell × option × optimizer × dtype, across call boundaries,
in both training modes; its pieces (NumPy's pairwise sum, the index maps); its errors, which are
the step path's."""


import numpy as np
import pytest

import lwsim
from lwsim import optim, tasks
from lwsim.backends.numba import fused
from lwsim.train import train
from helpers import TRAINER_D, TRAINER_H, TRAINER_T, trainer_cell, trainer_data, trainer_task


pytest.importorskip("numba")


T, D, H = TRAINER_T, TRAINER_D, TRAINER_H


# every cell and option the studies use, each with an optimizer (so each optimizer meets several
# families) — (name, make_cell options, optimizer, its hyper-parameters)
CASES = [
    ("rnn", {}, "sgd", {"lr": 0.05}),
    ("rnn", {"layernorm": True, "bias": False}, "momentum", {"lr": 0.02, "nesterov": True, "weight_decay": 1e-2}),
    ("constgate", {"layernorm": True, "s": 0.3}, "adamw", {"lr": 0.02, "weight_decay": 1e-2}),
    ("sharedgate", {"layernorm": True}, "adam", {"lr": 0.02, "amsgrad": True, "weight_decay": 1e-3}),
    ("sharedgate", {}, "rmsprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 1e-3}),
    ("diaggate", {"layernorm": True}, "adamw", {"lr": 0.02, "weight_decay": 1e-2}),
    ("diaggate", {"bias": False}, "sgd", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1}),
    ("gru", {"layernorm": True}, "adamw", {"lr": 0.02, "weight_decay": 1e-2}),
    ("gru", {}, "rmsprop", {"lr": 0.01}),
    ("gru", {"convention": "torch"}, "adamw", {"lr": 0.02, "weight_decay": 1e-2}),
    ("gru", {"convention": "torch", "bias": False}, "adam", {"lr": 0.02}),
    ("lstm", {"layernorm": True}, "adamw", {"lr": 0.02, "weight_decay": 1e-2}),
    ("lstm", {"n_out": 2}, "momentum", {"lr": 0.02}),
]


_task = trainer_task


_data, _cell = trainer_data, trainer_cell          # tests/helpers.py: the trainers' problem


def _count_calls(monkeypatch):
    """A list that records the steps of every fused call (FusedSteps.run) from now on."""
    calls = []
    run = fused.FusedSteps.run

    def spy(self, X, Y, idx, nbs):
        calls.append(len(nbs))
        return run(self, X, Y, idx, nbs)
    monkeypatch.setattr(fused.FusedSteps, "run", spy)
    return calls


def _both(cell, params, data, **kw):
    """The same training through the step path and the fused trainer."""
    kw = dict(dict(backend="numba", seed=4, progress=False), **kw)
    return train(cell, params, data, fused=False, **kw), train(cell, params, data, fused=True, **kw)


def _assert_same(a, b):
    """Same parameters, optimizer state, curves, checkpoints and best point, bit for bit."""
    for k in a.params:
        assert a.params[k].dtype == b.params[k].dtype
        np.testing.assert_array_equal(a.params[k], b.params[k], err_msg=k)
    assert a.opt_state["step"] == b.opt_state["step"]
    for k, st in a.opt_state["state"].items():
        assert set(st) == set(b.opt_state["state"][k])
        for s in st:
            np.testing.assert_array_equal(st[s], b.opt_state["state"][k][s], err_msg=f"{k}.{s}")
    assert a.curves == b.curves                         # lists of Python floats: exact equality
    assert sorted(a.checkpoints) == sorted(b.checkpoints)
    for s in a.checkpoints:
        for k in a.params:
            np.testing.assert_array_equal(a.checkpoints[s][k], b.checkpoints[s][k])
            sa, sb = a.checkpoint_opt_states[s]["state"][k], b.checkpoint_opt_states[s]["state"][k]
            assert set(sa) == set(sb)
            for buf in sa:
                np.testing.assert_array_equal(sa[buf], sb[buf])
    assert (a.best_step, a.best_val_mse) == (b.best_step, b.best_val_mse)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,opts,opt,hyper", CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_fused_equals_the_step_path_bit_for_bit(name, opts, opt, hyper, dtype):
    cell = _cell(name, opts, dtype)
    ds = _data(cell.n_out, n_train=21, n_val=9)           # 21 = 2 × 8 + 5: a ragged last batch
    p0 = cell.init_params(seed=1, scheme="torch")
    a, b = _both(cell, p0, ds, optimizer=opt, optimizer_kwargs=hyper, steps=14, batch_size=8, clip=0.1,
                 val_every=4, best_checkpoint=True, checkpoints=[3, 9])
    assert a.n_steps == 14 and max(a.curves["grad_norm"]) > 0.1   # the clip is active
    _assert_same(a, b)


def test_fused_equals_the_step_path_in_every_mode_and_option():
    cell = lwsim.make_cell("gru", D, H, 1, dtype="float32", layernorm=True)
    p0 = cell.init_params(seed=0)
    ds = _task().dataset(n_train=20, n_val=6, seed=1)
    # mode A: epochs, the last batch of each epoch smaller, validation per epoch, no clip
    _assert_same(*_both(cell, p0, ds, optimizer="adamw", optimizer_kwargs={"lr": 0.01}, epochs=3, batch_size=6))
    # mode B: fresh batches from the task every step, a mask, no validation
    mask = np.arange(T) % 3 != 0
    _assert_same(*_both(cell, p0, _task(), optimizer="sgd", optimizer_kwargs={"lr": 0.1}, steps=9, batch_size=5,
                        validate=False, mask=mask, clip=1.0, checkpoints=[0, 4]))
    # readout "last": targets at the last step only
    last = lwsim.make_cell("lstm", D, H, 1, readout="last")
    task = tasks.make("multilag", T=T, D=D, seed=3, lags=(1, 3), coefs=(0.8, 0.5), fill="running")
    _assert_same(*_both(last, last.init_params(seed=0), task.dataset(16, 4, seed=0), optimizer="adam",
                        optimizer_kwargs={"lr": 0.01}, steps=6, batch_size=8))


def test_several_chunks_are_summed_as_the_thread_pool_sums_them(monkeypatch):
    """Three chunks of uneven size (and two for the ragged last batch): the fused trainer runs them
    one after the other and adds their partial gradients in chunk order, as the step path does
    after running them in parallel."""
    from lwsim.backends.numba import threads
    monkeypatch.setattr(threads, "n_chunks", lambda B: 3 if B >= 16 else 2)
    assert fused.chunks(17) == [(0, 5), (5, 11), (11, 17)]
    for name, opts in (("gru", {"layernorm": True}), ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True}),
                       ("sharedgate", {"layernorm": True})):
        cell = lwsim.make_cell(name, D, H, 1, dtype="float32", **opts)
        ds = _task().dataset(n_train=40, n_val=6, seed=1)            # batches of 17, 17, then 6
        _assert_same(*_both(cell, cell.init_params(seed=0, scheme="torch"), ds, optimizer="adamw",
                            optimizer_kwargs={"lr": 0.02}, steps=5, batch_size=17, clip=0.2))


def test_the_call_boundaries_do_not_change_the_bits(monkeypatch):
    """Calls of 2 steps (SEGMENT_STEPS) give the same result as one call for the whole training,
    and as the step path: the state crosses each boundary exactly (the Adam step count too)."""
    cell = lwsim.make_cell("diaggate", D, H, 1, dtype="float32", layernorm=True)
    ds = _task().dataset(n_train=24, n_val=6, seed=1)
    p0 = cell.init_params(seed=0)
    kw = dict(backend="numba", seed=0, progress=False, optimizer="adamw", optimizer_kwargs={"lr": 0.02},
              steps=11, batch_size=8, clip=0.3, validate=False)
    whole = train(cell, p0, ds, fused=True, **kw)
    calls = _count_calls(monkeypatch)
    monkeypatch.setattr(fused, "SEGMENT_STEPS", 2)
    cut = train(cell, p0, ds, fused=True, **kw)
    assert calls == [2, 2, 2, 2, 2, 1]
    _assert_same(whole, cut)
    _assert_same(whole, train(cell, p0, ds, fused=False, **kw))


def test_exits_only_where_train_must_look(monkeypatch):
    """One call per stretch between validation points and checkpoints: steps 1–3 (checkpoint 3),
    4 (validation at 4), 5–7 (checkpoint 7), 8 (validation and the end)."""
    cell = lwsim.make_cell("rnn", D, H, 1)
    calls = _count_calls(monkeypatch)
    train(cell, cell.init_params(seed=0), _task().dataset(16, 4, seed=0), optimizer="sgd",
          optimizer_kwargs={"lr": 0.01}, steps=8, batch_size=4, val_every=4, checkpoints=[3, 7], backend="numba",
          fused=True, progress=False)
    assert calls == [3, 1, 3, 1]


def test_an_optimizer_instance_is_trained_in_place_as_by_the_step_path():
    cell = lwsim.make_cell("lstm", D, H, 1, dtype="float32")
    ds = _task().dataset(n_train=16, n_val=4, seed=0)
    out = []
    for fz in (False, True):
        p = cell.init_params(seed=0)
        opt = optim.make("adamw", p, lr=0.01)
        res = train(cell, p, ds, optimizer=opt, steps=5, batch_size=8, backend="numba", fused=fz, progress=False)
        assert res.params is p and opt.step_count == 5
        out.append((p, opt.state_dict()))
    for k in out[0][0]:
        np.testing.assert_array_equal(out[0][0][k], out[1][0][k])
        np.testing.assert_array_equal(out[0][1]["state"][k]["v"], out[1][1]["state"][k]["v"])


def test_same_seed_same_bits_and_another_seed_other_bits():
    cell = lwsim.make_cell("gru", D, H, 1, convention="torch")
    ds = _task().dataset(n_train=16, n_val=4, seed=0)
    kw = dict(optimizer="adam", steps=4, batch_size=8, backend="numba", fused=True, progress=False)
    a, b = (train(cell, cell.init_params(seed=0), ds, seed=5, **kw) for _ in range(2))
    c = train(cell, cell.init_params(seed=0), ds, seed=6, **kw)
    _assert_same(a, b)
    assert not np.array_equal(a.params["W_hr"], c.params["W_hr"])        # another minibatch order


# ----------------------------------------------------------------------------------------------
# pairwise_sum
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", list(range(0, 300)) + [511, 512, 1000, 4095, 8192, 8193, 70001])
def test_pairwise_sum_is_numpys_sum(n):
    a = np.random.default_rng(n).standard_normal(n) * 10.0 ** np.random.default_rng(n + 1).uniform(-3, 3, n)
    assert fused.pairwise_sum(a) == np.sum(a)                             # the same bits, not close


def test_pairwise_sum_is_not_a_running_sum():
    """The order matters: for these numbers a left-to-right sum differs from np.sum (so the test
    above would catch a fused trainer that summed in order)."""
    a = np.array([1e16, 1.0, -1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0])
    running = 0.0
    for v in a:
        running += v
    assert np.sum(a) == fused.pairwise_sum(a) != running


# ----------------------------------------------------------------------------------------------
# family
# ----------------------------------------------------------------------------------------------


def test_a_cell_without_kernels_is_named_not_a_key_error(monkeypatch):
    """A cell kind that the numba backend (or the fused trainer) has no kernels for fails with an
    error naming the cell and the backend, not a KeyError."""
    cell = lwsim.make_cell("lstm", D, H, 1)
    x = np.zeros((T, 2, D))
    monkeypatch.setattr(cell.kind, "numba_kernels", None)
    with pytest.raises(ValueError, match="backend 'numba' has no kernels for cell 'lstm'"):
        cell.forward(cell.init_params(), x, backend="numba")
    monkeypatch.setattr(cell, "name", "elman")
    with pytest.raises(ValueError, match="fused trainer has no kernels for cell 'elman'"):
        fused.family(cell)


def test_fresh_batches_go_through_the_fused_loop_in_calls_bounded_by_their_size(monkeypatch):
    """With a Task (fresh batches every step) the batches of a call are drawn first and held in
    memory: SEGMENT_VALUES bounds their input values (here 2 steps of 12 × 5 × 3 = 180 values);
    a Dataset's calls are bounded by SEGMENT_STEPS alone. Same bits as the step path either way."""
    cell = lwsim.make_cell("gru", D, H, 1, layernorm=True)
    calls = _count_calls(monkeypatch)
    monkeypatch.setattr(fused, "SEGMENT_VALUES", 400)
    kw = dict(optimizer="adam", steps=5, batch_size=5, validate=False, backend="numba", progress=False, seed=1)
    a = train(cell, cell.init_params(seed=0), _task(), fused=True, **kw)
    assert calls == [2, 2, 1]
    _assert_same(a, train(cell, cell.init_params(seed=0), _task(), fused=False, **kw))
    calls.clear()
    train(cell, cell.init_params(seed=0), _task().dataset(n_train=10, seed=0), fused=True, **kw)
    assert calls == [5]


def test_non_finite_rows_raise_where_the_step_path_meets_them():
    """A NaN in a training row that the fourth minibatch draws: both paths train steps 1–3 (one call
    each: validation every step), then raise at step 4 with the same message; stopped at step 3, the
    row is never drawn and both train to the end, same bits."""
    cell = lwsim.make_cell("gru", D, H, 1)
    ds = _task().dataset(n_train=32, n_val=4, seed=0)
    ss = np.random.SeedSequence([7, 0x7EA1]).spawn(3)[0]              # train's shuffling stream, seed 7
    fourth = np.random.default_rng(ss).permutation(32)[24]             # a row of the fourth minibatch
    ds.x_train[2, fourth, 0] = np.nan
    kw = dict(batch_size=8, backend="numba", progress=False, seed=7, val_every=1)
    msgs = []
    for fz in (False, True):
        with pytest.raises(ValueError) as e:
            train(cell, cell.init_params(seed=0), ds, steps=5, fused=fz, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "x contains NaN or Inf"
    a, b = (train(cell, cell.init_params(seed=0), ds, steps=3, fused=fz, **kw) for fz in (False, True))
    assert b.n_steps == 3
    _assert_same(a, b)


# ----------------------------------------------------------------------------------------------
# _maps
# ----------------------------------------------------------------------------------------------


def test_index_maps_pick_every_parameter_and_gradient_once():
    """omap covers the parameters each operand needs, gmap reads every gradient from a distinct
    reduced value — for the torch GRU, where b_hr/b_hz share their sums with b_ir/b_iz."""
    cell = lwsim.make_cell("gru", D, H, 1, convention="torch")
    # private: the fused trainer's index maps; train() shows them only through whole runs (tested above)
    ops, omap, gmap, nred = fused._maps(cell, cell.param_shapes())
    n = sum(int(np.prod(s)) for s in cell.param_shapes().values())
    assert gmap.shape == (n,) and 0 <= gmap.min() and gmap.max() < nred
    assert set(omap[omap >= 0]) == set(range(n))           # every parameter reaches the kernels
    keys = list(cell.param_shapes())
    offs = np.cumsum([0] + [int(np.prod(s)) for s in cell.param_shapes().values()])
    sl = {k: gmap[offs[i]:offs[i + 1]] for i, k in enumerate(keys)}
    np.testing.assert_array_equal(sl["b_hr"], sl["b_ir"])   # the same sums, as assemble_torch copies them
    assert len(set(sl["W_hr"]) & set(sl["W_hz"])) == 0


# ------------------------------------------------------------------------------------------ errors
def test_a_diverging_loss_raises_as_in_the_step_path():
    cell = lwsim.make_cell("rnn", D, H, 1)
    ds = _task().dataset(n_train=16, n_val=4, seed=0)
    msgs = []
    for fz in (False, True):
        with pytest.raises(FloatingPointError) as e:
            train(cell, cell.init_params(seed=0), ds, optimizer="sgd", optimizer_kwargs={"lr": 1e150}, steps=10,
                  batch_size=8, backend="numba", fused=fz, progress=False, validate=False)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "at step" in msgs[0]


def test_non_finite_data_raises_as_in_the_step_path():
    cell = lwsim.make_cell("gru", D, H, 1)
    ds = _task().dataset(n_train=16, n_val=4, seed=0)
    ds.x_train[3, 5, 1] = np.nan
    msgs = []
    for fz in (False, True):
        with pytest.raises(ValueError) as e:
            train(cell, cell.init_params(seed=0), ds, steps=4, batch_size=8, backend="numba", fused=fz,
                  progress=False, validate=False)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "x" in msgs[0]


def test_fused_argument_errors():
    cell = lwsim.make_cell("rnn", D, H, 1, dtype="float32")
    ds = _task().dataset(n_train=16, n_val=4, seed=0)
    kw = dict(steps=2, batch_size=8, progress=False)
    with pytest.raises(ValueError, match="backend"):
        train(cell, cell.init_params(seed=0), ds, backend="numpy", fused=True, **kw)
    with pytest.raises(TypeError, match="fused"):
        train(cell, cell.init_params(seed=0), ds, backend="numba", fused="yes", **kw)
    p64 = {k: v.astype(np.float64) for k, v in cell.init_params(seed=0).items()}
    with pytest.raises(ValueError, match="dtype"):
        train(cell, p64, ds, backend="numba", fused=True, **kw)
    # fused=None falls back to the step path there (it keeps float64 copies): the same result as fused=False
    a = train(cell, p64, ds, backend="numba", fused=None, **kw)
    b = train(cell, p64, ds, backend="numba", fused=False, **kw)
    _assert_same(a, b)


# ----------------------------------------------------------------------------------------------
# FusedSteps
# ----------------------------------------------------------------------------------------------


def test_a_stopped_call_is_redone_by_the_step_path(monkeypatch):
    """A call that stops with a status hands that step to the step path, which raises; if it does
    not (the two paths disagree), train says so instead of going on."""
    cell = lwsim.make_cell("rnn", D, H, 1)
    ds = _task().dataset(n_train=16, n_val=4, seed=0)

    def stop(self, X, Y, idx, nbs):
        return np.zeros(len(nbs)), np.zeros(len(nbs)), fused.BAD_GRAD, 0
    monkeypatch.setattr(fused.FusedSteps, "run", stop)
    with pytest.raises(AssertionError, match=r"\bfused trainer stopped\b.*\bstep 1\b"):
        train(cell, cell.init_params(seed=0), ds, steps=3, batch_size=8, backend="numba", fused=True,
              progress=False, validate=False)


@pytest.mark.parametrize("what,status", [("params", fused.BAD_PARAMS), ("target", fused.BAD_LOSS),
                                         ("input", fused.BAD_GRAD)])
def test_the_compiled_loop_stops_at_the_first_non_finite_value(what, status):
    """Non-finite parameters stop a step before it starts; a non-finite loss (an infinite target)
    or gradient (an infinite input: σ and tanh saturate, so the loss stays finite but ∞·0 enters
    the gradient) stops it before the update: the steps before it done, its parameters kept."""
    cell = lwsim.make_cell("gru", D, H, 1)
    p = cell.init_params(seed=0)
    opt = optim.make("adam", p, lr=0.01)
    from lwsim.backends.numba.readout import loss_weights
    run = fused.FusedSteps(cell, p, opt, 1.0, loss_weights(cell, T, None), 4)
    ds = _task().dataset(n_train=12, seed=0)
    X, Y = fused.full_arrays(cell, ds.x_train, ds.y_train)
    I, nbs = fused.index_matrix([np.arange(0, 4), np.arange(4, 8), np.arange(8, 12)], 4)
    X, Y = X.copy(), Y.copy()
    if what == "params":
        run.theta[:] = np.inf
    elif what == "target":
        Y[0, 9, 0] = np.inf                                   # a row of the third batch
    else:
        X[0, 9, 0] = np.inf
    before = run.theta.copy()
    losses, norms, st, k = run.run(X, Y, I, nbs)
    assert st == status
    assert k == (0 if what == "params" else 2) and opt.step_count == k
    if what != "params":
        assert np.isfinite(losses[:2]).all() and (norms[:2] > 0).all()
        assert np.isfinite(losses[2]) == (what == "input") and not np.isfinite(norms[2]) or what == "target"
        assert not np.array_equal(run.theta, before)          # two updates happened
        assert np.isfinite(run.theta).all()                   # not the third
        np.testing.assert_array_equal(p["W_z"].reshape(-1), run.theta[:p["W_z"].size])   # synced back


# ----------------------------------------------------------------------------------------------
# pays
# ----------------------------------------------------------------------------------------------


def test_the_automatic_choice(monkeypatch):
    cell = lwsim.make_cell("gru", 4, 8, 1)
    assert fused.pays(cell, 16, 32)                                    # one chunk (or tiny)
    monkeypatch.setattr(fused, "chunks", lambda B: [(0, B // 2), (B // 2, B)])
    assert fused.pays(cell, 16, 32)                                    # 16·32·8 = 4096 ≤ 2¹⁶: small
    assert not fused.pays(lwsim.make_cell("gru", 4, 32, 1), 256, 32)   # two chunks of a large step
    assert fused.pays(lwsim.make_cell("gru", 4, 32, 1), 64, 32)        # 64·32·32 = 2¹⁶
