"""Tests of lwsim/train.py (laid out like the code: docs/testing.md).

Training loop (docs/experiments.md §5.2): modes A/B, validation, checkpoints, best-checkpoint restore,
determinism, save/load round trip, errors; and real cells learning multilag and adding.

Tests that kill the surviving mutants of mutmut on lwsim/train.py (issue 32, docs/testing.md).

A linear stand-in cell ŷ = x Wᵀ + b with constant inputs makes every number of a run hand-computable:
with x = 1, y = 0, one parameter pair (w, b) and SGD at lr = 1/8, s = w + b halves at every step
(loss s², gradient (2s, 2s), norm 2√2·|s|). Each test pins such a number, a documented construction
(the seeds' SeedSequence children, the schedule) or a documented property; none compares the code
with itself.

Casts and copies keep every option (docs/cells.md §1.9, docs/experiments.md §5.2, docs/analyze.md):
``Cell.with_dtype`` over every cell and every option (s, convention, read-out, LayerNorm, bias),
``TrainResult.astype`` over every optimizer with non-default hyper-parameters and checkpoints, and
the ``python -m lwsim.analyze`` loader (weights written by lwsim, read back into the cell the CLI
builds) over every cell and option it can express.

Training in float32 (as PyTorch's default dtype), diagnostics in float64 on the cast weights
(docs/experiments.md §5.2–5.3): deterministic, equal to the float64 training to float32 accuracy,
and cast once, exactly."""


from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re

import numpy as np
import pytest

import lwsim
from lwsim import optim, tasks, train as ltrain
from lwsim.train import TrainResult, evaluate, load_run, save_run, train


class _Trace:
    def __init__(self, y):
        self.y = y


class FIRCell:
    """Stand-in cell: ŷ_t = Σ_{l<L} W[:, l·D:(l+1)·D] x_{t−l} + b (a linear FIR filter), exact
    MSE gradient. Same API as lwsim cells (forward/loss_and_grad/readout/n_in)."""

    name = "fir"

    def __init__(self, n_in, L=6, n_out=1, readout="every"):
        self.n_in, self.L, self.n_out, self.readout = n_in, L, n_out, readout

    def init_params(self, seed=0):
        rng = np.random.default_rng(seed)
        return {"W": 0.1 * rng.standard_normal((self.n_out, self.L * self.n_in)), "b": np.zeros(self.n_out)}

    def _features(self, x):
        T, B, D = x.shape
        f = np.zeros((T, B, self.L * D))
        for lag in range(self.L):
            f[lag:, :, lag * D:(lag + 1) * D] = x[: T - lag]
        return f

    def forward(self, params, x, backend="numpy"):
        return _Trace(self._features(x) @ params["W"].T + params["b"])

    def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
        f = self._features(x)
        err = f @ params["W"].T + params["b"] - y
        if self.readout == "last":
            f, err = f[-1:], err[-1:]
        elif mask is not None:
            f, err = f[mask], err[mask]
        n = err.size
        loss = float(np.sum(err ** 2) / n)
        gW = 2.0 / n * err.reshape(-1, self.n_out).T @ f.reshape(-1, f.shape[-1])
        gb = 2.0 / n * err.reshape(-1, self.n_out).sum(axis=0)
        return loss, {"W": gW, "b": gb}


def _multilag(T=20, D=3, seed=1):
    return tasks.make("multilag", T=T, D=D, lags=(1, 4), coefs=(1.0, 0.5), sigma_y=0.1, seed=seed)


def _same_result(a: TrainResult, b: TrainResult):
    assert a.curves == b.curves
    assert a.params.keys() == b.params.keys()
    for k in a.params:
        np.testing.assert_array_equal(a.params[k], b.params[k])
    for k in a.opt_state["state"]:
        for s in a.opt_state["state"][k]:
            np.testing.assert_array_equal(a.opt_state["state"][k][s], b.opt_state["state"][k][s])
    assert a.opt_state["step"] == b.opt_state["step"] and a.opt_state["hyper"] == b.opt_state["hyper"]
    assert sorted(a.checkpoints) == sorted(b.checkpoints)
    for s in a.checkpoints:
        for k in a.checkpoints[s]:
            np.testing.assert_array_equal(a.checkpoints[s][k], b.checkpoints[s][k])


# ---- real cells ----------------------------------------------------------------------------------
HAVE_CELLS = hasattr(lwsim, "make_cell")


CELLS = list(getattr(lwsim, "CELL_NAMES", ("rnn", "constgate", "sharedgate", "diaggate", "gru", "lstm")))


SQ2 = math.sqrt(2.0)


class LinCell:
    """ŷ_t = x_t Wᵀ + b, exact MSE gradient over the counted elements (readout / mask)."""

    name = "lin"

    def __init__(self, n_in=1, n_out=1, readout="every", dtype=None):
        self.n_in, self.n_out, self.readout, self.dtype = n_in, n_out, readout, dtype
        self.calls = []

    def params(self, w=1.0, b=0.0):
        return {"W": np.full((self.n_out, self.n_in), float(w)), "b": np.full(self.n_out, float(b))}

    def forward(self, params, x, backend="numpy"):
        return _Trace(x @ params["W"].T + params["b"])

    def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
        self.calls.append((x.copy(), y.copy(), mask, backend))
        err = x @ params["W"].T + params["b"] - y
        xs = x
        if self.readout == "last":
            xs, err = x[-1:], err[-1:]
        elif mask is not None:
            xs, err = x[mask], err[mask]
        n = err.size
        loss = np.float64(np.sum(err ** 2) / n)        # a NumPy scalar, as the real cells return
        gW = 2.0 / n * err.reshape(-1, self.n_out).T @ xs.reshape(-1, self.n_in)
        gb = 2.0 / n * err.reshape(-1, self.n_out).sum(axis=0)
        return loss, {"W": gW, "b": gb}


def _ones(T, B, D=1, val=None):
    """x = 1, y = 0 for training; validation x = 1 with targets ``val`` (one per sequence)."""
    x, y = np.ones((T, B, D)), np.zeros((T, B, 1))
    if val is None:
        return tasks.Dataset(x, y)
    v = np.asarray(val, float)
    yv = np.broadcast_to(v[None, :, None], (T, len(v), 1)).copy()
    return tasks.Dataset(x, y, np.ones((T, len(v), D)), yv)


class OnesTask(tasks.Task):
    """A mode-B task whose batches are x = 1, y = 0 (T steps, D = 1); records each draw's B and
    the first uniform of the generator it was given."""

    def __init__(self, T=2, name="multilag", fill="zero"):
        super().__init__(name, T, 1, 0, np.dtype("float64"), fill, {})
        self.draws = []

    def batch(self, B, rng):
        self.draws.append((B, rng.random()))
        return np.ones((self.T, B, 1)), np.zeros((self.T, B, 1))


def _run(cell=None, data=None, **kw):
    cell = cell or LinCell()
    kw.setdefault("optimizer", "sgd")
    kw.setdefault("optimizer_kwargs", {"lr": 0.125})
    kw.setdefault("progress", False)
    return train(cell, cell.params(), data if data is not None else _ones(2, 2, val=[0.0, 1.0]), **kw)


# ---------------------------------------------------------------------------- evaluate
def _xy_every():
    # pred = 2x + 0.5 on x = [[1, 0, -1], [2, 1, 0]]: [[2.5, 0.5, -1.5], [4.5, 2.5, 0.5]]
    x = np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])[:, :, None]
    y = np.array([[1.5, 1.5, -2.5], [4.0, 3.0, 1.0]])[:, :, None]   # diffs [1, -1, 1], [.5, -.5, -.5]
    return LinCell(), {"W": np.array([[2.0]]), "b": np.array([0.5])}, x, y


# ---------------------------------------------------------------------------- errors
def _err(**kw):
    return lambda: _run(**kw)


# ---------------------------------------------------------------------------- save / load
def _small_run(**kw):
    return _run(data=_ones(2, 2, val=[0.0, 1.0]), optimizer="adam", optimizer_kwargs={"lr": 0.125},
                epochs=2, batch_size=2, checkpoints=(0, 2), **kw)


class _SpyBar:
    made = []

    def __init__(self, **kw):
        self.kw, self.calls = kw, []
        _SpyBar.made.append(self)

    def set_postfix(self, **kw):
        self.calls.append(("postfix", kw))

    def update(self, n):
        self.calls.append(("update", n))

    def refresh(self):
        self.calls.append(("refresh",))

    def close(self):
        self.calls.append(("close",))


class _Counting(LinCell):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.fwd = []

    def forward(self, params, x, backend="numpy"):
        self.fwd.append((x.shape[1], backend))
        return super().forward(params, x)


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


OPTIMIZERS = [("sgd", {"lr": 0.02, "momentum": 0.5, "dampening": 0.1, "weight_decay": 1e-3, "nesterov": False}),
              ("momentum", {"lr": 0.01, "momentum": 0.7, "nesterov": True}),
              ("adam", {"lr": 3e-3, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 1e-3, "amsgrad": True}),
              ("adamw", {"lr": 3e-3, "betas": (0.85, 0.99), "weight_decay": 0.05}),
              ("rmsprop", {"lr": 1e-3, "alpha": 0.9, "momentum": 0.3, "centered": True})]


LWSIM_LAYOUT = [(n, o) for n, o in VARIANTS if n != "constgate" or o["s"] == 0.05]


TORCH_LAYOUT = [(n, o) for n, o in VARIANTS if n in ("gru", "lstm") and not o["layernorm"]
                and o.get("convention", "torch") == "torch"]


CELLS_train_float32 = [("rnn", {}), ("constgate", {"s": 0.2}), ("sharedgate", {}), ("diaggate", {}),
         ("gru", {}), ("lstm", {})]


def _fit(name, opts, dtype, backend="numba", epochs=2):
    task = tasks.make("multilag", T=16, D=3, lags=(1, 4), coefs=(1.0, 0.5), sigma_y=0.1, seed=3)
    ds = task.dataset(32, 8, 0, seed=3)
    cell = lwsim.make_cell(name, 3, 6, layernorm=True, dtype=dtype, **opts)
    params = cell.init_params(seed=5, scheme="paper_a", s0=0.2)
    return cell, train(cell, params, ds, optimizer="adamw", optimizer_kwargs={"lr": 1e-2, "weight_decay": 1e-4},
                       epochs=epochs, batch_size=8, clip=1.0, backend=backend, seed=7, progress=False)


@pytest.mark.parametrize("name,opts", CELLS_train_float32, ids=[c[0] for c in CELLS_train_float32])
def test_float32_training_is_deterministic_and_matches_float64(name, opts):
    _, r32 = _fit(name, opts, "float32")
    _, r32b = _fit(name, opts, "float32")
    _, r64 = _fit(name, opts, "float64")
    for k in r32.params:
        assert r32.params[k].dtype == np.float32
        np.testing.assert_array_equal(r32.params[k], r32b.params[k])          # same seed, same bits
    assert r32.curves["train_loss"] == r32b.curves["train_loss"]
    # 8 Adam steps: float32 round-off (~6e-8 relative) grows to ~3e-7 (measured; bound 5e-6) of the weights' scale, far
    # above float64's; a training secretly run in float64 would agree to ~1e-15
    scale = max(float(np.max(np.abs(v))) for v in r64.params.values())
    diff = max(float(np.max(np.abs(r32.params[k].astype(np.float64) - r64.params[k]))) for k in r64.params)
    assert diff <= 5e-6 * scale
    assert diff > 1e-9 * scale
    np.testing.assert_allclose(r32.curves["train_loss"], r64.curves["train_loss"], rtol=2e-6)
    np.testing.assert_allclose(r32.curves["val_mse"], r64.curves["val_mse"], rtol=2e-6)


