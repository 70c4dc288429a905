"""Tests of lwsim/figures/style.py (laid out like the code: docs/testing.md).

Every figure read at the size it is written (docs/experiments.md §5.4): legend entries unique,
every colour named, no tick label on another, no text outside the figure. Renders each registered
figure (new ones included) from one smoke run of the numpy backend."""


import pytest

from lwsim.figures.drawing import FIGURES
from lwsim.figures.plan import plan
from lwsim.figures.runner import run_grid
from lwsim.figures.style import _tick_labels, declutter_ticks, layout_problems, plt


DPI = 110                                  # figures.render writes PNGs at this resolution


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    groups = plan(list(FIGURES), "smoke", "numpy")
    done = run_grid([r for runs in groups.values() for r in runs],
                    cache_dir=tmp_path_factory.mktemp("runs"), jobs=2, progress=False)
    return {g: [(r.config, done[r]) for r in runs] for g, runs in groups.items()}


def shown(fig_id, results):
    fig, _ = FIGURES[fig_id](results)
    fig.set_dpi(DPI)
    fig.tight_layout()
    declutter_ticks(fig)
    return fig


def two_seeds(results, group):
    """The smoke results with each run of ``group`` twice (seed and seed + 1), as at quick."""
    runs = results[group]
    return {**results, group: runs + [(dict(cfg, seed=cfg["seed"] + 1), r) for cfg, r in runs]}


def _fig_with(draw, size=(3, 2)):
    fig, ax = plt.subplots(figsize=size, dpi=DPI)
    draw(ax)
    fig.tight_layout()
    return fig


