"""Tests of lwsim/figures/__main__.py (laid out like the code: docs/testing.md).

python -m lwsim.figures: smoke preset end to end, the results cache, interruption and resume, CLI errors.

Mutation tests of lwsim/figures/__main__.py (issue 32): the CLI pieces with the heavy calls stubbed
(make_figures, the cost table, the pinned restart), so each test takes milliseconds.

CLI of the cluster/cost options (docs/cluster.md): --dry-run counts and core-hours on an empty
and a partly filled cache, cost-model arithmetic, --scheduler errors, LWSIM_SCHEDULER.

The run profile (lwsim/figures/timing.py, docs/experiments.md §5.3): parts add up to the wall
time, nested parts and numba compilation are counted once where they belong, the profile is
stored with the cached run and summed per experiment for ``--profile``."""


import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import lwsim.figures.__main__ as M
from lwsim import platform
from lwsim.figures import cost, drawing as F, runcache as cache
from lwsim.figures.__main__ import main, parse_args
from lwsim.figures.drawing import FIGURES
from lwsim.figures.plan import plan


CMD = [sys.executable, "-m", "lwsim.figures", "--preset", "smoke", "--backend", "numpy", "--no-progress"]


def run_cli(*args, check=True):
    p = subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=600)
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p


def numbers(obj):
    if isinstance(obj, bool) or obj is None:
        return
    if isinstance(obj, (int, float)):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from numbers(v)


def snapshot(folder):
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in Path(folder).rglob("*") if p.is_file()}


@pytest.fixture(autouse=True)
def _no_child(monkeypatch):
    """No test starts a real pinned child (a mutant that restarts would run a whole preset)."""
    def refuse(*a, **k):
        raise AssertionError("a pinned child was started")
    monkeypatch.setattr(subprocess, "call", refuse)
    monkeypatch.setattr(os, "execve", refuse)


def _err(capsys, argv):
    with pytest.raises(SystemExit) as e:
        M.parse_args(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


# ---- _setup_problem: which checks run, in which order --------------------------------------------
class _Calls:
    def __init__(self, monkeypatch, problems):
        self.seen = []
        import lwsim._cli as cli            # private: the shared CLI-check module whose checks main() runs

        def folder(path, flag):
            self.seen.append(flag)
            return problems.get(flag)

        def backend(b):
            self.seen.append("--backend")
            return problems.get("--backend")

        def dask():
            self.seen.append("dask")
            return problems.get("dask")
        monkeypatch.setattr(cli, "folder_problem", folder)
        monkeypatch.setattr(cli, "backend_problem", backend)
        monkeypatch.setattr(M, "_dask_problem", dask)


def _args(*argv):
    return M.parse_args(list(argv))


# ---- main ---------------------------------------------------------------------------------------
@pytest.fixture
def stub(monkeypatch, tmp_path):
    """make_figures recorded (writes one file into --out); no folder/backend checks beyond the real ones."""
    calls = []

    def make(only, **kw):
        calls.append((only, kw))
        os.makedirs(kw["out"], exist_ok=True)
        with open(os.path.join(kw["out"], "a.json"), "w") as f:
            f.write("{}")
    monkeypatch.setattr(F, "make_figures", make)
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    monkeypatch.chdir(tmp_path)
    return calls


# ---- the help text (user-facing): every option with its value names, choices and help ------------
_HELP = [
    "--preset {medium,paper,paper-v1,quick,smoke} grid size, docs/presets.md (default: quick)",
    "--only ONLY comma-separated figure ids, e.g. A2,B7 (default: all)",
    "--jobs JOBS worker processes (default: all cores)",
    "--out OUT output folder for PNG/JSON/FINDINGS.md (default: figures)",
    "--cache CACHE results cache folder (default: runs)",
    "--backend {numba,numpy,cupy} compute backend of the runs; cupy needs pip install 'lwsim[gpu]' "
    "(default: numba)",
    "--force recompute cached runs",
    "--no-progress no progress bars or stage lines (errors and the summary still print)",
    "--scheduler SCHEDULER Dask scheduler address (tcp://host:8786) or 'local' for a LocalCluster of "
    "--jobs workers (default: $LWSIM_SCHEDULER, else the local process pool); needs pip install 'lwsim[dist]'",
    "--scheduler-timeout SCHEDULER_TIMEOUT seconds to wait for the scheduler (default 30)",
    "--threads-per-run THREADS_PER_RUN numba/BLAS threads of each run (default: cores // jobs; 1 on a "
    "remote cluster)",
    "--retries RETRIES extra attempts of a run that raised (default 1)",
    "--dry-run print runs, cached runs, core-hours and peak memory per experiment; run nothing",
    "--calibrate time a few small runs and store this machine's rates in the cache folder",
    "--train-dtype {float32,float64} train in this dtype instead of the preset's (float32 in every "
    "preset); diagnostics always run in float64",
    "--native use this CPU's fastest kernels (BLAS, NumPy SIMD, numba target) instead of the pinned "
    "platform that gives the same bits on every x86-64 with AVX2 (docs/performance.md)",
    "--compare DIR after the run, compare the files written with those in DIR (default: with what "
    "--out held before the run)",
    "--profile after the run, print the wall time per part and experiment (from the cache)",
]


class _Clock:
    """time.perf_counter for main: 10.0 at the start, 12.5 after make_figures (wall 2.5 s)."""
    def __init__(self):
        self.t = iter([10.0, 12.5])

    def perf_counter(self):
        return next(self.t)


def write_calibration(folder, coef):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / cost.CALIBRATION_FILE).write_text(json.dumps(
        {"backend": "numpy", "host": "h", "cpus": 2, "date": "d", "startup_s": 0.0, "coef": coef}))


