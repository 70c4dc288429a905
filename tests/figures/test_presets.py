"""Tests of lwsim/figures/presets.py (laid out like the code: docs/testing.md).

Presets of [A] main (issue 13): `paper` is the final paper's configuration (the author's final
launcher), `paper-v1` the earlier code generation; plan.py enumerates both cheaply, and one run of
each, shrunk to smoke size, goes through the same code path (runner → experiments.a_main).

The study registry (docs/project.md, "Studies"): what the engine reads from the studies."""


from __future__ import annotations

import time

import numpy as np
import pytest

from lwsim.figures.plan import FIG_NEEDS, plan
from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.runner import Run, run_grid
from lwsim.figures.studies import preset_sizes


PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}


SMOKE = PRESETS["smoke"]


FINAL_GRID = [25, 50, 75, 100, 125, 150, 175, 200, 225, 250, 275, 300, 325, 350, 375, 400, 450, 500, 550,
              600, 650, 700, 750, 800, 850, 900, 950, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1800, 2000,
              2200, 2400, 2600, 2800, 3200, 3600, 4000, 4800, 5600, 6400, 8000, 9600, 11200, 12800, 16000,
              19200, 22400, 25600]


# Sizes of the smoke preset; the options stay the preset's (thresholds scaled where noted).
SIZE_KEYS = ("T", "D", "H", "n_train", "n_val", "n_diag", "epochs", "batch", "task_lags", "task_coefs",
             "lags", "n_grid")


def _smoke_run(preset, cell, **extra):
    run = next(r for r in plan(["A1"], preset, "numpy")["a_main"] if r.config["cell"] == cell)
    cfg = dict(run.config, **{k: SMOKE["a_main"][k] for k in SIZE_KEYS}, **extra)
    return Run.make("a_main", **cfg)


def test_paper_is_the_final_configuration():
    c = PRESETS["paper"]["a_main"]
    assert c["seeds"] == [2, 12, 31, 41, 51] and (c["n_train"], c["n_diag"]) == (8000, 12000)
    assert (c["T"], c["D"], c["H"]) == (1536, 16, 256)
    assert (c["epochs"], c["batch"], c["lr"], c["weight_decay"], c["clip"]) == (1500, 384, 2e-4, 1e-4, 1.0)
    assert c["lags"] == list(range(4, 769, 4))                  # int(linspace(4, 768, 192)): step 4
    assert c["task_lags"] == [64, 128, 256, 384, 512, 768] and c["sigma_y"] == 0.4
    assert c["task_coefs"] == [0.60, 0.50, 0.40, 0.30, 0.22, 0.16]
    assert c["n_grid"] == FINAL_GRID and len(c["n_grid"]) == 54
    assert c["eps"] == 20.0 and c["K"] == 50 and c["orient"] is True
    assert (c["statistic"], c["rates"]) == ("sequence", "optimizer")
    assert c["tail_methods"] == ["ecf", "mcculloch"] and c["n_boot"] == 500 and c["min_samples"] == 1000
    assert c["cap_budget"] is False and c["fit_subsample"] is None
    assert c["decay_window"] == "author" and c["gate_init"] == "final" and c["s0"] == 0.05
    assert PRESETS["paper"]["a_compare"] == {"optimizers": ["sgd", "rmsprop"], "seeds": [2, 12, 31, 41, 51]}


def test_paper_v1_is_the_earlier_configuration():
    c = PRESETS["paper-v1"]["a_main"]
    assert c["seeds"] == [212, 1001, 2002, 3003, 4004] and (c["n_train"], c["n_diag"]) == (8000, 8000)
    assert (c["T"], c["D"], c["H"]) == (1024, 16, 128)
    assert (c["epochs"], c["batch"], c["lr"], c["weight_decay"], c["clip"]) == (750, 512, 1e-3, 1e-4, 1.0)
    assert c["lags"] == [int(v) for v in np.linspace(4, 256, 128)] and len(c["lags"]) == 128
    assert c["lags"][:4] == [4, 5, 7, 9]                        # truncated, not rounded (5.98 → 5)
    assert c["task_lags"] == [32, 64, 128, 192, 256] and c["task_coefs"] == [0.6, 0.5, 0.4, 0.32, 0.26]
    assert c["sigma_y"] == 0.3 and c["eps"] == 0.1 and c["K"] == 1
    assert c["n_grid"] == [25, 50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800,
                           6400, 9600, 12800]
    assert (c["statistic"], c["rates"], c["cap_budget"], c["fit_subsample"]) == ("instantaneous", "none",
                                                                                 True, 100000)
    assert c["tail_methods"] == ["ecf"] and c["min_samples"] == 500 and c["gate_init"] == "v1"
    assert PRESETS["paper-v1"]["a_compare"] == {"optimizers": ["sgd", "momentum"], "seeds": [212]}
    # every other experiment as in the paper preset
    assert {k: v for k, v in PRESETS["paper-v1"].items() if k not in ("a_main", "a_compare")} == \
        {k: v for k, v in PRESETS["paper"].items() if k not in ("a_main", "a_compare")}


