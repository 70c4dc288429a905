"""Tests of lwsim/tasks.py (laid out like the code: docs/testing.md).

Task generators (docs/experiments.md §5.1): targets recomputed independently from the inputs.

Tests that kill the surviving mutants of mutmut on lwsim/tasks.py (issue 32, docs/testing.md).

Each pins a hand-computed number, a documented construction (the draws in the documented order) or
a documented property; none compares the code with itself.

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way."""


from __future__ import annotations

import warnings

import numpy as np
import pytest

from lwsim import tasks


SMALL = {
    "multilag": dict(T=40, D=3, lags=(2, 5, 11), coefs=(0.6, 0.5, 0.4)),
    "sinmix": dict(T=80, D=3),
    "adding": dict(T=21, D=3),
    "recall": dict(T=30, D=2),
    "ar2": dict(T=30, D=2),
    "ar2_observed": dict(T=30, D=2),
    "movingavg": dict(T=20, D=2),
    "delaysum": dict(T=40, D=2),
    "narma10": dict(T=40, D=2),
    "narma20": dict(T=50, D=2),
}


def _narma_reference(u, order, tanh):
    y = [0.0]
    for n in range(len(u)):
        s = sum(y[n - i] for i in range(order) if n - i >= 0)
        ul = u[n - order + 1] if n - order + 1 >= 0 else 0.0
        v = 0.3 * y[n] + 0.05 * y[n] * s + 1.5 * ul * u[n] + 0.1
        y.append(np.tanh(v) if tanh else v)
    return np.array(y)


# ---------------------------------------------------------------------------- NARMA
def _narma_ref(u, order, tanh):
    n, B = u.shape
    y = np.zeros((n + 1, B))
    for i in range(n):
        win = y[max(0, i - order + 1): i + 1].sum(axis=0)
        ul = u[i - order + 1] if i >= order - 1 else 0.0
        v = 0.3 * y[i] + 0.05 * y[i] * win + 1.5 * ul * u[i] + 0.1
        y[i + 1] = np.tanh(v) if tanh else v
    return y


def test_task_list():
    assert tasks.TASKS == ["multilag", "sinmix", "adding", "recall", "ar2", "ar2_observed",
                           "movingavg", "delaysum", "narma10", "narma20"]


# ----------------------------------------------------------------------------------------------
# as_generator
# ----------------------------------------------------------------------------------------------


def test_as_generator_seed_sequence_and_generator():
    a = tasks.as_generator(np.random.SeedSequence(5)).integers(0, 10**9, 4)
    np.testing.assert_array_equal(a, np.random.default_rng(5).integers(0, 10**9, 4))
    g = np.random.default_rng(1)
    assert tasks.as_generator(g) is g


# ----------------------------------------------------------------------------------------------
# multilag_r2_ceiling
# ----------------------------------------------------------------------------------------------


def test_multilag_r2_ceiling_by_hand_and_simulation():
    """R²* = 1 − T σ_y² / Σ_t Var y_t (issue 33 item 5): by hand, and against the exact predictor's
    R² on simulated data."""
    from lwsim.tasks import multilag_r2_ceiling
    # T = 4, lags (1, 2), c (1, 1), σ_y = 1: Var y_t = 1, 2, 3, 3 → R²* = 1 − 4/9
    assert multilag_r2_ceiling(4, [1, 2], [1.0, 1.0], 1.0) == pytest.approx(5 / 9, abs=1e-15)
    assert multilag_r2_ceiling(4, [1], [1.0], 0.0) == 1.0
    # simulation: the exact predictor on 4000 sequences of the quick preset's task
    T, lags, coefs, sy = 256, [8, 16, 32, 48, 64], [0.6, 0.5, 0.4, 0.32, 0.26], 0.3
    task = tasks.make("multilag", T=T, D=8, seed=212, lags=lags, coefs=coefs, sigma_y=sy)
    x, y = task.batch(4000, 1)
    proj = x @ task.u
    pred = np.zeros_like(proj)
    for lag, c in zip(lags, coefs):
        pred[lag:] += c * proj[:-lag]
    y = y.reshape(proj.shape)
    sim = 1 - np.sum((pred - y) ** 2) / np.sum((y - y.mean()) ** 2)
    ceiling = multilag_r2_ceiling(T, lags, coefs, sy)
    assert ceiling == pytest.approx(0.90497, abs=1e-5)
    assert abs(sim - ceiling) < 2e-3
    with pytest.raises(ValueError, match="sigma_y"):
        multilag_r2_ceiling(T, lags, coefs, -1.0)
    with pytest.raises(ValueError, match="coefs has 1 entries"):
        multilag_r2_ceiling(T, lags, [1.0], 0.3)


# ---------------------------------------------------------------------------- r² ceiling
def test_r2_ceiling_by_hand():
    # T = 1, lag 1 never present: R² = 1 − σ²/σ² = 0 (σ = 1: Σ Var = 1)
    assert tasks.multilag_r2_ceiling(1, (1,), (1.0,), 1.0) == 0.0
    assert tasks.multilag_r2_ceiling(1, (1,), (1.0,), 0.5) == 0.0
    # T = 3, lag 1, c = 2, σ = 1: Var = 1, 5, 5 → 1 − 3/11
    assert tasks.multilag_r2_ceiling(3, (1,), (2.0,), 1.0) == pytest.approx(8 / 11)


# ----------------------------------------------------------------------------------------------
# _narma_recursion
# ----------------------------------------------------------------------------------------------


