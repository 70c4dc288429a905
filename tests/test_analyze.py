"""lwsim.analyze: the CLI on a saved model gives the figures pipeline's numbers (docs/analyze.md)."""
import json

import numpy as np
import pytest

import lwsim
from lwsim import analyze as an
from lwsim.analyze.__main__ import main
from lwsim.figures import training as ex
from lwsim.figures.studies.main.experiment import a_main
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")

safetensors_numpy = pytest.importorskip("safetensors.numpy")


@pytest.fixture(scope="module")
def figures_run(tmp_path_factory):
    """a_main (smoke sizes) on a torch-convention GRU without LayerNorm, with its trained model."""
    c = dict({k: v for k, v in SMOKE["a_main"].items()
              if k not in ("seeds", "optimizers")},
             cell="gru", seed=212, optimizer="adamw", backend="numba")
    seen = {}
    mp = pytest.MonkeyPatch()
    mp.setattr(ex, "_a_cell", lambda name, cfg: lwsim.make_cell(
        "gru", cfg["D"], cfg["H"], convention="torch", readout="every"))
    real_train = ex.train

    def spy(cell, params, ds, **kw):
        res = real_train(cell, params, ds, **kw)
        seen.update(cell=cell, res=res, ds=ds)
        return res
    mp.setattr(ex, "train", spy)
    try:
        out = a_main(c)
    finally:
        mp.undo()
    cell, res, ds = seen["cell"], seen["res"], seen["ds"]
    d = tmp_path_factory.mktemp("model")
    safetensors_numpy.save_file(cell.params_to_torch(res.params), str(d / "model.safetensors"))
    v = cell.params_to_torch({k: st["v"] for k, st in res.optimizer.state.items()})
    m = cell.params_to_torch({k: st["m"] for k, st in res.optimizer.state.items()})
    opt = {f"{k}.exp_avg_sq": a for k, a in v.items()}
    opt.update({f"{k}.exp_avg": a for k, a in m.items()})
    opt["step"] = np.array([res.optimizer.step_count], dtype=np.int64)
    safetensors_numpy.save_file(opt, str(d / "opt.safetensors"),
                                metadata={"optimizer": "adamw", "betas": "0.9,0.999"})
    np.savez(d / "diag.npz", x=ds.x_diag, y=ds.y_diag)
    return c, out, res, d


def _num(v):
    return np.array([np.inf if x == "inf" else np.nan if x == "nan" else x for x in v], dtype=float)


def test_cli_equals_figures_pipeline(figures_run, tmp_path):
    c, out, res, d = figures_run
    with pytest.warns(UserWarning, match=f"only {c['n_diag']} diagnostic sequences"):
        rc = main(["--cell", "gru", "--hidden", str(c["H"]), "--weights", str(d / "model.safetensors"),
                   "--optimizer-state", str(d / "opt.safetensors"), "--optimizer", "adamw",
                   "--lr", str(c["lr"]), "--data", str(d / "diag.npz"), "--out", str(tmp_path),
                   "--lags", ",".join(map(str, c["lags"])), "--n-grid", ",".join(map(str, c["n_grid"])),
                   "--K", str(c["K"]), "--eps", str(c["eps"]), "--seed", str(c["seed"]),
                   "--no-progress"])
    assert rc == 0
    rep = json.loads((tmp_path / "report.json").read_text())
    for f in ("report.md", "envelope.png", "window.png", "tails.png", "neurons.png"):
        assert (tmp_path / f).stat().st_size > 0
    pl = rep["per_lag"]
    assert pl["lags"] == list(c["lags"])
    pairs = {"f": "f", "f_gates": "f_gates", "R": "R", "lam_mean": "lam_mean", "lam_std": "lam_std",
             "mean": "mean", "alpha_hat": "alpha_hat", "sigma_hat": "sigma_hat",
             "kappa_hat": "kappa_hat", "n_hat": "n_hat", "n_star": "n_star"}
    for ours, theirs in pairs.items():
        np.testing.assert_allclose(_num(pl[ours]), out[theirs], rtol=1e-12, atol=0, err_msg=ours)
    assert pl["reliable"] == out["reliable"].tolist()
    np.testing.assert_allclose(_num(rep["window"]["h_n"]), out["h_n"], rtol=1e-12)
    np.testing.assert_allclose(_num(rep["neurons"]["lam"]), out["lam_neuron"], rtol=1e-12)
    np.testing.assert_allclose(_num(rep["neurons"]["tau"]), out["tau"], rtol=1e-12)
    assert rep["decay"]["selected_bic"] == out["decay"]["selected_bic"]
    for law, fit in out["decay"]["fits"].items():
        assert rep["decay"]["fits"][law]["bic"] == pytest.approx(fit["bic"], rel=1e-10)
    if "error" in out["master"]:
        assert rep["master"] is None
    else:
        assert rep["master"]["slope"] == pytest.approx(out["master"]["slope"], rel=1e-10)
    assert rep["lam_tau_spearman"] == pytest.approx(out["lam_tau_spearman"], nan_ok=True)
    md = (tmp_path / "report.md").read_text()
    assert "Learnability window" in md and "![envelope](envelope.png)" in md
    h_last = out["h_n"][-1]
    assert (f"Ĥ_N at the largest budget N = {c['n_grid'][-1]}: **{h_last:.3g}**") in md


