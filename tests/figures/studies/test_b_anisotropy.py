"""Tests of lwsim/figures/studies/b_anisotropy (laid out like the code: docs/testing.md).

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
  P4 b_s2: the anisotropy at checkpoint ck from the first checkpoint's weights
     → test_s2_metrics_from_each_checkpoint_on_their_own_rows
  P5 b_s2: gradient rows of seed + 7919 instead of seed + 104729 (x, y of another stream)
     → test_s2_metrics_from_each_checkpoint_on_their_own_rows
  P6 f8: B4's AI read at the first checkpoint (median_first) instead of the last
     → test_f8_reads_the_last_checkpoint_and_ai
  P7 f8: μ̃ of the first checkpoint (keys[0]) instead of the last
     → test_f8_reads_the_last_checkpoint_and_ai
  P10 f8_conventions: the "author" row reads the lwsim AI key (median_last)
     → test_f8_conventions_read_each_conventions_keys

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

Mutation-testing pins (issue 32) for three study figure builders: A15 (behaviour/figures.py,
the data finding 9 reads), B4–B6 ([B]'s S2 figures, b_s2/figures.py) and A13 (conventions/figures.py).

Each test builds a small hand-made ``results`` ({group: [(config, result), ...]}) with known
numbers and pins the returned data dict and what the figure shows (line data, styles, labels,
scales, legends) by hand.

Aggregates on data where the alternatives disagree (docs/statistics.md §3.5, docs/experiments.md
§5.4–5.5, docs/fidelity.md): mean ≠ median ≠ lower median, even counts, ties at a threshold, a
majority of exactly half, values on a fence. Every expectation is computed by hand in a comment.

Covered: A14 per-seed κ̂ summary and the seed spread of fig_a14; the author's seed-averaged master
window; finding 8's rule (findings.f8 and findings_b.f8_conventions); spread_text; the A13 summary
(seed means of λ, Ĥ_N growth, mean α̂ and its rules); [B] B1 seed means, B4/B5 medians and IQR over
seeds, B6 quartiles and error bars, B7's robust seed filter."""


from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba

import lwsim
import lwsim.figures.studies
from lwsim import diagnostics as dg, tasks
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import preset_sizes
from lwsim.figures.studies.b_anisotropy import (
    figures as B,
    figures as af,
    figures as b_s2_figures,
    findings as S2F,
    findings as afind,
    findings as f8m,
)
from lwsim.figures.studies.b_anisotropy.findings import f8_conventions
from lwsim.figures.style import plt
from lwsim.tasks import make as make_task
from lwsim.train import train
from helpers import _b_cell, _legend
from helpers import _close


SMOKE = preset_sizes("smoke")


# --- B4–B6 / finding 8 ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def s2_run():
    c = dict({k: v for k, v in SMOKE["b_s2"].items() if k not in ("seeds", "tasks")}, cell="diaggate",
             optimizer="sgd", lr=1e-2, task="adding", seed=0, backend="numpy", conventions=["lwsim"])
    out = EXPERIMENTS["b_s2"](c)
    task = make_task("adding", T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c, c["cell"])
    res = train(cell, cell.init_params(seed=c["seed"], scheme="torch"), task, optimizer="sgd",
                optimizer_kwargs={"lr": c["lr"]}, steps=max(c["checkpoints"]), batch_size=c["batch"],
                backend="numpy", seed=c["seed"], checkpoints=c["checkpoints"], validate=False, progress=False)
    return c, out, cell.with_dtype("float64"), res.astype("float64"), task


def _b4(first, last):
    return {"adding": {"diaggate": {"median_last": np.array(last[0]), "median_first": np.array(first[0])},
                       "rnn": {"median_last": np.array(last[1]), "median_first": np.array(first[1])}}}


def _r8(mu_first, mu_final, multi, plain):
    b1 = {m: {"mu_0": [1.0, mu_first], "mu_300": [1.0, mu_final]} for m in ("constgate", "diaggate")}
    b4 = {t: {"diaggate": {"median_last": a}, "rnn": {"median_last": b}} for t, (a, b) in
          enumerate(zip(multi, plain))}
    return {"B1": b1, "B4": b4}


def _b14():
    b1 = {"sharedgate": {"mu_0": [1, 0.5], "mu_5": [1, 0.25], "author_mu_5": [1, 0.25]},
          "gru": {"mu_0": [0.3], "author_mu_0": [0.2]}, "rnn": {"other": [1.0]}}
    b4 = {"t1": {"diaggate": {"median_last": [30.0, np.nan, 10.0], "median_last_author": [5.0]},
                 "rnn": {"median_last": [20.0, 40.0], "median_last_author": [4.0, 6.0]}},
          "t2": {"diaggate": {"median_last": [50.0]}, "rnn": {"median_last": [50.0]}},
          "t3": {"rnn": {"median_last": [1.0], "median_last_author": [1.0]}}}
    return b1, b4


BLUE, RED, GREY = "#1f77b4", "#d62728", "#7f7f7f"        # constgate, gru, rnn


ORANGE, GREEN = "#ff7f0e", "#2ca02c"                    # sharedgate, diaggate


# ============================================================================ B4–B6 ([B] S2)
def _run(task, cell, cks, r, seed=0, **cfg):
    return ({"task": task, "cell": cell, "checkpoints": cks, "seed": seed, **cfg}, r)


