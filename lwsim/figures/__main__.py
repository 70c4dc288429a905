"""python -m lwsim.figures: reproduce every figure of both papers (docs/experiments.md §5.3–5.5).

  python -m lwsim.figures [--preset quick|paper|smoke] [--only A2,B7] [--jobs N] [--out DIR]
                          [--backend numba|numpy|cupy] [--force] [--cache DIR]
                          [--scheduler local|tcp://host:8786] [--threads-per-run N]
                          [--dry-run] [--calibrate] [--profile] [--train-dtype float32|float64]
                          [--native] [--compare DIR]

Each figure is a PNG plus a JSON of the plotted data and fitted numbers in --out (default
figures/); FINDINGS.md lists the findings of §5.5 with measured numbers and a verdict;
results.csv.gz holds every run × lag × N of the runs read, one row each (docs/experiments.md §5.8).
Runs are cached under --cache (default runs/) keyed by their full configuration: a second call
computes nothing, an interrupted call resumes where it stopped. --scheduler runs the grid on a Dask
cluster (default: $LWSIM_SCHEDULER, else the local process pool); --dry-run prints the runs, cached
runs, core-hours and peak memory per experiment without running anything (docs/cluster.md).
--profile prints, after the run, where the preset's time went: every run's wall time split into
training, envelope, matched statistic, tail fits, decay/master fits, other diagnostics and numba
compilation, summed per experiment (from the cache records; docs/experiments.md §5.3).
Every preset trains in float32, as the papers' PyTorch code; --train-dtype float64 trains in
float64 instead. When the runs of the other dtype are in the cache too, FINDINGS.md lists the
verdicts under both.
The command runs on the pinned numerical platform (one BLAS kernel set, NumPy SIMD level and numba
target for every x86-64 with AVX2: the same bits on any such machine; lwsim/platform.py) by
starting itself again with it; --native uses this CPU's fastest kernels instead. After the run it
says whether the files it wrote are bit-identical to what --out held before (or to --compare DIR),
and which numbers and verdicts moved (docs/performance.md, "Bit-reproducibility"). --only keeps the
verdicts it did not recompute from the FINDINGS.md it replaces, marked as such.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .presets import PRESET_NAMES


def parse_args(argv=None):
    from .drawing import FIGURES
    from .._cli import ArgumentParser
    ap = ArgumentParser(prog="python -m lwsim.figures", description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="quick", choices=sorted(PRESET_NAMES),
                    help="grid size, docs/presets.md (default: quick)")
    ap.add_argument("--only", default=None, help="comma-separated figure ids, e.g. A2,B7 (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    ap.add_argument("--out", default="figures", help="output folder for PNG/JSON/FINDINGS.md (default: figures)")
    ap.add_argument("--cache", default="runs", help="results cache folder (default: runs)")
    ap.add_argument("--backend", default="numba", choices=["numba", "numpy", "cupy"],
                    help="compute backend of the runs; cupy needs pip install 'lwsim[gpu]' (default: numba)")
    ap.add_argument("--force", action="store_true", help="recompute cached runs")
    ap.add_argument("--no-progress", action="store_true",
                    help="no progress bars or stage lines (errors and the summary still print)")
    ap.add_argument("--scheduler", default=os.environ.get("LWSIM_SCHEDULER") or None,
                    help="Dask scheduler address (tcp://host:8786) or 'local' for a LocalCluster of "
                         "--jobs workers (default: $LWSIM_SCHEDULER, else the local process pool); "
                         "needs pip install 'lwsim[dist]'")
    ap.add_argument("--scheduler-timeout", type=float, default=30.0,
                    help="seconds to wait for the scheduler (default 30)")
    ap.add_argument("--threads-per-run", type=int, default=None,
                    help="numba/BLAS threads of each run (default: cores // jobs; 1 on a remote cluster)")
    ap.add_argument("--retries", type=int, default=1, help="extra attempts of a run that raised (default 1)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print runs, cached runs, core-hours and peak memory per experiment; run nothing")
    ap.add_argument("--calibrate", action="store_true",
                    help="time a few small runs and store this machine's rates in the cache folder")
    ap.add_argument("--train-dtype", default=None, choices=["float32", "float64"],
                    help="train in this dtype instead of the preset's (float32 in every preset); "
                         "diagnostics always run in float64")
    ap.add_argument("--native", action="store_true",
                    help="use this CPU's fastest kernels (BLAS, NumPy SIMD, numba target) instead of the "
                         "pinned platform that gives the same bits on every x86-64 with AVX2 (docs/performance.md)")
    ap.add_argument("--compare", default=None, metavar="DIR",
                    help="after the run, compare the files written with those in DIR (default: with what "
                         "--out held before the run)")
    ap.add_argument("--profile", action="store_true",
                    help="after the run, print the wall time per part and experiment (from the cache)")
    args = ap.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.threads_per_run is not None and args.threads_per_run < 1:
        ap.error(f"--threads-per-run must be >= 1, got {args.threads_per_run}")
    if args.retries < 0:
        ap.error(f"--retries must be >= 0, got {args.retries}")
    if not args.scheduler_timeout > 0:
        ap.error(f"--scheduler-timeout must be > 0, got {args.scheduler_timeout}")
    if args.only:
        ids = [s.strip().upper() for s in args.only.split(",") if s.strip()]
        bad = [i for i in ids if i not in FIGURES]
        if bad or not ids:
            ap.error(f"--only: unknown figure id(s) {bad or args.only!r}; valid: {','.join(FIGURES)}")
        args.only = ids
    else:
        args.only = list(FIGURES)
    return args


def _setup_problem(args):
    """The first unusable --cache, --out or --backend as one line (None: all usable), found before
    any run: --out is written only when figures are made, the backend is needed here unless the
    runs go to a remote Dask cluster (its workers have their own CuPy)."""
    from .._cli import backend_problem, folder_problem
    running = not (args.dry_run or args.calibrate)
    remote = args.scheduler not in (None, "local")
    checks = [lambda: folder_problem(args.cache, "--cache"),
              lambda: folder_problem(args.out, "--out") if running else None,
              lambda: backend_problem(args.backend) if (running and not remote) or args.calibrate else None,
              lambda: _dask_problem() if args.scheduler is not None and running else None,
              lambda: (f"--compare {args.compare}: is not a folder" if args.compare is not None
                       and not os.path.isdir(args.compare) else None)]
    return next((msg for msg in (c() for c in checks) if msg), None)


def _dask_problem():
    """--scheduler without Dask installed, as one line (found before any bar is drawn)."""
    from .dist import DaskUnavailable, _import_distributed
    try:
        _import_distributed()
    except DaskUnavailable as exc:
        return str(exc)
    return None


def _pinned_restart(args, argv, as_program=False):
    """Run this command again in a process with the pinned platform (lwsim/platform.py) and return
    its exit status; None to go on in this process (already pinned, --native, or a CPU that cannot
    be pinned: said on stderr). The libraries choose their kernels when they load, so the pin
    cannot be applied to this process."""
    from .. import platform
    if args.native or args.dry_run or platform.is_pinned_process() or platform.native_requested():
        return None
    why = platform.pinnable()
    if why:
        print(f"lwsim.figures: warning: {why}; running with this CPU's native kernels, so the bits may "
              "differ from the pinned reference", file=sys.stderr)
        return None
    import subprocess
    env, notes = platform.pinned_env()
    for note in notes:
        print(f"lwsim.figures: pinned platform: {note}", file=sys.stderr)
    cmd = platform.reexec_argv("lwsim.figures", argv)
    if as_program:                       # replace this process: same PID, so a signal (Ctrl-C, a
        sys.stdout.flush()               # kill) reaches the run itself, never an orphaned child
        sys.stderr.flush()
        os.execve(cmd[0], cmd, env)
    try:                                 # main() called from Python: a child that dies with us
        return subprocess.call(cmd, env=env, preexec_fn=platform.die_with_parent)
    except KeyboardInterrupt:
        return 130


def main(argv=None):
    as_program = argv is None            # python -m lwsim.figures, not main([...]) from Python
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    problem = _setup_problem(args)
    if problem:
        print(f"lwsim.figures: error: {problem}", file=sys.stderr)
        return 2
    status = _pinned_restart(args, argv, as_program)
    if status is not None:
        return status
    from .. import platform
    if platform.is_pinned_process() and not platform.describe()["ok"]:
        print(f"lwsim.figures: warning: the pinned platform did not take effect ({platform.describe()}); "
              "the bits may differ from the pinned reference", file=sys.stderr)
    if args.scheduler not in (None, "local") and not args.dry_run:
        print("lwsim.figures: note: Dask workers run with the platform they were started with; for the "
              "pinned bits start them under the lines `python -m lwsim.platform` prints", file=sys.stderr)
    from .drawing import make_figures
    if args.calibrate or args.dry_run:
        return _cost(args)
    from .dist import DaskUnavailable, SchedulerUnreachable
    from .runner import GridFailed
    from .compare import report, snapshot
    before = snapshot(args.compare if args.compare is not None else args.out)
    t0 = time.perf_counter()
    try:
        make_figures(args.only, preset=args.preset, out=args.out, cache=args.cache, jobs=args.jobs,
                     backend=args.backend, force=args.force, progress=not args.no_progress,
                     scheduler=args.scheduler, threads_per_run=args.threads_per_run,
                     retries=args.retries, timeout=args.scheduler_timeout, train_dtype=args.train_dtype)
    except (DaskUnavailable, SchedulerUnreachable) as exc:
        print(f"lwsim.figures: error: {exc}", file=sys.stderr)
        return 2
    except GridFailed as exc:
        print(f"lwsim.figures: {exc}\nno figures written; rerun to retry the failed runs "
              f"(finished runs are cached)", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    print(f"lwsim.figures: {len(args.only)} figure(s), preset {args.preset}, into {args.out}/ "
          f"in {wall:.1f} s")
    if args.compare is not None:
        before = {k: v for k, v in before.items() if k in snapshot(args.out)}   # what this folder has
    where = f"{args.compare}/" if args.compare is not None else f"the previous files in {args.out}/"
    print("lwsim.figures: " + "\n".join(report(before, snapshot(args.out), where)))
    if args.profile:
        from . import timing
        from .plan import plan
        groups = plan(args.only, args.preset, args.backend, args.train_dtype)
        print(timing.format_profile(timing.profile_rows(groups, args.cache),
                                    args.preset, wall))
    return 0


def _cost(args):
    """--calibrate (time probe runs, store rates) and/or --dry-run (the cost table)."""
    from . import cost
    from .plan import plan
    if args.calibrate:
        rec = cost.calibrate(args.cache, backend=args.backend, progress=not args.no_progress)
        print(f"lwsim.figures: calibration stored in {args.cache}/{cost.CALIBRATION_FILE} "
              f"(numba start-up {rec['startup_s']:.1f} s)")
    if args.dry_run:
        cal = cost.load_calibration(args.cache) or cost.reference_calibration()   # never "n/a"
        rows = cost.dry_run_table(plan(args.only, args.preset, args.backend, args.train_dtype), args.cache, cal)
        print(cost.format_dry_run(rows, args.preset, cal))
    return 0


if __name__ == "__main__":
    sys.exit(main())
