"""Which runs each figure needs, for a preset (docs/experiments.md §5.3–5.4)."""
from __future__ import annotations

from .presets import A_CELLS, B_MODELS, B_S2_MODELS, PRESETS
from .runner import Run

FIG_NEEDS = {
    **{f"A{i}": ("a_main",) for i in range(1, 10)},
    "A10": ("a_main", "a_compare"), "A11": ("a_fidelity",), "A12": ("a_theory",),
    "A14": ("a_main",), "A13": ("a_conventions",),
    "A15": ("a_behaviour",),
    "B1": ("b_s1",), "B2": ("b_s1",), "B3": ("b_s1",),
    "B4": ("b_s2",), "B5": ("b_s2",), "B6": ("b_s2",),
    "B7": ("b_expansion",), "B8": ("b_expansion",),
}
THEORY_LAWS = ("exponential", "power", "logarithmic")
THEORY_ALPHAS = (1.3, 1.6, 2.0)
EXPANSION_CELLS = ("sharedgate", "diaggate")


def group_runs(group, preset, backend):
    P = PRESETS[preset]
    if group in ("a_main", "a_compare"):
        c = P["a_main"]
        base = {k: v for k, v in c.items() if k not in ("seeds", "optimizers", "compare_optimizers",
                                                       "compare_seeds")}
        if group == "a_main":
            points = [(cell, s, "adamw") for cell in A_CELLS for s in c["seeds"]]
        else:
            points = [(cell, s, o) for cell in A_CELLS for s in c["compare_seeds"]
                      for o in c["compare_optimizers"]]
        return [Run.make("a_main", **base, cell=cell, seed=s, optimizer=o, backend=backend)
                for cell, s, o in points]
    if group == "a_fidelity":
        c = P["a_fidelity"]
        base = {k: v for k, v in c.items() if k not in ("seeds", "optimizers")}
        return [Run.make("a_fidelity", **base, cell=cell, seed=s, optimizer=o, backend=backend)
                for cell in A_CELLS for o in c["optimizers"] for s in c["seeds"]]
    if group == "a_conventions":                      # A13 (docs/fidelity.md)
        from .experiments_fidelity import conventions_runs
        return conventions_runs(preset, backend)
    if group == "a_behaviour":                        # A15 (docs/experiments.md §5.6)
        from .experiments_behaviour import behaviour_runs
        return behaviour_runs(preset, backend)
    if group == "a_theory":
        c = P["a_theory"]
        base = {k: v for k, v in c.items() if k != "seeds"}
        return [Run.make("a_theory", **base, law=law, alpha=a, seed=s)
                for law in THEORY_LAWS for a in THEORY_ALPHAS for s in c["seeds"]]
    if group == "b_s1":
        c = P["b_s1"]
        base = {k: v for k, v in c.items() if k != "seeds"}
        return [Run.make("b_s1", **base, cell=m, seed=s, backend=backend) for m in B_MODELS for s in c["seeds"]]
    if group == "b_s2":
        c = P["b_s2"]
        base = {k: v for k, v in c.items() if k not in ("seeds", "tasks")}
        return [Run.make("b_s2", **base, cell=m, optimizer=o, lr=lr, task=t, seed=s, backend=backend)
                for t in c["tasks"] for (m, o, lr) in B_S2_MODELS for s in c["seeds"]]
    if group == "b_expansion":
        c = P["b_expansion"]
        base = {k: v for k, v in c.items() if k != "seeds"}
        return [Run.make("b_expansion", **base, cell=m, seed=s) for m in EXPANSION_CELLS for s in c["seeds"]]
    raise ValueError(f"unknown run group {group!r}")


def with_train_dtype(runs, train_dtype):
    """The runs with ``train_dtype`` replaced where they train (runs without a training keep theirs)."""
    if train_dtype is None:
        return list(runs)
    if train_dtype not in ("float32", "float64"):
        raise ValueError(f"train_dtype must be 'float32' or 'float64', got {train_dtype!r}")
    return [Run.make(r.experiment, **dict(r.config, train_dtype=train_dtype)) if "train_dtype" in r.config else r
            for r in runs]


def plan(fig_ids, preset, backend, train_dtype=None):
    """{group: [Run, ...]} for the groups the figures need; ``train_dtype`` overrides the preset's
    training dtype (docs/experiments.md §5.3)."""
    groups = sorted({g for f in fig_ids for g in FIG_NEEDS[f]})
    return {g: with_train_dtype(group_runs(g, preset, backend), train_dtype) for g in groups}


def train_dtype_of(groups):
    """The training dtype of planned runs: "float32", "float64", "mixed" or None (no training)."""
    kinds = {r.config["train_dtype"] for runs in groups.values() for r in runs if "train_dtype" in r.config}
    return None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
