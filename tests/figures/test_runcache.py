"""Tests of lwsim/figures/runcache.py (laid out like the code: docs/testing.md).

The results cache is trusted only after a check (docs/cluster.md): truncated, corrupted and
mismatched records are reported with their path, moved aside and recomputed, on the pool and on
Dask; a failing run is reported with its configuration while the others finish (pool).

Mutation-testing kills for the figure engine: lwsim/figures/plan.py, runcache.py, timing.py and
warmup.py (issue 32, docs/testing.md). Small hand-built runs, results and profiles; no grid runs."""


import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from lwsim import __version__
from lwsim.figures import runcache as C, runcache as cache, timing as T
from lwsim.figures.run import Run
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


RUN = Run.make("t_mut_cache", x=3)


def _meta(tmp_path, run=RUN):
    return json.loads(C.paths(tmp_path, run)[0].read_text())


def _problem(tmp_path, edit=None, arrays=None):
    C.save(tmp_path, RUN, {"y": np.arange(3.0), "n": 1})
    js, nz = C.paths(tmp_path, RUN)
    if edit is not None:
        meta = json.loads(js.read_text())
        js.write_text(edit if isinstance(edit, str) else json.dumps(edit(meta)))
    if arrays is not None:
        np.savez(nz, **arrays)
    return C._problem(RUN, js, nz)     # private: load() turns its (record, why) into a CacheWarning; the reason by hand needs it


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


# ----------------------------------------------------------------------------------------------
# CacheWarning
# ----------------------------------------------------------------------------------------------


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


def test_quarantine_moves_and_names_each_file(tmp_path, monkeypatch):
    monkeypatch.setattr(C.time, "strftime", lambda fmt: f"STAMP[{fmt}]")
    C.save(tmp_path, RUN, {"y": np.arange(2.0)})
    js, nz = C.paths(tmp_path, RUN)
    ghost = tmp_path / "t_mut_cache" / "ghost.json"
    with pytest.warns(C.CacheWarning) as rec:
        msg = C.quarantine(tmp_path, [js, ghost, nz], "why")
    q = tmp_path / "quarantine" / "t_mut_cache"
    qj, qn = q / f"{js.name}.STAMP[%Y%m%dT%H%M%S]", q / f"{nz.name}.STAMP[%Y%m%dT%H%M%S]"
    assert msg == f"lwsim cache: why; moved aside and recomputing: {js} -> {qj}; {nz} -> {qn}"
    assert [str(w.message) for w in rec] == [msg]
    assert qj.is_file() and qn.is_file() and not js.exists() and not nz.exists()


# ----------------------------------------------------------------------------------------------
# paths
# ----------------------------------------------------------------------------------------------


def test_paths():
    js, nz = C.paths("cache", RUN)
    assert js == Path("cache") / "t_mut_cache" / f"{RUN.key}.json"
    assert nz == Path("cache") / "t_mut_cache" / f"{RUN.key}.npz"


def test_problem_refuses_pickled_arrays(tmp_path):
    # private: load() turns its (record, why) into a CacheWarning and a deleted record; the reason string by hand needs the helper
    C.save(tmp_path, RUN, {"n": 1})
    js, nz = C.paths(tmp_path, RUN)
    np.savez(nz, o=np.array([{"a": 1}], dtype=object))
    r, why = C._problem(RUN, js, nz)
    assert r is None and why.startswith("unreadable arrays (ValueError: ") and "allow_pickle" in why


# ----------------------------------------------------------------------------------------------
# checksum
# ----------------------------------------------------------------------------------------------


