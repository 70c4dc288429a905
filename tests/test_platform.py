"""Tests of lwsim/platform.py (laid out like the code: docs/testing.md).

The pinned numerical platform and nothing lost or hidden (issue 33; docs/performance.md,
"Bit-reproducibility"): pinned runs give the same bits under two different native detections
(and native runs do not, so the test can fail), the compare report, --only keeping the verdicts
it did not recompute, outputs that follow the umask, output folders and extras checked before
any work."""


import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lwsim import platform
from lwsim.figures import compare
from lwsim.figures.findings import KEPT, merge_earlier


CMD = [sys.executable, "-m", "lwsim.figures", "--preset", "smoke", "--backend", "numpy", "--no-progress",
       "--jobs", "2"]


# another native detection, forced: OpenBLAS's pre-AVX2 kernels, NumPy at its baseline SIMD level
OTHER = {"OPENBLAS_CORETYPE": "Sandybridge", "NPY_DISABLE_CPU_FEATURES": "X86_V3"}


needs_pin = pytest.mark.skipif(platform.pinnable() is not None, reason=f"not pinnable: {platform.pinnable()}")


def run_cli(*args, env=None, umask=None, check=True):
    full = {k: v for k, v in os.environ.items() if k not in platform.PINNED and k != platform.ENV_MODE}
    full.update(env or {})
    p = subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=600, env=full,
                       preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p


# ----------------------------------------------------------------------------------------------
# pinnable
# ----------------------------------------------------------------------------------------------


def test_pinnable_needs_avx2_and_fma():
    if platform.pinnable({"avx2", "fma"}) is None:                       # an x86-64 host
        assert "AVX2" in platform.pinnable({"fma", "sse4_2"})
        assert "FMA" in platform.pinnable({"avx2"})


@needs_pin
def test_pinned_bits_same_under_two_detections_native_not(tmp_path):
    """Two different native detections (this machine's, and OpenBLAS Sandybridge + NumPy
    baseline forced) give different bits natively and the same bits pinned; the run's own compare
    report says which."""
    cache = lambda name: ["--only", "A1,A2", "--out", str(tmp_path / name), "--cache", str(tmp_path / f"r_{name}")]
    run_cli(*cache("native_a"), "--native")
    p = run_cli(*cache("native_b"), "--native", "--compare", str(tmp_path / "native_a"), env=OTHER)
    assert "NOT bit-identical" in p.stdout and "A2.json:" in p.stdout, p.stdout   # the detections matter
    assert "OpenBLAS core Sandybridge" in (tmp_path / "native_b" / "FINDINGS.md").read_text()
    run_cli(*cache("pinned_a"))
    p = run_cli(*cache("pinned_b"), "--compare", str(tmp_path / "pinned_a"), env=OTHER)
    assert "OPENBLAS_CORETYPE=Sandybridge from the environment is overridden" in p.stderr
    n = len(compare.snapshot(tmp_path / "pinned_a"))
    assert f"bit-identical to {tmp_path / 'pinned_a'}/ ({n} files)" in p.stdout, p.stdout
    a, b = (compare.snapshot(tmp_path / f"pinned_{x}") for x in "ab")
    assert a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "FINDINGS.md")
    text = (tmp_path / "pinned_b" / "FINDINGS.md").read_text()
    assert "Platform: **pinned** (OpenBLAS core Haswell, NumPy SIMD X86_V3, numba target haswell" in text


