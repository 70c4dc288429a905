"""Tests of lwsim/analyze/__main__.py (laid out like the code: docs/testing.md).

lwsim/analyze/__main__.py (the ``python -m lwsim.analyze`` CLI) pinned piece by piece, with the
analysis itself stubbed (issue 32: the mutants of the CLI glue, each killed in milliseconds).

Every expected value below is written out by hand from the CLI's documented behaviour
(docs/analyze.md): option names and defaults, the messages, what reaches ``analyze``.

lwsim.analyze: the CLI on a saved model gives the figures pipeline's numbers (docs/analyze.md).

lwsim.analyze: every bad input gets a clear error naming the file, the key and the shape."""


from __future__ import annotations

import json
import types
import warnings

import numpy as np
import pytest

import lwsim
from lwsim.analyze import __main__ as cli
from lwsim.analyze.__main__ import main
from lwsim.analyze.load import LoadError
from lwsim.figures.studies import preset_sizes


REQUIRED = ["--cell", "gru", "--hidden", "4", "--weights", "w.safetensors", "--data", "d.npz", "--out", "o"]


def parse(*extra):
    return cli.parser().parse_args([*REQUIRED, *extra])


def opts_of(stubs, *extra, cell="gru"):
    """The options run hands make_cell (bias aside: the stub's infer_model says none)."""
    argv = [*REQUIRED, *extra]
    argv[1] = cell
    cli.run(cli.parser().parse_args(argv))
    kw = dict(stubs["make_cell"][4])
    assert kw.pop("bias") is False
    return kw


# --- run: what reaches the loaders and analyze, and what it prints --------------------------------
class _Rep:
    def __init__(self):
        self.detection = types.SimpleNamespace(h_n=[1.0, 3.0, 7.0], n_grid=[10.0, 30.0, 100.0])
        self.saved = None

    def save(self, out, dpi):
        self.saved = (out, dpi)
        return ["o/report.md", "o/report.json"]


@pytest.fixture
def stubs(monkeypatch):
    calls = {}

    def infer(weights, cell, hidden, layout, **kw):
        calls["infer"] = (weights, cell, hidden, layout, kw)
        return 3, 2, False

    def make_cell(name, D, H, n_out, **kw):
        calls["make_cell"] = (name, D, H, n_out, kw)
        return "CELL"

    def weights(path, cell, layout):
        calls["weights"] = (path, cell, layout)
        return {"W": 1}

    def data(path, D, n_out, batch_first):
        calls["data"] = (path, D, n_out, batch_first)
        import numpy as np
        return np.zeros((5, 6, 3)), np.zeros((5, 6, 2))

    def optimizer(path, cell, params, layout, name, hyper):
        calls["optimizer"] = (path, cell, params, layout, name, hyper)
        return "RATES"

    def analyze(cell, params, x, y, **kw):
        calls["analyze"] = (cell, params, x.shape, y.shape, kw)
        calls["rep"] = _Rep()
        return calls["rep"]

    monkeypatch.setattr(cli, "infer_model", infer)
    monkeypatch.setattr(cli.lwsim, "make_cell", make_cell)
    monkeypatch.setattr(cli, "load_weights", weights)
    monkeypatch.setattr(cli, "load_data", data)
    monkeypatch.setattr(cli, "load_optimizer", optimizer)
    monkeypatch.setattr(cli, "analyze", analyze)
    return calls


SMOKE = preset_sizes("smoke")


safetensors_numpy = pytest.importorskip("safetensors.numpy")


def _num(v):
    return np.array([np.inf if x == "inf" else np.nan if x == "nan" else x for x in v], dtype=float)


H, D, NOUT, T, B = 4, 3, 2, 12, 24


@pytest.fixture
def lstm():
    cell = lwsim.make_cell("lstm", D, H, NOUT)
    return cell, cell.init_params(seed=0, scheme="torch")


