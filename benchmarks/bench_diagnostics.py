"""Benchmark of lwsim.diagnostics (issue 6).

1. Γ, μ and the envelope (docs/diagnostics.md §2.3, §2.5) for T = 1024, L = 256 (every lag 1 … 256), H = 128 and
   64 sequences: the numba kernel vs the plain NumPy implementation of the same formulas (log-space
   prefix sums, one vectorised pass per lag), both fed the same per-step factors (d, r/d, Λ) of a
   diaggate ([A]'s init, LN on). The full Γ table (L·T·B·H = 2.1e9 numbers) is never stored: both
   engines form Γ and μ on the fly and accumulate the envelope sums.
2. The full [A] diagnostic pass — envelope + matched statistic with K = 1 — at T = 1024, H = 128,
   D = 16, [A]'s 128 lags 4 … 256, AdamW-like rates: measured on a batch of ``--pass-batch``
   sequences (one chunk) and extrapolated linearly to 1000 sequences (every sequence costs the
   same; chunks are independent), for the cell backends given.

3. ``--a15``: the matched statistic at the quick preset's A15 size (study behaviour, run group
   a_behaviour: T = 128, H = 16, D = 4, 512 held-out sequences, 28 lags, K = 1, the study's own
   cells, data and initial parameters, AdamW-like rates): per cell, the float64 pass with the
   whole update (what Ĥ_N needs at each of the three training points) and the float32 pass (the
   "author" null, final point only), the earlier code paths (``matched._EARLIER``) against the
   current ones, interleaved in one process (median of ``--rounds``), outputs checked bit for bit.

    python benchmarks/bench_diagnostics.py                 # full sizes
    python benchmarks/bench_diagnostics.py --batch 8 --pass-batch 8   # quicker
    python benchmarks/bench_diagnostics.py --a15 --rounds 7          # A15 size, earlier vs current
"""
from __future__ import annotations

import argparse
import importlib
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))     # run from a checkout

import lwsim
from lwsim import diagnostics as dg

envelope_mod = importlib.import_module("lwsim.diagnostics.envelope")


def _cell(T, H, D=16):
    cell = lwsim.make_cell("diaggate", n_in=D, n_hidden=H, layernorm=True)
    return cell, cell.init_params(0, scheme="paper_a")


def _rates(params, seed=0, lr=1e-3):
    rng = np.random.default_rng(seed)
    return {k: lr / (np.sqrt(rng.gamma(0.5, 1e-4, size=v.shape)) + 1e-8) for k, v in params.items()}


def bench_kernels(T, L, H, B, chunk, reps):
    cell, p = _cell(T, H)
    x = np.random.default_rng(1).standard_normal((T, B, cell.n_in))
    lam = dg.recurrent_rates(cell, _rates(p))
    facs = []
    t0 = time.perf_counter()
    for s in range(0, B, chunk):
        fac = dg.gate_factors(cell, p, x[:, s:s + chunk], backend="numba")
        facs.append((fac.d, fac.r, dg.source_rates(lam, fac.trace.h)))
    t_fac = time.perf_counter() - t0
    lags = np.arange(1, L + 1)
    out = {}
    for engine in ("numba", "numpy"):
        best = (np.inf, np.inf)
        for _ in range(reps if engine == "numba" else 1):
            acc = [np.zeros((L, H)), np.zeros((L, H)), np.zeros(L, dtype=np.int64)]
            w0, c0 = time.perf_counter(), time.process_time()
            for d, r, lm in facs:
                envelope_mod.accumulate(d, r, None, lm, lags, 1, engine, *acc)
            best = min(best, (time.process_time() - c0, time.perf_counter() - w0))
        out[engine] = (best, acc[0].sum(axis=1) / acc[2])
    f_nb, f_np = out["numba"][1], out["numpy"][1]
    rel = float(np.max(np.abs(f_nb - f_np) / np.abs(f_np)))
    print(f"\n[1] Γ, μ, envelope: T={T}, L={L} (all lags), H={H}, B={B} sequences in chunks of {chunk} "
          f"(factors from the cell: {t_fac:.1f} s, not included)")
    print(f"    {'engine':<8}{'CPU s':>9}{'wall s':>9}{'CPU per sequence':>20}")
    for e in ("numba", "numpy"):
        (cpu, wall), _ = out[e]
        print(f"    {e:<8}{cpu:>9.2f}{wall:>9.2f}{cpu / B * 1e3:>17.1f} ms")
    (cn, wn), (cp, wp) = out["numba"][0], out["numpy"][0]
    print(f"    speed-up numba/numpy: {cp / cn:.1f}x CPU time, {wp / wn:.1f}x wall time   "
          f"(max relative difference of f: {rel:.1e})")


