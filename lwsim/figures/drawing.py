"""Render the figures: plan the runs, execute the grid (cached), draw, write PNG + JSON + FINDINGS.md
and the results table results.csv.gz (lwsim/figures/tidy.py)."""
from __future__ import annotations

import os
from pathlib import Path

from . import studies, tidy
from .plan import FIG_NEEDS, plan, train_dtype_of
from .runcache import is_cached
from .runner import load_result, run_grid
from .style import plt, save_figure  # noqa: F401  (save_figure: lwsim.figures.drawing' name for it)

FIGURES = studies.figures()


def render(fig_id, results, out):
    """Draw one figure from {group: [(config, result)]} and write <out>/<id>.png and .json."""
    fig, data = FIGURES[fig_id](results)
    save_figure(fig, data, fig_id, out)
    return data


def render_all(fig_ids, results, out, jobs=1, progress=False):
    """{fig_id: data}: render every figure, in ``jobs`` spawned processes when there are several
    (laying out and writing the PNGs is most of a cached preset's time: 29 s for the quick
    preset's 22 figures on one core). Each worker gets only the run groups its figure needs;
    the files are the same either way. ``progress``: a bar "drawing figures i/n [id]"."""
    return draw_all(fig_ids, results, out, jobs, progress)[0]


def _call(fn, args):
    """A drawing job, in this process or a pool worker."""
    return fn(*args)


def _label(key):
    """A drawing job's name on the bar: the study's own key, e.g. "A1_full"."""
    return str(key[-1] if isinstance(key, tuple) else key)


def draw_all(fig_ids, results, out, jobs=1, progress=False, drawings=None):
    """(rendered, drawn): :func:`render_all`'s {fig_id: data}, and {key: value} of ``drawings``
    ({key: (fn, args)}, the studies' other drawing jobs, Study.drawings), run in the same pool after
    the figures, so that the pool stays busy until both are done (one bar counts both)."""
    from tqdm.auto import tqdm
    drawings = dict(drawings or {})
    n = len(fig_ids) + len(drawings)
    jobs = min(int(jobs), n)
    bar = tqdm(total=n, desc="drawing figures", unit="fig", disable=not progress, leave=False)
    try:
        if jobs <= 1:
            rendered, drawn = {}, {}
            for f in fig_ids:
                bar.set_postfix_str(f)
                rendered[f] = render(f, results, out)
                bar.update()
            for key, (fn, args) in drawings.items():
                bar.set_postfix_str(_label(key))
                drawn[key] = _call(fn, args)
                bar.update()
            return rendered, drawn
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from multiprocessing import get_context
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            futs = {pool.submit(render, f, {g: results[g] for g in FIG_NEEDS[f]}, out): ("fig", f) for f in fig_ids}
            futs.update({pool.submit(_call, fn, args): ("drawing", key) for key, (fn, args) in drawings.items()})
            for fut in as_completed(futs):
                fut.result()                     # a failed figure stops here, as before
                bar.set_postfix_str(_label(futs[fut][1]))
                bar.update()
            by_id = {v: fut for fut, v in futs.items()}
            return ({f: by_id[("fig", f)].result() for f in fig_ids},
                    {key: by_id[("drawing", key)].result() for key in drawings})
    finally:
        bar.close()


def dtype_twin(fig_ids, preset, backend, cache, dtype):
    """(other dtype, findings rows) of the same figures trained in the other dtype, computed in
    memory when every one of its runs is in the cache; (other, None) otherwise. FINDINGS.md then
    says whether any verdict moved with the training dtype."""
    from .findings import findings
    other = "float64" if dtype == "float32" else "float32"
    groups = plan(fig_ids, preset, backend, train_dtype=other)
    results = {}
    for g, runs in groups.items():
        loaded = [(r.config, load_result(cache, r)) for r in runs]
        if any(res is None for _, res in loaded):
            return other, None
        results[g] = loaded
    rendered = {}
    for fig_id in fig_ids:
        fig, rendered[fig_id] = FIGURES[fig_id](results)
        plt.close(fig)
    return other, findings(rendered)