def test_float32_numba_equals_numpy_reference_training_to_float32_accuracy():
    _, rn = _fit("gru", {}, "float32", backend="numba")
    _, rr = _fit("gru", {}, "float32", backend="numpy")
    for k in rn.params:
        np.testing.assert_allclose(rn.params[k], rr.params[k], rtol=0, atol=2e-5)


def test_astype_casts_once_and_rebuilds_the_optimizer():
    cell, r32 = _fit("lstm", {}, "float32", epochs=1)
    r64 = r32.astype("float64")
    assert r64.optimizer.params is r64.params
    for k in r32.params:
        assert r64.params[k].dtype == np.float64
        np.testing.assert_array_equal(r64.params[k], r32.params[k].astype(np.float64))
        for buf, a in r32.optimizer.state[k].items():
            b = r64.optimizer.state[k][buf]
            assert b.dtype == np.float64
            np.testing.assert_array_equal(b, a.astype(np.float64))
    assert r64.optimizer.step_count == r32.optimizer.step_count
    # the rates the envelope reads (Λ) are those of the float32 run
    lam32, lam64 = r32.optimizer.rates(), r64.optimizer.rates()
    for k in lam32:
        np.testing.assert_allclose(lam64[k], lam32[k], rtol=1e-6)
    assert r32.params["U_i"].dtype == np.float32          # the original is untouched
    cell64 = cell.with_dtype("float64")
    assert cell64.dtype == np.float64 and repr(cell64).replace("float64", "float32") == repr(cell)
    with pytest.raises(ValueError, match="dtype"):
        r32.astype("float16")


# ----------------------------------------------------------------------------------------------
# TrainResult
# ----------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------- TrainResult
def test_n_steps_counts_the_step_curve_and_is_0_without_one():
    assert TrainResult(params={}, opt_state={}, curves={}).n_steps == 0
    assert TrainResult(params={}, opt_state={}, curves={"step": [1, 2, 3]}).n_steps == 3


def test_astype_casts_everything_and_shares_curves_and_config():
    res = _run(optimizer_kwargs={"lr": 0.125, "momentum": 0.5}, epochs=2, batch_size=2, checkpoints=(0, 1))
    r32 = res.astype("float32")
    assert r32.curves is res.curves and r32.config is res.config
    assert (r32.best_step, r32.best_val_mse) == (res.best_step, res.best_val_mse)
    assert r32.params["W"].dtype == np.float32 and r32.params["b"].dtype == np.float32
    # step 1: buffer = first gradient 2s = 2
    np.testing.assert_array_equal(r32.checkpoints[0]["W"], np.float32([[1.0]]))
    assert r32.checkpoints[1]["W"].dtype == np.float32
    assert sorted(r32.checkpoint_opt_states) == [0, 1]
    sd = r32.checkpoint_opt_states[1]
    assert (sd["name"], sd["step"], sd["hyper"]["momentum"]) == ("sgd", 1, 0.5)
    assert sd["state"]["W"]["buf"].dtype == np.float32
    np.testing.assert_array_equal(sd["state"]["W"]["buf"], np.float32([[2.0]]))
    assert r32.opt_state["state"]["b"]["buf"].dtype == np.float32 and r32.opt_state["step"] == 2
    assert r32.optimizer.params is r32.params and r32.optimizer.step_count == 2
    assert r32.optimizer.state["W"]["buf"].dtype == np.float32
    r64 = r32.astype(np.float64)
    assert r64.params["W"].dtype == np.float64
    assert res.params["W"].dtype == np.float64          # the original untouched
    # no optimizer in, no optimizer out
    bare = TrainResult(params={"w": np.ones(2)}, opt_state={"name": "sgd", "state": {"w": {}}}, curves={})
    out = bare.astype("float32")
    assert out.optimizer is None and out.params["w"].dtype == np.float32
    assert out.opt_state == {"name": "sgd", "state": {"w": {}}}
    with pytest.raises(ValueError, match=r"\bdtype\b"):
        bare.astype("float16")


# ----------------------------------------------------------------------------------------------
# train: its checks of ints, parameters, mask and the cell's record (the helpers of train.py)
# ----------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------- small helpers
def test_int_options_bounds_and_types():
    # every int option of train goes through one check: ints (NumPy ints too) at or above a minimum,
    # stored as Python ints; bools and floats are refused by type
    r = _run(data=_ones(2, 1, val=[0.0]), epochs=np.int64(1), batch_size=np.int64(1), seed=np.int64(0),
             val_every=np.int64(1), checkpoints=(np.int64(0),))
    for k in ("seed", "batch_size", "epochs", "val_every"):
        assert type(r.config[k]) is int
    assert (r.config["seed"], r.config["batch_size"], r.config["epochs"]) == (0, 1, 1)
    assert r.config["checkpoints"] == [0] and type(next(iter(r.checkpoints))) is int
    with pytest.raises(TypeError, match=r"\bseed\b"):
        _run(epochs=1, batch_size=2, seed=True)
    with pytest.raises(TypeError, match=r"\bbatch_size\b"):
        _run(epochs=1, batch_size=1.5)
    with pytest.raises(ValueError, match=r"\bbatch_size\b.*>= 1"):
        _run(epochs=1, batch_size=0)
    with pytest.raises(ValueError, match=r"\bseed\b"):
        _run(epochs=1, batch_size=2, seed=-1)


# ---------------------------------------------------------------------------- parameters are copied
def test_params_and_checkpoints_are_copies():
    cell = LinCell()
    p = cell.params()
    r = _run(cell, data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, checkpoints=(0, 1))
    assert p["W"][0, 0] == 1.0 and r.params["W"] is not p["W"]
    c0, c1 = r.checkpoints[0], r.checkpoints[1]
    assert c0["W"][0, 0] == 1.0 and c1["W"][0, 0] == 0.75
    assert c1["W"] is not r.params["W"] and c0["W"] is not p["W"]
    c1["W"][0, 0] = 5.0
    assert r.params["W"][0, 0] == 0.75 and p["W"][0, 0] == 1.0


# ---------------------------------------------------------------------------- the mask
def test_mask_checks_in_train_and_evaluate():
    r = _run(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, mask=[False, True])
    assert r.config["mask"] == [False, True]
    assert r.config["mask"][0] is False             # stored as bools, not 0/1
    assert _run(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2).config["mask"] is None
    cell, p, x, y = _xy_every()                      # T = 2
    with pytest.raises(ValueError, match=r"\bmask\b.*shape"):
        evaluate(cell, p, x, y, mask=np.array([0, 1]))
    with pytest.raises(ValueError, match=r"\bmask\b.*shape"):
        evaluate(cell, p, x, y, mask=[True, True, True])
    with pytest.raises(ValueError, match=r"\bmask\b.*'every'"):
        evaluate(LinCell(readout="last"), p, x, y[-1], mask=[True, True])
    with pytest.raises(ValueError, match=r"\bmask\b.*no time step"):
        evaluate(cell, p, x, y, mask=[False, False])


# ---------------------------------------------------------------------------- the cell's record
def test_cell_config():
    def cfg(cell, D=1):
        return _run(cell, data=_ones(2, 2, D=D, val=[0.0]), epochs=1, batch_size=2).config["cell"]

    class WithMethod(LinCell):
        def config(self):
            return {"kind": "x", "sizes": (1, 2), "dt": np.dtype("float32")}

    assert cfg(WithMethod()) == {"kind": "x", "sizes": [1, 2], "dt": "float32"}

    class WithDict(LinCell):
        config = {"a": np.int64(3)}

    assert cfg(WithDict()) == {"a": 3}

    class NeedsArgs(LinCell):   # config(x) cannot be called bare: fall back to the attributes
        name = "na"

        def config(self, x):
            return {"never": x}

    assert cfg(NeedsArgs()) == {"class": "NeedsArgs", "name": "na", "n_in": 1, "n_out": 1, "readout": "every"}

    class BadDict(LinCell):     # a config that is not JSON-ready: fall back
        config = {"f": object()}

    assert cfg(BadDict(n_in=2), D=2) == {"class": "BadDict", "name": "lin", "n_in": 2, "n_out": 1,
                                         "readout": "every"}

    class Attrs(LinCell):
        name = "c"
        n_hidden, layernorm, bias, convention, s = 4, True, False, "author", 0.5
        extra = "not listed"

    assert cfg(Attrs(n_in=3, readout="last", dtype=np.float32), D=3) == {
        "class": "Attrs", "name": "c", "n_in": 3, "n_hidden": 4, "n_out": 1, "readout": "last",
        "layernorm": True, "bias": False, "convention": "author", "s": 0.5, "dtype": "float32"}

    class Odd(LinCell):
        name = None             # not a str: left out
        s = (1, 2)              # not a scalar: left out

    assert cfg(Odd()) == {"class": "Odd", "n_in": 1, "n_out": 1, "readout": "every"}
    # private: a dtype numpy cannot read never gets through train (it casts the data to it first)

    class BadDtype:
        dtype = "no-such-dtype"

    assert ltrain._cell_config(BadDtype()) == {"class": "BadDtype"}


# ----------------------------------------------------------------------------------------------
# evaluate
# ----------------------------------------------------------------------------------------------


# ---- stand-in cell ---------------------------------------------------------------------------
def test_mode_a_learns_multilag_with_standin():
    ds = _multilag().dataset(200, 50)
    cell = FIRCell(3)
    p0 = cell.init_params()
    p0_copy = {k: v.copy() for k, v in p0.items()}
    res = train(cell, p0, ds, optimizer="adam", optimizer_kwargs={"lr": 0.05}, epochs=6, batch_size=32,
                progress=False, seed=0)
    for k in p0:  # inputs untouched
        np.testing.assert_array_equal(p0[k], p0_copy[k])
    per_epoch = math.ceil(200 / 32)
    c = res.curves
    assert c["step"] == list(range(1, 6 * per_epoch + 1))
    assert c["val_step"] == [e * per_epoch for e in range(7)]
    assert c["epoch"] == list(range(1, 7)) and len(c["epoch_train_loss"]) == 6
    assert len(c["val_mse"]) == len(c["val_r2"]) == 7 and len(c["grad_norm"]) == len(c["train_loss"])
    assert c["val_mse"][-1] < 0.1 * c["val_mse"][0]
    assert c["val_r2"][-1] > 0.9
    assert res.opt_state["step"] == 6 * per_epoch and res.opt_state["name"] == "adam"
    assert res.config["mode"] == "epochs" and res.config["data"]["task"]["name"] == "multilag"
    json.dumps(res.config)
    # validation metrics agree with evaluate() on the final params
    m = evaluate(cell, res.params, ds.x_val, ds.y_val)
    assert m["mse"] == pytest.approx(c["val_mse"][-1], rel=1e-12)
    err = cell.forward(res.params, ds.x_val).y - ds.y_val
    assert m["mse"] == pytest.approx(np.mean(err ** 2), rel=1e-12)
    assert m["r2"] == pytest.approx(1 - np.sum(err ** 2) / np.sum((ds.y_val - ds.y_val.mean()) ** 2), rel=1e-12)


