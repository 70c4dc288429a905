"""Benchmark lwsim.stats.fit_alpha (docs/statistics.md §3.2) — not a test.

1. fit_alpha(method="ecf") on 10⁵ samples: median wall time over repeats (target < 20 ms).
2. Against scipy.stats.levy_stable.fit (maximum likelihood, β fixed to 0 so both fit the same
   symmetric family) on the same data at a size scipy finishes (n = 1000: ~1 min per fit).
   Prints both times, their ratio, and both |α̂ − α| side by side.

    python benchmarks/bench_stats.py [--n-scipy 1000] [--alphas 1.5] [--repeats 21]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import levy_stable

from lwsim.stats import fit_alpha, sample_sas


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-scipy", type=int, default=1000)
    ap.add_argument("--alphas", type=float, nargs="+", default=[1.5])  # scipy: 1–2.5 min each
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args(argv)

    fit_alpha(sample_sas(1.5, size=1000, seed=0), method="ecf")  # compile the numba kernel first
    x = sample_sas(1.5, 1.0, size=100_000, seed=1)
    t_big = median_time(lambda: fit_alpha(x, method="ecf"), args.repeats)
    print(f"fit_alpha(method='ecf'), n=100000: median {t_big * 1e3:.2f} ms over {args.repeats} repeats "
          f"(alpha_hat={fit_alpha(x, method='ecf').alpha:.4f}, alpha=1.5)")

    n = args.n_scipy
    print(f"\nvs scipy.stats.levy_stable.fit(x, f1=0) at n={n}")
    print(f"{'alpha':>6} {'t_ecf[ms]':>10} {'t_scipy[s]':>11} {'ratio':>9} {'|err| ecf':>10} {'|err| auto':>10} {'|err| scipy':>11}")
    for i, a in enumerate(args.alphas):
        xs = sample_sas(a, 1.0, size=n, seed=100 + i)
        t_ecf = median_time(lambda: fit_alpha(xs, method="ecf"), args.repeats)
        ecf, auto = fit_alpha(xs, method="ecf"), fit_alpha(xs)
        t0 = time.perf_counter()
        a_sp = levy_stable.fit(xs, f1=0.0)[0]
        t_sp = time.perf_counter() - t0
        print(f"{a:6.2f} {t_ecf * 1e3:10.2f} {t_sp:11.1f} {t_sp / t_ecf:9.0f} {abs(ecf.alpha - a):10.4f} "
              f"{abs(auto.alpha - a):10.4f} {abs(a_sp - a):11.4f}   (auto used {auto.method})", flush=True)


if __name__ == "__main__":
    main()
