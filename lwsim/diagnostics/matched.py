"""Matched statistic ψ: evidence for a dependency at lag ℓ (docs/diagnostics.md §2.7).

    δ_t = (ŷ_t − y_t) W_out                     ∈ R^H   (direct error, readout W_out: conventions)
    v_t = (∂h_t/∂θ)[w]                           forward-mode tangent (``cell.tangents``) along a
                                                 unit direction w, ‖w‖₂ = 1 over all trained params;
                                                 the K directions go through the tangent pass in
                                                 groups (one pass per group, numba backend)
    ψ_{b,t}(ℓ) = Σ_q μ^{(q)}_{b,t,ℓ} δ^{(q)}_{b,t} v^{(q)}_{b,t−ℓ},    μ = Λ Γ (or Λ Γ⁰, ``order=0``)
    ψ̄_b(ℓ) = mean over the counted valid t (t − ℓ ≥ 1) of ψ_{b,t}(ℓ), then the mean over K
    directions w_1 … w_K (drawn from ``seed``).

Counted steps: every step for readout "every" (or the ``mask``), only t = T for readout "last"
(δ_t is the error injected by the loss). LSTM: μ is the cell-path factor (it already reads the
cell out into h_t through e_t), so the source tangent is the cell-state part v^c_{t−ℓ}.
Option ``orient``: per direction and lag, ψ̄ ← sgn(mean_b ψ̄_b(ℓ)) ψ̄ before averaging over the
directions (a random direction and its negative are equally likely, so signs are arbitrary).
``conventions="author"`` (docs/fidelity.md): the author's Γ factors (:func:`.gamma.gate_factors`),
the LSTM source tangent v^h instead of v^c, and ``orient`` by the sign of each batch of
AUTHOR_BATCH = 128 sequences (ψ̄ ← sgn(Σ_batch ψ / Σ_batch count) ψ̄, sign +1 for a zero or
non-finite mean) instead of one sign per direction and lag; ``signs`` is then (K, n_lags, B).
Output: ``samples`` (n_lags, B), one sample per sequence and lag, for ``lwsim.stats``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._conventions import check_conventions
from .._validate import check_int
from .gamma import _check_factors, gate_factors, prefix_sums, window_gamma, window_tables
from .rates import recurrent_rates, source_rates
from ._util import (batch_slices, btH, check_chunk, check_engine, check_lags, check_order,
                    check_progress, check_seed, f64, need_gated, progress_iter, to_numpy)


@dataclass
class MatchedStatistic:
    """Result of :func:`matched_statistic`: samples ψ̄_b(ℓ) per lag and sequence.

    See docs/diagnostics.md §2.7.
    """
    lags: np.ndarray
    samples: np.ndarray          # (n_lags, B) ψ̄_b(ℓ) averaged over directions (oriented if asked);
                                 # statistic "instantaneous": a list of n_lags 1-D arrays ψ_{b,t}(ℓ)
    per_direction: np.ndarray    # (K, n_lags, B) ψ̄ per direction (oriented if asked); None if instantaneous
    signs: np.ndarray | None     # (K, n_lags) orientation signs, None without orient
    count: np.ndarray            # (n_lags, B) counted valid steps
    order: int
    form: str


def random_direction(params, seed=0, keys=None):
    """Unit direction w (‖w‖₂ = 1 over ``keys``, default every trained parameter), N(0, 1) entries
    from ``seed``, zeros elsewhere. Keys are drawn in sorted order (dict order does not matter).

    See docs/diagnostics.md §2.7.
    """
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays, got {type(params).__name__}")
    seed = check_seed(seed)
    keys = sorted(params) if keys is None else sorted(keys)
    missing = [k for k in keys if k not in params]
    if missing or not keys:
        raise ValueError(f"keys must be a non-empty subset of the parameter names, unknown: {missing}")
    rng = np.random.default_rng(seed)
    w = {k: np.zeros(np.shape(params[k])) for k in params}
    for k in keys:
        w[k] = rng.standard_normal(np.shape(params[k]))
    norm = np.sqrt(sum(float((w[k] ** 2).sum()) for k in keys))
    return {k: v / norm for k, v in w.items()}


def _directions(params, n_directions, seed, keys):
    return [random_direction(params, int(np.random.SeedSequence([seed, i]).generate_state(1)[0]), keys)
            for i in range(n_directions)]


AUTHOR_BATCH = 128   # the author's diagnostic batch: one orientation sign per batch
TANGENT_GROUP_ELEMENTS = 2 ** 24   # bound on the tangents of one group of directions (128 MB float64)


def _accumulate_numpy(d, r, e, lam, delta, v, weight, lags, order, psi, cnt, reset=None, out_t=None):
    T = d.shape[0]
    P, Q = prefix_sums(d, r if order == 1 else None)
    tabs = None if reset is None else window_tables(d, r if order == 1 else None, reset)
    for i, ell in enumerate(lags):
        g = np.exp(P[ell + 1:] - P[1:T + 1 - ell])
        if order == 1:
            g = g * (1.0 + Q[ell + 1:] - Q[1:T + 1 - ell])
        if tabs is not None:                       # the author's GRU Γ⁰ (3 products)
            g = window_gamma(tabs, ell, ell + 1, order)[1]
        if e is not None:
            g = g * e[ell:]
        w = weight[ell:]
        per_t = (lam[:T - ell] * g * delta[ell:] * v[1:T - ell + 1]).sum(axis=2)    # (T−ℓ, B)
        psi[i] += (w[:, None] * per_t).sum(axis=0)
        cnt[i] += w.sum()
        if out_t is not None:  # instantaneous statistic: ψ_{b,t}(ℓ) at the counted steps, b-major
            out_t[i].append(per_t[w > 0].T.ravel())


def _author_signs(psi, cnt):
    """sgn of each AUTHOR_BATCH-sequence batch mean Σψ/Σcount per direction and lag (+1 if 0 or
    not finite), broadcast to the batch's sequences: (K, n_lags, B)."""
    signs = np.ones(psi.shape)
    for lo in range(0, psi.shape[2], AUTHOR_BATCH):
        sl = slice(lo, lo + AUTHOR_BATCH)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = psi[:, :, sl].sum(axis=2) / cnt[None, :, sl].sum(axis=2)
        signs[:, :, sl] = np.where(np.isfinite(m) & (m < 0), -1.0, 1.0)[:, :, None]
    return signs


