"""The run profile and the cost model on cases that separate right from wrong
(lwsim/figures/timing.py, docs/experiments.md §5.3; lwsim/figures/cost.py, docs/cluster.md).

Profile: a scripted clock (wall and numba-compile seconds advanced by hand, binary fractions so
every sum is exact) with compilation inside parts nested two deep, inside a top-level part and
outside every part; then the same with a real numba compilation inside a nested part. Cost model:
the fallbacks for experiments without a model on skewed fixed-cost sets (median ≠ mean, an even
count where the median interpolates), and an a_main-shaped experiment when a_main itself has no
calibration.
"""
import time
from types import SimpleNamespace

import pytest
from numba import njit

from lwsim.figures import cost, timing
from lwsim.figures.runner import Run


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
def clock(monkeypatch):
    clk = _Clock()
    monkeypatch.setattr(timing, "time", clk)                       # Profile reads timing.time.perf_counter
    monkeypatch.setattr(timing, "compile_seconds", lambda: clk.c)
    return clk


def test_profile_compilation_inside_nested_parts(clock):
    prof = timing.Profile()
    with timing.active(prof):
        with timing.part("training"):
            clock.run(1.0)
            with timing.part("envelope"):
                clock.run(2.0)
                clock.compile(3.0)                 # compiled inside a nested part
                with timing.part("matched"):       # nested two deep
                    clock.compile(0.5)
                    clock.run(0.25)
                clock.run(0.0625)
            clock.compile(4.0)                     # inside training, outside its nested parts
            clock.run(0.5)
        clock.run(0.125)                           # outside every part: "other"
        clock.compile(1.0)                         # compilation outside every part
        with timing.part("training"):              # a part entered twice adds up
            clock.run(0.03125)
    p = prof.finish()
    assert p == {"training": 1.53125, "envelope": 2.0625, "matched": 0.25, "tails": 0.0, "fits": 0.0,
                 "diagnostics": 0.0, "compile": 8.5, "other": 0.125, "wall": 12.46875}
    assert sum(p[k] for k in timing.PARTS) == p["wall"]


def test_profile_other_excludes_compilation_outside_parts(clock):
    prof = timing.Profile()
    with timing.active(prof):
        clock.compile(2.0)
        clock.run(0.5)
        with timing.part("fits"):
            clock.compile(0.25)
    p = prof.finish()
    assert (p["fits"], p["compile"], p["other"], p["wall"]) == (0.0, 2.25, 0.5, 2.75)


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


# ----------------------------------------------------------------------------- cost model
A_MAIN = dict(T=10, D=2, H=4, n_train=8, n_val=2, n_diag=6, epochs=3, batch=4, K=2, lags=[1, 2, 3],
              n_grid=[25, 50], cell="gru", seed=0)


def test_generic_fixed_cost_is_the_median_of_a_skewed_set():
    # fixed costs 1, 2, 30: median 2 (mean 11); the "one" term only, whatever the other rates
    cal = {"coef": {"a_theory": {"one": 1.0, "stats": 5.0}, "b_s1": {"one": 30.0, "train": 1.0},
                    "b_expansion": {"one": 2.0, "diag": 3.0}}}
    assert cost.predict_seconds(Run.make("new_thing", x=1), cal) == (2.0, "generic:fixed")
    # an even count: 1, 2, 4, 100 → 3 (interpolated; lower median 2, upper 4, mean 26.75)
    cal["coef"] = {"a": {"one": 1.0}, "b": {"one": 100.0}, "c": {"one": 4.0}, "d": {"one": 2.0}}
    assert cost.predict_seconds(Run.make("new_thing", x=1), cal) == (3.0, "generic:fixed")


def test_generic_a_main_shape_without_a_main_calibration():
    # an a_main-shaped experiment when only other experiments are calibrated: the median fixed
    # cost, not zero seconds
    cal = {"coef": {"a_theory": {"one": 1.0}, "b_s1": {"one": 30.0}, "b_expansion": {"one": 2.0}}}
    seconds, model = cost.predict_seconds(Run.make("new_main", **A_MAIN), cal)
    assert (seconds, model) == (2.0, "generic:fixed")
    # with a_main calibrated, its rates (not the median fixed cost)
    cal["coef"]["a_main"] = {"one": 0.5, "train": 1e-6, "steps": 1e-3}
    w, _ = cost.work(Run.make("a_main", **A_MAIN))
    assert cost.predict_seconds(Run.make("new_main", **A_MAIN), cal) == (
        pytest.approx(0.5 + 1e-6 * w["train"] + 1e-3 * w["steps"]), "generic:a_main")


def test_uncalibrated_experiment_with_a_model_is_flagged_generic():
    # b_expansion has a work model but no coefficients here: median fixed cost, flagged
    cal = {"coef": {"a_theory": {"one": 1.0}, "b_s1": {"one": 30.0}, "a_main": {"one": 4.0}}}
    run = Run.make("b_expansion", T=12, H=6, seed=0)
    assert cost.predict_seconds(run, cal) == (4.0, "generic:fixed")


def test_generic_a_main_needs_every_key():
    partial = {k: v for k, v in A_MAIN.items() if k != "n_diag"}   # not a_main-shaped
    assert cost.work(Run.make("new_main", **partial)) == ({"one": 1.0}, "generic:fixed")


def test_dry_run_table_flags_generic_and_sums_uncached(tmp_path):
    cal = {"coef": {"a_theory": {"one": 1.0}, "b_s1": {"one": 30.0}, "b_expansion": {"one": 2.0}}}
    groups = {"new": [Run.make("new_thing", x=i) for i in range(3)]}
    from lwsim.figures import runcache
    import numpy as np
    runcache.save(tmp_path, groups["new"][1], {"y": np.zeros(1)})
    (row,) = cost.dry_run_table(groups, tmp_path, cal)
    assert row["cached"] == 1 and row["generic"] == ["generic:fixed"]
    assert row["core_h"] == pytest.approx(3 * 2.0 / 3600) and row["core_h_todo"] == pytest.approx(2 * 2.0 / 3600)
