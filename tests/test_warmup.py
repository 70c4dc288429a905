"""Compile once and say so; progress to the end (docs/experiments.md §5.3): the warm-up's runs,
its message, bar and marker, and the drawing bar."""
import json

import pytest

from lwsim.figures import drawing as figures_mod
from lwsim.figures import warmup
from lwsim.figures.plan import plan
from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.studies import preset_sizes

PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}


@pytest.fixture
def quick_warm():
    return warmup.warm_runs(plan(["A1", "A10", "A11", "B4", "B7"], "quick", "numba"))


def test_warm_runs_are_small_and_keep_the_options(quick_warm):
    by_exp = {}
    for r in quick_warm:
        by_exp.setdefault(r.experiment, []).append(r.config)
    # one per cell: a_main and a_compare (adamw, sgd, rmsprop) share it; b_s2 one per model
    assert {k: len(v) for k, v in by_exp.items()} == {"a_main": 5, "a_fidelity": 5, "b_s2": 3, "b_expansion": 2}
    a = by_exp["a_main"][0]
    assert (a["T"], a["H"], a["n_diag"], a["epochs"]) == (24, 6, 32, 1)       # the smoke preset's sizes
    assert a["floor_ablations"] == PRESETS["quick"]["a_main"]["floor_ablations"]  # options stay quick's
    assert a["train_dtype"] == "float32" and a["backend"] == "numba"
    assert {c["task"] for c in by_exp["b_s2"]} == {"adding"}                   # a smoke task, T = 16 fits
    assert sorted(c["cell"] for c in by_exp["a_main"]) == ["constgate", "diaggate", "gru", "lstm", "sharedgate"]


def test_warm_runs_rejects_bad_input():
    with pytest.raises(TypeError, match="groups"):
        warmup.warm_runs([1, 2])


def test_warm_up_says_it_once_then_skips(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(warmup, "_warm_batch", lambda items, threads: calls.append(len(items)) or [])
    groups = plan(["A11"], "quick", "numba")                                   # 5 cells × 3 optimizers
    said = []
    first = warmup.warm_up(groups, jobs=1, progress=True, say=lambda *a, **k: said.append(a[0]))
    assert first["runs"] == 5 and not first["skipped"] and sum(calls) == 5
    assert said[0].startswith("compiling numba kernels (first run only, about 11 s on an idle 2-core")  # 78 s × 5 / 36
    assert "ready" in said[1]
    assert "compiling numba kernels" in capsys.readouterr().err                # its own bar
    marker = list(tmp_path.glob("lwsim-warm-*"))
    assert len(marker) == 1 and json.loads(marker[0].read_text())["runs"] == 5
    again = warmup.warm_up(groups, jobs=1, progress=True, say=lambda *a, **k: said.append(a[0]))
    assert again["skipped"] and sum(calls) == 5 and len(said) == 2


def test_warm_up_silent_without_progress_and_no_marker_after_failure(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(warmup, "_warm_batch", lambda items, threads: ["ValueError: x"])
    out = warmup.warm_up(plan(["A11"], "quick", "numba"), jobs=1, progress=False, say=pytest.fail)
    assert out["failed"] == ["ValueError: x"] * 5
    assert capsys.readouterr().err == "" and not list(tmp_path.glob("lwsim-warm-*"))
    with pytest.raises(ValueError, match="jobs"):
        warmup.warm_up({}, jobs=0)
    # numpy runs compile nothing: no warm-up
    assert warmup.warm_up(plan(["A11"], "quick", "numpy"), progress=False)["runs"] == 0


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


def test_bench_first_run_reads_the_warm_up_line():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_first_run.py"
    spec = importlib.util.spec_from_file_location("bench_first_run", path)
    bfr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bfr)
    assert bfr.compile_seconds("runs: 3\nnumba kernels ready in 57 s (31 warm-up runs)\n") == 57.0
    assert bfr.compile_seconds("numba kernels ready in 12.5 s") == 12.5
    assert bfr.compile_seconds("runs: 3 total, 3 computed") is None
    with pytest.raises(TypeError, match="stdout"):
        bfr.compile_seconds(None)


def test_worker_thread_env_sets_and_restores(monkeypatch):
    import os
    from lwsim.figures.runner import worker_thread_env
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    with pytest.raises(RuntimeError):
        with worker_thread_env(3):
            assert os.environ["OMP_NUM_THREADS"] == "3" and os.environ["NUMBA_NUM_THREADS"] == "3"
            raise RuntimeError("a failing body still restores the environment")
    assert os.environ["OMP_NUM_THREADS"] == "7" and "NUMBA_NUM_THREADS" not in os.environ


def test_first_run_estimate_is_the_readmes_number():
    """One truth (issue 33 item 5): the message's reference seconds are the README's measured ones."""
    from pathlib import Path
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("<!-- first-run-times -->")[1].split("<!-- /first-run-times -->")[0]
    assert f"{warmup.REFERENCE_SECONDS:.0f} s of it compiling" in block
    assert f"{warmup.REFERENCE_RUNS} warm-up runs" in (Path(__file__).resolve().parent.parent
                                                       / "docs" / "performance.md").read_text()
