"""The study registry (docs/project.md, "Studies"): what the engine reads from the studies."""
from __future__ import annotations

import pytest

from lwsim.figures import cost, studies
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.study import Study, check


def _noop(*a, **k):
    return []


def test_check_refuses_a_group_figure_or_finding_declared_twice():
    a = Study("a", "x", groups={"g": _noop}, figures={"F1": _noop}, needs={"F1": ("g",)},
              titles={1: "t"}, findings=_noop)
    for b in (Study("b", "x", groups={"g": _noop}),
              Study("b", "x", figures={"F1": _noop}, needs={"F1": ("g",)}),
              Study("b", "x", titles={1: "u"}, findings=_noop)):
        with pytest.raises(ValueError, match="declared by studies 'a' and 'b'"):
            check((a, b))
    check((a, Study("b", "x", groups={"h": _noop}, figures={"F2": _noop}, needs={"F2": ("g", "h")})))


def test_check_refuses_a_figure_needing_an_undeclared_group():
    with pytest.raises(ValueError, match="needs run group 'nope'"):
        check((Study("a", "x", figures={"F1": _noop}, needs={"F1": ("nope",)}),))


def test_study_declaration_is_consistent():
    with pytest.raises(ValueError, match="figures and needs"):
        Study("a", "x", figures={"F1": _noop}, needs={})
    with pytest.raises(ValueError, match="titles and findings"):
        Study("a", "x", titles={1: "t"})


def test_registry_lists_every_figure_once_in_natural_order():
    ids = list(studies.figures())
    assert ids == [f"A{i}" for i in range(1, 17)] + [f"B{i}" for i in range(1, 9)]
    assert set(studies.needs()) == set(ids)
    assert list(studies.titles()) == list(range(1, 9))


@pytest.mark.parametrize("preset", ["smoke", "quick", "medium", "paper", "paper-v1"])
def test_every_group_builds_runs_of_registered_experiments_with_a_cost_model(preset):
    work = studies.work()
    for group, build in studies.group_builders().items():
        runs = build(preset, "numpy")
        assert runs, (preset, group)
        for r in runs:
            assert r.experiment in EXPERIMENTS, (group, r.experiment)
            assert r.experiment in work, (group, r.experiment)
            assert cost.work(r)[1] == r.experiment            # never the generic fallback


def test_each_study_docstring_names_its_figures_and_docs():
    import importlib
    for s in studies.STUDIES:
        mod = importlib.import_module(f"lwsim.figures.studies.{s.name}")
        doc = mod.__doc__ or ""
        assert "docs" in doc or ".md" in doc, s.name
        for fig in s.figures:
            assert fig in doc or fig[:1] + "1" in doc, (s.name, fig)
