"""backend="numba": hand-fused CPU kernels (docs/cells.md §1.9), called by :class:`lwsim.Cell`.

Module-level entry points with already validated, dtype-cast NumPy inputs (see
``lwsim.cells.base.Cell``): ``forward``, ``loss_and_grad``, ``jacobians`` run fused ``@njit`` kernels
(one pass over time for the forward, one for BPTT; the matrix products go to BLAS). ``tangents``
runs fused kernels too (tangent_kernels.py: one forward, then one pass for K directions at once);
``lag_gradients`` is a diagnostic and falls back to the NumPy reference (``lwsim.reference`` with
xp = numpy) on top of the same equations.

Kernel modules, one per cell family:
  leaky.py  rnn, constgate, sharedgate, diaggate      gru.py  gru "cho" and "torch"
  lstm.py   lstm                                        readout.py  read-out, loss, operand packing
  common.py exp/tanh/σ and LayerNorm rows that LLVM vectorises
  blas.py   direct BLAS GEMMs on views (leading dimensions, β), OpenBLAS-aware blocking
  tile.py   the per-step weight products: register-tiled GEMM on packed panels, or BLAS
  tuning.py which of the two per CPU/BLAS (LWSIM_NUMBA_TUNING=avx512|avx2|generic forces one)
  threads.py  batch-level parallelism: chunks of sequences on a thread pool, single-threaded BLAS
  workspace.py  loss_and_grad's internal buffers, reused across calls (``clear_workspace()``)
Design (per family): per step the input GEMM xa_t Wa and one recurrent GEMM h_{t−1} Uᵀ accumulated
onto it, gate matrices stacked, then one fused loop over the units (gates, LN, update, leak) and
the read-out; BPTT forms the direct error per row and accumulates the weight gradients
Σ_t dpre_tᵀ [h_{t−1} | xa_t] one GEMM per window of steps (≥ 128 rows) while the window is in cache.

Deterministic: no order-dependent parallel reductions (per-sequence / per-chunk partials are summed
in a fixed order); same inputs and thread count give the same bits.

Numba's on-disk cache (``cache=True``) is keyed on each kernel's own source file: after editing
common.py, blas.py or readout.py, delete ``__pycache__/*.nbi`` / ``*.nbc`` in this folder.
"""
from __future__ import annotations

from importlib import import_module

import numpy as np

from ... import reference
from ...cells._kind import no_kernels
from .workspace import clear_workspace  # noqa: F401  (re-exported: frees loss_and_grad's buffers)


def _family(cell):
    """The kernel module the cell kind names (``kind.numba_kernels``, docs/cells.md §1.10): a path
    string, imported on first use, so that the cells never import the backends."""
    path = cell.kind.numba_kernels
    if path is None:                    # a cell added without its kernel module
        raise no_kernels(cell, "numba", fix="give its kind a kernel module (numba_kernels, "
                         "docs/cells.md §1.10), or use backend='numpy'")
    return import_module(path)


def forward(cell, p, x):
    """Forward pass → :class:`lwsim.reference.Trace`, with the reference's per-step records."""
    return _family(cell).forward(cell, p, x)


def loss_and_grad(cell, p, x, y, mask):
    """(L, grads) by fused BPTT (§1.6, §1.8); y is (T, B, n_out), mask a bool (T,) or None."""
    return _family(cell).loss_and_grad(cell, p, x, y, mask)


def jacobians(cell, p, x, diagonal):
    """J[t−1] = ∂h_t/∂h_{t−1}: (T, B, S, S), or its diagonal (T, B, S) (§1.7)."""
    return _family(cell).jacobians(cell, p, x, diagonal)


def forward_and_jacobian_diagonal(cell, p, x):
    """(trace, diag J) from one forward pass where the family provides it, else two calls."""
    fam = _family(cell)
    fused = getattr(fam, "forward_and_jacobian_diagonal", None)
    if fused is None:
        return fam.forward(cell, p, x), fam.jacobians(cell, p, x, True)
    return fused(cell, p, x)


def lag_gradients(cell, p, x, y, mask, max_lag):
    """Per-lag gradients (docs/diagnostics.md §2.2): the NumPy reference (xp = numpy), not a fused kernel."""
    loss, g = reference.lag_gradients(np, cell, p, x, y, mask, max_lag)
    return float(loss), g


def tangents(cell, p, x, dp, forward=None):
    """Forward-mode tangents v_t = (∂h_t/∂θ)[w] (docs/diagnostics.md §2.7), fused kernels: ``dp`` one
    direction dict → (T+1, B, S); a list of K dicts → (K, T+1, B, S), all K in one pass.
    ``forward``: this backend's trace on the same p and x, whose forward pass is reused."""
    _family(cell)
    from .tangent_kernels import tangents as fused
    if isinstance(dp, dict):
        return fused(cell, p, x, [dp], forward)[0]
    return fused(cell, p, x, list(dp), forward)
