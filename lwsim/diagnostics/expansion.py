"""Checks of the first-order expansion (docs/diagnostics.md §2.10).

[B] Fréchet check. Along a trajectory split each exact Jacobian J_j = A_j + B_j, B_j the
gate-derivative term (the part of J_j through the gates' dependence on h_{j−1}), A_j the rest:
  constgate, rnn   B_j = 0 (no gate derivative: the check is trivially exact)
  sharedgate       A_j = (1−s_j) I + s_j diag(h̃') J_LN W_h,   B_j = s'_j (h̃_j − h_{j−1}) u_sᵀ
  diaggate         A_j = diag(1−s_j) + diag(s_j ⊙ h̃') J_LN W_h,   B_j = diag((h̃_j − h_{j−1}) ⊙ s'_j) U_s
  gru "cho"        B_j = diag((g − h_{j−1}) ⊙ z') U_z + diag(z ⊙ g') J_LN U_g diag(h_{j−1} ⊙ r') U_r
  gru "torch"      B_j = diag((h_{j−1} − n) ⊙ z') W_hz + diag((1−z) ⊙ n' ⊙ (W_hn h_{j−1} + b_hn) ⊙ r') W_hr
  lstm (2H state)  B_j has ∂c/∂h block G = diag(c_{j−1} ⊙ f') U_f + diag(g ⊙ i') U_i and ∂h/∂h block
                   diag(tanh c_j ⊙ o') U_o + diag(e_j) G; zero ∂·/∂c blocks
(so A_j = diag(leak) + the candidate path; A_j = J_j − B_j is formed from the exact J).
With F(ε) = Π_j (A_j + εB_j), F₀ = Π_j A_j and L₁ = Σ_i (Π_{j>i} A_j) B_i (Π_{j<i} A_j) (later
steps on the left, like M), report E(ε) = ‖F(ε) − F₀ − εL₁‖_F over ε ∈ {1e−5 … 1}, the log–log
slope of E over the five smallest ε (≈ 2), C₂(ε) = E/ε², the remainder at ε = 1 relative to
‖F(1)‖_F (F(1) is the exact product), and the per-step ‖B_j‖₂/‖A_j‖₂.

[A] Envelope fidelity: per lag, f_exact vs first-order f on the same sampled (b, t) — ``n_times``
end times per lag, drawn from ``seed`` — with Spearman ρ and Pearson r of the log envelopes across
lags, the ratio of log–log slopes (approx/exact) and the mean off-diagonal energy fraction
‖M − diag M‖_F / ‖M‖_F (whole state matrix; 2H×2H for the LSTM).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._validate import check_int
from ..cells._common import ln_forward, ln_times_matrix
from .gamma import _check_factors, gate_factors, prefix_sums
from .rates import recurrent_rates, source_rates
from .transport import neuron_diagonal, offdiag_fraction, spectral_norms
from ._util import (batch_slices, check_chunk, check_lags, check_order, check_progress, check_seed,
                    f64, need_gated, ols, progress_iter, to_numpy)

DEFAULT_EPS = np.logspace(-5, 0, 11)
# the author's grid (1, 3 per decade): 1e−5, 3e−5, 1e−4, …, 3e−1, 1
AUTHOR_EPS = np.array([1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0])


def _dsig(s):
    return s * (1.0 - s)


def _p64(cell, params):
    return {k: np.asarray(to_numpy(v), dtype=np.float64) for k, v in cell.check_params(params).items()}


def gate_derivative_term(cell, params, x, trace=None, backend="numpy", conventions="lwsim"):
    """B_j for every step: (T, B, S, S) float64 (zeros for rnn and constgate).

    ``conventions="author"`` (Conventions.gate_term_state "after_step"; sharedgate, diaggate: the
    author's scalar and multi-gate models) builds the gate term from the state after the step, diag((h̃_j − h_j) ⊙ s'_j) U_s, as [B]'s
    code does (docs/fidelity.md, "[B]"); the exact term uses h_{j−1}."""
    from ..conventions import as_conventions, need_author_cell
    after_step = as_conventions(conventions).gate_term_state == "after_step"
    if after_step:
        need_author_cell(cell)
    x = cell.check_x(x)
    if trace is None:
        trace = cell.forward(params, x, backend=backend)
    p = _p64(cell, params)
    x = np.asarray(to_numpy(x), dtype=np.float64)
    h = f64(trace.h)
    hp = h[:-1]
    T, B, H = hp.shape
    S = cell.state_size
    kind = cell.kind
    if not kind.gate_depends_on_state:                          # rnn, constgate: B_t = 0
        return np.zeros((T, B, S, S))
    if kind.family not in ("leaky", "gru", "lstm"):
        raise ValueError(f"gate_derivative_term has no formula for cell {cell.name!r} "
                         f"(family {kind.family!r}; docs/diagnostics.md §2.10)")
    G = {k: f64(v) for k, v in trace.gates.items()}
    if kind.family == "leaky":                                 # sharedgate, diaggate (a gate that reads h)
        ref = h[1:] if after_step else hp          # author: h_j; exact: h_{j−1}
        col = (f64(trace.cand) - ref) * _dsig(G["s"])
        U = kind.gate.recurrent_weight(p)                       # u_sᵀ as a row, or U_s
        return col[..., :, None] * U
    if kind.family == "gru" and cell.convention == "cho":
        z, r, g = G["z"], G["r"], G["g"]
        out = ((g - hp) * _dsig(z))[..., None] * p["U_z"]
        for t in range(T):
            if cell.layernorm:
                a = x[t] @ p["W_g"].T + (r[t] * hp[t]) @ p["U_g"].T + p.get("b_g", 0.0)
                _, ahat, sig = ln_forward(np, a, p["ln_gamma"], p["ln_beta"])
                K = ln_times_matrix(np, p["U_g"], p["ln_gamma"], ahat, sig)
            else:
                K = p["U_g"][None]
            out[t] += (z[t] * (1.0 - g[t] ** 2))[:, :, None] * ((K * (hp[t] * _dsig(r[t]))[:, None, :]) @ p["U_r"])
        return out
    if kind.family == "gru":
        r, z, n = G["r"], G["z"], G["n"]
        hn = hp @ p["W_hn"].T + p.get("b_hn", 0.0)
        return (((hp - n) * _dsig(z))[..., None] * p["W_hz"]
                + ((1.0 - z) * (1.0 - n * n) * hn * _dsig(r))[..., None] * p["W_hr"])
    # lstm
    i, f, g, o = G["i"], G["f"], G["g"], G["o"]
    c = f64(trace.c)
    tc = np.tanh(c[1:])
    e = o * (1.0 - tc * tc)
    Gc = (c[:-1] * _dsig(f))[..., None] * p["U_f"] + (g * _dsig(i))[..., None] * p["U_i"]
    out = np.zeros((T, B, S, S))
    out[..., :H, :H] = (tc * _dsig(o))[..., None] * p["U_o"] + e[..., None] * Gc
    out[..., H:, :H] = Gc
    return out


def gate_split(cell, params, x, backend="numpy", conventions="lwsim"):
    """(A, B): the split J_j = A_j + B_j of every step, each (T, batch, S, S) float64.

    ``conventions="author"`` (Conventions.gate_term_state "after_step"): A_j is unchanged (the exact non-gate part, as the author's
    diag(1−g) + diag(g) D W_r) and B_j is the author's gate term (:func:`gate_derivative_term`),
    so A_j + B_j is the author's (approximate) Jacobian.

    See docs/diagnostics.md §2.10.
    """
    from ..conventions import as_conventions
    conv = as_conventions(conventions)
    x = cell.check_x(x)
    trace = cell.forward(params, x, backend=backend)
    J = f64(cell.jacobians(params, x, backend=backend))
    Bm = gate_derivative_term(cell, params, x, trace)
    A = J - Bm
    if conv.gate_term_state == "after_step":
        Bm = gate_derivative_term(cell, params, x, trace, conventions=conventions)
    return A, Bm


@dataclass
class FrechetCheck:
    """Result of :func:`frechet_check`: E(ε), E/ε², slopes and remainders per sequence.

    See docs/diagnostics.md §2.10.
    """
    eps: np.ndarray            # (n_eps,) increasing
    E: np.ndarray              # (B, n_eps) ‖F(ε) − F₀ − εL₁‖_F
    C2: np.ndarray             # (B, n_eps) E/ε²
    slope: np.ndarray          # (B,) log–log slope over the five smallest ε
    remainder: np.ndarray      # (B,) ‖F(1) − F₀ − L₁‖_F / ‖F(1)‖_F
    norm_A: np.ndarray         # (T, B) ‖A_j‖₂
    norm_B: np.ndarray         # (T, B) ‖B_j‖₂
    ratio: np.ndarray          # (T, B) ‖B_j‖₂/‖A_j‖₂

    def to_dict(self):
        return {k: v.tolist() for k, v in asdict(self).items()}


def frechet_from_split(A, Bm, eps=DEFAULT_EPS, n_slope=5):
    """The Fréchet check on given splits A, Bm (T, B, S, S) (product over all T steps).

    See docs/diagnostics.md §2.10.
    """
    A = np.asarray(A, dtype=np.float64)
    Bm = np.asarray(Bm, dtype=np.float64)
    if A.ndim != 4 or A.shape != Bm.shape or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A and B must have the same shape (T, B, S, S), got {A.shape} and {Bm.shape}")
    eps = np.sort(np.asarray(eps, dtype=np.float64).ravel())
    if eps.size < n_slope or np.any(eps <= 0):
        raise ValueError(f"eps must hold at least {n_slope} positive values")
    T, B, S, _ = A.shape
    I = np.broadcast_to(np.eye(S), (B, S, S))
    F0, L1 = I.copy(), np.zeros((B, S, S))
    F = np.broadcast_to(I, (eps.size, B, S, S)).copy()
    F1 = I.copy()
    for j in range(T):
        L1 = A[j] @ L1 + Bm[j] @ F0
        F0 = A[j] @ F0
        F = (A[j][None] + eps[:, None, None, None] * Bm[j][None]) @ F
        F1 = (A[j] + Bm[j]) @ F1
    E = np.linalg.norm(F - F0[None] - eps[:, None, None, None] * L1[None], axis=(-2, -1)).T   # (B, n_eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        C2 = E / eps ** 2
        slope = np.array([ols(np.log(eps[:n_slope]), np.log(E[b, :n_slope]))[1] for b in range(B)])
        n1 = np.linalg.norm(F1, axis=(-2, -1))
        remainder = np.linalg.norm(F1 - F0 - L1, axis=(-2, -1)) / n1
    nA, nB = spectral_norms(A), spectral_norms(Bm)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = nB / nA
    return FrechetCheck(eps=eps, E=E, C2=C2, slope=slope, remainder=remainder,
                        norm_A=nA, norm_B=nB, ratio=ratio)


def frechet_check(cell, params, x, eps=DEFAULT_EPS, *, backend="numpy", conventions="lwsim"):
    """[B]'s Fréchet check along each sequence of x (product over all T steps) → :class:`FrechetCheck`.

    ``conventions="author"`` (docs/fidelity.md, "[B]"): the author's gate term B_j (from h_j) and
    the author's product order F = Π in increasing j from the left (A_1 A_2 ⋯ A_T, and L₁ to
    match), i.e. the exact check applied to the time-reversed factor sequence."""
    from ..conventions import as_conventions
    conv = as_conventions(conventions)
    A, Bm = gate_split(cell, params, x, backend, conventions=conventions)
    reversed_ = conv.product_order == "reversed"
    if reversed_:
        A, Bm = A[::-1], Bm[::-1]                # the check multiplies later steps on the left
    fc = frechet_from_split(A, Bm, eps)
    if reversed_:                                # per-step norms back in time order
        fc.norm_A, fc.norm_B, fc.ratio = fc.norm_A[::-1], fc.norm_B[::-1], fc.ratio[::-1]
    return fc


# --------------------------------------------------------------------------- [A] envelope fidelity
@dataclass
class EnvelopeFidelity:
    """Result of :func:`envelope_fidelity`: exact vs first-order envelope per lag and their agreement.

    See docs/diagnostics.md §2.10.
    """
    lags: np.ndarray
    f_exact: np.ndarray
    f_approx: np.ndarray
    offdiag: np.ndarray        # mean ‖M − diag M‖_F/‖M‖_F per lag
    spearman: float
    pearson_log: float
    slope_exact: float
    slope_approx: float
    slope_ratio: float
    n_times: int
    order: int
    form: str

    def to_dict(self):
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items()}


def fidelity_table(lags, f_exact, f_approx):
    """Spearman ρ, Pearson r of log f, log–log slopes and their ratio approx/exact (finite positive
    lags only; NaN when fewer than 3).

    See docs/diagnostics.md §2.10.
    """
    from scipy.stats import pearsonr, spearmanr
    lags = np.asarray(lags, dtype=np.float64)
    fe = np.asarray(f_exact, dtype=np.float64)
    fa = np.asarray(f_approx, dtype=np.float64)
    if not (lags.shape == fe.shape == fa.shape) or lags.ndim != 1:
        raise ValueError("lags, f_exact and f_approx must be 1-D arrays of equal length")
    ok = np.isfinite(fe) & np.isfinite(fa) & (fe > 0) & (fa > 0) & (lags > 0)
    nan = dict(spearman=np.nan, pearson_log=np.nan, slope_exact=np.nan, slope_approx=np.nan,
               slope_ratio=np.nan)
    if ok.sum() < 3:
        return nan
    le, la, ll = np.log(fe[ok]), np.log(fa[ok]), np.log(lags[ok])
    out = dict(nan)
    if np.ptp(le) > 0 and np.ptp(la) > 0:
        out["spearman"] = float(spearmanr(fe[ok], fa[ok]).statistic)
        out["pearson_log"] = float(pearsonr(le, la).statistic)
    out["slope_exact"] = ols(ll, le)[1]
    out["slope_approx"] = ols(ll, la)[1]
    out["slope_ratio"] = out["slope_approx"] / out["slope_exact"] if out["slope_exact"] != 0 else np.nan
    return out


def envelope_fidelity(cell, params, x, rates, lags, *, n_times=50, seed=0, order=1, form="rayleigh",
                      backend="numpy", chunk=4, progress=True):
    """[A] appendix: exact vs first-order envelope on n_times sampled end times per lag and every
    sequence of x → :class:`EnvelopeFidelity`. Cost Σ_ℓ ℓ · n_times · B matrix products.

    See docs/diagnostics.md §2.10.
    """
    need_gated(cell, "the envelope fidelity check")
    x = cell.check_x(x)
    T, B, _ = x.shape
    H = cell.n_hidden
    lags = check_lags(lags, T)
    n_times = check_int("n_times", n_times, 1)
    order = check_order(order)
    seed = check_seed(seed)
    chunk, progress = check_chunk(chunk), check_progress(progress)
    lam = recurrent_rates(cell, rates)
    rng = np.random.default_rng(seed)
    times = [np.sort(rng.choice(np.arange(ell + 1, T + 1), size=min(n_times, T - ell), replace=False))
             for ell in lags]
    n = lags.size
    acc_e, acc_a, acc_o, cnt = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    sl = batch_slices(B, chunk)
    for s in progress_iter(sl, len(sl), f"envelope fidelity ({cell.name})", progress):
        xs = x[:, s]
        J = to_numpy(cell.jacobians(params, xs, backend=backend))
        fac = gate_factors(cell, params, xs, backend)
        d, r, e = _check_factors(fac.d, fac.r, fac.readout, 1)
        P, Q = prefix_sums(d, r if order == 1 else None)
        lam_src = source_rates(lam, fac.trace.h, form)
        for i, ell in enumerate(lags):
            ts = times[i]
            W = J[ts - 1]
            for m in range(1, ell):
                W = W @ J[ts - 1 - m]                                   # M_{t,t−ℓ}
            lam_k = lam_src[ts - ell - 1]                               # Λ(b, k), k = t − ℓ
            D = neuron_diagonal(W, H, None if e is None else e[ts - ell - 1])
            g = np.exp(P[ts] - P[ts - ell])
            if order == 1:
                g = g * (1.0 + Q[ts] - Q[ts - ell])
            if e is not None:
                g = g * e[ts - 1]
            acc_e[i] += np.abs(lam_k * D).sum()
            acc_a[i] += np.abs(lam_k * g).sum()
            acc_o[i] += offdiag_fraction(W).sum()
            cnt[i] += ts.size * xs.shape[1]
    fe, fa = acc_e / cnt, acc_a / cnt
    tab = fidelity_table(lags, fe, fa)
    return EnvelopeFidelity(lags=lags, f_exact=fe, f_approx=fa, offdiag=acc_o / cnt,
                            n_times=n_times, order=order, form=form, **tab)
