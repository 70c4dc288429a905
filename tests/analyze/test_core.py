"""Tests of lwsim/analyze/core.py (laid out like the code: docs/testing.md).

lwsim.analyze runs the envelope and the matched statistic in one pass, and a trimmed lag grid
slices what that pass computed instead of running it again (docs/analyze.md).

Tests that kill the surviving mutants of mutmut on lwsim/analyze/core.py's helpers (issue 32,
docs/testing.md): the default grids, resolve_rates and the n_grid check, on hand values.

lwsim.analyze: the CLI on a saved model gives the figures pipeline's numbers (docs/analyze.md).

lwsim.analyze: every bad input gets a clear error naming the file, the key and the shape.

lwsim.window, the [A] window chain in one place (docs/statistics.md §3.3), and the nulls declared
in lwsim.stats.nulls: the figures' studies and lwsim.analyze give the same numbers under every
null, because both run this code."""


from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

import lwsim
from lwsim.conventions import LWSIM
import lwsim.diagnostics as dg
from lwsim import analyze as an, stats, tasks
from lwsim.analyze import analyze, core


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


ONLY20 = ("only 20 diagnostic sequences: tail fits need >= 500 to be reliable (docs/statistics.md §3.2); "
          "the affected lags are flagged in the report; x was read as (T, B, D) with T = {T} steps and "
          "B = 20 sequences: if the arrays are batch-first (B, T, ·), pass --batch-first (or transpose x and y)")


NO_DECAY = ("decay-law fit not possible: f has only 2 usable points in the fit window (need min_points=8); "
            "check floor/trim and that f is positive")


NO_MASTER = ("master check not possible: fit_master needs >= 10 usable lags (finite n_hat and kappa, f > 0) "
             "with >= 3 distinct n_hat; got 0 lags, 0 distinct n_hat")


def _data(cell, T, B, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, B, cell.n_in)), rng.standard_normal((T, B, cell.n_out))


def _gru(b_iz=None):
    cell = lwsim.make_cell("gru", 1, 2, convention="torch")
    params = cell.init_params(seed=0, scheme="torch")
    if b_iz is not None:
        params["b_iz"][:] = b_iz
    return cell, params


@pytest.fixture
def spies(monkeypatch):
    """{name: [(args, kwargs), …]} for each pass over the data and each fit analyze calls."""
    calls = {}
    for mod, names in ((dg, ("envelope_and_matched", "envelope", "matched_statistic", "exact_envelope",
                             "timescales")),
                       (stats, ("detection_table", "fit_decay", "fit_master"))):
        for name in names:
            real = getattr(mod, name)
            calls[name] = []

            def spy(*a, _real=real, _name=name, **k):
                calls[_name].append((a, k))
                return _real(*a, **k)
            monkeypatch.setattr(mod, name, spy)
    return calls


def _run(cell, params, T=6, B=20, **kw):
    """analyze on seeded data; returns (report, x, y, [warning messages raised])."""
    x, y = _data(cell, T, B)
    kw = {"progress": False, "backend": "numpy", **kw}
    levels = []

    class _Warnings:                  # core's ``warnings``: records each stacklevel, then warns for real
        @staticmethod
        def warn(msg, stacklevel=1):
            levels.append(stacklevel)
            warnings.warn(msg, stacklevel=stacklevel + 1)      # + this frame: the same target frame

    with warnings.catch_warnings(record=True) as rec, pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("always")
        mp.setattr(core, "warnings", _Warnings)
        rep = core.analyze(cell, params, x, y, **kw)
    for w in rec:          # stacklevel=2: attributed to analyze's caller (here, or mutmut's trampoline)
        assert w.filename == __file__ or "mutmut" in w.filename, (w.filename, str(w.message))
    # analyze calls warnings.warn itself, so stacklevel 2 is its caller's frame (the check above, in a
    # plain run); under mutmut both 2 and 3 land in the trampoline, hence the level itself is pinned
    assert levels == [2] * len(rec)
    return rep, x, y, [str(w.message) for w in rec]


def _with_f(monkeypatch, change):
    real = dg.envelope_and_matched

    def fake(*a, **k):
        env, ms = real(*a, **k)
        return dataclasses.replace(env, f=change(env.f.copy())), ms
    monkeypatch.setattr(dg, "envelope_and_matched", fake)


class _Stop(Exception):
    pass


def _stopped_pass(monkeypatch, **kw):
    """(args, kwargs) that analyze hands the one-pass diagnostics, which stops there."""
    seen = []

    def stop(*a, **k):
        seen.append((a, k))
        raise _Stop
    monkeypatch.setattr(dg, "envelope_and_matched", stop)
    cell, params = _gru()
    x, y = _data(cell, 6, 20)
    with pytest.raises(_Stop):
        core.analyze(cell, params, x, y, **kw)
    return params, seen[0]


