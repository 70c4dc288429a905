"""What a study declares to the engine (docs/project.md, "Studies").

A study is one experiment of the papers in one place (a module, or a small package when it is
large, under ``lwsim/figures/studies/``): its run groups per preset, its registered experiment
functions, its figures, its finding rules and its cost model. The engine (planning, runner,
cache, Dask, warm-up, cost model, timing, FINDINGS.md) reads only these declarations, through
the registry ``lwsim.figures.studies``. This module imports no study.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .presets import check_sizes


@dataclass(frozen=True)
class Study:
    """One study's declarations.

    name: short name (the module's); docs: its docs section.
    sizes: size key → {preset → configuration dict}: the study's own sizes at every preset of
        ``presets.PRESET_NAMES`` (its run groups read them; ``studies.preset_sizes`` gathers them).
    groups: run group → ``fn(preset, backend) -> [Run]`` (the runs of that group at a preset).
    figures: figure id → ``fn(results) -> (matplotlib figure, JSON data)``, where ``results`` is
        {group: [(config, result)]}; needs: figure id → the run groups it reads.
    titles: finding number → title, for the findings written in the standard format
        (``findings(rendered) -> {k: (k, verdict, [items], rule)}``: headline table, the
        training-dtype table and a section "## k. title" each).
    headline: ``fn(rendered) -> [(k, title, verdict or None)]``: headline rows of findings that
        write their own section (in ``after``).
    drawings: ``fn(results, fig_ids, out) -> {key: (fn, args)}``: more drawing (e.g. the figures
        redrawn under each null), run as ``fn(*args)`` in the figures' process pool beside them;
        the values come back to ``extra`` as ``drawn`` {key: value}. ``fn`` and ``args`` must pickle.
    extra: ``fn(results, rendered, out, drawn) -> value`` run once after the figures are drawn (e.g.
        findings under each null, from ``drawn``); its value is passed to ``before``/``after`` as ``extra``.
    before / after: ``fn(rendered=, results=, extra=) -> [lines]``: FINDINGS.md sections placed
        before / after the numbered sections.
    work: experiment → ``fn(config) -> {term: count}`` for the cost model (cost.py);
    memory: experiment → ``fn(config) -> {"outputs": bytes (replaces the generic outputs term),
        "chunk": bytes (added to the chunk term)}`` for the peak-memory model;
    probes: experiment → list of config overrides timed by ``--calibrate``.
    tidy: ``fn(results) -> [(group, experiment, config, [row])]``: the study's rows of the results
        table ``results.csv.gz`` (lwsim/figures/tidy.py), per run one dict of the axis and
        measured columns (tidy.AXES, tidy.MEASURES) per lag × N; none for groups not in ``results``.
    """
    name: str
    docs: str
    sizes: Mapping[str, Mapping[str, dict]] = field(default_factory=dict)
    groups: Mapping[str, Callable] = field(default_factory=dict)
    figures: Mapping[str, Callable] = field(default_factory=dict)
    needs: Mapping[str, tuple] = field(default_factory=dict)
    titles: Mapping[int, str] = field(default_factory=dict)
    findings: Callable | None = None
    headline: Callable | None = None
    drawings: Callable | None = None
    extra: Callable | None = None
    before: Callable | None = None
    after: Callable | None = None
    work: Mapping[str, Callable] = field(default_factory=dict)
    memory: Mapping[str, Callable] = field(default_factory=dict)
    probes: Mapping[str, list] = field(default_factory=dict)
    tidy: Callable | None = None

    def __post_init__(self):
        check_sizes(self.name, self.sizes)
        missing = set(self.figures) ^ set(self.needs)
        if missing:
            raise ValueError(f"study {self.name!r}: figures and needs must name the same ids, "
                             f"differing in {sorted(missing)}")
        if bool(self.titles) != (self.findings is not None):
            raise ValueError(f"study {self.name!r}: titles and findings go together")


def check(studies: tuple[Study, ...]) -> None:
    """Raise ValueError when two studies declare the same sizes key, run group, figure, finding or
    experiment cost entry, or a figure needs a group no study declares."""
    seen: dict[str, dict[Any, str]] = {"sizes": {}, "group": {}, "figure": {}, "finding": {}, "work": {}}
    for s in studies:
        for kind, keys in (("sizes", s.sizes), ("group", s.groups), ("figure", s.figures), ("finding", s.titles),
                           ("work", s.work)):
            for k in keys:
                if k in seen[kind]:
                    raise ValueError(f"{kind} {k!r} declared by studies {seen[kind][k]!r} and {s.name!r}")
                seen[kind][k] = s.name
    for s in studies:
        for fig, gs in s.needs.items():
            for g in gs:
                if g not in seen["group"]:
                    raise ValueError(f"figure {fig!r} of study {s.name!r} needs run group {g!r}, declared by no study")
