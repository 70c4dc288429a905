"""Tests of lwsim/figures/studies/optimizers.py (laid out like the code: docs/testing.md).

Provenance of the [A] main study (a_main; A1–A9, A14, findings 1–5 under each null;
lwsim/figures/studies/main/) and of the optimizer comparison (A10; studies/optimizers.py): which
inputs each stored number was computed from (issue 41 item 6).

``a_main`` runs through the registry below SMOKE's size (lag and full nulls, no floor ablations);
its outputs are recomputed from lwsim's public API (lwsim.tasks, lwsim.make_cell, lwsim.train,
lwsim.window, lwsim.stats) on the inputs they SHOULD use: the trained model (not its initial
parameters), its optimizer (not another optimizer's), the held-out rows (not the training rows),
the lag table for the unsuffixed keys and the full table for the ``_full`` keys; each decoy is
checked to give another value. Finding rules get hand-built figure data where the quantity they
should read and a decoy disagree.

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 a_main: the unsuffixed tables taken from the "full" null (null_tables.pop("full"))
     → test_tables_by_null_from_the_trained_model_on_held_out_rows
  P2 a_main: the "_full" master fit on the lag table (``_master(det, f)``) instead of its own
     → test_decay_and_master_fits_read_f_and_their_own_table
  P3 a_main: a_null_tables on ds.x_train, ds.y_train instead of the held-out rows
     → test_tables_by_null_from_the_trained_model_on_held_out_rows
  P4 a_main: the decay law fitted on f_gates instead of f
     → test_decay_and_master_fits_read_f_and_their_own_table
  P5 null_view: a variant's view keeps the lag run's "h_n" (NULL_KEYS without "h_n")
     → test_null_view_swaps_in_every_key_of_the_variant
  P6 f5: the verdict from the N* per-seed slopes instead of the N̂ ones
     → test_f5_reads_the_nhat_slopes_not_the_nstar_ones
  P7 f4: the fast/slow means from "fraction_below_1.9" instead of "mean"
     → test_f4_reads_mean_alpha_not_the_fraction
  P8 fig_a10: every optimizer's band from the first optimizer's runs
     → test_a10_averages_each_optimizer_over_its_own_runs
  P9 compare_runs: the comparison runs on ``seeds`` instead of ``compare_seeds``
     → test_compare_runs_use_compare_optimizers_and_seeds
  P10 f1_f2: the law chosen by AIC ("selected") instead of BIC ("selected_bic")
     → test_f1_f2_read_the_bic_law_and_the_seed_mean_window
  P11 f3: Ĥ_N at the smallest N instead of the largest
     → test_f3_reads_the_tau_spread_and_the_last_window"""


import numpy as np

from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.studies import optimizers as op, preset_sizes


PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}


# ----------------------------------------------------------------------------------------------
# compare_runs
# ----------------------------------------------------------------------------------------------


# --- A10 (optimizers) ----------------------------------------------------------------------------
def test_compare_runs_use_compare_optimizers_and_seeds():
    c, own = PRESETS["quick"]["a_main"], PRESETS["quick"]["a_compare"]
    runs = op.compare_runs("quick", "numpy")
    assert {r.config["optimizer"] for r in runs} == set(own["optimizers"]) != set(c["optimizers"])
    assert {r.config["seed"] for r in runs} == set(own["seeds"]) != set(c["seeds"])


# ----------------------------------------------------------------------------------------------
# fig_a10
# ----------------------------------------------------------------------------------------------


def test_a10_averages_each_optimizer_over_its_own_runs():
    lags = [1.0, 2.0, 4.0]

    def r(v, tau):
        return {"lags": lags, "f": np.full(3, v), "tau": np.array([tau, np.inf, tau])}
    R = {"a_main": [({"cell": "gru", "optimizer": "adamw", "seed": s}, r(1.0 + s, 10.0 * s)) for s in (1, 2)],
         "a_compare": [({"cell": "gru", "optimizer": "sgd", "seed": 1}, r(100.0, 7.0))]}
    fig, data = op.fig_a10(R)
    import matplotlib.pyplot as plt
    plt.close(fig)
    np.testing.assert_allclose(data["gru"]["adamw"]["f_mean"], 2.5)
    np.testing.assert_allclose(data["gru"]["sgd"]["f_mean"], 100.0)
    assert data["gru"]["adamw"]["tau_median"] == 15.0 and data["gru"]["sgd"]["tau_median"] == 7.0
