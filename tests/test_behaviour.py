"""A15 and finding 9: ĉ(ℓ) on a planted model, the H^beh rule, identical trainings across N, the
scatter data and the finding-9 rules (docs/diagnostics.md §2.11, docs/experiments.md §5.6)."""
import json

import numpy as np
import pytest

import lwsim
from lwsim.diagnostics.behaviour import LagCoefficients, behavioural_window, lag_coefficients
from lwsim.figures.studies.behaviour import experiment as eb
from lwsim.figures.studies.behaviour import findings as fb
from lwsim.figures.studies.behaviour.figures import collect, fig_a15
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.io import to_jsonable


# ----------------------------------------------------------------------------- ĉ(ℓ)
def test_lag_coefficients_recover_a_planted_leaky_cell():
    """ConstGate with H = 1, no LayerNorm, W_h = 0, W_x = a uᵀ (a small: tanh linear to 1e−6),
    read-out r: h_t = (1 − s) h_{t−1} + s tanh(a z_t), so ŷ_t = r a s Σ_ℓ (1 − s)^ℓ z_{t−ℓ} and
    c(ℓ) = r a s (1 − s)^ℓ. ĉ must lie within 4 standard errors at every lag."""
    T, B, D, s, a, r = 64, 200, 3, 0.3, 1e-3, 2.0
    cell = lwsim.make_cell("constgate", D, 1, layernorm=False, s=s)
    u = np.array([2.0, -1.0, 2.0]) / 3.0
    p = {"W_x": a * u[None, :], "W_h": np.zeros((1, 1)), "b_x": np.zeros(1), "W_out": np.array([[r]]),
         "b_out": np.zeros(1)}
    x = np.random.default_rng(0).standard_normal((T, B, D))
    y = cell.forward(p, x).y
    lags = np.arange(1, 13)
    co = lag_coefficients(y, x, u, lags)
    c = r * a * s * (1 - s) ** lags
    zs = (co.c_hat - c) / co.se
    assert np.all(np.abs(zs) < 4), zs
    assert np.all(co.se < 0.05 * c[0])                       # the test has power
    np.testing.assert_array_equal(co.n_pairs, B * (T - lags))


def test_standard_error_matches_the_spread_over_datasets():
    """The sequence-clustered SE equals the spread of ĉ over independent held-out sets (±25%)."""
    T, B = 40, 60
    kernel = np.full(10, 0.3)          # a box: ĉ's terms are correlated within a sequence (clusters matter)
    est, ses = [], []
    for rep in range(60):
        rng = np.random.default_rng(rep)
        x = rng.standard_normal((T, B, 1))
        z = x[:, :, 0]
        y = 0.1 * rng.standard_normal((T, B))
        for lag, c in enumerate(kernel, start=1):
            y[lag:] += c * z[:T - lag]
        co = lag_coefficients(y, x, [1.0], [5])
        est.append(co.c_hat[0])
        ses.append(co.se[0])
    assert abs(np.mean(est) - kernel[4]) < 3 * np.std(est) / np.sqrt(len(est))   # unbiased
    assert 0.75 < np.mean(ses) / np.std(est, ddof=1) < 1.25


@pytest.mark.parametrize("kw,err", [
    (dict(y_hat=np.zeros((5, 4, 2))), "one output channel"),
    (dict(u=[0.0, 0.0]), "zero vector"),
    (dict(lags=[0, 1]), "lags must be >= 1"),
    (dict(lags=[5]), "lags must be < T"),
    (dict(lags=[1, 1]), "repeat"),
])
def test_lag_coefficients_validate(kw, err):
    args = dict(y_hat=np.zeros((5, 4)), x=np.ones((5, 4, 2)), u=[1.0, 0.0], lags=[1, 2])
    args.update(kw)
    with pytest.raises(ValueError, match=err):
        lag_coefficients(**args)


# ----------------------------------------------------------------------------- the H^beh rule
def _co(c_hat, se=0.1):
    lags = np.arange(1, 9)
    return LagCoefficients(lags=lags, c_hat=np.asarray(c_hat, float), se=np.broadcast_to(np.asarray(se, float), (8,)),
                           n_pairs=np.full(8, 100.0))


TL, TC = [2, 4, 6, 8], [1.0, 1.0, 1.0, 1.0]


