"""Trainings and detection tables shared by several studies (docs/experiments.md §5.3).

The [A] model (multilag task, cell, initial parameters, optimizer, training in the preset's dtype,
cast to float64), its detection tables under each null (``a_null_tables``, ``a_windows``), the
decay-law dict every study stores, and the [B] cell. Imports no study: the studies import it.
"""
from __future__ import annotations

import numpy as np

import lwsim
from lwsim import stats
from lwsim.tasks import make as make_task
from lwsim.stats.nulls import NULLS as STAT_NULLS
from lwsim.train import train
from lwsim.window import window_chain

from .config import ATrained, AWindow, BTrained, Trained
from .timing import part




def _train_kwargs(opt, lr, weight_decay=0.0):
    kw = {"lr": lr}
    if opt == "adamw":
        kw["weight_decay"] = weight_decay
    return kw


def _curves(res):
    curves = res.curves                      # a TrainResult's curves, not a configuration
    out = {"curve_val_step": np.asarray(curves.get("val_step", []), dtype=float),
           "curve_val_mse": np.asarray(curves.get("val_mse", []), dtype=float),
           "curve_val_r2": np.asarray(curves.get("val_r2", []), dtype=float)}
    if "epoch_train_loss" in curves:
        out["curve_train_loss"] = np.asarray(curves["epoch_train_loss"], dtype=float)
    else:
        out["curve_train_loss"] = np.asarray(curves.get("train_loss", []), dtype=float)
    return out


def _train_dtype(c):
    """The preset's training dtype (``train_dtype``; float64 when absent). [A] and [B] trained in
    PyTorch's default float32; lwsim's presets do the same (docs/experiments.md §5.3)."""
    dt = Trained.read(c, "train_dtype")
    if dt not in ("float32", "float64"):
        raise ValueError(f"train_dtype must be 'float32' or 'float64', got {dt!r}")
    return dt


def _float64(cell, res):
    """The trained cell and result in float64, cast once: diagnostics and statistics always run
    in float64 whatever the training dtype."""
    if cell.dtype == np.float64:
        return cell, res
    return cell.with_dtype("float64"), res.astype("float64")


def _a_cell(name, c):
    opts = {"layernorm": True, "readout": "every", "dtype": _train_dtype(c)}
    if "s" in lwsim.cells.kind(name).options:          # constgate's fixed gate
        opts["s"] = c["s0"]
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


def _a_params(cell, c):
    """Initial parameters for the preset's ``gate_init`` (studies/main/sizes.py, docs/experiments.md §5.3):
    "lwsim"/"final" paper_a with gate biases logit(s0) (GRU: update gate), LSTM forget bias
    logit(0.95) ("lwsim") or logit(0.5) ("final"); "v1" as "lwsim" but GRU/LSTM biases drawn from
    PyTorch's nn.Linear(D, H) default U(−1/√D, 1/√D) (the earlier code left them at PyTorch's init)."""
    mode = ATrained.read(c, "gate_init")
    if mode not in ("lwsim", "final", "v1"):
        raise ValueError(f"gate_init must be 'lwsim', 'final' or 'v1', got {mode!r}")
    params = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.5 if mode == "final" else 0.95)
    if mode == "v1" and cell.kind.torch_gates is not None:   # the cells built from nn.Linear layers
        rng = np.random.default_rng([c["seed"], 0x7631])
        bound = 1.0 / np.sqrt(c["D"])
        for k in sorted(params):
            if k.startswith("b_") and k != "b_out":
                params[k] = rng.uniform(-bound, bound, params[k].shape).astype(cell.dtype)
    return params


def train_a_model(c):
    """The [A] training of a run configuration: multilag data, the cell, its preset's initial
    parameters, the optimizer, trained in the preset's ``train_dtype`` (docs/experiments.md §5.3).
    Returns (dataset, cell, TrainResult), the cell and result cast to float64."""
    with part("training"):
        task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"],
                         coefs=c["task_coefs"], sigma_y=c["sigma_y"])
        ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
        cell = _a_cell(c["cell"], c)
        res = train(cell, _a_params(cell, c), ds, optimizer=c["optimizer"],
                    optimizer_kwargs=_train_kwargs(c["optimizer"], c["lr"], c["weight_decay"]),
                    epochs=c["epochs"], batch_size=c["batch"], clip=c["clip"], backend=c["backend"],
                    seed=c["seed"], progress=False)
        cell, res = _float64(cell, res)
    return ds, cell, res


NULLS = ("lag", "full", "author")   # the detection nulls the [A] studies run (a_windows)
# the author's floors one at a time (docs/fidelity.md): name → (float32 diagnostics, floors), from
# their declarations in lwsim.stats.nulls
FLOOR_ABLATIONS = {n: (v.float32, v.floors) for n, v in STAT_NULLS.items() if n not in ("lag", "full")}
# run keys of a detection table (stored with the suffix _<null> for every null but "lag") → its field
TABLE_KEYS = {"mean": "mean", "alpha_hat": "alpha", "sigma_hat": "sigma", "kappa_hat": "kappa", "n_hat": "n_hat",
              "n_star": "n_star", "reliable": "reliable", "h_n": "h_n"}
