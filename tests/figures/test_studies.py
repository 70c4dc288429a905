"""Tests of lwsim/figures/studies/__init__.py (laid out like the code: docs/testing.md).

The study registry (docs/project.md, "Studies"): what the engine reads from the studies."""


from __future__ import annotations

import pytest

from lwsim.figures import cost, studies
from lwsim.figures.run import EXPERIMENTS


# ---------------------------------------------------------------- a toy study: one module, one line
TOY = '''"""Toy study (T1, docs: none): the mean of n standard normals per seed."""
import numpy as np

from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.run import Run, experiment
from lwsim.figures.study import Study
from lwsim.figures.style import subplots

SIZES = {"toy": {p: dict(n=4 if p == "smoke" else 400, seeds=[0, 1]) for p in PRESET_NAMES}}


def toy_runs(preset, backend):
    c = SIZES["toy"][preset]
    return [Run.make("toy", n=c["n"], seed=s) for s in c["seeds"]]


@experiment("toy")
def toy(c):
    x = np.random.default_rng(c["seed"]).standard_normal(c["n"])
    return {"x": x, "mean": float(x.mean())}


def fig_t1(R):
    fig, (ax,) = subplots(1)
    means = [r["mean"] for _, r in R["toy"]]
    ax.plot(means, "o")
    return fig, {"means": means}


def findings(rendered):
    means = rendered["T1"]["means"]
    verdict = "reproduced" if max(abs(m) for m in means) < 3 else "not reproduced"
    return {42: (42, verdict, [f"means {means}"], "rule: every |mean| < 3")}


STUDY = Study(name="toy", docs="none (T1)", sizes=SIZES, groups={"toy": toy_runs}, figures={"T1": fig_t1},
              needs={"T1": ("toy",)}, titles={42: "A toy finding"}, findings=findings,
              work={"toy": lambda c: {"one": 1.0}})
'''


# ----------------------------------------------------------------------------------------------
# plugin_studies
# ----------------------------------------------------------------------------------------------


def test_plugin_studies_name_what_is_wrong(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "nostudy_mod.py").write_text("X = 1\n")
    with pytest.raises(ImportError, match=r"\bno_such_module_xyz\b"):
        studies.plugin_studies("no_such_module_xyz")
    with pytest.raises(TypeError, match=r"\bnostudy_mod\b"):
        studies.plugin_studies(" nostudy_mod ,")
    assert studies.plugin_studies("") == () and studies.plugin_studies(" , ") == ()


# ----------------------------------------------------------------------------------------------
# figures
# ----------------------------------------------------------------------------------------------


def test_registry_lists_every_figure_once_in_natural_order():
    ids = list(studies.figures())
    assert ids == [f"A{i}" for i in range(1, 17)] + [f"B{i}" for i in range(1, 9)]
    assert set(studies.needs()) == set(ids)
    assert list(studies.titles()) == list(range(1, 9))


def test_each_study_docstring_names_its_figures_and_docs():
    import importlib
    for s in studies.STUDIES:
        mod = importlib.import_module(f"lwsim.figures.studies.{s.name}")
        doc = mod.__doc__ or ""
        assert "docs" in doc or ".md" in doc, s.name
        for fig in s.figures:
            assert fig in doc or fig[:1] + "1" in doc, (s.name, fig)


# ----------------------------------------------------------------------------------------------
# preset_sizes
# ----------------------------------------------------------------------------------------------


def test_preset_sizes_gathers_every_study_and_nothing_else():
    from lwsim.figures.presets import PRESET_NAMES
    keys = {"a_main", "a_compare", "a_fidelity", "a_theory", "a_conventions", "a_behaviour", "a_delay",
            "b_s1", "b_s2", "b_expansion"}
    for p in PRESET_NAMES:
        got = studies.preset_sizes(p)
        assert set(got) == keys
        # each value is the owning study's own dict, not a copy with other keys mixed in
        owner = {k: s for s in studies.STUDIES for k in s.sizes}
        assert all(got[k] is owner[k].sizes[k][p] for k in keys)
    assert studies.preset_sizes("smoke")["a_main"]["H"] == 6
    assert studies.preset_sizes("paper")["a_compare"]["seeds"] == [2, 12, 31, 41, 51]
    with pytest.raises(ValueError, match=r"^preset\b"):
        studies.preset_sizes("huge")