def test_window_every_lag_recovered():
    w = behavioural_window(_co(np.ones(8)), TL, TC)
    assert (w.h, w.h_smooth) == (8.0, 8.0) and w.recovered.all()


def test_window_gap_stops_the_window_and_the_smooth_crossing_interpolates():
    c = np.ones(8)
    c[3] = 0.3                                         # lag 4: ratio 0.3
    w = behavioural_window(_co(c), TL, TC)
    assert w.h == 2.0                                  # lags 6, 8 recovered but after a gap
    assert w.h_smooth == pytest.approx(2 + 0.5 / 0.7 * 2)   # ratio 1 at lag 2, 0.3 at lag 4
    np.testing.assert_array_equal(w.recovered, [True, False, True, True])


def test_window_null_band_and_fraction():
    se = np.full(8, 0.1)
    se[5] = 0.5                                        # lag 6: |ĉ| = 1 < 3 × 0.5 → inside the band
    w = behavioural_window(_co(np.ones(8), se), TL, TC)
    assert (w.h, w.h_smooth) == (4.0, 8.0)
    np.testing.assert_array_equal(w.outside_band, [True, True, False, True])
    c = np.ones(8)
    c[1] = 1.6                                         # lag 2: |ĉ/c − 1| = 0.6 > 0.5
    w = behavioural_window(_co(c), TL, TC)
    assert (w.h, w.h_smooth) == (0.0, 8.0)
    assert behavioural_window(_co(c), TL, TC, frac=0.7).h == 8.0
    c[1] = 0.2                                         # below ½ at the first task lag
    w = behavioural_window(_co(c), TL, TC)
    assert (w.h, w.h_smooth) == (0.0, 0.0)


def test_window_signs_and_order():
    c = np.ones(8)
    c[5] = -1.0
    w = behavioural_window(_co(c), [8, 6, 4, 2], [1.0, -1.0, 1.0, 1.0])     # unsorted, a negative c
    assert w.h == 8.0 and list(w.task_lags) == [2, 4, 6, 8]


@pytest.mark.parametrize("kw,exc,err", [
    (dict(task_lags=[2, 4, 6, 9]), ValueError, "not among"),
    (dict(task_coefs=[1.0, 0.0, 1.0, 1.0]), ValueError, "nonzero"),
    (dict(task_coefs=[1.0]), ValueError, "one value per task lag"),
    (dict(frac=0.0), ValueError, "frac"),
    (dict(z_band=-1.0), ValueError, "z_band"),
    (dict(coefs=np.ones(8)), TypeError, "coefs"),
])
def test_window_validates(kw, exc, err):
    args = dict(coefs=_co(np.ones(8)), task_lags=TL, task_coefs=TC)
    args.update(kw)
    with pytest.raises(exc, match=err):
        behavioural_window(**args)


# ----------------------------------------------------------------------------- trainings across N
def _cfg(cell="gru", N=8):
    c = {k: v for k, v in SMOKE["a_behaviour"].items() if k != "seeds"}
    return dict(c, cell=cell, seed=212, N=N, backend="numpy")


def test_trainings_for_different_N_differ_only_in_the_training_set(monkeypatch):
    seen = []
    real = eb.train

    def spy(cell, params, data, **kw):
        res = real(cell, params, data, **kw)
        seen.append((params, data, kw, res))
        return res

    monkeypatch.setattr(eb, "train", spy)
    for N in (8, 16):
        eb.a_behaviour(_cfg(N=N))
    (p1, d1, k1, r1), (p2, d2, k2, r2) = seen
    assert k1 == k2 and k1["steps"] == SMOKE["a_behaviour"]["steps"] and k1["best_checkpoint"]
    assert len(r1.curves["step"]) == len(r2.curves["step"]) == k1["steps"]          # same number of steps
    assert all(np.array_equal(p1[k], p2[k]) for k in p1)                             # same initial weights
    for split in ("x_val", "y_val", "x_diag", "y_diag"):
        np.testing.assert_array_equal(getattr(d1, split), getattr(d2, split))
    assert (d1.n_train, d2.n_train) == (8, 16)
    assert not np.array_equal(d1.x_train[0, 0], d2.x_train[0, 0])                    # a fresh set per N
    np.testing.assert_array_equal(eb.behaviour_dataset(_cfg(), 8).x_train, d1.x_train)   # deterministic
    # the planned runs of one cell and seed differ only in N
    runs = [r.config for r in eb.behaviour_runs("smoke", "numpy") if r.config["cell"] == "gru"]
    diffs = {k for a in runs for b in runs for k in a if a[k] != b[k]}
    assert diffs == {"N"} and sorted(r["N"] for r in runs) == SMOKE["a_behaviour"]["budgets"]


