"""Tests of lwsim/figures/studies/b_expansion.py (laid out like the code: docs/testing.md).

Provenance of the [B] studies: effective-learning-rate profiles (B1–B3; studies/b_rates.py),
anisotropy (B4–B6, finding 8; studies/b_anisotropy/) and the Fréchet expansion (B7, B8, finding 7;
studies/b_expansion.py): which inputs each stored number was computed from (issue 41 item 6).

Each experiment runs through the registry at SMOKE size; its outputs are recomputed from lwsim's
public API (lwsim.tasks, lwsim.make_cell, lwsim.train, lwsim.diagnostics) on the inputs they
SHOULD use — checkpoint ck's weights for the keys ``*_ck`` (each checkpoint = the model after ck
updates), the probe/gradient rows from their own seeds — and the decoys (the other checkpoint,
the other stream) are checked to give other values. Figure/finding tests feed hand-built runs
whose right and decoy keys disagree (last vs first checkpoint, AI vs CE, slope vs remainder).

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P8 b_expansion: the weights drawn from seed + 1
     → test_expansion_from_the_seeds_trajectory_and_weights
  P9 f7: the verdict from "remainder" instead of "slope"
     → test_f7_reads_the_slopes

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way.

The FINDINGS rules (lwsim.figures.findings, docs/experiments.md §5.5) on hand-built figure data.

Every rule gets cases whose verdict is known — reproduced, not reproduced, inconclusive — placed so
that a flipped comparison, a non-strict bound made strict (or the reverse), a mean for a median or
a seed-mean verdict that ignores one dissenting seed changes the outcome.

Tests that kill the surviving mutants of mutmut on the studies' finding rules and report text
(issue 32, docs/testing.md): behaviour/findings.py (finding 9), b_s2/findings.py (finding 8),
conventions/findings.py (A13) and main/nulls.py (findings 1–5 per null). Every input is built by
hand and every expected number or line is written out; none compares the code with itself.

Aggregates on data where the alternatives disagree (docs/statistics.md §3.5, docs/experiments.md
§5.4–5.5, docs/fidelity.md): mean ≠ median ≠ lower median, even counts, ties at a threshold, a
majority of exactly half, values on a fence. Every expectation is computed by hand in a comment.

Covered: A14 per-seed κ̂ summary and the seed spread of fig_a14; the author's seed-averaged master
window; finding 8's rule (findings.f8 and findings_b.f8_conventions); spread_text; the A13 summary
(seed means of λ, Ĥ_N growth, mean α̂ and its rules); [B] B1 seed means, B4/B5 medians and IQR over
seeds, B6 quartiles and error bars, B7's robust seed filter."""


from __future__ import annotations

import numpy as np

import lwsim
import lwsim.figures.studies
from lwsim import diagnostics as dg
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import b_expansion, b_expansion as bx, preset_sizes
from lwsim.figures.style import plt
from helpers import _close


SMOKE = preset_sizes("smoke")


# --- B7, B8 / finding 7 --------------------------------------------------------------------------
def test_expansion_from_the_seeds_trajectory_and_weights():
    c = dict({k: v for k, v in SMOKE["b_expansion"].items() if k != "seeds"}, cell="sharedgate", seed=3)
    out = EXPERIMENTS["b_expansion"](c)

    def check(traj_seed, w_seed):
        T, D, H = c["T"], c["D"], c["H"]
        rng = np.random.default_rng(traj_seed)
        t = np.linspace(0, 12, T)
        phase = rng.uniform(0, 2 * np.pi, D)
        x = (np.sin(np.linspace(0.03, 0.09, D)[None, :] * t[:, None] + phase)
             + 0.05 * rng.standard_normal((T, D)))[:, None, :]
        cell = lwsim.make_cell("sharedgate", D, H, bias=False, readout="last")
        p = cell.init_params(seed=w_seed, scheme="normal", sigma_w=c["sigma_w"])
        return dg.frechet_check(cell, p, x, dg.expansion.DEFAULT_EPS)

    fc = check(3, 3)
    np.testing.assert_array_equal(out["E"], np.asarray(fc.E).reshape(len(fc.eps), -1)[:, 0])
    np.testing.assert_array_equal(out["norm_A"], np.ravel(fc.norm_A))
    for ts, ws in ((4, 3), (3, 4)):
        other = check(ts, ws)
        assert not np.array_equal(np.asarray(other.E).reshape(len(other.eps), -1)[:, 0], out["E"]), (ts, ws)


