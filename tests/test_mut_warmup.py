"""Mutation-testing kills for lwsim/figures/warmup.py's ``warm_up`` (issue 32, docs/testing.md),
beside tests/test_mut_engine.py's: the progress bar by hand (a recording stand-in for tqdm), the
kernel families of runs without a cell or a backend, the clock, the marker's rounding, and the
parallel branch's bookkeeping step by step (a pool that runs each batch at submission and a
``wait`` that hands back one finished batch at a time, in submission order); ``warm_runs``'s
skipping of an unsized run and its cell order."""
import concurrent.futures as cf
import contextlib
import json
import multiprocessing
import queue
import types

import pytest
import tqdm.auto

import lwsim.figures.studies  # noqa: F401  (warm_up imports it: loaded once here, not per call)
from lwsim.figures import plan as P
from lwsim.figures import runner as RN
from lwsim.figures import warmup as W
from lwsim.figures.run import Run


class Bar:
    """tqdm's stand-in: keeps its arguments and every call."""

    def __init__(self, made, **kw):
        self.kw, self.events = kw, []
        made.append(self)

    def set_postfix_str(self, s="", refresh=True):
        self.events.append(("postfix", s, refresh))

    def update(self, n=1):
        self.events.append(("update", n))

    def close(self):
        self.events.append(("close",))


F = Run.make("f", seed=1)                                        # no cell (family "f"), no backend (numba)
RNN = Run.make("e", cell="rnn", seed=2, backend="numba")
CONST = Run.make("e", cell="constgate", seed=3, backend="numba")
GRU = Run.make("e", cell="gru", seed=4, backend="numba")
LSTM = Run.make("e", cell="lstm", seed=5, backend="numba")
NUMPY = Run.make("e", cell="lstm", seed=6, backend="numpy")      # compiles nothing: left out


