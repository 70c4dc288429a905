"""The [A] diagnostic chain on a user's own trained model (docs/analyze.md).

Same calls, with the same arguments, as the figures pipeline (``lwsim.figures.studies.main.experiment.a_main``),
so a model analysed here gives that pipeline's numbers:

    envelope f(ℓ) (docs/diagnostics.md §2.5) and matched statistic ψ̄_b(ℓ) (§2.7) in one pass over
    the data (``envelope_and_matched``) → time scales τ_q (§2.6) → detection table α̂, σ̂, N̂(ℓ),
    Ĥ_N (docs/statistics.md §3.3) → decay-law fit (§3.4) → master check log N̂ = a + b(−κ̂ log f)
    (§3.5); plus per-neuron rates Λ^{(q)} and the exact envelope f_exact(ℓ) when the model is
    small enough (cost B·T·L·S³).
"""
from __future__ import annotations

import dataclasses
import numbers
import warnings

import numpy as np

from .. import diagnostics as dg
from .. import optim, stats, window
from .._validate import check_real
from ..diagnostics._util import check_lags
from ..conventions import LWSIM, Conventions, as_conventions
from ..stats._checks import MIN_SAMPLES, real_array
from ..stats.nulls import NULL_NAMES, NULLS
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


def _check_n_grid(n_grid):
    """None, one budget N (an int) or a 1-D list of budgets, each > 0: checked before any work."""
    if n_grid is None:
        return None
    if isinstance(n_grid, numbers.Integral) and not isinstance(n_grid, bool):
        n_grid = [int(n_grid)]
    real_array("n_grid", n_grid, ndim=1, min_len=1, positive=True)
    return n_grid


def _first_lags(env, ms, n):
    """The envelope and matched statistic restricted to their first ``n`` lags (per-lag sums are
    independent of the other lags, so this equals recomputing them on the shorter grid)."""
    cut = slice(0, n)
    env = dataclasses.replace(
        env, **{k: getattr(env, k)[cut] for k in ("lags", "f", "f_gates", "ratio", "m", "count",
                                                  "lam_mean", "lam_std")},
        log_mass=None if env.log_mass is None else env.log_mass[cut])
    per_lag = {"lags": ms.lags[cut], "samples": ms.samples[cut], "count": ms.count[cut]}
    for k in ("per_direction", "signs"):                    # (K, n_lags, …) when present
        v = getattr(ms, k)
        per_lag[k] = None if v is None else v[:, cut]
    return env, dataclasses.replace(ms, **per_lag)


def _envelope_and_matched(cell, params, x, y, rates, lags, *, K, seed, statistic, conventions,
                          backend, progress, full_noise=False):
    """Envelope f(ℓ) (lwsim conventions, docs/diagnostics.md §2.5) and matched statistic (§2.7).

    One pass sharing each chunk's gate factors (:func:`lwsim.diagnostics.envelope_and_matched`,
    as the figures' a_main) when ``conventions`` are lwsim's (a name or a
    :class:`lwsim.conventions.Conventions` equal to LWSIM); otherwise (e.g. "author": the author's matched statistic reads the author's gate
    factors) the report's envelope stays lwsim's, so the two take separate passes (the matched
    statistic first: a model the author's code cannot run fails before the envelope's pass).
    """
    matched_kw = dict(n_directions=K, seed=seed, statistic=statistic, backend=backend, progress=progress,
                      full_noise=full_noise)
    if as_conventions(conventions) != LWSIM:      # the envelope is always lwsim's: no shared pass
        ms = dg.matched_statistic(cell, params, x, y, rates, lags, conventions=conventions, **matched_kw)
        env = dg.envelope(cell, params, x, rates, lags, backend=backend, progress=progress)
        return env, ms
    return dg.envelope_and_matched(cell, params, x, y, rates, lags, **matched_kw)


