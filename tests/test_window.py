"""Tests of lwsim/window.py (laid out like the code: docs/testing.md).

lwsim.window, the [A] window chain in one place (docs/statistics.md §3.3), and the nulls declared
in lwsim.stats.nulls: the figures' studies and lwsim.analyze give the same numbers under every
null, because both run this code."""


import numpy as np
import pytest

import lwsim
from lwsim import tasks, window
from lwsim.analyze import analyze
from lwsim.figures import training
from lwsim.stats.nulls import NULL_NAMES


LAGS = np.arange(1, 7)


N_GRID = [10, 100, 1000, 10000]


@pytest.fixture(scope="module")
def model():
    cell = lwsim.make_cell("gru", 3, 6, 1, layernorm=True)
    params = cell.init_params(seed=2, s0=0.3)
    task = tasks.make("multilag", T=14, D=3, seed=5, lags=(1, 3), coefs=(0.9, 0.6), sigma_y=0.3)
    ds = task.dataset(n_train=0, n_diag=60, seed=1)
    return cell, params, ds.x_diag, ds.y_diag


FIELDS = ("mean", "sigma", "alpha", "kappa", "n_hat", "n_star", "h_n", "reliable")


@pytest.mark.filterwarnings("ignore:only 60 diagnostic sequences", "ignore:n_grid. budgets up to")
def test_analyze_and_the_studies_give_the_same_window_under_every_null(model):
    cell, params, x, y = model
    c = {"lags": LAGS, "n_grid": N_GRID, "eps": 2.0, "K": 2, "seed": 3, "backend": "numba"}
    studies = training.a_windows(cell, params, 0.5, x, y, c, nulls=NULL_NAMES)
    report = analyze(cell, params, x, y, rates=0.5, lags=LAGS, n_grid=N_GRID, K=2, eps=2.0, seed=3,
                     nulls=NULL_NAMES, exact=False, progress=False)
    assert tuple(report.detection_nulls) == NULL_NAMES
    for null in NULL_NAMES:
        a, b = studies[null], report.detection_nulls[null]
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f"{null}.{f}")
    # and the nulls differ where they should: full tests against another noise, f32 is float32
    assert not np.array_equal(studies["full"].sigma, studies["lag"].sigma)
    assert not np.array_equal(studies["f32"].mean, studies["lag"].mean)
    np.testing.assert_array_equal(studies["author"].mean, studies["f32"].mean)      # same float32 pass


# ----------------------------------------------------------------------------------------------
# detect
# ----------------------------------------------------------------------------------------------


def test_detect_needs_the_float32_pass_for_the_float32_nulls(model):
    cell, params, x, y = model
    ms = lwsim.diagnostics.matched_statistic(cell, params, x, y, 0.5, LAGS, progress=False)
    for n in ("f32", "author"):
        with pytest.raises(ValueError, match="float32"):
            window.detect(ms, LAGS, N_GRID, (n,))
    with pytest.raises(ValueError, match="float32"):
        window.detect(ms, LAGS, N_GRID, ("lag",), diag32=True)
    with pytest.raises(ValueError, match="null: 'loose' is not one of lag, full"):
        window.detect(ms, LAGS, N_GRID, ("loose",))


def test_the_defaults_are_the_statistics_own(model):
    """window_chain and detect with their defaults give what matched_statistic and detection_table
    give with theirs (eps 20, n_boot 200, no floors, no cap, orient False, …): the chain adds no
    setting of its own."""
    cell, params, x, y = model
    ms = lwsim.diagnostics.matched_statistic(cell, params, x, y, 0.5, LAGS, progress=False, backend="numba")
    want = lwsim.stats.detection_table(ms.samples, LAGS, N_GRID)
    got = window.detect(ms, LAGS, N_GRID)["lag"]["auto"]
    chain = window.window_chain(cell, params, 0.5, x, y, LAGS, N_GRID)["lag"]
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(got, f), getattr(want, f), err_msg=f)
        np.testing.assert_array_equal(getattr(chain, f), getattr(want, f), err_msg=f)


# ----------------------------------------------------------------------------------------------
# window_chain
# ----------------------------------------------------------------------------------------------


def test_the_chain_and_its_windows(model):
    cell, params, x, y = model
    chain = window.window_chain(cell, params, 0.5, x, y, LAGS, N_GRID, nulls=("lag", "full"), K=2, seed=3, eps=2.0,
                                tail_methods=("auto", "mcculloch"))
    assert chain.nulls == ("lag", "full") and chain.matched32 is None            # no null needed float32
    w = chain["lag"]
    assert w.null == "lag" and set(w.tables) == {"auto", "mcculloch"} and w.table is w.tables["auto"]
    np.testing.assert_array_equal(w.f, chain.envelope.f)
    np.testing.assert_array_equal(w.n_hat, w.table.n_hat)
    assert w.h_n.shape == (len(N_GRID),)
    with pytest.raises(AttributeError):
        w.nothing
    # the envelope-free chain (A15, A16) gives the same tables
    alone = window.window_chain(cell, params, 0.5, x, y, LAGS, N_GRID, nulls=("lag",), envelope=False, K=2,
                                seed=3, eps=2.0)
    assert alone.envelope is None and alone["lag"].f is None
    np.testing.assert_array_equal(alone["lag"].n_hat, w.n_hat)


def test_the_window_reads_every_field_of_its_table_and_the_chain_keeps_its_float32_pass(model):
    cell, params, x, y = model
    chain = window.window_chain(cell, params, 0.5, x, y, LAGS, N_GRID, nulls=("lag", "author"), K=2, seed=3,
                                eps=2.0)
    w = chain["author"]
    for f in ("lags", "mean", "sigma", "alpha", "kappa", "n_hat", "n_star", "h_n", "n_grid", "reliable"):
        assert getattr(w, f) is getattr(w.table, f), f
    with pytest.raises(AttributeError, match="^nothing$"):
        w.nothing
    assert chain.matched32 is not None                        # the float32 pass the "author" table read
    assert not np.array_equal(chain.matched32.samples, chain.matched.samples)
    np.testing.assert_array_equal(w.mean, chain.matched32.samples.mean(axis=1))