def test_mask_is_used():
    ds = _multilag().dataset(32, 8)
    cell = FIRCell(3)
    mask = np.zeros(20, bool)
    mask[10:] = True
    res = train(cell, cell.init_params(), ds, optimizer="sgd", epochs=1, batch_size=32, mask=mask, progress=False)
    m = evaluate(cell, cell.init_params(), ds.x_val, ds.y_val, mask=mask)
    err = (cell.forward(cell.init_params(), ds.x_val).y - ds.y_val)[10:]
    assert res.curves["val_mse"][0] == pytest.approx(np.mean(err ** 2), rel=1e-12) == pytest.approx(m["mse"])


@pytest.mark.parametrize("bs", [1, 2, 3, 256])
def test_evaluate_every_by_hand_in_any_chunking(bs):
    cell, p, x, y = _xy_every()
    m = evaluate(cell, p, x, y, batch_size=bs)
    # SSE = 3 + 0.75; mean ȳ = 17/12, SST = 36.75 − 6·(17/12)² = 593/24; r2 = 1 − 3.75·24/593
    assert m["mse"] == pytest.approx(3.75 / 6, rel=1e-14)
    assert m["r2"] == pytest.approx(503 / 593, rel=1e-14)
    mm = evaluate(cell, p, x, y, mask=np.array([False, True]), batch_size=bs)
    # t = 1 only: SSE 0.75 over 3; ȳ = 8/3, SST = 26 − 64/3 = 14/3
    assert mm["mse"] == pytest.approx(0.25, rel=1e-14)
    assert mm["r2"] == pytest.approx(47 / 56, rel=1e-14)


def test_evaluate_sst_about_each_outputs_mean():
    cell = LinCell(n_out=2)
    p = {"W": np.zeros((2, 1)), "b": np.array([0.0, 10.0])}
    x = np.zeros((1, 2, 1))
    y = np.array([[[1.0, 10.0], [-1.0, 12.0]]])
    m = evaluate(cell, p, x, y)
    # diffs (−1, 0), (1, −2): SSE 6 over 4; SST = 2 + 2 about the means (0, 11) → r2 = 1 − 6/4
    assert m == {"mse": 1.5, "r2": -0.5}


@pytest.mark.parametrize("bs", [1, 256])
def test_evaluate_last_by_hand(bs):
    cell = LinCell(readout="last")
    p = cell.params(1.0, 0.0)
    x = np.array([[5.0, 5.0], [7.0, 7.0], [1.0, 3.0]])[:, :, None]
    y3 = np.array([[100.0, 100.0], [100.0, 100.0], [2.0, 3.0]])[:, :, None]   # only the last step counts
    # diffs (−1, 0): mse 1/2; ȳ = 2.5, SST = 0.5 → r2 = −1
    assert evaluate(cell, p, x, y3, batch_size=bs) == {"mse": 0.5, "r2": -1.0}
    assert evaluate(cell, p, x, y3[-1], batch_size=bs) == {"mse": 0.5, "r2": -1.0}


def test_evaluate_constant_targets_and_float32_predictions():
    cell = LinCell()
    m = evaluate(cell, cell.params(1.0, 0.0), np.ones((2, 3, 1)), np.zeros((2, 3, 1)))
    assert m["mse"] == 1.0 and math.isnan(m["r2"])
    # float32 predictions are compared in float64: 2²⁴ + 1 is not a float32, the error 1 survives
    p32 = {"W": np.float32([[1.0]]), "b": np.float32([0.0])}
    x32 = np.full((1, 1, 1), 2.0 ** 24, np.float32)
    assert evaluate(cell, p32, x32, np.full((1, 1, 1), 2.0 ** 24 + 1.0))["mse"] == 1.0


def test_evaluate_errors():
    cell, p, x, y = _xy_every()
    with pytest.raises(ValueError, match=r"target needs readout 'last'"):
        evaluate(cell, p, x, y[-1])
    with pytest.raises(ValueError, match=r"at least one sequence"):
        evaluate(cell, p, x[:, :0], y[:, :0])
    with pytest.raises(ValueError, match=r"\bval batch size\b"):
        evaluate(cell, p, x, y, batch_size=0)
    with pytest.raises(ValueError, match=r"\bmask\b.*shape"):
        evaluate(cell, p, x, y, mask=np.array([True]))
    with pytest.raises(ValueError, match=r"\bmask\b.*'every'"):
        evaluate(LinCell(readout="last"), p, x, y, mask=np.array([True, True]))


def test_evaluate_uses_the_backend():
    seen = []

    class Spy(LinCell):
        def forward(self, params, x, backend="numpy"):
            seen.append(backend)
            return super().forward(params, x)

    cell, p, x, y = _xy_every()
    evaluate(Spy(), p, x, y, backend="numba", batch_size=2)
    assert seen == ["numba", "numba"]


def test_evaluate_float32_targets_in_float64():
    # targets 2²⁴ and 2²⁴ + 2 (float32): their mean 2²⁴ + 1 is not a float32; SST = 2, not 4
    cell = LinCell()
    p = {"W": np.zeros((1, 1)), "b": np.array([2.0 ** 24 + 1])}
    y = np.float32([2.0 ** 24, 2.0 ** 24 + 2])
    assert evaluate(cell, p, np.zeros((1, 2, 1)), y[None, :, None]) == {"mse": 1.0, "r2": 0.0}
    last = LinCell(readout="last")
    assert evaluate(last, p, np.zeros((1, 2, 1)), y[:, None]) == {"mse": 1.0, "r2": 0.0}


class Bare:
    """A LinCell without a ``readout`` attribute: arrays are read at every step."""

    def __init__(self):
        self.inner = LinCell()

    def forward(self, params, x, backend="numpy"):
        return self.inner.forward(params, x)

    def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
        return self.inner.loss_and_grad(params, x, y, mask=mask)


def test_cells_without_a_readout_attribute_count_every_step():
    cell, p, x, y = _xy_every()
    assert evaluate(Bare(), p, x, y, mask=np.array([False, True]))["mse"] == pytest.approx(0.25, rel=1e-14)
    r = train(Bare(), LinCell().params(), _ones(2, 2, val=[0.0]), optimizer="sgd", epochs=1, batch_size=2,
              mask=np.array([False, True]), checkpoints=None, validate=1, best_checkpoint=0, progress=False)
    assert r.config["validate"] is True and r.config["best_checkpoint"] is False and r.checkpoints == {}
    assert r.config["cell"] == {"class": "Bare"}


def test_evaluate_last_sst_about_each_outputs_mean():
    cell = LinCell(n_out=2, readout="last")
    p = {"W": np.zeros((2, 1)), "b": np.array([0.0, 10.0])}
    # same numbers as the every-step case: SST 2 + 2 about the means (0, 11), pooled it would be 125
    assert evaluate(cell, p, np.zeros((2, 2, 1)), np.array([[1.0, 10.0], [-1.0, 12.0]])) == {"mse": 1.5, "r2": -0.5}


def test_evaluate_float32_predictions_and_targets_in_float64():
    # prediction 2⁷⁰ against 0, both float32: the squared error 2¹⁴⁰ overflows float32, not float64
    for readout, y in (("every", np.zeros((1, 2, 1), np.float32)), ("last", np.zeros((2, 1), np.float32))):
        cell = LinCell(readout=readout)
        p = {"W": np.zeros((1, 1), np.float32), "b": np.float32([2.0 ** 70])}
        m = evaluate(cell, p, np.zeros((1, 2, 1), np.float32), y)
        assert m["mse"] == 2.0 ** 140 and math.isnan(m["r2"])


def test_evaluate_defaults_numpy_backend_in_chunks_of_256():
    cell = _Counting()
    evaluate(cell, cell.params(), np.ones((2, 257, 1)), np.zeros((2, 257, 1)))
    assert cell.fwd == [(256, "numpy"), (1, "numpy")]


# ----------------------------------------------------------------------------------------------
# train: the data and the optimizer it is given
# ----------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------- data and optimizer
def test_data_from_arrays():
    # x = 1, y = 0, SGD lr = 1/8 from w = 1, b = 0: one step gives w = 3/4, b = −1/4
    cell = LinCell(readout="last")
    x, y = np.ones((2, 3, 1)), np.zeros((2, 3, 1))
    r = _run(cell, data=(x, y), epochs=1, batch_size=3, validate=False)
    d = r.config["data"]
    assert (d["n_train"], d["n_val"], d["readout"]) == (3, 0, "last") and r.n_steps == 1
    np.testing.assert_array_equal(r.params["W"], [[0.75]])
    np.testing.assert_array_equal(r.params["b"], [-0.25])
    # four arrays: the last two are the validation split; at x = 2 the prediction is 1.25 after the step
    r4 = _run(cell, data=[x, y, 2 * x[:, :2], 3 + y[:, :2]], epochs=1, batch_size=3)
    d4 = r4.config["data"]
    assert (d4["n_train"], d4["n_val"], d4["readout"]) == (3, 2, "last")
    assert r4.curves["val_mse"] == [1.0, 1.75 ** 2]          # before: prediction 2, target 3
    assert _run(data=(x, y), epochs=1, batch_size=3, validate=False).config["data"]["readout"] == "every"
    assert _run(data=(x, y, x, y), epochs=1, batch_size=3).config["data"]["readout"] == "every"

    for data, validate in (((x, y), False), ((x, y, x, y), True)):
        r = train(Bare(), LinCell().params(), data, optimizer="sgd", optimizer_kwargs={"lr": 0.125}, epochs=1,
                  batch_size=3, validate=validate, progress=False)
        assert r.config["data"]["readout"] == "every"
    with pytest.raises(TypeError, match=r"\bdata_or_task\b.*\bgot tuple\b"):
        _run(cell, data=(x, y, x), epochs=1, batch_size=3)


