"""Tests of lwsim/figures/studies/fidelity.py (laid out like the code: docs/testing.md).

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

The FINDINGS rules (lwsim.figures.findings, docs/experiments.md §5.5) on hand-built figure data.

Every rule gets cases whose verdict is known — reproduced, not reproduced, inconclusive — placed so
that a flipped comparison, a non-strict bound made strict (or the reverse), a mean for a median or
a seed-mean verdict that ignores one dissenting seed changes the outcome.

Tests that kill the surviving mutants of mutmut on the studies' finding rules and report text
(issue 32, docs/testing.md): behaviour/findings.py (finding 9), b_s2/findings.py (finding 8),
conventions/findings.py (A13) and main/nulls.py (findings 1–5 per null). Every input is built by
hand and every expected number or line is written out; none compares the code with itself."""


from __future__ import annotations

import numpy as np
import pytest

import lwsim
import lwsim.figures.studies
from lwsim import diagnostics as dg
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import fidelity, fidelity as fid, preset_sizes
from lwsim.figures.studies.main import nulls as nl
from lwsim.tasks import make as make_task
from lwsim.train import train
from helpers import _r6
from helpers import _close


SMOKE = preset_sizes("smoke")


# --- A11 / finding 6 -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fidelity_run():
    c = dict({k: v for k, v in SMOKE["a_fidelity"].items() if k not in ("seeds", "optimizers")},
             cell="gru", seed=42, optimizer="adamw", backend="numpy")
    out = EXPERIMENTS["a_fidelity"](c)
    task = make_task("sinmix", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"])
    ds = task.dataset(c["n_train"], 0, c["n_seq"], seed=c["seed"])
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], dtype="float32", layernorm=True)
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s"])
    res = train(cell, p0, ds, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]}, epochs=c["epochs"],
                batch_size=c["batch"], backend=c["backend"], seed=c["seed"], validate=False, progress=False)
    p0 = {k: np.asarray(v, np.float64) for k, v in p0.items()}
    return c, out, cell.with_dtype("float64"), p0, res.astype("float64"), ds


def _a11_runs(spearman, pearson):
    return {"a_fidelity": [({"cell": cl, "optimizer": "adamw", "seed": s},
                            {"lags": [1, 2], "f_exact": [1.0, 0.5], "f_approx": [1.0, 0.4], "offdiag": [0.1, 0.2],
                             "spearman": spearman, "pearson_log": pearson, "slope_ratio": 1.0})
                           for cl in ("gru", "lstm") for s in (1, 2)]}


def _run(cell, seed, **h):
    res = {"h_n": np.array(h["lag"], float)}
    res.update({k: f"{k}-lag" for k in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_hat", "n_star", "reliable",
                                        "master")})
    for n, v in h.items():
        if n != "lag":
            res[f"h_n_{n}"] = np.array(v, float)
            res.update({f"{k}_{n}": f"{k}-{n}" for k in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_hat",
                                                         "n_star", "reliable", "master")})
    return ({"cell": cell, "seed": seed}, res)


def _results():
    nan = float("nan")
    return {"a_main": [
        _run("lstm", 0, lag=[0, 0, 0.5], full=[2, 2, 2], author=[1, 1, 1], snr=[0, 1, 2]),
        _run("gru", 0, lag=[1, 2, 4], full=[0, 0, 0], author=[1, 2, nan], snr=[5, 5, 5]),
        _run("gru", 1, lag=[1, 3, 3], full=[0, 0, 1], author=[1, 2, 2], snr=[5, 5, 6]),
    ]}


class _Fig:
    def __init__(self, title):
        self.axes = [_Ax(title), _Ax("second")]


class _Ax:
    def __init__(self, title):
        self.title = title

    def get_title(self):
        return self.title

    def set_title(self, t):
        self.title = t


def _null_builders(built):
    def builder(fid):
        def build(view):
            built.append(fid)
            return _Fig(f"title {fid}"), {"fid": fid, "h": float(view["a_main"][1][1]["h_n"][-1])}
        return build
    return {fid: builder(fid) for fid in ("A1", "A4", "A5", "A6", "A7", "A14", "A2")}


