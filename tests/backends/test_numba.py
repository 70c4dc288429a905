"""Tests of lwsim/backends/numba (laid out like the code: docs/testing.md).

backend="numba" equals the NumPy reference (docs/cells.md §1.9): every cell × option, both dtypes.

Forward trace (states, read-out, gates, leak, candidate, per-step records), loss, every gradient,
the one-step Jacobians and their diagonal: ≤ 1e−12 relative in float64, ≤ 1e−5 in float32.
Also: the records mix with the reference step functions, results are bit-identical run to run,
and a bounded hypothesis search over shapes and options."""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import lwsim
from lwsim import reference

from cellcases import CASES, case_id, make, random_data, random_params, rel_err


TOL = {"float64": 1e-12, "float32": 1e-5}


T, B = 6, 3


def _close(a, b, tol, what):
    assert a.shape == b.shape, (what, a.shape, b.shape)
    err = rel_err(a, b)
    assert err <= tol, (what, err)


def assert_trace_equal(tn, tr, dtype, tol):
    """The numba trace has the reference's fields, record keys, shapes, dtypes and values."""
    assert set(tn.records) == set(tr.records)
    assert set(tn.gates) == set(tr.gates)
    assert (tn.c is None) == (tr.c is None)
    assert (tn.leak is None) == (tr.leak is None)
    assert (tn.cand is None) == (tr.cand is None)
    pairs = [("h", tn.h, tr.h), ("y", tn.y, tr.y)]
    pairs += [("c", tn.c, tr.c), ("leak", tn.leak, tr.leak), ("cand", tn.cand, tr.cand)]
    pairs += [(f"gates[{k}]", tn.gates[k], tr.gates[k]) for k in tr.gates]
    pairs += [(f"records[{k}]", tn.records[k], tr.records[k]) for k in tr.records]
    for what, a, b in pairs:
        if b is None:
            continue
        assert isinstance(a, np.ndarray) and a.dtype == dtype, (what, type(a), a.dtype)
        _close(a, b, tol, what)


def assert_grads_equal(cell, p, x, y, tol, mask=None):
    l_ref, g_ref = cell.loss_and_grad(p, x, y, mask=mask)
    l_nb, g_nb = cell.loss_and_grad(p, x, y, backend="numba", mask=mask)
    assert isinstance(l_nb, float)
    assert abs(l_nb - l_ref) <= tol * abs(l_ref), (l_nb, l_ref)
    assert list(g_nb) == list(g_ref)
    for k in g_ref:
        assert isinstance(g_nb[k], np.ndarray) and g_nb[k].dtype == cell.dtype, k
        assert g_nb[k].flags.c_contiguous, k
        _close(g_nb[k], g_ref[k], tol, k)


CHUNKED = [("rnn", {"layernorm": True}), ("constgate", {}), ("sharedgate", {}),
           ("diaggate", {"layernorm": True}), ("gru", {"layernorm": True}),
           ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True})]


def _check(name, nb, ref, hi, tol):
    """Within tol of the reference of the same dtype; where the problem itself is ill-conditioned
    (e.g. LayerNorm over H = 2 units is nearly singular, J_LN ∝ ε/σ², so the gradient through it is
    a cancellation), as close to a higher-precision result ``hi`` as the reference is (within the
    factor 10 that separates two round-off patterns amplified by the same bad conditioning)."""
    err = rel_err(nb, ref)
    if err > tol:
        assert rel_err(nb, hi) <= max(10 * rel_err(ref, hi), tol / 10), (name, err, rel_err(ref, hi))


def _higher_precision(case, cell, p, x, y):
    """(loss, grads, jacobian diagonal, ŷ) one precision up: the float64 reference for float32,
    the reference on np.longdouble arrays (80-bit on x86) for float64."""
    if cell.dtype == np.float32:
        c64 = make(case, n_in=cell.n_in, n_hidden=cell.n_hidden, n_out=cell.n_out)
        loss, grads = c64.loss_and_grad(p, x, y)
        return loss, grads, c64.jacobian_diagonal(p, x), c64.forward(p, x).y
    L = np.longdouble
    pl, xl, yl = {k: v.astype(L) for k, v in p.items()}, x.astype(L), y.astype(L)
    loss, grads = reference.loss_and_grad(np, cell, pl, xl, yl)
    return (loss, grads, reference.jacobians(np, cell, pl, xl, True),
            reference.forward(np, cell, pl, xl).y)


