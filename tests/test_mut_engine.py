"""Mutation-testing kills for the figure engine: lwsim/figures/plan.py, runcache.py, timing.py and
warmup.py (issue 32, docs/testing.md). Small hand-built runs, results and profiles; no grid runs."""
import pytest

from lwsim.figures import plan as P
from lwsim.figures.run import Run

# ---------------------------------------------------------------------------------------------- plan.py


def test_group_runs_unknown_group_is_named():
    with pytest.raises(ValueError, match=r"^unknown run group 'nope'$"):
        P.group_runs("nope", "smoke", "numpy")


def test_group_runs_builds_the_group_at_the_preset_and_backend():
    for backend in ("numpy", "numba"):
        runs = P.group_runs("a_main", "smoke", backend)
        assert runs and {r.experiment for r in runs} == {"a_main"}
        assert {r.config["backend"] for r in runs} == {backend}


R32 = Run.make("x", train_dtype="float32", a=1)
R64 = Run.make("x", train_dtype="float64", a=1)
NOTRAIN = Run.make("y", a=2)


def test_with_train_dtype():
    assert P.with_train_dtype((R32, NOTRAIN), None) == [R32, NOTRAIN]          # a list, unchanged
    assert P.with_train_dtype((R32, NOTRAIN), "float64") == [R64, NOTRAIN]     # only where it trains
    assert P.with_train_dtype([R64], "float32") == [R32]
    with pytest.raises(ValueError, match=r"^train_dtype must be 'float32' or 'float64', got 'float16'$"):
        P.with_train_dtype([R32], "float16")


def test_plan_groups_sorted_and_dtype_passed():
    groups = P.plan(["B7", "A10"], "smoke", "numpy")
    assert list(groups) == ["a_compare", "a_main", "b_expansion"]             # sorted, each group once
    assert {r.config["train_dtype"] for r in groups["a_main"]} == {"float32"}   # the smoke preset's
    g64 = P.plan(["A1"], "smoke", "numpy", train_dtype="float64")
    assert list(g64) == ["a_main"] and {r.config["train_dtype"] for r in g64["a_main"]} == {"float64"}
    assert P.plan([], "smoke", "numpy") == {}


def test_train_dtype_of():
    assert P.train_dtype_of({}) is None
    assert P.train_dtype_of({"g": [NOTRAIN]}) is None
    assert P.train_dtype_of({"g": [R32, NOTRAIN, R32]}) == "float32"
    assert P.train_dtype_of({"g": [R64], "h": [NOTRAIN]}) == "float64"
    assert P.train_dtype_of({"g": [R64], "h": [R32]}) == "mixed"


# ------------------------------------------------------------------------------------------ runcache.py

import hashlib  # noqa: E402
import json  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from lwsim import __version__  # noqa: E402
from lwsim.figures import runcache as C  # noqa: E402

RUN = Run.make("t_mut_cache", x=3)


def test_paths():
    js, nz = C.paths("cache", RUN)
    assert js == Path("cache") / "t_mut_cache" / f"{RUN.key}.json"
    assert nz == Path("cache") / "t_mut_cache" / f"{RUN.key}.npz"


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


def _meta(tmp_path, run=RUN):
    return json.loads(C.paths(tmp_path, run)[0].read_text())


def test_save_record_by_hand(tmp_path):
    with pytest.raises(TypeError, match=r"^result of t_mut_cache must be a dict, got list$"):
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


def test_profile_and_elapsed_absent_or_unreadable(tmp_path):
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) is None       # no file
    C.save(tmp_path, RUN, {"n": 1})
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) is None       # not recorded
    js = C.paths(tmp_path, RUN)[0]
    js.write_text(json.dumps({"profile": [1, 2], "elapsed_s": 4}))
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) == 4          # not a dict
    js.write_text("{not json")
    assert C.profile(tmp_path, RUN) is None and C.elapsed(tmp_path, RUN) is None


def _problem(tmp_path, edit=None, arrays=None):
    C.save(tmp_path, RUN, {"y": np.arange(3.0), "n": 1})
    js, nz = C.paths(tmp_path, RUN)
    if edit is not None:
        meta = json.loads(js.read_text())
        js.write_text(edit if isinstance(edit, str) else json.dumps(edit(meta)))
    if arrays is not None:
        np.savez(nz, **arrays)
    return C._problem(RUN, js, nz)


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


def test_problem_refuses_pickled_arrays(tmp_path):
    C.save(tmp_path, RUN, {"n": 1})
    js, nz = C.paths(tmp_path, RUN)
    np.savez(nz, o=np.array([{"a": 1}], dtype=object))
    r, why = C._problem(RUN, js, nz)
    assert r is None and why.startswith("unreadable arrays (ValueError: ") and "allow_pickle" in why


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


