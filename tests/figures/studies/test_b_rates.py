"""Tests of lwsim/figures/studies/b_rates.py (laid out like the code: docs/testing.md).

Provenance of the [B] studies: effective-learning-rate profiles (B1–B3; studies/b_rates.py),
anisotropy (B4–B6, finding 8; studies/b_anisotropy/) and the Fréchet expansion (B7, B8, finding 7;
studies/b_expansion.py): which inputs each stored number was computed from (issue 41 item 6).

Each experiment runs through the registry at SMOKE size; its outputs are recomputed from lwsim's
public API (lwsim.tasks, lwsim.make_cell, lwsim.train, lwsim.diagnostics) on the inputs they
SHOULD use — checkpoint ck's weights for the keys ``*_ck`` (each checkpoint = the model after ck
updates), the probe/gradient rows from their own seeds — and the decoys (the other checkpoint,
the other stream) are checked to give other values. Figure/finding tests feed hand-built runs
whose right and decoy keys disagree (last vs first checkpoint, AI vs CE, slope vs remainder).

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 b_s1: the profile of every checkpoint from the last checkpoint's weights
     → test_s1_profiles_from_each_checkpoint_on_the_probe_stream
  P2 b_s1: the probe rows from the run's seed (task.batch(probe, seed)) instead of seed + 7919
     → test_s1_profiles_from_each_checkpoint_on_the_probe_stream
  P3 fig_b3: the slopes s read from the "retention" predictor whatever b3_predictor says
     → test_b1_b3_read_each_checkpoint_and_predictor

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way.

Aggregates on data where the alternatives disagree (docs/statistics.md §3.5, docs/experiments.md
§5.4–5.5, docs/fidelity.md): mean ≠ median ≠ lower median, even counts, ties at a threshold, a
majority of exactly half, values on a fence. Every expectation is computed by hand in a comment.

Covered: A14 per-seed κ̂ summary and the seed spread of fig_a14; the author's seed-averaged master
window; finding 8's rule (findings.f8 and findings_b.f8_conventions); spread_text; the A13 summary
(seed means of λ, Ĥ_N growth, mean α̂ and its rules); [B] B1 seed means, B4/B5 medians and IQR over
seeds, B6 quartiles and error bars, B7's robust seed filter."""


import numpy as np
import pytest

import lwsim
import lwsim.figures.studies
from lwsim import diagnostics as dg
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import b_rates, b_rates as br, preset_sizes
from lwsim.figures.style import plt
from lwsim.tasks import make as make_task
from lwsim.train import train
from helpers import _b_cell
from helpers import _close


SMOKE = preset_sizes("smoke")


def _same(a, b):
    return all(np.array_equal(a[k], b[k]) for k in a)


# --- B1–B3 ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def s1_run():
    c = dict({k: v for k, v in SMOKE["b_s1"].items() if k != "seeds"}, cell="sharedgate", seed=0, backend="numpy")
    out = EXPERIMENTS["b_s1"](c)
    task = make_task("adding", T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c, c["cell"])
    p0 = cell.init_params(seed=c["seed"], scheme="torch")
    res = train(cell, p0, task, optimizer="sgd", optimizer_kwargs={"lr": c["lr"]}, steps=c["steps"],
                batch_size=c["batch"], backend="numpy", seed=c["seed"], checkpoints=c["checkpoints"],
                validate=False, progress=False)
    return c, out, cell.with_dtype("float64"), res.astype("float64"), task


def _s1_runs(b3_predictor="injection"):
    runs = []
    for s in (1, 2):
        r = {"lags": [1.0, 2.0]}
        for ck in (0, 4):
            r[f"mu_{ck}"] = np.array([1.0 + ck, 0.1 + ck * s])
            for j, name in enumerate(("retention", "injection")):
                r[f"{name}_s_{ck}"] = 10.0 * j + ck + s
                r[f"{name}_r2_{ck}"] = 0.5
                r[f"{name}_mufit_{ck}"] = np.array([1.0, 1.0])
                r[f"{name}_mu0_{ck}"] = np.array([1.0, 1.0])
        runs.append(({"cell": "diaggate", "seed": s, "checkpoints": [0, 4], "b3_predictor": b3_predictor}, r))
    return {"b_s1": runs}


