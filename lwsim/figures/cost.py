"""What a preset costs before it starts: a cost model of each run, calibrated on this machine
(docs/cluster.md).

Each run's configuration gives the work of its parts (``work``), in floating-point operations
counted from the sizes (per sequence and time step, a gated cell with G gate blocks costs
fwd = 2 G H (H + D) + 12 G H; a training step fwd + backward ≈ 3 fwd):

    train        epochs · (3 n_train + n_val) · T · fwd          (or steps · batch · T · 3 fwd)
    diag         diagnostics: envelope n_diag T (2 fwd + 6 L H), matched statistic
                 n_diag T (2 fwd + K (3 fwd + 8 L H)), transports / Jacobians for the others
    stats        tail fits and bootstraps: n_lags · samples · (|N grid| + methods · n_boot / 100),
                 samples = n_diag (or n_diag T for the "instantaneous" statistic, capped by
                 fit_subsample)
    steps        sequence time steps stepped through (training and diagnostics), whatever the
                 cell: the per-step cost of the time loop (dispatch, element-wise updates) that
                 does not grow with the gate count G, which dominates at small H (at H 8–32 an
                 LSTM step costs ~1.3×, not 4×, a ConstGate step)
    1            a fixed cost per run (set-up: task, data, cell, result arrays; and the
                 decay-law fits of a_main / a_conventions, whose Nelder–Mead refinement takes a
                 data-dependent 0.1–2 s per fit whatever the sizes)

a_conventions (docs/fidelity.md) trains like a_main, then runs the envelope, the matched
statistic and the detection table once per convention (2×; the "author" envelope in NumPy),
plus the transport factors of 16 sequences under both conventions: its own terms and rates.

The predicted core-seconds of a run are  seconds = Σ_term work[term] · c[experiment][term],
the coefficients c (seconds per unit) fitted once on this machine by ``--calibrate``: it times a
few probe runs of each experiment (its smoke run, and its study's probes: the quick preset's sizes, each term
varied on its own; a wider cell (G) or a larger H at a fixed number of steps separates the FLOP
terms from ``steps``, which would otherwise be confounded) in one process warmed up by the whole smoke
preset, with one numba thread (numba compilation excluded; it is paid once per worker process,
``startup_s``), as CPU time of the process (core-seconds, unaffected by other processes sharing
the cores; the fastest of 2–5 repeats of a short probe), and solves a least-squares fit in relative
error with c ≥ 0, and c ≥ 1 / (this core's measured GEMM rate) for the FLOP terms (train, diag):
no operation runs faster than a dense matrix product, so paper-size estimates cannot collapse. An experiment without a model (a new one) is
estimated with a_main's model when its configuration has a_main's keys or, failing that, as the
median fixed cost, and flagged ``generic``. The model is linear in the operation counts: rates
measured at the quick preset's sizes are extrapolated to the paper's (larger H runs faster per
operation, so paper estimates are upper-side).

Peak memory per run (``peak_bytes``) is an upper-bound model: the datasets, the training batch
trace, one diagnostic chunk of sequences (the diagnostics stream over chunks of ``CHUNK``
sequences, never holding (K, lags, sequences, T) at once) and the per-sequence outputs
(K + 3) · L · n_diag, plus a fixed process baseline.
"""
from __future__ import annotations

import gc
import json
import os
import platform
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np

from .config import config_of, declared
from .workload import CHUNK, a_main_work, gates, nlags

CALIBRATION_FILE = "calibration.json"
BASELINE_BYTES = 300e6          # Python + NumPy + numba + lwsim imported
TERMS = ("one", "train", "diag", "stats", "steps")


def _registry():
    """(work, memory, probes) of every study, by experiment (lwsim.figures.studies)."""
    from . import studies
    return studies.work(), studies.memory(), studies.probes()


def _typed(run):
    """The run's typed configuration (config.py), once the registry has declared them all; a
    configuration that does not validate (a partial probe) is modelled as given."""
    _registry()
    return config_of(run.experiment, run.config, strict=False)


