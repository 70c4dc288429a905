"""Tests of lwsim/analyze/report.py (laid out like the code: docs/testing.md).

Tests that kill the surviving mutants of mutmut on lwsim/analyze/report.py (issue 32,
docs/testing.md): a Report built by hand from known numbers, its dict, JSON, Markdown (every line
written out), figures and saved files."""


from __future__ import annotations

import json
import os
from types import SimpleNamespace as NS

import numpy as np
import pytest

from lwsim.analyze import report as rp
from lwsim.analyze.report import Report, _fmt
from lwsim.stats.decay import DecayFit, LawFit, MasterFit


inf, nan = np.inf, np.nan


def _decay():
    fits = {"exponential": LawFit("exponential", {"C": 2.0, "lambda": 0.5}, 0.9, 0.1, -3.0, -2.0, 3, 2),
            "power": LawFit("power", {"C": 1.0, "beta": 1.5}, 0.99, 0.01, -5.0, -4.0, 3, 2)}
    return DecayFit(fits=fits, selected="exponential", selected_bic="power", n=3, window=(1.0, 3.0))


def _mantissas(loc):
    """The leading digits of a log locator's ticks over two decades (1, 2, 5: majors at 1, 2, 5 × 10^k)."""
    return {round(float(t / 10 ** np.floor(np.log10(t))), 9) for t in loc.tick_values(10.0, 1000.0) if t > 0}


def _report(exact=True, decay=True, master=True, nulls=True, notes=True, warns=True, n_lags=3):
    lags = np.arange(1.0, n_lags + 1)
    f = np.array([0.5, 0.25, 0.125, 0.0625])[:n_lags]
    env = NS(lags=lags, f=f, f_gates=2 * f, ratio=np.full(n_lags, 0.5), lam_mean=np.full(n_lags, 1.5),
             lam_std=np.full(n_lags, 0.25), count=np.arange(10, 10 + n_lags), m=np.ones((n_lags, 4)),
             lam_neuron=np.array([1.0, 2.0, 3.0, 4.0]))
    # τ: neuron 1 never decays (∞, first), neuron 2 undefined (NaN, last)
    ts = NS(tau=np.array([2.0, inf, nan, 5.0]), r2=np.array([0.9, 0.8, nan, 0.95]),
            slope=np.array([-0.5, 0.0, nan, -0.2]))
    det = NS(lags=lags, mean=np.array([0.1, 0.2, 0.3, 0.4])[:n_lags], alpha=np.array([1.5, 1.2, 2.0, 1.1])[:n_lags],
             sigma=np.array([0.01, 0.02, 0.00005, 0.03])[:n_lags], kappa=np.array([3.0, 6.0, 2.0, 11.0])[:n_lags],
             n_hat=np.array([10.0, 12345.0, inf, 7.0])[:n_lags], n_star=np.array([4.0, 50.0, inf, 5.0])[:n_lags],
             reliable=np.array([True, False, True, True])[:n_lags],
             method=("ecf", "mcculloch", "ecf", "ecf")[:n_lags], n_grid=np.array([25.0, 100.0]),
             h_n=np.array([1.0, 2.5]), eps=20.0, noise="lag")
    full = NS(**{**vars(det), "h_n": np.array([0.0, nan]), "noise": "full"})
    ex = NS(f=np.array([0.4, 0.2, 0.1, 0.05])[:n_lags], offdiag=np.array([0.1, 0.2, 0.3, 0.4])[:n_lags])
    settings = {"cell": "Cell('gru')", "T": 6, "B": 20, "D": 1, "H": 4, "n_out": 1, "rates": "SGD, η = 0.5",
                "eta": 0.5, "K": 2, "seed": 3, "eps": 20.0, "statistic": "sequence", "conventions": "lwsim",
                "noise": "lag", "backend": "numpy", "lags": lags, "n_grid": det.n_grid,
                "sources": {"weights": "w.safetensors", "data": "d.npz"}}
    return Report(settings=settings, envelope=env, timescales=ts, matched=None, detection=det,
                  decay=_decay() if decay else None,
                  master=MasterFit(slope=0.75, intercept=1.25, r2=0.5, n=3) if master else None,
                  exact=ex if exact else None, notes=["a note", "another"] if notes else [],
                  warnings=["careful"] if warns else [],
                  detection_nulls={"lag": det, "full": full} if nulls else None)


