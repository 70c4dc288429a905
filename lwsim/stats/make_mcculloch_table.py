"""Build the McCulloch quantile table shipped as ``lwsim/data/mcculloch_table.npz`` (docs/statistics.md §3.2).

Run once (about half a minute):  ``python -m lwsim.stats.make_mcculloch_table``.

For unit-scale symmetric α-stable laws, φ(t) = exp(−|t|^α), it tabulates on a fine α grid
  q75(α), q95(α)           the 0.75 and 0.95 quantiles (q25 = −q75, q05 = −q95 by symmetry),
  ratio(α) = (q95 − q05)/(q75 − q25) = q95/q75,   iqr(α) = q75 − q25 = 2 q75.
The estimator inverts ratio(α) and divides the sample IQR by iqr(α̂); it never calls a quantile
routine itself.

Near α = 1 scipy snaps α to 1 when |α − 1| < 0.005 (its integral representation is ill-conditioned
there), which makes the ratio flat and then jump; those grid points are recomputed with an
independent Gil-Pelaez inversion, F(x) = 1/2 + (1/π) ∫₀^∞ e^{−t^α} sin(xt)/t dt, which also serves
as a spot check of scipy elsewhere.

Parametrisation: scipy's ``levy_stable`` default is S1; with β = 0 its scale c gives
φ(t) = exp(−|c t|^α) = exp(−c^α |t|^α), exactly our σ. The script checks this at the ends of the
grid, where closed forms exist: α = 2 is N(0, 2) and α = 1 is Cauchy(0, 1).
"""
from __future__ import annotations

import argparse
import pathlib

import numpy as np

ALPHA_MIN, ALPHA_MAX, ALPHA_STEP = 0.5, 2.0, 0.001
DEFAULT_PATH = pathlib.Path(__file__).resolve().parents[1] / "data" / "mcculloch_table.npz"


def sas_quantiles(alpha: float, probs=(0.75, 0.95)) -> np.ndarray:
    """Quantiles of unit-scale SαS(α) from scipy (slow: ~10 ms per call; table building only).

    See docs/statistics.md §3.2.
    """
    from scipy.stats import levy_stable

    if levy_stable.parameterization != "S1":  # S0 and S1 coincide for β = 0, but be explicit
        raise RuntimeError(f"unexpected levy_stable parameterization {levy_stable.parameterization}")
    return np.asarray(levy_stable.ppf(list(probs), alpha, 0.0, loc=0.0, scale=1.0), dtype=float)


def gil_pelaez_cdf(x: float, alpha: float) -> float:
    """CDF of unit SαS(α) at x > 0 by direct quadrature of the Gil-Pelaez integral (slow, accurate).

    See docs/statistics.md §3.2.
    """
    from scipy.integrate import quad

    t_max = 42.0 ** (1.0 / alpha)  # e^{−t^α} < 1e−18 beyond
    # Split at every 4 half-periods of sin(xt) so each quad piece sees a smooth integrand.
    edges = np.unique(np.r_[0.0, np.arange(np.pi / x, t_max, 4 * np.pi / x), t_max])
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        # sin(xt)/t = x sinc(xt/π): finite at t = 0.
        total += quad(lambda t: np.exp(-t**alpha) * x * np.sinc(x * t / np.pi), lo, hi,
                      epsabs=1e-15, epsrel=1e-13, limit=200)[0]
    return 0.5 + total / np.pi


def gil_pelaez_quantiles(alpha: float, probs=(0.75, 0.95)) -> np.ndarray:
    """Quantiles of unit SαS(α) at ``probs`` by root-finding on :func:`gil_pelaez_cdf`.

    See docs/statistics.md §3.2.
    """
    from scipy.optimize import brentq

    return np.array([brentq(lambda x: gil_pelaez_cdf(x, alpha) - p, 1e-3, 1e3, xtol=1e-14)
                     for p in probs])


def _check_parametrisation() -> None:
    from scipy.stats import cauchy, norm

    q2 = sas_quantiles(2.0)
    want2 = norm.ppf([0.75, 0.95]) * np.sqrt(2.0)  # φ = exp(−t²) is N(0, 2)
    q1 = sas_quantiles(1.0)
    want1 = cauchy.ppf([0.75, 0.95])  # φ = exp(−|t|) is Cauchy(0, 1)
    if not (np.allclose(q2, want2, rtol=1e-9) and np.allclose(q1, want1, rtol=1e-9)):
        raise RuntimeError(f"levy_stable scale mismatch: {q2} vs {want2}, {q1} vs {want1}")


