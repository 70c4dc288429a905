"""Tests of lwsim/figures/warmup.py (laid out like the code: docs/testing.md).

Mutation-testing kills for lwsim/figures/warmup.py's ``warm_up`` (issue 32, docs/testing.md),
beside tests/test_mut_engine.py's: the progress bar by hand (a recording stand-in for tqdm), the
kernel families of runs without a cell or a backend, the clock, the marker's rounding, and the
parallel branch's bookkeeping step by step (a pool that runs each batch at submission and a
``wait`` that hands back one finished batch at a time, in submission order); ``warm_runs``'s
skipping of an unsized run and its cell order.

Mutation-testing kills for the figure engine: lwsim/figures/plan.py, runcache.py, timing.py and
warmup.py (issue 32, docs/testing.md). Small hand-built runs, results and profiles; no grid runs.

Compile once and say so; progress to the end (docs/experiments.md §5.3): the warm-up's runs,
its message, bar and marker, and the drawing bar."""


import concurrent.futures as cf
import contextlib
import hashlib
import json
import multiprocessing
import os
import queue
import sys
import types
from pathlib import Path

import pytest
import tqdm.auto

import lwsim.figures.studies
from lwsim.figures import plan as P, runner as RN, timing as T, warmup, warmup as W
from lwsim.figures.plan import plan
from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.run import Run
from lwsim.figures.studies import preset_sizes


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


R32 = Run.make("x", train_dtype="float32", a=1)


NOTRAIN = Run.make("y", a=2)


BIG = dict(T=500, H=[64, 64], optimizer="adamw", task="multilag", backend="numba")


def _key(runs, tuning="", cpu="", feat=""):
    import numba
    blob = json.dumps([numba.__version__, sys.version, "DIGEST", tuning, cpu, feat, sorted(r.key for r in runs)])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


