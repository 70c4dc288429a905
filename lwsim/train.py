"""Training loop, evaluation and run save/load (docs/experiments.md §5.2).

    result = lwsim.train.train(cell, params, task.dataset(800, 200), optimizer="adamw",
                               optimizer_kwargs=dict(lr=1e-3, weight_decay=1e-4),
                               epochs=20, batch_size=64, clip=1.0, seed=0)      # mode A
    result = lwsim.train.train(cell, params, task, optimizer="sgd",
                               optimizer_kwargs=dict(lr=1e-2), steps=800, batch_size=64,
                               checkpoints=(0, 50, 200, 400, 600, 800), seed=0)  # mode B
    save_run("runs/s1_seed0", result, config); result, config = load_run("runs/s1_seed0")

Mode A (``epochs=``, data a :class:`lwsim.tasks.Dataset` or arrays): every epoch the training
set is shuffled with a seeded generator and cut into minibatches of ``batch_size`` (the last one
may be smaller, like a PyTorch DataLoader with drop_last=False); validation after every
``val_every`` epochs (default 1).
Mode B (``steps=``, data a :class:`lwsim.tasks.Task`): a fresh batch drawn from the task with a
seeded generator at every step; validation every ``val_every`` steps (default steps//20) on a
fixed batch of ``n_val`` sequences drawn once from the task (seeded by ``seed``). ``steps=``
with a Dataset cycles through shuffled epochs of the training set.

Step s counts optimizer updates: step 0 is the initial state, step s the state after s updates.
Validation is also run at step 0 and at the last step. ``checkpoints`` snapshot the parameters
(and the optimizer state) at the given steps. With ``best_checkpoint=True`` the parameters and
the optimizer state are restored to the validation point with the lowest validation MSE (the
earliest on ties; step 0 included).

The parameters passed in are copied, never modified; ``result.params`` holds the trained ones.
Everything random comes from ``seed`` (numpy SeedSequence children: shuffling, fresh batches,
validation batch), so the same seed gives bit-identical results.
"""

from __future__ import annotations

import hashlib
import io as _io
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import io as lio
from . import optim as loptim
from .cells.base import Cell
from .tasks import Dataset, Task

__all__ = ["TrainResult", "train", "evaluate", "save_run", "load_run"]

RUN_FORMAT = "lwsim.run/1"


@dataclass
class TrainResult:
    """Output of :func:`train`.

    params: trained parameters (best-validation ones with ``best_checkpoint``).
    opt_state: optimizer ``state_dict()`` matching ``params``.
    curves: dict of lists: ``step`` (1..n_steps) with ``train_loss`` (minibatch loss before the
      update of that step) and ``grad_norm`` (global L2 norm before clipping); ``val_step`` with
      ``val_mse``, ``val_r2``; mode A also ``epoch`` and ``epoch_train_loss`` (size-weighted mean
      minibatch loss of the epoch).
    checkpoints: {step: params copy}; checkpoint_opt_states: {step: optimizer state_dict}.
    best_step, best_val_mse: the best validation point (None without validation).
    config: the training configuration (JSON-ready).
    optimizer: the live optimizer object (not saved by save_run).

    See docs/experiments.md §5.2.
    """

    params: dict
    opt_state: dict
    curves: dict
    checkpoints: dict = field(default_factory=dict)
    checkpoint_opt_states: dict = field(default_factory=dict)
    best_step: int | None = None
    best_val_mse: float | None = None
    config: dict = field(default_factory=dict)
    optimizer: loptim.Optimizer | None = field(default=None, repr=False, compare=False)

    @property
    def n_steps(self) -> int:
        return len(self.curves.get("step", []))

    def astype(self, dtype) -> "TrainResult":
        """A copy with parameters, checkpoints and optimizer buffers cast to ``dtype`` and the
        optimizer rebuilt over the cast parameters: train in float32, then run the diagnostics
        and statistics in float64 on the trained weights, cast once (docs/experiments.md §5.2).
        Curves and configuration are shared with this result."""
        dt = np.dtype(dtype)
        if dt not in (np.dtype("float32"), np.dtype("float64")):
            raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")

        def cast(tree):
            return {k: np.array(v, dtype=dt) for k, v in tree.items()}

        def cast_sd(sd):
            return {**sd, "state": {k: cast(st) for k, st in sd["state"].items()}}
        params = cast(self.params)
        opt_state = cast_sd(self.opt_state)
        return TrainResult(
            params=params, opt_state=opt_state, curves=self.curves,
            checkpoints={s: cast(p) for s, p in self.checkpoints.items()},
            checkpoint_opt_states={s: cast_sd(sd) for s, sd in self.checkpoint_opt_states.items()},
            best_step=self.best_step, best_val_mse=self.best_val_mse, config=self.config,
            optimizer=loptim.from_state_dict(params, opt_state) if self.optimizer is not None else None)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def _pos_int(name, v, minimum=1):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {v!r}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return int(v)