# ----------------------------------------------------------------------------- finding 9
def test_spearman_is_on_ranks():
    assert fb.spearman([1, 2, 3, 4, 5], [20, 10, 400, 300, 5000]) == pytest.approx(0.8)   # 1 − 6·4/120
    assert fb.spearman([1, 2, 3], [5, 5, 5]) is None and fb.spearman([1, 2], [1, 2]) is None


def test_growth_law_rule():
    N = np.array([10, 100, 1000, 10000.0])
    assert fb.growth_law(N, 5 + 10 * np.log10(N))["law"] == "log"
    g = fb.growth_law(N, 2 * N ** 0.5)
    assert g["law"] == "power" and g["power_beta"] == pytest.approx(0.5)
    assert fb.growth_law(N, [50, 52, 51, 53])["law"] == "flat"          # rise 3 ≤ 10% of 53


def _runs(diag_full, diag_lag=None, seeds=(1, 2)):
    """Two cells × three N per seed; h_beh = 1…6 in seed 1, 7…12 in seed 2 (cell-major)."""
    out, i = [], 0
    for s in seeds:
        for cell in ("constgate", "gru"):
            for N in (10, 100, 1000):
                hb = float(i + 1)
                res = {"h_beh": hb, "h_beh_smooth": hb + 0.5, "nulls": ["lag", "full"],
                       "h_diag_lag": hb if diag_lag is None else diag_lag[i], "h_diag_full": diag_full[i]}
                if N == 1000:
                    lags = np.arange(1, 30.0)
                    res.update(f=np.exp(-0.1 * lags), lags=lags, decay={"selected_bic": "exponential"})
                out.append(({"cell": cell, "seed": s, "N": N}, res))
                i += 1
    return out


def test_scatter_data_and_tracking_verdict():
    full = [2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11]
    data = collect(_runs(full))
    assert len(data["scatter"]) == 12 and data["nulls"] == ["lag", "full"]
    p = data["scatter"][4]
    assert p == {"cell": "gru", "seed": 1, "N": 100.0, "h_beh": 5.0, "h_beh_smooth": 5.5,
                 "h_diag": {"lag": 5.0, "full": 6.0}}
    d = data["cells"]["gru"]
    np.testing.assert_allclose(d["h_beh_mean"], [7, 8, 9])                         # (4+10)/2 …
    assert d["envelope"]["selected_bic"] in ("exponential", "tempered")
    t = fb.tracking(data)
    assert t["lag"]["pooled"] == pytest.approx(1.0)
    assert t["full"]["pooled"] == pytest.approx(1 - 6 * 12 / (12 * 143))            # 0.958042
    assert t["full"]["per_seed"] == {"1": pytest.approx(1 - 36 / 210), "2": pytest.approx(1 - 36 / 210)}
    v, best, which = fb.verdict(t)
    assert (v, best) == ("reproduced", "lag") and which.startswith("no null clearly better")
    # full further behind: lead 1 − 0.888 ≥ 0.1 and behind in every seed
    t = fb.tracking(collect(_runs([3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10])))
    assert t["full"]["pooled"] == pytest.approx(1 - 6 * 32 / (12 * 143))            # 0.888112
    assert fb.verdict(t)[2].startswith("lag tracks behaviour better")


