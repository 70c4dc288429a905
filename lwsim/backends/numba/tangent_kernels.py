"""Fused forward-mode tangents v_t = (∂h_t/∂θ)[w] for K directions at once (docs/diagnostics.md §2.7).

The forward pass runs once (the family's fused kernel, which also gives every record); then one
time loop carries the K tangents together. With dθ the direction (one of the K) and dh = v_{t−1}:

  leaky family (rnn, constgate, sharedgate, diaggate; docs/cells.md §1.1)
    da = dW_x x_t + db_x + dW_h h_{t−1} + W_h dh,   with LN: da ← J_LN da + dγ ⊙ â + dβ
    dh̃ = (1 − h̃²) ⊙ da
    ds = s(1 − s) ⊙ (dW_s x_t + db_s + dU_s h_{t−1} + U_s dh)     (sharedgate: w_s, u_s, scalar)
    v_t = dh̃ (rnn),  (1 − s) dh + s dh̃ (constgate),  (1 − s) ⊙ dh + s ⊙ dh̃ + ds ⊙ (h̃ − h_{t−1})
  GRU "cho" (§1.2)
    dz = z' ⊙ (dW_z x + db_z + dU_z h + U_z dh),  dr = r' ⊙ (dW_r x + db_r + dU_r h + U_r dh)
    d(r⊙h) = dr ⊙ h_{t−1} + r ⊙ dh
    da = dW_g x + db_g + dU_g (r ⊙ h_{t−1}) + U_g d(r⊙h),  with LN as above,  dg = (1 − g²) ⊙ da
    v_t = dh + dz ⊙ (g − h_{t−1}) + z ⊙ (dg − dh)
  GRU "torch" (§1.2)
    dr, dz = σ' ⊙ (dW_i· x + db_i· + dW_h· h + db_h· + W_h· dh),  dhn = dW_hn h + db_hn + W_hn dh
    dn = (1 − n²) ⊙ (dW_in x + db_in + dr ⊙ hn + r ⊙ dhn)
    v_t = dn + dz ⊙ (h_{t−1} − n) + z ⊙ (dh − dn)
  LSTM (§1.3), state (h, c), v = (v^h, v^c), dc = v^c_{t−1}
    d· = σ' ⊙ (dW_· x + db_· + dU_· h + U_· dh) for i, f, o;  dg = (1 − g²) ⊙ da,
    da = dW_g x + db_g + dU_g h + U_g dh with LN as above
    v^c_t = df ⊙ c_{t−1} + f ⊙ dc + di ⊙ g + i ⊙ dg,   v^h_t = do ⊙ tanh c_t + o (1 − tanh² c_t) ⊙ v^c_t
  J_LN v = γ ⊙ (v − mean v − â mean(â ⊙ v))/σ (docs/cells.md §1.4).

Layout: the direction's "affine" part (dW x_t + db + dU h_{t−1}, its inputs known from the forward)
of all K directions is one GEMM each side per step, xa_t [dWa_1 | … | dWa_K] (n, K·G), with the
stacked gate matrices of each direction side by side; the n·K rows of dh (row = sequence·K +
direction) then go through one recurrent GEMM dh Uᵀ (n·K, H)×(H, G) accumulated onto the same
buffer (its (n, K·G) and (n·K, G) views are the same memory), then one fused loop over the units.
The GRU "cho" needs a second recurrent GEMM, d(r⊙h) U_gᵀ, once dr is known. The time loop runs
per chunk of sequences on the thread pool of threads.py (single-threaded BLAS), as the forward.

Cost: per step and direction about B·H·G multiply-adds each for dU h_{t−1} and U dh, both at the
BLAS small-matrix rate already at K = 1, so batching the K directions saves mainly the K − 1
forward passes. Each direction's rows are computed as in a single call: K-batched results equal
K single calls to round-off (tests/backends/numba/test_tangent_kernels.py; bit-identical where BLAS forms each
dot product the same way for both shapes, as measured with SciPy's OpenBLAS).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...cells._kind import no_kernels
from . import gru, leaky, lstm
from .blas import gemm as gemm_inline
from .common import TKERNEL, like
from .readout import empty, reused_run, stack_input
from .threads import chunks, run_chunks, single_threaded_blas


# ---------------------------------------------------------------- pieces called by the kernels
@njit(**TKERNEL)
def gemm(a, b, c, beta):
    """blas.gemm (c ← a b + β c) as a called function, not inlined: the kernels make 3–6 products a
    step, and inlining its blocking logic at each call site cost compile time (the four kernels,
    float64: 43 s → 16 s), while a call costs nothing next to the BLAS call it wraps."""
    gemm_inline(a, b, c, beta)


@njit(inline="always")
def ln_jvp_row(da, gamma, ahat, sig, dgam, dbet):
    """da ← J_LN da + dγ ⊙ â + dβ in place (means accumulated in float64, as common.ln_row)."""
    H = da.shape[0]
    m1 = 0.0
    m2 = 0.0
    for j in range(H):
        m1 += da[j]
        m2 += ahat[j] * da[j]
    a1 = like(sig, m1 / H)
    a2 = like(sig, m2 / H)
    for j in range(H):
        da[j] = gamma[j] * (da[j] - a1 - ahat[j] * a2) / sig + dgam[j] * ahat[j] + dbet[j]


@njit(inline="always")
def zero_first_step(out, b0, b1):
    """v_0 = 0 for the chunk's sequences, every direction."""
    for k in range(out.shape[0]):
        for b in range(b0, b1):
            out[k, 0, b] = 0