def table_row(text, group):
    (line,) = [l for l in text.splitlines() if l.startswith(f"| {group} ")]
    return [c.strip() for c in line.strip("|").split("|")]


# ----------------------------------------------------------------------------------------------
# parse_args
# ----------------------------------------------------------------------------------------------


def test_defaults(monkeypatch):
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    a = M.parse_args([])
    assert (a.preset, a.jobs, a.out, a.cache, a.backend) == ("quick", None, "figures", "runs", "numba")
    assert (a.force, a.no_progress, a.scheduler, a.scheduler_timeout) == (False, False, None, 30.0)
    assert (a.threads_per_run, a.retries, a.dry_run, a.calibrate) == (None, 1, False, False)
    assert (a.train_dtype, a.native, a.compare, a.profile) == (None, False, None, False)
    assert a.only == list(FIGURES)


def test_flags_parsed():
    a = M.parse_args(["--preset", "smoke", "--only", " a2 ,b7,", "--jobs", "1", "--threads-per-run", "1",
                      "--retries", "0", "--scheduler-timeout", "0.5", "--force", "--no-progress",
                      "--dry-run", "--calibrate", "--train-dtype", "float64", "--native", "--profile",
                      "--compare", "x", "--backend", "numpy", "--out", "o", "--cache", "c"])
    assert a.only == ["A2", "B7"] and a.jobs == 1 and a.threads_per_run == 1 and a.retries == 0
    assert a.scheduler_timeout == 0.5 and a.force and a.no_progress and a.dry_run and a.calibrate
    assert a.train_dtype == "float64" and a.native and a.profile and a.compare == "x"
    assert (a.backend, a.out, a.cache, a.preset) == ("numpy", "o", "c", "smoke")


def test_scheduler_default_from_env(monkeypatch):
    monkeypatch.setenv("LWSIM_SCHEDULER", "tcp://h:1")
    # the default is read when parse_args builds the parser
    assert M.parse_args([]).scheduler == "tcp://h:1"
    monkeypatch.setenv("LWSIM_SCHEDULER", "")
    assert M.parse_args([]).scheduler is None


@pytest.mark.parametrize("argv,msg", [
    (["--jobs", "0"], "--jobs must be >= 1, got 0"),
    (["--threads-per-run", "0"], "--threads-per-run must be >= 1, got 0"),
    (["--retries", "-1"], "--retries must be >= 0, got -1"),
    (["--scheduler-timeout", "0"], "--scheduler-timeout must be > 0, got 0.0"),
    (["--scheduler-timeout", "nan"], "--scheduler-timeout must be > 0, got nan"),
    (["--only", "A2,Z9"], "--only: unknown figure id(s) ['Z9']; valid: " + ",".join(FIGURES)),
    (["--only", " , "], "--only: unknown figure id(s) ' , '; valid: "),
])
def test_parse_errors(capsys, argv, msg):
    err = _err(capsys, argv)
    assert err.startswith("lwsim.figures: error: " + msg), err
    assert "(--help lists the options)" in err


def test_parse_bounds_accepted():
    a = M.parse_args(["--jobs", "1", "--threads-per-run", "1", "--retries", "0", "--scheduler-timeout", "1e-9"])
    assert (a.jobs, a.threads_per_run, a.retries) == (1, 1, 0)
    assert M.parse_args(["--preset", "paper"]).preset == "paper"