# ----------------------------------------------------------------------------------------------
# b_expansion
# ----------------------------------------------------------------------------------------------


def test_b7_robust_seed_filter():
    keep = b_expansion.robust_seeds([1.0, 2.0, 3.0, 4.0, 100.0], [2.0, 2.0, np.nan, 2.0, 2.0])
    np.testing.assert_array_equal(keep, [True, True, False, True, False])
    eps = np.array([1e-2, 1e-1, 1.0])
    runs = [({"cell": "diaggate", "seed": s, "b7_aggregate": "robust"},
             {"eps": eps, "E": eps ** 2 * v, "C2": np.full(3, v), "slope": 2.0})
            for s, v in enumerate((1.0, 2.0, 3.0, 4.0, 100.0))]
    _, d = b_expansion.fig_b7({"b_expansion": runs})
    np.testing.assert_allclose(d["diaggate"]["C2_median"], 2.5)          # seed with 100 excluded
    assert list(d["diaggate"]["kept"]) == [True] * 4 + [False]


def test_f7_seed_interval_within_two_pm_tenth():
    b7 = lambda *s: {"B7": {"diaggate": [{"slope": v} for v in s]}}  # noqa: E731
    # 2.0, 2.01, 1.99: 2 ± 0.01·4.3027/√3 = [1.975, 2.025] inside [1.9, 2.1]
    assert b_expansion.f7(b7(2.0, 2.01, 1.99))[0][1] == "reproduced"
    assert b_expansion.f7(b7(2.0, 2.09, 1.91))[0][1] == "inconclusive"      # [1.78, 2.22]: straddles
    assert b_expansion.f7(b7(2.5, 2.51, 2.49))[0][1] == "not reproduced"
    assert b_expansion.f7(b7(1.5, 1.51, 1.49))[0][1] == "not reproduced"
    assert b_expansion.f7(b7(2.0))[0][1] == "inconclusive"                  # one seed: no interval


def test_b7_robust_fences_are_inclusive():
    # 2, 3, 4, 5, 8: q25 3, q75 5, IQR 2 → fences [0, 8]: 8 on the fence is kept
    np.testing.assert_array_equal(b_expansion.robust_seeds([2.0, 3.0, 4.0, 5.0, 8.0], [2.0] * 5), [True] * 5)
    np.testing.assert_array_equal(b_expansion.robust_seeds([2.0, 3.0, 4.0, 5.0, 8.01], [2.0] * 5),
                                  [True] * 4 + [False])
    np.testing.assert_array_equal(b_expansion.robust_seeds([0.0, 3.0, 4.0, 5.0, 6.0], [2.0] * 5), [True] * 5)
    np.testing.assert_array_equal(b_expansion.robust_seeds([-0.01, 3.0, 4.0, 5.0, 6.0], [2.0] * 5),
                                  [False] + [True] * 4)
    # median over the kept seeds only, even count: C₂ 1, 2, 3, 10 → 2.5 (lower 2, mean 4)
    eps = np.array([0.1, 1.0])
    runs = [({"cell": "gru", "seed": s, "b7_aggregate": "robust"},
             {"eps": eps, "E": np.array([0.01, 1.0]) * e1, "C2": np.full(2, c2), "slope": 2.0})
            for s, (e1, c2) in enumerate(((2.0, 1.0), (3.0, 2.0), (4.0, 3.0), (5.0, 10.0), (9.0, 50.0)))]
    fig, d = b_expansion.fig_b7({"b_expansion": runs})
    plt.close(fig)
    assert list(d["gru"]["kept"]) == [True] * 4 + [False]
    np.testing.assert_allclose(d["gru"]["C2_median"], 2.5)
    np.testing.assert_allclose(d["gru"]["E_median"], np.array([0.01, 1.0]) * 3.5)   # E(1): 2,3,4,5 → 3.5


# ----------------------------------------------------------------------------------------------
# f7
# ----------------------------------------------------------------------------------------------