MD_FULL = """# Learnability-window report

Model `Cell('gru')`; diagnostic data T = 6, B = 20 sequences.
- weights: `w.safetensors`
- data: `d.npz`
- rates λ: SGD, η = 0.5
- K = 2 direction(s), seed 3, ε = 20, statistic sequence, conventions lwsim, backend numpy

Defaults used:

- a note
- another

**Warnings**

- careful

## Summary

- learnability window Ĥ_N at the largest budget N = 100: **2.5** lags (lag grid up to 3)
- envelope decay law (BIC): **power** (C 1, beta 1.5; R² 0.99)
- master check log N̂ = a + b·(−κ̂ log f): slope b = **0.75** (theory 1), R² 0.5, 3 lags
- exact vs first-order envelope: Spearman ρ = 1
- Spearman ρ(Λ_q, τ_q) across neurons: 0.5

## Learnability window Ĥ_N

Under the null **lag** (the report's), and beside it every null computed: "lag" tests each lag's \
statistic against its own spread, "full" against the spread of the whole per-sequence update \
(docs/statistics.md §3.3).

| N | Ĥ_N (lag) | Ĥ_N (full) |
|---|---|---|
| 25 | 1 | 0 |
| 100 | 2.5 | — |

## Per lag

| ℓ | f(ℓ) | f_exact(ℓ) | m̄ | α̂ | σ̂ | N̂ | N* | reliable |
|---|---|---|---|---|---|---|---|---|
| 1 | 0.5 | 0.4 | 0.1 | 1.5 | 0.01 | 10 | 4 | yes |
| 2 | 0.25 | 0.2 | 0.2 | 1.2 | 0.02 | 1.23e+04 | 50 | **no** |
| 3 | 0.125 | 0.1 | 0.3 | 2 | 5.00e-05 | ∞ | ∞ | yes |

## Neurons with the longest time scales (top 4 of 4)

| neuron q | τ_q | R² of the fit | Λ_q |
|---|---|---|---|
| 1 | ∞ | 0.8 | 2 |
| 3 | 5 | 0.95 | 4 |
| 0 | 2 | 0.9 | 1 |
| 2 | — | — | 3 |

## Figures

![envelope](envelope.png)
![window](window.png)

Definitions: docs/analyze.md; f, τ: docs/diagnostics.md §2.5–2.6; α̂, σ̂, N̂, Ĥ_N: docs/statistics.md \
§3.3; decay laws and master check: §3.4–3.5.
"""


MD_BARE_TAIL = """## Per lag

| ℓ | f(ℓ) | m̄ | α̂ | σ̂ | N̂ | N* | reliable |
|---|---|---|---|---|---|---|---|
| 1 | 0.5 | 0.1 | 1.5 | 0.01 | 10 | 4 | yes |
| 2 | 0.25 | 0.2 | 1.2 | 0.02 | 1.23e+04 | 50 | **no** |
| 3 | 0.125 | 0.3 | 2 | 5.00e-05 | ∞ | ∞ | yes |
"""


@pytest.fixture
def figs():
    # function scope on purpose: mutmut maps a test to the functions it calls, and a module-scoped
    # fixture's call of figures() counts for the first test that uses it only
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = _report().figures()
    yield out
    for f in out.values():
        plt.close(f)


def _labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ----------------------------------------------------------------------------------------------
# _decay_dict
# ----------------------------------------------------------------------------------------------


def test_to_dict_without_the_optional_parts():
    d = _report(exact=False, decay=False, master=False, nulls=False).to_dict()
    assert d["decay"] is None and d["master"] is None and d["exact"] is None
    assert d["window"]["h_n_by_null"] == {}
    # two lags: no Spearman ρ of f_exact against f (nan), even though both are given
    d = _report(n_lags=2).to_dict()
    assert np.isnan(d["exact"]["spearman_f"])
    assert _report(decay=False).to_dict()["decay"] is None


