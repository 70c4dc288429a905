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

The whole update (``full_noise=True``, docs/statistics.md §3.3): for every direction w_k and
sequence b, ζ_{b,k} = (n_out/2) ⟨P ∇_θ L_b, w_k⟩, the per-sequence update along w_k in ψ̄'s units
(P the optimizer's diagonal rates, the rates whose projection is Λ; P = η for a number η; L_b the
mean-squared loss of sequence b alone, whose gradient carries the factor 2/(n_0 n_out) that ψ
leaves out, n_0 the counted steps). It is exact, from one forward-mode tangent along P w_k:
ζ_{b,k} = (1/n_0) Σ_t counted (ŷ_t − y_t)·(W_out v_t[P w_k] + (P w_k)_{W_out} h_t + (P w_k)_{b_out}),
so it covers every lag (beyond the grid too) and the read-out. ψ̄_b(ℓ) averages over the n_ℓ
counted steps with t − ℓ ≥ 1, so the lag-ℓ share of ζ is (n_ℓ/n_0) ψ̄_b(ℓ):
:meth:`MatchedStatistic.full_null` returns both in these units.
``dtype="float32"``: the author's arithmetic (docs/fidelity.md) — pass a float32 cell and
parameters (the forward pass and tangents then run in float32); the windows Γ come from float64
prefix sums cast to float32, and ψ_{b,t} = Σ_q μ δ v is formed and summed over q in float32
(NumPy engine), as the author's torch code does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conventions import as_conventions, check_conventions
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
    noise: np.ndarray | None = None   # (K, B) ζ_{b,k}, the whole update along w_k (full_noise=True)
    n_counted: float | None = None    # n_0, the counted steps of the loss (per sequence)

    def full_null(self):
        """(signal, noise) of the "full" null in the same units (module docstring,
        docs/statistics.md §3.3): signal (n_lags, B) = (n_ℓ/n_0) ψ̄_b(ℓ), the lag-ℓ share of the
        per-sequence update; noise: ζ averaged over the directions, oriented with the samples'
        signs — 1-D (B,) when one row serves every lag (K = 1, or no orientation), else (n_lags, B).
        Feed both to ``lwsim.stats.detection_table(signal, lags, n_grid, noise="full",
        noise_samples=noise)``.
        """
        if self.noise is None:
            raise ValueError("full_null needs the whole update: compute the statistic with full_noise=True")
        if self.per_direction is None:
            raise ValueError("full_null needs statistic='sequence' (the instantaneous samples have no "
                             "per-sequence update to compare with)")
        signal = self.samples * self.count / self.n_counted
        z = self.noise
        if self.signs is None or z.shape[0] == 1:   # one global sign flip leaves a symmetric fit unchanged
            return signal, z.mean(axis=0)
        s = self.signs if self.signs.ndim == 3 else self.signs[:, :, None]     # (K, n_lags, B|1)
        return signal, (s * z[:, None, :]).mean(axis=0)


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


def _accumulate_numpy(d, r, e, lam, delta, v, weight, lags, order, psi, cnt, reset=None, out_t=None,
                      dtype=np.float64):
    T, B, H = d.shape
    P, Q = prefix_sums(d, r if order == 1 else None)
    tabs = None if reset is None else window_tables(d, r if order == 1 else None, reset)
    if dtype != np.float64:           # the author's arithmetic: float32 factors, products and sums
        lam, delta, v = (np.asarray(a, dtype=dtype) for a in (lam, delta, v))
        if tabs is None and out_t is None and B >= 2 and 8 <= H <= 128 and not _EARLIER:
            # the same bits with the work after exp in one numba pass per lag (_kernels.matched_lag_float32)
            from . import _kernels
            ee = np.ascontiguousarray(e, dtype=np.float64) if e is not None else P
            lam, delta, v = (np.ascontiguousarray(a) for a in (lam, delta, v))
            for i, ell in enumerate(lags):
                _kernels.matched_lag_float32(np.exp(P[ell + 1:] - P[1:T + 1 - ell]), Q, ell, order, ee,
                                             e is not None, lam, delta, v, weight, psi[i])
                cnt[i] += weight[ell:].sum()
            return
    for i, ell in enumerate(lags):
        g = np.exp(P[ell + 1:] - P[1:T + 1 - ell])
        if order == 1:
            g = g * (1.0 + Q[ell + 1:] - Q[1:T + 1 - ell])
        if tabs is not None:                       # the author's GRU Γ⁰ (3 products)
            g = window_gamma(tabs, ell, ell + 1, order)[1]
        if e is not None:
            g = g * e[ell:]
        g = g.astype(dtype, copy=False)            # float64 windows, cast as the author's out_dtype
        w = weight[ell:]
        per_t = (lam[:T - ell] * g * delta[ell:] * v[1:T - ell + 1]).sum(axis=2, dtype=dtype)   # (T−ℓ, B)
        psi[i] += (w[:, None] * per_t).sum(axis=0)
        cnt[i] += w.sum()
        if out_t is not None:  # instantaneous statistic: ψ_{b,t}(ℓ) at the counted steps, b-major
            out_t[i].append(per_t[w > 0].T.ravel())


