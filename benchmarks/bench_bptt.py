"""Forward + BPTT (loss_and_grad) timings: lwsim numba vs the lwsim NumPy reference vs PyTorch eager.

Run:  python benchmarks/bench_bptt.py [--quick] [--threads N] [--batches 32,512] [--dtypes float32,float64]
      [--cells rnn,lstm,...]   (LWSIM_NUMBA_TUNING=avx512|avx2|generic forces the numba blocking profile)

For every cell (rnn, constgate, sharedgate, diaggate, gru "cho", gru "torch", lstm) and shape
D=16, H=128, T=256, batch 32 and 512, float32 and float64: the median wall time of one
``loss_and_grad`` (readout "every", n_out = 1, MSE loss) for
  numba  — ``cell.loss_and_grad(..., backend="numba")``
  numpy  — the reference, ``backend="numpy"``
  torch  — PyTorch eager autograd on the CPU with the same equations and weights: nn.GRU for
           gru "torch", nn.LSTM for lstm, a hand-written torch cell otherwise (input projections
           of all steps in one matmul, one recurrent matmul per step). Only when torch imports.
Timing protocol (the same for every implementation): rounds; in each round every implementation,
in an order rotated from round to round, gets a pause (--pause s), one untimed call and then a
burst of --burst back-to-back calls, each timed; the median over all timed calls is reported.
The pause matters: OpenBLAS (NumPy) and OpenMP (torch) worker threads keep spinning for ~0.1 s
after a parallel call, and a run started inside that window shares its cores with them
(measured, rnn float32 B=32, runs back to back vs after a 0.3 s pause: torch 93 → 28 ms,
numba 20 → 11 ms). The untimed call wakes thread pools, caches and the clock after the pause;
the burst is what a user training or running diagnostics sees: the same call again and again.
torch.set_num_threads = the numba/BLAS thread count. An implementation whose warm-up run is
slow gets fewer rounds (--budget seconds per case).
At the largest batch in float32 it prints the GFLOP/s of the matrix work (the GEMM FLOPs of the
numba kernels divided by the numba time) against the machine's float32 peak, taken as the larger
of the nominal lscpu figure and the best large-SGEMM rate measured in the same run (the nominal
clock of a VM can be below the clock the cores actually run at).

This is a script, not a test: numbers on a shared machine are noisy; read the ratios.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

# numba's OpenMP layer and torch's bundled OpenMP runtime, both with spinning worker pools once
# their thread counts are set, slowed torch 8x on a 2-core machine (measured); numba's own
# "workqueue" layer does not spin. Override with NUMBA_THREADING_LAYER=omp to see it.
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lwsim  # noqa: E402

D, H, T, N_OUT = 16, 128, 256, 1
CELLS = [("rnn", {}), ("constgate", {}), ("sharedgate", {}), ("diaggate", {}),
         ("gru", {"convention": "cho"}), ("gru", {"convention": "torch"}), ("lstm", {})]


def label(name, opts):
    return f"gru {opts['convention']}" if name == "gru" else name


# ---------------------------------------------------------------- matrix FLOPs of the numba kernels
def matrix_flops(name, opts, B, bias=True):
    """GEMM FLOPs (2·m·n·k) of one numba loss_and_grad: per-step input, recurrent and read-out
    products, per-step backward products, and the weight-gradient GEMMs over T·B rows."""
    Da = D + (1 if bias else 0)
    TB = T * B
    if name in ("rnn", "constgate", "sharedgate", "diaggate"):
        G = {"rnn": H, "constgate": H, "sharedgate": H + 1, "diaggate": 2 * H}[name]
        fw = TB * (Da * G + H * G)
        bw = TB * G * H
        wg = G * TB * (Da + H)
    elif name == "gru" and opts["convention"] == "cho":
        fw = TB * (Da * 3 * H + H * 2 * H + H * H)
        bw = TB * (H * H + 2 * H * H)
        wg = 3 * H * TB * Da + 3 * H * TB * H
    elif name == "gru":
        fw = TB * (Da * 3 * H + H * 3 * H)
        bw = TB * 3 * H * H
        wg = 4 * H * TB * Da + 3 * H * TB * H
    else:
        fw = TB * (Da * 4 * H + H * 4 * H)
        bw = TB * 4 * H * H
        wg = 4 * H * TB * (Da + H)
    readout = TB * H * N_OUT * 3                     # ŷ, δ and dW_out
    return 2.0 * (fw + bw + wg + readout)


def float32_peak():
    """(GFLOP/s, description) from lscpu: cores × GHz × float32 FLOPs/cycle/core."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None, "lscpu unavailable"
    info = dict(re.findall(r"^([^:]+):\s*(.*)$", out, flags=re.M))
    cpus = int(info.get("CPU(s)", "1"))
    threads = int(info.get("Thread(s) per core", "1"))
    cores = cpus // max(threads, 1)
    if "CPU max MHz" in info:
        ghz, src = float(info["CPU max MHz"]) / 1000, "CPU max MHz"
    else:
        m = re.search(r"@\s*([\d.]+)GHz", info.get("Model name", ""))
        if m:
            ghz, src = float(m.group(1)), "model name"
        else:
            ghz, src = float(info.get("BogoMIPS", "2000")) / 2000, "BogoMIPS/2 (base clock)"
    flags = info.get("Flags", "").split()
    if "avx512f" in flags and "fma" in flags:
        per_cycle, isa = 64, "AVX-512: 2 FMA units x 16 float32 lanes x 2 FLOPs"
    elif "avx2" in flags and "fma" in flags:
        per_cycle, isa = 32, "AVX2: 2 FMA units x 8 lanes x 2"
    else:
        per_cycle, isa = 16, "SSE: 4 lanes x 2 ops x 2 ports"
    peak = cores * ghz * per_cycle
    return peak, f"{cores} cores x {ghz:.2f} GHz ({src}) x {per_cycle} FLOPs/cycle ({isa})"