def test_to_json_by_hand():
    r = _report()
    text = r.to_json()
    assert text.startswith('{\n "settings": {\n  "cell": "Cell(\'gru\')",\n  "T": 6,')
    assert '"rates": "SGD, η = 0.5"' in text                     # not ASCII-escaped
    d = json.loads(text)
    assert d["per_lag"]["n_hat"] == [10.0, 12345.0, "inf"] and d["neurons"]["tau"][2] == "nan"
    assert d["window"]["h_n_by_null"]["full"] == [0.0, "nan"] and d["settings"]["lags"] == [1.0, 2.0, 3.0]
    assert r.to_json(indent=None).startswith('{"settings": {"cell": "Cell(\'gru\')", "T": 6, ')


def test_markdown_every_line():
    md = _report().to_markdown(figures=["out/envelope.png", "window.png"])
    assert md.splitlines() == MD_FULL.splitlines() and md.endswith("§3.4–3.5.\n")


def test_markdown_without_the_optional_parts():
    r = _report(exact=False, decay=False, master=False, nulls=False, notes=False, warns=False)
    r.settings["sources"] = {}
    r.settings.pop("conventions")
    md = r.to_markdown()
    lines = md.splitlines()
    assert lines[:8] == ["# Learnability-window report", "",
                         "Model `Cell('gru')`; diagnostic data T = 6, B = 20 sequences.",
                         "- rates λ: SGD, η = 0.5",
                         "- K = 2 direction(s), seed 3, ε = 20, statistic sequence, conventions None, backend numpy",
                         "", "## Summary", ""]
    assert lines[8:11] == ["- learnability window Ĥ_N at the largest budget N = 100: **2.5** lags (lag grid up to 3)",
                           "- Spearman ρ(Λ_q, τ_q) across neurons: 0.5", ""]
    assert "| N | Ĥ_N (lag) |\n|---|---|\n| 25 | 1 |\n| 100 | 2.5 |\n" in md
    assert MD_BARE_TAIL in md and "## Figures" not in md and "Defaults used" not in md and "Warnings" not in md
    # the report's own null is named when no other was computed
    r.detection.noise = "full"
    assert "| N | Ĥ_N (full) |\n|---|---|\n| 25 | 1 |" in r.to_markdown()
    r.settings["sources"] = None
    assert r.to_markdown().splitlines()[3] == "- rates λ: SGD, η = 0.5"


def test_markdown_shows_ten_neurons_at_most():
    r = _report()
    r.settings["H"] = 12
    r.timescales = NS(tau=np.arange(12.0), r2=np.zeros(12), slope=np.zeros(12))
    r.envelope.lam_neuron = np.arange(12.0)
    md = r.to_markdown()
    assert "## Neurons with the longest time scales (top 10 of 12)" in md
    rows = md.split("| neuron q | τ_q | R² of the fit | Λ_q |\n|---|---|---|---|\n")[1].split("\n\n")[0].splitlines()
    assert [row.split(" | ")[0] for row in rows] == [f"| {q}" for q in range(11, 1, -1)]


def test_figure_envelope(figs):
    assert list(figs) == ["envelope", "window", "tails", "neurons"]
    fig = figs["envelope"]
    assert tuple(fig.get_size_inches()) == (5.0, 3.4)
    ax, = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), ax.get_yscale()) == ("lag ℓ", "envelope", "Envelope", "log")
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["f(ℓ) first order", "f_exact(ℓ)", "f_gates(ℓ)"]
    assert [ln.get_marker() for ln in lines] == ["o", "s", "None"]
    assert [ln.get_linestyle() for ln in lines] == ["-", "--", ":"] and [ln.get_markersize() for ln in lines[:2]] == [3, 3]
    assert lines[0].get_ydata().tolist() == [0.5, 0.25, 0.125] and lines[1].get_ydata().tolist() == [0.4, 0.2, 0.1]
    assert lines[2].get_ydata().tolist() == [1.0, 0.5, 0.25]
    assert [ln.get_xdata().tolist() for ln in lines] == [[1, 2, 3]] * 3         # every curve against the lags
    assert _labels(ax) == ["f(ℓ) first order", "f_exact(ℓ)", "f_gates(ℓ)"]
    assert ax.get_legend().get_texts()[0].get_fontsize() == 8
    bbox = ax.get_tightbbox(fig.canvas.get_renderer())          # tight_layout: the x label inside
    assert bbox.y0 >= 0


