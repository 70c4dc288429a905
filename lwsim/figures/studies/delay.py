"""Delay study (A16, finding 10; docs/experiments.md §5.7): does the window predict what is learnable?

Task: y_t = c·z_{t−ℓ*} + σ_y ε_t, z_t = uᵀx_t (multilag with the one lag ℓ*). One run per
cell × seed × ℓ* × N: a fresh training set of N sequences (stream (seed, ℓ*, N)); validation and
held-out sequences, initial parameters, optimizer, steps and batch the same for every N (as A15).
Outcome: learned(ℓ*, N) = held-out ĉ(ℓ*) outside the z_band·SE band and within ``frac`` of c
(A15's rule at one lag, docs/diagnostics.md §2.11), the held-out R² beside it. Diagnostic at the
task lag ℓ*, under the lag and full nulls, at three training points on the same held-out data:

- "init": the initial parameters with P = η·I (Adam's rates do not exist before the first step;
  η·I is the preconditioner of the step the optimizer would take with no history, up to Adam's
  per-coordinate normalisation, and it is the same for every run, so the point measures the
  parameters alone);
- "early": the checkpoint at ``early`` steps (≈ 10% of the steps), its parameters and its
  optimizer's rates (train(checkpoints=...) keeps both);
- "final": the trained model (best validation checkpoint, as A15) and its optimizer's rates.

Each gives N*(ℓ*) (continuous) and N̂(ℓ*) (on the preset's N grid). Finding 10 scores them as a
prediction of learned(ℓ*, N) (lwsim.stats.prediction, docs/statistics.md §3.6).
"""
from __future__ import annotations

import numpy as np

from lwsim import optim
from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.stats import prediction as pr
from lwsim.stats import verdicts as V
from lwsim.tasks import Dataset
from lwsim.tasks import make as make_task
from lwsim.train import train

from ..config import ATrained, AWindow, declared, run_config
from ..training import _a_cell, _a_params, _float64, _train_kwargs, a_windows, init_windows
from ..presets import A_CELLS
from ..run import Run, experiment
from ..study import Study
from ..timing import part
from ..workload import fwd

TRAIN_STREAM = 0xDE1A          # the training sequences' own stream: SeedSequence([seed, ℓ*, N, this])
NULLS = ("lag", "full")
POINTS = ("init", "early", "final")
BRIER_MARGIN = 0.05     # finding 10's region: relative Brier reduction > 0.05 (docs/experiments.md §5.5.2)
TITLE = "The window predicts which delays are learnable, beyond ℓ*, N and the cell (A16)"


def delay_task(c):
    """y_t = c·z_{t−ℓ*} + σ_y ε_t: multilag with the single lag ``delay`` and coefficient ``coef``."""
    return make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=[int(c["delay"])],
                     coefs=[float(c["coef"])], sigma_y=c["sigma_y"])


def delay_dataset(c, N):
    """N training sequences from the stream (seed, ℓ*, N); validation and held-out from the seed."""
    task = delay_task(c)
    x, y = task.batch(int(N), np.random.SeedSequence([int(c["seed"]), int(c["delay"]), int(N), TRAIN_STREAM]))
    fixed = task.dataset(0, c["n_val"], c["n_diag"], seed=c["seed"])
    return Dataset(x_train=x, y_train=y, x_val=fixed.x_val, y_val=fixed.y_val, x_diag=fixed.x_diag,
                   y_diag=fixed.y_diag, readout=task.readout, task=task, seed=int(c["seed"]))


def delay_train_kwargs(c):
    """Identical for every N and ℓ*: A15's settings plus the early checkpoint."""
    return dict(optimizer=c["optimizer"], optimizer_kwargs=_train_kwargs(c["optimizer"], c["lr"], c["weight_decay"]),
                steps=c["steps"], batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"],
                val_every=c["val_every"], best_checkpoint=True, progress=False, checkpoints=[int(c["early"])])