READ = ("how to read it: the verdict is on the ranking of the lags (Spearman ρ), not on the decay rate. The "
        "log–log slope of the first-order envelope over the exact one's is {} (1 = same rate): {} "
        "(docs/diagnostics.md §2.10)")


FASTER = ("the first-order envelope falls faster than the exact one, so it tracks which lags carry more signal but "
          "overstates how fast the signal decays")


SLOWER = ("the first-order envelope falls more slowly than the exact one, so it tracks which lags carry more signal "
          "but understates how fast the signal decays")


SAME = "the two decay at about the same rate"


MIXED = "the rates agree in some runs and not in others, so only the ranking is tracked throughout"


def _t6(rows):
    return {"A11": {"table": [{"cell": c, "optimizer": o, "seed": s, "spearman": r, "slope_ratio": q,
                               "offdiag_mean": e} for c, o, s, r, q, e in rows]}}


def test_fidelity_from_the_trained_model_and_its_optimizer(fidelity_run):
    c, out, cell, p0, res, ds = fidelity_run

    def fidelity(p, x, rates):
        return dg.envelope_fidelity(cell, p, x, rates, c["lags"], n_times=c["n_time"], seed=c["seed"],
                                    backend="numpy", progress=False)

    ref = fidelity(res.params, ds.x_diag, res.optimizer)
    for k in ("f_exact", "f_approx", "offdiag"):
        np.testing.assert_array_equal(out[k], getattr(ref, k), err_msg=k)
    assert (out["spearman"], out["slope_ratio"]) == (ref.spearman, ref.slope_ratio)
    for p, x, rates in ((p0, ds.x_diag, res.optimizer), (res.params, ds.x_train[:, :c["n_seq"]], res.optimizer),
                        (res.params, ds.x_diag, float(c["lr"]))):
        assert not np.array_equal(fidelity(p, x, rates).f_exact, out["f_exact"])


def test_findings_by_variant_rebuilds_only_the_null_figures(monkeypatch):
    R = _results()
    built, saved, closed, saved_data = [], [], [], []

    def builder(fid):
        def build(view):
            built.append((fid, view["a_main"][1][1]["h_n"][-1]))          # gru seed 0's last Ĥ_N in this view
            fig = _Fig(f"title {fid}")
            return fig, {"fid": fid, "h": float(view["a_main"][1][1]["h_n"][-1]), "fig": fig}
        return build
    figures = {fid: builder(fid) for fid in ("A1", "A4", "A5", "A6", "A7", "A14", "A2")}
    monkeypatch.setattr(nl, "save_figure", lambda fig, data, name, out, figure_id=None:
                        saved.append((name, out, figure_id, fig.axes[0].get_title(), fig.axes[1].get_title()))
                        or saved_data.append((data["fid"], data["fig"] is fig)))
    monkeypatch.setattr(nl.plt, "close", lambda fig: closed.append(fig.axes[0].get_title()))

    def fake_findings(data):
        v = f"{data['A1']['h']:g}/{data['A2']}/{data.get('A4', {}).get('fid')}"
        return {k: (k, v, [], "r") for k in (1, 5, 6, 9)}
    monkeypatch.setattr(nl, "findings", fake_findings)
    rendered = {"A1": {"h": -1}, "A2": "common", "A14": {}, "A8": "x"}
    out = nl.findings_by_variant(R, rendered, figures, out="OUT")
    # A1 and A14 rendered (A4…A7 not, A2 not a null figure): rebuilt per variant from its view
    assert [b[0] for b in built] == ["A1", "A14"] * 4
    np.testing.assert_array_equal([b[1] for b in built], [4, 4, 0, 0, np.nan, np.nan, 5, 5])
    assert list(out) == ["lag", "full", "author", "snr"]
    assert out["lag"] == {1: (1, "4/common/None", [], "r"), 5: (5, "4/common/None", [], "r")}
    assert out["full"][1] == (1, "0/common/None", [], "r") and list(out["full"]) == [1, 5]
    assert out["snr"][5] == (5, "5/common/None", [], "r") and out["author"][1][1] == "nan/common/None"
    # the nulls other than "lag" are saved with the null in the first axis' title; lag and snr closed
    assert saved == [("A1_full", "OUT", "A1", "title A1 [full null]", "second"),
                     ("A14_full", "OUT", "A14", "title A14 [full null]", "second"),
                     ("A1_author", "OUT", "A1", "title A1 [author null]", "second"),
                     ("A14_author", "OUT", "A14", "title A14 [author null]", "second")]
    assert closed == ["title A1", "title A14", "title A1", "title A14"]
    assert saved_data == [("A1", True), ("A14", True)] * 2             # each figure with its own data
    assert rendered == {"A1": {"h": -1}, "A2": "common", "A14": {}, "A8": "x"}       # not modified
    saved.clear(), closed.clear()
    nl.findings_by_variant(R, rendered, figures)                                      # out None: nothing saved
    assert saved == [] and len(closed) == 8


