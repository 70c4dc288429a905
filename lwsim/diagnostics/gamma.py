"""First-order per-neuron transport factor Γ and zero-order Γ⁰ (docs/diagnostics.md §2.3).

Split the one-step Jacobian J_j = diag(d_j) + E_j, d_j the leak (constgate/sharedgate/diaggate
1 − s_j; gru "cho" 1 − z_j; gru "torch" z_j; lstm f_j on the cell path) and r_j = diag(J_j) − d_j.
To first order in E (the Fréchet derivative of the product, §2.10) the diagonal of the transport
M_{t,t−ℓ} = J_t ⋯ J_{t−ℓ+1} is

    Γ^{(q)}_{t,ℓ} = Π_{j=t−ℓ+1}^{t} d_j^{(q)} · (1 + Σ_{j=t−ℓ+1}^{t} r_j^{(q)} / d_j^{(q)}),
    Γ^{0,(q)}_{t,ℓ} = Π_{j=t−ℓ+1}^{t} d_j^{(q)}                       (gates only),

computed for all t and ℓ ≤ L at once from the log-space prefix sums P_t = Σ_{j≤t} log d_j and
Q_t = Σ_{j≤t} r_j/d_j:  Γ_{t,ℓ} = exp(P_t − P_{t−ℓ}) (1 + Q_t − Q_{t−ℓ}),  cost O(T·L·H).

LSTM (cell path): d_j = f_j, r_j = diag(∂c_j/∂h_{j−1}) ⊙ e_{j−1} (the detour c_{j−1} → h_{j−1} →
c_j), and Γ, Γ⁰ are multiplied by the read-out e_t = o_t ⊙ (1 − tanh² c_t) of the cell into h_t
(``readout``). e_0 = 0 (h_0 is fixed). The exact counterpart is the diagonal of the total
cell-path transport ∂h_t/∂c_k = [M_{t,k}]_hh diag(e_k) + [M_{t,k}]_hc (see transport.py); with
U_o = 0 Γ matches it to first order, with U_o ≠ 0 it omits the first-order read-out term through
the output gate at step t (the formula of docs/diagnostics.md §2.3, kept as written).

The plain rnn has no leak: Γ raises ValueError for it; only exact transports apply.

``conventions="author"`` (docs/fidelity.md) reproduces the author's code: r_t without the
LayerNorm Jacobian (diag(W_h), diag(U_g) in place of the diagonal of J_LN·U); for the GRU the
candidate term z g' diag(U_g)(r + h r' diag(U_r)) in place of z g' [J_LN U_g (diag(r) + diag(h r') U_r)]_qq
and Γ⁰ = Π(1−z) + Π r + Π (1−z) r (so Γ = Γ⁰ + Π(1−z)·Σ r_j/d_j); the LSTM factors keep their
form, with diag(U_g) in place of diag(J_LN U_g).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conventions import as_conventions
from ..cells._common import ln_forward, ln_times_matrix_diag
from ._util import btH, check_engine, check_lags, check_order, f64, need_gated, to_numpy


@dataclass
class GateFactors:
    """Per-step ingredients of Γ, each (T, B, H) float64 (index t − 1 for step t).

    d: leak d_t; r: r_t = diag(J_t) − d_t (lstm: diag(∂c_t/∂h_{t−1}) ⊙ e_{t−1});
    readout: e_t = o_t ⊙ (1 − tanh² c_t) for the lstm, None otherwise; trace: the forward pass;
    reset: the GRU reset gate r_t, only with Conventions.gru_gamma0 "three_terms" (as under
    conventions="author", its 3-term Γ⁰), else None.

    See docs/diagnostics.md §2.3.
    """
    d: np.ndarray
    r: np.ndarray
    readout: np.ndarray | None
    trace: object
    reset: np.ndarray | None = None


def _np_params(cell, params):
    return {k: np.asarray(to_numpy(v), dtype=np.float64) for k, v in cell.check_params(params).items()}


def _lstm_factors(cell, params, x, trace, ln_jacobian=True):
    p = _np_params(cell, params)
    x = np.asarray(to_numpy(x), dtype=np.float64)
    h, c = f64(trace.h), f64(trace.c)
    i, f, g, o = (f64(trace.gates[k]) for k in "ifgo")
    h_prev, c_prev = h[:-1], c[:-1]
    if cell.layernorm and ln_jacobian:
        a = x @ p["W_g"].T + h_prev @ p["U_g"].T
        if "b_g" in p:
            a = a + p["b_g"]
        _, ahat, sig = ln_forward(np, a, p["ln_gamma"], p["ln_beta"])
        kd = ln_times_matrix_diag(p["U_g"], p["ln_gamma"], ahat, sig)
    else:
        kd = p["U_g"].diagonal()
    dcdh = (c_prev * f * (1.0 - f) * p["U_f"].diagonal() + g * i * (1.0 - i) * p["U_i"].diagonal()
            + i * (1.0 - g * g) * kd)
    e = o * (1.0 - np.tanh(c[1:]) ** 2)
    e_prev = np.concatenate([np.zeros_like(e[:1]), e[:-1]], axis=0)
    return dcdh * e_prev, e


def _need_cho(cell):
    if cell.convention != "cho":
        raise ValueError("conventions='author' needs the GRU convention 'cho' (the author's GRU)")


def _author_factors(cell, params, x, trace, d):
    """The author's r_t (no LayerNorm Jacobian; GRU: diag(U_g)·diag(U_r)); Conventions.r_diagonal."""
    p = _np_params(cell, params)
    h_prev = f64(trace.h)[:-1]
    family = cell.kind.family
    if family == "lstm":
        r, e = _lstm_factors(cell, params, x, trace, ln_jacobian=False)
        return GateFactors(d=d, r=r, readout=e, trace=trace)
    if family == "gru":
        _need_cho(cell)
        z, rg, g = (f64(trace.gates[k]) for k in "zrg")
        r = ((g - h_prev) * z * (1.0 - z) * p["U_z"].diagonal()
             + z * (1.0 - g * g) * p["U_g"].diagonal() * (rg + h_prev * rg * (1.0 - rg) * p["U_r"].diagonal()))
        return GateFactors(d=d, r=r, readout=None, trace=trace)
    if family != "leaky":
        raise ValueError(f"conventions='author' has no gate factors for cell {cell.name!r} "
                         f"(family {family!r}; docs/fidelity.md)")
    s = 1.0 - d                                   # constgate/sharedgate/diaggate: d = 1 − s
    cand = f64(trace.cand)
    r = s * (1.0 - cand * cand) * p["W_h"].diagonal()
    u_diag = cell.kind.gate.recurrent_diagonal(p)  # diag(U_s), u_s, or None (constgate)
    if u_diag is not None:
        r = r + (cand - h_prev) * s * (1.0 - s) * u_diag
    return GateFactors(d=d, r=r, readout=None, trace=trace)