def test_checksum_by_hand():
    """sha256 of the sorted-key JSON of the rest, then per array (sorted by name) its
    [name, dtype, shape] JSON and its bytes (docstring)."""
    assert C.checksum({"b": 1, "a": [2.5]}, {}) == hashlib.sha256(b'{"a": [2.5], "b": 1}').hexdigest()
    y = np.array([[1, 2], [3, 4]], dtype="<i4")
    z = np.array([0.5], dtype="<f8")
    h = hashlib.sha256(b'{"x": "s"}')
    h.update(b'["y", "<i4", [2, 2]]')
    h.update(y.tobytes())
    h.update(b'["z", "<f8", [1]]')
    h.update(z.tobytes())
    assert C.checksum({"x": "s"}, {"z": z, "y": y}) == h.hexdigest()
    # a non-contiguous view is hashed as its values in C order
    assert C.checksum({}, {"y": np.asfortranarray(y).T.T}) == C.checksum({}, {"y": y.copy()})
    assert C.checksum({}, {"y": y[:, ::-1]}) == C.checksum({}, {"y": np.array([[2, 1], [4, 3]], "<i4")})
    with pytest.raises(ValueError):
        C.checksum({"a": float("nan")}, {})                     # NaN is no JSON: never hashed as such


# ----------------------------------------------------------------------------------------------
# save
# ----------------------------------------------------------------------------------------------


def test_save_record_by_hand(tmp_path):
    with pytest.raises(TypeError, match=r"\bt_mut_cache\b"):
        C.save(tmp_path, RUN, [1])
    y = np.arange(3.0)
    C.save(tmp_path, RUN, {"y": y, "n": 3, "t": (1, 2)})
    meta = _meta(tmp_path)
    assert meta == {"experiment": "t_mut_cache", "key": RUN.key, "config": {"x": 3}, "lwsim_version": __version__,
                    "checksum": C.checksum({"n": 3, "t": [1, 2]}, {"y": y}), "result": {"n": 3, "t": [1, 2]},
                    "arrays": ["y"]}
    with np.load(C.paths(tmp_path, RUN)[1]) as z:
        assert z.files == ["y"] and np.array_equal(z["y"], y)
    C.save(tmp_path, RUN, {"y": y}, elapsed_s=np.float32(2.5), profile={1: 1, "wall": np.float64(2.5)})
    meta = _meta(tmp_path)
    assert meta["elapsed_s"] == 2.5 and type(meta["elapsed_s"]) is float
    assert meta["profile"] == {"1": 1.0, "wall": 2.5}
    assert C.elapsed(tmp_path, RUN) == 2.5 and C.profile(tmp_path, RUN) == {"1": 1.0, "wall": 2.5}
    out = C.load(tmp_path, RUN)
    assert set(out) == {"y"} and np.array_equal(out["y"], y)
    C.save(tmp_path, RUN, {"y": y}, elapsed_s=0.0, profile={})                # 0 and {} are recorded
    meta = _meta(tmp_path)
    assert meta["elapsed_s"] == 0.0 and meta["profile"] == {}
    assert C.profile(tmp_path, RUN) == {}


def test_save_names_the_unserialisable_value(tmp_path):
    with pytest.raises(TypeError, match=r"^result\.a\b"):
        C.save(tmp_path, RUN, {"a": object(), "y": np.arange(2.0)})
    assert not any(tmp_path.rglob("*.json")) and not any(tmp_path.rglob("*.npz"))          # nothing written


