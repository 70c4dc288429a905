"""The results table ``results.csv.gz`` beside FINDINGS.md: every run × lag × N of the studies
that have lag × N data, in one long table for outside analysis (docs/experiments.md §5.8, where
each column is described).

Each study declares its rows (``Study.tidy``, built with :func:`lag_n_rows`); :func:`write`
gathers them in the registry's order and writes one gzip-compressed CSV, the same bytes on every
rerun: columns and rows in a fixed order, floats as Python's shortest round-trip ``repr``
(``float(text)`` gives the same double back), ``inf`` for infinity, an empty cell for a missing
value (NaN, None, a column the study has not), booleans as ``true``/``false``, lists in the
configuration as compact JSON, and a gzip header without file name or time stamp.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
from pathlib import Path

import numpy as np

from ..io import atomic_write_bytes
from .run import Run

FILE = "results.csv.gz"
# the columns every row has first: which study, preset, run group and run (the cache key)
HEAD = ("study", "preset", "group", "run")
# the row's place within its run: the detection table (null and tail method, or convention),
# the lag ℓ and the budget N
AXES = ("null", "tail_method", "conventions", "lag", "N")
# what was measured there (per lag: f … reliable; per lag and N: detected; per N: h_n)
MEASURES = ("f", "mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_samples", "n_hat", "n_star", "reliable",
            "detected", "h_n")
RESERVED = frozenset(HEAD + AXES + MEASURES)


def config_column(key):
    """The column of configuration key ``key``: the key itself, or ``config_<key>`` where it is
    also the name of a fixed column (a_behaviour's training-set size N)."""
    return f"config_{key}" if key in RESERVED else key


def _n(x):
    """A budget or lag as an int when it is a whole number."""
    x = float(x)
    return int(x) if x.is_integer() else x


def lag_n_rows(lags, n_grid, *, per_lag=None, per_n=None, n_hat=None, **axes):
    """One row per lag × N (lags outer, N inner), each with ``axes`` (e.g. ``null="lag"``).

    per_lag: {column: values over ``lags``} (None values leave the column empty); per_n: {column:
    values over ``n_grid``}; n_hat: N̂(ℓ) over ``lags``, which adds the columns n_hat,
    detected (N̂(ℓ) ≤ N) and, unless ``per_n`` has it, h_n = Ĥ_N (lwsim.stats.learnability_window:
    the largest lag with N̂(ℓ) ≤ N, 0 if none).
    """
    from lwsim import stats
    lags, grid = np.asarray(lags, float).reshape(-1), np.asarray(n_grid, float).reshape(-1)
    per_lag = {k: v for k, v in dict(per_lag or {}).items() if v is not None}
    per_n = dict(per_n or {})
    if n_hat is not None:
        per_lag["n_hat"] = n_hat
        per_n.setdefault("h_n", stats.learnability_window(lags, np.asarray(n_hat, float), grid))
    for name, cols, size in (("per_lag", per_lag, lags.size), ("per_n", per_n, grid.size)):
        for k, v in cols.items():
            if np.size(v) != size:
                raise ValueError(f"{name}[{k!r}] has {np.size(v)} values for {size} {name[4:]}s")
    per_lag = {k: np.asarray(v).reshape(-1).tolist() for k, v in per_lag.items()}   # Python scalars
    per_n = {k: np.asarray(v).reshape(-1).tolist() for k, v in per_n.items()}
    rows = []
    for i, lag in enumerate(lags.tolist()):
        at_lag = {**axes, "lag": _n(lag), **{k: v[i] for k, v in per_lag.items()}}
        for j, N in enumerate(grid.tolist()):
            row = {**at_lag, "N": _n(N), **{k: v[j] for k, v in per_n.items()}}
            if n_hat is not None:
                row["detected"] = float(at_lag["n_hat"]) <= N
            rows.append(row)
    return rows


def cell(v):
    """The CSV text of one value (module docstring)."""
    t = type(v)
    if t is str:                        # the common cases first: a table has 10⁵ rows × 50 columns
        return v
    if t is float:
        return "" if v != v else repr(v)
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return "" if math.isnan(v) else repr(float(v))
    if isinstance(v, (list, tuple, dict, np.ndarray)):
        return json.dumps(v.tolist() if isinstance(v, np.ndarray) else v, separators=(",", ":"), sort_keys=True)
    return str(v)


def table(results, preset, studies):
    """(columns, rows) of the table: the rows of every study of ``studies`` (the registry's
    STUDIES, in order) with a ``tidy`` hook, from ``results`` ({group: [(config, result)]}); configuration columns are the union
    of the runs' configuration keys, sorted, between HEAD and AXES, their values already as their
    CSV text (:func:`cell`, once per run)."""
    out, keys = [], set()
    for s in studies:
        if s.tidy is None:
            continue
        for group, experiment, config, rows in s.tidy(results):
            run = Run(experiment, json.dumps(config, sort_keys=True)).key
            conf = {config_column(k): cell(v) for k, v in config.items()}
            keys.update(conf)
            for row in rows:
                bad = set(row) - set(AXES + MEASURES)
                if bad:
                    raise ValueError(f"study {s.name!r}: unknown column(s) {sorted(bad)} in its tidy rows")
                out.append({"study": s.name, "preset": preset, "group": group, "run": run, **conf, **row})
    return HEAD + tuple(sorted(keys)) + AXES + MEASURES, out


def encode(columns, rows):
    """The gzip-compressed CSV bytes of ``rows`` (dicts) under ``columns``: deterministic."""
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(columns)
    for row in rows:
        w.writerow([cell(row.get(c)) for c in columns])
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(text.getvalue().encode("utf-8"))
    return buf.getvalue()


def write(results, preset, out, studies):
    """Write ``<out>/results.csv.gz`` atomically from ``results`` and ``studies`` (:func:`table`);
    returns (path, number of rows)."""
    columns, rows = table(results, preset, studies)
    path = Path(out) / FILE
    atomic_write_bytes(path, encode(columns, rows))
    return path, len(rows)
