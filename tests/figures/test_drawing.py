"""Tests of lwsim/figures/drawing.py (laid out like the code: docs/testing.md).

Compile once and say so; progress to the end (docs/experiments.md §5.3): the warm-up's runs,
its message, bar and marker, and the drawing bar."""


from lwsim.figures import drawing as figures_mod


# ----------------------------------------------------------------------------------------------
# render_all
# ----------------------------------------------------------------------------------------------


def test_drawing_bar_names_each_figure(tmp_path, monkeypatch, capsys):
    from lwsim.figures.style import plt

    def tiny(R):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1])
        return fig, {"x": 1}
    monkeypatch.setattr(figures_mod, "FIGURES", {"T1": tiny, "T2": tiny})
    figures_mod.render_all(["T1", "T2"], {}, tmp_path, jobs=1, progress=True)
    err = capsys.readouterr().err
    assert "drawing figures" in err and "1/2" in err and "T2]" in err      # drawing T2, one done
    figures_mod.render_all(["T1", "T2"], {}, tmp_path, jobs=1, progress=False)
    assert capsys.readouterr().err == ""
    assert (tmp_path / "T2.png").stat().st_size > 0


# ----------------------------------------------------------------------------------------------
# draw_all
# ----------------------------------------------------------------------------------------------


def test_draw_all_runs_the_studies_drawings_after_the_figures(tmp_path, monkeypatch, capsys):
    from lwsim.figures.style import plt
    order = []

    def tiny(R):
        order.append(("T1", R))
        fig, ax = plt.subplots(figsize=(2, 2))
        return fig, {"x": 1}

    def job(a, b):
        order.append(("job", a, b))
        return a * b
    monkeypatch.setattr(figures_mod, "FIGURES", {"T1": tiny})
    jobs = {("main", "A1_full"): (job, (2, 3)), "k-job": (job, (4, 5)), ("s", "t", "A4_author"): (job, (1, 1))}
    rendered, drawn = figures_mod.draw_all(["T1"], {"g": 7}, tmp_path, jobs=1, progress=True, drawings=jobs)
    assert rendered == {"T1": {"x": 1}} and drawn == {("main", "A1_full"): 6, "k-job": 20, ("s", "t", "A4_author"): 1}
    assert order == [("T1", {"g": 7}), ("job", 2, 3), ("job", 4, 5), ("job", 1, 1)]   # figures first, then the drawings
    err = capsys.readouterr().err
    assert "2/4" in err and "A1_full]" in err and "main" not in err           # one bar; a job by its own key
    assert "k-job]" in err and "A4_author]" in err and "t]" not in err
    # the defaults: in this process (the spawned pool would not see the patched FIGURES), no bar
    monkeypatch.setitem(figures_mod.FIGURES, "T2", tiny)
    order.clear()
    assert figures_mod.draw_all(["T1", "T2"], {"g": 8}, tmp_path) == ({"T1": {"x": 1}, "T2": {"x": 1}}, {})
    assert figures_mod.render_all(["T2", "T1"], {"g": 9}, tmp_path) == {"T2": {"x": 1}, "T1": {"x": 1}}
    assert order == [("T1", {"g": 8})] * 2 + [("T1", {"g": 9})] * 2 and capsys.readouterr().err == ""
    assert figures_mod.draw_all([], {}, tmp_path, jobs=1) == ({}, {})


def test_draw_all_bar(tmp_path, monkeypatch):
    """One bar for figures and drawings: its settings, and each item named as it is drawn."""
    import tqdm.auto

    from lwsim.figures.style import plt
    bars = []

    class Bar:
        def __init__(self, **kw):
            self.kw, self.events = kw, []
            bars.append(self)

        def set_postfix_str(self, s=""):
            self.events.append(s)

        def update(self, n=1):
            self.events.append(n)

        def close(self):
            self.events.append("close")
    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    monkeypatch.setattr(figures_mod, "FIGURES", {"T1": lambda R: (plt.figure(figsize=(1, 1)), {})})
    figures_mod.draw_all(["T1"], {}, tmp_path, jobs=1, progress=True, drawings={("s", "A1_full"): (abs, (-1,))})
    figures_mod.draw_all([], {}, tmp_path, jobs=1)
    assert bars[0].kw == {"total": 2, "desc": "drawing figures", "unit": "fig", "disable": False, "leave": False}
    assert bars[0].events == ["T1", 1, "A1_full", 1, "close"]
    assert bars[1].kw["disable"] is True and bars[1].kw["total"] == 0 and bars[1].events == ["close"]
    # the pool's bar: each job named as it finishes
    figures_mod.draw_all([], {}, tmp_path, jobs=2, progress=True, drawings={("s", "A4_author"): (abs, (-2,)),
                                                                          ("s", "A5_full"): (abs, (-3,))})
    assert bars[2].kw["total"] == 2 and bars[2].events[-1] == "close"
    assert sorted(bars[2].events[:-1], key=str) == [1, 1, "A4_author", "A5_full"]


def test_draw_all_in_the_spawned_pool(tmp_path):
    """The studies' drawings in the spawned pool (the functions travel by reference): the same
    values, computed in other processes."""
    import operator
    import os
    rendered, drawn = figures_mod.draw_all([], {}, tmp_path, jobs=2, drawings={
        "a": (operator.mul, (6, 7)), "b": (max, (1, 9)), "pid": (os.getpid, ())})
    assert rendered == {} and drawn["a"] == 42 and drawn["b"] == 9 and drawn["pid"] != os.getpid()