def measured_sgemm_peak(threads, n=3072):
    """Best float32 GEMM rate (GFLOP/s) of NumPy's BLAS on a large square product: a lower bound of
    the machine's float32 peak that, unlike the nominal clock, includes turbo. On a shared machine
    one measurement can fall well below it (224 vs 330 GFLOP/s seen here), hence the best of many."""
    from lwsim.backends.numba.threads import _openblas_controls
    get, set_ = _openblas_controls().get("numpy", (None, None))
    before = get() if get else None
    if set_:
        set_(threads)                                  # as many BLAS threads as the kernels use
    try:
        a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
        best = 0.0
        for _ in range(4):
            t0 = time.perf_counter()
            a @ a
            best = max(best, 2.0 * n ** 3 / (time.perf_counter() - t0) / 1e9)
    finally:
        if set_:
            set_(before)
    return best


# ---------------------------------------------------------------- PyTorch equivalents
def torch_runner(torch, cell, p, x, y):
    """A callable running forward + backward in PyTorch eager with the same equations/weights."""
    dt = torch.float32 if cell.dtype == np.float32 else torch.float64
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def param(a):
        return torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)).to(dt))

    if cell.name == "lstm" or (cell.name == "gru" and cell.convention == "torch"):
        mod = (torch.nn.LSTM if cell.name == "lstm" else torch.nn.GRU)(D, H).to(dt)
        sd = cell.params_to_torch(p)
        with torch.no_grad():
            for k, v in mod.named_parameters():       # (LSTM: bias_hh_l0 = 0, the sum is in ih)
                v.copy_(torch.from_numpy(sd[k]))
        W_out, b_out = param(p["W_out"]), param(p["b_out"])
        params = list(mod.parameters()) + [W_out, b_out]

        def run():
            for q in params:
                q.grad = None
            out, _ = mod(tx)
            loss = torch.nn.functional.mse_loss(out @ W_out.T + b_out, ty)
            loss.backward()
            return loss.item()
        return run

    P = {k: param(v) for k, v in p.items()}
    params = list(P.values())
    B = x.shape[1]

    def readout_backward(hs):                         # shared tail: read-out, MSE, backward
        loss = torch.nn.functional.mse_loss(torch.stack(hs) @ P["W_out"].T + P["b_out"], ty)
        loss.backward()
        return loss.item()

    if cell.name == "gru":                            # convention "cho"
        def run():
            for q in params:
                q.grad = None
            Wx_ = torch.cat([P["W_z"], P["W_r"], P["W_g"]], 0)
            bx_ = torch.cat([P["b_z"], P["b_r"], P["b_g"]], 0)
            Uzr = torch.cat([P["U_z"], P["U_r"]], 0)
            xp = (tx @ Wx_.T + bx_).unbind(0)        # unbind: xp[t] would cost a full-size
            h = torch.zeros(B, H, dtype=dt)           # zero tensor per step in the backward
            hs = []
            for t in range(T):
                zr = torch.sigmoid(xp[t][:, :2 * H] + h @ Uzr.T)
                z, r = zr[:, :H], zr[:, H:]
                g = torch.tanh(xp[t][:, 2 * H:] + (r * h) @ P["U_g"].T)
                h = h + z * (g - h)
                hs.append(h)
            return readout_backward(hs)
        return run

    s_const = cell.s

    def run():                                        # rnn / constgate / sharedgate / diaggate
        for q in params:
            q.grad = None
        if cell.name == "diaggate":
            Wx_, bx_ = torch.cat([P["W_x"], P["W_s"]], 0), torch.cat([P["b_x"], P["b_s"]], 0)
            U = torch.cat([P["W_h"], P["U_s"]], 0)
        elif cell.name == "sharedgate":
            Wx_, bx_ = torch.cat([P["W_x"], P["w_s"][None]], 0), torch.cat([P["b_x"], P["b_s"]], 0)
            U = torch.cat([P["W_h"], P["u_s"][None]], 0)
        else:
            Wx_, bx_, U = P["W_x"], P["b_x"], P["W_h"]
        xp = (tx @ Wx_.T + bx_).unbind(0)            # (see the GRU: unbind, not xp[t])
        h = torch.zeros(B, H, dtype=dt)
        hs = []
        for t in range(T):
            pre = xp[t] + h @ U.T
            cand = torch.tanh(pre[:, :H])
            if cell.name == "rnn":
                h = cand
            elif cell.name == "constgate":
                h = h + s_const * (cand - h)
            else:
                h = h + torch.sigmoid(pre[:, H:]) * (cand - h)
            hs.append(h)
        return readout_backward(hs)
    return run


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (2 instead of 5)")
    ap.add_argument("--repeats", type=int, default=None, help="rounds")
    ap.add_argument("--threads", type=int, default=None, help="numba/BLAS/torch threads")
    ap.add_argument("--batches", default="32,512")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--cells", default=None,
                    help="comma-separated subset of: " + ", ".join(label(n, o) for n, o in CELLS))
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy reference")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--budget", type=float, default=60.0,
                    help="seconds per implementation and case: slower ones get fewer rounds")
    ap.add_argument("--pause", type=float, default=0.3,
                    help="seconds of idle before each burst (lets other libraries' spinning threads park)")
    ap.add_argument("--burst", type=int, default=3, help="back-to-back timed calls per burst")
    args = ap.parse_args()
    repeats = args.repeats or (2 if args.quick else 5)

    import numba
    threads = args.threads or numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(threads)
    torch = None
    if not args.no_torch:
        try:
            import torch
            torch.set_num_threads(threads)
        except ImportError:
            print("PyTorch not importable: torch columns skipped")
    print(f"D={D} H={H} T={T}, threads={threads}, {repeats} rounds x (1 untimed + {args.burst} timed) after a "
          f"{args.pause} s pause (median), "
          f"numba {numba.__version__} ({os.environ['NUMBA_THREADING_LAYER']} layer), numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch else ""))
    try:
        from threadpoolctl import threadpool_info
        print("BLAS:", ", ".join(f"{i['internal_api']} {i.get('version')} ({i['num_threads']} threads)"
                                 for i in threadpool_info() if i["user_api"] == "blas"))
    except ImportError:
        pass

    try:
        from lwsim.backends.numba import tuning
        print(f"numba blocking profile: {tuning.profile()} (SciPy's OpenBLAS core: {tuning.openblas_core()};"
              f" {tuning.ENV} forces one)")
    except ImportError:
        pass

    sgemm_before = measured_sgemm_peak(threads)        # again after the cases: the best counts
    rows = []
    for dtype in args.dtypes.split(","):
        for B in map(int, args.batches.split(",")):
            for name, opts in CELLS:
                if args.cells and label(name, opts) not in args.cells.split(","):
                    continue
                cell = lwsim.make_cell(name, D, H, N_OUT, dtype=dtype, **opts)
                p = cell.init_params(seed=0, scheme="torch")
                rng = np.random.default_rng(0)
                x = rng.standard_normal((T, B, D)).astype(dtype)
                y = rng.standard_normal((T, B, N_OUT)).astype(dtype)
                impls = {"numba": lambda: cell.loss_and_grad(p, x, y, backend="numba")[0]}
                if not args.no_numpy:
                    impls["numpy"] = lambda: cell.loss_and_grad(p, x, y)[0]
                if torch is not None:
                    impls["torch"] = torch_runner(torch, cell, p, x, y)
                losses, reps = {}, {}
                for k, f in impls.items():                              # warm-up (compile, caches)
                    losses[k] = f()
                    t0 = time.perf_counter()                            # budget from a warm call
                    f()
                    per_round = (args.burst + 1) * (time.perf_counter() - t0)
                    reps[k] = int(max(1, min(repeats, args.budget // per_round)))
                for k, v in losses.items():
                    assert abs(v - losses["numba"]) <= 1e-3 * abs(losses["numba"]), (k, v, losses)
                times = {k: [] for k in impls}
                order = list(impls)
                for r in range(repeats):                                # interleaved rounds
                    for k in order[r % len(order):] + order[:r % len(order)]:
                        if r < reps[k]:
                            time.sleep(args.pause)
                            impls[k]()                  # untimed: wakes threads, caches, clock
                            for _ in range(args.burst):
                                t0 = time.perf_counter()
                                impls[k]()
                                times[k].append(time.perf_counter() - t0)
                med = {k: float(np.median(v)) for k, v in times.items()}
                rows.append((label(name, opts), dtype, B, med, matrix_flops(name, opts, B)))
                print(f"  done {label(name, opts):10s} {dtype} B={B}: "
                      + ", ".join(f"{k} {v * 1e3:.1f} ms (n={len(times[k])})" for k, v in med.items()),
                      flush=True)

    cols = ["numba", "numpy", "torch"]
    print()
    print(f"{'cell':11s} {'dtype':7s} {'B':>4s} | {'numba ms':>9s} {'numpy ms':>9s} {'torch ms':>9s} |"
          f" {'numpy/numba':>11s} {'torch/numba':>11s} | {'GFLOP/s':>8s}")
    print("-" * 96)
    for lab, dtype, B, med, flops in rows:
        cells = [f"{med[c] * 1e3:9.1f}" if c in med else f"{'-':>9s}" for c in cols]
        r_np = f"{med['numpy'] / med['numba']:11.1f}" if "numpy" in med else f"{'-':>11s}"
        r_t = f"{med['torch'] / med['numba']:11.2f}" if "torch" in med else f"{'-':>11s}"
        print(f"{lab:11s} {dtype:7s} {B:4d} | {' '.join(cells)} | {r_np} {r_t} | "
              f"{flops / med['numba'] / 1e9:8.1f}")

    big = [r for r in rows if r[1] == "float32" and r[2] == max(r[2] for r in rows)]
    if big:
        nominal, how = float32_peak()
        sgemm = max(sgemm_before, measured_sgemm_peak(threads))
        peak = max(nominal or 0.0, sgemm)
        print(f"\nfloat32 peak {peak:.0f} GFLOP/s = max(nominal {nominal or 0:.0f} GFLOP/s = {how}; "
              f"measured SGEMM {sgemm:.0f} GFLOP/s = best of 2 x 4 NumPy float32 3072x3072 products on "
              f"{threads} threads, before and after the cases)")
        for lab, dtype, B, med, flops in big:
            g = flops / med["numba"] / 1e9
            print(f"  {lab:11s} B={B} float32: matrix work {flops / 1e9:6.1f} GFLOP in "
                  f"{med['numba'] * 1e3:7.1f} ms = {g:6.1f} GFLOP/s = {100 * g / peak:5.1f}% of peak")


if __name__ == "__main__":
    main()
