"""[B]'s S1 study (B1–B3, docs/experiments.md §5.4): effective-learning-rate profiles over training
checkpoints on the adding task, per model. Finding 8 reads B1 (in the S2 study, with B4)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from lwsim import diagnostics as dg
from lwsim.tasks import make as make_task
from lwsim.train import train

from ..training import _b_cell, _float64
from ..config import BTrained, declared, run_config
from ..run import Run, experiment
from ..study import Study
from ..style import band, color, subplots
from ..timing import part
from ..workload import fwd


B_MODELS = ("constgate", "sharedgate", "diaggate")        # [B] leaky (s = 0.8), scalar gate, multi-gate
# the plain RNN, trained the same way: finding 8a's contrast (μ̃ falls with the lag in any contracting
# RNN; docs/experiments.md §5.5.2); not drawn in B1–B3
S1_CONTRAST = ("rnn",)

# [B]'s protocol at paper (docs/fidelity.md, "[B]"); quantities stay exact (conventions "lwsim").
_PAPER = dict(train_dtype="float32", T=80, D=4, H=64, lr=1e-2, batch=64, steps=800, checkpoints=[0, 50, 200, 400, 600, 800],
              probe=12, seeds=list(range(20)), s=0.8, min_points=50, b1_predictors="all",
              conventions=["lwsim", "author"])
# quick: lwsim's protocol (fresh batches, exact quantities)
_QUICK = dict(_PAPER, T=40, H=32, steps=300, checkpoints=[0, 50, 150, 300], probe=8,
              seeds=[0, 1, 2], min_points=10, b1_predictors="last")
# The b_s1 group's sizes per preset (docs/presets.md).
SIZES = {"b_s1": {
    "smoke": dict(_QUICK, T=12, H=6, steps=4, checkpoints=[0, 4], probe=3, seeds=[0], batch=8),
    "quick": _QUICK,
    "medium": dict(_QUICK, T=60, H=48, steps=500, checkpoints=[0, 50, 200, 350, 500], probe=10,
                   seeds=[0, 1, 2, 3, 4]),
    "paper": _PAPER, "paper-v1": _PAPER}}


def s1_runs(preset, backend):
    c = SIZES["b_s1"][preset]
    base = {k: v for k, v in c.items() if k != "seeds"}
    return [Run.make("b_s1", **base, cell=m, seed=s, backend=backend) for m in B_MODELS + S1_CONTRAST
            for s in c["seeds"]]


B3_PREDICTORS = ("injection", "retention")          # B3: the fit of log S on Π g or on Π (1 − g)


@run_config("b_s1")
class BRates(BTrained):
    """A b_s1 run: SGD on the adding task, the effective-LR profile at each checkpoint under each of
    ``conventions`` (``min_points`` per fit); ``b1_predictors`` which checkpoints B1 reads."""
    b1_predictors: str = "last"
    b3_predictor: str = "injection"
    min_points: int = 10
    conventions: str | list[str] = "lwsim"
    CHOICES: ClassVar[dict] = {"b1_predictors": ("last", "all"), "b3_predictor": B3_PREDICTORS,
                               "conventions": ("lwsim", "author")}


@experiment("b_s1")
def b_s1(c):
    """Effective-LR profiles over checkpoints on the adding task (B1–B3)."""
    c = BRates.of(c)
    task = make_task("adding", T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="torch")
    with part("training"):
        res = train(cell, params, task, optimizer="sgd", optimizer_kwargs={"lr": c["lr"]},
                    steps=c["steps"], batch_size=c["batch"], backend=c["backend"], seed=c["seed"],
                    checkpoints=c["checkpoints"], validate=False, progress=False)
        cell, res = _float64(cell, res)
    x_probe, _ = task.batch(c["probe"], c["seed"] + 7919)
    out = {}
    convs = c.conventions
    convs = [convs] if isinstance(convs, str) else list(convs)
    for ck in c["checkpoints"]:
        # conventions "author": [B]'s approximations (docs/fidelity.md), keys with suffix _author
        # (unsuffixed when it is the only one); min_points 50 as [B]
        for conv in convs:
            sfx = "" if conv == convs[0] else f"_{conv}"
            with part("diagnostics"):
                prof = dg.lr_profile(cell, res.checkpoints[ck], x_probe, min_points=c.min_points,
                                     backend=c["backend"], progress=False, conventions=conv, seed=c["seed"])
            out[f"mu{sfx}_{ck}"] = prof.mu
            for pr in prof.predictors.values():
                out[f"{pr.name}{sfx}_mu0_{ck}"] = pr.mu0
                out[f"{pr.name}{sfx}_mufit_{ck}"] = pr.mu_fit
                out[f"{pr.name}{sfx}_s_{ck}"] = float(pr.fit.s) if pr.fit is not None else float("nan")
                out[f"{pr.name}{sfx}_r2_{ck}"] = float(pr.fit.r2) if pr.fit is not None else float("nan")
        out["lags"] = prof.lags
        out["predictor_names"] = sorted(prof.predictors)
    return out


def _s1(R):
    out = {}
    for cfg, r in R["b_s1"]:
        out.setdefault(cfg["cell"], []).append((cfg, r))
    return {m: out[m] for m in B_MODELS if m in out}


def fig_b1(R):
    models = _s1(R)
    fig, axes = subplots(len(models), ncols=3)
    data = {}
    for ax, (m, runs) in zip(axes, models.items()):
        cks = runs[0][0]["checkpoints"]
        lags = np.asarray(runs[0][1]["lags"], float)
        data[m] = {"lags": lags}
        for j, ck in enumerate(cks):
            mu, _ = band(ax, lags, np.array([r[f"mu_{ck}"] for _, r in runs]), f"it {ck}",
                         f"C{j}", logy=True)
            data[m][f"mu_{ck}"] = mu
            if f"mu_author_{ck}" in runs[0][1]:        # the author's conventions, same runs
                data[m][f"author_mu_{ck}"] = np.nanmean([r[f"mu_author_{ck}"] for _, r in runs], axis=0)
        # b1_predictors "all" ([B]'s figure): the fitted predictors at every checkpoint
        every = BRates.read(runs[0][0], "b1_predictors") == "all"
        for j, ck in enumerate(cks if every else cks[-1:]):
            for name, ls in (("retention", "--"), ("injection", ":")):
                if f"{name}_mufit_{ck}" not in runs[0][1]:
                    continue
                pred = np.nanmean([r[f"{name}_mufit_{ck}"] for _, r in runs], axis=0)
                mu0 = np.nanmean([r[f"{name}_mu0_{ck}"] for _, r in runs], axis=0)
                ax.plot(lags, pred, ls, color=f"C{cks.index(ck)}" if every else "k", lw=1,
                        label=f"{name} fit (it {ck})")
                data[m][f"{name}_fit_{ck}"] = pred
                data[m][f"{name}_mu0_{ck}"] = mu0
        ax.set(yscale="log", xlabel="lag h", ylabel=r"$\tilde\mu(h)$", title=f"B1 {m}")
        ax.legend(fontsize=6)
        data[m]["last_lag_mu_seeds"] = last_lag_mu(runs)
    for m in S1_CONTRAST:                                   # finding 8a's contrast, per seed
        runs = [(cfg, r) for cfg, r in R["b_s1"] if cfg["cell"] == m]
        if runs:
            data[m] = {"last_lag_mu_seeds": last_lag_mu(runs)}
    return fig, data


def last_lag_mu(runs):
    """μ̃ at the largest lag at the last checkpoint, per run (seed order of ``runs``)."""
    return [float(np.asarray(r[f"mu_{cfg['checkpoints'][-1]}"], float)[-1]) for cfg, r in runs]


def fig_b2(R):
    models = _s1(R)
    fig, axes = subplots(len(models), ncols=3)
    data = {}
    for ax, (m, runs) in zip(axes, models.items()):
        cks = runs[0][0]["checkpoints"]
        lags = np.asarray(runs[0][1]["lags"], float)
        Z = np.log10(np.array([np.nanmean([r[f"mu_{ck}"] for _, r in runs], axis=0) for ck in cks]))
        im = ax.imshow(Z.T, aspect="auto", origin="lower", cmap="viridis",
                       extent=[-0.5, len(cks) - 0.5, lags[0], lags[-1]])
        ax.set_xticks(range(len(cks)), [str(c) for c in cks])
        ax.set(xlabel="checkpoint (iteration)", ylabel="lag h", title=fr"B2 {m}: $\log_{{10}}\tilde\mu$")
        fig.colorbar(im, ax=ax)
        data[m] = {"checkpoints": cks, "lags": lags, "log10_mu": Z}
    return fig, data




def fig_b3(R):
    """s(ℓ) of log S = a + s log P. Default P = Π_{j=k}^{t} g_j ("injection"): [B] defines its
    predictor as the gate product Π g (α^{t−k} for the leaky model), so B3 is about that product;
    ``b3_predictor="retention"`` plots the fit on Π (1 − g) instead (docs/fidelity.md, "[B]")."""
    models = _s1(R)
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data = {}
    pred = "injection"
    for m, runs in models.items():
        pred = BRates.read(runs[0][0], "b3_predictor")
        if pred not in B3_PREDICTORS:
            raise ValueError(f"b3_predictor must be one of {B3_PREDICTORS}, got {pred!r}")
        cks = runs[0][0]["checkpoints"]
        S = np.array([[r[f"{pred}_s_{ck}"] for ck in cks] for _, r in runs], dtype=float)
        mean, sd = band(ax, cks, S, m, color(m))
        r2 = np.array([[r[f"{pred}_r2_{ck}"] for ck in cks] for _, r in runs], dtype=float)
        data[m] = {"checkpoints": cks, "predictor": pred, "s_mean": mean, "s_sd": sd,
                   "r2_mean": np.nanmean(r2, axis=0)}
        for other in B3_PREDICTORS:
            data[m][f"s_mean_{other}"] = np.nanmean(
                np.array([[r[f"{other}_s_{ck}"] for ck in cks] for _, r in runs], dtype=float), axis=0)
    label = r"$\prod g$" if pred == "injection" else r"$\prod (1-g)$"
    ax.set(xlabel="iteration", ylabel=f"fitted power s (predictor {label})", title="B3 fitted slope vs training")
    ax.legend(fontsize=7)
    return fig, data


def _b_s1(c):
    T, H, f = c["T"], c["H"], fwd(c)
    n_ck = len(declared(c, "checkpoints", [0]))
    return {"one": 1.0, "train": c["steps"] * c["batch"] * T * 3 * f,
            "diag": n_ck * c["probe"] * T * T * H * H,
            "steps": c["steps"] * c["batch"] * T * 3 + n_ck * c["probe"] * T * T}


def _memory(c):
    """One probe batch's T × T × H transport factors on top of the chunk."""
    return {"chunk": c["probe"] * c["T"] * c["T"] * c["H"] * 8.0}


FIGURES = {"B1": fig_b1, "B2": fig_b2, "B3": fig_b3}
STUDY = Study(name="b_rates", docs="docs/experiments.md §5.4 (B1–B3)", sizes=SIZES, groups={"b_s1": s1_runs},
              figures=FIGURES, needs={k: ("b_s1",) for k in FIGURES}, work={"b_s1": _b_s1},
              memory={"b_s1": _memory}, probes={"b_s1": [dict(), dict(steps=100, checkpoints=[0, 50, 100]),
             dict(probe=3, steps=100, checkpoints=[0, 50, 100]),
             dict(steps=100, checkpoints=[0, 50, 100], cell="diaggate"),
             dict(steps=100, checkpoints=[0, 50, 100], H=64)]})
