"""[A] main grid (A1–A9, A14; findings 1–5 under each null; docs/experiments.md §5.3–5.5).

experiment.py: the ``a_main`` experiment (train on multilag, then envelope, time scales, matched
statistic, tail fits, Ĥ_N under each null); figures.py: A1–A9; master.py: A14; findings.py:
findings 1–5 and the trainings' R²; nulls.py: findings 1–5 under each null and floor, with the
nulls' figures <id>_<null>.png; tidy.py: the runs' rows of results.csv.gz.
"""
from __future__ import annotations

from ...presets import A_CELLS
from ...run import Run
from ...study import Study
from ...workload import a_main_work
from . import experiment  # noqa: F401  (registers a_main)
from .figures import FIGURES as _FIGS
from .findings import TITLES, training_lines
from .findings import findings as findings_1_5   # not the name ``findings``: that is the submodule
from .master import fig_a14
from .nulls import findings_by_variant, null_drawings, null_lines
from .sizes import SIZES
from .tidy import tidy as _tidy

FIGURES = {**_FIGS, "A14": fig_a14}


def main_runs(preset, backend):
    """The a_main runs: every [A] cell × seed, trained with AdamW."""
    c = SIZES["a_main"][preset]
    base = {k: v for k, v in c.items() if k not in ("seeds", "optimizers")}
    return [Run.make("a_main", **base, cell=cell, seed=s, optimizer="adamw", backend=backend)
            for cell in A_CELLS for s in c["seeds"]]


def _drawings(results, fig_ids, out):
    """The figures under each null and floor, drawn in the engine's pool (the nulls' written into ``out``)."""
    return null_drawings(results, fig_ids, FIGURES, out=out)


def _extra(results, rendered, out, drawn=None):
    """Findings 1–5 under each null and floor, from the figures ``_drawings`` drew (rebuilt
    here when missing; the nulls' figures then written into ``out``)."""
    return findings_by_variant(results, rendered, FIGURES, out=out, drawn=drawn)


def _before(rendered, results, extra):
    return null_lines(extra or {}, results or {}) + training_lines(rendered)


STUDY = Study(name="main", docs="docs/experiments.md §5.3–5.5 (A1–A9, A14, findings 1–5)",
              sizes=SIZES, groups={"a_main": main_runs}, figures=FIGURES, needs={k: ("a_main",) for k in FIGURES},
              titles=TITLES, findings=findings_1_5, drawings=_drawings, extra=_extra, before=_before, tidy=_tidy,
              work={"a_main": a_main_work}, probes={"a_main": [dict(epochs=2, n_train=64, n_diag=64), dict(epochs=6, n_train=64, n_diag=64),
               dict(epochs=2, n_train=64, n_diag=64, batch=8), dict(epochs=2, n_train=64, n_diag=192),
               dict(epochs=2, n_train=64, n_diag=64, K=3), dict(epochs=2, n_train=64, n_diag=64, H=16),
               dict(), dict(cell="lstm"), dict(epochs=10)]})