# ---------------------------------------------------------------- time loops, one per family
@njit(**TKERNEL)
def leaky_rows(ck, b0, b1, xa, h, cand, s, ahat, sig, UT, dWa, dUT, mode, s_const, gamma,
               dgam, dbet, layernorm, out):
    """Tangents of the sequences b0 ≤ b < b1 into out (K, T+1, B, H). UT (H, G) = [W_h; U_s]ᵀ;
    dWa (D[+1], K·G), dUT (H, K·G): the K directions' stacked maps side by side."""
    T = xa.shape[0]
    K = out.shape[0]
    H, G = UT.shape
    n = b1 - b0
    one = like(h[0, 0, 0], 1.0)
    buf = np.empty(n * K * G, h.dtype)
    pre_x, pre_r, pre = buf.reshape((n, K * G)), buf.reshape((n * K, G)), buf.reshape((n, K, G))
    vbuf = np.zeros(n * K * H, h.dtype)               # v_{t−1}, then v_t (updated in place)
    v_r, v = vbuf.reshape((n * K, H)), vbuf.reshape((n, K, H))
    zero_first_step(out, b0, b1)
    for t in range(T):
        gemm(xa[t][b0:b1], dWa, pre_x, 0)              # dW x_t + db, every direction
        gemm(h[t][b0:b1], dUT, pre_x, 1)               # + dU h_{t−1}
        gemm(v_r, UT, pre_r, 1)                        # + U dh: all n·K rows in one GEMM
        for i in range(n):
            b = b0 + i
            hprev = h[t, b]
            c = h[t + 1, b] if mode == 0 else cand[t, b]       # h̃_t (= h_t for the rnn)
            for k in range(K):
                pr, dh = pre[i, k], v[i, k]
                da = pr[:H]
                if layernorm:
                    ln_jvp_row(da, gamma, ahat[t, b], sig[t, b, 0], dgam[k], dbet[k])
                if mode == 0:
                    for j in range(H):
                        dh[j] = (one - c[j] * c[j]) * da[j]
                elif mode == 1:
                    for j in range(H):
                        dh[j] = dh[j] * (one - s_const) + s_const * ((one - c[j] * c[j]) * da[j])
                elif mode == 2:
                    sv = s[t, b, 0]
                    ds = sv * (one - sv) * pr[H]
                    for j in range(H):
                        dh[j] = (dh[j] * (one - sv) + sv * ((one - c[j] * c[j]) * da[j])
                                 + ds * (c[j] - hprev[j]))
                else:
                    sr = s[t, b]
                    for j in range(H):
                        sv = sr[j]
                        ds = sv * (one - sv) * pr[H + j]
                        dh[j] = (dh[j] * (one - sv) + sv * ((one - c[j] * c[j]) * da[j])
                                 + ds * (c[j] - hprev[j]))
                out[k, t + 1, b] = dh