def test_compare_report_identical_and_perturbed(tmp_path):
    a = {"A1.json": json.dumps({"data": {"h": [1.0, 2.0, 3.0], "name": "x"}}).encode(),
         "A1.png": b"\x89PNG...",
         "FINDINGS.md": ("# Findings, preset `smoke`\n\nMade by `python -m lwsim.figures --preset smoke --out a "
                         "--cache r` from 3 runs\n\n| # | finding | verdict |\n|---|---|---|\n"
                         "| 1 | one | reproduced |\n| 2 | two | inconclusive |\n\n## 1. one\n\n**reproduced**\n\n"
                         "- slope 1.02\n\n## 2. two\n\n**inconclusive**\n\n- rho 0.40\n").encode()}
    same = dict(a, **{"FINDINGS.md": a["FINDINGS.md"].replace(b"--out a --cache r", b"--out b --cache s")})
    assert compare.report(a, same, "ref/") == ["bit-identical to ref/ (3 files)"]
    moved = dict(a, **{"A1.json": a["A1.json"].replace(b"2.0", b"2.5"),
                       "FINDINGS.md": a["FINDINGS.md"].replace(b"| 2 | two | inconclusive |", b"| 2 | two | reproduced |")
                       .replace(b"**inconclusive**\n\n- rho 0.40", b"**reproduced**\n\n- rho 0.55")})
    text = "\n".join(compare.report(a, moved, "ref/"))
    assert "NOT bit-identical to ref/: 2 of 3 files differ" in text
    assert "finding 2: verdict inconclusive → reproduced" in text and "- - rho 0.40" in text and "+ - rho 0.55" in text
    assert "finding 1" not in text                                    # unchanged findings are not listed
    assert "A1.json: 1 of 4 values differ" in text and "data.h[1]: 2.0 → 2.5" in text
    assert compare.report({}, a, "x/")[0].startswith("nothing to compare with")


def test_merge_earlier_keeps_what_was_not_recomputed():
    earlier = ("# Findings, preset `smoke`\n\n| # | finding | verdict |\n|---|---|---|\n| 1 | one | reproduced |\n"
               "| 2 | two | inconclusive |\n\n## 1. one\n\n**reproduced** — rule.\n\n- a\n\n"
               "## 2. two\n\n**inconclusive** — rule.\n\n- b 0.4\n\n## Extra\n\ntext\n")
    new = ("# Findings, preset `smoke`\n\n| # | finding | verdict |\n|---|---|---|\n| 1 | one | not reproduced |\n"
           "| 2 | two | not run |\n\n## 1. one\n\n**not reproduced** — rule.\n\n- a2\n\n"
           "## 2. two\n\nNot run in this call (its figures were not requested).\n\n")
    out = merge_earlier(new, earlier)
    assert "| 1 | one | not reproduced |" in out                       # what was recomputed wins
    assert "| 2 | two | inconclusive (earlier) |" in out
    two = out.split("## 2. two")[1]
    assert KEPT in two and "- b 0.4" in two and "Not run in this call" not in two
    assert "## Extra" in out and out.endswith("\n")
    other = earlier.replace("preset `smoke`", "preset `quick`")       # another preset: nothing merged
    assert merge_earlier(new, other) == new
    assert merge_earlier(earlier, earlier) == earlier


def test_only_into_folder_with_full_findings_keeps_verdicts(tmp_path):
    """A full smoke FINDINGS.md, then --only A1 into the same folder: every verdict stays."""
    out, cache = tmp_path / "figs", tmp_path / "runs"
    run_cli("--out", str(out), "--cache", str(cache), umask=0o022)
    full = (out / "FINDINGS.md").read_text()
    head = full.split("| # | finding | verdict |")[1].split("\n\n")[0]
    verdicts = [line.split("|")[3].strip() for line in head.strip().splitlines()[1:]]
    assert len(verdicts) >= 9 and "not run" not in verdicts
    for f in [*out.iterdir(), *cache.rglob("*")]:                   # outputs follow the umask
        if f.is_file():
            assert stat.S_IMODE(f.stat().st_mode) == 0o644, f
    p = run_cli("--only", "A1", "--out", str(out), "--cache", str(cache), umask=0o022)
    assert "figure(s)" in p.stdout and "lwsim.figures: " in p.stdout
    text = (out / "FINDINGS.md").read_text()
    head2 = text.split("| # | finding | verdict |")[1].split("\n\n")[0]
    kept = [line.split("|")[3].strip() for line in head2.strip().splitlines()[1:]]
    assert [k.removesuffix(" (earlier)") for k in kept] == verdicts, (kept, verdicts)
    assert "not run" not in head2 and "(earlier)" in head2 and KEPT in text
    assert "Not run in this call" not in text


