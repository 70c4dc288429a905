"""Batch-level parallelism for the time-loop kernels, and the BLAS thread count around them.

Why chunks of sequences rather than a parallel BLAS: a step's products are small ((B, H) × (H, G)),
so a multi-threaded GEMM per step synchronises its threads T times per pass; on a busy machine a
descheduled BLAS thread then stalls every step (measured on 2 shared cores: 6 s instead of 0.2 s
for T = 256, B = 512). Sequences are independent in both recursions, so each thread runs the whole
time loop over its own rows [b0, b1) with single-threaded BLAS calls: one fork/join per kernel
call, no per-step synchronisation. The weight gradients are accumulated per chunk inside the
reverse loop (blas.window_steps) and the chunk partials summed in chunk order afterwards. All
BLAS calls of the backend are single-threaded (see :func:`single_threaded_blas`).

The threads are a Python thread pool calling ``nogil`` kernels, not numba's ``prange``: a prange
region under the OpenMP layer with its default active waiting cost 50–70 ms per call on a busy
2-core machine (spinning workers), and the workqueue layer is not thread-safe. The pool has
``numba.get_num_threads()`` workers, so NUMBA_NUM_THREADS / numba.set_num_threads control it.

Determinism: chunk bounds depend only on B and the thread count; every row is computed by one
thread in a fixed order, and the per-chunk partial sums are added in chunk order. Same inputs
and thread count give the same bits.
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

MIN_ROWS = 8             # fewer sequences per chunk make the per-step GEMMs too thin to pay
_BLAS = []               # [(get, set) or None], resolved once
_POOL = {}               # {workers: ThreadPoolExecutor}
# a forked child inherits the pools but not their threads: it would wait forever on its first
# parallel call (multiprocessing's fork start method, mutmut's per-mutant children); it builds its own
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.clear)


def _openblas_controls():
    """{"scipy"|"numpy": (get, set)}: thread-count controls of the OpenBLAS libraries of SciPy (behind
    scipy.linalg.cython_blas, which numba's np.dot calls) and of NumPy (its matmul); the wheels ship
    them as libscipy_openblas / libscipy_openblas64_. Libraries not found are skipped."""
    found = {}
    for module, pattern in (("scipy", "scipy.libs/libscipy_openblas*"),
                            ("scipy", "scipy/.dylibs/libscipy_openblas*"),
                            ("numpy", "numpy.libs/libscipy_openblas*"),
                            ("numpy", "numpy/.dylibs/libscipy_openblas*")):
        try:
            mod = __import__(module)
        except ImportError:
            continue
        site = os.path.dirname(os.path.dirname(mod.__file__))
        for path in sorted(glob.glob(os.path.join(site, pattern))):
            try:
                lib = ctypes.CDLL(path)             # already loaded: the same handle
            except OSError:
                continue
            for get_name, set_name in (("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
                                       ("scipy_openblas_get_num_threads64_",
                                        "scipy_openblas_set_num_threads64_"),
                                       ("openblas_get_num_threads", "openblas_set_num_threads")):
                get = getattr(lib, get_name, None)
                set_ = getattr(lib, set_name, None)
                if get is not None and set_ is not None and module not in found:
                    get.restype = ctypes.c_int
                    set_.argtypes = [ctypes.c_int]
                    found[module] = (get, set_)
                    break
    return found


def _blas():
    """[(get, set)] for numba's BLAS and NumPy's; None when numba's (SciPy's) is not found, in
    which case the backend runs on one thread and leaves BLAS threading alone."""
    if not _BLAS:
        ctl = _openblas_controls()
        _BLAS.append(list(ctl.values()) if "scipy" in ctl else None)
    return _BLAS[0]


def n_chunks(B):
    """Number of row chunks for batch B: one per numba thread, at least MIN_ROWS rows each; 1 when
    the BLAS thread count cannot be pinned (chunks would then oversubscribe the cores)."""
    return max(1, min(workers(), B // MIN_ROWS))


@contextlib.contextmanager
def single_threaded_blas():
    """Pin numba's and NumPy's OpenBLAS to one thread for the duration; restore afterwards.

    Every product of this backend then runs on the thread that calls it, and the parallelism is
    ours (row chunks). Besides the per-step synchronisation, this avoids
    OpenBLAS workers that busy-wait after a parallel call and take a core from the time loop."""
    ctl = _blas() or []
    before = [get() for get, _ in ctl]
    for _, set_ in ctl:
        set_(1)
    try:
        yield
    finally:
        for (_, set_), n in zip(ctl, before):
            set_(n)


def chunks(B):
    """Row bounds [(b0, b1), ...] of the chunks for batch B (fixed by B and the thread count)."""
    n = n_chunks(B)
    return [(c * B // n, (c + 1) * B // n) for c in range(n)]


def workers():
    """Threads of this backend: numba's thread count (NUMBA_NUM_THREADS, numba.set_num_threads)."""
    return numba.get_num_threads() if _blas() is not None else 1


def run_parallel(tasks):
    """Run the callables, on the thread pool when there are several; re-raise the first error."""
    if len(tasks) == 1:
        tasks[0]()
        return
    pool = _POOL.get(len(tasks))
    if pool is None:
        pool = _POOL[len(tasks)] = ThreadPoolExecutor(len(tasks), thread_name_prefix="lwsim-numba")
    futures = [pool.submit(task) for task in tasks]
    for f in futures:
        f.result()


def run_chunks(kernel, bounds, *args):
    """kernel(c, b0, b1, *args) for every chunk c, in parallel when there are several; waits for
    all and re-raises the first error (c indexes per-chunk partial outputs)."""
    run_parallel([(lambda c=c, b0=b0, b1=b1: kernel(c, b0, b1, *args))
                  for c, (b0, b1) in enumerate(bounds)])
