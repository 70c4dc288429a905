"""Counts the runner promises (docs/cluster.md, docs/experiments.md §5.3): a run that always raises
is tried exactly ``retries + 1`` times, in this process, in the process pool and on Dask; a run
that fails once and then succeeds is cached as done with ``retries=1`` and reported as failed
(nothing cached) with ``retries=0``. Every attempt leaves one file, so the attempts are counted,
not inferred from the outcome."""
import os
import sys
import uuid

import numpy as np
import pytest

from lwsim.figures import runcache as cache
from lwsim.figures.runner import GridFailed, Run, experiment, run_grid


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


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_attempts_in_this_process(tmp_path, retries):
    _check(tmp_path, _runs(tmp_path, f"serial{retries}"), retries, jobs=1)


def test_attempts_in_the_process_pool(tmp_path):
    # spawned workers (one pool start, ~5 s); each retry is a new submission to the pool
    _check(tmp_path, _runs(tmp_path, "pool"), 2, jobs=2, threads_per_run=1)


def test_failed_once_then_cached_run_is_not_rerun(tmp_path):
    bad, flaky, ok = _runs(tmp_path, "again")
    with pytest.raises(GridFailed):
        run_grid([flaky, ok], cache_dir=tmp_path / "c", jobs=1, progress=False, retries=0)
    run_grid([flaky, ok], cache_dir=tmp_path / "c", jobs=1, progress=False, retries=0)
    assert attempts(flaky.config["dir"]) == 2          # the second grid: one attempt, then cached
    assert run_grid.last_stats == {"total": 2, "computed": 1, "cached": 1, "failed": 0}
    run_grid([flaky, ok], cache_dir=tmp_path / "c", jobs=1, progress=False, retries=0)
    assert attempts(flaky.config["dir"]) == 2 and run_grid.last_stats["cached"] == 2


# ----------------------------------------------------------------------------- Dask
try:
    import cloudpickle
    import distributed  # noqa: F401
except ImportError:                                   # the optional [dist] extra: Dask tests skipped
    distributed = None
else:
    from test_dist import cluster  # noqa: F401  (test_dist's LocalCluster fixture, two workers)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])    # workers cannot import this module


@pytest.mark.skipif(distributed is None, reason="needs the optional Dask extra (lwsim[dist])")
@pytest.mark.parametrize("retries", [0, 2])
def test_attempts_on_dask(tmp_path, request, retries):
    cluster = request.getfixturevalue("cluster")
    _check(tmp_path, _runs(tmp_path, f"dask{retries}"), retries, jobs=2,
           scheduler=cluster.scheduler_address, timeout=20)