@pytest.fixture
def files(tmp_path, lstm):
    cell, params = lstm
    w = cell.params_to_torch(params)
    safetensors_numpy.save_file(w, str(tmp_path / "w.safetensors"))
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", x=rng.standard_normal((T, B, D)), y=rng.standard_normal((T, B, NOUT)))
    opt = {f"{k}.exp_avg_sq": np.full(a.shape, 0.01) for k, a in w.items()}
    opt["step"] = np.array([5])
    safetensors_numpy.save_file(opt, str(tmp_path / "o.safetensors"))
    return tmp_path, w, opt


# ----------------------------------------------------------------------------------------------
# parser: list options
# ----------------------------------------------------------------------------------------------


# --- list options -----------------------------------------------------------------------------
def test_int_list_and_ints(capsys):
    assert parse("--n-grid", "1, 2,3").n_grid == [1, 2, 3]          # spaces dropped
    assert parse("--n-grid", "1,,2,").n_grid == [1, 2]               # empty items skipped
    assert parse("--n-grid", "7").n_grid == [7]
    assert parse("--n-grid", "1 000,10 000").n_grid == [1000, 10000]  # spaces inside a number are dropped too
    with pytest.raises(SystemExit):
        parse("--n-grid", " , ")
    assert "argument --n-grid: invalid _int_list value: ' , '" in capsys.readouterr().err   # the text given
    assert parse("--lags", "5").lags == 5 and type(parse("--lags", "5").lags) is int   # one value: a number
    assert parse("--lags", "2,3").lags == [2, 3]


# --- the parser ---------------------------------------------------------------------------------
def test_parser_defaults():
    a = parse()
    want = dict(cell="gru", hidden=4, weights="w.safetensors", layout="torch", data="d.npz", batch_first=False,
                out="o", optimizer_state=None, optimizer=None, lr=None, betas=None, opt_eps=None, momentum=None,
                rms_alpha=None, centered=None, amsgrad=None, readout="every", layernorm=False, convention=None,
                dtype="float64", s=None, lags=None, n_grid=None, K=1, eps=20.0, statistic=None, conventions=None,
                noise="lag", nulls=None, seed=0, exact=None, backend="numba", dpi=120, no_progress=False)
    assert vars(a) == want
    assert type(a.eps) is float and type(a.K) is int and type(a.dpi) is int


def test_parser_values():
    a = parse("--layout", "lwsim", "--batch-first", "--optimizer-state", "s.npz", "--optimizer", "adam",
              "--lr", "0.01", "--betas", "0.8,0.95", "--opt-eps", "1e-6", "--momentum", "0.5",
              "--rms-alpha", "0.9", "--centered", "--amsgrad", "--readout", "last", "--layernorm",
              "--convention", "cho", "--dtype", "float32", "--s", "0.3", "--lags", "3,5", "--n-grid", "100",
              "--K", "2", "--eps", "4", "--statistic", "instantaneous", "--conventions", "author",
              "--noise", "full", "--seed", "9", "--exact", "--backend", "numpy", "--dpi", "30", "--no-progress")
    assert (a.layout, a.batch_first, a.optimizer_state, a.optimizer, a.lr) == ("lwsim", True, "s.npz", "adam", 0.01)
    assert a.betas == (0.8, 0.95) and (a.opt_eps, a.momentum, a.rms_alpha) == (1e-6, 0.5, 0.9)
    assert (a.centered, a.amsgrad, a.readout, a.layernorm, a.convention) == (True, True, "last", True, "cho")
    assert (a.dtype, a.s, a.lags, a.n_grid, a.K, a.eps) == ("float32", 0.3, [3, 5], [100], 2, 4.0)
    assert (a.statistic, a.conventions, a.noise, a.seed, a.exact) == ("instantaneous", "author", "full", 9, True)
    assert (a.backend, a.dpi, a.no_progress) == ("numpy", 30, True)
    assert parse("--lags", "12").lags == 12 and parse("--no-exact").exact is False


