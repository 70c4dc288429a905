"""Tests of lwsim/figures/studies/theory_check.py (laid out like the code: docs/testing.md).

Provenance of the [A] check studies: first-order fidelity (A11, finding 6; studies/fidelity.py), the
theory checker (A12; studies/theory_check.py) and the conventions study (A13;
studies/conventions/): which inputs each stored number was computed from (issue 41 item 6).

Each experiment runs through the registry at SMOKE size (or below); its outputs are recomputed
from lwsim's / theory's public API on the inputs they SHOULD use (the trained model and its
optimizer, the held-out rows, the run's seed, the convention named in the key), and the decoys
(the initial parameters, η instead of the optimizer, the training rows, another seed, the other
convention) are checked to give other values. The figure/finding tests feed hand-built runs
whose right and decoy keys disagree.

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 a_fidelity: envelope_fidelity on the initial parameters instead of the trained ones
     → test_fidelity_from_the_trained_model_and_its_optimizer
  P2 a_fidelity: envelope_fidelity on ds.x_train instead of the held-out rows
     → test_fidelity_from_the_trained_model_and_its_optimizer
  P3 f6: the verdict from the median Pearson (log) instead of the median Spearman ρ
     → test_f6_reads_spearman_not_pearson
  P4 a_theory: planted_check with seed + 1
     → test_theory_check_is_the_planted_check_of_its_own_law_alpha_seed
  P5 a_conventions: the "lwsim" detection table on the "author" statistic (conventions swapped in
     matched_statistic) → test_conventions_each_key_from_its_own_convention
  P6 summary: Ĥ_N growth of every convention read from h_n_lwsim
     → test_conventions_summary_and_lines_read_each_convention
  P7 fig_a12: H_theory stored from the measured h_n
     → test_a12_stores_measured_and_theory_from_their_own_keys

theory.planted (docs/theory.md §4.4): the planted-model theory checker.

X = c f(ℓ) + SαS(α, σ) per lag → lwsim's pipeline (tail fit, SNR rule, N̂(ℓ), Ĥ_N) → compared with
the SymPy-derived H_N and growth exponent. Stated tolerances (theory/planted.py, measured on
360 random configurations at 40 lags × 2·10⁴ samples and 240 at 60 × 5·10⁴, see theory/README.md):

* α ≥ 1.2: ≥ 90 % of the N points have Ĥ_N within one lag step of the grid version of H_N;
* every α in (1.1, 2]: ≥ 80 % inside the derived band (α ± 0.03, A(1 ± 5 %)) ± one lag step;
* growth exponent: relative error ≤ 0.04 + |κ(α − 0.015)/κ(α) − 1| (0.048 at α = 2, 0.20 at 1.1).

Mutations (κ_α → α in the theory, wrong envelope law, κ̂ → α̂ in the detection rule, a Gaussian
tail fit) must make the same comparison fail. LWSIM_SLOW=1: more examples, 60 lags × 5·10⁴."""


from __future__ import annotations

import numpy as np
import pytest

from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import preset_sizes, theory_check as th
from helpers import _close


SMOKE = preset_sizes("smoke")


# --- A12 -----------------------------------------------------------------------------------------
def test_theory_check_is_the_planted_check_of_its_own_law_alpha_seed():
    from theory.planted import planted_check
    c = dict(SMOKE["a_theory"], n_samples=1000, law="power", alpha=1.6, seed=3)
    c.pop("seeds")
    out = EXPERIMENTS["a_theory"](c)
    ref = planted_check("power", 1.6, eps=c["eps"], seed=3, n_lags=c["n_lags"], n_samples=c["n_samples"])
    np.testing.assert_array_equal(out["h_n"], ref.h_measured)
    np.testing.assert_array_equal(out["alpha_hat"], ref.table.alpha)
    np.testing.assert_array_equal(out["h_theory"], ref.h_theory)
    for law, alpha, seed in (("power", 1.6, 4), ("power", 1.3, 3)):
        other = planted_check(law, alpha, eps=c["eps"], seed=seed, n_lags=c["n_lags"], n_samples=c["n_samples"])
        assert not np.array_equal(np.asarray(other.table.alpha), out["alpha_hat"]), (law, alpha, seed)


# ----------------------------------------------------------------------------------------------
# a_theory
# ----------------------------------------------------------------------------------------------


def test_a_theory_experiment_keys():
    from lwsim.figures.studies.theory_check import a_theory
    out = a_theory({"law": "power", "alpha": 1.6, "seed": 0, "eps": 200.0, "n_lags": 20,
                    "n_samples": 2000})
    keys = {"law", "alpha", "lags", "f", "n_grid", "h_n", "h_theory", "alpha_hat", "kappa",
            "param_name", "param", "exponent_measured", "exponent_theory"}
    assert keys <= set(out)
    assert out["h_n"].shape == out["n_grid"].shape == out["h_theory"].shape
    assert out["lags"].shape == out["f"].shape == out["alpha_hat"].shape == (20,)
    assert out["kappa"] == pytest.approx(1.6 / 0.6)


# ----------------------------------------------------------------------------------------------
# fig_a12
# ----------------------------------------------------------------------------------------------


def test_a12_stores_measured_and_theory_from_their_own_keys():
    runs = [({"law": "power", "alpha": a, "seed": s},
             {"n_grid": [1.0, 10.0], "h_n": [1.0 + s, 2.0], "h_theory": [5.0 + a, 6.0],
              "exponent_measured": 0.5, "exponent_theory": 0.7}) for a in (1.3, 2.0) for s in (0, 1)]
    fig, data = th.fig_a12({"a_theory": runs})
    _close(fig)
    for (cfg, r), d in zip(runs, data["power"]):
        assert (d["alpha"], d["seed"]) == (cfg["alpha"], cfg["seed"])
        assert d["H_measured"] == r["h_n"] and d["H_theory"] == r["h_theory"]
        assert (d["exponent_measured"], d["exponent_theory"]) == (0.5, 0.7)