def _copy_params(params: dict) -> dict:
    return {k: np.array(v, copy=True) for k, v in params.items()}


def _check_mask(mask, T, readout):
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype != np.bool_ or mask.shape != (T,):
        raise ValueError(f"mask must be a boolean array of shape (T,) = ({T},), got {mask.dtype} {mask.shape}")
    if readout != "every":
        raise ValueError("mask applies to readout 'every' only (readout 'last' counts the last step)")
    if not mask.any():
        raise ValueError("mask selects no time step")
    return mask


def _cell_config(cell) -> dict:
    cfg = getattr(cell, "config", None)
    if callable(cfg):
        try:
            cfg = cfg()
        except TypeError:
            cfg = None
    if isinstance(cfg, dict):
        try:
            return lio.to_jsonable(cfg, "cell")
        except TypeError:
            pass
    out = {"class": type(cell).__name__}
    for k in ("name", "n_in", "n_hidden", "n_out", "readout", "layernorm", "bias", "convention", "s"):
        v = getattr(cell, k, None)
        if isinstance(v, (str, bool, int, float)):
            out[k] = v
    dt = getattr(cell, "dtype", None)
    if dt is not None:
        try:
            out["dtype"] = np.dtype(dt).name
        except TypeError:
            pass
    return out


def evaluate(cell, params: dict, x: np.ndarray, y: np.ndarray, backend: str = "numpy",
             mask=None, batch_size: int = 256) -> dict:
    """Validation metrics of ``cell`` on (x, y): {"mse", "r2"}.

    Counted elements follow the loss (docs/cells.md §1.6): the last step for readout "last", every step
    (restricted by ``mask`` (T,)) for "every". mse = mean squared error over counted elements
    (all outputs pooled, as MSELoss); r2 = 1 − SSE/SST, SST about the per-output mean of the
    counted targets (NaN when the targets are constant). Forward passes run in chunks of
    ``batch_size`` sequences to bound memory."""
    readout = getattr(cell, "readout", "every")
    T, B = x.shape[:2]
    if y.ndim == 2:
        if readout != "last":
            raise ValueError("a (B, n_out) target needs readout 'last'")
        y_last = y
    else:
        y_last = y[-1]
    mask = _check_mask(mask, T, readout)
    batch_size = _pos_int("val batch size", batch_size)
    if B == 0:
        raise ValueError("evaluate needs at least one sequence")
    if readout == "last":
        yc = np.asarray(y_last, dtype=np.float64)  # (B, n_out)
        yc = yc.reshape(-1, yc.shape[-1])
    else:
        yc = np.asarray(y if mask is None else y[mask], dtype=np.float64)
        yc = yc.reshape(-1, yc.shape[-1])
    sst = float(np.sum((yc - yc.mean(axis=0)) ** 2))
    sse = 0.0
    for i in range(0, B, batch_size):
        xb = x[:, i:i + batch_size]
        pred = np.asarray(cell.forward(params, xb, backend=backend).y, dtype=np.float64)
        if readout == "last":
            diff = pred[-1] - y_last[i:i + batch_size]
        else:
            diff = pred - y[:, i:i + batch_size]
            if mask is not None:
                diff = diff[mask]
        sse += float(np.sum(diff * diff))
    mse = sse / yc.size
    r2 = 1.0 - sse / sst if sst > 0 else float("nan")
    return {"mse": mse, "r2": r2}


