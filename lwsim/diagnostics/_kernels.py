"""numba kernels for the hot loops of the diagnostics (docs/diagnostics.md §2.3, §2.5, §2.7).

Deterministic: serial loops (no prange, no fastmath), so results do not depend on threads.
Layout: per-step arrays are (B, T, H) float64, index t − 1 for step t; states/tangents
(B, T+1, H) with index k for time k; Λ of source k at index k − 1 (it uses h_{k−1}).

For a fixed end time t the kernels walk ℓ = 1, 2, … keeping the running product
Π_{j=t−ℓ+1}^{t} d_j and the running sum Σ_{j=t−ℓ+1}^{t} r_j/d_j. These are exactly the windowed
prefix sums of §2.3 (exp(P_t − P_{t−ℓ}) and Q_t − Q_{t−ℓ}) evaluated without exp/log, so the
cost stays O(T·L·H) and the formula Γ_{t,ℓ} = Π d (1 + Σ r/d) is unchanged; the NumPy engine
evaluates the same formula with the log-space prefix sums themselves.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def gamma_table(d, rd, e, lags, order, out):
    """out[i, t−1, b, q] = e_t Π d (1 + Σ r/d) (order 1) or e_t Π d (order 0) at lag lags[i].

    ``out`` (n_lags, T, B, H) must be pre-filled (NaN); invalid (t, ℓ) (t − ℓ < 1) stay untouched.
    """
    B, T, H = d.shape
    n = lags.shape[0]
    lmax_all = lags[n - 1]
    prod = np.empty(H)
    acc = np.empty(H)
    for b in range(B):
        for t in range(2, T + 1):
            for q in range(H):
                prod[q] = 1.0
                acc[q] = 0.0
            lmax = min(lmax_all, t - 1)
            li = 0
            for ell in range(1, lmax + 1):
                j = t - ell                      # array index of d_{t−ℓ+1}
                for q in range(H):
                    prod[q] *= d[b, j, q]
                    acc[q] += rd[b, j, q]
                if ell == lags[li]:
                    for q in range(H):
                        g = prod[q] * e[b, t - 1, q]
                        if order == 1:
                            g = g * (1.0 + acc[q])
                        out[li, t - 1, b, q] = g
                    li += 1
                    if li == n:
                        break


TILE = 4          # end times processed together: the rows d_{t−ℓ+1} they read overlap (cache reuse)
# (indexing the 3-D arrays directly rather than through row views keeps the inner loops free of
#  reference counting; both matter for speed, neither changes the arithmetic)


@njit(cache=True)
def envelope_accumulate(d, rd, e, lam, lags, order, acc_mu, acc_g0, cnt):
    """acc_mu[i, q] += |Λ_q(b, t−ℓ) Γ_q(t, ℓ)|, acc_g0[i, q] += |Γ⁰_q(t, ℓ)|, cnt[i] += 1 over
    valid (b, t) (t − ℓ ≥ 1), ℓ = lags[i]. Γ is first order (order 1) or Γ⁰ (order 0).

    End times are processed in tiles of TILE consecutive t (same arithmetic per (t, ℓ), fixed
    summation order, so the result is deterministic)."""
    B, T, H = d.shape
    n = lags.shape[0]
    lmax_all = lags[n - 1]
    prod = np.empty((TILE, H))
    acc = np.empty((TILE, H))
    for b in range(B):
        for t0 in range(2, T + 1, TILE):
            nb = min(TILE, T + 1 - t0)
            prod[:] = 1.0
            acc[:] = 0.0
            lmax = min(lmax_all, t0 + nb - 2)
            li = 0
            for ell in range(1, lmax + 1):
                hit = ell == lags[li]
                for i in range(nb):
                    t = t0 + i
                    if ell > t - 1:
                        continue
                    j = t - ell                              # index of d_{t−ℓ+1}
                    for q in range(H):
                        prod[i, q] *= d[b, j, q]
                        acc[i, q] += rd[b, j, q]
                    if hit:
                        k0 = j - 1                           # Λ index of source k = t − ℓ
                        if order == 1:
                            for q in range(H):
                                g0 = prod[i, q] * e[b, t - 1, q]
                                acc_mu[li, q] += abs(lam[b, k0, q] * g0 * (1.0 + acc[i, q]))
                                acc_g0[li, q] += abs(g0)
                        else:
                            for q in range(H):
                                g0 = prod[i, q] * e[b, t - 1, q]
                                acc_mu[li, q] += abs(lam[b, k0, q] * g0)
                                acc_g0[li, q] += abs(g0)
                        cnt[li] += 1
                if hit:
                    li += 1
                    if li == n:
                        break


@njit(cache=True)
def matched_accumulate_tiled(d, rd, e, lam, delta, v, weight, lags, order, psi, cnt):
    """psi[i, b] += Σ_q μ_q(b, t, ℓ) δ_q(b, t) v_q(b, t − ℓ), cnt[i, b] += 1 over counted
    (weight[t−1] ≠ 0) valid steps t, ℓ = lags[i] (docs/diagnostics.md §2.7). Tiled like envelope_accumulate.

    The earlier kernel, one sequence at a time in the (B, T, H) layout: :func:`matched_accumulate`
    gives the same bits faster; kept as its reference (tests, benchmarks/bench_diagnostics.py)."""
    B, T, H = d.shape
    n = lags.shape[0]
    lmax_all = lags[n - 1]
    prod = np.empty((TILE, H))
    acc = np.empty((TILE, H))
    for b in range(B):
        for t0 in range(2, T + 1, TILE):
            nb = min(TILE, T + 1 - t0)
            prod[:] = 1.0
            acc[:] = 0.0
            lmax = min(lmax_all, t0 + nb - 2)
            li = 0
            for ell in range(1, lmax + 1):
                hit = ell == lags[li]
                for i in range(nb):
                    t = t0 + i
                    if ell > t - 1 or weight[t - 1] == 0.0:
                        continue
                    j = t - ell
                    for q in range(H):
                        prod[i, q] *= d[b, j, q]
                        acc[i, q] += rd[b, j, q]
                    if hit:
                        k = t - ell
                        s = 0.0
                        if order == 1:
                            for q in range(H):
                                s += (lam[b, k - 1, q] * (prod[i, q] * e[b, t - 1, q] * (1.0 + acc[i, q]))
                                      * delta[b, t - 1, q] * v[b, k, q])
                        else:
                            for q in range(H):
                                s += lam[b, k - 1, q] * (prod[i, q] * e[b, t - 1, q]) * delta[b, t - 1, q] * v[b, k, q]
                        psi[li, b] += s
                        cnt[li, b] += 1.0
                if hit:
                    li += 1
                    if li == n:
                        break


MATCHED_BLOCK = 32    # sequences per block of matched_accumulate (SIMD lanes; a block's rows fit in L1)
MATCHED_TILE = 2      # end times per tile of matched_accumulate


@njit(cache=True)
def matched_blocks(a, bs):
    """(T, B, H) → contiguous float64 (NB, T, H·bs), NB = ⌈B/bs⌉: sequence b = k·bs + j of block k
    at column q·bs + j (zero columns pad the last block): the layout of :func:`matched_accumulate`.
    A copy (no arithmetic)."""
    T, B, H = a.shape
    nb = (B + bs - 1) // bs
    out = np.zeros((nb, T, H * bs))
    for t in range(T):
        for b in range(B):
            k, j = b // bs, b % bs
            for q in range(H):
                out[k, t, q * bs + j] = a[t, b, q]
    return out


@njit(cache=True)
def matched_accumulate(d, rd, e, has_e, lam, delta, v, weight, lags, order, psi, cnt, bs):
    """psi[i, b] += Σ_q μ_q(b, t, ℓ) δ_q(b, t) v_q(b, t − ℓ), cnt[i, b] += 1 over counted
    (weight[t−1] ≠ 0) valid steps t, ℓ = lags[i] (docs/diagnostics.md §2.7).

    Arrays in the blocked layout of :func:`matched_blocks` (NB, T, H·bs) (v: T+1 rows), ``bs``
    sequences per block; psi, cnt (n_lags, B). The loops
    run over the bs sequences of a block side by side (contiguous, so they vectorise), and every
    (b, t, ℓ) does the arithmetic of :func:`matched_accumulate_tiled` in the same order — the
    running product and sum over j = t, t−1, …, the sum over q = 0 … H−1 from 0.0, the steps t in
    increasing order into psi — so the bits are the same. ``has_e`` False: no read-out factor
    (e ≡ 1, whose product is exact, so skipping it keeps the bits)."""
    NB, T, M = d.shape
    B = psi.shape[1]
    H = M // bs
    n = lags.shape[0]
    lmax_all = lags[n - 1]
    TL = MATCHED_TILE
    prod = np.empty((TL, M))
    acc = np.empty((TL, M))
    s = np.empty(bs)
    for blk in range(NB):
        b0 = blk * bs
        nbs = min(bs, B - b0)
        for t0 in range(2, T + 1, TL):
            nb = min(TL, T + 1 - t0)
            prod[:] = 1.0
            acc[:] = 0.0
            lmax = min(lmax_all, t0 + nb - 2)
            li = 0
            for ell in range(1, lmax + 1):
                hit = ell == lags[li]
                for i in range(nb):
                    t = t0 + i
                    if ell > t - 1 or weight[t - 1] == 0.0:
                        continue
                    j = t - ell                              # row of d_{t−ℓ+1}
                    for m in range(M):
                        prod[i, m] *= d[blk, j, m]
                        acc[i, m] += rd[blk, j, m]
                    if hit:
                        k = t - ell
                        s[:] = 0.0
                        for q in range(H):
                            for jb in range(bs):
                                m = q * bs + jb
                                g = prod[i, m] * e[blk, t - 1, m] if has_e else prod[i, m]
                                if order == 1:
                                    g = g * (1.0 + acc[i, m])
                                s[jb] += lam[blk, k - 1, m] * g * delta[blk, t - 1, m] * v[blk, k, m]
                        for jb in range(nbs):
                            psi[li, b0 + jb] += s[jb]
                            cnt[li, b0 + jb] += 1.0
                if hit:
                    li += 1
                    if li == n:
                        break


@njit(cache=True)
def matched_lag_float32(g, Q, ell, order, e, has_e, lam, delta, v, weight, psi_row):
    """One lag of the NumPy engine's float32 statistic (matched._accumulate_numpy, the author's
    arithmetic) with its bits: g (T−ℓ, B, H) = exp(P[ℓ+1:] − P[1:T+1−ℓ]) from NumPy (so exp is
    NumPy's on every machine), Q (T+1, B, H), e (T, B, H) float64; lam (T, B, H), delta (T, B, H),
    v (T+1, B, H) float32. For each (t, b): Γ = g·((1 + Q[ℓ+1+t]) − Q[1+t]) (order 1) · e[ℓ+t]
    in float64, cast to float32, the products ((Λ·Γ)·δ)·v in float32 and their sum over q as
    NumPy's float32 ``sum(axis=2)`` forms it for 8 ≤ H ≤ 128 (eight running sums
    r_j = Σ_k x[8k + j], then ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), the remainder
    added in order, onto 0); then psi_row[b] += Σ_t weight[ℓ+t]·ψ_t (float64, t in order) as NumPy's
    ``(w[:, None] * per_t).sum(axis=0)`` for B ≥ 2. The caller checks 8 ≤ H ≤ 128, B ≥ 2."""
    N, B, H = g.shape
    S = np.zeros(B)
    x = np.empty(H, dtype=np.float32)
    r = np.empty(8, dtype=np.float32)
    for t in range(N):
        w = weight[ell + t]
        for b in range(B):
            for q in range(H):
                gg = g[t, b, q]
                if order == 1:
                    gg = gg * ((1.0 + Q[ell + 1 + t, b, q]) - Q[1 + t, b, q])
                if has_e:
                    gg = gg * e[ell + t, b, q]
                x[q] = lam[t, b, q] * np.float32(gg) * delta[ell + t, b, q] * v[1 + t, b, q]
            for j in range(8):
                r[j] = x[j]
            k = 8
            while k + 8 <= H:
                for j in range(8):
                    r[j] += x[k + j]
                k += 8
            res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
            while k < H:
                res += x[k]
                k += 1
            S[b] += w * np.float64(np.float32(0.0) + res)
    for b in range(B):
        psi_row[b] += S[b]