def test_figure_window(figs):
    fig = figs["window"]
    assert tuple(fig.get_size_inches()) == (5.0, 3.4)
    ax, = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), ax.get_xscale()) == (
        "sample budget N", r"$\hat{H}_N$ (lags)", "Learnability window", "log")
    lag, full = ax.get_lines()
    assert (lag.get_label(), full.get_label()) == ("lag null (report)", "full null")
    assert (lag.get_marker(), lag.get_linestyle(), full.get_marker(), full.get_linestyle()) == ("o", "-", "s", "--")
    assert lag.get_markersize() == 4 and full.get_markersize() == 4
    assert lag.get_xdata().tolist() == [25, 100] and lag.get_ydata().tolist() == [1.0, 2.5]
    assert full.get_ydata()[0] == 0.0 and ax.get_legend().get_texts()[0].get_fontsize() == 8
    # 25 … 100 is 0.6 decades ≤ 2.5: majors at 1, 2, 5 × 10^k, written plainly; no minor labels
    loc = ax.xaxis.get_major_locator()
    assert _mantissas(loc) == {1.0, 2.0, 5.0}
    fmt = ax.xaxis.get_major_formatter()
    assert fmt(50.0, 0) == "50" and fmt(1000.0, 0) == "1000" and fmt(0.5, 0) == "0.5"
    assert ax.xaxis.get_minor_formatter()(30.0, 0) == ""
    assert fig.axes[0].get_tightbbox(fig.canvas.get_renderer()).y0 >= 0


# no finite positive τ: matplotlib says the τ axis "cannot be log-scaled" (expected here, not a failure)
@pytest.mark.filterwarnings("ignore:Data has no positive values:UserWarning")
def test_figure_window_decades_and_single_null():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    r = _report(nulls=False)
    r.detection.n_grid = np.array([10.0, 10 ** 3.5])               # 2.5 decades: still 1-2-5
    r.timescales.tau = np.array([-1.0, inf, nan, 0.0])             # no finite positive τ
    figs = r.figures()
    ax, = figs["window"].axes
    assert list(ax.xaxis.get_major_locator()._subs) == [1.0, 2.0, 5.0]
    assert [ln.get_label() for ln in ax.get_lines()] == ["lag null"]   # one null: no "(report)"
    assert len(figs["neurons"].axes[0].patches) == 0                # no histogram
    pts, = figs["neurons"].axes[1].get_lines()                     # τ = −1, 0 are finite: plotted
    assert pts.get_xdata().tolist() == [1.0, 4.0]
    for f in figs.values():
        plt.close(f)
    r.detection.n_grid = np.array([10.0, 10 ** 3.6])               # beyond 2.5 decades: decades only
    r.settings["noise"] = "full"
    figs = r.figures()
    ax, = figs["window"].axes
    assert list(ax.xaxis.get_major_locator()._subs) == [1.0]
    line, = ax.get_lines()
    assert line.get_label() == "full null" and line.get_marker() == "s"
    for f in figs.values():
        plt.close(f)


def test_figure_tails(figs):
    fig = figs["tails"]
    assert tuple(fig.get_size_inches()) == (8.0, 3.2)
    a1, a2 = fig.axes
    assert (a1.get_xlabel(), a1.get_title(), a2.get_xlabel(), a2.get_title()) == ("lag ℓ", "α̂(ℓ)", "lag ℓ", "σ̂(ℓ)")
    assert a1.get_yscale() == "linear" and a2.get_yscale() == "log"
    for ax, v in ((a1, [1.5, 1.2, 2.0]), (a2, [0.01, 0.02, 0.00005])):
        rel, unrel = ax.get_lines()
        assert rel.get_xdata().tolist() == [1, 3] and rel.get_ydata().tolist() == [v[0], v[2]]
        assert unrel.get_xdata().tolist() == [2] and unrel.get_ydata().tolist() == [v[1]]
        assert (rel.get_marker(), rel.get_markersize(), rel.get_label()) == ("o", 4, "reliable")
        assert (unrel.get_marker(), unrel.get_markersize(), unrel.get_label()) == ("x", 5, "unreliable")
        assert unrel.get_color() == "C3"
    assert _labels(a1) == ["reliable", "unreliable"] and a2.get_legend() is None
    assert a1.get_legend().get_texts()[0].get_fontsize() == 8


