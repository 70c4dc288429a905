"""Whole training steps, side by side in one run: lwsim (fused and step-by-step), PyTorch eager
and JAX, one thread each, float32, the same model, data, minibatches and initial weights.

What one "step" is, in every framework: a minibatch gathered from the training set, forward over
T steps, MSE loss over the (T, B, 1) read-outs, exact BPTT, global-norm clip at 1.0 (torch
clip_grad_norm_), one AdamW update (lr 3e-3, weight decay 1e-2).
  lwsim fused  lwsim.train.train(..., backend="numba", fused=True)   (when train has ``fused``)
  lwsim lanes  lwsim.train.train(..., backend="numba", fused="lanes") (the small-H lanes kernels,
               lwsim/backends/numba/lanes.py; when train accepts it; round-off from the others)
  lwsim step   lwsim.train.train(..., backend="numba", fused=False)  (the per-step Python loop)
  torch eager  nn.GRU / nn.LSTM (time-major) + nn.Linear, torch.optim.AdamW, clip_grad_norm_
  jax jit step the same model by hand (lax.scan over time), clip and AdamW by hand (torch's
               formulas), one jax.jit step called from a Python loop
  jax loop     the same step, the whole K-step training in ONE jax.jit (lax.scan over steps, the
               minibatches pre-gathered as a (K, T, B, D) array before the clock starts)
Cells: gru (convention "torch", exactly nn.GRU) and lstm (as nn.LSTM; lwsim's one bias per gate
is torch's b_ih + b_hh, loaded as bias_ih = the sum, bias_hh = 0 and frozen in torch, absent in
JAX, so the three train the same parameters and clip the same norm). Task: multilag, n_train = 8·B,
the minibatches in lwsim's order (SeedSequence([seed, 0x7EA1]) child 0, a permutation per epoch),
which torch and JAX replay; the first-step losses must agree to 1e-5 relative or the run aborts.

Timing: every framework is warmed up by one untimed K-step training (numba and XLA compile
excluded), then R interleaved rounds, the order rotated each round; per round the wall
(perf_counter) and CPU (process_time) time of one whole K-step training, from the initial weights.
Reported: the median µs per step, wall and CPU (CPU > wall means a second thread did work), the
FLOPs per step (3 × forward × 2 FLOPs per multiply-add) against a 1-thread 512³ SGEMM.

    python benchmarks/bench_train.py [--sizes delay,behaviour,a-main] [--rounds 5] [--quick]
                                     [--out benchmarks/results/bench_train.txt]

--quick (fewer steps and rounds, a smoke check) writes no file unless --out is given.
torch and JAX are optional: a framework that does not import is skipped with a note.
"""
from __future__ import annotations

import os

# One thread per framework, fixed before numba, NumPy's BLAS, torch or XLA read them.
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
# numba's OpenMP layer next to torch's OpenMP runtime slowed torch 8x (benchmarks/bench_bptt.py).
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import datetime  # noqa: E402
import inspect  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lwsim  # noqa: E402
import lwsim.train  # noqa: E402

numba.set_num_threads(1)

# name: (T, D, H, B, K steps per timed run); K gives 0.2–1 s of lwsim step-by-step time per run.
SIZES = {"delay": (16, 4, 8, 32, 300), "behaviour": (128, 4, 16, 16, 150),
         "a-main": (256, 8, 32, 32, 30)}
CELLS = ("gru", "lstm")
LR, WD, CLIP, BETAS, EPS = 3e-3, 1e-2, 1.0, (0.9, 0.999), 1e-8
COLUMNS = ("lwsim lanes", "lwsim fused", "lwsim step", "torch eager", "jax jit step", "jax loop")
TOL = 1e-5
HAS_FUSED = "fused" in inspect.signature(lwsim.train.train).parameters


def _has_lanes():
    try:
        import lwsim.backends.numba.lanes  # noqa: F401
        return HAS_FUSED
    except ImportError:
        return False


HAS_LANES = _has_lanes()