def test_help_lists_first_doc_line(capsys):
    with pytest.raises(SystemExit) as e:
        M.parse_args(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m lwsim.figures")
    assert M.__doc__.split("\n")[0] in out
    assert "grid size, docs/presets.md (default: quick)" in out


def test_help_text(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        M.parse_args(["--help"])
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    for line in _HELP:
        assert " ".join(line.split()) in flat, line
    # the description is the docstring's first line only
    assert "Each figure is a PNG plus a JSON" not in out and M.__doc__.split("\n")[0] in out


@pytest.mark.parametrize("argv,msg", [
    (["--preset", "huge"], "argument --preset: invalid choice: 'huge'"),
    (["--backend", "torch"], "argument --backend: invalid choice: 'torch'"),
    (["--train-dtype", "float16"], "argument --train-dtype: invalid choice: 'float16'"),
])
def test_choices_refused(capsys, argv, msg):
    assert msg in _err(capsys, argv)


def test_choices_accepted():
    for b in ("numba", "numpy", "cupy"):
        assert M.parse_args(["--backend", b]).backend == b
    for d in ("float32", "float64"):
        assert M.parse_args(["--train-dtype", d]).train_dtype == d


def test_scheduler_option_and_env(monkeypatch):
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    assert parse_args([]).scheduler is None
    monkeypatch.setenv("LWSIM_SCHEDULER", "tcp://10.0.0.1:8786")
    assert parse_args([]).scheduler == "tcp://10.0.0.1:8786"
    assert parse_args(["--scheduler", "local"]).scheduler == "local"


def test_cli_unreachable_scheduler_exit_code(tmp_path):
    p = subprocess.run([sys.executable, "-m", "lwsim.figures", "--preset", "smoke", "--only", "B7",
                        "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o"), "--no-progress",
                        "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "2"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 2 s" in p.stderr


@pytest.mark.parametrize("args, message", [(["--threads-per-run", "0"], "--threads-per-run must be >= 1"),
                                           (["--retries", "-1"], "--retries must be >= 0"),
                                           (["--scheduler-timeout", "0"], "--scheduler-timeout must be > 0")])
def test_bad_cluster_options(args, message, capsys):
    with pytest.raises(SystemExit):
        parse_args(args)
    assert message in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# _setup_problem
# ----------------------------------------------------------------------------------------------


def _problem(capsys, *argv):
    """main(argv)'s setup verdict: the one-line problem it stopped on (exit 2), or None when it went
    on to the work (exit 0; make_figures and the cost functions are stubbed)."""
    rc = main(list(argv))
    err = capsys.readouterr().err
    assert rc in (0, 2)
    return err.split("lwsim.figures: error: ", 1)[1].rstrip("\n") if rc == 2 else None


@pytest.fixture
def no_cost(monkeypatch):
    """--dry-run and --calibrate reach the cost functions, here stubbed (nothing planned or timed)."""
    import lwsim.figures.plan as P
    monkeypatch.setattr(cost, "calibrate", lambda *a, **k: {"startup_s": 0.0})
    monkeypatch.setattr(cost, "load_calibration", lambda cache: None)
    monkeypatch.setattr(cost, "reference_calibration", lambda: {})
    monkeypatch.setattr(P, "plan", lambda *a: {})
    monkeypatch.setattr(cost, "dry_run_table", lambda *a: [])
    monkeypatch.setattr(cost, "format_dry_run", lambda *a: "")


def test_setup_all_checks_in_order(monkeypatch, tmp_path, stub, capsys):
    c = _Calls(monkeypatch, {})
    assert _problem(capsys, "--scheduler", "local", "--compare", str(tmp_path)) is None
    assert c.seen == ["--cache", "--out", "--backend", "dask"] and len(stub) == 1


def test_setup_first_problem_wins(monkeypatch, stub, capsys):
    c = _Calls(monkeypatch, {"--out": "OUT", "--backend": "BK", "dask": "DK"})
    assert _problem(capsys, "--scheduler", "local") == "OUT"
    assert c.seen == ["--cache", "--out"]
    c = _Calls(monkeypatch, {"--cache": "CA", "--out": "OUT"})
    assert _problem(capsys) == "CA"
    c = _Calls(monkeypatch, {"--backend": "BK", "dask": "DK"})
    assert _problem(capsys, "--scheduler", "local") == "BK"
    c = _Calls(monkeypatch, {"dask": "DK"})
    assert _problem(capsys, "--scheduler", "local") == "DK"
    assert stub == []                                                   # nothing made after a problem


def test_setup_remote_skips_backend(monkeypatch, stub, capsys):
    c = _Calls(monkeypatch, {})
    assert _problem(capsys, "--scheduler", "tcp://h:1") is None
    assert c.seen == ["--cache", "--out", "dask"]


def test_setup_no_scheduler_no_dask(monkeypatch, tmp_path, stub, capsys):
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    c = _Calls(monkeypatch, {})
    assert _problem(capsys) is None
    assert c.seen == ["--cache", "--out", "--backend"]


def test_setup_dry_run_only_cache(monkeypatch, stub, no_cost, capsys):
    c = _Calls(monkeypatch, {})
    assert _problem(capsys, "--dry-run", "--scheduler", "local") is None
    assert c.seen == ["--cache"]


def test_setup_calibrate_checks_backend(monkeypatch, stub, no_cost, capsys):
    c = _Calls(monkeypatch, {})
    assert _problem(capsys, "--calibrate", "--scheduler", "tcp://h:1") is None
    assert c.seen == ["--cache", "--backend"]


def test_setup_compare_not_folder(monkeypatch, tmp_path, stub, capsys):
    _Calls(monkeypatch, {})
    f = tmp_path / "f"
    f.write_text("x")
    assert _problem(capsys, "--compare", str(f)) == f"--compare {f}: is not a folder"
    assert _problem(capsys, "--compare", str(tmp_path / "missing")).endswith(": is not a folder")


def test_setup_passes_backend(monkeypatch, stub, capsys):
    # private: lwsim._cli is the package's shared CLI-check module; its checks are stubbed here
    import lwsim._cli as cli
    seen = []
    monkeypatch.setattr(cli, "folder_problem", lambda p, f: None)
    monkeypatch.setattr(cli, "backend_problem", lambda b: seen.append(b))
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    assert _problem(capsys, "--backend", "numpy") is None
    assert seen == ["numpy"]


# ----------------------------------------------------------------------------------------------
# _dask_problem (through main)
# ----------------------------------------------------------------------------------------------


def test_dask_problem(monkeypatch, stub, capsys):
    import lwsim.figures.dist as D

    def boom():
        raise D.DaskUnavailable("no dask here")
    monkeypatch.setattr(D, "_import_distributed", boom)
    assert _problem(capsys, "--scheduler", "local") == "no dask here"
    monkeypatch.setattr(D, "_import_distributed", lambda: None)
    assert _problem(capsys, "--scheduler", "local") is None


# ----------------------------------------------------------------------------------------------
# _pinned_restart (through main)
# ----------------------------------------------------------------------------------------------


# ---- _pinned_restart ----------------------------------------------------------------------------
def test_pinned_restart_skips(monkeypatch, stub, no_cost):
    # each skip goes on in this process: make_figures (or the dry run) is reached, exit 0
    monkeypatch.setenv("LWSIM_PLATFORM", "native")
    assert main([]) == 0 and len(stub) == 1
    monkeypatch.setenv("LWSIM_PLATFORM", "pinned")
    monkeypatch.setattr(platform, "describe", lambda: {"ok": True})
    assert main([]) == 0 and len(stub) == 2
    monkeypatch.delenv("LWSIM_PLATFORM")
    monkeypatch.setattr(platform, "pinnable", lambda: pytest.fail("must not ask"))
    assert main(["--native"]) == 0 and len(stub) == 3
    assert main(["--dry-run"]) == 0 and len(stub) == 3


def test_pinned_restart_unpinnable(monkeypatch, stub, capsys):
    monkeypatch.delenv("LWSIM_PLATFORM")
    monkeypatch.setattr(platform, "pinnable", lambda: "this CPU lacks AVX2")
    assert main([]) == 0 and len(stub) == 1
    assert capsys.readouterr().err == (
        "lwsim.figures: warning: this CPU lacks AVX2; running with this CPU's native kernels, so the bits "
        "may differ from the pinned reference\n")


def test_pinned_restart_subprocess(monkeypatch, stub, capsys):
    monkeypatch.delenv("LWSIM_PLATFORM")
    monkeypatch.setattr(platform, "pinnable", lambda: None)
    monkeypatch.setattr(platform, "pinned_env", lambda: ({"E": "1"}, ["n1", "n2"]))
    got = {}

    def call(cmd, env=None, preexec_fn=None):
        got.update(cmd=cmd, env=env, preexec_fn=preexec_fn)
        return 7
    monkeypatch.setattr(subprocess, "call", call)
    assert main(["--only", "A2"]) == 7 and stub == []              # the child's status; nothing run here
    assert got["cmd"] == platform.reexec_argv("lwsim.figures", ["--only", "A2"])
    assert got["env"] == {"E": "1"} and got["preexec_fn"] is platform.die_with_parent
    assert capsys.readouterr().err == "lwsim.figures: pinned platform: n1\nlwsim.figures: pinned platform: n2\n"
    # private: main always passes as_program; only a direct call reaches its default (a child process)
    monkeypatch.setattr(os, "execve", lambda *a: pytest.fail("the default is a child process, not execve"))
    assert M._pinned_restart(_args(), []) == 7
    capsys.readouterr()

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(subprocess, "call", interrupted)
    assert main([]) == 130


def test_pinned_restart_execve(monkeypatch, stub):
    monkeypatch.delenv("LWSIM_PLATFORM")
    monkeypatch.setattr(platform, "pinnable", lambda: None)
    monkeypatch.setattr(platform, "pinned_env", lambda: ({"E": "1"}, []))
    monkeypatch.setattr(sys, "argv", ["lwsim.figures", "--force"])          # main() as the program
    got = {}

    class Exec(Exception):
        pass

    def execve(path, cmd, env):
        got.update(path=path, cmd=cmd, env=env)
        raise Exec
    monkeypatch.setattr(os, "execve", execve)
    with pytest.raises(Exec):
        main()
    cmd = platform.reexec_argv("lwsim.figures", ["--force"])
    assert got == {"path": cmd[0], "cmd": cmd, "env": {"E": "1"}}


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def test_smoke_end_to_end_and_cache(tmp_path):
    out, cache = tmp_path / "figs", tmp_path / "runs"
    p = run_cli("--out", str(out), "--cache", str(cache), "--jobs", "2")
    assert "cached" in p.stdout
    for fig_id in FIGURES:
        assert (out / f"{fig_id}.png").stat().st_size > 1000, fig_id
        data = json.loads((out / f"{fig_id}.json").read_text())
        vals = list(numbers(data))
        assert vals and all(math.isfinite(v) for v in vals), fig_id
        assert '"nan"' not in (out / f"{fig_id}.json").read_text(), fig_id
    text = (out / "FINDINGS.md").read_text()
    main = text.split("| # | finding | verdict |")[1].split("\n\n")[0]      # the headline table
    assert sum(main.count(f"| {w} |") for w in ("reproduced", "not reproduced", "inconclusive", "withheld")) == 10
    nulls = text.split("## Findings 1–5 under each null")[1].split("| # | finding | lag | full | author |")[1]
    rows = nulls.split("\n\n")[0].strip().splitlines()[1:]                  # findings 1–5 × three nulls
    assert len(rows) == 5 and all(r.count("|") == 6 for r in rows)
    assert "## 9." in text and "## 10." in text                             # A15, A16 (findings 9, 10)
    # the figures under the full and author nulls, drawn in the pool beside the others
    nulls_drawn = {p.name: p.read_bytes() for p in out.glob("*_*.*")}
    assert sorted(nulls_drawn) == sorted(f"{f}_{n}.{e}" for f in ("A1", "A4", "A5", "A6", "A7", "A14")
                                         for n in ("full", "author") for e in ("png", "json"))
    assert json.loads(nulls_drawn["A14_author.json"])["figure"] == "A14"
    # second run: nothing recomputed, the cache untouched; drawn in this process, the same files
    before = snapshot(cache)
    p2 = run_cli("--out", str(out), "--cache", str(cache), "--jobs", "1")
    assert " 0 computed" in p2.stdout, p2.stdout
    assert snapshot(cache) == before
    assert {p.name: p.read_bytes() for p in out.glob("*_*.*")} == nulls_drawn


def test_interrupt_and_resume(tmp_path):
    only = ["--only", "A12,B7"]
    cache, out = tmp_path / "runs", tmp_path / "figs"
    proc = subprocess.Popen(CMD + only + ["--out", str(out), "--cache", str(cache), "--jobs", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and len(list(cache.rglob("*.json"))) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {p: p.read_bytes() for p in cache.rglob("*.json")}
    mtimes = {p: p.stat().st_mtime_ns for p in finished}
    assert 3 <= len(finished)
    assert not list(cache.rglob("*.tmp")) or True          # a killed write leaves at most a temp file
    p = run_cli(*only, "--out", str(out), "--cache", str(cache), "--jobs", "1")
    total = int(p.stdout.split("runs: ")[1].split(" total")[0])
    computed = int(p.stdout.split("total, ")[1].split(" computed")[0])
    assert computed == total - len(finished), p.stdout
    for path, blob in finished.items():                      # finished runs were reused, not rewritten
        assert path.read_bytes() == blob and path.stat().st_mtime_ns == mtimes[path]
    # the resumed results equal an uninterrupted run
    ref_cache, ref_out = tmp_path / "ref_runs", tmp_path / "ref_figs"
    run_cli(*only, "--out", str(ref_out), "--cache", str(ref_cache), "--jobs", "1")
    for fig_id in ("A12", "B7"):
        assert json.loads((out / f"{fig_id}.json").read_text()) == json.loads((ref_out / f"{fig_id}.json").read_text())


@pytest.mark.parametrize("args, message", [
    (["--only", "A99"], "unknown figure id"),
    (["--preset", "huge"], "invalid choice"),
    (["--jobs", "0"], "--jobs must be >= 1"),
    (["--backend", "jax"], "invalid choice"),
])
def test_bad_cli_input(args, message, tmp_path):
    p = subprocess.run([sys.executable, "-m", "lwsim.figures", "--out", str(tmp_path), *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert message in p.stderr


def test_main_passes_arguments(stub, capsys):
    assert M.main(["--only", "A2,B7", "--preset", "smoke", "--jobs", "3", "--out", "o", "--cache", "c",
                   "--backend", "numpy", "--force", "--no-progress", "--threads-per-run", "2",
                   "--retries", "4", "--scheduler-timeout", "5", "--train-dtype", "float64"]) == 0
    assert stub == [(["A2", "B7"], dict(preset="smoke", out="o", cache="c", jobs=3, backend="numpy",
                                        force=True, progress=False, scheduler=None, threads_per_run=2,
                                        retries=4, timeout=5.0, train_dtype="float64"))]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("lwsim.figures: 2 figure(s), preset smoke, into o/ in ")
    assert out[0].endswith(" s")
    assert out[1].startswith("lwsim.figures: ")
    assert "the previous files in o/" in "\n".join(out)


def test_main_progress_default(stub, capsys):
    assert M.main(["--only", "A1"]) == 0
    assert stub[0][1]["progress"] is True and stub[0][1]["force"] is False
    assert capsys.readouterr().out.startswith("lwsim.figures: 1 figure(s), preset quick, into figures/ in ")


def test_main_setup_error(stub, capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    assert M.main(["--cache", "file"]) == 2
    assert capsys.readouterr().err.startswith("lwsim.figures: error: --cache file: is an existing file")
    assert stub == []


def test_main_restart_status_returned(stub, monkeypatch):
    monkeypatch.setattr(M, "_pinned_restart", lambda a, argv, p: 5)
    assert M.main(["--only", "A1"]) == 5 and stub == []
    monkeypatch.setattr(M, "_pinned_restart", lambda a, argv, p: 0)
    assert M.main(["--only", "A1"]) == 0 and stub == []


def test_main_as_program(stub, monkeypatch):
    seen = []
    monkeypatch.setattr(M, "_pinned_restart", lambda a, argv, p: seen.append((argv, p)) or 3)
    monkeypatch.setattr(sys, "argv", ["x", "--only", "A1"])
    assert M.main() == 3
    assert M.main(("--only", "A2")) == 3
    assert seen == [(["--only", "A1"], True), (["--only", "A2"], False)]


def test_main_pinned_warning(stub, monkeypatch, capsys):
    monkeypatch.setattr(M, "_pinned_restart", lambda *a: None)
    monkeypatch.setenv("LWSIM_PLATFORM", "pinned")
    monkeypatch.setattr(platform, "describe", lambda: {"ok": False})
    assert M.main(["--only", "A1"]) == 0
    assert capsys.readouterr().err == ("lwsim.figures: warning: the pinned platform did not take effect "
                                       "({'ok': False}); the bits may differ from the pinned reference\n")
    monkeypatch.setattr(platform, "describe", lambda: {"ok": True})
    assert M.main(["--only", "A1"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("LWSIM_PLATFORM", "native")
    monkeypatch.setattr(platform, "describe", lambda: {"ok": False})
    assert M.main(["--only", "A1"]) == 0
    assert capsys.readouterr().err == ""


def test_main_remote_note(stub, monkeypatch, capsys):
    monkeypatch.setattr(M, "_dask_problem", lambda: None)
    assert M.main(["--only", "A1", "--scheduler", "tcp://h:1"]) == 0
    assert stub[0][1]["scheduler"] == "tcp://h:1"
    assert capsys.readouterr().err == (
        "lwsim.figures: note: Dask workers run with the platform they were started with; for the pinned "
        "bits start them under the lines `python -m lwsim.platform` prints\n")
    assert M.main(["--only", "A1", "--scheduler", "local"]) == 0
    assert capsys.readouterr().err == ""


def test_main_dry_run_and_calibrate_go_to_cost(stub, monkeypatch):
    seen = []
    monkeypatch.setattr(M, "_cost", lambda a: seen.append((a.dry_run, a.calibrate)) or 9)
    monkeypatch.setattr(M, "_dask_problem", lambda: None)
    assert M.main(["--dry-run", "--scheduler", "tcp://h:1"]) == 9
    assert M.main(["--calibrate", "--backend", "numpy"]) == 9
    assert seen == [(True, False), (False, True)] and stub == []


def test_main_errors(monkeypatch, tmp_path, capsys):
    from lwsim.figures.dist import DaskUnavailable, SchedulerUnreachable
    from lwsim.figures.runner import GridFailed
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    for exc, code, text in [(DaskUnavailable("no dask"), 2, "lwsim.figures: error: no dask\n"),
                            (SchedulerUnreachable("gone"), 2, "lwsim.figures: error: gone\n"),
                            (GridFailed({}), 1,
                             "lwsim.figures: 0 run(s) failed (the other runs finished and are cached):\nno figures written; rerun to retry the failed "
                             "runs (finished runs are cached)\n")]:
        def make(only, _e=exc, **kw):
            raise _e
        monkeypatch.setattr(F, "make_figures", make)
        assert M.main(["--only", "A1"]) == code
        cap = capsys.readouterr()
        assert cap.err == text and cap.out == ""


def test_main_reports_against_out_and_compare(stub, capsys, tmp_path):
    os.makedirs("o")
    (tmp_path / "o" / "a.json").write_text("{}")
    assert M.main(["--only", "A1", "--out", "o"]) == 0
    out = capsys.readouterr().out
    assert "the previous files in o/" in out
    os.makedirs("ref")
    (tmp_path / "ref" / "a.json").write_text("{}")
    (tmp_path / "ref" / "other.json").write_text("{}")   # not written by this run: left out
    assert M.main(["--only", "A1", "--out", "o2", "--compare", "ref"]) == 0
    out = capsys.readouterr().out
    from lwsim.figures.compare import report, snapshot
    exp = report({"a.json": snapshot("ref")["a.json"]}, snapshot("o2"), "ref/")
    assert out.splitlines()[1:] == ("lwsim.figures: " + "\n".join(exp)).splitlines()


def test_main_profile(stub, monkeypatch, capsys):
    import lwsim.figures.timing as T
    import lwsim.figures.plan as P
    seen = []
    monkeypatch.setattr(P, "plan", lambda *a: seen.append(a) or "G")
    monkeypatch.setattr(T, "profile_rows", lambda g, c: seen.append((g, c)) or "R")
    monkeypatch.setattr(T, "format_profile", lambda r, p, w: seen.append((r, p)) or "PROFILE")
    assert M.main(["--only", "A1", "--profile", "--preset", "smoke", "--cache", "c", "--train-dtype", "float64",
                   "--backend", "numpy"]) == 0
    assert seen == [(["A1"], "smoke", "numpy", "float64"), ("G", "c"), ("R", "smoke")]
    assert capsys.readouterr().out.splitlines()[-1] == "PROFILE"


def test_main_wall_and_report_lines(stub, monkeypatch, capsys):
    import lwsim.figures.compare as C
    monkeypatch.setattr(M, "time", _Clock())
    monkeypatch.setattr(C, "report", lambda before, after, where: ["line one", "line two"])
    assert M.main(["--only", "A1,A2"]) == 0
    assert capsys.readouterr().out == ("lwsim.figures: 2 figure(s), preset quick, into figures/ in 2.5 s\n"
                                       "lwsim.figures: line one\nline two\n")


def test_main_profile_gets_wall(stub, monkeypatch, capsys):
    import lwsim.figures.timing as T
    import lwsim.figures.plan as P
    monkeypatch.setattr(M, "time", _Clock())
    monkeypatch.setattr(P, "plan", lambda *a: "G")
    monkeypatch.setattr(T, "profile_rows", lambda g, c: "R")
    seen = []
    monkeypatch.setattr(T, "format_profile", lambda r, p, w: seen.append(w) or "P")
    assert M.main(["--only", "A1", "--profile"]) == 0
    assert seen == [2.5]     # 12.5 - 10.0


def test_dry_run_counts_empty_and_partly_filled(tmp_path, capsys):
    args = ["--dry-run", "--preset", "smoke", "--backend", "numpy", "--only", "A12,B7", "--cache", str(tmp_path)]
    assert main(args) == 0                          # no calibration yet: the shipped reference machine's
    out = capsys.readouterr().out
    assert "--calibrate" in out and "reference machine" in out
    row = table_row(out, "a_theory")
    assert row[:3] == ["a_theory", "9", "0"] and row[3] != "n/a"
    assert table_row(out, "b_expansion")[:3] == ["b_expansion", "2", "0"]
    # 2 s per a_theory run, 0.5 s + 1e-3 s per diag unit for b_expansion (T 12, H 6 → 10·T·H³)
    write_calibration(tmp_path, {"a_theory": {"one": 2.0, "stats": 0.0},
                                 "b_expansion": {"one": 0.5, "diag": 1e-3}})
    groups = plan(["A12", "B7"], "smoke", "numpy")
    for run in groups["a_theory"][:4]:
        cache.save(tmp_path, run, {"x": np.zeros(2)})
    bad = groups["b_expansion"][0]
    cache.save(tmp_path, bad, {"x": np.zeros(2)})
    cache.paths(tmp_path, bad)[1].write_bytes(b"garbage")   # a corrupted record does not count
    assert main(args) == 0
    out = capsys.readouterr().out
    assert table_row(out, "a_theory") == ["a_theory", "9", "4", "0.005", "0.00278", "0.30 GB"]
    be = 2 * (0.5 + 1e-3 * 10 * 12 * 6 ** 3) / 3600                 # 2 runs, none cached
    assert table_row(out, "b_expansion")[1:5] == ["2", "0", f"{be:.3g}", f"{be:.3g}"]
    assert table_row(out, "total")[1:3] == ["11", "4"]
    assert cache.paths(tmp_path, bad)[1].read_bytes() == b"garbage"  # a dry run moves nothing


def test_cli_profile_prints_the_table(tmp_path, capsys):
    args = ["--preset", "smoke", "--only", "B7", "--cache", str(tmp_path / "runs"), "--out", str(tmp_path / "fig"),
            "--jobs", "1", "--no-progress", "--profile"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "lwsim.figures --profile, preset smoke" in out
    row = next(line for line in out.splitlines() if line.startswith("b_expansion"))
    assert row.split()[1] == "2" and "100.0%" in row


# ----------------------------------------------------------------------------------------------
# _cost
# ----------------------------------------------------------------------------------------------


def test_cost(monkeypatch, capsys, stub):
    import lwsim.figures.cost as C
    import lwsim.figures.plan as P
    seen = []
    monkeypatch.setattr(C, "calibrate", lambda cache, backend, progress: seen.append(("cal", cache, backend, progress))
                        or {"startup_s": 1.25})
    monkeypatch.setattr(C, "load_calibration", lambda cache: seen.append(("load", cache)) or None)
    monkeypatch.setattr(C, "reference_calibration", lambda: "REF")
    monkeypatch.setattr(P, "plan", lambda *a: seen.append(("plan",) + a) or "G")
    monkeypatch.setattr(C, "dry_run_table", lambda g, cache, cal: seen.append(("tab", g, cache, cal)) or "ROWS")
    monkeypatch.setattr(C, "format_dry_run", lambda rows, preset, cal: f"{rows}|{preset}|{cal}")
    assert main(["--calibrate", "--dry-run", "--cache", "c", "--backend", "numpy", "--no-progress",
                 "--preset", "smoke", "--only", "A1", "--train-dtype", "float64"]) == 0
    assert seen == [("cal", "c", "numpy", False), ("load", "c"), ("plan", ["A1"], "smoke", "numpy", "float64"),
                    ("tab", "G", "c", "REF")]
    assert capsys.readouterr().out == (f"lwsim.figures: calibration stored in c/{C.CALIBRATION_FILE} "
                                       "(numba start-up 1.2 s)\nROWS|smoke|REF\n")
    seen.clear()
    monkeypatch.setattr(C, "load_calibration", lambda cache: "MINE")
    assert main(["--dry-run"]) == 0
    assert seen[0][0] == "plan" and seen[1][3] == "MINE"
    assert capsys.readouterr().out == "ROWS|quick|MINE\n"
    seen.clear()
    assert main(["--calibrate"]) == 0
    assert seen == [("cal", "runs", "numba", True)]
    assert capsys.readouterr().out.startswith("lwsim.figures: calibration stored in runs/")
