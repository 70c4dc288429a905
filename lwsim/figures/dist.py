"""Run the figure grid on a Dask cluster (docs/cluster.md): one Dask task per uncached run.

``--scheduler local`` starts a ``LocalCluster`` (``jobs`` worker processes, one thread each, so one
run at a time per worker); any other value is the address of a running scheduler (by hand with
``dask scheduler`` / ``dask worker``, or from ``dask_jobqueue.SLURMCluster``). Results travel back
to the client, which writes the cache (runner.py): no shared filesystem is needed, and a killed
client loses only the runs not yet received.

Failures: a task that raises is retried ``retries`` times (Dask ``retries=``); a worker that dies
mid-run is restarted by its nanny and the scheduler reschedules the task, up to the scheduler's
``distributed.scheduler.allowed-failures`` (set to ALLOWED_FAILURES for the local cluster), after
which the run is reported as failed (KilledWorker) while the other runs go on.
"""
from __future__ import annotations

import logging

from .run import EXPERIMENTS, _failure_text, thread_env
from .worker import run_task

ALLOWED_FAILURES = 3
INSTALL_HINT = "pip install 'lwsim[dist]'"


class DaskUnavailable(ImportError):
    """--scheduler was given but Dask distributed is not installed."""


class SchedulerUnreachable(ConnectionError):
    """The Dask scheduler did not answer within the timeout."""


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise DaskUnavailable(f"--scheduler needs Dask distributed, an optional extra: {INSTALL_HINT} "
                              f"({exc})") from None
    return distributed


def connect(scheduler, jobs, threads, timeout=30.0):
    """(client, cluster or None) for ``scheduler`` ("local" or an address like tcp://host:8786)."""
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(f"scheduler must be 'local' or an address such as tcp://host:8786, got {scheduler!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    distributed = _import_distributed()
    import dask
    if scheduler == "local":
        with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
            cluster = distributed.LocalCluster(n_workers=int(jobs), threads_per_worker=1, processes=True,
                                               dashboard_address=None, env=thread_env(threads),
                                               silence_logs=logging.ERROR)
        try:
            return distributed.Client(cluster, timeout=timeout), cluster
        except BaseException:
            cluster.close()
            raise
    try:
        return distributed.Client(scheduler, timeout=timeout), None
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                                   f"({type(exc).__name__}: {exc})") from None


def dask_execute(todo, scheduler, jobs, threads, retries, timeout=30.0):
    """Submit every run of ``todo``; yield (run, ok, (result, seconds, profile) or traceback text) as they finish."""
    client, cluster = connect(scheduler, jobs, threads, timeout)
    futs = {}
    try:
        if not todo:
            return
        distributed = _import_distributed()
        for run in todo:
            fut = client.submit(run_task, EXPERIMENTS[run.experiment], run.config_json, threads,
                                key=f"lwsim-{run.experiment}-{run.key}", retries=retries, pure=False)
            futs[fut] = run
        for fut in distributed.as_completed(list(futs)):
            run = futs.pop(fut)
            try:
                payload, ok = fut.result(), True
            except Exception as exc:         # RunError (after retries) or KilledWorker
                payload, ok = _failure_text(exc), False
                if type(exc).__name__ == "KilledWorker":
                    payload += f"\n(the worker running it died {ALLOWED_FAILURES + 1} times or more)"
            fut.release()
            yield run, ok, payload
    finally:
        if futs:
            client.cancel(list(futs))
        client.close()
        if cluster is not None:
            cluster.close()