def make_figures(fig_ids, preset="quick", out="figures", cache="runs", jobs=None, backend="numba",
                 force=False, progress=True, *, scheduler=None, threads_per_run=None, retries=1,
                 timeout=30.0, train_dtype=None):
    """Plan, run (pool, or Dask with ``scheduler``: docs/cluster.md) and render ``fig_ids``; write
    FINDINGS.md and results.csv.gz (the rows of the run groups ``fig_ids`` read, tidy.py).
    ``train_dtype`` overrides the preset's training dtype."""
    from .findings import set_aside, write_findings
    groups = plan(fig_ids, preset, backend, train_dtype)
    all_runs = [r for runs in groups.values() for r in runs]
    if backend == "numba" and scheduler in (None, "local") and (force or any(
            not is_cached(cache, r) for r in all_runs)):
        from .warmup import warm_up                      # compile once, before the workers start
        warm_up(groups, jobs=(os.cpu_count() or 1) if jobs is None else jobs, progress=progress)
    done = run_grid(all_runs, cache_dir=cache, jobs=jobs, force=force, progress=progress,
                    desc=f"lwsim.figures [{preset}]", scheduler=scheduler,
                    threads_per_run=threads_per_run, retries=retries, timeout=timeout)
    st = run_grid.last_stats
    print(f"runs: {st['total']} total, {st['computed']} computed, {st['cached']} cached", flush=True)
    results = {g: [(r.config, done[r]) for r in runs] for g, runs in groups.items()}
    Path(out).mkdir(parents=True, exist_ok=True)
    drawings = {(s.name, key): job for s in studies.STUDIES if s.drawings is not None   # keyed by study
                for key, job in s.drawings(results, list(fig_ids), out).items()}
    rendered, drawn = draw_all(fig_ids, results, out, (os.cpu_count() or 1) if jobs is None else jobs,
                               progress=progress, drawings=drawings)
    if progress:
        print(f"drew {len(fig_ids)} figure(s) into {out}/; writing FINDINGS.md and {tidy.FILE}", flush=True)
    dtype = train_dtype_of(groups)
    twin = dtype_twin(fig_ids, preset, backend, cache, dtype) if dtype in ("float32", "float64") else None
    extras = {s.name: s.extra(results, rendered, out, {key: v for (name, key), v in drawn.items() if name == s.name})
              for s in studies.STUDIES if s.extra is not None}      # e.g. findings under each null
    command = (f"python -m lwsim.figures --preset {preset} --out {out} --cache {cache}"
               + ("" if list(fig_ids) == list(FIGURES) else f" --only {','.join(fig_ids)}")
               + (f" --train-dtype {train_dtype}" if train_dtype else ""))
    path = Path(out) / "FINDINGS.md"
    aside = set_aside(path, preset)                 # one it cannot merge is kept, not overwritten
    if aside is not None:
        print(f"lwsim.figures: {path} was not written by lwsim for preset {preset!r}; kept aside as "
              f"{aside.name}", flush=True)
    earlier = path.read_text(errors="replace") if path.is_file() else None   # --only keeps its other verdicts
    n_jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    threads = threads_per_run or (1 if scheduler not in (None, "local") else max(1, (os.cpu_count() or 1) // n_jobs))
    # the headline findings read some parts under another null (docs/experiments.md §5.5.2): the
    # null figures drawn beside the figures ("A1_full", ...) go in with them
    with_nulls = {**{key: v for (_, key), v in drawn.items() if key not in rendered}, **rendered}
    write_findings(with_nulls, preset, path, dtype=dtype, twin=twin, extras=extras, command=command,
                   results=results, earlier=earlier, threads=threads)
    tidy.write(results, preset, out, studies.STUDIES)      # docs/experiments.md §5.8
    return rendered
