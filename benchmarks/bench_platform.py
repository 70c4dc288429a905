"""Speed cost of the pinned numerical platform against this CPU's native kernels, side by side in
one run (docs/performance.md, "Bit-reproducibility"; lwsim/platform.py).

Each mode runs in its own fresh Python process (the kernels are chosen when the libraries load),
rounds interleaved native, pinned, pinned, native, …; per kernel the median over all rounds:

  gru / lstm f32   numba forward + BPTT (loss_and_grad), D 16, H 128, T 256, batch 32, float32
                   (the figure grid's trainings), one thread
  envelope         numba envelope f(ℓ) of a GRU in float64, 64 sequences, T 256, 64 lags
  sgemm 512        NumPy float32 matrix product 512³ (OpenBLAS), one thread
  tanh/exp f64     NumPy float64 tanh + exp of 10⁶ values (NumPy's SIMD dispatch)

    python benchmarks/bench_platform.py [--rounds 4]

The first call of each kernel in each mode is untimed (numba compiles or loads it: pinned and
native kernels are cached side by side).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, time
import numpy as np
import lwsim
from lwsim import platform, diagnostics as dg, optim
def best(f, n):
    f(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]
rng = np.random.default_rng(0)
out = {}
for name in ("gru", "lstm"):
    cell = lwsim.make_cell(name, n_in=16, n_hidden=128, n_out=1, dtype="float32")
    p = cell.init_params(seed=0)
    x = rng.standard_normal((256, 32, 16)).astype(np.float32); y = np.zeros((256, 32, 1), np.float32)
    out[f"{name} f32 ms"] = 1e3 * best(lambda: cell.loss_and_grad(p, x, y, backend="numba"), 7)
cell = lwsim.make_cell("gru", n_in=16, n_hidden=32, n_out=1, dtype="float64")
p = cell.init_params(seed=0)
xd = rng.standard_normal((256, 64, 16))
opt = optim.make("adam", p, lr=1e-3)
lags = np.arange(1, 65)
out["envelope ms"] = 1e3 * best(lambda: dg.envelope(cell, p, xd, opt, lags, backend="numba", progress=False), 3)
a = rng.standard_normal((512, 512)).astype(np.float32)
out["sgemm 512 ms"] = 1e3 * best(lambda: a @ a, 20)
v = rng.standard_normal(1_000_000)
out["tanh/exp f64 ms"] = 1e3 * best(lambda: (np.tanh(v), np.exp(v)), 20)
out["platform"] = platform.platform_line(1)
print("RESULT " + json.dumps(out))
"""


def one(mode):
    from lwsim import platform
    env = {k: v for k, v in os.environ.items() if k not in platform.PINNED and k != platform.ENV_MODE}
    if mode == "pinned":
        env = platform.pinned_env(env)[0]
    env.update(NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=1200)
    if p.returncode:
        raise SystemExit(f"{mode} child failed:\n{p.stderr[-3000:]}")
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=4, help="rounds per mode (default 4)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    res = {"native": [], "pinned": []}
    order = ["native", "pinned", "pinned", "native"] * ((args.rounds + 1) // 2)
    for mode in order[: 2 * args.rounds]:
        res[mode].append(one(mode))
        print(f"  {mode} round {len(res[mode])} done", file=sys.stderr, flush=True)
    print(f"bench_platform: {args.rounds} rounds per mode, medians; one thread; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for mode in res:
        print(f"  {mode}: {res[mode][0]['platform']}")
    keys = [k for k in res["native"][0] if k != "platform"]
    print(f"{'kernel':<18}{'native':>10}{'pinned':>10}{'pinned/native':>15}")
    for k in keys:
        vals = {m: [r[k] for r in res[m] if r[k] is not None] for m in res}
        if not all(vals.values()):
            print(f"{k:<18}{'n/a':>10}{'n/a':>10}")
            continue
        n, p = (statistics.median(vals[m]) for m in ("native", "pinned"))
        print(f"{k:<18}{n:>10.2f}{p:>10.2f}{p / n:>15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