class _Gather:
    """The minibatches (x[:, idx_k], y[:, idx_k]) of a fused call, made only when asked for (the
    fused trainer gathers them itself; train.py needs one only to redo a failing step)."""

    def __init__(self, x, y, idx):
        self.x, self.y, self.idx = x, y, idx

    def __len__(self):
        return len(self.idx)

    def __getitem__(self, k):
        return self.x[:, self.idx[k]], self.y[:, self.idx[k]]


def _run_fused(cell, P, opt, clip, mask, T, batch_size, total, exits, source, task, rng_batch, xt, yt,
               one_step, advance, lanes=False):
    """train()'s steps in the fused trainer (lwsim.backends.numba.fused): one compiled call per
    stretch between two ``exits`` (validation points, checkpoints), each step then handed to
    ``advance(loss, grad norm, batch size)`` for train's bookkeeping. ``source``: the minibatch
    indices into (xt, yt) of a Dataset, or None for fresh batches drawn from ``task`` with
    ``rng_batch``. A stretch with non-finite data, or a step the compiled loop stopped at, goes
    through ``one_step`` (the step path), which raises the step path's error. ``lanes``: the
    small-H lanes kernels (lwsim.backends.numba.lanes) instead of the cell's own."""
    from .backends.numba import fused as lfused
    from .backends.numba.readout import loss_weights
    from .backends.numba.threads import single_threaded_blas
    if lanes:
        from .backends.numba.lanes import LanesSteps as Steps
    else:
        Steps = lfused.FusedSteps
    runner = Steps(cell, P, opt, clip, loss_weights(cell, T, mask), batch_size)
    if source is not None:
        X, Y = lfused.full_arrays(cell, xt, yt)
        ok = lfused.finite(X, Y)
    step = 0
    while step < total:
        K = lfused.segment(step, exits, total, cell.n_in * T * batch_size, source is None)
        if source is not None:
            idx = [next(source) for _ in range(K)]
            batches = _Gather(xt, yt, idx)
        else:
            batches = [task.batch(batch_size, rng_batch) for _ in range(K)]
            X, Y, idx = lfused.stack_batches(cell, batches)
            ok = lfused.finite(X, Y)
        if not ok:                              # the step path's input check raises at the right step
            for xb, yb in batches:              # (a stretch whose batches miss the bad rows trains as usual)
                advance(*one_step(xb, yb), xb.shape[1])
            step += len(batches)
            continue
        I, nbs = lfused.index_matrix(idx, batch_size)
        with single_threaded_blas():            # as the step path's kernel calls
            losses, gnorms, status, done = runner.run(X, Y, I, nbs)
        for k in range(done):
            advance(float(losses[k]), float(gnorms[k]), int(nbs[k]))
        step += done
        if status != lfused.OK:                 # redo that step the readable way: it raises
            one_step(*batches[done])
            raise AssertionError(f"fused trainer stopped (status {status}) at step {step + 1} "
                                 "but the step-by-step path did not fail there")


def _resolve_data(cell, data):
    if isinstance(data, (Task, Dataset)):
        return data
    if isinstance(data, (tuple, list)) and len(data) in (2, 4):
        arrays = [np.asarray(a) for a in data]
        if len(arrays) == 2:
            return Dataset(arrays[0], arrays[1], readout=getattr(cell, "readout", "every"))
        return Dataset(arrays[0], arrays[1], arrays[2], arrays[3], readout=getattr(cell, "readout", "every"))
    raise TypeError(
        "data_or_task must be a lwsim.tasks.Task (mode B), a lwsim.tasks.Dataset, or a tuple "
        f"(x_train, y_train[, x_val, y_val]); got {type(data).__name__}"
    )