def _weights(cell, T, mask):
    if cell.readout == "last":
        w = np.zeros(T)
        w[-1] = 1.0
        return w
    if mask is not None:
        return np.asarray(mask, dtype=np.float64)
    return np.ones(T)


def matched_statistic(cell, params, x, y, rates, lags, *, n_directions=1, seed=0, order=1,
                      form="rayleigh", orient=False, mask=None, keys=None, chunk=None,
                      backend="numpy", engine="numba", progress=True, conventions="lwsim",
                      statistic="sequence"):
    """ψ̄_b(ℓ) for every sequence b and lag (§2.7) → :class:`MatchedStatistic`.

    rates: η, ``opt.rates()`` dict or the optimizer (only Λ is used, no η needed);
    n_directions K, seed: the unit directions; keys: parameters spanned by w (default all).
    conventions: "lwsim" | "author" (module docstring, docs/fidelity.md).
    statistic: "sequence" (the samples are the per-sequence means ψ̄_b(ℓ); a budget N counts
      sequences) or "instantaneous" (the earlier code generation of [A]: the samples are the
      ψ_{b,t}(ℓ) themselves at every counted step, B(T − ℓ) at lag ℓ for readout "every", returned
      as a list of n_lags 1-D arrays (b-major), so that N counts time points; directions are
      averaged per (b, t); ``orient`` takes the sign of the mean over all samples; NumPy engine;
      docs/diagnostics.md §2.7, docs/fidelity.md).
    """
    acc = MatchedAccumulator(cell, params, x, y, rates, lags, n_directions=n_directions, seed=seed,
                             order=order, form=form, orient=orient, mask=mask, keys=keys, chunk=chunk,
                             backend=backend, engine=engine, progress=progress, conventions=conventions,
                             statistic=statistic)
    for s in progress_iter(acc.slices, len(acc.slices), f"matched statistic ({cell.name})", acc.progress):
        acc.add(s, gate_factors(cell, params, acc.x[:, s], backend, acc.conventions))
    return acc.result()


