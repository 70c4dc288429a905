"""Which runs each figure needs, for a preset (docs/experiments.md §5.3–5.4), as the studies declare
them (lwsim.figures.studies)."""
from __future__ import annotations

from . import studies
from .run import Run

FIG_NEEDS = studies.needs()


def group_runs(group, preset, backend):
    """The runs of run group ``group`` at ``preset`` (the study that declares the group builds them)."""
    builders = studies.group_builders()
    if group not in builders:
        raise ValueError(f"unknown run group {group!r}")
    return builders[group](preset, backend)


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