@pytest.fixture
def warm_env(tmp_path, monkeypatch, smoke):
    """warm_up on hand-built runs: the smoke fixture's group g gives e/gru and e/lstm; EXPERIMENTS["e"] is
    a stub; each batch recorded; the marker in tmp_path."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(RN.EXPERIMENTS, "e", len)
    batches = []

    def batch(items, threads, done=None):
        batches.append((list(items), threads))
        if done is not None:
            for _ in items:
                done.put(1)
        return [f"failed {json.loads(c)['cell']}" for _, c in items if json.loads(c).get("cell") in FAIL]
    FAIL = set()
    monkeypatch.setattr(W, "_warm_batch", batch)
    return batches, FAIL


def _groups(*cells, backend="numba"):
    big = {k: v for k, v in BIG.items() if k != "backend"}
    return {"g": [Run.make("e", cell=c, seed=i, backend=backend, **big) for i, c in enumerate(cells)]}


PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}


@pytest.fixture
def quick_warm():
    return warmup.warm_runs(plan(["A1", "A10", "A11", "B4", "B7"], "quick", "numba"))


def test_warm_runs_are_small_and_keep_the_options(quick_warm):
    by_exp = {}
    for r in quick_warm:
        by_exp.setdefault(r.experiment, []).append(r.config)
    # one per cell: a_main and a_compare (adamw, sgd, rmsprop) share it; b_s2 one per model
    assert {k: len(v) for k, v in by_exp.items()} == {"a_main": 5, "a_fidelity": 5, "b_s2": 3, "b_expansion": 2}
    a = by_exp["a_main"][0]
    assert (a["T"], a["H"], a["n_diag"], a["epochs"]) == (24, 6, 32, 1)       # the smoke preset's sizes
    assert a["floor_ablations"] == PRESETS["quick"]["a_main"]["floor_ablations"]  # options stay quick's
    assert a["train_dtype"] == "float32" and a["backend"] == "numba"
    assert {c["task"] for c in by_exp["b_s2"]} == {"adding"}                   # a smoke task, T = 16 fits
    assert sorted(c["cell"] for c in by_exp["a_main"]) == ["constgate", "diaggate", "gru", "lstm", "sharedgate"]


# ----------------------------------------------------------------------------------------------
# _sizes
# ----------------------------------------------------------------------------------------------


def test_sizes_are_numbers_and_number_lists_only():
    # private: warm_runs reaches it only through the registered groups' smoke presets; arbitrary key kinds need the helper
    cfg = {"seed": 3, "T": 24, "lr": 0.1, "flag": True, "H": [1, 2.5], "names": ["a"], "empty": [], "mixed": [1, "a"],
           "bools": [True, False], "opt": "adamw", "none": None}
    assert W._sizes(cfg) == {"T": 24, "lr": 0.1, "H": [1, 2.5]}


# ----------------------------------------------------------------------------------------------
# warm_runs
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------ warm_runs
def test_warm_runs_an_unsized_run_skips_only_itself_and_cellless_runs_sort_first(monkeypatch):
    # the smoke preset sizes e (T = 2) but not z; a z run listed first does not end its group
    monkeypatch.setattr(P, "group_runs", lambda group, preset, backend: [Run.make("e", cell="gru", T=2)])
    groups = {"g": [Run.make("z", T=9), Run.make("e", cell="gru", T=50), Run.make("e", cell="A", T=50),
                    Run.make("e", T=50)]}
    # by cell: no cell ("") before "A" before "gru"
    assert W.warm_runs(groups) == [Run.make("e", T=2), Run.make("e", cell="A", T=2), Run.make("e", cell="gru", T=2)]


def test_warm_runs_by_hand(smoke):
    with pytest.raises(TypeError, match=r"^groups\b"):
        W.warm_runs([1])
    groups = {"g": [Run.make("e", cell="lstm", seed=3, dtype="float32", **BIG),
                    Run.make("e", cell="gru", seed=4, **(BIG | {"optimizer": "rmsprop"})),
                    Run.make("e", cell="gru", seed=5, **BIG),
                    Run.make("z", cell="x", T=1)],                       # the smoke preset does not size z
              "nope": [Run.make("e", cell="rnn", T=5)], "k": [Run.make("e", cell="diaggate", T=6)], "empty": []}
    small = dict(T=2, H=[1, 2], seed=7, optimizer="sgd", task="adding", backend="numba")
    assert W.warm_runs(groups) == [Run.make("e", cell="diaggate", T=2, H=[1, 2], seed=7),
                                   Run.make("e", cell="gru", **small),
                                   Run.make("e", cell="lstm", dtype="float32", **small),
                                   Run.make("e", cell="rnn", T=2, H=[1, 2], seed=7)]
    # each group asked once at the smoke preset, with its first run's backend (numpy if none); "empty" never
    assert smoke == [("g", "smoke", "numba"), ("k", "smoke", "numpy"), ("nope", "smoke", "numpy")]


def test_warm_runs_first_group_in_name_order_sizes_an_experiment(smoke):
    # "g" sorts before "h": e gets g's sizes (T = 2) even though h is listed first; f only from h;
    # a smoke run without a seed keeps the planned one
    groups = {"h": [Run.make("f", cell="rnn", T=400, seed=5)], "g": [Run.make("e", cell="gru", T=400)]}
    assert W.warm_runs(groups) == [Run.make("e", cell="gru", T=2, H=[1, 2], seed=7),
                                   Run.make("f", cell="rnn", T=4, seed=5)]


def test_warm_runs_rejects_bad_input():
    with pytest.raises(TypeError, match="groups"):
        warmup.warm_runs([1, 2])


# ----------------------------------------------------------------------------------------------
# _source_digest
# ----------------------------------------------------------------------------------------------


def test_source_digest_by_hand(tmp_path, monkeypatch):
    # private: its one caller folds it into the warm-up key with numba's and Python's versions; the digest by hand needs the helper
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "z.py").write_bytes(b"z = 1\n")
    (root / "a.py").write_bytes(b"a = 2\n")
    (root / "sub" / "b.py").write_bytes(b"b = 3\n")
    (root / "notes.txt").write_bytes(b"not hashed")
    monkeypatch.setattr(W, "__file__", str(root / "figures" / "warmup.py"))
    want = hashlib.sha256(b"a.py" + b"a = 2\n" + b"sub/b.py" + b"b = 3\n" + b"z.py" + b"z = 1\n").hexdigest()
    assert W._source_digest() == want


# ----------------------------------------------------------------------------------------------
# marker_path
# ----------------------------------------------------------------------------------------------


def test_marker_path_by_hand(tmp_path, monkeypatch):
    monkeypatch.setattr(W, "_source_digest", lambda: "DIGEST")
    for k in ("LWSIM_NUMBA_TUNING", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        monkeypatch.delenv(k, raising=False)
    cache = tmp_path / "numba cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    runs = [R32, NOTRAIN]
    assert W.marker_path(runs) == cache / f"lwsim-warm-{_key(runs)}" and cache.is_dir()
    assert W.marker_path(runs[::-1]) == W.marker_path(runs)                    # order does not matter
    monkeypatch.setenv("LWSIM_NUMBA_TUNING", "t")
    monkeypatch.setenv("NUMBA_CPU_NAME", "c")
    monkeypatch.setenv("NUMBA_CPU_FEATURES", "f")
    assert W.marker_path(runs).name == f"lwsim-warm-{_key(runs, 't', 'c', 'f')}"
    # NUMBA_CACHE_DIR unusable (a file) → the kernels' __pycache__; not writable → ~/.cache/lwsim; none → None
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker))
    monkeypatch.setattr(W, "__file__", str(tmp_path / "pkg" / "figures" / "warmup.py"))
    assert W.marker_path(runs).parent == tmp_path / "pkg" / "backends" / "numba" / "__pycache__"
    home = tmp_path / "home"
    monkeypatch.setattr(W.Path, "home", classmethod(lambda cls: home))
    asked = []

    def access(path, mode):
        asked.append(mode)
        return Path(path) == home / ".cache" / "lwsim"
    monkeypatch.setattr(W.os, "access", access)
    assert W.marker_path(runs).parent == home / ".cache" / "lwsim" and set(asked) == {os.W_OK}
    monkeypatch.setattr(W.os, "access", lambda path, mode: False)
    assert W.marker_path(runs) is None
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setattr(W.os, "access", lambda path, mode: True)
    assert W.marker_path(runs).parent == tmp_path / "pkg" / "backends" / "numba" / "__pycache__"


# ----------------------------------------------------------------------------------------------
# _warm_batch
# ----------------------------------------------------------------------------------------------


def test_warm_batch_collects_last_lines_and_reports_each_run(monkeypatch):
    # private: warm_up runs it in spawned worker processes; its per-item failure lines and done-queue show only here
    seen = []

    def run_task(fn, config_json, threads):
        seen.append((fn, config_json, threads))
        if config_json == "bad":
            raise RN.RunError("Traceback (most recent call last):\n  x\nValueError: boom\n\n")
        return {}
    monkeypatch.setattr(RN, "run_task", run_task)
    done = queue.Queue()
    assert W._warm_batch([(len, "ok"), (len, "bad"), (abs, "ok2")], 3, done) == ["ValueError: boom"]
    assert seen == [(len, "ok", 3), (len, "bad", 3), (abs, "ok2", 3)] and done.qsize() == 3
    assert W._warm_batch([(len, "bad")], None) == ["ValueError: boom"]        # no queue: fine


# ----------------------------------------------------------------------------------------------
# warm_up
# ----------------------------------------------------------------------------------------------


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


def test_warm_up_sequential_by_hand(tmp_path, warm_env, monkeypatch):
    batches, _ = warm_env
    said = []
    groups = _groups("gru", "lstm", "rnn", "constgate")
    out = W.warm_up(groups, jobs="1", say=lambda *a, **k: said.append((a, k)))
    assert out["runs"] == 4 and out["skipped"] is False and out["failed"] == []
    # 78 s × 4 / 36 = 8.7 s
    assert said[0] == (("compiling numba kernels (first run only, about 9 s on an idle 2-core AMD EPYC; later runs "
                        "load them from numba's cache)",), {"flush": True})
    assert said[1] == ((f"numba kernels ready in {out['seconds']:.0f} s (4 warm-up runs)",), {"flush": True})
    assert [(len(items), threads) for items, threads in batches] == [(1, None)] * 4
    assert all(items[0][0] is len for items, _ in batches)
    # one run at a time, family by family: the leaky cells (constgate, rnn) first, in cell order
    assert [json.loads(items[0][1])["cell"] for items, _ in batches] == ["constgate", "rnn", "gru", "lstm"]
    (marker,) = tmp_path.glob("lwsim-warm-*")
    assert json.loads(marker.read_text()) == {"runs": 4, "seconds": round(out["seconds"], 1)}
    again = W.warm_up(groups, say=pytest.fail)
    assert again == {"runs": 4, "seconds": 0.0, "skipped": True, "failed": []} and len(batches) == 4
    with pytest.raises(ValueError, match=r"^jobs\b"):
        W.warm_up({}, jobs=0)
    assert W.warm_up(_groups("gru", backend="numpy"), say=pytest.fail) == {"runs": 0, "seconds": 0.0,
                                                                         "skipped": True, "failed": []}


def test_warm_up_failure_message_and_no_marker(tmp_path, warm_env):
    batches, fail = warm_env
    fail.add("lstm")
    said = []
    out = W.warm_up(_groups("gru", "lstm"), say=lambda *a, **k: said.append(a[0]))
    assert out["failed"] == ["failed lstm"] and out["skipped"] is False and out["runs"] == 2
    assert said[1] == f"numba kernels ready in {out['seconds']:.0f} s (2 warm-up runs; 1 failed, their kernels " \
                      "compile during the runs)"
    assert not list(tmp_path.glob("lwsim-warm-*"))
    out = W.warm_up(_groups("gru", "lstm"), progress=False, say=pytest.fail)         # silent, and not skipped
    assert out["runs"] == 2 and out["skipped"] is False and len(batches) == 4


def test_warm_up_without_a_marker_folder(tmp_path, warm_env, monkeypatch):
    batches, _ = warm_env
    monkeypatch.setattr(W, "marker_path", lambda runs: None)
    for _ in range(2):                                                   # nothing recorded: runs again
        assert W.warm_up(_groups("gru"), progress=False)["skipped"] is False
    assert len(batches) == 2


def test_warm_up_parallel_batches_per_kernel_family(tmp_path, warm_env, monkeypatch):
    """jobs > 1: one batch per kernel family (the four leaky cells share one), largest first, at most
    ``jobs`` workers with cpu_count // jobs threads each (thread pool standing in for the processes)."""
    import concurrent.futures as cf
    import multiprocessing
    batches, _ = warm_env

    class Ctx:
        def Manager(self):
            class M:
                def __enter__(self):
                    return self

                def __exit__(self, *a):
                    return False

                def Queue(self):
                    return queue.Queue()
            return M()
    pools = []

    def pool(max_workers, mp_context):
        pools.append(max_workers)
        return cf.ThreadPoolExecutor(1)                                  # one thread: submission order kept
    monkeypatch.setattr(multiprocessing, "get_context", lambda method: Ctx() if method == "spawn" else None)
    monkeypatch.setattr(cf, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(W.os, "cpu_count", lambda: 8)
    envs = []
    monkeypatch.setattr(RN, "worker_thread_env", lambda n: envs.append(n) or __import__("contextlib").nullcontext())
    groups = _groups("gru", "rnn", "constgate", "sharedgate", "diaggate", "lstm")
    groups["g"].append(Run.make("e", seed=9, **BIG))                     # no cell: its own family, "e"
    out = W.warm_up(groups, jobs=3, progress=False)
    assert out["runs"] == 7 and out["failed"] == []
    assert pools == [3] and envs == [8 // 3]
    fams = [sorted(json.loads(c).get("cell", "-") for _, c in items) for items, _ in batches]
    assert fams[0] == ["constgate", "diaggate", "rnn", "sharedgate"]      # largest batch first
    assert sorted(map(tuple, fams[1:])) == [("-",), ("gru",), ("lstm",)]
    assert {threads for _, threads in batches} == {2}
    out = W.warm_up(_groups("gru", "lstm"), jobs=5, progress=False)      # never more workers than families
    assert pools == [3, 2]


def test_warm_up_says_it_once_then_skips(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(warmup, "_warm_batch", lambda items, threads: calls.append(len(items)) or [])
    groups = plan(["A11"], "quick", "numba")                                   # 5 cells × 3 optimizers
    said = []
    first = warmup.warm_up(groups, jobs=1, progress=True, say=lambda *a, **k: said.append(a[0]))
    assert first["runs"] == 5 and not first["skipped"] and sum(calls) == 5
    assert said[0].startswith("compiling numba kernels (first run only, about 11 s on an idle 2-core")  # 78 s × 5 / 36
    assert "ready" in said[1]
    assert "compiling numba kernels" in capsys.readouterr().err                # its own bar
    marker = list(tmp_path.glob("lwsim-warm-*"))
    assert len(marker) == 1 and json.loads(marker[0].read_text())["runs"] == 5
    again = warmup.warm_up(groups, jobs=1, progress=True, say=lambda *a, **k: said.append(a[0]))
    assert again["skipped"] and sum(calls) == 5 and len(said) == 2


def test_warm_up_silent_without_progress_and_no_marker_after_failure(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(warmup, "_warm_batch", lambda items, threads: ["ValueError: x"])
    out = warmup.warm_up(plan(["A11"], "quick", "numba"), jobs=1, progress=False, say=pytest.fail)
    assert out["failed"] == ["ValueError: x"] * 5
    assert capsys.readouterr().err == "" and not list(tmp_path.glob("lwsim-warm-*"))
    with pytest.raises(ValueError, match="jobs"):
        warmup.warm_up({}, jobs=0)
    # numpy runs compile nothing: no warm-up
    assert warmup.warm_up(plan(["A11"], "quick", "numpy"), progress=False)["runs"] == 0


def test_bench_first_run_reads_the_warm_up_line():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_first_run.py"
    spec = importlib.util.spec_from_file_location("bench_first_run", path)
    bfr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bfr)
    assert bfr.compile_seconds("runs: 3\nnumba kernels ready in 57 s (31 warm-up runs)\n") == 57.0
    assert bfr.compile_seconds("numba kernels ready in 12.5 s") == 12.5
    assert bfr.compile_seconds("runs: 3 total, 3 computed") is None
    with pytest.raises(TypeError, match="stdout"):
        bfr.compile_seconds(None)


def test_first_run_estimate_is_the_readmes_number():
    """One truth (issue 33 item 5): the message's reference seconds are the README's measured ones."""
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("<!-- first-run-times -->")[1].split("<!-- /first-run-times -->")[0]
    assert f"{warmup.REFERENCE_SECONDS:.0f} s of it compiling" in block
    assert f"{warmup.REFERENCE_RUNS} warm-up runs" in (Path(__file__).resolve().parents[2]
                                                       / "docs" / "performance.md").read_text()


def test_warm_up_reads_runs_through_their_typed_configuration():
    """A valid configuration reads its declared defaults (a_main without "backend": the declared
    "numba"); a partial one of a registered experiment is read as given, never raising."""
    # private: warm_up reads it only to pick backends and cells of real groups; a partial configuration needs the helper
    from lwsim.figures import warmup as wu
    from lwsim.figures.config import declared
    from lwsim.figures.studies import preset_sizes
    full = {k: v for k, v in preset_sizes("smoke")["a_main"].items() if k not in ("seeds", "optimizers")}
    r = Run.make("a_main", **dict(full, cell="gru", seed=212, optimizer="adamw"))
    assert declared(wu._typed(r), "backend", "numpy") == "numba"
    partial = Run.make("a_main", cell="gru")
    assert declared(wu._typed(partial), "cell", "") == "gru"
    assert declared(wu._typed(partial), "backend", "numpy") == "numpy"
