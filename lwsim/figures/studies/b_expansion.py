"""[B]'s expansion study (B7, B8, finding 7; docs/experiments.md §5.4–5.5): the Fréchet truncation
error of Jacobian products along a trajectory, E(ε) ∝ ε², and the per-step norms."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

import lwsim
from lwsim import diagnostics as dg
from lwsim.stats import verdicts as V

from ..config import RunConfig, run_config
from ..run import Run, experiment
from ..study import Study
from ..style import color, subplots
from ..timing import part

EXPANSION_CELLS = ("sharedgate", "diaggate")
TITLES = {7: "[B] Fréchet truncation error scales as ε²"}


_PAPER = dict(T=100, H=64, D=3, sigma_w=0.2, seeds=list(range(20)), eps_grid="author",
              phases="author", b7_aggregate="robust", conventions="lwsim")
_QUICK = dict(_PAPER, seeds=[0, 1, 2], eps_grid="lwsim", phases="lwsim", b7_aggregate="seeds")
# The b_expansion group's sizes per preset (docs/presets.md): paper follows the author's protocol.
SIZES = {"b_expansion": {"smoke": dict(_QUICK, T=12, H=6, seeds=[0]), "quick": _QUICK,
                         "medium": dict(_QUICK, seeds=[0, 1, 2, 3, 4]), "paper": _PAPER, "paper-v1": _PAPER}}


def expansion_runs(preset, backend):
    c = SIZES["b_expansion"][preset]
    base = {k: v for k, v in c.items() if k != "seeds"}
    return [Run.make("b_expansion", **base, cell=m, seed=s) for m in EXPANSION_CELLS for s in c["seeds"]]


@run_config("b_expansion")
class BExpansion(RunConfig):
    """A b_expansion run: one cell at N(0, sigma_w²) weights on a sine trajectory (``phases``
    "lwsim" U(0, 2π) | "author" N(0, 1)); the Fréchet check on the ``eps_grid`` ("lwsim" | "author")
    under ``conventions``; ``b7_aggregate`` how B7 pools the seeds."""
    cell: str
    seed: int
    T: int
    D: int
    H: int
    sigma_w: float
    b7_aggregate: str = "seeds"
    phases: str = "lwsim"
    eps_grid: str = "lwsim"
    conventions: str = "lwsim"
    CHOICES: ClassVar[dict] = {"b7_aggregate": ("seeds", "robust"), "phases": ("lwsim", "author"),
                               "eps_grid": ("lwsim", "author"), "conventions": ("lwsim", "author")}


@experiment("b_expansion")
def b_expansion(c):
    """Fréchet truncation error of Jacobian products along a trajectory (B7, B8)."""
    c = BExpansion.of(c)
    T, D, H = c["T"], c["D"], c["H"]
    rng = np.random.default_rng(c["seed"])
    t = np.linspace(0, 12, T)
    fk = np.linspace(0.03, 0.09, D)
    # phases: lwsim U(0, 2π); "author": N(0, 1), as [B]'s appendix code draws them
    phase = rng.standard_normal(D) if c.phases == "author" else rng.uniform(0, 2 * np.pi, D)
    x = (np.sin(fk[None, :] * t[:, None] + phase) + 0.05 * rng.standard_normal((T, D)))[:, None, :]
    cell = lwsim.make_cell(c["cell"], D, H, bias=False, readout="last")
    params = cell.init_params(seed=c["seed"], scheme="normal", sigma_w=c["sigma_w"])
    eps = dg.expansion.AUTHOR_EPS if c.eps_grid == "author" else dg.expansion.DEFAULT_EPS
    with part("diagnostics"):
        fc = dg.frechet_check(cell, params, x, eps, conventions=c.conventions)
    return {"eps": fc.eps, "E": np.asarray(fc.E).reshape(len(fc.eps), -1)[:, 0],
            "C2": np.asarray(fc.C2).reshape(len(fc.eps), -1)[:, 0],
            "slope": float(np.ravel(fc.slope)[0]), "remainder": float(np.ravel(fc.remainder)[0]),
            "norm_A": np.ravel(fc.norm_A), "norm_B": np.ravel(fc.norm_B), "ratio": np.ravel(fc.ratio)}


def robust_seeds(E1, slopes, factor=1.5):
    """[B]'s seed filter: keep seeds whose E(ε = 1) lies in [q25 − 1.5 IQR, q75 + 1.5 IQR]
    (linear-interpolated quartiles over seeds) and whose slope is finite → boolean mask."""
    E1 = np.asarray(E1, float)
    q1, q3 = np.percentile(E1, [25, 75])
    iqr = q3 - q1
    return (E1 >= q1 - factor * iqr) & (E1 <= q3 + factor * iqr) & np.isfinite(np.asarray(slopes, float))


def _fig_b7_robust(runs):
    """[B]'s appendix figure: per cell, median E(ε) and C₂(ε) over the kept seeds with the IQR band."""
    fig, axes = subplots(2, ncols=2)
    data = {}
    for cell in sorted({cfg["cell"] for cfg, _ in runs}):
        rs = [(cfg, r) for cfg, r in runs if cfg["cell"] == cell]
        eps = np.asarray(rs[0][1]["eps"], float)
        E = np.array([r["E"] for _, r in rs], float)
        C2 = np.array([r["C2"] for _, r in rs], float)
        keep = robust_seeds(E[:, -1], [r["slope"] for _, r in rs])
        d = {"eps": eps, "seeds": [cfg["seed"] for cfg, _ in rs], "kept": keep,
             "slopes": [r["slope"] for _, r in rs]}
        for k, (ax, vals) in enumerate(zip(axes, (E, C2))):
            q25, med, q75 = np.percentile(vals[keep], [25, 50, 75], axis=0)
            ax.plot(eps, med, "-o", ms=3, color=color(cell), label=f"{cell} median ({keep.sum()}/{keep.size} seeds)")
            ax.fill_between(eps, q25, q75, color=color(cell), alpha=0.25)
            d["E_median" if k == 0 else "C2_median"] = med
        data[cell] = d
    axes[0].set(xscale="log", yscale="log", xlabel="ε", ylabel=r"$E(\varepsilon)$",
                title="B7 Fréchet truncation error (median, IQR)")
    axes[1].set(xscale="log", yscale="log", xlabel="ε", ylabel=r"$C_2(\varepsilon)$")
    axes[0].legend(fontsize=7)
    return fig, data


