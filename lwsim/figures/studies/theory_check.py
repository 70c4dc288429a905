"""Theory checker (A12, docs/theory.md §4.4, docs/experiments.md §5.4): the planted model's Ĥ_N
against the derived H_N, three decay laws × three α."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..config import RunConfig, run_config
from ..run import Run, experiment
from ..study import Study
from ..style import subplots
from ..timing import part

THEORY_LAWS = ("exponential", "power", "logarithmic")
THEORY_ALPHAS = (1.3, 1.6, 2.0)


# eps = theory.planted.EPS (200): the planted checker keeps its N grid near N ≈ 1 with ε ≫ margin.
_PAPER = dict(n_lags=80, n_samples=200000, seeds=[0, 1, 2], eps=200.0)
_QUICK = dict(_PAPER, n_lags=40, n_samples=20000, seeds=[0, 1])
# The a_theory group's sizes per preset (docs/presets.md).
SIZES = {"a_theory": {"smoke": dict(_PAPER, n_lags=20, n_samples=2000, seeds=[0]), "quick": _QUICK,
                      "medium": dict(_QUICK, n_lags=60, n_samples=50000, seeds=[0, 1, 2]),
                      "paper": _PAPER, "paper-v1": _PAPER}}


def theory_runs(preset, backend):
    c = SIZES["a_theory"][preset]
    base = {k: v for k, v in c.items() if k != "seeds"}
    return [Run.make("a_theory", **base, law=law, alpha=a, seed=s)
            for law in THEORY_LAWS for a in THEORY_ALPHAS for s in c["seeds"]]


@run_config("a_theory")
class ATheory(RunConfig):
    """An a_theory run: the planted model of one decay ``law`` and tail index ``alpha`` with
    ``n_lags`` lags × ``n_samples`` samples; ``eps`` the detection threshold (theory.planted.EPS,
    200, when absent: the planted checker keeps its N grid near N ≈ 1 with ε ≫ margin)."""
    law: str
    alpha: float
    seed: int
    n_lags: int
    n_samples: int
    eps: float = 200.0
    CHOICES: ClassVar[dict] = {"law": THEORY_LAWS}


@experiment("a_theory")
def a_theory(c):
    """Planted model of docs/theory.md §4.4: X = c f(ℓ) + SαS(α, σ) per lag → Ĥ_N vs the derived H_N (A12).

    theory.planted.planted_check at its defaults (law parameter λ = 0.08 / β = 1 / γ = 1, C = σ = 1,
    signal gain and N grid from theory.planted.choose_grid); eps defaults to theory.planted.EPS.
    """
    from theory.planted import planted_check
    c = ATheory.of(c)
    with part("tails"):                 # planted samples, their detection table and the exponent fit
        r = planted_check(c["law"], c["alpha"], eps=c.eps, seed=c["seed"],
                          n_lags=c["n_lags"], n_samples=c["n_samples"])
    v = r.verdict()
    return {"law": r.law, "alpha": r.alpha, "lags": r.lags, "f": r.f, "n_grid": r.n_grid,
            "h_n": r.h_measured, "h_theory": r.h_theory, "h_theory_lo": r.h_theory_lo,
            "h_theory_hi": r.h_theory_hi, "alpha_hat": np.asarray(r.table.alpha), "kappa": r.kappa,
            "param_name": r.param_name, "param": r.param, "signal_gain": r.c, "eps": r.eps,
            "exponent_measured": r.exponent_measured, "exponent_theory": r.exponent_theory,
            "frac_resolution": v["frac_resolution"], "frac_band": v["frac_band"],
            "check_passes": v["passes"]}


def fig_a12(R):
    runs = R["a_theory"]
    laws = sorted({cfg["law"] for cfg, _ in runs}, key=["exponential", "power", "logarithmic"].index)
    fig, axes = subplots(len(laws), ncols=3)
    data = {}
    for ax, law in zip(axes, laws):
        data[law] = []
        law_runs = [x for x in runs if x[0]["law"] == law]
        alphas = sorted({cfg["alpha"] for cfg, _ in law_runs})
        labelled = set()
        for cfg, r in law_runs:
            # one colour and one legend entry per α (the seeds of an α share both)
            c = f"C{alphas.index(cfg['alpha']) % 10}"
            first = cfg["alpha"] not in labelled
            labelled.add(cfg["alpha"])
            ax.plot(r["n_grid"], r["h_n"], "o", ms=3, color=c,
                    label=f"α={cfg['alpha']}: measured (dots), theory (line)" if first else None)
            ax.plot(r["n_grid"], np.clip(r["h_theory"], 0, None), "-", color=c, lw=1)
            data[law].append({"alpha": cfg["alpha"], "seed": cfg["seed"], "N": r["n_grid"],
                              "H_measured": r["h_n"], "H_theory": r["h_theory"],
                              **{k: r[k] for k in ("exponent_measured", "exponent_theory") if k in r}})
        ax.set(xscale="log", xlabel="N", ylabel=r"$H_N$", title=f"A12 planted {law} envelope")
        ax.legend(fontsize=6)
    return fig, data


def _a_theory(c):
    return {"one": 1.0, "stats": c["n_lags"] * c["n_samples"]}


def _memory(c):
    """The planted samples and their fits: four float64 arrays of n_lags × n_samples."""
    return {"outputs": 4 * c["n_lags"] * c["n_samples"] * 8.0}


STUDY = Study(name="theory_check", docs="docs/theory.md §4.4, docs/experiments.md §5.4 (A12)", sizes=SIZES,
              groups={"a_theory": theory_runs}, figures={"A12": fig_a12}, needs={"A12": ("a_theory",)},
              work={"a_theory": _a_theory}, memory={"a_theory": _memory},
              probes={"a_theory": [dict(), dict(n_samples=5000), dict(law="power"), dict(law="logarithmic", alpha=2.0)]})