def test_null_drawings_are_the_jobs_findings_by_variant_would_run(monkeypatch):
    R = dict(_results(), b_s1=["not a null figure's group"])
    built, saved, closed = [], [], []
    figures = _null_builders(built)
    monkeypatch.setattr(nl, "save_figure", lambda fig, data, name, out, figure_id=None:
                        saved.append((name, out, figure_id, fig.axes[0].get_title())))
    monkeypatch.setattr(nl.plt, "close", lambda fig: closed.append(fig.axes[0].get_title()))
    jobs = nl.null_drawings(R, ["A14", "A2", "A1", "B1"], figures, out="OUT")
    # every variant × every rendered null figure (A2 is shared, B1 not [A]'s), in variant then NULL_FIGS order
    assert list(jobs) == ["A1_lag", "A14_lag", "A1_full", "A14_full", "A1_author", "A14_author", "A1_snr", "A14_snr"]
    fn, args = jobs["A14_full"]
    assert fn is nl.draw_null_figure and args[:3] == ("full", "A14", figures["A14"]) and args[4] == "OUT"
    assert list(args[3]) == ["a_main"] and args[3]["a_main"] is R["a_main"]     # only the [A] main runs travel
    drawn = {k: f(*a) for k, (f, a) in jobs.items()}
    assert drawn["A1_lag"] == {"fid": "A1", "h": 4.0} and drawn["A1_full"] == {"fid": "A1", "h": 0.0}
    assert drawn["A14_snr"] == {"fid": "A14", "h": 5.0} and np.isnan(drawn["A1_author"]["h"])
    assert saved == [("A1_full", "OUT", "A1", "title A1 [full null]"), ("A14_full", "OUT", "A14", "title A14 [full null]"),
                     ("A1_author", "OUT", "A1", "title A1 [author null]"),
                     ("A14_author", "OUT", "A14", "title A14 [author null]")]
    assert closed == ["title A1", "title A14"] * 2                              # lag and snr: not written
    assert nl.null_drawings({}, ["A1"], figures) == {} and nl.null_drawings(R, ["A2", "A8"], figures) == {}
    # findings_by_variant with the drawn values builds nothing and gives the same rows as rebuilding
    monkeypatch.setattr(nl, "findings", lambda data: {k: (k, f"{data['A1']['h']:g}/{data['A14']['h']:g}", [], "r")
                                                      for k in (1, 5)})
    rendered = {"A1": {}, "A14": {}, "A2": "common"}
    built.clear(), saved.clear()
    with_drawn = nl.findings_by_variant(R, rendered, figures, out="OUT", drawn=drawn)
    assert built == [] and saved == []
    assert with_drawn == nl.findings_by_variant(R, rendered, figures)
    assert with_drawn["lag"][1] == (1, "4/4", [], "r") and with_drawn["snr"][5] == (5, "5/5", [], "r")
    built.clear()
    partial = nl.findings_by_variant(R, rendered, figures, drawn={"A1_full": {"h": 7.0}})   # the rest rebuilt
    assert partial["full"][1][1] == "7/0" and built.count("A1") == 3 and built.count("A14") == 4


