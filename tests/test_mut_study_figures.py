"""Mutation-testing pins (issue 32) for three study figure builders: A15 (behaviour/figures.py,
the data finding 9 reads), B4–B6 ([B]'s S2 figures, b_s2/figures.py) and A13 (conventions/figures.py).

Each test builds a small hand-made ``results`` ({group: [(config, result), ...]}) with known
numbers and pins the returned data dict and what the figure shows (line data, styles, labels,
scales, legends) by hand.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.markers import MarkerStyle

from lwsim.figures.studies.b_anisotropy import figures as B
from lwsim.figures.studies.behaviour import figures as A15
from lwsim.figures.studies.conventions import figures as A13
from lwsim.figures.style import color

BLUE, RED, GREY = "#1f77b4", "#d62728", "#7f7f7f"        # constgate, gru, rnn
ORANGE, GREEN = "#ff7f0e", "#2ca02c"                    # sharedgate, diaggate


def _edges(coll):
    """{x: (lowest y, highest y)} of a fill_between polygon: the band's lower and upper edges."""
    out = {}
    for x, y in coll.get_paths()[0].vertices:
        lo, hi = out.get(float(x), (math.inf, -math.inf))
        out[float(x)] = (min(lo, float(y)), max(hi, float(y)))
    return out


def _marker_is(coll, m):
    st = MarkerStyle(m)
    return np.allclose(coll.get_paths()[0].vertices, st.get_path().transformed(st.get_transform()).vertices)


def _legend(ax):
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()], leg.get_texts()[0].get_fontsize()


# ============================================================================ A15 (behaviour)

def test_a15_nulls_of_keeps_the_first_runs_order_and_only_nulls_in_every_run():
    runs = [({}, {"nulls": ["lag", "full", "author"]}), ({}, {"nulls": ["full", "lag"]})]
    assert A15.nulls_of(runs) == ["lag", "full"]            # author missing from run 2; run 1's order
    assert A15.nulls_of(runs[1:] + runs[:1]) == ["full", "lag"]


def _pt(cell, seed, N, hb, hs, lag, full, **extra):
    return ({"cell": cell, "seed": seed, "N": N},
            {"nulls": ["lag", "full"], "h_beh": hb, "h_beh_smooth": hs, "h_diag_lag": lag, "h_diag_full": full,
             **extra})


def _collect_runs():
    lags = np.arange(1, 30.0)
    e = np.exp(-0.1 * lags)
    return [
        # seed 2 first (seeds are sorted), an N only seed 2 has (5000: not in the intersection)
        _pt("gru", np.int64(2), 10, 3, 2, 3, 0),
        _pt("gru", np.int64(2), 100, 5, 4, 3, 2),
        _pt("gru", np.int64(2), 1000, 9, 6, 5, 4, f=3 * e, lags=lags, decay={}),
        _pt("gru", np.int64(2), 5000, 20, 20, 20, 20, f=np.exp(-lags), lags=lags, decay={"selected_bic": "power"}),
        _pt("gru", 1, 10, 1, 2, 1, 0, h_diag_lag_init=0.25, h_diag_full_early=0.75, h_diag_author_init=9.0),
        _pt("gru", 1, 100, 3, 4, 1, 2),
        _pt("gru", 1, 1000, 5, 6, 1, 4, f=e, lags=lags, decay={"selected_bic": "exponential"}),
        # cells not in A_CELLS come after those that are, sorted; constgate before gru (A_CELLS order)
        _pt("zz", 1, 10, 1, 1, 1, 1),
        _pt("aa", 1, 10, 1, 1, 1, 1),
        _pt("constgate", 1, 10, 4, 4, 4, 4),
    ]


