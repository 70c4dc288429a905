"""How the per-step products are blocked on this CPU: a profile chosen once, from the CPU and BLAS.

The per-step products of the time loops, (m, K) × (K, N) with m = the rows of a chunk (16 at
batch 32 on 2 threads) and a constant weight block, are fastest done differently per machine:

  "avx512"   OpenBLAS with "small-matrix" kernels (core SkylakeX / Cooperlake / SapphireRapids):
             products with m·n·k ≤ 10⁶ are read in place, so thin products go to BLAS in column
             blocks under that bound (blas.column_block; measured on the 2-core Xeon, float32
             16 × 128 × 512: 39 µs whole, 13 µs as two 256-column calls).
  "avx2"     OpenBLAS without them (Haswell, Zen: AVX2 + FMA): every call packs both operands, so
             the weight block is packed again every step and column blocks only add calls.
             Measured on a 2-core AMD EPYC (Zen 3, OpenBLAS 0.3.30 "Haswell"), single thread,
             float32 16 × 128 × 512: BLAS 63 µs whole (88 µs at other moments; 256-, 128-, 64-column
             blocks no faster), 32 rows 85–104 µs. Here the weight block is copied once per
             kernel call into contiguous column panels and every step runs tile.gemm_w on
             them: 16 × 128 × 512 in 26 µs (82 GFLOP/s), 16 × 512 × 128 in 24 µs (BLAS 65),
             16 × 17 × 512 in 4.3 µs (BLAS 9.0), float64 16 × 128 × 512 in 63 µs (BLAS 76), and
             still ahead of BLAS at 128 rows (float32 202 vs 230 µs); level with it at 256–512
             rows (float32 256 × 128 × 512: 387 vs 422 µs), hence panel_rows = 512.
  "generic"  anything else: plain BLAS calls, no blocking.

Why chosen from the CPU and BLAS, not timed at first use: the blocking decides which kernel forms
each dot product, so its rounding; a choice from a timing could come out differently on the next
run and change the bits. The profile is derived from SciPy's OpenBLAS core name (the library
``numba_xxgemm`` calls), falling back on the host CPU's features (llvmlite) when the name cannot
be read. ``LWSIM_NUMBA_TUNING=avx512|avx2|generic`` forces a profile (read at first use);
:func:`set_profile` switches it within a process (the tests cover every path that way).

The kernels receive the parameters as an argument (:func:`params`, a tuple of three ints, the
same numba type for every profile), never as a global: numba freezes globals at compile time,
and the on-disk cache would keep one machine's choice for another.

  params() = (panel_rows, small_mnk, thin_rows):
    panel_rows  products with m ≤ panel_rows run on packed panels (tile.py); 0: never
    small_mnk   BLAS products with m ≤ thin_rows and m·n·k above it go in column blocks under it;
                0: never

Backends and the tuning profiles: docs/cells.md §1.9.
"""
from __future__ import annotations

import ctypes
import glob
import os

PROFILES = {
    "avx512": (0, 1_000_000, 32),
    "avx2": (512, 0, 0),
    "generic": (0, 0, 0),
}
SMALL_MATRIX_CORES = ("skylakex", "cooperlake", "sapphirerapids")   # OpenBLAS cores with them
ENV = "LWSIM_NUMBA_TUNING"
_STATE = {}


def openblas_core():
    """The core name SciPy's OpenBLAS runs with (e.g. "Haswell", "SkylakeX"), or None."""
    try:
        import scipy
    except ImportError:
        return None
    site = os.path.dirname(os.path.dirname(scipy.__file__))
    for pattern in ("scipy.libs/libscipy_openblas*", "scipy/.dylibs/libscipy_openblas*"):
        for path in sorted(glob.glob(os.path.join(site, pattern))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in ("scipy_openblas_get_corename", "scipy_openblas_get_corename64_",
                         "openblas_get_corename"):
                f = getattr(lib, name, None)
                if f is not None:
                    f.restype = ctypes.c_char_p
                    core = f()
                    return core.decode() if core else None
    return None


def detect(core=None, features=None):
    """Profile name for an OpenBLAS core name and a {feature: bool} dict of the host CPU (both
    read from this machine when None)."""
    if core is None:
        core = openblas_core()
    if features is None:
        import llvmlite.binding as llvm
        features = llvm.get_host_cpu_features()
    if core:
        if core.lower() in SMALL_MATRIX_CORES:
            return "avx512"
    elif features.get("avx512f"):
        return "avx512"
    if features.get("avx2") and features.get("fma"):
        return "avx2"
    return "generic"


def profile():
    """The profile in use: set_profile's, else LWSIM_NUMBA_TUNING's, else detect()'s."""
    if "name" not in _STATE:
        forced = os.environ.get(ENV, "").strip().lower()
        if forced and forced not in PROFILES:
            raise ValueError(f"{ENV}: {forced!r} is not one of {sorted(PROFILES)}")
        _STATE["name"] = forced or detect()
    return _STATE["name"]


def set_profile(name=None):
    """Use profile ``name`` from now on in this process; None: back to the environment/detection."""
    if name is not None and name not in PROFILES:
        raise ValueError(f"name: {name!r} is not one of {sorted(PROFILES)}")
    _STATE.clear()
    if name is not None:
        _STATE["name"] = name


def params():
    """(panel_rows, small_mnk, thin_rows) of the profile in use, as the kernels take them."""
    return PROFILES[profile()]
