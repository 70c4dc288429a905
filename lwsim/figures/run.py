"""A run: an experiment name plus its JSON configuration, keyed by their hash; the experiment
registry and the worker's thread caps (docs/experiments.md §5.3).

Every study registers its experiment functions here with :func:`experiment`; the engine (runner,
Dask, warm-up, cost model) reads :data:`EXPERIMENTS` once the registry (``lwsim.figures.studies``)
has been imported. This module imports no study.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass

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


# The cache (checked records, quarantine of bad files) lives in runcache.py; these names stay.
def save_result(cache_dir, run, result, elapsed_s=None, profile=None):
    """Write ``run``'s result atomically, with its wall time and profile (see cache.save)."""
    from . import runcache as cache
    cache.save(cache_dir, run, result, elapsed_s, profile)


def load_result(cache_dir, run):
    """The checked cached result of ``run`` or None (a bad record is reported and moved aside)."""
    from . import runcache as cache
    return cache.load(cache_dir, run)


class RunError(RuntimeError):
    """A run raised; the message holds the worker's formatted traceback."""


def thread_env(threads):
    """Environment that caps BLAS/OpenMP/numba threads of a process started with it."""
    n = str(int(threads))
    return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n, "NUMBA_NUM_THREADS": n}


@contextlib.contextmanager
def worker_thread_env(threads):
    """``os.environ`` with :func:`thread_env` for the body (spawned workers start with these caps),
    restored afterwards — also when the body raises."""
    env = thread_env(threads)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def limit_threads(threads):
    """Cap this process at ``threads`` numba (and, when threadpoolctl is present, BLAS) threads."""
    if threads is None:
        return
    import numba
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:          # BLAS threads are then capped by thread_env at process start
        return
    threadpool_limits(int(threads))


def _failure_text(exc):
    if isinstance(exc, RunError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
