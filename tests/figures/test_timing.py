"""Tests of lwsim/figures/timing.py (laid out like the code: docs/testing.md).

Mutation-testing kills for the figure engine: lwsim/figures/plan.py, runcache.py, timing.py and
warmup.py (issue 32, docs/testing.md). Small hand-built runs, results and profiles; no grid runs.

The run profile and the cost model on cases that separate right from wrong
(lwsim/figures/timing.py, docs/experiments.md §5.3; lwsim/figures/cost.py, docs/cluster.md).

Profile: a scripted clock (wall and numba-compile seconds advanced by hand, binary fractions so
every sum is exact) with compilation inside parts nested two deep, inside a top-level part and
outside every part; then the same with a real numba compilation inside a nested part. Cost model:
the fallbacks for experiments without a model on skewed fixed-cost sets (median ≠ mean, an even
count where the median interpolates), and an a_main-shaped experiment when a_main itself has no
calibration.

The run profile (lwsim/figures/timing.py, docs/experiments.md §5.3): parts add up to the wall
time, nested parts and numba compilation are counted once where they belong, the profile is
stored with the cached run and summed per experiment for ``--profile``."""


import json
import time
from types import SimpleNamespace

import numpy as np
import pytest
from numba import njit

from lwsim.figures import runcache, runcache as C, timing, timing as T
from lwsim.figures.plan import group_runs
from lwsim.figures.run import Run
from lwsim.figures.runner import EXPERIMENTS, run_grid, run_task


class FakeTime:
    """perf_counter, thread_time and numba compile seconds that move only when told."""

    def __init__(self):
        self.t, self.cpu, self.comp = 100.0, 7.0, 50.0

    def perf_counter(self):
        return self.t

    def thread_time(self):
        return self.cpu


@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(T, "time", fake)
    monkeypatch.setattr(T, "compile_seconds", lambda: fake.comp)
    return fake


HEAD = ("experiment      runs    wall s  share |    training    envelope     matched       tails        fits "
        "diagnostics     compile       other")


ZERO = "   0.0( 0%)"


class _Clock:
    """Scripted perf_counter and compile_seconds: ``run(s)`` advances the wall clock,
    ``compile(s)`` advances both (compilation takes wall time too)."""

    def __init__(self):
        self.t, self.c = 100.0, 7.0

    def perf_counter(self):
        return self.t

    def run(self, s):
        self.t += s

    def compile(self, s):
        self.t += s
        self.c += s


@pytest.fixture
def clock_sharp_profile_cost(monkeypatch):
    clk = _Clock()
    monkeypatch.setattr(timing, "time", clk)                       # Profile reads timing.time.perf_counter
    monkeypatch.setattr(timing, "compile_seconds", lambda: clk.c)
    return clk


def _fresh_kernel():
    def fresh(n):                                  # a new function: numba must compile it
        s = 0.0
        for i in range(n):
            s += i * 0.25
        return s
    return njit(cache=False)(fresh)


def _busy(seconds):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pass


def _fresh_kernel_timing():
    def fresh(n):                                 # a new function: numba must compile it
        s = 0.0
        for i in range(n):
            s += i * 0.5
        return s
    return njit(cache=False)(fresh)


def _smoke_run(experiment="a_main"):
    return group_runs(experiment, "smoke", "numba")[0]


# ----------------------------------------------------------------------------------------------
# _CompileClock
# ----------------------------------------------------------------------------------------------


