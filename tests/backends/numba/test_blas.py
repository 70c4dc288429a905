"""Tests of lwsim/backends/numba/blas.py (laid out like the code: docs/testing.md).

The numba backend's direct BLAS calls (lwsim/backends/numba/blas.py) against NumPy in float64.

gemm / gemm_tn take row-major views of bigger arrays (row stride ≠ row length), β ∈ {0, ½, 1},
the column-blocked path of thin products (m ≤ THIN_ROWS, m·n·k > 10⁶), k = 0, one-row views with
arbitrary strides, and refuse operands whose columns are not adjacent."""


import numpy as np
import pytest
from numba import njit

from lwsim.backends.numba import blas


@njit
def _gemm(a, b, c, beta):
    blas.gemm(a, b, c, beta)


@njit
def _gemm_tn(a, b, c, beta):
    blas.gemm_tn(a, b, c, beta)


@njit
def _column_block(m, k, n):
    return blas.column_block(m, k, n)


@njit
def _window_steps(m):
    return blas.window_steps(m)


SHAPES = [(1, 1, 1), (3, 5, 2), (16, 128, 512), (16, 512, 128), (32, 17, 512), (40, 128, 512),
          (300, 17, 40), (1, 5, 1), (5, 1, 7)]


def _views(rng, m, k, n, dtype):
    """a (m, k), b (k, n), c (m, n) as interior blocks of bigger arrays (row stride > row length)."""
    a = rng.standard_normal((m + 2, k + 3)).astype(dtype)[1:m + 1, 2:k + 2]
    b = rng.standard_normal((k + 1, n + 5)).astype(dtype)[1:, 3:n + 3]
    c = rng.standard_normal((m, n + 4)).astype(dtype)[:, 1:n + 1]
    return a, b, c


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-13), (np.float32, 2e-6)])
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_gemm_on_views(m, k, n, beta, dtype, tol):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a, b, c = _views(rng, m, k, n, dtype)
    outside = c.base.copy()
    want = a.astype(np.float64) @ b.astype(np.float64) + beta * c.astype(np.float64)
    _gemm(a, b, c, dtype(beta))
    scale = np.abs(a).astype(np.float64) @ np.abs(b) + abs(beta) * np.abs(want)
    assert np.all(np.abs(c - want) <= tol * (scale + 1e-300)), np.max(np.abs(c - want) / scale)
    untouched = np.ones(outside.shape, bool)
    untouched[:, 1:n + 1] = False
    assert np.array_equal(c.base[untouched], outside[untouched])     # nothing written outside c


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-13), (np.float32, 2e-6)])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_gemm_tn_accumulates(m, k, n, dtype, tol):
    """c ← aᵀ b + c, a (k, m): the weight-gradient form, on views."""
    rng = np.random.default_rng(7 + m + k + n)
    at = rng.standard_normal((k + 2, m + 3)).astype(dtype)[1:k + 1, 2:m + 2]     # (k, m)
    _, b, c = _views(rng, m, k, n, dtype)
    want = at.T.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    _gemm_tn(at, b, c, dtype(1.0))
    scale = np.abs(at.T).astype(np.float64) @ np.abs(b) + np.abs(want)
    assert np.all(np.abs(c - want) <= tol * (scale + 1e-300))


def test_thin_products_are_blocked_and_exact():
    """m ≤ THIN_ROWS with m·n·k > 10⁶ goes in column blocks; each entry is still one dot product
    over k, so the blocked result equals the per-block products bit for bit."""
    rng = np.random.default_rng(3)
    m, k, n = 16, 128, 600
    assert m <= blas.THIN_ROWS and m * n * k > blas.SMALL_MNK
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    c = np.empty((m, n))
    _gemm(a, b, c, 0.0)
    nb = _column_block(m, k, n)
    assert nb * m * k <= blas.SMALL_MNK and nb < n
    for j0 in range(0, n, nb):
        part = np.empty((m, min(n, j0 + nb) - j0))
        _gemm(a, np.ascontiguousarray(b[:, j0:j0 + nb]), part, 0.0)
        assert np.array_equal(c[:, j0:j0 + nb], part)
    assert np.allclose(c, a @ b, rtol=1e-13, atol=1e-12)


def test_column_blocks_stay_under_the_small_matrix_bound_and_are_even():
    for m, k, n in ((16, 128, 512), (16, 512, 128), (16, 145, 512), (32, 128, 512), (17, 1000, 77),
                    (1, 10 ** 6, 3), (16, 128, 600)):
        nb = _column_block(m, k, n)
        blocks = -(-n // nb)
        assert 1 <= nb <= n and (nb * m * k <= blas.SMALL_MNK or nb == 1)
        last = n - (blocks - 1) * nb
        assert 2 * last >= nb, (m, k, n, nb, last)          # the last block is not a sliver
    assert _column_block(16, 512, 128) == 64 and _column_block(16, 128, 512) == 256


def test_empty_inner_dimension_scales_c():
    c = np.full((3, 4), 2.0)
    _gemm(np.zeros((3, 0)), np.zeros((0, 4)), c, 0.5)
    assert np.array_equal(c, np.ones((3, 4)))
    _gemm(np.zeros((3, 0)), np.zeros((0, 4)), c, 0.0)
    assert np.array_equal(c, np.zeros((3, 4)))


def test_one_row_views_with_free_strides():
    """A (1, n) view may carry any row stride: NumPy gives the transpose of a column row stride 0.
    BLAS must get the row length as leading dimension, not the stride (the stride made OpenBLAS
    reject the call and leave c unwritten)."""
    a = np.arange(1.0, 6.0)[:, None].T                     # (1, 5), strides (0, 8)
    assert a.strides[0] < a.shape[1] * a.itemsize
    b = np.arange(10.0).reshape(5, 2)
    c = np.zeros((1, 2))
    _gemm(a, b, c, 0.0)
    assert np.array_equal(c, a @ b)
    ct = np.zeros((2, 5))[:1]                              # (1, 5) block of a bigger array
    _gemm_tn(np.ones((1, 1)), a, ct, 0.0)                  # k = 1, one-row operands
    assert np.array_equal(ct, a)


def test_non_adjacent_columns_are_refused():
    a = np.ones((4, 6))[:, ::2]
    with pytest.raises(ValueError, match="unit column stride"):
        _gemm(a, np.ones((3, 2)), np.zeros((4, 2)), 0.0)


def test_window_steps_give_at_least_window_rows():
    for m in (1, 3, 16, 17, 100, 128, 256, 1000):
        w = _window_steps(m)
        assert w * m >= blas.WINDOW_ROWS and (w == 1 or (w - 1) * m < blas.WINDOW_ROWS)