def _s2_lag_runs():
    nan = np.nan
    lags = [1, 2, 4]
    runs = []
    # copy / rnn: three seeds at checkpoints 10 and 50
    # a missing value is NaN or None (JSON null): both are left out of the medians and quartiles
    for last, first, auth in (([1, 2, 3], [10, 10, 10], [1, 2, 3]), ([3, None, nan], [20, None, 40], [2, 3, None]),
                              ([5, 6, 11], [30, 20, 60], [9, 9, 4])):
        runs.append(_run("copy", "rnn", [10, 50], {"lags": lags, "ai_10": first, "ai_50": last,
                                                   "ai_author_50": auth, "ce_10": [None if v is None else 10 * v for v in first],
                                                   "ce_50": [None if v is None else 10 * v for v in last]}))
    # add / sharedgate: checkpoints 5, 7, 9 (first 5, last 9; 7 is neither)
    for last, first in (([1, 3], [4, 4]), ([3, 5], [6, 6])):
        runs.append(_run("add", "sharedgate", [5, 7, 9], {"lags": [1, 2], "ai_5": first, "ai_7": [99, 99],
                                                           "ai_9": last, "ai_author_9": [v + 1 for v in last],
                                                           "ce_5": first, "ce_7": [99, 99], "ce_9": last}))
    # copy / diaggate: one seed, no author key
    runs.append(_run("copy", "diaggate", [10, 50], {"lags": lags, "ai_10": [1, 1, 1], "ai_50": [0.5, 0.25, 0.125],
                                                    "ce_10": [1, 1, 1], "ce_50": [0.5, 0.25, 0.125]}))
    return runs


def _b6_runs(errorbars=None):
    """copy: rnn over four seeds, gai = [1, 2, 3, 10], gce = 2 × that, gpr = 3 × that (last checkpoint 50;
    checkpoint 10 holds 1000s), sharedgate one seed 4; add: one seed each (rnn 5, sharedgate 6, diaggate 7)."""
    cfg = {} if errorbars is None else {"b6_errorbars": errorbars}
    runs = []
    for s, v in enumerate((1, 2, 3, 10)):
        runs.append(_run("copy", "rnn", [10, 50], {"gai_50": v, "gce_50": 2 * v, "gpr_50": 3 * v,
                                                   "gai_10": 1000, "gce_10": 1000, "gpr_10": 1000}, seed=s, **cfg))
    runs.append(_run("copy", "rnn", [10, 50], {"gai_50": None, "gce_50": None, "gpr_50": None}, seed=4))   # JSON null
    runs.append(_run("copy", "sharedgate", [50], {"gai_50": 4, "gce_50": 4, "gpr_50": 4},
                     b6_errorbars="other"))
    for m, v in (("rnn", 5), ("sharedgate", 6), ("diaggate", 7)):
        runs.append(_run("add", m, [20], {"gai_20": v, "gce_20": v, "gpr_20": v}))
    return runs


# ----------------------------------------------------------------------------- finding 8
def _b(mu_by_ck, multi, plain, author=False):
    """B1/B4 data: μ̃ per checkpoint for two models; B4 per task: diaggate vs rnn AI over lags."""
    p = "author_mu_" if author else "mu_"
    b1 = {m: {f"{p}{ck}": v for ck, v in mu_by_ck.items()} for m in ("constgate", "diaggate")}
    key = "median_last_author" if author else "median_last"
    b4 = {f"t{i}": {"diaggate": {key: a}, "rnn": {key: b}} for i, (a, b) in enumerate(zip(multi, plain))}
    return {"B1": b1, "B4": b4}


LAGDEP = {0: [1.0, 0.9], 300: [1.0, 0.6, 0.2]}          # final checkpoint, largest lag: 0.2 < 0.5


FLAT = {0: [1.0, 0.2], 300: [1.0, 0.3, 0.7]}             # final: 0.7 (the first checkpoint says 0.2)


# ----------------------------------------------------------------------------- [B] figures
def _s2_runs(values, first, author=None, task="adding"):
    """b_s2 runs of the three [B] models; the rnn's AI per seed over two lags."""
    runs = []
    for m, _, _ in b_s2_figures.B_S2_MODELS:
        for seed, (v, v0) in enumerate(zip(values, first)):
            r = {"lags": [1, 2], "ai_0": np.asarray(v0, float), "ai_9": np.asarray(v, float)}
            if author is not None:
                r["ai_author_9"] = np.asarray(v, float) * author
            runs.append(({"cell": m, "task": task, "checkpoints": [0, 9], "seed": seed}, r))
    return runs


def test_s2_metrics_from_each_checkpoint_on_their_own_rows(s2_run):
    c, out, cell, res, task = s2_run
    x, y = task.batch(c["n_examples"], c["seed"] + 104729)
    lags = [l for l in c["lags"] if l < c["T"]]

    def metrics(p, xx, yy):
        ja = dg.jacobian_anisotropy(cell, p, xx, lags, n_samples=c["n_triples"], seed=c["seed"], r=min(10, c["H"]),
                                    n_energy=min(16, c["H"]), backend="numpy", progress=False)
        G, _ = dg.per_example_gradients(cell, p, xx, yy, backend="numpy", progress=False)
        ga = dg.gradient_covariance_metrics(G, r=min(10, c["n_examples"] - 1))
        return ja.ai_median, float(ga.ai), float(ga.pr)

    for ck in c["checkpoints"]:
        ai, gai, gpr = metrics(res.checkpoints[ck], x, y)
        np.testing.assert_array_equal(out[f"ai_{ck}"], ai)
        assert (out[f"gai_{ck}"], out[f"gpr_{ck}"]) == (gai, gpr)
    first, last = c["checkpoints"][0], c["checkpoints"][-1]
    x2, y2 = task.batch(c["n_examples"], c["seed"] + 7919)
    for p, xx, yy in ((res.checkpoints[first], x, y), (res.checkpoints[last], x2, y2)):
        ai, gai, _ = metrics(p, xx, yy)
        assert not np.array_equal(ai, out[f"ai_{last}"]) and gai != out[f"gai_{last}"]