def test_a15_collect_points_and_per_cell_seed_arrays():
    data = A15.collect(_collect_runs())
    assert data["nulls"] == ["lag", "full"]
    assert list(data["cells"]) == ["constgate", "gru", "aa", "zz"]
    sc = data["scatter"]
    assert len(sc) == 10
    assert sc[0] == {"cell": "gru", "seed": 2, "N": 10.0, "h_beh": 3.0, "h_beh_smooth": 2.0,
                     "h_diag": {"lag": 3.0, "full": 0.0}}
    assert type(sc[0]["seed"]) is int and type(sc[0]["N"]) is float
    assert all(type(v) is float for v in (sc[0]["h_beh"], sc[0]["h_beh_smooth"], *sc[0]["h_diag"].values()))
    # Ĥ_N at init / early: only the lag and full nulls, keyed "null/point"; absent when none is given
    assert sc[4]["h_diag_points"] == {"lag/init": 0.25, "full/early": 0.75}
    assert all(type(v) is float for v in sc[4]["h_diag_points"].values())
    assert "h_diag_points" not in sc[5]

    d = data["cells"]["gru"]
    assert d["N"] == [10.0, 100.0, 1000.0] and d["seeds"] == [1, 2]
    # h_beh rows: seed 1 [1, 3, 5], seed 2 [3, 5, 9] → mean [2, 4, 7], population sd [1, 1, 2]
    np.testing.assert_array_equal(d["h_beh_seeds"], [[1, 3, 5], [3, 5, 9]])
    np.testing.assert_array_equal(d["h_beh_mean"], [2, 4, 7])
    np.testing.assert_array_equal(d["h_beh_sd"], [1, 1, 2])
    np.testing.assert_array_equal(d["h_beh_seeds_last"], [5, 9])
    np.testing.assert_array_equal(d["h_beh_smooth_seeds"], [[2, 4, 6], [2, 4, 6]])
    np.testing.assert_array_equal(d["h_beh_smooth_mean"], [2, 4, 6])
    # growth law on the seed means: rise 7 − 2 = 5; log slope = Σ(x−x̄)(H−H̄)/Σ(x−x̄)², x = ln10·(1,2,3)
    # → 5 ln10 / (2 ln²10) = 2.5/ln10; smooth: rise 4, slope 4 ln10/(2 ln²10) = 2/ln10
    assert d["growth"]["rise"] == 5.0 and d["growth"]["log_slope"] == pytest.approx(2.5 / math.log(10))
    assert d["growth_smooth"]["rise"] == 4.0
    assert d["growth_smooth"]["log_slope"] == pytest.approx(2 / math.log(10))
    lag, full = d["h_diag"]["lag"], d["h_diag"]["full"]
    np.testing.assert_array_equal(lag["seeds"], [[1, 1, 1], [3, 3, 5]])
    np.testing.assert_array_equal(lag["mean"], [2, 2, 3])
    np.testing.assert_array_equal(lag["sd"], [1, 1, 2])
    np.testing.assert_array_equal(lag["seeds_last"], [1, 5])
    np.testing.assert_array_equal(full["mean"], [0, 2, 4])
    np.testing.assert_array_equal(full["sd"], [0, 0, 0])
    # the envelope at the largest common N (1000): f = e^{−0.1ℓ} and 3 e^{−0.1ℓ} → mean 2 e^{−0.1ℓ}
    env = d["envelope"]
    assert env["per_seed_selected_bic"] == ["exponential", None]         # seed 2's decay has none
    assert env["selected_bic"] == "exponential" and env["selected"] == "exponential"
    assert env["lam"] == pytest.approx(0.1, rel=1e-9) and type(env["lam"]) is float
    c = data["cells"]["constgate"]
    assert c["N"] == [10.0] and c["seeds"] == [1] and c["growth"]["law"] == "flat"
    assert c["envelope"] == {"per_seed_selected_bic": []}             # no f at its largest N


def test_a15_envelope_law_power_error_and_empty():
    lags = np.arange(1, 30.0)
    p = lags ** -1.5
    out = A15.envelope_law([{"f": p, "lags": lags, "decay": {"selected_bic": "power"}},
                            {"f": 3 * p, "lags": lags}, {"decay": {"selected_bic": "x"}}])
    # mean f = 2 ℓ^{−1.5}: the power law is exact, β = 1.5
    assert out["per_seed_selected_bic"] == ["power"]      # only results with an f count; the 2nd has no decay
    assert out["selected"] == "power" and out["beta"] == pytest.approx(1.5, rel=1e-9)
    assert type(out["beta"]) is float and type(out["lam"]) is float and "error" not in out
    # the seed mean is taken in float64: two float32 envelopes of 2e38 e^{−0.1ℓ} would overflow float32's
    # sum (max 3.4e38) to inf
    big = np.float32(2e38) * np.exp(-0.1 * lags).astype(np.float32)
    out = A15.envelope_law([{"f": big, "lags": lags}, {"f": big, "lags": lags}])
    assert "error" not in out and out["lam"] == pytest.approx(0.1, rel=1e-5)
    assert A15.envelope_law([]) == {"per_seed_selected_bic": []}
    assert A15.envelope_law([{"decay": {"selected_bic": "power"}}]) == {"per_seed_selected_bic": []}
    bad = A15.envelope_law([{"f": [1.0, 0.5, 0.25], "lags": [1, 2, 3], "decay": {"selected_bic": "power"}}])
    assert bad == {"per_seed_selected_bic": ["power"],
                   "error": "f has only 2 usable points in the fit window (need min_points=8); "
                            "check floor/trim and that f is positive"}


