"""The fused trainer: every step of ``train()`` between two exit points in one compiled call
(docs/experiments.md §5.2, docs/performance.md "The fused trainer").

Why: at the studies' sizes (T = 16, H = 8, batch 32) one step is about 10⁶ flops, a few µs of
arithmetic, while the step-by-step loop of train.py spends hundreds of µs a step in Python: checks,
operand packing, thread dispatch, clipping and the optimizer as separate NumPy calls. Here one
numba call runs K steps: minibatch gather, forward, loss, exact BPTT, the global gradient norm and
clip, and the optimizer update, on parameters and optimizer buffers held in flat arrays. train.py
leaves it only where Python has something to do: a validation point, a checkpoint, the end.

Same bits as the step-by-step path (tests/backends/numba/test_fused.py), by construction:
  - the cell's own kernels (leaky.py, gru.py, lstm.py) run on the same operands, chunk by chunk in
    the chunk layout the thread pool would use (threads.chunks), partial sums added in chunk order;
  - operands and gradients are moved by index maps, made once per training by running each family's
    own packing (``operands``) and unpacking (``assemble``) code on parameters tagged with their
    flat positions (:func:`_maps`): copies only, so a map reproduces that code exactly;
  - the global norm is NumPy's pairwise sum per array (:func:`_pairwise`) added up key by key, as
    optim.squared_norm; the clip scale and every optimizer scalar is cast to the parameters' dtype
    as NumPy casts a Python float; the updates are optim's element-wise operations in its order
    (Adam/AdamW through _optim_kernels.adam_update, the same kernel the step path uses), compiled
    without fast-math, so no multiply-add is fused.
Anything the fused loop cannot reproduce exactly (a non-finite loss, gradient or parameter) stops
the call at that step with a status; train.py then redoes that step the readable way, which raises
the same error as the step-by-step path.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import literal_unroll, njit

from ..._optim_kernels import adam_update
from ...cells._kind import no_kernels
from . import gru, leaky, lstm
from .common import fixed_order_sums64, like
from .readout import loss_kernel
from .threads import chunks
from .tuning import params as tuning_params

EXACT = dict(cache=True, error_model="numpy")     # no fast-math: the optimizer's roundings as NumPy's

# optimizer kinds and the rows of the (3, n) state array holding each buffer
OPT_KIND = {"sgd": 0, "momentum": 0, "adam": 1, "adamw": 1, "rmsprop": 2}
STATE_ROWS = {0: {"buf": 0}, 1: {"m": 0, "v": 1, "v_max": 2}, 2: {"v": 0, "buf": 1, "g_avg": 2}}

# status codes of a fused call (info[0]); info[1] is the step (index within the call) it stopped at
OK, BAD_LOSS, BAD_GRAD, BAD_PARAMS = 0, 1, 2, 3

Run = namedtuple("Run", "theta g st hp sched X Y idx nbs w bndA bndB koffs omap gmap fbuf red xbuf "
                        "losses gnorms info")


# ================================================================= shared pieces (exact arithmetic)
@njit(**EXACT)
def _block_sum(a, lo, n):
    """NumPy's pairwise sum of a block of n ≤ 128 values a[lo:lo + n]: < 8 in order; else 8 running
    partial sums combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the tail in order."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    m = n - n % 8
    while i < m:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(**EXACT)
def _pairwise(a, lo, n):
    """NumPy's pairwise sum of a[lo:lo + n] (float64): blocks of ≤ 128 by :func:`_block_sum`; a
    longer range split at n/2 rounded down to a multiple of 8, the two halves' sums added. np.sum
    of a contiguous float64 array is exactly this (tested against it for n = 0 … 70001). Written
    with an explicit stack: numba's cache cannot reload a recursive function (it crashes)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    slo = np.empty(64, np.int64)            # depth ≤ log2(n / 128) + 1: 64 levels cover any n
    sn = np.empty(64, np.int64)
    stage = np.empty(64, np.int64)
    vals = np.empty(64)
    sp, vp = 1, 0
    slo[0], sn[0], stage[0] = lo, n, 0
    while sp > 0:
        top = sp - 1
        m = sn[top]
        if m <= 128:
            vals[vp] = _block_sum(a, slo[top], m)
            vp += 1
            sp -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[top] == 0:                 # first the left half
            stage[top] = 1
            slo[sp], sn[sp], stage[sp] = slo[top], half, 0
            sp += 1
        elif stage[top] == 1:               # then the right half
            stage[top] = 2
            slo[sp], sn[sp], stage[sp] = slo[top] + half, m - half, 0
            sp += 1
        else:                               # both done: left + right
            vals[vp - 2] = vals[vp - 2] + vals[vp - 1]
            vp -= 1
            sp -= 1
    return vals[0]


@njit(**EXACT)
def pairwise_sum(a):
    """NumPy's np.sum of a 1-D float64 array (exposed for the tests)."""
    return _pairwise(a, 0, a.shape[0])


