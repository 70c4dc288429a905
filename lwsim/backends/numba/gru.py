"""Fused kernels for the GRU, both conventions (docs/cells.md §1.2, §1.7).

"cho": z, r = σ(W_{z,r} x + b + U_{z,r} h_{t−1}),  g = tanh(LN(W_g x + b_g + U_g (r ⊙ h_{t−1}))),
       h_t = h_{t−1} + z ⊙ (g − h_{t−1}).
  The reset gate sits before U_g, so a step needs two recurrent GEMMs: h_{t−1} [U_z; U_r]ᵀ (B, 2H),
  then (r ⊙ h_{t−1}) U_gᵀ (B, H) (plus the input GEMM xa_t Wa and the read-out, as every cell).
  BPTT, dh the total error on h_t:
    dpz = dh (g − h) z',  da = LNᵀ(dh z g'),  drh = da U_g,  dpr = drh h r',
    dh_{t−1} = dh (1 − z) + drh r + [dpz, dpr] [U_z; U_r]
  Weight gradients, one GEMM each per window of steps inside the loop (blas.window_steps):
  [dU_{z,r} | dW_{z,r}] = Σ_t [dpz, dpr]ᵀ [h_{t−1} | xa_t],  [dU_g | dW_g] = Σ_t daᵀ [(r ⊙ h)_t | xa_t]
  (r ⊙ h is kept from the forward).

"torch" (torch.nn.GRU): r, z = σ(W_i· x + b_i· + W_h· h + b_h·),  hn = W_hn h + b_hn,
       n = tanh(W_in x + b_in + r ⊙ hn),  h_t = n + z ⊙ (h_{t−1} − n).
  One GEMM per step, h_{t−1} [W_hr; W_hz; W_hn]ᵀ (B, 3H). BPTT:
    dpz = dh (h − n) z',  dpn = dh (1 − z) n',  dhn = dpn r,  dpr = dpn hn r',
    dh_{t−1} = dh z + [dpr, dpz, dhn] [W_hr; W_hz; W_hn]
  The hidden-side pre-activation errors [dpr, dpz, dhn] give dW_h·, b_hn; the input side differs
  only in the n block (dpn), so dW_in, b_in come from one more (H, D+1) GEMM; b_hr = b_ir, b_hz = b_iz.

Gate order of the stacked columns: [z | r | g] (cho), [r | z | n] (torch, as nn.GRU).
The time loops run per chunk of sequences on a thread pool (threads.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ... import reference
from .blas import gemm_tn, stash_row, window_steps
from .common import KERNEL, TKERNEL, fixed_order_sums, like, ln_back_row, ln_row, sigmoid, tanh
from .readout import (with_run, augmented_input, empty, ln_operands, loss_stage, fresh, ordered,
                      output_error_row, readout_params, readout_step, stack_input, unstack_input)
from .threads import chunks, run_chunks, single_threaded_blas
from .tile import gemm_w, weight_panels
from .tuning import params as tuning_params
from .workspace import workspace


# ================================================================= convention "cho"
@njit(**TKERNEL)
def cho_forward_rows(ck, b0, b1, xa, Wa, UzrT, UgT, gamma, beta, layernorm, W_outT, b_out,
                     h, z, r, g, rh, ahat, sig, yhat, tune):
    """Forward pass for the sequences b0 ≤ b < b1 (chunk ck, threads.py); fills their rows of
    h (T+1, B, H), z, r, g, r⊙h (T, B, H), â, σ (LN only) and ŷ."""
    T = xa.shape[0]
    H = UgT.shape[0]
    n = b1 - b0
    pre = np.empty((n, 3 * H), xa.dtype)             # [z | r | g] pre-activations of this step
    Wp, Up, Gp = weight_panels(Wa, tune), weight_panels(UzrT, tune), weight_panels(UgT, tune)
    for b in range(b0, b1):
        h[0, b] = 0
    for t in range(T):
        gemm_w(xa[t][b0:b1], Wa, Wp, pre, 0, tune)    # input parts, then the recurrent parts
        gemm_w(h[t][b0:b1], UzrT, Up, pre[:, :2 * H], 1, tune)   # accumulated onto them (β = 1)
        for i in range(n):
            b = b0 + i
            pr, hprev = pre[i], h[t, b]
            zr, rr, rhr = z[t, b], r[t, b], rh[t, b]
            for j in range(H):
                zr[j] = sigmoid(pr[j])
                rv = sigmoid(pr[H + j])
                rr[j] = rv
                rhr[j] = rv * hprev[j]
        gemm_w(rh[t][b0:b1], UgT, Gp, pre[:, 2 * H:], 1, tune)   # needs r_t: a second GEMM
        for i in range(n):
            b = b0 + i
            pr, hprev, hnew, zr = pre[i], h[t, b], h[t + 1, b], z[t, b]
            a = g[t, b]
            for j in range(H):
                a[j] = pr[2 * H + j]
            if layernorm:
                sig[t, b, 0] = ln_row(a, gamma, beta, ahat[t, b], a)
            for j in range(H):
                gv = tanh(a[j])
                a[j] = gv
                hnew[j] = hprev[j] + zr[j] * (gv - hprev[j])
        readout_step(h[t + 1][b0:b1], W_outT, b_out, yhat[t][b0:b1])


@njit(**TKERNEL)
def cho_backward_rows(ck, b0, b1, h, xa, dy, W_out, Uzr, Ug, z, r, g, rh, ahat, sig, gamma,
                      layernorm, dZ, dG, dgam, dbet, dWo, tune):
    """BPTT for the sequences b0 ≤ b < b1 (chunk ck), weight gradients window by window
    (blas.window_steps): dZ[ck] += Σ_t dzr_tᵀ [h_{t−1} | xa_t] (2H, H + D[+1]) and
    dG[ck] += Σ_t da_tᵀ [(r ⊙ h)_t | xa_t] (H, H + D[+1]), the xa_t rows shared by both
    windows; fills their rows of the LN partials
    dgam, dbet (B, H); dW_out part in dWo[ck]."""
    T = dy.shape[0]
    H = Ug.shape[0]
    n = b1 - b0
    Da = xa.shape[2]
    one = like(h[0, 0, 0], 1.0)
    W = window_steps(n)
    Dzr = np.empty((W * n, 2 * H), h.dtype)         # [dpz | dpr] rows of the window
    Dg = np.empty((W * n, H), h.dtype)              # da rows of the window
    Zw = np.empty((W * n, H + Da), h.dtype)         # [h_{t−1} | xa_t]
    Rw = np.empty((W * n, H), h.dtype)              # (r ⊙ h_{t−1}) rows (xa_t: in Zw)
    dl = np.empty(H, h.dtype)                       # direct error δ_t of the row
    carry = np.zeros((n, H), h.dtype)
    mm = np.zeros((n, H), h.dtype)
    drh = np.empty((n, H), h.dtype)
    Gp, Up = weight_panels(Ug, tune), weight_panels(Uzr, tune)
    for t in range(T - 1, -1, -1):
        r0 = ((T - 1 - t) % W) * n
        for i in range(n):
            b = b0 + i
            zr, gr, hprev = z[t, b], g[t, b], h[t, b]
            output_error_row(dy[t, b], W_out, h[t + 1, b], dl, dWo[ck])
            dz, da, cr, mr = Dzr[r0 + i], Dg[r0 + i], carry[i], mm[i]
            stash_row(Zw[r0 + i], hprev, xa[t, b])
            Rw[r0 + i] = rh[t, b]
            for j in range(H):
                dh = cr[j] + mr[j] + dl[j]
                zv, gv = zr[j], gr[j]
                dz[j] = dh * (gv - hprev[j]) * (zv * (one - zv))
                da[j] = dh * zv * (one - gv * gv)
                cr[j] = dh * (one - zv)
            if layernorm:
                ln_back_row(da, gamma, ahat[t, b], sig[t, b, 0], dgam[b], dbet[b], da)
        gemm_w(Dg[r0:r0 + n], Ug, Gp, drh, 0, tune)    # ∂L/∂(r ⊙ h_{t−1})
        for i in range(n):
            b = b0 + i
            rr, hprev, dz, cr, dr = r[t, b], h[t, b], Dzr[r0 + i], carry[i], drh[i]
            for j in range(H):
                rv = rr[j]
                dz[H + j] = dr[j] * hprev[j] * (rv * (one - rv))
                cr[j] += dr[j] * rv
        gemm_w(Dzr[r0:r0 + n], Uzr, Up, mm, 0, tune)
        if r0 == (W - 1) * n or t == 0:             # window full (or last step): weight GEMMs
            gemm_tn(Dzr[:r0 + n], Zw[:r0 + n], dZ[ck], 1)
            gemm_tn(Dg[:r0 + n], Rw[:r0 + n], dG[ck][:, :H], 1)
            gemm_tn(Dg[:r0 + n], Zw[:r0 + n, H:], dG[ck][:, H:], 1)


@njit(**KERNEL)
def cho_jacobian_kernel(h, z, r, g, ahat, sig, U_z, U_r, U_g, gamma, layernorm):
    """Full J (T, B, H, H): diag(1−z) + diag((g−h) z') U_z + diag(z g') K [diag(r) + diag(h r') U_r],
    K = J_LN U_g. The K diag(h r') U_r product is an H×H×H GEMM per (t, b) (BLAS, serial loop)."""
    T1, B, H = h.shape
    T = T1 - 1
    one = like(h[0, 0, 0], 1.0)
    inv_h = like(one, 1.0 / H)
    if layernorm:
        proj = np.dot(ahat.reshape(T * B, H), U_g).reshape(T, B, H)
        m = np.zeros(H, h.dtype)
        for q in range(H):
            for k in range(H):
                m[k] += U_g[q, k]
        m = m / H
    J = np.empty((T, B, H, H), h.dtype)
    Kv = np.empty((H, H), h.dtype)
    Kr = np.empty((H, H), h.dtype)
    KU = np.empty((H, H), h.dtype)
    v = np.empty(H, h.dtype)
    for t in range(T):
        for b in range(B):
            zr, rr, gr, hprev = z[t, b], r[t, b], g[t, b], h[t, b]
            for k in range(H):
                v[k] = hprev[k] * (rr[k] * (one - rr[k]))
            for q in range(H):
                if layernorm:
                    sc = gamma[q] / sig[t, b, 0]
                    aq = ahat[t, b, q] * inv_h
                    for k in range(H):
                        kq = sc * (U_g[q, k] - m[k] - aq * proj[t, b, k])
                        Kv[q, k] = kq * v[k]
                        Kr[q, k] = kq * rr[k]
                else:
                    for k in range(H):
                        Kv[q, k] = U_g[q, k] * v[k]
                        Kr[q, k] = U_g[q, k] * rr[k]
            np.dot(Kv, U_r, KU)
            for q in range(H):
                a1 = (gr[q] - hprev[q]) * (zr[q] * (one - zr[q]))
                a2 = zr[q] * (one - gr[q] * gr[q])
                row = J[t, b, q]
                for k in range(H):
                    row[k] = a1 * U_z[q, k] + a2 * (Kr[q, k] + KU[q, k])
                row[q] += one - zr[q]
    return J


@njit(**KERNEL)
def cho_jacobian_diag_kernel(h, z, r, g, ahat, sig, U_z, U_r, U_g, gamma, layernorm):
    """diag(J) (T, B, H) in O(T·B·H²): with v = h ⊙ r' and P = U_g ⊙ U_rᵀ,
    Σ_j K_qj v_j U_r[j, q] = (γ_q/σ)[(v Pᵀ)_q − ((m ⊙ v) U_r)_q − (â_q/H)((âU_g ⊙ v) U_r)_q]
    (m the column means of U_g; without LN only (v Pᵀ)_q) — three GEMMs over all (t, b)."""
    T1, B, H = h.shape
    T = T1 - 1
    TB = T * B
    one = like(h[0, 0, 0], 1.0)
    inv_h = like(one, 1.0 / H)
    V = np.empty((TB, H), h.dtype)
    z2, r2, g2 = z.reshape(TB, H), r.reshape(TB, H), g.reshape(TB, H)
    hp2 = h[:T].reshape(TB, H)
    for i in range(TB):
        for k in range(H):
            V[i, k] = hp2[i, k] * (r2[i, k] * (one - r2[i, k]))
    PT = np.empty((H, H), h.dtype)                    # Pᵀ[j, q] = U_g[q, j] U_r[j, q]
    for j in range(H):
        for q in range(H):
            PT[j, q] = U_g[q, j] * U_r[j, q]
    cross = np.dot(V, PT)
    out = np.empty((T, B, H), h.dtype)
    o2 = out.reshape(TB, H)
    if layernorm:
        a2 = ahat.reshape(TB, H)
        proj = np.dot(a2, U_g)
        m = np.zeros(H, h.dtype)
        for q in range(H):
            for k in range(H):
                m[k] += U_g[q, k]
        m = m / H
        MV = np.empty((TB, H), h.dtype)
        PV = np.empty((TB, H), h.dtype)
        for i in range(TB):
            for k in range(H):
                MV[i, k] = m[k] * V[i, k]
                PV[i, k] = proj[i, k] * V[i, k]
        c2 = np.dot(MV, U_r)
        c3 = np.dot(PV, U_r)
        s2 = sig.reshape(TB)
    for i in range(TB):
        for q in range(H):
            zv, rv, gv, hv = z2[i, q], r2[i, q], g2[i, q], hp2[i, q]
            if layernorm:
                sc = gamma[q] / s2[i]
                aq = a2[i, q] * inv_h
                kd = sc * (U_g[q, q] - m[q] - aq * proj[i, q])
                cr = sc * (cross[i, q] - c2[i, q] - aq * c3[i, q])
            else:
                kd = U_g[q, q]
                cr = cross[i, q]
            o2[i, q] = (one - zv + (gv - hv) * (zv * (one - zv)) * U_z[q, q]
                        + zv * (one - gv * gv) * (kd * rv + cr))
    return out


# ================================================================= convention "torch"
@njit(**TKERNEL)
def torch_forward_rows(ck, b0, b1, xa, Wa, WhT, bh, W_outT, b_out, h, r, z, n, hn, yhat, tune):
    """Forward pass for the sequences b0 ≤ b < b1 (chunk ck); fills their rows of h (T+1, B, H),
    r, z, n, hn = W_hn h + b_hn (T, B, H) and ŷ."""
    T = xa.shape[0]
    H = WhT.shape[0]
    m = b1 - b0
    xp = np.empty((m, 3 * H), xa.dtype)              # [r | z | n] input parts of this step
    hp = np.empty((m, 3 * H), xa.dtype)
    Wp, Up = weight_panels(Wa, tune), weight_panels(WhT, tune)
    for b in range(b0, b1):
        h[0, b] = 0
    for t in range(T):
        gemm_w(xa[t][b0:b1], Wa, Wp, xp, 0, tune)
        gemm_w(h[t][b0:b1], WhT, Up, hp, 0, tune)
        for i in range(m):
            b = b0 + i
            xr, hr, hprev, hnew = xp[i], hp[i], h[t, b], h[t + 1, b]
            rr, zr, nr, hnr = r[t, b], z[t, b], n[t, b], hn[t, b]
            for j in range(H):
                rv = sigmoid(xr[j] + (hr[j] + bh[j]))
                zv = sigmoid(xr[H + j] + (hr[H + j] + bh[H + j]))
                hv = hr[2 * H + j] + bh[2 * H + j]
                nv = tanh(xr[2 * H + j] + rv * hv)
                rr[j], zr[j], nr[j], hnr[j] = rv, zv, nv, hv
                hnew[j] = nv + zv * (hprev[j] - nv)
        readout_step(h[t + 1][b0:b1], W_outT, b_out, yhat[t][b0:b1])


@njit(**TKERNEL)
def torch_backward_rows(ck, b0, b1, h, xa, dy, W_out, Whc, r, z, n, hn, dZ, dN, dWo, tune):
    """BPTT for the sequences b0 ≤ b < b1 (chunk ck), weight gradients window by window
    (blas.window_steps): dZ[ck] += Σ_t dph_tᵀ [h_{t−1} | xa_t] (3H, H + D[+1]), dph = the
    hidden-side pre-activation errors [dpr, dpz, dhn], and dN[ck] += Σ_t dpn_tᵀ xa_t (H, D[+1]),
    dpn the input-side error of the n block; dW_out part in dWo[ck]."""
    T = dy.shape[0]
    H = Whc.shape[1]
    m = b1 - b0
    Da = xa.shape[2]
    one = like(h[0, 0, 0], 1.0)
    W = window_steps(m)
    Dh = np.empty((W * m, 3 * H), h.dtype)          # dph rows of the window
    Dn = np.empty((W * m, H), h.dtype)              # dpn rows of the window
    Zw = np.empty((W * m, H + Da), h.dtype)         # [h_{t−1} | xa_t]
    dl = np.empty(H, h.dtype)                       # direct error δ_t of the row
    carry = np.zeros((m, H), h.dtype)
    mm = np.zeros((m, H), h.dtype)
    Up = weight_panels(Whc, tune)
    for t in range(T - 1, -1, -1):
        r0 = ((T - 1 - t) % W) * m
        for i in range(m):
            b = b0 + i
            rr, zr, nr, hnr, hprev = r[t, b], z[t, b], n[t, b], hn[t, b], h[t, b]
            output_error_row(dy[t, b], W_out, h[t + 1, b], dl, dWo[ck])
            d, dn, cr, mr = Dh[r0 + i], Dn[r0 + i], carry[i], mm[i]
            stash_row(Zw[r0 + i], hprev, xa[t, b])
            for j in range(H):
                dh = cr[j] + mr[j] + dl[j]
                rv, zv, nv = rr[j], zr[j], nr[j]
                pn = dh * (one - zv) * (one - nv * nv)
                dn[j] = pn
                d[j] = pn * hnr[j] * (rv * (one - rv))
                d[H + j] = dh * (hprev[j] - nv) * (zv * (one - zv))
                d[2 * H + j] = pn * rv
                cr[j] = dh * zv
        gemm_w(Dh[r0:r0 + m], Whc, Up, mm, 0, tune)
        if r0 == (W - 1) * m or t == 0:             # window full (or last step): weight GEMMs
            gemm_tn(Dh[:r0 + m], Zw[:r0 + m], dZ[ck], 1)
            gemm_tn(Dn[:r0 + m], Zw[:r0 + m, H:], dN[ck], 1)


@njit(**KERNEL)
def torch_jacobian_kernel(h, r, z, n, hn, W_hr, W_hz, W_hn, diagonal):
    """J = diag(z) + diag((h − n) z') W_hz + diag((1 − z) n') [diag(r) W_hn + diag(hn r') W_hr];
    (T, B, H, H), or the diagonal as (T, B, 1, H)."""
    T1, B, H = h.shape
    T = T1 - 1
    one = like(h[0, 0, 0], 1.0)
    J = np.zeros((T, B, 1, H), h.dtype) if diagonal else np.zeros((T, B, H, H), h.dtype)
    for tb in range(T * B):
        t, b = tb // B, tb % B
        for q in range(H):
            zv, rv, nv, hv = z[t, b, q], r[t, b, q], n[t, b, q], h[t, b, q]
            a1 = (hv - nv) * (zv * (one - zv))
            a2 = (one - zv) * (one - nv * nv)
            c = hn[t, b, q] * (rv * (one - rv))
            if diagonal:
                J[t, b, 0, q] = zv + a1 * W_hz[q, q] + a2 * (rv * W_hn[q, q] + c * W_hr[q, q])
            else:
                row = J[t, b, q]
                for k in range(H):
                    row[k] = a1 * W_hz[q, k] + a2 * (rv * W_hn[q, k] + c * W_hr[q, k])
                row[q] += zv
    return J


# ================================================================= Python glue
def _cho_forward(cell, p, x, alloc=None):
    alloc = alloc or fresh(cell)
    T, B, _ = x.shape
    H = cell.n_hidden
    xa = augmented_input(cell, x, alloc)
    Wa = stack_input(cell, [(p["W_z"], p.get("b_z")), (p["W_r"], p.get("b_r")),
                            (p["W_g"], p.get("b_g"))])
    UzrT = np.ascontiguousarray(np.concatenate([p["U_z"], p["U_r"]], axis=0).T)
    gamma, beta = ln_operands(cell, p)
    nl = T if cell.layernorm else 0
    bufs = (alloc(T + 1, B, H), alloc(T, B, H), alloc(T, B, H), alloc(T, B, H),
            alloc(T, B, H), alloc(nl, B, H), alloc(nl, B, 1), alloc(T, B, cell.n_out))
    with single_threaded_blas():
        run_chunks(cho_forward_rows, chunks(B), xa, Wa, UzrT, np.ascontiguousarray(p["U_g"].T),
                   gamma, beta, cell.layernorm, *readout_params(cell, p), *bufs, tuning_params())
    return xa, bufs                                   # h, z, r, g, r⊙h, â, σ, ŷ


def _torch_forward(cell, p, x, alloc=None):
    alloc = alloc or fresh(cell)
    T, B, _ = x.shape
    H = cell.n_hidden
    xa = augmented_input(cell, x, alloc)
    Wa = stack_input(cell, [(p["W_ir"], p.get("b_ir")), (p["W_iz"], p.get("b_iz")),
                            (p["W_in"], p.get("b_in"))])
    Whc = np.ascontiguousarray(np.concatenate([p["W_hr"], p["W_hz"], p["W_hn"]], axis=0))
    bh = np.concatenate([p["b_hr"], p["b_hz"], p["b_hn"]]) if cell.bias else empty(cell, 3 * H)
    bufs = (alloc(T + 1, B, H), alloc(T, B, H), alloc(T, B, H), alloc(T, B, H),
            alloc(T, B, H), alloc(T, B, cell.n_out))
    with single_threaded_blas():
        run_chunks(torch_forward_rows, chunks(B), xa, Wa, np.ascontiguousarray(Whc.T), bh,
                   *readout_params(cell, p), *bufs, tuning_params())
    return xa, Whc, bufs                              # h, r, z, n, hn, ŷ


def _run_forward(cell, p, x):
    return _cho_forward(cell, p, x) if cell.convention == "cho" else _torch_forward(cell, p, x)


def forward_and_jacobian_diagonal(cell, p, x):
    """(trace, diag J) from one forward pass (the diagnostics' gate factors need both)."""
    run = _run_forward(cell, p, x)
    return forward(cell, p, x, run), jacobians(cell, p, x, True, run)


def forward(cell, p, x, run=None):
    """Trace with the reference's records: cho {z, r, g, ln_ahat, ln_sig}, torch {r, z, n, hn};
    ``run``: a _cho_forward / _torch_forward result."""
    run = run or _run_forward(cell, p, x)
    if cell.convention == "cho":
        _, (h, z, r, g, _, ahat, sig, yhat) = run
        rec = {"z": z, "r": r}
        if cell.layernorm:
            rec["ln_ahat"], rec["ln_sig"] = ahat, sig
        rec["g"] = g
        gates, leak = {"z": z, "r": r, "g": g}, 1.0 - z
    else:
        _, _, (h, r, z, n, hn, yhat) = run
        rec = {"r": r, "z": z, "n": n, "hn": hn}
        gates, leak = {"r": r, "z": z, "n": n}, z.copy()
    return with_run(reference.Trace(h=h, c=None, y=yhat, gates=gates, leak=leak, cand=None, records=rec), run)


def loss_and_grad(cell, p, x, y, mask):
    alloc = workspace(cell, x)                        # internal buffers, reused across calls
    T, B, _ = x.shape
    H = cell.n_hidden
    if cell.convention == "cho":
        xa, (h, z, r, g, rh, ahat, sig, yhat) = _cho_forward(cell, p, x, alloc)
        loss, dy, grads = loss_stage(cell, yhat, y, mask)
        gamma, _ = ln_operands(cell, p)
        Uzr = np.ascontiguousarray(np.concatenate([p["U_z"], p["U_r"]], axis=0))
        bounds = chunks(B)
        K = H + xa.shape[2]
        dZ = np.zeros((len(bounds), 2 * H, K), dtype=cell.dtype)
        dG = np.zeros((len(bounds), H, K), dtype=cell.dtype)
        nl = B if cell.layernorm else 0
        dgam, dbet = np.zeros((nl, H)), np.zeros((nl, H))
        dWo = np.zeros((len(bounds), cell.n_out, H))
        with single_threaded_blas():
            run_chunks(cho_backward_rows, bounds, h, xa, dy, p["W_out"], Uzr, p["U_g"], z, r, g, rh,
                       ahat, sig, gamma, cell.layernorm, dZ, dG, dgam, dbet, dWo, tuning_params())
        grads["W_out"], dgamma, dbeta = fixed_order_sums(dWo, dgam, dbet, cell.dtype)
        return loss, assemble_cho(cell, p, grads, dZ.sum(axis=0), dG.sum(axis=0), dgamma, dbeta)
    xa, Whc, (h, r, z, n, hn, yhat) = _torch_forward(cell, p, x, alloc)
    loss, dy, grads = loss_stage(cell, yhat, y, mask)
    bounds = chunks(B)
    dZ = np.zeros((len(bounds), 3 * H, H + xa.shape[2]), dtype=cell.dtype)
    dN = np.zeros((len(bounds), H, xa.shape[2]), dtype=cell.dtype)
    dWo = np.zeros((len(bounds), cell.n_out, H))
    with single_threaded_blas():
        run_chunks(torch_backward_rows, bounds, h, xa, dy, p["W_out"], Whc, r, z, n, hn, dZ, dN, dWo,
                   tuning_params())
    none = np.zeros((0, H))                           # no LN partials for this convention
    grads["W_out"] = fixed_order_sums(dWo, none, none, cell.dtype)[0]
    return loss, assemble_torch(cell, p, grads, dZ.sum(axis=0), dN.sum(axis=0))


def assemble_cho(cell, p, grads, dZ, dG, dgamma, dbeta):
    """Gradient dict (cho) from the chunk-summed dZ = [dU_{z,r} | dW_{z,r}], dG = [dU_g | dW_g] and the
    LN sums; ``grads`` holds W_out (and b_out). Copies only (mapped once by the fused trainer)."""
    H = cell.n_hidden
    dUzr, dWzr, dUg, dWg = dZ[:, :H], dZ[:, H:], dG[:, :H], dG[:, H:]
    unstack_input(cell, dWzr, [("W_z", "b_z"), ("W_r", "b_r")], grads)
    unstack_input(cell, dWg, [("W_g", "b_g")], grads)
    grads["U_z"], grads["U_r"], grads["U_g"] = dUzr[:H], dUzr[H:], dUg
    if cell.layernorm:
        return ordered(p, grads, dgamma, dbeta, cell.dtype)
    return ordered(p, grads)


def assemble_torch(cell, p, grads, dZ, An):
    """Gradient dict (torch) from the chunk-summed dZ = [dW_h· | A] (3H, H + D[+1]) and An (H, D[+1]);
    ``grads`` holds W_out (and b_out). Copies only (mapped once by the fused trainer)."""
    H = cell.n_hidden
    dWh, A = dZ[:, :H], dZ[:, H:]
    unstack_input(cell, A[:2 * H], [("W_ir", "b_ir"), ("W_iz", "b_iz")], grads)
    unstack_input(cell, An, [("W_in", "b_in")], grads)
    if cell.bias:
        # The hidden-side biases see the same errors as the input side, except b_hn (dhn = dpn r),
        # whose sum is the ones-column of the n block of A.
        grads["b_hr"], grads["b_hz"] = grads["b_ir"].copy(), grads["b_iz"].copy()
        grads["b_hn"] = A[2 * H:, cell.n_in]
    grads["W_hr"], grads["W_hz"], grads["W_hn"] = dWh[:H], dWh[H:2 * H], dWh[2 * H:]
    return ordered(p, grads)


def operands_cho(cell, p):
    """The fused trainer's weight operands (cho): Wa, [U_z; U_r]ᵀ, U_gᵀ, γ, β, W_outᵀ, b_out, W_out,
    [U_z; U_r], U_g — the arrays _cho_forward and loss_and_grad hand the kernels."""
    Wa = stack_input(cell, [(p["W_z"], p.get("b_z")), (p["W_r"], p.get("b_r")), (p["W_g"], p.get("b_g"))])
    Uzr = np.ascontiguousarray(np.concatenate([p["U_z"], p["U_r"]], axis=0))
    return (Wa, np.ascontiguousarray(Uzr.T), np.ascontiguousarray(p["U_g"].T), *ln_operands(cell, p),
            *readout_params(cell, p), p["W_out"], Uzr, p["U_g"])


def operands_torch(cell, p):
    """The fused trainer's weight operands (torch): Wa, [W_hr; W_hz; W_hn]ᵀ, b_h, W_outᵀ, b_out,
    W_out, [W_hr; W_hz; W_hn]."""
    H = cell.n_hidden
    Wa = stack_input(cell, [(p["W_ir"], p.get("b_ir")), (p["W_iz"], p.get("b_iz")), (p["W_in"], p.get("b_in"))])
    Whc = np.ascontiguousarray(np.concatenate([p["W_hr"], p["W_hz"], p["W_hn"]], axis=0))
    bh = np.concatenate([p["b_hr"], p["b_hz"], p["b_hn"]]) if cell.bias else empty(cell, 3 * H)
    return (Wa, np.ascontiguousarray(Whc.T), bh, *readout_params(cell, p), p["W_out"], Whc)


def jacobians(cell, p, x, diagonal, run=None):
    if cell.convention == "cho":
        _, (h, z, r, g, _, ahat, sig, _) = run or _cho_forward(cell, p, x)
        gamma, _ = ln_operands(cell, p)
        kernel = cho_jacobian_diag_kernel if diagonal else cho_jacobian_kernel
        return kernel(h, z, r, g, ahat, sig, p["U_z"], p["U_r"], p["U_g"], gamma, cell.layernorm)
    _, _, (h, r, z, n, hn, _) = run or _torch_forward(cell, p, x)
    J = torch_jacobian_kernel(h, r, z, n, hn, p["W_hr"], p["W_hz"], p["W_hn"], diagonal)
    return np.ascontiguousarray(J[:, :, 0, :]) if diagonal else J