def test_figure_neurons(figs):
    fig = figs["neurons"]
    assert tuple(fig.get_size_inches()) == (8.0, 3.2)
    a1, a2 = fig.axes
    assert (a1.get_xlabel(), a1.get_ylabel(), a1.get_title()) == ("log₁₀ τ_q", "neurons", "Time-scale spectrum")
    assert (a2.get_xlabel(), a2.get_ylabel(), a2.get_title()) == ("Λ_q", "τ_q", "Rate vs time scale")
    # finite positive τ = 2, 5: max(3, 2 // 2) = 3 bins over log10 2 … log10 5
    assert len(a1.patches) == 3 and sum(p.get_height() for p in a1.patches) == 2
    assert a1.patches[0].get_x() == pytest.approx(np.log10(2)) and a1.patches[0].get_height() == 1
    assert a2.get_xscale() == "log" and a2.get_yscale() == "log"
    pts, = a2.get_lines()                      # τ finite: neurons 0 and 3
    assert pts.get_xdata().tolist() == [1.0, 4.0] and pts.get_ydata().tolist() == [2.0, 5.0]
    assert (pts.get_marker(), pts.get_linestyle(), pts.get_markersize()) == ("o", "None", 4)
    for axis in (a2.xaxis, a2.yaxis):
        loc = axis.get_major_locator()
        assert _mantissas(loc) == {1.0, 2.0, 5.0} and loc.numticks == 8
        assert axis.get_major_formatter()(20.0, 0) == "20" and axis.get_minor_formatter()(3.0, 0) == ""


def test_figure_neurons_histogram_bins():
    """bins = min(20, max(3, n // 2)) over the finite positive τ: 8 → 4, 50 → 20 (2 → 3 above)."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    for n, bins in ((8, 4), (50, 20)):
        r = _report()
        r.timescales = NS(tau=np.linspace(1.0, 10.0, n), r2=np.zeros(n), slope=np.zeros(n))
        r.envelope.lam_neuron = np.arange(1.0, n + 1)
        figs = r.figures()
        assert len(figs["neurons"].axes[0].patches) == bins, n
        for f in figs.values():
            plt.close(f)


def test_save_writes_every_file(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image
    import matplotlib.pyplot as plt
    before = set(plt.get_fignums())
    out = tmp_path / "new" / "dir"
    r = _report()
    paths = r.save(out, dpi=20)
    assert paths == [out / "report.md", out / "report.json", out / "envelope.png", out / "window.png",
                     out / "tails.png", out / "neurons.png"]
    assert sorted(os.listdir(out)) == ["envelope.png", "neurons.png", "report.json", "report.md", "tails.png",
                                       "window.png"]
    for p in paths[:2]:
        assert os.stat(p).st_mode & 0o777 == 0o644
    assert (out / "report.json").read_text() == r.to_json()
    assert (out / "report.md").read_text() == r.to_markdown([out / "envelope.png", out / "window.png",
                                                             out / "tails.png", out / "neurons.png"])
    with Image.open(out / "envelope.png") as im:
        assert im.size == (100, 68)                                   # 5 × 3.4 in at 20 dpi
    with Image.open(out / "tails.png") as im:
        assert im.size == (160, 64)
    assert set(plt.get_fignums()) == before                          # every figure it made is closed


def test_save_default_dpi_into_an_existing_folder(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    seen = []
    monkeypatch.setattr(Figure, "savefig", lambda self, p, dpi=None, **k: seen.append((p.name, dpi, k)))
    paths = _report().save(tmp_path)                                  # tmp_path exists already
    assert seen == [(n, 120, {}) for n in ("envelope.png", "window.png", "tails.png", "neurons.png")]
    assert paths[:2] == [tmp_path / "report.md", tmp_path / "report.json"]


def test_to_json_names_the_offending_key():
    r = _report()
    r.settings["odd"] = object()
    with pytest.raises(TypeError) as e:
        r.to_json()
    assert str(e.value) == "report.settings.odd: value of type object is not JSON-serialisable"


def test_figure_axes_side_by_side(figs):
    """tails and neurons: one row of two panels, the second to the right of the first."""
    for name in ("tails", "neurons"):
        a1, a2 = figs[name].axes
        p1, p2 = a1.get_position(), a2.get_position()
        assert p2.x0 > p1.x1 and p1.y0 == pytest.approx(p2.y0) and p1.height == pytest.approx(p2.height), name
        assert a1.get_subplotspec().get_geometry()[:2] == (1, 2) and a2.get_subplotspec().colspan.start == 1


def test_figure_window_null_named_by_default_and_empty_grid():
    """No detection_nulls and no "noise" in the settings: the one line is the "lag" null; an empty
    N grid (0 decades) still gets the 1-2-5 ticks and an empty line."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    r = _report(nulls=False)
    del r.settings["noise"]
    figs = r.figures()
    ax, = figs["window"].axes
    line, = ax.get_lines()
    assert (line.get_label(), line.get_marker(), line.get_linestyle()) == ("lag null", "o", "-")
    for f in figs.values():
        plt.close(f)
    r.detection.n_grid = np.array([])
    r.detection.h_n = np.array([])
    figs = r.figures()
    ax, = figs["window"].axes
    line, = ax.get_lines()
    assert len(line.get_xdata()) == 0 and list(ax.xaxis.get_major_locator()._subs) == [1.0, 2.0, 5.0]
    for f in figs.values():
        plt.close(f)