# ----------------------------------------------------------------------------------------------
# b_s2
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------- protocol
def test_b_s2_author_protocol(monkeypatch):
    from lwsim.figures.studies.b_anisotropy import experiment as ex
    calls = {}
    real_train, real_ja = ex.train, dg.jacobian_anisotropy

    def spy_train(cell, params, data, **kw):
        calls["train"] = (data, kw)
        return real_train(cell, params, data, **kw)

    def spy_ja(*a, **kw):
        calls.setdefault("ja", []).append(kw)
        return real_ja(*a, **kw)

    monkeypatch.setattr(ex, "train", spy_train)
    monkeypatch.setattr(ex.dg, "jacobian_anisotropy", spy_ja)
    c = dict(T=12, D=3, H=6, batch=4, steps=2, checkpoints=[0, 2], n_examples=12, lags=[1, 2], n_triples=3,
             protocol="author", probe=4, task_inputs="author", conventions=["lwsim", "author"],
             cell="diaggate", optimizer="sgd", lr=1e-2, task="movingavg", seed=0, backend="numpy")
    out = ex.b_s2(c)
    data, kw = calls["train"]
    assert isinstance(data, tasks.FixedBatchTask) and data.params["inputs"] == "author"
    assert kw["steps"] == 3 and kw["checkpoints"] == [1, 3]      # checkpoint it after it + 1 updates
    assert {k["sampling"] for k in calls["ja"]} == {"author"}
    assert [k["seed"] for k in calls["ja"]][::2] == [0, 7919]     # a new draw per checkpoint
    assert "ai_author_2" in out and "gai_author_0" in out


# ----------------------------------------------------------------------------------------------
# _s2
# ----------------------------------------------------------------------------------------------


def test_s2_groups_by_task_then_cell_in_order():
    # private: its public callers (fig_b4 to fig_b6) draw figures from trained b_s2 results
    runs = [_run("b", "x", [1], {"i": 0}), _run("a", "y", [1], {"i": 1}), _run("b", "x", [1], {"i": 2})]
    g = B._s2({"b_s2": runs})
    assert list(g) == ["b", "a"] and [r["i"] for _, r in g["b"]["x"]] == [0, 2]
    assert B.FIGURES == {"B4": B.fig_b4, "B5": B.fig_b5, "B6": B.fig_b6}
    assert B.S2_LABEL == {"rnn": "plain+Adam", "sharedgate": "scalar+SGD", "diaggate": "multi+SGD"}


# ----------------------------------------------------------------------------------------------
# fig_b4
# ----------------------------------------------------------------------------------------------


def test_b4_reads_each_run_at_its_first_and_last_checkpoint():
    runs = []
    for m in ("rnn", "diaggate"):
        for s in (1, 2, 3):
            r = {"lags": [1.0, 2.0], "ai_0": np.array([1.0, 1.0]) * s, "ai_4": np.array([10.0, 20.0]) * s,
                 "ce_0": np.array([7.0, 7.0]), "ce_4": np.array([8.0, 8.0])}
            runs.append(({"cell": m, "task": "adding", "checkpoints": [0, 4], "seed": s}, r))
    fig, data = af.fig_b4({"b_s2": runs})
    _close(fig)
    np.testing.assert_allclose(data["adding"]["diaggate"]["median_last"], [20.0, 40.0])
    np.testing.assert_allclose(data["adding"]["diaggate"]["median_first"], [2.0, 2.0])


def test_b4_lines_medians_iqr_and_axes():
    fig, data = B.fig_b4({"b_s2": _s2_lag_runs()})
    assert tuple(fig.get_size_inches()) == pytest.approx((8.4, 3.3))     # 2 tasks: 2 × 4.2 wide
    assert list(data) == ["copy", "add"] and list(data["copy"]) == ["rnn", "diaggate"]
    r = data["copy"]["rnn"]
    np.testing.assert_array_equal(r["lags"], [1, 2, 4])
    # last, per lag over seeds: [1,3,5] → median 3, quartiles 2 and 4; [2, None, 6] → 4, quartiles 3 and 5;
    # [3, nan, 11] (NaN dropped) → median 7, quartiles 3 + 0.25·8 = 5 and 9 → IQR 4
    np.testing.assert_array_equal(r["median_last"], [3, 4, 7])
    np.testing.assert_array_equal(r["iqr_last"], [2, 2, 4])
    np.testing.assert_array_equal(r["median_first"], [20, 15, 40])           # [10, None, 20] → 15
    # author, per lag: [1, 2, 9] → 2; [2, 3, 9] → 3; [3, None, 4] → 3.5
    np.testing.assert_array_equal(r["median_last_author"], [2, 3, 3.5])
    assert r["lags"].dtype == np.float64                                      # lags 1, 2, 4 given as ints
    assert "median_last_author" not in data["copy"]["diaggate"]
    a = data["add"]["sharedgate"]
    np.testing.assert_array_equal(a["median_last"], [2, 4])              # checkpoint 9, not 7
    np.testing.assert_array_equal(a["iqr_last"], [1, 1])                  # [1,3] → 2.5 − 1.5
    np.testing.assert_array_equal(a["median_first"], [5, 5])              # checkpoint 5
    np.testing.assert_array_equal(a["median_last_author"], [3, 5])        # ai_author_9 = last + 1
    ax, ax2 = fig.axes[:2]
    assert ax.get_title() == "B4 anisotropy: copy" and ax2.get_title() == "B4 anisotropy: add"
    assert ax.get_xlabel() == "lag h" and ax.get_ylabel() == r"AI$_{10}=\sigma_1/\sigma_{10}$"
    assert ax.get_yscale() == "log"
    med, first, dmed, dfirst = ax.get_lines()
    np.testing.assert_array_equal(med.get_xdata(), [1, 2, 4])
    np.testing.assert_array_equal(med.get_ydata(), [3, 4, 7])
    assert (med.get_linestyle(), med.get_marker(), med.get_markersize(), med.get_color(), med.get_label()) \
        == ("-", "o", 3, GREY, "plain+Adam (it 50)")
    np.testing.assert_array_equal(first.get_xdata(), [1, 2, 4])
    np.testing.assert_array_equal(first.get_ydata(), [20, 15, 40])
    assert (first.get_linestyle(), first.get_color(), first.get_linewidth()) == (":", GREY, 1)
    assert dmed.get_color() == GREEN and dmed.get_label() == "multi+SGD (it 50)"
    assert _legend(ax) == (["plain+Adam (it 50)", "multi+SGD (it 50)"], 6)
    assert _legend(ax2) == (["scalar+SGD (it 9)"], 6)
    assert ax2.get_lines()[0].get_color() == ORANGE