# A16's sizes (docs/experiments.md §5.7): the delay task y_t = c·z_{t−ℓ*} + σ_y ε_t, one run per
# cell × seed × ℓ* × N; A15's training settings with the early checkpoint at 10% of the steps.
# Design by measurement (docs/experiments.md §5.7, benchmarks/delay_design.py, one seed): a first
# design (T 32, H 8, 1000 steps, lr 2e-2, σ_y 0.5, N 16…1600) learned no ℓ* at N = 16 in any cell
# and cost ≈ 1–2 s per run (quick ≈ 20–40 min); this one (T 16, batch 32, 300 steps, lr 3e-2,
# σ_y 0.2, N 32…3200) learns ℓ* = 2 at N = 32 (LSTM), leaves ℓ* = 8 unlearned at N = 3200 in
# every cell, and costs ≈ 0.5 s per run.
_QUICK = dict(train_dtype="float32", T=16, D=4, H=8, s0=0.05, optimizer="adamw", lr=3e-2,
              weight_decay=1e-4, clip=1.0, batch=32, steps=300, early=30, val_every=30, n_val=32,
              n_diag=256, coef=0.5, sigma_y=0.2, delays=[2, 3, 4, 5, 6, 8],
              budgets=[32, 100, 320, 1000, 3200], n_grid=[32, 100, 320, 1000, 3200],
              eps=2.0, K=1, frac=0.5, z_band=3.0, seeds=[212, 1001, 2002])
# medium: T 32, H 16, 600 steps (a one-seed pilot, ℓ* 2…16 × N 32…10000: ℓ* = 2 learned at N = 32
# by four cells, ℓ* = 16 unlearned at N = 10000 by every cell; ≈ 1.5–6 s per run, shared machine)
_MEDIUM = dict(_QUICK, T=32, H=16, steps=600, early=60, val_every=60, n_diag=512,
               delays=[2, 3, 4, 5, 7, 9, 12, 16], budgets=[32, 100, 320, 1000, 3200, 10000],
               n_grid=[32, 100, 320, 1000, 3200, 10000])
_PAPER = dict(_MEDIUM, T=512, H=64, steps=3000, early=300, val_every=300, n_diag=2048,
              delays=[2, 4, 8, 16, 32, 64, 128, 256], seeds=[2, 12, 31, 41, 51])
# The a_delay group's sizes per preset (docs/presets.md).
SIZES = {"a_delay": {
    "smoke": dict(_QUICK, T=16, D=3, H=4, batch=8, steps=10, early=2, val_every=5, n_val=8, n_diag=32,
                  delays=[2, 5], budgets=[8, 32], n_grid=[8, 32], seeds=[212, 1001]),
    "quick": _QUICK, "medium": _MEDIUM, "paper": _PAPER, "paper-v1": _PAPER}}


def delay_runs(preset, backend):
    """One run per cell × seed × ℓ* × N of the preset's ``a_delay``."""
    c = SIZES["a_delay"][preset]
    base = {k: v for k, v in c.items() if k not in ("seeds", "delays")}
    return [Run.make("a_delay", **base, cell=cell, seed=s, delay=int(d), N=int(N), backend=backend)
            for cell in A_CELLS for s in c["seeds"] for d in c["delays"] for N in c["budgets"]]


def diagnostic(cell, params, rates, ds, c, shared=False):
    """{null: (N*(ℓ*), N̂(ℓ*))} of one model at the task lag (a_windows on lags = [ℓ*]);
    ``shared``: the initial model, the same for every N (training.init_windows, once per process)."""
    windows = init_windows if shared else a_windows
    tables = windows(cell, params, rates, ds.x_diag, ds.y_diag, c, nulls=NULLS, lags=[int(c["delay"])])
    return {null: (float(t.n_star[0]), float(t.n_hat[0])) for null, t in tables.items()}


@run_config("a_delay")
class ADelay(ATrained, AWindow):
    """An a_delay run: ``steps`` AdamW steps on N sequences of the delay task (lag ``delay``,
    coefficient ``coef``), the early checkpoint at step ``early``, learned(ℓ*, N) from the
    behavioural window (``frac``, ``z_band``) and the window chain at the delay alone."""
    N: int
    delay: int
    coef: float
    steps: int
    early: int
    val_every: int
    budgets: list[int]
    frac: float
    z_band: float


