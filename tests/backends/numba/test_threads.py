"""Tests of lwsim/backends/numba/threads.py (laid out like the code: docs/testing.md).

The numba backend's direct BLAS calls (lwsim/backends/numba/blas.py) against NumPy in float64.

gemm / gemm_tn take row-major views of bigger arrays (row stride ≠ row length), β ∈ {0, ½, 1},
the column-blocked path of thin products (m ≤ THIN_ROWS, m·n·k > 10⁶), k = 0, one-row views with
arbitrary strides, and refuse operands whose columns are not adjacent."""


import pytest


def test_a_forked_child_builds_its_own_thread_pool():
    """The chunk pool of the numba backend survives a fork as a pool without threads; the child must
    not wait on it (it used to hang forever: mutmut's children, multiprocessing's fork start method)."""
    import os
    import signal
    import time

    from lwsim.backends.numba import threads
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    threads.run_parallel([lambda: time.sleep(0.01), lambda: time.sleep(0.01)])   # the parent's pool
    assert threads._POOL
    pid = os.fork()
    if pid == 0:                                          # the child: done in time or killed by the alarm
        signal.alarm(20)
        threads.run_parallel([lambda: time.sleep(0.01), lambda: time.sleep(0.01)])
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "the forked child hung on the parent's pool"