def test_compile_clock_by_hand(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(T, "time", fake)
    c = T._CompileClock()
    assert (c.total, c.cpu, c.count, c.seconds()) == (0.0, 0.0, 0, 0.0)
    c.on_start()                               # t = 100, cpu 7
    fake.t, fake.cpu = 101.0, 7.25
    c.on_start()                               # nested: counted once
    fake.t, fake.cpu = 102.0, 7.5
    c.on_end()
    assert (c.total, c.count) == (0.0, 0) and c.seconds() == 2.0      # in progress: 102 − 100
    fake.t, fake.cpu = 104.0, 8.0
    c.on_end()
    assert (c.total, c.cpu, c.count, c.seconds()) == (4.0, 1.0, 1, 4.0)
    c.on_start()
    fake.t, fake.cpu = 105.0, 7.0              # a thread clock that went back: no negative CPU
    c.on_end()
    assert (c.total, c.cpu, c.count) == (5.0, 1.0, 2)


def test_compile_clock_counts_nested_lock_holds_once(monkeypatch):
    clk = _Clock()
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=clk.perf_counter,
                                                        thread_time=clk.perf_counter))
    cc = timing._CompileClock()
    cc.on_start()
    clk.run(1.0)
    cc.on_start()                                  # re-entrant: numba compiles a callee
    clk.run(2.0)
    cc.on_end()
    assert cc.seconds() == 3.0                     # the hold in progress is counted
    clk.run(0.5)
    cc.on_end()
    clk.run(10.0)                                  # released: no longer counted
    assert (cc.total, cc.count, cc.seconds()) == (3.5, 1, 3.5)


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


# ----------------------------------------------------------------------------------------------
# compile_clock
# ----------------------------------------------------------------------------------------------


def test_compile_clock_is_installed_once():
    first = T.compile_clock()
    assert isinstance(first, T._CompileClock) and T.compile_clock() is first and len(T._CLOCK) == 1
    s = T.compile_seconds()
    assert isinstance(s, float) and s >= 0.0


# ----------------------------------------------------------------------------------------------
# compile_seconds
# ----------------------------------------------------------------------------------------------


def test_compile_clock_installs_a_listener_on_numba_lock(monkeypatch):
    """A fresh install (the process-wide clock reset) registers one listener on numba's compiler lock
    that drives the clock (numba calls on_start / on_end around each compilation)."""
    # private: numba's event registry has no public listing of listeners (numba's name, not lwsim's)
    import numba.core.event as ev
    monkeypatch.setattr(T, "_CLOCK", [])
    regs = list(ev._registered["numba:compiler_lock"])
    monkeypatch.setitem(ev._registered, "numba:compiler_lock", regs)       # the new listener is dropped after
    n0 = len(regs)
    assert T.compile_seconds() == 0.0
    clock = T.compile_clock()
    assert isinstance(clock, T._CompileClock) and T._CLOCK == [clock] and len(regs) == n0 + 1
    listener = regs[-1]
    listener.on_start(None)
    listener.on_end(None)
    assert clock.count == 1 and T.compile_seconds() == clock.total >= 0.0


# ----------------------------------------------------------------------------------------------
# Profile
# ----------------------------------------------------------------------------------------------


def test_part_names_checked(clock):
    prof = T.Profile()
    for name in ("compile", "other", "wall"):
        with pytest.raises(ValueError) as ei:
            with prof.part(name):
                pass
        assert str(ei.value) == ("part must be one of ('training', 'envelope', 'matched', 'tails', 'fits', "
                                 f"'diagnostics'), got '{name}'")


def test_profile_other_excludes_compilation_outside_parts(clock_sharp_profile_cost):
    prof = timing.Profile()
    with timing.active(prof):
        clock_sharp_profile_cost.compile(2.0)
        clock_sharp_profile_cost.run(0.5)
        with timing.part("fits"):
            clock_sharp_profile_cost.compile(0.25)
    p = prof.finish()
    assert (p["fits"], p["compile"], p["other"], p["wall"]) == (0.0, 2.25, 0.5, 2.75)


def test_compilation_is_its_own_part():
    _fresh_kernel_timing()(3)                            # numba's one-time start-up (outside its lock) first
    kernel = _fresh_kernel_timing()
    prof = timing.Profile()
    with timing.active(prof), timing.part("tails"):
        _busy(0.02)
        assert kernel(10) == 22.5
    p = prof.finish()
    assert p["compile"] > 0.01                    # numba compiles in tens of milliseconds at least
    assert p["tails"] == pytest.approx(0.02, abs=0.01)           # compilation not counted twice
    assert abs(sum(p[k] for k in timing.PARTS) - p["wall"]) < 1e-9


# ----------------------------------------------------------------------------------------------
# part
# ----------------------------------------------------------------------------------------------