class Case:
    """One size × cell: the lwsim cell, its initial weights (lwsim and torch names), the data and
    the K minibatch index lists lwsim's train() will use."""

    def __init__(self, size, cell_name, quick):
        T, D, H, B, K = SIZES[size]
        self.size, self.cell_name, self.T, self.D, self.H, self.B = size, cell_name, T, D, H, B
        self.K = max(8, K // 5) if quick else K
        opts = {"convention": "torch"} if cell_name == "gru" else {}
        self.cell = lwsim.make_cell(cell_name, D, H, 1, dtype="float32", **opts)
        self.params = self.cell.init_params(seed=0, scheme="torch")
        self.torch_params = self.cell.params_to_torch(self.params)
        task = lwsim.tasks.make("multilag", T=T, D=D, seed=0, dtype="float32",
                                lags=[T // 8, T // 4, T // 2], coefs=[0.6, 0.5, 0.4])
        self.ds = task.dataset(8 * B, 0, 0, seed=0)        # n_train a multiple of B: full batches
        self.idx = lwsim_batch_indices(8 * B, B, self.K, seed=0)

    @property
    def label(self):
        return f"{self.size} {self.cell_name} (T{self.T} D{self.D} H{self.H} B{self.B}, K{self.K})"

    def flops_per_step(self):
        G = 3 if self.cell_name == "gru" else 4
        macs = self.T * self.B * (G * self.H * (self.D + self.H) + self.H)   # gates + read-out
        return 3 * macs * 2


def lwsim_batch_indices(N, B, K, seed):
    """The minibatch index lists of lwsim.train.train(steps=K) over a Dataset (its batches())."""
    ss_shuffle = np.random.SeedSequence([seed, 0x7EA1]).spawn(3)[0]
    rng = np.random.default_rng(ss_shuffle)
    out = []
    while len(out) < K:
        perm = rng.permutation(N)
        out.extend(perm[i:i + B] for i in range(0, N, B))
    return out[:K]


# ------------------------------------------------------------------------------------ lwsim
def lwsim_runner(case, fused):
    kw = {"fused": fused} if HAS_FUSED else {}

    def run():
        res = lwsim.train.train(case.cell, case.params, case.ds, optimizer="adamw",
                                optimizer_kwargs={"lr": LR, "weight_decay": WD}, steps=case.K,
                                batch_size=case.B, clip=CLIP, backend="numba", seed=0,
                                validate=False, progress=False, **kw)
        return res.curves["train_loss"]
    return run


# ------------------------------------------------------------------------------------ torch
def torch_runner(torch, case):
    nn = torch.nn
    x = torch.from_numpy(case.ds.x_train)
    y = torch.from_numpy(case.ds.y_train)
    idx = [torch.from_numpy(i) for i in case.idx]
    sd = {k: torch.from_numpy(v) for k, v in case.torch_params.items()}
    rnn_sd = {k: v for k, v in sd.items() if not k.startswith("readout.")}
    out_sd = {k[len("readout."):]: v for k, v in sd.items() if k.startswith("readout.")}
    rnn_cls = nn.GRU if case.cell_name == "gru" else nn.LSTM

    def run():
        # built inside the clock, like lwsim's train() copies its parameters and builds AdamW
        rnn, readout = rnn_cls(case.D, case.H), nn.Linear(case.H, 1)
        rnn.load_state_dict(rnn_sd)
        readout.load_state_dict(out_sd)
        if case.cell_name == "lstm":                     # lwsim's LSTM has one bias per gate
            rnn.bias_hh_l0.requires_grad_(False)
        params = [q for q in rnn.parameters() if q.requires_grad] + list(readout.parameters())
        opt = torch.optim.AdamW(params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
        mse = nn.MSELoss()
        losses = []
        for i in idx:
            h, _ = rnn(x[:, i])
            loss = mse(readout(h), y[:, i])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(params, CLIP)
            opt.step()
            losses.append(loss.detach())
        return [float(v) for v in losses]
    return run


# ------------------------------------------------------------------------------------ JAX
def jax_train_step(jax, cell_name):
    """(state, xb, yb) -> (state, loss), state = (params, m, v, t) with torch's parameter names;
    the model, clip and AdamW written out as torch computes them."""
    jnp, lax = jax.numpy, jax.lax

    def loss_fn(p, x, y):
        gi = x @ p["weight_ih_l0"].T + p["bias_ih_l0"]      # input projections of all steps at once
        H = p["weight_hh_l0"].shape[1]

        def gru(h, gi_t):
            gh = h @ p["weight_hh_l0"].T + p["bias_hh_l0"]
            r = jax.nn.sigmoid(gi_t[:, :H] + gh[:, :H])
            z = jax.nn.sigmoid(gi_t[:, H:2 * H] + gh[:, H:2 * H])
            n = jnp.tanh(gi_t[:, 2 * H:] + r * gh[:, 2 * H:])
            h = (1.0 - z) * n + z * h
            return h, h

        def lstm(hc, gi_t):
            h, c = hc
            a = gi_t + h @ p["weight_hh_l0"].T                 # one bias per gate (in bias_ih)
            i, f = jax.nn.sigmoid(a[:, :H]), jax.nn.sigmoid(a[:, H:2 * H])
            g, o = jnp.tanh(a[:, 2 * H:3 * H]), jax.nn.sigmoid(a[:, 3 * H:])
            c = f * c + i * g
            h = o * jnp.tanh(c)
            return (h, c), h

        h0 = jnp.zeros((x.shape[1], H), x.dtype)
        if cell_name == "gru":
            _, hs = lax.scan(gru, h0, gi)
        else:
            _, hs = lax.scan(lstm, (h0, h0), gi)
        yhat = hs @ p["readout.weight"].T + p["readout.bias"]
        return jnp.mean((yhat - y) ** 2)

    grad_fn = jax.value_and_grad(loss_fn)
    tmap = jax.tree_util.tree_map
    b1, b2 = BETAS

    def step(state, xb, yb):
        p, m, v, t = state
        loss, g = grad_fn(p, xb, yb)
        norm = jnp.sqrt(sum(jnp.sum(gk * gk) for gk in jax.tree_util.tree_leaves(g)))
        coef = jnp.minimum(CLIP / (norm + 1e-6), 1.0)       # torch clip_grad_norm_
        g = tmap(lambda gk: gk * coef, g)
        t = t + 1.0
        bc1, bc2 = 1.0 - b1 ** t, 1.0 - b2 ** t
        m = tmap(lambda mk, gk: b1 * mk + (1.0 - b1) * gk, m, g)
        v = tmap(lambda vk, gk: b2 * vk + (1.0 - b2) * gk * gk, v, g)
        p = tmap(lambda pk, mk, vk: pk * (1.0 - LR * WD)
                 - (LR / bc1) * mk / (jnp.sqrt(vk) / jnp.sqrt(bc2) + EPS), p, m, v)
        return (p, m, v, t), loss

    return step


def jax_runners(jax, case):
    """The "jax jit step" and "jax loop" runners, sharing one step function."""
    jnp = jax.numpy
    step = jax_train_step(jax, case.cell_name)
    p0 = {k: jnp.asarray(v) for k, v in case.torch_params.items()
          if not (case.cell_name == "lstm" and k == "bias_hh_l0")}
    zeros = {k: jnp.zeros_like(v) for k, v in p0.items()}
    state0 = (p0, zeros, zeros, jnp.float32(0.0))
    # pre-gathered minibatches, (K, T, B, D): jit step gets one slice per call, the loop all of them
    xs = np.stack([case.ds.x_train[:, i] for i in case.idx])
    ys = np.stack([case.ds.y_train[:, i] for i in case.idx])
    xs_dev, ys_dev = jnp.asarray(xs), jnp.asarray(ys)
    jit_step = jax.jit(step)
    jit_loop = jax.jit(lambda s, xs, ys: jax.lax.scan(lambda s, b: step(s, *b), s, (xs, ys)))

    def run_step():
        state, losses = state0, []
        for k in range(case.K):
            state, loss = jit_step(state, xs[k], ys[k])
            losses.append(loss)
        jax.block_until_ready(state)
        return [float(v) for v in losses]

    def run_loop():
        state, losses = jit_loop(state0, xs_dev, ys_dev)
        jax.block_until_ready(state)
        return np.asarray(losses).tolist()
    return run_step, run_loop


# ------------------------------------------------------------------------------------ harness
def optional_imports(say):
    mods = {}
    try:
        import torch
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
        mods["torch"] = torch
    except Exception as e:                                  # noqa: BLE001 (any failure: skip)
        say(f"note: torch skipped ({type(e).__name__}: {e})")
    try:
        import jax
        jax.numpy.zeros(1).block_until_ready()
        mods["jax"] = jax
    except Exception as e:                                  # noqa: BLE001
        say(f"note: jax skipped ({type(e).__name__}: {e})")
    return mods


def runners(case, mods, say):
    out = {}
    if HAS_LANES:
        out["lwsim lanes"] = lwsim_runner(case, "lanes")
    if HAS_FUSED:
        out["lwsim fused"] = lwsim_runner(case, True)
    out["lwsim step"] = lwsim_runner(case, False)
    if "torch" in mods:
        out["torch eager"] = torch_runner(mods["torch"], case)
    if "jax" in mods:
        out["jax jit step"], out["jax loop"] = jax_runners(mods["jax"], case)
    return out


def warm_and_check(case, runs, say):
    """One untimed training each (compiles); the first-step losses must agree with lwsim's."""
    first, last = {}, {}
    for name, run in list(runs.items()):
        try:
            losses = run()
        except Exception as e:                              # noqa: BLE001 (e.g. fused mid-edit)
            say(f"  note: {name} failed, dropped ({type(e).__name__}: {e})")
            del runs[name]
            continue
        first[name], last[name] = losses[0], losses[-1]
    ref = first["lwsim step"]
    worst = max(abs(v - ref) / abs(ref) for v in first.values())
    say("  first loss: " + ", ".join(f"{k} {v:.7g}" for k, v in first.items())
        + f"  (max rel diff {worst:.1e})")
    say("  last loss:  " + ", ".join(f"{k} {v:.7g}" for k, v in last.items()))
    if not worst <= TOL:
        sys.exit(f"ABORT: {case.label}: first-step losses differ by {worst:.2e} relative (> {TOL})")
    return worst


def time_rounds(runs, rounds):
    """Median (wall, CPU) seconds of one whole training per framework, rounds interleaved."""
    names = list(runs)
    wall, cpu = {n: [] for n in names}, {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            w0, c0 = time.perf_counter(), time.process_time()
            runs[n]()
            wall[n].append(time.perf_counter() - w0)
            cpu[n].append(time.process_time() - c0)
    return {n: (statistics.median(wall[n]), statistics.median(cpu[n])) for n in names}


def sgemm_rate(reps=10):
    """FLOP/s of a float32 512×512 @ 512×512 NumPy matmul at one thread (best of reps)."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((512, 512), dtype=np.float32) for _ in range(2))
    a @ b
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * 512 ** 3 / best


def table(rows, which, title):
    head = list(COLUMNS) + ["jax loop / lwsim fused", "lwsim step / lwsim fused", "jax loop / lwsim lanes",
                            "lwsim step / lwsim lanes"]
    lines = [title, "", "| case | " + " | ".join(head) + " |", "|---" + "|---:" * len(head) + "|"]
    for label, t in rows:
        us = {c: t[c][which] * 1e6 for c in t}
        cells = [f"{us[c]:.0f}" if c in us else "–" for c in COLUMNS]
        for den in ("lwsim fused", "lwsim lanes"):
            f = us.get(den)
            for num in ("jax loop", "lwsim step"):
                cells.append(f"{us[num] / f:.2f}" if f and num in us else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def header(mods):
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    vers = [f"numpy {np.__version__}", f"numba {numba.__version__}"]
    vers += [f"{m} {mods[m].__version__}" for m in ("torch", "jax") if m in mods]
    return (f"# bench_train {datetime.date.today().isoformat()}, {cpu} ({os.cpu_count()} cores), "
            + ", ".join(vers) + ", 1 thread each, float32")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(SIZES), help="comma list of " + ", ".join(SIZES))
    ap.add_argument("--rounds", type=int, default=None, help="timed rounds (default 5, --quick 2)")
    ap.add_argument("--quick", action="store_true", help="K/5 steps and 2 rounds: a smoke check")
    ap.add_argument("--out", default=None,
                    help="output file (default benchmarks/results/bench_train.txt; none with --quick)")
    args = ap.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        ap.error(f"unknown sizes {unknown}; choose from {', '.join(SIZES)}")
    rounds = args.rounds or (2 if args.quick else 5)
    out_path = args.out or (None if args.quick else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "bench_train.txt"))

    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    # lwsim must train without torch or JAX: a short training before they are imported
    lwsim_runner(Case("delay", "gru", quick=True), False)()
    assert not {"torch", "jax"} & set(sys.modules), "lwsim imported torch or jax"
    mods = optional_imports(say)
    if not HAS_FUSED:
        say("fused: not available (lwsim.train.train has no `fused` keyword); lwsim step only")
    sgemm = sgemm_rate()
    say(f"SGEMM 512³ float32, 1 thread: {sgemm / 1e9:.1f} GFLOP/s; rounds {rounds}")

    rows, flops_lines = [], []
    for size in sizes:
        for cell_name in CELLS:
            case = Case(size, cell_name, args.quick)
            say(case.label)
            runs = runners(case, mods, say)
            warm_and_check(case, runs, say)
            t = {n: (w / case.K, c / case.K) for n, (w, c) in time_rounds(runs, rounds).items()}
            rows.append((case.label, t))
            fl = case.flops_per_step()
            best = next(c for c in ("lwsim lanes", "lwsim fused", "lwsim step") if c in t)
            rate = fl / t[best][0]
            flops_lines.append(f"- {case.label}: {fl / 1e6:.2f} MFLOP/step; {best} "
                               f"{rate / 1e9:.2f} GFLOP/s = {100 * rate / sgemm:.1f}% of SGEMM")
    say()
    for ln in table(rows, 0, "µs per training step, wall time (median of rounds)"):
        say(ln)
    say()
    for ln in table(rows, 1, "µs per training step, CPU time (process_time, median of rounds)"):
        say(ln)
    say()
    say(f"FLOPs per step (3 × forward multiply-adds × 2); SGEMM {sgemm / 1e9:.1f} GFLOP/s:")
    for ln in flops_lines:
        say(ln)
    if out_path:
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(header(mods) + "\n" + "\n".join(lines) + "\n")
        print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