def test_narma_recursion_overflow_is_silent():
    # private: the tasks draw u in [0, 0.5]; no input reaching make/batch makes the recursion overflow
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = tasks._narma_recursion(np.full((60, 2), 1e100), 10, False)        # overflow to +inf
        alt = 1e200 * (-1.0) ** np.arange(30)[:, None] * np.ones((1, 2))      # u_{i−9}·u_i < 0: −inf, then NaN
        z = tasks._narma_recursion(alt, 10, False)
    assert not np.isfinite(y[-1]).any() and np.isnan(z[-1]).all()


# ----------------------------------------------------------------------------------------------
# _prep_narma
# ----------------------------------------------------------------------------------------------


def test_prep_narma_params():
    # private: _prep_narma(order) runs at import (tasks._SPECS), where mutmut cannot mutate it
    kw = dict(tanh=None, burn_in=0, diverge_at=3, resample=0, inputs="author")
    assert tasks._prep_narma(10)(5, 2, kw) == {"order": 10, "tanh": False, "burn_in": 0, "diverge_at": 3.0,
                                               "resample": False, "inputs": "author"}
    assert tasks._prep_narma(20)(5, 2, kw)["tanh"] is True
    assert tasks._prep_narma(19)(5, 2, kw)["tanh"] is False
    assert tasks._prep_narma(20)(5, 2, dict(kw, tanh=0, burn_in=4, resample=1))["tanh"] is False
    assert tasks._prep_narma(10)(5, 2, dict(kw, tanh=1, burn_in=4, resample=1)) == {
        "order": 10, "tanh": True, "burn_in": 4, "diverge_at": 3.0, "resample": True, "inputs": "author"}
    with pytest.raises(ValueError, match=r"\bburn_in\b.*>= 0"):
        tasks._prep_narma(10)(5, 2, dict(kw, burn_in=-1))
    with pytest.raises(ValueError, match=r"\binputs\b"):
        tasks._prep_narma(10)(5, 2, dict(kw, inputs="x"))


# ----------------------------------------------------------------------------------------------
# Dataset
# ----------------------------------------------------------------------------------------------


def test_dataset_streams_sizes_and_config():
    task = tasks.make("adding", T=5, D=2, seed=3, dtype="float32")
    ds = task.dataset(1, 1, 1)
    assert (ds.n_train, ds.n_val, ds.n_diag, ds.seed) == (1, 1, 1, 3)
    kids = np.random.SeedSequence([3, 0xDA7A]).spawn(3)
    for split, ss in zip(("train", "val", "diag"), kids):
        x_ref, _ = task.batch(1, np.random.default_rng(ss))
        np.testing.assert_array_equal(getattr(ds, "x_" + split), x_ref)
    ds = task.dataset(0, 1, 1)                                  # only val and diag
    assert (ds.n_train, ds.n_val, ds.n_diag) == (0, 1, 1)
    ds = task.dataset(2, seed=4)
    assert ds.x_val.shape == (5, 0, 2) and ds.y_val.shape == (5, 0, 1)
    assert ds.x_val.dtype == ds.y_val.dtype == np.float32 and ds.n_diag == 0
    ds.info["k"] = 1
    assert ds.config() == {"n_train": 2, "n_val": 0, "n_diag": 0, "seed": 4, "readout": "last",
                           "task": {"name": "adding", "T": 5, "D": 2, "seed": 3, "dtype": "float32",
                                    "fill": "zero"}, "k": 1}
    plain = tasks.Dataset(np.zeros((4, 2, 1)), np.zeros((4, 2)))
    assert plain.config() == {"n_train": 2, "n_val": 0, "n_diag": 0, "seed": None, "readout": "every"}


def test_dataset_from_arrays():
    x, y2 = np.zeros((4, 3, 2)), np.ones((4, 3))
    ds = tasks.Dataset(x, y2, x_diag=x, y_diag=y2)
    assert ds.y_train.shape == (4, 3, 1) and ds.y_diag.shape == (4, 3, 1)
    assert (ds.n_val, ds.n_diag, ds.T, ds.D) == (0, 3, 4, 2)
    with pytest.raises(ValueError, match=r"\bval\b.*both"):
        tasks.Dataset(x, y2, x_val=x)
    with pytest.raises(ValueError, match=r"\bx_diag\b"):
        tasks.Dataset(x, y2, x_diag=x[:, :, 0], y_diag=y2)
    with pytest.raises(ValueError, match=r"\by_train\b"):
        tasks.Dataset(x, np.ones((4, 2, 1)))
    with pytest.raises(ValueError, match=r"\breadout\b"):
        tasks.Dataset(x, y2, readout="x")


# ----------------------------------------------------------------------------------------------
# make
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", tasks.TASKS)
def test_shapes_dtype_determinism(name):
    task = tasks.make(name, seed=3, **SMALL[name])
    T, D = SMALL[name]["T"], SMALL[name]["D"]
    x, y = task.batch(5, 11)
    assert x.shape == (T, 5, D) and y.shape == (T, 5, 1)
    assert x.dtype == np.float64 and y.dtype == np.float64
    assert np.all(np.isfinite(x)) and np.all(np.isfinite(y))
    x2, y2 = task.batch(5, np.random.default_rng(11))
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    x3, _ = task.batch(5, 12)
    assert not np.array_equal(x, x3)
    xf, yf = tasks.make(name, seed=3, dtype="float32", **SMALL[name]).batch(5, 11)
    assert xf.dtype == np.float32 and yf.dtype == np.float32
    np.testing.assert_allclose(xf, x, rtol=1e-6, atol=1e-7)
    if task.readout == "last":
        assert np.all(y[:-1] == 0.0)
        _, yr = tasks.make(name, seed=3, fill="running", **SMALL[name]).batch(5, 11)
        np.testing.assert_array_equal(yr[-1], y[-1])
    else:
        assert name in ("multilag", "sinmix")