def _make_optimizer(optimizer, params, optimizer_kwargs, optimizer_state):
    if isinstance(optimizer, loptim.Optimizer):
        if optimizer_kwargs:
            raise ValueError("optimizer_kwargs cannot be combined with an optimizer instance")
        if optimizer.params is not params:
            raise ValueError(
                "an optimizer instance must have been built over the `params` dict passed to "
                "train (it is then trained in place); or pass the optimizer by name"
            )
        opt = optimizer
    else:
        kwargs = dict(optimizer_kwargs or {})
        if isinstance(optimizer, dict):
            spec = dict(optimizer)
            if "name" not in spec:
                raise ValueError("an optimizer dict needs a 'name' key")
            name = spec.pop("name")
            spec.update(kwargs)
            kwargs = spec
        elif isinstance(optimizer, str):
            name = optimizer
        else:
            raise TypeError(f"optimizer must be a name, a dict with 'name', or an Optimizer; got {optimizer!r}")
        opt = loptim.make(name, params, **kwargs)
    if optimizer_state is not None:
        opt.load_state_dict(optimizer_state)
    return opt


# ---------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------
def train(cell, params: dict, data_or_task, optimizer="adamw", *, optimizer_kwargs: dict | None = None,
          optimizer_state: dict | None = None, epochs: int | None = None, steps: int | None = None,
          batch_size: int = 64, clip: float | None = None, backend: str = "numpy", seed: int = 0,
          validate: bool = True, val_every: int | None = None, n_val: int = 256,
          val_batch_size: int = 256, best_checkpoint: bool = False, checkpoints=(),
          progress: bool = True, mask=None, desc: str | None = None, fused: bool | str | None = None) -> TrainResult:
    """Train ``cell`` from ``params`` (copied) on a Dataset (``epochs=``, mode A) or a Task
    (``steps=``, mode B). See the module docstring for the semantics of every option.

    optimizer: a name of :data:`lwsim.optim.OPTIMIZERS` (hyper-parameters in
    ``optimizer_kwargs``), a dict {"name": ..., **hyper}, or an Optimizer built over ``params``
    (then ``params`` is trained in place). ``optimizer_state`` resumes from a state_dict.
    clip: max global gradient L2 norm (torch clip_grad_norm_), None for no clipping.
    fused: run the steps in the fused trainer (backend "numba" only: every step between two
    validation points or checkpoints in one compiled call, lwsim.backends.numba.fused), or step by
    step (False: the readable reference loop below). Both give the same bits. None (default): fused
    with the numba backend when the batch is one chunk of the thread pool or a step is small; with
    several chunks of a large step, step by step, whose chunks run in parallel. "lanes" (opt-in):
    the fused trainer with the small-H lanes kernels (lwsim.backends.numba.lanes: batch as the
    vector dimension, faster at the studies' sizes); same mathematics, another summation order, so
    its numbers differ from fused=False/True by round-off only. Covers GRU (both conventions) and
    LSTM without layernorm; any other cell is refused with a ValueError (never a silent fallback).

    See docs/experiments.md §5.2.
    """
    for attr in ("loss_and_grad", "forward"):
        if not callable(getattr(cell, attr, None)):
            raise TypeError(f"cell must provide {attr}(...); got {type(cell).__name__}")
    readout = getattr(cell, "readout", "every")
    data = _resolve_data(cell, data_or_task)
    seed = _pos_int("seed", seed, 0)
    batch_size = _pos_int("batch_size", batch_size)
    val_batch_size = _pos_int("val_batch_size", val_batch_size)
    if (epochs is None) == (steps is None):
        raise ValueError("give exactly one of epochs= (fixed training set, mode A) or steps= (mode B)")
    if isinstance(data, Task) and epochs is not None:
        raise ValueError(
            "epochs= needs a fixed training set: pass task.dataset(n_train, n_val, ...) "
            "or use steps= for fresh batches"
        )
    T = data.T
    x_shape_D = data.D
    n_in = getattr(cell, "n_in", None)
    if isinstance(n_in, numbers.Integral) and n_in != x_shape_D:
        raise ValueError(f"data has D={x_shape_D} input channels but the cell has n_in={n_in}")
    data_readout = data.readout
    fill = data.task.fill if isinstance(data, Dataset) and data.task is not None else (
        data.fill if isinstance(data, Task) else None)
    if data_readout == "last" and readout == "every" and fill != "running":
        raise ValueError(
            "the task's targets live at the last step only (fill='zero'): use a cell with "
            "readout='last', or make the task with fill='running'"
        )
    mask = _check_mask(mask, T, readout)
    if not (fused == "lanes" if isinstance(fused, str) else fused in (None, True, False)):
        raise TypeError(f"fused must be None, True, False or 'lanes', got {fused!r}")
    if fused and backend != "numba":
        raise ValueError(f"fused={fused!r} needs backend='numba', got backend={backend!r}")
    if fused and not isinstance(cell, Cell):
        raise TypeError(f"fused={fused!r} needs an lwsim cell (lwsim.make_cell), got {type(cell).__name__}")
    if fused == "lanes":
        from .backends.numba.lanes import covers
        ok, why = covers(cell)
        if not ok:
            raise ValueError(f"fused='lanes': {why}; use fused=True or fused=False")
    if clip is not None:
        clip = float(clip)
        if not clip > 0:
            raise ValueError(f"clip must be > 0 or None, got {clip}")

    ss_shuffle, ss_batch, ss_val = np.random.SeedSequence([seed, 0x7EA1]).spawn(3)
    rng_shuffle = np.random.default_rng(ss_shuffle)
    rng_batch = np.random.default_rng(ss_batch)

    # --- schedule
    if isinstance(data, Dataset):
        N = data.n_train
        if N == 0:
            raise ValueError("the dataset has no training sequences (n_train = 0)")
        if batch_size > N:
            raise ValueError(f"batch_size {batch_size} > number of training sequences {N}")
        per_epoch = math.ceil(N / batch_size)
    else:
        N, per_epoch = None, None
    if epochs is not None:
        epochs = _pos_int("epochs", epochs)
        total = epochs * per_epoch
        mode = "epochs"
    else:
        steps = _pos_int("steps", steps)
        total = steps
        mode = "steps"
    if val_every is None:
        val_every = 1 if mode == "epochs" else max(1, total // 20)
    val_every = _pos_int("val_every", val_every)

    ckpt_steps = []
    for c in checkpoints or ():
        c = _pos_int("checkpoint step", c, 0)
        if c > total:
            raise ValueError(f"checkpoint step {c} > total number of steps {total}")
        ckpt_steps.append(c)
    ckpt_steps = sorted(set(ckpt_steps))
    ckpt_set = set(ckpt_steps)

    # --- validation data
    xv = yv = None
    if validate:
        if isinstance(data, Task):
            n_val = _pos_int("n_val", n_val)
            xv, yv = data.batch(n_val, np.random.default_rng(ss_val))
        else:
            if data.n_val == 0:
                raise ValueError("validate=True but the dataset has no validation split (n_val = 0); "
                                 "pass validate=False or build it with n_val > 0")
            xv, yv = data.x_val, data.y_val
    if best_checkpoint and not validate:
        raise ValueError("best_checkpoint=True needs validate=True")

    # --- parameters and optimizer
    if isinstance(optimizer, loptim.Optimizer):
        P = params
    else:
        P = _copy_params(params)
    opt = _make_optimizer(optimizer, P, optimizer_kwargs, optimizer_state)

    curves = {"step": [], "train_loss": [], "grad_norm": [], "val_step": [], "val_mse": [], "val_r2": []}
    if mode == "epochs":
        curves["epoch"] = []
        curves["epoch_train_loss"] = []
    ckpts, ckpt_opt = {}, {}
    best = {"mse": math.inf, "step": None, "params": None, "opt": None}

    def snapshot(step):
        if step in ckpt_set:
            ckpts[step] = _copy_params(P)
            ckpt_opt[step] = opt.state_dict()

    def run_validation(step):
        m = evaluate(cell, P, xv, yv, backend=backend, mask=mask, batch_size=val_batch_size)
        curves["val_step"].append(step)
        curves["val_mse"].append(m["mse"])
        curves["val_r2"].append(m["r2"])
        if best_checkpoint and m["mse"] < best["mse"]:
            best.update(mse=m["mse"], step=step, params=_copy_params(P), opt=opt.state_dict())
        elif not best_checkpoint and (m["mse"] < best["mse"]):
            best.update(mse=m["mse"], step=step)
        return m

    # cast once to the cell's dtype (a float32 cell would otherwise convert every minibatch)
    dt = getattr(cell, "dtype", None)
    if isinstance(data, Dataset):
        xt, yt = data.x_train, data.y_train
        if dt is not None and xt.dtype != dt:
            xt, yt = xt.astype(dt), yt.astype(dt)

    def batch_indices():
        """Mode A / steps over a Dataset: the minibatch indices, shuffled epoch after epoch."""
        produced = 0
        while produced < total:
            perm = rng_shuffle.permutation(N)
            for i in range(0, N, batch_size):
                yield perm[i:i + batch_size]
                produced += 1
                if produced == total:
                    return

    def batches():
        if isinstance(data, Task):
            for _ in range(total):
                yield data.batch(batch_size, rng_batch)
            return
        for idx in batch_indices():
            yield xt[:, idx], yt[:, idx]

    from tqdm import tqdm

    kwargs_mask = {} if mask is None else {"mask": mask}

    def one_step(xb, yb):
        """One step the readable way: exact BPTT, clip, optimizer update → (loss, grad norm)."""
        loss, grads = cell.loss_and_grad(P, xb, yb, backend=backend, **kwargs_mask)
        loss = float(loss)
        if not math.isfinite(loss):
            raise FloatingPointError(f"training loss is {loss} at step {step + 1}")
        grads = dict(grads)
        if clip is not None:
            gnorm = loptim.clip_grad_norm(grads, clip)
        else:
            gnorm = math.sqrt(loptim.squared_norm(grads.values()))
        # a finite total norm means every gradient is finite: skip the per-array check
        opt._apply(opt._prepare_grads(grads, check_finite=not math.isfinite(gnorm)))
        return loss, gnorm

    def val_due(s):
        if not validate:
            return False
        if mode == "epochs":
            return s % per_epoch == 0 and (s // per_epoch) % val_every == 0 or s == total
        return s % val_every == 0 or s == total

    def record(loss, gnorm, nb):
        """After step ``step``: curves, checkpoint, epoch mean, validation when due, progress."""
        nonlocal epoch_sum, epoch_n
        curves["step"].append(step)
        curves["train_loss"].append(loss)
        curves["grad_norm"].append(gnorm)
        snapshot(step)
        epoch_sum += loss * nb
        epoch_n += nb
        if mode == "epochs" and step % per_epoch == 0:
            curves["epoch"].append(step // per_epoch)
            curves["epoch_train_loss"].append(epoch_sum / epoch_n)
            epoch_sum = epoch_n = 0.0
        if val_due(step):
            m = run_validation(step)
            if progress:
                bar.set_postfix(loss=f"{loss:.4g}", val=f"{m['mse']:.4g}", refresh=False)
                bar.update(1)
                bar.refresh()  # show the validation result now (tqdm otherwise rate-limits)
            return
        if progress:
            bar.set_postfix(loss=f"{loss:.4g}", refresh=False)
            bar.update(1)

    use_fused = fused
    if fused is not False and backend == "numba" and isinstance(cell, Cell):
        from .backends.numba import fused as lfused
        cell.check_params(P)            # the step path would raise the same error at its first step
        if not lfused.eligible(cell, P):
            if fused:
                raise ValueError(f"fused={fused!r} needs params in the cell's dtype ({cell.dtype.name}); "
                                 "cast them, e.g. cell.check_params(params), or pass fused=False")
            use_fused = False
        elif fused is None:
            use_fused = lfused.pays(cell, T, batch_size)

    snapshot(0)
    if validate:
        run_validation(0)
    bar = tqdm(total=total, disable=not progress, desc=desc or f"train {getattr(cell, 'name', '')}".strip(),
               leave=False, dynamic_ncols=True)
    step = 0
    epoch_sum = epoch_n = 0.0

    def advance(loss, gnorm, nb):
        nonlocal step
        step += 1
        record(loss, gnorm, nb)

    try:
        if not use_fused:
            for xb, yb in batches():
                advance(*one_step(xb, yb), xb.shape[1])
        else:
            exits = sorted(set(ckpt_steps) | {s for s in range(1, total + 1) if val_due(s)})
            source = batch_indices() if isinstance(data, Dataset) else None
            _run_fused(cell, P, opt, clip, mask, T, batch_size, total, exits, source, data, rng_batch,
                       xt if source is not None else None, yt if source is not None else None, one_step, advance,
                       lanes=fused == "lanes")
    finally:
        bar.close()

    if best_checkpoint and best["params"] is not None:
        for k in P:
            P[k][...] = best["params"][k]
        opt.load_state_dict(best["opt"])

    config = {
        "mode": mode,
        "epochs": epochs,
        "steps": steps,
        "n_steps": total,
        "batch_size": batch_size,
        "clip": clip,
        "backend": backend,
        "seed": seed,
        "validate": bool(validate),
        "val_every": val_every,
        "n_val": (int(xv.shape[1]) if xv is not None else 0),
        "best_checkpoint": bool(best_checkpoint),
        "checkpoints": ckpt_steps,
        "mask": None if mask is None else mask.tolist(),
        "optimizer": {"name": opt.name, **opt.hyper},
        "data": data.config(),
        "cell": _cell_config(cell),
    }
    return TrainResult(
        params=P,
        opt_state=opt.state_dict(),
        curves=curves,
        checkpoints=ckpts,
        checkpoint_opt_states=ckpt_opt,
        best_step=best["step"],
        best_val_mse=(None if best["step"] is None else best["mse"]),
        config=lio.to_jsonable(config, "train config"),
        optimizer=opt,
    )


# ---------------------------------------------------------------------------------------------
# save / load
# ---------------------------------------------------------------------------------------------
def _stem(path) -> Path:
    path = Path(path)
    if path.suffix in (".npz", ".json"):
        path = path.with_suffix("")
    return path


def _float_list(values):
    return [float(v) if isinstance(v, str) else v for v in values]


def save_run(path, result: TrainResult, config: dict | None = None) -> tuple[Path, Path]:
    """Save a run as ``<path>.npz`` (parameters, optimizer buffers, checkpoints) and
    ``<path>.json`` (configuration, curves, optimizer hyper-parameters and step, and the
    SHA-256 of the .npz). Each file is written atomically (temporary file in the same
    directory + os.replace); the .npz first, so a complete .json always describes a complete
    .npz. ``config`` is any JSON-ready dict (cell, init, task...). Returns the two paths.

    See docs/experiments.md §5.2.
    """
    stem = _stem(path)
    npz_path = Path(str(stem) + ".npz")
    json_path = Path(str(stem) + ".json")
    arrays = {}
    arrays.update(lio.flatten(result.params, "params/"))
    arrays.update(lio.flatten(result.opt_state["state"], "opt/"))
    for s, p in result.checkpoints.items():
        arrays.update(lio.flatten(p, f"ckpt/{int(s)}/params/"))
    for s, sd in result.checkpoint_opt_states.items():
        arrays.update(lio.flatten(sd["state"], f"ckpt/{int(s)}/opt/"))
    meta = {
        "format": RUN_FORMAT,
        "config": config if config is not None else {},
        "train_config": result.config,
        "curves": result.curves,
        "best_step": result.best_step,
        "best_val_mse": result.best_val_mse,
        "optimizer": {"name": result.opt_state["name"], "hyper": result.opt_state["hyper"],
                      "step": result.opt_state["step"]},
        "checkpoint_steps": sorted(int(s) for s in result.checkpoints),
        "checkpoint_opt": {str(int(s)): {"name": sd["name"], "hyper": sd["hyper"], "step": sd["step"]}
                           for s, sd in result.checkpoint_opt_states.items()},
        "param_keys": list(result.params),
        "npz": npz_path.name,
    }
    meta = lio.to_jsonable(meta, "run")  # fail before writing anything
    data = lio.atomic_savez(npz_path, arrays)
    meta["npz_sha256"] = hashlib.sha256(data).hexdigest()
    lio.atomic_write_json(json_path, meta)
    return npz_path, json_path


def load_run(path) -> tuple[TrainResult, dict]:
    """Inverse of :func:`save_run`: returns (TrainResult, config). The optimizer can be
    rebuilt with ``lwsim.optim.from_state_dict(result.params, result.opt_state)``.

    See docs/experiments.md §5.2.
    """
    stem = _stem(path)
    json_path = Path(str(stem) + ".json")
    if not json_path.exists():
        raise FileNotFoundError(f"no run at {stem} (missing {json_path.name})")
    meta = json.loads(json_path.read_text())
    if meta.get("format") != RUN_FORMAT:
        raise ValueError(f"{json_path} is not an lwsim run (format {meta.get('format')!r})")
    npz_path = json_path.parent / meta["npz"]
    data = npz_path.read_bytes()
    if hashlib.sha256(data).hexdigest() != meta["npz_sha256"]:
        raise ValueError(f"{npz_path} does not match {json_path} (checksum differs; interrupted save?)")
    with np.load(_io.BytesIO(data), allow_pickle=False) as z:
        tree = lio.unflatten({k: z[k] for k in z.files})
    keys = meta["param_keys"]

    def opt_sd(info, state_tree):
        state = {k: dict(state_tree.get(k, {})) for k in keys}
        hyper = dict(info["hyper"])
        if "betas" in hyper:
            hyper["betas"] = tuple(hyper["betas"])
        return {"name": info["name"], "hyper": hyper, "step": info["step"], "state": state}

    params = {k: tree["params"][k] for k in keys}
    ckpt_tree = tree.get("ckpt", {})
    checkpoints = {int(s): {k: ckpt_tree[str(s)]["params"][k] for k in keys} for s in meta["checkpoint_steps"]}
    ckpt_opt = {int(s): opt_sd(info, ckpt_tree.get(str(s), {}).get("opt", {}))
                for s, info in meta["checkpoint_opt"].items()}
    curves = {k: _float_list(v) for k, v in meta["curves"].items()}
    best = meta["best_val_mse"]
    result = TrainResult(
        params=params,
        opt_state=opt_sd(meta["optimizer"], tree.get("opt", {})),
        curves=curves,
        checkpoints=checkpoints,
        checkpoint_opt_states=ckpt_opt,
        best_step=meta["best_step"],
        best_val_mse=float(best) if best is not None else None,
        config=meta["train_config"],
    )
    return result, meta["config"]
