"""The registry of studies: the one place where the engine learns what studies exist (docs/project.md,
"Studies"). Adding a study is one new module under this package and one line below; a study kept
outside lwsim (a researcher's own) is named in the environment variable ``LWSIM_STUDIES``
(comma-separated module names, each with a ``STUDY``), which worker processes inherit.

Order matters only for FINDINGS.md's sections before and after the numbered findings; figures are
listed in natural order of their ids, findings by number.
"""
from __future__ import annotations

import importlib
import os
import re

from ..presets import PRESET_NAMES
from ..study import Study, check
from . import b_anisotropy, b_expansion, b_rates, behaviour, conventions, delay, fidelity, main, optimizers, theory_check

ENV = "LWSIM_STUDIES"


def plugin_studies(names=None):
    """The studies of the modules named in ``names`` (default: ``$LWSIM_STUDIES``, comma-separated),
    in that order. ImportError names a module that does not import, TypeError one without a STUDY."""
    if names is None:
        names = os.environ.get(ENV, "")
    out = []
    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError as exc:
            raise ImportError(f"{ENV} names the module {name!r}, which does not import: {exc}") from exc
        study = getattr(mod, "STUDY", None)
        if not isinstance(study, Study):
            raise TypeError(f"{ENV} names the module {name!r}, which has no STUDY "
                            f"(a lwsim.figures.study.Study), got {type(study).__name__}")
        out.append(study)
    return tuple(out)


STUDIES = tuple(m.STUDY for m in (
    main, optimizers, fidelity, theory_check, conventions, behaviour, delay, b_rates, b_anisotropy, b_expansion,
)) + plugin_studies()
check(STUDIES)


def _natural(fig_id):
    m = re.fullmatch(r"([A-Za-z]+)(\d+)", fig_id)
    return (m.group(1), int(m.group(2))) if m else (fig_id, 0)


def figures():
    """{figure id: draw function} of every study, ids in natural order (A1 … A15, B1 … B8)."""
    out = {k: f for s in STUDIES for k, f in s.figures.items()}
    return {k: out[k] for k in sorted(out, key=_natural)}


def needs():
    """{figure id: run groups it reads}."""
    return {k: tuple(v) for s in STUDIES for k, v in s.needs.items()}


def preset_sizes(preset):
    """{size key: configuration dict} of every study at ``preset`` (one of presets.PRESET_NAMES):
    what the studies' run groups build their runs from (docs/presets.md)."""
    if preset not in PRESET_NAMES:
        raise ValueError(f"preset must be one of {list(PRESET_NAMES)}, got {preset!r}")
    return {k: per[preset] for s in STUDIES for k, per in s.sizes.items()}


def group_builders():
    """{run group: fn(preset, backend) -> [Run]}."""
    return {g: fn for s in STUDIES for g, fn in s.groups.items()}


def titles():
    """{finding number: title} of the findings in the standard format, by number."""
    out = {k: t for s in STUDIES for k, t in s.titles.items()}
    return {k: out[k] for k in sorted(out)}


def work():
    return {e: fn for s in STUDIES for e, fn in s.work.items()}


def memory():
    return {e: fn for s in STUDIES for e, fn in s.memory.items()}


def probes():
    return {e: p for s in STUDIES for e, p in s.probes.items()}
