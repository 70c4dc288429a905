"""Tests of lwsim/backends/numba/tangent_kernels.py (laid out like the code: docs/testing.md).

backend="numba" forward-mode tangents v_t = (∂h_t/∂θ)[w] (docs/diagnostics.md §2.7).

The fused kernels (lwsim/backends/numba/tangent_kernels.py) equal the NumPy reference for every
cell × option (≤ 1e−12 relative in float64, ≤ 1e−5 in float32); K directions in one pass equal K
single calls; a central finite difference confirms the float64 tangent; bad directions raise."""


import numpy as np
import pytest

from lwsim import reference

from cellcases import CASES, case_id, make, random_data, random_params, rel_err


TOL = {"float64": 1e-12, "float32": 1e-5}


T, B, K = 5, 3, 2


N_IN, N_HIDDEN = 3, 5


def _setup(case, dtype="float64", seed=0, k=K):
    cell = make(case, n_in=N_IN, n_hidden=N_HIDDEN, dtype=dtype)
    p = random_params(cell, seed)
    x, _ = random_data(cell, T, B, seed)
    rng = np.random.default_rng(seed + 7)
    dirs = [{name: rng.standard_normal(v.shape) for name, v in p.items()} for _ in range(k)]
    return cell, p, x, dirs


# one case per kernel branch: leaky modes 0–3, GRU both conventions, LSTM
BATCH_CASES = [("rnn", {"layernorm": True}), ("constgate", {"s": 0.3}), ("sharedgate", {"layernorm": True}),
               ("diaggate", {"layernorm": True}), ("gru", {"layernorm": True}),
               ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_numba_tangents_match_reference(case, dtype):
    cell, p, x, dirs = _setup(case, dtype, seed=3)
    v = cell.tangents(p, x, dirs, backend="numba")
    assert v.shape == (K, T + 1, B, cell.state_size) and v.dtype == cell.dtype
    assert np.all(v[:, 0] == 0)
    for k, w in enumerate(dirs):
        ref = cell.tangents(p, x, w)
        err = rel_err(v[k], ref)
        assert err <= TOL[dtype], (k, err)
    one = cell.tangents(p, x, dirs[0], backend="numba")
    assert one.shape == (T + 1, B, cell.state_size) and one.dtype == cell.dtype


@pytest.mark.parametrize("case", BATCH_CASES, ids=case_id)
def test_batched_directions_equal_single_calls(case):
    cell, p, x, dirs = _setup(case, seed=5, k=4)
    x = np.concatenate([x, x[:, :1]], axis=1)          # sequence 0 twice: rows must not mix
    v = cell.tangents(p, x, dirs, backend="numba")
    for k, w in enumerate(dirs):
        single = cell.tangents(p, x, w, backend="numba")
        assert rel_err(v[k], single) <= 1e-13, k
    assert np.array_equal(v[:, :, 0], v[:, :, -1])
    assert np.array_equal(v, cell.tangents(p, x, dirs, backend="numba"))   # same bits run to run
    ref = cell.tangents(p, x, tuple(dirs))               # reference: one pass per direction
    assert np.array_equal(ref, np.stack([cell.tangents(p, x, w) for w in dirs]))
    # linear in the direction: v[2w₀ − w₁] = 2 v[w₀] − v[w₁]
    comb = {name: 2 * dirs[0][name] - dirs[1][name] for name in p}
    assert rel_err(cell.tangents(p, x, [comb], backend="numba")[0], 2 * v[0] - v[1]) <= 1e-12


@pytest.mark.parametrize("case", BATCH_CASES, ids=case_id)
def test_chunks_of_sequences(case, monkeypatch):
    """Uneven row chunks on the thread pool (forced, whatever the core count) give the reference."""
    from lwsim.backends.numba import tangent_kernels
    monkeypatch.setattr(tangent_kernels, "chunks", lambda B: [(0, 5), (5, 11), (11, B)])
    cell = make(case, n_in=N_IN, n_hidden=N_HIDDEN)
    p = random_params(cell, 4)
    x, _ = random_data(cell, T, 17, 4)
    rng = np.random.default_rng(6)
    dirs = [{name: rng.standard_normal(v.shape) for name, v in p.items()} for _ in range(2)]
    assert rel_err(cell.tangents(p, x, dirs, backend="numba"), cell.tangents(p, x, dirs)) <= 1e-12


@pytest.mark.parametrize("case", [("gru", {"layernorm": True}), ("lstm", {"layernorm": True}),
                                  ("diaggate", {"layernorm": True})], ids=case_id)
def test_numba_tangents_match_central_differences(case):
    cell, p, x, (w,) = _setup(case, seed=11, k=1)
    eps = 1e-6

    def states(q):
        tr = cell.forward(q, x, backend="numba")
        return tr.h if tr.c is None else np.concatenate([tr.h, tr.c], axis=-1)
    fd = (states({k: p[k] + eps * w[k] for k in p}) - states({k: p[k] - eps * w[k] for k in p})) / (2 * eps)
    assert rel_err(cell.tangents(p, x, w, backend="numba"), fd) <= 1e-7


def test_float32_close_to_float64():
    cell64, p, x, dirs = _setup(("lstm", {"layernorm": True}), seed=2)
    cell32 = make(("lstm", {"layernorm": True}), n_in=N_IN, n_hidden=N_HIDDEN, dtype="float32")
    v64 = cell64.tangents(p, x, dirs, backend="numba")
    v32 = cell32.tangents(p, x, dirs, backend="numba")
    assert v32.dtype == np.float32 and rel_err(v32, v64) <= 1e-5


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_bad_directions_raise(backend):
    cell, p, x, (w,) = _setup(("gru", {}), k=1)
    with pytest.raises(ValueError, match="direction"):
        cell.tangents(p, x, [], backend=backend)
    with pytest.raises(TypeError, match=r"direction\[1\]"):
        cell.tangents(p, x, [w, 1.0], backend=backend)
    with pytest.raises(TypeError, match="direction"):
        cell.tangents(p, x, np.zeros(3), backend=backend)
    with pytest.raises(TypeError, match="direction"):
        cell.tangents(p, x, "W_z", backend=backend)
    missing = {k: v for k, v in w.items() if k != "U_z"}
    with pytest.raises(ValueError, match=r"direction\[0\].*U_z"):
        cell.tangents(p, x, [missing, w], backend=backend)
    with pytest.raises(ValueError, match=r"direction: .*U_z"):
        cell.tangents(p, x, missing, backend=backend)
    with pytest.raises(ValueError, match=r"direction\[1\].*shape"):
        cell.tangents(p, x, [w, {**w, "W_r": np.zeros((2, 2))}], backend=backend)
    with pytest.raises(ValueError, match=r"direction\[0\].*NaN"):
        cell.tangents(p, x, [{**w, "b_g": np.full(N_HIDDEN, np.nan)}], backend=backend)


def test_direction_reaches_every_parameter():
    """A direction along one parameter at a time: each tangent equals the reference's, so no key
    of the direction is dropped or mixed up in the stacking (read-out keys give exactly 0)."""
    for case in [("diaggate", {"layernorm": True}), ("sharedgate", {}), ("gru", {"layernorm": True}),
                 ("gru", {"convention": "torch"}), ("lstm", {"layernorm": True})]:
        cell, p, x, (w,) = _setup(case, seed=9, k=1)
        dirs = [{k: (w[k] if k == name else np.zeros_like(w[k])) for k in p} for name in p]
        v = cell.tangents(p, x, dirs, backend="numba")
        for name, vk, d in zip(p, v, dirs):
            ref = reference.tangents(np, cell, cell.check_params(p), cell.check_x(x), cell.check_params(d))
            if name in ("W_out", "b_out"):
                assert np.all(vk == 0) and np.all(ref == 0), name
            else:
                assert np.linalg.norm(ref) > 0 and rel_err(vk, ref) <= 1e-12, (case, name)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", BATCH_CASES, ids=case_id)
def test_tangents_reuse_the_forward_pass_of_a_trace(case, dtype):
    """forward=trace (of forward or forward_and_jacobian_diagonal, same params and x): the tangent
    pass reuses that forward pass — the same bits as running it again; a trace of another input
    length, or of the other dtype, is not used."""
    cell, p, x, dirs = _setup(case, dtype, seed=9)
    want = cell.tangents(p, x, dirs, backend="numba")
    tr = cell.forward(p, x, backend="numba")
    tr2, _ = cell.forward_and_jacobian_diagonal(p, x, backend="numba")
    for trace in (tr, tr2):
        assert np.array_equal(cell.tangents(p, x, dirs, backend="numba", forward=trace), want)
        assert np.array_equal(cell.tangents(p, x, dirs[0], backend="numba", forward=trace), want[0])
    short = cell.forward(p, x[:-1], backend="numba")               # another input: ignored
    assert np.array_equal(cell.tangents(p, x, dirs, backend="numba", forward=short), want)
    other = cell.with_dtype("float32" if dtype == "float64" else "float64")
    wrong = other.forward({k: v.astype(other.dtype) for k, v in p.items()}, x.astype(other.dtype), backend="numba")
    assert np.array_equal(cell.tangents(p, x, dirs, backend="numba", forward=wrong), want)
    assert np.array_equal(cell.tangents(p, x, dirs, forward=tr), cell.tangents(p, x, dirs))   # numpy: ignored
    tr.h[1:] *= 1.5                                # the trace's own arrays are what the pass reads
    assert not np.array_equal(cell.tangents(p, x, dirs, backend="numba", forward=tr), want)