def test_optimizer_forms_and_errors():
    cell = LinCell()
    r = _run(cell, optimizer={"name": "sgd", "lr": 0.5, "momentum": 0.9}, optimizer_kwargs={"lr": 0.25},
             epochs=1, batch_size=2)
    o = r.optimizer
    assert o.name == "sgd" and o.hyper["lr"] == 0.25 and o.hyper["momentum"] == 0.9   # kwargs win
    assert o.params is r.params
    spec = {"name": "adam", "lr": 0.5}
    assert _run(cell, optimizer=spec, optimizer_kwargs=None, epochs=1, batch_size=2).optimizer.hyper["lr"] == 0.5
    assert spec == {"name": "adam", "lr": 0.5}        # the caller's dict is not consumed
    p = cell.params()
    inst = optim.make("sgd", p, lr=0.1)
    assert train(cell, p, _ones(2, 2, val=[0.0]), optimizer=inst, epochs=1, batch_size=2,
                 progress=False).optimizer is inst
    assert train(cell, p, _ones(2, 2, val=[0.0]), optimizer=inst, optimizer_kwargs={}, epochs=1, batch_size=2,
                 progress=False).optimizer is inst
    sd = optim.make("adam", cell.params(), lr=0.3).state_dict()
    sd["step"] = 7
    resumed = _run(cell, optimizer="adam", optimizer_kwargs=None, optimizer_state=sd, epochs=1, batch_size=2)
    assert resumed.opt_state["step"] == 8 and resumed.optimizer.hyper["lr"] == 0.3
    with pytest.raises(ValueError, match=r"\boptimizer_kwargs\b"):
        train(cell, p, _ones(2, 2, val=[0.0]), optimizer=inst, optimizer_kwargs={"lr": 1.0}, epochs=1,
              batch_size=2, progress=False)
    with pytest.raises(ValueError, match=r"\bparams\b"):
        train(cell, cell.params(), _ones(2, 2, val=[0.0]), optimizer=inst, epochs=1, batch_size=2,
              progress=False)
    with pytest.raises(ValueError, match=r"\boptimizer\b.*'name'"):
        _run(cell, optimizer={"lr": 1.0}, epochs=1, batch_size=2)
    with pytest.raises(TypeError, match=r"\boptimizer\b"):
        _run(cell, optimizer=3, epochs=1, batch_size=2)


# ---------------------------------------------------------------------------- a run by hand
def test_mode_a_curves_by_hand():
    """N = 3, batch 2: batches of 2 and 1 sequences, per_epoch = 2; s = w + b halves at every step."""
    res = _run(data=_ones(2, 3, val=[0.0, 1.0]), epochs=2, batch_size=2, checkpoints=(4, 0, 2, 2))
    c = res.curves
    assert c["step"] == [1, 2, 3, 4]
    assert c["train_loss"] == [1.0, 0.25, 0.0625, 0.015625]
    assert all(type(v) is float for v in c["train_loss"] + c["grad_norm"])
    assert c["grad_norm"] == pytest.approx([2 * SQ2, SQ2, SQ2 / 2, SQ2 / 4], rel=1e-15)
    assert c["epoch"] == [1, 2]
    # size-weighted epoch means: (2·1 + 1·1/4)/3 and (2/16 + 1/64)/3
    assert c["epoch_train_loss"] == pytest.approx([0.75, 0.046875], rel=1e-15)
    # validation x = 1, targets (0, 1): mse = (s² + (s − 1)²)/2, SST = 1/2
    s = [1.0, 0.25, 0.0625]
    assert c["val_step"] == [0, 2, 4]
    assert c["val_mse"] == pytest.approx([(v * v + (v - 1) ** 2) / 2 for v in s], rel=1e-14)
    assert c["val_r2"] == pytest.approx([1 - (v * v + (v - 1) ** 2) * 2 for v in s], rel=1e-14)
    assert set(c) == {"step", "train_loss", "grad_norm", "val_step", "val_mse", "val_r2", "epoch",
                      "epoch_train_loss"}
    # w: 1 → 3/4 → 5/8 → 11/16 ... (w and b each move by lr·2s = s/4): b = −(1 − s)/2, w = 1 − (1 − s)/2
    for step, sv in ((0, 1.0), (2, 0.25), (4, 0.0625)):
        np.testing.assert_array_equal(res.checkpoints[step]["W"], [[1 - (1 - sv) / 2]])
        np.testing.assert_array_equal(res.checkpoints[step]["b"], [-(1 - sv) / 2])
        assert res.checkpoint_opt_states[step]["step"] == step
    assert list(res.checkpoints) == [0, 2, 4] and list(res.checkpoint_opt_states) == [0, 2, 4]
    np.testing.assert_array_equal(res.params["W"], [[1 - (1 - 0.0625) / 2]])
    assert res.best_step == 2 and res.best_val_mse == pytest.approx(0.3125, rel=1e-15)  # s = 1/4
    assert res.opt_state["step"] == 4 and res.optimizer.step_count == 4 and res.n_steps == 4


def test_mode_a_config_in_full():
    res = _run(data=_ones(2, 3, val=[0.0, 1.0]), epochs=2, batch_size=2, checkpoints=(4, 0, 2),
               clip=5, seed=3, backend="numpy", val_batch_size=1)
    assert res.config == {
        "mode": "epochs", "epochs": 2, "steps": None, "n_steps": 4, "batch_size": 2, "clip": 5.0,
        "backend": "numpy", "seed": 3, "validate": True, "val_every": 1, "n_val": 2,
        "best_checkpoint": False, "checkpoints": [0, 2, 4], "mask": None,
        "optimizer": {"name": "sgd", "lr": 0.125, "momentum": 0.0, "dampening": 0.0,
                      "weight_decay": 0.0, "nesterov": False},
        "data": {"n_train": 3, "n_val": 2, "n_diag": 0, "seed": None, "readout": "every"},
        "cell": {"class": "LinCell", "name": "lin", "n_in": 1, "n_out": 1, "readout": "every"},
    }
    assert type(res.config["clip"]) is float
    m = _run(data=_ones(3, 2, val=[0.0]), steps=2, batch_size=2, validate=False,
             mask=np.array([False, True, True]), best_checkpoint=False)
    assert (m.config["mode"], m.config["epochs"], m.config["steps"], m.config["n_steps"]) == ("steps", None, 2, 2)
    assert m.config["mask"] == [False, True, True] and m.config["validate"] is False
    assert m.config["n_val"] == 0 and m.config["val_every"] == 1 and m.config["clip"] is None
    assert m.best_step is None and m.best_val_mse is None and m.curves["val_step"] == []
    assert "epoch" not in m.curves and "epoch_train_loss" not in m.curves
    json.dumps(res.config)


def test_clip_curve_holds_the_norm_before_clipping():
    res = _run(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, clip=1.0, validate=False)
    # gradient (2, 2), norm 2√2, clipped to norm 1/(1 + 1e-6/(2√2)): each step lr·2/(2√2 + 1e-6)
    assert res.curves["grad_norm"] == pytest.approx([2 * SQ2], rel=1e-15)
    d = 0.125 * 2 / (2 * SQ2 + 1e-6)
    np.testing.assert_allclose(res.params["W"], [[1 - d]], rtol=1e-15)
    np.testing.assert_allclose(res.params["b"], [-d], rtol=1e-15)


def test_mode_a_validation_schedule_and_defaults():
    ds = _ones(2, 4, val=[0.0])
    r = _run(data=ds, epochs=5, batch_size=2, val_every=2)           # per_epoch 2, 10 steps
    assert r.curves["val_step"] == [0, 4, 8, 10] and r.config["val_every"] == 2
    r1 = _run(data=ds, epochs=3, batch_size=2)
    assert r1.curves["val_step"] == [0, 2, 4, 6] and r1.config["val_every"] == 1
    r3 = _run(data=ds, epochs=3, batch_size=4, val_every=3)
    assert r3.curves["val_step"] == [0, 3]


def test_mode_b_schedule_draws_and_seeds():
    task = OnesTask()
    r = _run(data=task, steps=7, batch_size=3, val_every=3, n_val=5, seed=11)
    assert r.curves["val_step"] == [0, 3, 6, 7]
    assert r.curves["step"] == list(range(1, 8)) and "epoch" not in r.curves
    ss = np.random.SeedSequence([11, 0x7EA1]).spawn(3)
    # the validation batch first (its own child), then 7 training batches from one generator
    g_batch = np.random.default_rng(ss[1])
    assert task.draws[0] == (5, np.random.default_rng(ss[2]).random())
    assert task.draws[1:] == [(3, g_batch.random()) for _ in range(7)]
    assert r.config["n_val"] == 5 and r.config["mode"] == "steps" and r.config["data"]["name"] == "multilag"
    # default val_every = steps // 20 (at least 1)
    assert _run(data=OnesTask(), steps=45, batch_size=1, n_val=1).config["val_every"] == 2
    r40 = _run(data=OnesTask(), steps=40, batch_size=1, n_val=1)
    assert r40.config["val_every"] == 2 and r40.curves["val_step"] == list(range(0, 41, 2))
    r19 = _run(data=OnesTask(), steps=19, batch_size=1, n_val=1)
    assert r19.config["val_every"] == 1 and r19.curves["val_step"] == list(range(20))


def test_steps_with_a_dataset_cycle_shuffled_epochs():
    ds = tasks.Dataset(np.arange(3.0)[None, :, None] * np.ones((2, 1, 1)), np.zeros((2, 3, 1)),
                       np.ones((2, 1, 1)), np.zeros((2, 1, 1)))
    cell = LinCell()
    r = _run(cell, data=ds, steps=5, batch_size=2, seed=4)
    assert [c[0].shape[1] for c in cell.calls] == [2, 1, 2, 1, 2]
    assert "epoch" not in r.curves and r.config["val_every"] == 1
    shuffle = np.random.default_rng(np.random.SeedSequence([4, 0x7EA1]).spawn(3)[0])
    order = np.concatenate([shuffle.permutation(3) for _ in range(3)])[:8]
    got = np.concatenate([c[0][0, :, 0] for c in cell.calls])
    np.testing.assert_array_equal(got, order.astype(float))


def test_minibatches_are_cast_once_to_the_cells_dtype():
    ds = _ones(2, 2, val=[0.0])
    c32 = LinCell(dtype=np.float32)
    _run(c32, data=ds, epochs=1, batch_size=2, validate=False)
    assert c32.calls[0][0].dtype == np.float32 and c32.calls[0][1].dtype == np.float32
    c64 = LinCell(dtype=np.float64)
    _run(c64, data=ds, epochs=1, batch_size=2, validate=False)
    assert c64.calls[0][0].dtype == np.float64 and c64.calls[0][1].dtype == np.float64
    ds32 = tasks.Dataset(np.ones((2, 2, 1), np.float32), np.zeros((2, 2, 1), np.float32))
    cn = LinCell()
    _run(cn, data=ds32, epochs=1, batch_size=2, validate=False)
    assert cn.calls[0][0].dtype == np.float32 and cn.calls[0][1].dtype == np.float32


def test_mask_and_backend_reach_the_cell():
    cell = LinCell()
    mask = np.array([False, True])
    _run(cell, data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, mask=mask, backend="numba")
    _, _, m, backend = cell.calls[0]
    assert backend == "numba" and m.tolist() == [False, True]
    cell2 = LinCell()
    _run(cell2, data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2)
    assert cell2.calls[0][2] is None


# ----------------------------------------------------------------------------------------------
# train
# ----------------------------------------------------------------------------------------------


