"""[B] Anisotropy of transport and of updates, S2 (docs/diagnostics.md §2.9).

Jacobian products: for each lag h in {1, 2, 4, 8, 12, 16, 24, 32, 40} sample (b, t, k = t − h)
triples (k ≥ 1, independently per lag, from ``seed``), take the singular values σ of M_{t,k} and
    AI_r = σ_1/σ_r (r = 10),   CE_r = Σ_{i≤r} σ_i² / Σ_{i≤16} σ_i²,
reported per lag as medians over triples (all values kept). The state size must be ≥ max(r, 16).

Gradient covariance: M = 256 per-example gradients (``cell.loss_and_grad`` on single sequences)
flattened over all parameters (sorted keys); rows normalised to unit norm, columns centred,
near-constant columns dropped (column std ≤ ``rtol`` · the largest column std); singular values
s_i of the result and
    AI = s_1/s_10,   CE = Σ_{i≤10} s_i² / Σ s_i²,   PR = (Σ s_i²)² / Σ s_i⁴.
Medians and IQRs over seeds: :func:`median_iqr`. ``conventions="author"`` and
``sampling="author"`` reproduce [B]'s code (docs/fidelity.md, "[B]").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_int, check_real
from ._util import (batch_slices, check_chunk, check_lags, check_progress, check_seed, progress_iter,
                    to_numpy)

DEFAULT_LAGS = (1, 2, 4, 8, 12, 16, 24, 32, 40)


def singular_value_metrics(sv, r=10, n_energy=16):
    """(AI_r, CE_r) from singular values sv (..., n) sorted in decreasing order (n ≥ max(r, n_energy)).

    See docs/diagnostics.md §2.9.
    """
    sv = np.asarray(sv, dtype=np.float64)
    r = check_int("r", r, 1)
    n_energy = check_int("n_energy", n_energy, 1)
    if sv.shape[-1] < max(r, n_energy):
        raise ValueError(f"need at least max(r, n_energy) = {max(r, n_energy)} singular values, got {sv.shape[-1]}")
    e = sv * sv
    with np.errstate(divide="ignore", invalid="ignore"):
        ai = sv[..., 0] / sv[..., r - 1]
        ce = e[..., :r].sum(axis=-1) / e[..., :n_energy].sum(axis=-1)
    return ai, ce


@dataclass
class JacobianAnisotropy:
    """Result of :func:`jacobian_anisotropy`: AI_r, CE_r per sampled triple and their medians per lag.

    See docs/diagnostics.md §2.9.
    """
    lags: np.ndarray
    ai_median: np.ndarray      # (n_lags,)
    ce_median: np.ndarray
    ai: np.ndarray             # (n_lags, n_samples)
    ce: np.ndarray
    samples: np.ndarray        # (n_lags, n_samples, 2) the (b, t) of each triple (k = t − h)
    r: int
    n_energy: int


def sample_triples(B, T, lags, n_samples, seed, sampling="lwsim"):
    """(b, t) of the sampled triples per lag, (n_lags, n_samples) each (k = t − h).

    "lwsim": b and t drawn independently with replacement from ``np.random.default_rng(seed)``,
    t ∈ [h + 1, T] (source k ≥ 1). "author" (as [B]'s code): the candidates (b, t), b-major,
    t ∈ [h, T − 1] (k ≥ 0: the initial state is a source, the last step never an end), drawn
    without replacement by ``np.random.RandomState(seed).choice`` (all of them when there are
    at most ``n_samples``; missing entries are −1).

    See docs/diagnostics.md §2.9.
    """
    if sampling == "lwsim":
        rng = np.random.default_rng(seed)
        bs = rng.integers(0, B, size=(len(lags), n_samples))
        ts = np.stack([rng.integers(ell + 1, T + 1, size=n_samples) for ell in lags])
        return bs, ts
    if sampling != "author":
        raise ValueError(f"sampling must be 'lwsim' or 'author', got {sampling!r}")
    rs = np.random.RandomState(seed)
    bs = np.full((len(lags), n_samples), -1)
    ts = np.full((len(lags), n_samples), -1)
    for i, h in enumerate(lags):
        cb, ct = np.divmod(np.arange(B * (T - h)), T - h)
        ct = ct + h
        if cb.size > n_samples:
            pick = rs.choice(cb.size, size=n_samples, replace=False)
            cb, ct = cb[pick], ct[pick]
        bs[i, :cb.size], ts[i, :cb.size] = cb, ct
    return bs, ts


def jacobian_anisotropy(cell, params, x, lags=DEFAULT_LAGS, *, n_samples=64, seed=0, r=10,
                        n_energy=16, backend="numpy", chunk=16, progress=True, conventions="lwsim",
                        sampling="lwsim"):
    """AI_r and CE_r of sampled Jacobian products per lag → :class:`JacobianAnisotropy`.

    ``conventions="author"`` (docs/fidelity.md, "[B]"): the author's Jacobians (gate term from
    h_t), products J_{k+1} ⋯ J_t, AI = σ₁/(σ_r + 1e−12), CE with the same floor (Conventions
    fields gate_term_state, product_order, metric_floors).
    ``sampling`` ("lwsim" | "author"): which triples, see :func:`sample_triples`."""
    from .author_b import as_conventions, author_jacobians, floored_metrics, sampled_products
    conv = as_conventions(conventions)
    x = cell.check_x(x)
    T, B, _ = x.shape
    lags = check_lags(lags, T)
    n_samples = check_int("n_samples", n_samples, 1)
    seed = check_seed(seed)
    chunk, progress = check_chunk(chunk), check_progress(progress)
    r = check_int("r", r, 1)
    n_energy = check_int("n_energy", n_energy, 1)
    if cell.state_size < max(r, n_energy):
        raise ValueError(f"state size {cell.state_size} < max(r, n_energy) = {max(r, n_energy)}")
    bs, ts = sample_triples(B, T, lags, n_samples, seed, sampling)
    used = np.unique(bs[bs >= 0])
    J = {}
    sl = batch_slices(used.size, chunk)
    for s in progress_iter(sl, len(sl), "Jacobians", progress):
        if conv.gate_term_state == "after_step":
            Jc = author_jacobians(cell, params, x[:, used[s]], backend)
        else:
            Jc = to_numpy(cell.jacobians(params, x[:, used[s]], backend=backend))
        for i, b in enumerate(used[s]):
            J[int(b)] = Jc[:, i]
    Jall = np.stack([J[int(b)] for b in used], axis=1)          # (T, n_used, S, S)
    col = {int(b): i for i, b in enumerate(used)}
    ai = np.full((lags.size, n_samples), np.nan)
    ce = np.full_like(ai, np.nan)
    for i, ell in enumerate(progress_iter(lags, lags.size, "products", progress)):
        ok = bs[i] >= 0
        bi = np.array([col[int(b)] for b in bs[i, ok]])
        W = sampled_products(Jall, bi, ts[i, ok], int(ell), conv.product_order)
        sv = np.linalg.svd(W, compute_uv=False)
        ai[i, ok], ce[i, ok] = (floored_metrics(sv, r, n_energy) if conv.metric_floors
                                else singular_value_metrics(sv, r, n_energy))
    with np.errstate(all="ignore"):
        med_ai, med_ce = np.nanmedian(ai, axis=1), np.nanmedian(ce, axis=1)
    return JacobianAnisotropy(lags=lags, ai_median=med_ai, ce_median=med_ce,
                              ai=ai, ce=ce, samples=np.stack([bs, ts], axis=-1), r=r, n_energy=n_energy)


@dataclass
class GradientAnisotropy:
    """Result of :func:`gradient_anisotropy`: AI, CE, PR of the per-example gradient covariance.

    See docs/diagnostics.md §2.9.
    """
    ai: float
    ce: float
    pr: float
    singular_values: np.ndarray
    n_examples: int
    n_columns: int            # kept columns
    n_dropped: int            # near-constant columns dropped


def gradient_covariance_metrics(G, r=10, rtol=1e-8, conventions="lwsim"):
    """AI, CE, PR of a per-example gradient matrix G (M, P) after the preprocessing of §2.9.

    ``conventions="author"`` (Conventions.metric_floors; docs/fidelity.md, "[B]"): rows divided by (‖g‖ + 1e−12), columns
    kept when their norm exceeds 1e−10·√M (all if none), AI = s₁/(s_r + 1e−12) and
    CE = Σ_{i≤r}s_i²/(Σs_i² + 1e−12). The author's extra 1e−8 Gaussian jitter on G is not added
    (it is random; its effect is below 1e−6 relative at [B]'s sizes)."""
    from .author_b import FLOOR, as_conventions
    floors = as_conventions(conventions).metric_floors
    G = np.array(to_numpy(G), dtype=np.float64)
    if G.ndim != 2 or G.shape[0] < 2:
        raise ValueError(f"G must be a 2-D (examples, parameters) array with >= 2 rows, got {G.shape}")
    r = check_int("r", r, 1)
    rtol = check_real("rtol", rtol, 0.0)
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    G = G / (norms + FLOOR) if floors else G / np.where(norms > 0, norms, 1.0)
    G -= G.mean(axis=0)
    if floors:
        cn = np.linalg.norm(G, axis=0)
        keep = cn > 1e-10 * np.sqrt(G.shape[0])
        if not keep.any():
            keep = np.ones(cn.shape, bool)
    else:
        sd = G.std(axis=0)
        keep = sd > rtol * sd.max() if sd.max() > 0 else np.zeros(sd.shape, bool)
    Gk = G[:, keep]
    s = np.linalg.svd(Gk, compute_uv=False) if Gk.size else np.zeros(0)
    if s.size < r:
        raise ValueError(f"only {s.size} singular values, fewer than r = {r}")
    e = s * s
    if floors:
        ai, ce = s[0] / (s[r - 1] + FLOOR), e[:r].sum() / (e.sum() + FLOOR)
    else:
        ai, ce = s[0] / s[r - 1], e[:r].sum() / e.sum()
    return GradientAnisotropy(ai=float(ai), ce=float(ce),
                              pr=float(e.sum() ** 2 / (e * e).sum()), singular_values=s,
                              n_examples=G.shape[0], n_columns=int(keep.sum()),
                              n_dropped=int((~keep).sum()))


def per_example_gradients(cell, params, x, y, *, backend="numpy", progress=True):
    """(M, P) matrix of per-example gradients, one ``loss_and_grad`` per sequence; columns follow
    sorted parameter keys, each flattened in C order. Returns (G, keys).

    See docs/diagnostics.md §2.9.
    """
    x = cell.check_x(x)
    y = cell.check_y(y, x)
    progress = check_progress(progress)
    keys = sorted(cell.param_shapes())
    B = x.shape[1]
    rows = []
    for b in progress_iter(range(B), B, "per-example gradients", progress):
        _, g = cell.loss_and_grad(params, x[:, b:b + 1], y[:, b:b + 1], backend=backend)
        rows.append(np.concatenate([np.ravel(to_numpy(g[k])) for k in keys]))
    return np.stack(rows).astype(np.float64), keys


def gradient_anisotropy(cell, params, x, y, *, r=10, rtol=1e-8, rates=None, backend="numpy",
                        progress=True, conventions="lwsim"):
    """AI, CE, PR of the per-example gradient covariance over the batch (§2.9; [B] uses M = 256).

    ``rates`` (optional, beyond [B]'s definition): a per-parameter rates dict (``opt.rates()``);
    each per-example gradient is then replaced by the update direction λ ⊙ g before the metrics
    (a scalar rate changes nothing, the rows are normalised).

    See docs/diagnostics.md §2.9.
    """
    G, keys = per_example_gradients(cell, params, x, y, backend=backend, progress=progress)
    if rates is not None:
        if not isinstance(rates, dict):
            raise TypeError(f"rates must be a dict of per-parameter rates, got {type(rates).__name__}")
        missing = [k for k in keys if k not in rates]
        if missing:
            raise ValueError(f"rates lacks the parameters {missing}")
        shapes = cell.param_shapes()
        lam = np.concatenate([np.broadcast_to(np.asarray(to_numpy(rates[k]), dtype=np.float64),
                                              shapes[k]).ravel() for k in keys])
        G = G * lam
    return gradient_covariance_metrics(G, r=r, rtol=rtol, conventions=conventions)


def median_iqr(values, axis=0):
    """Median and interquartile range (q75 − q25) along ``axis`` (e.g. over seeds), NaN ignored.

    See docs/diagnostics.md §2.9.
    """
    v = np.asarray(values, dtype=np.float64)
    q25, med, q75 = np.nanquantile(v, [0.25, 0.5, 0.75], axis=axis)
    return med, q75 - q25