def analyze(cell, params, x, y, *, rates=None, lags=None, n_grid=None, K=1, statistic=None,
            conventions=None, eps=20.0, seed=0, exact=None, backend="numba", progress=True,
            sources=None, noise="lag", nulls=None) -> Report:
    """Run the [A] diagnostic chain on ``cell``/``params`` with diagnostic data x (T, B, D), y.

    rates: see :func:`resolve_rates`. lags: default :func:`default_lags` (≤ T/2), trimmed to the
    longest lag with signal (f(ℓ) > 10⁻¹² max f); n_grid: default :func:`default_n_grid` (up to B);
    K: random directions of the matched statistic; statistic, conventions: passed to the matched
    statistic (and conventions to ``detection_table``; the envelope keeps lwsim's), e.g. statistic
    "instantaneous" (docs/diagnostics.md §2.7), conventions "author" or a Conventions object
    (docs/fidelity.md); the N grid
    then defaults up to the samples per lag; eps: detection threshold ε (docs/statistics.md §3.3);
    exact: compute f_exact(ℓ) (default: when B·T·L·S³ ≤ 5·10⁷); noise: the detection null, "lag"
    (each lag's statistic against its own spread) or "full" (against the whole per-sequence
    update along the same directions; statistic "sequence" only), or any other null of
    :mod:`lwsim.stats.nulls` (the author's floors "snr", "ecf", "floors", float32 diagnostics "f32",
    both "author"), docs/statistics.md §3.3; the report's ``detection`` is under this null.
    nulls: the nulls of ``detection_nulls`` (default "lag" and "full", "lag" alone for the
    instantaneous statistic; ``noise`` is always among them), each computed by
    :func:`lwsim.window.detect`, the code the figures' studies use.
    Returns a :class:`Report`.
    Every option is checked before the first pass over the data.
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
    # every option is checked here, before the passes over the data (no work lost on a typo)
    n_grid = _check_n_grid(n_grid)
    eps = check_real("eps", eps, lo=0.0, lo_open=True)
    shown = {"statistic": statistic or "default",
             "conventions": conventions.name if isinstance(conventions, Conventions) else conventions or "default"}
    statistic = "sequence" if statistic is None else statistic
    if statistic not in ("sequence", "instantaneous"):
        raise ValueError(f"statistic must be 'sequence' or 'instantaneous', got {statistic!r}")
    conventions = "lwsim" if conventions is None else conventions
    as_conventions(conventions)       # checked now; passed on as given (each callee reads its fields)
    if noise not in NULL_NAMES:
        raise ValueError(f"noise must be one of {', '.join(NULL_NAMES)}, got {noise!r}")
    if nulls is None:
        nulls = ("lag", "full") if statistic == "sequence" else ("lag",)
    if isinstance(nulls, str) or not all(isinstance(n, str) for n in nulls):
        raise TypeError(f"nulls must be a sequence of null names, got {nulls!r}")
    for n in nulls:
        if n not in NULL_NAMES:
            raise ValueError(f"nulls: {n!r} is not one of {', '.join(NULL_NAMES)}")
    nulls = tuple(dict.fromkeys((*nulls, noise)))          # noise among them, no repeats, in order
    if "full" in nulls and statistic != "sequence":
        raise ValueError("noise='full' needs statistic 'sequence' (the whole update is per sequence)")
    shown["noise"] = noise
    rates_obj, rates_desc = resolve_rates(rates, params)
    if lags is None:
        lags = default_lags(T)
        notes.append(f"lag grid: default, {len(lags)} lags 1 … {lags[-1]} (up to T/2 = {T // 2})")
    lags = np.asarray(check_lags(lags, T))
    env, ms = _envelope_and_matched(cell, params, x, y, rates_obj, lags, K=K, seed=seed, statistic=statistic,
                                    conventions=conventions, backend=backend, progress=progress,
                                    full_noise=statistic == "sequence")
    signal = np.isfinite(env.f) & (env.f > SIGNAL_FLOOR * np.nanmax(env.f))
    if not signal.all():
        last = int(np.flatnonzero(signal)[-1]) if signal.any() else -1
        if last < 1:
            raise ValueError("the envelope f(ℓ) has no signal beyond the first lag: nothing to analyse")
        notes.append(f"lag grid trimmed to the longest lag with signal, ℓ = {lags[last]} "
                     f"(f ≤ {SIGNAL_FLOOR:g}·max f beyond)")
        lags = lags[:last + 1]
        env, ms = _first_lags(env, ms, last + 1)
    ts = dg.timescales(lags, env.m)
    # samples per lag: B (one per sequence), or B(T − ℓ) for the instantaneous statistic
    n_avail = [int(np.size(row)) for row in ms.samples]
    per_seq = isinstance(ms.samples, np.ndarray)
    what = "sequences" if per_seq else "samples per lag (at lag 1)"
    if min(n_avail) < RELIABLE_N:
        msg = (f"only {min(n_avail)} diagnostic {'sequences' if per_seq else 'samples'}"
               f": tail fits need >= {RELIABLE_N} to be reliable (docs/statistics.md §3.2); "
               "the affected lags are flagged in the report; x was read as (T, B, D) with "
               f"T = {T} steps and B = {B} sequences: if the arrays are batch-first (B, T, ·), "
               "pass --batch-first (or transpose x and y)")
        warnings.warn(msg, stacklevel=2)
        warns.append(msg)
    if n_grid is None:
        n_grid = default_n_grid(max(n_avail))
        notes.append(f"N grid: default, {len(n_grid)} budgets {n_grid[0]} … {n_grid[-1]} "
                     f"(up to the {max(n_avail)} available {what})")
    elif max(n_grid) > max(n_avail):
        msg = (f"n_grid: budgets up to N = {max(n_grid):g} exceed the {max(n_avail)} available {what}; "
               "Ĥ_N at those N is extrapolated from the fitted α-stable law, not measured")
        warnings.warn(msg, stacklevel=2)
        warns.append(msg)
    ms32 = None
    if any(NULLS[n].float32 for n in nulls):        # the float32 pass of "f32"/"author", on the final lags
        ms32 = window.matched_float32(cell, params, x, y, rates_obj, lags, n_directions=K, seed=seed,
                                      statistic=statistic, backend=backend, progress=progress,
                                      conventions=conventions)
    nulls = {n: next(iter(t.values())) for n, t in
             window.detect(ms, lags, n_grid, nulls, ms32=ms32, eps=eps, seed=seed, conventions=conventions).items()}
    det = nulls[noise]
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
                "eps": eps, **shown,
                "backend": backend, "lags": lags, "n_grid": det.n_grid, "sources": sources or {}}
    return Report(settings=settings, envelope=env, timescales=ts, matched=ms, detection=det,
                  decay=decay, master=master, exact=ex, notes=notes, warnings=warns, detection_nulls=nulls)
