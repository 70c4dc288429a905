"""The learnability window of [A], computed in one place: envelope f(ℓ) → matched statistic →
null → detection → N̂(ℓ), N*(ℓ) → Ĥ_N (docs/statistics.md §3.3; the envelope docs/diagnostics.md
§2.5, the matched statistic §2.7, the nulls :mod:`lwsim.stats.nulls`).

    chain = lwsim.window.window_chain(cell, params, rates, x, y, lags, n_grid,
                                      nulls=("lag", "full", "author"))
    w = chain["full"]                      # a Window: f, mean (m̄), sigma, alpha, kappa, n_hat, n_star, h_n
    w.h_n, w.n_hat, w.table                # Ĥ_N over n_grid, N̂(ℓ), the DetectionTable

The figures' studies (lwsim/figures/training.py: ``a_null_tables``, ``a_windows``) and
``lwsim.analyze`` both come here: :func:`detect` is the one place a null becomes a detection
table, :func:`window_chain` the whole chain for one model.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from . import diagnostics as dg
from . import stats
from .stats.nulls import NULLS, get_null

__all__ = ["Window", "WindowChain", "detect", "matched_float32", "window_chain"]


@dataclass(frozen=True)
class Window:
    """One null's window of one model: ``table`` the detection table of the main tail method,
    ``tables`` one per tail method, ``f`` the envelope at the same lags (None when not computed).
    The table's fields are read through: lags, mean (m̄), sigma (σ̂), alpha (α̂), kappa (κ̂), n_hat
    (N̂), n_star (N*), h_n (Ĥ_N over n_grid), n_grid, reliable.

    See docs/statistics.md §3.3.
    """

    null: str
    table: stats.DetectionTable
    tables: dict = field(repr=False)
    f: np.ndarray | None = field(default=None, repr=False)

    def __getattr__(self, name):
        if name in ("lags", "mean", "sigma", "alpha", "kappa", "n_hat", "n_star", "h_n", "n_grid", "reliable"):
            return getattr(self.table, name)
        raise AttributeError(name)


@dataclass(frozen=True)
class WindowChain:
    """The chain's pieces for one model: ``envelope`` (EnvelopeResult or None), ``matched`` (the
    float64 MatchedStatistic), ``matched32`` (its float32 pass, when a null needed it) and
    ``tables`` {null: {tail method: DetectionTable}}; ``chain[null]`` is that null's :class:`Window`.

    See docs/statistics.md §3.3.
    """

    envelope: object
    matched: object
    matched32: object
    tables: dict

    def __getitem__(self, null):
        tables = self.tables[null]
        return Window(null, next(iter(tables.values())), tables,
                      None if self.envelope is None else self.envelope.f)

    @property
    def nulls(self):
        return tuple(self.tables)


def matched_float32(cell, params, x, y, rates, lags, **matched):
    """The matched statistic on the model cast to float32 (the author's diagnostic arithmetic;
    exact for float32-trained weights): what the "f32" and "author" nulls test.

    See docs/statistics.md §3.3.2.
    """
    cell32, p32 = _float32_model(cell, params)
    return dg.matched_statistic(cell32, p32, x, y, rates, lags, dtype="float32", **matched)


def _float32_model(cell, params):
    """The model in float32 (the author's diagnostic arithmetic): exact for float32-trained weights."""
    return cell.with_dtype("float32"), {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}


def _needs_float32(names, diag32):
    return diag32 or any(NULLS[n].float32 for n in names)


def detect(ms, lags, n_grid, nulls=("lag",), *, ms32=None, diag32=False, eps=20.0, seed=0,
           tail_methods=("auto",), n_boot=200, min_samples=None, cap_budget=False, fit_subsample=None,
           conventions=None):
    """{null: {tail method: DetectionTable}} of one matched statistic ``ms`` under each null
    (:mod:`lwsim.stats.nulls`): "lag" fits each lag's samples (those of ``ms32`` when ``diag32``),
    "full" tests m̄ against the whole per-sequence update (``ms.full_null()``), the floor nulls apply
    the author's floors to ``ms`` or, for "f32"/"author", to ``ms32`` (the float32 pass,
    :func:`matched_float32`). The other options go to :func:`lwsim.stats.detection_table`
    (``conventions`` only when given).

    See docs/statistics.md §3.3.
    """
    nulls = [get_null(n).name for n in nulls]
    if ms32 is None and _needs_float32(nulls, diag32):
        raise ValueError(f"nulls {nulls} need the float32 matched statistic: pass ms32 (matched_float32)")
    kw = dict(eps=eps, seed=seed, n_boot=n_boot, min_samples=min_samples, cap_budget=cap_budget,
              fit_subsample=fit_subsample)
    if conventions is not None:
        kw["conventions"] = conventions

    def tables(samples, **null):
        return {m: stats.detection_table(samples, lags, n_grid, method=m, **kw, **null) for m in tail_methods}
    out = {}
    for n in nulls:
        null = NULLS[n]
        if n == "lag":
            out[n] = tables((ms32 if diag32 else ms).samples)
        elif n == "full":
            signal, noise = ms.full_null()
            out[n] = tables(signal, noise="full", noise_samples=noise)
        else:
            out[n] = tables((ms32 if null.float32 else ms).samples, floors=null.floors)
    return out


def window_chain(cell, params, rates, x, y, lags, n_grid, *, nulls=("lag",), envelope=True, K=1, seed=0,
                 orient=False, backend="numba", diag_dtype="float64", eps=20.0, tail_methods=("auto",),
                 n_boot=200, min_samples=None, cap_budget=False, fit_subsample=None, timer=None,
                 **matched_kw):
    """The whole chain for one trained float64 model → :class:`WindowChain`.

    The envelope and the matched statistic in one pass sharing the gate factors
    (:func:`lwsim.diagnostics.envelope_and_matched`), or the matched statistic alone when
    ``envelope`` is False (the tables are the same bits); its float32 pass only when a null or
    ``diag_dtype="float32"`` needs it; then :func:`detect` for every null. ``K``: directions of
    the matched statistic; ``matched_kw`` go to it (e.g. ``statistic``, ``conventions``,
    ``envelope_kwargs``); ``timer(name)``: a context manager timing the parts ("matched", "tails").

    See docs/statistics.md §3.3.
    """
    timer = timer or (lambda name: contextlib.nullcontext())
    lags = np.asarray(lags)
    names = [get_null(n).name for n in nulls]
    statistic = matched_kw.get("statistic", "sequence")
    engine = "numpy" if statistic == "instantaneous" else "numba"
    common = dict(n_directions=K, seed=seed, orient=orient, engine=engine, backend=backend, progress=False,
                  timer=timer, **matched_kw)
    alone = {k: v for k, v in common.items() if k not in ("timer", "envelope_kwargs")}   # matched_statistic's
    if envelope:
        env, ms = dg.envelope_and_matched(cell, params, x, y, rates, lags, full_noise="full" in names, **common)
    else:      # Ĥ_N alone (A15, A16): the envelope's sums would be thrown away
        env = None
        with timer("matched"):
            ms = dg.matched_statistic(cell, params, x, y, rates, lags, full_noise="full" in names, **alone)
    if diag_dtype not in ("float64", "float32"):
        raise ValueError(f"diag_dtype must be 'float64' or 'float32', got {diag_dtype!r}")
    diag32 = diag_dtype == "float32"                   # the "lag" table on the author's arithmetic
    ms32 = None
    if _needs_float32(names, diag32):                  # the matched statistic only: the envelope is float64's
        with timer("matched"):
            ms32 = matched_float32(cell, params, x, y, rates, lags, **alone)
    with timer("tails"):
        tables = detect(ms, lags, n_grid, names, ms32=ms32, diag32=diag32, eps=eps, seed=seed,
                        tail_methods=tuple(tail_methods), n_boot=n_boot, min_samples=min_samples,
                        cap_budget=cap_budget, fit_subsample=fit_subsample)
    return WindowChain(env, ms, ms32, tables)