def test_b4_four_tasks_three_per_row():
    runs = [_run(t, "rnn", [1], {"lags": [1], "ai_1": [2.0]}) for t in "abcd"]
    fig, data = B.fig_b4({"b_s2": runs})
    assert tuple(fig.get_size_inches()) == pytest.approx((12.6, 6.6))     # 2 rows of 3 × (4.2 × 3.3)
    assert list(data) == ["a", "b", "c", "d"] and len([a for a in fig.axes if a.get_visible()]) == 4


def test_b4_median_and_iqr_over_seeds():
    last = [[1.0, 5.0], [2.0, np.nan], [4.0, 1.0], [100.0, 3.0]]
    first = [[3.0, 1.0], [3.0, 1.0], [3.0, 1.0], [9.0, 1.0]]
    fig, d = b_s2_figures.fig_b4({"b_s2": _s2_runs(last, first, author=0.5)})
    plt.close(fig)
    rnn = d["adding"]["rnn"]
    # lag 1: 1, 2, 4, 100 → median 3 (lower 2, mean 26.75), q25 1.75, q75 28 → IQR 26.25
    # lag 2: 5, NaN, 1, 3 → NaN ignored: median 3, q25 2, q75 4
    np.testing.assert_allclose(rnn["median_last"], [3.0, 3.0])
    np.testing.assert_allclose(rnn["iqr_last"], [26.25, 2.0])
    np.testing.assert_allclose(rnn["median_first"], [3.0, 1.0])          # mean would be 4.5
    np.testing.assert_allclose(rnn["median_last_author"], [1.5, 1.5])


# ----------------------------------------------------------------------------------------------
# fig_b5
# ----------------------------------------------------------------------------------------------


def test_b5_energy_concentration_on_a_linear_axis():
    fig, data = B.fig_b5({"b_s2": _s2_lag_runs()})
    np.testing.assert_array_equal(data["copy"]["rnn"]["median_last"], [30, 40, 70])     # ce = 10 × ai
    assert "median_last_author" not in data["copy"]["rnn"]                   # no ce_author key
    np.testing.assert_array_equal(data["copy"]["rnn"]["median_first"], [200, 150, 400])
    ax = fig.axes[0]
    assert ax.get_title() == "B5 energy concentration: copy" and ax.get_yscale() == "linear"
    assert ax.get_ylabel() == r"CE$_{10}$" and ax.get_xlabel() == "lag h"


# ----------------------------------------------------------------------------------------------
# _b6_quartiles
# ----------------------------------------------------------------------------------------------


def test_b6_error_bar_choice_is_the_first_runs():
    # private: its public caller, fig_b6, draws the figure from trained b_s2 results
    assert B._b6_quartiles({}) is False
    first = {"copy": {"rnn": [({"b6_errorbars": "quartiles"}, {})]}, "add": {"rnn": [({}, {})]}}
    assert B._b6_quartiles(first) is True
    assert B._b6_quartiles({"copy": {"rnn": [({}, {}), ({"b6_errorbars": "quartiles"}, {})]}}) is False
    assert B._b6_quartiles({"copy": {"rnn": [({"b6_errorbars": "iqr"}, {})]}}) is False


# ----------------------------------------------------------------------------------------------
# fig_b6
# ----------------------------------------------------------------------------------------------


def test_b6_quartile_error_bars():
    runs = []
    for m, o, lr in b_s2_figures.B_S2_MODELS:
        for seed, v in enumerate((1.0, 2.0, 4.0, 10.0, 20.0)):
            runs.append(({"cell": m, "task": "adding", "checkpoints": [0], "seed": seed,
                          "b6_errorbars": "quartiles"}, {"gai_0": v, "gce_0": v, "gpr_0": v}))
    fig, d = b_s2_figures.fig_b6({"b_s2": runs})
    eb = [c for c in fig.axes[0].containers if hasattr(c, "has_yerr")][0]
    seg = eb.lines[2][0].get_segments()[0]
    np.testing.assert_allclose(sorted(seg[:, 1]), [2.0, 10.0])          # q25 … q75, not med ± IQR/2
    assert d["adding"]["rnn"]["AI"]["median"] == 4.0