# ----------------------------------------------------------------------------------------------
# forward
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_numba_matches_numpy(case, dtype):
    cell = make(case, dtype=dtype)
    p = random_params(cell, 11)
    x, y = random_data(cell, T, B, 11)
    tol = TOL[dtype]
    assert_trace_equal(cell.forward(p, x, backend="numba"), cell.forward(p, x), cell.dtype, tol)
    assert_grads_equal(cell, p, x, y, tol)
    J = cell.jacobians(p, x, backend="numba")
    assert J.dtype == cell.dtype
    _close(J, cell.jacobians(p, x), tol, "jacobians")
    D = cell.jacobian_diagonal(p, x, backend="numba")
    assert D.dtype == cell.dtype
    _close(D, cell.jacobian_diagonal(p, x), tol, "jacobian_diagonal")


@pytest.mark.parametrize("case", [("diaggate", {"layernorm": True}), ("gru", {"layernorm": True}),
                                  ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True}),
                                  ("sharedgate", {})], ids=case_id)
def test_records_mix_with_reference_steps(case):
    """The numba trace feeds the reference's step functions (same record keys and meaning)."""
    cell = make(case)
    p = random_params(cell, 14)
    x, y = random_data(cell, 5, 2, 14)
    tr = cell.forward(p, x, backend="numba")
    J = cell.jacobians(p, x, backend="numba")
    for t in range(5):
        rec = {k: v[t] for k, v in tr.records.items()}
        Jt = cell.kind.step_jacobian(np, p, cell, tr.state(t), rec)
        _close(J[t], Jt, 1e-12, f"J[{t}]")
        state, _ = cell.kind.step(np, p, cell, x[t], tr.state(t))
        _close(np.concatenate(state, -1), np.concatenate(tr.state(t + 1), -1), 1e-12, f"state {t}")
    # BPTT by the reference step functions on the numba trace equals numba's own BPTT.
    loss, dy = reference.output_errors(np, cell, tr, y, None)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    # private: the reference's BPTT pieces, to rerun its step functions on the numba trace
    reference._readout_grads(np, tr, dy, grads)
    delta = reference._direct_errors(tr, dy, p)
    carry = tuple(np.zeros_like(s) for s in tr.state(0))
    for t in range(4, -1, -1):
        rec = {k: v[t] for k, v in tr.records.items()}
        carry = cell.kind.step_backward(np, p, cell, x[t], tr.state(t), rec,
                                        (carry[0] + delta[t],) + carry[1:], grads)
    _, g_nb = cell.loss_and_grad(p, x, y, backend="numba")
    for k in p:
        _close(g_nb[k], grads[k], 1e-12, k)


@pytest.mark.parametrize("name,opts", CHUNKED)
def test_bit_identical_across_runs(name, opts):
    """B = 33 runs as several row chunks on the thread pool (threads.py) when numba has ≥ 2
    threads: same bits on every run, and still equal to the reference."""
    cell = lwsim.make_cell(name, n_in=5, n_hidden=24, n_out=2, dtype="float32", **opts)
    p = random_params(cell, 15)
    x, y = random_data(cell, 20, 33, 15)
    runs = [cell.loss_and_grad(p, x, y, backend="numba") for _ in range(3)]
    for r in runs[1:]:
        assert r[0] == runs[0][0]
        for k in p:
            assert np.array_equal(r[1][k], runs[0][1][k]), k
    assert np.array_equal(cell.jacobians(p, x[:4], backend="numba"),
                          cell.jacobians(p, x[:4], backend="numba"))
    assert np.array_equal(cell.forward(p, x, backend="numba").h, cell.forward(p, x, backend="numba").h)
    _, g_ref = cell.loss_and_grad(p, x, y)
    for k in p:
        _close(runs[0][1][k], g_ref[k], TOL["float32"], k)


