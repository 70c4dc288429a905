"""Tests of lwsim/backends/numba/tuning.py (laid out like the code: docs/testing.md).

The numba backend's per-CPU blocking profiles (lwsim/backends/numba/tuning.py, tile.py).

The profile is chosen from SciPy's OpenBLAS core name and the host CPU's features, forced by
LWSIM_NUMBA_TUNING; every profile gives the reference's results; the "avx2" profile's panel
GEMM adds each dot product's terms in order with fused multiply-adds (bit for bit the scalar
loop), on views, with β ∈ {0, ½, 1} and leftover rows/columns; the kernels take the profile as an
argument, so switching it (in a process or in a fresh one) changes which path runs."""


import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from lwsim.backends.numba import tile, tuning

from cellcases import CASES, case_id, make, random_data, random_params, rel_err


AVX2 = tuning.PROFILES["avx2"]


@pytest.fixture(autouse=True)
def _restore_profile():
    yield
    tuning.set_profile(None)


# ---------------------------------------------------------------- the panel GEMM
@njit(error_model="numpy", fastmath={"contract"})
def _gemm_w(a, b, c, beta, tune):
    tile.gemm_w(a, b, tile.weight_panels(b, tune), c, beta, tune)


@njit(error_model="numpy", fastmath={"contract"})
def _in_order(a, b, c, beta):
    """c ← β c, then c[i, j] += a[i, p] b[p, j] for p = 0, 1, … (fused): the order tile.py promises."""
    m, k = a.shape
    for i in range(m):
        for j in range(b.shape[1]):
            s = c[i, j] * beta if beta != 0 else beta
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


def _views(rng, m, k, n, dtype):
    a = rng.standard_normal((m + 2, k + 3)).astype(dtype)[1:m + 1, 2:k + 2]
    b = rng.standard_normal((k + 1, n + 5)).astype(dtype)[1:, 3:n + 3]
    c = rng.standard_normal((m, n + 4)).astype(dtype)[:, 1:n + 1]
    return a, b, c


SHAPES = [(16, 128, 512), (16, 512, 128), (9, 20, 80), (4, 16, 16), (17, 33, 129), (1, 5, 40),
          (3, 7, 5), (8, 17, 24)]


# ---------------------------------------------------------------- the kernels under each profile
T, B = 5, 18                  # 18 rows: chunks of 9 (2 threads) = 2 register tiles + 1 row left


KERNEL_CASES = [c for c in CASES if not c[1].get("layernorm")] + [c for c in CASES if c[1].get("layernorm")][:2]


_CHILD = """
import hashlib, numpy as np, lwsim
from lwsim.backends.numba import tuning
cell = lwsim.make_cell("rnn", 3, 20, 1, dtype="float32")
p = cell.init_params(seed=0)
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 16, 3)).astype("float32"); y = rng.standard_normal((4, 16, 1)).astype("float32")
_, g = cell.loss_and_grad(p, x, y, backend="numba")
print(tuning.profile(), hashlib.sha1(b"".join(g[k].tobytes() for k in sorted(g))).hexdigest())
"""


# ----------------------------------------------------------------------------------------------
# detect
# ----------------------------------------------------------------------------------------------


# ---------------------------------------------------------------- choice of profile
@pytest.mark.parametrize("core,features,want", [
    ("SkylakeX", {"avx2": True, "fma": True, "avx512f": True}, "avx512"),
    ("Cooperlake", {"avx2": True, "fma": True, "avx512f": True}, "avx512"),
    ("SapphireRapids", {"avx2": True, "fma": True, "avx512f": True}, "avx512"),
    ("Haswell", {"avx2": True, "fma": True, "avx512f": False}, "avx2"),
    ("Zen", {"avx2": True, "fma": True}, "avx2"),
    ("Haswell", {"avx2": True, "fma": True, "avx512f": True}, "avx2"),   # the BLAS decides
    (None, {"avx2": True, "fma": True, "avx512f": True}, "avx512"),      # no core name: the CPU
    (None, {"avx2": True, "fma": True}, "avx2"),
    ("Sandybridge", {"avx2": False, "fma": False}, "generic"),
    (None, {"avx2": True, "fma": False}, "generic"),
])
def test_detect(core, features, want):
    assert tuning.detect(core if core else "", features) == want


# ----------------------------------------------------------------------------------------------
# set_profile
# ----------------------------------------------------------------------------------------------


