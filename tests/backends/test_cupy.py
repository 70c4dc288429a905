"""Tests of lwsim/backends/cupy.py (laid out like the code: docs/testing.md).

backend="cupy" equals the NumPy reference (skips cleanly without CuPy/CUDA; CI has none)."""


import sys

import numpy as np
import pytest

import lwsim
from lwsim.backends import cupy as cupy_backend

from cellcases import CASES, case_id, make, random_data, random_params, rel_err


needs_gpu = pytest.mark.skipif(not cupy_backend.available(), reason="CuPy with a CUDA device is not available")


# ----------------------------------------------------------------------------------------------
# available
# ----------------------------------------------------------------------------------------------


def test_clear_error_without_cupy(monkeypatch):
    if cupy_backend.available():
        pytest.skip("a GPU is present")
    monkeypatch.setitem(sys.modules, "cupy", None)          # import cupy → ImportError
    cell = lwsim.make_cell("rnn", 2, 3)
    p = cell.init_params(0)
    with pytest.raises(ImportError, match=r"pip install 'lwsim\[gpu\]'"):
        cell.forward(p, np.zeros((2, 1, 2)), backend="cupy")


# ----------------------------------------------------------------------------------------------
# forward
# ----------------------------------------------------------------------------------------------


@needs_gpu
@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cupy_matches_numpy(case, dtype):
    cell = make(case, dtype=dtype)
    p = random_params(cell, 0)
    x, y = random_data(cell, 6, 3, 0)
    tol = 1e-10 if dtype == "float64" else 1e-4
    l_np, g_np = cell.loss_and_grad(p, x, y)
    l_cp, g_cp = cell.loss_and_grad(p, x, y, backend="cupy")
    assert abs(l_cp - l_np) <= tol * abs(l_np)
    for k in g_np:
        assert isinstance(g_cp[k], np.ndarray) and g_cp[k].dtype == cell.dtype
        assert rel_err(g_cp[k], g_np[k]) <= tol, k
    assert rel_err(cell.jacobians(p, x, backend="cupy"), cell.jacobians(p, x)) <= tol
    assert rel_err(cell.forward(p, x, backend="cupy").h, cell.forward(p, x).h) <= tol
