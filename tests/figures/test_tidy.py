"""Tests of lwsim/figures/tidy.py (laid out like the code: docs/testing.md) and of the studies'
``tidy`` hooks (studies/main/tidy.py, behaviour, conventions, optimizers): the results table
results.csv.gz (docs/experiments.md §5.8).

A hand-built results structure is written and read back with the standard library alone (csv,
gzip): every value equal, NaN ↔ empty cell, inf ↔ "inf"; the column set and order are pinned; two
writes give the same bytes; the smoke preset written by make_figures (three figures, numpy
backend) holds the rows of the groups it read, consistent with Ĥ_N.

Planted bugs, each seen failing and then restored:
  P1 MEASURES without "kappa_hat" (a dropped column)
     → test_columns_pinned, test_round_trip_every_value
  P2 lag_n_rows swapping lag and N in a row ("lag": _n(N), "N": _n(lag))
     → test_round_trip_every_value, test_lag_n_rows_order_and_detected, test_smoke_end_to_end
  P3 detected as N̂(ℓ) < N (strict)
     → test_lag_n_rows_order_and_detected, test_round_trip_every_value
  P4 the gzip header with the time of writing (mtime=None)
     → test_deterministic_bytes
  P5 NaN written as "nan" instead of an empty cell
     → test_round_trip_every_value
  P6 studies/main/tidy.py reading the "lag" null's columns for every null (sfx = "")
     → test_main_rows_per_null_and_method
  P7 make_figures not writing the table (the tidy.write line removed)
     → test_smoke_end_to_end
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from lwsim.figures import tidy
from lwsim.figures.run import Run
from lwsim.figures.studies import behaviour, conventions, main, optimizers
from lwsim.figures.studies.main.tidy import run_rows

FIXED = ("study", "preset", "group", "run")
AXES = ("null", "tail_method", "conventions", "lag", "N")
MEASURES = ("f", "mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_samples", "n_hat", "n_star", "reliable",
            "detected", "h_n")


def read(blob):
    """(header, rows as lists of text) of a results.csv.gz, with the standard library alone."""
    lines = list(csv.reader(io.StringIO(gzip.decompress(blob).decode("utf-8"))))
    return lines[0], lines[1:]


CFG = {"cell": "gru", "seed": 7, "lr": 0.1, "lags": [1, 2], "N": 50, "flag": True, "note": "a,b \"q\""}


def _fake(name="fake"):
    """A study whose hook gives one run: 2 lags × 3 N under one null, values with NaN, inf, None."""
    def hook(results):
        if "g" not in results:
            return []
        return [("g", "exp", CFG, tidy.lag_n_rows(
            [1, 2], [10.0, 100.0, 1000.0], null="lag", tail_method="auto",
            per_lag={"f": [0.5, float("nan")], "mean": np.array([1 / 3, -2.5e-300]), "alpha_hat": [2.0, 1.25],
                     "sigma_hat": [0.1, 0.0], "kappa_hat": [2.0, 5.0], "n_samples": None,
                     "n_star": [3.5, float("inf")], "reliable": np.array([True, False])},
            n_hat=[100.0, float("inf")], per_n={"h_n": [0.0, 1.0, 1.0]}))]
    return SimpleNamespace(name=name, tidy=hook)


def _expected():
    """The fake study's rows as the values they must read back as (None: an empty cell)."""
    out = []
    for i, lag in enumerate([1, 2]):
        for j, N in enumerate([10, 100, 1000]):
            out.append({"lag": lag, "N": N, "f": [0.5, None][i], "mean": [1 / 3, -2.5e-300][i],
                        "alpha_hat": [2.0, 1.25][i], "sigma_hat": [0.1, 0.0][i], "kappa_hat": [2.0, 5.0][i],
                        "n_samples": None, "n_hat": [100.0, math.inf][i], "n_star": [3.5, math.inf][i],
                        "reliable": [True, False][i], "detected": [100.0, math.inf][i] <= N,
                        "h_n": [0.0, 1.0, 1.0][j]})
    return out


def test_columns_pinned():
    assert (tidy.HEAD, tidy.AXES, tidy.MEASURES) == (FIXED, AXES, MEASURES)
    columns, rows = tidy.table({"g": []}, "smoke", studies=[_fake()])
    assert columns == FIXED + ("cell", "config_N", "flag", "lags", "lr", "note", "seed") + AXES + MEASURES
    assert len(rows) == 6
    assert tidy.config_column("N") == "config_N" and tidy.config_column("cell") == "cell"


