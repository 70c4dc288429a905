"""Tests of lwsim/diagnostics (laid out like the code: docs/testing.md).

Bad inputs raise ValueError/TypeError naming the argument.

The diagnostic pass streams over sequence chunks (docs/cluster.md): its peak working memory
does not grow with the number of diagnostic sequences beyond the per-sequence outputs
((K + 3) · n_lags values each), far below one (T, sequences, H) array."""


import gc
import tracemalloc

import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg

from cellcases import random_params


RNG = np.random.default_rng(60)


CELL = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)


P = random_params(CELL, 0)


X = RNG.standard_normal((6, 2, 2))


Y = RNG.standard_normal((6, 2, 1))


D = RNG.uniform(0.5, 0.9, (6, 2, 3))


R = 0.1 * RNG.standard_normal((6, 2, 3))


T, D_runner_memory, H, K = 96, 2, 8, 2


LAGS = [1, 2, 4, 8]


def peak_bytes(fn, B, chunk):
    cell = lwsim.make_cell("diaggate", D_runner_memory, H, layernorm=True, readout="every")
    params = cell.init_params(seed=0, scheme="paper_a", s0=0.05)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((T, B, D_runner_memory)), rng.standard_normal((T, B, 1))
    fn(cell, params, x[:, :4], y[:, :4], chunk)             # warm caches / imports outside the trace
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn(cell, params, x, y, chunk)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def matched(cell, params, x, y, chunk):
    return dg.matched_statistic(cell, params, x, y, 0.01, LAGS, n_directions=K, chunk=chunk,
                                backend="numpy", engine="numpy", progress=False)


def envelope(cell, params, x, y, chunk):
    return dg.envelope(cell, params, x, 0.01, LAGS, chunk=chunk, backend="numpy", engine="numpy",
                       progress=False)


# ----------------------------------------------------------------------------------------------
# envelope
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [matched, envelope])
def test_diagnostic_peak_memory_does_not_grow_with_sequences(fn):
    small, large = 32, 160
    grow = peak_bytes(fn, large, 8) - peak_bytes(fn, small, 8)
    outputs = 4 * (K + 3) * len(LAGS) * (large - small) * 8        # ψ per direction, samples, counts
    one_full_array = T * H * (large - small) * 8                    # what a non-streaming pass holds
    assert grow <= outputs + 32_000, (grow, outputs)
    assert outputs + 32_000 < one_full_array / 2