@njit(**EXACT)
def _norm_and_clip(g, koffs, clip, sq):
    """Global L2 norm of the gradient, as optim.squared_norms: per parameter Σ g² in float64 by
    NumPy's pairwise sum, added key by key; then torch's clip: scale = clip/(norm + 1e−6), applied
    (cast to g's dtype) when < 1 and clip > 0. Returns the norm before clipping."""
    for i in range(g.shape[0]):
        v = np.float64(g[i])
        sq[i] = v * v
    total = 0.0
    for k in range(koffs.shape[0] - 1):
        total += _pairwise(sq, koffs[k], koffs[k + 1] - koffs[k])
    norm = math.sqrt(total)
    if clip > 0:
        coef = clip / (norm + 1e-6)
        if coef < 1.0:
            c = like(g[0], coef)
            for i in range(g.shape[0]):
                g[i] = g[i] * c
    return norm


@njit(**EXACT)
def _sgd(p, g, buf, hp, t):
    """optim.SGD._update element by element: hp = [kind, clip, lr, wd, μ, 1 − dampening, nesterov]."""
    lr, wd, mu, damp1 = like(p[0], hp[2]), like(p[0], hp[3]), like(p[0], hp[4]), like(p[0], hp[5])
    has_wd, has_mu, nesterov = hp[3] != 0, hp[4] > 0, hp[6] != 0
    for i in range(p.shape[0]):
        gi = g[i]
        if has_wd:
            gi = gi + wd * p[i]
        if has_mu:
            if t == 1:
                b = gi
            else:
                b = buf[i] * mu
                b = b + damp1 * gi
            buf[i] = b
            gi = gi + mu * b if nesterov else b
        p[i] = p[i] - lr * gi


@njit(**EXACT)
def _rmsprop(p, g, v, buf, gavg, hp):
    """optim.RMSprop._update element by element: hp = [kind, clip, lr, wd, α, 1 − α, eps, μ, centered]."""
    lr, wd, a, a1 = like(p[0], hp[2]), like(p[0], hp[3]), like(p[0], hp[4]), like(p[0], hp[5])
    eps, mu = like(p[0], hp[6]), like(p[0], hp[7])
    has_wd, has_mu, centered = hp[3] != 0, hp[7] > 0, hp[8] != 0
    for i in range(p.shape[0]):
        gi = g[i]
        if has_wd:
            gi = gi + wd * p[i]
        vi = v[i] * a
        vi = vi + a1 * (gi * gi)
        v[i] = vi
        if centered:
            ga = gavg[i] + a1 * (gi - gavg[i])
            gavg[i] = ga
            den = np.sqrt(vi - ga * ga) + eps
        else:
            den = np.sqrt(vi) + eps
        if has_mu:
            b = buf[i] * mu
            b = b + gi / den
            buf[i] = b
            p[i] = p[i] - lr * b
        else:
            p[i] = p[i] - lr * (gi / den)


@njit(**EXACT)
def _update(R, k, t):
    """The optimizer step on the flat parameters (t = the optimizer's step count after it)."""
    kind = R.hp[0]
    p, g, st, hp = R.theta, R.g, R.st, R.hp
    if kind == 0:
        _sgd(p, g, st[0], hp, t)
    elif kind == 1:
        f = p[0]
        adam_update(p, g, st[0], st[1], st[2] if hp[9] != 0 else st[1], like(f, hp[2]), like(f, hp[3]),
                    like(f, hp[4]), like(f, hp[5]), like(f, hp[6]), like(f, R.sched[k, 0]),
                    like(f, R.sched[k, 1]), like(f, hp[7]), hp[8] != 0, hp[9] != 0)
    else:
        _rmsprop(p, g, st[0], st[1], st[2], hp)


@njit(**EXACT)
def _finite(a):
    for i in range(a.shape[0]):
        if not np.isfinite(a[i]):
            return False
    return True


