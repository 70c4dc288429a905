"""Symmetric α-stable noise and the concentration exponent κ_α (docs/statistics.md §3.1, docs/theory.md §4.3)."""
from __future__ import annotations

import numpy as np

from ._checks import as_rng, as_size, check_real, real_array


def sample_sas(alpha, sigma=1.0, size=1, seed=None, loc=0.0) -> np.ndarray:
    """Draw SαS(α, σ) samples (plus ``loc``) by Chambers–Mallows–Stuck (docs/statistics.md §3.1).

    Characteristic function φ(t) = exp(i·loc·t − σ^α |t|^α), α ∈ (0, 2]; α = 2 is N(loc, 2σ²),
    α = 1 is Cauchy(loc, σ). With V ~ U(−π/2, π/2) and W ~ Exp(1), the symmetric CMS formula
        X = sin(αV) / cos(V)^{1/α} · (cos((1 − α)V) / W)^{(1 − α)/α}
    is standard SαS(α, 1) for every α (at α = 1 it reduces to tan V, no special case needed).
    ``seed``: int, None or numpy Generator (a Generator is advanced, so repeated calls differ).
    """
    alpha = check_real("alpha", alpha, lo=0.0, hi=2.0, lo_open=True)
    sigma = check_real("sigma", sigma, lo=0.0, lo_open=True)
    loc = check_real("loc", loc)
    shape = as_size(size)
    rng = as_rng(seed)
    v = rng.uniform(-np.pi / 2, np.pi / 2, size=shape)
    w = rng.standard_exponential(size=shape)
    x = np.sin(alpha * v) / np.cos(v) ** (1.0 / alpha)
    x *= (np.cos((1.0 - alpha) * v) / w) ** ((1.0 - alpha) / alpha)
    return loc + sigma * x


def kappa(alpha):
    """Concentration exponent κ_α = α/(α − 1) for α ∈ (1, 2] (κ = 2 at α = 2; κ → ∞ as α → 1).

    The mean of N i.i.d. SαS(α, σ) is SαS(α, σ N^{1/α − 1}) = SαS(α, σ N^{−1/κ_α}) (docs/statistics.md §3.1).
    Scalar in, float out; array in, array out.
    """
    a = real_array("alpha", alpha)
    if not ((a > 1.0) & (a <= 2.0)).all():
        raise ValueError(f"alpha must lie in (1, 2] for kappa, got values in [{a.min()}, {a.max()}]")
    k = a / (a - 1.0)
    return float(k) if k.ndim == 0 else k


def inv_kappa(alpha):
    """1/κ_α = 1 − 1/α on α ∈ [1, 2]: 0 at α = 1 (the mean does not concentrate), 1/2 at α = 2.

    Used by the detection rule so that a tail fit clipped to α̂ = 1 gives κ̂ = ∞ cleanly.

    See docs/statistics.md §3.1.
    """
    a = real_array("alpha", alpha)
    if not ((a >= 1.0) & (a <= 2.0)).all():
        raise ValueError(f"alpha must lie in [1, 2] for the detection rule (fit with alpha_range='stable'), "
                         f"got values in [{a.min()}, {a.max()}]")
    r = 1.0 - 1.0 / a
    return float(r) if r.ndim == 0 else r


def mean_scale(alpha, sigma, n):
    """Scale of the mean of n i.i.d. SαS(α, σ): σ n^{1/α − 1} (docs/statistics.md §3.1)."""
    alpha = check_real("alpha", alpha, lo=0.0, hi=2.0, lo_open=True)
    sigma = check_real("sigma", sigma, lo=0.0, lo_open=True)
    n = real_array("n", n, positive=True)
    out = sigma * n ** (1.0 / alpha - 1.0)
    return float(out) if out.ndim == 0 else out


_TAIL = None
TAIL_P = 0.9995   # the quantile tabulated in lwsim/data/sas_tail_quantile.npz (two-sided 99.9%)


def sas_tail_quantile(alpha):
    """q_{0.9995}(α) of unit SαS(α) (φ(t) = e^{−|t|^α}) on α ∈ [1, 2], log-linear interpolation of the
    table built by ``python -m lwsim.stats.make_mcculloch_table --tail`` (docs/statistics.md §3.3.3)."""
    global _TAIL
    if _TAIL is None:
        import importlib.resources
        with importlib.resources.files("lwsim").joinpath("data/sas_tail_quantile.npz").open("rb") as fh:
            d = np.load(fh)
            _TAIL = (d["alpha"].copy(), np.log(d["q"]))
    a = real_array("alpha", alpha)
    if ((a < 1.0) | (a > 2.0)).any():
        raise ValueError(f"alpha must lie in [1, 2], got {a[(a < 1.0) | (a > 2.0)].ravel()[0]}")
    out = np.exp(np.interp(a, *_TAIL))
    return float(out) if out.ndim == 0 else out


def mean_lower_bound(mean, alpha, sigma, n):
    """Lower 99.9% confidence bound of |m| from the sample mean of n i.i.d. m + SαS(α, σ):
    max(0, |m̄| − q_{0.9995}(α) σ n^{−1/κ_α}) (docs/statistics.md §3.3.3). Broadcasts."""
    m = np.abs(real_array("mean", mean))
    s = real_array("sigma", sigma, nonneg=True)
    n = real_array("n", n, positive=True)
    a = real_array("alpha", alpha)
    out = np.maximum(0.0, m - sas_tail_quantile(a) * s * n ** (-inv_kappa(a)))
    return float(out) if np.ndim(out) == 0 else out
