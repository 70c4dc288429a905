"""Compile numba's kernels once, before the run grid starts (docs/experiments.md §5.3).

A run compiles (or loads from numba's on-disk cache, ``cache=True``) every kernel it calls. Left
to the workers, each worker process compiles the same kernels at the same time on a first run,
and the progress bar sits at 0 for minutes with no word about it. Instead the parent runs one
tiny version of each distinct planned run first, the "warm-up": the planned configuration with
the smoke preset's sizes (so every cell, option and dtype the grid will use is compiled, with the
same argument types), one worker per kernel family (the leaky cells, GRU, LSTM, the rest) so
that no two processes compile the same cell kernel. Its
kernels land in numba's disk cache; the grid's workers then only load them.

A marker file beside numba's cache records a finished warm-up for this code, this numba and these
runs, so later invocations skip it. Everything here is best effort: a warm-up run that fails only
means its kernels get compiled by the grid instead.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

from ..cells.registry import KINDS
from .config import config_of, declared
from .runner import Run

# Seconds the warm-up took from an empty numba cache, fresh clone, all figures, 36 warm-up runs,
# on the idle reference machine (2-core AMD EPYC, Zen 3, AVX2), pinned, 2026-12-07, the fused
# trainer's kernels included (the README's "78 s of it compiling", docs/performance.md "Compilation
# and the first run"; benchmarks/bench_first_run.py): the "about N s" of the message, scaled by
# the number of runs. tests/figures/test_warmup.py checks that the README says the same number.
REFERENCE_SECONDS = 78.0
REFERENCE_RUNS = 36
KERNEL_FREE = ("optimizer", "task")


def kernel_batch(cell):
    """The warm-up batch of a run's cell: one per numba kernel module, so cells that share one
    (kind.family, e.g. leaky.py serves all four leaky cells) share a batch: "<family> cells";
    a cell of its own, or a name that is no cell (an experiment's), is its own batch."""
    kind = KINDS.get(cell)
    family = None if kind is None else kind.family
    return cell if family in (None, cell) else f"{family} cells"


def _sizes(config):
    """The size entries of a configuration: numbers and lists of numbers (never options)."""
    def numeric(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return {k: v for k, v in config.items()
            if k != "seed" and (numeric(v) or (isinstance(v, list) and v and all(numeric(x) for x in v)))}


def _typed(run):
    """The run's typed configuration (config.py; the registry has declared every experiment's)."""
    from . import studies  # noqa: F401  (declares the experiments' configurations)
    return config_of(run.experiment, run.config, strict=False)


def warm_runs(groups):
    """The warm-up of ``groups`` ({group: [Run]}, from plan.plan): one run per distinct planned
    configuration once its sizes are the smoke preset's and its seed the first one (sorted by
    cell). Runs of experiments the smoke preset does not size are left out (never run full size)."""
    from .plan import group_runs
    if not isinstance(groups, dict):
        raise TypeError(f"groups must be a dict {{group: [Run]}}, got {type(groups).__name__}")
    by_exp = {}                          # experiment → its first smoke configuration
    for group, runs in sorted(groups.items()):
        try:
            smoke = group_runs(group, "smoke", declared(_typed(runs[0]), "backend", "numpy")) if runs else []
        except (KeyError, ValueError):
            smoke = []
        for r in smoke:
            by_exp.setdefault(r.experiment, r.config)
    out = {}
    for group, runs in groups.items():
        for run in runs:
            if run.experiment not in by_exp:
                continue
            small = by_exp[run.experiment]
            cfg = dict(run.config, **_sizes(small))
            # the optimizer and the task change no kernel (they are NumPy code and data): the
            # smoke run's, so that runs differing only there share one warm-up run
            cfg.update({k: small[k] for k in KERNEL_FREE if k in small and k in cfg})
            if "seed" in small:
                cfg["seed"] = small["seed"]
            warm = Run.make(run.experiment, **cfg)
            out.setdefault(warm.key, warm)
    return sorted(out.values(), key=lambda r: (str(declared(_typed(r), "cell", "")), r.experiment, r.key))


def _source_digest():
    """Hash of lwsim's Python sources: a changed kernel makes numba recompile, so re-warm."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def marker_path(runs):
    """Where the marker of a finished warm-up of ``runs`` lives: numba's cache folder
    ($NUMBA_CACHE_DIR, else the kernels' __pycache__, else ~/.cache/lwsim)."""
    import numba
    key = hashlib.sha256(json.dumps([numba.__version__, sys.version, _source_digest(),
                                     os.environ.get("LWSIM_NUMBA_TUNING", ""),
                                     os.environ.get("NUMBA_CPU_NAME", ""),   # pinned and native kernels
                                     os.environ.get("NUMBA_CPU_FEATURES", ""),   # are cached apart
                                     sorted(r.key for r in runs)]).encode()).hexdigest()[:20]
    candidates = []
    if os.environ.get("NUMBA_CACHE_DIR"):
        candidates.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    candidates += [Path(__file__).resolve().parent.parent / "backends" / "numba" / "__pycache__",
                   Path.home() / ".cache" / "lwsim"]
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder / f"lwsim-warm-{key}"
    return None


def _warm_batch(items, threads, done=None):
    """Worker: run each (experiment function, config_json) of one kernel family; returns the failures'
    texts (the functions travel by reference, so a spawned worker imports their modules).
    ``done``: a queue that gets one item per finished run (the parent's progress bar)."""
    from .runner import RunError, run_task
    failed = []
    for fn, config_json in items:
        try:
            run_task(fn, config_json, threads)
        except RunError as exc:
            failed.append(str(exc).strip().splitlines()[-1])
        if done is not None:
            done.put(1)
    return failed


def warm_up(groups, jobs=1, progress=True, say=print):
    """Compile the kernels ``groups`` needs before the grid runs (module docstring). Returns
    {"runs": n, "seconds": s, "skipped": bool, "failed": [text]}; ``say`` prints the messages
    (the message and its progress bar are silent when ``progress`` is False)."""
    from tqdm.auto import tqdm
    if int(jobs) < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    runs = [r for r in warm_runs(groups) if declared(_typed(r), "backend", "numba") == "numba"]
    if not runs:
        return {"runs": 0, "seconds": 0.0, "skipped": True, "failed": []}
    marker = marker_path(runs)
    if marker is not None and marker.exists():
        return {"runs": len(runs), "seconds": 0.0, "skipped": True, "failed": []}
    estimate = REFERENCE_SECONDS * len(runs) / REFERENCE_RUNS
    if progress:
        say(f"compiling numba kernels (first run only, about {estimate:.0f} s on an idle 2-core "
            f"AMD EPYC; later runs load them from numba's cache)", flush=True)
    from . import studies  # noqa: F401  (registers the experiments)
    from .runner import EXPERIMENTS
    batches = {}
    for r in runs:                       # one batch per kernel family: no two workers compile the same kernel
        cell = str(declared(_typed(r), "cell", r.experiment))
        batches.setdefault(kernel_batch(cell), []).append((EXPERIMENTS[r.experiment], r.config_json))
    t0 = time.perf_counter()
    failed = []
    jobs = min(int(jobs), len(batches))
    bar = tqdm(total=len(runs), desc="compiling numba kernels", unit="run", disable=not progress, leave=False)
    try:
        if jobs <= 1:
            for name, items in batches.items():
                for item in items:
                    bar.set_postfix_str(name, refresh=False)
                    failed += _warm_batch([item], None)
                    bar.update()
        else:
            from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
            from multiprocessing import get_context

            from .runner import worker_thread_env
            threads = max(1, (os.cpu_count() or 1) // jobs)
            ctx = get_context("spawn")
            with worker_thread_env(threads):
                with ctx.Manager() as manager, ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
                    # largest batches first; the workers report each finished run on a queue
                    finished = manager.Queue()
                    order = sorted(batches.items(), key=lambda kv: -len(kv[1]))
                    pending = {pool.submit(_warm_batch, items, threads, finished): name for name, items in order}
                    running = [name for name, _ in order[:jobs]]
                    while pending:
                        done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                        while not finished.empty():
                            finished.get()
                            bar.update()
                        for fut in done:
                            failed += fut.result()
                            running.remove(pending.pop(fut))
                            running += [n for n in pending.values() if n not in running][:1]
                        bar.set_postfix_str(", ".join(running))
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    if marker is not None and not failed:
        marker.write_text(json.dumps({"runs": len(runs), "seconds": round(seconds, 1)}))
    if progress:
        say(f"numba kernels ready in {seconds:.0f} s ({len(runs)} warm-up runs"
            + (f"; {len(failed)} failed, their kernels compile during the runs" if failed else "")
            + ")", flush=True)
    return {"runs": len(runs), "seconds": seconds, "skipped": False, "failed": failed}
