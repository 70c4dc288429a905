"""Tests of lwsim/stats/make_mcculloch_table.py (laid out like the code: docs/testing.md).

lwsim/stats/make_mcculloch_table.py's build() on a coarse grid with stub quantile functions
(issue 32, docs/testing.md): the grid, the near-one replacement, the checks and the file's keys."""


from __future__ import annotations

import numpy as np
import pytest

from lwsim.stats import make_mcculloch_table as mk


def _stub_quantiles(alpha, probs=(0.75, 0.95)):
    return np.array([1.0, 4.0 - alpha])          # ratio q95/q75 = 4 − α: strictly decreasing


@pytest.fixture
def stubs(monkeypatch):
    monkeypatch.setattr(mk, "_check_parametrisation", lambda: None)
    monkeypatch.setattr(mk, "sas_quantiles", _stub_quantiles)
    seen = []
    monkeypatch.setattr(mk, "gil_pelaez_quantiles", lambda a, probs=(0.75, 0.95): seen.append(a) or _stub_quantiles(a))
    return seen


# ----------------------------------------------------------------------------------------------
# sas_quantiles
# ----------------------------------------------------------------------------------------------


# ---- the quantile functions (scipy, and the independent Gil-Pelaez integral) -----------------------
def test_sas_quantiles_closed_forms_and_symmetry():
    from scipy.stats import cauchy, norm
    # α = 2: φ = exp(−t²) is N(0, 2); α = 1: exp(−|t|) is Cauchy(0, 1)
    np.testing.assert_allclose(mk.sas_quantiles(2.0), norm.ppf([0.75, 0.95]) * np.sqrt(2.0), rtol=1e-9)
    np.testing.assert_allclose(mk.sas_quantiles(1.0, (0.75, 0.95)), [1.0, np.tan(0.45 * np.pi)], rtol=1e-9)
    q = mk.sas_quantiles(1.0, (0.25, 0.5, 0.99))
    assert q.dtype == np.float64 and q.shape == (3,)
    np.testing.assert_allclose(q, cauchy.ppf([0.25, 0.5, 0.99]), rtol=1e-9, atol=1e-12)
    # β = 0, location 0: symmetric about 0 at every α
    lo, hi = mk.sas_quantiles(1.5, (0.1, 0.9))
    assert lo == pytest.approx(-hi, rel=1e-9)


def test_sas_quantiles_refuses_another_parameterization(monkeypatch):
    from scipy.stats import levy_stable
    monkeypatch.setattr(levy_stable, "parameterization", "S0")
    with pytest.raises(RuntimeError, match=r"\bparameterization S0\b"):
        mk.sas_quantiles(1.5)


# ----------------------------------------------------------------------------------------------
# gil_pelaez_cdf
# ----------------------------------------------------------------------------------------------


def test_gil_pelaez_cdf_closed_forms():
    from scipy.stats import levy_stable, norm
    # α = 2: N(0, 2), F(x) = Φ(x/√2); α = 1: Cauchy, F(x) = 1/2 + arctan(x)/π
    for x in (0.3, 1.0, 2.5):
        assert mk.gil_pelaez_cdf(x, 2.0) == pytest.approx(norm.cdf(x / np.sqrt(2.0)), abs=1e-12)
    for x in (0.5, 3.0, 20.0):
        assert mk.gil_pelaez_cdf(x, 1.0) == pytest.approx(0.5 + np.arctan(x) / np.pi, abs=1e-11)
    # heavy tails, where e^{−t^α} decays slowly (t_max = 42^{1/α} = 1764 at α = 0.5): scipy's cdf
    # agrees to 1e−15 there; a range cut at 42/α or 42^α would leave 1e−7 … 1e−3 out
    assert mk.gil_pelaez_cdf(1.0, 0.5) == pytest.approx(levy_stable.cdf(1.0, 0.5, 0.0), abs=1e-12)
    assert mk.gil_pelaez_cdf(0.2, 0.7) == pytest.approx(levy_stable.cdf(0.2, 0.7, 0.0), abs=1e-12)
    # α = 1.5 against scipy's quantile (the module's own spot check, at rtol 1e−9 on the quantile)
    q75 = mk.sas_quantiles(1.5, (0.75,))[0]
    assert mk.gil_pelaez_cdf(q75, 1.5) == pytest.approx(0.75, abs=1e-9)


# ----------------------------------------------------------------------------------------------
# gil_pelaez_quantiles
# ----------------------------------------------------------------------------------------------