@njit(**TKERNEL)
def cho_rows(ck, b0, b1, xa, h, z, r, g, rh, ahat, sig, UzrT, UgT, dWzr, dUzrT, dWg, dUgT,
             gamma, dgam, dbet, layernorm, out):
    """GRU "cho" tangents of the sequences b0 ≤ b < b1 into out (K, T+1, B, H).
    [z | r] block: UzrT (H, 2H), dWzr (D[+1], K·2H), dUzrT (H, K·2H); g block: UgT, dWg, dUgT."""
    T = xa.shape[0]
    K = out.shape[0]
    H = UgT.shape[0]
    n = b1 - b0
    one = like(h[0, 0, 0], 1.0)
    zbuf = np.empty(n * K * 2 * H, h.dtype)           # [z | r] pre-activation tangents → dz, dr
    zr_x, zr_r, zr = zbuf.reshape((n, K * 2 * H)), zbuf.reshape((n * K, 2 * H)), zbuf.reshape((n, K, 2 * H))
    gbuf = np.empty(n * K * H, h.dtype)               # g pre-activation tangent
    g_x, g_r, gp = gbuf.reshape((n, K * H)), gbuf.reshape((n * K, H)), gbuf.reshape((n, K, H))
    rbuf = np.empty(n * K * H, h.dtype)               # d(r ⊙ h_{t−1})
    rh_r, drh = rbuf.reshape((n * K, H)), rbuf.reshape((n, K, H))
    vbuf = np.zeros(n * K * H, h.dtype)
    v_r, v = vbuf.reshape((n * K, H)), vbuf.reshape((n, K, H))
    zero_first_step(out, b0, b1)
    for t in range(T):
        gemm(xa[t][b0:b1], dWzr, zr_x, 0)
        gemm(h[t][b0:b1], dUzrT, zr_x, 1)
        gemm(v_r, UzrT, zr_r, 1)
        gemm(xa[t][b0:b1], dWg, g_x, 0)
        gemm(rh[t][b0:b1], dUgT, g_x, 1)              # dU_g (r ⊙ h_{t−1})
        for i in range(n):
            b = b0 + i
            zrow, rrow, hprev = z[t, b], r[t, b], h[t, b]
            for k in range(K):
                p, dh, d = zr[i, k], v[i, k], drh[i, k]
                for j in range(H):
                    zv, rv = zrow[j], rrow[j]
                    p[j] = zv * (one - zv) * p[j]                        # dz
                    dr = rv * (one - rv) * p[H + j]
                    d[j] = dr * hprev[j] + rv * dh[j]
        gemm(rh_r, UgT, g_r, 1)                          # + U_g d(r ⊙ h): needs dr first
        for i in range(n):
            b = b0 + i
            zrow, grow, hprev = z[t, b], g[t, b], h[t, b]
            for k in range(K):
                da, dz, dh = gp[i, k], zr[i, k], v[i, k]
                if layernorm:
                    ln_jvp_row(da, gamma, ahat[t, b], sig[t, b, 0], dgam[k], dbet[k])
                for j in range(H):
                    gv = grow[j]
                    dg = (one - gv * gv) * da[j]
                    dh[j] = dh[j] + dz[j] * (gv - hprev[j]) + zrow[j] * (dg - dh[j])
                out[k, t + 1, b] = dh


@njit(**TKERNEL)
def torch_rows(ck, b0, b1, xa, h, r, z, nn, hn, WhT, dWa, dWhT, dbhn, out):
    """GRU "torch" tangents of the sequences b0 ≤ b < b1 into out (K, T+1, B, H). Blocks [r | z | n]:
    WhT (H, 3H); dWa (D[+1], K·3H) the input side (its bias row holds db_i· + db_h· for r, z and
    db_in for n); dWhT (H, K·3H) the hidden side; dbhn (K, H), inside r ⊙ (…)."""
    T = xa.shape[0]
    K = out.shape[0]
    H = WhT.shape[0]
    n = b1 - b0
    one = like(h[0, 0, 0], 1.0)
    xbuf = np.empty(n * K * 3 * H, h.dtype)
    px_x, px = xbuf.reshape((n, K * 3 * H)), xbuf.reshape((n, K, 3 * H))
    hbuf = np.empty(n * K * 3 * H, h.dtype)
    ph_x, ph_r, ph = hbuf.reshape((n, K * 3 * H)), hbuf.reshape((n * K, 3 * H)), hbuf.reshape((n, K, 3 * H))
    vbuf = np.zeros(n * K * H, h.dtype)
    v_r, v = vbuf.reshape((n * K, H)), vbuf.reshape((n, K, H))
    zero_first_step(out, b0, b1)
    for t in range(T):
        gemm(xa[t][b0:b1], dWa, px_x, 0)
        gemm(h[t][b0:b1], dWhT, ph_x, 0)
        gemm(v_r, WhT, ph_r, 1)
        for i in range(n):
            b = b0 + i
            rrow, zrow, nrow, hnrow, hprev = r[t, b], z[t, b], nn[t, b], hn[t, b], h[t, b]
            for k in range(K):
                xr, hr, dh, dbn = px[i, k], ph[i, k], v[i, k], dbhn[k]
                for j in range(H):
                    rv, zv, nv = rrow[j], zrow[j], nrow[j]
                    dr = rv * (one - rv) * (xr[j] + hr[j])
                    dz = zv * (one - zv) * (xr[H + j] + hr[H + j])
                    dhn = hr[2 * H + j] + dbn[j]
                    dn = (one - nv * nv) * (xr[2 * H + j] + dr * hnrow[j] + rv * dhn)
                    dh[j] = dn + dz * (hprev[j] - nv) + zv * (dh[j] - dn)
                out[k, t + 1, b] = dh