def test_mode_a_minibatches_cover_the_training_set_each_epoch():
    seen = []

    class Spy(FIRCell):
        def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
            seen.append(x[0, :, 0].copy())
            return super().loss_and_grad(params, x, y, backend, mask)

    ds = _multilag().dataset(10, 4)
    cell = Spy(3)
    train(cell, cell.init_params(), ds, optimizer="sgd", epochs=2, batch_size=4, progress=False)
    assert [len(s) for s in seen] == [4, 4, 2, 4, 4, 2]
    epoch1, epoch2 = np.concatenate(seen[:3]), np.concatenate(seen[3:])
    np.testing.assert_array_equal(np.sort(epoch1), np.sort(ds.x_train[0, :, 0]))
    np.testing.assert_array_equal(np.sort(epoch2), np.sort(ds.x_train[0, :, 0]))
    assert not np.array_equal(epoch1, epoch2)  # reshuffled


def test_mode_b_fresh_batches_and_checkpoints():
    task = tasks.make("adding", T=12, D=2)
    cell = FIRCell(2, L=12, readout="last")
    res = train(cell, cell.init_params(), task, optimizer="sgd", optimizer_kwargs={"lr": 0.05}, steps=120,
                batch_size=16, checkpoints=(0, 50, 120), val_every=30, n_val=64, progress=False, seed=4)
    c = res.curves
    assert c["val_step"] == [0, 30, 60, 90, 120]
    assert c["val_mse"][-1] < 0.5 * c["val_mse"][0]
    assert sorted(res.checkpoints) == [0, 50, 120] == sorted(res.checkpoint_opt_states)
    np.testing.assert_array_equal(res.checkpoints[0]["W"], cell.init_params()["W"])
    np.testing.assert_array_equal(res.checkpoints[120]["W"], res.params["W"])
    assert res.checkpoint_opt_states[50]["step"] == 50
    assert not np.array_equal(res.checkpoints[50]["W"], res.checkpoints[120]["W"])
    assert res.config["mode"] == "steps"


def test_determinism():
    ds = _multilag().dataset(64, 16)
    cell = FIRCell(3)
    kw = dict(optimizer="adamw", optimizer_kwargs={"lr": 0.01}, epochs=3, batch_size=16, clip=0.5,
              checkpoints=(0, 5), progress=False)
    a = train(cell, cell.init_params(), ds, seed=7, **kw)
    b = train(cell, cell.init_params(), ds, seed=7, **kw)
    _same_result(a, b)
    c = train(cell, cell.init_params(), ds, seed=8, **kw)
    assert c.curves["train_loss"] != a.curves["train_loss"]
    task = tasks.make("movingavg", T=10, D=2, W=3)
    cell_b = FIRCell(2, L=4, readout="last")
    kw_b = dict(optimizer="momentum", optimizer_kwargs={"lr": 0.01}, steps=20, batch_size=8, progress=False)
    _same_result(train(cell_b, cell_b.init_params(), task, seed=1, **kw_b),
                 train(cell_b, cell_b.init_params(), task, seed=1, **kw_b))


def test_clip_limits_update():
    ds = _multilag().dataset(32, 8)
    cell = FIRCell(3)
    p0 = cell.init_params()
    res = train(cell, p0, ds, optimizer="sgd", optimizer_kwargs={"lr": 1.0}, epochs=1, batch_size=32,
                clip=1e-3, progress=False)
    delta = np.sqrt(sum(np.sum((res.params[k] - p0[k]) ** 2) for k in p0))
    assert delta == pytest.approx(1e-3, rel=1e-5)  # one SGD step, lr 1, clipped gradient norm 1e-3
    assert res.curves["grad_norm"][0] > 1e-2


def test_best_checkpoint_restores_params_and_optimizer_state():
    # validation targets are the negated training targets: training makes validation worse,
    # so the best validation point is step 0 and everything is restored to it.
    task = _multilag()
    ds = task.dataset(64, 16)
    ds_bad = tasks.Dataset(ds.x_train, ds.y_train, ds.x_train[:, :16], -ds.y_train[:, :16], task=task)
    cell = FIRCell(3)
    p0 = cell.init_params()
    res = train(cell, p0, ds_bad, optimizer="adam", optimizer_kwargs={"lr": 0.05}, epochs=3, batch_size=16,
                best_checkpoint=True, progress=False)
    assert res.curves["val_mse"][-1] > res.curves["val_mse"][0]
    assert res.best_step == 0 and res.best_val_mse == res.curves["val_mse"][0]
    for k in p0:
        np.testing.assert_array_equal(res.params[k], p0[k])
    assert res.opt_state["step"] == 0
    assert all(np.all(a == 0) for st in res.opt_state["state"].values() for a in st.values())
    assert res.optimizer.params is res.params
    # a normal run: best = argmin of the validation curve; restored params are the snapshot there
    res2 = train(cell, p0, ds, optimizer="sgd", optimizer_kwargs={"lr": 0.3}, epochs=5, batch_size=16,
                 best_checkpoint=True, checkpoints=tuple(range(0, 21, 4)), progress=False)
    i = int(np.argmin(res2.curves["val_mse"]))
    assert res2.best_step == res2.curves["val_step"][i]
    for k in p0:
        np.testing.assert_array_equal(res2.params[k], res2.checkpoints[res2.best_step][k])
    assert res2.opt_state["step"] == res2.best_step


def test_resume_from_optimizer_state_equals_one_long_run():
    task = tasks.make("delaysum", T=8, D=1, delays=(0, 3), weights=(1.0, 0.5))
    cell = FIRCell(1, L=4, readout="last")
    full = train(cell, cell.init_params(), task, optimizer="adam", optimizer_kwargs={"lr": 0.01}, steps=10,
                 batch_size=8, validate=False, checkpoints=(5,), progress=False)
    # an optimizer instance is trained in place, its params included
    p = {k: v.copy() for k, v in full.checkpoints[5].items()}
    opt = optim.from_state_dict(p, full.checkpoint_opt_states[5])
    assert opt.step_count == 5
    res = train(cell, p, task, optimizer=opt, steps=1, batch_size=8, validate=False, progress=False)
    assert res.params is p and opt.step_count == 6


def test_progress_bar(capsys):
    ds = _multilag().dataset(16, 4)
    cell = FIRCell(3)
    train(cell, cell.init_params(), ds, optimizer="sgd", epochs=1, batch_size=8, progress=False)
    assert capsys.readouterr().err == ""
    train(cell, cell.init_params(), ds, optimizer="sgd", epochs=1, batch_size=8, progress=True)
    err = capsys.readouterr().err
    assert "train fir" in err and "loss=" in err and "val=" in err


def test_errors():
    task = _multilag()
    ds = task.dataset(16, 4)
    cell = FIRCell(3)
    p = cell.init_params()
    kw = dict(progress=False)
    with pytest.raises(ValueError, match=r"\bbatch_size\b.*training sequences"):
        train(cell, p, ds, epochs=1, **kw)
    kw["batch_size"] = 8
    with pytest.raises(ValueError, match=r"\bunknown optimizer\b"):
        train(cell, p, ds, optimizer="adamm", epochs=1, **kw)
    with pytest.raises(ValueError, match=r"\blr\b"):
        train(cell, p, ds, optimizer="sgd", optimizer_kwargs={"lr": 0.0}, epochs=1, **kw)
    with pytest.raises(ValueError, match=r"\bbatch_size\b.*training sequences"):
        train(cell, p, ds, epochs=1, **dict(kw, batch_size=32))
    with pytest.raises(ValueError, match="exactly one of epochs"):
        train(cell, p, ds, epochs=1, steps=3, **kw)
    with pytest.raises(ValueError, match="exactly one of epochs"):
        train(cell, p, ds, **kw)
    with pytest.raises(ValueError, match="task.dataset"):
        train(cell, p, task, epochs=1, **kw)
    with pytest.raises(ValueError, match=r"\bcheckpoint step\b.*> total"):
        train(cell, p, ds, epochs=1, checkpoints=(99,), **kw)
    with pytest.raises(ValueError, match="no validation split"):
        train(cell, p, task.dataset(16), epochs=1, **kw)
    with pytest.raises(ValueError, match=r"\bbest_checkpoint\b"):
        train(cell, p, ds, epochs=1, validate=False, best_checkpoint=True, **kw)
    with pytest.raises(ValueError, match="readout='last'"):
        train(cell, p, tasks.make("adding", T=10, D=3), steps=2, **kw)
    with pytest.raises(ValueError, match=r"\bn_in\b"):
        train(cell, p, tasks.make("adding", T=10, D=2), steps=2, **kw)
    with pytest.raises(TypeError, match=r"\bdata_or_task\b.*\bgot str\b"):
        train(cell, p, "multilag", steps=2, **kw)
    with pytest.raises(ValueError, match=r"\bclip\b"):
        train(cell, p, ds, epochs=1, clip=0.0, **kw)

    class Exploding(FIRCell):
        def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
            loss, g = super().loss_and_grad(params, x, y)
            g["W"][0, 0] = np.nan
            return loss, g

    with pytest.raises(FloatingPointError, match="'W'.*non-finite"):
        train(Exploding(3), p, ds, epochs=1, **kw)


@pytest.mark.skipif(not HAVE_CELLS, reason="lwsim.make_cell not available")
@pytest.mark.parametrize("name", CELLS)
def test_real_cell_learns_multilag(name):
    ds = _multilag(T=20, D=3).dataset(256, 64)
    opts = {"s": 0.5} if name == "constgate" else {}  # the default s = 0.05 learns too slowly for 64 steps
    cell = lwsim.make_cell(name, n_in=3, n_hidden=8, n_out=1, readout="every", **opts)
    params = cell.init_params(seed=0, scheme="torch")
    res = train(cell, params, ds, optimizer="adam", optimizer_kwargs={"lr": 0.03}, epochs=8, batch_size=32,
                clip=1.0, progress=False, seed=0)
    v = res.curves["val_mse"]
    assert v[-1] < 0.3 * v[0], v


@pytest.mark.skipif(not HAVE_CELLS, reason="lwsim.make_cell not available")
@pytest.mark.parametrize("name", CELLS)
def test_real_cell_learns_adding(name):
    task = tasks.make("adding", T=16, D=2)
    cell = lwsim.make_cell(name, n_in=2, n_hidden=8, n_out=1, readout="last", bias=True)
    params = cell.init_params(seed=0, scheme="torch")
    res = train(cell, params, task, optimizer="adam", optimizer_kwargs={"lr": 0.02}, steps=60, batch_size=32,
                n_val=128, val_every=20, progress=False, seed=0)
    v = res.curves["val_mse"]
    assert v[-1] < 0.3 * v[0], v


def test_best_point_earliest_on_ties_with_and_without_restore():
    # x = 0: the prediction is b, the gradient of W is 0; targets 0 and b = 0: nothing moves, all ties
    ds = tasks.Dataset(np.zeros((2, 2, 1)), np.zeros((2, 2, 1)), np.zeros((2, 1, 1)), np.ones((2, 1, 1)))
    cell = LinCell()
    p = {"W": np.ones((1, 1)), "b": np.zeros(1)}
    for best in (False, True):
        r = train(cell, p, ds, optimizer="sgd", epochs=3, batch_size=2, best_checkpoint=best, progress=False)
        assert r.curves["val_mse"] == [1.0, 1.0, 1.0, 1.0]
        assert r.best_step == 0 and r.best_val_mse == 1.0
        assert r.config["best_checkpoint"] is best


