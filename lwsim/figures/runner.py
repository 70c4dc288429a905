"""Experiments as grids of independent runs, with a results cache and resume (05 §5.3, issue 9).

A :class:`Run` is an experiment name plus a JSON-serialisable configuration. Its key is the hash of
both, so the cache (``runs/<experiment>/<key>.npz`` + ``.json``) is reused whenever the exact same
configuration comes back, and a run interrupted half-way leaves nothing behind: results are
written to a temporary file and moved into place (atomic on POSIX), only once complete.
"""
from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..io import atomic_savez, atomic_write_json, to_jsonable

# Bump when the meaning of stored results changes, so that old caches are not reused.
RESULTS_VERSION = 1

EXPERIMENTS = {}


def experiment(name):
    """Register ``fn(config) -> dict`` as the experiment ``name`` (arrays go to .npz, the rest to JSON)."""
    def deco(fn):
        EXPERIMENTS[name] = fn
        return fn
    return deco


@dataclass(frozen=True)
class Run:
    experiment: str
    config_json: str

    @classmethod
    def make(cls, experiment, **config):
        return cls(experiment, json.dumps(config, sort_keys=True))

    @property
    def config(self):
        return json.loads(self.config_json)

    @property
    def key(self):
        blob = json.dumps({"experiment": self.experiment, "config": self.config,
                           "version": RESULTS_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _paths(cache_dir, run):
    base = Path(cache_dir) / run.experiment / run.key
    return base.with_suffix(".json"), base.with_suffix(".npz")


def save_result(cache_dir, run, result):
    """Arrays → .npz, everything else → .json; the .json is written last and marks completion."""
    js, nz = _paths(cache_dir, run)
    arrays = {k: np.asarray(v) for k, v in result.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in result.items() if k not in arrays}
    atomic_savez(nz, arrays)
    atomic_write_json(js, {"experiment": run.experiment, "config": run.config,
                           "result": to_jsonable(rest, "result"), "arrays": sorted(arrays)})


def load_result(cache_dir, run):
    js, nz = _paths(cache_dir, run)
    if not js.exists() or not nz.exists():
        return None
    meta = json.loads(js.read_text())
    out = dict(meta["result"])
    with np.load(nz) as z:
        out.update({k: z[k] for k in z.files})
    return out


def _execute(experiment_name, config_json):
    # Runs in a worker process: import the experiment modules there too (spawn start method).
    from . import experiments  # noqa: F401
    return EXPERIMENTS[experiment_name](json.loads(config_json))


def run_grid(runs, cache_dir="runs", jobs=None, force=False, progress=True, desc="runs"):
    """Execute ``runs`` (skipping cached ones unless ``force``) and return {run: result}.

    jobs: worker processes (default: all cores); 1 runs in this process. Each finished run is
    saved at once, so an interrupted grid, restarted, recomputes only what was not finished.
    """
    runs = list(dict.fromkeys(runs))
    jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    results, todo = {}, []
    for run in runs:
        cached = None if force else load_result(cache_dir, run)
        if cached is None:
            todo.append(run)
        else:
            results[run] = cached
    bar = tqdm(total=len(runs), initial=len(runs) - len(todo), desc=desc, disable=not progress,
               leave=False)
    try:
        if jobs == 1 or len(todo) <= 1:
            for run in todo:
                res = EXPERIMENTS[run.experiment](run.config)
                save_result(cache_dir, run, res)
                results[run] = load_result(cache_dir, run)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=get_context("spawn")) as pool:
                futs = {pool.submit(_execute, r.experiment, r.config_json): r for r in todo}
                for fut in as_completed(futs):
                    run = futs[fut]
                    save_result(cache_dir, run, fut.result())
                    results[run] = load_result(cache_dir, run)
                    bar.update()
    finally:
        bar.close()
    run_grid.last_stats = {"total": len(runs), "computed": len(todo), "cached": len(runs) - len(todo)}
    return {run: results[run] for run in runs}