@njit(**TKERNEL)
def lstm_rows(ck, b0, b1, xa, h, c, ig, fg, gg, og, tc, ahat, sig, UT, dWa, dUT, gamma, dgam,
              dbet, layernorm, out):
    """LSTM tangents of the sequences b0 ≤ b < b1 into out (K, T+1, B, 2H) = (v^h, v^c).
    Blocks [i | f | g | o]: UT (H, 4H), dWa (D[+1], K·4H), dUT (H, K·4H)."""
    T = xa.shape[0]
    K = out.shape[0]
    H = UT.shape[0]
    G = 4 * H
    n = b1 - b0
    one = like(h[0, 0, 0], 1.0)
    buf = np.empty(n * K * G, h.dtype)
    pre_x, pre_r, pre = buf.reshape((n, K * G)), buf.reshape((n * K, G)), buf.reshape((n, K, G))
    hbuf = np.zeros(n * K * H, h.dtype)
    vh_r, vh = hbuf.reshape((n * K, H)), hbuf.reshape((n, K, H))
    vc = np.zeros((n, K, H), h.dtype)
    zero_first_step(out, b0, b1)
    for t in range(T):
        gemm(xa[t][b0:b1], dWa, pre_x, 0)
        gemm(h[t][b0:b1], dUT, pre_x, 1)
        gemm(vh_r, UT, pre_r, 1)
        for i in range(n):
            b = b0 + i
            irow, frow, grow, orow, tcrow, cprev = ig[t, b], fg[t, b], gg[t, b], og[t, b], tc[t, b], c[t, b]
            for k in range(K):
                pr, dh, dc = pre[i, k], vh[i, k], vc[i, k]
                if layernorm:
                    ln_jvp_row(pr[2 * H:3 * H], gamma, ahat[t, b], sig[t, b, 0], dgam[k], dbet[k])
                for j in range(H):
                    iv, fv, gv, ov, tv = irow[j], frow[j], grow[j], orow[j], tcrow[j]
                    di = iv * (one - iv) * pr[j]
                    df = fv * (one - fv) * pr[H + j]
                    dg = (one - gv * gv) * pr[2 * H + j]
                    do = ov * (one - ov) * pr[3 * H + j]
                    dcn = df * cprev[j] + fv * dc[j] + di * gv + iv * dg
                    dc[j] = dcn
                    dh[j] = do * tv + ov * (one - tv * tv) * dcn
                o = out[k, t + 1, b]
                o[:H] = dh
                o[H:] = dc


# ---------------------------------------------------------------- Python glue
def _side_by_side(mats):
    """The K directions' (rows, G) blocks side by side: (rows, K·G), C-contiguous."""
    return np.ascontiguousarray(np.concatenate(mats, axis=1))


def _ln_directions(cell, dps):
    """(dγ, dβ) of every direction, (K, H); empty placeholders without LayerNorm."""
    if not cell.layernorm:
        return empty(cell, len(dps), 0), empty(cell, len(dps), 0)
    return (np.ascontiguousarray(np.stack([dp["ln_gamma"] for dp in dps])),
            np.ascontiguousarray(np.stack([dp["ln_beta"] for dp in dps])))


def _ln(cell, p):
    if not cell.layernorm:
        return empty(cell), empty(cell)
    return p["ln_gamma"], p["ln_beta"]


def _run(kernel, B, *args):
    with single_threaded_blas():
        run_chunks(kernel, chunks(B), *args)


