"""The diagnostic pass streams over sequence chunks (docs/cluster.md): its peak working memory
does not grow with the number of diagnostic sequences beyond the per-sequence outputs
((K + 3) · n_lags values each), far below one (T, sequences, H) array."""
import gc
import tracemalloc

import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim.figures import cost
from lwsim.figures.runner import Run

T, D, H, K = 96, 2, 8, 2
LAGS = [1, 2, 4, 8]


def peak_bytes(fn, B, chunk):
    cell = lwsim.make_cell("diaggate", D, H, layernorm=True, readout="every")
    params = cell.init_params(seed=0, scheme="paper_a", s0=0.05)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((T, B, D)), rng.standard_normal((T, B, 1))
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


@pytest.mark.parametrize("fn", [matched, envelope])
def test_diagnostic_peak_memory_does_not_grow_with_sequences(fn):
    small, large = 32, 160
    grow = peak_bytes(fn, large, 8) - peak_bytes(fn, small, 8)
    outputs = 4 * (K + 3) * len(LAGS) * (large - small) * 8        # ψ per direction, samples, counts
    one_full_array = T * H * (large - small) * 8                    # what a non-streaming pass holds
    assert grow <= outputs + 32_000, (grow, outputs)
    assert outputs + 32_000 < one_full_array / 2


def test_dry_run_peak_memory_bound_at_final_paper_size():
    """12000 diagnostic sequences × T 1536 × 192 lags × K 50: the model's diagnostic part is one
    chunk of factor arrays plus (K + 3) · L · n_diag outputs, not K · L · n_diag · T."""
    c = dict(T=1536, D=16, H=256, n_train=8000, n_val=1000, n_diag=12000, batch=512, K=50,
             lags=list(range(8, 8 + 192)), cell="lstm", epochs=1500, n_grid=[25], seed=0)
    run = Run.make("a_main", **c)
    b = cost.peak_bytes(run)
    outputs = (50 + 3) * 192 * 12000 * 8
    chunk = cost.CHUNK * 1537 * 256 * 12 * 8
    assert b == pytest.approx(cost.BASELINE_BYTES + (8000 + 1000 + 12000) * 1536 * 17 * 8
                              + 512 * 1537 * 256 * 12 * 8 * 1.5 + chunk + outputs)
    assert chunk + outputs < 50 * 192 * 12000 * 1536 * 8 / 100      # ≪ the (K, lags, sequences, T) array
