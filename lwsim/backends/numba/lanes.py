"""Small-H "lanes" kernels for the fused trainer: ``train(..., backend="numba", fused="lanes")``
(docs/performance.md "The fused trainer" → "Lanes kernels", docs/experiments.md §5.2).

Why: at the studies' sizes (H = 8 or 16, batch 16–32) the cell kernels of gru.py/lstm.py, laid out
for large H (a (B, H) row per sequence, tiled GEMMs per step, OpenBLAS for the weight gradients),
run their element loops over H = 8 units: scalar code, plus per-call overheads. Here every array of
a step is laid out (T, rows, B) with the batch as the innermost, contiguous dimension ("lanes"):
every loop of the forward, the loss, the BPTT and the weight gradients is a plain loop over the
batch that LLVM vectorises (AVX2: 4 float64 / 8 float32 lanes), no BLAS, no thread pool. The
operands (Wa, Uᵀ, U, W_out, ...) are the same arrays as the fused trainer's (filled from the flat
parameters by its index maps); the reduced gradient pieces go into the same places of its ``red``
buffer, so the norm, clip and optimizer are fused.py's own (:func:`fused._finish`).

Equations (docs/cells.md): GRU convention "torch" §1.2/§1.7 (gru.py's docstring gives the BPTT),
convention "cho" without LayerNorm §1.2, LSTM without LayerNorm §1.3 (lstm.py's docstring),
read-out and loss §1.4/§1.6 (readout.py), BPTT §1.8. Per step t, lanes b = 0 … B − 1:
  forward:  pre[g, :] = Σ_d Wa[d, g] xa_t[d, :] (+ Σ_k Uᵀ[k, g] h_{t−1}[k, :]), the gates element
            by element, ŷ_t[o, :] = b_out[o] + Σ_j W_out[o, j] h_t[j, :];
  loss:     L = Σ_t w_t Σ_{o,b} (ŷ − y)² / (Σ_t w_t · B · n_out) (float64), ∂L/∂ŷ = 2 w (ŷ − y)/count;
  BPTT:     the pre-activation errors of step t overwrite that step's gate buffer in place;
            dh_{t−1} from them by the same lane loops with U;
  weights:  dW[g, k] = Σ_t Σ_b dpre_t[g, b] z_t[k, b], z_t = [h_{t−1} | xa_t]: one lane accumulator
            per (g, k) summed over a block of TBLOCK steps, its lanes added in order in float64,
            the blocks added in time order.

Same mathematics as the step path, another summation order (lanes, then the sum over lanes): the
results differ from ``fused=False`` by round-off only (tests/backends/numba/test_lanes.py: float64
to ≤ 1.3e−14 relative after 10 steps, float32 ≤ 3.4e−6); hence opt-in. Deterministic: fixed loop order, one thread,
no fast-math (no FMA contraction), the same bits for the same seed.

Covered: :func:`covers`. Anything else trains with the existing fused kernels (fused=True) — but
``fused="lanes"`` on a cell it does not cover is refused (ValueError) by train(), so a request is
never silently served by other arithmetic.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .common import like, sigmoid, tanh
from .fused import FusedSteps, _carve, _fill_ops, _finish, _start
from .readout import loss_count

EXACT = dict(cache=True, error_model="numpy")     # no fast-math: no FMA, no re-association
# Lanes are padded to a multiple of PAD (one 256-bit register of float32), so no batch leaves a
# short scalar remainder; padded lanes carry x = 0, y = 0 and ∂L/∂ŷ = 0: they add exact zeros to
# every sum and nothing to the loss.
PAD = 8
TBLOCK = 16     # time steps per block of the weight-gradient sums (their operands stay in cache)


def padded(nb):
    """The lane count for a batch of nb sequences."""
    return -(-nb // PAD) * PAD


def covers(cell):
    """(True, "") when the lanes kernels cover ``cell``, else (False, the reason)."""
    variant = cell.kind.numba_variant(cell) if getattr(cell.kind, "numba_kernels", False) else None
    if variant not in LANES_FAMILIES:
        return False, (f"cell {cell.name!r} (numba variant {variant!r}) has no lanes kernels; "
                       f"covered: {', '.join(sorted(LANES_FAMILIES))} without layernorm")
    if getattr(cell, "layernorm", False):
        return False, "the lanes kernels do not cover layernorm=True"
    return True, ""


def pays(cell, T, batch_size):
    """Whether ``fused="lanes"`` is expected to be faster than ``fused=True`` for this training
    (covered cell, float32 or float64): H ≤ 8 and at least 32 lanes (padded(batch_size) ≥ 32).

    A rule of thumb from side-by-side timings (docs/performance.md "Lanes kernels", float32, AdamW,
    a loaded 2-core machine): the lanes kernels vectorise over the batch, the fused ones over the
    gate rows (3H or 4H), so the lanes win where the batch is wide and H small — H 8, batch 32 at
    T 16 and T 128 (≈ 1.2–1.4× faster) — and lose where the gate rows are the wider dimension:
    H 16 (batch 16, 32 or 64; T 16 or 128: 1.05–2× slower) and batch 16 at H 8 (about even). T does
    not enter. Advice only: nothing calls it to pick the kernels, since ``fused="lanes"`` changes
    the bits (round-off) and stays an explicit opt-in."""
    ok, _ = covers(cell)
    return ok and cell.n_hidden <= 8 and padded(batch_size) >= 32


# ================================================================= lane loops shared by the families
@njit(**EXACT)
def _mv(out, WT, c0, x, add):
    """out[g, :] (+)= Σ_k WT[k, c0 + g] · x[k, :] for g < out.shape[0], the k-terms added in order.

    Blocked so that each lane loop does more than one multiply-add per lane (numba leaves LLVM's
    SLP vectoriser off, so registers cannot be blocked across loops; a lane loop is vectorised by
    the loop vectoriser and costs its setup, runtime alias check and remainder every time): two
    output rows share each x load, four k-terms per load and store of out. The order of the sums
    per lane is unchanged (((out + w₀x₀) + w₁x₁) + …), so the results are those of the plain loop.
    Every loop indexes the arrays in full (out[g, b]) rather than through row views: a view made
    inside a loop costs an atomic reference-count increment and decrement (numba's NRT)."""
    G, nb = out.shape
    K = x.shape[0]
    k0 = 0 if add else 1
    for g in range(0, G - 1, 2):
        c = c0 + g
        if not add:
            w0, v0 = WT[0, c], WT[0, c + 1]
            for b in range(nb):
                xv = x[0, b]
                out[g, b] = w0 * xv
                out[g + 1, b] = v0 * xv
        k = k0
        while k + 4 <= K:
            w0, w1, w2, w3 = WT[k, c], WT[k + 1, c], WT[k + 2, c], WT[k + 3, c]
            v0, v1, v2, v3 = WT[k, c + 1], WT[k + 1, c + 1], WT[k + 2, c + 1], WT[k + 3, c + 1]
            for b in range(nb):
                x0, x1, x2, x3 = x[k, b], x[k + 1, b], x[k + 2, b], x[k + 3, b]
                s = out[g, b] + w0 * x0
                s = s + w1 * x1
                s = s + w2 * x2
                out[g, b] = s + w3 * x3
                s = out[g + 1, b] + v0 * x0
                s = s + v1 * x1
                s = s + v2 * x2
                out[g + 1, b] = s + v3 * x3
            k += 4
        while k < K:
            w0, v0 = WT[k, c], WT[k, c + 1]
            for b in range(nb):
                xv = x[k, b]
                out[g, b] += w0 * xv
                out[g + 1, b] += v0 * xv
            k += 1
    if G % 2:
        g = G - 1
        c = c0 + g
        if not add:
            w0 = WT[0, c]
            for b in range(nb):
                out[g, b] = w0 * x[0, b]
        k = k0
        while k + 4 <= K:
            w0, w1, w2, w3 = WT[k, c], WT[k + 1, c], WT[k + 2, c], WT[k + 3, c]
            for b in range(nb):
                s = out[g, b] + w0 * x[k, b]
                s = s + w1 * x[k + 1, b]
                s = s + w2 * x[k + 2, b]
                out[g, b] = s + w3 * x[k + 3, b]
            k += 4
        while k < K:
            w0 = WT[k, c]
            for b in range(nb):
                out[g, b] += w0 * x[k, b]
            k += 1


@njit(**EXACT)
def _view(buf, rows, nb):
    """A C-contiguous (rows, nb) view of the flat scratch buffer buf (nb = this step's batch)."""
    return buf[:rows * nb].reshape((rows, nb))


@njit(**EXACT)
def _gather(R, k, Da):
    """Step k's minibatch as lanes: xa (T, Da, nbp) (a row of ones when Da > D) and y (T, O, nbp),
    nbp = padded(nb), the padding lanes zero; and nb."""
    nb0 = R.nbs[k]
    nb = -(-nb0 // PAD) * PAD
    T, _, D = R.X.shape
    O = R.Y.shape[2]
    xa = R.xbuf[:T * nb * Da].reshape((T, Da, nb))
    y = R.xbuf[T * nb * Da:T * nb * (Da + O)].reshape((T, O, nb))
    xa[...] = 0
    y[...] = 0
    for t in range(T):
        for b in range(nb0):
            r = R.idx[k, b]
            for d in range(D):
                xa[t, d, b] = R.X[t, r, d]
            for o in range(O):
                y[t, o, b] = R.Y[t, r, o]
        if Da > D:
            for b in range(nb):
                xa[t, D, b] = 1
    return xa, y, nb0


@njit(**EXACT)
def _readout(yhat_t, W_outT, b_out, h_t):
    """ŷ_t[o, :] = b_out[o] + Σ_j W_out[o, j] h_t[j, :]."""
    _mv(yhat_t, W_outT, 0, h_t, False)
    for o in range(yhat_t.shape[0]):
        bo = b_out[o]
        for b in range(yhat_t.shape[1]):
            yhat_t[o, b] += bo


@njit(**EXACT)
def _loss(yhat, y, w, lacc, dbacc, nb0):
    """L (float64) and ∂L/∂ŷ written over yhat; Σ_{t,b} ∂L/∂ŷ per read-out unit into dbacc (O,)
    float64. Lane accumulators lacc (nb,) float64."""
    T, O, nb = yhat.shape
    count, cnt, two = loss_count(w, nb0, O, yhat[0, 0, 0])
    for b in range(nb):
        lacc[b] = 0.0
    for o in range(O):
        dbacc[o] = 0.0
    for t in range(T):
        wt = w[t]
        for o in range(O):
            s = 0.0
            for b in range(nb):
                d = yhat[t, o, b] - y[t, o, b]
                lacc[b] += wt * d * d
                yhat[t, o, b] = two * wt * d / cnt
            for b in range(nb0, nb):                # padding lanes: no error
                yhat[t, o, b] = 0
            for b in range(nb):
                s += yhat[t, o, b]
            dbacc[o] += s
    loss = 0.0
    for b in range(nb0):
        loss += lacc[b]
    return loss / count


@njit(**EXACT)
def _wgrad(red, off, A, a0, na, Hs, hoff, nh, X, nx, acc):
    """red[off + i·(nh + nx) + k] = Σ_t Σ_b A[t, a0 + i, b] · z_t[k, b] (float64), i < na, with
    z_t = [Hs[t + hoff, :nh] | X[t, :nx]]: per block of TBLOCK time steps (its operands stay in
    cache across the rows i) lane accumulators acc (nh + nx, nb) summed over the block's steps,
    their lanes added in order, the blocks' sums added in time order. Returns the offset after."""
    T, _, nb = A.shape
    K = nh + nx
    acc = acc[:K * nb].reshape((K, nb))
    for i in range(na * K):
        red[off + i] = 0.0
    for t0 in range(0, T, TBLOCK):
        t1 = min(T, t0 + TBLOCK)
        for i in range(na):
            for k in range(K):
                for b in range(nb):
                    acc[k, b] = 0
            for t in range(t0, t1):
                for k in range(nh):
                    for b in range(nb):
                        acc[k, b] += A[t, a0 + i, b] * Hs[t + hoff, k, b]
                for k in range(nx):
                    for b in range(nb):
                        acc[nh + k, b] += A[t, a0 + i, b] * X[t, k, b]
            for k in range(K):
                s = 0.0
                for b in range(nb):
                    s += acc[k, b]
                red[off + i * K + k] += s
    return off + na * K


@njit(**EXACT)
def _readout_grads(R, off, dy, h, H, acc, dbacc):
    """dW_out (O, H) then b_out's gradient (always the last piece) into R.red from offset off."""
    O = dy.shape[1]
    off = _wgrad(R.red, off, dy, 0, O, h, 1, H, h, 0, acc)
    for o in range(O):
        R.red[R.red.shape[0] - R.g.shape[0] - O + o] = dbacc[o]
    return off


@njit(**EXACT)
def _direct_error(dl, W_out, dy_t):
    """δ_t[j, :] = Σ_o W_out[o, j] ∂L/∂ŷ_t[o, :]."""
    _mv(dl, W_out, 0, dy_t, False)


# ================================================================= GRU, convention "torch"
@njit(**EXACT)
def _torch_grad(R, xa, y, nb0, ops, S):
    """Loss; the pieces of fused._torch_grad into R.red: dZ = [dW_h· | dWa_{r,z,hn}] (3H, H + Da),
    dN (H, Da), dW_out, db_out. Gate buffer G[t] = [r | z | hn | n], overwritten by the BPTT with
    [dp_r | dp_z | dhn | dp_n]."""
    Wa, WhT, bh, W_outT, b_out, W_out, Whc = ops
    _fill_ops(ops, R.theta, R.omap)
    sxp, shp, sdh, smm, acc, lacc, dbacc = S
    T, Da, nb = xa.shape
    H = Whc.shape[1]
    O = W_out.shape[0]
    one = like(xa[0, 0, 0], 1.0)
    h, o = _carve(R.fbuf, 0, T + 1, H, nb)
    G, o = _carve(R.fbuf, o, T, 4 * H, nb)
    yhat, o = _carve(R.fbuf, o, T, O, nb)
    xp, hp, dh, mm = _view(sxp, 3 * H, nb), _view(shp, 3 * H, nb), _view(sdh, H, nb), _view(smm, H, nb)
    for j in range(H):
        for b in range(nb):
            h[0, j, b] = 0
    for t in range(T):
        _mv(xp, Wa, 0, xa[t], False)
        _mv(hp, WhT, 0, h[t], False)
        for j in range(H):
            br, bz, bn = bh[j], bh[H + j], bh[2 * H + j]
            for b in range(nb):
                rv = sigmoid(xp[j, b] + (hp[j, b] + br))
                zv = sigmoid(xp[H + j, b] + (hp[H + j, b] + bz))
                hv = hp[2 * H + j, b] + bn
                nv = tanh(xp[2 * H + j, b] + rv * hv)
                G[t, j, b], G[t, H + j, b], G[t, 2 * H + j, b], G[t, 3 * H + j, b] = rv, zv, hv, nv
                h[t + 1, j, b] = nv + zv * (h[t, j, b] - nv)
        _readout(yhat[t], W_outT, b_out, h[t + 1])
    loss = _loss(yhat, y, R.w, lacc, dbacc, nb0)
    for j in range(H):
        for b in range(nb):
            mm[j, b] = 0                      # Σ_g dpre_{t+1}[g] U[g, j] + dh_{t+1} z_{t+1}
    for t in range(T - 1, -1, -1):
        _direct_error(dh, W_out, yhat[t])
        for j in range(H):
            for b in range(nb):
                d = mm[j, b] + dh[j, b]
                rv, zv, hv, nv = G[t, j, b], G[t, H + j, b], G[t, 2 * H + j, b], G[t, 3 * H + j, b]
                pn = d * (one - zv) * (one - nv * nv)
                G[t, j, b] = pn * hv * (rv * (one - rv))
                G[t, H + j, b] = d * (h[t, j, b] - nv) * (zv * (one - zv))
                G[t, 2 * H + j, b] = pn * rv
                G[t, 3 * H + j, b] = pn
                mm[j, b] = d * zv
        _mv(mm, Whc, 0, G[t, :3 * H], True)
    off = _wgrad(R.red, 0, G, 0, 3 * H, h, 0, H, xa, Da, acc)
    off = _wgrad(R.red, off, G, 3 * H, H, h, 0, 0, xa, Da, acc)
    _readout_grads(R, off, yhat, h, H, acc, dbacc)
    return loss


# ================================================================= GRU, convention "cho" (no LN)
@njit(**EXACT)
def _cho_grad(R, xa, y, nb0, ops, S):
    """Loss; the pieces of fused._cho_grad into R.red: dZ = [dU_{z,r} | dW_{z,r}] (2H, H + Da),
    dG = [dU_g | dW_g] (H, H + Da), dW_out, dγ = dβ = 0 (no LN), db_out. G[t] = [z | r | g],
    overwritten with [dp_z | dp_r | da]; RH[t] = r ⊙ h_{t−1}."""
    Wa, UzrT, UgT, gamma, beta, W_outT, b_out, W_out, Uzr, Ug = ops
    _fill_ops(ops, R.theta, R.omap)
    sxp, shp, sdh, smm, acc, lacc, dbacc = S
    T, Da, nb = xa.shape
    H = Ug.shape[0]
    O = W_out.shape[0]
    one = like(xa[0, 0, 0], 1.0)
    h, o = _carve(R.fbuf, 0, T + 1, H, nb)
    G, o = _carve(R.fbuf, o, T, 3 * H, nb)
    RH, o = _carve(R.fbuf, o, T, H, nb)
    yhat, o = _carve(R.fbuf, o, T, O, nb)
    xp, hp, dh, mm = _view(sxp, 3 * H, nb), _view(shp, 3 * H, nb), _view(sdh, H, nb), _view(smm, H, nb)
    for j in range(H):
        for b in range(nb):
            h[0, j, b] = 0
    for t in range(T):
        _mv(xp, Wa, 0, xa[t], False)                 # [z | r | g] input parts
        _mv(xp[:2 * H], UzrT, 0, h[t], True)
        for j in range(2 * H):
            for b in range(nb):
                G[t, j, b] = sigmoid(xp[j, b])
        for j in range(H):
            for b in range(nb):
                RH[t, j, b] = G[t, H + j, b] * h[t, j, b]
        _mv(xp[2 * H:], UgT, 0, RH[t], True)
        for j in range(H):
            for b in range(nb):
                gv = tanh(xp[2 * H + j, b])
                G[t, 2 * H + j, b] = gv
                hv = h[t, j, b]
                h[t + 1, j, b] = hv + G[t, j, b] * (gv - hv)
        _readout(yhat[t], W_outT, b_out, h[t + 1])
    loss = _loss(yhat, y, R.w, lacc, dbacc, nb0)
    for j in range(H):
        for b in range(nb):
            mm[j, b] = 0
    for t in range(T - 1, -1, -1):
        _direct_error(dh, W_out, yhat[t])
        for j in range(H):
            for b in range(nb):
                d = mm[j, b] + dh[j, b]
                zv, gv = G[t, j, b], G[t, 2 * H + j, b]
                G[t, j, b] = d * (gv - h[t, j, b]) * (zv * (one - zv))
                G[t, 2 * H + j, b] = d * zv * (one - gv * gv)
                mm[j, b] = d * (one - zv)
        _mv(hp[:H], Ug, 0, G[t, 2 * H:], False)      # drh = da U_g
        for j in range(H):
            for b in range(nb):
                rv, drh = G[t, H + j, b], hp[j, b]
                mm[j, b] += drh * rv
                G[t, H + j, b] = drh * h[t, j, b] * (rv * (one - rv))
        _mv(mm, Uzr, 0, G[t, :2 * H], True)
    off = _wgrad(R.red, 0, G, 0, 2 * H, h, 0, H, xa, Da, acc)
    off = _wgrad(R.red, off, G, 2 * H, H, RH, 0, H, xa, Da, acc)
    off = _readout_grads(R, off, yhat, h, H, acc, dbacc)
    for i in range(2 * H):                           # dγ, dβ: no LayerNorm
        R.red[off + i] = 0.0
    return loss


# ================================================================= LSTM (no LN)
@njit(**EXACT)
def _lstm_grad(R, xa, y, nb0, ops, S):
    """Loss; the pieces of fused._lstm_grad into R.red: dZ = [dU | dWa] (4H, H + Da), dW_out,
    dγ = dβ = 0, db_out. G[t] = [i | f | g | o] overwritten with the pre-activation errors."""
    Wa, UT, gamma, beta, W_outT, b_out, W_out, UC = ops
    _fill_ops(ops, R.theta, R.omap)
    sxp, shp, sdh, smm, acc, lacc, dbacc = S
    T, Da, nb = xa.shape
    H = UC.shape[1]
    O = W_out.shape[0]
    one = like(xa[0, 0, 0], 1.0)
    h, o = _carve(R.fbuf, 0, T + 1, H, nb)
    c, o = _carve(R.fbuf, o, T + 1, H, nb)
    G, o = _carve(R.fbuf, o, T, 4 * H, nb)
    tc, o = _carve(R.fbuf, o, T, H, nb)
    yhat, o = _carve(R.fbuf, o, T, O, nb)
    xp, dh, mm, dc = _view(sxp, 4 * H, nb), _view(sdh, H, nb), _view(smm, H, nb), _view(shp, H, nb)
    for j in range(H):
        for b in range(nb):
            h[0, j, b] = 0
            c[0, j, b] = 0
    for t in range(T):
        _mv(xp, Wa, 0, xa[t], False)
        _mv(xp, UT, 0, h[t], True)
        for j in range(H):
            for b in range(nb):
                iv = sigmoid(xp[j, b])
                fv = sigmoid(xp[H + j, b])
                ov = sigmoid(xp[3 * H + j, b])
                gv = tanh(xp[2 * H + j, b])
                cv = fv * c[t, j, b] + iv * gv
                tv = tanh(cv)
                G[t, j, b], G[t, H + j, b], G[t, 2 * H + j, b], G[t, 3 * H + j, b] = iv, fv, gv, ov
                tc[t, j, b] = tv
                c[t + 1, j, b] = cv
                h[t + 1, j, b] = ov * tv
        _readout(yhat[t], W_outT, b_out, h[t + 1])
    loss = _loss(yhat, y, R.w, lacc, dbacc, nb0)
    for j in range(H):
        for b in range(nb):
            mm[j, b] = 0
            dc[j, b] = 0
    for t in range(T - 1, -1, -1):
        _direct_error(dh, W_out, yhat[t])
        for j in range(H):
            for b in range(nb):
                d = mm[j, b] + dh[j, b]
                iv, fv, gv, ov = G[t, j, b], G[t, H + j, b], G[t, 2 * H + j, b], G[t, 3 * H + j, b]
                tv = tc[t, j, b]
                dct = dc[j, b] + d * ov * (one - tv * tv)
                G[t, j, b] = dct * gv * (iv * (one - iv))
                G[t, H + j, b] = dct * c[t, j, b] * (fv * (one - fv))
                G[t, 2 * H + j, b] = dct * iv * (one - gv * gv)
                G[t, 3 * H + j, b] = d * tv * (ov * (one - ov))
                dc[j, b] = dct * fv
        _mv(mm, UC, 0, G[t], False)
    off = _wgrad(R.red, 0, G, 0, 4 * H, h, 0, H, xa, Da, acc)
    off = _readout_grads(R, off, yhat, h, H, acc, dbacc)
    for i in range(2 * H):
        R.red[off + i] = 0.0
    return loss


# ================================================================= step loops (one per family)
@njit(**EXACT)
def _scratch(R, rows, H, K, O, dt):
    """Flat lane buffers of one call: pre-activations (2), dh, the carried dh_{t−1} part, the
    weight-gradient accumulators, the loss lanes (float64), db_out (float64)."""
    B = -(-R.info[2] // PAD) * PAD
    return (np.zeros(rows * B, dt), np.zeros(rows * B, dt), np.zeros(H * B, dt), np.zeros(H * B, dt),
            np.zeros(max(K, H) * B, dt), np.zeros(B), np.zeros(O))


# One four-line loop per family, as in fused.py: numba caches neither a function passed as an
# argument nor a closure, so the step loops cannot share one body.
@njit(**EXACT)
def torch_steps(R, ops, Da):
    H = ops[6].shape[1]
    S = _scratch(R, 3 * H, H, H + Da, ops[5].shape[0], R.theta.dtype)
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, nb0 = _gather(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _torch_grad(R, xa, y, nb0, ops, S)):
            return


@njit(**EXACT)
def cho_steps(R, ops, Da):
    H = ops[9].shape[0]
    S = _scratch(R, 3 * H, H, H + Da, ops[7].shape[0], R.theta.dtype)
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, nb0 = _gather(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _cho_grad(R, xa, y, nb0, ops, S)):
            return


@njit(**EXACT)
def lstm_steps(R, ops, Da):
    H = ops[7].shape[1]
    S = _scratch(R, 4 * H, H, H + Da, ops[6].shape[0], R.theta.dtype)
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, nb0 = _gather(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _lstm_grad(R, xa, y, nb0, ops, S)):
            return


# per-sequence floats of each family's fbuf (its _carve calls above)
LANES_FAMILIES = {
    "gru_torch": (lambda R, ops, c, Da: torch_steps(R, ops, Da),
                  lambda c, T: (T + 1) * c.n_hidden + 4 * T * c.n_hidden + T * c.n_out),
    "gru_cho": (lambda R, ops, c, Da: cho_steps(R, ops, Da),
                lambda c, T: (T + 1) * c.n_hidden + 4 * T * c.n_hidden + T * c.n_out),
    "lstm": (lambda R, ops, c, Da: lstm_steps(R, ops, Da),
             lambda c, T: 2 * (T + 1) * c.n_hidden + 5 * T * c.n_hidden + T * c.n_out),
}


class LanesSteps(FusedSteps):
    """:class:`fused.FusedSteps` with the lanes kernels as its step loop (same flat parameters,
    optimizer buffers, index maps, norm, clip and update; another forward/BPTT)."""

    def __init__(self, cell, params, opt, clip, w, batch_size):
        ok, why = covers(cell)
        if not ok:
            raise ValueError(f"fused='lanes': {why}; use fused=True or fused=False")
        super().__init__(cell, params, opt, clip, w, batch_size)
        steps, per_seq = LANES_FAMILIES[cell.kind.numba_variant(cell)]
        nbp = padded(batch_size)
        self.fbuf = np.zeros(nbp * per_seq(cell, len(w)), dtype=cell.dtype)
        self.xbuf = np.zeros(len(w) * nbp * (self.Da + cell.n_out), dtype=cell.dtype)
        self.family = self.family._replace(steps=lambda R, ops, c, Da, tune: steps(R, ops, c, Da))


def loss_and_grad(cell, params, x, y, mask=None):
    """(L, {key: gradient}) of one minibatch by the lanes kernels, for checks against the cell's
    own ``loss_and_grad``: one step of a LanesSteps (SGD, no clip) on a copy of the parameters, its
    flat gradient (computed before the update) split by key."""
    from ... import optim
    from .fused import full_arrays
    from .readout import loss_weights
    p = {k: np.array(v, dtype=cell.dtype) for k, v in params.items()}
    X, Y = full_arrays(cell, x, y)
    T, B = X.shape[0], X.shape[1]
    runner = LanesSteps(cell, p, optim.make("sgd", p, lr=1e-3), None, loss_weights(cell, T, mask), B)
    losses, _, status, _ = runner.run(X, Y, np.arange(B, dtype=np.int64)[None, :], np.array([B], dtype=np.int64))
    g = runner.g
    return float(losses[0]), {k: g[runner.koffs[i]:runner.koffs[i + 1]].reshape(np.shape(p[k])).copy()
                              for i, k in enumerate(runner.keys)}