# ----------------------------------------------------------------------------------------------
# parser: the nulls
# ----------------------------------------------------------------------------------------------


def test_more_nulls_reach_analyze(stubs, capsys):
    """--nulls adds the named nulls to lag and full (lag alone for the instantaneous statistic)."""
    cli.run(parse("--nulls", "author, f32"))
    assert stubs["analyze"][4]["nulls"] == ("lag", "full", "author", "f32")
    cli.run(parse("--nulls", "floors", "--statistic", "instantaneous"))
    assert stubs["analyze"][4]["nulls"] == ("lag", "floors")
    assert parse("--nulls", "snr,,ecf").nulls == ["snr", "ecf"]
    for bad in ("loose", " , "):
        with pytest.raises(SystemExit):
            parse("--nulls", bad)
        assert f"argument --nulls: {bad!r}: give null names from lag, full, snr" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# parser
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["--cell", "--hidden", "--weights", "--data", "--out"])
def test_parser_required(missing):
    argv = list(REQUIRED)
    i = argv.index(missing)
    del argv[i:i + 2]
    with pytest.raises(SystemExit):
        cli.parser().parse_args(argv)


@pytest.mark.parametrize("opt,bad", [("--cell", "cnn"), ("--layout", "keras"), ("--optimizer", "lion"),
                                     ("--readout", "first"), ("--convention", "tf"), ("--dtype", "float16"),
                                     ("--noise", "white"), ("--backend", "jax")])
def test_parser_choices(opt, bad):
    with pytest.raises(SystemExit):
        parse(opt, bad)


def test_parser_choices_lists():
    acts = {a.dest: a for a in cli.parser()._actions}
    assert acts["cell"].choices == list(lwsim.CELL_NAMES)
    assert acts["backend"].choices == list(lwsim.BACKENDS)
    assert list(acts["optimizer"].choices) == ["sgd", "momentum", "adam", "adamw", "rmsprop"]
    assert acts["layout"].choices == ["torch", "lwsim"] and acts["readout"].choices == ["every", "last"]
    assert acts["convention"].choices == ["cho", "torch"] and acts["dtype"].choices == ["float64", "float32"]
    assert acts["noise"].choices == ["lag", "full", "snr", "ecf", "floors", "f32", "author"]


def test_parser_help_texts():
    """The help a user reads, option by option (and the program name and groups)."""
    p = cli.parser()
    assert p.prog == "python -m lwsim.analyze"
    # lwsim's ArgumentParser drops the docstring's ``code`` marks
    assert p.description == ("python -m lwsim.analyze: the learnability-window report of a trained model "
                             "(docs/analyze.md).")
    helps = " ".join(p.format_help().split())          # the help as printed, blanks collapsed
    for want in ("hidden size H", ".safetensors or .npz (never .pt)",
                 "key names: nn.GRU/nn.LSTM + readout.* (torch) or lwsim's parameter names",
                 ".npz with x (T, B, D) and y (T, B, n_out)", "x, y are (B, T, ·) as in PyTorch",
                 "output folder (report.md, report.json, PNGs)", "optimizer buffers, .safetensors or .npz",
                 "the optimizer's eps (not the detection ε)", "RMSprop's alpha", "lwsim layout only",
                 "gru, lwsim layout (default cho)",
                 "constgate: the constant gate s the model was trained with (required)",
                 "L (1 … L) or a comma list; default up to T/2", "budgets N: one or a comma list; default up to B",
                 "random directions of the matched statistic", "detection threshold ε",
                 "matched-statistic variant (when this lwsim has it)",
                 "lwsim or author (docs/fidelity.md), when this lwsim has it",
                 "detection null of the report (docs/statistics.md §3.3); lag and full are always reported",
                 "exact envelope (default: only for small models)",
                 "resolution of the PNGs (default: 120, 600×408 px)",
                 "no progress bars (the console lines stay)"):
        assert want in helps, want
    titles = [helps.index(t + ":") for t in ("optimizer (rates λ)", "model options", "analysis")]
    assert titles == sorted(titles) and titles[-1] > helps.index("--out OUT")


