"""Tests of lwsim/figures/study.py (laid out like the code: docs/testing.md).

The study registry (docs/project.md, "Studies"): what the engine reads from the studies."""


from __future__ import annotations

import pytest

from lwsim.figures.study import Study, check


def _noop(*a, **k):
    return []


# ---------------------------------------------------------------- each study owns its sizes
def _sizes(**per):
    return {p: dict(per) for p in ("smoke", "quick", "medium", "paper", "paper-v1")}


def test_check_refuses_a_group_figure_or_finding_declared_twice():
    a = Study("a", "x", groups={"g": _noop}, figures={"F1": _noop}, needs={"F1": ("g",)},
              titles={1: "t"}, findings=_noop)
    for b in (Study("b", "x", groups={"g": _noop}),
              Study("b", "x", figures={"F1": _noop}, needs={"F1": ("g",)}),
              Study("b", "x", titles={1: "u"}, findings=_noop)):
        with pytest.raises(ValueError, match=r"\bdeclared by studies\b"):
            check((a, b))
    check((a, Study("b", "x", groups={"h": _noop}, figures={"F2": _noop}, needs={"F2": ("g", "h")})))


def test_check_refuses_a_figure_needing_an_undeclared_group():
    with pytest.raises(ValueError, match=r"\bnope\b"):
        check((Study("a", "x", figures={"F1": _noop}, needs={"F1": ("nope",)}),))


def test_study_declaration_is_consistent():
    with pytest.raises(ValueError, match="figures and needs"):
        Study("a", "x", figures={"F1": _noop}, needs={})
    with pytest.raises(ValueError, match="titles and findings"):
        Study("a", "x", titles={1: "t"})


def test_a_study_declares_its_sizes_at_every_preset():
    Study("a", "x", sizes={"g": _sizes(n=1)})
    missing = _sizes(n=1)
    del missing["paper-v1"]
    with pytest.raises(ValueError, match=r"\bsizes\['g'\]"):
        Study("a", "x", sizes={"g": missing})
    with pytest.raises(ValueError, match=r"\bsizes\['g'\]"):
        Study("a", "x", sizes={"g": dict(_sizes(n=1), huge={})})
    with pytest.raises(ValueError, match=r"\bsizes\['g'\]"):
        Study("a", "x", sizes={"g": 3})
    with pytest.raises(TypeError, match=r"\bsizes\['g'\]\['quick'\]"):
        Study("a", "x", sizes={"g": dict(_sizes(n=1), quick=[1])})
    with pytest.raises(TypeError, match=r"\bsizes must\b"):
        Study("a", "x", sizes=[("g", 1)])


def test_check_refuses_a_sizes_key_declared_twice():
    with pytest.raises(ValueError, match=r"\bsizes 'g'"):
        check((Study("a", "x", sizes={"g": _sizes(n=1)}), Study("b", "x", sizes={"g": _sizes(n=2)})))