@experiment("a_delay")
def a_delay(c):
    """Train on N sequences of the delay task; learned(ℓ*, N), R² and the diagnostic at three points."""
    c = ADelay.of(c)
    N, lag = int(c["N"]), int(c["delay"])
    with part("training"):
        ds = delay_dataset(c, N)
        cell = _a_cell(c["cell"], c)
        p0 = _a_params(cell, c)
        res = train(cell, p0, ds, **delay_train_kwargs(c))
        cell, res = _float64(cell, res)
        p0 = {k: np.asarray(v, np.float64) for k, v in p0.items()}
    with part("diagnostics"):
        y_hat = np.asarray(cell.forward(res.params, ds.x_diag, backend=c["backend"]).y)
        co = lag_coefficients(y_hat, ds.x_diag, ds.task.u, [lag])
        win = behavioural_window(co, [lag], [c["coef"]], frac=c["frac"], z_band=c["z_band"])
        yd = np.asarray(ds.y_diag, float).reshape(y_hat.shape)
        r2 = 1.0 - float(np.mean((yd - y_hat) ** 2) / np.var(yd))
    k = int(c["early"])
    models = {"init": (p0, float(c["lr"])),
              "early": (res.checkpoints[k], optim.from_state_dict(res.checkpoints[k], res.checkpoint_opt_states[k])),
              "final": (res.params, res.optimizer)}
    out = {"N": N, "delay": lag, "c_hat": float(co.c_hat[0]), "c_se": float(co.se[0]),
           "learned": bool(win.recovered[0]), "r2": r2}
    with part("matched"):
        for point, (p, rates) in models.items():
            for null, (ns, nh) in diagnostic(cell, p, rates, ds, c, shared=point == "init").items():
                out[f"n_star_{null}_{point}"], out[f"n_hat_{null}_{point}"] = ns, nh
    return out


# --- scoring (finding 10) --------------------------------------------------------------------

def table(runs):
    """Rows of every run: dict(cell, seed, delay, N, learned, r2, n_star/n_hat per null × point)."""
    rows = []
    for cfg, r in runs:
        row = {"cell": cfg["cell"], "seed": int(cfg["seed"]), "delay": int(r["delay"]), "N": int(r["N"]),
               "learned": bool(r["learned"]), "r2": float(r["r2"]), "c_hat": float(r["c_hat"])}
        for null in NULLS:
            for pt in POINTS:
                for key in ("n_star", "n_hat"):
                    row[f"{key}_{null}_{pt}"] = float(r[f"{key}_{null}_{pt}"])
        rows.append(row)
    return rows


def _nan_none(v):
    return None if v is None or not np.isfinite(v) else float(v)