# ----------------------------------------------------------------------------------------------
# main: checks before the analysis
# ----------------------------------------------------------------------------------------------


# --- checks before the analysis ------------------------------------------------------------------
def test_positive(stubs, tmp_path, capsys):
    argv = [*REQUIRED[:-1], str(tmp_path / "o"), "--backend", "numpy"]
    assert cli.main([*argv, "--hidden", "1", "--K", "1", "--dpi", "1"]) == 0      # 1 is allowed
    capsys.readouterr()
    assert cli.main([*argv, "--K", "0", "--dpi", "-3"]) == 2                        # the first bad one
    assert capsys.readouterr().err == "lwsim.analyze: error: --K must be >= 1, got 0\n"
    assert cli.main([*argv, "--dpi", "-3"]) == 2
    assert capsys.readouterr().err == "lwsim.analyze: error: --dpi must be >= 1, got -3\n"
    assert cli.main([*argv, "--hidden", "0"]) == 2
    assert capsys.readouterr().err == "lwsim.analyze: error: --hidden must be >= 1, got 0\n"


def test_cell_options_torch_layout(stubs):
    assert opts_of(stubs) == {"readout": "every", "dtype": "float64", "convention": "torch"}     # nn.GRU
    assert opts_of(stubs, cell="lstm") == {"readout": "every", "dtype": "float64"}
    assert opts_of(stubs, "--readout", "last", "--dtype", "float32", cell="lstm") == {"readout": "last", "dtype": "float32"}
    with pytest.raises(LoadError, match=r"^--layernorm\b"):
        opts_of(stubs, "--layernorm", cell="lstm")
    with pytest.raises(LoadError) as e:
        opts_of(stubs, "--convention", "cho")
    assert str(e.value) == ("--convention cho: layout torch is nn.GRU, whose convention is 'torch'; "
                            "use --layout lwsim for a cho-convention GRU")
    assert opts_of(stubs, "--convention", "torch") == {"readout": "every", "dtype": "float64", "convention": "torch"}


def test_cell_options_lwsim_layout(stubs):
    assert opts_of(stubs, "--layout", "lwsim") == {"readout": "every", "dtype": "float64", "layernorm": False}
    assert opts_of(stubs, "--layout", "lwsim", "--convention", "cho", "--layernorm") == {
        "readout": "every", "dtype": "float64", "layernorm": True, "convention": "cho"}
    assert opts_of(stubs, "--layout", "lwsim", "--convention", "torch")["convention"] == "torch"
    assert opts_of(stubs, "--layout", "lwsim", cell="rnn") == {"readout": "every", "dtype": "float64", "layernorm": False}


def test_cell_options_constgate_s(stubs):
    assert opts_of(stubs, "--s", "0.25", cell="constgate") == {"readout": "every", "dtype": "float64", "s": 0.25}
    with pytest.raises(LoadError) as e:
        opts_of(stubs, cell="constgate")
    assert str(e.value) == ("--cell constgate needs --s, the constant gate the model was trained with "
                            "(the weights do not store it)")
    with pytest.raises(LoadError) as e:
        opts_of(stubs, "--s", "0.5", cell="lstm")
    assert str(e.value) == "--s applies to --cell constgate only, got --cell lstm"
    with pytest.raises(LoadError) as e:
        opts_of(stubs, "--layout", "lwsim", "--convention", "cho", cell="lstm")
    assert str(e.value) == "--convention applies to --cell gru only, got --cell lstm"


# ----------------------------------------------------------------------------------------------
# run: the optimizer's hyper-parameters
# ----------------------------------------------------------------------------------------------