@njit(**EXACT)
def _batch(R, k, Da):
    """(xa, y, chunk bounds) of step k: the minibatch rows idx[k, :nb] of X, Y gathered into views
    of the preallocated buffers, with the ones column when the cell has biases (Da = D + 1)."""
    nb = R.nbs[k]
    T, _, D = R.X.shape
    O = R.Y.shape[2]
    xa = R.xbuf[:T * nb * Da].reshape((T, nb, Da))
    y = R.xbuf[T * nb * Da:T * nb * (Da + O)].reshape((T, nb, O))
    for t in range(T):
        for b in range(nb):
            r = R.idx[k, b]
            for d in range(D):
                xa[t, b, d] = R.X[t, r, d]
            if Da > D:
                xa[t, b, D] = 1
            for o in range(O):
                y[t, b, o] = R.Y[t, r, o]
    bounds = R.bndA if nb == R.info[2] else R.bndB
    return xa, y, bounds


@njit(**EXACT)
def _carve(buf, off, a, b, c):
    """A (a, b, c) C-contiguous view of buf at element ``off``, and the offset after it."""
    n = a * b * c
    return buf[off:off + n].reshape((a, b, c)), off + n


@njit(**EXACT)
def _fill(dst, theta, omap, off):
    """dst (any C-contiguous array) ← theta[omap[off:off + dst.size]] (−1: a zero); next offset."""
    flat = dst.reshape(dst.size)
    for i in range(flat.shape[0]):
        j = omap[off + i]
        flat[i] = theta[j] if j >= 0 else 0
    return off + flat.shape[0]


@njit(**EXACT)
def _fill_ops(ops, theta, omap):
    """Every operand of ``ops`` (a tuple of arrays) from theta through omap, in order."""
    off = 0
    for a in literal_unroll(ops):
        off = _fill(a, theta, omap, off)


@njit(**EXACT)
def _put(red, off, a):
    """red[off:off + a.size] ← a (as float64); next offset."""
    flat = a.reshape(a.size)
    for i in range(flat.shape[0]):
        red[off + i] = flat[i]
    return off + flat.shape[0]


@njit(**EXACT)
def _chunk_sum(dZ):
    """dZ.sum(axis=0) as NumPy does it for the chunk axis: the first chunk, then the others added in order."""
    out = dZ[0].copy()
    for c in range(1, dZ.shape[0]):
        out += dZ[c]
    return out


@njit(**EXACT)
def _gather_grad(R):
    """g ← red[gmap] cast to the parameters' dtype (float64 sums rounded once, as .astype)."""
    g, red, gmap = R.g, R.red, R.gmap
    for j in range(g.shape[0]):
        g[j] = like(g[0], red[gmap[j]])


@njit(**EXACT)
def _finish(R, k, t, loss):
    """After a step's gradient: record loss and norm, stop on a non-finite value, else update."""
    R.losses[k] = loss
    if not np.isfinite(loss):
        R.info[0], R.info[1] = BAD_LOSS, k
        return False
    _gather_grad(R)
    norm = _norm_and_clip(R.g, R.koffs, R.hp[1], R.red[R.red.shape[0] - R.g.shape[0]:])
    R.gnorms[k] = norm
    if not np.isfinite(norm):
        R.info[0], R.info[1] = BAD_GRAD, k
        return False
    _update(R, k, t)
    return True


@njit(**EXACT)
def _start(R, k):
    """Before a step: the parameters must be finite (the step path's check_params would raise)."""
    if not _finite(R.theta):
        R.info[0], R.info[1] = BAD_PARAMS, k
        return False
    return True


# ================================================================= the families' gradients
@njit(**EXACT)
def _leaky_grad(R, xa, y, bounds, ops, mode, s_const, layernorm, tune):
    """Loss of the minibatch; its reduced gradient pieces into R.red (leaky.loss_and_grad's sums)."""
    Wa, UT, UC, gamma, beta, W_outT, b_out, W_out = ops
    _fill_ops(ops, R.theta, R.omap)
    T, B, Da = xa.shape
    G, H = UC.shape
    O = W_out.shape[0]
    nl = T if layernorm else 0
    gw = 0 if mode < 2 else (1 if mode == 2 else H)
    h, o = _carve(R.fbuf, 0, T + 1, B, H)
    cand, o = _carve(R.fbuf, o, T if mode else 0, B, H)
    # the backward's h̃_t: h[1:] for the rnn (as leaky.loss_and_grad passes it), else cand
    cand_b = R.fbuf[B * H:(T + 1) * B * H].reshape((T, B, H)) if mode == 0 else cand
    s, o = _carve(R.fbuf, o, T, B, gw)
    ahat, o = _carve(R.fbuf, o, nl, B, H)
    sig, o = _carve(R.fbuf, o, nl, B, 1)
    yhat, o = _carve(R.fbuf, o, T, B, O)
    C = bounds.shape[0]
    for c in range(C):
        leaky.forward_rows(c, bounds[c, 0], bounds[c, 1], xa, Wa, UT, mode, s_const, gamma, beta, layernorm,
                           W_outT, b_out, h, cand, s, ahat, sig, yhat, tune)
    loss, dy, db = loss_kernel(yhat, y, R.w)
    dZ = np.zeros((C, G, H + Da), R.theta.dtype)
    nb = B if layernorm else 0
    dgam, dbet, dWo = np.zeros((nb, H)), np.zeros((nb, H)), np.zeros((C, O, H))
    for c in range(C):
        leaky.backward_rows(c, bounds[c, 0], bounds[c, 1], h, xa, dy, W_out, UC, mode, s_const, cand_b, s, ahat,
                            sig, gamma, layernorm, dZ, dgam, dbet, dWo, tune)
    wo, dgamma, dbeta = fixed_order_sums64(dWo, dgam, dbet)
    off = _put(R.red, 0, _chunk_sum(dZ))
    off = _put(R.red, off, wo)
    off = _put(R.red, off, dgamma)
    off = _put(R.red, off, dbeta)
    _put(R.red, off, db)
    return loss