def test_gil_pelaez_quantiles_roots_of_the_cdf(monkeypatch):
    # the Cauchy cdf in closed form stands in for the integral: its quantiles are tan(π(p − 1/2))
    seen = []
    monkeypatch.setattr(mk, "gil_pelaez_cdf", lambda x, a: seen.append(a) or 0.5 + np.arctan(x) / np.pi)
    q = mk.gil_pelaez_quantiles(1.25)
    np.testing.assert_allclose(q, [1.0, np.tan(0.45 * np.pi)], rtol=1e-13)
    assert q.shape == (2,) and set(seen) == {1.25}
    # a root near the bracket's low end, 1e−3: tan(π·1e−4) ≈ 3.1416e−4 is below it, tan(π·1e−3) inside
    np.testing.assert_allclose(mk.gil_pelaez_quantiles(1.0, (0.501,)), [np.tan(0.001 * np.pi)], rtol=1e-10)
    with pytest.raises(ValueError):
        mk.gil_pelaez_quantiles(1.0, (0.5001,))


# ----------------------------------------------------------------------------------------------
# _check_parametrisation
# ----------------------------------------------------------------------------------------------


def test_check_parametrisation_against_the_closed_forms(monkeypatch):
    from scipy.stats import cauchy, norm
    # private: main() runs this check and then rebuilds the whole table (minutes), no cheap public path
    mk._check_parametrisation()                                   # scipy itself passes
    want = {2.0: norm.ppf([0.75, 0.95]) * np.sqrt(2.0), 1.0: cauchy.ppf([0.75, 0.95])}
    for off2, off1, ok in ((0.0, 1e-10, True), (1e-10, 0.0, True), (0.0, 1e-8, False), (1e-8, 0.0, False)):
        fake = {2.0: want[2.0] * (1 + off2), 1.0: want[1.0] * (1 + off1)}
        monkeypatch.setattr(mk, "sas_quantiles", lambda a, fake=fake: fake[a])
        if ok:
            mk._check_parametrisation()
        else:
            with pytest.raises(RuntimeError) as e:
                mk._check_parametrisation()
            assert str(e.value) == (f"levy_stable scale mismatch: {fake[2.0]} vs {want[2.0]}, "
                                    f"{fake[1.0]} vs {want[1.0]}")


# ----------------------------------------------------------------------------------------------
# build
# ----------------------------------------------------------------------------------------------


def test_build_on_a_grid_without_points_near_one(stubs, tmp_path):
    # step 0.5: α = 0.5, 1, 1.5, 2 — none within 0.0055 of 1 except 1 itself (not replaced)
    path = mk.build(tmp_path / "sub" / "t.npz", step=0.5)
    assert path == tmp_path / "sub" / "t.npz" and path.exists()
    with np.load(path) as d:
        np.testing.assert_allclose(d["alpha"], [0.5, 1.0, 1.5, 2.0])
        np.testing.assert_allclose(d["ratio"], [3.5, 3.0, 2.5, 2.0])
        np.testing.assert_allclose(d["iqr"], [2.0] * 4)
        assert str(d["parameterization"]) == "S1, beta=0"
    assert stubs == [0.8, 1.3, 1.7]                # only the spot checks away from α = 1


def test_build_replaces_the_points_near_one(stubs, tmp_path):
    # step 0.005: 0.995 and 1.005 lie within 0.0055 of 1 and are recomputed by Gil-Pelaez
    mk.build(tmp_path / "t.npz", step=0.005)
    assert stubs[:2] == [pytest.approx(0.995), pytest.approx(1.005)] and stubs[2:] == [0.8, 1.3, 1.7]


# ---- the table's file, constants and command line ---------------------------------------------------
def test_default_path_is_the_table_the_estimator_reads_and_the_grid_constants_match_it():
    from lwsim.stats import mcculloch
    assert mk.DEFAULT_PATH == mcculloch.TABLE_PATH and mk.DEFAULT_PATH.is_file()
    assert (mk.ALPHA_MIN, mk.ALPHA_MAX, mk.ALPHA_STEP) == (0.5, 2.0, 0.001)
    with np.load(mk.DEFAULT_PATH) as d:
        # (2 − 0.5)/0.001 + 1 = 1501 points, 0.5, 0.501, …, 2.0
        assert d["alpha"].size == 1501 and d["alpha"][0] == 0.5 and d["alpha"][-1] == 2.0
        np.testing.assert_allclose(np.diff(d["alpha"]), 0.001, rtol=1e-9)


