"""Casts and copies keep every option (docs/cells.md §1.9, docs/experiments.md §5.2, docs/analyze.md):
``Cell.with_dtype`` over every cell and every option (s, convention, read-out, LayerNorm, bias),
``TrainResult.astype`` over every optimizer with non-default hyper-parameters and checkpoints, and
the ``python -m lwsim.analyze`` loader (weights written by lwsim, read back into the cell the CLI
builds) over every cell and option it can express."""
import itertools
import types

import numpy as np
import pytest

import lwsim
from lwsim import tasks
from lwsim.train import train


def _variants():
    """(name, options) for every cell and every combination of its options."""
    out = []
    for name in lwsim.CELL_NAMES:
        extra = {"constgate": [{"s": 0.3}, {"s": 0.05}], "gru": [{"convention": "cho"}, {"convention": "torch"}]}
        for ln, bias, readout, e in itertools.product((False, True), (False, True), ("every", "last"),
                                                      extra.get(name, [{}])):
            if ln and e.get("convention") == "torch":
                continue                                  # torch.nn.GRU has no LayerNorm
            out.append((name, dict(layernorm=ln, bias=bias, readout=readout, **e)))
    return out


VARIANTS = _variants()


def _options(cell):
    """Everything a cell carries except its dtype."""
    return {k: v for k, v in vars(cell).items() if k != "dtype"}


def test_with_dtype_keeps_every_option_of_every_cell():
    assert len(VARIANTS) == 60          # 8 per cell and option value (GRU torch: no LayerNorm, 4)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    for name, opts in VARIANTS:
        c64 = lwsim.make_cell(name, 3, 4, 2, **opts)
        c32 = c64.with_dtype("float32")
        assert c32.dtype == np.float32 and c64.dtype == np.float64
        assert _options(c32) == _options(c64), (name, opts)
        back = c32.with_dtype("float64")
        assert _options(back) == _options(c64) and back.dtype == np.float64
        assert c32.param_shapes() == c64.param_shapes()
        p = c64.init_params(seed=1, scheme="normal", sigma_w=0.5)
        if name == "gru" and opts["bias"]:
            p = {k: v + 0.1 for k, v in p.items()}           # non-zero biases: torch vs cho differ
        # the same computation: the output of the cast cell equals the original's to float32 accuracy
        y64 = np.asarray(c64.forward(p, x).y)
        y32 = np.asarray(c32.forward({k: v.astype(np.float32) for k, v in p.items()}, x.astype(np.float32)).y)
        np.testing.assert_allclose(y32, y64, rtol=2e-5, atol=2e-6, err_msg=f"{name} {opts}")


OPTIMIZERS = [("sgd", {"lr": 0.02, "momentum": 0.5, "dampening": 0.1, "weight_decay": 1e-3, "nesterov": False}),
              ("momentum", {"lr": 0.01, "momentum": 0.7, "nesterov": True}),
              ("adam", {"lr": 3e-3, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 1e-3, "amsgrad": True}),
              ("adamw", {"lr": 3e-3, "betas": (0.85, 0.99), "weight_decay": 0.05}),
              ("rmsprop", {"lr": 1e-3, "alpha": 0.9, "momentum": 0.3, "centered": True})]


@pytest.mark.parametrize("opt,hyper", OPTIMIZERS, ids=[o for o, _ in OPTIMIZERS])
def test_astype_keeps_optimizer_options_checkpoints_and_record(opt, hyper):
    task = tasks.make("multilag", T=8, D=2, lags=(1, 3), coefs=(1.0, 0.5), sigma_y=0.1, seed=3)
    cell = lwsim.make_cell("gru", 2, 3, dtype="float32", readout="last")
    params = cell.init_params(seed=5, scheme="normal", sigma_w=0.5)
    r32 = train(cell, params, task, optimizer=opt, optimizer_kwargs=hyper, steps=4, batch_size=4,
                backend="numpy", seed=7, progress=False, checkpoints=(0, 2, 4), validate=False)
    r64 = r32.astype("float64")
    assert r64.optimizer.name == opt and r64.optimizer.hyper == r32.optimizer.hyper
    for k, v in hyper.items():
        assert r64.optimizer.hyper[k] == v, k
    assert r64.optimizer.step_count == r32.optimizer.step_count == 4
    assert r64.opt_state["hyper"] == r32.opt_state["hyper"] and r64.opt_state["step"] == 4
    assert sorted(r64.checkpoints) == sorted(r64.checkpoint_opt_states) == [0, 2, 4]
    for s in (0, 2, 4):
        for k, v in r32.checkpoints[s].items():
            assert r64.checkpoints[s][k].dtype == np.float64
            np.testing.assert_array_equal(r64.checkpoints[s][k], v.astype(np.float64))
        sd32, sd64 = r32.checkpoint_opt_states[s], r64.checkpoint_opt_states[s]
        assert (sd64["name"], sd64["hyper"], sd64["step"]) == (sd32["name"], sd32["hyper"], sd32["step"])
        assert sd64["state"].keys() == sd32["state"].keys()
        for k, bufs in sd32["state"].items():
            assert bufs.keys() == sd64["state"][k].keys()
            for b, a in bufs.items():
                assert sd64["state"][k][b].dtype == np.float64
                np.testing.assert_array_equal(sd64["state"][k][b], np.asarray(a, np.float64))
    assert (r64.best_step, r64.best_val_mse, r64.config, r64.curves) == (r32.best_step, r32.best_val_mse,
                                                                          r32.config, r32.curves)
    # the rebuilt optimizer takes the next step as the original would (same hyper-parameters, same buffers)
    g = {k: np.full_like(v, 0.01) for k, v in r64.params.items()}
    p32 = {k: v.astype(np.float64) for k, v in r32.params.items()}
    twin = lwsim.optim.from_state_dict(p32, {**r32.optimizer.state_dict(),
                                             "state": {k: {b: a.astype(np.float64) for b, a in st.items()}
                                                       for k, st in r32.optimizer.state_dict()["state"].items()}})
    r64.optimizer.step(g)
    twin.step(g)
    for k in p32:
        np.testing.assert_array_equal(r64.params[k], p32[k])


