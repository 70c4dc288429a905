"""lwsim/analyze/__main__.py (the ``python -m lwsim.analyze`` CLI) pinned piece by piece, with the
analysis itself stubbed (issue 32: the mutants of the CLI glue, each killed in milliseconds).

Every expected value below is written out by hand from the CLI's documented behaviour
(docs/analyze.md): option names and defaults, the messages, what reaches ``analyze``.
"""
from __future__ import annotations

import types
import warnings

import argparse

import pytest

import lwsim
from lwsim.analyze import __main__ as cli
from lwsim.analyze.load import LoadError

REQUIRED = ["--cell", "gru", "--hidden", "4", "--weights", "w.safetensors", "--data", "d.npz", "--out", "o"]


def parse(*extra):
    return cli.parser().parse_args([*REQUIRED, *extra])


# --- list options -----------------------------------------------------------------------------
def test_int_list_and_ints():
    assert cli._int_list("1, 2,3") == [1, 2, 3]          # spaces dropped
    assert cli._int_list("1,,2,") == [1, 2]               # empty items skipped
    assert cli._int_list("7") == [7]
    assert cli._int_list("1 000,10 000") == [1000, 10000]  # spaces inside a number are dropped too
    with pytest.raises(ValueError) as e:
        cli._int_list(" , ")
    assert e.value.args == (" , ",)                       # the text given
    assert cli._ints("5") == 5 and type(cli._ints("5")) is int       # one value: a number, not a list
    assert cli._ints("2,3") == [2, 3]


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
    helps = {a.dest: a.help for a in p._actions}
    assert helps["hidden"] == "hidden size H"
    assert helps["weights"] == ".safetensors or .npz (never .pt)"
    assert helps["layout"] == "key names: nn.GRU/nn.LSTM + readout.* (torch) or lwsim's parameter names"
    assert helps["data"] == ".npz with x (T, B, D) and y (T, B, n_out)"
    assert helps["batch_first"] == "x, y are (B, T, ·) as in PyTorch"
    assert helps["out"] == "output folder (report.md, report.json, PNGs)"
    assert helps["optimizer_state"] == "optimizer buffers, .safetensors or .npz"
    assert helps["opt_eps"] == "the optimizer's eps (not the detection ε)"
    assert helps["rms_alpha"] == "RMSprop's alpha"
    assert helps["layernorm"] == "lwsim layout only"
    assert helps["convention"] == "gru, lwsim layout (default cho)"
    assert helps["s"] == "constgate: the constant gate s the model was trained with (required)"
    assert helps["lags"] == "L (1 … L) or a comma list; default up to T/2"
    assert helps["n_grid"] == "budgets N: one or a comma list; default up to B"
    assert helps["K"] == "random directions of the matched statistic"
    assert helps["eps"] == "detection threshold ε"
    assert helps["statistic"] == "matched-statistic variant (when this lwsim has it)"
    assert helps["conventions"] == "lwsim or author (docs/fidelity.md), when this lwsim has it"
    assert helps["noise"] == ("detection null of the report (docs/statistics.md §3.3); lag and full are always "
                              "reported")
    assert helps["exact"] == "exact envelope (default: only for small models)"
    assert helps["dpi"] == "resolution of the PNGs (default: 120, 600×408 px)"
    assert helps["no_progress"] == "no progress bars (the console lines stay)"
    titles = [g.title for g in p._action_groups]
    assert titles[-3:] == ["optimizer (rates λ)", "model options", "analysis"]


# --- checks before the analysis ------------------------------------------------------------------
def test_positive():
    ns = types.SimpleNamespace(hidden=4, K=1, dpi=120)
    assert cli._positive(ns, ("hidden", "K", "dpi")) is None          # 1 is allowed
    ns.K, ns.dpi = 0, -3
    assert cli._positive(ns, ("hidden", "K", "dpi")) == "--K must be >= 1, got 0"     # the first bad one
    assert cli._positive(ns, ("dpi", "K")) == "--dpi must be >= 1, got -3"