def test_profile_by_hand(clock):
    prof = T.Profile()
    with T.active(prof) as got:
        assert got is prof
        with T.part("training"):
            clock.t += 3
            clock.comp += 1                    # compilation inside training
            with T.part("envelope"):
                clock.t += 2
                clock.comp += 0.5              # inside envelope: envelope's own time is 1.5
            clock.t += 1
        clock.t += 4
        clock.comp += 0.5                      # compilation outside every part
        with pytest.raises(KeyError):
            with T.part("training"):           # a part that raises is still timed
                clock.t += 1
                raise KeyError
    p = prof.finish()
    # training: wall 6 − envelope 2 − own compile (1.5 − 0.5) = 3, then + 1; other: 11 − 7 − 0.5
    assert p == {"training": 4.0, "envelope": 1.5, "matched": 0.0, "tails": 0.0, "fits": 0.0, "diagnostics": 0.0,
                 "compile": 2.0, "other": 3.5, "wall": 11.0}


def test_active_nests_and_restores(clock):
    outer, inner = T.Profile(), T.Profile()
    with T.active(outer):
        with T.active(inner):
            with T.part("fits"):
                clock.t += 2
        with T.part("tails"):
            clock.t += 1
    with T.part("matched"):                    # no active profile: a no-op
        clock.t += 5
    assert inner.seconds["fits"] == 2.0 and inner.seconds["tails"] == 0.0
    assert outer.seconds["tails"] == 1.0 and outer.seconds["fits"] == 0.0 and outer.seconds["matched"] == 0.0
    with pytest.raises(RuntimeError):
        with T.active(outer):
            raise RuntimeError
    with T.part("matched"):                    # restored after a raise too
        clock.t += 1
    assert outer.seconds["matched"] == 0.0


def test_profile_compilation_inside_nested_parts(clock_sharp_profile_cost):
    prof = timing.Profile()
    with timing.active(prof):
        with timing.part("training"):
            clock_sharp_profile_cost.run(1.0)
            with timing.part("envelope"):
                clock_sharp_profile_cost.run(2.0)
                clock_sharp_profile_cost.compile(3.0)                 # compiled inside a nested part
                with timing.part("matched"):       # nested two deep
                    clock_sharp_profile_cost.compile(0.5)
                    clock_sharp_profile_cost.run(0.25)
                clock_sharp_profile_cost.run(0.0625)
            clock_sharp_profile_cost.compile(4.0)                     # inside training, outside its nested parts
            clock_sharp_profile_cost.run(0.5)
        clock_sharp_profile_cost.run(0.125)                           # outside every part: "other"
        clock_sharp_profile_cost.compile(1.0)                         # compilation outside every part
        with timing.part("training"):              # a part entered twice adds up
            clock_sharp_profile_cost.run(0.03125)
    p = prof.finish()
    assert p == {"training": 1.53125, "envelope": 2.0625, "matched": 0.25, "tails": 0.0, "fits": 0.0,
                 "diagnostics": 0.0, "compile": 8.5, "other": 0.125, "wall": 12.46875}
    assert sum(p[k] for k in timing.PARTS) == p["wall"]


def test_profile_real_compilation_in_a_nested_part():
    _fresh_kernel()(3)                             # numba's one-time start-up first
    kernel = _fresh_kernel()
    prof = timing.Profile()
    with timing.active(prof), timing.part("training"):
        _busy(0.02)
        with timing.part("envelope"):
            assert kernel(10) == 11.25             # compiled here, two parts deep
            _busy(0.02)
    p = prof.finish()
    assert p["compile"] > 0.01
    assert abs(sum(p[k] for k in timing.PARTS) - p["wall"]) < 1e-9
    assert p["envelope"] == pytest.approx(0.02, abs=0.01)          # compilation not in envelope
    assert p["training"] == pytest.approx(0.02, abs=0.01)          # … nor in its parent


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


def test_part_without_profile_is_a_no_op_and_names_are_checked():
    with timing.part("training"):
        pass
    prof = timing.Profile()
    with pytest.raises(ValueError, match=r"^part\b"):
        with prof.part("compile"):
            pass


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