# ----------------------------------------------------------------------------- analyze loader
def _load_via_cli(monkeypatch, tmp_path, argv):
    """The (cell, params) that ``python -m lwsim.analyze`` would analyse for ``argv`` (the analysis
    itself replaced by a stub)."""
    from lwsim.analyze import __main__ as cli
    seen = {}

    def stub(cell, params, x, y, **kw):
        seen.update(cell=cell, params=params)
        return types.SimpleNamespace(save=lambda out, dpi=80: [])
    monkeypatch.setattr(cli, "analyze", stub)
    cli.run(cli.parser().parse_args(argv + ["--out", str(tmp_path / "out")]))
    return seen["cell"], seen["params"]


def _data(tmp_path, D, n_out):
    path = tmp_path / "data.npz"
    rng = np.random.default_rng(0)
    np.savez(path, x=rng.standard_normal((6, 4, D)), y=rng.standard_normal((6, 4, n_out)))
    return str(path)


LWSIM_LAYOUT = [(n, o) for n, o in VARIANTS if n != "constgate" or o["s"] == 0.05]


def test_analyze_loader_keeps_every_option_lwsim_layout(monkeypatch, tmp_path):
    data = _data(tmp_path, 3, 2)
    for dtype in ("float64", "float32"):
        for name, opts in LWSIM_LAYOUT:
            cell = lwsim.make_cell(name, 3, 4, 2, dtype=dtype, **opts)
            p = cell.init_params(seed=2, scheme="normal", sigma_w=0.5)
            w = tmp_path / "w.npz"
            np.savez(w, **{k: v.astype(np.float64) for k, v in p.items()})   # the file's dtype is not the cell's
            argv = ["--cell", name, "--hidden", "4", "--weights", str(w), "--layout", "lwsim", "--data", data,
                    "--readout", opts["readout"], "--dtype", dtype]
            argv += ["--layernorm"] if opts["layernorm"] else []
            argv += ["--convention", opts["convention"]] if "convention" in opts else []
            argv += ["--s", str(cell.s)] if name == "constgate" else []
            got, q = _load_via_cli(monkeypatch, tmp_path, argv)
            assert _options(got) == _options(cell) and got.dtype == cell.dtype, (name, opts, dtype)
            assert q.keys() == p.keys()
            for k in p:
                assert q[k].dtype == cell.dtype
                np.testing.assert_array_equal(q[k], p[k])


def test_analyze_loader_keeps_constgate_s(monkeypatch, tmp_path):
    cell = lwsim.make_cell("constgate", 3, 4, 2, s=0.3)
    w = tmp_path / "w.npz"
    np.savez(w, **cell.init_params(seed=2, scheme="normal", sigma_w=0.5))
    argv = ["--cell", "constgate", "--hidden", "4", "--weights", str(w), "--layout", "lwsim",
            "--data", _data(tmp_path, 3, 2)]
    got, _ = _load_via_cli(monkeypatch, tmp_path, argv + ["--s", "0.3"])
    assert got.s == 0.3
    from lwsim.analyze.load import LoadError
    with pytest.raises(LoadError, match="needs --s"):       # never a silent default s
        _load_via_cli(monkeypatch, tmp_path, argv)


TORCH_LAYOUT = [(n, o) for n, o in VARIANTS if n in ("gru", "lstm") and not o["layernorm"]
                and o.get("convention", "torch") == "torch"]


def test_analyze_loader_keeps_every_option_torch_layout(monkeypatch, tmp_path):
    data = _data(tmp_path, 3, 2)
    assert len(TORCH_LAYOUT) == 8
    for name, opts in TORCH_LAYOUT:
        cell = lwsim.make_cell(name, 3, 4, 2, **opts)
        p = cell.init_params(seed=2, scheme="normal", sigma_w=0.5)
        w = tmp_path / "t.npz"
        np.savez(w, **cell.params_to_torch(p))
        got, q = _load_via_cli(monkeypatch, tmp_path, ["--cell", name, "--hidden", "4", "--weights", str(w),
                                                       "--layout", "torch", "--data", data,
                                                       "--readout", opts["readout"]])
        assert _options(got) == _options(cell), (name, opts)
        for k in p:
            np.testing.assert_allclose(q[k], p[k], rtol=0, atol=0)