def test_hyper_names(stubs):
    def hyper(*extra):
        cli.run(parse("--optimizer-state", "s.npz", *extra))
        return stubs["optimizer"][5]

    assert hyper("--lr", "0.1", "--betas", "0.5,0.6", "--opt-eps", "1e-5", "--momentum", "0.7",
                 "--rms-alpha", "0.8", "--centered", "--amsgrad") == {"lr": 0.1, "betas": (0.5, 0.6), "eps": 1e-5, "momentum": 0.7, "alpha": 0.8,
                             "centered": True, "amsgrad": True}
    assert hyper() == {}                                            # unset options are left out
    assert hyper("--lr", "0") == {"lr": 0.0}                        # 0 is set, not missing


# ----------------------------------------------------------------------------------------------
# run
# ----------------------------------------------------------------------------------------------


def test_run_wiring_without_optimizer(stubs, capsys):
    rep, paths = cli.run(parse("--layout", "lwsim", "--layernorm", "--convention", "cho", "--dpi", "40"))
    assert stubs["infer"] == ("w.safetensors", "gru", 4, "lwsim", {"layernorm": True, "convention": "cho"})
    assert stubs["make_cell"] == ("gru", 3, 4, 2, {"bias": False, "readout": "every", "dtype": "float64",
                                                   "layernorm": True, "convention": "cho"})
    assert stubs["weights"] == ("w.safetensors", "CELL", "lwsim")
    assert stubs["data"] == ("d.npz", 3, 2, False)
    assert "optimizer" not in stubs
    cell, params, xs, ys, kw = stubs["analyze"]
    assert (cell, params, xs, ys) == ("CELL", {"W": 1}, (5, 6, 3), (5, 6, 2))
    assert kw == dict(rates=None, lags=None, n_grid=None, K=1, statistic=None, conventions=None, eps=20.0,
                      seed=0, exact=None, backend="numba", progress=True,
                      sources={"weights": "w.safetensors", "layout": "lwsim", "data": "d.npz"}, noise="lag", nulls=None)
    assert rep is stubs["rep"] and paths == ["o/report.md", "o/report.json"] and rep.saved == ("o", 40)
    assert capsys.readouterr().out.splitlines() == [
        "read w.safetensors as layout lwsim: gru, D = 3, H = 4, n_out = 2, no bias",
        "read d.npz: T = 5 steps, B = 6 sequences, from time-major (T, B, ·) arrays "
        "(pass --batch-first if they are (B, T, ·))",
        "no optimizer given (--optimizer, --optimizer-state): assuming rates λ = 1 (unit SGD rate η = 1), "
        "so f(ℓ) is the gates' transport alone"]


def test_run_wiring_with_optimizer_state(stubs, capsys, monkeypatch):
    monkeypatch.setattr(cli, "infer_model", lambda *a, **k: (3, 2, True))
    cli.run(parse("--optimizer-state", "s.npz", "--optimizer", "adam", "--lr", "0.5", "--batch-first",
                  "--lags", "4", "--n-grid", "7,8", "--K", "3", "--eps", "2", "--seed", "5", "--no-exact",
                  "--backend", "numpy", "--no-progress", "--noise", "full", "--statistic", "sequence",
                  "--conventions", "author"))
    assert stubs["optimizer"] == ("s.npz", "CELL", {"W": 1}, "torch", "adam", {"lr": 0.5})
    assert stubs["data"] == ("d.npz", 3, 2, True)
    assert stubs["make_cell"][4]["bias"] is True
    kw = stubs["analyze"][4]
    assert kw == dict(rates="RATES", lags=4, n_grid=[7, 8], K=3, statistic="sequence", conventions="author",
                      eps=2.0, seed=5, exact=False, backend="numpy", progress=False,
                      sources={"weights": "w.safetensors", "layout": "torch", "data": "d.npz",
                               "optimizer state": "s.npz"}, noise="full", nulls=None)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "read w.safetensors as layout torch: gru, D = 3, H = 4, n_out = 2, with bias"
    assert out[1] == "read d.npz: T = 5 steps, B = 6 sequences, from batch-first (B, T, ·) arrays (--batch-first)"
    assert len(out) == 2                                      # no "assuming rates" line


