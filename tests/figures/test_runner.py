"""Tests of lwsim/figures/runner.py (laid out like the code: docs/testing.md).

Counts the runner promises (docs/cluster.md, docs/experiments.md §5.3): a run that always raises
is tried exactly ``retries + 1`` times, in this process, in the process pool and on Dask; a run
that fails once and then succeeds is cached as done with ``retries=1`` and reported as failed
(nothing cached) with ``retries=0``. Every attempt leaves one file, so the attempts are counted,
not inferred from the outcome.

Mutation tests of lwsim/figures/runner.py, run.py and worker.py (issue 32): run_grid on trivial
registered experiments (in this process, and once on the spawned pool), the thread caps, the failure
text and the retries."""


import json
import os
import sys
import uuid

import numpy as np
import pytest

from lwsim.figures import runcache as cache, runner
from lwsim.figures.run import EXPERIMENTS, Run
from lwsim.figures.runner import GridFailed, Run, experiment, run_grid
from lwsim.figures.worker import run_task


def _attempt(folder):
    """Record one attempt (one file per attempt, whatever process runs it)."""
    with open(os.path.join(folder, f"attempt-{os.getpid()}-{uuid.uuid4().hex}"), "w"):
        pass


def attempts(folder):
    return sum(name.startswith("attempt-") for name in os.listdir(folder))


@experiment("t_sharp_always_fails")
def t_sharp_always_fails(c):
    _attempt(c["dir"])
    raise ValueError(f"planted failure {c['tag']}")