def test_generator_is_advanced():
    task = tasks.make("adding", T=10, D=2)
    rng = np.random.default_rng(0)
    x1, _ = task.batch(3, rng)
    x2, _ = task.batch(3, rng)
    assert not np.array_equal(x1, x2)


# ---- [A] tasks -------------------------------------------------------------------------------
def test_multilag_target_recomputed():
    kw = dict(T=40, D=4, lags=(0, 3, 17), coefs=(0.2, -1.0, 0.5))
    task = tasks.make("multilag", seed=5, sigma_y=0.0, **kw)
    u = task.u
    assert u.shape == (4,) and np.linalg.norm(u) == pytest.approx(1.0, abs=1e-14)
    x, y = task.batch(6, 0)
    for t in range(40):
        for b in range(6):
            expected = sum(c * float(u @ x[t - lag, b]) for lag, c in zip(kw["lags"], kw["coefs"]) if t - lag >= 0)
            assert y[t, b, 0] == pytest.approx(expected, abs=1e-12)
    # noise: residual has std sigma_y
    noisy = tasks.make("multilag", seed=5, sigma_y=0.3, **kw)
    xn, yn = noisy.batch(400, 1)
    proj = xn @ u
    clean = np.zeros_like(proj)
    for lag, c in zip(kw["lags"], kw["coefs"]):
        clean[lag:] += c * proj[: 40 - lag]
    assert np.std(yn[:, :, 0] - clean) == pytest.approx(0.3, rel=0.03)


def test_multilag_u_fixed_by_task_seed():
    a = tasks.make("multilag", T=20, D=5, lags=(2,), coefs=(1.0,), seed=1)
    b = tasks.make("multilag", T=20, D=5, lags=(2,), coefs=(1.0,), seed=1)
    c = tasks.make("multilag", T=20, D=5, lags=(2,), coefs=(1.0,), seed=2)
    np.testing.assert_array_equal(a.u, b.u)
    assert not np.allclose(a.u, c.u)
    ds1, ds2 = a.dataset(4, 2, 3, seed=10), a.dataset(4, 2, 3, seed=20)
    assert not np.array_equal(ds1.x_train, ds2.x_train)
    for ds in (ds1, ds2):  # every split uses the task's u
        for x, y in (ds.train, ds.val, ds.diag):
            resid = y[2:, :, 0] - (x @ a.u)[:-2]
            assert np.std(resid) < 0.5  # only the sigma_y = 0.3 noise is left
            assert np.std(y[2:, :, 0] - (x @ c.u)[:-2]) > 0.6  # another u does not explain y


def test_multilag_defaults_are_the_paper_values():
    task = tasks.make("multilag")
    assert (task.T, task.D) == (1024, 16)
    assert task.params["lags"] == (32, 64, 128, 192, 256)
    assert task.params["coefs"] == (0.6, 0.5, 0.4, 0.32, 0.26)
    assert task.params["sigma_y"] == 0.3


def test_sinmix_inputs_and_target():
    task = tasks.make("sinmix", T=120, D=3, seed=4, noise=0.0, sigma_y=0.0)
    x, y = task.batch(4, 2)
    # noiseless inputs are sums of the 5 harmonics of period 50: periodic and bounded
    np.testing.assert_allclose(x[50:], x[:-50], atol=1e-12)
    assert np.max(np.abs(x)) <= sum(1.0 / k for k in range(1, 6)) + 1e-12
    # fit Σ a_k sin + b_k cos for one channel: residual zero
    t = np.arange(120)
    basis = np.concatenate([[np.sin(2 * np.pi * k * t / 50), np.cos(2 * np.pi * k * t / 50)] for k in range(1, 6)]).T
    coef, *_ = np.linalg.lstsq(basis, x[:, 1, 2], rcond=None)
    np.testing.assert_allclose(basis @ coef, x[:, 1, 2], atol=1e-10)
    amp = np.hypot(coef[0::2], coef[1::2])
    np.testing.assert_allclose(amp, 1.0 / np.arange(1, 6), rtol=1e-9)
    for tt in range(120):
        expected = sum(c * np.tanh(x[tt - lag] @ task.u) for lag, c in zip((5, 20, 50), (1.0, 0.5, 0.25)) if tt - lag >= 0)
        np.testing.assert_allclose(y[tt, :, 0], expected, atol=1e-12)


# ---- [B] tasks -------------------------------------------------------------------------------
def test_adding_marks_and_target():
    T, D, B = 21, 3, 200
    x, y = tasks.make("adding", T=T, D=D).batch(B, 7)
    marks = x[:, :, D - 1]
    assert set(np.unique(marks)) <= {0.0, 1.0}
    half = T // 2
    assert np.all(marks[:half].sum(axis=0) == 1) and np.all(marks[half:].sum(axis=0) == 1)
    vals = x[:, :, : D - 1]
    assert vals.min() >= 0 and vals.max() < 1
    for b in range(B):
        idx = np.flatnonzero(marks[:, b])
        assert y[T - 1, b, 0] == pytest.approx(x[idx[0], b, 0] + x[idx[1], b, 0], abs=1e-15)
    # positions cover both halves
    first = np.argmax(marks[:half], axis=0)
    assert first.min() == 0 and first.max() == half - 1
    _, yr = tasks.make("adding", T=T, D=D, fill="running").batch(B, 7)
    for t in (0, 5, half, T - 1):
        np.testing.assert_allclose(yr[t, :, 0], np.sum(x[: t + 1, :, 0] * marks[: t + 1], axis=0), atol=1e-14)


