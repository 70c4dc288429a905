"""Direct BLAS GEMM calls from the kernels, with leading dimensions, β and OpenBLAS-aware blocking.

Why not ``np.dot(a, b, out)``: numba's np.dot needs contiguous operands (a column block of a weight
matrix would be copied), always overwrites ``out`` (β = 0) and hands OpenBLAS the whole product.
OpenBLAS (0.3.x, the SciPy wheels) computes a product with m·n·k ≤ 10⁶ in its "small matrix"
kernels, which read the operands in place; above that it packs both operands into buffers first.
For the per-step products of a time loop, (b1 − b0, H) × (H, G) with few rows and G up to 4H,
the packing of the (H, G) weight block costs more than the FLOPs: measured on the 2-core Xeon,
float32 16 × 128 × 512 takes 39 µs in one call and 13 µs as two 256-column calls.
:func:`gemm` therefore splits thin products into column blocks under that bound. That holds for
OpenBLAS builds with small-matrix kernels (AVX-512 cores); the time loops' per-step products go
through tile.gemm_w, which applies the blocking chosen for the CPU at hand (tuning.py).

  gemm(a, b, c, beta):    c ← a b + β c     a (m, k), b (k, n), c (m, n), row-major views with unit
                                            column stride (any row stride: blocks of bigger arrays)
  gemm_tn(a, b, c, beta): c ← aᵀ b + β c    a (k, m): the weight-gradient products

The call is numba's own BLAS entry point (``numba_xxgemm``, which forwards to SciPy's
cython_blas, the same library np.dot uses). Blocking changes which OpenBLAS kernel forms a dot
product (small-matrix or packed), so its rounding, never what is summed: every element of c is
one dot product over k, whatever the column blocks.

Caching note (as in common.py): the kernels inline these functions and their cache is keyed on
their own source files; after editing this module delete ``__pycache__/*.nbi|*.nbc`` here.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.linalg import ensure_blas, get_blas_kind


SMALL_MNK = 1_000_000            # OpenBLAS small-matrix bound (m·n·k, interface/gemm.c)
THIN_ROWS = 32                   # with more rows the packed path is as fast (measured)


@intrinsic
def _xgemm(typingctx, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc):
    """Row-major c (m, n) ← op(a) op(b) + β c, op = transpose when ta/tb ≠ 0, through
    numba_xxgemm. Column-major BLAS sees row-major arrays transposed, so it is called on
    cᵀ = op(b)ᵀ op(a)ᵀ: dimensions (n, m, k), b first, the same transpose flags."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array) and isinstance(c, types.Array)):
        return None
    if not (a.dtype == b.dtype == c.dtype):
        return None
    dtype = c.dtype
    ensure_blas()
    kind = ord(get_blas_kind(dtype))

    def codegen(context, builder, sig, args):
        ll_char = ir.IntType(8)
        intp_t = context.get_value_type(types.intp)
        ll_void_p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [ll_char, ll_char, ll_char, intp_t, intp_t, intp_t,
                                                ll_void_p, ll_void_p, intp_t, ll_void_p, intp_t,
                                                ll_void_p, ll_void_p, intp_t])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")

        def val(i):                                    # argument i as intp
            return context.cast(builder, args[i], sig.args[i], types.intp)

        def flag(i):                                   # 't' when argument i ≠ 0, else 'n'
            nz = builder.icmp_signed("!=", val(i), ir.Constant(intp_t, 0))
            return builder.select(nz, ir.Constant(ll_char, ord("t")), ir.Constant(ll_char, ord("n")))

        def data(i):
            return builder.bitcast(context.make_array(sig.args[i])(context, builder, args[i]).data,
                                   ll_void_p)
        alpha = cgutils.alloca_once_value(builder, context.get_constant(dtype, 1.0))
        beta_slot = cgutils.alloca_once_value(builder, context.cast(builder, args[9], sig.args[9],
                                                                    dtype))
        return builder.call(fn, (ir.Constant(ll_char, kind), flag(1), flag(0), val(3), val(2), val(4),
                                 builder.bitcast(alpha, ll_void_p), data(7), val(8), data(5), val(6),
                                 builder.bitcast(beta_slot, ll_void_p), data(10), val(11)))
    return types.int32(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc), codegen


@njit(inline="always")
def _ld(x):
    """Row stride of the 2-D view x in elements, as BLAS wants it: a one-row view may carry any
    stride (NumPy leaves strides of length-1 axes free), so it gets its row length. Columns must
    be adjacent in memory (checked; an empty view's strides are free too)."""
    if x.shape[0] > 0 and x.shape[1] > 1 and x.strides[1] != x.itemsize:
        raise ValueError("gemm: operands need unit column stride")
    if x.shape[0] <= 1:
        return max(1, x.shape[1])
    return x.strides[0] // x.itemsize