@njit(**EXACT)
def _cho_grad(R, xa, y, bounds, ops, layernorm, tune):
    """gru.loss_and_grad, convention "cho"."""
    Wa, UzrT, UgT, gamma, beta, W_outT, b_out, W_out, Uzr, Ug = ops
    _fill_ops(ops, R.theta, R.omap)
    T, B, Da = xa.shape
    H = Ug.shape[0]
    O = W_out.shape[0]
    nl = T if layernorm else 0
    h, o = _carve(R.fbuf, 0, T + 1, B, H)
    z, o = _carve(R.fbuf, o, T, B, H)
    r, o = _carve(R.fbuf, o, T, B, H)
    g, o = _carve(R.fbuf, o, T, B, H)
    rh, o = _carve(R.fbuf, o, T, B, H)
    ahat, o = _carve(R.fbuf, o, nl, B, H)
    sig, o = _carve(R.fbuf, o, nl, B, 1)
    yhat, o = _carve(R.fbuf, o, T, B, O)
    C = bounds.shape[0]
    for c in range(C):
        gru.cho_forward_rows(c, bounds[c, 0], bounds[c, 1], xa, Wa, UzrT, UgT, gamma, beta, layernorm, W_outT,
                             b_out, h, z, r, g, rh, ahat, sig, yhat, tune)
    loss, dy, db = loss_kernel(yhat, y, R.w)
    K = H + Da
    dZ, dG = np.zeros((C, 2 * H, K), R.theta.dtype), np.zeros((C, H, K), R.theta.dtype)
    nb = B if layernorm else 0
    dgam, dbet, dWo = np.zeros((nb, H)), np.zeros((nb, H)), np.zeros((C, O, H))
    for c in range(C):
        gru.cho_backward_rows(c, bounds[c, 0], bounds[c, 1], h, xa, dy, W_out, Uzr, Ug, z, r, g, rh, ahat, sig,
                              gamma, layernorm, dZ, dG, dgam, dbet, dWo, tune)
    wo, dgamma, dbeta = fixed_order_sums64(dWo, dgam, dbet)
    off = _put(R.red, 0, _chunk_sum(dZ))
    off = _put(R.red, off, _chunk_sum(dG))
    off = _put(R.red, off, wo)
    off = _put(R.red, off, dgamma)
    off = _put(R.red, off, dbeta)
    _put(R.red, off, db)
    return loss


@njit(**EXACT)
def _torch_grad(R, xa, y, bounds, ops, tune):
    """gru.loss_and_grad, convention "torch"."""
    Wa, WhT, bh, W_outT, b_out, W_out, Whc = ops
    _fill_ops(ops, R.theta, R.omap)
    T, B, Da = xa.shape
    H = Whc.shape[1]
    O = W_out.shape[0]
    h, o = _carve(R.fbuf, 0, T + 1, B, H)
    r, o = _carve(R.fbuf, o, T, B, H)
    z, o = _carve(R.fbuf, o, T, B, H)
    n, o = _carve(R.fbuf, o, T, B, H)
    hn, o = _carve(R.fbuf, o, T, B, H)
    yhat, o = _carve(R.fbuf, o, T, B, O)
    C = bounds.shape[0]
    for c in range(C):
        gru.torch_forward_rows(c, bounds[c, 0], bounds[c, 1], xa, Wa, WhT, bh, W_outT, b_out, h, r, z, n, hn,
                               yhat, tune)
    loss, dy, db = loss_kernel(yhat, y, R.w)
    dZ, dN = np.zeros((C, 3 * H, H + Da), R.theta.dtype), np.zeros((C, H, Da), R.theta.dtype)
    dWo = np.zeros((C, O, H))
    for c in range(C):
        gru.torch_backward_rows(c, bounds[c, 0], bounds[c, 1], h, xa, dy, W_out, Whc, r, z, n, hn, dZ, dN, dWo,
                                tune)
    none = np.zeros((0, H))
    wo, _, _ = fixed_order_sums64(dWo, none, none)
    off = _put(R.red, 0, _chunk_sum(dZ))
    off = _put(R.red, off, _chunk_sum(dN))
    off = _put(R.red, off, wo)
    _put(R.red, off, db)
    return loss


