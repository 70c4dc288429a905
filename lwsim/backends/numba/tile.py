"""A register-tiled GEMM for the thin per-step products, for CPUs where OpenBLAS would pack them.

Why: OpenBLAS reads a product with m·n·k ≤ 10⁶ in place only where it has "small-matrix"
kernels (SkylakeX and newer, AVX-512); its Haswell/Zen (AVX2) kernels pack both operands on
every call. A step's recurrent product (m, H) × (H, 4H) with m = 16 rows then spends most of its
time packing the (H, 4H) weight block, the same every step: measured on a 2-core AMD EPYC
(Zen 3, OpenBLAS 0.3.30 "Haswell" core), single thread, float32 16 × 128 × 512 took 63 µs
(33 GFLOP/s) whether called whole or in column blocks, and 32 × 128 × 512 hardly more (85 µs).
Here the weight block is copied once per kernel call into contiguous column panels of 16 float32
/ 8 float64 columns (:func:`weight_panels`), and every step reads them and the rows of a in
place: 16 × 128 × 512 in 26 µs (82 GFLOP/s); see tuning.py for the other shapes and for when
this path is used.

  c[i, j] ← c[i, j] + Σ_p a[i, p] b[p, j],   p = 0, 1, …, k − 1 in order, one fused multiply-add
                                              per term (llvm.fmuladd, as fastmath "contract")

Tiles of 4 rows × 2 vectors of 256 bits (16 float32 / 8 float64 columns) are held in registers
over the whole p loop: 8 accumulators, 2 loads of b and 4 broadcasts of a per p. Columns left over
go through the last panel, zero-padded, into a scratch tile; rows left over through a scalar loop
with the same per-element order. Every element of c is the same sequence of fused multiply-adds
wherever it lies: the result does not depend on m, n or the tiling, and is the same bits from run
to run.

Caching note: the kernels inline :func:`gemm_w` / :func:`weight_panels` and their caches are
keyed on their own source files; after editing this module delete ``__pycache__/*.nbi|*.nbc``
here. (The product itself is a cached C callback of this module, called by symbol name.)

Backends: docs/cells.md §1.9.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
import llvmlite.binding as llvm
from numba import carray, cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .blas import _check, _ld, gemm_blas_status
from .common import KERNEL

ROWS = 4                         # rows of a register tile
VECTORS = 2                      # 256-bit vectors per tile row


def lanes(dtype):
    """Elements of a 256-bit vector of ``dtype`` (8 float32, 4 float64)."""
    return 256 // dtype.bitwidth


@intrinsic
def _tile(typingctx, a, lda, b, ldb, c, ldc, k):
    """c[:ROWS, :VECTORS·L] += a[:ROWS, :k] b[:k, :VECTORS·L] on the data pointers of the views
    a, b, c with row strides lda, ldb, ldc (elements); L = lanes of the dtype. Bounds are the
    caller's to keep (no checks)."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array) and isinstance(c, types.Array)):
        return None
    if not (a.dtype == b.dtype == c.dtype and c.dtype in (types.float32, types.float64)):
        return None
    dtype = c.dtype
    L = lanes(dtype)

    def codegen(context, builder, sig, args):
        intp_t = context.get_value_type(types.intp)
        elt = context.get_value_type(dtype)
        vec = ir.VectorType(elt, L)
        vptr = vec.as_pointer()
        fmuladd = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec, vec, vec]),
            f"llvm.fmuladd.v{L}{'f32' if dtype == types.float32 else 'f64'}")

        def data(i):
            return context.make_array(sig.args[i])(context, builder, args[i]).data

        def ival(i):
            return context.cast(builder, args[i], sig.args[i], types.intp)
        pa, pb, pc = data(0), data(2), data(4)
        lda_, ldb_, ldc_, k_ = ival(1), ival(3), ival(5), ival(6)
        i0_ = j0_ = ir.Constant(intp_t, 0)
        align = dtype.bitwidth // 8

        def at(ptr, row, col):                         # &ptr[row * ld + col]
            return builder.gep(ptr, [builder.add(row, col)])

        def c_ptr(r, v):
            row = builder.mul(builder.add(i0_, ir.Constant(intp_t, r)), ldc_)
            col = builder.add(j0_, ir.Constant(intp_t, v * L))
            return builder.bitcast(at(pc, row, col), vptr)
        acc = [[cgutils.alloca_once(builder, vec) for _ in range(VECTORS)] for _ in range(ROWS)]
        for r in range(ROWS):
            for v in range(VECTORS):
                builder.store(builder.load(c_ptr(r, v), align=align), acc[r][v])
        undef = ir.Constant(vec, ir.Undefined)
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), L), [0] * L)
        with cgutils.for_range(builder, k_) as loop:
            p = loop.index
            brow = builder.mul(p, ldb_)
            bv = [builder.load(builder.bitcast(at(pb, brow, builder.add(j0_, ir.Constant(intp_t, v * L))),
                                               vptr), align=align) for v in range(VECTORS)]
            for r in range(ROWS):
                arow = builder.mul(builder.add(i0_, ir.Constant(intp_t, r)), lda_)
                s = builder.load(at(pa, arow, p))
                splat = builder.shuffle_vector(builder.insert_element(undef, s, ir.Constant(ir.IntType(32), 0)),
                                               undef, zeros)
                for v in range(VECTORS):
                    builder.store(builder.call(fmuladd, [splat, bv[v], builder.load(acc[r][v])]), acc[r][v])
        for r in range(ROWS):
            for v in range(VECTORS):
                builder.store(builder.load(acc[r][v]), c_ptr(r, v), align=align)
        return context.get_dummy_value()
    return types.none(a, lda, b, ldb, c, ldc, k), codegen