H, D, NOUT, T_analyze_errors, B_analyze_errors = 4, 3, 2, 12, 24


@pytest.fixture
def lstm():
    cell = lwsim.make_cell("lstm", D, H, NOUT)
    return cell, cell.init_params(seed=0, scheme="torch")


LAGS = np.arange(1, 7)


N_GRID = [10, 100, 1000, 10000]


@pytest.fixture(scope="module")
def model():
    cell = lwsim.make_cell("gru", 3, 6, 1, layernorm=True)
    params = cell.init_params(seed=2, s0=0.3)
    task = tasks.make("multilag", T=14, D=3, seed=5, lags=(1, 3), coefs=(0.9, 0.6), sigma_y=0.3)
    ds = task.dataset(n_train=0, n_diag=60, seed=1)
    return cell, params, ds.x_diag, ds.y_diag


# ----------------------------------------------------------------------------------------------
# default_lags
# ----------------------------------------------------------------------------------------------


def test_default_lags_bounds():
    assert core.default_lags(1) == [1] and core.default_lags(2) == [1] and core.default_lags(3) == [1]
    assert core.default_lags(65) == list(range(1, 33))              # ⌊65/2⌋ = 32: every lag
    # ⌊66/2⌋ = 33 > 32: round(33^(k/31)), k = 0 … 31, duplicates merged
    assert core.default_lags(66) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 17, 19, 21, 24, 26, 29, 33]


def test_default_grids():
    assert an.default_lags(64) == list(range(1, 33))
    lg = an.default_lags(1000)
    assert lg[0] == 1 and lg[-1] == 500 and len(lg) <= 32
    assert an.default_n_grid(1000) == sorted({int(v) for v in np.round(np.geomspace(25, 1000, 10))})
    assert an.default_n_grid(20) == [20]


# ----------------------------------------------------------------------------------------------
# default_n_grid
# ----------------------------------------------------------------------------------------------


def test_default_n_grid_by_hand():
    assert core.default_n_grid(25) == [25] and core.default_n_grid(10) == [10]
    assert core.default_n_grid(26) == [25, 26]
    assert core.default_n_grid(1) == [1] and core.default_n_grid(0) == [0]   # B ≤ 25: [B], no geometric grid
    # 25 · 40^(k/9): 25, 37.7, 56.8, 85.5, 128.9, 194.3, 292.5, 440.9, 664.4, 1000
    assert core.default_n_grid(1000) == [25, 38, 57, 85, 129, 194, 292, 441, 664, 1000]


# ----------------------------------------------------------------------------------------------
# resolve_rates
# ----------------------------------------------------------------------------------------------


def test_resolve_rates_descriptions_and_forms():
    p = {"a": np.ones(2)}
    assert core.resolve_rates(None, p) == (
        1.0, "none given: unit SGD rate η = 1 (Λ = 1, f(ℓ) is the gates' transport alone)")
    assert core.resolve_rates(0.5, p) == (0.5, "SGD, η = 0.5")
    assert core.resolve_rates(2, p) == (2.0, "SGD, η = 2")
    opt, desc = core.resolve_rates("sgd", p)
    assert desc == repr(opt) and desc.startswith("SGD('sgd', lr=0.001,")
    opt, desc = core.resolve_rates(["momentum", {"lr": 0.2}], p)
    assert desc.startswith("Momentum('momentum', lr=0.2,") and opt.rates()["a"].tolist() == [0.2, 0.2]
    mine = lwsim.optim.make("sgd", {"a": np.ones(2)}, lr=0.3)
    got, desc = core.resolve_rates(mine, p)
    assert got is mine and desc == repr(mine)
    full = ("rates must be None, a number (SGD η), an optimizer, an optimizer state_dict, a name or "
            "(name, hyper-parameters), got ")
    for bad, name in ((True, "bool"), (("sgd", 1), "tuple"), (("sgd", {}, 1), "tuple"), ({"lr": 1}, "dict")):
        with pytest.raises(TypeError) as e:
            core.resolve_rates(bad, p)
        assert str(e.value) == full + name
    for name in ("ADAM", "adamw", "RMSprop"):
        with pytest.raises(ValueError) as e:
            core.resolve_rates(name, p)
        assert str(e.value) == (f"rates: optimizer {name!r} is adaptive, its rates λ need its second-moment "
                                "state; pass the optimizer, its state_dict, or the state file (--optimizer-state)")


def test_resolve_rates_does_not_touch_the_callers_params():
    p = {"a": np.ones(2)}
    opt, _ = core.resolve_rates(("sgd", {"lr": 0.5}), p)
    opt.step({"a": np.ones(2)})
    assert p["a"].tolist() == [1.0, 1.0]