NULLS4 = ["lag", "full", "author", "null4"]


def _a15_runs():
    """constgate: h_beh over seeds 1–3 = [0, 0, 6] at N=10 (mean 2, sd √8), [3, 3, 3] at N=100;
    gru: 1 and 2; smooth = −h_beh; Ĥ_N under the k-th null = h_beh + k. Given gru first."""
    out = []
    for cell, hb in (("gru", {10: [1, 1, 1], 100: [2, 2, 2]}), ("constgate", {10: [0, 0, 6], 100: [3, 3, 3]})):
        for N in (10, 100):
            for s in (1, 2, 3):
                h = float(hb[N][s - 1])
                r = {"nulls": NULLS4, "h_beh": h, "h_beh_smooth": -h}
                r.update({f"h_diag_{n}": h + k for k, n in enumerate(NULLS4)})
                out.append(({"cell": cell, "seed": s, "N": N}, r))
    return out


def test_a15_figure_panels_scatter_legends_and_tracking():
    fig, data = A15.fig_a15({"a_behaviour": _a15_runs()})
    assert tuple(fig.get_size_inches()) == (12.0, 3.2)          # 3 panels in one row, 4.0 × 3.2 each
    axes = [a for a in fig.axes if a.get_visible()]
    assert len(axes) == 3
    ax = axes[0]                                                # constgate (A_CELLS order)
    assert ax.get_title() == "A15 constgate" and ax.get_xscale() == "log"
    assert ax.get_xlabel() == "N (training sequences)" and ax.get_ylabel() == "window (lags)"
    beh, smooth, *diag = ax.get_lines()
    np.testing.assert_array_equal(beh.get_xdata(), [10, 100])
    np.testing.assert_array_equal(beh.get_ydata(), [2, 3])
    assert beh.get_color() == BLUE and beh.get_linestyle() == "-" and beh.get_label() == r"$H^{beh}_N$"
    np.testing.assert_array_equal(smooth.get_xdata(), [10, 100])
    np.testing.assert_array_equal(smooth.get_ydata(), [-2, -3])
    assert (smooth.get_marker(), smooth.get_linestyle(), smooth.get_markersize(), smooth.get_color(),
            smooth.get_label()) == ("x", "None", 5, BLUE, r"$H^{beh}_{1/2}$")
    assert len(diag) == 4
    for k, (line, n) in enumerate(zip(diag, NULLS4)):
        np.testing.assert_array_equal(line.get_ydata(), [2 + k, 3 + k])
        assert line.get_label() == rf"$\hat H_N$ ({n})" and line.get_color() == "black"
        assert line.get_linestyle() == ("--", "-.", ":", "--")[k]          # styles cycle over 3
        assert line.get_marker() == ("o", "^", "s", "D")[k]
        assert (line.get_linewidth(), line.get_markersize(), line.get_markerfacecolor(), line.get_zorder()) \
            == (1.2, 3.5, "none", 3 + k)
    # bands: lower edge mean − sd floored at 0: 2 − √8 < 0 → 0 for h_beh and the first null;
    # the 2nd null: 3 − √8 = 0.172; upper edge mean + sd
    bands = ax.collections
    assert len(bands) == 5
    s8 = math.sqrt(8)
    assert _edges(bands[0])[10.0] == pytest.approx((0.0, 2 + s8))
    assert _edges(bands[1])[10.0] == pytest.approx((0.0, 2 + s8))
    assert _edges(bands[2])[10.0] == pytest.approx((3 - s8, 3 + s8))
    assert _edges(bands[0])[100.0] == pytest.approx((3.0, 3.0))
    assert to_rgba(bands[2].get_facecolor()[0])[:3] == (0.0, 0.0, 0.0)
    texts, size = _legend(ax)
    assert texts == [r"$H^{beh}_N$", r"$H^{beh}_{1/2}$"] + [rf"$\hat H_N$ ({n})" for n in NULLS4]
    assert size == 6
    assert axes[1].get_title() == "A15 gru" and axes[1].get_lines()[0].get_color() == RED

    ax = axes[2]
    assert ax.get_title() == "A15 all cells × N × seeds"
    assert ax.get_xlabel() == r"learned $H^{beh}_N$" and ax.get_ylabel() == r"diagnostic $\hat H_N$"
    pts = ax.collections
    assert len(pts) == 12 * 4                               # every point under every null
    first = pts[0]                                          # gru, N=10, seed 1, null lag: (1, 1)
    np.testing.assert_array_equal(first.get_offsets(), [[1.0, 1.0]])
    np.testing.assert_array_equal(first.get_sizes(), [14])
    np.testing.assert_array_equal(first.get_linewidths(), [0])
    assert tuple(first.get_facecolor()[0]) == to_rgba(RED, 0.7)
    assert _marker_is(first, "o")
    assert _marker_is(pts[3], "D") and _marker_is(pts[1], "^")
    np.testing.assert_array_equal(pts[3].get_offsets(), [[1.0, 4.0]])        # null4: h_beh + 3
    last = pts[-1]                                          # constgate, N=100, seed 3, null4: (3, 6)
    np.testing.assert_array_equal(last.get_offsets(), [[3.0, 6.0]])
    assert tuple(last.get_facecolor()[0]) == to_rgba(BLUE, 0.7)
    # the diagonal up to the largest value drawn: max(1, h_beh ≤ 6, Ĥ_N ≤ 6 + 3) = 9
    (diag_line,) = ax.get_lines()
    np.testing.assert_array_equal(diag_line.get_xdata(), [0, 9])
    np.testing.assert_array_equal(diag_line.get_ydata(), [0, 9])
    assert to_rgba(diag_line.get_color()) == (0.6, 0.6, 0.6, 1.0) and diag_line.get_linewidth() == 0.8
    texts, size = _legend(ax)
    assert texts == ["constgate", "gru"] + [f"null {n}" for n in NULLS4] and size == 6
    hs = ax.get_legend().legend_handles
    assert [h.get_marker() for h in hs] == ["o", "o", "o", "^", "s", "D"]
    assert [h.get_color() for h in hs] == [BLUE, RED] + ["black"] * 4
    assert all(h.get_linestyle() == "None" for h in hs)
    # finding 9's numbers: Ĥ_N = h_beh + k ranks as h_beh (ρ = 1); smooth = −h_beh ranks reversed (ρ = −1)
    assert set(data["tracking"]) == set(NULLS4)
    assert data["tracking"]["lag"]["pooled"] == pytest.approx(1.0) and data["tracking"]["lag"]["n"] == 12
    assert data["tracking_smooth"]["full"]["pooled"] == pytest.approx(-1.0)
    assert data["nulls"] == NULLS4 and list(data["cells"]) == ["constgate", "gru"]


