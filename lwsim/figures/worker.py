"""Execute one run in a worker process, with its profile (docs/experiments.md §5.3).

Imports the study registry, so that a spawned worker (process pool or Dask) has every experiment
registered before it runs one.
"""
from __future__ import annotations

import json

from .run import RunError, limit_threads


def run_task(fn, config_json, threads=None):
    """Execute one run in a worker → (result, seconds, profile): profile splits the seconds into
    parts (timing.py). Errors come back as RunError(traceback)."""
    import traceback
    from . import studies  # noqa: F401  (a spawned worker registers the experiments too)
    from . import timing
    limit_threads(threads)
    prof = timing.Profile()
    try:
        with timing.active(prof):
            result = fn(json.loads(config_json))
    except Exception:
        raise RunError(traceback.format_exc()) from None
    profile = prof.finish()
    return result, profile["wall"], profile
