"""Read-out, loss and the packing shared by every cell family (docs/cells.md §1.4, §1.6).

  ŷ_t = W_out h_t + b_out                     (per step in the time loop, while h_t is in cache)
  L = Σ_t w_t Σ_{b,o} (ŷ − y)² / (Σ_t w_t · B · n_out),  w = 1 | mask | last step only
  ∂L/∂ŷ = 2 w (ŷ − y) / count,  δ_t = (∂L/∂ŷ_t) W_out   (direct error on h_t, §1.8, formed per
  sequence row inside the BPTT loop, so no buffer of δ is written)

Python-side helpers here build the stacked operands the kernels take:
  xa (T, B, D[+1]) — the input with a column of ones when the cell has biases, so that a bias is
  one more row of the stacked input matrix and its gradient one more column of the dW GEMM.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .common import KERNEL, like


def augmented_input(cell, x, alloc):
    """x with a trailing column of ones when the cell has biases (see module docstring)."""
    if not cell.bias:
        return np.ascontiguousarray(x)
    T, B, D = x.shape
    xa = alloc(T, B, D + 1)
    xa[:, :, :D] = x
    xa[:, :, D] = 1
    return xa


def stack_input(cell, blocks):
    """Wa (D[+1], Σ rows) from blocks [(W (rows, D), b (rows,) or None), ...]: columns are the
    stacked maps Wᵀ, the last row (with biases) their biases, so xa @ Wa = [W x + b, ...]."""
    D = cell.n_in
    G = sum(W.shape[0] for W, _ in blocks)
    Wa = np.zeros((D + 1 if cell.bias else D, G), dtype=cell.dtype)
    col = 0
    for W, b in blocks:
        rows = W.shape[0]
        Wa[:D, col:col + rows] = W.T
        if cell.bias and b is not None:
            Wa[D, col:col + rows] = b
        col += rows
    return Wa


def unstack_input(cell, dWa, blocks, grads):
    """Inverse of :func:`stack_input` for the gradient dWa (Σ rows, D[+1]).

    blocks: [(weight key, bias key or None), ...]; rows and shapes from ``cell.param_shapes()``.
    """
    D = cell.n_in
    shapes = cell.param_shapes()
    row = 0
    for w, b in blocks:
        shape = shapes[w]
        rows = shape[0] if len(shape) == 2 else 1
        grads[w] = np.ascontiguousarray(dWa[row:row + rows, :D]).reshape(shape)
        if cell.bias and b is not None:
            grads[b] = np.ascontiguousarray(dWa[row:row + rows, D]).reshape(shapes[b])
        row += rows


def empty(cell, *shape):
    """A placeholder array of the cell's dtype (kernels take arrays, never None)."""
    return np.zeros(shape or (0,), dtype=cell.dtype)


def fresh(cell):
    """Allocator of new uninitialised arrays for the kernels to fill, ``alloc(*shape)``. Large
    buffers are allocated here, by NumPy, rather than inside the kernels: NumPy asks the OS kernel
    for transparent huge pages, so first-touch page faults of the (T, B, ·) buffers are ~500×
    rarer (measured: 2–3× faster first fills). loss_and_grad uses a reusing allocator instead
    (workspace.py)."""
    return lambda *shape: np.empty(shape, dtype=cell.dtype)


def loss_weights(cell, T, mask):
    """w_t of §1.6: the mask, only the last step (readout "last"), or all ones."""
    if cell.readout == "last":
        w = np.zeros(T, dtype=cell.dtype)
        w[-1] = 1
    elif mask is not None:
        w = np.asarray(mask, dtype=cell.dtype)
    else:
        w = np.ones(T, dtype=cell.dtype)
    return w


def readout_params(cell, p):
    """(W_outᵀ (H, n_out), b_out (zeros without biases))."""
    W_outT = np.ascontiguousarray(p["W_out"].T)
    b_out = p["b_out"] if cell.bias else np.zeros(cell.n_out, dtype=cell.dtype)
    return W_outT, b_out


