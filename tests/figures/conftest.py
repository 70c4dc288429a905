"""Fixtures shared by the engine's tests (plan, warm-up, timing)."""
from __future__ import annotations

import pytest

from lwsim.figures import plan as P
from lwsim.figures.run import Run


@pytest.fixture
def smoke(monkeypatch):
    """group_runs(group, "smoke", backend) by hand: group "g" sizes experiment e, "h" sizes e differently
    and f; anything else is unknown (ValueError) or raises KeyError."""
    calls = []

    def fake(group, preset, backend):
        calls.append((group, preset, backend))
        if group == "g":
            return [Run.make("e", cell="gru", T=2, H=[1, 2], seed=7, optimizer="sgd", task="adding", backend=backend),
                    Run.make("e", cell="lstm", T=99, seed=8, optimizer="adamw", task="copy", backend=backend)]
        if group == "h":
            return [Run.make("e", cell="gru", T=3, seed=9), Run.make("f", cell="rnn", T=4)]
        if group == "k":
            raise KeyError(group)
        raise ValueError(group)
    monkeypatch.setattr(P, "group_runs", fake)
    return calls


@pytest.fixture(scope="module")
def point_detection():
    """The studies' detection tables on the point estimate |m̄| (``mean_bound="none"``) for the rest of
    the module: at the tests' tiny sizes the lower 99.9% bound of |m̄| (docs/statistics.md §3.3.3) leaves
    every window empty, and a provenance test needs windows that tell the right inputs from decoys."""
    import functools

    import lwsim.stats as st
    mp = pytest.MonkeyPatch()
    mp.setattr(st, "detection_table", functools.partial(st.detection_table, mean_bound="none"))
    yield
    mp.undo()
