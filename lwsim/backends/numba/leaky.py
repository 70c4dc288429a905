"""Fused kernels for the gated-leak family: rnn, constgate, sharedgate, diaggate (docs/cells.md §1.1).

  a_t = W_x x_t + b_x + W_h h_{t−1},   h̃_t = tanh(LN(a_t))
  s_t = 1 (rnn) | s (constgate) | σ(w_sᵀx_t + b_s + u_sᵀh_{t−1}) (sharedgate, scalar)
        | σ(W_s x_t + b_s + U_s h_{t−1}) (diaggate, per unit)
  h_t = h_{t−1} + s_t ⊙ (h̃_t − h_{t−1})      (= h̃_t for the rnn)

Layout (G = H + gate width: 0, 1 or H): input maps stacked as Wa (D[+1], G) = [W_xᵀ | W_sᵀ] (biases
in the last row, see readout.py), recurrent maps as Uᵀ (H, G) = [W_hᵀ | U_sᵀ] for the forward and
U (G, H) = [W_h; U_s] for the backward. Per step: the GEMMs xa_t Wa (B, D+1)×(D+1, G) and
h_{t−1} Uᵀ (B, H)×(H, G), one fused loop over the units (pre-activation, LN, tanh, gate, update),
and the read-out h_t W_outᵀ while h_t is in cache.

BPTT (§1.8), with δ_t = (∂L/∂ŷ_t) W_out formed per step and dh = carry + (matrix part) + δ_t:
  da = LNᵀ(dh ⊙ s ⊙ (1 − h̃²)),  dpre_s = dh ⊙ (h̃ − h_{t−1}) ⊙ s(1 − s)  (summed over units if
  shared),  dh_{t−1} = dh ⊙ (1 − s) + [da, dpre_s] U.
The weight gradients [dU | dWa] = Σ_t dpre_tᵀ [h_{t−1} | xa_t], dpre = [da, dpre_s], are one GEMM
per window of steps inside the loop, while the window's rows are in cache (blas.window_steps).

Jacobians (§1.7): J = diag(1 − s) + diag(s ⊙ h̃') J_LN W_h + diag((h̃ − h_{t−1}) ⊙ s') U_s.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ... import reference
from .blas import gemm_tn, stash_row, window_steps
from .common import KERNEL, TKERNEL, fixed_order_sums, like, ln_back_row, ln_row, sigmoid, tanh
from .readout import (with_run, augmented_input, ln_operands, loss_stage, fresh, ordered, output_error_row,
                      readout_params, readout_step, stack_input, unstack_input)
from .threads import chunks, run_chunks, single_threaded_blas
from .tile import gemm_w, weight_panels
from .tuning import params as tuning_params
from .workspace import workspace

MODES = {"none": 0, "const": 1, "shared": 2, "per_unit": 3}    # the gate's form (cells/_leaky.py)


def mode_of(cell):
    """The kernels' mode for ``cell``: its gate's declared form, never its name."""
    return MODES[cell.kind.gate.form]


# ---------------------------------------------------------------- time loops
@njit(**TKERNEL)
def forward_rows(ck, b0, b1, xa, Wa, UT, mode, s_const, gamma, beta, layernorm, W_outT, b_out,
                  h, cand, s, ahat, sig, yhat, tune):
    """Forward pass for the sequences b0 ≤ b < b1 (chunk ck, threads.py): the whole time loop;
    fills their rows of h (T+1, B, H), h̃, s (T, B, 0|1|H), â, σ (LN only) and ŷ."""
    T = xa.shape[0]
    H, G = UT.shape
    pre = np.empty((b1 - b0, G), xa.dtype)
    Wp, Up = weight_panels(Wa, tune), weight_panels(UT, tune)   # tune: tuning.params()
    for b in range(b0, b1):
        h[0, b] = 0
    for t in range(T):
        # Every pre-activation [a_t | gate] = xa_t Wa + h_{t−1} Uᵀ: the input GEMM, then the
        # recurrent one accumulated onto it (β = 1), the (B, G) result staying in cache (a (T, B, G)
        # buffer of all input projections costs more memory traffic than the small-K GEMM it
        # would batch). h[t][b0:b1] is a contiguous block of rows.
        gemm_w(xa[t][b0:b1], Wa, Wp, pre, 0, tune)
        gemm_w(h[t][b0:b1], UT, Up, pre, 1, tune)
        for i in range(b1 - b0):
            b = b0 + i
            pr, hprev, hnew = pre[i], h[t, b], h[t + 1, b]
            # the candidate row doubles as scratch for a_t; the rnn's candidate is h_t itself, so
            # it is computed in place there and no (T, B, H) candidate buffer is written
            a = hnew if mode == 0 else cand[t, b]
            for j in range(H):
                a[j] = pr[j]
            if layernorm:
                sig[t, b, 0] = ln_row(a, gamma, beta, ahat[t, b], a)
            for j in range(H):
                a[j] = tanh(a[j])
            if mode == 1:
                for j in range(H):
                    hnew[j] = hprev[j] + s_const * (a[j] - hprev[j])
            elif mode == 2:
                sv = sigmoid(pr[H])
                s[t, b, 0] = sv
                for j in range(H):
                    hnew[j] = hprev[j] + sv * (a[j] - hprev[j])
            elif mode == 3:
                for j in range(H):
                    sv = sigmoid(pr[H + j])
                    s[t, b, j] = sv
                    hnew[j] = hprev[j] + sv * (a[j] - hprev[j])
        readout_step(h[t + 1][b0:b1], W_outT, b_out, yhat[t][b0:b1])


@njit(**TKERNEL)
def backward_rows(ck, b0, b1, h, xa, dy, W_out, UC, mode, s_const, cand, s, ahat, sig, gamma,
                  layernorm, dZ, dgam, dbet, dWo, tune):
    """BPTT for the sequences b0 ≤ b < b1 (chunk ck): the reverse time loop. Adds this chunk's
    Σ_t dpre_tᵀ [h_{t−1} | xa_t] to dZ[ck] (G, H + D[+1]) window by window (blas.window_steps),
    fills the float64 per-sequence LN partials dgam, dbet (B, H) and this chunk's ∂L/∂W_out in
    dWo[ck]. Partials are summed in a fixed order afterwards (deterministic)."""
    T = dy.shape[0]
    G, H = UC.shape
    n = b1 - b0
    Da = xa.shape[2]
    one = like(h[0, 0, 0], 1.0)
    W = window_steps(n)
    Dw = np.empty((W * n, G), h.dtype)              # dpre = [da, dpre_s] rows of the window
    Zw = np.empty((W * n, H + Da), h.dtype)         # [h_{t−1} | xa_t] rows of the window
    dl = np.empty(H, h.dtype)                       # direct error δ_t of the row
    carry = np.zeros((n, H), h.dtype)               # dh ⊙ (1 − s): the leak path
    mm = np.zeros((n, H), h.dtype)                  # [da, dpre_s] U of the step after
    Up = weight_panels(UC, tune)
    for t in range(T - 1, -1, -1):
        r0 = ((T - 1 - t) % W) * n                  # this step's rows in the window
        for i in range(n):
            b = b0 + i
            d, hprev = Dw[r0 + i], h[t, b]
            output_error_row(dy[t, b], W_out, h[t + 1, b], dl, dWo[ck])
            c = h[t + 1, b] if mode == 0 else cand[t, b]          # h̃_t (= h_t for the rnn)
            cr, mr = carry[i], mm[i]
            stash_row(Zw[r0 + i], hprev, xa[t, b])
            if mode == 0:
                for j in range(H):
                    dh = cr[j] + mr[j] + dl[j]
                    d[j] = dh * (one - c[j] * c[j])
            elif mode == 1:
                for j in range(H):
                    dh = cr[j] + mr[j] + dl[j]
                    d[j] = dh * s_const * (one - c[j] * c[j])
                    cr[j] = dh * (one - s_const)
            elif mode == 2:
                sv = s[t, b, 0]
                acc = 0.0
                for j in range(H):
                    dh = cr[j] + mr[j] + dl[j]
                    d[j] = dh * sv * (one - c[j] * c[j])
                    cr[j] = dh * (one - sv)
                    acc += dh * (c[j] - hprev[j])
                d[H] = like(sv, acc) * (sv * (one - sv))
            else:
                sr = s[t, b]
                for j in range(H):
                    dh = cr[j] + mr[j] + dl[j]
                    sv = sr[j]
                    d[j] = dh * sv * (one - c[j] * c[j])
                    cr[j] = dh * (one - sv)
                    d[H + j] = dh * (c[j] - hprev[j]) * (sv * (one - sv))
            if layernorm:
                da = d[:H]
                ln_back_row(da, gamma, ahat[t, b], sig[t, b, 0], dgam[b], dbet[b], da)
        gemm_w(Dw[r0:r0 + n], UC, Up, mm, 0, tune)  # one (n, G) × (G, H) GEMM per step
        if r0 == (W - 1) * n or t == 0:             # window full (or last step): weight GEMM
            gemm_tn(Dw[:r0 + n], Zw[:r0 + n], dZ[ck], 1)


@njit(**KERNEL)
def _ln_matrix_terms(ahat, W):
    """â W for every (t, b) (one GEMM) and the column means of W, for J_LN W (§1.7)."""
    T, B, H = ahat.shape
    proj = np.dot(ahat.reshape(T * B, H), W).reshape(T, B, W.shape[1])
    m = np.zeros(W.shape[1], W.dtype)
    for q in range(H):
        for k in range(W.shape[1]):
            m[k] += W[q, k]
    return proj, m / H


@njit(**KERNEL)
def jacobian_kernel(h, cand, s, ahat, sig, W_h, Ug, mode, s_const, gamma, layernorm, diagonal):
    """J[t] = ∂h_{t+1}/∂h_t (T, B, H, H), or its diagonal (T, B, 1, H) when ``diagonal``."""
    T1, B, H = h.shape
    T = T1 - 1
    one = like(h[0, 0, 0], 1.0)
    if layernorm:
        proj, m = _ln_matrix_terms(ahat, W_h)
    else:
        proj, m = np.empty((0, B, H), h.dtype), np.empty(0, h.dtype)
    inv_h = like(one, 1.0 / H)
    # Same rank for both cases (one compiled signature); the diagonal comes back as (T, B, 1, H).
    J = np.zeros((T, B, 1, H), h.dtype) if diagonal else np.zeros((T, B, H, H), h.dtype)
    for tb in range(T * B):
        t, b = tb // B, tb % B
        c, hprev = cand[t, b], h[t, b]
        for q in range(H):
            if mode == 0:
                sq = one
            elif mode == 1:
                sq = s_const
            elif mode == 2:
                sq = s[t, b, 0]
            else:
                sq = s[t, b, q]
            coef = sq * (one - c[q] * c[q])          # s ⊙ h̃'
            gcoef = (c[q] - hprev[q]) * (sq * (one - sq))   # (h̃ − h_{t−1}) ⊙ s'
            urow = 0 if mode == 2 else q
            if diagonal:
                jl = W_h[q, q]
                if layernorm:
                    jl = gamma[q] * (W_h[q, q] - m[q] - ahat[t, b, q] * proj[t, b, q] * inv_h) / sig[t, b, 0]
                v = coef * jl
                if mode >= 1:
                    v += one - sq
                if mode >= 2:
                    v += gcoef * Ug[urow, q]
                J[t, b, 0, q] = v
            else:
                row = J[t, b, q]
                if layernorm:
                    sc = gamma[q] / sig[t, b, 0]
                    aq = ahat[t, b, q] * inv_h
                    pr = proj[t, b]
                    for k in range(H):
                        row[k] = coef * (sc * (W_h[q, k] - m[k] - aq * pr[k]))
                else:
                    for k in range(H):
                        row[k] = coef * W_h[q, k]
                if mode >= 2:
                    for k in range(H):
                        row[k] += gcoef * Ug[urow, k]
                if mode >= 1:
                    row[q] += one - sq
    return J


# ---------------------------------------------------------------- Python glue
def _operands(cell, p):
    mode = mode_of(cell)
    blocks = [(p["W_x"], p.get("b_x"))]
    rec = [p["W_h"]]
    if mode == 2:
        blocks.append((p["w_s"][None, :], p.get("b_s")))
        rec.append(p["u_s"][None, :])
    elif mode == 3:
        blocks.append((p["W_s"], p.get("b_s")))
        rec.append(p["U_s"])
    UC = np.ascontiguousarray(np.concatenate(rec, axis=0))
    s_const = cell.dtype.type(cell.s if mode == 1 else 1.0)
    return mode, stack_input(cell, blocks), UC, s_const


def operands(cell, p):
    """The fused trainer's weight operands: Wa, Uᵀ, U, γ, β, W_outᵀ, b_out, W_out (see _run_forward)."""
    _, Wa, UC, _ = _operands(cell, p)
    return (Wa, np.ascontiguousarray(UC.T), UC, *ln_operands(cell, p), *readout_params(cell, p), p["W_out"])


