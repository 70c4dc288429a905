"""Tail-index fits of symmetric α-stable samples: ECF regression, McCulloch, selection (docs/statistics.md §3.2)."""
from __future__ import annotations

import dataclasses

import numba
import numpy as np

from ..conventions import as_conventions
from . import mcculloch
from ._checks import MIN_SAMPLES, as_rng, check_choice, check_int, real_array

N_T = 50                     # ECF grid size (docs/statistics.md §3.2)
T_LO, T_HI = 0.05, 3.0       # grid in units of 1/s, s = IQR/1.349
KEEP = (0.01, 0.95, 5)       # |φ̂|² window and minimum points ...
RELAXED = (1e-4, 0.999, 3)   # ... and the relaxed window
ALPHA_FLOOR_OPEN = 0.1       # α̂ floor for alpha_range="open" (ECF; McCulloch's table starts at 0.5)
CI_MAX_WIDTH = 0.3           # selection: McCulloch bootstrap median only if its CI is narrower


@dataclasses.dataclass(frozen=True)
class TailFit:
    """Result of :func:`fit_alpha`.

    ``method``: how α̂ was obtained — "ecf"; "mcculloch" (explicit; full-sample quantiles);
    "ecf->mcculloch" (method="ecf" but too few usable ECF points); "mcculloch_boot" (auto: the
    bootstrap median); "default_gaussian" (auto: nothing trustworthy, α̂ = 2, unreliable).
    ``ci``: bootstrap 95% percentile interval when McCulloch ran with n_boot > 0, else None.

    See docs/statistics.md §3.2.
    """
    alpha: float
    sigma: float
    reliable: bool
    method: str
    ci: tuple | None
    n: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@numba.njit(cache=True, fastmath=True)
def _ecf_sums(y, t0, dt, n_t):  # pragma: no cover  (compiled)
    """Σ_j cos(t_k y_j), Σ_j sin(t_k y_j) for t_k = t0 + k dt, k < n_t, by rotation (see below)."""
    block = 512  # the block's cos/sin state stays in L1 while all n_t rotations are applied
    sc, ss = np.zeros(n_t), np.zeros(n_t)
    c, s, cw, sw = np.empty(block), np.empty(block), np.empty(block), np.empty(block)
    for a in range(0, y.size, block):
        m = min(block, y.size - a)
        for j in range(m):
            c[j], s[j] = np.cos(t0 * y[a + j]), np.sin(t0 * y[a + j])
            cw[j], sw[j] = np.cos(dt * y[a + j]), np.sin(dt * y[a + j])
        for k in range(n_t):
            acc_c, acc_s = 0.0, 0.0
            for j in range(m):
                cj, sj = c[j], s[j]
                acc_c += cj
                acc_s += sj
                c[j] = cj * cw[j] - sj * sw[j]
                s[j] = cj * sw[j] + sj * cw[j]
            sc[k] += acc_c
            ss[k] += acc_s
    return sc, ss