def fig_b7(R):
    runs = R["b_expansion"]
    if BExpansion.read(runs[0][0], "b7_aggregate") == "robust":
        return _fig_b7_robust(runs)
    fig, axes = subplots(2, ncols=2)
    data = {}
    labelled = set()
    for cfg, r in runs:
        eps = np.asarray(r["eps"], float)
        # one legend entry per cell, so every colour is named (the seeds share it)
        label = None if cfg["cell"] in labelled else f"{cfg['cell']} (one line per seed)"
        labelled.add(cfg["cell"])
        axes[0].loglog(eps, r["E"], "-o", ms=3, color=color(cfg["cell"]), lw=1, label=label)
        axes[1].loglog(eps, r["C2"], "-o", ms=3, color=color(cfg["cell"]), lw=1, label=label)
        data.setdefault(cfg["cell"], []).append({"seed": cfg["seed"], "eps": eps, "E": r["E"], "C2": r["C2"],
                                                 "slope": r["slope"], "remainder": r["remainder"]})
    e0 = np.asarray(runs[0][1]["eps"], float)
    E0 = np.asarray(runs[0][1]["E"], float)
    axes[0].loglog(e0, E0[0] * (e0 / e0[0]) ** 2, "k--", lw=1, label="slope 2")
    axes[0].set(xlabel="ε", ylabel=r"$E(\varepsilon)$", title="B7 Fréchet truncation error")
    axes[1].set(xlabel="ε", ylabel=r"$C_2(\varepsilon)=E/\varepsilon^2$")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    return fig, data


def fig_b8(R):
    runs = R["b_expansion"]
    fig, axes = subplots(3, ncols=3)
    data = {}
    for cfg, r in runs:
        c = color(cfg["cell"])
        j = np.arange(1, len(r["norm_A"]) + 1)
        axes[0].plot(j, r["norm_A"], color=c, lw=0.8)
        axes[0].plot(j, r["norm_B"], ":", color=c, lw=0.8)
        axes[1].plot(j, r["ratio"], color=c, lw=0.8)
        data.setdefault(cfg["cell"], []).append({"seed": cfg["seed"], "ratio_median": float(np.median(r["ratio"])),
                                                 "ratio_max": float(np.max(r["ratio"]))})
    for cell in data:
        allr = np.concatenate([np.asarray(r["ratio"], float) for cfg, r in runs if cfg["cell"] == cell])
        axes[2].hist(allr, bins=30, histtype="step", color=color(cell), label=cell)
    axes[0].set(xlabel="step j", title=r"B8 $\|A_j\|_2$ (solid), $\|B_j\|_2$ (dotted)")
    axes[1].set(xlabel="step j", ylabel=r"$\|B_j\|_2/\|A_j\|_2$")
    axes[2].set(xlabel=r"$\|B_j\|_2/\|A_j\|_2$", ylabel="count")
    axes[2].legend(fontsize=7)
    return fig, data


SLOPE_MARGIN = 0.1   # the old rule's margin


def f7(r):
    b7 = r.get("B7")
    if not b7:
        return None
    rows, verdicts = [], []
    for c, runs in b7.items():
        if isinstance(runs, dict):      # [B]'s robust aggregate (_fig_b7_robust): the seeds its filter keeps
            kept = [s for s, k in zip(runs["slopes"], runs["kept"]) if k]
            note = f"; [B]'s seed filter kept {len(kept)} of {len(runs['slopes'])}"
            slopes = kept
        else:
            slopes, note = [run["slope"] for run in runs], ""
        iv = V.seed_interval(slopes)
        v = V.decide(iv, within=(2.0, SLOPE_MARGIN))
        verdicts.append(v)
        rows.append(f"{c}: slopes {[round(s, 3) for s in slopes]}; seed interval {iv.text('.4g')} → {v} "
                    f"({V.seeds_on_side(slopes, within=(2.0, SLOPE_MARGIN))} within 2 ± {SLOPE_MARGIN}){note}")
    return [(7, V.all_of(verdicts), rows, f"rule: each model's 95% seed interval of the log–log slope over the five "
             f"smallest ε inside 2 ± {SLOPE_MARGIN}, AND over models (docs/experiments.md §5.5.2)")]


def findings(rendered):
    return {item[0]: item for item in f7(rendered) or []}


def _b_expansion(c):
    T, H = c["T"], c["H"]
    return {"one": 1.0, "diag": T * H ** 3 * 10}


FIGURES = {"B7": fig_b7, "B8": fig_b8}
STUDY = Study(name="b_expansion", docs="docs/experiments.md §5.4 (B7, B8), §5.5 (finding 7)", sizes=SIZES,
              groups={"b_expansion": expansion_runs}, figures=FIGURES, needs={k: ("b_expansion",) for k in FIGURES},
              titles=TITLES, findings=findings, work={"b_expansion": _b_expansion},
              probes={"b_expansion": [dict(), dict(T=50)]})