def gate_factors(cell, params, x, backend="numpy", conventions="lwsim"):
    """d, r (and the LSTM read-out e) of §2.3 from the cell's trace and Jacobian diagonal.

    conventions: "lwsim" (exact diagonal), "author" (see the module docstring, docs/fidelity.md) or
    a :class:`lwsim.conventions.Conventions` (fields r_diagonal, gru_gamma0).
    """
    need_gated(cell, "Γ")
    conv = as_conventions(conventions)
    weight_diagonals = conv.r_diagonal == "weight_diagonals"
    if weight_diagonals or cell.kind.family == "lstm":      # the LSTM's r is not diag J − d
        trace = cell.forward(params, x, backend=backend)
        d = f64(trace.leak)
        if weight_diagonals:
            fac = _author_factors(cell, params, x, trace, d)
        else:
            r, e = _lstm_factors(cell, params, x, trace)
            fac = GateFactors(d=d, r=r, readout=e, trace=trace)
    else:
        trace, diag = cell.forward_and_jacobian_diagonal(params, x, backend=backend)   # one forward pass
        d = f64(trace.leak)
        fac = GateFactors(d=d, r=f64(diag) - d, readout=None, trace=trace)
    if conv.gru_gamma0 == "three_terms" and cell.kind.family == "gru":    # the author's 3-term Γ⁰ reads r_t
        _need_cho(cell)
        fac.reset = f64(trace.gates["r"])
    return fac


def _check_factors(d, r, readout, order):
    d = f64(d)
    if d.ndim != 3:
        raise ValueError(f"d must have shape (T, B, H), got {d.shape}")
    if not np.all(np.isfinite(d)) or np.any(d <= 0):
        raise ValueError("d (the leak) must be finite and > 0 (a saturated gate gives d = 0; "
                         "constgate with s = 1 is the plain rnn, which has no Γ)")
    if order == 1:
        if r is None:
            raise ValueError("r is required for order=1")
        r = f64(r)
        if r.shape != d.shape:
            raise ValueError(f"r must have the shape of d {d.shape}, got {r.shape}")
        if not np.all(np.isfinite(r)):
            raise ValueError("r contains NaN or Inf")
    else:
        r = np.zeros_like(d)
    if readout is not None:
        readout = f64(readout)
        if readout.shape != d.shape:
            raise ValueError(f"readout must have the shape of d {d.shape}, got {readout.shape}")
    return d, r, readout


