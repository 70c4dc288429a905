"""[B]'s quantities as the author's public code computes them (docs/fidelity.md, "[B]").

lwsim computes every [B] quantity exactly (docs/diagnostics.md §2.8–§2.10). The author's scripts
approximate in five places; ``conventions="author"`` on :func:`~lwsim.diagnostics.lr_profile`,
:func:`~lwsim.diagnostics.jacobian_anisotropy`, :func:`~lwsim.diagnostics.gradient_anisotropy`
and :func:`~lwsim.diagnostics.frechet_check` switches all of them on; the helpers below do each
one separately, so its effect can be measured alone (benchmarks/fidelity_effects_b.py):

1. gate term from the state *after* the step: B_t = diag((φ(a_t) − h_t) ⊙ g'_t) U_g instead of
   (φ(a_t) − h_{t−1}) — :func:`author_jacobians` (J_t = A_t + B_t^author);
2. products in reversed order, M^rev_{t,k} = J_{k+1} J_{k+2} ⋯ J_t — :func:`sampled_products`, :func:`iterate_products`;
3. ‖M‖₂ as 5 power iterations on M itself (not MᵀM), v₀ ~ N(0, I): an estimate of |λ_max(M)|,
   not σ_max — :func:`power_norm`;
4. lower medians (``torch.median``: the ⌊(n−1)/2⌋-th order statistic) — :func:`lower_median`;
5. floors: AI = σ₁/(σ_r + 1e−12), CE = Σ_{i≤r}σ_i²/(Σσ_i² + 1e−12) — :func:`floored_metrics`.
"""
from __future__ import annotations

import numpy as np

from ..conventions import (CONVENTIONS, as_conventions, author_cells, check_conventions,  # noqa: F401  (shared)
                           need_author_cell)
from .._validate import check_int
from ._util import f64, to_numpy

FLOOR = 1e-12                      # the author's additive floor in AI, CE and the μ̃ ratios


def author_jacobians(cell, params, x, backend="numpy"):
    """J_t with the author's gate term (item 1): exact J_t − B_t + B_t^author, (T, B, S, S).

    See docs/fidelity.md; docs/diagnostics.md §2.10.
    """
    from .expansion import gate_derivative_term
    need_author_cell(cell)
    x = cell.check_x(x)
    trace = cell.forward(params, x, backend=backend)
    J = f64(to_numpy(cell.jacobians(params, x, backend=backend)))
    if not cell.kind.gate_depends_on_state:       # rnn, constgate: no gate term to swap
        return J
    return (J - gate_derivative_term(cell, params, x, trace)
            + gate_derivative_term(cell, params, x, trace, conventions="author"))


def sampled_products(J, b, t, h, order="exact"):
    """M_{t,t−h} for sampled pairs: J (T, B, S, S) with J[t−1] = J_t, b and t int arrays (n,),
    one lag h ≥ 1 → (n, S, S). "exact": J_t ⋯ J_{t−h+1}; "reversed": J_{t−h+1} ⋯ J_t (item 2).

    See docs/fidelity.md; docs/diagnostics.md §2.8.
    """
    if order not in ("exact", "reversed"):
        raise ValueError(f"order must be 'exact' or 'reversed', got {order!r}")
    h = check_int("h", h, 1)
    b, t = np.asarray(b), np.asarray(t)
    W = J[t - 1, b]
    for m in range(1, h):
        W = W @ J[t - 1 - m, b] if order == "exact" else J[t - 1 - m, b] @ W
    return W


