"""Tests of lwsim/figures/dist.py (laid out like the code: docs/testing.md).

The figure grid on Dask (docs/cluster.md): LocalCluster vs the pool bit for bit, a worker killed
mid-run, a run that always raises, an interrupted client, unreachable scheduler, missing extra."""


import json
import os
import signal
import sys
import threading
import time
import warnings

import cloudpickle
import numpy as np
import pytest

from lwsim.figures import runcache as cache, runner
from lwsim.figures.dist import DaskUnavailable, SchedulerUnreachable
from lwsim.figures.plan import plan
from lwsim.figures.runner import GridFailed, Run, experiment, run_grid


distributed = pytest.importorskip("distributed")


# Dask workers cannot import this test module: ship its experiment functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@experiment("t_dist_square")
def t_dist_square(c):
    pidfile = c.get("pidfile")
    if pidfile and not os.path.exists(pidfile):        # first attempt: announce, then run long
        with open(pidfile + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(pidfile + ".tmp", pidfile)
        time.sleep(60)
    time.sleep(c.get("sleep", 0.0))
    return {"y": np.arange(c["x"], dtype=float) ** 2, "x": c["x"], "pid": os.getpid()}


@experiment("t_dist_fail")
def t_dist_fail(c):
    raise ValueError(f"planted failure x={c['x']}")


@pytest.fixture(scope="module")
def cluster():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lc = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=50)
    yield lc
    lc.close()


def squares(n, **extra):
    return [Run.make("t_dist_square", x=i + 2, **extra) for i in range(n)]


def test_local_cluster_smoke_bit_identical_to_pool(tmp_path):
    runs = [r for g in plan(["A1", "A11", "A12", "B1", "B4", "B7"], "smoke", "numpy").values() for r in g]
    pool = run_grid(runs, cache_dir=tmp_path / "pool", jobs=2, threads_per_run=1, progress=False)
    dask = run_grid(runs, cache_dir=tmp_path / "dask", jobs=2, threads_per_run=1, progress=False,
                    scheduler="local")
    assert run_grid.last_stats == {"total": len(runs), "computed": len(runs), "cached": 0, "failed": 0}
    for run in runs:
        a = json.loads(cache.paths(tmp_path / "pool", run)[0].read_text())
        b = json.loads(cache.paths(tmp_path / "dask", run)[0].read_text())
        assert a["checksum"] == b["checksum"] and a["result"] == b["result"], run
        assert sorted(pool[run]) == sorted(dask[run])
        for k, v in pool[run].items():
            if isinstance(v, np.ndarray):
                assert v.dtype == dask[run][k].dtype and v.tobytes() == dask[run][k].tobytes(), (run, k)


def test_worker_killed_mid_run_is_retried(tmp_path, cluster):
    pidfile = str(tmp_path / "victim.pid")
    runs = squares(4, sleep=0.2) + [Run.make("t_dist_square", x=9, pidfile=pidfile)]

    def kill_when_started():
        deadline = time.time() + 60
        while not os.path.exists(pidfile) and time.time() < deadline:
            time.sleep(0.05)
        os.kill(int(open(pidfile).read()), signal.SIGKILL)     # the worker process running that run

    killer = threading.Thread(target=kill_when_started)
    killer.start()
    out = run_grid(runs, cache_dir=tmp_path / "c", scheduler=cluster.scheduler_address, jobs=2,
                   progress=False, timeout=20)
    killer.join()
    assert run_grid.last_stats["failed"] == 0 and run_grid.last_stats["computed"] == 5
    assert out[runs[-1]]["pid"] != int(open(pidfile).read())   # finished on a restarted/other worker
    files = sorted(p.name for p in (tmp_path / "c" / "t_dist_square").iterdir())
    assert files == sorted(f"{r.key}.{e}" for r in runs for e in ("json", "npz"))   # none duplicated
    for r in runs:
        assert np.array_equal(out[r]["y"], np.arange(r.config["x"]) ** 2.0)


def test_failing_run_reported_others_complete(tmp_path, cluster):
    bad = Run.make("t_dist_fail", x=7)
    runs = squares(3) + [bad]
    with pytest.raises(GridFailed) as ei:
        run_grid(runs, cache_dir=tmp_path, scheduler=cluster.scheduler_address, jobs=2, progress=False,
                 retries=1)
    msg = str(ei.value)
    assert list(ei.value.failures) == [bad]
    assert '{"x": 7}' in msg and "planted failure x=7" in msg and "Traceback" in msg
    assert run_grid.last_stats == {"total": 4, "computed": 3, "cached": 0, "failed": 1}
    for r in runs[:3]:
        assert cache.load(tmp_path, r) is not None


def test_interrupted_client_resumes(tmp_path, cluster, monkeypatch):
    runs = squares(6, sleep=0.1)
    real, saved = runner.save_result, []

    def save_then_interrupt(*a, **k):
        if len(saved) == 2:
            raise KeyboardInterrupt
        real(*a, **k)
        saved.append(a[1])

    monkeypatch.setattr(runner, "save_result", save_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_grid(runs, cache_dir=tmp_path, scheduler=cluster.scheduler_address, jobs=2, progress=False)
    monkeypatch.setattr(runner, "save_result", real)
    run_grid(runs, cache_dir=tmp_path, scheduler=cluster.scheduler_address, jobs=2, progress=False)
    assert run_grid.last_stats == {"total": 6, "computed": 4, "cached": 2, "failed": 0}


# ----------------------------------------------------------------------------------------------
# DaskUnavailable
# ----------------------------------------------------------------------------------------------


def test_missing_extra_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)        # import distributed → ImportError
    with pytest.raises(DaskUnavailable, match=r"lwsim\[dist\]"):
        run_grid(squares(1), cache_dir=tmp_path, scheduler="local", progress=False)


# ----------------------------------------------------------------------------------------------
# SchedulerUnreachable
# ----------------------------------------------------------------------------------------------


def test_unreachable_scheduler_clear_error(tmp_path):
    t0 = time.time()
    with pytest.raises(SchedulerUnreachable, match=r"tcp://127\.0\.0\.1:9\b"):
        run_grid(squares(1), cache_dir=tmp_path, scheduler="tcp://127.0.0.1:9", timeout=2, progress=False)
    assert time.time() - t0 < 15
    run_grid(squares(1), cache_dir=tmp_path, jobs=1, progress=False)       # all cached: no cluster needed
    run_grid(squares(1), cache_dir=tmp_path, scheduler="tcp://127.0.0.1:9", timeout=2, progress=False)
    assert run_grid.last_stats["cached"] == 1