def test_f7_whole():
    r = {"B7": {"diaggate": [{"slope": 2.0}, {"slope": 2.01}, {"slope": 1.99}],
                "gru": [{"slope": 2.0}, {"slope": 2.0}, {"slope": 2.0}]}}
    rule = ("rule: each model's 95% seed interval of the log–log slope over the five smallest ε inside 2 ± 0.1, "
            "AND over models (docs/experiments.md §5.5.2)")
    assert bx.f7(r) == [(7, "reproduced", [
        "diaggate: slopes [2.0, 2.01, 1.99]; seed interval 2 [1.975, 2.025] (3 seeds) → reproduced (3 of 3 seeds within 2 ± 0.1)",
        "gru: slopes [2.0, 2.0, 2.0]; seed interval 2 [2, 2] (3 seeds) → reproduced (3 of 3 seeds within 2 ± 0.1)"], rule)]
    assert bx.findings(r) == {7: bx.f7(r)[0]}
    r["B7"]["gru"] = [{"slope": 1.5}, {"slope": 1.52}, {"slope": 1.48}]
    assert bx.f7(r)[0][1] == "not reproduced"                                # AND over models
    assert bx.f7({}) is None and bx.findings({"B7": {}}) == {}


# ----------------------------------------------------------------------------------------------
# findings
# ----------------------------------------------------------------------------------------------


def test_f7_reads_the_slopes():
    def b7(slope, remainder):
        return {"B7": {"sharedgate": [{"slope": slope + d, "remainder": remainder, "seed": s}
                                      for s, d in enumerate((0.0, 0.001, -0.001))]}}
    assert bx.findings(b7(2.02, 5.0))[7][1] == "reproduced"
    assert bx.findings(b7(5.0, 2.0))[7][1] == "not reproduced"
    runs = [({"cell": "sharedgate", "seed": s, "b7_aggregate": "seeds"},
             {"eps": [0.1, 1.0], "E": [1.0, 2.0], "C2": [3.0, 4.0], "slope": 2.0 + s, "remainder": -1.0})
            for s in (0, 1)]
    fig, data = bx.fig_b7({"b_expansion": runs})
    _close(fig)
    assert [d["slope"] for d in data["sharedgate"]] == [2.0, 3.0]


def test_f7_rounds_slopes_to_three_decimals_and_the_interval_to_four_digits():
    # mean of 2.01234, 2, 2 = 2.00411: four significant digits 2.004; slopes to three decimals
    r = {"B7": {"diaggate": [{"slope": 2.01234}, {"slope": 2.0}, {"slope": 2.0}]}}
    assert bx.f7(r)[0][2][0].startswith("diaggate: slopes [2.012, 2.0, 2.0]; seed interval 2.004 [")
    # tiny slopes: mean 1.21152e-05, written in lower-case exponent notation
    r = {"B7": {"diaggate": [{"slope": 1.23456e-5}, {"slope": 1.3e-5}, {"slope": 1.1e-5}]}}
    assert bx.f7(r)[0][2][0].startswith("diaggate: slopes [0.0, 0.0, 0.0]; seed interval 1.212e-05 [")


def test_f7_under_the_robust_aggregate_reads_the_kept_seeds():
    """The paper presets aggregate B7 by [B]'s seed filter (fig_b7 returns one dict per cell): finding 7
    reads the slopes of the seeds it keeps and says how many it dropped."""
    eps = np.array([1e-2, 1e-1, 1.0])
    slopes = (2.0, 2.01, 1.99, 5.0, 2.0)                   # the outlier seed (E(1) = 100) has slope 5
    runs = [({"cell": "diaggate", "seed": s, "b7_aggregate": "robust"},
             {"eps": eps, "E": eps ** 2 * v, "C2": np.full(3, v), "slope": q})
            for s, (v, q) in enumerate(zip((1.0, 2.0, 3.0, 4.0, 100.0), slopes))]
    _, d = bx.fig_b7({"b_expansion": runs})
    (k, v, rows, _), = bx.f7({"B7": d})
    # kept: seeds 0–3 (slopes 2, 2.01, 1.99, 5): mean 2.75, t_{0.975,3} · sd / 2 = 2.387: straddles 2 ± 0.1
    assert rows == ["diaggate: slopes [2.0, 2.01, 1.99, 5.0]; seed interval 2.75 [0.3631, 5.137] (4 seeds) → "
                    "inconclusive (3 of 4 seeds within 2 ± 0.1); [B]'s seed filter kept 4 of 5"]
    runs[3][1]["slope"] = 2.0                              # the kept seeds all near 2: reproduced
    _, d = bx.fig_b7({"b_expansion": runs})
    assert bx.f7({"B7": d})[0][1] == "reproduced"