def test_save_names_the_unserialisable_value(tmp_path):
    with pytest.raises(TypeError, match=r"^result\.a: value of type object is not JSON-serialisable$"):
        C.save(tmp_path, RUN, {"a": object(), "y": np.arange(2.0)})
    assert not any(tmp_path.rglob("*.json")) and not any(tmp_path.rglob("*.npz"))          # nothing written


def test_good_load_warns_nothing(tmp_path):
    C.save(tmp_path, RUN, {"n": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert C.load(tmp_path, RUN) == {"n": 1}


# -------------------------------------------------------------------------------------------- timing.py

from lwsim.figures import timing as T  # noqa: E402


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


def test_part_names_checked(clock):
    prof = T.Profile()
    for name in ("compile", "other", "wall"):
        with pytest.raises(ValueError) as ei:
            with prof.part(name):
                pass
        assert str(ei.value) == ("part must be one of ('training', 'envelope', 'matched', 'tails', 'fits', "
                                 f"'diagnostics'), got '{name}'")


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


def test_compile_clock_is_installed_once():
    first = T.compile_clock()
    assert isinstance(first, T._CompileClock) and T.compile_clock() is first and len(T._CLOCK) == 1
    s = T.compile_seconds()
    assert isinstance(s, float) and s >= 0.0


def test_compile_clock_installs_a_listener_on_numba_lock(monkeypatch):
    """A fresh install (the process-wide clock reset) registers one listener on numba's compiler lock
    that drives the clock (numba calls on_start / on_end around each compilation)."""
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


HEAD = ("experiment      runs    wall s  share |    training    envelope     matched       tails        fits "
        "diagnostics     compile       other")
ZERO = "   0.0( 0%)"


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


# -------------------------------------------------------------------------------------------- warmup.py

import os  # noqa: E402
import queue  # noqa: E402
import sys  # noqa: E402

from lwsim.figures import runner as RN  # noqa: E402
from lwsim.figures import warmup as W  # noqa: E402


def test_sizes_are_numbers_and_number_lists_only():
    cfg = {"seed": 3, "T": 24, "lr": 0.1, "flag": True, "H": [1, 2.5], "names": ["a"], "empty": [], "mixed": [1, "a"],
           "bools": [True, False], "opt": "adamw", "none": None}
    assert W._sizes(cfg) == {"T": 24, "lr": 0.1, "H": [1, 2.5]}


@pytest.fixture
def smoke(monkeypatch):
    """group_runs(group, "smoke", backend) by hand: group "g" sizes experiment e, "h" sizes e differently
    and f; anything else is unknown (ValueError) or raises KeyError."""
    calls = []

    def fake(group, preset, backend):
        calls.append((group, preset, backend))
        if group == "g":
            return [Run.make("e", cell="gru", T=2, H=[1, 2], seed=7, optimizer="sgd", task="adding", backend=backend),
                    Run.make("e", cell="lstm", T=99, seed=8, optimizer="adamw", task="copy", backend=backend)]
        if group == "h":
            return [Run.make("e", cell="gru", T=3, seed=9), Run.make("f", cell="rnn", T=4)]
        if group == "k":
            raise KeyError(group)
        raise ValueError(group)
    monkeypatch.setattr(P, "group_runs", fake)
    return calls


BIG = dict(T=500, H=[64, 64], optimizer="adamw", task="multilag", backend="numba")


def test_warm_runs_by_hand(smoke):
    with pytest.raises(TypeError, match=r"^groups must be a dict \{group: \[Run\]\}, got list$"):
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


def test_source_digest_by_hand(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "z.py").write_bytes(b"z = 1\n")
    (root / "a.py").write_bytes(b"a = 2\n")
    (root / "sub" / "b.py").write_bytes(b"b = 3\n")
    (root / "notes.txt").write_bytes(b"not hashed")
    monkeypatch.setattr(W, "__file__", str(root / "figures" / "warmup.py"))
    want = hashlib.sha256(b"a.py" + b"a = 2\n" + b"sub/b.py" + b"b = 3\n" + b"z.py" + b"z = 1\n").hexdigest()
    assert W._source_digest() == want


def _key(runs, tuning="", cpu="", feat=""):
    import numba
    blob = json.dumps([numba.__version__, sys.version, "DIGEST", tuning, cpu, feat, sorted(r.key for r in runs)])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


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


def test_warm_batch_collects_last_lines_and_reports_each_run(monkeypatch):
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
    with pytest.raises(ValueError, match=r"^jobs must be >= 1, got 0$"):
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