def test_recall_marks_and_target():
    T, D, B = 30, 3, 50
    x, y = tasks.make("recall", T=T, D=D).batch(B, 1)
    marks = x[:, :, -1]
    assert np.all(marks.sum(axis=0) == 5)
    assert np.all(marks[T // 3:] == 0)
    for b in range(B):
        idx = np.flatnonzero(marks[:, b])
        assert len(idx) == 5
        assert y[-1, b, 0] == pytest.approx(x[idx, b, 0].sum(), abs=1e-14)
    _, yk = tasks.make("recall", T=T, D=D, K=2).batch(B, 1)
    assert not np.allclose(yk[-1], y[-1])


def test_ar2_recursion():
    T, B = 60, 3000
    task = tasks.make("ar2_observed", T=T, D=2, fill="running")
    x, y = task.batch(B, 5)
    z = np.concatenate([x[:, :, 0], y[-1:, :, 0]])  # z_0..z_T
    np.testing.assert_array_equal(y[:-1, :, 0], x[1:, :, 0])  # running target z_{t+1}
    resid = z[2:] - 1.6 * z[1:-1] + 0.7 * z[:-2]
    assert abs(resid.mean()) < 0.002
    assert resid.std() == pytest.approx(0.05, rel=0.02)
    # stationary after burn-in: std of z about 0.05 * sqrt(1.7 / (0.3 * 0.33)) = 0.207
    assert z[0].std() == pytest.approx(0.05 * np.sqrt(1.7 / (0.3 * 0.33)), rel=0.06)
    # noise = 0: z stays 0
    _, y0 = tasks.make("ar2_observed", T=T, D=2, noise=0.0).batch(4, 5)
    assert np.all(y0 == 0)
    # ar2 (control): same z as ar2_observed for the same draw, inputs independent of it
    xc, yc = tasks.make("ar2", T=T, D=2, fill="running").batch(B, 5)
    np.testing.assert_array_equal(yc, y)
    np.testing.assert_array_equal(xc[:, :, 1], x[:, :, 1])
    assert abs(np.corrcoef(xc[-1, :, 0], yc[-1, :, 0])[0, 1]) < 0.1
    assert abs(np.corrcoef(xc[-1, :, 0], xc[-2, :, 0])[0, 1]) < 0.1


def test_movingavg_target():
    T, W = 20, 8
    x, y = tasks.make("movingavg", T=T, D=2, fill="running").batch(10, 3)
    np.testing.assert_allclose(y[-1, :, 0], x[T - W:, :, 0].mean(axis=0), atol=1e-15)
    for t in range(T):
        np.testing.assert_allclose(y[t, :, 0], x[max(0, t - W + 1): t + 1, :, 0].sum(axis=0) / W, atol=1e-14)
    x3, y3 = tasks.make("movingavg", T=T, D=2, W=3).batch(10, 3)
    np.testing.assert_allclose(y3[-1, :, 0], x3[T - 3:, :, 0].mean(axis=0), atol=1e-15)


def test_delaysum_target():
    T = 40
    x, y = tasks.make("delaysum", T=T, D=3, fill="running").batch(10, 3)
    np.testing.assert_allclose(
        y[-1, :, 0], 0.25 * (x[T - 5, :, 0] + x[T - 13, :, 0] + x[T - 25, :, 0] + x[T - 37, :, 0]), atol=1e-15)
    for t in range(T):
        expected = sum(0.25 * x[t - d, :, 0] for d in (4, 12, 24, 36) if t - d >= 0)
        np.testing.assert_allclose(y[t, :, 0], expected, atol=1e-15)
    x2, y2 = tasks.make("delaysum", T=T, D=3, delays=(0, 2), weights=(1.0, -2.0)).batch(10, 3)
    np.testing.assert_allclose(y2[-1, :, 0], x2[-1, :, 0] - 2 * x2[-3, :, 0], atol=1e-15)


@pytest.mark.parametrize("name,order,tanh", [("narma10", 10, False), ("narma20", 20, True)])
def test_narma_recursion(name, order, tanh):
    T = 50
    task = tasks.make(name, T=T, D=2, fill="running")
    assert task.params["tanh"] == tanh
    x, y = task.batch(6, 9)
    u = x[:, :, 0]
    assert u.min() >= 0 and u.max() < 0.5
    for b in range(6):
        ref = _narma_reference(u[:, b], order, tanh)
        np.testing.assert_allclose(y[:, b, 0], ref[1:], rtol=1e-12, atol=1e-14)


def test_narma10_resamples_diverging_sequences():
    task = tasks.make("narma10", T=400, D=1, fill="running")
    x, y = task.batch(3000, 0)  # ~0.1% of such sequences diverge and get redrawn
    assert np.abs(y).max() <= 10
    bad = tasks.make("narma10", T=400, D=1, resample=False)
    with pytest.raises(FloatingPointError, match="diverged"):
        bad.batch(3000, 0)
    # redrawn sequences still satisfy the recursion
    worst = int(np.argmax(np.abs(y).max(axis=0)[:, 0]))
    ref = _narma_reference(x[:, worst, 0], 10, False)
    np.testing.assert_allclose(y[:, worst, 0], ref[1:], rtol=1e-10)


# ---- datasets ----------------------------------------------------------------------------------
def test_dataset_splits():
    task = tasks.make("multilag", T=30, D=2, lags=(1, 4), coefs=(1.0, 0.5), seed=9)
    ds = task.dataset(8, 4, 5)
    assert (ds.n_train, ds.n_val, ds.n_diag) == (8, 4, 5)
    assert ds.x_train.shape == (30, 8, 2) and ds.y_diag.shape == (30, 5, 1)
    ds_again = task.dataset(8, 4, 5)
    np.testing.assert_array_equal(ds.x_val, ds_again.x_val)
    ds_big = task.dataset(20, 4, 5)  # other splits do not move when n_train changes
    np.testing.assert_array_equal(ds.x_val, ds_big.x_val)
    np.testing.assert_array_equal(ds.x_diag, ds_big.x_diag)
    assert not np.array_equal(ds.x_train, ds.x_val[:, :4].repeat(2, axis=1))
    assert ds.readout == "every" and ds.task is task
    assert task.dataset(3, 0, 0).n_val == 0
    assert tasks.make("adding", T=10, D=2).dataset(3, 2).readout == "last"
    cfg = task.config()
    assert tasks.from_config(cfg).config() == cfg
    np.testing.assert_array_equal(tasks.from_config(cfg).u, task.u)


# ---- errors ----------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(ValueError, match="unknown task 'addition'.*multilag, sinmix, adding"):
        tasks.make("addition")
    with pytest.raises(ValueError, match="T must be >= 1"):
        tasks.make("adding", T=0)
    with pytest.raises(ValueError, match="D >= 2"):
        tasks.make("adding", D=1)
    with pytest.raises(ValueError, match="lags 256 >= T=20"):
        tasks.make("multilag", T=20)
    with pytest.raises(ValueError, match="coefs has 1 entries but 2"):
        tasks.make("multilag", T=20, lags=(1, 2), coefs=(1.0,))
    with pytest.raises(TypeError, match="unknown keyword"):
        tasks.make("adding", lags=(1,))
    with pytest.raises(ValueError, match="T//3 >= K"):
        tasks.make("recall", T=12)
    with pytest.raises(ValueError, match="delays 36 >= T=30"):
        tasks.make("delaysum", T=30)
    with pytest.raises(ValueError, match="W <= T"):
        tasks.make("movingavg", T=5)
    with pytest.raises(ValueError, match="dtype"):
        tasks.make("adding", dtype="int32")
    with pytest.raises(ValueError, match="fill"):
        tasks.make("adding", fill="ones")
    task = tasks.make("adding", T=10, D=2)
    with pytest.raises(ValueError, match="B must be >= 1"):
        task.batch(0, 1)
    with pytest.raises(TypeError, match="seed"):
        task.batch(2, None)
    with pytest.raises(TypeError, match="seed"):
        task.batch(2, "abc")
    with pytest.raises(ValueError, match="at least one"):
        task.dataset(0, 0, 0)
    with pytest.raises(ValueError, match="n_train must be >= 0"):
        task.dataset(-1, 1)


# ---------------------------------------------------------------------------- messages, bounds
@pytest.mark.parametrize("call,exc,msg", [
    (lambda: tasks.as_generator(True), TypeError, r"\bseed\b.*\bTrue\b"),
    (lambda: tasks.as_generator(None), TypeError, r"\bseed\b.*\bNone\b"),
    (lambda: tasks.as_generator(-1), ValueError, r"\bseed\b.*>= 0"),
    (lambda: tasks.as_generator("3"), TypeError,
     r"\bseed\b.*\bstr\b"),
    (lambda: tasks.make("multilag", T=2.5), TypeError, r"\bT\b"),
    (lambda: tasks.make("multilag", T=True), TypeError, r"\bT\b"),
    (lambda: tasks.make("multilag", D=0), ValueError, r"\bD\b.*>= 1"),
    (lambda: tasks.make("multilag", seed=-1), ValueError, r"\bseed\b.*>= 0"),
    (lambda: tasks.make("multilag", lags=5), TypeError, r"\blags\b"),
    (lambda: tasks.make("multilag", lags=()), ValueError, r"\blags\b.*empty"),
    (lambda: tasks.make("multilag", T=10, lags=(1, 2.5), coefs=(1, 1)), TypeError,
     r"\blags\[1\]"),
    (lambda: tasks.make("multilag", T=10, lags=(1,), coefs=5), TypeError,
     r"\bcoefs\b"),
    (lambda: tasks.make("multilag", T=10, lags=(1,), coefs=(np.nan,)), ValueError, r"\bcoefs\b.*finite"),
    (lambda: tasks.make("multilag", T=5, lags=(5,), coefs=(1.0,)), ValueError, r"\blags 5 >= T=5\b"),
    (lambda: tasks.make("multilag", T=10, lags=(1,), coefs=(1,), sigma_y=-1), ValueError,
     r"\bsigma_y\b"),
    (lambda: tasks.make("sinmix", T=10, lags=()), ValueError, r"\blags\b.*empty"),
    (lambda: tasks.make("sinmix", T=10, lags=(1,), coefs=(1, 2)), ValueError, r"\bcoefs\b.*2 entries"),
    (lambda: tasks.make("sinmix", T=5, lags=(5,), coefs=(1,)), ValueError, r"\blags 5 >= T=5\b"),
    (lambda: tasks.make("sinmix", period=0), ValueError, r"\bperiod\b.*> 0"),
    (lambda: tasks.make("sinmix", sigma_y=-1), ValueError, r"\bsigma_y\b"),
    (lambda: tasks.make("sinmix", noise=-1), ValueError, r"\bnoise\b"),
    (lambda: tasks.make("sinmix", n_harmonics=0), ValueError, r"\bn_harmonics\b.*>= 1"),
    (lambda: tasks.make("adding", T=1, D=2), ValueError, r"\bT >= 2\b"),
    (lambda: tasks.make("recall", K=0), ValueError, r"\bK\b.*>= 1"),
    (lambda: tasks.make("ar2", inputs="x"), ValueError, r"\binputs\b"),
    (lambda: tasks.make("ar2", phi=(1.0,)), ValueError, r"\bphi\b"),
    (lambda: tasks.make("ar2", noise=-1), ValueError, r"\bnoise\b"),
    (lambda: tasks.make("ar2", burn_in=-1), ValueError, r"\bburn_in\b.*>= 0"),
    (lambda: tasks.make("movingavg", W=0), ValueError, r"\bW\b.*>= 1"),
    (lambda: tasks.make("movingavg", T=20, W=21), ValueError, r"\bW <= T\b"),
    (lambda: tasks.make("delaysum", delays=()), ValueError, r"\bdelays\b.*empty"),
    (lambda: tasks.make("delaysum", weights=(1.0,)), ValueError, r"\bweights\b"),
    (lambda: tasks.make("delaysum", T=40, delays=(40,)), ValueError, r"\bdelays 40 >= T=40\b"),
    (lambda: tasks.make("narma10", burn_in=-1), ValueError, r"\bburn_in\b.*>= 0"),
    (lambda: tasks.make("adding", dtype="foo"), ValueError, r"\bdtype\b"),
    (lambda: tasks.make("adding", foo=1), TypeError, r"accepted: none \(plus T, D, seed, dtype, fill\)$"),
    (lambda: tasks.make("multilag", foo=1), TypeError,
     r"accepted: \['coefs', 'lags', 'sigma_y'\] \(plus T, D, seed, dtype, fill\)$"),
    (lambda: tasks.make("adding", T=5).batch(0, 0), ValueError, r"\bbatch size B\b"),
    (lambda: tasks.make("adding", T=5).dataset(0), ValueError,
     r"at least one sequence"),
    (lambda: tasks.make("adding", T=5).dataset(1, -1), ValueError, r"\bn_val\b.*>= 0"),
    (lambda: tasks.make("adding", T=5).dataset(1, 0, -1), ValueError, r"\bn_diag\b.*>= 0"),
    (lambda: tasks.make("adding", T=5).dataset(1, seed=-1), ValueError, r"\bseed\b.*>= 0"),
    (lambda: tasks.multilag_r2_ceiling(0, (1,), (1.0,), 0.1), ValueError, r"\bT\b.*>= 1"),
    (lambda: tasks.multilag_r2_ceiling(3, (), (), 0.1), ValueError, r"\blags\b.*empty"),
    (lambda: tasks.multilag_r2_ceiling(3, (1,), (1.0,), -1), ValueError, r"\bsigma_y\b"),
    (lambda: tasks.multilag_r2_ceiling(2, (5,), (1.0,), 0), ValueError,
     r"identically 0"),
    (lambda: tasks.fixed_batch("adding", 2, 0), TypeError, r"\btask\b"),
    (lambda: tasks.fixed_batch(tasks.make("adding", T=5), 0, 0), ValueError, r"\bB\b.*>= 1"),
    (lambda: tasks.fixed_batch(tasks.make("adding", T=5), 2, 0, jitter=-1), ValueError, r"\bjitter\b"),
    (lambda: tasks.fixed_batch(tasks.make("adding", T=5), 2, 0).batch(3, 0), ValueError,
     r"\bB=3\b"),
])
def test_messages(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_boundaries_that_are_accepted():
    assert tasks.make("sinmix", T=10, lags=(0,), coefs=(1.0,)).params["lags"] == (0,)   # lag 0 allowed
    assert tasks.make("sinmix", period=0.5, n_harmonics=1).params["period"] == 0.5
    assert tasks.make("adding", T=2, D=2).batch(1, 0)[0].shape == (2, 1, 2)
    assert tasks.make("recall", T=9, D=2, K=3).params == {"K": 3}          # T//3 = K
    assert tasks.make("recall", T=9, D=2, K=1).params == {"K": 1}
    assert tasks.make("movingavg", T=20, W=20).params["W"] == 20
    assert tasks.make("movingavg", T=20, W=1).params["W"] == 1
    assert tasks.make("ar2", burn_in=0).params["burn_in"] == 0
    assert tasks.make("multilag", T=10, lags=(9,), coefs=(1.0,)).params["lags"] == (9,)
    assert tasks.make("adding").seed == 0 and tasks.make("adding").u is None
    assert tasks.make("multilag").u.shape == (16,)


# ---------------------------------------------------------------------------- draws in documented order
def test_multilag_noise_is_added_after_the_inputs():
    T, B, D = 6, 3, 2
    task = tasks.make("multilag", T=T, D=D, lags=(1, 3), coefs=(0.5, -1.0), sigma_y=0.3, seed=4)
    x, y = task.batch(B, 7)
    rng = np.random.default_rng(7)
    x_ref = rng.standard_normal((T, B, D))
    noise = rng.standard_normal((T, B))
    z = x_ref @ task.u
    y_ref = 0.3 * noise
    y_ref[1:] += 0.5 * z[:-1]
    y_ref[3:] += -1.0 * z[:-3]
    np.testing.assert_array_equal(x, x_ref)
    np.testing.assert_allclose(y[:, :, 0], y_ref, rtol=0, atol=1e-14)
    # the task's u: a unit vector from the task seed's own stream (SeedSequence([seed, 0x7A5C]))
    u = np.random.default_rng(np.random.SeedSequence([4, 0x7A5C])).standard_normal(D)
    np.testing.assert_allclose(task.u, u / np.linalg.norm(u), rtol=1e-15)


def test_noise_free_tasks_draw_no_noise():
    """σ_y = 0 (and sinmix noise = 0) consume no draws: a Generator is advanced by the inputs only."""
    T, B, D = 5, 2, 2
    rng = np.random.default_rng(3)
    tasks.make("multilag", T=T, D=D, lags=(1,), coefs=(1.0,), sigma_y=0.0).batch(B, rng)
    ref = np.random.default_rng(3)
    ref.standard_normal((T, B, D))
    assert rng.random() == ref.random()
    rng = np.random.default_rng(3)
    tasks.make("sinmix", T=T, D=D, lags=(1,), coefs=(1.0,), sigma_y=0.0, noise=0.0, n_harmonics=2).batch(B, rng)
    ref = np.random.default_rng(3)
    ref.uniform(0.0, 2 * np.pi, size=(B, D, 2))
    assert rng.random() == ref.random()


@pytest.mark.parametrize("noise,sigma_y", [(0.05, 0.01), (0.0, 0.2), (2.0, 1.5)])
def test_sinmix_recomputed(noise, sigma_y):
    T, B, D, K, period = 30, 3, 2, 3, 7.0
    task = tasks.make("sinmix", T=T, D=D, lags=(2, 5), coefs=(1.0, -0.5), sigma_y=sigma_y, noise=noise,
                      period=period, n_harmonics=K, seed=1)
    x, y = task.batch(B, 9)
    rng = np.random.default_rng(9)
    ph = rng.uniform(0.0, 2 * np.pi, size=(B, D, K))
    t = np.arange(T)[:, None, None]
    x_ref = sum(np.sin(2 * np.pi * k * t / period + ph[None, :, :, k - 1]) / k for k in range(1, K + 1))
    if noise:
        x_ref = x_ref + noise * rng.standard_normal((T, B, D))
    p = np.tanh(x_ref @ task.u)
    y_ref = sigma_y * rng.standard_normal((T, B))
    y_ref[2:] += p[:-2]
    y_ref[5:] += -0.5 * p[:-5]
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(y[:, :, 0], y_ref, rtol=0, atol=1e-12)
    assert ph.max() > 2 * np.pi - 1 and ph.min() < 1          # phases cover [0, 2π)


@pytest.mark.parametrize("inputs", ["lwsim", "author"])
@pytest.mark.parametrize("name", ["ar2", "ar2_observed"])
def test_ar2_recomputed(name, inputs):
    T, B, D, burn = 12, 4, 3, 5
    x, y = tasks.make(name, T=T, D=D, burn_in=burn, inputs=inputs, fill="running").batch(B, 2)
    rng = np.random.default_rng(2)
    eps = 0.05 * rng.standard_normal((burn + T + 1, B))
    z = np.zeros((burn + T + 1, B))
    for i in range(burn + T + 1):
        z[i] = (1.6 * z[i - 1] if i >= 1 else 0) - (0.7 * z[i - 2] if i >= 2 else 0) + eps[i]
    z = z[burn:]
    x_ref = rng.uniform(0, 1, (T, B, D)) if inputs == "author" else rng.standard_normal((T, B, D))
    if name == "ar2_observed":
        x_ref[:, :, 0] = z[:-1]
    np.testing.assert_allclose(y[:, :, 0], z[1:], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(x, x_ref)


def test_ar2_default_burn_in():
    assert tasks.make("ar2").params == {"phi": (1.6, -0.7), "noise": 0.05, "burn_in": 100, "inputs": "lwsim"}
    assert tasks.make("ar2", inputs="author").params["burn_in"] == 0
    assert tasks.make("ar2_observed", inputs="author", burn_in=7).params["burn_in"] == 7


@pytest.mark.parametrize("name", ["movingavg", "delaysum"])
def test_author_inputs_zero_the_extra_channels(name):
    T, B, D = 40, 50, 3
    xa, _ = tasks.make(name, T=T, D=D, inputs="author").batch(B, 0)
    xl, _ = tasks.make(name, T=T, D=D).batch(B, 0)
    assert np.all(xa[:, :, 1:] == 0.0) and xa[:, :, 0].min() > 0.0
    for x in (xa[:, :, :1], xl):            # U(0, 1): inside [0, 1), reaching both ends
        assert x.min() >= 0.0 and x.max() < 1.0 and x.min() < 0.01 and x.max() > 0.99
    assert np.unique(xl[:, :, 2]).size == T * B


def test_movingavg_running_target_by_hand():
    T, B, W = 7, 3, 3
    x, y = tasks.make("movingavg", T=T, D=2, W=W, fill="running").batch(B, 5)
    for t in range(T):
        ref = x[max(0, t - W + 1): t + 1, :, 0].sum(axis=0) / W
        np.testing.assert_allclose(y[t, :, 0], ref, rtol=1e-14)


def test_marks_values_are_uniform_draws():
    x, _ = tasks.make("adding", T=30, D=3).batch(20, 0)
    v = x[:, :, :2]
    assert np.unique(v).size == v.size and v.min() >= 0 and v.max() < 1


def test_recall_marks_fill_the_first_third():
    x, _ = tasks.make("recall", T=30, D=2, K=5).batch(200, 0)
    pos = np.nonzero(x[:, :, 1])[0]
    assert pos.max() == 9 and pos.min() == 0                  # [0, ⌊30/3⌋) = [0, 10)


def test_narma_resampled_sequences_satisfy_the_recursion():
    """narma20 (tanh) with diverge_at 0.4: some sequences are redrawn; every returned sequence
    follows the tanh recursion from its shown inputs, stays within 0.4, and its inputs are draws."""
    T, B = 20, 8
    x, y = tasks.make("narma20", T=T, D=3, diverge_at=0.4, fill="running").batch(B, 0)
    u = x[:, :, 0]
    np.testing.assert_allclose(y[:, :, 0], _narma_ref(u, 20, True)[1:], rtol=1e-13)
    assert np.abs(y).max() <= 0.4
    first = np.random.default_rng(0).uniform(0.0, 0.5, size=(T, B))
    redrawn = ~np.all(u == first, axis=0)
    assert redrawn.any()
    for b in np.flatnonzero(redrawn):
        assert np.unique(u[:, b]).size == T
    d = x[:, :, 1:]                                            # distractors U(0, 0.5)
    assert np.unique(d).size == d.size and d.max() < 0.5 and d.min() >= 0


def test_narma_author_inputs_and_threshold_inclusive():
    x, _ = tasks.make("narma10", T=10, D=3, inputs="author").batch(4, 0)
    assert np.all(x[:, :, 1:] == 0.0)
    # y_1 = 0.1 exactly (no lagged term yet): |y| = diverge_at is not divergence
    x, y = tasks.make("narma10", T=1, D=1, diverge_at=0.1, tanh=False).batch(2, 0)
    assert np.all(y[-1] == 0.1)


def test_narma_gives_up_after_50_redraws():
    T, B = 3, 2
    rng = np.random.default_rng(0)
    with pytest.raises(FloatingPointError,
                       match=r"\bstill 2 of 2 diverging\b"):
        tasks.make("narma10", T=T, D=1, diverge_at=0.01).batch(B, rng)
    ref = np.random.default_rng(0)
    for _ in range(51):                                        # the first draw and 50 redraws
        ref.uniform(0.0, 0.5, size=(T, B))
    assert rng.random() == ref.random()


# ---------------------------------------------------------------------------- Task, Dataset
def test_repr_and_config():
    assert repr(tasks.make("adding", T=5, D=2, seed=3)) == "Task('adding', T=5, D=2, seed=3, )"
    assert repr(tasks.make("movingavg", T=5, D=2, W=2)) == "Task('movingavg', T=5, D=2, seed=0, W=2, inputs='lwsim')"
    assert tasks.make("narma10", T=5, D=2).config() == {
        "name": "narma10", "T": 5, "D": 2, "seed": 0, "dtype": "float64", "fill": "zero", "tanh": False,
        "burn_in": 0, "diverge_at": 10.0, "resample": True, "inputs": "lwsim"}
    assert tasks.make("multilag", T=5, lags=(1, 2), coefs=(1, 2)).config()["lags"] == [1, 2]


def test_fixed_batch():
    base = tasks.make("adding", T=6, D=3, seed=2, dtype="float32", fill="running")
    fb = tasks.fixed_batch(base, 4, 9, jitter=0.5)
    assert isinstance(fb, tasks.Task)
    assert (fb.name, fb.T, fb.D, fb.seed, fb.dtype, fb.fill, fb.params, fb.readout) == \
        ("adding", 6, 3, 2, np.float32, "running", {}, "last")
    assert (fb.n, fb.jitter) == (4, 0.5)
    x0, y0 = base.batch(4, 9)
    np.testing.assert_array_equal(fb.x, x0)
    np.testing.assert_array_equal(fb.y, y0)
    x, y = fb.batch(4, 11)
    noise = np.random.default_rng(11).standard_normal(x0.shape)
    np.testing.assert_allclose(x, (x0 + 0.5 * noise).astype(np.float32), rtol=1e-6)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(y, y0)
    y[:] = 7.0                                                 # a copy: the fixed batch is unchanged
    np.testing.assert_array_equal(fb.batch(4, 11)[1], y0)
    d = tasks.fixed_batch(base, 4, 9)
    assert d.jitter == 1e-6 and np.abs(d.batch(4, 0)[0] - x0).max() < 1e-5
    m = tasks.fixed_batch(tasks.make("multilag", T=6, D=2, lags=(1,), coefs=(1.0,), seed=5), 2, 0)
    np.testing.assert_array_equal(m.u, tasks.make("multilag", T=6, D=2, lags=(1,), coefs=(1.0,), seed=5).u)


# ----------------------------------------------------------------------------- tasks
@pytest.mark.parametrize("name", ["movingavg", "delaysum", "narma10"])
def test_author_inputs_zero_extra_channels(name):
    a = tasks.make(name, T=40, D=4, inputs="author")
    l = tasks.make(name, T=40, D=4)
    xa, ya = a.batch(5, 3)
    xl, yl = l.batch(5, 3)
    assert np.all(xa[:, :, 1:] == 0) and np.all(xl[:, :, 1:] > 0)
    np.testing.assert_array_equal(xa[:, :, 0], xl[:, :, 0])
    np.testing.assert_array_equal(ya, yl)


def test_author_ar2():
    task = tasks.make("ar2", T=30, D=3, inputs="author")
    assert task.params["burn_in"] == 0 and tasks.make("ar2", T=30, D=3).params["burn_in"] == 100
    x, y = task.batch(4, 11)
    rng = np.random.default_rng(11)
    e = 0.05 * rng.standard_normal((31, 4))
    z = np.zeros((31, 4))
    z[0] = e[0]
    z[1] = 1.6 * z[0] + e[1]
    for t in range(1, 30):
        z[t + 1] = 1.6 * z[t] - 0.7 * z[t - 1] + e[t + 1]
    np.testing.assert_allclose(y[-1, :, 0], z[30], rtol=1e-12)
    np.testing.assert_array_equal(x, rng.uniform(0.0, 1.0, size=(30, 4, 3)))
    with pytest.raises(ValueError, match="inputs"):
        tasks.make("ar2", inputs="paper")


def test_fixed_batch_conventions_b():
    base = tasks.make("adding", T=10, D=3)
    fb = tasks.fixed_batch(base, 6, seed=5)
    x0, y0 = base.batch(6, 5)
    x1, y1 = fb.batch(6, 1)
    x2, _ = fb.batch(6, 2)
    np.testing.assert_array_equal(y1, y0)
    assert 0 < np.abs(x1 - x0).max() < 1e-5 and np.abs(x1 - x2).max() > 0
    with pytest.raises(ValueError, match="B"):
        fb.batch(5, 1)