# ----------------------------------------------------------------------------------------------
# loss_and_grad
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["diaggate", "gru", "lstm", "sharedgate"])
def test_mask_and_last_targets(name):
    cell = make((name, {"layernorm": True}))
    p = random_params(cell, 12)
    x, y = random_data(cell, 7, 2, 12)
    mask = np.array([False, True, False, True, True, False, True])
    assert_grads_equal(cell, p, x, y, TOL["float64"], mask=mask)
    last = make((name, {"readout": "last"}))
    q = random_params(last, 13)
    l_ref, g_ref = last.loss_and_grad(q, x, y[-1])               # (B, n_out) targets
    l_nb, g_nb = last.loss_and_grad(q, x, y[-1], backend="numba")
    assert abs(l_nb - l_ref) <= 1e-12 * abs(l_ref)
    for k in g_ref:
        _close(g_nb[k], g_ref[k], 1e-12, k)


@pytest.mark.parametrize("name,opts", CHUNKED)
def test_thread_count_and_blas_settings(name, opts):
    """One thread (a single chunk) and the default thread count agree to round-off with each other
    and the reference (float64), and the BLAS thread counts are restored after every call."""
    import numba
    from lwsim.backends.numba import threads

    cell = lwsim.make_cell(name, n_in=3, n_hidden=10, n_out=2, **opts)
    p = random_params(cell, 19)
    x, y = random_data(cell, 7, 40, 19)
    # private: the BLAS thread getters; no public function reports the BLAS pools' sizes
    before = [get() for get, _ in (threads._blas() or [])]
    n = numba.get_num_threads()
    l_many, g_many = cell.loss_and_grad(p, x, y, backend="numba")
    numba.set_num_threads(1)
    try:
        assert threads.chunks(40) == [(0, 40)]
        l_one, g_one = cell.loss_and_grad(p, x, y, backend="numba")
    finally:
        numba.set_num_threads(n)
    assert [get() for get, _ in (threads._blas() or [])] == before
    l_ref, g_ref = cell.loss_and_grad(p, x, y)
    assert abs(l_one - l_ref) <= 1e-12 * l_ref and abs(l_many - l_ref) <= 1e-12 * l_ref
    for k in p:
        _close(g_one[k], g_ref[k], 1e-12, k)
        _close(g_many[k], g_ref[k], 1e-12, k)


@pytest.mark.parametrize("name,opts", CHUNKED)
def test_reused_buffers_never_leak_between_calls(name, opts):
    """loss_and_grad reuses its internal buffers (workspace.py): a second call with new data is
    still exact, and the gradients returned by the first call are not overwritten."""
    from lwsim.backends.numba import clear_workspace

    cell = lwsim.make_cell(name, n_in=3, n_hidden=6, n_out=2, **opts)
    p = random_params(cell, 20)
    x1, y1 = random_data(cell, 5, 20, 20)
    x2, y2 = random_data(cell, 5, 20, 21)
    _, g1 = cell.loss_and_grad(p, x1, y1, backend="numba")
    kept = {k: v.copy() for k, v in g1.items()}
    l2, g2 = cell.loss_and_grad(p, x2, y2, backend="numba")
    for k in p:
        assert np.array_equal(g1[k], kept[k]), k
    l_ref, g_ref = cell.loss_and_grad(p, x2, y2)
    assert abs(l2 - l_ref) <= 1e-12 * l_ref
    for k in p:
        _close(g2[k], g_ref[k], 1e-12, k)
    clear_workspace()
    l3, g3 = cell.loss_and_grad(p, x2, y2, backend="numba")
    assert l3 == l2 and all(np.array_equal(g3[k], g2[k]) for k in p)


