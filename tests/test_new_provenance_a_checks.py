"""Provenance of the [A] check studies: first-order fidelity (A11, finding 6; studies/fidelity.py), the
theory checker (A12; studies/theory_check.py) and the conventions study (A13;
studies/conventions/): which inputs each stored number was computed from (issue 41 item 6).

Each experiment runs through the registry at SMOKE size (or below); its outputs are recomputed
from lwsim's / theory's public API on the inputs they SHOULD use (the trained model and its
optimizer, the held-out rows, the run's seed, the convention named in the key), and the decoys
(the initial parameters, η instead of the optimizer, the training rows, another seed, the other
convention) are checked to give other values. The figure/finding tests feed hand-built runs
whose right and decoy keys disagree.

Planted wrong-variable bugs (one at a time, each seen failing, then restored):
  P1 a_fidelity: envelope_fidelity on the initial parameters instead of the trained ones
     → test_fidelity_from_the_trained_model_and_its_optimizer
  P2 a_fidelity: envelope_fidelity on ds.x_train instead of the held-out rows
     → test_fidelity_from_the_trained_model_and_its_optimizer
  P3 f6: the verdict from the median Pearson (log) instead of the median Spearman ρ
     → test_f6_reads_spearman_not_pearson
  P4 a_theory: planted_check with seed + 1
     → test_theory_check_is_the_planted_check_of_its_own_law_alpha_seed
  P5 a_conventions: the "lwsim" detection table on the "author" statistic (conventions swapped in
     matched_statistic) → test_conventions_each_key_from_its_own_convention
  P6 summary: Ĥ_N growth of every convention read from h_n_lwsim
     → test_conventions_summary_and_lines_read_each_convention
  P7 fig_a12: H_theory stored from the measured h_n
     → test_a12_stores_measured_and_theory_from_their_own_keys
"""
import numpy as np
import pytest

import lwsim
import lwsim.figures.studies  # noqa: F401  (registers the experiments)
from lwsim import diagnostics as dg
from lwsim import stats
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.figures.run import EXPERIMENTS
from lwsim.figures.studies import fidelity as fid
from lwsim.figures.studies import theory_check as th
from lwsim.figures.studies.conventions import experiment as cx
from lwsim.figures.studies.conventions import figures as cf
from lwsim.figures.studies.conventions import findings as cfind
from lwsim.tasks import make as make_task
from lwsim.train import train


def _close(fig):
    import matplotlib.pyplot as plt
    plt.close(fig)


# --- A11 / finding 6 -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fidelity_run():
    c = dict({k: v for k, v in SMOKE["a_fidelity"].items() if k not in ("seeds", "optimizers")},
             cell="gru", seed=42, optimizer="adamw", backend="numpy")
    out = EXPERIMENTS["a_fidelity"](c)
    task = make_task("sinmix", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"])
    ds = task.dataset(c["n_train"], 0, c["n_seq"], seed=c["seed"])
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], dtype="float32", layernorm=True)
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s"])
    res = train(cell, p0, ds, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]}, epochs=c["epochs"],
                batch_size=c["batch"], backend=c["backend"], seed=c["seed"], validate=False, progress=False)
    p0 = {k: np.asarray(v, np.float64) for k, v in p0.items()}
    return c, out, cell.with_dtype("float64"), p0, res.astype("float64"), ds


def test_fidelity_from_the_trained_model_and_its_optimizer(fidelity_run):
    c, out, cell, p0, res, ds = fidelity_run

    def fidelity(p, x, rates):
        return dg.envelope_fidelity(cell, p, x, rates, c["lags"], n_times=c["n_time"], seed=c["seed"],
                                    backend="numpy", progress=False)

    ref = fidelity(res.params, ds.x_diag, res.optimizer)
    for k in ("f_exact", "f_approx", "offdiag"):
        np.testing.assert_array_equal(out[k], getattr(ref, k), err_msg=k)
    assert (out["spearman"], out["slope_ratio"]) == (ref.spearman, ref.slope_ratio)
    for p, x, rates in ((p0, ds.x_diag, res.optimizer), (res.params, ds.x_train[:, :c["n_seq"]], res.optimizer),
                        (res.params, ds.x_diag, float(c["lr"]))):
        assert not np.array_equal(fidelity(p, x, rates).f_exact, out["f_exact"])