def _run_forward(cell, p, x, alloc=None):
    alloc = alloc or fresh(cell)
    T, B, _ = x.shape
    H = cell.n_hidden
    mode, Wa, UC, s_const = _operands(cell, p)
    gamma, beta = ln_operands(cell, p)
    xa = augmented_input(cell, x, alloc)
    nl = T if cell.layernorm else 0
    gw = (0, 0, 1, H)[mode]
    h, cand, s = alloc(T + 1, B, H), alloc(T if mode else 0, B, H), alloc(T, B, gw)
    ahat, sig, yhat = alloc(nl, B, H), alloc(nl, B, 1), alloc(T, B, cell.n_out)
    with single_threaded_blas():
        run_chunks(forward_rows, chunks(B), xa, Wa, np.ascontiguousarray(UC.T), mode, s_const,
                   gamma, beta, cell.layernorm, *readout_params(cell, p), h, cand, s, ahat, sig, yhat,
                   tuning_params())
    if mode == 0:
        cand = h[1:]                                  # the rnn's h̃_t is h_t (a view, see above)
    return xa, (mode, Wa, UC, s_const), h, cand, s, ahat, sig, yhat


def _records(cell, mode, cand, s, ahat, sig):
    rec = {"cand": cand}
    if cell.layernorm:
        rec["ln_ahat"], rec["ln_sig"] = ahat, sig
    if mode >= 2:
        rec["s"] = s
    return rec


