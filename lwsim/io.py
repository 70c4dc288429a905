"""Small I/O helpers: atomic file writes, JSON conversion of configs, flat .npz key paths."""

from __future__ import annotations

import io as _io
import json
import math
import numbers
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["atomic_write_bytes", "atomic_write_json", "atomic_savez", "to_jsonable", "flatten", "unflatten"]

SEP = "/"


def current_umask() -> int:
    """The process's umask, read without changing it where /proc allows (os.umask can only be
    read by setting it, which races with other threads creating files)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory,
    flushed and fsynced, then ``os.replace``. A crash leaves the old file (or none), never a
    half-written one. The file gets the mode a plain ``open(path, "w")`` would (0666 less the
    umask: 0644 under umask 022), not mkstemp's private 0600, so figures and cache records in a
    shared folder stay readable to the people they are shared with."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def to_jsonable(obj, where: str = "config"):
    """Convert tuples, numpy scalars/arrays and dtypes to JSON types; raise TypeError naming
    the offending key for anything else (no silent repr). Non-finite floats become the strings
    "nan", "inf", "-inf"."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        x = float(obj)
        if math.isfinite(x):
            return x
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
        return np.dtype(obj).name
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v, where) for v in obj.tolist()] if obj.ndim else to_jsonable(obj.item(), where)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, bool):
                k = str(int(k))
            if not isinstance(k, str):
                raise TypeError(f"{where}: dict key {k!r} is not a string")
            out[k] = to_jsonable(v, f"{where}.{k}")
        return out
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{where}: value of type {type(obj).__name__} is not JSON-serialisable")


def atomic_write_json(path, obj) -> bytes:
    data = json.dumps(to_jsonable(obj), indent=1, allow_nan=False).encode()
    atomic_write_bytes(path, data)
    return data


def atomic_savez(path, arrays: dict) -> bytes:
    """``np.savez`` (uncompressed) of ``arrays`` written atomically; returns the bytes."""
    buf = _io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    atomic_write_bytes(path, data)
    return data


def flatten(tree: dict, prefix: str = "") -> dict:
    """{"a": {"b": arr}} -> {"a/b": arr}. Keys must not contain '/'."""
    out = {}
    for k, v in tree.items():
        k = str(k)
        if SEP in k:
            raise ValueError(f"key {k!r} contains {SEP!r}")
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + SEP))
        else:
            out[key] = np.asarray(v)
    return out


def unflatten(flat: dict) -> dict:
    out: dict = {}
    for key, v in flat.items():
        parts = key.split(SEP)
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    return out