# ----------------------------------------------------------------------------------------------
# fig_a11
# ----------------------------------------------------------------------------------------------


def test_f6_reads_spearman_not_pearson():
    for sp, pe, want in ((0.95, 0.1, "reproduced"), (0.1, 0.95, "not reproduced")):
        fig, data = fid.fig_a11(_a11_runs(sp, pe))
        _close(fig)
        assert all(row["spearman"] == sp and row["pearson_log"] == pe for row in data["table"])
        assert fid.findings({"A11": data, "A12": {"table": []}})[6][1] == want


# ----------------------------------------------------------------------------------------------
# f6
# ----------------------------------------------------------------------------------------------


T2 = 4.302652729749462     # t_{0.975, 2}: three seeds


def test_f6_rank_and_rate_seed_intervals_by_hand():
    # three seeds, one run each: ρ 0.95, 0.96, 0.97 → 0.96 ± 0.01·T2/√3 = [0.935, 0.985] above 0.9;
    # slope ratio 1 everywhere (the _r6 table): [1, 1] inside 1 ± 0.1
    (n, v, rows, rule), = fidelity.f6(_r6([0.95, 0.96, 0.97]))
    h = 0.01 * T2 / np.sqrt(3)
    assert (n, v) == (6, "reproduced")
    assert rows[-2] == f"(i) rank: per-seed mean Spearman ρ 0.96 [{0.96 - h:.3g}, {0.96 + h:.3g}] (3 seeds) → reproduced (region > 0.9; 3 of 3 seeds)"
    assert rows[-1] == "(ii) rate: per-seed mean slope ratio 1 [1, 1] (3 seeds) → reproduced (region 1 ± 0.1; 3 of 3 seeds)"
    assert rule == ("rule: the 95% seed intervals of the mean ρ above 0.9 and of the mean slope ratio inside 1 ± 0.1, "
                    "AND (docs/experiments.md §5.5.2)")
    assert fidelity.f6(_r6([0.91, 0.95, 0.99]))[0][1] == "inconclusive"       # [0.851, 1.05] contains 0.9
    assert fidelity.f6(_r6([0.5, 0.55, 0.45]))[0][1] == "not reproduced"
    assert fidelity.f6(_r6([0.95]))[0][1] == "inconclusive"                   # one seed: no interval


def test_f6_rate_decides_beside_the_rank():
    table = [("gru", "sgd", s, 0.99, q, 0.1) for s, q in ((1, 2.0), (2, 2.1), (3, 1.9))]
    (_, v, rows, _), = fid.f6(_t6(table))
    assert v == "not reproduced" and rows[-1].endswith("→ not reproduced (region 1 ± 0.1; 0 of 3 seeds)")
    # the per-seed value is the mean over that seed's runs (cells × optimizers), NaN left out
    table = [("gru", "sgd", 1, 0.99, 1.0, 0.1), ("lstm", "sgd", 1, 0.99, 3.0, 0.1), ("gru", "sgd", 2, 0.99, 2.0, 0.1),
             ("lstm", "adamw", 2, 0.99, np.nan, 0.1)]
    (_, _, rows, _), = fid.f6(_t6(table))
    assert rows[-1].startswith("(ii) rate: per-seed mean slope ratio 2 [2, 2] (2 seeds)")


def test_f6_reads_the_slope_ratio_in_words():
    """Finding 6 is reproduced on Spearman ρ while the slope ratios are 1.3–2.5: said in words."""
    table = [{"cell": "gru", "optimizer": "sgd", "seed": 42, "spearman": 0.99, "slope_ratio": r,
              "offdiag_mean": 0.6} for r in (1.3, 2.51, float("nan"))]
    (num, verdict, rows, rule), = fidelity.f6({"A11": {"table": table}})
    assert verdict == "inconclusive"                                           # one seed
    assert "slope ratio 2.510" in rows[1]
    assert "exact one's is 1.3–2.5 (1 = same rate): the first-order envelope falls faster" in rows[-3]
    assert "overstates how fast the signal decays" in rows[-3]


