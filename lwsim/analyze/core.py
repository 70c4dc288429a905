"""The [A] diagnostic chain on a user's own trained model (docs/analyze.md).

Same calls, in the same order and with the same arguments, as the figures pipeline
(``lwsim.figures.experiments.a_main``), so a model analysed here gives that pipeline's numbers:

    envelope f(ℓ) (docs/diagnostics.md §2.5) → time scales τ_q (§2.6) → matched statistic ψ̄_b(ℓ)
    (§2.7) → detection table α̂, σ̂, N̂(ℓ), Ĥ_N (docs/statistics.md §3.3) → decay-law fit (§3.4)
    → master check log N̂ = a + b(−κ̂ log f) (§3.5); plus per-neuron rates Λ^{(q)} and the exact
    envelope f_exact(ℓ) when the model is small enough (cost B·T·L·S³).
"""
from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from .. import diagnostics as dg
from .. import optim, stats
from ..diagnostics._util import check_lags
from ..stats._checks import MIN_SAMPLES
from .report import Report

RELIABLE_N = 500          # the tail fit's reliability floor (docs/statistics.md §3.2)
EXACT_BUDGET = 5e7        # B·T·L·S³ below which the exact envelope is computed by default
SIGNAL_FLOOR = 1e-12      # f(ℓ) ≤ this × max f: no signal left at that lag