def test_resolve_rates_from_a_state_dict_does_not_touch_the_callers_params():
    p = {"a": np.ones(2)}
    sd = lwsim.optim.make("sgd", {"a": np.zeros(2)}, lr=0.5).state_dict()
    opt, _ = core.resolve_rates(sd, p)
    opt.step({"a": np.ones(2)})                       # 1 − 0.5·1 on the optimizer's own copy
    assert opt.params["a"].tolist() == [0.5, 0.5] and p["a"].tolist() == [1.0, 1.0]


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


# ----------------------------------------------------------------------------------------------
# analyze: the n_grid check
# ----------------------------------------------------------------------------------------------


def _n_grid_handed_on(monkeypatch, n_grid):
    """The budgets analyze hands the detection (which stops there)."""
    seen = []

    def stop(ms, lags, n_grid, *a, **k):
        seen.append(n_grid)
        raise _Stop
    monkeypatch.setattr(core.window, "detect", stop)
    cell, params = _gru()
    x, y = _data(cell, 6, 20)
    with pytest.raises(_Stop), warnings.catch_warnings():
        warnings.simplefilter("ignore")                     # 20 sequences: the reliability warning
        core.analyze(cell, params, x, y, n_grid=n_grid, backend="numpy", progress=False, exact=False)
    return seen[0]


def test_check_n_grid(monkeypatch):
    assert _n_grid_handed_on(monkeypatch, None) == [20]           # the default: up to the 20 sequences
    assert _n_grid_handed_on(monkeypatch, 5) == [5]
    got = _n_grid_handed_on(monkeypatch, np.int64(7))
    assert got == [7] and type(got[0]) is int
    assert _n_grid_handed_on(monkeypatch, [3, 4]) == [3, 4]
    cell, params = _gru()
    x, y = _data(cell, 6, 20)
    with pytest.raises(TypeError, match=r"\bn_grid\b"):
        analyze(cell, params, x, y, n_grid=True)
    with pytest.raises(ValueError, match=r"\bn_grid\b.*> 0"):
        analyze(cell, params, x, y, n_grid=[0])
    with pytest.raises(ValueError, match=r"\bn_grid\b.*at least 1"):
        analyze(cell, params, x, y, n_grid=[])
    with pytest.raises(ValueError, match=r"\bn_grid\b.*1-dimensional"):
        analyze(cell, params, x, y, n_grid=[[1]])


def test_analyze_defaults_settings_notes_and_warnings(spies):
    cell, params = _gru()
    rep, x, y, raised = _run(cell, params)
    # default lags: T/2 = 3 → 1, 2, 3; default N grid: B = 20 ≤ 25 → [20]; B·T·L·S³ = 20·6·3·8 = 2880
    assert rep.notes == ["lag grid: default, 3 lags 1 … 3 (up to T/2 = 3)",
                         "N grid: default, 1 budgets 20 … 20 (up to the 20 available sequences)",
                         "exact envelope: computed (B·T·L·S³ = 2.88e+03 ≤ 5e+07)"]
    assert rep.warnings == [ONLY20.format(T=6), NO_DECAY, NO_MASTER, "unreliable tail fits at 3 of 3 lags (1, 2, 3)"]
    assert raised == [ONLY20.format(T=6)]
    s = rep.settings
    assert s["cell"] == repr(cell) and (s["T"], s["B"], s["D"], s["H"], s["n_out"]) == (6, 20, 1, 2, 1)
    assert s["rates"].startswith("none given") and s["eta"] == 1.0
    assert (s["K"], s["seed"], s["eps"], s["backend"]) == (1, 0, 20.0, "numpy")
    assert (s["statistic"], s["conventions"], s["noise"], s["sources"]) == ("default", "default", "lag", {})
    assert s["lags"].tolist() == [1, 2, 3] and s["n_grid"].tolist() == [20.0]
    assert list(s) == ["cell", "T", "B", "D", "H", "n_out", "rates", "eta", "K", "seed", "eps", "statistic",
                       "conventions", "noise", "backend", "lags", "n_grid", "sources"]
    # the one pass: what it was handed
    (a, k), = spies["envelope_and_matched"]
    assert a[0] is cell and a[2] is x and a[3] is y and a[4] == 1.0 and a[5].tolist() == [1, 2, 3]
    assert sorted(a[1]) == sorted(params)
    assert k == {"n_directions": 1, "seed": 0, "statistic": "sequence", "backend": "numpy", "progress": False,
                 "full_noise": True}
    assert spies["envelope"] == [] and spies["matched_statistic"] == []
    (a, k), = spies["timescales"]
    assert a[0].tolist() == [1, 2, 3] and a[1] is rep.envelope.m and k == {}
    # two nulls for the sequence statistic, each with the caller's eps, seed and conventions
    (a1, k1), (a2, k2) = spies["detection_table"]
    assert a1[0] is rep.matched.samples and a1[1].tolist() == [1, 2, 3] and a1[2] == [20]
    assert k1 == {"eps": 20.0, "seed": 0, "conventions": "lwsim", "method": "auto", "n_boot": 200, "min_samples": None, "cap_budget": False, "fit_subsample": None}
    assert a2[1].tolist() == [1, 2, 3] and a2[2] == [20] and a2[0].shape == (3, 20)
    assert set(k2) == {"eps", "seed", "conventions", "noise", "noise_samples", "method", "n_boot", "min_samples",
                       "cap_budget", "fit_subsample"}
    assert (k2["eps"], k2["seed"], k2["conventions"], k2["noise"]) == (20.0, 0, "lwsim", "full")
    assert k2["noise_samples"].shape[-1] == 20
    assert list(rep.detection_nulls) == ["lag", "full"]
    assert rep.detection is rep.detection_nulls["lag"]
    assert rep.detection_nulls["lag"].noise == "lag" and rep.detection_nulls["full"].noise == "full"
    (a, k), = spies["fit_decay"]
    assert a[0].tolist() == [1, 2, 3] and a[1] is rep.envelope.f and k == {}
    # the exact envelope on the same lags, rates, backend
    (a, k), = spies["exact_envelope"]
    assert a[0] is cell and a[2] is x and a[3] == 1.0 and a[4].tolist() == [1, 2, 3]
    assert k == {"backend": "numpy", "progress": False}
    assert rep.exact is not None and rep.exact.f.shape == (3,)
    assert rep.timescales.tau.shape == (2,) and rep.matched.samples.shape == (3, 20)
    assert rep.decay is None and rep.master is None