def test_outputs_follow_the_umask(tmp_path):
    from lwsim.io import atomic_savez, atomic_write_bytes
    import numpy as np
    old = os.umask(0o022)
    try:
        atomic_write_bytes(tmp_path / "a.txt", b"x")
        atomic_savez(tmp_path / "b.npz", {"x": np.zeros(2)})
        os.umask(0o077)
        atomic_write_bytes(tmp_path / "c.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "b.npz").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "c.txt").stat().st_mode) == 0o600


def test_uncreatable_out_refused_before_any_work(tmp_path):
    bad = "/proc/lwsim-cannot-be-here/figs"
    p = run_cli("--out", bad, "--cache", str(tmp_path / "runs"), check=False)
    assert p.returncode == 2 and "--out" in p.stderr and "cannot create" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "runs:" not in p.stdout
    assert not (tmp_path / "runs").exists()                            # nothing computed, nothing written


# ----------------------------------------------------------------------------------------------
# pinned_env
# ----------------------------------------------------------------------------------------------


def test_pinned_env_overrides_what_the_machine_set():
    env, notes = platform.pinned_env({"OPENBLAS_CORETYPE": "SkylakeX", "PATH": "/bin"})
    assert env["OPENBLAS_CORETYPE"] == "Haswell" and env["PATH"] == "/bin"
    assert env[platform.ENV_MODE] == "pinned" and "NUMBA_CPU_FEATURES" in env
    assert len(notes) == 1 and "OPENBLAS_CORETYPE=SkylakeX" in notes[0] and "--native" in notes[0]
    assert platform.pinned_env({"OPENBLAS_CORETYPE": "Haswell"})[1] == []     # already pinned: no note


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def test_scheduler_without_dask_is_an_error_before_any_bar(tmp_path, monkeypatch, capsys):
    from lwsim.figures.__main__ import main
    monkeypatch.setitem(sys.modules, "distributed", None)             # import distributed -> ImportError
    rc = main(["--preset", "smoke", "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o"),
               "--cache", str(tmp_path / "r")])
    err = capsys.readouterr()
    assert rc == 2 and "lwsim[dist]" in err.err and "error:" in err.err
    assert "lwsim.figures [" not in err.err + err.out and not (tmp_path / "r").exists()