def score(rows, n_boot=500):
    """Finding 10's numbers: per null × point the pooled and per-cell AUC of −log(N*/N) with a
    cell × seed block-bootstrap interval, the balanced accuracy of N̂ ≤ N, and the three
    leave-one-seed-out logistic baselines (docs/experiments.md §5.7, docs/statistics.md §3.6)."""
    y = np.array([r["learned"] for r in rows])
    N = np.array([r["N"] for r in rows], float)
    lag = np.array([r["delay"] for r in rows], float)
    seed = np.array([r["seed"] for r in rows])
    cell = np.array([r["cell"] for r in rows])
    cells = _cell_order(set(cell.tolist()))
    blocks = np.array([f"{c}/{s}" for c, s in zip(cell, seed)])     # cell × seed blocks
    ll, ln = np.log(lag), np.log(N)
    scores = {"logN_logl": pr.cv_logistic_scores(pr.design(ll, ln), y, seed),
              "logN_logl_cell": pr.cv_logistic_scores(pr.design(ll, ln, cell=cell), y, seed)}
    diag, nested = {}, {}
    for null in NULLS:
        for pt in POINTS:
            d = pr.diagnostic_score(np.array([r[f"n_star_{null}_{pt}"] for r in rows]), N)
            diag[f"{null}/{pt}"] = d
            scores[f"{null}/{pt}"] = d
            scores[f"{null}/{pt}+base"] = pr.cv_logistic_scores(pr.design(ll, ln, diag=d), y, seed)
            nested[f"{null}/{pt}"] = pr.cv_logistic_scores(pr.design(ll, ln, cell=cell, diag=d), y, seed)
    ci = pr.block_bootstrap(scores, y, blocks, n_boot=n_boot)

    def with_ci(k):
        return [_nan_none(pr.auc(scores[k], y)), _nan_none(ci[k][0]), _nan_none(ci[k][1])]

    out = {"n": int(y.size), "n_learned": int(y.sum()), "cells": cells, "points": {},
           "baselines": {k: with_ci(k) for k in ("logN_logl", "logN_logl_cell")}}
    for null in NULLS:
        for pt in POINTS:
            key = f"{null}/{pt}"
            nh = np.array([r[f"n_hat_{null}_{pt}"] for r in rows])
            out["points"][key] = {
                "auc": with_ci(key),
                "per_cell": {cl: _nan_none(pr.auc(diag[key][cell == cl], y[cell == cl])) for cl in cells},
                "balanced_accuracy": _nan_none(pr.balanced_accuracy(nh <= N, y)),
                "baseline_plus_diag": with_ci(key + "+base")}
    b, bc = out["baselines"]["logN_logl"][0], out["baselines"]["logN_logl_cell"][0]
    aucs = {k: (v["auc"][0] if v["auc"][0] is not None else float("nan")) for k, v in out["points"].items()}
    if b is None or bc is None:
        out["earlier_verdict"], out["earlier_best"] = "inconclusive", None
    else:
        intervals = {k: tuple(np.nan if x is None else x for x in v["auc"][1:]) for k, v in out["points"].items()}
        out["earlier_verdict"], out["earlier_best"] = pr.finding10(aucs, intervals, b, bc)
    # the verdict scheme (docs/experiments.md §5.5.2): per held-out seed, the relative Brier reduction of
    # base + cell + diagnostic against base + cell; the best null × point's seed interval above 0.05
    strata = np.array([f"{a}/{n}" for a, n in zip(lag, N)])
    nh_all = {k: np.array([r[f"n_hat_{k.split('/')[0]}_{k.split('/')[1]}"] for r in rows]) for k in nested}
    effects = {}
    for k, s1 in nested.items():
        per = pr.nested_by_group(scores["logN_logl_cell"], s1, y, seed)
        effects[k] = [v["brier_reduction"] for v in per.values()]
        out["points"][k]["nested"] = {
            "brier_reduction_seeds": [_nan_none(x) if x is not None else None for x in effects[k]],
            "deviance_reduction_seeds": [_nan_none(v["deviance0"] - v["deviance1"]) for v in per.values()],
            "auc_within_strata": _nan_none(pr.stratified_auc(diag[k], y, strata)),
            "violation_rate": _nan_none(float(np.mean(nh_all[k][y] > N[y])) if y.any() else float("nan"))}
    ivs = {k: V.seed_interval(e) for k, e in effects.items()}
    defined = {k: iv for k, iv in ivs.items() if iv.n}
    out["best"] = max(defined, key=lambda k: (defined[k].mean, k)) if defined else None
    out["verdict"] = V.decide(defined[out["best"]], above=BRIER_MARGIN) if defined else V.INCONCLUSIVE
    if y.all() or not y.any():          # one outcome only: nothing to predict
        out["verdict"], out["best"] = V.INCONCLUSIVE, None
    out["intervals"] = {k: [_nan_none(iv.mean), _nan_none(iv.lo), _nan_none(iv.hi), iv.n] for k, iv in ivs.items()}
    return out


def _cell_order(present):
    """The cells in ``present``: [A]'s order (A_CELLS) first, any other cell after, sorted."""
    return [c for c in A_CELLS if c in present] + sorted(set(present) - set(A_CELLS))


def dynamic_range(rows):
    """Issue 30 item 5: per cell, whether some ℓ* is unlearned at the largest N (in every seed's
    majority) and some ℓ* learned at the smallest N."""
    out = {}
    Nmax, Nmin = max(r["N"] for r in rows), min(r["N"] for r in rows)
    delays = sorted({r["delay"] for r in rows})
    for cl in _cell_order({r["cell"] for r in rows}):
        def frac(n):
            """{ℓ*: fraction of seeds that learned it at N = n}; a (cell, ℓ*, N) without runs is absent
            (neither learned nor unlearned)."""
            v = {d: [r["learned"] for r in rows if r["cell"] == cl and r["N"] == n and r["delay"] == d] for d in delays}
            return {d: float(np.mean(x)) for d, x in v.items() if x}
        top, bottom = frac(Nmax), frac(Nmin)
        out[cl] = {"unlearned_at_max_N": [d for d, f in top.items() if f < 0.5],
                   "learned_at_min_N": [d for d, f in bottom.items() if f >= 0.5]}
    return out


# --- figure A16 ------------------------------------------------------------------------------