def test_run_optimizer_name_only(stubs, capsys):
    cli.run(parse("--optimizer", "sgd", "--lr", "0.2", "--momentum", "0.9"))
    assert "optimizer" not in stubs                           # no state file: nothing loaded
    assert stubs["analyze"][4]["rates"] == ("sgd", {"lr": 0.2, "momentum": 0.9})
    assert "optimizer state" not in stubs["analyze"][4]["sources"]
    assert "assuming rates" not in capsys.readouterr().out


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


# --- main: the checks' order, the errors caught, the last line ------------------------------------
def test_main_success_line(stubs, capsys, tmp_path):
    argv = [*REQUIRED[:-1], str(tmp_path / "out")]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "Ĥ_N = 7 lags at N = 100; wrote o/report.md, o/report.json"


def test_main_problems_before_the_analysis(capsys, tmp_path, monkeypatch):
    def boom(args):
        raise AssertionError("the analysis started")
    monkeypatch.setattr(cli, "run", boom)
    f = tmp_path / "file"
    f.write_text("")
    assert cli.main([*REQUIRED[:-1], str(f)]) == 2
    assert capsys.readouterr().err.startswith(f"lwsim.analyze: error: --out {f}: is an existing file")
    good = [*REQUIRED[:-1], str(tmp_path / "o")]
    for opt in ("--hidden", "--K", "--dpi"):
        argv = list(good) + [opt, "0"]
        assert cli.main(argv) == 2
        assert capsys.readouterr().err == f"lwsim.analyze: error: {opt} must be >= 1, got 0\n"
    # --out is checked first, then the backend, then the sizes
    assert cli.main([*REQUIRED[:-1], str(f), "--hidden", "0"]) == 2
    assert "--out" in capsys.readouterr().err


def test_main_backend_problem_comes_before_the_sizes(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "backend_problem", lambda b: f"backend {b} is not here")
    monkeypatch.setattr(cli, "run", lambda args: pytest.fail("ran"))
    assert cli.main([*REQUIRED[:-1], str(tmp_path / "o"), "--backend", "cupy", "--K", "0"]) == 2
    assert capsys.readouterr().err == "lwsim.analyze: error: backend cupy is not here\n"


@pytest.mark.parametrize("exc", [LoadError("bad file"), ValueError("bad file"), TypeError("bad file"),
                                 OSError("bad file")])