@needs_pin
def test_pinned_restart_replaces_the_process(tmp_path):
    """python -m lwsim.figures restarts itself pinned in the same process (exec), so a kill or
    Ctrl-C reaches the run and no orphaned child keeps writing the cache."""
    import signal
    import time
    full = {k: v for k, v in os.environ.items() if k not in platform.PINNED and k != platform.ENV_MODE}
    proc = subprocess.Popen(CMD + ["--only", "A12,B7", "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "r")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=full)
    env = b""
    deadline = time.time() + 60
    while time.time() < deadline and b"LWSIM_PLATFORM=pinned" not in env and proc.poll() is None:
        try:
            env = Path(f"/proc/{proc.pid}/environ").read_bytes()
        except OSError:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert b"LWSIM_PLATFORM=pinned" in env                  # the pinned run is this very PID


# ----------------------------------------------------------------------------------------------
# Wrong-variable plants (issue 41 item 6): bugs mutmut cannot plant (another environment variable,
# the requested instead of the detected setting, one setting checked and another applied …).
# Each was planted by hand in lwsim/platform.py, one at a time, and this file run against it
# (the two ~70 s CLI tests, test_pinned_bits_same_under_two_detections_native_not and
# test_only_into_folder_with_full_findings_keeps_verdicts, were left out of those runs; the
# new tests below catch every plant without them).
#   Q1  native_requested reads another variable (LWSIM_NATIVE) ........ test_mode_flags_read_lwsim_platform_only (new)
#   Q2  is_pinned_process: NUMBA_CPU_NAME == haswell, not the mode .... test_mode_flags_read_lwsim_platform_only (new)
#   Q3  pinned_env() updates os.environ itself (no copy) .............. test_pinned_env_is_a_copy_with_exactly_the_pin (new)
#   Q3b pinned_env(d) updates the caller's dict d ..................... test_pinned_env_is_a_copy_with_exactly_the_pin (new)
#   Q4  notes computed after the update (none ever) ................... test_pinned_env_overrides_what_the_machine_set
#   Q5  notes from os.environ, not from the environ given ............. test_pinned_env_overrides_what_the_machine_set
#   Q6  LWSIM_PLATFORM kept from the caller ("native") ................ test_pinned_env_is_a_copy_with_exactly_the_pin (new)
#   Q7  describe's mode from native_requested ......................... test_describe_reports_the_detected_kernels (new)
#   Q8  describe's openblas: OPENBLAS_CORETYPE (requested) ............ test_describe_reports_the_detected_kernels (new)
#   Q9  describe's numba: NUMBA_CPU_NAME (requested) .................. test_describe_reports_the_detected_kernels (new)
#   Q10 describe's tuning: LWSIM_NUMBA_TUNING (requested) ............. test_describe_reports_the_detected_kernels (new)
#   Q11 describe's ok: EXPECTED compared with itself .................. test_describe_ok_checks_every_detected_kernel (new)
#   Q12 describe's ok: the tuning checked twice, the numba target never  test_describe_ok_checks_every_detected_kernel (new)
#   Q13 describe's ok: native_requested() instead of the mode ......... test_describe_ok_checks_every_detected_kernel (new)
#   Q14 platform_line: the pinned numba name instead of the detected .. test_platform_line_reports_what_describe_says (new)
#   Q15 platform_line: the expected NumPy level instead of the detected  test_platform_line_reports_what_describe_says (new)
#   Q16 platform_line: "pinned" when the OpenBLAS core alone is right .. test_platform_line_reports_what_describe_says (new)
#   Q17 platform_line: the threads from NUMBA_NUM_THREADS ............. test_platform_line_reports_what_describe_says (new)
#   Q18 reexec_argv: sys.argv[1:] instead of its argv ................. test_reexec_argv_and_main_use_their_arguments (new)
#   Q20 main: the environment's values printed instead of the pin ..... test_reexec_argv_and_main_use_their_arguments (new)
#   Q21 main: sys.argv read although argv was given ................... test_reexec_argv_and_main_use_their_arguments (new)
#   Q22 pinnable: the host's flags used although flags were given ..... test_pinnable_needs_avx2_and_fma (on an AVX2 +
#                                                                      FMA host only), test_pinnable_uses_the_flags_and_the_machine_given (new)
#   Q23 pinnable: platform.processor() instead of machine() ........... test_pinnable_uses_the_flags_and_the_machine_given (new)
#   Q24 host_flags (llvmlite): features the CPU lacks included ........ test_host_flags_reads_the_flags_line_else_llvmlite (new)
#   Q26 openblas_core: OPENBLAS_CORETYPE (requested) .................. test_detections_report_the_libraries_not_the_environment (new)
#   Q27 numpy_simd: the float32 loop ("ff") instead of float64 ........ test_detections_report_the_libraries_not_the_environment (new)
#   Q27b numpy_simd: the best available level, not the current ........ test_detections_report_the_libraries_not_the_environment (new)
#   Q28 numba_target: NUMBA_CPU_NAME (requested), not numba's config .. test_detections_report_the_libraries_not_the_environment (new)
#   Q29 numba_target: the host CPU always, numba's config ignored ..... test_detections_report_the_libraries_not_the_environment (new)
#   Q30 host_flags: the "vmx flags" line instead of "flags" ........... test_host_flags_reads_the_flags_line_else_llvmlite (new)
# ----------------------------------------------------------------------------------------------


def _clear_pin(monkeypatch):
    """Remove every pinned variable and LWSIM_PLATFORM (restored after the test)."""
    for k in [*platform.PINNED, platform.ENV_MODE, "LWSIM_NATIVE", "NUMBA_NUM_THREADS"]:
        monkeypatch.delenv(k, raising=False)


def test_mode_flags_read_lwsim_platform_only(monkeypatch):
    _clear_pin(monkeypatch)
    # decoys: a pinned-looking environment, and another "native" switch
    decoys = {"NUMBA_CPU_NAME": "haswell", "OPENBLAS_CORETYPE": "Haswell", "LWSIM_NATIVE": "1"}
    for mode, native, pinned in ((None, False, False), ("native", True, False), ("pinned", False, True),
                                 ("other", False, False)):
        for with_decoys in (False, True):
            for k in decoys:
                monkeypatch.delenv(k, raising=False)
            if with_decoys:
                for k, v in decoys.items():
                    monkeypatch.setenv(k, v)
            if mode is None:
                monkeypatch.delenv(platform.ENV_MODE, raising=False)
            else:
                monkeypatch.setenv(platform.ENV_MODE, mode)
            assert platform.native_requested() is native, (mode, with_decoys)
            assert platform.is_pinned_process() is pinned, (mode, with_decoys)


def test_pinned_env_is_a_copy_with_exactly_the_pin(monkeypatch):
    pin = {**platform.PINNED, platform.ENV_MODE: "pinned"}
    # a given mapping: copied, never changed; the result is it with exactly the pin on top
    given = {"OPENBLAS_CORETYPE": "SkylakeX", "NUMBA_CPU_NAME": "", "LWSIM_NUMBA_TUNING": "avx2",
             platform.ENV_MODE: "native", "PATH": "/bin"}
    before = dict(given)
    env, notes = platform.pinned_env(given)
    assert given == before and env is not given
    assert env == {**before, **pin}
    assert env[platform.ENV_MODE] == "pinned" != before[platform.ENV_MODE]      # the caller's mode is replaced
    assert notes == ["OPENBLAS_CORETYPE=SkylakeX from the environment is overridden by Haswell "
                     "(use --native to keep it)"]
    # the default, os.environ: read, never changed
    _clear_pin(monkeypatch)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Sandybridge")
    monkeypatch.setenv(platform.ENV_MODE, "native")
    before = dict(os.environ)
    env, notes = platform.pinned_env()
    assert dict(os.environ) == before
    assert env == {**before, **pin} and env is not os.environ
    assert len(notes) == 1 and notes[0].startswith("OPENBLAS_CORETYPE=Sandybridge ")


def _fake_detections(monkeypatch, openblas="Haswell", numpy="X86_V3", numba="haswell", tuning="avx2"):
    from lwsim.backends.numba import tuning as tuning_module
    monkeypatch.setattr(platform, "openblas_core", lambda: openblas)
    monkeypatch.setattr(platform, "numpy_simd", lambda: numpy)
    monkeypatch.setattr(platform, "numba_target", lambda: numba)
    monkeypatch.setattr(tuning_module, "profile", lambda: tuning)


def test_describe_reports_the_detected_kernels(monkeypatch):
    _clear_pin(monkeypatch)
    # the environment asks for one platform, the libraries report another: describe says the latter
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("NUMBA_CPU_NAME", "haswell")
    monkeypatch.setenv("LWSIM_NUMBA_TUNING", "avx2")
    _fake_detections(monkeypatch, openblas="SkylakeX", numpy="X86_V4", numba="znver3", tuning="avx512")
    d = platform.describe()
    assert d == {"mode": "native", "openblas": "SkylakeX", "numpy": "X86_V4", "numba": "znver3",
                 "tuning": "avx512", "ok": True}
    monkeypatch.setenv(platform.ENV_MODE, "pinned")
    assert platform.describe() == {**d, "mode": "pinned", "ok": False}
    monkeypatch.setenv(platform.ENV_MODE, "native")
    assert platform.describe() == d


def test_describe_ok_checks_every_detected_kernel(monkeypatch):
    _clear_pin(monkeypatch)
    monkeypatch.setenv(platform.ENV_MODE, "pinned")
    good = {"openblas": "Haswell", "numpy": "X86_V3", "numba": "haswell", "tuning": "avx2"}
    _fake_detections(monkeypatch, **good)
    assert platform.describe() == {"mode": "pinned", **good, "ok": True}
    for key, wrong in (("openblas", "SkylakeX"), ("numpy", "X86_V4"), ("numba", "znver3"), ("tuning", "avx512")):
        _fake_detections(monkeypatch, **{**good, key: wrong})
        d = platform.describe()
        assert d[key] == wrong and d["ok"] is False, key
        # a native process (LWSIM_PLATFORM unset: not even asked for) is always ok
        monkeypatch.delenv(platform.ENV_MODE)
        d = platform.describe()
        assert d["mode"] == "native" and d["ok"] is True, key
        monkeypatch.setenv(platform.ENV_MODE, "pinned")


def test_platform_line_reports_what_describe_says(monkeypatch):
    _clear_pin(monkeypatch)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "7")                           # a decoy thread count
    d = {"mode": "pinned", "openblas": "OB", "numpy": "NP", "numba": "NB", "tuning": "TU", "ok": True}
    monkeypatch.setattr(platform, "describe", lambda: dict(d))
    kernels = "OpenBLAS core OB, NumPy SIMD NP, numba target NB, lwsim kernels TU"
    assert platform.platform_line(3) == (f"Platform: **pinned** ({kernels}, numba threads per run 3): the same "
                                         "bits on any x86-64 with AVX2 + FMA at the same thread counts.")
    assert platform.platform_line() == (f"Platform: **pinned** ({kernels}): the same bits on any x86-64 with "
                                        "AVX2 + FMA at the same thread counts.")
    # not ok although the OpenBLAS core (or any one kernel) is the pinned one
    d.update(ok=False, openblas="Haswell")
    assert platform.platform_line(2) == (
        "Platform: pinned was asked but not in effect (OpenBLAS core Haswell, NumPy SIMD NP, numba target NB, "
        "lwsim kernels TU, numba threads per run 2): the bits may differ from the pinned reference.")
    d.update(mode="native", ok=True, openblas="OB")
    assert platform.platform_line() == (f"Platform: **native** (`--native`: {kernels}): the fastest kernels of "
                                        "this CPU; the last bits may differ from a pinned run or another CPU.")


def test_reexec_argv_and_main_use_their_arguments(monkeypatch, capsys):
    _clear_pin(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["prog", "--decoy"])
    assert platform.reexec_argv("lwsim.figures", ("--only", "A1")) == [sys.executable, "-m", "lwsim.figures",
                                                                       "--only", "A1"]
    assert platform.reexec_argv("m", []) == [sys.executable, "-m", "m"]
    # main prints the pin, not what the environment holds now
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SkylakeX")
    monkeypatch.setenv(platform.ENV_MODE, "native")
    assert platform.main([]) == 0                                          # argv given: sys.argv not read
    want = "".join(f"export {k}='{v}'\n" for k, v in {**platform.PINNED, platform.ENV_MODE: "pinned"}.items())
    out = capsys.readouterr()
    assert out.out == want and out.err == ""
    assert platform.main(None) == 2                                        # argv not given: sys.argv[1:]
    assert "usage" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["prog"])
    assert platform.main(["--x"]) == 2 and platform.main(None) == 0