def prefix_sums(d, r=None):
    """P (T+1, B, H) with P_t = Σ_{j≤t} log d_j and Q_t = Σ_{j≤t} r_j/d_j (P_0 = Q_0 = 0).

    See docs/diagnostics.md §2.3.
    """
    d = f64(d)
    P = np.zeros((d.shape[0] + 1,) + d.shape[1:])
    np.cumsum(np.log(d), axis=0, out=P[1:])
    Q = np.zeros_like(P)
    if r is not None:
        np.cumsum(f64(r) / d, axis=0, out=Q[1:])
    return P, Q


def window_tables(d, r=None, reset=None):
    """Prefix tables for :func:`window_gamma`: (P, Q) of :func:`prefix_sums`, plus the log-prefix
    sums of the GRU reset gate ρ and of d·ρ when ``reset`` is given (the author's Γ⁰).

    See docs/diagnostics.md §2.3.
    """
    P, Q = prefix_sums(d, r)
    if reset is None:
        return P, Q, None
    rho = f64(reset)
    if rho.shape != np.shape(d) or not np.all(np.isfinite(rho)) or np.any(rho <= 0):
        raise ValueError(f"reset must be finite, > 0 and of shape {d.shape}")
    Pr, Pdr = np.zeros_like(P), np.zeros_like(P)
    np.cumsum(np.log(rho), axis=0, out=Pr[1:])
    np.cumsum(np.log(f64(d) * rho), axis=0, out=Pdr[1:])
    return P, Q, (Pr, Pdr)


def window_gamma(tables, ell, t0, order):
    """(Γ⁰, Γ) for the windows j = t−ℓ+1 … t ending at t = t0 … T (t0 ≥ ℓ), each (T−t0+1, B, H):
    Γ⁰ = Π d (+ Π ρ + Π dρ with the reset tables), Γ = Γ⁰ + Π d · Σ r/d (order 1) or Γ⁰.

    See docs/diagnostics.md §2.3.
    """
    P, Q, extra = tables
    T = P.shape[0] - 1
    a, b = t0 - ell, T + 1 - ell
    lead = np.exp(P[t0:] - P[a:b])
    g0 = lead if extra is None else lead + np.exp(extra[0][t0:] - extra[0][a:b]) + np.exp(extra[1][t0:] - extra[1][a:b])
    if order == 0:
        return g0, g0
    return g0, g0 + lead * (Q[t0:] - Q[a:b])


def gamma(d, r=None, lags=1, *, order=1, readout=None, engine="numba", reset=None):
    """Γ (order 1) or Γ⁰ (order 0) for every t and lag: (n_lags, T, B, H) float64.

    d, r, readout: (T, B, H) (see :class:`GateFactors`); entry [i, t − 1] is Γ_{t, lags[i]};
    invalid pairs (t − ℓ < 1) are NaN. ``engine`` "numba" (fused kernel) or "numpy" (prefix sums).
    reset: the GRU reset gate for the author's Γ⁰ = Π d + Π ρ + Π dρ (conventions="author",
    docs/fidelity.md); computed with the NumPy prefix sums whatever the engine.
    """
    order = check_order(order)
    engine = check_engine(engine)
    d, r, readout = _check_factors(d, r, readout, order)
    T, B, H = d.shape
    lags = check_lags(lags, T)
    out = np.full((lags.size, T, B, H), np.nan)
    if reset is not None:
        tabs = window_tables(d, r if order == 1 else None, reset)
        for i, ell in enumerate(lags):
            g = window_gamma(tabs, ell, ell + 1, order)[1]
            out[i, ell:] = g if readout is None else g * readout[ell:]
        return out
    if engine == "numba":
        from . import _kernels
        e = np.ones((B, T, H)) if readout is None else btH(readout)
        _kernels.gamma_table(btH(d), btH(r / d), e, lags, order, out)
        return out
    P, Q = prefix_sums(d, r)
    for i, ell in enumerate(lags):
        g = np.exp(P[ell + 1:] - P[1:T + 1 - ell])           # t = ℓ+1 … T: P_t − P_{t−ℓ}
        if order == 1:
            g = g * (1.0 + Q[ell + 1:] - Q[1:T + 1 - ell])
        if readout is not None:
            g = g * readout[ell:]
        out[i, ell:] = g
    return out


def transport_factors(cell, params, x, lags, *, order=1, backend="numpy", engine="numba",
                      conventions="lwsim"):
    """Γ / Γ⁰ of a cell on a batch: (n_lags, T, B, H) (see :func:`gamma`). Memory n_lags·T·B·H;
    for envelopes over many sequences use :func:`lwsim.diagnostics.envelope` (streams).
    conventions: "lwsim" | "author" (docs/fidelity.md)."""
    fac = gate_factors(cell, params, x, backend, conventions)
    return gamma(fac.d, fac.r, lags, order=order, readout=fac.readout, engine=engine, reset=fac.reset)
