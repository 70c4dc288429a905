"""The dry-run table of docs/cluster.md and the README: every preset's runs, core-hours and peak
memory per experiment, from the reference calibration shipped with lwsim
(lwsim/data/reference_calibration.json) and an empty results cache — exactly what
``python -m lwsim.figures --preset P --dry-run`` prints on a machine without a calibration
(docs/cluster.md, "Dry-run numbers").

    python benchmarks/dry_run_table.py            # Markdown table on stdout
"""
import tempfile

from lwsim.figures import cost
from lwsim.figures.drawing import FIGURES
from lwsim.figures.plan import plan

PRESETS = ("smoke", "quick", "medium", "paper-v1", "paper")


def hours(h):
    if h < 1 / 60:
        return f"{h * 3600:.2g} s"
    if h < 1:
        return f"{h * 60:.2g} min"
    return f"{h:,.0f} h" if h >= 100 else f"{h:.3g} h"


def main():
    cal = cost.reference_calibration()
    if cal is None:
        raise SystemExit("no reference calibration in lwsim/data/")
    with tempfile.TemporaryDirectory() as empty:
        rows = {p: {r["group"]: r for r in cost.dry_run_table(plan(list(FIGURES), p, "numba"), empty, cal)}
                for p in PRESETS}
    groups = sorted({g for r in rows.values() for g in r})
    print(f"Reference calibration: {cal.get('cpu', cal['host'])}, {cal['cpus']} cpus, {cal['date'][:10]}, "
          f"GEMM {cal['gemm_flops_per_s'] / 1e9:.0f} GFLOP/s per core\n")
    print("| experiment | " + " | ".join(PRESETS) + " |")
    print("|---" * (len(PRESETS) + 1) + "|")
    for g in groups:
        cells = [f"{rows[p][g]['runs']} runs, {hours(rows[p][g]['core_h'])}, {rows[p][g]['peak_gb']:.2g} GB"
                 if g in rows[p] else "—" for p in PRESETS]
        print(f"| {g} | " + " | ".join(cells) + " |")
    tot = []
    for p in PRESETS:
        r = rows[p].values()
        tot.append(f"**{sum(x['runs'] for x in r)} runs, {hours(sum(x['core_h'] for x in r))}, "
                   f"{max(x['peak_gb'] for x in r):.2g} GB**")
    print("| **total** | " + " | ".join(tot) + " |")


if __name__ == "__main__":
    main()