@njit(inline="always")
def _lanes_of(c):
    return 8 if c.itemsize == 4 else 4


@njit(**KERNEL)
def pack_panels(b):
    """b (k, n) → its column panels (⌈n / nj⌉, k, nj), nj = VECTORS·lanes, the last one padded with
    zero columns: each panel contiguous, so the tile reads it with unit stride (a row stride of
    2–4 KiB maps b's rows onto a few L1 sets)."""
    k, n = b.shape
    nj = VECTORS * _lanes_of(b)
    out = np.zeros(((n + nj - 1) // nj, k, nj), b.dtype)
    for q in range(out.shape[0]):
        for p in range(k):
            for v in range(min(nj, n - q * nj)):
                out[q, p, v] = b[p, q * nj + v]
    return out


@njit(inline="always")
def _gemm_panels(a, lda, b, ldb, panels, c, ldc, beta):
    """c ← a b + β c, a (m, k), b (k, n), c (m, n) row-major with row strides lda, ldb, ldc, and
    b's full column panels in ``panels`` (pack_panels(b)): β c first (c ← 0 when β = 0, so
    NaN/garbage in c never leaks), then the terms of each dot product added in order of p with
    fused multiply-adds (rows past the last whole tile: read from b by a scalar loop).

    Kernels reach it through :func:`gemm_w` (an external call)."""
    m, k = a.shape
    n = b.shape[1]
    if beta == 0:
        for i in range(m):
            for j in range(n):
                c[i, j] = 0
    elif beta != 1:
        for i in range(m):
            for j in range(n):
                c[i, j] = beta * c[i, j]
    nj = VECTORS * _lanes_of(c)
    mt = m - m % ROWS
    nt = n - n % nj
    for q in range(nt // nj):
        pq = panels[q]
        for i0 in range(0, mt, ROWS):
            _tile(a[i0:i0 + ROWS], lda, pq, nj, c[i0:i0 + ROWS, q * nj:(q + 1) * nj], ldc, k)
    if nt < n and mt > 0:                              # last, zero-padded panel: via a scratch
        w = n - nt                                     # tile (the padding's columns are dropped)
        pq = panels[nt // nj]
        ct = np.zeros((ROWS, nj), c.dtype)
        for i0 in range(0, mt, ROWS):
            for r in range(ROWS):
                for j in range(w):
                    ct[r, j] = c[i0 + r, nt + j]
            _tile(a[i0:i0 + ROWS], lda, pq, nj, ct, nj, k)
            for r in range(ROWS):
                for j in range(w):
                    c[i0 + r, nt + j] = ct[r, j]
    for i in range(mt, m):                             # leftover rows: the same order, scalar
        for j in range(n):
            s = c[i, j]
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


# ---------------------------------------------------------------- the per-step weight products
# Why one compiled copy called by name: a kernel that calls @njit code gets it inlined (or linked
# and re-optimised by LLVM) at every call site; with 3–6 products per kernel, carrying both the
# panel path and the BLAS path there made the cold-cache compilation of the kernels 60% longer
# (measured, rnn/gru/lstm × 2 dtypes: 124 → 199 s CPU). The whole product (the profile's choice,
# panels or BLAS in column blocks) is therefore compiled once per dtype as a C callback (cached),
# registered with LLVM under a symbol name, and the kernels call that symbol, as numba's own BLAS
# calls reach ``numba_xxgemm``: nothing is compiled per call site but the call, and the kernels'
# caches hold no copy of this module's code.
_SYMBOL = "lwsim_gemm_w_{}"


def _make_entry(dtype, nj):
    def entry(a, lda, b, ldb, panels, npanels, c, ldc, m, n, k, beta, panel_rows, small_mnk,
              thin_rows):
        A = carray(a, (m, lda))[:, :k]
        B = carray(b, (k, ldb))[:, :n]
        C = carray(c, (m, ldc))[:, :n]
        if 0 < m <= panel_rows and k > 0 and n > 0:
            _gemm_panels(A, lda, B, ldb, carray(panels, (npanels, k, nj)), C, ldc, beta)
            return 0
        return gemm_blas_status(A, B, C, beta, small_mnk, thin_rows)
    ptr = types.CPointer(dtype)
    sig = types.int32(ptr, types.intp, ptr, types.intp, ptr, types.intp, ptr, types.intp,
                      types.intp, types.intp, types.intp, dtype, types.intp, types.intp, types.intp)
    return cfunc(sig, **KERNEL)(entry)


_ENTRIES = {}


def register():
    """Compile (or load from the cache) the product of each dtype and make its symbol known to
    LLVM; idempotent. Done at import of this module, before any kernel is compiled or loaded."""
    for dtype in (types.float32, types.float64):
        name = _SYMBOL.format(dtype)
        if name not in _ENTRIES:
            _ENTRIES[name] = _make_entry(dtype, VECTORS * lanes(dtype))
            llvm.add_symbol(name, _ENTRIES[name].address)


register()


@intrinsic
def _call(typingctx, a, lda, b, ldb, panels, c, ldc, beta, tune):
    """Call the registered product of c's dtype on the data pointers of a, b, panels, c → status."""
    if not all(isinstance(x, types.Array) for x in (a, b, panels, c)):
        return None
    dtype = c.dtype
    if dtype not in (types.float32, types.float64) or not (a.dtype == b.dtype == panels.dtype == dtype):
        return None

    def codegen(context, builder, sig, args):
        intp_t = context.get_value_type(types.intp)
        elt = context.get_value_type(dtype)
        ptr = elt.as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [ptr, intp_t, ptr, intp_t, ptr, intp_t, ptr, intp_t,
                                                intp_t, intp_t, intp_t, elt, intp_t, intp_t, intp_t])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _SYMBOL.format(dtype))
        A, B, P, C = [context.make_array(sig.args[i])(context, builder, args[i]) for i in (0, 2, 4, 5)]

        def dim(x, i):
            return builder.extract_value(x.shape, i)

        def ival(i):
            return context.cast(builder, args[i], sig.args[i], types.intp)
        tune_vals = [context.cast(builder, builder.extract_value(args[8], i), sig.args[8][i], types.intp)
                     for i in range(3)]
        return builder.call(fn, [A.data, ival(1), B.data, ival(3), P.data, dim(P, 0), C.data, ival(6),
                                 dim(A, 0), dim(B, 1), dim(A, 1),
                                 context.cast(builder, args[7], sig.args[7], dtype)] + tune_vals)
    return types.int32(a, lda, b, ldb, panels, c, ldc, beta, tune), codegen


@njit(inline="always")
def weight_panels(b, tune):
    """What :func:`gemm_w` needs of a weight block b (k, n) used every step: its column panels
    (pack_panels) when the profile runs products on panels, else an empty array. Called once per
    kernel call, so the copy is paid once, not once per step as OpenBLAS's packing."""
    if tune[0] > 0:
        return pack_panels(b)
    return np.empty((0, b.shape[0], VECTORS * _lanes_of(b)), b.dtype)


@njit(inline="always")
def gemm_w(a, b, panels, c, beta, tune):
    """c ← a b + β c for a weight block b with ``panels = weight_panels(b, tune)`` and the profile's
    parameters ``tune = (panel_rows, small_mnk, thin_rows)`` (tuning.py): on the panels when
    0 < m ≤ panel_rows, else BLAS with the profile's column blocks (blas.gemm_blas_status).
    Operands: row-major views with unit column stride (checked), any row stride."""
    _check(_call(a, _ld(a), b, _ld(b), panels, c, _ld(c), beta, tune))
