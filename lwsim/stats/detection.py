"""Detection rule, sample complexity and learnability window (docs/statistics.md §3.3, docs/theory.md §4.4).

Conventions (Decision): "no N suffices" is ``np.inf`` (never NaN or None). Degenerate fits are
handled explicitly: m̄ = 0 gives SNR = 0 (no signal, never detectable, N* = inf); σ̂ = 0 with
m̄ ≠ 0 gives SNR = inf (detectable at every N, N* = 0). α̂ = 1 (a fit clipped to the stable
range) means κ̂ = inf: the mean does not concentrate, SNR = |m̄|/σ̂ for every N.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..conventions import DETECTION_FLOORS, as_conventions
from ._checks import MIN_SAMPLES, as_rng, check_int, check_real, real_array, same_length
from .mcculloch import mcculloch_point
from .stable import inv_kappa, mean_lower_bound
from .tailfit import fit_alpha


def _out(a):
    return float(a) if np.ndim(a) == 0 else a


def _broadcast(**arrays):
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = {k: np.shape(v) for k, v in arrays.items()}
        raise ValueError(f"{', '.join(arrays)} must broadcast to a common shape, got {shapes}") from None


def _kappa_ext(alpha):
    """κ = α/(α − 1) on [1, 2] with κ(1) = inf."""
    r = np.asarray(inv_kappa(alpha), dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), np.inf)


AUTHOR_SIGMA_FLOOR = 1e-12   # the author's compute_snr: SNR = 0 whenever σ̂ ≤ 1e−12 (docs/fidelity.md)
FLOORS = DETECTION_FLOORS     # the author's floors ("snr", "ecf"), as options of detection_table


def _check_floor(sigma_floor):
    return None if sigma_floor is None else check_real("sigma_floor", sigma_floor, lo=0.0)


def snr(mean, alpha, sigma, N, sigma_floor=None):
    """SNR(ℓ, N) = |m̄| N^{1/κ̂} / σ̂, 1/κ̂ = 1 − 1/α̂ (docs/statistics.md §3.3). Broadcasts over all arguments.

    sigma_floor (None or ≥ 0): the author's floor — SNR = 0 where σ̂ ≤ sigma_floor (the author's
    code uses 1e−12, :data:`AUTHOR_SIGMA_FLOOR`); None: σ̂ = 0 with m̄ ≠ 0 gives SNR = inf.
    """
    floor = _check_floor(sigma_floor)
    m, r, s, N = _broadcast(mean=np.abs(real_array("mean", mean)), alpha=np.asarray(inv_kappa(alpha)),
                            sigma=real_array("sigma", sigma, nonneg=True), N=real_array("N", N, positive=True))
    gain = m * N ** r  # |m̄| times the sample-mean concentration factor
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(m == 0, 0.0, np.where(s == 0, np.inf, gain / np.where(s == 0, 1.0, s)))
    if floor is not None:
        out = np.where(s <= floor, 0.0, out)
    return _out(out)


def detectable(mean, alpha, sigma, N, eps=20.0, sigma_floor=None):
    """Lag detectable with budget N iff SNR(ℓ, N) > ε (docs/statistics.md §3.3; default ε = 20)."""
    eps = check_real("eps", eps, lo=0.0, lo_open=True)
    out = np.asarray(snr(mean, alpha, sigma, N, sigma_floor)) > eps
    return bool(out) if out.ndim == 0 else out


def sample_complexity(mean, alpha, sigma, n_grid, eps=20.0, sigma_floor=None):
    """N̂(ℓ) = min{N in n_grid : SNR(ℓ, N) > ε}, ``np.inf`` where no N in the grid suffices.

    mean/alpha/sigma: scalars or arrays of the lag shape; n_grid: 1-D positive budgets (any order).

    See docs/statistics.md §3.3.
    """
    grid = real_array("n_grid", n_grid, ndim=1, min_len=1, positive=True)
    m, a, s = _broadcast(mean=real_array("mean", mean), alpha=real_array("alpha", alpha),
                         sigma=real_array("sigma", sigma, nonneg=True))
    ok = np.asarray(detectable(m[..., None], a[..., None], s[..., None], grid, eps, sigma_floor))
    out = np.where(ok, grid, np.inf).min(axis=-1)
    return _out(out)


def n_star(mean, alpha, sigma, eps=20.0, sigma_floor=None):
    """Continuous N*(ℓ) = (ε σ̂ / |m̄|)^κ̂, the N at which SNR = ε exactly (docs/statistics.md §3.3);
    inf where σ̂ ≤ sigma_floor (the author's floor, :func:`snr`)."""
    eps = check_real("eps", eps, lo=0.0, lo_open=True)
    floor = _check_floor(sigma_floor)
    m, s, k = _broadcast(mean=np.abs(real_array("mean", mean)), sigma=real_array("sigma", sigma, nonneg=True),
                         alpha=_kappa_ext(alpha))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        base = np.where(m == 0, np.inf, eps * s / np.where(m == 0, 1.0, m))
        out = np.where(m == 0, np.inf, np.where(s == 0, 0.0, base ** k))  # base^inf: 0 or inf
    if floor is not None:
        out = np.where(s <= floor, np.inf, out)
    return _out(out)


def learnability_window(lags, n_hat, N):
    """Ĥ_N = max{ℓ in lags : N̂(ℓ) ≤ N}, 0 if none (docs/statistics.md §3.3). N scalar or array (vectorised).

    As specified this is the *largest* detectable lag, not the end of the first detectable run.
    """
    lags = real_array("lags", lags, ndim=1, min_len=1, positive=True)
    n_hat = real_array("n_hat", n_hat, ndim=1, nonneg=True, allow_inf=True)  # N* may be 0
    same_length(lags=lags, n_hat=n_hat)
    N = real_array("N", N, positive=True)
    ok = n_hat <= N[..., None]
    out = np.where(ok, lags, 0.0).max(axis=-1)
    return _out(out)


def noise_floor(f, n_hat, N, kappa):
    """Implied noise floor ε_th(ℓ; N) = f(ℓ) (N̂(ℓ)/N)^{1/κ̂(ℓ)} in envelope units (docs/statistics.md §3.3).

    f, n_hat, kappa: per-lag arrays (kappa in [2, inf]); N scalar -> (L,), N array (M,) -> (M, L).
    inf where N̂ = inf.
    """
    f = real_array("f", f, ndim=1, nonneg=True)
    n_hat = real_array("n_hat", n_hat, ndim=1, positive=True, allow_inf=True)
    k = real_array("kappa", kappa, ndim=1, allow_inf=True)
    same_length(f=f, n_hat=n_hat, kappa=k)
    if not (k >= 2.0 - 1e-12).all():
        raise ValueError(f"kappa must be >= 2 (kappa = alpha/(alpha-1), alpha <= 2), got min {k.min()}")
    N = real_array("N", N, positive=True)
    with np.errstate(invalid="ignore"):
        ratio = n_hat / N[..., None]
        out = np.where(np.isinf(n_hat), np.inf, f * ratio ** (1.0 / k))
    return out if out.ndim > 1 else out.reshape(-1)


@dataclasses.dataclass(frozen=True)
class DetectionTable:
    """Per-lag detection summary (docs/statistics.md §3.3); arrays have the lag shape except ``h_n`` (n_grid)."""
    lags: np.ndarray
    mean: np.ndarray
    alpha: np.ndarray
    sigma: np.ndarray
    kappa: np.ndarray       # inf where α̂ = 1
    n_hat: np.ndarray       # inf where no N in the grid suffices
    n_star: np.ndarray
    reliable: np.ndarray    # bool, from the tail fit
    method: tuple           # tail-fit method per lag
    n_grid: np.ndarray
    h_n: np.ndarray         # Ĥ_N for each N in n_grid
    eps: float
    n_samples: np.ndarray = None   # samples per lag n_ℓ
    noise: str = "lag"             # the null: "lag" (each lag's own spread) or "full" (the whole update's)
    floors: tuple = ()             # the author's floors applied ("snr", "ecf"), docs/fidelity.md
    mean_bound: str = "none"       # "lower": detected on mean_lo (docs/statistics.md §3.3.3); "none": on |m̄|
    mean_lo: np.ndarray = None     # the lower 99.9% bound of |m̄| per lag (None with mean_bound "none")

    def to_dict(self) -> dict:
        """JSON-friendly: lists of floats, inf as the string "inf"."""
        def conv(v):
            if isinstance(v, np.ndarray):
                return [x if not (isinstance(x, float) and np.isinf(x)) else "inf" for x in v.tolist()]
            return list(v) if isinstance(v, tuple) else v
        return {k: conv(v) for k, v in dataclasses.asdict(self).items()}


def _rows(samples_per_lag):
    """(n_lags, n) array or a sequence of 1-D arrays (ragged: one per lag) → list of float rows."""
    if isinstance(samples_per_lag, (list, tuple)) and samples_per_lag and np.ndim(samples_per_lag[0]) == 1:
        return [real_array(f"samples_per_lag[{i}]", r, ndim=1) for i, r in enumerate(samples_per_lag)]
    return list(real_array("samples_per_lag", samples_per_lag, ndim=2))


def _check_floors(floors, conv):
    if floors is None:                    # the conventions' own (lwsim: none; author: FLOORS)
        return conv.detection_floors
    if isinstance(floors, str):
        floors = (floors,)
    try:
        floors = tuple(floors)
    except TypeError:
        raise TypeError(f"floors must be None or a sequence of names from {FLOORS}, got {floors!r}") from None
    bad = [f for f in floors if f not in FLOORS]
    if bad:
        raise ValueError(f"floors must be names from {FLOORS}, got {bad}")
    return tuple(f for f in FLOORS if f in floors)


def _noise_rows(noise_samples, n_lags, n_seq):
    """The "full" null's samples → (rows, index per lag): one row shared by every lag (1-D input)
    or one row per lag ((n_lags, n) input); each distinct row is fitted once."""
    ns = real_array("noise_samples", noise_samples)
    if ns.ndim == 1:
        return [ns], np.zeros(n_lags, dtype=int)
    if ns.ndim != 2 or ns.shape[0] != n_lags:
        raise ValueError(f"noise_samples must be 1-D (one row for every lag) or ({n_lags}, n), got shape {ns.shape}")
    return list(ns), np.arange(n_lags)


def detection_table(samples_per_lag, lags, n_grid, eps=20.0, method="auto", seed=0, n_boot=200,
                    conventions="lwsim", *, min_samples=None, cap_budget=False, fit_subsample=None,
                    noise="lag", noise_samples=None, floors=None, mean_bound=None):
    """Fit each lag's matched-statistic samples and apply the detection rule over a budget grid.

    samples_per_lag: (n_lags, n_samples) finite array, or a sequence of n_lags 1-D arrays whose
    lengths may differ (the instantaneous statistic has B(T − ℓ) samples at lag ℓ);
    lags: (n_lags,); n_grid: budgets N.
    m̄ is the sample mean; (α̂, σ̂) come from :func:`fit_alpha` on the samples around m̄ (σ̂ is
    their dispersion scale; the fits are location-invariant, centring just makes that explicit).
    conventions: passed to :func:`fit_alpha` ("author": docs/fidelity.md).

    Options of the author's runs (docs/statistics.md §3.3, docs/fidelity.md), off by default:

    - ``min_samples`` (int ≥ 20 or None): a lag with fewer samples n_ℓ is not fitted: α̂ = 2,
      σ̂ = 0, unreliable, method "too_few", and it is never detectable (N̂ = N* = inf). The
      author's code does this below 500 samples (``--min_samples_alpha``, 1000 in the final
      runs). None: every lag is fitted (each needs ≥ 20 samples; fit_alpha flags n < 500).
    - ``cap_budget``: a budget N uses min(N, n_ℓ) samples (the earlier code, where N counts time
      points): lag ℓ is detectable at N iff SNR(ℓ, min(N, n_ℓ)) > ε, and N̂(ℓ) is that capped
      budget min(N, n_ℓ) for the smallest such N. N* is not capped.
    - ``fit_subsample`` (int ≥ 20 or None): fit (α̂, σ̂) on at most this many samples drawn
      without replacement from ``seed`` (the earlier code's ECF used 10⁵); m̄ uses all samples.

    The null (docs/statistics.md §3.3): ``noise="lag"`` fits each lag's own samples (the spread of
    the lag's statistic, carried by the same transport as its mean); ``noise="full"`` tests each
    lag's m̄ against the spread of ``noise_samples``, the whole per-sequence update along the same
    directions (:meth:`lwsim.diagnostics.MatchedStatistic.full_null` gives both in the same units):
    1-D (one row for every lag, fitted once) or (n_lags, n). α̂, σ̂, κ̂, ``reliable``, ``method``
    and ``n_samples`` are then the noise's. ``floors`` (None: the conventions' — none for "lwsim",
    both for "author"; or a subset of ("snr", "ecf")): the author's floors, "snr": SNR = 0 where
    σ̂ ≤ 1e−12; "ecf": the author's ECF grid for a tiny IQR (:func:`.tailfit.ecf_fit`).

    ``mean_bound`` (None: the conventions' ``detection_mean`` — "lower" for lwsim, "none" for the
    author; or "lower" | "none"): "lower" detects on the lower 99.9% confidence bound of |m̄|,
    max(0, |m̄| − q_{0.9995}(α̂_ℓ) σ̂_ℓ n_ℓ^{−1/κ̂_ℓ}), with the lag's own tail fit (α̂_ℓ, σ̂_ℓ) and
    sample count n_ℓ (under ``noise="full"`` a McCulloch fit of the lag's own samples), in N̂ and N*
    (docs/statistics.md §3.3.3): a lag whose true mean is zero is then detected with probability
    at most 0.1% at any N. ``mean`` stays the point estimate; ``mean_lo`` holds the bound.
    """
    rows = _rows(samples_per_lag)
    lags = real_array("lags", lags, ndim=1, min_len=1, positive=True)
    if len(rows) != lags.size:
        raise ValueError(f"mismatched lengths: samples_per_lag has {len(rows)} rows, lags has {lags.size}")
    if noise not in ("lag", "full"):
        raise ValueError(f"noise must be 'lag' or 'full', got {noise!r}")
    if (noise == "full") != (noise_samples is not None):
        raise ValueError("noise_samples is required with noise='full' and only used with it")
    conv = as_conventions(conventions)
    floors = _check_floors(floors, conv)   # fit_alpha gets the keyword as given
    if mean_bound is None:
        mean_bound = "lower" if conv.detection_mean == "lower_bound" else "none"
    if mean_bound not in ("lower", "none"):
        raise ValueError(f"mean_bound must be None, 'lower' or 'none', got {mean_bound!r}")
    tiny_iqr = "author" if "ecf" in floors else "lwsim"
    sigma_floor = AUTHOR_SIGMA_FLOOR if "snr" in floors else None
    mean = np.array([r.mean() for r in rows])           # the signal m̄(ℓ) under either null
    lag_rows = rows
    if noise == "full":
        rows, which = _noise_rows(noise_samples, lags.size, rows[0].size)
    else:
        which = np.arange(lags.size)
    grid = real_array("n_grid", n_grid, ndim=1, min_len=1, positive=True)
    eps = check_real("eps", eps, lo=0.0, lo_open=True)
    if min_samples is not None:
        min_samples = check_int("min_samples", min_samples, minimum=MIN_SAMPLES)
    if not isinstance(cap_budget, bool):
        raise TypeError(f"cap_budget must be a bool, got {type(cap_budget).__name__}")
    if fit_subsample is not None:
        fit_subsample = check_int("fit_subsample", fit_subsample, minimum=MIN_SAMPLES)
    counts = np.array([r.size for r in rows])
    floor = MIN_SAMPLES if min_samples is None else 1
    if (counts < floor).any():
        i = int(np.argmin(counts))
        raise ValueError(f"samples_per_lag needs at least {MIN_SAMPLES} values per lag, got {counts[i]} "
                         f"at lag {lags[i]:g} (or set min_samples)")
    rng = as_rng(seed)
    too_few = np.zeros(len(rows), dtype=bool) if min_samples is None else counts < min_samples
    fits = []
    for row, skip in zip(rows, too_few):
        if skip:
            fits.append(None)
            continue
        centre = row.mean()             # the fits are location-invariant; centring makes it explicit
        if fit_subsample is not None and row.size > fit_subsample:
            row = row[np.sort(rng.choice(row.size, fit_subsample, replace=False))]
        fits.append(fit_alpha(row - centre, method=method, n_boot=n_boot, seed=rng, conventions=conventions,
                              tiny_iqr=tiny_iqr))
    fits, too_few, counts = [fits[i] for i in which], too_few[which], counts[which]   # per lag
    alpha = np.array([2.0 if f is None else f.alpha for f in fits])
    sigma = np.array([0.0 if f is None else f.sigma for f in fits])
    mean_lo, signal = None, mean
    if mean_bound == "lower":
        # the error of m̄(ℓ) is the lag's own: its own fit (under "full" a McCulloch point fit of
        # the lag's samples, fitted here) and its own sample count
        if noise == "full":
            own = [mcculloch_point(np.sort(r - r.mean())) for r in lag_rows]
            a_own, s_own = np.array([o[0] for o in own]), np.array([o[1] for o in own])
        else:
            a_own, s_own = alpha, sigma
        n_own = np.array([r.size for r in lag_rows], dtype=float)
        mean_lo = np.asarray(mean_lower_bound(mean, np.clip(a_own, 1.0, 2.0), s_own, n_own), dtype=float).reshape(-1)
        signal = mean_lo
    if cap_budget:
        used = np.minimum(grid[None, :], counts[:, None])                       # (n_lags, G)
        ok = np.asarray(detectable(signal[:, None], alpha[:, None], sigma[:, None], used, eps, sigma_floor))
        n_hat = np.where(ok, used, np.inf).min(axis=-1)
    else:
        n_hat = np.asarray(sample_complexity(signal, alpha, sigma, grid, eps, sigma_floor), dtype=float).reshape(-1)
    nstar = np.asarray(n_star(signal, alpha, sigma, eps, sigma_floor), dtype=float).reshape(-1)
    n_hat, nstar = np.where(too_few, np.inf, n_hat), np.where(too_few, np.inf, nstar)  # never detectable
    return DetectionTable(
        lags=lags, mean=mean, alpha=alpha, sigma=sigma, kappa=_kappa_ext(alpha).reshape(-1),
        n_hat=n_hat, n_star=nstar,
        reliable=np.array([f is not None and f.reliable for f in fits]),
        method=tuple("too_few" if f is None else f.method for f in fits),
        n_grid=grid, h_n=np.asarray(learnability_window(lags, n_hat, grid)).reshape(-1), eps=eps,
        n_samples=counts.astype(float), noise=noise, floors=floors, mean_bound=mean_bound, mean_lo=mean_lo)