def test_pinnable_uses_the_flags_and_the_machine_given(monkeypatch):
    import platform as stdlib_platform
    monkeypatch.setattr(platform, "host_flags", lambda: {"avx2", "fma"})   # a decoy host
    monkeypatch.setattr(stdlib_platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(stdlib_platform, "processor", lambda: "aarch64")   # a decoy processor string
    assert platform.pinnable({"sse2"}) == "this CPU lacks AVX2 and FMA"
    assert platform.pinnable({"avx2"}) == "this CPU lacks FMA"
    assert platform.pinnable(["fma", "avx2", "sse2"]) is None
    assert platform.pinnable() is None                                     # no flags given: the host's
    monkeypatch.setattr(platform, "host_flags", lambda: {"fma"})
    assert platform.pinnable() == "this CPU lacks AVX2"
    assert platform.pinnable({"avx2", "fma"}) is None
    monkeypatch.setattr(stdlib_platform, "machine", lambda: "AArch64")
    monkeypatch.setattr(stdlib_platform, "processor", lambda: "x86_64")
    assert platform.pinnable({"avx2", "fma"}) == "this is a aarch64 machine, the pinned platform is x86-64's"


def test_host_flags_reads_the_flags_line_else_llvmlite(monkeypatch):
    import io
    import llvmlite.binding as llvm
    cpuinfo = ("processor\t: 0\nfpu\t\t: yes\nflags\t\t: fpu sse2 avx2 fma\nvmx flags\t: vnmi ept\n"
               "bugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: fpu sse2\n")
    monkeypatch.setattr(platform, "open", lambda path, *a, **k: io.StringIO(cpuinfo), raising=False)
    assert platform.host_flags() == {"fpu", "sse2", "avx2", "fma"}          # the first "flags" line only

    def no_file(*a, **k):
        raise OSError("no /proc")
    monkeypatch.setattr(platform, "open", no_file, raising=False)
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: {"avx2": True, "fma": True, "avx512f": False})
    assert platform.host_flags() == {"avx2", "fma"}                         # only the features it has

    def broken():
        raise RuntimeError("unknown platform")
    monkeypatch.setattr(llvm, "get_host_cpu_features", broken)
    assert platform.host_flags() == set()


