"""What the presets share (docs/experiments.md §5.3, docs/presets.md): their names, the [A] cells,
the option sets and lag/budget grids of the author's two code generations.

Each study declares its own sizes per preset (``Study.sizes``, beside its run groups);
``lwsim.figures.studies.preset_sizes(name)`` gathers them. A run's configuration is the dict its
run group builds from those sizes, so the results cache (runner.py) distinguishes presets
automatically.

Training dtype: every preset trains in float32 (``train_dtype``), as [A] and [B] did (PyTorch's
default dtype); the diagnostics and statistics run in float64 on the trained weights, cast once
(lwsim/figures/training.py). ``train_dtype="float64"`` trains in float64.
"""
from __future__ import annotations

import numpy as np

# smoke (seconds, tests), quick (the default), medium, paper (the final paper of [A], the author's
# final launcher) and paper-v1 ([A]'s earlier code generation).
PRESET_NAMES = ("smoke", "quick", "medium", "paper", "paper-v1")

A_CELLS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")


def lag_grid(lo, hi, n):
    """n log-spaced integer lags from lo to hi, rounded, duplicates dropped."""
    return sorted({int(v) for v in np.unique(np.round(np.geomspace(lo, hi, n)))})


def int_lags(lo, hi, n):
    """The author's diagnostic lags: int(linspace(lo, hi, n)) (truncated), duplicates dropped."""
    return sorted({int(v) for v in np.linspace(lo, hi, n)})


# The final launcher's 54 budgets, 25 … 25600 (log-spaced by hand), and its 192 diagnostic lags.
N_GRID_FINAL = (25, 50, 75, 100, 125, 150, 175, 200, 225, 250, 275, 300, 325, 350, 375, 400, 450, 500,
                550, 600, 650, 700, 750, 800, 850, 900, 950, 1000, 1100, 1200, 1300, 1400, 1500, 1600,
                1800, 2000, 2200, 2400, 2600, 2800, 3200, 3600, 4000, 4800, 5600, 6400, 8000, 9600,
                11200, 12800, 16000, 19200, 22400, 25600)
A_LAGS_FINAL = int_lags(4, 768, 192)

# Every null of docs/statistics.md §3.3 ("lag" is lwsim's default).
NULLS_ALL = ["lag", "full", "author"]
# The [A] options of the author's final launcher and of the earlier code generation (their
# meaning: studies/main/sizes.py).
A_OPTIONS_FINAL = dict(statistic="sequence", rates="optimizer", orient=True, tail_methods=["ecf", "mcculloch"],
                       n_boot=500, min_samples=1000, cap_budget=False, fit_subsample=None,
                       decay_window="author", gate_init="final")
A_OPTIONS_V1 = dict(statistic="instantaneous", rates="none", orient=False, tail_methods=["ecf"],
                    n_boot=200, min_samples=500, cap_budget=True, fit_subsample=100000,
                    decay_window="author", gate_init="v1")


def check_sizes(owner, sizes):
    """Raise ValueError unless ``sizes`` maps each size key to one configuration dict per preset
    of :data:`PRESET_NAMES` (``owner`` names the study in the message)."""
    if not isinstance(sizes, dict):
        raise TypeError(f"study {owner!r}: sizes must be a dict {{key: {{preset: config dict}}}}, "
                        f"got {type(sizes).__name__}")
    for key, per in sizes.items():
        if not isinstance(per, dict) or set(per) != set(PRESET_NAMES):
            got = sorted(per) if isinstance(per, dict) else type(per).__name__
            raise ValueError(f"study {owner!r}: sizes[{key!r}] must give every preset {list(PRESET_NAMES)}, "
                             f"got {got}")
        for name, cfg in per.items():
            if not isinstance(cfg, dict):
                raise TypeError(f"study {owner!r}: sizes[{key!r}][{name!r}] must be a dict, "
                                f"got {type(cfg).__name__}")

# issue 43 item 5: medium runs 10 seeds for the [A] main and behaviour studies (quick keeps 3)
SEEDS_MEDIUM = [212, 1001, 2002, 3003, 4004, 5005, 6006, 7007, 8008, 9009]