@njit(**EXACT)
def _lstm_grad(R, xa, y, bounds, ops, layernorm, tune):
    """lstm.loss_and_grad."""
    Wa, UT, gamma, beta, W_outT, b_out, W_out, UC = ops
    _fill_ops(ops, R.theta, R.omap)
    T, B, Da = xa.shape
    H = UC.shape[1]
    O = W_out.shape[0]
    nl = T if layernorm else 0
    h, o = _carve(R.fbuf, 0, T + 1, B, H)
    c_, o = _carve(R.fbuf, o, T + 1, B, H)
    i, o = _carve(R.fbuf, o, T, B, H)
    f, o = _carve(R.fbuf, o, T, B, H)
    g, o = _carve(R.fbuf, o, T, B, H)
    og, o = _carve(R.fbuf, o, T, B, H)
    tc, o = _carve(R.fbuf, o, T, B, H)
    ahat, o = _carve(R.fbuf, o, nl, B, H)
    sig, o = _carve(R.fbuf, o, nl, B, 1)
    yhat, o = _carve(R.fbuf, o, T, B, O)
    C = bounds.shape[0]
    for c in range(C):
        lstm.forward_rows(c, bounds[c, 0], bounds[c, 1], xa, Wa, UT, gamma, beta, layernorm, W_outT, b_out,
                          h, c_, i, f, g, og, tc, ahat, sig, yhat, tune)
    loss, dy, db = loss_kernel(yhat, y, R.w)
    dZ = np.zeros((C, 4 * H, H + Da), R.theta.dtype)
    nb = B if layernorm else 0
    dgam, dbet, dWo = np.zeros((nb, H)), np.zeros((nb, H)), np.zeros((C, O, H))
    for c in range(C):
        lstm.backward_rows(c, bounds[c, 0], bounds[c, 1], h, c_, xa, dy, W_out, UC, i, f, g, og, tc, ahat, sig,
                           gamma, layernorm, dZ, dgam, dbet, dWo, tune)
    wo, dgamma, dbeta = fixed_order_sums64(dWo, dgam, dbet)
    off = _put(R.red, 0, _chunk_sum(dZ))
    off = _put(R.red, off, wo)
    off = _put(R.red, off, dgamma)
    off = _put(R.red, off, dbeta)
    _put(R.red, off, db)
    return loss


# ================================================================= the step loops, one per family
# (numba caches neither a function passed as an argument nor a closure, so each family has its
# own four-line loop around the shared _start/_batch/_finish)
@njit(**EXACT)
def leaky_steps(R, ops, mode, s_const, layernorm, Da, tune):
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, bounds = _batch(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _leaky_grad(R, xa, y, bounds, ops, mode, s_const, layernorm, tune)):
            return


@njit(**EXACT)
def cho_steps(R, ops, layernorm, Da, tune):
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, bounds = _batch(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _cho_grad(R, xa, y, bounds, ops, layernorm, tune)):
            return


@njit(**EXACT)
def torch_steps(R, ops, Da, tune):
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, bounds = _batch(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _torch_grad(R, xa, y, bounds, ops, tune)):
            return


@njit(**EXACT)
def lstm_steps(R, ops, layernorm, Da, tune):
    for k in range(R.nbs.shape[0]):
        if not _start(R, k):
            return
        xa, y, bounds = _batch(R, k, Da)
        if not _finish(R, k, R.info[3] + k + 1, _lstm_grad(R, xa, y, bounds, ops, layernorm, tune)):
            return


