"""Effective learning rates μ = Λ Γ and the envelope f(ℓ) (docs/diagnostics.md §2.5).

    μ^{(q)}_{b,t,ℓ} = Λ^{(q)}_ℓ(b, t−ℓ) Γ^{(q)}_{b,t,ℓ}
    f(ℓ)       = ⟨Σ_q |μ^{(q)}_{t,ℓ}|⟩                      over valid (b, t), t − ℓ ≥ 1
    f_exact(ℓ) = ⟨Σ_q |Λ^{(q)} [M_{t,t−ℓ}]_qq|⟩            (exact transports, :func:`exact_envelope`)
    f_gates(ℓ) = η ⟨Σ_q |Γ^{0,(q)}_{t,ℓ}|⟩,   R(ℓ) = f(ℓ) / f_gates(ℓ)
    m_q(ℓ)     = ⟨|μ^{(q)}_{t,ℓ}|⟩                          (per neuron, for the time scales §2.6)

plus the per-lag mean and spread (standard deviation) of Λ over the valid (b, k = t−ℓ, q) and
the Spearman correlation between the per-neuron rate Λ^{(q)} and the time scale τ_q.
Λ is the Rayleigh-quotient form (``form="rayleigh"``, lag-dependent through the source state
h_{k−1}) or the row mean (``form="rowmean"``), see :mod:`.rates`. For the LSTM, Γ and Γ⁰ carry the
read-out e_t (§2.3), so f_gates does too.

Sequences are processed in chunks of ``chunk`` (memory O(chunk·T·H); default None: sized from
T·H, ``_util.check_chunk``); the accumulation over
(b, t, ℓ, q) runs in a numba kernel (``engine="numba"``) or in NumPy with the log-space prefix
sums (``engine="numpy"``), O(B·T·L·H) either way.

``conventions="author"`` (docs/fidelity.md; NumPy engine) reproduces the author's envelope: for
ConstGate/SharedGate/DiagGate the windows ending at t = ℓ … T (the first starts at h₀, source
k = t − ℓ ≥ 0; the GRU/LSTM script keeps lwsim's t = ℓ+1 … T), Λ of source k at h_k
(:func:`.rates.source_rates`), Γ, Γ⁰ from the author's factors (:func:`.gamma.gate_factors`),
and f, f_gates averaged over the neurons instead of summed (f_author = f/H on equal windows);
it also returns ``log_mass`` = mean over sequences b of log(⟨|μ|⟩_{t,q}(b) + 1e−30), the
quantity the author's runner fits the decay laws to.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..conventions import as_conventions, check_conventions
from .gamma import _check_factors, gate_factors, prefix_sums, window_gamma, window_tables
from .rates import base_rate, recurrent_rates, source_rates
from ._util import (batch_slices, btH, check_chunk, check_engine, check_lags, check_order,
                    check_progress, need_gated, progress_iter)


@dataclass
class Envelope:
    """Result of :func:`envelope`. Arrays per lag (n_lags,) unless noted.

    See docs/diagnostics.md §2.5.
    """
    lags: np.ndarray
    f: np.ndarray              # ⟨Σ_q |μ|⟩
    f_gates: np.ndarray        # η ⟨Σ_q |Γ⁰|⟩
    ratio: np.ndarray          # R = f / f_gates
    m: np.ndarray              # (n_lags, H) ⟨|μ_q|⟩
    count: np.ndarray          # valid (b, t) pairs per lag
    lam_mean: np.ndarray       # mean of Λ over valid (b, k, q)
    lam_std: np.ndarray        # its standard deviation (spread)
    lam_neuron: np.ndarray     # (H,) Λ^{(q)} averaged over all (b, k)
    eta: float
    order: int
    form: str
    conventions: str = "lwsim"        # Conventions.name: "lwsim", "author" or "custom(…)"
    log_mass: np.ndarray | None = None   # envelope_sources "source_state" only: ⟨log mass per sequence⟩

    def to_dict(self):
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items()}


@dataclass
class ExactEnvelope:
    """Result of :func:`exact_envelope`: f_exact, per-neuron m_exact and the off-diagonal energy.

    See docs/diagnostics.md §2.5.
    """
    lags: np.ndarray
    f: np.ndarray              # ⟨Σ_q |Λ_q [M]_qq|⟩
    m: np.ndarray              # (n_lags, H)
    count: np.ndarray
    offdiag: np.ndarray        # ⟨‖M − diag M‖_F / ‖M‖_F⟩
    form: str

    def to_dict(self):
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items()}


def accumulate_numpy(d, r, readout, lam, lags, order, acc_mu, acc_g0, cnt):
    """NumPy engine (same contract as ``_kernels.envelope_accumulate`` but on (T, B, H) arrays):
    Γ_{t,ℓ} = exp(P_t − P_{t−ℓ})(1 + Q_t − Q_{t−ℓ}) for t = ℓ+1 … T, one vectorised pass per lag.

    See docs/diagnostics.md §2.5.
    """
    T, B, H = d.shape
    P, Q = prefix_sums(d, r if order == 1 else None)
    for i, ell in enumerate(lags):
        g0 = np.exp(P[ell + 1:] - P[1:T + 1 - ell])
        if readout is not None:
            g0 = g0 * readout[ell:]
        g = g0 * (1.0 + Q[ell + 1:] - Q[1:T + 1 - ell]) if order == 1 else g0
        acc_mu[i] += np.abs(lam[:T - ell] * g).sum(axis=(0, 1))
        acc_g0[i] += np.abs(g0).sum(axis=(0, 1))
        cnt[i] += (T - ell) * B


def accumulate(d, r, readout, lam, lags, order, engine, acc_mu, acc_g0, cnt):
    """Add one chunk's Σ|μ|, Σ|Γ⁰| and counts; d, r, readout, lam (T, B, H).

    See docs/diagnostics.md §2.5.
    """
    if engine == "numpy":
        return accumulate_numpy(d, r, readout, lam, lags, order, acc_mu, acc_g0, cnt)
    from . import _kernels
    T, B, H = d.shape
    e = np.ones((B, T, H)) if readout is None else btH(readout)
    _kernels.envelope_accumulate(btH(d), btH(r / d), e, btH(lam), lags, order, acc_mu, acc_g0, cnt)


def accumulate_author(fac, lam_src, lags, order, acc_mu, acc_g0, cnt, acc_log, h0=True, neurons="mean"):
    """The author's windows t = ℓ … T (``h0``; else t = ℓ+1 … T), source k = t − ℓ with Λ row
    k = Λ at h_k, adding also Σ_b log(mass_b + 1e−30) per lag to ``acc_log``, the per-sequence mass
    mean_{t,q} |μ| (``neurons="mean"``, the earlier code) or Σ_q mean_t |μ| ("sum", the final launcher).

    See docs/diagnostics.md §2.5; docs/fidelity.md.
    """
    d, r, e = _check_factors(fac.d, fac.r, fac.readout, 1)
    T = d.shape[0]
    tabs = window_tables(d, r if order == 1 else None, fac.reset)
    for i, ell in enumerate(lags):
        t0 = ell if h0 else ell + 1
        g0, g = window_gamma(tabs, ell, t0, order)
        if e is not None:
            g0, g = g0 * e[t0 - 1:], g * e[t0 - 1:]
        mu = np.abs(lam_src[t0 - ell:T - ell + 1] * g)
        acc_mu[i] += mu.sum(axis=(0, 1))
        acc_g0[i] += np.abs(g0).sum(axis=(0, 1))
        cnt[i] += (T - t0 + 1) * d.shape[1]
        mass = mu.mean(axis=0).sum(axis=1) if neurons == "sum" else mu.mean(axis=(0, 2))
        acc_log[i] += np.log(mass + 1e-30).sum()


def _lambda_stats(s1, s2, n_k, lags, T):
    """Per-lag mean/std of Λ over k = 1 … T − ℓ from per-source sums s1, s2 (T,) and counts n_k."""
    c1, c2, cn = np.cumsum(s1), np.cumsum(s2), np.cumsum(n_k)
    idx = T - lags - 1
    mean = c1[idx] / cn[idx]
    var = np.maximum(c2[idx] / cn[idx] - mean ** 2, 0.0)
    return mean, np.sqrt(var)


def envelope(cell, params, x, rates, lags, *, order=1, form="rayleigh", eta=None, chunk=None,
             backend="numpy", engine="numba", progress=True, conventions="lwsim", neurons=None):
    """Envelope f(ℓ), f_gates(ℓ), R(ℓ), m_q(ℓ) and Λ statistics (§2.5) over the batch x (T, B, D).

    rates: η (SGD), ``opt.rates()`` dict or the optimizer; eta: the η of f_gates (default: the SGD
    number or the optimizer's lr; required with a bare dict). lags: int L or increasing lags.
    conventions: "lwsim" | "author" (module docstring, docs/fidelity.md) or a
    :class:`lwsim.conventions.Conventions` (fields r_diagonal, gru_gamma0, envelope_sources,
    envelope_neurons).
    neurons: how f reduces over the neurons, "sum" (f = ⟨Σ_q |μ_q|⟩) or "mean"; None: the
    conventions' own (envelope_neurons) — "sum" for lwsim, "mean" for the author's earlier code
    ("author" with neurons="sum" is the author's final launcher, docs/fidelity.md).
    """
    acc = EnvelopeAccumulator(cell, params, x, rates, lags, order=order, form=form, eta=eta, chunk=chunk,
                              backend=backend, engine=engine, progress=progress, conventions=conventions,
                              neurons=neurons)
    for s in progress_iter(acc.slices, len(acc.slices), f"envelope ({cell.name})", acc.progress):
        acc.add(gate_factors(cell, params, acc.x[:, s], backend, acc.conventions))
    return acc.result()


class EnvelopeAccumulator:
    """The envelope's sums over chunks of sequences: ``add`` one chunk's gate factors (in the order
    of ``slices``), then ``result()`` → :class:`Envelope`. :func:`envelope` is this loop; a caller
    that also needs the matched statistic on the same sequences shares the gate factors
    (:func:`lwsim.diagnostics.matched.envelope_and_matched`).

    See docs/diagnostics.md §2.5.
    """

    def __init__(self, cell, params, x, rates, lags, *, order=1, form="rayleigh", eta=None, chunk=None,
                 backend="numpy", engine="numba", progress=True, conventions="lwsim", neurons=None):
        need_gated(cell, "the envelope")
        self.conventions = check_conventions(conventions)     # as given, for the gate factors
        self.conv = conv = as_conventions(conventions)
        if neurons not in (None, "sum", "mean"):
            raise ValueError(f"neurons must be None, 'sum' or 'mean', got {neurons!r}")
        self.neurons = neurons or conv.envelope_neurons
        self.x = x = cell.check_x(x)
        self.order, self.engine = check_order(order), check_engine(engine)
        T, B, _ = x.shape
        H = cell.n_hidden
        chunk, self.progress = check_chunk(chunk, T, cell.state_size), check_progress(progress)
        self.lags = lags = check_lags(lags, T)
        self.lam = recurrent_rates(cell, rates)
        self.eta = base_rate(rates, eta)
        self.cell, self.form, self.T, self.B, self.H = cell, form, T, B, H
        n = lags.size
        self.acc_mu, self.acc_g0, self.cnt = np.zeros((n, H)), np.zeros((n, H)), np.zeros(n, dtype=np.int64)
        # the author's sources (Conventions.envelope_sources): k = t − ℓ ≥ 0 with Λ at h_k
        self.author = author = conv.envelope_sources == "source_state"
        if not author and conv.gru_gamma0 == "three_terms" and cell.kind.family == "gru":
            raise ValueError("Conventions.gru_gamma0 'three_terms' needs envelope_sources 'source_state' in the "
                             "envelope (only the author's accumulation has the three-term Γ⁰)")
        # the baselines' script (the leaky cells') counts the h₀ window; the GRU/LSTM script does not
        self.h0 = author and cell.kind.family == "leaky"
        self.n_src = n_src = T + 1 if author else T             # author: sources k = 0 … T (row k: h_k)
        self.s1, self.s2, self.n_k = np.zeros(n_src), np.zeros(n_src), np.zeros(n_src)
        self.lam_neuron = np.zeros(H)
        self.acc_log = np.zeros(n)
        self.slices = batch_slices(B, chunk)

    def add(self, fac):
        """Add one chunk's gate factors (:func:`.gamma.gate_factors` of its sequences)."""
        lam_src = source_rates(self.lam, fac.trace.h, self.form, self.conventions)
        if self.author:
            accumulate_author(fac, lam_src, self.lags, self.order, self.acc_mu, self.acc_g0, self.cnt,
                              self.acc_log, self.h0, self.neurons)
        else:
            d, r, e = _check_factors(fac.d, fac.r, fac.readout, 1)
            accumulate(d, r, e, lam_src, self.lags, self.order, self.engine, self.acc_mu, self.acc_g0, self.cnt)
        self.s1 += lam_src.sum(axis=(1, 2))
        self.s2 += (lam_src * lam_src).sum(axis=(1, 2))
        self.n_k += lam_src.shape[1] * self.H
        self.lam_neuron += lam_src.sum(axis=(0, 1))

    def result(self):
        """The :class:`Envelope` of every chunk added."""
        lags, T, H, author = self.lags, self.T, self.H, self.author
        with np.errstate(invalid="ignore", divide="ignore"):
            m = self.acc_mu / self.cnt[:, None]
            f = m.sum(axis=1)
            f_gates = self.eta * (self.acc_g0 / self.cnt[:, None]).sum(axis=1)
            if self.neurons == "mean":                   # the author's earlier code averages over the neurons
                f, f_gates = f / H, f_gates / H
            ratio = f / f_gates
        # author: rows k = 0 … T − ℓ of the (T+1)-row table (with the h₀ window) or k = 1 … T − ℓ
        s1, s2, n_k = self.s1, self.s2, self.n_k
        if self.h0:
            lam_mean, lam_std = _lambda_stats(s1, s2, n_k, lags - 1, T)
        else:
            sl_ = slice(1, None) if author else slice(None)
            lam_mean, lam_std = _lambda_stats(s1[sl_], s2[sl_], n_k[sl_], lags, T)
        return Envelope(lags=lags, f=f, f_gates=f_gates, ratio=ratio, m=m, count=self.cnt,
                        lam_mean=lam_mean, lam_std=lam_std, lam_neuron=self.lam_neuron / (self.n_src * self.B),
                        eta=float(self.eta), order=self.order, form=self.form, conventions=self.conv.name,
                        log_mass=self.acc_log / self.B if author else None)


def exact_envelope(cell, params, x, rates, lags, *, form="rayleigh", chunk=4, backend="numpy",
                   progress=True):
    """f_exact(ℓ) = ⟨Σ_q |Λ_q [M_{t,t−ℓ}]_qq|⟩ from exact transports (LSTM: the cell-path diagonal
    of :func:`lwsim.diagnostics.transport.neuron_transport_diagonals`), with the same Λ form as
    :func:`envelope`, and the mean off-diagonal energy fraction. Cost O(B·T·L·S³): small cases;
    see :func:`lwsim.diagnostics.envelope_fidelity` for the sampled version.

    See docs/diagnostics.md §2.5.
    """
    from .transport import neuron_transport_diagonals
    x = cell.check_x(x)
    chunk, progress = check_chunk(chunk), check_progress(progress)
    T, B, _ = x.shape
    H = cell.n_hidden
    lags = check_lags(lags, T)
    lam = recurrent_rates(cell, rates)
    n = lags.size
    acc, off, cnt = np.zeros((n, H)), np.zeros(n), np.zeros(n, dtype=np.int64)
    sl = batch_slices(B, chunk)
    for s in progress_iter(sl, len(sl), f"exact envelope ({cell.name})", progress):
        xs = x[:, s]
        D, fr = neuron_transport_diagonals(cell, params, xs, lags, backend=backend, chunk=xs.shape[1],
                                           progress=False, with_offdiag=True)
        lam_src = source_rates(lam, cell.forward(params, xs, backend=backend).h, form)
        for i, ell in enumerate(lags):
            acc[i] += np.abs(lam_src[:T - ell] * D[i, ell:]).sum(axis=(0, 1))
            off[i] += fr[i, ell:].sum()
            cnt[i] += (T - ell) * xs.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        m = acc / cnt[:, None]
        return ExactEnvelope(lags=lags, f=m.sum(axis=1), m=m, count=cnt, offdiag=off / cnt, form=form)


def rate_timescale_spearman(lam_neuron, tau):
    """Spearman ρ (and p-value) between Λ^{(q)} and τ_q over neurons with a defined τ (NaN dropped;
    τ = ∞ ranks last). Fewer than 3 usable neurons → (nan, nan).

    See docs/diagnostics.md §2.5.
    """
    from scipy.stats import spearmanr
    lam_neuron = np.asarray(lam_neuron, dtype=np.float64)
    tau = np.asarray(tau, dtype=np.float64)
    if lam_neuron.shape != tau.shape or lam_neuron.ndim != 1:
        raise ValueError(f"lam_neuron and tau must be 1-D of equal length, got {lam_neuron.shape} and {tau.shape}")
    ok = ~np.isnan(tau) & np.isfinite(lam_neuron)
    if ok.sum() < 3 or np.ptp(lam_neuron[ok]) == 0 or np.ptp(np.nan_to_num(tau[ok], posinf=1e300)) == 0:
        return np.nan, np.nan
    res = spearmanr(lam_neuron[ok], np.nan_to_num(tau[ok], posinf=np.finfo(float).max))
    return float(res.statistic), float(res.pvalue)