def test_a_toy_study_added_as_one_module_runs_at_smoke(tmp_path):
    """One module (tmp package) plus one registration (LWSIM_STUDIES here, one line of the registry
    inside lwsim) and the whole engine runs it: plan, runner in worker processes, cache, figure,
    FINDINGS.md."""
    import json
    import os
    import subprocess
    import sys

    import numpy as np
    pkg = tmp_path / "toypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "toy.py").write_text(TOY)
    env = dict(os.environ, LWSIM_STUDIES="toypkg.toy",
               PYTHONPATH=os.pathsep.join([str(tmp_path)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    r = subprocess.run([sys.executable, "-m", "lwsim.figures", "--preset", "smoke", "--only", "T1",
                        "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "runs"), "--jobs", "2",
                        "--no-progress"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    means = json.loads((tmp_path / "out" / "T1.json").read_text())["data"]["means"]
    expect = [float(np.random.default_rng(s).standard_normal(4).mean()) for s in (0, 1)]
    assert means == pytest.approx(expect, rel=0, abs=1e-15)
    assert (tmp_path / "out" / "T1.png").stat().st_size > 0
    text = (tmp_path / "out" / "FINDINGS.md").read_text()
    assert "A toy finding" in text and "reproduced" in text
    assert len(list((tmp_path / "runs").rglob("*.json"))) >= 2          # both runs cached


# ----------------------------------------------------------------------------------------------
# work
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["smoke", "quick", "medium", "paper", "paper-v1"])
def test_every_group_builds_runs_of_registered_experiments_with_a_cost_model(preset):
    work = studies.work()
    for group, build in studies.group_builders().items():
        runs = build(preset, "numpy")
        assert runs, (preset, group)
        for r in runs:
            assert r.experiment in EXPERIMENTS, (group, r.experiment)
            assert r.experiment in work, (group, r.experiment)
            assert cost.work(r)[1] == r.experiment            # never the generic fallback


def test_plugin_studies_loads_each_named_module_in_order(tmp_path, monkeypatch):
    """In process (the toy test above runs them in a subprocess): every module named, in order,
    skipping empty entries; $LWSIM_STUDIES when no names are given."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("plug_a", "plug_b"):
        (tmp_path / f"{name}.py").write_text(f"from lwsim.figures.study import Study\nSTUDY = Study({name!r}, 'x')\n")
    (tmp_path / "plug_int.py").write_text("STUDY = 3\nstudy = None\n")
    got = studies.plugin_studies(" , plug_b,, plug_a ")
    assert [s.name for s in got] == ["plug_b", "plug_a"]
    monkeypatch.setenv("LWSIM_STUDIES", "plug_a")
    assert [s.name for s in studies.plugin_studies()] == ["plug_a"]
    monkeypatch.delenv("LWSIM_STUDIES")
    assert studies.plugin_studies() == ()
    with pytest.raises(TypeError, match=r"\bplug_int\b"):
        studies.plugin_studies("plug_int")


def test_figure_ids_sort_naturally(monkeypatch):
    from types import SimpleNamespace
    # (letters, number) keys: A2 < A16 (not "A16" < "A2"), b2 < b10; an id that is not letters then
    # digits ("A1x", "T") is its own letters with number 0: "A1x" after every ("A", n), before "T"; "T" ties with "T0" (both ("T", 0)) and keeps its place
    monkeypatch.setattr(studies, "STUDIES", (SimpleNamespace(figures=dict.fromkeys(["b10", "A16", "T", "b2", "A2", "A1x", "T0"])),))
    assert list(studies.figures()) == ["A2", "A16", "A1x", "T", "T0", "b2", "b10"]