def opts_of(*extra, cell="gru"):
    argv = [*REQUIRED, *extra]
    argv[1] = cell
    return cli._cell_options(cli.parser().parse_args(argv))


def test_cell_options_torch_layout():
    assert opts_of() == {"readout": "every", "dtype": "float64", "convention": "torch"}     # nn.GRU
    assert opts_of(cell="lstm") == {"readout": "every", "dtype": "float64"}
    assert opts_of("--readout", "last", "--dtype", "float32", cell="lstm") == {"readout": "last", "dtype": "float32"}
    with pytest.raises(LoadError, match=r"^--layernorm: nn\.GRU/nn\.LSTM have no LayerNorm \(layout torch\)$"):
        opts_of("--layernorm", cell="lstm")
    with pytest.raises(LoadError) as e:
        opts_of("--convention", "cho")
    assert str(e.value) == ("--convention cho: layout torch is nn.GRU, whose convention is 'torch'; "
                            "use --layout lwsim for a cho-convention GRU")
    assert opts_of("--convention", "torch") == {"readout": "every", "dtype": "float64", "convention": "torch"}


def test_cell_options_lwsim_layout():
    assert opts_of("--layout", "lwsim") == {"readout": "every", "dtype": "float64", "layernorm": False}
    assert opts_of("--layout", "lwsim", "--convention", "cho", "--layernorm") == {
        "readout": "every", "dtype": "float64", "layernorm": True, "convention": "cho"}
    assert opts_of("--layout", "lwsim", "--convention", "torch")["convention"] == "torch"
    assert opts_of("--layout", "lwsim", cell="rnn") == {"readout": "every", "dtype": "float64", "layernorm": False}


def test_cell_options_constgate_s():
    assert opts_of("--s", "0.25", cell="constgate") == {"readout": "every", "dtype": "float64", "s": 0.25}
    with pytest.raises(LoadError) as e:
        opts_of(cell="constgate")
    assert str(e.value) == ("--cell constgate needs --s, the constant gate the model was trained with "
                            "(the weights do not store it)")
    with pytest.raises(LoadError) as e:
        opts_of("--s", "0.5", cell="lstm")
    assert str(e.value) == "--s applies to --cell constgate only, got --cell lstm"
    with pytest.raises(LoadError) as e:
        opts_of("--layout", "lwsim", "--convention", "cho", cell="lstm")
    assert str(e.value) == "--convention applies to --cell gru only, got --cell lstm"


def test_hyper_names():
    a = parse("--lr", "0.1", "--betas", "0.5,0.6", "--opt-eps", "1e-5", "--momentum", "0.7",
              "--rms-alpha", "0.8", "--centered", "--amsgrad")
    assert cli._hyper(a) == {"lr": 0.1, "betas": (0.5, 0.6), "eps": 1e-5, "momentum": 0.7, "alpha": 0.8,
                             "centered": True, "amsgrad": True}
    assert cli._hyper(parse()) == {}                                # unset options are left out
    assert cli._hyper(parse("--lr", "0")) == {"lr": 0.0}            # 0 is set, not missing


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


def test_more_nulls_reach_analyze(stubs):
    """--nulls adds the named nulls to lag and full (lag alone for the instantaneous statistic)."""
    cli.run(parse("--nulls", "author, f32"))
    assert stubs["analyze"][4]["nulls"] == ("lag", "full", "author", "f32")
    cli.run(parse("--nulls", "floors", "--statistic", "instantaneous"))
    assert stubs["analyze"][4]["nulls"] == ("lag", "floors")
    assert cli._name_list("snr,,ecf") == ["snr", "ecf"]
    for bad in ("loose", " , "):
        with pytest.raises(argparse.ArgumentTypeError, match="give null names from lag, full, snr"):
            cli._name_list(bad)
