"""Task generators (docs/experiments.md §5.1): targets recomputed independently from the inputs."""

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


def test_task_list():
    assert tasks.TASKS == ["multilag", "sinmix", "adding", "recall", "ar2", "ar2_observed",
                           "movingavg", "delaysum", "narma10", "narma20"]


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


def _narma_reference(u, order, tanh):
    y = [0.0]
    for n in range(len(u)):
        s = sum(y[n - i] for i in range(order) if n - i >= 0)
        ul = u[n - order + 1] if n - order + 1 >= 0 else 0.0
        v = 0.3 * y[n] + 0.05 * y[n] * s + 1.5 * ul * u[n] + 0.1
        y.append(np.tanh(v) if tanh else v)
    return np.array(y)


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