def bench_pass(T, H, B, backends):
    cell, p = _cell(T, H)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((T, B, cell.n_in))
    y = rng.standard_normal((T, B, 1))
    rates = _rates(p)
    lags = np.unique(np.round(np.linspace(4, 256, 128)).astype(int))
    print(f"\n[2] full [A] pass (envelope + matched statistic, K=1): T={T}, H={H}, "
          f"{lags.size} lags {lags[0]}…{lags[-1]}, measured on B={B} (one chunk)")
    for backend in backends:
        # warm-up (numba compilation) on a tiny batch
        dg.envelope(cell, p, x[:20, :1], rates, 4, eta=1e-3, backend=backend, progress=False)
        dg.matched_statistic(cell, p, x[:20, :1], y[:20, :1], rates, 4, backend=backend, progress=False)
        t0, c0 = time.perf_counter(), time.process_time()
        dg.envelope(cell, p, x, rates, lags, eta=1e-3, chunk=B, backend=backend, progress=False)
        t1 = time.perf_counter()
        dg.matched_statistic(cell, p, x, y, rates, lags, n_directions=1, chunk=B, backend=backend,
                             progress=False)
        t2, c2 = time.perf_counter(), time.process_time()
        per, cper = (t2 - t0) / B, (c2 - c0) / B
        print(f"    backend={backend:<6} envelope {t1 - t0:6.2f} s, matched {t2 - t1:6.2f} s (wall); "
              f"{cper:.3f} CPU s/sequence → {cper * 1000 / 60:.1f} CPU min ({per * 1000 / 60:.1f} wall min) "
              f"per 1000 sequences (linear extrapolation ×{1000 / B:.1f})")


def bench_a15(rounds, cells):
    """The matched statistic at A15's quick size, earlier vs current code paths (module docstring)."""
    from lwsim.diagnostics import matched as mm
    from lwsim.figures.studies.behaviour.experiment import SIZES, behaviour_dataset
    from lwsim.figures.training import _a_cell, _a_params
    from lwsim.window import matched_float32
    c = dict(SIZES["a_behaviour"]["quick"], seed=212, backend="numba")
    ds = behaviour_dataset(c, 16)
    x, y, lags = ds.x_diag, ds.y_diag, np.asarray(c["lags"])
    print(f"\n[3] A15 matched statistic (quick): T={c['T']}, H={c['H']}, D={c['D']}, {x.shape[1]} sequences, "
          f"{lags.size} lags, K={c['K']}; CPU s per call, median of {rounds} interleaved rounds "
          f"(earlier / current code paths)")
    print(f"    {'cell':<11}{'f64+full earlier':>17}{'current':>9}{'ratio':>7}{'f32 earlier':>13}{'current':>9}"
          f"{'ratio':>7}{'run (3 f64 + f32)':>19}{'bits':>6}")
    for name in cells:
        cell = _a_cell(name, c).with_dtype("float64")
        p = {k: np.asarray(v, np.float64) for k, v in _a_params(cell, c).items()}
        rates = _rates(p, lr=c["lr"])
        kw = dict(n_directions=c["K"], seed=c["seed"], engine="numba", backend="numba", progress=False)
        calls = {"f64": lambda: dg.matched_statistic(cell, p, x, y, rates, lags, full_noise=True, **kw),
                 "f32": lambda: matched_float32(cell, p, x, y, rates, lags, **kw)}
        times = {(k, e): [] for k in calls for e in (True, False)}
        out = {}
        for r in range(rounds + 1):                    # round 0: compilation / cache loading, not timed
            for k, f in calls.items():
                for earlier in (True, False):
                    mm._EARLIER = earlier
                    c0 = time.process_time()
                    out[k, earlier] = f()
                    if r:
                        times[k, earlier].append(time.process_time() - c0)
        mm._EARLIER = False
        same = all(np.array_equal(getattr(out[k, True], f), getattr(out[k, False], f), equal_nan=True)
                   for k in calls for f in ("samples", "per_direction", "count", "noise")
                   if getattr(out[k, True], f) is not None)
        m = {key: float(np.median(v)) for key, v in times.items()}
        run_old, run_new = 3 * m["f64", True] + m["f32", True], 3 * m["f64", False] + m["f32", False]
        print(f"    {name:<11}{m['f64', True]:>17.3f}{m['f64', False]:>9.3f}{m['f64', True] / m['f64', False]:>6.2f}x"
              f"{m['f32', True]:>13.3f}{m['f32', False]:>9.3f}{m['f32', True] / m['f32', False]:>6.2f}x"
              f"{run_old:>9.2f} → {run_new:.2f}{'same' if same else 'DIFFER':>7}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--L", type=int, default=256)
    ap.add_argument("--H", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64, help="sequences for the kernel comparison")
    ap.add_argument("--chunk", type=int, default=16)
    ap.add_argument("--reps", type=int, default=2, help="repetitions of the numba timing (best)")
    ap.add_argument("--pass-batch", type=int, default=16, help="sequences measured for the full pass")
    ap.add_argument("--backends", default="numba,numpy", help="cell backends for the full pass")
    ap.add_argument("--skip-kernels", action="store_true")
    ap.add_argument("--skip-pass", action="store_true")
    ap.add_argument("--a15", action="store_true", help="only the A15-size matched statistic, earlier vs current")
    ap.add_argument("--rounds", type=int, default=5, help="--a15: timed rounds (median)")
    ap.add_argument("--cells", default="constgate,sharedgate,diaggate,gru,lstm", help="--a15: cells")
    a = ap.parse_args(argv)
    if a.a15:
        bench_a15(a.rounds, a.cells.split(","))
        return
    # compile the kernels before timing
    envelope_mod.accumulate(np.full((4, 1, 2), 0.9), np.zeros((4, 1, 2)), None, np.ones((4, 1, 2)),
                            np.array([1, 2]), 1, "numba", np.zeros((2, 2)), np.zeros((2, 2)),
                            np.zeros(2, dtype=np.int64))
    if not a.skip_kernels:
        bench_kernels(a.T, a.L, a.H, a.batch, a.chunk, a.reps)
    if not a.skip_pass:
        bench_pass(a.T, a.H, a.pass_batch, a.backends.split(","))


if __name__ == "__main__":
    main()
