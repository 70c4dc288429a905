"""Tests of lwsim/figures/run.py (laid out like the code: docs/testing.md).

Mutation tests of lwsim/figures/runner.py, run.py and worker.py (issue 32): run_grid on trivial
registered experiments (in this process, and once on the spawned pool), the thread caps, the failure
text and the retries.

Compile once and say so; progress to the end (docs/experiments.md §5.3): the warm-up's runs,
its message, bar and marker, and the drawing bar."""


import os

import numba
import pytest

from lwsim.figures import run as R
from lwsim.figures.run import EXPERIMENTS, Run, RunError


_KEYS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


# ----------------------------------------------------------------------------------------------
# experiment
# ----------------------------------------------------------------------------------------------


def test_experiment_decorator(monkeypatch):
    monkeypatch.setattr(R, "EXPERIMENTS", {})

    @R.experiment("e1")
    def f(c):
        return c
    assert R.EXPERIMENTS == {"e1": f} and f({"a": 1}) == {"a": 1}


# ----------------------------------------------------------------------------------------------
# Run
# ----------------------------------------------------------------------------------------------


def test_run_key():
    r = Run.make("e", b=2, a=1)
    assert r.config_json == '{"a": 1, "b": 2}' and r.config == {"a": 1, "b": 2}
    import hashlib
    blob = '{"config": {"a": 1, "b": 2}, "experiment": "e", "version": 1}'
    assert r.key == hashlib.sha256(blob.encode()).hexdigest()[:20] and len(r.key) == 20
    assert R.RESULTS_VERSION == 1


# ----------------------------------------------------------------------------------------------
# save_result
# ----------------------------------------------------------------------------------------------


def test_save_result_passes_time_and_profile(monkeypatch):
    import lwsim.figures.runcache as RC
    seen = []
    monkeypatch.setattr(RC, "save", lambda *a: seen.append(a))
    r = Run.make("e")
    R.save_result("d", r, {"x": 1}, elapsed_s=2.0, profile={"wall": 2.0})
    R.save_result("d", r, {"x": 1})
    assert seen == [("d", r, {"x": 1}, 2.0, {"wall": 2.0}), ("d", r, {"x": 1}, None, None)]


# ----------------------------------------------------------------------------------------------
# thread_env
# ----------------------------------------------------------------------------------------------


def test_thread_env():
    assert R.thread_env(3) == {k: "3" for k in _KEYS}
    assert R.thread_env(2.0)["NUMBA_NUM_THREADS"] == "2"


# ----------------------------------------------------------------------------------------------
# worker_thread_env
# ----------------------------------------------------------------------------------------------


def test_worker_thread_env_restores(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    with R.worker_thread_env(2):
        assert all(os.environ[k] == "2" for k in _KEYS)
    assert os.environ["OMP_NUM_THREADS"] == "7" and "MKL_NUM_THREADS" not in os.environ
    with pytest.raises(KeyError):
        with R.worker_thread_env(4):
            raise KeyError("x")
    assert os.environ["OMP_NUM_THREADS"] == "7" and "MKL_NUM_THREADS" not in os.environ


def test_worker_thread_env_sets_and_restores(monkeypatch):
    import os
    from lwsim.figures.runner import worker_thread_env
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    with pytest.raises(RuntimeError):
        with worker_thread_env(3):
            assert os.environ["OMP_NUM_THREADS"] == "3" and os.environ["NUMBA_NUM_THREADS"] == "3"
            raise RuntimeError("a failing body still restores the environment")
    assert os.environ["OMP_NUM_THREADS"] == "7" and "NUMBA_NUM_THREADS" not in os.environ


# ----------------------------------------------------------------------------------------------
# limit_threads
# ----------------------------------------------------------------------------------------------


def test_limit_threads(monkeypatch):
    seen = []
    monkeypatch.setattr(numba, "set_num_threads", seen.append)
    import threadpoolctl
    monkeypatch.setattr(threadpoolctl, "threadpool_limits", lambda n: seen.append(("blas", n)))
    R.limit_threads(None)
    assert seen == []
    R.limit_threads(1)
    assert seen == [1, ("blas", 1)]
    seen.clear()
    R.limit_threads(10 ** 6)                      # capped at numba's maximum
    assert seen == [numba.config.NUMBA_NUM_THREADS, ("blas", 10 ** 6)]
    seen.clear()
    R.limit_threads(0)                            # at least one numba thread
    assert seen[0] == 1


# ----------------------------------------------------------------------------------------------
# _failure_text
# ----------------------------------------------------------------------------------------------


def test_failure_text():
    # private: its public callers report failures of runs executed in worker processes; the text of each exception kind needs the helper
    assert R._failure_text(RunError("Traceback...\nValueError: x")) == "Traceback...\nValueError: x"
    assert R._failure_text(ValueError("bad")) == "ValueError: bad"
    assert R._failure_text(KeyError("k")) == "KeyError: 'k'"