def fig_a16(results):
    """Per cell: the learned fraction over seeds on ℓ* × N, with the boundary N*(ℓ*) = N (seed
    geometric mean of N*) for each null at init and final; last panel: AUCs with intervals and the
    baselines (horizontal lines)."""
    from ..style import color, subplots
    rows = table(results["a_delay"])
    sc = score(rows)
    cells = sc["cells"]
    fig, axes = subplots(len(cells) + 1, ncols=3)
    axes = np.atleast_1d(axes).ravel()
    delays = sorted({r["delay"] for r in rows})
    budgets = sorted({r["N"] for r in rows})
    styles = {("lag", "init"): ("C0", ":"), ("lag", "final"): ("C0", "-"),
              ("full", "init"): ("C3", ":"), ("full", "final"): ("C3", "-")}
    for ax, cl in zip(axes, cells):
        m = np.full((len(budgets), len(delays)), np.nan)
        for i, n in enumerate(budgets):
            for j, d in enumerate(delays):
                v = [r["learned"] for r in rows if r["cell"] == cl and r["N"] == n and r["delay"] == d]
                m[i, j] = np.mean(v) if v else np.nan
        ax.pcolormesh(np.arange(len(delays) + 1) - 0.5, np.arange(len(budgets) + 1) - 0.5, m,
                      cmap="Greens", vmin=0, vmax=1, shading="flat")
        for (null, pt), (col, ls) in styles.items():
            ns = [np.exp(np.mean(np.log(np.clip([r[f"n_star_{null}_{pt}"] for r in rows
                                                  if r["cell"] == cl and r["delay"] == d], 1e-12, 1e12))))
                  for d in delays]
            yy = np.interp(np.log(ns), np.log(budgets), np.arange(len(budgets)), left=-0.5, right=len(budgets) - 0.5)
            ax.plot(np.arange(len(delays)), yy, color=col, ls=ls, lw=1.2, label=f"N* = N, {null}/{pt}")
        ax.set_xticks(range(len(delays)), delays)
        ax.set_yticks(range(len(budgets)), budgets)
        ax.set_xlabel("ℓ*")
        ax.set_title(cl, color=color(cl))
    axes[0].set_ylabel("N (training sequences)")
    axes[0].legend(fontsize=6, loc="upper left")
    ax = axes[-1]
    keys = list(sc["points"])
    for i, k in enumerate(keys):
        a, lo, hi = sc["points"][k]["auc"]
        if a is not None:
            # a percentile interval need not contain the point: clip the bar's lengths at 0
            ax.errorbar([i], [a], yerr=[[max(0.0, a - (lo if lo is not None else a))],
                                        [max(0.0, (hi if hi is not None else a) - a)]],
                        fmt="o", color="C0" if k.startswith("lag") else "C3")
    for name, ls in (("logN_logl", "--"), ("logN_logl_cell", "-.")):
        a = sc["baselines"][name][0]
        if a is not None:
            ax.axhline(a, color="k", ls=ls, lw=1, label=name)
    ax.set_xticks(range(len(keys)), keys, rotation=60, fontsize=7)
    ax.set_ylabel("AUC of −log(N*/N)")
    ax.set_title(f"finding 10: {sc['verdict']}")
    if ax.get_legend_handles_labels()[0]:          # no baseline defined (one class only): no legend
        ax.legend(fontsize=6)
    data = {"rows": rows, "score": sc, "dynamic_range": dynamic_range(rows), "delays": delays, "budgets": budgets}
    return fig, data


# --- finding 10 ------------------------------------------------------------------------------

def _fmt(v):
    return "—" if v is None else f"{v:.3f}"


def _f10(rendered):
    a16 = rendered.get("A16")
    if not a16:
        return None
    return a16["score"]


def _headline(rendered):
    sc = _f10(rendered)
    return [(10, TITLE, sc["verdict"] if sc else None)]


