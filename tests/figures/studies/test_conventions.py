"""Tests of lwsim/figures/studies/conventions (laid out like the code: docs/testing.md).

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
  P5 a_conventions: the "lwsim" detection table on the "author" statistic (conventions swapped in
     matched_statistic) → test_conventions_each_key_from_its_own_convention
  P6 summary: Ĥ_N growth of every convention read from h_n_lwsim
     → test_conventions_summary_and_lines_read_each_convention

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ.

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

import lwsim
import lwsim.figures.studies
from lwsim import diagnostics as dg, stats
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies.behaviour import figures as A15
from lwsim.figures.studies.conventions import (
    experiment as cx,
    figures as A13,
    figures as cf,
    findings as cfind,
)
from lwsim.figures.studies.conventions.findings import RULE_TEXT, conventions_lines
from lwsim.figures.style import color
from lwsim.tasks import make as make_task
from lwsim.train import train
from helpers import _edges
from helpers import _close


# --- A13 -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def conventions_run():
    c = dict({k: v for k, v in cx.SIZES["a_conventions"]["smoke"].items() if k != "seeds"}, cell="gru", seed=212, backend="numpy",
             eps=2.0, n_grid=[2 ** i for i in range(1, 14)])    # ε 2: N̂ finite (at 20 every N̂ is inf here)
    out = EXPERIMENTS["a_conventions"](c)
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"], coefs=c["task_coefs"],
                     sigma_y=c["sigma_y"])
    ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
    cell = lwsim.make_cell("gru", c["D"], c["H"], layernorm=True, readout="every", dtype="float32")
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
    res = train(cell, p0, ds, optimizer="adamw", optimizer_kwargs={"lr": c["lr"], "weight_decay": c["weight_decay"]},
                epochs=c["epochs"], batch_size=c["batch"], clip=c["clip"], backend="numpy", seed=c["seed"],
                progress=False)
    return c, out, cell.with_dtype("float64"), res.astype("float64"), ds


def _a13_runs(h_lwsim, h_author):
    runs = []
    for cell in ("constgate", "sharedgate", "diaggate", "gru", "lstm"):
        fast = cell in cf.FAST
        r = {"lags": [1.0, 2.0], "n_grid": [1.0, 10.0, 100.0], "rel_r": 0.0, "rel_gamma": 0.0,
             "f_lwsim": np.array([1.0, 0.5]), "f_author": np.array([1.0, 0.5])}
        for conv, h in (("lwsim", h_lwsim), ("author", h_author)):
            r[f"h_n_{conv}"] = np.array(h(fast))
            r[f"alpha_{conv}"] = np.array([1.5, 1.5])
            r[f"decay_{conv}"] = {"lambda": 1.0 if fast else 0.1, "selected_bic": "exponential"}
        runs.append(({"cell": cell, "seed": 1}, r))
    return {"a_conventions": runs}


# ---- A13 summary rules and the FINDINGS.md section ---------------------------------------------
def _a13_results(lam, growth, alpha):
    """Synthetic A13 results: per cell (λ, Ĥ_N growth, mean α̂) per convention."""
    from lwsim.figures.presets import A_CELLS
    cells = {}
    for i, cell in enumerate(A_CELLS):
        r = {}
        for conv in ("lwsim", "author"):
            h = np.zeros(6)
            h[3:] = 5.0
            h[-1] = 5.0 + growth[conv][i]                    # growth over the upper half: h[-1] − h[3]
            r[f"decay_{conv}"] = {"lambda": lam[conv][i], "selected_bic": "tempered"}
            r[f"h_n_{conv}"] = h
            r[f"alpha_{conv}"] = np.array([alpha[conv][i] - 0.1, alpha[conv][i] + 0.1])
        cells[cell] = [r]
    return cells


KEYS = ["slow_cells_decay_slower", "fast_cells_saturate", "slow_cells_keep_growing", "heavier_tails_in_slow_cells"]


def _a13(lw_rules, au_rules, cells=None):
    cells = cells or {"lwsim": {}, "author": {}}
    return {"A13": {"summary": {"lwsim": {"rules": lw_rules, "cells": cells["lwsim"]},
                                "author": {"rules": au_rules, "cells": cells["author"]}}}}


BLUE, RED, GREY = "#1f77b4", "#d62728", "#7f7f7f"        # constgate, gru, rnn


def _cell(lwsim, author=None):
    """Runs of one cell from (λ per seed (None: no fit), Ĥ_N growth per seed, mean α̂ per seed) per
    convention; the author's the same as lwsim's unless given."""
    runs = []
    for i in range(len(lwsim[1])):
        r = {}
        for conv, (ls, gs, als) in (("lwsim", lwsim), ("author", author or lwsim)):
            r[f"decay_{conv}"] = {"error": "no fit"} if ls[i] is None else {"lambda": ls[i], "selected_bic": f"law{i}"}
            r[f"h_n_{conv}"] = [0.0, 0.0, 5.0, 5.0 + gs[i]]       # _growth = h[3] − h[2] = gs[i]
            r[f"alpha_{conv}"] = [als[i] - 0.25, als[i] + 0.25]     # mean als[i]
        runs.append(r)
    return runs


def _a13_runs_study_figures():
    """constgate, three seeds (lags 1, 2, 4; N 10, 100): f_lwsim normalised by f(1) = [1, .5, .25], [1, .5, .25],
    [1, 2, .25]; h_n_lwsim [0, 5], [0, 5], [6, 5]; gru one seed; one sgd run (ignored)."""
    runs = []
    for s, (f, h) in enumerate((([2, 1, 0.5], [0, 5]), ([4, 2, 1], [0, 5]), ([1, 2, 0.25], [6, 5]))):
        runs.append(({"cell": "constgate", "seed": s},
                     {"lags": [1, 2, 4], "n_grid": [10, 100], "rel_r": s, "rel_gamma": 10 + s,
                      "f_lwsim": f, "f_author": [1, 0.1, 0.01], "h_n_lwsim": h, "h_n_author": [1, 1],
                      "alpha_lwsim": [1.0 + s, 5.0], "alpha_author": [1.5, 1.5],
                      "decay_lwsim": {"lambda": 0.1 * (s + 1), "selected_bic": "exponential"},
                      "decay_author": {"error": "no fit"}}))
    g = {"lags": [1, 2], "n_grid": [10, 1000], "rel_r": 7, "rel_gamma": 8, "f_lwsim": [3, 1.5], "f_author": [2, 1],
         "h_n_lwsim": [1, 2], "h_n_author": [2, 4], "alpha_lwsim": [1.2], "alpha_author": [1.3],
         "decay_lwsim": {"lambda": 0.05, "selected_bic": "power"}, "decay_author": {"lambda": 0.06,
                                                                                   "selected_bic": "power"}}
    runs.insert(0, ({"cell": "gru", "seed": 0}, g))
    runs.append(({"cell": "constgate", "seed": 9, "optimizer": "sgd"}, {**runs[1][1], "rel_r": 99}))
    return runs


# ----------------------------------------------------------------------------- A13 summary
def _a13_sharp_aggregates(table):
    """table: {cell: [(λ or None for a failed fit, Ĥ_N growth, α̂ over lags) per seed]}."""
    cells = {}
    for cell, seeds in table.items():
        runs = []
        for lam, growth, alpha in seeds:
            h = np.zeros(6)
            h[3:] = 5.0
            h[-1] = 5.0 + growth                           # growth = h[-1] − h[3]
            r = {}
            for conv in ("lwsim", "author"):
                r[f"decay_{conv}"] = ({"error": "no fit"} if lam is None else
                                      {"lambda": lam, "selected_bic": "exponential"})
                r[f"h_n_{conv}"] = h
                r[f"alpha_{conv}"] = np.asarray(alpha, float)
            runs.append(r)
        cells[cell] = runs
    return cells


SKEW_A = [1.0, 1.0, 1.0, 2.6]                              # mean 1.4, median 1.0


FLAT_A = [1.2] * 4


def test_conventions_each_key_from_its_own_convention(conventions_run):
    c, out, cell, res, ds = conventions_run
    lags = np.asarray(c["lags"])

    def conv_outputs(conv, p=res.params, x=ds.x_diag, y=ds.y_diag):
        env = dg.envelope(cell, p, x, res.optimizer, lags, backend="numpy", progress=False, conventions=conv,
                          engine="numpy" if conv == "author" else "numba")
        ms = dg.matched_statistic(cell, p, x, y, res.optimizer, lags, n_directions=c["K"], seed=c["seed"],
                                  orient=True, backend="numpy", progress=False, conventions=conv)
        det = stats.detection_table(ms.samples, lags, c["n_grid"], eps=c["eps"], seed=c["seed"],
                                    n_boot=c["n_boot"], conventions=conv)
        return env.f, ms.samples.mean(axis=1), det.alpha, det.n_hat

    ref = {conv: conv_outputs(conv) for conv in cx.CONVENTIONS}
    for conv in cx.CONVENTIONS:
        f, psi, alpha, n_hat = ref[conv]
        np.testing.assert_array_equal(out[f"f_{conv}"], f)
        np.testing.assert_array_equal(out[f"psi_mean_{conv}"], psi)
        np.testing.assert_array_equal(out[f"alpha_{conv}"], alpha)
        np.testing.assert_array_equal(out[f"n_hat_{conv}"], n_hat)
    # the two conventions differ, so a swap would be seen; and so do the training rows
    for i in (0, 1):          # f and ψ̄ (α̂ is 2 under both at this size; N̂ differs)
        assert not np.array_equal(ref["lwsim"][i], ref["author"][i]), i
    assert not np.array_equal(ref["lwsim"][3], ref["author"][3])
    train_rows = conv_outputs("lwsim", x=ds.x_train[:, :c["n_diag"]], y=ds.y_train[:, :c["n_diag"]])
    assert not np.array_equal(train_rows[0], out["f_lwsim"]) and not np.array_equal(train_rows[1], out["psi_mean_lwsim"])


# ----------------------------------------------------------------------------------------------
# _growth
# ----------------------------------------------------------------------------------------------


# ============================================================================ A13 (conventions)
def test_a13_growth_is_the_rise_over_the_upper_half():
    assert A13._growth([1, 2, 4, 7]) == 3.0                  # h[-1] − h[4 // 2] = 7 − 4
    assert A13._growth([1, 2, 4, 7, 11]) == 7.0              # 11 − h[2]
    assert type(A13._growth(np.array([1, 2]))) is float      # 2 − h[1] = 0.0
    assert A13._growth(np.array([1, 2])) == 0.0
    # windows stored as unsigned lag counts: the growth is still signed, 3 − 5 = −2
    assert A13._growth(np.array([1, 5, 3], dtype=np.uint8)) == -2.0


# ----------------------------------------------------------------------------------------------
# summary
# ----------------------------------------------------------------------------------------------


def test_a13_rules_and_findings_section():
    from lwsim.figures.studies.conventions.figures import summary
    from lwsim.figures.studies.conventions.findings import conventions_lines
    lam = {"lwsim": [0.10, 0.12, 0.05, 0.06, 0.07], "author": [0.10, 0.12, 0.05, 0.11, 0.07]}
    growth = {"lwsim": [0, 0, 3, 2, 1], "author": [0, 0, 3, 2, 1]}
    alpha = {"lwsim": [1.9, 1.8, 1.5, 1.6, 1.7], "author": [1.9, 1.8, 1.5, 1.6, 1.7]}
    s = summary(_a13_results(lam, growth, alpha))
    assert s["lwsim"]["rules"] == {"slow_cells_decay_slower": True, "fast_cells_saturate": True,
                                   "slow_cells_keep_growing": True, "heavier_tails_in_slow_cells": True}
    # author: the GRU's λ (0.11) is above ConstGate's (0.10): only the first rule flips
    assert s["author"]["rules"]["slow_cells_decay_slower"] is False
    assert s["lwsim"]["cells"]["gru"] == {"lambda": 0.06, "selected_bic": ["tempered"], "h_growth": 2.0,
                                          "alpha_mean": pytest.approx(1.6)}
    lines = conventions_lines({"A13": {"summary": s}})
    assert "**verdicts change**" in lines[2] and "(1 of 4 rules differ)" in lines[2]
    assert sum("— **changes**" in ln for ln in lines) == 1
    same = summary(_a13_results({"lwsim": lam["lwsim"], "author": lam["lwsim"]}, growth, alpha))
    assert "**no verdict changes**" in conventions_lines({"A13": {"summary": same}})[2]
    # boundaries: growth 0 counts as saturated, mean α̂ equal is not "heavier tails"
    edge = summary(_a13_results({"lwsim": [0.07, 0.12, 0.05, 0.06, 0.07], "author": lam["author"]},
                                {"lwsim": [0, 0, 0, 2, 1], "author": [0.5, 0, 3, 2, 1]},
                                {"lwsim": [1.6] * 5, "author": [1.6] * 5}))
    assert edge["lwsim"]["rules"]["slow_cells_keep_growing"] is False
    assert edge["author"]["rules"]["fast_cells_saturate"] is False
    assert edge["lwsim"]["rules"]["heavier_tails_in_slow_cells"] is False
    assert edge["lwsim"]["rules"]["slow_cells_decay_slower"] is False      # a tie is not "slower"
    assert conventions_lines({}) == []


def test_a13_summary_per_cell_and_rules_at_their_edges():
    cells = {
        # lwsim: fast λ min 0.25 = slow λ max 0.25 → not slower; fast growth 0 and −1 (≤ 0) → saturate;
        # slow growth 0 and 2 → not all growing; α means 1.5 = 1.5 → not heavier
        # author: fast λ 0.5 > slow max 0.25 → slower; fast growth 1 and −1 → not all ≤ 0; slow 1 and 2 →
        # growing; α fast 1.875 > slow 1.5 → heavier tails in the slow cells
        "constgate": _cell(([0.375, None, 0.125], [0.0, 0.0, 0.0], [1.0, 2.0, 1.5]),
                           ([0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [1.875, 1.875, 1.875])),
        "sharedgate": _cell(([0.25], [-1.0], [1.5]), ([0.5], [-1.0], [1.875])),
        "gru": _cell(([0.25], [0.0], [1.5]), ([0.25], [1.0], [1.5])),
        "lstm": _cell(([0.125], [2.0], [1.5]), ([0.125], [2.0], [1.5])),
        "rnn": _cell(([9.0], [-5.0], [0.125])),          # neither fast nor slow: no rule reads it
    }
    s = A13.summary(cells)
    assert list(s) == ["lwsim", "author"]
    c = s["lwsim"]["cells"]["constgate"]
    # λ mean over the fitted seeds only: (0.375 + 0.125)/2; growth mean (0+0+0)/3; α (1 + 2 + 1.5)/3
    assert c == {"lambda": 0.25, "selected_bic": ["law0", "law2"], "h_growth": 0.0, "alpha_mean": 1.5}
    assert all(type(c[k]) is float for k in ("lambda", "h_growth", "alpha_mean"))
    assert s["lwsim"]["cells"]["sharedgate"]["h_growth"] == -1.0
    assert s["lwsim"]["rules"] == {"slow_cells_decay_slower": False, "fast_cells_saturate": True,
                                   "slow_cells_keep_growing": False, "heavier_tails_in_slow_cells": False}
    assert type(s["lwsim"]["rules"]["heavier_tails_in_slow_cells"]) is bool
    assert s["author"]["cells"]["constgate"] == {"lambda": 0.5, "selected_bic": ["law0", "law1", "law2"],
                                                 "h_growth": 1.0, "alpha_mean": 1.875}
    assert s["author"]["rules"] == {"slow_cells_decay_slower": True, "fast_cells_saturate": False,
                                    "slow_cells_keep_growing": True, "heavier_tails_in_slow_cells": True}


def test_a13_no_rules_without_both_groups_or_with_an_unfitted_cell():
    none = {"constgate": _cell(([0.5], [0.0], [1.0])), "gru": _cell(([None, None], [1.0, 1.0], [1.0, 1.0]))}
    s = A13.summary(none)
    assert s["lwsim"]["cells"]["gru"]["lambda"] is None and s["lwsim"]["cells"]["gru"]["selected_bic"] == []
    assert s["lwsim"]["rules"] == {} and s["author"]["rules"] == {}
    assert A13.summary({"gru": _cell(([0.1], [1.0], [1.0]))})["lwsim"]["rules"] == {}          # no fast cell
    assert A13.summary({"constgate": _cell(([0.1], [1.0], [1.0]))})["lwsim"]["rules"] == {}    # no slow cell


def test_a13_summary_seed_means_and_rules():
    from lwsim.figures.studies.conventions.figures import summary
    spec = {
        "constgate": [(0.25, -1.0, SKEW_A), (0.25, -1.0, SKEW_A), (1.0, 2.5, SKEW_A)],
        "sharedgate": [(0.25, 0.0, SKEW_A)] * 3,
        "diaggate": [(0.0625, 1.0, FLAT_A)] * 3,
        "gru": [(0.0625, 0.0, FLAT_A), (0.0625, 0.0, FLAT_A), (None, 3.0, FLAT_A)],
        "lstm": [(0.0625, 1.0, FLAT_A), (0.0625, 1.0, FLAT_A), (0.625, 1.0, FLAT_A)],
    }
    s = summary(_a13_sharp_aggregates(spec))["author"]
    c = s["cells"]
    assert c["constgate"]["lambda"] == 0.5                 # (0.25 + 0.25 + 1)/3 (median 0.25)
    assert c["lstm"]["lambda"] == 0.25                     # (0.0625·2 + 0.625)/3 (median 0.0625)
    assert c["gru"]["lambda"] == 0.0625                    # the failed fit is left out
    assert c["gru"]["selected_bic"] == ["exponential"] * 2
    assert c["constgate"]["h_growth"] == 0.5 / 3 and c["gru"]["h_growth"] == 1.0   # medians −1, 0
    assert c["sharedgate"]["alpha_mean"] == pytest.approx(1.4, abs=1e-12)            # median 1.0
    rules = s["rules"]
    # λ: min fast 0.25 (sharedgate) is not > max slow 0.25 (lstm); with medians 0.25 > 0.0625
    assert rules["slow_cells_decay_slower"] is False
    assert rules["fast_cells_saturate"] is False           # constgate mean growth 1/6 > 0
    assert rules["slow_cells_keep_growing"] is True        # gru mean growth 1 > 0 (median 0)
    assert rules["heavier_tails_in_slow_cells"] is True    # mean α̂ 1.4 > 1.2 (medians 1.0 < 1.2)


# ----------------------------------------------------------------------------------------------
# fig_a13
# ----------------------------------------------------------------------------------------------


def test_conventions_summary_and_lines_read_each_convention():
    # lwsim: fast cells flat, slow cells growing; author: the opposite
    R = _a13_runs(lambda fast: [1.0, 2.0, 2.0] if fast else [1.0, 2.0, 5.0],
                  lambda fast: [1.0, 2.0, 5.0] if fast else [1.0, 2.0, 2.0])
    fig, data = cf.fig_a13(R)
    _close(fig)
    s = data["summary"]
    assert s["lwsim"]["rules"]["fast_cells_saturate"] and s["lwsim"]["rules"]["slow_cells_keep_growing"]
    assert not s["author"]["rules"]["fast_cells_saturate"] and not s["author"]["rules"]["slow_cells_keep_growing"]
    assert s["lwsim"]["cells"]["gru"]["h_growth"] == 3.0 and s["author"]["cells"]["gru"]["h_growth"] == 0.0
    lines = cfind.conventions_lines({"A13": data})
    assert "**verdicts change**" in lines[2]
    assert any("finding 1:" in ln and "lwsim yes, author no" in ln for ln in lines)


def test_a13_figure_bands_data_and_axes():
    # private: matplotlib's Legend has no public getter for its column count (matplotlib's name, not lwsim's)
    fig, data = A13.fig_a13({"a_conventions": _a13_runs_study_figures()})
    assert tuple(fig.get_size_inches()) == (10.0, 3.6)         # two panels, 5.0 × 3.6 each
    assert list(data["cells"]) == ["constgate", "gru"]        # A_CELLS order
    c = data["cells"]["constgate"]
    np.testing.assert_array_equal(c["lags"], [1, 2, 4])
    np.testing.assert_array_equal(c["N"], [10, 100])
    assert c["rel_r"] == [0, 1, 2] and c["rel_gamma"] == [10, 11, 12]          # the sgd run left out
    # f mean over seeds (not normalised): [(2+4+1)/3, (1+2+2)/3, (0.5+1+0.25)/3]
    np.testing.assert_allclose(c["lwsim"]["f"], [7 / 3, 5 / 3, 1.75 / 3])
    np.testing.assert_allclose(c["lwsim"]["h_n"], [2, 5])
    np.testing.assert_allclose(c["lwsim"]["alpha"], [2, 5])                   # (1 + 2 + 3)/3, 5
    assert c["lags"].dtype == np.float64 and c["N"].dtype == np.float64        # given as ints
    assert [d["lambda"] for d in c["lwsim"]["decay"]] == pytest.approx([0.1, 0.2, 0.3])
    assert c["author"]["decay"] == [{"error": "no fit"}] * 3
    np.testing.assert_allclose(c["author"]["f"], [1, 0.1, 0.01])
    np.testing.assert_allclose(data["cells"]["gru"]["author"]["h_n"], [2, 4])

    ax0, ax1 = [a for a in fig.axes if a.get_visible()]
    assert ax0.get_yscale() == "log" and ax0.get_xlabel() == "lag ℓ" and ax0.get_ylabel() == "f(ℓ) / f(1)"
    assert ax0.get_title() == "A13 envelope: lwsim (solid) vs author (dashed)"
    assert ax1.get_xscale() == "log" and ax1.get_xlabel() == "N" and ax1.get_ylabel() == r"$\hat H_N$"
    assert ax1.get_title() == "A13 learnability window"
    labels = ["constgate lwsim", "constgate author", "gru lwsim", "gru author"]
    for ax in (ax0, ax1):
        lines = ax.get_lines()
        assert [ln.get_label() for ln in lines] == labels
        assert [ln.get_linestyle() for ln in lines] == ["-", "--", "-", "--"]
        assert [ln.get_color() for ln in lines] == [BLUE, BLUE, RED, RED]
    # normalised f: mean [1, 1, 0.25], sd at ℓ = 2 of [.5, .5, 2]: √((.25+.25+1)/3) = √0.5;
    # log-axis band: upper m + sd, lower m²/(m + sd)
    np.testing.assert_allclose(ax0.get_lines()[0].get_ydata(), [1, 1, 0.25])
    np.testing.assert_allclose(ax0.get_lines()[3].get_ydata(), [1, 0.5])            # gru author [2, 1] / 2
    e = _edges(ax0.collections[0])
    r = math.sqrt(0.5)
    assert e[2.0] == pytest.approx((1 / (1 + r), 1 + r)) and e[1.0] == pytest.approx((1.0, 1.0))
    # h_n: mean [2, 5], sd at N = 10 of [0, 0, 6]: √8 → lower edge 2 − √8 < 0 floored at 0
    np.testing.assert_allclose(ax1.get_lines()[0].get_ydata(), [2, 5])
    assert _edges(ax1.collections[0])[10.0] == pytest.approx((0.0, 2 + math.sqrt(8)))
    leg = ax1.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == labels
    assert leg.get_texts()[0].get_fontsize() == 5 and leg._ncols == 2
    assert ax0.get_legend() is None
    # the summary of the same runs: constgate λ (0.1 + 0.2 + 0.3)/3 under lwsim, none under author
    assert data["summary"]["lwsim"]["cells"]["constgate"]["lambda"] == pytest.approx(0.2)
    assert data["summary"]["author"]["cells"]["constgate"]["lambda"] is None
    assert data["summary"]["lwsim"]["rules"]["slow_cells_decay_slower"] is True     # 0.2 > 0.05


def test_a13_constants():
    assert A13.CONVENTIONS == ("lwsim", "author") and A13.LINES == {"lwsim": "-", "author": "--"}
    assert A13.FAST == ("constgate", "sharedgate") and A13.SLOW == ("diaggate", "gru", "lstm")
    assert A13.FIGURES == {"A13": A13.fig_a13} and A15.FIGURES == {"A15": A15.fig_a15}
    assert color("constgate") == BLUE


# ----------------------------------------------------------------------------------------------
# conventions_lines
# ----------------------------------------------------------------------------------------------


def test_conventions_lines_whole():
    lw = dict(zip(KEYS, [True, False, True, False]))
    au = dict(zip(KEYS, [True, True, True, False]))
    cells = {"lwsim": {"gru": {"lambda": 0.123456, "h_growth": 2.04, "alpha_mean": 1.6},
                       "lstm": {"lambda": None, "h_growth": -0.5, "alpha_mean": 1.23456}},
             "author": {"gru": {"lambda": None, "h_growth": 0.0, "alpha_mean": 1.5},
                        "lstm": {"lambda": 0.05, "h_growth": 3.0, "alpha_mean": 1.9}}}
    assert conventions_lines(_a13(lw, au, cells)) == [
        "## Conventions: lwsim vs the author's code (A13, docs/fidelity.md)", "",
        '**verdicts change** with conventions="author" (1 of 4 rules differ), same weights and sequences.', "",
        "- findings 1–2: every slow cell (DiagGate/GRU/LSTM) has a smaller exponential rate λ than every fast "
        "cell: lwsim yes, author yes",
        "- finding 1: Ĥ_N of ConstGate/SharedGate stops growing over the upper half of the N grid: lwsim no, "
        "author yes — **changes**",
        "- finding 2: Ĥ_N of the slow cells still grows over the upper half of the N grid: lwsim yes, author yes",
        "- finding 4: mean α̂ of the fast cells > mean α̂ of the slow cells: lwsim no, author no",
        "- gru: λ 0.1235 → n/a, Ĥ_N growth +2.0 → +0.0, mean α̂ 1.600 → 1.500",
        "- lstm: λ n/a → 0.0500, Ĥ_N growth -0.5 → +3.0, mean α̂ 1.235 → 1.900",
        ""]
    assert list(RULE_TEXT) == KEYS
    same = conventions_lines(_a13(lw, dict(lw)))
    assert same[2] == ('**no verdict changes** with conventions="author" (0 of 4 rules differ), same weights '
                       'and sequences.')
    assert not any("**changes**" in ln for ln in same) and same[-1] == "" and len(same) == 9


def test_conventions_lines_without_rules_or_a13():
    head = ["## Conventions: lwsim vs the author's code (A13, docs/fidelity.md)", ""]
    msg = ["Not enough cells with a decay fit in A13 to apply the rules.", ""]
    assert conventions_lines(_a13({}, dict(zip(KEYS, [True] * 4)))) == head + msg
    assert conventions_lines(_a13(dict(zip(KEYS, [True] * 4)), {})) == head + msg
    assert conventions_lines({"A1": {}}) == []