# ----------------------------------------------------------------------------------------------
# gamma
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call,exc,name", [
    (lambda: dg.gamma(D, R, 0), ValueError, "lags"),
    (lambda: dg.gamma(D, R, [2, 1]), ValueError, "lags"),
    (lambda: dg.gamma(D, R, [1.5]), TypeError, "lags"),
    (lambda: dg.gamma(D, R, "3"), TypeError, "lags"),
    (lambda: dg.gamma(D, R, 6), ValueError, "lags"),
    (lambda: dg.gamma(D, R, True), TypeError, "lags"),
    (lambda: dg.gamma(D, R, 2, order=2), ValueError, "order"),
    (lambda: dg.gamma(D, R, 2, engine="cuda"), ValueError, "engine"),
    (lambda: dg.gamma(D * 0, R, 2), ValueError, r"d \(the leak\)"),
    (lambda: dg.gamma(D, R[:, :1], 2), ValueError, "r must have"),
    (lambda: dg.gamma(D, None, 2), ValueError, "r is required"),
    (lambda: dg.gamma(D[0], R[0], 2), ValueError, "d must have"),
    (lambda: dg.envelope(CELL, P, X, 0.1, 2, chunk=0, progress=False), ValueError, "chunk"),
    (lambda: dg.envelope(CELL, P, X, 0.1, 2, progress="yes"), TypeError, "progress"),
    (lambda: dg.envelope(CELL, P, X, "adam", 2, progress=False), TypeError, "rates"),
    (lambda: dg.envelope(CELL, P, X, {k: 1.0 for k in P}, 2, progress=False), ValueError, "eta"),
    (lambda: dg.envelope(CELL, P, X, 0.1, 2, form="mean", progress=False), ValueError, "form"),
    (lambda: dg.envelope(CELL, P, X[0], 0.1, 2, progress=False), ValueError, "x must have"),
    (lambda: dg.envelope(CELL, P, X, 0.1, 9, progress=False), ValueError, "lags"),
    (lambda: dg.matched_statistic(CELL, P, X, Y, 0.1, 2, n_directions=0, progress=False), ValueError, "n_directions"),
    (lambda: dg.matched_statistic(CELL, P, X, Y, 0.1, 2, seed=-1, progress=False), ValueError, "seed"),
    (lambda: dg.matched_statistic(CELL, P, X, Y, 0.1, 2, orient="y", progress=False), TypeError, "orient"),
    (lambda: dg.matched_statistic(CELL, P, X, Y[:, :1], 0.1, 2, progress=False), ValueError, "y must have"),
    (lambda: dg.random_direction(P, keys=["nope"]), ValueError, "keys"),
    (lambda: dg.random_direction([1, 2]), TypeError, "params"),
    (lambda: dg.timescales([1, 2, 3], np.ones((4, 2))), ValueError, "m must have"),
    (lambda: dg.gradient_covariance_metrics(np.ones(5)), ValueError, "G must be"),
    (lambda: dg.jacobian_anisotropy(CELL, P, X, lags=(1,), progress=False), ValueError, "state size"),
    (lambda: dg.jacobian_anisotropy(CELL, P, X, lags=(1,), r=2, n_energy=3, n_samples=0, progress=False), ValueError, "n_samples"),
    (lambda: dg.frechet_from_split(np.zeros((2, 1, 3, 3)), np.zeros((2, 1, 2, 2))), ValueError, "A and B"),
    (lambda: dg.lr_profile(CELL, P, X, 6, progress=False), ValueError, "max_lag"),
    (lambda: dg.lr_profile(CELL, P, X, 2, trim=(0.9, 0.1), progress=False), ValueError, "trim"),
    (lambda: dg.envelope_fidelity(CELL, P, X, 0.1, 2, n_times=0, progress=False), ValueError, "n_times"),
    (lambda: dg.constgate_timescale(1.0), ValueError, "s must be"),
    (lambda: dg.lag_gradient_profile(CELL, P, X, Y, keys=["nope"]), ValueError, "keys"),
])
def test_bad_input_names_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_auto_chunk_size_and_results_independent_of_chunk():
    """chunk=None: the power of two below 2^19/(T·S), clipped to [16, 128]; same results as chunk 16."""
    # private: the chunk rule's own number is not reported by the diagnostics (their results are, below)
    from lwsim.diagnostics._util import check_chunk
    assert check_chunk(None, 256, 32) == 64                  # 2^19 / 8192 = 64
    assert check_chunk(None, 256, 48) == 32                  # 42.7 → 32
    assert check_chunk(None, 1536, 256) == 16                # 1.3 → floor 16
    assert check_chunk(None, 24, 6) == 128                   # 3640 → cap 128
    assert check_chunk(7, 256, 32) == 7
    with pytest.raises(ValueError, match="chunk"):
        check_chunk(0, 256, 32)
    import lwsim
    from lwsim import diagnostics as dg
    cell = lwsim.make_cell("gru", 3, 4, layernorm=True)
    p = cell.init_params(seed=1, scheme="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((12, 40, 3)), rng.standard_normal((12, 40, 1))
    a = dg.envelope(cell, p, x, 0.1, [1, 3], progress=False)             # auto: one chunk of 40
    b = dg.envelope(cell, p, x, 0.1, [1, 3], chunk=16, progress=False)
    np.testing.assert_allclose(a.f, b.f, rtol=1e-13)
    m1 = dg.matched_statistic(cell, p, x, y, 0.1, [1, 3], progress=False)
    m2 = dg.matched_statistic(cell, p, x, y, 0.1, [1, 3], chunk=16, progress=False)
    np.testing.assert_allclose(m1.samples, m2.samples, rtol=1e-12, atol=1e-15)
