"""python -m lwsim.figures: reproduce every figure of both papers (05-experiments.md §5.3–5.5).

  python -m lwsim.figures [--preset quick|paper|smoke] [--only A2,B7] [--jobs N] [--out DIR]
                          [--backend numba|numpy|cupy] [--force] [--cache DIR]

Each figure is a PNG plus a JSON of the plotted data and fitted numbers in --out (default
figures/); FINDINGS.md lists the findings of §5.5 with measured numbers and a verdict. Runs are
cached under --cache (default runs/) keyed by their full configuration: a second call computes
nothing, an interrupted call resumes where it stopped.
"""
from __future__ import annotations

import argparse
import sys
import time

from .presets import PRESETS


def parse_args(argv=None):
    from .figures import FIGURES
    ap = argparse.ArgumentParser(prog="python -m lwsim.figures", description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="quick", choices=sorted(PRESETS))
    ap.add_argument("--only", default=None, help="comma-separated figure ids, e.g. A2,B7 (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    ap.add_argument("--out", default="figures", help="output folder for PNG/JSON/FINDINGS.md")
    ap.add_argument("--cache", default="runs", help="results cache folder")
    ap.add_argument("--backend", default="numba", choices=["numba", "numpy", "cupy"])
    ap.add_argument("--force", action="store_true", help="recompute cached runs")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.only:
        ids = [s.strip().upper() for s in args.only.split(",") if s.strip()]
        bad = [i for i in ids if i not in FIGURES]
        if bad or not ids:
            ap.error(f"--only: unknown figure id(s) {bad or args.only!r}; valid: {','.join(FIGURES)}")
        args.only = ids
    else:
        args.only = list(FIGURES)
    return args


def main(argv=None):
    args = parse_args(argv)
    from .figures import make_figures
    t0 = time.perf_counter()
    make_figures(args.only, preset=args.preset, out=args.out, cache=args.cache, jobs=args.jobs,
                 backend=args.backend, force=args.force, progress=not args.no_progress)
    print(f"lwsim.figures: {len(args.only)} figure(s), preset {args.preset}, into {args.out}/ "
          f"in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
