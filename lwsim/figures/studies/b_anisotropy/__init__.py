"""[B]'s S2 study (B4–B6, finding 8; docs/experiments.md §5.4–5.5): anisotropy of Jacobian products
and of the gradient covariance over checkpoints, per task × model (experiment.py), its figures
(figures.py) and finding 8 under both conventions (findings.py, which also reads the S1 study's B1)."""
from __future__ import annotations

from ...config import declared
from ...run import Run
from ...study import Study
from ...workload import fwd, nlags
from . import experiment  # noqa: F401  (registers b_s2)
from .figures import B_S2_MODELS, FIGURES
from .findings import TITLES
from .findings import findings as finding_8   # not the name ``findings``: that is the submodule


B_TASKS = ("adding", "ar2", "movingavg", "delaysum", "narma10")
# [B]'s protocol at paper (docs/fidelity.md, "[B]"); b_s2 also reports the author's conventions
# (suffix _author).
_PAPER = dict(train_dtype="float32", T=120, D=6, H=64, batch=64, steps=1200, checkpoints=[0, 400, 800, 1200],
              seeds=list(range(20)), tasks=list(B_TASKS), n_examples=256,
              lags=[1, 2, 4, 8, 12, 16, 24, 32, 40], n_triples=64, protocol="author", probe=64,
              task_inputs="author", conventions=["lwsim", "author"], b6_errorbars="quartiles")
# quick: lwsim's protocol (fresh batches, exact quantities) and the author's conventions beside
_QUICK = dict(_PAPER, T=48, H=32, steps=300, checkpoints=[0, 150, 300], seeds=[0, 1],
              n_examples=64, lags=[1, 2, 4, 8, 12, 16, 24, 32, 40], n_triples=12, protocol="lwsim",
              task_inputs="lwsim", b6_errorbars="iqr")
# The b_s2 group's sizes per preset (docs/presets.md).
SIZES = {"b_s2": {
    "smoke": dict(_QUICK, T=16, H=6, steps=4, checkpoints=[0, 4], seeds=[0], n_examples=12,
                  batch=8, lags=[1, 2, 4, 8], n_triples=3, tasks=["adding", "ar2"]),
    "quick": _QUICK,
    "medium": dict(_QUICK, T=80, H=48, steps=600, checkpoints=[0, 300, 600], seeds=[0, 1, 2],
                   n_examples=128, n_triples=20),
    "paper": _PAPER, "paper-v1": _PAPER}}


def s2_runs(preset, backend):
    c = SIZES["b_s2"][preset]
    base = {k: v for k, v in c.items() if k not in ("seeds", "tasks")}
    return [Run.make("b_s2", **base, cell=m, optimizer=o, lr=lr, task=t, seed=s, backend=backend)
            for t in c["tasks"] for (m, o, lr) in B_S2_MODELS for s in c["seeds"]]


def _b_s2(c):
    T, H, f = c["T"], c["H"], fwd(c)
    n_ck, L = len(declared(c, "checkpoints", [0])), nlags(c)
    n_conv = len(c["conventions"]) if isinstance(declared(c, "conventions"), list) else 1
    return {"one": 1.0, "train": c["steps"] * c["batch"] * T * 3 * f,
            "diag": n_conv * n_ck * (declared(c, "n_triples", 1) * L * (T * H * H + H ** 3)
                                     + declared(c, "n_examples", 1) * T * 3 * f * 4),
            "steps": c["steps"] * c["batch"] * T * 3 + n_conv * n_ck * (declared(c, "n_triples", 1) * L * T
                                                                         + declared(c, "n_examples", 1) * T * 4)}


STUDY = Study(name="b_anisotropy", docs="docs/experiments.md §5.4 (B4–B6), §5.5 (finding 8)", sizes=SIZES, groups={"b_s2": s2_runs},
              figures=FIGURES, needs={k: ("b_s2",) for k in FIGURES}, titles=TITLES, findings=finding_8,
              work={"b_s2": _b_s2}, probes={"b_s2": [dict(), dict(steps=100, checkpoints=[0, 50, 100]),
             dict(n_triples=4, n_examples=16, steps=100, checkpoints=[0, 50, 100]),
             dict(steps=100, checkpoints=[0, 50, 100], cell="diaggate"),
             dict(steps=100, checkpoints=[0, 50, 100], H=64)]})