def test_good_load_warns_nothing(tmp_path):
    C.save(tmp_path, RUN, {"n": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert C.load(tmp_path, RUN) == {"n": 1}


# ----------------------------------------------------------------------------------------------
# _problem
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("edit, reason", [
    ("[1, 2", "unreadable JSON (JSONDecodeError)"),
    ("[1, 2]", "configuration hash does not match the file name"),
    (lambda m: m | {"key": "0" * 20}, "configuration hash does not match the file name"),
    (lambda m: m | {"experiment": "other"}, "configuration hash does not match the file name"),
    (lambda m: m | {"config": {"x": 4}}, "configuration hash does not match the file name"),
    (lambda m: m | {"lwsim_version": "0.0.1"}, f"computed by lwsim '0.0.1', this is {__version__}"),
    (lambda m: {k: v for k, v in m.items() if k != "lwsim_version"}, f"computed by lwsim None, this is {__version__}"),
    (lambda m: m | {"arrays": ["y", "z"]}, "array names do not match the record"),
    (lambda m: m | {"result": [1]}, "array names do not match the record"),
    (lambda m: m | {"checksum": "0"}, "checksum mismatch (corrupted contents)"),
])
def test_problem_reasons(tmp_path, edit, reason):
    assert _problem(tmp_path, edit) == (None, reason)


def test_problem_arrays_and_success(tmp_path):
    # private: load() turns its (record, why) into a CacheWarning and a deleted record; the reason string by hand needs the helper
    result, why = _problem(tmp_path)
    assert why is None and set(result) == {"y", "n"} and result["n"] == 1 and np.array_equal(result["y"], [0, 1, 2])
    assert _problem(tmp_path, arrays={"y": np.arange(3.0) + 1})[1] == "checksum mismatch (corrupted contents)"
    assert _problem(tmp_path, arrays={"w": np.arange(3.0)})[1] == "array names do not match the record"
    nz = C.paths(tmp_path, RUN)[1]
    nz.write_bytes(nz.read_bytes()[:nz.stat().st_size // 2])                 # truncated
    r, why = C._problem(RUN, *C.paths(tmp_path, RUN))
    assert r is None and why.startswith("unreadable arrays (BadZipFile: ")
    C.paths(tmp_path, RUN)[0].unlink()
    assert C._problem(RUN, *C.paths(tmp_path, RUN)) == (None, "unreadable JSON (FileNotFoundError)")


# ----------------------------------------------------------------------------------------------
# load
# ----------------------------------------------------------------------------------------------


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
    with pytest.raises(ValueError, match=r"\bno_such_experiment\b"):
        run_grid([Run.make("no_such_experiment", x=1)], cache_dir=tmp_path)
    with pytest.raises(ValueError, match=r"^scheduler\b"):
        run_grid(squares(1), cache_dir=tmp_path, scheduler="")


def test_load_each_case(tmp_path, monkeypatch):
    monkeypatch.setattr(C.time, "strftime", lambda fmt: "T")
    assert C.load(tmp_path, RUN) is None and not (tmp_path / "quarantine").exists()   # absent: no warning
    C.save(tmp_path, RUN, {"y": np.arange(2.0), "n": 5})
    out = C.load(tmp_path, RUN)
    assert out["n"] == 5 and np.array_equal(out["y"], [0.0, 1.0])
    assert C.is_cached(tmp_path, RUN)
    js, nz = C.paths(tmp_path, RUN)
    q = tmp_path / "quarantine" / "t_mut_cache"
    # one half of the record gone: the other half is moved aside, with a message naming both
    for gone, kept, why in ((js, nz, f"incomplete record (no {js.name})"), (nz, js, f"missing {nz.name}")):
        C.save(tmp_path, RUN, {"y": np.arange(2.0)})
        gone.unlink()
        assert not C.is_cached(tmp_path, RUN)
        with pytest.warns(C.CacheWarning) as rec:
            assert C.load(tmp_path, RUN) is None
        assert str(rec[0].message) == (f"lwsim cache: {kept}: {why}; moved aside and recomputing: "
                                       f"{kept} -> {q / (kept.name + '.T')}")
    C.save(tmp_path, RUN, {"y": np.arange(2.0)})
    js.write_text(js.read_text().replace('"x": 3', '"x": 4'))
    assert not C.is_cached(tmp_path, RUN) and js.exists()                # is_cached touches nothing
    with pytest.warns(C.CacheWarning) as rec:
        assert C.load(tmp_path, RUN) is None
    assert str(rec[0].message) == (f"lwsim cache: {tmp_path / 't_mut_cache' / RUN.key}.{{json,npz}}: configuration "
                                   f"hash does not match the file name; moved aside and recomputing: "
                                   f"{js} -> {q / (js.name + '.T')}; {nz} -> {q / (nz.name + '.T')}")
    assert not js.exists() and not nz.exists()


# ----------------------------------------------------------------------------------------------
# profile
# ----------------------------------------------------------------------------------------------


def test_profile_and_elapsed_absent_or_unreadable(tmp_path):
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) is None       # no file
    C.save(tmp_path, RUN, {"n": 1})
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) is None       # not recorded
    js = C.paths(tmp_path, RUN)[0]
    js.write_text(json.dumps({"profile": [1, 2], "elapsed_s": 4}))
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) == 4          # not a dict
    js.write_text("{not json")
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) is None