def build(path=DEFAULT_PATH, step: float = ALPHA_STEP) -> pathlib.Path:
    """Build the McCulloch table and write it to ``path``; returns the path.

    See docs/statistics.md §3.2.
    """
    import scipy

    _check_parametrisation()
    n = int(round((ALPHA_MAX - ALPHA_MIN) / step)) + 1
    alpha = np.round(np.linspace(ALPHA_MIN, ALPHA_MAX, n), 12)
    q = np.array([sas_quantiles(a) for a in alpha])
    near_one = (np.abs(alpha - 1.0) < 0.0055) & (alpha != 1.0)  # scipy snaps these to α = 1
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quad's roundoff warnings at the 1e−15 absolute target
        if near_one.any():  # a coarse --step may have no grid point there
            q[near_one] = [gil_pelaez_quantiles(a) for a in alpha[near_one]]
        for a in (0.8, 1.3, 1.7):  # scipy vs the independent integral, away from α = 1
            if not np.allclose(sas_quantiles(a), gil_pelaez_quantiles(a), rtol=1e-9):
                raise RuntimeError(f"scipy levy_stable quantiles disagree with Gil-Pelaez at {a}")
    q75, q95 = q[:, 0], q[:, 1]
    ratio = q95 / q75
    # The inversion needs ratio strictly decreasing in α (heavier tails, wider outer quantiles).
    if not np.all(np.diff(ratio) < 0):
        raise RuntimeError("quantile ratio is not strictly decreasing on the grid")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path, alpha=alpha, q75=q75, q95=q95, ratio=ratio, iqr=2.0 * q75,
        scipy_version=np.array(scipy.__version__), parameterization=np.array("S1, beta=0"),
    )
    return path


TAIL_PATH = DEFAULT_PATH.parent / "sas_tail_quantile.npz"
TAIL_P = 0.9995              # the two-sided 99.9% bound of docs/statistics.md §3.3.3
TAIL_STEP = 0.01
TAIL_GP_BELOW = 1.2          # scipy's levy_stable tail quantiles are wrong near α = 1 (1.05: 305 vs 455)


def build_tail(path=TAIL_PATH, p: float = TAIL_P, step: float = TAIL_STEP) -> pathlib.Path:
    """The p quantile q_p(α) of unit SαS(α) on α ∈ [1, 2] (docs/statistics.md §3.3.3): Gil-Pelaez
    root-finding below α = 1.2, where scipy's ppf is off by up to 45%, scipy above (checked against
    Gil-Pelaez at 1.3, 1.6, 1.9); α = 1 is Cauchy, α = 2 is N(0, 2). About a minute.
    """
    import warnings

    import scipy
    from scipy.optimize import brentq
    from scipy.stats import cauchy, levy_stable, norm

    n = int(round(1.0 / step)) + 1
    alpha = np.round(np.linspace(1.0, 2.0, n), 12)
    q = np.empty(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, a in enumerate(alpha):
            if a == 1.0:
                q[i] = cauchy.ppf(p)
            elif a == 2.0:
                q[i] = norm.ppf(p) * np.sqrt(2.0)
            elif a < TAIL_GP_BELOW:
                q[i] = brentq(lambda x: gil_pelaez_cdf(x, a) - p, 50.0, 2000.0, xtol=1e-9, rtol=1e-12)
            else:
                q[i] = levy_stable.ppf(p, a, 0.0)
        for a in (1.3, 1.6, 1.9):
            qa = q[np.argmin(np.abs(alpha - a))]
            if abs(gil_pelaez_cdf(qa, a) - p) > 1e-9:
                raise RuntimeError(f"scipy levy_stable tail quantile disagrees with Gil-Pelaez at {a}")
    if not np.all(np.diff(q) < 0):
        raise RuntimeError("tail quantile is not strictly decreasing in alpha")
    path = pathlib.Path(path)
    np.savez_compressed(path, alpha=alpha, q=q, p=np.array(p), scipy_version=np.array(scipy.__version__),
                        parameterization=np.array("S1, beta=0"))
    return path


def main(argv=None) -> None:
    """Command line: build the table (``--out``, ``--step``); returns None.

    See docs/statistics.md §3.2.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_PATH))
    parser.add_argument("--step", type=float, default=ALPHA_STEP)
    parser.add_argument("--tail", action="store_true",
                        help="build the tail-quantile table (docs/statistics.md §3.3.3) instead")
    args = parser.parse_args(argv)
    if args.tail:
        print("wrote", build_tail(args.out if args.out != str(DEFAULT_PATH) else TAIL_PATH))
        return
    print("wrote", build(args.out, args.step))


if __name__ == "__main__":
    main()