@pytest.mark.filterwarnings("ignore::RuntimeWarning")        # the all-NaN slice of the missing model
def test_b6_quantiles_bars_and_both_error_bars():
    fig, data = B.fig_b6({"b_s2": _b6_runs()})
    assert tuple(fig.get_size_inches()) == pytest.approx((12.6, 3.3))
    # [1, 2, 3, 10]: q25 at position 0.75 → 1.75, median 2.5, q75 at 2.25 → 3 + 0.25·7 = 4.75
    assert {k: data["copy"]["rnn"]["AI"][k] for k in ("median", "iqr", "q25", "q75", "seeds")} == {
        "median": 2.5, "iqr": 3.0, "q25": 1.75, "q75": 4.75, "seeds": [0, 1, 2, 3, 4]}
    np.testing.assert_array_equal(data["copy"]["rnn"]["AI"]["values"], [1.0, 2.0, 3.0, 10.0, np.nan])  # per seed
    assert {k: data["copy"]["rnn"]["CE"][k] for k in ("median", "iqr", "q25", "q75")} == {"median": 5.0, "iqr": 6.0, "q25": 3.5, "q75": 9.5}
    assert data["copy"]["rnn"]["PR"]["median"] == 7.5
    assert data["copy"]["sharedgate"]["AI"] == {"median": 4.0, "iqr": 0.0, "q25": 4.0, "q75": 4.0, "seeds": [0],
                                                "values": [4.0]}
    assert math.isnan(data["copy"]["diaggate"]["AI"]["median"])              # no runs: NaN
    assert data["add"]["diaggate"]["PR"]["median"] == 7.0
    ax = fig.axes[0]
    assert ax.get_title() == "B6 gradient covariance AI" and ax.get_yscale() == "log"
    assert [a.get_title() for a in fig.axes[1:3]] == ["B6 gradient covariance CE", "B6 gradient covariance PR"]
    assert [a.get_yscale() for a in fig.axes[1:3]] == ["linear", "linear"]
    bars = [c for c in ax.containers if hasattr(c, "patches")]
    assert len(bars) == 3
    rnn = bars[0]
    # rnn bars at x = 0, 1 (centres), width 0.27; sharedgate at 0.27, 1.27; diaggate at 0.54, 1.54
    assert [p.get_x() + p.get_width() / 2 for p in rnn.patches] == pytest.approx([0, 1])
    assert [p.get_x() + p.get_width() / 2 for p in bars[2].patches] == pytest.approx([0.54, 1.54])
    assert rnn.patches[0].get_width() == pytest.approx(0.27)
    assert [p.get_height() for p in rnn.patches] == [2.5, 5.0]
    assert to_rgba(rnn.patches[0].get_facecolor()) == to_rgba(GREY)
    assert rnn.get_label() == "plain+Adam"
    # default error bars ("iqr"): ± IQR/2 = ± 1.5 about the median 2.5
    seg = rnn.errorbar.lines[2][0].get_segments()
    np.testing.assert_allclose(seg[0], [[0, 1.0], [0, 4.0]])
    np.testing.assert_allclose(seg[1], [[1, 5.0], [1, 5.0]])               # add/rnn: one seed, IQR 0
    assert [t.get_position()[0] for t in ax.get_xticklabels()] == pytest.approx([0.27, 1.27])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["copy", "add"]
    assert ax.get_xticklabels()[0].get_fontsize() == 7 and ax.get_xticklabels()[0].get_rotation() == 20
    assert _legend(ax) == (["plain+Adam", "scalar+SGD", "multi+SGD"], 6)

    fig, _ = B.fig_b6({"b_s2": _b6_runs("quartiles")})
    rnn = [c for c in fig.axes[0].containers if hasattr(c, "patches")][0]
    # [B]'s quartile bars: from q25 = 1.75 to q75 = 4.75
    np.testing.assert_allclose(rnn.errorbar.lines[2][0].get_segments()[0], [[0, 1.75], [0, 4.75]])


def test_b6_quartiles_of_four_seeds_and_both_error_bars():
    for mode, seg in (("quartiles", [1.75, 28.0]), ("iqr", [3.0 - 13.125, 3.0 + 13.125])):
        runs = []
        for m, _, _ in b_s2_figures.B_S2_MODELS:
            for seed, v in enumerate((1.0, 100.0, 2.0, 4.0)):
                runs.append(({"cell": m, "task": "adding", "checkpoints": [0], "seed": seed,
                              "b6_errorbars": mode}, {"gai_0": v, "gce_0": v, "gpr_0": v}))
        fig, d = b_s2_figures.fig_b6({"b_s2": runs})
        eb = [c for c in fig.axes[0].containers if hasattr(c, "has_yerr")][0]
        got = sorted(eb.lines[2][0].get_segments()[0][:, 1])
        plt.close(fig)
        np.testing.assert_allclose(got, seg)              # quartiles: q25 … q75; iqr: median ± IQR/2
        assert d["adding"]["rnn"]["AI"] == {"median": 3.0, "iqr": 26.25, "q25": 1.75, "q75": 28.0,
                                            "seeds": [0, 1, 2, 3], "values": [1.0, 100.0, 2.0, 4.0]}


# ----------------------------------------------------------------------------------------------
# _verdict
# ----------------------------------------------------------------------------------------------


def test_f8_verdict_rule_boundaries():
    V = f8m._verdict
    assert V({"a": 0.4, "b": 0.1}, [(2, 1), (1, 1), (0, 1)]) == ("reproduced", 2, 2, 3)     # a tie is a win
    assert V({"a": 0.4, "b": 0.5}, [(2, 1)]) == ("inconclusive", 1, 1, 1)                  # 0.5 is not < 0.5
    assert V({"a": 0.4}, [(2, 1), (0, 1)]) == ("inconclusive", 1, 1, 2)                    # half is not most
    assert V({"a": 0.5}, [(2, 1), (0, 1)]) == ("not reproduced", 0, 1, 2)                  # half is ≤ half
    assert V({"a": 0.5}, [(2, 1), (2, 1), (0, 1)]) == ("inconclusive", 0, 2, 3)
    assert V({}, [(2, 1)]) == ("inconclusive", 0, 1, 1)                                    # no μ̃: not reproduced
    assert V({"a": 0.1}, []) == ("inconclusive", 1, 0, 0)                                  # no task
    assert V({}, []) == ("not reproduced", 0, 0, 0)


# ----------------------------------------------------------------------------------------------
# _last_mu
# ----------------------------------------------------------------------------------------------


def test_last_mu_takes_the_last_key_and_its_last_value():
    d = {"mu_0": [1.0, 0.9], "author_mu_0": [0.1], "mu_5": [1.0, 0.25], "x": 3}
    assert f8m._last_mu(d, "mu_") == 0.25
    assert f8m._last_mu(d, "author_mu_") == 0.1
    assert f8m._last_mu({"x": 1}, "mu_") is None