@pytest.mark.parametrize("ratios, words", [((0.95, 1.2), "agree in some runs and not in others"),
                                           ((0.95, 1.05), "about the same rate"),
                                           ((0.5, 0.8), "understates how fast")])
def test_f6_slope_ratio_words_per_range(ratios, words):
    table = [{"cell": "gru", "optimizer": "sgd", "seed": 42, "spearman": 0.99, "slope_ratio": r,
              "offdiag_mean": 0.6} for r in ratios]
    (_, _, rows, _), = fidelity.f6({"A11": {"table": table}})
    assert words in rows[-3]


def test_f6_whole():
    r = _t6([("gru", "adamw", 1, 0.95, 1.234, 0.1), ("lstm", "sgd", 2, np.nan, np.nan, 0.25),
             ("gru", "sgd", 3, 0.93, 1.5, 0.3456)])
    rule = ("rule: the 95% seed intervals of the mean ρ above 0.9 and of the mean slope ratio inside 1 ± 0.1, "
            "AND (docs/experiments.md §5.5.2)")
    assert fid.f6(r) == [(6, "inconclusive", [
        "gru/adamw/seed 1: Spearman ρ 0.950, slope ratio 1.234, off-diagonal energy 0.100",
        "lstm/sgd/seed 2: Spearman ρ nan, slope ratio nan, off-diagonal energy 0.250",
        "gru/sgd/seed 3: Spearman ρ 0.930, slope ratio 1.500, off-diagonal energy 0.346",
        "median Spearman ρ = 0.940",                                         # NaN left out of the median
        READ.format("1.2–1.5", FASTER),
        f"(i) rank: per-seed mean Spearman ρ 0.94 [{0.94 - 0.01 * 12.706204736174698 :.3g}, "
        f"{0.94 + 0.01 * 12.706204736174698:.3g}] (2 seeds, 1 undefined) → inconclusive (region > 0.9; 2 of 2 seeds)",
        "(ii) rate: per-seed mean slope ratio 1.37 [-0.323, 3.06] (2 seeds, 1 undefined) → inconclusive "
        "(region 1 ± 0.1; 0 of 2 seeds)"], rule)]
    assert fid.findings(r) == {6: fid.f6(r)[0]}
    assert fid.findings({}) == {} and fid.f6({"A11": None}) is None
    assert fid.TITLES == {6: "The first-order envelope tracks the exact one"}


@pytest.mark.parametrize("ratios, text", [
    ((1.1, 1.1), READ.format("1.1–1.1", SAME)),          # lo = 1.1 is not > 1.1; hi ≤ 1.1
    ((1.11, 1.2), READ.format("1.1–1.2", FASTER)),
    ((0.9, 1.0), READ.format("0.9–1", SAME)),             # hi ≥ 0.9 and lo = 0.9: same rate
    ((0.5, 0.89), READ.format("0.5–0.89", SLOWER)),
    ((0.5, 0.9), READ.format("0.5–0.9", MIXED)),          # hi = 0.9 is not < 0.9
    ((0.89, 1.05), READ.format("0.89–1.1", MIXED)),
    ((0.95, 1.11), READ.format("0.95–1.1", MIXED)),
])
def test_f6_reading_boundaries(ratios, text):
    rows = fid.f6(_t6([("gru", "sgd", i, 0.95, q, 0.1) for i, q in enumerate(ratios)]))[0][2]
    assert rows[-3] == text


def test_f6_without_finite_ratios_has_no_reading():
    rows = fid.f6(_t6([("gru", "sgd", 1, 0.4, np.nan, 0.1), ("gru", "sgd", 2, 0.45, np.inf, 0.1)]))[0]
    assert rows[1] == "not reproduced" and rows[2][2] == "median Spearman ρ = 0.425" and len(rows[2]) == 5
