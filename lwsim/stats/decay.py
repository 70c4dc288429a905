"""Decay-law fits of an envelope f(ℓ) and the master proportionality check (docs/statistics.md §3.4–3.5).

All fits are least squares on log f. Model selection is by AIC (lowest wins; BIC's choice is
reported too). Decisions:
- window: points with f > floor (and f > 0); when the logarithmic law is a candidate, also ℓ > 1
  (log log ℓ must exist), applied to *every* law so that all are fitted on the same points and
  their AIC/BIC are comparable; then ``trim`` (a fraction) of the points is cut at each end.
- AIC/BIC use max(SSR/n, 1e−20): an exact fit (noise-free planted data, SSR ~ 1e−30) must not
  win on round-off, so exact ties are decided by the parameter penalty.
- R² = 1 − SSR/SST in log space (SST = 0, a flat envelope: R² = 1 if SSR ≤ 1e−20·n, else 0).
- Known behaviour of AIC here: the tempered law nests the power law (ℓ_c → ∞) and the exponential
  (β = 0, k = 1), so on *noisy* 2-parameter envelopes AIC picks "tempered" in ~5–10% of draws
  (measured: 5/100 power, 10/100 exponential at 2% log-noise, 400 lags); BIC did not (0/100).
  ``selected_bic`` is the conservative choice; the papers leave the criterion open.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.optimize import minimize

from ..conventions import as_conventions
from ._checks import check_int, check_real, real_array, same_length
from .decay_author import AUTHOR_TEMPERED_P, tempered_author

LAWS = ("exponential", "power", "logarithmic", "tempered")
N_PARAMS = {"exponential": 2, "power": 2, "logarithmic": 2, "tempered": 4}
_VAR_FLOOR = 1e-20


@dataclasses.dataclass(frozen=True)
class LawFit:
    """One law's least-squares fit in log space (docs/statistics.md §3.4)."""
    law: str
    params: dict
    r2: float
    ssr: float
    aic: float
    bic: float
    n: int
    p: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class DecayFit:
    """All law fits on one window; ``selected`` by AIC (``selected_bic`` by BIC).

    See docs/statistics.md §3.4.
    """
    fits: dict
    selected: str
    selected_bic: str
    n: int
    window: tuple  # (first lag, last lag) used

    def to_dict(self) -> dict:
        return {"fits": {k: v.to_dict() for k, v in self.fits.items()}, "selected": self.selected,
                "selected_bic": self.selected_bic, "n": self.n, "window": list(self.window)}


