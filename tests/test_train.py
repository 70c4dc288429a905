"""Training loop (docs/experiments.md §5.2): modes A/B, validation, checkpoints, best-checkpoint restore,
determinism, save/load round trip, errors; and real cells learning multilag and adding."""

import json
import math
import os

import numpy as np
import pytest

import lwsim
from lwsim import optim, tasks
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


def test_mask_is_used():
    ds = _multilag().dataset(32, 8)
    cell = FIRCell(3)
    mask = np.zeros(20, bool)
    mask[10:] = True
    res = train(cell, cell.init_params(), ds, optimizer="sgd", epochs=1, batch_size=32, mask=mask, progress=False)
    m = evaluate(cell, cell.init_params(), ds.x_val, ds.y_val, mask=mask)
    err = (cell.forward(cell.init_params(), ds.x_val).y - ds.y_val)[10:]
    assert res.curves["val_mse"][0] == pytest.approx(np.mean(err ** 2), rel=1e-12) == pytest.approx(m["mse"])


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
    with pytest.raises(TypeError, match="config.bad"):
        save_run(tmp_path / "r3", res2, {"bad": object()})
    assert not (tmp_path / "r3.npz").exists()


def test_errors():
    task = _multilag()
    ds = task.dataset(16, 4)
    cell = FIRCell(3)
    p = cell.init_params()
    kw = dict(progress=False)
    with pytest.raises(ValueError, match="batch_size 64 > number of training sequences 16"):
        train(cell, p, ds, epochs=1, **kw)
    kw["batch_size"] = 8
    with pytest.raises(ValueError, match="unknown optimizer 'adamm'"):
        train(cell, p, ds, optimizer="adamm", epochs=1, **kw)
    with pytest.raises(ValueError, match="lr must be > 0"):
        train(cell, p, ds, optimizer="sgd", optimizer_kwargs={"lr": 0.0}, epochs=1, **kw)
    with pytest.raises(ValueError, match="batch_size 32 > number of training sequences 16"):
        train(cell, p, ds, epochs=1, **dict(kw, batch_size=32))
    with pytest.raises(ValueError, match="exactly one of epochs"):
        train(cell, p, ds, epochs=1, steps=3, **kw)
    with pytest.raises(ValueError, match="exactly one of epochs"):
        train(cell, p, ds, **kw)
    with pytest.raises(ValueError, match="task.dataset"):
        train(cell, p, task, epochs=1, **kw)
    with pytest.raises(ValueError, match="checkpoint step 99 > total"):
        train(cell, p, ds, epochs=1, checkpoints=(99,), **kw)
    with pytest.raises(ValueError, match="no validation split"):
        train(cell, p, task.dataset(16), epochs=1, **kw)
    with pytest.raises(ValueError, match="best_checkpoint=True needs validate"):
        train(cell, p, ds, epochs=1, validate=False, best_checkpoint=True, **kw)
    with pytest.raises(ValueError, match="readout='last'"):
        train(cell, p, tasks.make("adding", T=10, D=3), steps=2, **kw)
    with pytest.raises(ValueError, match="n_in=3"):
        train(cell, p, tasks.make("adding", T=10, D=2), steps=2, **kw)
    with pytest.raises(TypeError, match="data_or_task"):
        train(cell, p, "multilag", steps=2, **kw)
    with pytest.raises(ValueError, match="clip"):
        train(cell, p, ds, epochs=1, clip=0.0, **kw)

    class Exploding(FIRCell):
        def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
            loss, g = super().loss_and_grad(params, x, y)
            g["W"][0, 0] = np.nan
            return loss, g

    with pytest.raises(FloatingPointError, match="'W'.*non-finite"):
        train(Exploding(3), p, ds, epochs=1, **kw)


# ---- real cells ----------------------------------------------------------------------------------
HAVE_CELLS = hasattr(lwsim, "make_cell")
CELLS = list(getattr(lwsim, "CELL_NAMES", ("rnn", "constgate", "sharedgate", "diaggate", "gru", "lstm")))


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