def iterate_products(J, max_lag, order="exact"):
    """Like :func:`lwsim.diagnostics.iterate_products` (yield (t, W), W[ℓ−1] = M_{t,t−ℓ},
    ℓ ≤ min(t − 1, max_lag)) with a choice of ``order``; "reversed" builds J_{k+1} ⋯ J_t by
    multiplying the previous window by J_t on the right.

    See docs/fidelity.md; docs/diagnostics.md §2.8.
    """
    if order not in ("exact", "reversed"):
        raise ValueError(f"order must be 'exact' or 'reversed', got {order!r}")
    T = J.shape[0]
    W = np.empty((0,) + J.shape[1:], dtype=J.dtype)
    for t in range(1, T + 1):
        n = min(t - 1, int(max_lag))
        new = np.empty((n,) + J.shape[1:], dtype=J.dtype)
        if n >= 1:
            new[0] = J[t - 1]
        if n >= 2:
            if order == "exact":
                np.matmul(J[t - 1][None], W[:n - 1], out=new[1:])
            else:
                np.matmul(W[:n - 1], J[t - 1][None], out=new[1:])
        W = new
        yield t, W


def transport_norms(J, lags, order="exact", norm="svd", iters=5, rng=0):
    """S_{t,k} (n_lags, T, B), NaN where t − ℓ < 1, with a choice of product ``order`` and of
    ``norm``: "svd" (exact σ_max) or "power" (item 3, ``iters`` iterations from ``rng``).

    See docs/fidelity.md; docs/diagnostics.md §2.8.
    """
    if norm not in ("svd", "power"):
        raise ValueError(f"norm must be 'svd' or 'power', got {norm!r}")
    J = np.asarray(J, dtype=np.float64)
    lags = np.asarray(lags)
    T, B = J.shape[:2]
    rng = np.random.default_rng(rng)
    out = np.full((lags.size, T, B), np.nan)
    for t, W in iterate_products(J, lags[-1], order):
        ok = lags <= W.shape[0]
        if ok.any():
            Wl = W[lags[ok] - 1]
            out[ok, t - 1] = (np.linalg.svd(Wl, compute_uv=False)[..., 0] if norm == "svd"
                              else power_norm(Wl, iters, rng))
    return out


def lower_median(v, axis=None):
    """``torch.median``: the lower median, the ⌊(n−1)/2⌋-th smallest value (NaN ignored).

    See docs/fidelity.md; docs/diagnostics.md §2.8.
    """
    v = np.asarray(v, dtype=np.float64)
    if axis is None:
        v = v[np.isfinite(v)]
        if v.size == 0:
            return np.nan
        return float(np.sort(v)[(v.size - 1) // 2])
    return np.apply_along_axis(lower_median, axis, v)


def power_norm(M, iters=5, rng=0):
    """Item 3: ‖M v_n‖ after ``iters`` steps v ← Mv/(‖Mv‖ + 1e−12) from v₀ ~ N(0, I)/‖·‖, for a
    stack (..., S, S); one v₀ per matrix from ``rng`` (seed or Generator). For a non-normal M
    this converges to |λ_max(M)| (≤ σ_max), not to the spectral norm.

    See docs/fidelity.md; docs/diagnostics.md §2.8.
    """
    iters = check_int("iters", iters, 0)
    M = np.asarray(M, dtype=np.float64)
    rng = np.random.default_rng(rng)
    v = rng.standard_normal(M.shape[:-1])
    v /= np.linalg.norm(v, axis=-1, keepdims=True) + FLOOR
    for _ in range(iters):
        v = np.einsum("...ij,...j->...i", M, v)
        v /= np.linalg.norm(v, axis=-1, keepdims=True) + FLOOR
    return np.linalg.norm(np.einsum("...ij,...j->...i", M, v), axis=-1)


def floored_metrics(sv, r=10, n_energy=16, floor=FLOOR):
    """Item 5: AI = σ₁/(σ_r + floor), CE = Σ_{i≤r}σ_i²/(Σ_{i≤n_energy}σ_i² + floor).

    See docs/fidelity.md; docs/diagnostics.md §2.9.
    """
    sv = np.asarray(sv, dtype=np.float64)
    e = sv * sv
    return (sv[..., 0] / (sv[..., r - 1] + floor),
            e[..., :r].sum(axis=-1) / (e[..., :n_energy].sum(axis=-1) + floor))