def test_analyze_given_options_reach_every_step(spies):
    """rates, K, seed, eps, lags, n_grid, noise, sources, exact given: no default notes, each passed on."""
    cell, params = _gru()
    rep, x, y, raised = _run(cell, params, rates=0.5, K=2, seed=3, eps=0.5, lags=[1, 2], n_grid=[20], noise="full",
                             exact=False, sources={"weights": "w.safetensors"})
    assert rep.notes == []
    # ε = 0.5, N = 20: no lag's lower bound of |m̄| is detectable with 20 sequences (one was on |m̄|)
    assert rep.warnings == [ONLY20.format(T=6), NO_DECAY.replace("only 2", "only 1"), NO_MASTER,
                            "unreliable tail fits at 2 of 2 lags (1, 2)"]
    assert raised == [ONLY20.format(T=6)]                       # n_grid 20 = B: no extrapolation warning
    (a, k), = spies["envelope_and_matched"]
    assert a[4] == 0.5 and a[5].tolist() == [1, 2]
    assert k == {"n_directions": 2, "seed": 3, "statistic": "sequence", "backend": "numpy", "progress": False,
                 "full_noise": True}
    assert rep.matched.per_direction.shape == (2, 2, 20)
    (_, k1), (_, k2) = spies["detection_table"]
    assert k1 == {"eps": 0.5, "seed": 3, "conventions": "lwsim", "method": "auto", "n_boot": 200, "min_samples": None, "cap_budget": False, "fit_subsample": None} and (k2["eps"], k2["seed"]) == (0.5, 3)
    assert rep.detection is rep.detection_nulls["full"] and rep.detection.noise == "full"
    assert rep.detection.eps == 0.5 and rep.detection_nulls["lag"].eps == 0.5
    assert spies["exact_envelope"] == [] and rep.exact is None
    s = rep.settings
    assert (s["rates"], s["eta"], s["K"], s["seed"], s["eps"], s["noise"]) == ("SGD, η = 0.5", 0.5, 2, 3, 0.5, "full")
    assert s["sources"] == {"weights": "w.safetensors"} and s["lags"].tolist() == [1, 2]


def test_analyze_exact_true_and_the_budget_boundary(spies, monkeypatch):
    cell = lwsim.make_cell("lstm", 1, 1)                 # H = 1, state size S = 2H = 2
    params = cell.init_params(seed=0)
    rep, *_ = _run(cell, params, exact=True)
    assert rep.exact is not None and not any(n.startswith("exact envelope") for n in rep.notes)
    # B·T·L·S³ = 20·6·3·2³ = 2880: computed at a budget of exactly 2880 (≤), skipped at 2879
    monkeypatch.setattr(core, "EXACT_BUDGET", 2880)
    rep, *_ = _run(cell, params)
    assert rep.notes[-1] == "exact envelope: computed (B·T·L·S³ = 2.88e+03 ≤ 2880)" and rep.exact is not None
    monkeypatch.setattr(core, "EXACT_BUDGET", 2879)
    n_exact = len(spies["exact_envelope"])
    rep, *_ = _run(cell, params)
    assert rep.notes[-1] == "exact envelope: skipped (B·T·L·S³ = 2.88e+03 > 2879)" and rep.exact is None
    assert len(spies["exact_envelope"]) == n_exact