def test_main_reports_errors_in_one_line(exc, capsys, tmp_path, monkeypatch):
    def fail(args):
        raise exc
    monkeypatch.setattr(cli, "run", fail)
    assert cli.main([*REQUIRED[:-1], str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == "lwsim.analyze: error: bad file\n"


def test_main_reports_key_errors_and_lets_others_through(capsys, tmp_path, monkeypatch):
    def key(args):
        raise KeyError("W_h")
    monkeypatch.setattr(cli, "run", key)
    assert cli.main([*REQUIRED[:-1], str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == "lwsim.analyze: error: 'W_h'\n"

    def other(args):
        raise RuntimeError("a bug")
    monkeypatch.setattr(cli, "run", other)
    with pytest.raises(RuntimeError):
        cli.main([*REQUIRED[:-1], str(tmp_path / "o")])


def test_main_shows_every_warning(tmp_path, monkeypatch, capsys):
    """The same UserWarning twice from one line reaches the user twice ("always"), other warnings
    keep the caller's filters, and the filters are restored afterwards."""
    def warn_twice(args):
        for _ in range(2):
            warnings.warn("heads up", UserWarning)
            warnings.warn("old api", DeprecationWarning)    # not a UserWarning: the caller's "ignore" holds
        return _Rep(), []
    monkeypatch.setattr(cli, "run", warn_twice)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("ignore")
        assert cli.main([*REQUIRED[:-1], str(tmp_path / "o")]) == 0
        assert [str(w.message) for w in seen] == ["heads up", "heads up"]
        warnings.warn("after", UserWarning)                   # main's filter is gone again
        assert len(seen) == 2


def test_main_uses_the_agg_backend(tmp_path, monkeypatch):
    used = []
    import matplotlib
    monkeypatch.setattr(matplotlib, "use", lambda name: used.append(name))
    monkeypatch.setattr(cli, "run", lambda args: (_Rep(), []))
    assert cli.main([*REQUIRED[:-1], str(tmp_path / "o")]) == 0
    assert used == ["Agg"]


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


def test_cli_reports_error_and_warning(files, tmp_path, capsys):
    d, _, _ = files
    rc = main(["--cell", "lstm", "--hidden", "8", "--weights", str(d / "w.safetensors"),
               "--data", str(d / "d.npz"), "--out", str(tmp_path / "r"), "--no-progress"])
    assert rc == 2
    assert "w.safetensors: key 'weight_ih_l0' has shape (16, 3)" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="only 24 diagnostic sequences"):
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "w.safetensors"),
                   "--optimizer-state", str(d / "o.safetensors"), "--optimizer", "adam", "--lr", "1e-3",
                   "--data", str(d / "d.npz"), "--out", str(tmp_path / "r"), "--no-progress",
                   "--backend", "numpy", "--lags", "4"])
    assert rc == 0
    assert "**no**" in (tmp_path / "r" / "report.md").read_text()


def test_cli_console_says_what_it_assumed(files, tmp_path, capsys):
    """Layout, T and B read, λ = 1 without an optimizer, an extrapolated budget, the batch-first
    hint of the small-B warning: all on the console (issue 33 item 4)."""
    d, _, _ = files
    with pytest.warns(UserWarning) as rec:
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "w.safetensors"),
                   "--data", str(d / "d.npz"), "--out", str(tmp_path / "r"), "--no-progress",
                   "--backend", "numpy", "--lags", "4", "--n-grid", "10,100000"])
    assert rc == 0
    out = capsys.readouterr().out
    assert f"as layout torch: lstm, D = {D}, H = {H}, n_out = {NOUT}, with bias" in out
    assert f"d.npz: T = {T} steps, B = {B} sequences, from time-major (T, B, ·) arrays " \
           "(pass --batch-first if they are (B, T, ·))" in out
    assert "no optimizer given (--optimizer, --optimizer-state): assuming rates λ = 1" in out
    texts = [str(w.message) for w in rec]
    assert any(f"T = {T} steps and B = {B} sequences: if the arrays are batch-first (B, T, ·), "
               "pass --batch-first" in t for t in texts)
    assert any(f"budgets up to N = 100000 exceed the {B} available sequences; Ĥ_N at those N is "
               "extrapolated" in t for t in texts)
    report = (tmp_path / "r" / "report.md").read_text()
    assert "extrapolated" in report
    # within the sequences, with an optimizer and batch-first data: no such lines
    np.savez(d / "bf.npz", **{k: np.load(d / "d.npz")[k].transpose(1, 0, 2) for k in ("x", "y")})
    with pytest.warns(UserWarning) as rec:
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "w.safetensors"),
                   "--data", str(d / "bf.npz"), "--batch-first", "--optimizer", "sgd", "--lr", "0.1",
                   "--out", str(tmp_path / "r2"), "--no-progress", "--backend", "numpy", "--lags", "4",
                   "--n-grid", "10,24"])
    assert rc == 0
    out = capsys.readouterr().out
    assert f"T = {T} steps, B = {B} sequences, from batch-first (B, T, ·) arrays (--batch-first)" in out
    assert "no optimizer given" not in out
    assert not any("extrapolated" in str(w.message) for w in rec)