# ----------------------------------------------------------------------------------------------
# _fmt
# ----------------------------------------------------------------------------------------------


def test_fmt_by_hand():
    assert _fmt(None) == "—" and _fmt(nan) == "—" and _fmt(np.float32("nan")) == "—"
    assert _fmt(True) == "yes" and _fmt(np.bool_(False)) == "no"
    assert _fmt(inf) == "∞" and _fmt(-inf) == "−∞"
    assert _fmt(0) == "0" and _fmt(0.0) == "0" and _fmt(1) == "1" and _fmt(20.0) == "20"
    assert _fmt(0.5) == "0.5" and _fmt(0.123456) == "0.123" and _fmt(2 / 3) == "0.667"
    assert _fmt(9999) == "1e+04"                                 # below 1e4: .3g
    assert _fmt(10000) == "1.00e+04" and _fmt(-12345) == "-1.23e+04"
    assert _fmt(0.001) == "0.001" and _fmt(-0.001) == "-0.001"   # 1e−3 is not below 1e−3
    assert _fmt(0.00099) == "9.90e-04" and _fmt(-0.00099) == "-9.90e-04"
    assert _fmt(0.123456, 2) == "0.12" and _fmt(123456, 2) == "1.2e+05" and _fmt(1e-5, 4) == "1.000e-05"


def test_lags_are_integers_and_neurons_by_time_scale():
    r = _report()
    assert r.lags.dtype == np.int64 and r.lags.tolist() == [1, 2, 3]
    # τ = [2, ∞, NaN, 5] → ∞ first, then 5, 2, NaN last
    assert r.long_lag_neurons().tolist() == [1, 3, 0, 2]
    # ties keep the neuron order (a stable sort), also past numpy's small-array insertion sort
    r.timescales.tau = np.array([3.0, nan, 1.0] * 20)
    assert r.long_lag_neurons().tolist() == list(range(0, 60, 3)) + list(range(2, 60, 3)) + list(range(1, 60, 3))