def test_extreme_preactivations_stay_finite():
    """Saturated gates (|pre-activation| ≫ 100): the kernels' own exp never overflows, and the
    result is as accurate as the reference's. Saturated units make 1 − σ² and 1 − tanh² pure
    round-off, so errors are measured against each gradient's largest entry (float64), and both
    float32 backends against the float64 gradient (the float32 reference itself is ~7e−4 off)."""
    c64 = make(("lstm", {}))
    p = random_params(c64, 16, scale=80.0)
    x, y = random_data(c64, 4, 2, 16)
    l64, g64 = c64.loss_and_grad(p, x, y)
    l_nb, g_nb = c64.loss_and_grad(p, x, y, backend="numba")
    assert abs(l_nb - l64) <= 1e-12 * l64
    for k in g64:
        assert np.max(np.abs(g_nb[k] - g64[k])) <= 1e-12 * max(1.0, np.max(np.abs(g64[k]))), k
    c32 = make(("lstm", {}), dtype="float32")
    _, g_ref = c32.loss_and_grad(p, x, y)
    _, g_nb = c32.loss_and_grad(p, x, y, backend="numba")
    for k in g64:
        assert np.all(np.isfinite(g_nb[k])), k
        scale = max(1.0, np.max(np.abs(g64[k])))
        err_nb = np.max(np.abs(g_nb[k] - g64[k])) / scale
        err_ref = np.max(np.abs(g_ref[k] - g64[k])) / scale
        assert err_nb <= max(3 * err_ref, 1e-5), (k, err_nb, err_ref)


@pytest.mark.parametrize("n_hidden", [1, 2])
@pytest.mark.parametrize("name", ["rnn", "diaggate", "gru", "lstm"])
def test_layernorm_over_one_or_two_units(name, n_hidden):
    """LN over H ≤ 2 units maps every input to ≈ β (J_LN is exactly 0 for H = 1 and O(ε/σ²) for
    H = 2), so the gradient through it is a cancellation: agreement is measured against the
    largest gradient entry of the cell, not entry by entry."""
    cell = make((name, {"layernorm": True}), n_hidden=n_hidden)
    p = random_params(cell, 18)
    x, y = random_data(cell, 5, 3, 18)
    l_ref, g_ref = cell.loss_and_grad(p, x, y)
    l_nb, g_nb = cell.loss_and_grad(p, x, y, backend="numba")
    assert abs(l_nb - l_ref) <= 1e-12 * abs(l_ref)
    scale = max(np.max(np.abs(g)) for g in g_ref.values())
    for k in g_ref:
        assert np.max(np.abs(g_nb[k] - g_ref[k])) <= 1e-12 * scale, k
    if n_hidden == 1 and name == "rnn":
        assert not np.any(g_nb["W_h"]) and not np.any(g_nb["W_x"])       # exactly 0, as the reference


@pytest.mark.parametrize("name,opts", [("rnn", {}), ("sharedgate", {}), ("gru", {}),
                                       ("gru", {"convention": "torch"}), ("lstm", {})])
def test_float32_gradients_as_accurate_as_the_reference(name, opts):
    """At a training-like size (T = 128, B = 32: weight gradients summed over 4096 rows, window by
    window) the float32 numba gradients are at least as close to the float64 gradients as the
    float32 NumPy reference is (measured: ~10× closer at the benchmark size)."""
    c32 = lwsim.make_cell(name, n_in=8, n_hidden=32, n_out=1, dtype="float32", **opts)
    c64 = lwsim.make_cell(name, n_in=8, n_hidden=32, n_out=1, dtype="float64", **opts)
    p32 = c32.init_params(seed=3, scheme="torch")
    p64 = {k: v.astype(np.float64) for k, v in p32.items()}
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 32, 8)).astype(np.float32)
    y = rng.standard_normal((128, 32, 1)).astype(np.float32)
    _, g64 = c64.loss_and_grad(p64, x.astype(np.float64), y.astype(np.float64))
    _, g_nb = c32.loss_and_grad(p32, x, y, backend="numba")
    _, g_np = c32.loss_and_grad(p32, x, y)

    def err(g):
        return max(np.abs(g[k] - g64[k]).max() / np.abs(g64[k]).max() for k in g64)
    assert err(g_nb) <= max(2 * err(g_np), 1e-6), (err(g_nb), err(g_np))