def test_f8_reads_a_missing_mu_as_nan():
    """A μ̃ stored as None or as to_jsonable's "nan" string reads as NaN: never < 0.5, printed "nan"."""
    assert np.isnan(f8m._last_mu({"mu_0": [1.0, None]}, "mu_"))
    b4 = {"t": {"diaggate": {"median_last": [3.0, np.nan], "median_last_author": [1.0]},
                "rnn": {"median_last": [1.0, 2.0, np.nan], "median_last_author": [1.0, np.nan]}}}
    b1 = {"gru": {"mu_0": [1.0, None], "author_mu_0": [0.1]}}
    rows = f8m.f8_conventions({"B1": b1, "B4": b4})
    assert rows[0] == ("earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': inconclusive — μ̃ at the largest lag gru nan; multi+SGD AI ≥ "
                       "plain+Adam on 1/1 tasks; plain+Adam median AI at the largest lag: t nan")
    assert rows[1].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'author': reproduced — μ̃ at the largest lag gru 0.1;")


# ----------------------------------------------------------------------------------------------
# f8_conventions
# ----------------------------------------------------------------------------------------------


def test_f8_conventions_read_each_conventions_keys():
    """lwsim keys: reproduced; the author's keys (author_mu_*, median_last_author): not reproduced."""
    b1 = {m: {"lags": [1.0, 2.0], "mu_4": np.array([1.0, 0.1]), "author_mu_4": np.array([1.0, 0.9])}
          for m in ("sharedgate", "diaggate")}
    b4 = {"adding": {"diaggate": {"median_last": np.array([5.0]), "median_last_author": np.array([1.0])},
                     "rnn": {"median_last": np.array([1.0]), "median_last_author": np.array([5.0])}}}
    rows = afind.f8_conventions({"B1": b1, "B4": b4})
    assert rows[0].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': reproduced")
    assert rows[1].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'author': not reproduced")
    assert "CHANGES" in rows[2]


def test_f8_under_both_conventions():
    b1 = {"sharedgate": {"mu_0": [1, 0.1], "author_mu_0": [1, 0.9]}}
    b4 = {t: {"diaggate": {"median_last": [30.0], "median_last_author": [30.0]},
              "rnn": {"median_last": [220.0], "median_last_author": [20.0]}} for t in ("a", "b", "c")}
    rows = f8_conventions({"B1": b1, "B4": b4})
    assert rows[0].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': inconclusive")
    assert "0/3" in rows[0]
    assert rows[1].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'author': inconclusive") and "3/3" in rows[1]
    b1["sharedgate"]["author_mu_0"] = [1, 0.2]
    rows = f8_conventions({"B1": b1, "B4": b4})
    assert rows[1].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'author': reproduced")
    assert "CHANGES" in rows[2]
    assert f8_conventions({"B1": b1}) == []


def test_f8_conventions_rows_whole():
    b1, b4 = _b14()
    rows = f8m.f8_conventions({"B1": b1, "B4": b4})
    # lwsim: μ̃ 0.25, 0.3 (both < 0.5); t1 nanmedian 20 < 30, t2 50 ≥ 50: 1 of 2 → inconclusive
    # author: μ̃ 0.25, 0.2; t1 5 ≥ median(4, 6) = 5: 1 of 1 (t2 has no author AI) → reproduced
    assert rows == [
        "earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': inconclusive — μ̃ at the largest lag sharedgate 0.25, gru 0.3; multi+SGD AI ≥ "
        "plain+Adam on 1/2 tasks; plain+Adam median AI at the largest lag: t1 40, t2 50",
        "earlier rule (μ̃ < 0.5, B4) under conventions 'author': reproduced — μ̃ at the largest lag sharedgate 0.25, gru 0.2; multi+SGD AI ≥ "
        "plain+Adam on 1/1 tasks; plain+Adam median AI at the largest lag: t1 6",
        "the verdict CHANGES with the conventions (exact lwsim quantities vs [B]'s approximations)"]
    b4["t1"]["diaggate"]["median_last"] = [40.0]          # lwsim: 2 of 2 → reproduced too
    assert f8m.f8_conventions({"B1": b1, "B4": b4})[2] == (
        "the verdict does not change with the conventions (exact lwsim quantities vs [B]'s approximations)")


def test_f8_conventions_without_author_values_or_mu():
    b1, b4 = _b14()
    for t in b4.values():
        t.get("rnn", {}).pop("median_last_author", None)
    rows = f8m.f8_conventions({"B1": {"rnn": {}}, "B4": b4})
    # no μ̃ (0 below 0.5) and 1 win of 2 (not most): not reproduced
    assert rows == ["earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': not reproduced — μ̃ at the largest lag not computed; multi+SGD AI ≥ "
                    "plain+Adam on 1/2 tasks; plain+Adam median AI at the largest lag: t1 40, t2 50"]
    assert f8m.f8_conventions({"B4": b4}) == [] and f8m.f8_conventions({"B1": b1, "B4": {}}) == []
    assert f8m.f8_conventions({"B1": b1, "B4": {"t": {"rnn": {"median_last": [1.0]}}}}) == []