# ================================================================= Python side
Family = namedtuple("Family", "operands assemble pieces buffers steps")
Family.__doc__ = """What the fused trainer needs of one kernel family, in one place:
operands(cell, p) and assemble(cell, p, grads, pieces) — the family's own packing and unpacking
code (mapped once, :func:`_maps`); pieces(cell) — the shapes of the reduced gradient pieces in the
order its ``_*_grad`` writes them to R.red, and the index of dW_out among them (b_out's sum is
always last); buffers(cell, T) — the per-sequence floats of its forward/backward buffers (the
``_carve`` calls of its ``_*_grad``); steps(R, ops, cell, Da, tune) — its compiled step loop."""


def _leaky_pieces(c):
    H = c.n_hidden
    G = H + (0, 0, 1, H)[leaky.mode_of(c)]
    return [(G, H + c.n_in + c.bias), (c.n_out, H), (H,), (H,), (c.n_out,)], 1


def _leaky_buffers(c, T):
    H, mode, nl = c.n_hidden, leaky.mode_of(c), T if c.layernorm else 0
    return (T + 1) * H + (T * H if mode else 0) + T * (0, 0, 1, H)[mode] + nl * (H + 1) + T * c.n_out


def _leaky_steps(R, ops, c, Da, tune):
    mode = leaky.mode_of(c)
    leaky_steps(R, ops, mode, c.dtype.type(c.s if mode == 1 else 1.0), c.layernorm, Da, tune)


FAMILIES = {
    "leaky": Family(leaky.operands, lambda c, p, gr, r: leaky.assemble(c, p, gr, r[0], r[2], r[3]),
                    _leaky_pieces, _leaky_buffers, _leaky_steps),
    "gru_cho": Family(
        gru.operands_cho, lambda c, p, gr, r: gru.assemble_cho(c, p, gr, r[0], r[1], r[3], r[4]),
        lambda c: ([(2 * c.n_hidden, c.n_hidden + c.n_in + c.bias), (c.n_hidden, c.n_hidden + c.n_in + c.bias),
                    (c.n_out, c.n_hidden), (c.n_hidden,), (c.n_hidden,), (c.n_out,)], 2),
        lambda c, T: (T + 1) * c.n_hidden + 4 * T * c.n_hidden + (T if c.layernorm else 0) * (c.n_hidden + 1)
        + T * c.n_out,
        lambda R, ops, c, Da, tune: cho_steps(R, ops, c.layernorm, Da, tune)),
    "gru_torch": Family(
        gru.operands_torch, lambda c, p, gr, r: gru.assemble_torch(c, p, gr, r[0], r[1]),
        lambda c: ([(3 * c.n_hidden, c.n_hidden + c.n_in + c.bias), (c.n_hidden, c.n_in + c.bias),
                    (c.n_out, c.n_hidden), (c.n_out,)], 2),
        lambda c, T: (T + 1) * c.n_hidden + 4 * T * c.n_hidden + T * c.n_out,
        lambda R, ops, c, Da, tune: torch_steps(R, ops, Da, tune)),
    "lstm": Family(
        lstm.operands, lambda c, p, gr, r: lstm.assemble(c, p, gr, r[0], r[2], r[3]),
        lambda c: ([(4 * c.n_hidden, c.n_hidden + c.n_in + c.bias), (c.n_out, c.n_hidden), (c.n_hidden,),
                    (c.n_hidden,), (c.n_out,)], 1),
        lambda c, T: 2 * (T + 1) * c.n_hidden + 5 * T * c.n_hidden + (T if c.layernorm else 0) * (c.n_hidden + 1)
        + T * c.n_out,
        lambda R, ops, c, Da, tune: lstm_steps(R, ops, c.layernorm, Da, tune)),
}


def family(cell):
    """The cell's entry of :data:`FAMILIES`, by the cell kind's ``numba_variant`` (leaky.py serves
    the four gated-leak cells, gru.py both conventions, lstm.py the LSTM; docs/cells.md §1.10)."""
    fam = FAMILIES.get(cell.kind.numba_variant(cell)) if cell.kind.numba_kernels else None
    if fam is None:
        raise no_kernels(cell, "numba", "the fused trainer", "train it with fused=False")
    return fam