def _a11_runs(spearman, pearson):
    return {"a_fidelity": [({"cell": cl, "optimizer": "adamw", "seed": s},
                            {"lags": [1, 2], "f_exact": [1.0, 0.5], "f_approx": [1.0, 0.4], "offdiag": [0.1, 0.2],
                             "spearman": spearman, "pearson_log": pearson, "slope_ratio": 1.0})
                           for cl in ("gru", "lstm") for s in (1, 2)]}


def test_f6_reads_spearman_not_pearson():
    for sp, pe, want in ((0.95, 0.1, "reproduced"), (0.1, 0.95, "not reproduced")):
        fig, data = fid.fig_a11(_a11_runs(sp, pe))
        _close(fig)
        assert all(row["spearman"] == sp and row["pearson_log"] == pe for row in data["table"])
        assert fid.findings({"A11": data, "A12": {"table": []}})[6][1] == want


# --- A12 -----------------------------------------------------------------------------------------

def test_theory_check_is_the_planted_check_of_its_own_law_alpha_seed():
    from theory.planted import planted_check
    c = dict(SMOKE["a_theory"], n_samples=1000, law="power", alpha=1.6, seed=3)
    c.pop("seeds")
    out = EXPERIMENTS["a_theory"](c)
    ref = planted_check("power", 1.6, eps=c["eps"], seed=3, n_lags=c["n_lags"], n_samples=c["n_samples"])
    np.testing.assert_array_equal(out["h_n"], ref.h_measured)
    np.testing.assert_array_equal(out["alpha_hat"], ref.table.alpha)
    np.testing.assert_array_equal(out["h_theory"], ref.h_theory)
    for law, alpha, seed in (("power", 1.6, 4), ("power", 1.3, 3)):
        other = planted_check(law, alpha, eps=c["eps"], seed=seed, n_lags=c["n_lags"], n_samples=c["n_samples"])
        assert not np.array_equal(np.asarray(other.table.alpha), out["alpha_hat"]), (law, alpha, seed)


def test_a12_stores_measured_and_theory_from_their_own_keys():
    runs = [({"law": "power", "alpha": a, "seed": s},
             {"n_grid": [1.0, 10.0], "h_n": [1.0 + s, 2.0], "h_theory": [5.0 + a, 6.0],
              "exponent_measured": 0.5, "exponent_theory": 0.7}) for a in (1.3, 2.0) for s in (0, 1)]
    fig, data = th.fig_a12({"a_theory": runs})
    _close(fig)
    for (cfg, r), d in zip(runs, data["power"]):
        assert (d["alpha"], d["seed"]) == (cfg["alpha"], cfg["seed"])
        assert d["H_measured"] == r["h_n"] and d["H_theory"] == r["h_theory"]
        assert (d["exponent_measured"], d["exponent_theory"]) == (0.5, 0.7)


# --- A13 -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def conventions_run():
    c = dict({k: v for k, v in cx.SIZES["a_conventions"]["smoke"].items() if k != "seeds"}, cell="gru", seed=212, backend="numpy",
             eps=2.0, n_grid=[2 ** i for i in range(1, 14)])    # ε 2: N̂ finite (at 20 every N̂ is inf here)
    out = EXPERIMENTS["a_conventions"](c)
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"], coefs=c["task_coefs"],
                     sigma_y=c["sigma_y"])
    ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
    cell = lwsim.make_cell("gru", c["D"], c["H"], layernorm=True, readout="every", dtype="float32")
    p0 = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.95)
    res = train(cell, p0, ds, optimizer="adamw", optimizer_kwargs={"lr": c["lr"], "weight_decay": c["weight_decay"]},
                epochs=c["epochs"], batch_size=c["batch"], clip=c["clip"], backend="numpy", seed=c["seed"],
                progress=False)
    return c, out, cell.with_dtype("float64"), res.astype("float64"), ds