def test_analyze_instantaneous_statistic(spies):
    """B(T − ℓ) samples per lag: 100, 80, 60; the N grid up to 100 = 25·4^(k/9) rounded; one null."""
    cell, params = _gru()
    rep, *_, raised = _run(cell, params, statistic="instantaneous", exact=False)
    assert rep.notes[1] == ("N grid: default, 10 budgets 25 … 100 (up to the 100 available samples per lag "
                            "(at lag 1))")
    assert rep.detection.n_grid.tolist() == [25, 29, 34, 40, 46, 54, 63, 73, 86, 100]
    only = ("only 60 diagnostic samples: tail fits need >= 500 to be reliable (docs/statistics.md §3.2); "
            "the affected lags are flagged in the report; x was read as (T, B, D) with T = 6 steps and "
            "B = 20 sequences: if the arrays are batch-first (B, T, ·), pass --batch-first (or transpose x and y)")
    assert raised == [only] and rep.warnings[0] == only
    (_, k), = spies["envelope_and_matched"]
    assert k["statistic"] == "instantaneous" and k["full_noise"] is False
    assert list(rep.detection_nulls) == ["lag"] and len(spies["detection_table"]) == 1
    assert rep.settings["statistic"] == "instantaneous"
    # n_grid beyond the 100 samples at lag 1: extrapolation warning names samples per lag
    rep, *_, raised = _run(cell, params, statistic="instantaneous", exact=False, n_grid=[50, 101])
    assert raised[1] == ("n_grid: budgets up to N = 101 exceed the 100 available samples per lag (at lag 1); "
                         "Ĥ_N at those N is extrapolated from the fitted α-stable law, not measured")


def test_analyze_n_grid_beyond_the_sequences_warns():
    cell, params = _gru()
    rep, *_, raised = _run(cell, params, n_grid=[10, 21], exact=False)
    ext = ("n_grid: budgets up to N = 21 exceed the 20 available sequences; Ĥ_N at those N is extrapolated "
           "from the fitted α-stable law, not measured")
    assert raised == [ONLY20.format(T=6), ext] and rep.warnings[:2] == [ONLY20.format(T=6), ext]
    assert rep.notes == ["lag grid: default, 3 lags 1 … 3 (up to T/2 = 3)"]


def test_analyze_500_sequences_are_reliable():
    """B = 500 = RELIABLE_N: no 'only …' warning, every lag reliable, the N grid 25·20^(k/9)."""
    cell, params = _gru()
    rep, *_, raised = _run(cell, params, B=500, exact=False)
    assert raised == [] and not any(w.startswith("only") or w.startswith("unreliable") for w in rep.warnings)
    assert rep.detection.reliable.tolist() == [True, True, True]
    assert rep.detection.n_grid.tolist() == [25, 35, 49, 68, 95, 132, 184, 257, 358, 500]
    assert rep.notes[1] == "N grid: default, 10 budgets 25 … 500 (up to the 500 available sequences)"


@pytest.mark.parametrize("b_iz, lags", [(-10.0, [1, 2, 3]), (-15.0, [1, 2])])
def test_analyze_trims_the_lag_grid_to_the_signal(b_iz, lags):
    """z ≈ σ(b): f(ℓ)/f(1) falls by ~σ(b) per lag; f > 1e−12·max f keeps lags 1…3 (b = −10), 1, 2 (−15)."""
    cell, params = _gru(b_iz)
    rep, *_ = _run(cell, params, T=10)
    ell = lags[-1]
    assert rep.notes[:2] == ["lag grid: default, 5 lags 1 … 5 (up to T/2 = 5)",
                             f"lag grid trimmed to the longest lag with signal, ℓ = {ell} (f ≤ 1e-12·max f beyond)"]
    assert rep.lags.tolist() == lags and rep.settings["lags"].tolist() == lags
    assert rep.envelope.f.shape == (ell,) and rep.matched.samples.shape == (ell, 20)
    assert rep.exact.f.shape == (ell,) and rep.envelope.m.shape == (ell, 2)
    assert rep.envelope.f.min() > 1e-12 * rep.envelope.f.max()
    # cost on the trimmed grid: 20·10·L·8
    assert rep.notes[-1] == f"exact envelope: computed (B·T·L·S³ = {1600 * ell:.3g} ≤ 5e+07)"
    assert rep.warnings[-1] == f"unreliable tail fits at {ell} of {ell} lags ({', '.join(map(str, lags))})"