@pytest.fixture
def env(tmp_path, monkeypatch):
    """warm_up on given warm runs (warm_runs stubbed: the groups dict's "w"), batches recorded (a
    batch whose cell is in ``fail`` reports one failure per run), a clock at 100 then 103.75 s,
    the marker in tmp_path, the bar recorded."""
    monkeypatch.setattr(W, "warm_runs", lambda groups: groups["w"])
    monkeypatch.setattr(W, "marker_path", lambda runs: tmp_path / f"lwsim-warm-{len(runs)}")
    monkeypatch.setitem(RN.EXPERIMENTS, "e", len)
    monkeypatch.setitem(RN.EXPERIMENTS, "f", abs)
    batches, fail, bars = [], set(), []

    def batch(items, threads, done=None):
        batches.append((list(items), threads, done))
        if done is not None:
            for _ in items:
                done.put(1)
        return [f"failed {json.loads(c)['cell']}" for _, c in items if json.loads(c).get("cell") in fail]
    monkeypatch.setattr(W, "_warm_batch", batch)
    ticks = iter([100.0, 103.75])
    monkeypatch.setattr(W, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    monkeypatch.setattr(tqdm.auto, "tqdm", lambda **kw: Bar(bars, **kw))
    # a sequential warm-up starts no processes (fails at once instead of spawning them)
    monkeypatch.setattr(multiprocessing, "get_context", lambda method: pytest.fail("process pool started"))
    return types.SimpleNamespace(batches=batches, fail=fail, bars=bars, marker=tmp_path)


def cells(items):
    return [json.loads(c).get("cell", "-") for _, c in items]


def test_sequential_bar_families_and_clock(env):
    said = []
    out = W.warm_up({"w": [F, RNN, GRU, CONST, NUMPY]}, say=lambda *a, **k: said.append((a, k)))
    assert out == {"runs": 4, "seconds": 3.75, "skipped": False, "failed": []}
    # 78 s × 4 / 36 = 8.7 s; then 3.75 s reads "4 s"
    assert said == [(("compiling numba kernels (first run only, about 9 s on an idle 2-core AMD EPYC; later runs "
                      "load them from numba's cache)",), {"flush": True}),
                    (("numba kernels ready in 4 s (4 warm-up runs)",), {"flush": True})]
    (bar,) = env.bars
    assert bar.kw == {"total": 4, "desc": "compiling numba kernels", "unit": "run", "disable": False, "leave": False}
    # family by family in the runs' order: f (its experiment), the leaky cells (rnn, constgate), gru
    assert bar.events == [("postfix", "f", False), ("update", 1),
                          ("postfix", "leaky cells", False), ("update", 1),
                          ("postfix", "leaky cells", False), ("update", 1),
                          ("postfix", "gru", False), ("update", 1), ("close",)]
    assert [(cells(items), threads, done) for items, threads, done in env.batches] == [
        (["-"], None, None), (["rnn"], None, None), (["constgate"], None, None), (["gru"], None, None)]
    assert [items[0][0] for items, _, _ in env.batches] == [abs, len, len, len]
    (marker,) = env.marker.glob("lwsim-warm-*")
    assert json.loads(marker.read_text()) == {"runs": 4, "seconds": 3.8}      # round(3.75, 1)


def test_sequential_failures_of_every_batch_kept_and_bar_disabled(env):
    env.fail.update({"rnn", "constgate"})
    out = W.warm_up({"w": [RNN, CONST, GRU]}, progress=False, say=pytest.fail)
    assert out["failed"] == ["failed rnn", "failed constgate"] and out["runs"] == 3
    assert env.bars[0].kw["disable"] is True and env.bars[0].kw["total"] == 3
    assert not list(env.marker.glob("lwsim-warm-*"))


def test_bar_closed_when_a_batch_raises(env, monkeypatch):
    def boom(items, threads, done=None):
        raise RuntimeError("worker lost")
    monkeypatch.setattr(W, "_warm_batch", boom)
    with pytest.raises(RuntimeError, match="worker lost"):
        W.warm_up({"w": [GRU]}, progress=False)
    assert env.bars[0].events == [("postfix", "gru", False), ("close",)]


@pytest.fixture
def pool(env, monkeypatch):
    """The parallel branch without processes: get_context("spawn") gives a context whose Manager makes
    a queue.Queue; the pool runs each batch when submitted; wait hands back the first pending
    future only. Records the pool's arguments, the submissions, the waits and the thread caps."""
    rec = types.SimpleNamespace(pools=[], submits=[], waits=[], envs=[], queues=[])

    class Manager:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def Queue(self):
            rec.queues.append(queue.Queue())
            return rec.queues[-1]
    ctx = types.SimpleNamespace(Manager=Manager)
    rec.ctx = ctx

    class Pool:
        def __init__(self, max_workers, mp_context):
            rec.pools.append((max_workers, mp_context))

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def submit(self, fn, *args):
            rec.submits.append(args)
            fut = cf.Future()
            fut.set_result(fn(*args))
            return fut

    def wait(fs, timeout, return_when):
        rec.waits.append((timeout, return_when))
        first = next(iter(fs))
        return {first}, set(fs) - {first}
    monkeypatch.setattr(multiprocessing, "get_context", lambda method: ctx if method == "spawn" else None)
    monkeypatch.setattr(cf, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(cf, "wait", wait)
    monkeypatch.setattr(RN, "worker_thread_env", lambda n: rec.envs.append(n) or contextlib.nullcontext())
    return rec


def test_parallel_bookkeeping_step_by_step(env, pool, monkeypatch):
    monkeypatch.setattr(W.os, "cpu_count", lambda: None)                # unknown: 1 // 2 → at least 1 thread
    env.fail.update({"rnn", "lstm"})
    out = W.warm_up({"w": [F, RNN, CONST, GRU, LSTM]}, jobs=2, progress=False)
    assert out == {"runs": 5, "seconds": 3.75, "skipped": False, "failed": ["failed rnn", "failed lstm"]}
    assert pool.pools == [(2, pool.ctx)] and pool.envs == [1]
    # the largest family first, then the others in the runs' order; each with 1 thread and the queue
    (finished,) = pool.queues
    assert [(cells(items), threads, done) for items, threads, done in pool.submits] == [
        (["rnn", "constgate"], 1, finished), (["-"], 1, finished), (["gru"], 1, finished), (["lstm"], 1, finished)]
    assert pool.waits == [(0.5, "FIRST_COMPLETED")] * 4
    # the 5 runs reported on the queue count on the bar; a finished family makes room for the next
    (bar,) = env.bars
    assert bar.events == [("update", 1)] * 5 + [("postfix", "f, gru", True), ("postfix", "gru, lstm", True),
                                                ("postfix", "lstm", True), ("postfix", "", True), ("close",)]
    assert not list(env.marker.glob("lwsim-warm-*"))


def test_parallel_threads_floor_and_ties_in_run_order(env, pool, monkeypatch):
    monkeypatch.setattr(W.os, "cpu_count", lambda: 4)
    out = W.warm_up({"w": [RNN, GRU, LSTM, F]}, jobs=3, progress=False)    # 4 // 3 = 1
    assert out["runs"] == 4 and out["failed"] == [] and pool.envs == [1] and pool.pools[0][0] == 3
    assert [cells(items) for items, _, _ in pool.submits] == [["rnn"], ["gru"], ["lstm"], ["-"]]   # ties: run order
    (marker,) = env.marker.glob("lwsim-warm-*")
    assert json.loads(marker.read_text()) == {"runs": 4, "seconds": 3.8}


# ------------------------------------------------------------------------------ warm_runs
def test_warm_runs_an_unsized_run_skips_only_itself_and_cellless_runs_sort_first(monkeypatch):
    # the smoke preset sizes e (T = 2) but not z; a z run listed first does not end its group
    monkeypatch.setattr(P, "group_runs", lambda group, preset, backend: [Run.make("e", cell="gru", T=2)])
    groups = {"g": [Run.make("z", T=9), Run.make("e", cell="gru", T=50), Run.make("e", cell="A", T=50),
                    Run.make("e", T=50)]}
    # by cell: no cell ("") before "A" before "gru"
    assert W.warm_runs(groups) == [Run.make("e", T=2), Run.make("e", cell="A", T=2), Run.make("e", cell="gru", T=2)]
