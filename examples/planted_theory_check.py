"""The planted-model theory check for the three decay regimes (docs/theory.md §4.4).

For an envelope law f(ℓ) — exponential C e^{−λℓ}, power C ℓ^{−β}, logarithmic C (log ℓ)^{−γ} —
plant samples X = c f(ℓ) + SαS(α, σ) at every lag, run lwsim's own pipeline (tail fit, SNR rule,
N̂(ℓ), Ĥ_N; docs/statistics.md §3.2–3.3) over a budget grid and compare the measured window Ĥ_N
with the window H_N that SymPy derives (theory.scaling), and the fitted growth exponent with the
derived one: 1/(λκ) (logarithmic growth), 1/(κβ) (polynomial), 1/(κγ) (exponential growth).

Run: ``python examples/planted_theory_check.py [tiny|small]``.
"""
from __future__ import annotations

import sys

from theory import planted

SIZES = {"tiny": dict(n_lags=24, n_samples=5_000), "small": dict(n_lags=40, n_samples=20_000)}
LAWS = {"exponential": {"lam": 0.1, "C": 1.0}, "power": {"beta": 1.0, "C": 1.0},
        "logarithmic": {"gamma": 1.0, "C": 1.0}}


def main(size: str = "tiny", alpha: float = 1.5, seed: int = 0) -> dict:
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    out = {}
    for law, params in LAWS.items():
        r = planted.planted_check(law, alpha, params=params, sigma=1.0, seed=seed, **SIZES[size])
        out[law] = r
        print(f"{law:12s} α = {alpha}: growth exponent measured {r.exponent_measured:.3f}, "
              f"derived {r.exponent_theory:.3f}; passes: {r.passes}")
    return out


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tiny")