def test_analyze_no_signal_beyond_the_first_lag():
    cell, params = _gru(-40.0)                        # f(2)/f(1) ≈ σ(−40) ≈ 4e−18
    with pytest.raises(ValueError) as e:
        _run(cell, params, T=10)
    assert str(e.value) == "the envelope f(ℓ) has no signal beyond the first lag: nothing to analyse"


def test_analyze_nan_and_zero_f_count_as_no_signal(monkeypatch):
    """A NaN f(ℓ) is no signal (NaN ignored by the max); all-zero f: no signal at all."""
    cell, params = _gru()

    def nan_last(f):
        f[-1] = np.nan
        return f
    _with_f(monkeypatch, nan_last)
    rep, *_ = _run(cell, params, T=8, exact=False)           # lags 1 … 4, f(4) NaN → trimmed to 3
    assert rep.lags.tolist() == [1, 2, 3] and np.isfinite(rep.envelope.f).all()
    assert "lag grid trimmed to the longest lag with signal, ℓ = 3 (f ≤ 1e-12·max f beyond)" in rep.notes
    monkeypatch.undo()
    _with_f(monkeypatch, lambda f: f * 0.0)
    with pytest.raises(ValueError, match="no signal beyond the first lag"):
        _run(cell, params, T=8, exact=False)


def test_analyze_tiny_envelope_is_still_signal(monkeypatch):
    """The floor is relative: f scaled by 1e−20 keeps every lag (1e−12 × max f, not 1e−12 / max f)."""
    cell, params = _gru()
    _with_f(monkeypatch, lambda f: f * 1e-20)
    rep, *_ = _run(cell, params, T=8, exact=False)
    assert rep.lags.tolist() == [1, 2, 3, 4] and not any("trimmed" in n for n in rep.notes)


def test_analyze_unreliable_lags_listed_up_to_twelve():
    cell, params = _gru()
    rep, *_ = _run(cell, params, T=24, exact=False)          # 12 lags: all listed, no ellipsis
    assert rep.warnings[-1] == ("unreliable tail fits at 12 of 12 lags "
                                "(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)")
    # the decay law fits on lags 2 … 12 (its window starts at 2): 11 ≥ min_points 8
    assert rep.decay is not None and rep.decay.n == 11 and rep.decay.window == (2.0, 12.0)
    rep, *_ = _run(cell, params, T=26, exact=False)          # 13 lags: one more than 12 is cut
    assert rep.warnings[-1] == ("unreliable tail fits at 13 of 13 lags "
                                "(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 …)")
    rep, *_ = _run(cell, params, T=28, exact=False)          # 14 lags: the first 12, then …
    assert rep.warnings[-1] == ("unreliable tail fits at 14 of 14 lags "
                                "(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 …)")


def test_analyze_master_on_the_detectable_lags(spies):
    """N grid up to 1000: the lags needing more (N̂ = inf) are left out; the master check fits the rest."""
    cell, params = _gru()
    grid = np.round(np.geomspace(10, 1e12, 100))[:19]       # 10 … 1000
    # on the point estimate |m̄| (the lower bound leaves one lag at this size)
    point = dataclasses.replace(LWSIM, detection_mean="point")
    rep, *_ = _run(cell, params, T=24, n_grid=grid, exact=False, conventions=point)
    finite = np.isfinite(rep.detection.n_hat)
    assert 10 <= finite.sum() < 12                            # some lags undetectable, ≥ 10 left
    assert rep.master is not None and rep.master.n == finite.sum()
    (a, k), = spies["fit_master"]
    assert [np.isfinite(v).all() for v in a] == [True, True, True] and [v.size for v in a] == [finite.sum()] * 3
    assert a[2].tolist() == rep.envelope.f[finite].tolist() and k == {}
    assert not any(w.startswith("master") for w in rep.warnings)


def test_analyze_author_conventions_two_passes(spies):
    """conventions "author": matched statistic first (with the author's conventions), then lwsim's envelope."""
    cell = lwsim.make_cell("gru", 1, 2)
    params = cell.init_params(seed=0, scheme="torch")
    rep, x, y, _ = _run(cell, params, conventions="author", K=2, seed=5, exact=False)
    assert spies["envelope_and_matched"] == []
    (a, k), = spies["matched_statistic"]
    assert a[0] is cell and a[2] is x and a[3] is y and a[4] == 1.0 and a[5].tolist() == [1, 2, 3]
    assert k == {"conventions": "author", "n_directions": 2, "seed": 5, "statistic": "sequence",
                 "backend": "numpy", "progress": False, "full_noise": True}
    (a, k), = spies["envelope"]
    assert a[0] is cell and a[2] is x and a[3] == 1.0 and a[4].tolist() == [1, 2, 3]
    assert k == {"backend": "numpy", "progress": False}
    assert rep.settings["conventions"] == "author" and rep.envelope.conventions == "lwsim"
    assert all(k["conventions"] == "author" for _, k in spies["detection_table"])