@pytest.mark.parametrize("author", [True])        # the earlier rule, kept beside the scheme's verdict
def test_finding8_majority_ties_and_halves(author):
    def verdict(mu, multi, plain):
        r = _b(mu, multi, plain, author)
        if author:
            rows = f8_conventions(r)
            assert len(rows) == 1 and rows[0].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'author'")
            return rows[0].split(":")[1].split("—")[0].strip()
        return S2F.f8(r)[0][1]
    tie = ([[2.0, 2.0]] * 3, [[2.0, 2.0]] * 3)
    assert verdict(LAGDEP, *tie) == "reproduced"                  # a tie counts as a win (≥)
    half = ([[5.0]] * 2 + [[1.0]] * 2, [[2.0]] * 4)               # 2 of 4: not "most"
    assert verdict(LAGDEP, *half) == "inconclusive"
    assert verdict(FLAT, *half) == "not reproduced"               # no lag dependence and ≤ half
    three = ([[5.0]] * 3 + [[1.0]], [[2.0]] * 4)                  # 3 of 4
    assert verdict(LAGDEP, *three) == "reproduced"
    assert verdict(FLAT, *three) == "inconclusive"
    # AI over lags [10, 1, 1]: median 1 < 2 (mean 4 would win)
    skew = ([[10.0, 1.0, 1.0]] * 3, [[2.0, 2.0, 2.0]] * 3)
    assert verdict(LAGDEP, *skew) == "inconclusive"
    # plain [1, 1, 1.5, 9]: median 1.25 (lower median 1, mean 3.125): 1.1 loses, 1.3 wins
    assert verdict(LAGDEP, [[1.1] * 4] * 3, [[1.0, 1.0, 1.5, 9.0]] * 3) == "inconclusive"
    assert verdict(LAGDEP, [[1.3, 1.3, 1.3, 1.3]] * 3, [[1.0, 1.0, 1.5, 9.0]] * 3) == "reproduced"
    # μ̃ = 0.5 exactly at the largest lag is not < 0.5
    assert verdict({0: [1.0, 0.5]}, *tie) == "inconclusive"


def test_f8_conventions_rows_and_the_change_line():
    r = _b(LAGDEP, [[2.0]] * 4, [[2.0, 7.0]] * 4)
    a = _b(FLAT, [[2.0]] * 4, [[2.0, 7.0]] * 4, author=True)
    for m in r["B1"]:
        r["B1"][m].update(a["B1"][m])
    for t in r["B4"]:
        for m in r["B4"][t]:
            r["B4"][t][m].update(a["B4"][t][m])
    rows = f8_conventions(r)
    # lwsim: μ̃ 0.2 (< 0.5) and AI 2 vs median(2, 7) = 4.5: 0/4 wins → inconclusive
    assert rows[0].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': inconclusive") and "0/4" in rows[0]
    assert "constgate 0.2," in rows[0] and "t0 7" in rows[0]      # plain+Adam AI at the largest lag
    # author: μ̃ 0.7, 0/4 wins → not reproduced; the verdict changes
    assert rows[1].startswith("earlier rule (μ̃ < 0.5, B4) under conventions 'author': not reproduced") and "0/4" in rows[1]
    assert "CHANGES" in rows[2]


# ----------------------------------------------------------------------------------------------
# f8
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# findings
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# f8 by the verdict scheme (docs/experiments.md §5.5.2), hand tables
# ----------------------------------------------------------------------------------------------

HALF3 = 4.302652729749462 / np.sqrt(3)


def _b8(plain=(0.5, 0.52, 0.48), gated=(0.1, 0.1, 0.1), multi=(2.0, 2.0, 2.0), ref=(1.0, 1.0, 1.0), tasks=("t1",)):
    b1 = {"diaggate": {"lags": [1.0, 2.0], "mu_0": [1.0, 0.9], "last_lag_mu_seeds": list(gated)}}
    if plain is not None:
        b1["rnn"] = {"last_lag_mu_seeds": list(plain)}
    b6 = {t: {"diaggate": {"AI": {"seeds": [0, 1, 2], "values": list(multi)}},
              "rnn": {"AI": {"seeds": [0, 1, 2], "values": list(ref)}}} for t in tasks}
    return {"B1": b1, "B6": b6}


def test_f8_scheme_by_hand():
    (n, v, rows, rule), = f8m.f8(_b8())
    assert (n, v) == (8, "reproduced")
    assert rows[0] == "parts: 8a reproduced (AND over the gated models), 8b reproduced (on most of 1 tasks)"
    h = 0.02 * HALF3                                # differences 0.4, 0.42, 0.38: sd 0.02
    assert rows[1] == (f"8a diaggate: plain μ̃ − diaggate μ̃ at the largest lag (final checkpoint), per seed 0.4 "
                       f"[{0.4 - h:.3g}, {0.4 + h:.3g}] (3 seeds) → reproduced (region > 0.1; 3 of 3 seeds); plain 0.5, "
                       "diaggate 0.1")
    assert rows[2] == ("8b t1: log2(AI multi+SGD / AI plain+Adam) of the realised gradients (B6), per seed 1 [1, 1] "
                       "(3 seeds) → reproduced (region > log2 0.9 = -0.152; 3 of 3 seeds)")
    assert rule.startswith("rule: 8a each gated model's 95% seed interval of plain μ̃ − gated μ̃ above 0.1, AND")


def test_f8_each_part_and_most_tasks():
    # gated μ̃ above the plain RNN's (slower decay): 8a not reproduced
    assert f8m.f8(_b8(plain=(0.0, 0.01, 0.02)))[0][2][0].startswith("parts: 8a not reproduced")
    assert f8m.f8(_b8(plain=(0.0, 0.01, 0.02)))[0][1] == "not reproduced"
    # multi-gate AI half of plain's: log2 −1 → 8b not reproduced
    assert f8m.f8(_b8(multi=(0.5, 0.5, 0.5)))[0][1] == "not reproduced"
    # AI within 10%: log2(0.95) = −0.074 > −0.152 → non-inferior
    assert f8m.f8(_b8(multi=(0.95, 0.95, 0.95)))[0][1] == "reproduced"
    # two tasks, one each way: not "most" → 8b inconclusive
    r = _b8(tasks=("t1", "t2"))
    r["B6"]["t2"]["diaggate"]["AI"]["values"] = [0.5, 0.5, 0.5]
    v, rows = f8m.f8(r)[0][1:3]
    assert v == "inconclusive" and rows[0].endswith("8b inconclusive (on most of 2 tasks)")
    # no plain RNN in B1: 8a inconclusive
    assert f8m.f8(_b8(plain=None))[0][2][0].startswith("parts: 8a inconclusive")