# ----------------------------------------------------------------------------- figures, findings
def _s1_runs_conventions_b(**opts):
    runs = []
    for m in ("sharedgate",):
        for seed in (0, 1):
            r = {"lags": np.array([1, 2]), "predictor_names": ["injection", "retention"]}
            for ck in (0, 5):
                r[f"mu_{ck}"] = np.array([1.0, 0.5])
                for name, s in (("injection", 1.0 + seed), ("retention", 3.0 + seed)):
                    r[f"{name}_s_{ck}"], r[f"{name}_r2_{ck}"] = s, 0.9
                    r[f"{name}_mu0_{ck}"] = np.array([1.0, 0.4])
                    r[f"{name}_mufit_{ck}"] = np.array([1.0, 0.3])
            runs.append(({"cell": m, "checkpoints": [0, 5], "seed": seed, **opts}, r))
    return {"b_s1": runs}


def test_s1_checkpoints_are_the_model_after_ck_updates(s1_run):
    c, _, cell, res, task = s1_run
    ck = c["checkpoints"][-1]
    for steps, same in ((ck, True), (ck - 1, False)):
        short = train(_b_cell(c, c["cell"]), _b_cell(c, c["cell"]).init_params(seed=c["seed"], scheme="torch"), task,
                      optimizer="sgd", optimizer_kwargs={"lr": c["lr"]}, steps=steps, batch_size=c["batch"],
                      backend="numpy", seed=c["seed"], validate=False, progress=False).astype("float64")
        assert _same(short.params, res.checkpoints[ck]) == same, steps


def test_s1_profiles_from_each_checkpoint_on_the_probe_stream(s1_run):
    c, out, cell, res, task = s1_run
    x_probe, _ = task.batch(c["probe"], c["seed"] + 7919)

    def mu(p, x, conv):
        return dg.lr_profile(cell, p, x, min_points=c["min_points"], backend="numpy", progress=False,
                             conventions=conv, seed=c["seed"]).mu

    for ck in c["checkpoints"]:
        np.testing.assert_array_equal(out[f"mu_{ck}"], mu(res.checkpoints[ck], x_probe, "lwsim"))
        np.testing.assert_array_equal(out[f"mu_author_{ck}"], mu(res.checkpoints[ck], x_probe, "author"))
    first, last = c["checkpoints"][0], c["checkpoints"][-1]
    x_seed, _ = task.batch(c["probe"], c["seed"])
    for p, x in ((res.checkpoints[first], x_probe), (res.checkpoints[last], x_seed)):
        assert not np.array_equal(mu(p, x, "lwsim"), out[f"mu_{last}"])
    assert not np.array_equal(mu(res.checkpoints[last], x_probe, "lwsim"), out[f"mu_{first}"])


# ----------------------------------------------------------------------------------------------
# fig_b1
# ----------------------------------------------------------------------------------------------


def test_b1_b3_read_each_checkpoint_and_predictor():
    fig, b1 = br.fig_b1(_s1_runs())
    _close(fig)
    np.testing.assert_allclose(b1["diaggate"]["mu_0"], [1.0, 0.1])
    np.testing.assert_allclose(b1["diaggate"]["mu_4"], [5.0, 6.1])
    for pred, base in (("injection", 10.0), ("retention", 0.0)):
        fig, b3 = br.fig_b3(_s1_runs(pred))
        _close(fig)
        np.testing.assert_allclose(b3["diaggate"]["s_mean"], [base + 1.5, base + 5.5])


def test_b1_predictors_at_every_checkpoint():
    _, d = b_rates.fig_b1(_s1_runs_conventions_b(b1_predictors="all"))
    assert "injection_fit_0" in d["sharedgate"] and "injection_fit_5" in d["sharedgate"]
    _, d = b_rates.fig_b1(_s1_runs_conventions_b())
    assert "injection_fit_0" not in d["sharedgate"] and "injection_fit_5" in d["sharedgate"]