def test_environment_forces_the_profile(monkeypatch):
    monkeypatch.setenv(tuning.ENV, "generic")
    tuning.set_profile(None)
    assert tuning.profile() == "generic" and tuning.params() == (0, 0, 0)
    monkeypatch.setenv(tuning.ENV, " AVX2 ")
    tuning.set_profile(None)
    assert tuning.profile() == "avx2" and tuning.params() == AVX2
    monkeypatch.setenv(tuning.ENV, "sse")
    tuning.set_profile(None)
    with pytest.raises(ValueError, match=tuning.ENV):
        tuning.profile()
    with pytest.raises(ValueError, match="name"):
        tuning.set_profile("avx3")
    tuning.set_profile("avx512")                       # set_profile wins over the environment
    assert tuning.params() == (0, 1_000_000, 32)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_panels_add_each_dot_product_in_order(m, k, n, beta, dtype):
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    a, b, c = _views(rng, m, k, n, dtype)
    if beta == 0:
        c[...] = np.nan                                # β = 0: c is overwritten, NaN never leaks
    want = c.copy()
    _in_order(a, b, want, dtype(beta))
    outside = c.base.copy()
    _gemm_w(a, b, c, dtype(beta), AVX2)
    assert np.array_equal(c, want)
    untouched = np.ones(outside.shape, bool)
    untouched[:, 1:n + 1] = False
    assert np.array_equal(c.base[untouched], outside[untouched])
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b)
    tol = 1e-13 if dtype == np.float64 else 2e-6
    if beta == 0:
        assert np.all(np.abs(c - exact) <= tol * (scale + 1e-300))


@pytest.mark.parametrize("name", sorted(tuning.PROFILES))
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_every_profile_multiplies(name, dtype, tol):
    tune = tuning.PROFILES[name]
    for m, k, n in SHAPES + [(40, 128, 512), (0, 3, 4), (3, 0, 4)]:
        rng = np.random.default_rng(m + k + n)
        a, b, c = _views(rng, m, k, n, dtype)
        want = a.astype(np.float64) @ b.astype(np.float64) + 0.5 * c.astype(np.float64)
        _gemm_w(a, b, c, dtype(0.5), tune)
        scale = np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(want)
        assert np.all(np.abs(c - want) <= tol * (scale + 1e-300)), (name, m, k, n)


def test_panels_are_the_columns_of_b():
    b = np.arange(40 * 3, dtype=np.float32).reshape(3, 40)
    pn = tile.pack_panels(b)
    assert pn.shape == (3, 3, 16)                       # 40 = 2 × 16 + 8, zero-padded
    assert np.array_equal(pn[1], b[:, 16:32])
    assert np.array_equal(pn[2, :, :8], b[:, 32:]) and not pn[2, :, 8:].any()
    assert tile.pack_panels(b.astype(np.float64)).shape == (5, 3, 8)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", KERNEL_CASES, ids=case_id)
def test_kernels_match_the_reference_under_every_profile(case, dtype):
    cell = make(case, dtype=dtype, n_hidden=20)
    p = random_params(cell, 5)
    x, y = random_data(cell, T, B, 5)
    tol = {"float64": 1e-12, "float32": 1e-5}[dtype]
    l_ref, g_ref = cell.loss_and_grad(p, x, y)
    h_ref = cell.forward(p, x).h
    grads = {}
    for name in sorted(tuning.PROFILES):
        tuning.set_profile(name)
        loss, g = cell.loss_and_grad(p, x, y, backend="numba")
        assert abs(loss - l_ref) <= tol * abs(l_ref), name
        for k in g_ref:
            assert rel_err(g[k], g_ref[k]) <= tol, (name, k)
        assert rel_err(cell.forward(p, x, backend="numba").h, h_ref) <= tol, name
        again = cell.loss_and_grad(p, x, y, backend="numba")[1]
        assert all(np.array_equal(g[k], again[k]) for k in g), name       # same bits
        grads[name] = g
    # the profile reaches the kernels: the panel path rounds differently from BLAS
    assert not all(np.array_equal(grads["avx2"][k], grads["avx512"][k]) for k in g_ref)


def test_a_fresh_process_follows_the_environment():
    """Kernels cached on disk by one profile run the other's path when the environment says so."""
    out = {}
    for name in ("avx2", "avx512", "avx2"):
        env = dict(os.environ, **{tuning.ENV: name})
        res = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0, res.stderr[-2000:]
        got, digest = res.stdout.split()
        assert got == name
        out.setdefault(name, set()).add(digest)
    assert len(out["avx2"]) == 1                        # same profile, same bits
    assert out["avx2"] != out["avx512"]
