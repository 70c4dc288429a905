"""The first run after installing, cold and warm: how long numba's compilation and the whole
preset take (docs/performance.md, "Compilation and the first run").

Run:  python benchmarks/bench_first_run.py [--preset quick] [--jobs N] [--only A1,B7]
                                           [--python /path/to/fresh/venv/bin/python] [--out FILE]

Two runs of  PYTHON -m lwsim.figures --preset P --out <empty> --cache <empty>  (each with a new
empty results cache, so every run of the grid is computed):
  cold — NUMBA_CACHE_DIR an empty folder: every kernel is compiled (a fresh install);
  warm — the same NUMBA_CACHE_DIR, now filled by the cold run: kernels are loaded.
Printed per run: the wall time (time.perf_counter around the subprocess) and the warm-up's own
time, read from its line "numba kernels ready in N s" (absent when it was skipped). --python
runs another interpreter (e.g. a virtual environment made with ``pip install .`` from a fresh
clone) so that the packaged code is measured. The machine line says which CPU; on a shared
machine read the load average printed beside it.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def compile_seconds(stdout):
    """Seconds of the warm-up from its "numba kernels ready in N s" line; None when skipped."""
    if not isinstance(stdout, str):
        raise TypeError(f"stdout must be a str, got {type(stdout).__name__}")
    m = re.search(r"numba kernels ready in (\d+(?:\.\d+)?) s", stdout)
    return float(m.group(1)) if m else None


def one_run(python, preset, numba_dir, work, jobs, only):
    env = dict(os.environ, NUMBA_CACHE_DIR=numba_dir)
    env.pop("LWSIM_SCHEDULER", None)
    out, cache = tempfile.mkdtemp(dir=work), tempfile.mkdtemp(dir=work)
    cmd = [python, "-m", "lwsim.figures", "--preset", preset, "--out", out, "--cache", cache]
    cmd += ["--jobs", str(jobs)] if jobs else []
    cmd += ["--only", only] if only else []
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
    return wall, compile_seconds(p.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="quick")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--python", default=sys.executable, help="interpreter to run (default: this one)")
    ap.add_argument("--out", default=None, help="append the result to this file")
    args = ap.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    lines = [f"bench_first_run: preset {args.preset}, {cpu_model()}, {os.cpu_count()} cores, "
             f"load average before {os.getloadavg()[0]:.1f}, python {args.python}"]
    with tempfile.TemporaryDirectory() as work:
        numba_dir = os.path.join(work, "numba-cache")
        os.mkdir(numba_dir)
        for kind in ("cold", "warm"):
            wall, comp = one_run(args.python, args.preset, numba_dir, work, args.jobs, args.only)
            lines.append(f"{kind}: {wall:7.1f} s wall, compilation "
                         + (f"{comp:.0f} s" if comp is not None else "skipped (cache warm)")
                         + f" (load average after {os.getloadavg()[0]:.1f})")
            print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(time.strftime("%Y-%m-%d %H:%M ") + text + "\n\n")


if __name__ == "__main__":
    main()