def _maps(cell, shapes):
    """(operand arrays, omap, gmap, red size): the index maps of one training, made by running the
    family's own packing and unpacking code on tagged values (float64, tag = flat position + 1, 0
    for a constant zero), so that each map does exactly what that code does."""
    fam = family(cell)
    operands, assemble = fam.operands, fam.assemble
    red_shapes, wo_at = fam.pieces(cell)
    c64 = cell.with_dtype("float64")
    offs = np.cumsum([0] + [int(np.prod(s)) for s in shapes.values()])
    tagged = {k: (offs[i] + 1 + np.arange(offs[i + 1] - offs[i], dtype=np.float64)).reshape(s)
              for i, (k, s) in enumerate(shapes.items())}
    ops64 = operands(c64, tagged)
    omap = np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in ops64]).astype(np.int64) - 1
    ops = tuple(np.zeros(np.shape(a), dtype=cell.dtype) for a in ops64)
    roffs = np.cumsum([0] + [int(np.prod(s)) for s in red_shapes])
    reds = [(roffs[i] + 1 + np.arange(roffs[i + 1] - roffs[i], dtype=np.float64)).reshape(s)
            for i, s in enumerate(red_shapes)]
    grads = {"W_out": reds[wo_at]}
    if cell.bias:
        grads["b_out"] = reds[-1]
    g = assemble(c64, tagged, grads, reds)
    gmap = np.concatenate([np.asarray(g[k], dtype=np.float64).reshape(-1) for k in shapes]).astype(np.int64) - 1
    if omap.max() >= offs[-1] or gmap.min() < 0:
        raise AssertionError("fused trainer: inconsistent index maps")   # a family's code changed shape
    return ops, omap, gmap, int(roffs[-1])


def _bounds(nb):
    return np.array(chunks(nb), dtype=np.int64).reshape(-1, 2)


class FusedSteps:
    """One training's flat parameters, optimizer buffers and workspaces; :meth:`run` does K steps
    in one compiled call. ``params``/``opt`` are read at construction and written back by
    :meth:`sync` (train.py calls it after every call, before anything reads them)."""

    def __init__(self, cell, params, opt, clip, w, batch_size):
        self.cell, self.params, self.opt = cell, params, opt
        dt = cell.dtype
        shapes = cell.param_shapes()
        self.keys = list(shapes)
        self.koffs = np.cumsum([0] + [int(np.prod(s)) for s in shapes.values()]).astype(np.int64)
        n = int(self.koffs[-1])
        self.theta = np.concatenate([np.asarray(params[k], dtype=dt).reshape(-1) for k in self.keys])
        self.kind = OPT_KIND[opt.name]
        self.rows = STATE_ROWS[self.kind]
        self.st = np.zeros((3, n), dtype=dt)
        for name, row in self.rows.items():
            if name in opt.state[self.keys[0]]:
                self.st[row] = np.concatenate([opt.state[k][name].reshape(-1) for k in self.keys])
        self.hp = self._hyper(clip)
        self.ops, self.omap, self.gmap, nred = _maps(cell, shapes)
        self.red = np.zeros(nred + n)                 # reduced pieces, then the squares of the norm
        self.g = np.zeros(n, dtype=dt)
        self.w = np.ascontiguousarray(w, dtype=dt)
        T = len(w)
        Da = cell.n_in + (1 if cell.bias else 0)
        self.Da = Da
        self.family = family(cell)
        self.fbuf = np.zeros(batch_size * self.family.buffers(cell, T), dtype=dt)
        self.xbuf = np.zeros(T * batch_size * (Da + cell.n_out), dtype=dt)
        self.batch_size = batch_size
        self.bndA = _bounds(batch_size)
        self.tune = tuning_params()

    def _hyper(self, clip):
        h = self.opt.hyper
        hp = np.zeros(16)
        hp[0], hp[1] = self.kind, clip if clip is not None else 0.0
        if self.kind == 0:
            hp[2:7] = h["lr"], h["weight_decay"], h["momentum"], 1.0 - h["dampening"], h["nesterov"]
        elif self.kind == 1:
            lr, wd, eps = h["lr"], h["weight_decay"], h["eps"]
            b1, b2 = h["betas"]
            hp[2:10] = (1.0 - lr * wd, wd, 1.0 - b1, b2, 1.0 - b2, eps,
                        self.opt._decoupled and wd != 0, h["amsgrad"])
        else:
            hp[2:9] = h["lr"], h["weight_decay"], h["alpha"], 1.0 - h["alpha"], h["eps"], h["momentum"], h["centered"]
        return hp

    def _schedule(self, K):
        """Adam's per-step scalars (step size, √(1 − β₂ᵗ)) in Python floats, as Adam._fused_scalars."""
        sched = np.zeros((K, 2))
        if self.kind == 1:
            h, t0 = self.opt.hyper, self.opt.step_count
            b1, b2 = h["betas"]
            for k in range(K):
                t = t0 + k + 1
                sched[k] = h["lr"] / (1.0 - b1 ** t), math.sqrt(1.0 - b2 ** t)
        return sched

    def run(self, X, Y, idx, nbs):
        """Steps on the minibatches X[:, idx[k, :nbs[k]]] (k = 0 … K − 1). Returns (losses, grad
        norms, status, k): status OK, or the code of the check that stopped it at step k (that
        step not applied; losses/norms valid before k)."""
        K = len(nbs)
        last = int(nbs.min())
        bndB = _bounds(last) if last != self.batch_size else self.bndA
        info = np.zeros(8, dtype=np.int64)
        info[2], info[3] = self.batch_size, self.opt.step_count
        R = Run(self.theta, self.g, self.st, self.hp, self._schedule(K), X, Y, idx, nbs, self.w, self.bndA, bndB,
                self.koffs, self.omap, self.gmap, self.fbuf, self.red, self.xbuf, np.zeros(K), np.zeros(K), info)
        self.family.steps(R, self.ops, self.cell, self.Da, self.tune)
        status, k = int(info[0]), int(info[1]) if info[0] else K
        self.opt.step_count += k
        self.sync()
        return R.losses, R.gnorms, status, k

    def sync(self):
        """Write the flat parameters and optimizer buffers back into the params dict and optimizer."""
        for i, key in enumerate(self.keys):
            a, b = self.koffs[i], self.koffs[i + 1]
            self.params[key][...] = self.theta[a:b].reshape(self.params[key].shape)
            for name, row in self.rows.items():
                buf = self.opt.state[key].get(name)
                if buf is not None:
                    buf[...] = self.st[row, a:b].reshape(buf.shape)


