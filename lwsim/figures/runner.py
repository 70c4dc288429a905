"""Experiments as grids of independent runs, with a results cache and resume (docs/experiments.md §5.3, issue 9).

A :class:`Run` is an experiment name plus a JSON-serialisable configuration. Its key is the hash of
both, so the cache (``runs/<experiment>/<key>.npz`` + ``.json``) is reused whenever the exact same
configuration comes back, and a run interrupted half-way leaves nothing behind: results are
written to a temporary file and moved into place (atomic on POSIX), only once complete; every
record is checked before it is trusted (runcache.py). Executors: a local process pool (default)
or a Dask cluster (dist.py); either way the results come back to this process, which writes the
cache (docs/cluster.md).
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from tqdm.auto import tqdm

from .run import (EXPERIMENTS, RESULTS_VERSION, Run, RunError, _failure_text, experiment,  # noqa: F401
                  limit_threads, load_result, save_result, thread_env, worker_thread_env)
from .worker import run_task


class GridFailed(RuntimeError):
    """Some runs failed after their retries; the others finished and are cached.

    ``failures``: {Run: traceback text}."""

    def __init__(self, failures):
        self.failures = dict(failures)
        lines = [f"{len(self.failures)} run(s) failed (the other runs finished and are cached):"]
        for run, tb in self.failures.items():
            lines += [f"--- {run.experiment} {run.key} config={run.config_json}", tb.rstrip()]
        super().__init__("\n".join(lines))


def _pool_execute(todo, jobs, threads, retries):
    """Local process pool: yield (run, ok, (result, seconds, profile) or traceback) as runs finish."""
    from concurrent.futures import FIRST_COMPLETED, wait
    if jobs == 1 or len(todo) <= 1:
        for run in todo:
            for attempt in range(retries + 1):
                try:
                    yield run, True, run_task(EXPERIMENTS[run.experiment], run.config_json, threads)
                    break
                except RunError as exc:
                    if attempt == retries:
                        yield run, False, _failure_text(exc)
        return
    with worker_thread_env(threads):             # spawned workers start with these caps
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=get_context("spawn")) as pool:
            def submit(run):
                return pool.submit(run_task, EXPERIMENTS[run.experiment], run.config_json, threads)
            pending = {submit(r): (r, 0) for r in todo}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        run, attempt = pending.pop(fut)
                        exc = fut.exception()
                        if exc is None:
                            yield run, True, fut.result()
                        elif isinstance(exc, RunError) and attempt < retries:
                            pending[submit(run)] = (run, attempt + 1)
                        else:
                            yield run, False, _failure_text(exc)
            finally:
                for fut in pending:
                    fut.cancel()


def run_grid(runs, cache_dir="runs", jobs=None, force=False, progress=True, desc="runs", *,
             scheduler=None, threads_per_run=None, retries=1, timeout=30.0):
    """Execute ``runs`` (skipping cached ones unless ``force``) and return {run: result}.

    jobs: worker processes (default: all cores); 1 runs in this process. scheduler: None (local
    process pool), "local" (a Dask LocalCluster of ``jobs`` workers) or a Dask scheduler address
    (docs/cluster.md). threads_per_run: numba/BLAS threads of each run (default: cores // jobs;
    1 on a remote cluster).
    retries: extra attempts of a run that raised. Each finished run is saved at once by this
    process, so an interrupted grid, restarted, recomputes only what was not finished. Runs that
    still fail are reported together at the end (GridFailed) after every other run finished.
    """
    runs = list(dict.fromkeys(runs))
    jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if threads_per_run is None:                  # a remote cluster's cores are not this machine's
        threads_per_run = 1 if scheduler not in (None, "local") else max(1, (os.cpu_count() or 1) // jobs)
    if int(threads_per_run) < 1:
        raise ValueError(f"threads_per_run must be >= 1, got {threads_per_run}")
    if int(retries) < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    from . import studies  # noqa: F401  (registers the experiments)
    unknown = sorted({r.experiment for r in runs} - set(EXPERIMENTS))
    if unknown:
        raise ValueError(f"runs: unknown experiment(s) {unknown}")
    results, todo = {}, []
    for run in runs:
        cached = None if force else load_result(cache_dir, run)
        if cached is None:
            todo.append(run)
        else:
            results[run] = cached
    n_cached = len(runs) - len(todo)
    failures = {}
    bar = tqdm(total=len(runs), initial=n_cached, desc=desc, disable=not progress, leave=False)
    bar.set_postfix(done=0, cached=n_cached, failed=0)
    if scheduler is None or not todo:            # all cached: no cluster to start or reach
        stream = _pool_execute(todo, jobs, int(threads_per_run), int(retries))
    else:
        from .dist import dask_execute
        stream = dask_execute(todo, scheduler, jobs, int(threads_per_run), int(retries), timeout)
    try:
        for run, ok, payload in stream:
            if ok:
                result, seconds, profile = payload
                save_result(cache_dir, run, result, elapsed_s=seconds, profile=profile)
                results[run] = load_result(cache_dir, run)
            else:
                failures[run] = payload
            bar.set_postfix(done=len(results) - n_cached, cached=n_cached, failed=len(failures), refresh=False)
            bar.update()
    finally:
        stream.close()
        bar.close()
    run_grid.last_stats = {"total": len(runs), "computed": len(todo) - len(failures),
                           "cached": n_cached, "failed": len(failures)}
    if failures:
        raise GridFailed(failures)
    return {run: results[run] for run in runs}