def test_a15_diagonal_reaches_at_least_one():
    runs = [_pt(c, s, N, 0.25 * s, 0.1, 0.5, 0.25) for c in ("gru", "lstm", "diaggate") for s in (1, 2)
            for N in (10, 100)]
    fig, data = A15.fig_a15({"a_behaviour": runs})
    ax = [a for a in fig.axes if a.get_visible()][-1]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [0, 1.0])    # every value ≤ 0.5 < 1
    # 3 cells + the scatter = 4 panels: 3 per row → 2 rows of 4.0 × 3.2
    assert tuple(fig.get_size_inches()) == pytest.approx((12.0, 6.4))
    assert len([a for a in fig.axes if a.get_visible()]) == 4
    fig, _ = A15.fig_a15({"a_behaviour": runs[:4]})
    assert tuple(fig.get_size_inches()) == (8.0, 3.2)                      # 2 panels: 2 × 4.0


def test_a15_cell_arrays_are_float64_like_the_points():
    runs = [_pt("gru", s, N, np.float32(0.1), np.float32(0.2), 1.0, 2.0) for s in (1, 2) for N in (10, 100)]
    d = A15.collect(runs)["cells"]["gru"]
    # the points hold float(np.float32(0.1)) = 0.10000000149011612; the seed arrays are built from them
    assert d["h_beh_seeds"].dtype == np.float64 and d["h_beh_smooth_seeds"].dtype == np.float64
    assert d["h_beh_seeds"][0, 0] == float(np.float32(0.1))


# ============================================================================ B4–B6 ([B] S2)

def _run(task, cell, cks, r, **cfg):
    return ({"task": task, "cell": cell, "checkpoints": cks, **cfg}, r)


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


def test_b5_energy_concentration_on_a_linear_axis():
    fig, data = B.fig_b5({"b_s2": _s2_lag_runs()})
    np.testing.assert_array_equal(data["copy"]["rnn"]["median_last"], [30, 40, 70])     # ce = 10 × ai
    assert "median_last_author" not in data["copy"]["rnn"]                   # no ce_author key
    np.testing.assert_array_equal(data["copy"]["rnn"]["median_first"], [200, 150, 400])
    ax = fig.axes[0]
    assert ax.get_title() == "B5 energy concentration: copy" and ax.get_yscale() == "linear"
    assert ax.get_ylabel() == r"CE$_{10}$" and ax.get_xlabel() == "lag h"