@njit(inline="always")
def _check(status):
    """numba_xxgemm returns −1 when SciPy's BLAS could not be loaded."""
    if status != 0:
        raise RuntimeError("gemm: SciPy's BLAS (scipy.linalg.cython_blas) is not available")


@njit(inline="always")
def _degenerate(m, n, k, c, beta):
    """Handle an empty product without BLAS (which rejects zero sizes): nothing to do when c is
    empty, c ← β c when k = 0. True when handled."""
    if m == 0 or n == 0:
        return True
    if k == 0:
        for i in range(m):
            for j in range(n):
                c[i, j] = beta * c[i, j] if beta != 0 else 0
        return True
    return False


@njit(inline="always")
def column_block(m, k, n, bound=SMALL_MNK):
    """Width of the column blocks of a thin product: the widest under the small-matrix bound,
    then evened out (n = 128 → 64 + 64, not 112 + 16: a 16-column call wastes the kernel) and
    rounded up to whole 16-lane groups when that stays under the bound. Measured, float32,
    16 × 512 × 128: 25 → 19 µs; 16 × 145 × 512: 23 → 16 µs."""
    nb = max(1, bound // (m * k))
    nblocks = (n + nb - 1) // nb
    nb = (n + nblocks - 1) // nblocks
    if nb % 16 and (nb + 15) // 16 * 16 * m * k <= bound:
        nb = (nb + 15) // 16 * 16
    return nb


@njit(inline="always")
def gemm(a, b, c, beta):
    """c ← a b + β c (see the module docstring); thin products go in column blocks of ≤ 10⁶ m·n·k."""
    _gemm_blas(a, b, c, beta, SMALL_MNK, THIN_ROWS)


@njit(inline="always")
def _gemm_blas(a, b, c, beta, small_mnk, thin_rows):
    """gemm with the blocking bound as arguments (see :func:`gemm_blas_status`)."""
    _check(gemm_blas_status(a, b, c, beta, small_mnk, thin_rows))


@njit(inline="always")
def gemm_blas_status(a, b, c, beta, small_mnk, thin_rows):
    """c ← a b + β c in column blocks of ≤ small_mnk m·n·k when m ≤ thin_rows and
    m·n·k > small_mnk > 0, in one BLAS call otherwise; → 0, or BLAS's error status."""
    m, k = a.shape
    n = b.shape[1]
    if _degenerate(m, n, k, c, beta):
        return 0
    lda, ldb, ldc = _ld(a), _ld(b), _ld(c)
    if small_mnk <= 0 or m * n * k <= small_mnk or m > thin_rows:
        return _xgemm(0, 0, m, n, k, a, lda, b, ldb, beta, c, ldc)
    nb = column_block(m, k, n, small_mnk)
    for j0 in range(0, n, nb):
        j1 = min(n, j0 + nb)
        status = _xgemm(0, 0, m, j1 - j0, k, a, lda, b[:, j0:j1], ldb, beta, c[:, j0:j1], ldc)
        if status != 0:
            return status
    return 0


@njit(inline="always")
def gemm_tn(a, b, c, beta):
    """c ← aᵀ b + β c,  a (k, m), b (k, n), c (m, n): the weight-gradient form Σ_rows dpreᵀ z."""
    k, m = a.shape
    n = b.shape[1]
    if _degenerate(m, n, k, c, beta):
        return
    _check(_xgemm(1, 0, m, n, k, a, _ld(a), b, _ld(b), beta, c, _ld(c)))


# ---------------------------------------------------------------- weight gradients inside BPTT
WINDOW_ROWS = 128                # rows (steps × sequences) per weight-gradient GEMM


@njit(inline="always")
def window_steps(m):
    """Steps per weight-gradient window for chunks of m sequences: enough that a window's GEMM
    has ≥ WINDOW_ROWS rows (a K of 16 would run the GEMM at a fraction of its rate).

    Why windows: the weight gradients Σ_t dpre_tᵀ [h_{t−1} | x_t] are accumulated while the
    window's dpre rows are still in cache, so no (T, B, G) buffer of dpre is written to memory
    and read back twice after the loop (at B = 512 that traffic cost as much as the GEMM)."""
    return max(1, (WINDOW_ROWS + m - 1) // m)


@njit(inline="always")
def stash_row(z, a, x):
    """z ← [a | x]: one row of a window's right-hand operand (e.g. [h_{t−1} | xa_t])."""
    na = a.shape[0]
    for j in range(na):
        z[j] = a[j]
    for j in range(x.shape[0]):
        z[na + j] = x[j]