def _leaky(cell, p, x, dps, out, run=None):
    xa, (mode, _, UC, s_const), h, cand, s, ahat, sig, _ = run or leaky._run_forward(cell, p, x)
    ops = [leaky._operands(cell, dp) for dp in dps]       # (mode, dWa, dUC, ·): the same stacking
    dWa = _side_by_side([o[1] for o in ops])
    dUT = _side_by_side([o[2].T for o in ops])
    gamma, _ = _ln(cell, p)
    dgam, dbet = _ln_directions(cell, dps)
    _run(leaky_rows, x.shape[1], xa, h, cand, s, ahat, sig, np.ascontiguousarray(UC.T), dWa, dUT,
         mode, s_const, gamma, dgam, dbet, cell.layernorm, out)


def _cho(cell, p, x, dps, out, run=None):
    xa, (h, z, r, g, rh, ahat, sig, _) = run or gru._cho_forward(cell, p, x)

    def zr_rows(q):
        return np.concatenate([q["U_z"], q["U_r"]], axis=0)
    dWzr = _side_by_side([stack_input(cell, [(q["W_z"], q.get("b_z")), (q["W_r"], q.get("b_r"))])
                          for q in dps])
    dUzrT = _side_by_side([zr_rows(q).T for q in dps])
    dWg = _side_by_side([stack_input(cell, [(q["W_g"], q.get("b_g"))]) for q in dps])
    dUgT = _side_by_side([q["U_g"].T for q in dps])
    gamma, _ = _ln(cell, p)
    dgam, dbet = _ln_directions(cell, dps)
    _run(cho_rows, x.shape[1], xa, h, z, r, g, rh, ahat, sig,
         np.ascontiguousarray(zr_rows(p).T), np.ascontiguousarray(p["U_g"].T),
         dWzr, dUzrT, dWg, dUgT, gamma, dgam, dbet, cell.layernorm, out)


def _torch(cell, p, x, dps, out, run=None):
    xa, Whc, (h, r, z, nn, hn, _) = run or gru._torch_forward(cell, p, x)
    H = cell.n_hidden

    def input_side(q):                  # the r, z hidden biases only add: folded into the bias row
        if not cell.bias:
            return stack_input(cell, [(q["W_ir"], None), (q["W_iz"], None), (q["W_in"], None)])
        return stack_input(cell, [(q["W_ir"], q["b_ir"] + q["b_hr"]), (q["W_iz"], q["b_iz"] + q["b_hz"]),
                                  (q["W_in"], q["b_in"])])
    dWa = _side_by_side([input_side(q) for q in dps])
    dWhT = _side_by_side([np.concatenate([q["W_hr"], q["W_hz"], q["W_hn"]], axis=0).T for q in dps])
    dbhn = (np.ascontiguousarray(np.stack([q["b_hn"] for q in dps])) if cell.bias
            else np.zeros((len(dps), H), dtype=cell.dtype))
    _run(torch_rows, x.shape[1], xa, h, r, z, nn, hn, np.ascontiguousarray(Whc.T), dWa, dWhT, dbhn, out)


def _lstm(cell, p, x, dps, out, run=None):
    xa, UC, (h, c, i, f, g, o, tc, ahat, sig, _) = run or lstm._run_forward(cell, p, x)
    dWa = _side_by_side([stack_input(cell, [(q[f"W_{k}"], q.get(f"b_{k}")) for k in lstm.GATES])
                         for q in dps])
    dUT = _side_by_side([np.concatenate([q[f"U_{k}"] for k in lstm.GATES], axis=0).T for q in dps])
    gamma, _ = _ln(cell, p)
    dgam, dbet = _ln_directions(cell, dps)
    _run(lstm_rows, x.shape[1], xa, h, c, i, f, g, o, tc, ahat, sig, np.ascontiguousarray(UC.T),
         dWa, dUT, gamma, dgam, dbet, cell.layernorm, out)


def tangents(cell, p, x, dps, forward=None):
    """v (K, T+1, B, S) for the K directions ``dps`` (validated dicts, cell dtype): one forward
    pass and one tangent pass for all of them. ``forward``: a trace of this backend's forward pass
    on the same p and x; its arrays (readout.with_run) replace the forward pass."""
    run = _VARIANTS.get(cell.kind.numba_variant(cell)) if cell.kind.numba_kernels else None
    if run is None:
        raise no_kernels(cell, "numba", fix="use backend='numpy'")
    T, B, _ = x.shape
    out = np.empty((len(dps), T + 1, B, cell.state_size), dtype=cell.dtype)
    run(cell, p, x, dps, out, reused_run(forward, cell, x))
    return out


_VARIANTS = {"leaky": _leaky, "gru_cho": _cho, "gru_torch": _torch, "lstm": _lstm}   # by numba_variant
