"""Fused kernels for the LSTM (docs/cells.md §1.3, §1.7): torch.nn.LSTM equations, optional LN on g.

  [i, f, o] = σ(W x + b + U h_{t−1}),  g = tanh(LN(W_g x + b_g + U_g h_{t−1}))
  c_t = f ⊙ c_{t−1} + i ⊙ g,   h_t = o ⊙ tanh(c_t)

Stacked columns [i | f | g | o] (as nn.LSTM): Wa (D[+1], 4H), Uᵀ (H, 4H); per step the GEMMs
xa_t Wa and h_{t−1} Uᵀ (B, H)×(H, 4H), one fused loop over the units, the read-out. The time
loops run per chunk of sequences on a thread pool (threads.py).

BPTT (§1.8), dh = δ_t + (matrix part), dc the carried cell error:
  dc̃ = dc + dh o (1 − tanh² c_t),  dp_i = dc̃ g i',  dp_f = dc̃ c_{t−1} f',  dp_o = dh tanh(c_t) o',
  dp_g = LNᵀ(dc̃ i g'),  dh_{t−1} = [dp_i, dp_f, dp_g, dp_o] [U_i; U_f; U_g; U_o],  dc_{t−1} = dc̃ f.
[dU | dWa] = Σ_t dpre_tᵀ [h_{t−1} | xa_t]: one GEMM per window of steps inside the loop.

Jacobian over the state (h, c), 2H × 2H, e = o (1 − tanh² c_t):
  ∂c/∂h = diag(c_{t−1} f') U_f + diag(g i') U_i + diag(i g') J_LN U_g,  ∂c/∂c = diag(f),
  ∂h/∂h = diag(tanh(c_t) o') U_o + diag(e) ∂c/∂h,  ∂h/∂c = diag(e f).
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

GATES = "ifgo"


@njit(**TKERNEL)
def forward_rows(ck, b0, b1, xa, Wa, UT, gamma, beta, layernorm, W_outT, b_out,
                 h, c, i, f, g, o, tc, ahat, sig, yhat, tune):
    """Forward pass for the sequences b0 ≤ b < b1 (chunk ck, threads.py); fills their rows of
    h, c (T+1, B, H); i, f, g, o, tanh(c_t) (T, B, H); â, σ (LN only); ŷ."""
    T = xa.shape[0]
    H = UT.shape[0]
    m = b1 - b0
    pre = np.empty((m, 4 * H), xa.dtype)
    Wp, Up = weight_panels(Wa, tune), weight_panels(UT, tune)   # tune: tuning.params()
    for b in range(b0, b1):
        h[0, b] = 0
        c[0, b] = 0
    for t in range(T):
        gemm_w(xa[t][b0:b1], Wa, Wp, pre, 0, tune)      # xa_t Wa, then + h_{t−1} Uᵀ (β = 1)
        gemm_w(h[t][b0:b1], UT, Up, pre, 1, tune)
        for k in range(m):
            b = b0 + k
            pr = pre[k]
            a = g[t, b]                                  # g row doubles as scratch for the LN input
            for j in range(H):
                a[j] = pr[2 * H + j]
            if layernorm:
                sig[t, b, 0] = ln_row(a, gamma, beta, ahat[t, b], a)
            ir, fr, orow, tcr = i[t, b], f[t, b], o[t, b], tc[t, b]
            cprev, cnew, hnew = c[t, b], c[t + 1, b], h[t + 1, b]
            for j in range(H):
                iv = sigmoid(pr[j])
                fv = sigmoid(pr[H + j])
                ov = sigmoid(pr[3 * H + j])
                gv = tanh(a[j])
                cv = fv * cprev[j] + iv * gv
                tv = tanh(cv)
                ir[j], fr[j], a[j], orow[j], tcr[j] = iv, fv, gv, ov, tv
                cnew[j] = cv
                hnew[j] = ov * tv
        readout_step(h[t + 1][b0:b1], W_outT, b_out, yhat[t][b0:b1])


@njit(**TKERNEL)
def backward_rows(ck, b0, b1, h, c, xa, dy, W_out, UC, i, f, g, o, tc, ahat, sig, gamma, layernorm,
                  dZ, dgam, dbet, dWo, tune):
    """BPTT for the sequences b0 ≤ b < b1 (chunk ck): adds Σ_t dpre_tᵀ [h_{t−1} | xa_t] to dZ[ck]
    (4H, H + D[+1]) window by window (blas.window_steps); fills their rows of the LN partials
    dgam, dbet (B, H); dW_out part in dWo[ck]."""
    T = dy.shape[0]
    H = UC.shape[1]
    m = b1 - b0
    Da = xa.shape[2]
    one = like(h[0, 0, 0], 1.0)
    W = window_steps(m)
    Dw = np.empty((W * m, 4 * H), h.dtype)           # dpre rows of the window
    Zw = np.empty((W * m, H + Da), h.dtype)          # [h_{t−1} | xa_t] rows of the window
    dl = np.empty(H, h.dtype)                        # direct error δ_t of the row
    dc = np.zeros((m, H), h.dtype)
    mm = np.zeros((m, H), h.dtype)
    Up = weight_panels(UC, tune)
    for t in range(T - 1, -1, -1):
        r0 = ((T - 1 - t) % W) * m
        for k in range(m):
            b = b0 + k
            ir, fr, gr, orow, tcr = i[t, b], f[t, b], g[t, b], o[t, b], tc[t, b]
            cprev, d, dcr, mr = c[t, b], Dw[r0 + k], dc[k], mm[k]
            output_error_row(dy[t, b], W_out, h[t + 1, b], dl, dWo[ck])
            stash_row(Zw[r0 + k], h[t, b], xa[t, b])
            for j in range(H):
                dh = mr[j] + dl[j]
                iv, fv, gv, ov, tv = ir[j], fr[j], gr[j], orow[j], tcr[j]
                dct = dcr[j] + dh * ov * (one - tv * tv)
                d[j] = dct * gv * (iv * (one - iv))
                d[H + j] = dct * cprev[j] * (fv * (one - fv))
                d[2 * H + j] = dct * iv * (one - gv * gv)
                d[3 * H + j] = dh * tv * (ov * (one - ov))
                dcr[j] = dct * fv
            if layernorm:
                da = d[2 * H:3 * H]
                ln_back_row(da, gamma, ahat[t, b], sig[t, b, 0], dgam[b], dbet[b], da)
        gemm_w(Dw[r0:r0 + m], UC, Up, mm, 0, tune)
        if r0 == (W - 1) * m or t == 0:             # window full (or last step): weight GEMM
            gemm_tn(Dw[:r0 + m], Zw[:r0 + m], dZ[ck], 1)


@njit(**KERNEL)
def jacobian_kernel(c, i, f, g, o, tc, ahat, sig, U_i, U_f, U_g, U_o, gamma, layernorm, diagonal):
    """J (T, B, 2H, 2H) over the state (h, c), or its diagonal as (T, B, 1, 2H)."""
    T1, B, H = c.shape
    T = T1 - 1
    one = like(c[0, 0, 0], 1.0)
    inv_h = like(one, 1.0 / H)
    if layernorm:
        proj = np.dot(ahat.reshape(T * B, H), U_g).reshape(T, B, H)
        m = np.zeros(H, c.dtype)
        for q in range(H):
            for k in range(H):
                m[k] += U_g[q, k]
        m = m / H
    else:
        proj = np.empty((0, B, H), c.dtype)
        m = np.empty(0, c.dtype)
    J = np.zeros((T, B, 1, 2 * H), c.dtype) if diagonal else np.zeros((T, B, 2 * H, 2 * H), c.dtype)
    for tb in range(T * B):
        t, b = tb // B, tb % B
        for q in range(H):
            iv, fv, gv, ov, tv = i[t, b, q], f[t, b, q], g[t, b, q], o[t, b, q], tc[t, b, q]
            e = ov * (one - tv * tv)
            af = c[t, b, q] * (fv * (one - fv))
            ai = gv * (iv * (one - iv))
            ag = iv * (one - gv * gv)
            ao = tv * (ov * (one - ov))
            if layernorm:
                sc = gamma[q] / sig[t, b, 0]
                aq = ahat[t, b, q] * inv_h
            if diagonal:
                kd = U_g[q, q]
                if layernorm:
                    kd = sc * (U_g[q, q] - m[q] - aq * proj[t, b, q])
                dcdh = af * U_f[q, q] + ai * U_i[q, q] + ag * kd
                J[t, b, 0, q] = ao * U_o[q, q] + e * dcdh
                J[t, b, 0, H + q] = fv
            else:
                rh, rc = J[t, b, q], J[t, b, H + q]
                for k in range(H):
                    kq = U_g[q, k]
                    if layernorm:
                        kq = sc * (U_g[q, k] - m[k] - aq * proj[t, b, k])
                    dcdh = af * U_f[q, k] + ai * U_i[q, k] + ag * kq
                    rc[k] = dcdh
                    rh[k] = ao * U_o[q, k] + e * dcdh
                rh[H + q] = e * fv
                rc[H + q] = fv
    return J


# ---------------------------------------------------------------- Python glue
def _run_forward(cell, p, x, alloc=None):
    alloc = alloc or fresh(cell)
    T, B, _ = x.shape
    H = cell.n_hidden
    xa = augmented_input(cell, x, alloc)
    Wa = stack_input(cell, [(p[f"W_{k}"], p.get(f"b_{k}")) for k in GATES])
    UC = np.ascontiguousarray(np.concatenate([p[f"U_{k}"] for k in GATES], axis=0))
    gamma, beta = ln_operands(cell, p)
    nl = T if cell.layernorm else 0
    bufs = ((alloc(T + 1, B, H), alloc(T + 1, B, H))
            + tuple(alloc(T, B, H) for _ in range(5))
            + (alloc(nl, B, H), alloc(nl, B, 1), alloc(T, B, cell.n_out)))
    with single_threaded_blas():
        run_chunks(forward_rows, chunks(B), xa, Wa, np.ascontiguousarray(UC.T), gamma, beta,
                   cell.layernorm, *readout_params(cell, p), *bufs, tuning_params())
    return xa, UC, bufs                               # h, c, i, f, g, o, tanh c, â, σ, ŷ


def forward(cell, p, x):
    """Trace with the reference's records (i, f, o, g, tc, ln_ahat, ln_sig)."""
    run = _run_forward(cell, p, x)
    _, _, (h, c, i, f, g, o, tc, ahat, sig, yhat) = run
    rec = {"i": i, "f": f, "o": o}
    if cell.layernorm:
        rec["ln_ahat"], rec["ln_sig"] = ahat, sig
    rec["g"], rec["tc"] = g, tc
    return with_run(reference.Trace(h=h, c=c, y=yhat, gates={"i": i, "f": f, "g": g, "o": o}, leak=f,
                                    cand=None, records=rec), run)