def test_best_checkpoint_restores_the_middle_point():
    """Validation targets 1/2: val mse = (s − 1/2)², lowest at step 1 (s = 1/2); with momentum 0.5 the
    buffer there is the first gradient (2, 2)."""
    res = _run(data=_ones(2, 2, val=[0.5]), optimizer_kwargs={"lr": 0.125, "momentum": 0.5}, epochs=3,
               batch_size=2, best_checkpoint=True)
    assert res.curves["val_step"] == [0, 1, 2, 3]
    assert res.curves["val_mse"][:2] == [0.25, 0.0]
    assert res.best_step == 1 and res.best_val_mse == 0.0
    np.testing.assert_array_equal(res.params["W"], [[0.75]])
    np.testing.assert_array_equal(res.params["b"], [-0.25])
    assert res.opt_state["step"] == 1 and res.optimizer.step_count == 1
    np.testing.assert_array_equal(res.opt_state["state"]["W"]["buf"], [[2.0]])
    np.testing.assert_array_equal(res.optimizer.state["b"]["buf"], [2.0])
    assert res.optimizer.params is res.params
    # without restore the run ends where it ended, the best point is still reported
    plain = _run(data=_ones(2, 2, val=[0.5]), epochs=3, batch_size=2)
    assert plain.best_step == 1 and plain.best_val_mse == 0.0
    np.testing.assert_array_equal(plain.params["W"], [[1 - (1 - 0.125) / 2]])
    assert plain.opt_state["step"] == 3


def test_progress_bar_text(capsys):
    _run(data=_ones(2, 2, val=[0.0, 1.0]), epochs=2, batch_size=2, progress=True)
    err = capsys.readouterr().err
    # last step: loss s² = 1/4; validation at s = 1/4: (1/16 + 9/16)/2 = 0.3125
    assert "train lin" in err and "loss=0.25" in err and "val=0.3125" in err
    assert err.endswith("\r") or not err.endswith("\n")           # leave=False: the bar is cleared
    _run(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, progress=True, desc="mine", validate=False)
    err = capsys.readouterr().err
    assert err.startswith("\rmine:") and "train" not in err and "val=" not in err

    class Anon(LinCell):
        name = ""

    _run(Anon(), data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, progress=True)
    assert re.search(r"(^|\r)train:", capsys.readouterr().err)


@pytest.mark.parametrize("call,exc,msg", [
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, seed=-1), ValueError, r"\bseed\b"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=0), ValueError, r"\bbatch_size\b.*>= 1"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, val_batch_size=0), ValueError,
     r"\bval_batch_size\b"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=0, batch_size=2), ValueError, r"\bepochs\b.*>= 1"),
    (_err(data=_ones(2, 2, val=[0.0]), steps=0, batch_size=2), ValueError, r"\bsteps\b.*>= 1"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, val_every=0), ValueError,
     r"\bval_every\b"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, checkpoints=(-1,)), ValueError,
     r"\bcheckpoint step\b.*>= 0"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, checkpoints=(2,)), ValueError,
     r"\bcheckpoint step\b.*> total"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, clip=-1), ValueError,
     r"\bclip\b"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, clip=0), ValueError,
     r"\bclip\b"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=3), ValueError,
     r"\bbatch_size\b.*training sequences"),
    (_err(data=OnesTask(), steps=1, batch_size=1, n_val=0), ValueError, r"\bn_val\b"),
    (_err(data=OnesTask(), epochs=1, batch_size=1), ValueError,
     r"\bepochs=.*fixed training set"),
    (_err(data=OnesTask(), batch_size=1), ValueError,
     r"exactly one of epochs"),
    (_err(data=_ones(2, 2), epochs=1, batch_size=2), ValueError,
     r"\bvalidate\b.*no validation split"),
    (_err(data=_ones(2, 2), epochs=1, batch_size=2, validate=False, best_checkpoint=True), ValueError,
     r"\bbest_checkpoint\b"),
    (_err(data=tasks.Dataset(np.ones((2, 0, 1)), np.zeros((2, 0, 1))), epochs=1, batch_size=1, validate=False),
     ValueError, r"\bn_train = 0\b"),
    (_err(data=_ones(2, 2, D=2, val=[0.0]), epochs=1, batch_size=2), ValueError,
     r"\bn_in\b"),
    (_err(data=OnesTask(name="adding"), steps=1, batch_size=1), ValueError,
     r"last step only"),
    (_err(data=tasks.Dataset(np.ones((2, 2, 1)), np.zeros((2, 2, 1)), readout="last"), epochs=1, batch_size=2,
          validate=False), ValueError, r"last step only"),
    (_err(data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, mask=np.array([False, False])), ValueError,
     r"\bmask\b.*no time step"),
])
def test_train_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_train_accepts_the_boundaries():
    # seed 0, checkpoint 0 and total, fill='running' targets with an every-step cell, a last-step Dataset
    # of a running task, clip just above 0
    r = _run(data=OnesTask(name="adding", fill="running"), steps=2, batch_size=1, n_val=1, seed=0,
             checkpoints=(0, 2), clip=1e-300)
    assert sorted(r.checkpoints) == [0, 2]
    t = tasks.make("adding", T=4, D=2, fill="running")
    ds = t.dataset(2, 1)
    assert ds.readout == "last"
    r2 = _run(LinCell(n_in=2), data=ds, epochs=1, batch_size=2)
    assert r2.n_steps == 1


def test_train_cell_and_loss_errors():
    class NoGrad:
        def forward(self, params, x, backend="numpy"):
            return None

    with pytest.raises(TypeError, match=r"\bcell\b.*\bloss_and_grad\b"):
        train(NoGrad(), {}, _ones(2, 2, val=[0.0]), epochs=1, batch_size=2)

    class NoFwd:
        def loss_and_grad(self, *a, **k):
            return None

    with pytest.raises(TypeError, match=r"\bcell\b.*\bforward\b"):
        train(NoFwd(), {}, _ones(2, 2, val=[0.0]), epochs=1, batch_size=2)

    class Blows(LinCell):
        def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
            loss, g = super().loss_and_grad(params, x, y, backend, mask)
            return (math.inf if len(self.calls) == 2 else loss), g

    with pytest.raises(FloatingPointError, match=r"\btraining loss\b.*\bstep 2\b"):
        _run(Blows(), data=_ones(2, 2, val=[0.0]), epochs=3, batch_size=2)


def test_optimizer_instance_is_trained_in_place_and_inputs_are_copied_otherwise():
    cell = LinCell()
    p = cell.params()
    opt = optim.make("sgd", p, lr=0.125)
    r = train(cell, p, _ones(2, 2, val=[0.0]), optimizer=opt, epochs=1, batch_size=2, progress=False,
              checkpoints=(0,))
    assert r.params is p and r.optimizer is opt and p["W"][0, 0] == 0.75
    assert r.checkpoints[0]["W"][0, 0] == 1.0       # a copy, taken before the update
    q = cell.params()
    r2 = train(cell, q, _ones(2, 2, val=[0.0]), optimizer={"name": "sgd", "lr": 0.125}, epochs=1,
               batch_size=2, progress=False)
    assert q["W"][0, 0] == 1.0 and r2.params["W"][0, 0] == 0.75 and r2.params is not q
    # resuming from a state_dict: the step count continues
    r3 = train(cell, q, _ones(2, 2, val=[0.0]), optimizer="sgd", optimizer_state=r2.opt_state, epochs=1,
               batch_size=2, progress=False)
    assert r3.opt_state["step"] == 2 and r3.config["optimizer"]["lr"] == 0.125


def test_grad_norm_is_summed_in_float64():
    # float32 gradients 2⁻⁸⁰: their squares (2⁻¹⁶⁰) underflow in float32; the norm is √2·2⁻⁸⁰
    cell = LinCell(dtype=np.float32)
    p = {"W": np.float32([[2.0 ** -81]]), "b": np.float32([0.0])}
    ds = tasks.Dataset(np.ones((2, 2, 1), np.float32), np.zeros((2, 2, 1), np.float32))
    r = train(cell, p, ds, optimizer="sgd", epochs=1, batch_size=2, validate=False, progress=False)
    assert r.curves["grad_norm"][0] / 2.0 ** -80 == pytest.approx(SQ2, rel=1e-7)


def test_train_defaults(monkeypatch):
    import tqdm
    monkeypatch.setattr(tqdm, "tqdm", _SpyBar)
    _SpyBar.made = []
    task = OnesTask()
    cell = _Counting()
    r = train(cell, cell.params(), task, steps=1)
    assert task.draws[0][0] == 256 and task.draws[1][0] == 64      # n_val 256, batch_size 64
    assert cell.calls[0][3] == "numpy" and cell.fwd == [(256, "numpy"), (256, "numpy")]
    assert r.config["optimizer"] == {"name": "adamw", "lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8,
                                     "weight_decay": 1e-2, "amsgrad": False}
    assert (r.config["seed"], r.config["batch_size"], r.config["backend"], r.config["clip"]) == (0, 64, "numpy", None)
    assert r.config["checkpoints"] == [] and r.checkpoints == {} and r.config["best_checkpoint"] is False
    assert _SpyBar.made[0].kw["disable"] is False and _SpyBar.made[0].kw["desc"] == "train lin"
    # the validation set is evaluated in chunks of 256 sequences
    cell2 = _Counting()
    ds = tasks.Dataset(np.ones((2, 1, 1)), np.zeros((2, 1, 1)), np.ones((2, 257, 1)), np.zeros((2, 257, 1)))
    train(cell2, cell2.params(), ds, epochs=1, batch_size=1, progress=False)
    assert [b for b, _ in cell2.fwd] == [256, 1, 256, 1]


def test_train_follows_the_cells_readout():
    with pytest.raises(ValueError, match=r"\bmask\b.*'every'"):
        _run(LinCell(readout="last"), data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2,
             mask=np.array([True, True]))
    # a last-step cell on zero-filled last-step targets is fine (only every-step cells need fill='running')
    ds = tasks.make("adding", T=4, D=2).dataset(2, 1)
    r = _run(LinCell(n_in=2, readout="last"), data=ds, epochs=1, batch_size=2)
    assert r.n_steps == 1


def test_validation_gets_backend_mask_and_chunk_size():
    cell = _Counting()
    ds = tasks.Dataset(np.ones((2, 2, 1)), np.zeros((2, 2, 1)), np.ones((2, 3, 1)),
                       np.array([[9.0, 9.0, 9.0], [1.0, 2.0, 3.0]])[:, :, None])
    r = train(cell, cell.params(), ds, optimizer="sgd", optimizer_kwargs={"lr": 0.125}, epochs=1, batch_size=2,
              backend="numba", mask=np.array([False, True]), val_batch_size=2, progress=False)
    assert cell.fwd == [(2, "numba"), (1, "numba")] * 2
    # step 0: prediction 1 at the counted step t = 1 against (1, 2, 3): mse 5/3, SST 2
    assert r.curves["val_mse"][0] == pytest.approx(5 / 3, rel=1e-14)
    assert r.curves["val_r2"][0] == pytest.approx(1 - 5 / 2, rel=1e-14)