def test_b1_author_mu_and_predictors_are_seed_means():
    runs = []
    for seed, v in enumerate((0.1, 0.2, 0.9)):            # mean 0.4, median 0.2
        r = {"lags": [1, 2], "mu_5": np.array([1.0, v]), "mu_author_5": np.array([1.0, 2 * v]),
             "injection_mufit_5": np.array([1.0, v]), "injection_mu0_5": np.array([1.0, np.nan if seed == 1 else v])}
        runs.append(({"cell": "diaggate", "checkpoints": [5], "seed": seed}, r))
    fig, d = b_rates.fig_b1({"b_s1": runs})
    plt.close(fig)
    np.testing.assert_allclose(d["diaggate"]["mu_5"], [1.0, 0.4])
    np.testing.assert_allclose(d["diaggate"]["author_mu_5"], [1.0, 0.8])
    np.testing.assert_allclose(d["diaggate"]["injection_fit_5"], [1.0, 0.4])
    np.testing.assert_allclose(d["diaggate"]["injection_mu0_5"], [1.0, 0.5])     # NaN seed left out


# ----------------------------------------------------------------------------------------------
# fig_b3
# ----------------------------------------------------------------------------------------------


def test_b3_uses_the_gate_product_by_default():
    _, d = b_rates.fig_b3(_s1_runs_conventions_b())
    assert d["sharedgate"]["predictor"] == "injection"
    np.testing.assert_allclose(d["sharedgate"]["s_mean"], [1.5, 1.5])
    _, d = b_rates.fig_b3(_s1_runs_conventions_b(b3_predictor="retention"))
    np.testing.assert_allclose(d["sharedgate"]["s_mean"], [3.5, 3.5])
    with pytest.raises(ValueError, match="b3_predictor"):
        b_rates.fig_b3(_s1_runs_conventions_b(b3_predictor="both"))


def test_b1_stores_each_seeds_last_lag_mu_at_the_last_checkpoint_and_the_plain_contrast():
    R = _s1_runs()
    # mu_4 = [5, 0.1 + 4 s]: the largest lag at the last checkpoint is 4.1 (seed 1) and 8.1 (seed 2);
    # mu_0's last values (0.1) are the decoy
    for s in (1, 2):
        R["b_s1"].append(({"cell": "rnn", "seed": s, "checkpoints": [0, 4]},
                          {"lags": [1.0, 2.0], "mu_0": np.array([1.0, 0.5]), "mu_4": np.array([1.0, 0.01 * s])}))
    fig, d = br.fig_b1(R)
    assert d["diaggate"]["last_lag_mu_seeds"] == pytest.approx([4.1, 8.1])
    assert d["rnn"] == {"last_lag_mu_seeds": pytest.approx([0.01, 0.02])}      # the contrast: data only
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["B1 diaggate"]
    assert br.S1_CONTRAST == ("rnn",)
    assert {r.config["cell"] for r in br.s1_runs("smoke", "numpy")} == {"constgate", "sharedgate", "diaggate", "rnn"}


def test_s1_runs_one_per_model_and_seed_with_the_presets_sizes():
    sz = br.SIZES["b_s1"]["quick"]
    runs = br.s1_runs("quick", "numba")
    assert len(sz["seeds"]) > 1
    assert [(r.config["cell"], r.config["seed"]) for r in runs] == [
        (m, s) for m in br.B_MODELS + ("rnn",) for s in sz["seeds"]]
    assert {r.experiment for r in runs} == {"b_s1"} and {r.config["backend"] for r in runs} == {"numba"}
    assert all("seeds" not in r.config and {k: r.config[k] for k in sz if k != "seeds"} ==
               {k: v for k, v in sz.items() if k != "seeds"} for r in runs)


def test_last_lag_mu_is_the_last_lag_at_the_last_checkpoint():
    runs = [({"checkpoints": [0, 4]}, {"mu_0": [9.0, 9.0, 9.0], "mu_4": [1.0, 0.5, 0.25]}),
            ({"checkpoints": [0, 2]}, {"mu_0": [9.0, 9.0, 9.0], "mu_2": [1.0, 0.75, 0.125]})]
    assert br.last_lag_mu(runs) == [0.25, 0.125]
