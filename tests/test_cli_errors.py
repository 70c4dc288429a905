"""Checks across the project (cross-cutting; docs/testing.md).

The command lines answer a user's mistake with one line on stderr and exit status 2, before any
run or analysis starts (docs/troubleshooting.md)."""


import numpy as np
import pytest

import lwsim
from lwsim import _cli
from lwsim.analyze import __main__ as analyze_cli
from lwsim.figures import __main__ as figures_cli, drawing as figures_mod


theory_cli = pytest.importorskip("theory.__main__")


safetensors_numpy = pytest.importorskip("safetensors.numpy")


def _run(main, argv, capsys):
    """(exit status, stderr lines) of an in-process CLI call, SystemExit included."""
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    return rc, err


def _assert_one_line(rc, err, pattern):
    import re
    assert rc == 2, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert re.search(pattern, err[0]), err[0]


@pytest.fixture
def no_figures(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("runs started before the arguments were checked")
    monkeypatch.setattr(figures_mod, "make_figures", boom)


@pytest.fixture
def no_cupy(monkeypatch):
    import builtins
    real = builtins.__import__

    def imp(name, *a, **k):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", imp)


# ------------------------------------------------------------------ lwsim.analyze
@pytest.fixture
def model_files(tmp_path):
    cell = lwsim.make_cell("lstm", 3, 4, 2)
    safetensors_numpy.save_file(cell.params_to_torch(cell.init_params(0, "torch")), str(tmp_path / "w.safetensors"))
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", x=rng.standard_normal((10, 24, 3)), y=rng.standard_normal((10, 24, 2)))
    return tmp_path, ["--cell", "lstm", "--hidden", "4", "--weights", str(tmp_path / "w.safetensors"),
                      "--data", str(tmp_path / "d.npz"), "--no-progress", "--backend", "numpy"]


@pytest.fixture
def no_analysis(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the analysis started before the arguments were checked")
    monkeypatch.setattr(analyze_cli, "analyze", boom)
    monkeypatch.setattr(analyze_cli, "infer_model", boom)


# ------------------------------------------------------------------ python -m theory
@pytest.fixture
def fast_page(monkeypatch):
    from theory import derivations
    monkeypatch.setattr(derivations, "markdown", lambda items=None: "# page\n")


# ------------------------------------------------------------------ lwsim.figures
def test_figures_out_is_a_file(tmp_path, capsys, no_figures):
    (tmp_path / "f").write_text("x")
    rc, err = _run(figures_cli.main, ["--preset", "smoke", "--out", str(tmp_path / "f"),
                                      "--cache", str(tmp_path / "c")], capsys)
    _assert_one_line(rc, err, r"^lwsim\.figures: error: --out .*f: is an existing file, not a folder")


def test_figures_out_not_writable(tmp_path, capsys, no_figures, monkeypatch):
    # the suite may run as root, for whom every folder is writable: the check asks os.access
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setattr(_cli.os, "access", lambda p, mode: str(p) != str(ro))
    rc, err = _run(figures_cli.main, ["--preset", "smoke", "--out", str(ro / "figs"),
                                      "--cache", str(tmp_path / "c")], capsys)
    _assert_one_line(rc, err, r"--out .*figs: folder is not writable \(.*ro is read-only for you\)")


def test_figures_cache_is_a_file(tmp_path, capsys, no_figures):
    (tmp_path / "runs").write_text("x")
    for extra in ([], ["--dry-run"]):
        rc, err = _run(figures_cli.main, ["--preset", "smoke", "--out", str(tmp_path / "o"),
                                          "--cache", str(tmp_path / "runs"), *extra], capsys)
        _assert_one_line(rc, err, r"^lwsim\.figures: error: --cache .*runs: is an existing file, not a folder")


def test_figures_out_under_a_file(tmp_path, capsys, no_figures):
    (tmp_path / "f").write_text("x")
    rc, err = _run(figures_cli.main, ["--preset", "smoke", "--out", str(tmp_path / "f" / "sub"),
                                      "--cache", str(tmp_path / "c")], capsys)
    _assert_one_line(rc, err, r"--out .*sub: cannot create it, .*f is a file")


def test_figures_backend_cupy_without_cupy(tmp_path, capsys, no_figures, no_cupy):
    rc, err = _run(figures_cli.main, ["--preset", "smoke", "--backend", "cupy", "--out", str(tmp_path / "o"),
                                      "--cache", str(tmp_path / "c")], capsys)
    _assert_one_line(rc, err, r"--backend cupy needs CuPy, which is not installed: pip install 'lwsim\[gpu\]'")


def test_analyze_out_is_a_file(model_files, capsys, no_analysis):
    d, argv = model_files
    (d / "r").write_text("x")
    rc, err = _run(analyze_cli.main, [*argv, "--out", str(d / "r")], capsys)
    _assert_one_line(rc, err, r"^lwsim\.analyze: error: --out .*r: is an existing file, not a folder")


def test_analyze_out_not_writable(model_files, capsys, no_analysis, monkeypatch):
    d, argv = model_files
    monkeypatch.setattr(_cli.os, "access", lambda p, mode: str(p) != str(d))
    rc, err = _run(analyze_cli.main, [*argv, "--out", str(d / "report")], capsys)
    _assert_one_line(rc, err, r"--out .*report: folder is not writable")


def test_analyze_backend_cupy_without_cupy(model_files, capsys, no_analysis, no_cupy):
    d, argv = model_files
    rc, err = _run(analyze_cli.main, [*argv, "--out", str(d / "r"), "--backend", "cupy"], capsys)
    _assert_one_line(rc, err, r"--backend cupy needs CuPy, which is not installed: pip install 'lwsim\[gpu\]'")


def test_analyze_single_n_grid_is_a_list():
    args = analyze_cli.parser().parse_args(["--cell", "gru", "--hidden", "4", "--weights", "w.safetensors",
                                            "--data", "d.npz", "--out", "r", "--n-grid", "100", "--lags", "8"])
    assert args.n_grid == [100]                   # one budget, not "1-dimensional" trouble
    assert args.lags == 8                          # one lag L still means 1 … L


@pytest.mark.parametrize("extra, pattern", [
    (["--dpi", "0"], r"--dpi must be >= 1, got 0"),
    (["--hidden", "0"], r"--hidden must be >= 1, got 0"),
    (["--K", "0"], r"--K must be >= 1, got 0"),
    (["--layout", "Torch"], r"argument --layout: invalid choice: 'Torch' \(choose from 'torch', 'lwsim'\)"),
    (["--n-grid", ","], r"argument --n-grid: invalid _int_list value"),
])
def test_analyze_bad_option_before_the_analysis(model_files, capsys, no_analysis, extra, pattern):
    d, argv = model_files
    rc, err = _run(analyze_cli.main, [*argv, "--out", str(d / "r"), *extra], capsys)
    _assert_one_line(rc, err, pattern)


@pytest.mark.parametrize("extra, pattern", [
    (["--convention", "torch"], r"--convention applies to --cell gru only, got --cell lstm"),
    (["--weights", "model.pt"], r"model\.pt: PyTorch/pickle files \(\.pt\) are refused"),
    (["--eps", "0"], r"eps must be > 0"),
    (["--n-grid", "0"], r"n_grid must be > 0 everywhere"),
    (["--statistic", "sequences"], r"statistic must be 'sequence' or 'instantaneous'"),
    (["--conventions", "Author"], r"conventions must be one of \('lwsim', 'author'\)"),
    (["--optimizer", "adam", "--lr", "0.1"], r"optimizer 'adam' is adaptive"),
])
def test_analyze_bad_input_one_line(model_files, capsys, monkeypatch, extra, pattern):
    d, argv = model_files
    from lwsim import diagnostics

    def boom(*a, **k):
        raise AssertionError("a pass over the data started before the input was checked")
    monkeypatch.setattr(diagnostics, "envelope_and_matched", boom)
    monkeypatch.chdir(d)
    rc, err = _run(analyze_cli.main, [*argv, "--out", str(d / "r"), *extra], capsys)
    _assert_one_line(rc, err, r"^lwsim\.analyze: error: .*" + pattern)


def test_theory_outside_the_repository_prints(tmp_path, monkeypatch, capsys, fast_page):
    from theory import derivations
    written = []
    # a regression must not overwrite the real page: record any write instead of doing it
    monkeypatch.setattr(derivations, "write", lambda path=None: written.append(path))
    monkeypatch.chdir(tmp_path)                   # no docs/ here
    assert theory_cli.main([]) == 0
    out = capsys.readouterr()
    assert out.out == "# page\n"
    assert "no docs/ folder here" in out.err and "--out FILE" in out.err
    assert written == [] and list(tmp_path.iterdir()) == []


def test_theory_writes_where_told(tmp_path, monkeypatch, capsys, fast_page):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    assert theory_cli.main([]) == 0                              # ./docs exists: written there
    assert (tmp_path / "docs" / "derivations.md").read_text() == "# page\n"
    (tmp_path / "out").mkdir()
    assert theory_cli.main(["--out", "out"]) == 0                # a folder: derivations.md inside
    assert (tmp_path / "out" / "derivations.md").read_text() == "# page\n"
    assert theory_cli.main(["--out", "page.md"]) == 0            # a file name
    assert (tmp_path / "page.md").read_text() == "# page\n"
    capsys.readouterr()
    assert theory_cli.main(["--out", "-"]) == 0
    assert capsys.readouterr().out == "# page\n"


@pytest.mark.parametrize("argv, pattern", [
    (["--out", "nowhere/x.md"], r"^theory: error: --out nowhere/x\.md: folder .*nowhere does not exist"),
    (["--n", "0"], r"^theory: error: --n must be >= 1, got 0"),
    (["--section", "cell"], r"argument --section: invalid choice: 'cell'"),
])
def test_theory_bad_input(tmp_path, monkeypatch, capsys, fast_page, argv, pattern):
    monkeypatch.chdir(tmp_path)
    rc, err = _run(theory_cli.main, argv, capsys)
    _assert_one_line(rc, err, pattern)
    assert list(tmp_path.iterdir()) == []


def test_one_error_prefix_and_help_texts(capsys):
    """One prefix, `<module>: error:`, for argparse's errors and the programs' own; --help shows the
    defaults, every option has a help text, no reST double backticks (issue 33 items 5, 6)."""
    # private: the shared prefix helper itself, compared with every CLI's output below
    from lwsim._cli import error_prefix
    from lwsim.analyze.__main__ import parser as analyze_parser
    from lwsim.figures.__main__ import parse_args
    import theory.__main__ as theory_main
    assert error_prefix("python -m lwsim.figures") == "lwsim.figures: error:"
    with pytest.raises(SystemExit) as ex:
        parse_args(["--preset", "nope"])
    assert ex.value.code == 2
    assert capsys.readouterr().err.startswith("lwsim.figures: error: argument --preset: invalid choice")
    with pytest.raises(SystemExit):
        theory_main.main(["--n", "x"])
    assert capsys.readouterr().err.startswith("theory: error: argument --n")
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split()).split(" options: ", 1)[1]
    for flag, default in (("--out OUT", "figures"), ("--cache CACHE", "runs"), ("--backend", "numba")):
        assert f"(default: {default})" in text.split(flag, 1)[1].split(" --", 1)[0], flag
    assert "(default: quick)" in text.split("--preset", 1)[1].split(" --", 1)[0]
    assert "--no-progress no progress bars" in text
    with pytest.raises(SystemExit):
        theory_main.main(["--help"])
    ttext = " ".join(capsys.readouterr().out.split()).split(" options: ", 1)[1]
    for flag in ("--n N factors", "--H H hidden size", "--D D input size", "--layernorm show"):
        assert flag in ttext, flag
    with pytest.raises(SystemExit):
        analyze_parser().parse_args(["--help"])
    atext = capsys.readouterr().out
    for t in (text, ttext, atext):
        assert "``" not in t