def loss_and_grad(cell, p, x, y, mask):
    alloc = workspace(cell, x)                        # internal buffers, reused across calls
    T, B, _ = x.shape
    H = cell.n_hidden
    xa, UC, (h, c, i, f, g, o, tc, ahat, sig, yhat) = _run_forward(cell, p, x, alloc)
    loss, dy, grads = loss_stage(cell, yhat, y, mask)
    gamma, _ = ln_operands(cell, p)
    bounds = chunks(B)
    dZ = np.zeros((len(bounds), 4 * H, H + xa.shape[2]), dtype=cell.dtype)
    nl = B if cell.layernorm else 0
    dgam, dbet, dWo = np.zeros((nl, H)), np.zeros((nl, H)), np.zeros((len(bounds), cell.n_out, H))
    with single_threaded_blas():
        run_chunks(backward_rows, bounds, h, c, xa, dy, p["W_out"], UC, i, f, g, o, tc, ahat, sig,
                   gamma, cell.layernorm, dZ, dgam, dbet, dWo, tuning_params())
    grads["W_out"], dgamma, dbeta = fixed_order_sums(dWo, dgam, dbet, cell.dtype)
    return loss, assemble(cell, p, grads, dZ.sum(axis=0), dgamma, dbeta)


def assemble(cell, p, grads, dZ, dgamma, dbeta):
    """Gradient dict from the chunk-summed dZ = [dU | dWa] (4H, H + D[+1]) and the LN sums; ``grads``
    holds W_out (and b_out). Copies only (mapped once by the fused trainer)."""
    H = cell.n_hidden
    dU, dWa = dZ[:, :H], dZ[:, H:]
    unstack_input(cell, dWa, [(f"W_{k}", f"b_{k}") for k in GATES], grads)
    for n, k in enumerate(GATES):
        grads[f"U_{k}"] = dU[n * H:(n + 1) * H]
    if cell.layernorm:
        return ordered(p, grads, dgamma, dbeta, cell.dtype)
    return ordered(p, grads)


def operands(cell, p):
    """The fused trainer's weight operands: Wa, Uᵀ, γ, β, W_outᵀ, b_out, W_out, U (U = [U_i; U_f; U_g; U_o])."""
    Wa = stack_input(cell, [(p[f"W_{k}"], p.get(f"b_{k}")) for k in GATES])
    UC = np.ascontiguousarray(np.concatenate([p[f"U_{k}"] for k in GATES], axis=0))
    return (Wa, np.ascontiguousarray(UC.T), *ln_operands(cell, p), *readout_params(cell, p), p["W_out"], UC)


def jacobians(cell, p, x, diagonal):
    _, _, (h, c, i, f, g, o, tc, ahat, sig, _) = _run_forward(cell, p, x)
    gamma, _ = ln_operands(cell, p)
    J = jacobian_kernel(c, i, f, g, o, tc, ahat, sig, p["U_i"], p["U_f"], p["U_g"], p["U_o"], gamma,
                        cell.layernorm, diagonal)
    return np.ascontiguousarray(J[:, :, 0, :]) if diagonal else J