NULL_KEYS = (*TABLE_KEYS, "master")


def a_null_tables(cell, params, rates, x_diag, y_diag, c, nulls=NULLS, ablations=(), timer=None,
                  need_envelope=True, lags=None, **matched_kw):
    """The envelope, the matched statistic and a detection table per null and floor ablation for
    one trained float64 model (docs/statistics.md §3.3, docs/fidelity.md): lwsim.window's chain
    with the run configuration's options.

    Returns (env, ms, tables): tables[name] = {tail method: DetectionTable} for every name in
    ``nulls`` ("lag", "full", "author") and ``ablations`` (keys of FLOOR_ABLATIONS). "full" tests
    m̄ against the whole per-sequence update (MatchedStatistic.full_null); "author" is "lag" with
    the author's floors on float32 diagnostics. The float32 pass runs only when a name needs it.
    ``need_envelope=False``: the matched statistic alone (env is None); the tables are the same
    bits, since the one-pass function shares the gate factors without changing them.
    """
    names = list(nulls) + [a for a in ablations if a not in nulls]
    bad = [n for n in names if n not in ("lag", "full") and n not in FLOOR_ABLATIONS]
    if bad:
        raise ValueError(f"unknown null(s) {bad}: use 'lag', 'full' or one of {sorted(FLOOR_ABLATIONS)}")
    opt = {k: AWindow.read(c, k) for k in ("orient", "diag_dtype", "tail_methods", "n_boot", "min_samples",
                                           "cap_budget", "fit_subsample")}
    chain = window_chain(cell, params, rates, x_diag, y_diag, np.asarray(c["lags"] if lags is None else lags),
                         c["n_grid"], nulls=names, envelope=need_envelope, K=c["K"], seed=c["seed"],
                         backend=c["backend"], eps=c["eps"], timer=timer, **opt, **matched_kw)
    return chain.envelope, chain.matched, chain.tables


def a_windows(cell, params, opt, x_diag, y_diag, c, nulls=NULLS, lags=None):
    """Detection tables of one trained model under each null: {null: stats.DetectionTable}.

    "lag": each lag's statistic against its own (transported) spread; "full": against the spread of
    the whole per-sequence update along the same directions; "author": "lag" with the author's
    floors and float32 diagnostics (docs/statistics.md §3.3, docs/fidelity.md). ``c`` is a typed run
    configuration with the window fields (config.AWindow, seed, backend); ``lags`` replaces its
    ``lags`` (A16 diagnoses the task's delay alone). The tables' ``h_n`` is Ĥ_N over ``c.n_grid``;
    Ĥ_N at any budget N is ``stats.learnability_window(t.lags, t.n_hat, N)``.
    """
    _, _, tables = a_null_tables(cell, params, opt, x_diag, y_diag, c, nulls=nulls, need_envelope=False,
                                 lags=lags)
    return {n: next(iter(t.values())) for n, t in tables.items()}


_SHARED: dict = {}      # init_windows' results in this process: {input digest: tables}
_SHARED_MAX = 256


def init_windows(cell, params, lr, x_diag, y_diag, c, nulls, lags=None):
    """:func:`a_windows` at the initial parameters with P = η·I, computed once per process for
    identical inputs (docs/experiments.md §5.6).

    A15 and A16 train every budget N of a cell × seed (× delay) from the same initial parameters
    and diagnose on the same held-out sequences, so this table is the same for every N; the runs
    of one worker process share it instead of recomputing it. The key is a digest of everything
    the tables depend on (the cell, η, the parameters' and sequences' bytes, the configuration
    without N), so a hit returns exactly the tables a recomputation would give.
    """
    import hashlib
    import json
    h = hashlib.sha256(json.dumps([repr(cell), float(lr), list(nulls), None if lags is None else list(lags),
                                   {k: v for k, v in c.items() if k != "N"}], sort_keys=True, default=str).encode())
    for k in sorted(params):
        a = np.ascontiguousarray(params[k])
        h.update(f"{k}{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    for a in (x_diag, y_diag):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    key = h.hexdigest()
    if key not in _SHARED:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.pop(next(iter(_SHARED)))
        _SHARED[key] = a_windows(cell, params, float(lr), x_diag, y_diag, c, nulls=nulls, lags=lags)
    return _SHARED[key]



def _master(det, f):
    """The master fit on the detectable lags of one detection table (docs/statistics.md §3.5)."""
    finite = np.isfinite(det.n_hat)
    try:
        return stats.fit_master(det.n_hat[finite], det.kappa[finite], f[finite]).__dict__
    except ValueError as exc:                       # too few detectable lags at this size
        return {"error": str(exc)}


def _decay_dict(decay):
    return {"selected": decay.selected, "selected_bic": decay.selected_bic, "n": decay.n,
            "fits": {law: {"params": f.params, "r2": f.r2, "ssr": f.ssr, "aic": f.aic, "bic": f.bic}
                     for law, f in decay.fits.items()}}



def _b_cell(name, c, readout="last"):
    opts = {"bias": False, "readout": readout, "dtype": _train_dtype(c)}
    if "s" in lwsim.cells.kind(name).options:          # constgate's fixed gate
        opts["s"] = BTrained.read(c, "s")
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