def forward(cell, p, x, run=None):
    """Trace with the reference's records (cand, s, ln_ahat, ln_sig); ``run``: a _run_forward result."""
    run = run or _run_forward(cell, p, x)
    _, (mode, *_), h, cand, s, ahat, sig, yhat = run
    if mode == 0:
        cand = cand.copy()                            # a trace owns its arrays (no view of h)
    records = _records(cell, mode, cand, s, ahat, sig)
    leak = None
    if mode == 1:
        leak = np.full(cand.shape, 1.0 - cell.s, dtype=cell.dtype)
    elif mode >= 2:
        leak = (1.0 - s) * np.ones_like(cand)
    gates = {"s": s} if mode >= 2 else {}
    return with_run(reference.Trace(h=h, c=None, y=yhat, gates=gates, leak=leak, cand=cand, records=records), run)


def loss_and_grad(cell, p, x, y, mask):
    alloc = workspace(cell, x)                        # internal buffers, reused across calls
    xa, (mode, Wa, UC, s_const), h, cand, s, ahat, sig, yhat = _run_forward(cell, p, x, alloc)
    loss, dy, grads = loss_stage(cell, yhat, y, mask)
    gamma, _ = ln_operands(cell, p)
    T, B, _ = x.shape
    H = cell.n_hidden
    bounds = chunks(B)
    G, Da = UC.shape[0], xa.shape[2]
    dZ = np.zeros((len(bounds), G, H + Da), dtype=cell.dtype)
    nl = B if cell.layernorm else 0
    dgam, dbet, dWo = np.zeros((nl, H)), np.zeros((nl, H)), np.zeros((len(bounds), cell.n_out, H))
    with single_threaded_blas():
        run_chunks(backward_rows, bounds, h, xa, dy, p["W_out"], UC, mode, s_const, cand, s, ahat,
                   sig, gamma, cell.layernorm, dZ, dgam, dbet, dWo, tuning_params())
    grads["W_out"], dgamma, dbeta = fixed_order_sums(dWo, dgam, dbet, cell.dtype)
    return loss, assemble(cell, p, grads, dZ.sum(axis=0), dgamma, dbeta)


