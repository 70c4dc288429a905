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