class MatchedAccumulator:
    """The matched statistic chunk by chunk: ``add(s, fac)`` with the gate factors of the
    sequences ``s`` (one of ``slices``, in order), then ``result()`` → :class:`MatchedStatistic`.
    :func:`matched_statistic` is this loop; :func:`envelope_and_matched` shares each chunk's gate
    factors with the envelope.

    See docs/diagnostics.md §2.7.
    """

    def __init__(self, cell, params, x, y, rates, lags, *, n_directions=1, seed=0, order=1,
                 form="rayleigh", orient=False, mask=None, keys=None, chunk=None,
                 backend="numpy", engine="numba", progress=True, conventions="lwsim",
                 statistic="sequence"):
        self.conventions = conventions = check_conventions(conventions)
        if statistic not in ("sequence", "instantaneous"):
            raise ValueError(f"statistic must be 'sequence' or 'instantaneous', got {statistic!r}")
        self.inst = inst = statistic == "instantaneous"
        if inst and orient and conventions == "author":
            raise ValueError("orient with conventions='author' (per-batch signs) needs statistic='sequence'")
        need_gated(cell, "the matched statistic")
        self.x = x = cell.check_x(x)
        self.y = cell.check_y(y, x)
        T, B, _ = x.shape
        mask = cell.check_mask(mask, T)
        self.order, self.engine = check_order(order), check_engine(engine)
        chunk, self.progress = check_chunk(chunk, T, cell.state_size), check_progress(progress)
        K = check_int("n_directions", n_directions, 1)
        seed = check_seed(seed)
        if not isinstance(orient, bool):
            raise TypeError(f"orient must be a bool, got {type(orient).__name__}")
        self.lags = lags = check_lags(lags, T)
        self.lam = recurrent_rates(cell, rates)
        self.dirs = _directions(cell.check_params(params), K, seed, keys)
        self.cell, self.params, self.backend, self.form, self.orient = cell, params, backend, form, orient
        self.T, self.H = T, cell.n_hidden
        self.W_out = np.asarray(to_numpy(params["W_out"]), dtype=np.float64)
        self.weight = _weights(cell, T, mask)
        n = lags.size
        self.psi = np.zeros((K, n, B))
        self.cnt = np.zeros((n, B))
        self.per_t = [[[] for _ in range(n)] for _ in range(K)] if inst else None
        self.slices = batch_slices(B, chunk)
        # directions per tangent pass: as many as keep the (K, T+1, chunk, S) tangents ≤ 2^24 floats
        self.kb = max(1, min(K, TANGENT_GROUP_ELEMENTS // ((T + 1) * min(chunk, B) * cell.state_size)))

    def add(self, s, fac):
        """Add the sequences ``s`` (a slice of the batch) with their gate factors ``fac``."""
        cell, params, T, H, lags, kb = self.cell, self.params, self.T, self.H, self.lags, self.kb
        n = lags.size
        xs = self.x[:, s]
        d, r, e = _check_factors(fac.d, fac.r, fac.readout, 1)
        lam_src = source_rates(self.lam, fac.trace.h, self.form)
        delta = (f64(fac.trace.y) - np.asarray(to_numpy(self.y[:, s]), dtype=np.float64)) @ self.W_out
        for kd, w in enumerate(self.dirs):
            if kd % kb == 0:                       # the next group of directions in one tangent pass
                group = f64(cell.tangents(params, xs, self.dirs[kd:kd + kb], backend=self.backend))
            v = group[kd % kb]
            if cell.name == "lstm":
                v = np.ascontiguousarray(v[..., :H] if self.conventions == "author" else v[..., H:])
            c = np.zeros((n, xs.shape[1]))
            p = np.zeros((n, xs.shape[1]))
            if self.engine == "numpy" or fac.reset is not None or self.inst:
                _accumulate_numpy(d, r, e, lam_src, delta, v, self.weight, lags, self.order, p, c, fac.reset,
                                  self.per_t[kd] if self.inst else None)
            else:
                from . import _kernels
                Bc = xs.shape[1]
                ee = np.ones((Bc, T, H)) if e is None else btH(e)
                _kernels.matched_accumulate(btH(d), btH(r / d), ee, btH(lam_src), btH(delta), btH(v),
                                            self.weight, lags, self.order, p, c)
            self.psi[kd][:, s] = p
            self.cnt[:, s] = c

    def result(self):
        """The :class:`MatchedStatistic` of every chunk added."""
        lags, psi, cnt, order, form, orient = self.lags, self.psi, self.cnt, self.order, self.form, self.orient
        if self.inst:
            return _instantaneous(lags, self.per_t, orient, cnt, order, form)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_dir = psi / cnt[None]
        signs = None
        if orient and self.conventions == "author":
            signs = _author_signs(psi, cnt)                                     # (K, n_lags, B)
            per_dir = per_dir * signs
        elif orient:
            signs = np.where(np.nanmean(per_dir, axis=2) < 0, -1.0, 1.0)        # (K, n_lags)
            per_dir = per_dir * signs[:, :, None]
        return MatchedStatistic(lags=lags, samples=per_dir.mean(axis=0), per_direction=per_dir,
                                signs=signs, count=cnt, order=order, form=form)


def envelope_and_matched(cell, params, x, y, rates, lags, *, envelope_kwargs=None, chunk=None,
                         backend="numpy", progress=True, conventions="lwsim", timer=None, **matched_kwargs):
    """(:class:`.envelope.Envelope`, :class:`MatchedStatistic`) on the same sequences in one pass:
    each chunk's gate factors (the forward pass and the Jacobian diagonal) computed once and used by
    both. Equal to ``envelope(cell, params, x, rates, lags, **envelope_kwargs)`` and
    ``matched_statistic(cell, params, x, y, rates, lags, **matched_kwargs)`` with the same
    ``chunk``, ``backend``, ``conventions`` (``envelope_kwargs``: order, form, eta, engine; e.g.
    eta=1.0 with rates 1.0 for Λ ≡ 1). ``timer``: optional ``timer(name)`` → context manager,
    entered as "envelope" around the shared gate factors and the envelope's sums and as "matched"
    around the rest (lwsim.figures' run profile).

    See docs/diagnostics.md §2.5, §2.7.
    """
    import contextlib

    from .envelope import EnvelopeAccumulator
    timer = timer or (lambda name: contextlib.nullcontext())
    common = dict(chunk=chunk, backend=backend, progress=progress, conventions=conventions)
    env = EnvelopeAccumulator(cell, params, x, rates, lags, **(envelope_kwargs or {}), **common)
    ms = MatchedAccumulator(cell, params, x, y, rates, lags, **matched_kwargs, **common)
    if env.slices != ms.slices:                  # the same chunking for both, by construction
        raise AssertionError("envelope and matched statistic chunk differently")
    for s in progress_iter(ms.slices, len(ms.slices), f"envelope + matched statistic ({cell.name})",
                           ms.progress):
        with timer("envelope"):
            fac = gate_factors(cell, params, ms.x[:, s], backend, ms.conventions)
            env.add(fac)
        with timer("matched"):
            ms.add(s, fac)
    with timer("envelope"):
        env = env.result()
    with timer("matched"):
        ms = ms.result()
    return env, ms


def _instantaneous(lags, per_t, orient, cnt, order, form):
    """Samples ψ_{b,t}(ℓ): per lag, the mean over directions of the (oriented) per-direction values.

    Memory: B·Σ_ℓ(T − ℓ) floats per direction (7 GB at T = 1024, 8000 sequences, lags 4…256), so
    chunks are released as they are joined and K = 1 returns its arrays without a copy."""
    vals = []
    for lag_lists in per_t:                                                  # [K][n_lags] chunks
        row = []
        for i, chunks in enumerate(lag_lists):
            row.append(np.concatenate(chunks))
            lag_lists[i] = None
        vals.append(row)
    signs = None
    if orient:
        signs = np.array([[-1.0 if a.size and a.mean() < 0 else 1.0 for a in row] for row in vals])
        for srow, row in zip(signs, vals):
            for sg, a in zip(srow, row):
                a *= sg
    samples = vals[0] if len(vals) == 1 else [np.mean([row[i] for row in vals], axis=0) for i in range(len(lags))]
    return MatchedStatistic(lags=lags, samples=samples, per_direction=None, signs=signs, count=cnt,
                            order=order, form=form)