def test_cli_noise_full_equals_figures_pipeline(figures_run, tmp_path):
    """--noise full: the report's window and per-lag N̂ are a_main's "full" null; both nulls reported."""
    c, out, res, d = figures_run
    with pytest.warns(UserWarning):
        rc = main(["--cell", "gru", "--hidden", str(c["H"]), "--weights", str(d / "model.safetensors"),
                   "--optimizer-state", str(d / "opt.safetensors"), "--optimizer", "adamw",
                   "--lr", str(c["lr"]), "--data", str(d / "diag.npz"), "--out", str(tmp_path),
                   "--lags", ",".join(map(str, c["lags"])), "--n-grid", ",".join(map(str, c["n_grid"])),
                   "--K", str(c["K"]), "--eps", str(c["eps"]), "--seed", str(c["seed"]),
                   "--noise", "full", "--no-progress"])
    assert rc == 0
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["window"]["noise"] == "full"
    np.testing.assert_allclose(_num(rep["window"]["h_n"]), out["h_n_full"], rtol=1e-12)
    np.testing.assert_allclose(_num(rep["per_lag"]["n_hat"]), out["n_hat_full"], rtol=1e-12)
    np.testing.assert_allclose(_num(rep["per_lag"]["sigma_hat"]), out["sigma_hat_full"], rtol=1e-12)
    np.testing.assert_allclose(_num(rep["window"]["h_n_by_null"]["lag"]), out["h_n"], rtol=1e-12)
    assert "Ĥ_N (full)" in (tmp_path / "report.md").read_text()


def test_rates_from_file_equal_hand_formula(figures_run):
    """λ = lr / (sqrt(v / (1 − β₂^t)) + eps) on the recurrent blocks read back from torch layout."""
    c, out, res, d = figures_run
    cell = lwsim.make_cell("gru", c["D"], c["H"], convention="torch")
    params = an.load_weights(d / "model.safetensors", cell, "torch")
    opt = an.load_optimizer(d / "opt.safetensors", cell, params, "torch", "adamw", {"lr": c["lr"]})
    t = res.optimizer.step_count
    raw = safetensors_numpy.load_file(str(d / "opt.safetensors"))
    H = c["H"]
    v_hz = raw["weight_hh_l0.exp_avg_sq"][H:2 * H]                  # torch order r, z, n
    lam = c["lr"] / (np.sqrt(v_hz / (1 - 0.999 ** t)) + 1e-8)
    np.testing.assert_allclose(opt.rates()["W_hz"], lam, rtol=1e-13)
    for k in params:
        np.testing.assert_array_equal(params[k], res.params[k])


