"""lwsim.analyze runs the envelope and the matched statistic in one pass, and a trimmed lag grid
slices what that pass computed instead of running it again (docs/analyze.md)."""
import numpy as np
import pytest

import lwsim
import lwsim.diagnostics as dg
from lwsim import analyze as an
from lwsim.analyze import core

T, B = 20, 24


@pytest.fixture
def counted(monkeypatch):
    """Counts of each pass analyze makes (the real functions still run)."""
    calls = {"envelope_and_matched": 0, "envelope": 0, "matched_statistic": 0}
    for name in calls:
        real = getattr(dg, name)

        def spy(*a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(*a, **k)
        monkeypatch.setattr(dg, name, spy)
    return calls


def _model(trim):
    cell = lwsim.make_cell("gru", 2, 3, convention="torch")
    params = cell.init_params(seed=0, scheme="torch")
    if trim:
        params["b_iz"][:] = -10.0            # z ≈ σ(−10): f(ℓ) below 1e−12 max f from ℓ = 4 on
    rng = np.random.default_rng(0)
    return cell, params, rng.standard_normal((T, B, 2)), rng.standard_normal((T, B, 1))


@pytest.mark.parametrize("trim", [False, True])
def test_one_pass_even_when_trimmed(counted, trim):
    cell, params, x, y = _model(trim)
    with pytest.warns(UserWarning):
        rep = an.analyze(cell, params, x, y, K=2, progress=False, backend="numpy", exact=False)
    assert counted == {"envelope_and_matched": 1, "envelope": 0, "matched_statistic": 0}
    assert rep.lags.tolist() == ([1, 2, 3] if trim else list(range(1, 11)))


def test_trimmed_report_equals_a_run_on_the_trimmed_grid():
    """The sliced envelope and matched statistic equal both computed on lags 1 … 3 directly."""
    cell, params, x, y = _model(trim=True)
    with pytest.warns(UserWarning):
        rep = an.analyze(cell, params, x, y, K=2, progress=False, backend="numpy", exact=False)
    env, ms = dg.envelope_and_matched(cell, params, x, y, 1.0, [1, 2, 3], n_directions=2, seed=0,
                                      backend="numpy", progress=False)
    for k in ("lags", "f", "f_gates", "ratio", "m", "count", "lam_mean", "lam_std", "lam_neuron"):
        np.testing.assert_array_equal(getattr(rep.envelope, k), getattr(env, k), err_msg=k)
    for k in ("lags", "samples", "per_direction", "count"):
        np.testing.assert_array_equal(getattr(rep.matched, k), getattr(ms, k), err_msg=k)
    assert rep.envelope.log_mass is None and rep.matched.signs is None


def test_first_lags_slices_every_per_lag_field():
    """_first_lags on hand-made results: per-lag rows cut, per-neuron and scalar fields kept."""
    n, K, Bs, Hn = 4, 2, 3, 2
    lag_rows = np.arange(n, dtype=float)
    env = dg.Envelope(lags=np.arange(1, n + 1), f=lag_rows, f_gates=lag_rows + 10, ratio=lag_rows + 20,
                      m=np.arange(n * Hn, dtype=float).reshape(n, Hn), count=np.arange(n), lam_mean=lag_rows + 30,
                      lam_std=lag_rows + 40, lam_neuron=np.array([7.0, 8.0]), eta=0.5, order=1, form="rayleigh",
                      conventions="author", log_mass=lag_rows + 50)
    per_dir = np.arange(K * n * Bs, dtype=float).reshape(K, n, Bs)
    ms = dg.MatchedStatistic(lags=np.arange(1, n + 1), samples=per_dir.mean(axis=0), per_direction=per_dir,
                             signs=np.ones((K, n)), count=np.ones((n, Bs)), order=1, form="rayleigh")
    e2, m2 = core._first_lags(env, ms, 2)
    assert e2.lags.tolist() == [1, 2] and e2.f.tolist() == [0, 1] and e2.f_gates.tolist() == [10, 11]
    assert e2.ratio.tolist() == [20, 21] and e2.lam_mean.tolist() == [30, 31] and e2.lam_std.tolist() == [40, 41]
    assert e2.m.tolist() == [[0, 1], [2, 3]] and e2.count.tolist() == [0, 1] and e2.log_mass.tolist() == [50, 51]
    assert e2.lam_neuron.tolist() == [7, 8] and e2.eta == 0.5 and e2.conventions == "author"
    assert m2.lags.tolist() == [1, 2] and m2.samples.shape == (2, Bs) and m2.count.shape == (2, Bs)
    np.testing.assert_array_equal(m2.per_direction, per_dir[:, :2])
    assert m2.signs.shape == (K, 2)
    # the instantaneous statistic's samples are a list of per-lag arrays
    inst = dg.MatchedStatistic(lags=np.arange(1, n + 1), samples=[np.full(i + 1, i) for i in range(n)],
                               per_direction=None, signs=None, count=np.ones((n, Bs)), order=1, form="rayleigh")
    _, i2 = core._first_lags(env, inst, 3)
    assert [a.tolist() for a in i2.samples] == [[0], [1, 1], [2, 2, 2]] and i2.per_direction is None


def test_author_conventions_keep_lwsims_envelope(counted):
    """conventions "author": the matched statistic under the author's factors, the envelope lwsim's
    (two passes, the matched statistic first, as before the one-pass change)."""
    cell = lwsim.make_cell("gru", 2, 3)                  # the author's GRU is the cho convention
    params = cell.init_params(seed=0, scheme="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((T, B, 2)), rng.standard_normal((T, B, 1))
    with pytest.warns(UserWarning):
        rep = an.analyze(cell, params, x, y, lags=4, conventions="author", progress=False, backend="numpy",
                         exact=False)
    assert counted == {"envelope_and_matched": 0, "envelope": 1, "matched_statistic": 1}
    env = dg.envelope(cell, params, x, 1.0, 4, progress=False)
    np.testing.assert_array_equal(rep.envelope.f, env.f)
    assert rep.envelope.conventions == "lwsim"


def test_no_runtime_option_shim():
    assert not hasattr(core, "_kwargs_supported")
    assert "inspect" not in vars(core)