# ---------------------------------------------------------------- pieces inlined into the kernels
@njit(inline="always")
def readout_step(ht, W_outT, b_out, yt):
    """ŷ_t = h_t W_outᵀ + b_out for one step, (B, H) × (H, n_out), while h_t is still in cache."""
    np.dot(ht, W_outT, yt)
    for b in range(yt.shape[0]):
        for o in range(yt.shape[1]):
            yt[b, o] += b_out[o]


@njit(inline="always")
def output_error_row(dyr, W_out, hrow, dl, dWo):
    """δ_{t,b} = (∂L/∂ŷ_{t,b}) W_out into dl (H,); dW_out += (∂L/∂ŷ_{t,b})ᵀ h_{t,b} in float64.

    Per sequence row inside the BPTT row loop, while h_{t,b} is in cache: for the few read-out
    units a loop costs less than two BLAS calls per step and a (B, H) buffer of δ."""
    H = dl.shape[0]
    for j in range(H):
        dl[j] = 0
    for o in range(dyr.shape[0]):
        g = dyr[o]
        g64 = float(g)
        w, dw = W_out[o], dWo[o]
        for j in range(H):
            dl[j] += g * w[j]
            dw[j] += g64 * hrow[j]


@njit(**KERNEL)
def loss_count(w, n, O, proto):
    """(count in float64, count and 2 in ``proto``'s dtype): count = Σ_t w_t · n · O, the mean-squared
    loss's divisor over n sequences and O read-out units (shared with the lanes kernels: the same
    roundings)."""
    count = 0.0
    for t in range(w.shape[0]):
        count += w[t]
    count *= n * O
    cnt = like(proto, count)
    return count, cnt, like(cnt, 2.0)


@njit(**KERNEL)
def loss_kernel(yhat, y, w):
    """(L, ∂L/∂ŷ, ∂L/∂b_out): L accumulated in float64 in (t, b, o) order, ∂L/∂ŷ = 2 w (ŷ − y)/count."""
    T, B, O = yhat.shape
    count, cnt, two = loss_count(w, B, O, yhat[0, 0, 0])
    loss = 0.0
    dy = np.empty_like(yhat)
    db = np.zeros(O)
    for t in range(T):
        for b in range(B):
            for o in range(O):
                d = yhat[t, b, o] - y[t, b, o]
                loss += w[t] * d * d
                g = two * w[t] * d / cnt
                dy[t, b, o] = g
                db[o] += g
    return loss / count, dy, db.astype(yhat.dtype)


# ---------------------------------------------------------------- Python glue used by every family
def loss_stage(cell, yhat, y, mask):
    """(L, ∂L/∂ŷ (T, B, n_out), read-out bias gradient dict)."""
    loss, dy, db = loss_kernel(yhat, y, loss_weights(cell, yhat.shape[0], mask))
    return float(loss), dy, ({"b_out": db} if cell.bias else {})


def ln_operands(cell, p):
    """(γ, β) or empty placeholders without LayerNorm."""
    if cell.layernorm:
        return p["ln_gamma"], p["ln_beta"]
    return empty(cell), empty(cell)


def ordered(p, grads, dgamma=None, dbeta=None, dtype=None):
    """grads in the key order of p (LN gradients added when given), every array C-contiguous."""
    if dgamma is not None:
        grads["ln_gamma"] = dgamma.astype(dtype)
        grads["ln_beta"] = dbeta.astype(dtype)
    return {k: np.ascontiguousarray(grads[k]) for k in p}


def with_run(trace, run):
    """``trace`` carrying the forward pass's internal arrays ``run`` (the family's _run_forward
    result, fresh buffers that nothing else writes), so that a tangent pass on the same parameters
    and input can reuse them instead of running the forward pass again (tangent_kernels.tangents);
    the same arrays a second forward pass would compute, so the same bits."""
    trace._numba_run = run
    return trace


def reused_run(forward, cell, x):
    """The forward pass's arrays carried by the trace ``forward`` (:func:`with_run`), or None when
    it carries none or was not computed for this cell's dtype and x's shape."""
    run = getattr(forward, "_numba_run", None)
    h = getattr(forward, "h", None)
    T, B, _ = x.shape
    if run is None or h is None or h.dtype != cell.dtype or h.shape != (T + 1, B, cell.n_hidden):
        return None
    return run