def test_defaults_stated_and_unreliable_flagged():
    cell = lwsim.make_cell("gru", 2, 4, convention="torch")
    params = cell.init_params(seed=0, scheme="torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 24, 2))
    y = rng.standard_normal((20, 24, 1))
    with pytest.warns(UserWarning, match="only 24 diagnostic sequences"):
        rep = an.analyze(cell, params, x, y, progress=False, backend="numpy")
    assert rep.lags.tolist() == list(range(1, 11))          # T/2 = 10
    assert rep.detection.n_grid.tolist() == [24]            # up to the 24 available sequences
    assert any("lag grid: default" in n for n in rep.notes)
    assert any("N grid: default" in n for n in rep.notes)
    assert not rep.detection.reliable.any()                 # n = 24 < 500
    md = rep.to_markdown()
    assert "**no**" in md and "unreliable tail fits at 10 of 10 lags" in md
    assert rep.exact is not None                            # small: exact envelope computed
    assert json.loads(rep.to_json())["settings"]["rates"].startswith("none given")


def test_default_grids():
    assert an.default_lags(64) == list(range(1, 33))
    lg = an.default_lags(1000)
    assert lg[0] == 1 and lg[-1] == 500 and len(lg) <= 32
    assert an.default_n_grid(1000) == sorted({int(v) for v in np.round(np.geomspace(25, 1000, 10))})
    assert an.default_n_grid(20) == [20]


def test_resolve_rates():
    params = {"a": np.ones(2)}
    assert an.resolve_rates(None, params)[0] == 1.0
    assert an.resolve_rates(0.5, params)[0] == 0.5
    opt, _ = an.resolve_rates(("sgd", {"lr": 0.1}), params)
    assert opt.rates()["a"].tolist() == [0.1, 0.1]
    with pytest.raises(ValueError, match="adaptive"):
        an.resolve_rates(("adam", {"lr": 0.1}), params)
    with pytest.raises(TypeError, match="rates"):
        an.resolve_rates(object(), params)
    adam = lwsim.optim.make("adam", {"a": np.ones(2)}, lr=0.1)
    adam.step({"a": np.array([0.5, 2.0])})
    got, desc = an.resolve_rates(adam.state_dict(), params)       # a state_dict: rebuilt
    np.testing.assert_array_equal(got.rates()["a"], adam.rates()["a"])
    assert "Adam" in desc and "step=1" in desc


def test_statistic_passed_through():
    """statistic= reaches matched_statistic; the instantaneous one has B(T − ℓ) samples per lag."""
    import inspect
    if "statistic" not in inspect.signature(lwsim.diagnostics.matched_statistic).parameters:
        with pytest.raises(ValueError, match="does not support"):
            an.analyze(lwsim.make_cell("gru", 2, 3), None, np.zeros((8, 20, 2)), np.zeros((8, 20, 1)),
                       statistic="instantaneous", progress=False)
        return
    cell = lwsim.make_cell("gru", 2, 3, convention="torch")
    params = cell.init_params(seed=0, scheme="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((10, 30, 2)), rng.standard_normal((10, 30, 1))
    with pytest.warns(UserWarning, match="only 150 diagnostic samples"):
        rep = an.analyze(cell, params, x, y, statistic="instantaneous", progress=False,
                         backend="numpy", exact=False)
    assert rep.detection.n_grid[-1] == 30 * 9                  # B(T − 1) at lag 1
    assert rep.settings["statistic"] == "instantaneous"


def test_lag_grid_trimmed_to_signal():
    """z ≈ σ(−10): f(ℓ)/f(1) ≈ 6e−5, 3e−9, 1.7e−13 … → lags with f > 1e−12 max f are 1, 2, 3."""
    cell = lwsim.make_cell("gru", 2, 3, convention="torch")
    params = cell.init_params(seed=0, scheme="torch")
    params["b_iz"][:] = -10.0
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((20, 24, 2)), rng.standard_normal((20, 24, 1))
    with pytest.warns(UserWarning):
        rep = an.analyze(cell, params, x, y, progress=False, backend="numpy")
    assert rep.lags.tolist() == [1, 2, 3]
    assert any("trimmed to the longest lag with signal, ℓ = 3" in n for n in rep.notes)
    assert rep.decay is None and any("decay-law fit not possible" in w for w in rep.warnings)