def eligible(cell, params):
    """Whether the fused trainer reproduces the step path for these parameters: every array
    already in the cell's dtype (the step path otherwise keeps float64 copies that it casts at every
    step, and updates them in float64)."""
    return all(np.asarray(params[k]).dtype == cell.dtype for k in cell.param_shapes())


def full_arrays(cell, x, y):
    """(X, Y) as the kernels take them: the cell's dtype, C-contiguous, Y (T, N, n_out) with the
    last-step-only targets of readout "last" spread as Cell.check_y does."""
    X = np.ascontiguousarray(x, dtype=cell.dtype)
    y = np.asarray(y)
    if y.ndim == 2:
        full = np.zeros((X.shape[0],) + y.shape, dtype=cell.dtype)
        full[-1] = y
        return X, full
    return X, np.ascontiguousarray(y, dtype=cell.dtype)


def finite(X, Y):
    return bool(np.isfinite(X).all() and np.isfinite(Y).all())


SEGMENT_STEPS = 512          # steps per call at most (the progress bar moves at least this often)
SEGMENT_VALUES = 1 << 22     # fresh batches of one call at most (their memory)


def segment(step, exits, total, values_per_batch, fresh):
    """Steps of the next call after ``step``: up to the next exit (a sorted list of steps where
    train.py must look: validation, checkpoint), at most SEGMENT_STEPS, and with fresh batches (a
    Task) at most SEGMENT_VALUES input values."""
    import bisect
    i = bisect.bisect_right(exits, step)
    stop = exits[i] if i < len(exits) else total
    cap = SEGMENT_STEPS if not fresh else max(1, min(SEGMENT_STEPS, SEGMENT_VALUES // max(1, values_per_batch)))
    return min(stop - step, cap)


def stack_batches(cell, batches):
    """Fresh batches [(x, y), ...] of one call as (X, Y, [row indices per step])."""
    pairs = [full_arrays(cell, x, y) for x, y in batches]
    X = np.concatenate([p[0] for p in pairs], axis=1)
    Y = np.concatenate([p[1] for p in pairs], axis=1)
    idx, start = [], 0
    for x, _ in pairs:
        idx.append(np.arange(start, start + x.shape[1]))
        start += x.shape[1]
    return X, Y, idx


def index_matrix(idx, batch_size):
    """Row indices [array, ...] of K steps as a (K, batch_size) matrix and the K batch sizes."""
    K = len(idx)
    I = np.zeros((K, batch_size), dtype=np.int64)
    nbs = np.zeros(K, dtype=np.int64)
    for k, rows in enumerate(idx):
        I[k, :len(rows)] = rows
        nbs[k] = len(rows)
    return I, nbs


def pays(cell, T, batch_size):
    """train(fused=None)'s choice: one chunk (the thread pool would run the step on one thread
    anyway), or a small step (T·B·H ≤ 2¹⁶, where overhead dominates whatever the threads)."""
    return len(chunks(batch_size)) == 1 or T * batch_size * cell.n_hidden <= 1 << 16