def finding10_lines(rendered):
    sc = _f10(rendered)
    if not sc:
        return []
    b, bc = sc["baselines"]["logN_logl"], sc["baselines"]["logN_logl_cell"]
    best = sc["best"]
    iv = (sc.get("intervals") or {}).get(best)
    effect = "n/a" if iv is None or iv[0] is None else (
        f"{iv[0]:.3g} [{_fmt(iv[1])}, {_fmt(iv[2])}] ({iv[3]} seeds)" if iv[1] is not None else f"{iv[0]:.3g} ({iv[3]} seed)")
    lines = [f"## 10. {TITLE}", "",
             f"**{sc['verdict']}** (best null/point: {best}; relative Brier reduction per held-out seed {effect}). "
             f"Rule (docs/experiments.md §5.5.2): per held-out seed (leave one seed out), the relative reduction of "
             f"the Brier score of the L2 logistic model (log ℓ*, log N, cell, diagnostic) against (log ℓ*, log N, "
             f"cell), 1 − B₊/B₀; reproduced when the best null × point's 95% seed interval lies above "
             f"{BRIER_MARGIN}, not reproduced when it lies below, inconclusive otherwise. The earlier rule (pooled "
             f"AUC against the baselines' AUC) would say: {sc.get('earlier_verdict', 'n/a')} "
             f"(best {sc.get('earlier_best')}).", "",
             f"{sc['n']} runs, {sc['n_learned']} learned. Baselines: (log ℓ*, log N) AUC {_fmt(b[0])} "
             f"[{_fmt(b[1])}, {_fmt(b[2])}]; + cell {_fmt(bc[0])} [{_fmt(bc[1])}, {_fmt(bc[2])}].", "",
             "| null/point | Brier reduction per seed [95%] | deviance reduction (mean over seeds) | AUC within (ℓ*, N) "
             "| violation rate (learned, N̂ > N) | AUC [95%] | balanced acc. (N̂ ≤ N) | (log ℓ*, log N) + diagnostic AUC "
             "| per cell |",
             "|---|---|---|---|---|---|---|---|---|"]
    for k, v in sc["points"].items():
        a, p = v["auc"], v["baseline_plus_diag"]
        pc = ", ".join(f"{c} {_fmt(x)}" for c, x in v["per_cell"].items())
        ne = v.get("nested") or {}
        ik = (sc.get("intervals") or {}).get(k) or [None, None, None, 0]
        dev = [x for x in ne.get("deviance_reduction_seeds", []) if x is not None]
        lines.append(f"| {k} | {_fmt(ik[0])} [{_fmt(ik[1])}, {_fmt(ik[2])}] | {_fmt(float(np.mean(dev)) if dev else None)} | "
                     f"{_fmt(ne.get('auc_within_strata'))} | {_fmt(ne.get('violation_rate'))} | "
                     f"{_fmt(a[0])} [{_fmt(a[1])}, {_fmt(a[2])}] | {_fmt(v['balanced_accuracy'])} | "
                     f"{_fmt(p[0])} [{_fmt(p[1])}, {_fmt(p[2])}] | {pc} |")
    dr = rendered["A16"].get("dynamic_range", {})
    if dr:
        lines += ["", "Dynamic range (issue 30 item 5): "
                  + "; ".join(f"{c}: unlearned at max N {v['unlearned_at_max_N']}, learned at min N "
                              f"{v['learned_at_min_N']}" for c, v in dr.items())]
    return lines + [""]


def _after(rendered, results, extra):
    return finding10_lines(rendered)


def _work(c):
    """A16: ``steps`` training steps; one forward pass for ĉ; the matched statistic at one lag,
    two nulls, three training points. At A16's sizes (H 8–16, batch 32) an optimizer step's fixed
    cost (the Python of the step, the optimizer and the clip over every parameter) outweighs its
    arithmetic, so ``steps`` counts optimizer steps and evaluations, not time steps."""
    T, H, f, K = c["T"], c["H"], fwd(c), declared(c, "K", 1)
    n_val, n_diag = declared(c, "n_val", 0), c["n_diag"]
    n_evals = c["steps"] // max(1, declared(c, "val_every", 1)) + 1
    n_diag_evals = 3 * 2
    return {"one": 1.0, "train": c["steps"] * c["batch"] * T * 3 * f + n_evals * n_val * T * f,
            "diag": n_diag * T * f + n_diag_evals * n_diag * T * (2 * f + K * (3 * f + 8 * H)),
            "stats": n_diag_evals * n_diag * (len(declared(c, "n_grid", [1])) + declared(c, "n_boot", 200) / 100),
            "steps": c["steps"] + n_evals + n_diag_evals}


STUDY = Study(name="delay", docs="docs/experiments.md §5.7 (A16, finding 10)", sizes=SIZES,
              groups={"a_delay": delay_runs}, figures={"A16": fig_a16}, needs={"A16": ("a_delay",)},
              headline=_headline, after=_after, work={"a_delay": _work},
              probes={"a_delay": [dict(), dict(steps=60, early=6), dict(n_diag=128), dict(cell="lstm"),
                                  dict(T=32, H=16, steps=120, early=12, val_every=12, n_diag=512)]})