def _b6_runs(errorbars=None):
    """copy: rnn over four seeds, gai = [1, 2, 3, 10], gce = 2 × that, gpr = 3 × that (last checkpoint 50;
    checkpoint 10 holds 1000s), sharedgate one seed 4; add: one seed each (rnn 5, sharedgate 6, diaggate 7)."""
    cfg = {} if errorbars is None else {"b6_errorbars": errorbars}
    runs = []
    for v in (1, 2, 3, 10):
        runs.append(_run("copy", "rnn", [10, 50], {"gai_50": v, "gce_50": 2 * v, "gpr_50": 3 * v,
                                                   "gai_10": 1000, "gce_10": 1000, "gpr_10": 1000}, **cfg))
    runs.append(_run("copy", "rnn", [10, 50], {"gai_50": None, "gce_50": None, "gpr_50": None}))   # JSON null
    runs.append(_run("copy", "sharedgate", [50], {"gai_50": 4, "gce_50": 4, "gpr_50": 4},
                     b6_errorbars="other"))
    for m, v in (("rnn", 5), ("sharedgate", 6), ("diaggate", 7)):
        runs.append(_run("add", m, [20], {"gai_20": v, "gce_20": v, "gpr_20": v}))
    return runs


@pytest.mark.filterwarnings("ignore::RuntimeWarning")        # the all-NaN slice of the missing model
def test_b6_quantiles_bars_and_both_error_bars():
    fig, data = B.fig_b6({"b_s2": _b6_runs()})
    assert tuple(fig.get_size_inches()) == pytest.approx((12.6, 3.3))
    # [1, 2, 3, 10]: q25 at position 0.75 → 1.75, median 2.5, q75 at 2.25 → 3 + 0.25·7 = 4.75
    assert data["copy"]["rnn"]["AI"] == {"median": 2.5, "iqr": 3.0, "q25": 1.75, "q75": 4.75}
    assert data["copy"]["rnn"]["CE"] == {"median": 5.0, "iqr": 6.0, "q25": 3.5, "q75": 9.5}
    assert data["copy"]["rnn"]["PR"]["median"] == 7.5
    assert data["copy"]["sharedgate"]["AI"] == {"median": 4.0, "iqr": 0.0, "q25": 4.0, "q75": 4.0}
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


def test_b6_error_bar_choice_is_the_first_runs():
    assert B._b6_quartiles({}) is False
    first = {"copy": {"rnn": [({"b6_errorbars": "quartiles"}, {})]}, "add": {"rnn": [({}, {})]}}
    assert B._b6_quartiles(first) is True
    assert B._b6_quartiles({"copy": {"rnn": [({}, {}), ({"b6_errorbars": "quartiles"}, {})]}}) is False
    assert B._b6_quartiles({"copy": {"rnn": [({"b6_errorbars": "iqr"}, {})]}}) is False


def test_s2_groups_by_task_then_cell_in_order():
    runs = [_run("b", "x", [1], {"i": 0}), _run("a", "y", [1], {"i": 1}), _run("b", "x", [1], {"i": 2})]
    g = B._s2({"b_s2": runs})
    assert list(g) == ["b", "a"] and [r["i"] for _, r in g["b"]["x"]] == [0, 2]
    assert B.FIGURES == {"B4": B.fig_b4, "B5": B.fig_b5, "B6": B.fig_b6}
    assert B.S2_LABEL == {"rnn": "plain+Adam", "sharedgate": "scalar+SGD", "diaggate": "multi+SGD"}


# ============================================================================ A13 (conventions)

def test_a13_growth_is_the_rise_over_the_upper_half():
    assert A13._growth([1, 2, 4, 7]) == 3.0                  # h[-1] − h[4 // 2] = 7 − 4
    assert A13._growth([1, 2, 4, 7, 11]) == 7.0              # 11 − h[2]
    assert type(A13._growth(np.array([1, 2]))) is float      # 2 − h[1] = 0.0
    assert A13._growth(np.array([1, 2])) == 0.0
    # windows stored as unsigned lag counts: the growth is still signed, 3 − 5 = −2
    assert A13._growth(np.array([1, 5, 3], dtype=np.uint8)) == -2.0


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


def _a13_runs():
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


def test_a13_figure_bands_data_and_axes():
    fig, data = A13.fig_a13({"a_conventions": _a13_runs()})
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
