"""The results cache, trusted only after a check (docs/cluster.md).

One run = ``<cache>/<experiment>/<key>.npz`` (its arrays) + ``<key>.json`` (everything else). The
.json is written last and marks completion; it carries

    key            the run's configuration hash (``Run.key``)
    lwsim_version  the version that computed it
    checksum       sha256 over the arrays (name, dtype, shape, bytes, sorted by name) and the
                   canonical JSON of the non-array results

A file that cannot be read, is truncated or corrupted, or whose key, configuration, version or
checksum does not match, is reported with its path, moved aside to ``<cache>/quarantine/`` and
treated as missing, so the run is recomputed: never a traceback, never a silently wrong figure.
The checksum covers the contents, not the .npz bytes, so results are comparable bit for bit
across machines and executors (the zip container stores write times).
"""
from __future__ import annotations

import hashlib
import json
import time
import warnings
from pathlib import Path

import numpy as np

from .. import __version__
from ..io import atomic_savez, atomic_write_json, to_jsonable

QUARANTINE = "quarantine"


class CacheWarning(UserWarning):
    """A cached result failed its check and was moved aside (it will be recomputed)."""


def paths(cache_dir, run):
    base = Path(cache_dir) / run.experiment / run.key
    return base.with_suffix(".json"), base.with_suffix(".npz")


def checksum(rest, arrays):
    """sha256 of the canonical JSON of ``rest`` and of every array's name, dtype, shape and bytes."""
    h = hashlib.sha256(json.dumps(rest, sort_keys=True, allow_nan=False).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save(cache_dir, run, result, elapsed_s=None, profile=None):
    """Arrays → .npz, everything else → .json (written last: it marks completion). The run's wall
    time and profile ({part: seconds}, timing.py) go beside the result in the .json, outside its
    checksum: they describe how the result was computed, not what it is."""
    if not isinstance(result, dict):
        raise TypeError(f"result of {run.experiment} must be a dict, got {type(result).__name__}")
    js, nz = paths(cache_dir, run)
    arrays = {k: np.asarray(v) for k, v in result.items() if isinstance(v, np.ndarray)}
    rest = to_jsonable({k: v for k, v in result.items() if k not in arrays}, "result")
    atomic_savez(nz, arrays)
    meta = {"experiment": run.experiment, "key": run.key, "config": run.config,
            "lwsim_version": __version__, "checksum": checksum(rest, arrays),
            "result": rest, "arrays": sorted(arrays)}
    if elapsed_s is not None:
        meta["elapsed_s"] = float(elapsed_s)
    if profile is not None:
        meta["profile"] = {str(k): float(v) for k, v in profile.items()}
    atomic_write_json(js, meta)


def _problem(run, js, nz):
    """(result, None) if the cached run checks out, (None, reason) otherwise."""
    try:
        meta = json.loads(js.read_text())
    except (OSError, ValueError) as exc:
        return None, f"unreadable JSON ({exc.__class__.__name__})"
    if not isinstance(meta, dict) or meta.get("key") != run.key or meta.get("experiment") != run.experiment \
            or meta.get("config") != run.config:
        return None, "configuration hash does not match the file name"
    if meta.get("lwsim_version") != __version__:
        return None, f"computed by lwsim {meta.get('lwsim_version')!r}, this is {__version__}"
    try:
        with np.load(nz, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:                     # truncated / not a zip / bad member: all mean corrupt
        return None, f"unreadable arrays ({exc.__class__.__name__}: {exc})"
    rest = meta.get("result")
    if sorted(arrays) != meta.get("arrays") or not isinstance(rest, dict):
        return None, "array names do not match the record"
    if checksum(rest, arrays) != meta.get("checksum"):
        return None, "checksum mismatch (corrupted contents)"
    return {**rest, **arrays}, None


def quarantine(cache_dir, files, reason):
    """Move ``files`` to <cache>/quarantine/<experiment>/ and warn, naming each path and the reason."""
    dest = Path(cache_dir) / QUARANTINE
    stamp = time.strftime("%Y%m%dT%H%M%S")
    moved = []
    for f in files:
        if f.exists():
            target = dest / f.parent.name / f"{f.name}.{stamp}"
            target.parent.mkdir(parents=True, exist_ok=True)
            f.replace(target)
            moved.append(f"{f} -> {target}")
    msg = f"lwsim cache: {reason}; moved aside and recomputing: " + "; ".join(moved)
    warnings.warn(msg, CacheWarning, stacklevel=3)
    return msg


def load(cache_dir, run):
    """The cached result of ``run``, or None if absent; a bad record is reported and moved aside."""
    js, nz = paths(cache_dir, run)
    if not js.exists() and not nz.exists():
        return None
    if not js.exists():                          # killed between the two writes: incomplete
        quarantine(cache_dir, [nz], f"{nz}: incomplete record (no {js.name})")
        return None
    if not nz.exists():
        quarantine(cache_dir, [js], f"{js}: missing {nz.name}")
        return None
    result, reason = _problem(run, js, nz)
    if result is None:
        quarantine(cache_dir, [js, nz], f"{nz.parent / run.key}.{{json,npz}}: {reason}")
    return result


def is_cached(cache_dir, run):
    """True if a record exists and passes its check; touches nothing (for dry runs)."""
    js, nz = paths(cache_dir, run)
    return js.exists() and nz.exists() and _problem(run, js, nz)[1] is None


def profile(cache_dir, run):
    """The stored profile {part: seconds, "wall": s} of a cached run (None if absent)."""
    js, _ = paths(cache_dir, run)
    try:
        p = json.loads(js.read_text()).get("profile")
    except (OSError, ValueError):
        return None
    return p if isinstance(p, dict) else None


def elapsed(cache_dir, run):
    """Measured seconds of a cached run (None if absent or not recorded)."""
    js, _ = paths(cache_dir, run)
    try:
        return json.loads(js.read_text()).get("elapsed_s")
    except (OSError, ValueError):
        return None
