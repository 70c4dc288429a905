"""Tests of lwsim/figures/plan.py (laid out like the code: docs/testing.md).

Mutation-testing kills for the figure engine: lwsim/figures/plan.py, runcache.py, timing.py and
warmup.py (issue 32, docs/testing.md). Small hand-built runs, results and profiles; no grid runs.

The run profile (lwsim/figures/timing.py, docs/experiments.md §5.3): parts add up to the wall
time, nested parts and numba compilation are counted once where they belong, the profile is
stored with the cached run and summed per experiment for ``--profile``."""


import pytest

from lwsim.figures import plan as P
from lwsim.figures.run import Run


R32 = Run.make("x", train_dtype="float32", a=1)


R64 = Run.make("x", train_dtype="float64", a=1)


NOTRAIN = Run.make("y", a=2)


# ----------------------------------------------------------------------------------------------
# group_runs
# ----------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------- plan.py
def test_group_runs_unknown_group_is_named():
    with pytest.raises(ValueError, match=r"\bnope\b"):
        P.group_runs("nope", "smoke", "numpy")


def test_group_runs_builds_the_group_at_the_preset_and_backend():
    for backend in ("numpy", "numba"):
        runs = P.group_runs("a_main", "smoke", backend)
        assert runs and {r.experiment for r in runs} == {"a_main"}
        assert {r.config["backend"] for r in runs} == {backend}


# ----------------------------------------------------------------------------------------------
# with_train_dtype
# ----------------------------------------------------------------------------------------------


def test_with_train_dtype():
    assert P.with_train_dtype((R32, NOTRAIN), None) == [R32, NOTRAIN]          # a list, unchanged
    assert P.with_train_dtype((R32, NOTRAIN), "float64") == [R64, NOTRAIN]     # only where it trains
    assert P.with_train_dtype([R64], "float32") == [R32]
    with pytest.raises(ValueError, match=r"^train_dtype\b"):
        P.with_train_dtype([R32], "float16")


# ----------------------------------------------------------------------------------------------
# plan
# ----------------------------------------------------------------------------------------------


def test_plan_groups_sorted_and_dtype_passed():
    groups = P.plan(["B7", "A10"], "smoke", "numpy")
    assert list(groups) == ["a_compare", "a_main", "b_expansion"]             # sorted, each group once
    assert {r.config["train_dtype"] for r in groups["a_main"]} == {"float32"}   # the smoke preset's
    g64 = P.plan(["A1"], "smoke", "numpy", train_dtype="float64")
    assert list(g64) == ["a_main"] and {r.config["train_dtype"] for r in g64["a_main"]} == {"float64"}
    assert P.plan([], "smoke", "numpy") == {}


# ----------------------------------------------------------------------------------------------
# train_dtype_of
# ----------------------------------------------------------------------------------------------


def test_train_dtype_of():
    assert P.train_dtype_of({}) is None
    assert P.train_dtype_of({"g": [NOTRAIN]}) is None
    assert P.train_dtype_of({"g": [R32, NOTRAIN, R32]}) == "float32"
    assert P.train_dtype_of({"g": [R64], "h": [NOTRAIN]}) == "float64"
    assert P.train_dtype_of({"g": [R64], "h": [R32]}) == "mixed"


def test_train_dtype_override_and_findings_section():
    from lwsim.figures.findings import TITLES, dtype_lines
    from lwsim.figures.plan import plan, train_dtype_of
    g32 = plan(["A1", "B7"], "smoke", "numba")
    g64 = plan(["A1", "B7"], "smoke", "numba", train_dtype="float64")
    assert train_dtype_of(g32) == "float32" and train_dtype_of(g64) == "float64"
    assert g32["b_expansion"] == g64["b_expansion"]            # no training: the same runs
    assert all(a.key != b.key for a, b in zip(g32["a_main"], g64["a_main"]))
    assert train_dtype_of({"x": g32["b_expansion"]}) is None
    rows = {k: (k, "reproduced", [], "") for k in TITLES}
    same = dtype_lines(rows, "float32", ("float64", dict(rows)), "quick")
    assert "no verdict moved." in " ".join(same)
    trows = {**rows, 3: (3, "not reproduced", [], "")}
    moved = dtype_lines(rows, "float32", ("float64", trows), "quick")
    assert "verdict(s) moved: 3." in " ".join(moved)
    assert "| 3 | reproduced | not reproduced |" in moved
    absent = " ".join(dtype_lines(rows, "float32", ("float64", None), "quick"))
    assert "not computed" in absent and "--train-dtype float64" in absent