def assemble(cell, p, grads, dZ, dgamma, dbeta):
    """The gradient dict from the reduced kernel outputs: dZ = [dU | dWa] (G, H + D[+1]) summed over
    chunks, dγ, dβ (float64); ``grads`` holds W_out (and b_out) already. Copies only (the fused
    trainer maps it once per training, fused.py)."""
    H = cell.n_hidden
    mode = mode_of(cell)
    dU, dWa = dZ[:, :H], dZ[:, H:]
    blocks = [("W_x", "b_x")]
    if mode == 2:
        blocks.append(("w_s", "b_s"))
        grads["u_s"] = dU[H]
    elif mode == 3:
        blocks.append(("W_s", "b_s"))
        grads["U_s"] = dU[H:]
    unstack_input(cell, dWa, blocks, grads)
    grads["W_h"] = dU[:H]
    if cell.layernorm:
        return ordered(p, grads, dgamma, dbeta, cell.dtype)
    return ordered(p, grads)


def forward_and_jacobian_diagonal(cell, p, x):
    """(trace, diag J) from one forward pass (the diagnostics' gate factors need both)."""
    run = _run_forward(cell, p, x)
    return forward(cell, p, x, run), jacobians(cell, p, x, True, run)


def jacobians(cell, p, x, diagonal, run=None):
    _, (mode, _, UC, s_const), h, cand, s, ahat, sig, _ = run or _run_forward(cell, p, x)
    gamma, _ = ln_operands(cell, p)
    H = cell.n_hidden
    Ug = UC[H:] if mode >= 2 else UC[:0]
    J = jacobian_kernel(h, cand, s, ahat, sig, p["W_h"], np.ascontiguousarray(Ug), mode, s_const,
                        gamma, cell.layernorm, diagonal)
    return np.ascontiguousarray(J[:, :, 0, :]) if diagonal else J