@pytest.fixture(scope="module")
def analyze_report(tmp_path_factory):
    import warnings

    import numpy as np

    import lwsim
    from lwsim import analyze as an
    cell = lwsim.make_cell("gru", 2, 4, convention="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((20, 64, 2)), rng.standard_normal((20, 64, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # few sequences: unreliable fits, said
        rep = an.analyze(cell, cell.init_params(seed=0, scheme="torch"), x, y, progress=False,
                         backend="numpy", n_grid=[25, 50, 64])
    return rep, tmp_path_factory.mktemp("report")


# ----------------------------------------------------------------------------------------------
# band_edges
# ----------------------------------------------------------------------------------------------


def test_band_edges_by_hand():
    """± sd bands (issue 33 item 6): windows never below 0 (clipped at the floor), log bands the
    upper edge mirrored on the log axis: mean²/(mean + sd), > 0 and smooth (no notches)."""
    import numpy as np

    from lwsim.figures.style import band, band_edges
    lo, hi = band_edges([1.0, 2.0], [3.0, 0.5], floor=0.0)
    assert lo.tolist() == [0.0, 1.5] and hi.tolist() == [4.0, 2.5]
    lo, hi = band_edges([1.0, 2.0], [3.0, 0.5], logy=True)
    assert np.allclose(lo, [0.25, 1.6]) and np.allclose(np.log(hi / [1.0, 2.0]), np.log([1.0, 2.0] / lo))
    fig, ax = plt.subplots()
    band(ax, [1, 2, 3], [[0.0, 1.0, 5.0], [2.0, 9.0, 5.0]], floor=0.0, marker="^")
    verts = ax.collections[0].get_paths()[0].vertices
    assert verts[:, 1].min() == 0.0 and ax.lines[0].get_marker() == "^"
    plt.close(fig)


def test_the_pool_draws_what_this_process_draws(smoke_results, tmp_path):
    """draw_all in two spawned processes and in this one: the same files, bit for bit, and the same
    values, the main study's figures under each null and floor (Study.drawings) included."""
    import json

    from lwsim.figures.drawing import draw_all
    from lwsim.figures.studies import main
    from lwsim.io import to_jsonable
    ids = ["A1", "A14", "A2", "B7"]
    got = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        out.mkdir()
        drawings = {("main", k): job for k, job in main.STUDY.drawings(smoke_results, ids, out).items()}
        rendered, drawn = draw_all(ids, smoke_results, out, jobs=jobs, drawings=drawings)
        values = json.dumps(to_jsonable({"rendered": rendered, "drawn": {k[1]: v for k, v in drawn.items()}}),
                            sort_keys=True)
        got[jobs] = values, {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert sorted(got[1][1]) == sorted(f"{f}.{e}" for f in ids + ["A1_full", "A1_author", "A14_full", "A14_author"]
                                       for e in ("png", "json"))
    assert got[2] == got[1]
    names = main.nulls.variants(smoke_results)                           # lag, full, author (+ floors)
    assert names[:3] == ["lag", "full", "author"]
    assert sorted(json.loads(got[1][0])["drawn"]) == sorted(f"{f}_{n}" for n in names for f in ("A1", "A14"))


# ----------------------------------------------------------------------------------------------
# layout_problems
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fig_id", list(FIGURES))
def test_figure_reads_cleanly(fig_id, smoke_results):
    fig = shown(fig_id, smoke_results)
    try:
        assert layout_problems(fig) == []
    finally:
        plt.close(fig)


def test_a12_one_legend_entry_per_alpha(smoke_results):
    fig = shown("A12", two_seeds(smoke_results, "a_theory"))
    assert layout_problems(fig) == []
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    plt.close(fig)
    assert labels == [f"α={a}: measured (dots), theory (line)" for a in (1.3, 1.6, 2.0)]


def test_b7_names_both_cells(smoke_results):
    fig = shown("B7", two_seeds(smoke_results, "b_expansion"))
    assert layout_problems(fig) == []
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    plt.close(fig)
    assert sorted(labels) == ["diaggate (one line per seed)", "sharedgate (one line per seed)", "slope 2"]


@pytest.mark.parametrize("draw, expected", [
    (lambda ax: (ax.plot([0, 1], label="a"), ax.plot([1, 0], label="a"), ax.legend()),
     "legend lists ['a'] more than once"),
    (lambda ax: (ax.plot([0, 1], color="C0", label="a"), ax.plot([1, 0], color="C1"), ax.legend()),
     "colours ['#ff7f0e'] are in no legend"),
    (lambda ax: ax.set_xticks([0, 0.01], ["a long tick label", "another long one"]), "x tick labels overlap"),
    (lambda ax: ax.figure.text(1.05, 0.5, "outside"), "reaches outside the figure"),
])
def test_layout_problems_sees_each_defect(draw, expected):
    fig = _fig_with(draw)
    problems = layout_problems(fig)
    plt.close(fig)
    assert any(expected in p for p in problems), problems


def test_layout_problems_clean_and_inputs():
    fig = _fig_with(lambda ax: (ax.plot([0, 1], color="C0", label="a"), ax.legend()))
    assert layout_problems(fig) == []
    plt.close(fig)
    with pytest.raises(TypeError, match="fig"):
        layout_problems("not a figure")


def test_declutter_empties_only_colliding_minor_labels():
    # a log axis spanning under a decade: matplotlib labels minor ticks 2×10⁰ … 6×10⁰ side by side
    fig = _fig_with(lambda ax: (ax.plot([1, 8], [1, 2]), ax.set_xscale("log")), size=(2.2, 2))
    assert any("x tick labels overlap" in p for p in layout_problems(fig))
    declutter_ticks(fig)
    assert layout_problems(fig) == []
    ax = fig.axes[0]
    fig.canvas.draw()
    majors = [t.label1.get_text() for t in ax.xaxis.get_major_ticks() if 1 <= t.get_loc() <= 8]
    minors = [t.label1.get_text() for t in ax.xaxis.get_minor_ticks() if 1 <= t.get_loc() <= 8]
    plt.close(fig)
    assert majors == ["$\\mathdefault{10^{0}}$"]      # the major label stays
    assert "" in minors and any(minors)          # some minor labels emptied, not all


def test_analyze_window_reads_cleanly():
    # the analyze report's window.png (lwsim.analyze.report, saved at dpi 120): N from 25 to 512,
    # where matplotlib's minor labels 3×10¹ 4×10¹ … collided and the x label was cut off
    import warnings

    import numpy as np

    import lwsim
    from lwsim import analyze as an
    cell = lwsim.make_cell("gru", 2, 4, convention="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((20, 64, 2)), rng.standard_normal((20, 64, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # few sequences: unreliable fits, said
        rep = an.analyze(cell, cell.init_params(seed=0, scheme="torch"), x, y, progress=False,
                         backend="numpy", n_grid=[25, 35, 50, 70, 100, 140, 200, 280, 400, 512])
    figs = rep.figures()
    try:
        window = figs["window"]
        window.set_dpi(120)
        assert layout_problems(window) == []
        labels = [t.get_text() for t in _tick_labels(window.axes[0].xaxis)]
        assert labels == ["50", "100", "200", "500"]     # plain numbers, 1–2–5 per decade
    finally:
        for f in figs.values():
            plt.close(f)


def test_analyze_pngs_read_cleanly(analyze_report):
    """Every analyze PNG at the size it is written (issue 33 item 6): larger than the earlier
    400×272, no clipped label, no colliding tick labels; window.png shows both nulls, Ĥ_N subscripted."""
    from matplotlib.image import imread
    rep, out = analyze_report
    paths = rep.save(out)
    pngs = {p.stem: p for p in paths if p.suffix == ".png"}
    assert sorted(pngs) == ["envelope", "neurons", "tails", "window"]
    for name, p in pngs.items():
        h, w = imread(p).shape[:2]
        assert w > 400 and h > 272, (name, w, h)
    assert imread(pngs["window"]).shape[:2] == (408, 600)       # 5 × 3.4 in at the default 120 dpi
    figs = rep.figures()
    try:
        for name, fig in figs.items():
            fig.set_dpi(120)
            assert layout_problems(fig) == [], name
        rate_tau = figs["neurons"].axes[1]                     # log–log Λ_q vs τ_q: decade labels only
        for axis in (rate_tau.xaxis, rate_tau.yaxis):
            assert not any(t.label1.get_text() for t in axis.get_minor_ticks())
        ax = figs["window"].axes[0]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["lag null (report)", "full null"]
        assert ax.get_ylabel() == r"$\hat{H}_N$ (lags)"
    finally:
        for f in figs.values():
            plt.close(f)