def test_quick_keeps_lwsim_defaults():
    for name in ("smoke", "quick"):
        c = PRESETS[name]["a_main"]
        assert not {"statistic", "rates", "orient", "tail_methods", "min_samples", "cap_budget",
                    "fit_subsample", "decay_window", "gate_init"} & set(c), name


@pytest.mark.parametrize("preset,n_main,n_compare", [("paper", 25, 50), ("paper-v1", 25, 10)])
def test_plan_enumerates_the_paper_presets_cheaply(preset, n_main, n_compare):
    t0 = time.perf_counter()
    groups = plan(sorted(FIG_NEEDS), preset, "numba")
    assert time.perf_counter() - t0 < 5.0
    assert len(groups["a_main"]) == n_main and len(groups["a_compare"]) == n_compare
    keys = {r.key for g in groups.values() for r in g}
    assert len(keys) == sum(len(g) for g in groups.values())     # all distinct
    cfg = groups["a_main"][0].config
    assert cfg["statistic"] == PRESETS[preset]["a_main"]["statistic"] and "seeds" not in cfg


def test_one_run_of_each_paper_preset_at_smoke_size(tmp_path):
    final = _smoke_run("paper", "diaggate", K=2, n_boot=20, min_samples=20)        # 32 sequences
    v1 = _smoke_run("paper-v1", "gru", fit_subsample=300)                           # keeps min 500
    out = run_grid([final, v1], cache_dir=tmp_path, jobs=1, progress=False)
    rf, rv = out[final], out[v1]
    lags, T, B = np.asarray(SMOKE["a_main"]["lags"]), SMOKE["a_main"]["T"], SMOKE["a_main"]["n_diag"]
    # final: one sample per sequence, both tail fits reported
    np.testing.assert_array_equal(rf["n_samples"], np.full(lags.size, B))
    assert rf["tail_methods"] == ["ecf", "mcculloch"] and rf["h_n_mcculloch"].shape == rf["h_n"].shape
    assert np.isfinite(rf["f"]).all() and rf["decay"]["selected"] in ("exponential", "power", "logarithmic",
                                                                    "tempered")
    # v1: instantaneous samples, n = B(T − ℓ); below 500 samples α̂ = 2 and never detectable
    n = B * (T - lags)
    np.testing.assert_array_equal(rv["n_samples"], n)
    few = n < 500
    assert few.any() and (~few).any()
    assert (rv["alpha_hat"][few] == 2.0).all() and np.isinf(rv["n_hat"][few]).all()
    assert rv["tail_methods"] == ["ecf"] and rv["psi"].shape == (lags.size, B)
    finite = np.isfinite(rv["n_hat"])                            # capped budgets: N̂ ≤ n_ℓ
    assert (rv["n_hat"][finite] <= n[finite]).all()


def test_presets_module_declares_no_study_sizes():
    """presets.py keeps only what studies share: no per-study configuration dict in it."""
    from lwsim.figures import presets
    for name, v in vars(presets).items():
        if isinstance(v, dict) and not name.startswith("__"):
            # neither a table per preset nor a run group's sizes (the options sets are shared)
            assert not set(v) & set(presets.PRESET_NAMES), name
            assert not set(v) & {"T", "H", "D", "seeds", "n_train", "steps"}, name
    assert {"A_OPTIONS_FINAL", "A_OPTIONS_V1"} <= set(vars(presets))


def test_the_shared_lag_grids_by_hand():
    from lwsim.figures.presets import int_lags, lag_grid
    # geomspace(1, 10, 5) = 1, 1.78, 3.16, 5.62, 10 → rounded; geomspace(1, 3, 6) rounds to 1 1 2 2 2 3
    assert lag_grid(1, 10, 5) == [1, 2, 3, 6, 10] and lag_grid(1, 3, 6) == [1, 2, 3]
    # linspace(0, 5, 4) = 0, 1.67, 3.33, 5 truncated (not rounded); duplicates dropped
    assert int_lags(0, 5, 4) == [0, 1, 3, 5] and int_lags(4, 10, 4) == [4, 6, 8, 10]
    assert int_lags(1, 2, 5) == [1, 2]