@experiment("t_sharp_fails_once")
def t_sharp_fails_once(c):
    _attempt(c["dir"])
    try:                                               # the first attempt (atomically) raises
        os.close(os.open(os.path.join(c["dir"], "failed-once"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return {"y": np.arange(3.0) * c["tag"]}
    raise ValueError(f"planted first-attempt failure {c['tag']}")


@experiment("t_sharp_ok")
def t_sharp_ok(c):
    return {"y": np.full(2, float(c["tag"]))}


def _runs(tmp_path, name):
    """(always failing run, fails-once run, a good run) with one attempt folder each."""
    out = []
    for exp in ("t_sharp_always_fails", "t_sharp_fails_once"):
        d = tmp_path / f"{name}-{exp}"
        d.mkdir()
        out.append(Run.make(exp, dir=str(d), tag=7))
    return out + [Run.make("t_sharp_ok", tag=len(name))]


def _check(tmp_path, runs, retries, **grid):
    bad, flaky, ok = runs
    cache_dir = tmp_path / "cache"
    with pytest.raises(GridFailed) as ei:
        run_grid(runs, cache_dir=cache_dir, progress=False, retries=retries, **grid)
    assert attempts(bad.config["dir"]) == retries + 1
    assert attempts(flaky.config["dir"]) == (1 if retries == 0 else 2)
    assert cache.load(cache_dir, ok) is not None
    if retries == 0:
        assert set(ei.value.failures) == {bad, flaky}
        assert "planted first-attempt failure 7" in ei.value.failures[flaky]
        assert cache.load(cache_dir, flaky) is None
        assert run_grid.last_stats == {"total": 3, "computed": 1, "cached": 0, "failed": 2}
    else:
        assert set(ei.value.failures) == {bad}
        np.testing.assert_array_equal(cache.load(cache_dir, flaky)["y"], [0.0, 7.0, 14.0])
        assert run_grid.last_stats == {"total": 3, "computed": 2, "cached": 0, "failed": 1}
    assert cache.load(cache_dir, bad) is None


# ----------------------------------------------------------------------------- Dask
try:
    import cloudpickle
    import distributed  # noqa: F401
except ImportError:                                   # the optional [dist] extra: Dask tests skipped
    distributed = None
else:
    from tests.figures.test_dist import cluster  # noqa: F401  (test_dist's LocalCluster fixture, two workers)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])    # workers cannot import this module


@pytest.fixture
def exps(monkeypatch):
    """Registers _mut_* experiments for the test; removed afterwards."""
    added = {}

    def add(name, fn):
        added[name] = fn
        monkeypatch.setitem(EXPERIMENTS, name, fn)
    return add


class _Bar:
    """tqdm stand-in that records its arguments and calls."""
    made = []

    def __init__(self, **kw):
        self.kw, self.calls = kw, []
        _Bar.made.append(self)

    def set_postfix(self, **kw):
        self.calls.append(("postfix", kw))

    def update(self):
        self.calls.append(("update",))

    def close(self):
        self.calls.append(("close",))


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_attempts_in_this_process(tmp_path, retries):
    _check(tmp_path, _runs(tmp_path, f"serial{retries}"), retries, jobs=1)


def test_attempts_in_the_process_pool(tmp_path):
    # spawned workers (one pool start, ~5 s); each retry is a new submission to the pool
    _check(tmp_path, _runs(tmp_path, "pool"), 2, jobs=2, threads_per_run=1)


# ----------------------------------------------------------------------------------------------
# GridFailed
# ----------------------------------------------------------------------------------------------


def test_grid_failed_message():
    r = Run.make("e", a=1)
    g = runner.GridFailed({r: "tb line\n\n"})
    assert g.failures == {r: "tb line\n\n"}
    assert str(g) == (f"1 run(s) failed (the other runs finished and are cached):\n"
                      f"--- e {r.key} config={{\"a\": 1}}\ntb line")


# ----------------------------------------------------------------------------------------------
# _pool_execute
# ----------------------------------------------------------------------------------------------


def test_pool_execute_in_process(exps):
    # private: run_grid consumes its (run, ok, payload) stream into the cache and a GridFailed; the stream and the pool's arguments show only here
    exps("_mut_ok", dict)
    exps("_mut_bad", int)
    a, b = Run.make("_mut_ok", v=1), Run.make("_mut_bad", v=1)
    got = list(runner._pool_execute([a, b], 1, 1, 0))
    assert [(g[0], g[1]) for g in got] == [(a, True), (b, False)]
    assert got[0][2][0] == {"v": 1} and got[1][2].startswith("Traceback") and "TypeError" in got[1][2]
    got = list(runner._pool_execute([b], 4, 1, 1))              # one run: in this process too
    assert len(got) == 1 and got[0][1] is False


def test_pool_execute_spawned(tmp_path, monkeypatch):
    """The process pool: builtins as experiments (picklable by name), each in a spawned worker
    whose environment has the thread caps; failures retried, then reported."""
    # private: run_grid consumes its (run, ok, payload) stream into the cache and a GridFailed; the stream and the pool's arguments show only here
    monkeypatch.setitem(EXPERIMENTS, "_mut_ok", dict)
    monkeypatch.setitem(EXPERIMENTS, "_mut_bad", int)
    monkeypatch.setitem(EXPERIMENTS, "_mut_env", os.getenv)
    a, b = Run.make("_mut_ok", v=1), Run.make("_mut_bad", v=2)
    env = Run("_mut_env", json.dumps("OMP_NUM_THREADS"))
    got = {r: (ok, p) for r, ok, p in runner._pool_execute([a, b, env], 2, 1, 1)}
    assert got[a][0] is True and got[a][1][0] == {"v": 1}
    assert got[env] [0] is True and got[env][1][0] == "1"
    assert got[b][0] is False and "TypeError" in got[b][1]


def test_pool_execute_in_process_threads(exps, monkeypatch):
    # private: run_grid consumes its (run, ok, payload) stream into the cache and a GridFailed; the stream and the pool's arguments show only here
    seen = []
    monkeypatch.setattr(runner, "run_task", lambda fn, cj, threads: seen.append((cj, threads)) or ({}, 0, {}))
    exps("_mut_ok", dict)
    list(runner._pool_execute([Run.make("_mut_ok")], 1, 3, 0))
    assert seen == [("{}", 3)]


def test_pool_execute_one_run_stays_here(exps):
    # private: run_grid consumes its (run, ok, payload) stream into the cache and a GridFailed; the stream and the pool's arguments show only here
    # an unpicklable experiment works only in this process: one run with jobs = 4 never goes to the pool
    exps("_mut_lambda", lambda c: {"here": 1})
    got = list(runner._pool_execute([Run.make("_mut_lambda")], 4, 1, 0))
    assert got[0][1] is True and got[0][2][0] == {"here": 1}


def test_pool_execute_pool_arguments(monkeypatch):
    """Two runs with jobs = 5: a spawned pool of min(5, 2) = 2 workers; the failing run is submitted
    1 + retries = 3 times, the good one once; the workers start with the thread caps."""
    # private: run_grid consumes its (run, ok, payload) stream into the cache and a GridFailed; the stream and the pool's arguments show only here
    from concurrent.futures import ProcessPoolExecutor
    made = []

    class Pool(ProcessPoolExecutor):
        def __init__(self, max_workers=None, mp_context=None):
            made.append({"max_workers": max_workers, "method": mp_context and mp_context.get_start_method(),
                         "submits": []})
            super().__init__(max_workers=max_workers, mp_context=mp_context)

        def submit(self, fn, *args):
            made[-1]["submits"].append(args[1])
            return super().submit(fn, *args)
    monkeypatch.setattr(runner, "ProcessPoolExecutor", Pool)
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    monkeypatch.setitem(EXPERIMENTS, "_mut_bad", int)
    monkeypatch.setitem(EXPERIMENTS, "_mut_env", os.getenv)
    env, bad = Run("_mut_env", json.dumps("OMP_NUM_THREADS")), Run.make("_mut_bad", v=2)
    got = {r: (ok, p) for r, ok, p in runner._pool_execute([env, bad], 5, 1, 2)}
    assert got[env][0] is True and got[env][1][0] == "1"        # in a worker: capped at 1, not 5
    assert got[bad][0] is False
    assert len(made) == 1 and made[0]["max_workers"] == 2 and made[0]["method"] == "spawn"
    # retries = 2: the failing run is submitted 1 + 2 = 3 times
    assert sorted(made[0]["submits"]) == sorted([env.config_json] + 3 * [bad.config_json])
    assert os.environ["OMP_NUM_THREADS"] == "5"


# ----------------------------------------------------------------------------------------------
# run_grid
# ----------------------------------------------------------------------------------------------


def test_failed_once_then_cached_run_is_not_rerun(tmp_path):
    bad, flaky, ok = _runs(tmp_path, "again")
    with pytest.raises(GridFailed):
        run_grid([flaky, ok], cache_dir=tmp_path / "c", jobs=1, progress=False, retries=0)
    run_grid([flaky, ok], cache_dir=tmp_path / "c", jobs=1, progress=False, retries=0)
    assert attempts(flaky.config["dir"]) == 2          # the second grid: one attempt, then cached
    assert run_grid.last_stats == {"total": 2, "computed": 1, "cached": 1, "failed": 0}
    run_grid([flaky, ok], cache_dir=tmp_path / "c", jobs=1, progress=False, retries=0)
    assert attempts(flaky.config["dir"]) == 2 and run_grid.last_stats["cached"] == 2


@pytest.mark.skipif(distributed is None, reason="needs the optional Dask extra (lwsim[dist])")
@pytest.mark.parametrize("retries", [0, 2])
def test_attempts_on_dask(tmp_path, request, retries):
    cluster = request.getfixturevalue("cluster")
    _check(tmp_path, _runs(tmp_path, f"dask{retries}"), retries, jobs=2,
           scheduler=cluster.scheduler_address, timeout=20)


def test_run_grid_in_process(tmp_path, exps):
    calls = []
    exps("_mut_ok", lambda c: calls.append(c) or {"y": c["x"] * 2})
    runs = [Run.make("_mut_ok", x=i) for i in (1, 2, 1)]          # a duplicate runs once
    out = runner.run_grid(runs, tmp_path, jobs=1, progress=False)
    assert list(out) == runs[:2] and [out[r]["y"] for r in runs[:2]] == [2, 4]
    assert calls == [{"x": 1}, {"x": 2}]
    assert runner.run_grid.last_stats == {"total": 2, "computed": 2, "cached": 0, "failed": 0}
    out = runner.run_grid([runs[1], runs[0]], tmp_path, jobs=1, progress=False)   # all cached: order of the call
    assert list(out) == [runs[1], runs[0]] and len(calls) == 2
    assert runner.run_grid.last_stats == {"total": 2, "computed": 0, "cached": 2, "failed": 0}
    runner.run_grid(runs[:1], tmp_path, jobs=1, progress=False, force=True)
    assert len(calls) == 3
    assert runner.run_grid.last_stats == {"total": 1, "computed": 1, "cached": 0, "failed": 0}


def test_run_grid_retries_and_failures(tmp_path, exps):
    n = {"flaky": 0, "bad": 0}

    def flaky(c):
        n["flaky"] += 1
        if n["flaky"] == 1:
            raise ValueError("first try")
        return {"ok": 1}

    def bad(c):
        n["bad"] += 1
        raise ValueError("always")
    exps("_mut_flaky", flaky)
    exps("_mut_bad", bad)
    good, failing = Run.make("_mut_flaky"), Run.make("_mut_bad")
    with pytest.raises(runner.GridFailed) as e:
        runner.run_grid([failing, good], tmp_path, jobs=1, progress=False, retries=2)
    assert n == {"flaky": 2, "bad": 3}                            # 1 + retries attempts
    assert list(e.value.failures) == [failing]
    assert "ValueError: always" in e.value.failures[failing]
    assert runner.run_grid.last_stats == {"total": 2, "computed": 1, "cached": 1 - 1, "failed": 1}
    assert runner.run_grid([good], tmp_path, jobs=1, progress=False)[good]["ok"] == 1   # cached
    n["flaky"] = 0
    with pytest.raises(runner.GridFailed):
        runner.run_grid([good], tmp_path, jobs=1, progress=False, force=True, retries=0)
    assert n["flaky"] == 1
    n["bad"] = 0
    with pytest.raises(runner.GridFailed):
        runner.run_grid([failing], tmp_path, jobs=1, progress=False)     # default: one retry
    assert n["bad"] == 2


def test_run_grid_argument_checks(tmp_path, exps):
    exps("_mut_ok", dict)
    r = [Run.make("_mut_ok")]
    for kw, msg in [({"jobs": 0}, "jobs must be >= 1, got 0"),
                    ({"threads_per_run": 0}, "threads_per_run must be >= 1, got 0"),
                    ({"retries": -1}, "retries must be >= 0, got -1")]:
        with pytest.raises(ValueError) as e:
            runner.run_grid(r, tmp_path, progress=False, **kw)
        assert str(e.value) == msg
    with pytest.raises(ValueError) as e:
        runner.run_grid([Run.make("_mut_nope"), Run.make("_mut_absent")], tmp_path, progress=False)
    assert str(e.value) == "runs: unknown experiment(s) ['_mut_absent', '_mut_nope']"
    # the bounds themselves are accepted
    assert runner.run_grid(r, tmp_path, jobs=1, threads_per_run=1, retries=0, progress=False)[r[0]] == {}


def test_run_grid_threads_default(tmp_path, exps, monkeypatch):
    seen = []

    def pool(todo, jobs, threads, retries):
        seen.append((jobs, threads, retries))
        return (x for x in ())
    monkeypatch.setattr(runner, "_pool_execute", pool)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    exps("_mut_ok", dict)
    r = Run.make("_mut_ok")
    for kw in [{"jobs": 3}, {"jobs": 16}, {}, {"jobs": "2", "retries": "3"}]:
        try:
            runner.run_grid([r], tmp_path, progress=False, **kw)
        except KeyError:
            pass
    # 8 // 3 = 2; 8 // 16 = 0 -> 1; jobs default 8 -> 1 each; 8 // 2 = 4
    assert seen == [(3, 2, 1), (16, 1, 1), (8, 1, 1), (2, 4, 3)]
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    try:
        runner.run_grid([r], tmp_path, progress=False)
    except KeyError:
        pass
    assert seen[-1] == (1, 1, 1)


def test_run_grid_dask_route(tmp_path, exps, monkeypatch):
    import lwsim.figures.dist as D
    seen = []

    def dask(todo, scheduler, jobs, threads, retries, timeout):
        seen.append((list(todo), scheduler, jobs, threads, retries, timeout))
        for run in todo:
            yield run, True, ({"d": 1}, 0.5, None)
    monkeypatch.setattr(D, "dask_execute", dask)
    monkeypatch.setattr(runner, "_pool_execute", lambda *a: pytest.fail("local pool used"))
    exps("_mut_ok", dict)
    r = Run.make("_mut_ok", a=1)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)       # a remote run still gets 1 thread, not 8 // 2
    out = runner.run_grid([r], tmp_path, jobs=2, scheduler="tcp://h:1", progress=False, timeout=7.0)
    assert out[r]["d"] == 1
    # a remote cluster: one thread per run by default
    assert seen == [([r], "tcp://h:1", 2, 1, 1, 7.0)]
    seen.clear()
    # a LocalCluster is this machine: 8 cores // 2 jobs = 4 threads per run
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    r2 = Run.make("_mut_ok", a=2)
    runner.run_grid([r2], tmp_path, jobs=2, scheduler="local", progress=False)
    assert seen == [([r2], "local", 2, 4, 1, 30.0)]
    seen.clear()
    pool = []
    monkeypatch.setattr(runner, "_pool_execute", lambda *a: pool.append(a) or (x for x in ()))
    runner.run_grid([r], tmp_path, jobs=2, scheduler="local", progress=False)   # all cached: no cluster
    assert seen == [] and pool == [([], 2, 4, 1)]


def test_run_grid_progress_bar(tmp_path, exps, monkeypatch):
    monkeypatch.setattr(runner, "tqdm", _Bar)
    _Bar.made.clear()
    exps("_mut_ok", dict)
    exps("_mut_bad", int)
    a, b, c = Run.make("_mut_ok", i=1), Run.make("_mut_ok", i=2), Run.make("_mut_bad", i=3)
    runner.run_grid([a], tmp_path, jobs=1, progress=False)            # a is cached from now on
    with pytest.raises(runner.GridFailed):
        runner.run_grid([a, b, c], tmp_path, jobs=1, retries=0, desc="grid X")
    bar = _Bar.made[-1]
    assert bar.kw == dict(total=3, initial=1, desc="grid X", disable=False, leave=False)
    assert _Bar.made[0].kw["disable"] is True and _Bar.made[0].kw["desc"] == "runs"
    assert bar.calls == [("postfix", dict(done=0, cached=1, failed=0)),
                         ("postfix", dict(done=1, cached=1, failed=0, refresh=False)), ("update",),
                         ("postfix", dict(done=1, cached=1, failed=1, refresh=False)), ("update",),
                         ("close",)]


def test_run_grid_saves_time_and_profile(tmp_path, exps, monkeypatch):
    seen = []
    real = runner.save_result
    monkeypatch.setattr(runner, "save_result",
                        lambda d, r, res, **kw: seen.append(kw) or real(d, r, res, **kw))
    monkeypatch.setattr(runner, "_pool_execute",
                        lambda todo, *a: ((r, True, ({"v": 1}, 1.5, {"wall": 1.5})) for r in todo))
    exps("_mut_ok", dict)
    runner.run_grid([Run.make("_mut_ok")], tmp_path, jobs=1, progress=False)
    assert seen == [{"elapsed_s": 1.5, "profile": {"wall": 1.5}}]


def test_run_grid_default_cache_folder(tmp_path, exps, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exps("_mut_ok", dict)
    r = Run.make("_mut_ok")
    runner.run_grid([r], jobs=1, progress=False)
    assert (tmp_path / "runs" / "_mut_ok" / f"{r.key}.json").is_file()
