"""Provenance of the [B] studies: effective-learning-rate profiles (B1–B3; studies/b_rates.py),
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
  P4 b_s2: the anisotropy at checkpoint ck from the first checkpoint's weights
     → test_s2_metrics_from_each_checkpoint_on_their_own_rows
  P5 b_s2: gradient rows of seed + 7919 instead of seed + 104729 (x, y of another stream)
     → test_s2_metrics_from_each_checkpoint_on_their_own_rows
  P6 f8: B4's AI read at the first checkpoint (median_first) instead of the last
     → test_f8_reads_the_last_checkpoint_and_ai
  P7 f8: μ̃ of the first checkpoint (keys[0]) instead of the last
     → test_f8_reads_the_last_checkpoint_and_ai
  P8 b_expansion: the weights drawn from seed + 1
     → test_expansion_from_the_seeds_trajectory_and_weights
  P9 f7: the verdict from "remainder" instead of "slope"
     → test_f7_reads_the_slopes
  P10 f8_conventions: the "author" row reads the lwsim AI key (median_last)
     → test_f8_conventions_read_each_conventions_keys
"""
import numpy as np
import pytest

import lwsim
import lwsim.figures.studies  # noqa: F401  (registers the experiments)
from lwsim import diagnostics as dg
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import b_expansion as bx
from lwsim.figures.studies import b_rates as br
from lwsim.figures.studies.b_anisotropy import figures as af
from lwsim.figures.studies.b_anisotropy import findings as afind
from lwsim.tasks import make as make_task
from lwsim.train import train


def _close(fig):
    import matplotlib.pyplot as plt
    plt.close(fig)


def _b_cell(c, name):
    opts = {"bias": False, "readout": "last", "dtype": "float32"}
    if name == "constgate":
        opts["s"] = c.get("s", 0.8)
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


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


def test_b1_b3_read_each_checkpoint_and_predictor():
    fig, b1 = br.fig_b1(_s1_runs())
    _close(fig)
    np.testing.assert_allclose(b1["diaggate"]["mu_0"], [1.0, 0.1])
    np.testing.assert_allclose(b1["diaggate"]["mu_4"], [5.0, 6.1])
    for pred, base in (("injection", 10.0), ("retention", 0.0)):
        fig, b3 = br.fig_b3(_s1_runs(pred))
        _close(fig)
        np.testing.assert_allclose(b3["diaggate"]["s_mean"], [base + 1.5, base + 5.5])


# --- B4–B6 / finding 8 ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def s2_run():
    c = dict({k: v for k, v in SMOKE["b_s2"].items() if k not in ("seeds", "tasks")}, cell="diaggate",
             optimizer="sgd", lr=1e-2, task="adding", seed=0, backend="numpy", conventions=["lwsim"])
    out = EXPERIMENTS["b_s2"](c)
    task = make_task("adding", T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c, c["cell"])
    res = train(cell, cell.init_params(seed=c["seed"], scheme="torch"), task, optimizer="sgd",
                optimizer_kwargs={"lr": c["lr"]}, steps=max(c["checkpoints"]), batch_size=c["batch"],
                backend="numpy", seed=c["seed"], checkpoints=c["checkpoints"], validate=False, progress=False)
    return c, out, cell.with_dtype("float64"), res.astype("float64"), task


def test_s2_metrics_from_each_checkpoint_on_their_own_rows(s2_run):
    c, out, cell, res, task = s2_run
    x, y = task.batch(c["n_examples"], c["seed"] + 104729)
    lags = [l for l in c["lags"] if l < c["T"]]

    def metrics(p, xx, yy):
        ja = dg.jacobian_anisotropy(cell, p, xx, lags, n_samples=c["n_triples"], seed=c["seed"], r=min(10, c["H"]),
                                    n_energy=min(16, c["H"]), backend="numpy", progress=False)
        G, _ = dg.per_example_gradients(cell, p, xx, yy, backend="numpy", progress=False)
        ga = dg.gradient_covariance_metrics(G, r=min(10, c["n_examples"] - 1))
        return ja.ai_median, float(ga.ai), float(ga.pr)

    for ck in c["checkpoints"]:
        ai, gai, gpr = metrics(res.checkpoints[ck], x, y)
        np.testing.assert_array_equal(out[f"ai_{ck}"], ai)
        assert (out[f"gai_{ck}"], out[f"gpr_{ck}"]) == (gai, gpr)
    first, last = c["checkpoints"][0], c["checkpoints"][-1]
    x2, y2 = task.batch(c["n_examples"], c["seed"] + 7919)
    for p, xx, yy in ((res.checkpoints[first], x, y), (res.checkpoints[last], x2, y2)):
        ai, gai, _ = metrics(p, xx, yy)
        assert not np.array_equal(ai, out[f"ai_{last}"]) and gai != out[f"gai_{last}"]


def _b4(first, last):
    return {"adding": {"diaggate": {"median_last": np.array(last[0]), "median_first": np.array(first[0])},
                       "rnn": {"median_last": np.array(last[1]), "median_first": np.array(first[1])}}}