def work(run):
    """(terms dict, model name) of one run; model is the experiment or 'generic:…' (flagged)."""
    c = _typed(run)
    work_of = _registry()[0]
    if run.experiment in work_of:
        return work_of[run.experiment](c), run.experiment
    try:                                  # a new experiment shaped like a_main (train + diagnose)
        return a_main_work(c), "generic:a_main"
    except (KeyError, TypeError, ZeroDivisionError):
        return {"one": 1.0}, "generic:fixed"


def peak_bytes(run):
    """Upper-bound model of a run's peak resident memory (bytes)."""
    c, f8 = _typed(run), 8.0
    size = partial(declared, c)          # one model for every experiment: what it does not have is absent
    T, H, D = size("T", 1), size("H", 1), size("D", 1)
    G = gates(size("cell", "diaggate"))
    n_seq = size("n_train", 0) + size("n_val", 0) + size("n_diag", size("n_seq", size("n_examples", 0)))
    data = n_seq * T * (D + 1) * f8
    batch = size("batch", size("probe", 1))
    trace = batch * (T + 1) * H * (2 * G + 4) * f8 * 1.5         # forward trace + backward buffers
    chunk = CHUNK * (T + 1) * H * 12 * f8                         # one diagnostic chunk's factor arrays
    L, K = nlags(c), size("K", 1)
    outputs = (K + 3) * L * size("n_diag", 0) * f8                # ψ per direction, samples, counts
    if size("statistic", None) == "instantaneous":                # ψ_{b,t}: one sample per time point
        outputs += 3 * L * size("n_diag", 0) * T * f8
    memory = _registry()[1].get(run.experiment)
    if memory is not None:                                        # the study's own terms (bytes)
        own = memory(c)
        outputs = own.get("outputs", outputs)
        chunk += own.get("chunk", 0.0)
    return BASELINE_BYTES + data + trace + chunk + outputs


# ----------------------------------------------------------------------------- calibration
def _firsts(preset, backend):
    from .drawing import FIGURES
    from .plan import plan
    first = {}
    for runs in plan(list(FIGURES), preset, backend).values():
        for r in runs:
            first.setdefault(r.experiment, r)
    return first


def _probes(backend):
    """(warm-up runs: the whole smoke preset, probe runs: each experiment's smoke run and PROBES)."""
    from .drawing import FIGURES
    from .plan import plan
    from .runner import Run
    warm = list(dict.fromkeys(r for g in plan(list(FIGURES), "smoke", backend).values() for r in g))
    smoke = _firsts("smoke", backend)
    probes = []
    for name, base in sorted(_firsts("quick", backend).items()):
        if name in smoke:                        # spans the sizes down to the smoke preset's
            probes.append(smoke[name])
        for upd in _registry()[2].get(name, [dict()]):
            probes.append(Run.make(name, **{**base.config, **upd}))
    return warm, probes


FLOP_TERMS = ("train", "diag")     # counted in floating-point operations: rate ≤ the core's GEMM rate


def _fit(rows, floor=None):
    """Least squares in relative error: Σ_i (Σ_t w_it c_t / s_i − 1)² → c_t ≥ floor[t] (default 0).

    ``floor``: lower bounds per term, e.g. {"train": 1 / GEMM rate}: at the quick sizes the time
    loop's per-step cost hides the operation count's share, and an unbounded fit can put a rate
    faster than the hardware on the FLOP terms, which then extrapolate to absurdly cheap paper runs.
    """
    from scipy.optimize import nnls
    terms = [t for t in TERMS if any(w.get(t, 0) for w, _ in rows)]
    lb = np.array([(floor or {}).get(t, 0.0) for t in terms])
    A = np.array([[w.get(t, 0.0) / s for t in terms] for w, s in rows])
    colscale = np.maximum(A.max(axis=0), 1e-300)
    coef, _ = nnls(A / colscale, np.ones(len(rows)) - A @ lb)     # c = lb + d, d ≥ 0
    return {t: float(c / k + b) for t, c, k, b in zip(terms, coef, colscale, lb)}


