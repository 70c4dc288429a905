"""Reusable (T, B, ·) buffers for ``loss_and_grad``, one set per thread.

Why: every buffer of a loss_and_grad call is internal (only the gradients, new arrays, leave it),
and a training loop calls it again and again with the same shapes. Fresh buffers of that size
cost first-touch page faults plus the kernel's zeroing of every page, about as much as filling
them; reusing them removes that. ``forward`` and ``jacobians`` return their arrays and always
allocate fresh ones.

The workspace of a thread holds the buffers of its last call signature (cell options, shapes,
dtype); a call with another signature replaces them. :func:`clear_workspace` frees them.
"""
from __future__ import annotations

import threading

import numpy as np

_LOCAL = threading.local()


class Workspace:
    """Buffers handed out in call order: the n-th request of a signature gets the same array."""

    def __init__(self, signature, dtype):
        self.signature = signature
        self.dtype = dtype
        self.arrays = {}
        self.n = 0

    def __call__(self, *shape):
        key = (self.n, shape)
        self.n += 1
        a = self.arrays.get(key)
        if a is None:
            a = self.arrays[key] = np.empty(shape, dtype=self.dtype)
        return a


def workspace(cell, x):
    """The calling thread's workspace for a loss_and_grad of ``cell`` on ``x``."""
    signature = (repr(cell), x.shape, x.dtype)
    ws = getattr(_LOCAL, "ws", None)
    if ws is None or ws.signature != signature:
        ws = _LOCAL.ws = Workspace(signature, cell.dtype)
    ws.n = 0
    return ws


def clear_workspace():
    """Free the calling thread's buffers."""
    _LOCAL.ws = None