def test_detections_report_the_libraries_not_the_environment(monkeypatch):
    import llvmlite.binding as llvm
    import numpy.lib.introspect as introspect
    from numba.core import config
    from lwsim.backends.numba import tuning as tuning_module
    _clear_pin(monkeypatch)
    # the environment asks for the pin; the (faked) libraries say otherwise
    for k, v in platform.PINNED.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(tuning_module, "openblas_core", lambda: "Zen")
    assert platform.openblas_core() == "Zen"
    monkeypatch.setattr(tuning_module, "openblas_core", lambda: None)
    assert platform.openblas_core() == "unknown"

    table = {"tanh": {"dd": {"current": "AVX512_SKX", "available": "X86_V4 AVX512_SKX baseline(X86_V2)"},
                      "ff": {"current": "X86_V3", "available": "X86_V3 baseline(X86_V2)"},
                      "ee": {"current": "baseline(X86_V2)", "available": "baseline(X86_V2)"}}}
    monkeypatch.setattr(introspect, "opt_func_info", lambda **kw: table)
    assert platform.numpy_simd() == "AVX512_SKX"                             # float64's current target
    table["tanh"]["dd"]["current"] = "baseline(X86_V1)"
    assert platform.numpy_simd() == "X86_V1"
    monkeypatch.setattr(introspect, "opt_func_info", lambda **kw: {})
    assert platform.numpy_simd() == "unknown"

    monkeypatch.setattr(llvm, "get_host_cpu_name", lambda: "host-cpu")
    monkeypatch.setattr(config, "CPU_NAME", "what-numba-compiles-for")
    assert platform.numba_target() == "what-numba-compiles-for"
    monkeypatch.setattr(config, "CPU_NAME", None)
    assert platform.numba_target() == "host-cpu"                            # not NUMBA_CPU_NAME (set, but not read)
