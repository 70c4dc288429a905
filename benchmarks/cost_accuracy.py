"""Accuracy of the dry-run cost model (lwsim/figures/cost.py, docs/cluster.md) — not a test.

Runs every run of a preset once, in this process, warmed up (the whole smoke preset first, so
numba compilation is excluded, as in the model), with one numba thread, and prints predicted
against measured time per run, per experiment and for the whole preset. Measured = CPU time of
this process (core-seconds, as the model predicts; the wall time, inflated when other processes
share the cores, is reported for the whole preset). Targets: every run
within 2x, the whole preset within 30 %. Needs a calibration (``python -m lwsim.figures
--calibrate --cache DIR``); one is made first if DIR has none.

    python benchmarks/cost_accuracy.py --preset smoke --cache runs --out benchmarks/results/cost_accuracy_smoke.md
    python benchmarks/cost_accuracy.py --preset quick --cache runs --out benchmarks/results/cost_accuracy_quick.md
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from lwsim.figures import cost
from lwsim.figures.drawing import FIGURES
from lwsim.figures.plan import plan
from lwsim.figures.runner import EXPERIMENTS, limit_threads


def describe(run):
    c = run.config
    keys = ("cell", "optimizer", "task", "law", "alpha", "seed")
    return " ".join(f"{k}={c[k]}" for k in keys if k in c)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--backend", default="numba")
    ap.add_argument("--cache", default="runs", help="folder holding calibration.json")
    ap.add_argument("--out", default=None, help="write the markdown report here too")
    args = ap.parse_args(argv)
    cal = cost.load_calibration(args.cache)
    if cal is None:
        cal = cost.calibrate(args.cache, backend=args.backend)
    limit_threads(1)
    # warm-up, untimed: the calibration probes and every run of the smoke preset, so that each
    # experiment × cell's numba specialisations are compiled before timing (the model excludes
    # compilation; without this a smoke a_conventions run measured its JIT time, 0.08×)
    smoke = [r for g in plan(list(FIGURES), "smoke", args.backend).values() for r in g]
    for run in list(cost._probes(args.backend)[0]) + list(dict.fromkeys(smoke)):
        EXPERIMENTS[run.experiment](run.config)
    runs = [r for g in plan(list(FIGURES), args.preset, args.backend).values() for r in g]
    runs = list(dict.fromkeys(runs))
    rows, wall = [], 0.0
    for i, run in enumerate(runs):
        pred, model = cost.predict_seconds(run, cal)
        t0 = time.perf_counter()
        meas = cost.cpu_seconds(EXPERIMENTS[run.experiment], run.config)
        wall += time.perf_counter() - t0
        rows.append((run, pred, meas, model))
        print(f"{i + 1:3d}/{len(runs)} {run.experiment:12s} {describe(run):40s} predicted {pred:8.2f} s "
              f"measured {meas:8.2f} s  ratio {pred / meas:5.2f}", flush=True)
    ratios = [p / m for _, p, m, _ in rows]
    tp, tm = sum(p for _, p, _, _ in rows), sum(m for _, _, m, _ in rows)
    within = sum(0.5 <= r <= 2.0 for r in ratios)
    lines = [f"# Cost model accuracy, preset {args.preset} (backend {args.backend}, 1 thread, warm process)",
             "", f"calibration: {cal['date']} on {cal['host']} ({cal['cpus']} cpus), "
             f"numba start-up per worker {cal['startup_s']:.1f} s (not in the per-run numbers)", "",
             f"measured: CPU seconds of the process ({tm:.1f} s in all; wall time {wall:.1f} s)", "",
             "| experiment | runs | predicted s | measured s | ratio (total) | min ratio | max ratio |",
             "|---|---|---|---|---|---|---|"]
    for name in sorted({r.experiment for r, *_ in rows}):
        sel = [(p, m) for r, p, m, _ in rows if r.experiment == name]
        ps, ms = sum(p for p, _ in sel), sum(m for _, m in sel)
        rs = [p / m for p, m in sel]
        lines.append(f"| {name} | {len(sel)} | {ps:.1f} | {ms:.1f} | {ps / ms:.2f} | {min(rs):.2f} | {max(rs):.2f} |")
    lines.append(f"| **all** | {len(rows)} | {tp:.1f} | {tm:.1f} | {tp / tm:.2f} | {min(ratios):.2f} | "
                 f"{max(ratios):.2f} |")
    lines += ["", f"runs within 2x: {within}/{len(rows)}; whole preset: predicted/measured = {tp / tm:.2f} "
              f"({'within' if abs(tp / tm - 1) <= 0.3 else 'NOT within'} 30 %)", "",
              "| # | experiment | run | predicted s | measured s | ratio |", "|---|---|---|---|---|---|"]
    for i, (run, p, m, model) in enumerate(rows):
        flag = f" ({model})" if model != run.experiment else ""
        lines.append(f"| {i + 1} | {run.experiment}{flag} | {describe(run)} | {p:.3f} | {m:.3f} | {p / m:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0 if within == len(rows) and abs(tp / tm - 1) <= 0.3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
