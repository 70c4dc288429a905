"""The results cache is trusted only after a check (docs/cluster.md): truncated, corrupted and
mismatched records are reported with their path, moved aside and recomputed, on the pool and on
Dask; a failing run is reported with its configuration while the others finish (pool)."""
import json
import sys
import warnings

import numpy as np
import pytest

from lwsim.figures import runcache as cache
from lwsim.figures.runner import GridFailed, Run, experiment, run_grid


@experiment("t_cache_square")
def t_cache_square(c):
    return {"y": np.arange(c["x"], dtype=float) ** 2, "x": c["x"], "label": f"run {c['x']}"}


@experiment("t_cache_fail")
def t_cache_fail(c):
    raise ValueError(f"planted failure x={c['x']}")


def squares(n):
    return [Run.make("t_cache_square", x=i + 3) for i in range(n)]


def expected(run):
    return np.arange(run.config["x"], dtype=float) ** 2


def damage(tmp_path, runs):
    """Truncate run 0's .npz, put 100 random bytes in run 1's, copy run 3's record over run 2's."""
    nz0 = cache.paths(tmp_path, runs[0])[1]
    nz0.write_bytes(nz0.read_bytes()[: nz0.stat().st_size // 2])
    cache.paths(tmp_path, runs[1])[1].write_bytes(np.random.default_rng(0).bytes(100))
    for src, dst in zip(cache.paths(tmp_path, runs[3]), cache.paths(tmp_path, runs[2])):
        dst.write_bytes(src.read_bytes())


def check_recovered(tmp_path, runs, scheduler):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run_grid(runs, cache_dir=tmp_path, jobs=2, progress=False, scheduler=scheduler)
    msgs = [str(w.message) for w in caught if issubclass(w.category, cache.CacheWarning)]
    assert len(msgs) == 3, msgs
    for run, why in zip(runs[:3], ("unreadable arrays", "unreadable arrays", "configuration hash")):
        (msg,) = [m for m in msgs if run.key in m]
        assert why in msg and str(tmp_path) in msg and "moved aside" in msg
    assert run_grid.last_stats == {"total": 5, "computed": 3, "cached": 2, "failed": 0}
    moved = sorted(p.name.split(".")[0] for p in (tmp_path / cache.QUARANTINE).rglob("*") if p.is_file())
    assert moved == sorted([runs[0].key] * 2 + [runs[1].key] * 2 + [runs[2].key] * 2), moved
    for run in runs:
        assert np.array_equal(out[run]["y"], expected(run)) and out[run]["x"] == run.config["x"]
        assert cache.load(tmp_path, run) is not None


@pytest.mark.parametrize("scheduler", [None, "local"])
def test_bad_records_moved_aside_and_recomputed(tmp_path, scheduler):
    if scheduler is not None:
        pytest.importorskip("distributed")
        import cloudpickle
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    runs = squares(5)
    run_grid(runs, cache_dir=tmp_path, jobs=1, progress=False)
    damage(tmp_path, runs)
    check_recovered(tmp_path, runs, scheduler)


def test_checksum_catches_silent_corruption(tmp_path):
    """A well-formed .npz with one changed number (the zip CRC is fine) fails the checksum."""
    run = squares(1)[0]
    run_grid([run], cache_dir=tmp_path, jobs=1, progress=False)
    nz = cache.paths(tmp_path, run)[1]
    y = expected(run)
    y[1] += 1e-12
    np.savez(nz, y=y)
    with pytest.warns(cache.CacheWarning, match="checksum mismatch"):
        assert cache.load(tmp_path, run) is None
    # an edited JSON value, other lwsim version, missing half of the record: all reported
    run_grid([run], cache_dir=tmp_path, jobs=1, progress=False)
    js = cache.paths(tmp_path, run)[0]
    meta = json.loads(js.read_text())
    js.write_text(json.dumps({**meta, "result": {**meta["result"], "x": 4}}))
    with pytest.warns(cache.CacheWarning, match="checksum mismatch"):
        assert cache.load(tmp_path, run) is None
    run_grid([run], cache_dir=tmp_path, jobs=1, progress=False)
    js.write_text(json.dumps({**meta, "lwsim_version": "0.0.0"}))
    with pytest.warns(cache.CacheWarning, match="computed by lwsim '0.0.0'"):
        assert cache.load(tmp_path, run) is None
    run_grid([run], cache_dir=tmp_path, jobs=1, progress=False)
    js.unlink()
    with pytest.warns(cache.CacheWarning, match="incomplete record"):
        assert cache.load(tmp_path, run) is None
    assert not nz.exists()
    out = run_grid([run], cache_dir=tmp_path, jobs=1, progress=False)
    assert np.array_equal(out[run]["y"], expected(run)) and out[run]["label"] == "run 3"
    assert json.loads(js.read_text())["elapsed_s"] >= 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_failing_run_reported_on_pool(tmp_path, jobs):
    bad = Run.make("t_cache_fail", x=11)
    runs = squares(3) + [bad]
    with pytest.raises(GridFailed) as ei:
        run_grid(runs, cache_dir=tmp_path, jobs=jobs, progress=False, retries=1)
    assert list(ei.value.failures) == [bad]
    assert '{"x": 11}' in str(ei.value) and "ValueError: planted failure x=11" in str(ei.value)
    assert run_grid.last_stats == {"total": 4, "computed": 3, "cached": 0, "failed": 1}
    assert all(cache.load(tmp_path, r) is not None for r in runs[:3])


def test_run_grid_validates(tmp_path):
    with pytest.raises(ValueError, match="threads_per_run"):
        run_grid(squares(1), cache_dir=tmp_path, threads_per_run=0)
    with pytest.raises(ValueError, match="retries"):
        run_grid(squares(1), cache_dir=tmp_path, retries=-1)
    with pytest.raises(ValueError, match="unknown experiment"):
        run_grid([Run.make("no_such_experiment", x=1)], cache_dir=tmp_path)
    with pytest.raises(ValueError, match="scheduler must be"):
        run_grid(squares(1), cache_dir=tmp_path, scheduler="")