def test_f8_reads_the_last_checkpoint_and_ai():
    b1 = {m: {"lags": [1.0, 2.0], "mu_0": np.array([1.0, 0.9]), "mu_4": np.array([1.0, 0.1])}
          for m in ("sharedgate", "diaggate")}
    # AI: multi ≥ plain at the last checkpoint, below it at the first
    rendered = {"B1": b1, "B4": _b4(first=([1.0], [5.0]), last=([5.0], [1.0]))}
    assert afind.findings(rendered)[8][1] == "reproduced"
    # μ̃ < 0.5 only at the first checkpoint: the rule no longer holds for any model
    b1_rev = {m: {"lags": d["lags"], "mu_0": d["mu_4"], "mu_4": d["mu_0"]} for m, d in b1.items()}
    assert afind.findings({"B1": b1_rev, "B4": rendered["B4"]})[8][1] == "inconclusive"
    swapped = {"B1": b1, "B4": _b4(first=([5.0], [1.0]), last=([1.0], [5.0]))}
    assert afind.findings(swapped)[8][1] == "inconclusive"


def test_b4_reads_each_run_at_its_first_and_last_checkpoint():
    runs = []
    for m in ("rnn", "diaggate"):
        for s in (1, 2, 3):
            r = {"lags": [1.0, 2.0], "ai_0": np.array([1.0, 1.0]) * s, "ai_4": np.array([10.0, 20.0]) * s,
                 "ce_0": np.array([7.0, 7.0]), "ce_4": np.array([8.0, 8.0])}
            runs.append(({"cell": m, "task": "adding", "checkpoints": [0, 4], "seed": s}, r))
    fig, data = af.fig_b4({"b_s2": runs})
    _close(fig)
    np.testing.assert_allclose(data["adding"]["diaggate"]["median_last"], [20.0, 40.0])
    np.testing.assert_allclose(data["adding"]["diaggate"]["median_first"], [2.0, 2.0])


# --- B7, B8 / finding 7 --------------------------------------------------------------------------

def test_expansion_from_the_seeds_trajectory_and_weights():
    c = dict({k: v for k, v in SMOKE["b_expansion"].items() if k != "seeds"}, cell="sharedgate", seed=3)
    out = EXPERIMENTS["b_expansion"](c)

    def check(traj_seed, w_seed):
        T, D, H = c["T"], c["D"], c["H"]
        rng = np.random.default_rng(traj_seed)
        t = np.linspace(0, 12, T)
        phase = rng.uniform(0, 2 * np.pi, D)
        x = (np.sin(np.linspace(0.03, 0.09, D)[None, :] * t[:, None] + phase)
             + 0.05 * rng.standard_normal((T, D)))[:, None, :]
        cell = lwsim.make_cell("sharedgate", D, H, bias=False, readout="last")
        p = cell.init_params(seed=w_seed, scheme="normal", sigma_w=c["sigma_w"])
        return dg.frechet_check(cell, p, x, dg.expansion.DEFAULT_EPS)

    fc = check(3, 3)
    np.testing.assert_array_equal(out["E"], np.asarray(fc.E).reshape(len(fc.eps), -1)[:, 0])
    np.testing.assert_array_equal(out["norm_A"], np.ravel(fc.norm_A))
    for ts, ws in ((4, 3), (3, 4)):
        other = check(ts, ws)
        assert not np.array_equal(np.asarray(other.E).reshape(len(other.eps), -1)[:, 0], out["E"]), (ts, ws)


def test_f7_reads_the_slopes():
    def b7(slope, remainder):
        return {"B7": {"sharedgate": [{"slope": slope, "remainder": remainder, "seed": 0}]}}
    assert bx.findings(b7(2.02, 5.0))[7][1] == "reproduced"
    assert bx.findings(b7(5.0, 2.0))[7][1] == "not reproduced"
    runs = [({"cell": "sharedgate", "seed": s, "b7_aggregate": "seeds"},
             {"eps": [0.1, 1.0], "E": [1.0, 2.0], "C2": [3.0, 4.0], "slope": 2.0 + s, "remainder": -1.0})
            for s in (0, 1)]
    fig, data = bx.fig_b7({"b_expansion": runs})
    _close(fig)
    assert [d["slope"] for d in data["sharedgate"]] == [2.0, 3.0]


def test_f8_conventions_read_each_conventions_keys():
    """lwsim keys: reproduced; the author's keys (author_mu_*, median_last_author): not reproduced."""
    b1 = {m: {"lags": [1.0, 2.0], "mu_4": np.array([1.0, 0.1]), "author_mu_4": np.array([1.0, 0.9])}
          for m in ("sharedgate", "diaggate")}
    b4 = {"adding": {"diaggate": {"median_last": np.array([5.0]), "median_last_author": np.array([1.0])},
                     "rnn": {"median_last": np.array([1.0]), "median_last_author": np.array([5.0])}}}
    rows = afind.f8_conventions({"B1": b1, "B4": b4})
    assert rows[0].startswith("conventions 'lwsim': reproduced")
    assert rows[1].startswith("conventions 'author': not reproduced")
    assert "CHANGES" in rows[2]