# True: the earlier code paths, the same bits, slower (the numba engine's per-sequence kernel
# matched_accumulate_tiled, the float32 statistic in NumPy alone): benchmarks/bench_diagnostics.py --a15
_EARLIER = False


def _blocked_operands(d, r, e, lam, delta):
    """The numba kernel's operands that do not depend on the direction: (d, r/d, e or None, Λ, δ)
    in the kernel's layout (:func:`._kernels.matched_blocks`, or (B, T, H) for the tiled kernel)."""
    from . import _kernels
    if _EARLIER:
        return "tiled", btH(d), btH(r / d), None if e is None else btH(e), btH(lam), btH(delta)
    bs = min(_kernels.MATCHED_BLOCK, d.shape[1])
    blk = lambda a: _kernels.matched_blocks(a, bs)                           # noqa: E731
    return bs, blk(d), blk(r / d), None if e is None else blk(e), blk(lam), blk(delta)


def _numba_accumulate(ops, v, weight, lags, order, psi, cnt):
    """psi, cnt += the sums of one direction's tangent v (T+1, B, H) (numba engine)."""
    from . import _kernels
    bs, d, rd, e, lam, delta = ops
    if bs == "tiled":
        ee = np.ones_like(d) if e is None else e
        _kernels.matched_accumulate_tiled(d, rd, ee, lam, delta, btH(v), weight, lags, order, psi, cnt)
        return
    _kernels.matched_accumulate(d, rd, d if e is None else e, e is not None, lam, delta,
                                _kernels.matched_blocks(v, bs), weight, lags, order, psi, cnt, bs)


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


def update_direction(cell, rates, w):
    """P w: the direction w scaled by the optimizer's diagonal rates P (a number η: η w; a rates
    dict or an optimizer: P_k ⊙ w_k for every parameter k). Used for the whole update ζ.

    See docs/statistics.md §3.3.
    """
    from .rates import _as_rates
    r, _ = _as_rates(rates)
    if not isinstance(r, dict):
        return {k: float(r) * np.asarray(v, dtype=np.float64) for k, v in w.items()}
    missing = [k for k in w if k not in r]
    if missing:
        raise ValueError(f"rates has no entry for the parameters {missing} (the whole update needs every "
                         "parameter's rate)")
    out = {}
    for k, v in w.items():
        lam = np.asarray(to_numpy(r[k]), dtype=np.float64)
        if not np.all(np.isfinite(lam)) or np.any(lam < 0):
            raise ValueError(f"rates[{k!r}] must be finite and >= 0")
        out[k] = np.broadcast_to(lam, np.shape(v)) * v
    return cell.check_params(out)