def _linear(design, y):
    """OLS of y on the columns of design: (coefficients, SSR)."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    r = y - design @ coef
    return coef, float(r @ r)


_LOG_MAX = math.log(np.finfo(float).max)  # ≈ 709.78: larger log A (or log C) overflows exp


def _finite_exp(v):
    """exp(v) for a log-amplitude the caller has already bounded (never raises OverflowError)."""
    return math.exp(v) if v < _LOG_MAX else math.inf


def _tempered(lags, y, k_grid, lc_grid):
    """y = log A − β log ℓ − (ℓ/ℓ_c)^k: linear in (log A, β) for fixed (k, ℓ_c).

    The grid gives the profiled SSR for every (k, ℓ_c) at once (one QR of the fixed design); the
    best grid point is then refined by bounded Nelder–Mead on (log k, log ℓ_c) — variable
    projection. Why bounded: unbounded, the refinement can run to a degenerate limit (k → 0,
    ℓ_c → 0, where (ℓ/ℓ_c)^k ≈ e^{k log(1/ℓ_c)}(1 + k log ℓ + …) mimics a log² ℓ term) with
    log A in the thousands; so (k, ℓ_c) stay in the grid's box, and a candidate whose (ℓ/ℓ_c)^k
    is not finite or whose A = e^{log A} is not a positive finite float is rejected (SSR = inf).
    Returns (None, inf) when every grid point is rejected (only possible with user grids).
    """
    design = np.column_stack([np.ones_like(lags), -np.log(lags)])
    q, r = np.linalg.qr(design)

    def profiled(z):  # rows of z are (ℓ/ℓ_c)^k → profiled SSR per row, inf where rejected
        with np.errstate(over="ignore", invalid="ignore"):
            ok = np.isfinite(z).all(-1)
            resp = np.where(ok[:, None], y + z, 0.0)
            proj = resp @ q
            ssr = (resp ** 2).sum(-1) - (proj ** 2).sum(-1)
            log_a = np.linalg.solve(r, proj.T)[0]
        return np.where(ok & np.isfinite(ssr) & (np.abs(log_a) < _LOG_MAX), ssr, np.inf)  # A ∈ (0, inf)

    kk, cc = np.meshgrid(k_grid, lc_grid, indexing="ij")
    with np.errstate(over="ignore"):
        ssr = profiled((lags / cc.reshape(-1, 1)) ** kk.reshape(-1, 1)).reshape(kk.shape)
    if not np.isfinite(ssr).any():
        return None, math.inf
    i, j = np.unravel_index(np.argmin(ssr), ssr.shape)
    box = [(math.log(k_grid.min()), math.log(k_grid.max())), (math.log(lc_grid.min()), math.log(lc_grid.max()))]

    def objective(v):
        with np.errstate(over="ignore"):
            return float(profiled(((lags / math.exp(v[1])) ** math.exp(v[0]))[None])[0])

    x0 = [math.log(k_grid[i]), math.log(lc_grid[j])]
    if box[0][0] < box[0][1] or box[1][0] < box[1][1]:
        # tolerances relative to the SSR, and at most 400 iterations: an absolute fatol below the
        # SSR's float resolution, or a valley along the box's edge, made the simplex run to 4000
        # iterations for parameters equal to 6 digits (timings: docs/cluster.md, cost-model accuracy)
        res = minimize(objective, x0, method="Nelder-Mead", bounds=box,
                       options=dict(xatol=1e-8, fatol=1e-12 * max(float(ssr[i, j]), 1e-300), maxiter=400))
        better = np.isfinite(res.fun) and res.fun <= ssr[i, j] and np.isfinite(res.x).all()
    else:  # a one-point grid: nothing to refine
        better = False
    k, lc = (math.exp(res.x[0]), math.exp(res.x[1])) if better else (float(k_grid[i]), float(lc_grid[j]))
    coef, s = _linear(design, y + (lags / lc) ** k)
    return dict(A=_finite_exp(coef[0]), beta=float(coef[1]), l_c=float(lc), k=float(k)), s


def envelope_floor(f, quantile=0.001, scale=0.01, min_floor=1e-300, factor=10.0) -> float:
    """The author's fit-window floor for an envelope: factor · max(min_floor, scale · Q_quantile(f > 0)),
    i.e. 10 · max(1e−300, 0.01 · Q₀.₀₀₁ of the positive values) by default (docs/statistics.md §3.4,
    docs/fidelity.md). Pass it as ``fit_decay(..., floor=envelope_floor(f), trim=0.02)``; the author
    keeps f ≥ floor, :func:`fit_decay` keeps f > floor (equal only on a tie). min_floor if no f > 0.
    """
    f = real_array("f", f, ndim=1)
    quantile = check_real("quantile", quantile, lo=0.0, hi=1.0)
    scale = check_real("scale", scale, lo=0.0)
    min_floor = check_real("min_floor", min_floor, lo=0.0)
    factor = check_real("factor", factor, lo=0.0)
    pos = f[f > 0]
    q = float(np.quantile(pos, quantile)) if pos.size else 0.0
    return float(factor * max(min_floor, scale * q))


K_RANGE = (0.2, 3.0)          # the tempered law's default k grid ends (57 values), its refinement box
LC_SPAN = (0.1, 100.0)        # ... and its ℓ_c grid: [ℓ_min/10, 100 ℓ_max] (80 log-spaced values)


def _fit_window(lags, f, floor, trim, log_law):
    """The points every law is fitted on: sorted by lag, f > floor (and ℓ > 1 when the logarithmic
    law is a candidate), then ``trim`` of them cut at each end (module docstring)."""
    order = np.argsort(lags)
    lags, f = lags[order], f[order]
    keep = f > floor
    if log_law:
        keep &= lags > 1.0
    lags, f = lags[keep], f[keep]
    cut = int(math.floor(trim * lags.size))
    return lags[cut:lags.size - cut], f[cut:f.size - cut]


def fit_decay(lags, f, floor=0.0, trim=0.0, min_points=8, laws=LAWS, k_grid=None, lc_grid=None,
              conventions="lwsim") -> DecayFit:
    """Fit f(ℓ) by exponential C e^{−λℓ}, power C ℓ^{−β}, logarithmic C (log ℓ)^{−γ} and tempered
    power A ℓ^{−β} exp(−(ℓ/ℓ_c)^k) laws, least squares on log f (docs/statistics.md §3.4).

    Reports per law: params, R², SSR, AIC = n log(SSR/n) + 2p, BIC = n log(SSR/n) + p log n; the
    selected regime is the lowest AIC. Tempered grids default to k ∈ [0.2, 3] (57 values) and
    ℓ_c log-spaced over [ℓ_min/10, 100 ℓ_max] (80 values), refined locally inside the grid's box
    (docs/statistics.md §3.4). On a finite, positive f with ≥ min_points usable points it never
    raises and every reported criterion is finite; a law with no finite fit (only the tempered law,
    only with user grids that make A over- or underflow) is left out of ``fits``.
    conventions="author": the author's tempered law (free cutoff coefficient, p = 5, the author's
    grids, no refinement; :mod:`lwsim.stats.decay_author`, docs/fidelity.md).
    """
    author_law = as_conventions(conventions).tempered_law == "free_coefficient"
    lags = real_array("lags", lags, ndim=1, positive=True)
    f = real_array("f", f, ndim=1)
    same_length(lags=lags, f=f)
    floor = check_real("floor", floor, lo=0.0)
    trim = check_real("trim", trim, lo=0.0, hi=0.5, hi_open=True)
    min_points = check_int("min_points", min_points, minimum=5)
    laws = tuple(laws)
    if not laws or any(law not in LAWS for law in laws):
        raise ValueError(f"laws must be a non-empty subset of {LAWS}, got {laws!r}")
    if np.unique(lags).size != lags.size:
        raise ValueError("lags must be distinct")
    lags, f = _fit_window(lags, f, floor, trim, "logarithmic" in laws)
    n = lags.size
    if n < min_points:
        raise ValueError(f"f has only {n} usable points in the fit window (need min_points={min_points}); "
                         "check floor/trim and that f is positive")
    y = np.log(f)
    sst = float(((y - y.mean()) ** 2).sum())
    fits = {}
    for law in laws:
        if law == "tempered":
            kg = (np.linspace(*K_RANGE, 57) if k_grid is None
                  else real_array("k_grid", k_grid, ndim=1, min_len=1, positive=True))
            lg = (np.geomspace(lags[0] * LC_SPAN[0], lags[-1] * LC_SPAN[1], 80) if lc_grid is None
                  else real_array("lc_grid", lc_grid, ndim=1, min_len=1, positive=True))
            if author_law:   # the author's grids unless given
                params, ssr = tempered_author(lags, y, None if k_grid is None else kg,
                                              None if lc_grid is None else lg)
            else:
                params, ssr = _tempered(lags, y, kg, lg)
            if params is None:  # only with user grids: no (k, ℓ_c) gives a finite fit
                continue
        else:
            # only the chosen law's regressor: log log ℓ is undefined at ℓ = 1, which the
            # logarithmic law's window excludes but the others keep
            x = (lags if law == "exponential" else np.log(lags) if law == "power"
                 else np.log(np.log(lags)))
            coef, ssr = _linear(np.column_stack([np.ones(n), -x]), y)
            name = {"exponential": "lambda", "power": "beta", "logarithmic": "gamma"}[law]
            params = {"C": _finite_exp(coef[0]), name: float(coef[1])}
        p = AUTHOR_TEMPERED_P if (law == "tempered" and author_law) else N_PARAMS[law]
        ll = n * math.log(max(ssr / n, _VAR_FLOOR))
        r2 = 1.0 - ssr / sst if sst > 0 else (1.0 if ssr <= _VAR_FLOOR * n else 0.0)
        fits[law] = LawFit(law, params, float(r2), float(ssr), ll + 2 * p, ll + p * math.log(n), n, p)
    return DecayFit(fits, min(fits, key=lambda k: fits[k].aic), min(fits, key=lambda k: fits[k].bic),
                    n, (float(lags[0]), float(lags[-1])))


@dataclasses.dataclass(frozen=True)
class MasterFit:
    """log N̂ = intercept + slope · (−κ̂ log f) (docs/statistics.md §3.5; theory: slope 1)."""
    slope: float
    intercept: float
    r2: float
    n: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def fit_master(n_hat, kappa, f) -> MasterFit:
    """Regress log N̂(ℓ) on −κ̂(ℓ) log f(ℓ) across lags (docs/statistics.md §3.5).

    Lags with N̂ = inf (not detectable), κ̂ = inf or f ≤ 0 carry no information and are dropped;
    what remains needs ≥ 10 points and ≥ 3 distinct N̂ (else ValueError).
    """
    n_hat = real_array("n_hat", n_hat, ndim=1, positive=True, allow_inf=True)
    kappa = real_array("kappa", kappa, ndim=1, positive=True, allow_inf=True)
    f = real_array("f", f, ndim=1, nonneg=True)
    same_length(n_hat=n_hat, kappa=kappa, f=f)
    ok = np.isfinite(n_hat) & np.isfinite(kappa) & (f > 0)
    n = int(ok.sum())
    if n < 10 or np.unique(n_hat[ok]).size < 3:
        raise ValueError(f"fit_master needs >= 10 usable lags (finite n_hat and kappa, f > 0) with >= 3 "
                         f"distinct n_hat; got {n} lags, {np.unique(n_hat[ok]).size} distinct n_hat")
    x, y = -kappa[ok] * np.log(f[ok]), np.log(n_hat[ok])
    coef, ssr = _linear(np.column_stack([np.ones(n), x]), y)
    sst = float(((y - y.mean()) ** 2).sum())
    if sst == 0 or np.ptp(x) == 0:
        raise ValueError("fit_master: -kappa*log(f) or log(n_hat) is constant across lags; slope undefined")
    return MasterFit(float(coef[1]), float(coef[0]), 1.0 - ssr / sst, n)


def fit_master_window(n_hat, kappa, f, alpha, lags, window=None, alpha_min=1.01) -> MasterFit:
    """The master check the author's way (docs/statistics.md §3.5): seed-average, then select.

    Inputs are (seeds, lags) arrays (or one seed, 1-D). Each quantity is averaged over seeds
    (arithmetic mean, so a lag with N̂ = inf in any seed stays inf and is dropped), then the lags
    kept are those inside ``window`` = (ℓ_lo, ℓ_hi) (inclusive; typically the power-law fit window
    of :func:`fit_decay`, ``DecayFit.window``; None: all lags) with mean α̂ > ``alpha_min`` (1.01:
    κ̂ = α̂/(α̂ − 1) explodes near α̂ = 1) and finite mean N̂. On those, :func:`fit_master` regresses
    log N̄(ℓ) = intercept + slope · (−κ̄(ℓ) log f̄(ℓ)) and needs ≥ 10 points, ≥ 3 distinct N̄.
    """
    n_hat = np.atleast_2d(real_array("n_hat", n_hat, positive=True, allow_inf=True))
    kappa = np.atleast_2d(real_array("kappa", kappa, positive=True, allow_inf=True))
    f = np.atleast_2d(real_array("f", f, nonneg=True))
    alpha = np.atleast_2d(real_array("alpha", alpha, positive=True))
    lags = real_array("lags", lags, ndim=1, positive=True)
    if n_hat.ndim != 2:
        raise ValueError(f"n_hat must be 1-D (lags) or 2-D (seeds, lags), got ndim={n_hat.ndim}")
    for name, arr in (("kappa", kappa), ("f", f), ("alpha", alpha)):
        if arr.shape != n_hat.shape:
            raise ValueError(f"{name} must have the shape of n_hat {n_hat.shape}, got {arr.shape}")
    if lags.size != n_hat.shape[1]:
        raise ValueError(f"lags must have one entry per column of n_hat ({n_hat.shape[1]}), got {lags.size}")
    alpha_min = check_real("alpha_min", alpha_min, lo=1.0)
    keep = np.ones(lags.size, bool)
    if window is not None:
        if len(window) != 2 or not window[0] <= window[1]:
            raise ValueError(f"window must be (lo, hi) with lo <= hi, got {window!r}")
        keep &= (lags >= window[0]) & (lags <= window[1])
    nh, ka, fm, al = (a.mean(axis=0) for a in (n_hat, kappa, f, alpha))
    keep &= (al > alpha_min) & np.isfinite(nh)
    return fit_master(nh[keep], ka[keep], fm[keep])


NESTED_DELTA_BIC = 10.0   # "very strong" evidence on the BIC scale (Kass & Raftery 1995)


@dataclasses.dataclass(frozen=True)
class NestedExponentialTest:
    """The exponential law tested against the tempered law that contains it (β = 0, k = 1):
    ΔBIC = BIC_exponential − BIC_tempered (> 0 favours the tempered law), the tempered fit's β and
    k with 95% Gauss–Newton intervals, and the verdicts of :func:`nested_exponential`.

    See docs/statistics.md §3.4.
    """
    delta_bic: float
    lam: float
    beta: float
    beta_ci: tuple
    k: float
    k_ci: tuple
    l_c: float
    at_edge: bool          # the tempered (k, ℓ_c) sits on its grid box's edge: intervals unreliable
    exponential_ok: bool
    slower: bool
    n: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _tempered_cov(lags, y, p):
    """95% Gauss–Newton half-widths of (log A, β, k, log ℓ_c) at the least-squares optimum:
    cov = s² (JᵀJ)⁻¹, s² = SSR/(n − 4), J the model's Jacobian. Residuals of an envelope are
    correlated along ℓ, so these intervals are optimistic (narrower than the truth)."""
    L = np.log(lags)
    c = math.log(p["l_c"])
    z = np.exp(p["k"] * (L - c))
    J = np.column_stack([np.ones_like(L), -L, -z * (L - c), z * p["k"]])
    resid = y - (math.log(p["A"]) - p["beta"] * L - z)
    n = lags.size
    s2 = float(resid @ resid) / max(n - 4, 1)
    cov = s2 * np.linalg.pinv(J.T @ J)
    return 1.959964 * np.sqrt(np.clip(np.diag(cov), 0.0, None))


def nested_exponential(lags, f, floor=0.0, trim=0.0, delta_bic=NESTED_DELTA_BIC) -> NestedExponentialTest:
    """Does f(ℓ) decay exponentially? Test the exponential C e^{−λℓ} against the tempered law
    A ℓ^{−β} e^{−(ℓ/ℓ_c)^k} that nests it (β = 0, k = 1, ℓ_c = 1/λ), both fitted by
    :func:`fit_decay` on the same window (docs/statistics.md §3.4). Which law BIC *selects* cannot
    answer this: the tempered law wins whenever its two extra parameters buy a little fit.

    Rule: ``exponential_ok`` iff ΔBIC = BIC_exp − BIC_tempered ≤ ``delta_bic`` (default 10), or the
    tempered fit's 95% intervals contain both β = 0 and k = 1 (intervals not used when (k, ℓ_c) sits
    on the fit's grid box: ``at_edge``). ``slower`` (decays more slowly than any exponential at the
    window's far end) iff not ``exponential_ok`` and either k's interval lies below 1 (at the box
    edge: k̂ < 1; a stretched exponential) or ℓ_c exceeds the largest lag (a power law over the window).
    """
    delta_bic = check_real("delta_bic", delta_bic, lo=0.0)
    dec = fit_decay(lags, f, floor=floor, trim=trim, laws=("exponential", "tempered"))
    if "tempered" not in dec.fits:
        raise ValueError("the tempered law has no finite fit on this envelope")
    e, t = dec.fits["exponential"], dec.fits["tempered"]
    lg, fv = _fit_window(np.asarray(lags, float), np.asarray(f, float), floor, trim, False)  # fit_decay's points
    hw = _tempered_cov(lg, np.log(fv), t.params)
    beta, k = t.params["beta"], t.params["k"]
    beta_ci = (beta - hw[1], beta + hw[1])
    k_ci = (k - hw[2], k + hw[2])
    lc_lo, lc_hi = lg[0] * LC_SPAN[0], lg[-1] * LC_SPAN[1]
    at_edge = bool(min(abs(k - K_RANGE[0]), abs(k - K_RANGE[1])) < 1e-6 or t.params["l_c"] <= lc_lo * (1 + 1e-6)
                   or t.params["l_c"] >= lc_hi * (1 - 1e-6))
    d = float(e.bic - t.bic)
    # on the grid box's edge the Gauss–Newton intervals are not evidence (the optimum is not
    # interior): there ΔBIC decides alone, and "slower" reads the point estimates
    inside = beta_ci[0] <= 0.0 <= beta_ci[1] and k_ci[0] <= 1.0 <= k_ci[1]
    ok = d <= delta_bic or (inside and not at_edge)
    k_below = (k < 1.0) if at_edge else (k_ci[1] < 1.0)
    slower = (not ok) and (k_below or t.params["l_c"] > lg[-1])
    return NestedExponentialTest(delta_bic=d, lam=float(e.params["lambda"]), beta=float(beta),
                                 beta_ci=tuple(float(v) for v in beta_ci), k=float(k),
                                 k_ci=tuple(float(v) for v in k_ci), l_c=float(t.params["l_c"]),
                                 at_edge=at_edge, exponential_ok=bool(ok), slower=bool(slower), n=dec.n)