def test_arrays_take_the_cells_readout():
    cell = LinCell(readout="last")
    x, y = np.ones((2, 2, 1)), np.zeros((2, 2, 1))
    r = _run(cell, data=(x, y, x, y), epochs=1, batch_size=2)
    assert r.config["data"]["readout"] == "last"


def test_epochs_validate_every_epoch_by_default_even_for_long_runs():
    r = _run(data=_ones(2, 20, val=[0.0]), epochs=2, batch_size=1)     # 40 steps: steps//20 would be 2
    assert r.config["val_every"] == 1 and r.curves["val_step"] == [0, 20, 40]


def test_nan_validation_is_never_best_and_nothing_is_restored():
    ds = tasks.Dataset(np.ones((2, 2, 1)), np.zeros((2, 2, 1)), np.ones((2, 1, 1)), np.full((2, 1, 1), np.nan))
    r = _run(data=ds, epochs=2, batch_size=2, best_checkpoint=True)
    assert all(math.isnan(v) for v in r.curves["val_mse"])
    assert r.best_step is None and r.best_val_mse is None
    np.testing.assert_array_equal(r.params["W"], [[0.625]])       # the last point: s = 1/4, w = 1 − 3/8
    assert r.opt_state["step"] == 2


def test_cells_without_mask_support_or_name(monkeypatch):
    import tqdm
    monkeypatch.setattr(tqdm, "tqdm", _SpyBar)
    _SpyBar.made = []

    class NoMask:                       # no mask parameter, no name, no dtype
        readout = "every"

        def forward(self, params, x, backend="numpy"):
            return LinCell().forward(params, x)

        def loss_and_grad(self, params, x, y, backend="numpy"):
            return LinCell().loss_and_grad(params, x, y)

    r = train(NoMask(), LinCell().params(), _ones(2, 2, val=[0.0]), optimizer="sgd",
              optimizer_kwargs={"lr": 0.125}, epochs=1, batch_size=2)
    assert r.curves["train_loss"] == [1.0]
    assert _SpyBar.made[0].kw["desc"] == "train"


def test_epoch_numbers_are_ints():
    r = _run(data=_ones(2, 4, val=[0.0]), epochs=2, batch_size=2)
    assert r.curves["epoch"] == [1, 2] and all(type(e) is int for e in r.curves["epoch"])


def test_non_finite_gradient_is_named():
    class NanGrad(LinCell):
        def loss_and_grad(self, *a, **k):
            loss, g = super().loss_and_grad(*a, **k)
            g["W"] = np.full_like(g["W"], np.nan)
            return loss, g

    for clip in (None, 1.0):
        with pytest.raises(optim.NonFiniteGradientError, match=r"'W'.*non-finite.*\bstep 1\b"):
            _run(NanGrad(), data=_ones(2, 2, val=[0.0]), epochs=1, batch_size=2, clip=clip)


def test_config_that_is_not_json_ready_is_named():
    ds = tasks.Dataset(np.ones((2, 2, 1)), np.zeros((2, 2, 1)), info={"x": object()})
    with pytest.raises(TypeError, match=r"\btrain config\.data\.x\b"):
        _run(data=ds, epochs=1, batch_size=2, validate=False)


@pytest.mark.parametrize("opt,hyper", OPTIMIZERS, ids=[o for o, _ in OPTIMIZERS])
def test_astype_keeps_optimizer_options_checkpoints_and_record(opt, hyper):
    task = tasks.make("multilag", T=8, D=2, lags=(1, 3), coefs=(1.0, 0.5), sigma_y=0.1, seed=3)
    cell = lwsim.make_cell("gru", 2, 3, dtype="float32", readout="last")
    params = cell.init_params(seed=5, scheme="normal", sigma_w=0.5)
    r32 = train(cell, params, task, optimizer=opt, optimizer_kwargs=hyper, steps=4, batch_size=4,
                backend="numpy", seed=7, progress=False, checkpoints=(0, 2, 4), validate=False)
    r64 = r32.astype("float64")
    assert r64.optimizer.name == opt and r64.optimizer.hyper == r32.optimizer.hyper
    for k, v in hyper.items():
        assert r64.optimizer.hyper[k] == v, k
    assert r64.optimizer.step_count == r32.optimizer.step_count == 4
    assert r64.opt_state["hyper"] == r32.opt_state["hyper"] and r64.opt_state["step"] == 4
    assert sorted(r64.checkpoints) == sorted(r64.checkpoint_opt_states) == [0, 2, 4]
    for s in (0, 2, 4):
        for k, v in r32.checkpoints[s].items():
            assert r64.checkpoints[s][k].dtype == np.float64
            np.testing.assert_array_equal(r64.checkpoints[s][k], v.astype(np.float64))
        sd32, sd64 = r32.checkpoint_opt_states[s], r64.checkpoint_opt_states[s]
        assert (sd64["name"], sd64["hyper"], sd64["step"]) == (sd32["name"], sd32["hyper"], sd32["step"])
        assert sd64["state"].keys() == sd32["state"].keys()
        for k, bufs in sd32["state"].items():
            assert bufs.keys() == sd64["state"][k].keys()
            for b, a in bufs.items():
                assert sd64["state"][k][b].dtype == np.float64
                np.testing.assert_array_equal(sd64["state"][k][b], np.asarray(a, np.float64))
    assert (r64.best_step, r64.best_val_mse, r64.config, r64.curves) == (r32.best_step, r32.best_val_mse,
                                                                          r32.config, r32.curves)
    # the rebuilt optimizer takes the next step as the original would (same hyper-parameters, same buffers)
    g = {k: np.full_like(v, 0.01) for k, v in r64.params.items()}
    p32 = {k: v.astype(np.float64) for k, v in r32.params.items()}
    twin = lwsim.optim.from_state_dict(p32, {**r32.optimizer.state_dict(),
                                             "state": {k: {b: a.astype(np.float64) for b, a in st.items()}
                                                       for k, st in r32.optimizer.state_dict()["state"].items()}})
    r64.optimizer.step(g)
    twin.step(g)
    for k in p32:
        np.testing.assert_array_equal(r64.params[k], p32[k])


# ----------------------------------------------------------------------------------------------
# save_run
# ----------------------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path):
    task = tasks.make("adding", T=10, D=2)
    cell = FIRCell(2, L=10, readout="last")
    res = train(cell, cell.init_params(), task, optimizer="rmsprop", optimizer_kwargs={"momentum": 0.5, "centered": True},
                steps=20, batch_size=8, checkpoints=(0, 10), best_checkpoint=True, progress=False, seed=3)
    config = {"cell": "fir", "H": None, "note": "test", "lags": (1, 2), "arr": np.arange(3)}
    npz, js = save_run(tmp_path / "runs" / "r1", res, config)
    assert npz.name == "r1.npz" and js.name == "r1.json"
    assert sorted(os.listdir(tmp_path / "runs")) == ["r1.json", "r1.npz"]  # no temp files left
    loaded, cfg = load_run(tmp_path / "runs" / "r1.json")
    assert cfg == {"cell": "fir", "H": None, "note": "test", "lags": [1, 2], "arr": [0, 1, 2]}
    _same_result(res, loaded)
    assert loaded.config == res.config and loaded.best_step == res.best_step
    assert loaded.best_val_mse == res.best_val_mse
    for s in res.checkpoint_opt_states:
        assert loaded.checkpoint_opt_states[s]["step"] == res.checkpoint_opt_states[s]["step"]
        for k, st in res.checkpoint_opt_states[s]["state"].items():
            for name, a in st.items():
                np.testing.assert_array_equal(loaded.checkpoint_opt_states[s]["state"][k][name], a)
    # the loaded optimizer state rebuilds a working optimizer
    opt = optim.from_state_dict({k: v.copy() for k, v in loaded.params.items()}, loaded.opt_state)
    assert opt.hyper == res.optimizer.hyper and opt.step_count == res.opt_state["step"]
    # SGD without buffers, NaN in curves (constant val targets give R² = NaN)
    res2 = train(cell, cell.init_params(), (np.ones((10, 8, 2)), np.ones((10, 8, 1)), np.ones((10, 4, 2)),
                 np.ones((10, 4, 1))), optimizer="sgd", epochs=1, batch_size=4, progress=False)
    assert math.isnan(res2.curves["val_r2"][0])
    save_run(tmp_path / "r2", res2, {})
    loaded2, _ = load_run(tmp_path / "r2")
    assert math.isnan(loaded2.curves["val_r2"][0]) and loaded2.opt_state["state"] == {"W": {}, "b": {}}
    # overwriting is atomic and a mismatched pair is detected
    save_run(tmp_path / "runs" / "r1", res2, {})
    (tmp_path / "runs" / "r1.npz").write_bytes((tmp_path / "r2.npz").read_bytes()[:-1] + b"x")
    with pytest.raises(ValueError, match="does not match"):
        load_run(tmp_path / "runs" / "r1")
    with pytest.raises(FileNotFoundError):
        load_run(tmp_path / "nothing")
    with pytest.raises(TypeError, match=r"\bconfig\.bad\b"):
        save_run(tmp_path / "r3", res2, {"bad": object()})
    assert not (tmp_path / "r3.npz").exists()


def test_save_run_paths_and_files(tmp_path):
    res = _small_run()
    for name in ("a.npz", "a.json", "a"):
        npz, js = save_run(tmp_path / name, res)
        assert (npz.name, js.name) == ("a.npz", "a.json")
    npz, js = save_run(tmp_path / "a.v1", res)
    assert (npz.name, js.name) == ("a.v1.npz", "a.v1.json")
    meta = json.loads(js.read_text())
    assert meta["npz_sha256"] == hashlib.sha256(npz.read_bytes()).hexdigest()
    assert meta["format"] == "lwsim.run/1" and meta["npz"] == "a.v1.npz" and meta["config"] == {}
    assert meta["param_keys"] == ["W", "b"] and meta["checkpoint_steps"] == [0, 2]
    assert meta["best_step"] == 2 and meta["train_config"] == res.config
    assert meta["optimizer"] == {"name": "adam", "hyper": {"lr": 0.125, "betas": [0.9, 0.999], "eps": 1e-08,
                                                           "weight_decay": 0.0, "amsgrad": False}, "step": 2}
    assert meta["checkpoint_opt"]["0"] == {"name": "adam", "hyper": meta["optimizer"]["hyper"], "step": 0}
    assert meta["checkpoint_opt"]["2"]["step"] == 2 and sorted(meta["checkpoint_opt"]) == ["0", "2"]
    assert meta["curves"]["train_loss"] == res.curves["train_loss"]
    with np.load(npz) as z:
        assert sorted(z.files) == sorted(
            ["params/W", "params/b"] + [f"opt/{k}/{s}" for k in "Wb" for s in ("m", "v")]
            + [f"ckpt/{c}/params/{k}" for c in (0, 2) for k in "Wb"]
            + [f"ckpt/{c}/opt/{k}/{s}" for c in (0, 2) for k in "Wb" for s in ("m", "v")])
        np.testing.assert_array_equal(z["ckpt/0/params/W"], [[1.0]])
        np.testing.assert_array_equal(z["ckpt/0/opt/W/m"], [[0.0]])
    npz2, js2 = save_run(tmp_path / "b", res, {"k": (1, 2)})
    assert json.loads(js2.read_text())["config"] == {"k": [1, 2]}