def test_finding9_not_reproduced_and_inconclusive():
    rev = [6, 5, 4, 3, 2, 1]
    t = fb.tracking(collect(_runs([3.0] * 6, diag_lag=rev, seeds=(1,))))
    assert t["lag"]["pooled"] == pytest.approx(-1.0) and t["full"]["pooled"] is None
    assert fb.verdict(t)[0] == "not reproduced"
    t = fb.tracking(collect(_runs([3.0] * 6, diag_lag=[1, 2, 3, 6, 5, 4], seeds=(1,))))
    assert t["lag"]["pooled"] == pytest.approx(1 - 6 * 8 / 210)                     # 0.771: one seed ≥ 0.5
    assert fb.verdict(t)[0] == "reproduced"
    two = fb.tracking(collect(_runs([3.0] * 12, diag_lag=[1, 2, 3, 4, 5, 6, 12, 11, 10, 9, 8, 7])))
    assert two["lag"]["per_seed"]["2"] == pytest.approx(-1.0)                       # fails in one seed
    assert fb.verdict(two)[0] == "inconclusive"
    rows = fb.finding9_lines({"A15": collect(_runs([3.0] * 12))})
    assert rows[0].startswith("## 9.") and rows[2].startswith("**reproduced**")
    assert fb.finding9_lines({})[2].startswith("Not run")


def test_smoke_runs_render_a15(tmp_path):
    """Smoke-size A15 end to end for two cells: finite JSON, one legend entry per cell and null."""
    from lwsim.figures.runner import Run, run_grid
    runs = [Run.make("a_behaviour", **_cfg(cell, N)) for cell in ("constgate", "lstm")
            for N in SMOKE["a_behaviour"]["budgets"]]
    out = run_grid(runs, cache_dir=tmp_path, jobs=1, progress=False)
    fig, data = fig_a15({"a_behaviour": [(r.config, out[r]) for r in runs]})
    labels = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert labels == ["constgate", "lstm"] + [f"null {n}" for n in data["nulls"]]
    assert set(data["nulls"]) >= {"lag"}
    text = json.dumps(to_jsonable(data), allow_nan=False)
    assert '"nan"' not in text and '"inf"' not in text
    r = out[runs[0]]
    assert r["c_hat"].shape == (SMOKE["a_behaviour"]["beh_max_lag"],) and 0 <= r["h_beh"] <= 12


# ----------------------------------------------------------------- three training points (issue 30 item 6)
def test_three_training_points_init_is_the_initial_parameters_with_eta():
    from lwsim import stats
    from lwsim.figures.training import _a_cell, _a_params, a_windows  # noqa: F401
    c = _cfg(N=16)
    calls = []
    real = eb.a_windows

    def spy(cell, params, rates, *a, **kw):
        calls.append((params, rates))
        return real(cell, params, rates, *a, **kw)
    import pytest as _pt
    mp = _pt.MonkeyPatch()
    import lwsim.figures.training as training
    mp.setattr(eb, "a_windows", spy)
    mp.setattr(training, "a_windows", spy)          # the init point goes through training.init_windows
    mp.setattr(training, "_SHARED", {})
    try:
        out = eb.a_behaviour(c)
    finally:
        mp.undo()
    assert eb.early_step(dict(c, steps=240)) == 24 and eb.early_step(dict(c, steps=6)) == 1
    # calls: final (trained optimizer), init (initial parameters, P = η·I), early (checkpoint optimizer)
    p_init, r_init = calls[1]
    assert r_init == float(c["lr"])
    p0 = _a_params(_a_cell("gru", c), c)
    assert all(np.array_equal(np.asarray(p_init[k], np.float64), np.asarray(p0[k], np.float64)) for k in p0)
    assert not isinstance(calls[2][1], float)
    for n in ("lag", "full"):
        for p in ("init", "early"):
            assert f"h_diag_{n}_{p}" in out
    cell = _a_cell("gru", c).with_dtype("float64")
    p0 = {k: np.asarray(v, np.float64) for k, v in _a_params(cell, c).items()}
    ds = eb.behaviour_dataset(c, 16)
    t = a_windows(cell, p0, float(c["lr"]), ds.x_diag, ds.y_diag, c, nulls=("lag",))["lag"]
    assert out["h_diag_lag_init"] == float(stats.learnability_window(t.lags, t.n_hat, 16))
    # finding 9 states ρ at each point and H^beh's spread over seeds
    runs = [({"cell": cl, "seed": s, "N": N}, dict(out, h_beh=float(s * N % 7), h_diag_lag=float(N % 5),
                                                     h_diag_lag_init=float(N % 3)))
            for cl in ("gru", "lstm") for s in (1, 2) for N in (8, 16, 32)]
    rows = fb.f9({"A15": collect(runs)})[2]
    assert any("three training points" in r and "lag/init" in r for r in rows)
    assert any("spread over seeds" in r for r in rows)