def test_round_trip_every_value(tmp_path):
    path, n = tidy.write({"g": []}, "smoke", tmp_path, studies=[_fake()])
    assert path == tmp_path / "results.csv.gz" and n == 6
    header, rows = read(path.read_bytes())
    assert len(rows) == 6 and all(len(r) == len(header) for r in rows)
    key = Run("exp", json.dumps(CFG, sort_keys=True)).key
    for text, want in zip(rows, _expected()):
        got = dict(zip(header, text))
        assert (got["study"], got["preset"], got["group"], got["run"]) == ("fake", "smoke", "g", key)
        assert (got["cell"], got["seed"], got["lr"], got["config_N"]) == ("gru", "7", "0.1", "50")
        assert (got["flag"], json.loads(got["lags"]), got["note"]) == ("true", [1, 2], "a,b \"q\"")
        assert (got["null"], got["tail_method"], got["conventions"]) == ("lag", "auto", "")
        assert int(got["lag"]) == want["lag"] and int(got["N"]) == want["N"]
        for col in ("f", "mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_samples", "n_hat", "n_star", "h_n"):
            if want[col] is None:
                assert got[col] == "", col                       # NaN and None ↔ empty
            else:
                assert float(got[col]) == want[col], col        # exact: repr round-trips
        for col in ("reliable", "detected"):
            assert got[col] == ("true" if want[col] else "false"), col
    assert rows[3][header.index("n_hat")] == "inf"


def test_deterministic_bytes(tmp_path):
    a = tidy.write({"g": []}, "smoke", tmp_path / "a", studies=[_fake()])[0].read_bytes()
    b = tidy.write({"g": []}, "smoke", tmp_path / "b", studies=[_fake()])[0].read_bytes()
    assert a == b
    assert a[3] & 0x08 == 0 and a[4:8] == b"\0\0\0\0"          # no file name, mtime 0 in the gzip header


def test_no_rows_and_unknown_columns(tmp_path):
    header, rows = read(tidy.write({}, "quick", tmp_path, studies=[_fake(), SimpleNamespace(name="x", tidy=None)])[0]
                        .read_bytes())
    assert tuple(header) == FIXED + AXES + MEASURES and rows == []
    bad = SimpleNamespace(name="bad", tidy=lambda r: [("g", "e", {}, [{"lag": 1, "oops": 2}])])
    with pytest.raises(ValueError, match="bad.*oops"):
        tidy.table({}, "quick", studies=[bad])


def test_lag_n_rows_order_and_detected():
    rows = tidy.lag_n_rows([4, 8], [25.0, 50.0], null="x", n_hat=[50.0, math.inf], per_lag={"f": [1.0, 2.0]})
    assert [(r["lag"], r["N"]) for r in rows] == [(4, 25), (4, 50), (8, 25), (8, 50)]
    assert [r["detected"] for r in rows] == [False, True, False, False]      # N̂(ℓ) ≤ N
    assert [r["h_n"] for r in rows] == [0.0, 4.0, 0.0, 4.0]                  # computed: max{ℓ: N̂ ≤ N}
    assert [r["f"] for r in rows] == [1.0, 1.0, 2.0, 2.0] and all(r["null"] == "x" for r in rows)
    with pytest.raises(ValueError, match="per_lag.*'f'"):
        tidy.lag_n_rows([4, 8], [25.0], per_lag={"f": [1.0]})


def test_cell_text():
    assert [tidy.cell(v) for v in (None, True, np.bool_(False), 3, np.int64(-2), 0.1, np.float32(0.5),
                                   float("nan"), -math.inf, "s", [1, "a"], {"b": 1, "a": [2]}, np.array([1, 2]))] == \
        ["", "true", "false", "3", "-2", "0.1", "0.5", "", "-inf", "s", '[1,"a"]', '{"a":[2],"b":1}', "[1,2]"]


def _a_main_result(methods=("auto",), nulls=("lag", "full")):
    """An a_main-shaped result: 2 lags, 2 N; every null's columns distinct (value + offset)."""
    r = {"lags": np.array([2, 4]), "n_grid": np.array([10.0, 20.0]), "f": np.array([0.9, 0.1]),
         "tail_methods": list(methods), "nulls": list(nulls), "n_samples": np.array([32.0, 32.0])}
    for k, sfx in enumerate(["" if n == "lag" else f"_{n}" for n in nulls] + [f"_{m}" for m in methods[1:]]):
        for key in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_star"):
            r[key + sfx] = np.array([1.0, 2.0]) + 10 * k
        r["reliable" + sfx] = np.array([k % 2 == 0, True])
        r["n_hat" + sfx] = np.array([10.0, math.inf]) if k == 0 else np.array([20.0, 20.0])
        r["h_n" + sfx] = np.array([2.0, 2.0]) if k == 0 else np.array([0.0, 4.0])
    return r