def test_f8_pairs_the_anisotropies_by_seed():
    r = _b8(multi=(1.0, 2.0, 4.0), ref=(1.0, 2.0, 4.0))
    assert "per seed 0 [0, 0] (3 seeds)" in f8m.f8(r)[0][2][2]               # paired: ratio 1 everywhere
    r["B6"]["t1"]["rnn"]["AI"]["seeds"] = [2, 1, 0]                          # the same values, other seeds
    assert "per seed 0 [-4.97, 4.97] (3 seeds)" in f8m.f8(r)[0][2][2]     # log2 ratios −2, 0, 2


def test_f8_findings_and_titles():
    out = f8m.findings(_b8())
    assert list(out) == [8] and out[8][1] == "reproduced"
    assert f8m.findings({}) == {} and f8m.f8({"B1": _b8()["B1"]}) is None
    assert f8m.TITLES == {8: "[B] Gates make the effective learning rate lag-dependent; multi-gate anisotropy ≥ "
                             "plain RNN + Adam"}


def test_f8_and_findings_whole_on_a_mixed_table():
    """Every row of finding 8 on one hand table: a gated model from before the contrast (its last μ̃
    key's last value), one without a plain RNN in this call, a B6 task with an undefined seed (AI 0),
    tasks lacking values, seeds or the plain model (skipped or empty), B4 beside it, and the earlier
    rule appended. The dicts' order puts every skipped entry before one that is not."""
    r = {"B1": {"rnn": {"mu_0": [0.1]},
                "diaggate": {"mu_0": [1.0], "last_lag_mu_seeds": [0.12345, 0.2, 0.3]},
                "constgate": {"mu_0": [1.0, 0.9], "mu_1": [1.0, 0.9], "mu_2": [1.0, 0.3, 0.25]}},
         "B4": {"t2": {"rnn": {"median_last": [1.0]}},
                "t1": {"diaggate": {"median_last": [1.0, 3.0, np.nan]}, "rnn": {"median_last": [3.0, 1.0, 2.0]}}},
         "B6": {"t2": {"diaggate": {"AI": {"seeds": [0]}}, "rnn": {"AI": {"seeds": [0], "values": [1.0]}}},
                "t3": {"diaggate": {"AI": {"seeds": [0, 1], "values": [1.0, 1.0]}}},
                "t1": {"diaggate": {"AI": {"seeds": [0, 1, 2], "values": [2.0, 0.0, 4.0]}},
                       "rnn": {"AI": {"seeds": [2, 1, 0], "values": [1.0, 1.0, 1.0]}}}}}
    # t1 per seed: log2(2/1) = 1, AI 0 → undefined, log2(4/1) = 2: mean 1.5, sd √½, t_{0.975,1} 12.706
    half = 12.706204736174707 * np.sqrt(0.5) / np.sqrt(2)
    rows = ["parts: 8a inconclusive (AND over the gated models), 8b inconclusive (on most of 1 tasks)",
            "8a diaggate: μ̃ at the largest lag per seed [0.123, 0.2, 0.3]; no plain-RNN contrast in this call "
            "→ inconclusive",
            "B1 constgate: μ̃ at the largest lag (final checkpoint) = 0.25",
            f"8b t1: log2(AI multi+SGD / AI plain+Adam) of the realised gradients (B6), per seed 1.5 "
            f"[{1.5 - half:.3g}, {1.5 + half:.3g}] (2 seeds, 1 undefined) → inconclusive (region > log2 0.9 = -0.152; "
            "2 of 2 seeds)",
            "beside it, B4 t1 (Jacobian products, does not decide): median AI multi+SGD 2 vs plain+Adam 2"]
    rule = ("rule: 8a each gated model's 95% seed interval of plain μ̃ − gated μ̃ above 0.1, AND; 8b per task the "
            "seed interval of log2(AI ratio) above log2 0.9, on most tasks; 8a AND 8b (docs/experiments.md §5.5.2)")
    assert f8m.f8(r) == [(8, "inconclusive", rows, rule)]
    # the earlier rule: μ̃ 1 (diaggate's mu_0) and 0.25 (< 0.5): 1 of 2 lag-dependent; AI 2 ≥ 2 on t1
    earlier = ("earlier rule (μ̃ < 0.5, B4) under conventions 'lwsim': inconclusive — μ̃ at the largest lag "
               "diaggate 1, constgate 0.25; multi+SGD AI ≥ plain+Adam on 1/1 tasks; plain+Adam median AI at the "
               "largest lag: t1 2")
    assert f8m.findings(r) == {8: (8, "inconclusive", rows + [earlier], rule)}
    assert f8m.extend_f8(r, {9: (9, "x", [], "")}) == {9: (9, "x", [], "")}
    # a plain-RNN AI of 0 leaves that seed undefined too
    assert "per seed 1 [1, 1] (2 seeds, 1 undefined)" in f8m.f8(_b8(ref=(1.0, 0.0, 1.0)))[0][2][2]
    # values without seeds, or a plain model without values: no seed pairs, no interval
    for multi, ref in (({"values": [1.0]}, {"seeds": [0], "values": [1.0]}), ({"seeds": [0], "values": [1.0]},
                                                                             {"seeds": [0]})):
        b = _b8()
        b["B6"]["t1"] = {"diaggate": {"AI": multi}, "rnn": {"AI": ref}}
        assert "per seed n/a → inconclusive (region > log2 0.9 = -0.152; 0 of 0 seeds)" in f8m.f8(b)[0][2][2]
