"""Fused numba kernels for the optimizers' element-wise updates (docs/experiments.md §5.2).

The reference is the NumPy code of :mod:`lwsim.optim` (torch's single-tensor order of operations);
these kernels do the same operations, in the same order, element by element, in one pass instead of
a dozen NumPy calls per parameter. At the sizes the studies train (a few hundred to a few thousand
weights per parameter) the NumPy version spends most of its time in per-call overhead, not in
arithmetic.

Same bits as the NumPy code: every scalar is passed already cast to the arrays' dtype (NumPy casts a
Python float to the array's dtype before a float32 operation), each operation is one IEEE
operation (+, −, ×, ÷, √ are correctly rounded in both), and numba emits no fused multiply-add
without ``fastmath`` (LLVM contracts only operations flagged ``contract``). The tests check the
bits against the NumPy path for float32 and float64, AdamW and Adam, with and without amsgrad.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def adam_update(p, g, m, v, vmax, decay, wd, one_minus_b1, b2, one_minus_b2, step_size, bias2_sqrt, eps,
                decoupled, amsgrad):
    """One Adam/AdamW step on 1-D arrays, in place (p, m, v and, with amsgrad, vmax).

    Per element, as lwsim.optim.Adam._update: p ← p·decay (decoupled); g ← g + wd·p (coupled,
    wd ≠ 0); m ← m + (1−β₁)(g − m); v ← v·β₂ + (1−β₂)(g·g); v_max ← max(v_max, v) (amsgrad);
    p ← p − step_size·(m / (√v / √(1−β₂ᵗ) + eps)). Scalars in the arrays' dtype.
    """
    for i in range(p.shape[0]):
        pi = p[i]
        gi = g[i]
        if decoupled:
            pi = pi * decay
        elif wd != 0:
            gi = gi + wd * pi
        mi = m[i] + one_minus_b1 * (gi - m[i])
        vi = v[i] * b2
        vi = vi + one_minus_b2 * (gi * gi)
        m[i] = mi
        v[i] = vi
        if amsgrad:                                  # np.maximum: a NaN on either side wins
            a = vmax[i]
            if a == a and (vi > a or vi != vi):
                vmax[i] = vi
            vi = vmax[i]
        denom = np.sqrt(vi) / bias2_sqrt + eps
        p[i] = pi - step_size * (mi / denom)
