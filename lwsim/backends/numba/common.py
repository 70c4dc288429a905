"""Scalar pieces shared by the numba kernels: exp/tanh/sigmoid, LayerNorm rows, typed constants.

Why our own exp: numba without Intel SVML calls libm's scalar ``exp``/``tanh`` (≈ 5–35 ns each,
not vectorised), which would cost more than the matrix products of a step. The functions here are
written with arithmetic only (Cody–Waite reduction, Taylor polynomial, the power of two built from
its bits), so LLVM inlines and vectorises them inside the fused element loops (AVX2/AVX-512).
Accuracy: a few ulp in float64 and float32, far inside the 1e−12 / 1e−5 agreement with the NumPy
reference that the tests ask for.

  expm1(x) = 2^k (1 + q(r)) − 1,  x = k ln2 + r, |r| ≤ ln2/2,  q(r) = Σ_{n≥1} rⁿ/n!
  tanh(a)  = sign(a) · (−e)/(2 + e),  e = expm1(−2|a|)          (exact for small |a| too)
  σ(z)     = 1/(1 + e) (z ≥ 0),  e/(1 + e) (z < 0),  e = exp(−|z|)   (as the reference, §1.4)

Every function is dtype-generic through ``overload``: float32 inputs are computed in float32
(8 lanes per 256-bit register, as LLVM vectorises here), float64 in float64, like the reference.

Caching note: ``cache=True`` keys a kernel's cache on its own source file only; after editing this
module delete ``__pycache__/*.nbi|*.nbc`` here (the kernels that inline it are not re-compiled).
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

LN_EPS = 1e-5                    # LayerNorm ε of docs/cells.md §1.4

# Options of every kernel. error_model="numpy": no ZeroDivisionError checks, which would stop LLVM
# from vectorising the element loops (tanh/σ divide). fastmath={"contract"} only: lets LLVM fuse
# a·b + c into one FMA (one rounding instead of two); no re-association, so every reduction keeps
# its written order and the results are bit-identical from run to run.
KERNEL = dict(cache=True, error_model="numpy", fastmath={"contract"})
# The time loops run on row chunks from a Python thread pool (threads.py), so they drop the GIL.
TKERNEL = dict(KERNEL, nogil=True)


# ---------------------------------------------------------------- bit casts (build 2^k exactly)
@intrinsic
def _i64_as_f64(typingctx, v):
    if v != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _i32_as_f32(typingctx, v):
    if v != types.int32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


# ---------------------------------------------------------------- exp split for x ≤ 0
# float64: Cody–Waite split of ln 2 (LN2_HI has 32 trailing zero bits, so k·LN2_HI is exact);
# Taylor degree 13 on |r| ≤ 0.347 leaves < 1e−17 truncation error.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_XMIN64 = -708.0                 # 2^k stays a normal number (k ≥ −1021)
_C64 = tuple(1.0 / math.factorial(n) for n in range(1, 14))

_LOG2E32 = np.float32(_LOG2E)
_LN2_HI32 = np.float32(0.693359375)         # 9 significant bits: k·LN2_HI32 exact in float32
_LN2_LO32 = np.float32(-2.12194440e-4)
_XMIN32 = np.float32(-87.0)                  # k ≥ −126
_C32 = tuple(np.float32(1.0 / math.factorial(n)) for n in range(1, 8))   # degree 7: < 2e−8


def exp_split(x):
    """(s, q) with exp(x) = s·(1 + q), s = 2^k, for x ≤ 0 (clamped below; never overflows)."""


@overload(exp_split, inline="always")
def _exp_split(x):
    if x == types.float64:
        c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = _C64

        def impl(x):
            xc = max(x, _XMIN64)                    # clamp (max(NaN, c) is NaN)
            kf = np.floor(xc * _LOG2E + 0.5)
            r = (xc - kf * _LN2_HI) - kf * _LN2_LO
            q = r * (c1 + r * (c2 + r * (c3 + r * (c4 + r * (c5 + r * (c6 + r * (c7 + r * (
                c8 + r * (c9 + r * (c10 + r * (c11 + r * (c12 + r * c13))))))))))))
            s = _i64_as_f64((np.int64(kf) + np.int64(1023)) << np.int64(52))
            return s, q
        return impl
    if x == types.float32:
        c1, c2, c3, c4, c5, c6, c7 = _C32
        half = np.float32(0.5)

        def impl32(x):
            xc = max(x, _XMIN32)
            kf = np.floor(xc * _LOG2E32 + half)
            r = (xc - kf * _LN2_HI32) - kf * _LN2_LO32
            q = r * (c1 + r * (c2 + r * (c3 + r * (c4 + r * (c5 + r * (c6 + r * c7))))))
            s = _i32_as_f32(np.int32((np.int64(kf) + 127) << 23))
            return s, q
        return impl32
    return None


def one_like(x):
    """1 in the type of x (float literals in numba are float64 and would widen float32 code)."""


@overload(one_like, inline="always")
def _one_like(x):
    if x == types.float32:
        one = np.float32(1.0)
    else:
        one = 1.0
    return lambda x: one


def like(x, v):
    """v converted to the type of the scalar x."""


@overload(like, inline="always")
def _like(x, v):
    if x == types.float32:
        return lambda x, v: np.float32(v)
    return lambda x, v: np.float64(v)


@njit(inline="always")
def tanh(a):
    """tanh through expm1(−2|a|): full relative accuracy near 0, no overflow for large |a|."""
    one = one_like(a)
    s, q = exp_split(-abs(a + a))
    em = (s - one) + s * q                     # expm1(−2|a|) ∈ (−1, 0]
    return math.copysign(-em / ((one + one) + em), a)


@njit(inline="always")
def sigmoid(z):
    """σ(z) with the sign split of the reference: e = exp(−|z|) ≤ 1 never overflows."""
    one = one_like(z)
    s, q = exp_split(-abs(z))
    e = s + s * q
    num = one if z >= 0 else e
    return num / (one + e)


# ---------------------------------------------------------------- LayerNorm on one row, §1.4
@njit(inline="always")
def ln_row(a, gamma, beta, ahat_out, out):
    """LN(a) = γ ⊙ â + β, â = (a − mean a)/σ, σ = sqrt(var a + ε) (biased var) → writes â, LN(a).

    Returns σ. Mean and variance are accumulated in float64 (a float32 row of H = 128 summed in
    float32 would lose ~H·ε of the mean).
    """
    H = a.shape[0]
    m = 0.0
    for j in range(H):
        m += a[j]
    m /= H
    v = 0.0
    for j in range(H):
        d = a[j] - m
        v += d * d
    sig = math.sqrt(v / H + LN_EPS)
    inv = 1.0 / sig
    for j in range(H):
        ah = (a[j] - m) * inv
        ahat_out[j] = ah
        out[j] = gamma[j] * ah + beta[j]
    return sig


@njit(inline="always")
def ln_back_row(da, gamma, ahat, sig, dgam, dbet, out):
    """J_LNᵀ da = (g − mean g − â·mean(g ⊙ â))/σ, g = γ ⊙ da; accumulates dγ += da⊙â, dβ += da.

    ``out`` may alias ``da`` (element j is read before it is written). g is stored in ``out``
    first and read back: were g recomputed in the last loop, FMA contraction would fuse
    da·γ − mean(g) into one rounding and leave the product's round-off where the reference has an
    exact cancellation (H = 1 gives exactly 0 there).
    """
    H = da.shape[0]
    m1 = 0.0
    m2 = 0.0
    for j in range(H):
        d = da[j]
        dgam[j] += d * ahat[j]
        dbet[j] += d
        g = d * gamma[j]
        out[j] = g
        m1 += g
        m2 += g * ahat[j]
    m1 /= H
    m2 /= H
    inv = 1.0 / sig
    for j in range(H):
        out[j] = (out[j] - m1 - ahat[j] * m2) * inv


# ---------------------------------------------------------------- reductions in a fixed order
@njit(**KERNEL)
def fixed_order_sums64(dWo, dgam, dbet):
    """Σ of the per-chunk dW_out partials (chunk order) and of the per-sequence LN partials
    (sequence order), all in float64 → (dW_out, dγ, dβ); the fused trainer rounds them itself."""
    O, H = dWo.shape[1], dWo.shape[2]
    wo = np.zeros((O, H))
    for c in range(dWo.shape[0]):
        for o in range(O):
            for j in range(H):
                wo[o, j] += dWo[c, o, j]
    dgamma = np.zeros(H)
    dbeta = np.zeros(H)
    for b in range(dgam.shape[0]):
        for j in range(H):
            dgamma[j] += dgam[b, j]
            dbeta[j] += dbet[b, j]
    return wo, dgamma, dbeta


def fixed_order_sums(dWo, dgam, dbet, dtype):
    """:func:`fixed_order_sums64` with dW_out cast to ``dtype`` → (dW_out, dγ, dβ) as ``dtype``/float64."""
    wo, dgamma, dbeta = fixed_order_sums64(dWo, dgam, dbet)
    return wo.astype(dtype), dgamma, dbeta