def test_load_run_round_trip_by_hand(tmp_path):
    res = _small_run()
    save_run(tmp_path / "r", res, {"c": 1})
    for name in ("r", "r.json", "r.npz"):
        got, cfg = load_run(tmp_path / name)
        assert cfg == {"c": 1}
        assert got.curves == res.curves and got.config == res.config
        assert got.best_step == 2 and got.best_val_mse == res.best_val_mse
        assert type(got.best_val_mse) is float
        assert got.optimizer is None
        assert list(got.params) == ["W", "b"]
        np.testing.assert_array_equal(got.params["W"], res.params["W"])
        assert got.opt_state["name"] == "adam" and got.opt_state["step"] == 2
        assert got.opt_state["hyper"]["betas"] == (0.9, 0.999)          # a tuple again
        np.testing.assert_array_equal(got.opt_state["state"]["b"]["v"], res.opt_state["state"]["b"]["v"])
        assert sorted(got.checkpoints) == [0, 2] and sorted(got.checkpoint_opt_states) == [0, 2]
        np.testing.assert_array_equal(got.checkpoints[0]["W"], [[1.0]])
        sd0 = got.checkpoint_opt_states[0]
        assert sd0["step"] == 0 and sd0["hyper"]["betas"] == (0.9, 0.999) and sd0["name"] == "adam"
        np.testing.assert_array_equal(sd0["state"]["W"]["m"], [[0.0]])
        np.testing.assert_array_equal(got.checkpoint_opt_states[2]["state"]["W"]["m"],
                                      res.checkpoint_opt_states[2]["state"]["W"]["m"])
        opt = optim.from_state_dict({k: v.copy() for k, v in got.params.items()}, got.opt_state)
        assert opt.step_count == 2


def test_load_run_without_buffers_nan_curves_and_no_validation(tmp_path):
    # SGD without momentum has no buffers, in the result and in its checkpoints; validate=False: no best
    res = _run(data=_ones(2, 2), epochs=1, batch_size=2, validate=False, checkpoints=(0, 1))
    save_run(tmp_path / "s", res)
    got, cfg = load_run(tmp_path / "s")
    assert cfg == {} and got.best_step is None and got.best_val_mse is None
    assert got.opt_state["state"] == {"W": {}, "b": {}}
    assert got.checkpoint_opt_states[1]["state"] == {"W": {}, "b": {}}
    assert got.checkpoint_opt_states[1]["hyper"] == {"lr": 0.125, "momentum": 0.0, "dampening": 0.0,
                                                     "weight_decay": 0.0, "nesterov": False}
    # non-finite curve values come back as floats
    res.curves["val_r2"] = [math.nan, math.inf, 0.5]
    save_run(tmp_path / "s", res)
    got, _ = load_run(tmp_path / "s")
    v = got.curves["val_r2"]
    assert math.isnan(v[0]) and v[1] == math.inf and v[2] == 0.5


def test_save_run_refuses_a_non_json_config_before_writing(tmp_path):
    res = _small_run()
    with pytest.raises(TypeError, match=r"\brun\.config\.bad\b"):
        save_run(tmp_path / "r3", res, {"bad": object()})
    assert list(tmp_path.iterdir()) == []


def test_load_run_keeps_integer_curves_and_loads_a_result_without_arrays(tmp_path):
    res = _small_run()
    save_run(tmp_path / "r", res)
    got, _ = load_run(tmp_path / "r")
    assert all(type(v) is int for v in got.curves["step"] + got.curves["val_step"])
    assert all(type(v) is float for v in got.curves["train_loss"])
    # no parameters at all (nothing in the .npz): the round trip still holds, checkpoints included
    sd = {"name": "sgd", "hyper": {"lr": 0.5}, "step": 3, "state": {}}
    empty = TrainResult(params={}, opt_state=sd, curves={"step": [1, 2, 3]}, checkpoints={0: {}, 3: {}},
                        checkpoint_opt_states={0: dict(sd, step=0), 3: sd})
    save_run(tmp_path / "e", empty)
    got, cfg = load_run(tmp_path / "e")
    assert cfg == {} and got.params == {} and got.checkpoints == {0: {}, 3: {}}
    assert got.checkpoint_opt_states == {0: dict(sd, step=0), 3: sd} and got.opt_state == sd
    assert got.curves == {"step": [1, 2, 3]} and got.best_step is None


def test_load_run_never_unpickles(tmp_path):
    """A .npz holding an object array (pickled), with a matching checksum, is refused."""
    res = _small_run()
    npz, js = save_run(tmp_path / "p", res)
    with np.load(npz) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["params/W"] = np.array([{"evil": 1}], dtype=object)
    np.savez(npz, **arrays)
    meta = json.loads(js.read_text())
    meta["npz_sha256"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    js.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="allow_pickle=False"):
        load_run(tmp_path / "p")


def test_progress_bar_calls(monkeypatch):
    import tqdm
    monkeypatch.setattr(tqdm, "tqdm", _SpyBar)
    _SpyBar.made = []
    # two epochs of one step, validation targets (0, 1): val mse (s² + (s − 1)²)/2 at s = 1/2, 1/4
    _run(data=_ones(2, 2, val=[0.0, 1.0]), epochs=2, batch_size=2)
    bar = _SpyBar.made.pop(0)
    assert bar.kw == {"total": 2, "disable": True, "desc": "train lin", "leave": False, "dynamic_ncols": True}
    assert bar.calls == [("close",)]                   # a disabled bar is not fed step by step
    _run(data=_ones(2, 2, val=[0.0, 1.0]), epochs=2, batch_size=2, progress=True)
    bar = _SpyBar.made[0]
    assert bar.kw == {"total": 2, "disable": False, "desc": "train lin", "leave": False, "dynamic_ncols": True}
    assert bar.calls == [
        ("postfix", {"loss": "1", "val": "0.25", "refresh": False}), ("update", 1), ("refresh",),
        ("postfix", {"loss": "0.25", "val": "0.3125", "refresh": False}), ("update", 1), ("refresh",),
        ("close",)]
    # validation every 2nd step: the step between shows the loss only; without validation, the loss only
    _run(data=_ones(2, 2, val=[0.0, 1.0]), steps=3, batch_size=2, val_every=2, progress=True, desc="d")
    bar = _SpyBar.made[1]
    assert bar.kw["disable"] is False and bar.kw["desc"] == "d" and bar.kw["total"] == 3
    assert bar.calls[2:5] == [("postfix", {"loss": "0.25", "val": "0.3125", "refresh": False}), ("update", 1),
                              ("refresh",)]
    assert bar.calls[:2] == [("postfix", {"loss": "1", "refresh": False}), ("update", 1)]
    assert len(bar.calls) == 9 and bar.calls[-1] == ("close",)
    _run(data=_ones(2, 2), epochs=1, batch_size=2, validate=False, progress=True)
    assert _SpyBar.made[2].calls == [("postfix", {"loss": "1", "refresh": False}), ("update", 1), ("close",)]

    class Boom(LinCell):
        def loss_and_grad(self, *a, **k):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        _run(Boom(), data=_ones(2, 2), epochs=1, batch_size=2, validate=False)
    assert _SpyBar.made[3].calls == [("close",)]          # closed on the way out


def test_gradients_of_the_cell_are_not_modified_by_clipping():
    kept = []

    class Keeps(LinCell):
        def loss_and_grad(self, *a, **k):
            loss, g = super().loss_and_grad(*a, **k)
            kept.append((g, dict(g)))
            return loss, g

    _run(Keeps(), data=_ones(2, 2), epochs=1, batch_size=2, validate=False, clip=0.1)
    g, before = kept[0]
    assert g.keys() == before.keys() and all(g[k] is before[k] for k in g)
    np.testing.assert_array_equal(g["W"], [[2.0]])


# ----------------------------------------------------------------------------------------------
# load_run
# ----------------------------------------------------------------------------------------------


def test_load_run_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "none")) + r".*\bnone\.json\b"):
        load_run(tmp_path / "none.npz")
    (tmp_path / "x.json").write_text(json.dumps({"format": "other/1"}))
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "x.json")) + r".*not an lwsim run.*'other/1'"):
        load_run(tmp_path / "x")
    (tmp_path / "y.json").write_text("{}")
    with pytest.raises(ValueError, match=r"not an lwsim run.*\bNone\b"):
        load_run(tmp_path / "y")
    res = _small_run()
    npz, js = save_run(tmp_path / "z", res)
    data = npz.read_bytes()
    npz.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ValueError, match=r"\bdoes not match\b"):
        load_run(tmp_path / "z")


# ---------------------------------------------------------------- train(fused="lanes")
def test_fused_lanes_argument():
    """fused="lanes" is opt-in: it trains the covered cells (to round-off of fused=False:
    tests/backends/numba/test_lanes.py), refuses the others by name, and every other string or
    type is a TypeError naming ``fused``; None/True/False keep their meaning."""
    pytest.importorskip("numba")
    task = tasks.make("multilag", T=8, D=2, seed=0, lags=(1,), coefs=(0.5,))
    ds = task.dataset(n_train=16, n_val=4, seed=0)
    kw = dict(steps=3, batch_size=8, progress=False, backend="numba")
    gru = lwsim.make_cell("gru", 2, 4, 1, convention="torch")
    a = train(gru, gru.init_params(seed=0), ds, fused="lanes", **kw)
    b = train(gru, gru.init_params(seed=0), ds, fused=False, **kw)
    for k in a.params:
        np.testing.assert_allclose(a.params[k], b.params[k], rtol=0, atol=1e-12)
    for bad in ("Lanes", "yes", "", 2.5, "lanes "):
        with pytest.raises(TypeError, match="fused"):
            train(gru, gru.init_params(seed=0), ds, fused=bad, **kw)
    with pytest.raises(ValueError, match="backend"):
        train(gru, gru.init_params(seed=0), ds, fused="lanes", **dict(kw, backend="numpy"))
    for cell, why in ((lwsim.make_cell("rnn", 2, 4, 1), "no lanes kernels"),
                      (lwsim.make_cell("lstm", 2, 4, 1, layernorm=True), "layernorm")):
        with pytest.raises(ValueError, match=f"fused='lanes'.*{why}"):
            train(cell, cell.init_params(seed=0), ds, fused="lanes", **kw)
    p64 = {k: v.astype(np.float64) for k, v in lwsim.make_cell("gru", 2, 4, 1, dtype="float32",
                                                               convention="torch").init_params(seed=0).items()}
    with pytest.raises(ValueError, match="dtype"):
        train(lwsim.make_cell("gru", 2, 4, 1, dtype="float32", convention="torch"), p64, ds, fused="lanes", **kw)