def test_conventions_each_key_from_its_own_convention(conventions_run):
    c, out, cell, res, ds = conventions_run
    lags = np.asarray(c["lags"])

    def conv_outputs(conv, p=res.params, x=ds.x_diag, y=ds.y_diag):
        env = dg.envelope(cell, p, x, res.optimizer, lags, backend="numpy", progress=False, conventions=conv,
                          engine="numpy" if conv == "author" else "numba")
        ms = dg.matched_statistic(cell, p, x, y, res.optimizer, lags, n_directions=c["K"], seed=c["seed"],
                                  orient=True, backend="numpy", progress=False, conventions=conv)
        det = stats.detection_table(ms.samples, lags, c["n_grid"], eps=c["eps"], seed=c["seed"],
                                    n_boot=c["n_boot"], conventions=conv)
        return env.f, ms.samples.mean(axis=1), det.alpha, det.n_hat

    ref = {conv: conv_outputs(conv) for conv in cx.CONVENTIONS}
    for conv in cx.CONVENTIONS:
        f, psi, alpha, n_hat = ref[conv]
        np.testing.assert_array_equal(out[f"f_{conv}"], f)
        np.testing.assert_array_equal(out[f"psi_mean_{conv}"], psi)
        np.testing.assert_array_equal(out[f"alpha_{conv}"], alpha)
        np.testing.assert_array_equal(out[f"n_hat_{conv}"], n_hat)
    # the two conventions differ, so a swap would be seen; and so do the training rows
    for i in (0, 1):          # f and ψ̄ (α̂ is 2 under both at this size; N̂ differs)
        assert not np.array_equal(ref["lwsim"][i], ref["author"][i]), i
    assert not np.array_equal(ref["lwsim"][3], ref["author"][3])
    train_rows = conv_outputs("lwsim", x=ds.x_train[:, :c["n_diag"]], y=ds.y_train[:, :c["n_diag"]])
    assert not np.array_equal(train_rows[0], out["f_lwsim"]) and not np.array_equal(train_rows[3], out["n_hat_lwsim"])


def _a13_runs(h_lwsim, h_author):
    runs = []
    for cell in ("constgate", "sharedgate", "diaggate", "gru", "lstm"):
        fast = cell in cf.FAST
        r = {"lags": [1.0, 2.0], "n_grid": [1.0, 10.0, 100.0], "rel_r": 0.0, "rel_gamma": 0.0,
             "f_lwsim": np.array([1.0, 0.5]), "f_author": np.array([1.0, 0.5])}
        for conv, h in (("lwsim", h_lwsim), ("author", h_author)):
            r[f"h_n_{conv}"] = np.array(h(fast))
            r[f"alpha_{conv}"] = np.array([1.5, 1.5])
            r[f"decay_{conv}"] = {"lambda": 1.0 if fast else 0.1, "selected_bic": "exponential"}
        runs.append(({"cell": cell, "seed": 1}, r))
    return {"a_conventions": runs}


def test_conventions_summary_and_lines_read_each_convention():
    # lwsim: fast cells flat, slow cells growing; author: the opposite
    R = _a13_runs(lambda fast: [1.0, 2.0, 2.0] if fast else [1.0, 2.0, 5.0],
                  lambda fast: [1.0, 2.0, 5.0] if fast else [1.0, 2.0, 2.0])
    fig, data = cf.fig_a13(R)
    _close(fig)
    s = data["summary"]
    assert s["lwsim"]["rules"]["fast_cells_saturate"] and s["lwsim"]["rules"]["slow_cells_keep_growing"]
    assert not s["author"]["rules"]["fast_cells_saturate"] and not s["author"]["rules"]["slow_cells_keep_growing"]
    assert s["lwsim"]["cells"]["gru"]["h_growth"] == 3.0 and s["author"]["cells"]["gru"]["h_growth"] == 0.0
    lines = cfind.conventions_lines({"A13": data})
    assert "**verdicts change**" in lines[2]
    assert any("finding 1:" in ln and "lwsim yes, author no" in ln for ln in lines)