def test_to_dict_by_hand():
    r = _report()
    d = r.to_dict()
    assert list(d) == ["settings", "notes", "warnings", "per_lag", "window", "decay", "master", "exact",
                       "neurons", "lam_tau_spearman"]
    assert d["settings"] is r.settings and d["notes"] == ["a note", "another"] and d["warnings"] == ["careful"]
    pl = d["per_lag"]
    assert list(pl) == ["lags", "f", "f_gates", "R", "lam_mean", "lam_std", "count", "mean", "alpha_hat",
                        "sigma_hat", "kappa_hat", "n_hat", "n_star", "reliable", "method"]
    assert pl["lags"].tolist() == [1, 2, 3] and pl["f"].tolist() == [0.5, 0.25, 0.125]
    assert pl["f_gates"].tolist() == [1.0, 0.5, 0.25] and pl["R"].tolist() == [0.5] * 3
    assert pl["lam_mean"].tolist() == [1.5] * 3 and pl["lam_std"].tolist() == [0.25] * 3
    assert pl["count"].tolist() == [10, 11, 12] and pl["mean"].tolist() == [0.1, 0.2, 0.3]
    assert pl["alpha_hat"].tolist() == [1.5, 1.2, 2.0] and pl["sigma_hat"].tolist() == [0.01, 0.02, 0.00005]
    assert pl["kappa_hat"].tolist() == [3.0, 6.0, 2.0] and pl["n_hat"].tolist() == [10.0, 12345.0, inf]
    assert pl["n_star"].tolist() == [4.0, 50.0, inf] and pl["reliable"].tolist() == [True, False, True]
    assert pl["method"] == ["ecf", "mcculloch", "ecf"]
    w = d["window"]
    assert list(w) == ["n_grid", "h_n", "eps", "noise", "h_n_by_null"]
    assert w["n_grid"].tolist() == [25, 100] and w["h_n"].tolist() == [1.0, 2.5] and w["eps"] == 20.0
    assert w["noise"] == "lag" and list(w["h_n_by_null"]) == ["lag", "full"]
    assert w["h_n_by_null"]["lag"].tolist() == [1.0, 2.5] and w["h_n_by_null"]["full"][0] == 0.0
    assert d["decay"] == {"selected": "exponential", "selected_bic": "power", "n": 3, "fits": {
        "exponential": {"params": {"C": 2.0, "lambda": 0.5}, "r2": 0.9, "ssr": 0.1, "aic": -3.0, "bic": -2.0},
        "power": {"params": {"C": 1.0, "beta": 1.5}, "r2": 0.99, "ssr": 0.01, "aic": -5.0, "bic": -4.0}}}
    assert d["master"] == {"slope": 0.75, "intercept": 1.25, "r2": 0.5, "n": 3}
    # f_exact and f both decrease: Spearman 1
    assert list(d["exact"]) == ["f_exact", "offdiag", "spearman_f"]
    assert d["exact"]["f_exact"].tolist() == [0.4, 0.2, 0.1] and d["exact"]["offdiag"].tolist() == [0.1, 0.2, 0.3]
    assert d["exact"]["spearman_f"] == 1.0 and type(d["exact"]["spearman_f"]) is float
    nd = d["neurons"]
    assert list(nd) == ["lam", "tau", "tau_r2", "tau_slope", "m", "long_lag_order"]
    assert nd["lam"].tolist() == [1, 2, 3, 4] and nd["tau"][0] == 2.0 and nd["tau_r2"][3] == 0.95
    assert nd["tau_slope"][0] == -0.5 and nd["m"].shape == (3, 4) and nd["long_lag_order"].tolist() == [1, 3, 0, 2]
    # Λ = 1, 2, 4 against τ = 2, ∞, 5 (NaN dropped): ranks (1, 2, 3) vs (1, 3, 2): 1 − 6·2/(3·8) = 0.5
    assert d["lam_tau_spearman"] == pytest.approx(0.5) and type(d["lam_tau_spearman"]) is float


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------


def test_save_closes_each_figure_once_written(tmp_path, monkeypatch):
    """A figure is closed right after its PNG is written: when the k-th is saved, the k−1 before it
    are closed and the ones after it still open."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    seen, made = [], []
    real = rp.Report.figures

    def spy_figures(self):
        out = real(self)
        made.extend(f.number for f in out.values())
        return out

    monkeypatch.setattr(rp.Report, "figures", spy_figures)
    monkeypatch.setattr(Figure, "savefig", lambda self, p, dpi=None, **k: seen.append(
        [n for n in made if plt.fignum_exists(n)]))
    _report().save(tmp_path)
    assert seen == [made, made[1:], made[2:], made[3:]]
    assert not any(plt.fignum_exists(n) for n in made)
