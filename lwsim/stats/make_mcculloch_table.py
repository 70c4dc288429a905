"""Build the McCulloch quantile table shipped as ``lwsim/data/mcculloch_table.npz`` (03 §3.2).

Run once (about half a minute):  ``python -m lwsim.stats.make_mcculloch_table``.

For unit-scale symmetric α-stable laws, φ(t) = exp(−|t|^α), it tabulates on a fine α grid
  q75(α), q95(α)           the 0.75 and 0.95 quantiles (q25 = −q75, q05 = −q95 by symmetry),
  ratio(α) = (q95 − q05)/(q75 − q25) = q95/q75,   iqr(α) = q75 − q25 = 2 q75.
The estimator inverts ratio(α) and divides the sample IQR by iqr(α̂); it never calls a quantile
routine itself.

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
    """Quantiles of unit-scale SαS(α) from scipy (slow: ~10 ms per call; table building only)."""
    from scipy.stats import levy_stable

    if levy_stable.parameterization != "S1":  # S0 and S1 coincide for β = 0, but be explicit
        raise RuntimeError(f"unexpected levy_stable parameterization {levy_stable.parameterization}")
    return np.asarray(levy_stable.ppf(list(probs), alpha, 0.0, loc=0.0, scale=1.0), dtype=float)


def _check_parametrisation() -> None:
    from scipy.stats import cauchy, norm

    q2 = sas_quantiles(2.0)
    want2 = norm.ppf([0.75, 0.95]) * np.sqrt(2.0)  # φ = exp(−t²) is N(0, 2)
    q1 = sas_quantiles(1.0)
    want1 = cauchy.ppf([0.75, 0.95])  # φ = exp(−|t|) is Cauchy(0, 1)
    if not (np.allclose(q2, want2, rtol=1e-9) and np.allclose(q1, want1, rtol=1e-9)):
        raise RuntimeError(f"levy_stable scale mismatch: {q2} vs {want2}, {q1} vs {want1}")


def build(path=DEFAULT_PATH, step: float = ALPHA_STEP) -> pathlib.Path:
    import scipy

    _check_parametrisation()
    n = int(round((ALPHA_MAX - ALPHA_MIN) / step)) + 1
    alpha = np.round(np.linspace(ALPHA_MIN, ALPHA_MAX, n), 12)
    q = np.array([sas_quantiles(a) for a in alpha])
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_PATH))
    parser.add_argument("--step", type=float, default=ALPHA_STEP)
    args = parser.parse_args(argv)
    print("wrote", build(args.out, args.step))


if __name__ == "__main__":
    main()