def gemm_rate(n=256, batch=384, repeat=20):
    """Floating-point operations per second of a (batch × n) · (n × n) float64 product on one
    core, the best of ``repeat``, in a fresh process capped at one BLAS thread: an upper bound on
    any FLOP rate of one worker (this process may run BLAS on several threads)."""
    import subprocess
    import sys
    from .runner import thread_env
    code = ("import time, numpy as np\n"
            f"a, b = np.random.default_rng(0).standard_normal(({int(batch)}, {int(n)})), np.ones(({int(n)}, {int(n)}))\n"
            "best = float('inf')\n"
            f"for _ in range({int(repeat)}):\n"
            "    t = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t)\n"
            f"print(2.0 * {int(batch)} * {int(n)} ** 2 / max(best, 1e-9))\n")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **thread_env(1)},
                         capture_output=True, text=True, timeout=300, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def cpu_seconds(fn, config):
    """CPU time of this process spent in ``fn(config)`` (core-seconds with one thread: what a
    cluster core is charged, not inflated by other processes sharing the cores as wall time is)."""
    gc.collect()                                # not the garbage of the previous run
    t = time.process_time()
    fn(config)
    return time.process_time() - t


def calibrate(cache_dir="runs", backend="numba", progress=True):
    """Time the probe runs once in this process and store the fitted coefficients in
    ``<cache_dir>/calibration.json``; returns that record."""
    from . import studies  # noqa: F401  (registers the experiments)
    from .runner import EXPERIMENTS
    from .runner import limit_threads
    limit_threads(1)                             # rates per core: core-hours = predicted seconds
    warm, probes = _probes(backend)
    t0 = time.process_time()
    for run in warm:                             # compile every kernel (each cell, law, …) once, untimed
        try:
            EXPERIMENTS[run.experiment](run.config)
        except Exception as exc:
            warnings.warn(f"calibration warm-up {run.experiment} {run.config_json} failed: {exc!r}")
    startup = time.process_time() - t0
    rows = {}
    for i, run in enumerate(probes):
        times = []
        try:
            # short probes 2–5 times (min): noise from the cores' other processes, at 10 ms scale too
            while len(times) < 5 and (len(times) < 2 and sum(times) < 3.0 or sum(times) < 0.5):
                times.append(cpu_seconds(EXPERIMENTS[run.experiment], run.config))
        except Exception as exc:                 # a preset changed under a probe: skip it, say so
            warnings.warn(f"calibration probe {run.experiment} {run.config_json} failed: {exc!r}")
            continue
        rows.setdefault(run.experiment, []).append((work(run)[0], min(times)))
        if progress:
            print(f"  calibrate {i + 1}/{len(probes)} {run.experiment:12s} {min(times):7.3f} s", flush=True)
    gemm = gemm_rate()
    coef = {name: _fit(r, floor={t: 1.0 / gemm for t in FLOP_TERMS}) for name, r in rows.items()}
    record = {"backend": backend, "host": platform.node(), "cpus": os.cpu_count(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "startup_s": startup, "coef": coef,
              "gemm_flops_per_s": gemm,
              "probes": {k: [s for _, s in v] for k, v in rows.items()}}
    path = Path(cache_dir) / CALIBRATION_FILE
    from ..io import atomic_write_json
    atomic_write_json(path, record)
    return record


REFERENCE_FILE = Path(__file__).resolve().parent.parent / "data" / "reference_calibration.json"


def reference_calibration():
    """The calibration shipped with lwsim (``lwsim/data/reference_calibration.json``: the
    reference machine's ``--calibrate``), marked ``"reference": True``: what ``--dry-run`` uses
    until this machine is calibrated (docs/cluster.md). None if the file is missing or bad."""
    try:
        rec = json.loads(REFERENCE_FILE.read_text())
        rec["coef"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    rec["reference"] = True
    return rec


def load_calibration(cache_dir="runs"):
    path = Path(cache_dir) / CALIBRATION_FILE
    if not path.exists():
        return None
    try:
        rec = json.loads(path.read_text())
        rec["coef"]
    except (ValueError, KeyError, TypeError):
        return None
    return rec


def predict_seconds(run, calibration):
    """Predicted wall time of ``run`` (warm process) → (seconds, model name)."""
    w, model = work(run)
    coef = calibration["coef"]
    rate = coef.get(run.experiment)
    if rate is None and model == "generic:a_main":
        rate = coef.get("a_main")              # generic: a_main's coefficients, when calibrated
    if rate is None:                           # else (also: a model never calibrated) the median fixed cost
        rate, model = {"one": float(np.median([v.get("one", 0.0) for v in coef.values()]))}, "generic:fixed"
    return float(sum(w.get(t, 0.0) * rate.get(t, 0.0) for t in w)), model


# ----------------------------------------------------------------------------- dry run
def dry_run_table(groups, cache_dir, calibration):
    """Rows per experiment group: runs, cached, core-hours (all / uncached), peak memory per run."""
    from .runcache import is_cached
    rows = []
    for group, runs in groups.items():
        cached = [is_cached(cache_dir, r) for r in runs]
        n_cached = sum(cached)
        peak = max((peak_bytes(r) for r in runs), default=0.0)
        secs, models = [], set()
        if calibration is not None:
            for r, c in zip(runs, cached):
                s, m = predict_seconds(r, calibration)
                secs.append((s, c))
                models.add(m)
        rows.append({"group": group, "runs": len(runs), "cached": n_cached,
                     "core_h": sum(s for s, _ in secs) / 3600 if secs else None,
                     "core_h_todo": sum(s for s, c in secs if not c) / 3600 if secs else None,
                     "peak_gb": peak / 1e9, "generic": sorted(m for m in models if m.startswith("generic"))})
    return rows


def _fmt_h(h):
    """Core-hours in one unit, hours, at 3 significant digits (2 s reads 0.000556, never "2 s")."""
    if h is None:
        return "n/a"
    return f"{h:.3g}"


def format_dry_run(rows, preset, calibration, threads_per_run=1):
    if calibration and calibration.get("reference"):
        source = (f", reference machine: {calibration.get('cpu', calibration['host'])}, "
                  f"{calibration['cpus']} cpus, calibrated {calibration['date'][:10]}; "
                  f"run --calibrate for yours")
    elif calibration:
        source = (f", calibration {calibration['date']} on {calibration['host']} ({calibration['backend']}, "
                  f"{calibration['cpus']} cpus; +{calibration['startup_s']:.0f} s numba start-up per worker)")
    else:
        source = " (no calibration: run `python -m lwsim.figures --calibrate` for core-hours)"
    lines = [f"dry run: preset {preset}" + source,
        "| experiment | runs | cached | core-hours (all) | core-hours (to run) | peak memory / run |",
        "|---|---|---|---|---|---|"]
    for r in rows:
        flag = f" (generic estimate: {', '.join(r['generic'])})" if r["generic"] else ""
        lines.append(f"| {r['group']}{flag} | {r['runs']} | {r['cached']} | {_fmt_h(r['core_h'])} | "
                     f"{_fmt_h(r['core_h_todo'])} | {r['peak_gb']:.2f} GB |")
    tot = [r["core_h"] for r in rows]
    todo = [r["core_h_todo"] for r in rows]
    lines.append(f"| total | {sum(r['runs'] for r in rows)} | {sum(r['cached'] for r in rows)} | "
                 f"{_fmt_h(sum(tot)) if None not in tot else 'n/a'} | "
                 f"{_fmt_h(sum(todo)) if None not in todo else 'n/a'} | "
                 f"{max((r['peak_gb'] for r in rows), default=0):.2f} GB |")
    return "\n".join(lines)