# ----------------------------------------------------------------------------------------------
# summarize
# ----------------------------------------------------------------------------------------------


def test_format_profile_share_below_one_second():
    """A preset under 1 s of wall time still gets shares: 0.45 of 0.5 s is 90 %."""
    text = T.format_profile([("x", 1, 1, T.summarize([{"training": 0.45, "wall": 0.5}]))], "smoke")
    assert text.split("\n")[3] == "x                  1       0.5 100.0% | " + " ".join(
        ["   0.5(90%)"] + ["   0.0( 0%)"] * 7)


def test_summarize():
    assert T.summarize([]) == dict.fromkeys(T.PARTS + ("wall",), 0.0)
    s = T.summarize([{"training": 1, "wall": np.float32(2.5), "extra": 9.0}, {"training": 0.5, "compile": 2.0}])
    assert s == dict.fromkeys(T.PARTS, 0.0) | {"training": 1.5, "compile": 2.0, "wall": 2.5}
    assert type(s["wall"]) is float


def test_profile_rows_count_each_run_once(tmp_path):
    a, b, c = (Run.make("t_mut_prof", x=i) for i in range(3))
    C.save(tmp_path, a, {"n": 1}, profile={"training": 1.0, "wall": 2.0})
    C.save(tmp_path, b, {"n": 1}, profile={"tails": 3.0, "wall": 4.0})
    C.save(tmp_path, c, {"n": 1})                                 # no profile
    rows = T.profile_rows({"g1": [a, b, a, c], "g2": [b, c], "g3": [c, a]}, tmp_path)
    assert rows[0] == ("g1", 3, 2, T.summarize([{"training": 1.0, "wall": 2.0}, {"tails": 3.0, "wall": 4.0}]))
    assert rows[0][3]["wall"] == 6.0 and rows[0][3]["tails"] == 3.0
    assert [r[:3] for r in rows] == [("g1", 3, 2), ("g2", 0, 0), ("g3", 0, 0)]
    assert rows[1][3] == dict.fromkeys(T.PARTS + ("wall",), 0.0)


def test_format_profile_by_hand():
    a = {"training": 4.0, "tails": 1.0, "compile": 4.0, "wall": 9.0}
    b = {"matched": 1.0, "wall": 1.0}
    rows = [("a_main", 2, 2, T.summarize([a])), ("b_s1", 3, 1, T.summarize([b]))]
    text = T.format_profile(rows, "quick", wall=12.34)
    assert len(HEAD) == 135
    assert text.split("\n") == [
        "lwsim.figures --profile, preset quick: seconds per part, summed over the runs (share of the preset's "
        "wall time in brackets)",
        HEAD, "-" * 135,
        "a_main             2       9.0  90.0% | " + " ".join(["   4.0(40%)", ZERO, ZERO, "   1.0(10%)", ZERO, ZERO,
                                                          "   4.0(40%)", ZERO]),
        "b_s1             1/3       1.0  10.0% | " + " ".join([ZERO, ZERO, "   1.0(10%)", ZERO, ZERO, ZERO, ZERO, ZERO]),
        "-" * 135,
        "total            3/5      10.0 100.0% | " + " ".join(["   4.0(40%)", ZERO, "   1.0(10%)", "   1.0(10%)", ZERO,
                                                          ZERO, "   4.0(40%)", ZERO]),
        "end to end: 12.3 s of wall time for this invocation (runs in parallel workers, cached runs, process "
        "start-up, figures and FINDINGS included)",
        "2 run(s) have no profile (not computed yet, or cached by an older lwsim): not counted"]


def test_format_profile_zero_wall_and_nothing_missing():
    text = T.format_profile([("x", 1, 1, T.summarize([]))], "smoke")
    assert text.split("\n")[3:] == ["x                  1       0.0   0.0% | " + " ".join(["        0.0"] * 8),
                                    "-" * 135,
                                    "total              1       0.0   0.0% | " + " ".join(["        0.0"] * 8)]


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


# ----------------------------------------------------------------------------------------------
# profile_rows
# ----------------------------------------------------------------------------------------------


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