# ----------------------------------------------------------------------------------------------
# forward_and_jacobian_diagonal
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_forward_and_jacobian_diagonal_in_one_pass(case):
    """One forward pass gives the same trace and diagonal as the two separate calls (numba), and the
    reference's fallback (two calls) agrees with it to round-off."""
    cell = make(case)
    p = random_params(cell, 5)
    x, _ = random_data(cell, 6, 3, 5)
    tr, dg = cell.forward_and_jacobian_diagonal(p, x, backend="numba")
    tr1 = cell.forward(p, x, backend="numba")
    np.testing.assert_array_equal(dg, cell.jacobian_diagonal(p, x, backend="numba"))
    np.testing.assert_array_equal(tr.h, tr1.h)
    np.testing.assert_array_equal(tr.y, tr1.y)
    for k in tr1.records:
        np.testing.assert_array_equal(tr.records[k], tr1.records[k])
    tr_ref, dg_ref = cell.forward_and_jacobian_diagonal(p, x)
    assert rel_err(dg, dg_ref) <= 1e-12 and rel_err(tr.h, tr_ref.h) <= 1e-12


# ----------------------------------------------------------------------------------------------
# lag_gradients
# ----------------------------------------------------------------------------------------------


def test_lag_gradients_fall_back_to_reference_tangents_are_fused():
    cell = make(("diaggate", {"layernorm": True}))
    p = random_params(cell, 17)
    x, y = random_data(cell, 4, 2, 17)
    l1, g1 = cell.lag_gradients(p, x, y, backend="numba")
    l2, g2 = cell.lag_gradients(p, x, y)
    assert l1 == l2 and all(np.array_equal(a[k], b[k]) for a, b in zip(g1, g2) for k in p)
    # tangents: fused numba kernels (tests/test_tangents_numba.py), equal to round-off
    assert rel_err(cell.tangents(p, x, p, backend="numba"), cell.tangents(p, x, p)) <= 1e-12


# ----------------------------------------------------------------------------------------------
# _check
# ----------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), dtype=st.sampled_from(["float64", "float32"]),
       T_=st.integers(1, 9), B_=st.integers(1, 5), n_in=st.integers(1, 4),
       n_hidden=st.integers(1, 9), n_out=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_hypothesis_shapes_and_options(case, dtype, T_, B_, n_in, n_hidden, n_out, seed):
    if case[1].get("layernorm"):
        n_hidden = max(n_hidden, 3)     # LN over H ≤ 2 units is degenerate: see the test below
    cell = make(case, n_in=n_in, n_hidden=n_hidden, n_out=n_out, dtype=dtype)
    p = random_params(cell, seed)
    x, y = random_data(cell, T_, B_, seed)
    tol = TOL[dtype]
    l_nb, g_nb = cell.loss_and_grad(p, x, y, backend="numba")
    l_ref, g_ref = cell.loss_and_grad(p, x, y)
    l_hi, g_hi, d_hi, y_hi = _higher_precision(case, cell, p, x, y)
    _check("loss", np.array([l_nb]), np.array([l_ref]), np.array([l_hi], dtype=np.float64), tol)
    for k in g_ref:
        assert g_nb[k].dtype == cell.dtype and g_nb[k].shape == g_ref[k].shape, k
        _check(k, g_nb[k], g_ref[k], g_hi[k], tol)
    _check("diag", cell.jacobian_diagonal(p, x, backend="numba"), cell.jacobian_diagonal(p, x), d_hi, tol)
    _check("y", cell.forward(p, x, backend="numba").y, cell.forward(p, x).y, y_hi, tol)


# ----------------------------------------------------------------------------------------------
# chunks
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,opts", CHUNKED)
def test_weight_gradient_windows(name, opts):
    """The weight gradients are summed window by window inside BPTT (blas.window_steps): windows of
    one step (≥ WINDOW_ROWS sequences per chunk), of several steps with a partial last window, and
    a window longer than the sequence all give the reference's gradients (float64, 1e−12)."""
    import numba
    from lwsim.backends.numba import blas, threads

    cell = lwsim.make_cell(name, n_in=3, n_hidden=5, n_out=2, **opts)
    p = random_params(cell, 23)
    n = numba.get_num_threads()
    numba.set_num_threads(1)                          # one chunk: m = B rows per window step
    try:
        for T_, B_ in ((3, blas.WINDOW_ROWS + 2), (11, 40), (2, 5)):
            assert threads.chunks(B_) == [(0, B_)]
            x, y = random_data(cell, T_, B_, 23 + T_)
            assert_grads_equal(cell, p, x, y, 1e-12)
    finally:
        numba.set_num_threads(n)
