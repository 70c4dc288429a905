"""The run profile (lwsim/figures/timing.py, docs/experiments.md §5.3): parts add up to the wall
time, nested parts and numba compilation are counted once where they belong, the profile is
stored with the cached run and summed per experiment for ``--profile``."""

import json
import time

import numpy as np
import pytest
from numba import njit

from lwsim.figures import runcache, studies, timing  # noqa: F401  (registers the experiments)
from lwsim.figures.__main__ import main
from lwsim.figures.plan import group_runs
from lwsim.figures.runner import EXPERIMENTS, Run, run_grid, run_task


def _busy(seconds):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pass


def test_parts_nested_and_other_add_up_to_wall():
    prof = timing.Profile()
    with timing.active(prof):
        with timing.part("training"):
            _busy(0.03)
            with timing.part("envelope"):
                _busy(0.06)
        _busy(0.02)                               # outside every part: "other"
        with timing.part("training"):
            _busy(0.01)
    p = prof.finish()
    assert abs(sum(p[k] for k in timing.PARTS) - p["wall"]) < 1e-9
    assert p["envelope"] == pytest.approx(0.06, abs=0.01)
    assert p["training"] == pytest.approx(0.04, abs=0.01)          # own time only, both entries
    assert p["other"] == pytest.approx(0.02, abs=0.01)
    assert p["wall"] == pytest.approx(0.12, abs=0.02)


def _fresh_kernel():
    def fresh(n):                                 # a new function: numba must compile it
        s = 0.0
        for i in range(n):
            s += i * 0.5
        return s
    return njit(cache=False)(fresh)


def test_compilation_is_its_own_part():
    _fresh_kernel()(3)                            # numba's one-time start-up (outside its lock) first
    kernel = _fresh_kernel()
    prof = timing.Profile()
    with timing.active(prof), timing.part("tails"):
        _busy(0.02)
        assert kernel(10) == 22.5
    p = prof.finish()
    assert p["compile"] > 0.01                    # numba compiles in tens of milliseconds at least
    assert p["tails"] == pytest.approx(0.02, abs=0.01)           # compilation not counted twice
    assert abs(sum(p[k] for k in timing.PARTS) - p["wall"]) < 1e-9


def test_part_without_profile_is_a_no_op_and_names_are_checked():
    with timing.part("training"):
        pass
    prof = timing.Profile()
    with pytest.raises(ValueError, match="part must be one of"):
        with prof.part("compile"):
            pass


def _smoke_run(experiment="a_main"):
    return group_runs(experiment, "smoke", "numba")[0]


def test_a_main_profile_parts_cover_the_run(tmp_path):
    run = _smoke_run()
    run_task(EXPERIMENTS[run.experiment], run.config_json)       # warm: kernels loaded
    t0 = time.perf_counter()
    result, seconds, p = run_task(EXPERIMENTS[run.experiment], run.config_json)
    outside = time.perf_counter() - t0
    assert abs(sum(p[k] for k in timing.PARTS) - p["wall"]) <= 0.05 * p["wall"]
    assert p["wall"] == seconds and seconds <= outside
    assert p["other"] <= 0.05 * p["wall"]         # the named parts cover the run
    for k in ("training", "envelope", "matched", "tails", "fits"):
        assert p[k] > 0, k


def test_profile_stored_with_the_run_and_summed(tmp_path):
    run = _smoke_run("b_expansion")
    run_grid([run], cache_dir=tmp_path, jobs=1, progress=False)
    stored = runcache.profile(tmp_path, run)
    assert set(stored) == set(timing.PARTS) | {"wall"}
    js = json.loads(next(tmp_path.rglob("*.json")).read_text())
    assert js["profile"] == stored and js["elapsed_s"] == stored["wall"]
    assert runcache.load(tmp_path, run) is not None         # the profile is outside the checksum
    rows = timing.profile_rows({"b_expansion": [run, run], "again": [run]}, tmp_path)
    assert [r[:3] for r in rows] == [("b_expansion", 1, 1), ("again", 0, 0)]    # counted once


def test_summarize_and_table_numbers():
    a = dict.fromkeys(timing.PARTS, 0.0) | {"training": 3.0, "tails": 1.0, "wall": 4.0}
    b = {"training": 1.0, "compile": 4.0, "wall": 5.0}                # missing parts count 0
    s = timing.summarize([a, b])
    assert s["training"] == 4.0 and s["compile"] == 4.0 and s["tails"] == 1.0 and s["wall"] == 9.0
    c = {"matched": 1.0, "wall": 1.0}
    text = timing.format_profile([("a_main", 2, 2, s), ("b_s1", 3, 1, timing.summarize([c]))], "quick")
    lines = text.splitlines()
    row = next(line for line in lines if line.startswith("a_main"))
    assert "9.0" in row and "90.0%" in row and "4.0(40%)" in row        # 9 of 10 s; training 4/10
    assert next(line for line in lines if line.startswith("b_s1")).split()[1] == "1/3"
    total = next(line for line in lines if line.startswith("total"))
    assert "10.0" in total and "100.0%" in total and "1.0(10%)" in total
    assert "2 run(s) have no profile" in text


def test_cli_profile_prints_the_table(tmp_path, capsys):
    args = ["--preset", "smoke", "--only", "B7", "--cache", str(tmp_path / "runs"), "--out", str(tmp_path / "fig"),
            "--jobs", "1", "--no-progress", "--profile"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "lwsim.figures --profile, preset smoke" in out
    row = next(line for line in out.splitlines() if line.startswith("b_expansion"))
    assert row.split()[1] == "2" and "100.0%" in row


def test_train_dtype_override_and_findings_section():
    from lwsim.figures.findings import TITLES, dtype_lines
    from lwsim.figures.plan import plan, train_dtype_of
    g32 = plan(["A1", "B7"], "smoke", "numba")
    g64 = plan(["A1", "B7"], "smoke", "numba", train_dtype="float64")
    assert train_dtype_of(g32) == "float32" and train_dtype_of(g64) == "float64"
    assert g32["b_expansion"] == g64["b_expansion"]            # no training: the same runs
    assert all(a.key != b.key for a, b in zip(g32["a_main"], g64["a_main"]))
    assert train_dtype_of({"x": g32["b_expansion"]}) is None
    rows = {k: (k, "reproduced", [], "") for k in TITLES}
    same = dtype_lines(rows, "float32", ("float64", dict(rows)), "quick")
    assert "no verdict moved." in " ".join(same)
    trows = {**rows, 3: (3, "not reproduced", [], "")}
    moved = dtype_lines(rows, "float32", ("float64", trows), "quick")
    assert "verdict(s) moved: 3." in " ".join(moved)
    assert "| 3 | reproduced | not reproduced |" in moved
    absent = " ".join(dtype_lines(rows, "float32", ("float64", None), "quick"))
    assert "not computed" in absent and "--train-dtype float64" in absent


def test_compile_clock_cpu_never_negative_across_threads():
    """A lock period started in one thread and ended in another adds wall time but no CPU: thread
    clocks of different threads are not comparable (a negative CPU total was seen in CI)."""
    import threading
    from lwsim.figures.timing import _CompileClock
    clock = _CompileClock()
    spin = lambda: sum(i * i for i in range(300000))          # noqa: E731  (burn CPU in this thread)
    spin()
    clock.on_start()                                          # this thread, with CPU already used
    t = threading.Thread(target=clock.on_end)                 # a fresh thread ends it
    t.start()
    t.join()
    assert clock.count == 1 and clock.total > 0 and clock.cpu == 0.0
    clock.on_start()
    spin()
    clock.on_end()
    assert clock.cpu > 0