@pytest.mark.parametrize("T, B, kw, exc, msg", [
    (6, 19, {}, ValueError, "x has 19 sequences; the tail fit needs at least 20 (and 500 to be reliable, "
                            "docs/statistics.md §3.2)"),
    (2, 20, {}, ValueError, "x has T = 2 steps; the envelope needs lags 1 … T−1 with T ≥ 3"),
    (6, 20, {"exact": 1}, TypeError, "exact must be None (auto), True or False, got 1"),
    (6, 20, {"statistic": "Sequence"}, ValueError, "statistic must be 'sequence' or 'instantaneous', got 'Sequence'"),
    (6, 20, {"noise": "Full"}, ValueError, "noise must be one of lag, full, snr, ecf, floors, f32, author, got 'Full'"),
    (6, 20, {"noise": "full", "statistic": "instantaneous"}, ValueError,
     "noise='full' needs statistic 'sequence' (the whole update is per sequence)"),
    (6, 20, {"eps": 0}, ValueError, "eps must be > 0.0, got 0.0"),
    (6, 20, {"lags": 6}, ValueError, "lags must be <= T - 1 = 5 (a lag needs a source k = t - lag >= 1), got 6"),
    (6, 20, {"eps": "20"}, TypeError, "eps must be a real number, got str"),
])
def test_analyze_refusals(spies, T, B, kw, exc, msg):
    cell, params = _gru()
    with pytest.raises(exc) as e:
        _run(cell, params, T=T, B=B, **kw)
    assert str(e.value) == msg
    assert spies["envelope_and_matched"] == []


def test_analyze_smallest_accepted_T_and_conventions_spelled_out():
    """T = 3: one lag; conventions "lwsim" given is shown as given, noise "lag" given too."""
    cell, params = _gru()
    rep, *_ = _run(cell, params, T=3, conventions="lwsim", statistic="sequence", noise="lag", lags=[1, 2],
                   exact=False)
    assert rep.lags.tolist() == [1, 2]
    assert (rep.settings["conventions"], rep.settings["statistic"]) == ("lwsim", "sequence")


# ----------------------------------------------------------------------------------------------
# analyze: the lag grid trimmed to the lags with signal
# ----------------------------------------------------------------------------------------------