def _ecf_abs2(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """|φ̂(t)|² = (mean cos ty)² + (mean sin ty)² on a uniform grid t.

    e^{i t_k y} = e^{i t_0 y} (e^{i Δt y})^k: one complex rotation per point and t instead of a
    cos and a sin (50 × 10⁵ transcendental calls cost ~200 ms, numpy rotations ~20 ms, this
    compiled loop ~7 ms). The rounding error grows like k·ε ≈ 1e−14, far below the 0.01 floor
    on |φ̂|² used by the fit.
    """
    sc, ss = _ecf_sums(np.ascontiguousarray(y, dtype=np.float64), float(t[0]), float(t[1] - t[0]), t.size)
    return (sc / y.size) ** 2 + (ss / y.size) ** 2


AUTHOR_IQR_FLOOR = 1e-12     # the author's ECF: below it the grid's scale comes from 1.349·std


def _ecf_scale(x, iqr, tiny_iqr):
    """The ECF grid's scale s (the data are divided by it), or None when the fit gives up.

    tiny_iqr "lwsim": give up when IQR ≤ 1e−10 (docs/statistics.md §3.2). "author" (the author's
    ECF grid, docs/fidelity.md): s = IQR/1.349 while IQR > 1e−12, else s = std (its Gaussian IQR
    1.349·std divided by 1.349), and give up only when that is ≤ 1e−12/1.349 too.
    """
    if tiny_iqr == "lwsim":
        return None if iqr <= 1e-10 else iqr / 1.349
    if iqr > AUTHOR_IQR_FLOOR:
        return iqr / 1.349
    sd_iqr = float(np.std(x)) * 1.349
    return None if sd_iqr <= AUTHOR_IQR_FLOOR else sd_iqr / 1.349


def ecf_fit(x: np.ndarray, alpha_lo: float = 1.0, conventions: str = "lwsim", tiny_iqr: str = "lwsim"):
    """Koutrouvelis regression, symmetric case (docs/statistics.md §3.2): returns (α̂, σ̂, IQR, ok).

    log(−log|φ̂(t)|²) = log(2σ^α) + α log t, weighted least squares with weights
    exp(−2(log|φ̂|² + 0.7)²) on the points with 0.01 < |φ̂|² < 0.95 (≥ 5; else (1e−4, 0.999) with
    ≥ 3; else ok = False: the caller falls back to McCulloch). The data are centred on the median
    and scaled by s = IQR/1.349 (|φ̂| is location-invariant; the scaling only conditions the grid),
    so t ∈ [0.05, 3] in units of 1/s and σ̂ = s·σ̂_scaled. After clipping α̂ to [alpha_lo, 2]
    the intercept is refitted with the slope fixed, so σ̂ = (e^{intercept}/2)^{1/α̂} stays
    consistent with the reported α̂ (identical when no clipping happens).

    conventions="author" (docs/fidelity.md): σ̂ from the intercept of the *unclipped* slope b̂ in
    the data's own units, σ̂ = (e^{ȳ − b̂(ū − log s)}/2)^{1/α̂} — the author's rule; it equals the
    lwsim σ̂ when α̂ = b̂, and is not scale-equivariant otherwise (data × c gives σ̂ × c^{b̂/α̂}).
    tiny_iqr: "lwsim" (give up at IQR ≤ 1e−10) or "author" (the author's floor, :func:`_ecf_scale`).
    """
    conv = as_conventions(conventions)
    check_choice("tiny_iqr", tiny_iqr, {"lwsim", "author"})
    q25, q50, q75 = np.percentile(x, [25, 50, 75])
    iqr = q75 - q25
    s = _ecf_scale(x, iqr, tiny_iqr)
    if s is None:
        return 2.0, 0.0, float(iqr), False
    t = np.linspace(T_LO, T_HI, N_T)  # Decision: uniform grid (as Koutrouvelis), enables the recurrence
    phi2 = _ecf_abs2((x - q50) / s, t)
    for lo, hi, need in (KEEP, RELAXED):
        keep = (phi2 > lo) & (phi2 < hi)
        if keep.sum() >= need:
            break
    else:
        return 2.0, 0.0, float(iqr), False
    lp = np.log(phi2[keep])
    u, y = np.log(t[keep]), np.log(-lp)
    w = np.exp(-2.0 * (lp + 0.7) ** 2)
    w /= w.sum()
    um, ym = w @ u, w @ y
    slope = (w @ ((u - um) * (y - ym))) / (w @ ((u - um) ** 2))
    a = float(np.clip(slope, alpha_lo, 2.0))
    if conv.ecf_sigma == "unclipped_intercept":     # the author's: in the data's units
        sigma = (np.exp(ym - slope * (um - np.log(s))) / 2.0) ** (1.0 / a)
        return a, float(sigma), float(iqr), True
    intercept = ym - a * um
    sigma = s * (np.exp(intercept) / 2.0) ** (1.0 / a)
    return a, float(sigma), float(iqr), True


def _reliable(n, alpha, sigma, iqr, alpha_lo):
    """docs/statistics.md §3.2: unreliable if n < 500, σ̂ ≤ 1e−12, IQR ≤ 1e−10, or α̂ on a boundary with n < 2000.

    The lower boundary is alpha_lo + 0.01 (1.01 for the stable range, docs/statistics.md §3.2).
    """
    at_edge = alpha <= alpha_lo + 0.01 or alpha >= 1.99
    return not (n < 500 or sigma <= 1e-12 or iqr <= 1e-10 or (at_edge and n < 2000))


def fit_alpha(x, method="auto", n_boot=200, seed=0, alpha_range="stable", conventions="lwsim",
              tiny_iqr="lwsim") -> TailFit:
    """Fit SαS(α, σ) to samples x (1-D, finite, ≥ 20 values) — docs/statistics.md §3.2.

    method: "ecf" (Koutrouvelis; McCulloch if too few usable ECF points), "mcculloch" (quantiles on
      the full sample, plus a bootstrap CI if n_boot > 0), or "auto": ECF if reliable and not a
      fallback; else the McCulloch bootstrap median if its 95% CI is narrower than 0.3; else
      α̂ = 2 flagged unreliable ("default_gaussian", σ̂ = IQR / IQR_theory(2)).
    alpha_range: "stable" clips α̂ to [1, 2]; "open" to (0, 2] (ECF floor 0.1, McCulloch 0.5).
    seed: int or Generator for the bootstrap. Deterministic for a given seed.
    conventions: "lwsim" or "author" (docs/fidelity.md): the author's ECF σ̂ (:func:`ecf_fit`)
      and McCulloch table (:func:`lwsim.stats.mcculloch.author_quantile_fit`, also for the
      bootstrap); needs alpha_range="stable" (the author clips α̂ to [1, 2]).
    tiny_iqr: the ECF's handling of a tiny IQR, "lwsim" or "author" (:func:`ecf_fit`).
    """
    check_choice("method", method, {"auto", "ecf", "mcculloch"})
    check_choice("alpha_range", alpha_range, {"stable", "open"})
    conv = as_conventions(conventions)
    if conv.mcculloch_table == "linear_201" and alpha_range != "stable":   # its table holds α ∈ [1, 2]
        raise ValueError("alpha_range must be 'stable' with conventions='author' (the author clips α̂ to [1, 2])")
    n_boot = check_int("n_boot", n_boot, minimum=0)
    if method == "auto" and n_boot < 20:
        raise ValueError(f"n_boot must be >= 20 for method='auto' (it needs a bootstrap CI), got {n_boot}")
    x = real_array("x", x, ndim=1, min_len=MIN_SAMPLES)
    rng = as_rng(seed)
    n = x.size
    lo = 1.0 if alpha_range == "stable" else ALPHA_FLOOR_OPEN

    if method in ("ecf", "auto"):
        a, s, iqr, ok = ecf_fit(x, lo, conventions, tiny_iqr)
        rel = ok and _reliable(n, a, s, iqr, lo)
        if ok and (method == "ecf" or rel):
            return TailFit(a, s, rel, "ecf", None, n)

    xs = np.sort(x)
    lo_m = max(lo, float(mcculloch.table()["alpha"][0]))
    a, s, iqr = mcculloch.mcculloch_point(xs, lo_m, conventions)
    boot = mcculloch.bootstrap_alphas(xs, n_boot, rng, lo_m, conventions) if n_boot > 0 else None
    ci = None if boot is None else tuple(float(v) for v in np.percentile(boot, [2.5, 97.5]))
    if method != "auto":
        name = "mcculloch" if method == "mcculloch" else "ecf->mcculloch"
        return TailFit(a, s, _reliable(n, a, s, iqr, lo_m), name, ci, n)
    if ci[1] - ci[0] < CI_MAX_WIDTH and iqr > 1e-10:
        a = float(np.median(boot))
        s = float(iqr / mcculloch.iqr_theory(a, conventions))
        return TailFit(a, s, _reliable(n, a, s, iqr, lo_m), "mcculloch_boot", ci, n)
    return TailFit(2.0, float(iqr / mcculloch.iqr_theory(2.0, conventions)), False, "default_gaussian", ci, n)