def default_lags(T):
    """1 … ⌊T/2⌋: every lag up to 32, else up to 32 log-spaced integer lags (duplicates merged).

    See docs/analyze.md.
    """
    hi = max(1, T // 2)
    if hi <= 32:
        return list(range(1, hi + 1))
    return sorted({int(v) for v in np.round(np.geomspace(1, hi, 32))})


def default_n_grid(B):
    """Log-spaced integer budgets from min(25, B) up to B, the number of available sequences.

    See docs/analyze.md.
    """
    lo = min(25, B)
    return sorted({int(v) for v in np.round(np.geomspace(lo, B, 10))}) if B > lo else [B]


def resolve_rates(rates, params):
    """(what the diagnostics take as ``rates``, a description for the report).

    None → unit SGD rate η = 1 (the envelope is then the gates' own transport); a number → SGD η;
    an lwsim optimizer (anything with ``rates()``); an lwsim optimizer ``state_dict()``; a name
    ("sgd", "momentum") or (name, hyper-parameters). Adaptive optimizers need their state.

    See docs/analyze.md.
    """
    if rates is None:
        return 1.0, "none given: unit SGD rate η = 1 (Λ = 1, f(ℓ) is the gates' transport alone)"
    if isinstance(rates, numbers.Real) and not isinstance(rates, bool):
        return float(rates), f"SGD, η = {float(rates):g}"
    if callable(getattr(rates, "rates", None)):
        return rates, repr(rates)
    if isinstance(rates, dict) and "state" in rates:
        opt = optim.from_state_dict({k: np.array(v, copy=True) for k, v in params.items()}, rates)
        return opt, repr(opt)
    if isinstance(rates, str):
        name, hyper = rates, {}
    elif isinstance(rates, (tuple, list)) and len(rates) == 2 and isinstance(rates[1], dict):
        name, hyper = rates
    else:
        raise TypeError("rates must be None, a number (SGD η), an optimizer, an optimizer state_dict, "
                        f"a name or (name, hyper-parameters), got {type(rates).__name__}")
    if str(name).lower() in ("adam", "adamw", "rmsprop"):
        raise ValueError(f"rates: optimizer {name!r} is adaptive, its rates λ need its second-moment "
                         "state; pass the optimizer, its state_dict, or the state file (--optimizer-state)")
    opt = optim.make(name, {k: np.array(v, copy=True) for k, v in params.items()}, **hyper)
    return opt, repr(opt)


def _kwargs_supported(fn, **kw):
    """Only the options ``fn`` has (others are being added concurrently; passed through when there)."""
    sig = inspect.signature(fn).parameters
    unknown = [k for k, v in kw.items() if v is not None and k not in sig]
    if unknown:
        raise ValueError(f"{fn.__name__} does not support {unknown} in this lwsim version")
    return {k: v for k, v in kw.items() if v is not None}


def analyze(cell, params, x, y, *, rates=None, lags=None, n_grid=None, K=1, statistic=None,
            conventions=None, eps=20.0, seed=0, exact=None, backend="numba", progress=True,
            sources=None) -> Report:
    """Run the [A] diagnostic chain on ``cell``/``params`` with diagnostic data x (T, B, D), y.

    rates: see :func:`resolve_rates`. lags: default :func:`default_lags` (≤ T/2), trimmed to the
    longest lag with signal (f(ℓ) > 10⁻¹² max f); n_grid: default :func:`default_n_grid` (up to B);
    K: random directions of the matched statistic; statistic, conventions: passed to
    ``matched_statistic`` (and conventions to ``detection_table``) when given, e.g. statistic
    "instantaneous" (docs/diagnostics.md §2.7), conventions "author" (docs/fidelity.md); the N grid
    then defaults up to the samples per lag; eps: detection threshold ε (docs/statistics.md §3.3);
    exact: compute f_exact(ℓ) (default: when B·T·L·S³ ≤ 5·10⁷). Returns a :class:`Report`.
    """
    x = cell.check_x(x)
    y = cell.check_y(y, x)
    params = cell.check_params(params)
    T, B, _ = x.shape
    notes, warns = [], []
    if B < MIN_SAMPLES:
        raise ValueError(f"x has {B} sequences; the tail fit needs at least {MIN_SAMPLES} "
                         f"(and {RELIABLE_N} to be reliable, docs/statistics.md §3.2)")
    if T < 3:
        raise ValueError(f"x has T = {T} steps; the envelope needs lags 1 … T−1 with T ≥ 3")
    if exact is not None and not isinstance(exact, bool):
        raise TypeError(f"exact must be None (auto), True or False, got {exact!r}")
    rates_obj, rates_desc = resolve_rates(rates, params)
    if lags is None:
        lags = default_lags(T)
        notes.append(f"lag grid: default, {len(lags)} lags 1 … {lags[-1]} (up to T/2 = {T // 2})")
    lags = np.asarray(check_lags(lags, T))
    env = dg.envelope(cell, params, x, rates_obj, lags, backend=backend, progress=progress)
    signal = np.isfinite(env.f) & (env.f > SIGNAL_FLOOR * np.nanmax(env.f))
    if not signal.all():
        last = int(np.flatnonzero(signal)[-1]) if signal.any() else -1
        if last < 1:
            raise ValueError("the envelope f(ℓ) has no signal beyond the first lag: nothing to analyse")
        notes.append(f"lag grid trimmed to the longest lag with signal, ℓ = {lags[last]} "
                     f"(f ≤ {SIGNAL_FLOOR:g}·max f beyond)")
        lags = lags[:last + 1]
        env = dg.envelope(cell, params, x, rates_obj, lags, backend=backend, progress=progress)
    ts = dg.timescales(lags, env.m)
    extra = _kwargs_supported(dg.matched_statistic, statistic=statistic, conventions=conventions)
    ms = dg.matched_statistic(cell, params, x, y, rates_obj, lags, n_directions=K, seed=seed,
                              backend=backend, progress=progress, **extra)
    # samples per lag: B (one per sequence), or B(T − ℓ) for the instantaneous statistic
    n_avail = [int(np.size(row)) for row in ms.samples]
    per_seq = isinstance(ms.samples, np.ndarray)
    what = "sequences" if per_seq else "samples per lag (at lag 1)"
    if min(n_avail) < RELIABLE_N:
        msg = (f"only {min(n_avail)} diagnostic {'sequences' if per_seq else 'samples'}"
               f": tail fits need >= {RELIABLE_N} to be reliable (docs/statistics.md §3.2); "
               "the affected lags are flagged in the report")
        warnings.warn(msg, stacklevel=2)
        warns.append(msg)
    if n_grid is None:
        n_grid = default_n_grid(max(n_avail))
        notes.append(f"N grid: default, {len(n_grid)} budgets {n_grid[0]} … {n_grid[-1]} "
                     f"(up to the {max(n_avail)} available {what})")
    det_extra = _kwargs_supported(stats.detection_table, conventions=conventions)
    det = stats.detection_table(ms.samples, lags, n_grid, eps=eps, seed=seed, **det_extra)
    try:
        decay = stats.fit_decay(lags, env.f)
    except ValueError as exc:
        decay = None
        warns.append(f"decay-law fit not possible: {exc}")
    finite = np.isfinite(det.n_hat)
    try:
        master = stats.fit_master(det.n_hat[finite], det.kappa[finite], env.f[finite])
    except ValueError as exc:                       # too few detectable lags
        master = None
        warns.append(f"master check not possible: {exc}")
    S = cell.state_size
    cost = B * T * lags.size * S ** 3
    if exact is None:
        exact = cost <= EXACT_BUDGET
        notes.append(f"exact envelope: {'computed' if exact else 'skipped'} "
                     f"(B·T·L·S³ = {cost:.3g} {'≤' if exact else '>'} {EXACT_BUDGET:g})")
    ex = (dg.exact_envelope(cell, params, x, rates_obj, lags, backend=backend, progress=progress)
          if exact else None)
    if not det.reliable.all():
        bad = lags[~det.reliable]
        warns.append(f"unreliable tail fits at {bad.size} of {lags.size} lags "
                     f"({', '.join(map(str, bad[:12]))}{' …' if bad.size > 12 else ''})")
    settings = {"cell": repr(cell), "T": T, "B": B, "D": cell.n_in, "H": cell.n_hidden,
                "n_out": cell.n_out, "rates": rates_desc, "eta": env.eta, "K": K, "seed": seed,
                "eps": float(eps), "statistic": statistic if statistic is not None else "default",
                "conventions": conventions if conventions is not None else "default",
                "backend": backend, "lags": lags, "n_grid": det.n_grid, "sources": sources or {}}
    return Report(settings=settings, envelope=env, timescales=ts, matched=ms, detection=det,
                  decay=decay, master=master, exact=ex, notes=notes, warnings=warns)
