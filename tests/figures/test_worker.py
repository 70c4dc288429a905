"""Tests of lwsim/figures/worker.py (laid out like the code: docs/testing.md).

Mutation tests of lwsim/figures/runner.py, run.py and worker.py (issue 32): run_grid on trivial
registered experiments (in this process, and once on the spawned pool), the thread caps, the failure
text and the retries."""


import pytest

from lwsim.figures.run import RunError
from lwsim.figures.worker import run_task


def test_run_task():
    res, sec, prof = run_task(dict, '{"a": 1}', threads=None)
    assert res == {"a": 1} and sec == prof["wall"] and sec >= 0
    with pytest.raises(RunError) as e:
        run_task(int, '{"a": 1}')
    msg = str(e.value)
    assert msg.startswith("Traceback (most recent call last):") and "TypeError" in msg
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_run_task_limits_threads(monkeypatch):
    import lwsim.figures.worker as W
    seen = []
    monkeypatch.setattr(W, "limit_threads", seen.append)
    run_task(dict, "{}", 3)
    assert seen == [3]


def test_run_task_profile_records_parts():
    """The run's profile is the active one: a part timed inside the experiment shows up in it."""
    import time
    from lwsim.figures import timing

    def fn(c):
        with timing.part("training"):
            time.sleep(0.05)
        return {}
    _, wall, prof = run_task(fn, "{}")
    assert prof["training"] >= 0.05 and wall >= prof["training"]