def test_build_writes_every_column(stubs, monkeypatch, tmp_path):
    import scipy
    q = lambda a, probs=(0.75, 0.95): np.array([2.0, 8.0 - 2.0 * a])      # q75 = 2, q95 = 2(4 − α)
    monkeypatch.setattr(mk, "sas_quantiles", q)
    monkeypatch.setattr(mk, "gil_pelaez_quantiles", q)
    path = mk.build(tmp_path / "a" / "b" / "t.npz", step=0.25)             # two missing parents made
    with np.load(path) as d:
        assert sorted(d.files) == ["alpha", "iqr", "parameterization", "q75", "q95", "ratio", "scipy_version"]
        # step 0.25: (2 − 0.5)/0.25 + 1 = 7 points
        np.testing.assert_array_equal(d["alpha"], [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0])
        np.testing.assert_array_equal(d["q75"], np.full(7, 2.0))
        np.testing.assert_array_equal(d["q95"], [7.0, 6.5, 6.0, 5.5, 5.0, 4.5, 4.0])
        np.testing.assert_array_equal(d["ratio"], [3.5, 3.25, 3.0, 2.75, 2.5, 2.25, 2.0])   # q95/q75
        np.testing.assert_array_equal(d["iqr"], np.full(7, 4.0))                           # 2 q75
        assert str(d["scipy_version"]) == scipy.__version__


def test_build_rounds_the_grid_to_12_digits(stubs, tmp_path):
    # step 0.1: linspace(0.5, 2, 16) has 0.7000000000000001-like points; rounded to 12 digits they are
    # the decimal values (0.5 + 0.1 k), and the one within 0.0055 of 1 is 1.0 itself (not replaced)
    with np.load(mk.build(tmp_path / "t.npz", step=0.1)) as d:
        assert d["alpha"].tolist() == [round(0.5 + 0.1 * k, 12) for k in range(16)]
    assert stubs == [0.8, 1.3, 1.7]


def test_build_refuses_a_ratio_that_is_not_strictly_decreasing(stubs, monkeypatch, tmp_path):
    flat = lambda a, probs=(0.75, 0.95): np.array([1.0, 4.0 - min(a, 1.5)])   # ratio flat from α = 1.5 on
    monkeypatch.setattr(mk, "sas_quantiles", flat)
    monkeypatch.setattr(mk, "gil_pelaez_quantiles", flat)
    with pytest.raises(RuntimeError, match=r"not strictly decreasing"):
        mk.build(tmp_path / "t.npz", step=0.5)
    assert not (tmp_path / "t.npz").exists()


def test_build_spot_checks_scipy_against_gil_pelaez_at_1e_9(stubs, monkeypatch, tmp_path):
    # Gil-Pelaez off by a relative 1e−8 at the spot checks: refused; 1e−10: accepted (rtol 1e−9)
    for rel, ok in ((1e-8, False), (1e-10, True)):
        monkeypatch.setattr(mk, "gil_pelaez_quantiles",
                            lambda a, probs=(0.75, 0.95), rel=rel: _stub_quantiles(a) * (1.0 + rel))
        if ok:
            mk.build(tmp_path / "t.npz", step=0.5)
        else:
            with pytest.raises(RuntimeError, match=r"disagree with Gil-Pelaez at 0\.8\b"):
                mk.build(tmp_path / "t.npz", step=0.5)


def test_build_silences_quad_warnings_only_inside(stubs, monkeypatch, tmp_path):
    import warnings

    def noisy(a, probs=(0.75, 0.95)):
        warnings.warn("roundoff", UserWarning)
        return _stub_quantiles(a)
    monkeypatch.setattr(mk, "gil_pelaez_quantiles", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mk.build(tmp_path / "t.npz", step=0.005)             # 0.995, 1.005 and the three spot checks


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def test_main_passes_out_and_step_and_says_where(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(mk, "build", lambda out, step: seen.append((out, step)) or f"<{out}>")
    mk.main(["--out", "x.npz", "--step", "0.25"])
    mk.main([])
    assert seen == [("x.npz", 0.25), (str(mk.DEFAULT_PATH), 0.001)]
    assert capsys.readouterr().out == f"wrote <x.npz>\nwrote <{mk.DEFAULT_PATH}>\n"
    with pytest.raises(SystemExit):
        mk.main(["--help"])
    out = capsys.readouterr().out
    assert "Build the McCulloch quantile table shipped as" in out and "--out OUT" in out and "--step STEP" in out