def _update_along(vh, delta, err, h, pw, weight):
    """ζ_b = (1/n_0) Σ_t weight_t (ŷ_t − y_t)·(W_out v_t + U h_t + u) for the tangent v along P w
    (U, u its read-out entries): (B,). vh (T, B, H) the h-tangent, delta = (ŷ − y) W_out."""
    z = (np.asarray(delta, dtype=np.float64) * vh).sum(axis=2)               # (T, B): through h_t
    z += (err * (h @ np.asarray(pw["W_out"], dtype=np.float64).T)).sum(axis=2)  # the read-out weights
    if "b_out" in pw:
        z += err @ np.asarray(pw["b_out"], dtype=np.float64)
    return (weight[:, None] * z).sum(axis=0) / weight.sum()


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
                      statistic="sequence", full_noise=False, dtype="float64"):
    """ψ̄_b(ℓ) for every sequence b and lag (§2.7) → :class:`MatchedStatistic`.

    rates: η, ``opt.rates()`` dict or the optimizer (only Λ is used, no η needed);
    n_directions K, seed: the unit directions; keys: parameters spanned by w (default all).
    conventions: "lwsim" | "author" (module docstring, docs/fidelity.md) or a
      :class:`lwsim.conventions.Conventions` (fields r_diagonal, gru_gamma0, lstm_source_tangent,
      orientation).
    statistic: "sequence" (the samples are the per-sequence means ψ̄_b(ℓ); a budget N counts
      sequences) or "instantaneous" (the earlier code generation of [A]: the samples are the
      ψ_{b,t}(ℓ) themselves at every counted step, B(T − ℓ) at lag ℓ for readout "every", returned
      as a list of n_lags 1-D arrays (b-major), so that N counts time points; directions are
      averaged per (b, t); ``orient`` takes the sign of the mean over all samples, or with
      conventions="author" the sign of each batch of AUTHOR_BATCH sequences' mean over its (b, t);
      NumPy engine; docs/diagnostics.md §2.7, docs/fidelity.md).
    full_noise: also compute ζ_{b,k}, the whole per-sequence update along each direction
      (module docstring; :meth:`MatchedStatistic.full_null`, docs/statistics.md §3.3).
    dtype: "float64" or "float32" (the author's arithmetic, module docstring; NumPy engine).
    """
    acc = MatchedAccumulator(cell, params, x, y, rates, lags, n_directions=n_directions, seed=seed,
                             order=order, form=form, orient=orient, mask=mask, keys=keys, chunk=chunk,
                             backend=backend, engine=engine, progress=progress, conventions=conventions,
                             statistic=statistic, full_noise=full_noise, dtype=dtype)
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
                 statistic="sequence", full_noise=False, dtype="float64"):
        self.conventions = check_conventions(conventions)     # as given, for the gate factors
        self.conv = as_conventions(conventions)
        if statistic not in ("sequence", "instantaneous"):
            raise ValueError(f"statistic must be 'sequence' or 'instantaneous', got {statistic!r}")
        self.inst = inst = statistic == "instantaneous"
        if not isinstance(full_noise, bool):
            raise TypeError(f"full_noise must be a bool, got {type(full_noise).__name__}")
        if full_noise and inst:
            raise ValueError("full_noise needs statistic='sequence' (the whole update is per sequence)")
        if dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        self.dtype = np.dtype(dtype)
        if self.dtype == np.float32 and cell.dtype != np.float32:
            raise ValueError("dtype='float32' (the author's arithmetic) needs a float32 cell and parameters: "
                             "pass cell.with_dtype('float32') and float32 params")
        self.full_noise = full_noise
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
        self.pdirs = [update_direction(cell, rates, w) for w in self.dirs] if full_noise else []
        self.cell, self.params, self.backend, self.form, self.orient = cell, params, backend, form, orient
        self.T, self.H = T, cell.n_hidden
        self.W_out = np.asarray(to_numpy(params["W_out"]), dtype=np.float64)
        self.weight = _weights(cell, T, mask)
        n = lags.size
        self.psi = np.zeros((K, n, B))
        self.cnt = np.zeros((n, B))
        self.per_t = [[[] for _ in range(n)] for _ in range(K)] if inst else None
        self.noise = np.zeros((K, B)) if full_noise else None
        self.slices = batch_slices(B, chunk)
        # directions per tangent pass: as many as keep the (K, T+1, chunk, S) tangents ≤ 2^24 floats
        # (with full_noise each direction w comes with its update direction P w in the same pass)
        per_dir = (T + 1) * min(chunk, B) * cell.state_size * (2 if full_noise else 1)
        self.kb = max(1, min(K, TANGENT_GROUP_ELEMENTS // per_dir))

    def add(self, s, fac):
        """Add the sequences ``s`` (a slice of the batch) with their gate factors ``fac``."""
        cell, params, T, H, lags, kb = self.cell, self.params, self.T, self.H, self.lags, self.kb
        n = lags.size
        xs = self.x[:, s]
        d, r, e = _check_factors(fac.d, fac.r, fac.readout, 1)
        lam_src = source_rates(self.lam, fac.trace.h, self.form)
        err = f64(fac.trace.y) - np.asarray(to_numpy(self.y[:, s]), dtype=np.float64)    # ŷ − y
        if self.dtype == np.float32:               # the author's δ: float32 (ŷ − y) W_out
            err32 = np.asarray(to_numpy(fac.trace.y)) - np.asarray(to_numpy(self.y[:, s]), dtype=np.float32)
            delta = err32 @ self.W_out.astype(np.float32)
        else:
            delta = err @ self.W_out
        h = f64(fac.trace.h[1:]) if self.full_noise else None
        blocked = None
        for kd, w in enumerate(self.dirs):
            if kd % kb == 0:                       # the next group of directions in one tangent pass
                grp = self.dirs[kd:kd + kb]
                group = f64(cell.tangents(params, xs, grp + self.pdirs[kd:kd + kb], backend=self.backend,
                                          forward=None if _EARLIER else fac.trace))   # its forward pass reused
            v = group[kd % kb]
            if self.full_noise:
                self.noise[kd, s] = _update_along(group[len(grp) + kd % kb][1:, :, :H], delta, err, h,
                                                  self.pdirs[kd], self.weight)
            if cell.kind.has_cell_state:           # state (h, c): keep one half of v
                hidden = self.conv.lstm_source_tangent == "hidden"      # the author's v^h
                v = np.ascontiguousarray(v[..., :H] if hidden else v[..., H:])
            c = np.zeros((n, xs.shape[1]))
            p = np.zeros((n, xs.shape[1]))
            if self.engine == "numpy" or fac.reset is not None or self.inst or self.dtype == np.float32:
                _accumulate_numpy(d, r, e, lam_src, delta, v, self.weight, lags, self.order, p, c, fac.reset,
                                  self.per_t[kd] if self.inst else None, self.dtype)
            else:
                if blocked is None:                # the direction-independent operands, once per chunk
                    blocked = _blocked_operands(d, r, e, lam_src, delta)
                _numba_accumulate(blocked, v, self.weight, lags, self.order, p, c)
            self.psi[kd][:, s] = p
            self.cnt[:, s] = c

    def result(self):
        """The :class:`MatchedStatistic` of every chunk added."""
        lags, psi, cnt, order, form, orient = self.lags, self.psi, self.cnt, self.order, self.form, self.orient
        per_batch = self.conv.orientation == "per_batch"          # the author's 128-sequence batches
        if self.inst:
            return _instantaneous(lags, self.per_t, orient, cnt, order, form, per_batch)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_dir = psi / cnt[None]
        signs = None
        if orient and per_batch:
            signs = _author_signs(psi, cnt)                                     # (K, n_lags, B)
            per_dir = per_dir * signs
        elif orient:
            signs = np.where(np.nanmean(per_dir, axis=2) < 0, -1.0, 1.0)        # (K, n_lags)
            per_dir = per_dir * signs[:, :, None]
        return MatchedStatistic(lags=lags, samples=per_dir.mean(axis=0), per_direction=per_dir,
                                signs=signs, count=cnt, order=order, form=form, noise=self.noise,
                                n_counted=float(self.weight.sum()))


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


def _batch_signs(a, n_seq):
    """The author's per-batch orientation of one lag's b-major samples ψ_{b,t}: the sign of each
    AUTHOR_BATCH-sequence batch's mean over its (b, t) (+1 for a zero or non-finite mean), per sample."""
    rows = a.reshape(n_seq, -1)
    signs = np.ones(rows.shape[0])
    for lo in range(0, n_seq, AUTHOR_BATCH):
        m = rows[lo:lo + AUTHOR_BATCH].mean() if rows.shape[1] else 0.0
        signs[lo:lo + AUTHOR_BATCH] = -1.0 if np.isfinite(m) and m < 0 else 1.0
    return np.repeat(signs, rows.shape[1])


def _instantaneous(lags, per_t, orient, cnt, order, form, author=False):
    """Samples ψ_{b,t}(ℓ): per lag, the mean over directions of the (oriented) per-direction values.

    ``author`` with ``orient``: the author's per-batch signs (:func:`_batch_signs`; ``signs`` is
    then a list per direction of per-lag sign arrays, one per sample), else one sign per direction
    and lag. Memory: B·Σ_ℓ(T − ℓ) floats per direction (7 GB at T = 1024, 8000 sequences,
    lags 4…256), so chunks are released as they are joined and K = 1 returns its arrays without a copy."""
    vals = []
    for lag_lists in per_t:                                                  # [K][n_lags] chunks
        row = []
        for i, chunks in enumerate(lag_lists):
            row.append(np.concatenate(chunks))
            lag_lists[i] = None
        vals.append(row)
    signs = None
    if orient and author:
        n_seq = cnt.shape[1]
        signs = [[_batch_signs(a, n_seq) for a in row] for row in vals]
        for srow, row in zip(signs, vals):
            for sg, a in zip(srow, row):
                a *= sg
    elif orient:
        signs = np.array([[-1.0 if a.size and a.mean() < 0 else 1.0 for a in row] for row in vals])
        for srow, row in zip(signs, vals):
            for sg, a in zip(srow, row):
                a *= sg
    samples = vals[0] if len(vals) == 1 else [np.mean([row[i] for row in vals], axis=0) for i in range(len(lags))]
    return MatchedStatistic(lags=lags, samples=samples, per_direction=None, signs=signs, count=cnt,
                            order=order, form=form)