def test_main_rows_per_null_and_method():
    rows = run_rows(_a_main_result(methods=("ecf", "mcculloch"), nulls=("lag", "full")))
    assert [(r["null"], r["tail_method"]) for r in rows[::4]] == [("lag", "ecf"), ("full", "ecf"), ("lag", "mcculloch")]
    assert [r["mean"] for r in rows] == [1.0, 1.0, 2.0, 2.0, 11.0, 11.0, 12.0, 12.0, 1.0, 1.0, 2.0, 2.0]
    assert [r["alpha_hat"] for r in rows[8:]] == [21.0, 21.0, 22.0, 22.0]       # mcculloch's own fit
    assert [r.get("n_samples") for r in rows[::2]] == [32.0, 32.0, None, None, None, None]
    assert [r["detected"] for r in rows[:8]] == [True, True, False, False, False, True, False, True]
    assert [r["h_n"] for r in rows[4:8]] == [0.0, 4.0, 0.0, 4.0]              # stored, not recomputed
    assert [r["f"] for r in rows[4:8]] == [0.9, 0.9, 0.1, 0.1]


def test_study_hooks():
    r = _a_main_result()
    R = {"a_main": [({"cell": "gru"}, r)], "a_compare": [({"cell": "lstm", "optimizer": "sgd"}, r)]}
    assert [(g, e, c) for g, e, c, _ in main.STUDY.tidy(R)] == [("a_main", "a_main", {"cell": "gru"})]
    assert [(g, e, c["cell"]) for g, e, c, _ in optimizers.STUDY.tidy(R)] == [("a_compare", "a_main", "lstm")]
    assert main.STUDY.tidy({}) == [] and behaviour.STUDY.tidy({}) == [] and conventions.STUDY.tidy({}) == []
    b = {"lags": np.array([1, 2]), "n_grid": np.array([5.0, 50.0]), "nulls": ["lag", "full"],
         "n_hat_lag": np.array([5.0, 50.0]), "n_hat_full": np.array([math.inf, math.inf])}
    (g, e, cfg, rows), = behaviour.STUDY.tidy({"a_behaviour": [({"N": 5}, b)]})
    assert (g, e) == ("a_behaviour", "a_behaviour")
    assert [(r["null"], r["lag"], r["N"], r["detected"], r["h_n"]) for r in rows] == [
        ("lag", 1, 5, True, 1.0), ("lag", 1, 50, True, 2.0), ("lag", 2, 5, False, 1.0), ("lag", 2, 50, True, 2.0),
        ("full", 1, 5, False, 0.0), ("full", 1, 50, False, 0.0), ("full", 2, 5, False, 0.0), ("full", 2, 50, False, 0.0)]
    c = {"lags": np.array([3]), "n_grid": np.array([7.0])}
    for i, conv in enumerate(("lwsim", "author")):
        c.update({f"f_{conv}": [1.0 + i], f"psi_mean_{conv}": [2.0 + i], f"alpha_{conv}": [1.5 + i],
                  f"sigma_{conv}": [0.5 + i], f"n_hat_{conv}": [7.0], f"h_n_{conv}": [3.0 - i]})
    (_, _, _, rows), = conventions.STUDY.tidy({"a_conventions": [({}, c)]})
    assert [(r["conventions"], r["f"], r["mean"], r["alpha_hat"], r["sigma_hat"], r["detected"], r["h_n"])
            for r in rows] == [("lwsim", 1.0, 2.0, 1.5, 0.5, True, 3.0), ("author", 2.0, 3.0, 2.5, 1.5, True, 2.0)]


def test_smoke_end_to_end(tmp_path):
    """make_figures on the smoke preset (A1, A13; numpy backend) writes the table of their groups."""
    from lwsim.figures.drawing import make_figures
    out = tmp_path / "figs"
    make_figures(["A1", "A13"], preset="smoke", out=str(out), cache=str(tmp_path / "runs"), jobs=1,
                 backend="numpy", progress=False)
    header, rows = read((out / "results.csv.gz").read_bytes())
    assert tuple(header[:4]) == FIXED and tuple(header[-len(AXES + MEASURES):]) == AXES + MEASURES
    rows = [dict(zip(header, r)) for r in rows]
    assert {r["group"] for r in rows} == {"a_main", "a_conventions"}          # only the groups read
    main_rows = [r for r in rows if r["group"] == "a_main"]
    assert {r["null"] for r in main_rows} == {"lag", "full", "author", "snr", "ecf", "floors", "f32"}
    lags = [2, 3, 4, 5, 6, 8, 10, 12, 14, 16]
    grid = [25, 100, 400, 1600]
    assert len(main_rows) == 5 * 7 * len(lags) * len(grid)                   # 5 cells × 7 tables × lag × N
    assert [(int(r["lag"]), int(r["N"])) for r in main_rows[:len(lags) * len(grid)]] == \
        [(lag, N) for lag in lags for N in grid]
    # Ĥ_N as stored is the largest detected lag at N (0 if none), in every run × table × N
    by = {}
    for r in main_rows + [r for r in rows if r["group"] == "a_conventions"]:
        by.setdefault((r["run"], r["null"], r["conventions"], r["N"]), []).append(r)
    for rs in by.values():
        assert float(rs[0]["h_n"]) == max([int(r["lag"]) for r in rs if r["detected"] == "true"], default=0)
    assert len({r["run"] for r in main_rows}) == 5 and all(r["preset"] == "smoke" for r in rows)