def _trimmed(monkeypatch, env, ms, **kw):
    """analyze's report when the one-pass diagnostics return ``env``, ``ms`` (hand-made, B = 20)."""
    monkeypatch.setattr(dg, "envelope_and_matched", lambda *a, **k: (env, ms))
    cell, params = _gru()
    x, y = _data(cell, 6, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze(cell, params, x, y, lags=[1, 2, 3, 4], backend="numpy", progress=False, exact=False,
                       nulls=("lag",), **kw)


def test_first_lags_slices_every_per_lag_field(monkeypatch):
    """analyze trims hand-made results to the lags with signal (f = 0 beyond lag 2): per-lag rows cut,
    per-neuron and scalar fields kept."""
    n, K, Bs, Hn = 4, 2, 20, 2
    lag_rows = np.arange(n, dtype=float)
    f = np.array([1.0, 2.0, 0.0, 0.0])
    env = dg.Envelope(lags=np.arange(1, n + 1), f=f, f_gates=lag_rows + 10, ratio=lag_rows + 20,
                      m=np.arange(n * Hn, dtype=float).reshape(n, Hn) + 1, count=np.arange(n),
                      lam_mean=lag_rows + 30, lam_std=lag_rows + 40, lam_neuron=np.array([7.0, 8.0]), eta=0.5,
                      order=1, form="rayleigh", conventions="author", log_mass=lag_rows + 50)
    per_dir = np.random.default_rng(0).standard_normal((K, n, Bs))
    ms = dg.MatchedStatistic(lags=np.arange(1, n + 1), samples=per_dir.mean(axis=0), per_direction=per_dir,
                             signs=np.ones((K, n)), count=np.ones((n, Bs)), order=1, form="rayleigh")
    rep = _trimmed(monkeypatch, env, ms)
    e2, m2 = rep.envelope, rep.matched
    assert rep.lags.tolist() == [1, 2] and e2.lags.tolist() == [1, 2]
    assert e2.f.tolist() == [1, 2] and e2.f_gates.tolist() == [10, 11]
    assert e2.ratio.tolist() == [20, 21] and e2.lam_mean.tolist() == [30, 31] and e2.lam_std.tolist() == [40, 41]
    assert e2.m.tolist() == [[1, 2], [3, 4]] and e2.count.tolist() == [0, 1] and e2.log_mass.tolist() == [50, 51]
    assert e2.lam_neuron.tolist() == [7, 8] and e2.eta == 0.5 and e2.conventions == "author"
    assert m2.lags.tolist() == [1, 2] and m2.count.shape == (2, Bs)
    np.testing.assert_array_equal(m2.samples, per_dir.mean(axis=0)[:2])
    np.testing.assert_array_equal(m2.per_direction, per_dir[:, :2])
    assert m2.signs.shape == (K, 2)
    # the instantaneous statistic's samples are a list of per-lag arrays
    inst = dg.MatchedStatistic(lags=np.arange(1, n + 1), samples=[np.arange(20.0 + i) for i in range(n)],
                               per_direction=None, signs=None, count=np.ones((n, Bs)), order=1, form="rayleigh")
    env3 = dataclasses.replace(env, f=np.array([1.0, 2.0, 3.0, 0.0]))
    i2 = _trimmed(monkeypatch, env3, inst, statistic="instantaneous").matched
    assert [a.tolist() for a in i2.samples] == [list(np.arange(20.0 + i)) for i in range(3)]
    assert i2.per_direction is None


# ----------------------------------------------------------------------------------------------
# _envelope_and_matched
# ----------------------------------------------------------------------------------------------


def test_envelope_and_matched_default_has_no_whole_update():
    """full_noise defaults to False: no ζ computed, the "full" null then refuses (both code paths)."""
    cell, params = _gru()
    x, y = _data(cell, 6, 20)
    cho = lwsim.make_cell("gru", 1, 2)
    for conv, c, p in (("lwsim", cell, params), ("author", cho, cho.init_params(seed=0, scheme="torch"))):
        # private: analyze always passes full_noise; the default is the helper's own
        env, ms = core._envelope_and_matched(c, p, x, y, 1.0, np.array([1, 2]), K=1, seed=0,
                                             statistic="sequence", conventions=conv, backend="numpy",
                                             progress=False)
        assert ms.noise is None and env.f.shape == (2,) and ms.samples.shape == (2, 20)


def test_analyze_default_backend_and_progress(monkeypatch):
    """backend "numba" and progress on by default (the pass is stopped once it has been handed them)."""
    _, (_, k) = _stopped_pass(monkeypatch)
    assert k["backend"] == "numba" and k["progress"] is True


def test_analyze_rates_by_name_over_the_models_parameters(monkeypatch):
    """rates ("sgd", {lr}): an SGD optimizer over (a copy of) the model's own parameters."""
    params, (a, _) = _stopped_pass(monkeypatch, rates=("sgd", {"lr": 0.25}), lags=5)
    opt, lags = a[4], a[5]
    assert sorted(opt.rates()) == sorted(params) and all((r == 0.25).all() for r in opt.rates().values())
    assert lags.tolist() == [1, 2, 3, 4, 5]                  # lags = 5: every lag up to T − 1


# ----------------------------------------------------------------------------------------------
# analyze
# ----------------------------------------------------------------------------------------------


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


def test_too_few_sequences(lstm):
    cell, params = lstm
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match=r"\bx\b.*sequences.*at least 20"):
        analyze(cell, params, rng.standard_normal((T_analyze_errors, 10, D)), np.zeros((T_analyze_errors, 10, NOUT)), progress=False)


@pytest.mark.filterwarnings("ignore:only 60 diagnostic sequences", "ignore:n_grid. budgets up to")
def test_analyze_nulls_option_errors(model):
    cell, params, x, y = model
    kw = dict(lags=LAGS, n_grid=N_GRID, exact=False, progress=False)
    with pytest.raises(ValueError, match="nulls: 'none' is not one of"):
        analyze(cell, params, x, y, nulls=("lag", "none"), **kw)
    with pytest.raises(TypeError, match="nulls must be a sequence"):
        analyze(cell, params, x, y, nulls="lag", **kw)
    with pytest.raises(ValueError, match="noise must be one of"):
        analyze(cell, params, x, y, noise="loose", **kw)
    with pytest.raises(ValueError, match="statistic 'sequence'"):
        analyze(cell, params, x, y, statistic="instantaneous", nulls=("full",), **kw)
    # noise joins the nulls when not listed
    rep = analyze(cell, params, x, y, nulls=("lag",), noise="floors", **kw)
    assert tuple(rep.detection_nulls) == ("lag", "floors") and rep.detection is rep.detection_nulls["floors"]
