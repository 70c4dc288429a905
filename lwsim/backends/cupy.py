"""backend="cupy": the NumPy reference running unchanged on the GPU (docs/cells.md §1.9).

The reference (:mod:`lwsim.reference`) is written against an array module, so this backend moves
the validated inputs to the device, runs it with ``xp = cupy`` and returns NumPy arrays of the
requested dtype, like every backend. Fused whole-sequence CUDA kernels are not part of this
module yet (they need a GPU to be tested; see docs/project.md's status table).
"""
from __future__ import annotations

import numpy as np

from .. import reference
from ..cells._kind import no_kernels

_INSTALL_HINT = ("backend='cupy' needs CuPy and a CUDA GPU: pip install 'lwsim[gpu]' "
                 "(CuPy for CUDA 12), or pick backend='numba' / 'numpy'")


def available():
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:                                        # noqa: BLE001 — any failure means "no"
        return False


def _cupy(cell=None):
    if cell is not None and not cell.kind.cupy:     # its kind declares no GPU path (docs/cells.md §1.10)
        raise no_kernels(cell, "cupy", fix="use backend='numpy' or 'numba'")
    try:
        import cupy
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError(_INSTALL_HINT)
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise RuntimeError(f"{_INSTALL_HINT} (CUDA error: {exc})") from exc
    return cupy


def _to_device(cp, p, *arrays):
    return ({k: cp.asarray(v) for k, v in p.items()},) + tuple(
        None if a is None else cp.asarray(a) for a in arrays)


def _host(cp, v):
    if v is None:
        return None
    if isinstance(v, dict):
        return {k: _host(cp, a) for k, a in v.items()}
    return cp.asnumpy(v)


def forward(cell, p, x):
    cp = _cupy(cell)
    dp, dx = _to_device(cp, p, x)
    tr = reference.forward(cp, cell, dp, dx)
    return reference.Trace(h=_host(cp, tr.h), c=_host(cp, tr.c), y=_host(cp, tr.y),
                           gates=_host(cp, tr.gates), leak=_host(cp, tr.leak), cand=_host(cp, tr.cand),
                           records=_host(cp, tr.records))


def loss_and_grad(cell, p, x, y, mask):
    cp = _cupy(cell)
    dp, dx, dy = _to_device(cp, p, x, y)
    loss, grads = reference.loss_and_grad(cp, cell, dp, dx, dy, mask)
    return float(loss), _host(cp, grads)


def jacobians(cell, p, x, diagonal):
    cp = _cupy(cell)
    dp, dx = _to_device(cp, p, x)
    return _host(cp, reference.jacobians(cp, cell, dp, dx, diagonal))


def lag_gradients(cell, p, x, y, mask, max_lag):
    cp = _cupy(cell)
    dp, dx, dy = _to_device(cp, p, x, y)
    loss, per_lag = reference.lag_gradients(cp, cell, dp, dx, dy, mask, max_lag)
    return float(loss), [_host(cp, g) for g in per_lag]


def tangents(cell, p, x, w):
    cp = _cupy(cell)
    dp, dx = _to_device(cp, p, x)
    dw = {k: cp.asarray(v) for k, v in w.items()}
    return _host(cp, reference.tangents(cp, cell, dp, dx, dw))


def asnumpy(a):
    """Host copy of a CuPy or NumPy array."""
    return a if isinstance(a, np.ndarray) else _cupy().asnumpy(a)
