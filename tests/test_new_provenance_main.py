"""Provenance of the [A] main study (a_main; A1–A9, A14, findings 1–5 under each null;
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
     → test_f3_reads_the_tau_spread_and_the_last_window
"""
import numpy as np
import pytest

import lwsim
import lwsim.figures.studies  # noqa: F401  (registers the experiments)
from lwsim import stats
from lwsim.figures.presets import A_CELLS, PRESET_NAMES
from lwsim.figures.studies import preset_sizes

PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}
SMOKE = PRESETS["smoke"]
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import optimizers as op
from lwsim.figures.studies.main import findings as fm
from lwsim.figures.studies.main import nulls as nl
from lwsim.tasks import make as make_task
from lwsim.train import train
from lwsim.window import window_chain


def _cfg(cell="gru", optimizer="adamw", **kw):
    c = {k: v for k, v in SMOKE["a_main"].items()
         if k not in ("seeds", "optimizers")}
    return {**c, **dict(cell=cell, seed=212, optimizer=optimizer, backend="numpy", nulls=["lag", "full"],
                        floor_ablations=[], n_boot=20, epochs=2,
                        eps=2.0, n_grid=[2 ** i for i in range(1, 14)]), **kw}   # ε 2: N̂ finite and spread


def _retrain(c):
    """The run's training from the public API → (float64 cell, float64 p0, float64 result, data)."""
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"], coefs=c["task_coefs"],
                     sigma_y=c["sigma_y"])
    ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
    opts = {"layernorm": True, "readout": "every", "dtype": "float32"}
    if c["cell"] == "constgate":
        opts["s"] = c["s0"]
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], **opts)
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
    kw = {"lr": c["lr"]}
    if c["optimizer"] == "adamw":
        kw["weight_decay"] = c["weight_decay"]
    res = train(cell, p0, ds, optimizer=c["optimizer"], optimizer_kwargs=kw, epochs=c["epochs"],
                batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"], progress=False)
    return (cell.with_dtype("float64"), {k: np.asarray(v, np.float64) for k, v in p0.items()},
            res.astype("float64"), ds)


def _chain(cell, p, rates, x, y, c):
    return window_chain(cell, p, rates, x, y, np.asarray(c["lags"]), c["n_grid"], nulls=["lag", "full"], K=c["K"],
                        seed=c["seed"], backend=c["backend"], eps=c["eps"], n_boot=c["n_boot"])


def _table(ch, null):
    return next(iter(ch.tables[null].values()))


@pytest.fixture(scope="module")
def run():
    c = _cfg()
    out = EXPERIMENTS["a_main"](c)
    cell, p0, res, ds = _retrain(c)
    return c, out, (cell, p0, res, ds), _chain(cell, res.params, res.optimizer, ds.x_diag, ds.y_diag, c)


def test_tables_by_null_from_the_trained_model_on_held_out_rows(run):
    c, out, (cell, p0, res, ds), ch = run
    lag, full = _table(ch, "lag"), _table(ch, "full")
    np.testing.assert_array_equal(out["f"], ch.envelope.f)
    np.testing.assert_array_equal(out["psi"], ch.matched.samples)
    for key, field in (("h_n", "h_n"), ("n_hat", "n_hat"), ("alpha_hat", "alpha"), ("n_star", "n_star"),
                       ("mean", "mean")):
        np.testing.assert_array_equal(out[key], getattr(lag, field), err_msg=key)
        np.testing.assert_array_equal(out[f"{key}_full"], getattr(full, field), err_msg=key)
    # decoys: the other null's table; the initial parameters; the training rows; the final weights
    # with the preconditioner of the first step (η·I)
    assert not np.array_equal(lag.n_star, full.n_star)
    for p, rates, x, y in ((p0, res.optimizer, ds.x_diag, ds.y_diag),
                           (res.params, res.optimizer, ds.x_train, ds.y_train),
                           (res.params, float(c["lr"]), ds.x_diag, ds.y_diag)):
        d = _chain(cell, p, rates, x, y, c)
        assert not np.array_equal(_table(d, "lag").n_star, out["n_star"])
        assert not np.array_equal(_table(d, "full").n_star, out["n_star_full"])
        assert not np.array_equal(d.envelope.f, out["f"])


def test_decay_and_master_fits_read_f_and_their_own_table(run):
    c, out, _, ch = run
    lags, f = np.asarray(c["lags"]), ch.envelope.f
    dec = stats.fit_decay(lags, f)
    assert out["decay"]["selected_bic"] == dec.selected_bic
    assert out["decay"]["fits"]["exponential"]["params"] == dec.fits["exponential"].params
    assert stats.fit_decay(lags, out["f_gates"]).fits["exponential"].params != dec.fits["exponential"].params

    def master(t):           # the full table has too few distinct N̂ here: its error text is the value
        ok = np.isfinite(t.n_hat)
        try:
            return stats.fit_master(t.n_hat[ok], t.kappa[ok], f[ok]).__dict__
        except ValueError as exc:
            return {"error": str(exc)}

    lag, full = _table(ch, "lag"), _table(ch, "full")
    assert out["master"] == master(lag) and out["master_full"] == master(full)
    assert master(lag) != master(full)


def test_final_r2_is_the_last_validation_evaluation(run):
    _, out, (_, _, res, _), _ = run
    assert out["final_val_r2"] == float(res.curves["val_r2"][-1])
    np.testing.assert_array_equal(out["curve_val_r2"], res.curves["val_r2"])
    assert res.curves["val_r2"][-1] != res.curves["val_r2"][0]


def test_the_run_trains_with_its_own_optimizer():
    """a_compare's runs are a_main runs with another optimizer: the trained model is that optimizer's."""
    c = _cfg(optimizer="sgd", epochs=1)
    out = EXPERIMENTS["a_main"](c)
    cell, _, res, ds = _retrain(c)
    np.testing.assert_array_equal(out["f"], _chain(cell, res.params, res.optimizer, ds.x_diag, ds.y_diag, c).envelope.f)
    cell, _, res_a, _ = _retrain(dict(c, optimizer="adamw"))
    assert not np.array_equal(out["f"], _chain(cell, res_a.params, res_a.optimizer, ds.x_diag, ds.y_diag, c).envelope.f)


# --- nulls and findings: hand-built data ---------------------------------------------------------

def test_null_view_swaps_in_every_key_of_the_variant():
    res = {}
    for i, k in enumerate(nl.NULL_KEYS):
        res[k] = np.array([float(i)])
        res[f"{k}_full"] = np.array([100.0 + i])
        res[f"{k}_author"] = np.array([200.0 + i])
    results = {"a_main": [({"cell": "gru", "seed": 1}, res)], "a_compare": ["shared"]}
    view = nl.null_view(results, "full")
    (cfg, r), = view["a_main"]
    for i, k in enumerate(nl.NULL_KEYS):
        assert r[k][0] == 100.0 + i, k
    assert view["a_compare"] is results["a_compare"] and nl.null_view(results, "lag") is results
    assert nl.variants(results) == ["lag", "full", "author"]
    assert nl.h_last_table(results) == {"lag": {"gru": [float(nl.NULL_KEYS.index("h_n"))]},
                                        "full": {"gru": [100.0 + nl.NULL_KEYS.index("h_n")]},
                                        "author": {"gru": [200.0 + nl.NULL_KEYS.index("h_n")]}}


def _a6(fast_mean, slow_mean, fast_frac, slow_frac):
    return {c: {"mean": fast_mean if c in fm.FAST else slow_mean,
                "fraction_below_1.9": fast_frac if c in fm.FAST else slow_frac,
                "mean_seeds": [fast_mean if c in fm.FAST else slow_mean] * 2} for c in A_CELLS}


def test_f4_reads_mean_alpha_not_the_fraction():
    assert fm.f4({"A6": _a6(1.9, 1.5, 0.0, 1.0)})[0][1] == "reproduced"
    assert fm.f4({"A6": _a6(1.5, 1.9, 1.0, 0.0)})[0][1] == "not reproduced"


def _a14(nhat_seeds, nstar_seeds):
    return {"pooled": {"nhat": {"slope": 1.0, "r2": 0.9}, "nhat_per_seed": nhat_seeds, "author_per_cell": {},
                       "nstar": {"slope": 1.0}, "nstar_per_seed": nstar_seeds}}


def test_f5_reads_the_nhat_slopes_not_the_nstar_ones():
    assert fm.f5({"A14": _a14([1.0, 1.1], [3.0, 3.0])})[0][1] == "reproduced"
    assert fm.f5({"A14": _a14([3.0, 3.0], [1.0, 1.1])})[0][1] == "not reproduced"
    # without A14, the pooled A5 slope decides (not a per-cell one)
    a5 = {"pooled": {"slope": 1.05, "r2": 0.9, "n": 10}, "gru": {"fit": {"slope": 5.0}}}
    assert fm.f5({"A5": a5})[0][1] == "reproduced"
    assert fm.f5({"A5": dict(a5, pooled={"slope": 5.0, "r2": 0.9, "n": 10}, gru={"fit": {"slope": 1.0}})})[0][1] \
        == "not reproduced"


def test_f3_reads_the_tau_spread_and_the_last_window():
    cells = ["constgate", "sharedgate", "diaggate", "gru"]
    a3 = {c: {"log10_tau_iqr": float(i), "log10_tau_median": -float(i)} for i, c in enumerate(cells)}
    up = {c: {"H_N_mean": [10.0 - i, float(i)]} for i, c in enumerate(cells)}       # last grows, first falls
    down = {c: {"H_N_mean": [float(i), 10.0 - i]} for i, c in enumerate(cells)}
    assert fm.f3({"A1": up, "A2": {"gru": {}}, "A3": a3})[0][1] == "reproduced"
    assert fm.f3({"A1": down, "A2": {"gru": {}}, "A3": a3})[0][1] == "not reproduced"


def _a1_a2(sel_bic, sel_aic, h_last):
    a1 = {c: {"H_N_mean": [0.0, 5.0, h_last(c)], "N": [1.0, 10.0, 100.0]} for c in A_CELLS}
    a2 = {c: {"selected_bic": sel_bic(c), "selected": sel_aic(c), "fits": {}} for c in A_CELLS}
    return {"A1": a1, "A2": a2}


def test_f1_f2_read_the_bic_law_and_the_seed_mean_window():
    fast = lambda c: c in fm.FAST           # noqa: E731
    bic = lambda c: "exponential" if fast(c) else "power"        # noqa: E731
    aic = lambda c: "power" if fast(c) else "exponential"        # noqa: E731
    h = lambda c: 5.0 if fast(c) else 9.0                        # noqa: E731
    rows = {k: v for k, v, *_ in fm.f1_f2(_a1_a2(bic, aic, h))}
    assert rows == {1: "reproduced", 2: "reproduced"}
    rows = {k: v for k, v, *_ in fm.f1_f2(_a1_a2(aic, bic, lambda c: 9.0 if fast(c) else 5.0))}
    assert rows == {1: "not reproduced", 2: "not reproduced"}


def test_training_lines_read_a8_r2():
    lines = fm.training_lines({"A8": {"gru": {"final_val_r2": [0.25, 0.5], "r2_ceiling": None}},
                               "A1": {"gru": {"final_val_r2": [0.9]}}})
    assert lines[-2] == "- gru: 0.250, 0.500"


# --- A10 (optimizers) ----------------------------------------------------------------------------

def test_compare_runs_use_compare_optimizers_and_seeds():
    c, own = PRESETS["quick"]["a_main"], PRESETS["quick"]["a_compare"]
    runs = op.compare_runs("quick", "numpy")
    assert {r.config["optimizer"] for r in runs} == set(own["optimizers"]) != set(c["optimizers"])
    assert {r.config["seed"] for r in runs} == set(own["seeds"]) != set(c["seeds"])


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
