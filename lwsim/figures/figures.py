"""Render the figures: plan the runs, execute the grid (cached), draw, write PNG + JSON + FINDINGS.md."""
from __future__ import annotations

import io
from pathlib import Path

from ..io import atomic_write_bytes, atomic_write_json
from . import experiments  # noqa: F401  (registers the experiments)
from .figs_a import FIGURES as FIGS_A
from .figs_b import FIGURES as FIGS_B
from .plan import plan
from .runner import run_grid
from .style import plt

from .figs_fidelity import FIGURES as FIGS_FIDELITY  # noqa: E402  (A13: conventions, docs/fidelity.md)

FIGURES = {**FIGS_A, **FIGS_B, **FIGS_FIDELITY}


def render(fig_id, results, out):
    """Draw one figure from {group: [(config, result)]} and write <out>/<id>.png and .json."""
    fig, data = FIGURES[fig_id](results)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(Path(out) / f"{fig_id}.png", buf.getvalue())
    atomic_write_json(Path(out) / f"{fig_id}.json", {"figure": fig_id, "data": data})
    return data


def make_figures(fig_ids, preset="quick", out="figures", cache="runs", jobs=None, backend="numba",
                 force=False, progress=True, *, scheduler=None, threads_per_run=None, retries=1,
                 timeout=30.0):
    """Plan, run (pool, or Dask with ``scheduler``: docs/cluster.md) and render ``fig_ids``."""
    from .findings import write_findings
    groups = plan(fig_ids, preset, backend)
    all_runs = [r for runs in groups.values() for r in runs]
    done = run_grid(all_runs, cache_dir=cache, jobs=jobs, force=force, progress=progress,
                    desc=f"lwsim.figures [{preset}]", scheduler=scheduler,
                    threads_per_run=threads_per_run, retries=retries, timeout=timeout)
    st = run_grid.last_stats
    print(f"runs: {st['total']} total, {st['computed']} computed, {st['cached']} cached", flush=True)
    results = {g: [(r.config, done[r]) for r in runs] for g, runs in groups.items()}
    Path(out).mkdir(parents=True, exist_ok=True)
    rendered = {}
    for fig_id in fig_ids:
        rendered[fig_id] = render(fig_id, results, out)
    write_findings(rendered, preset, Path(out) / "FINDINGS.md")
    return rendered
