"""Checks across the project (cross-cutting; docs/testing.md).

benchmarks/bench_presets.py: its order, its aggregates and its numba-cache bookkeeping (no preset runs)."""


import hashlib
import importlib.util
from pathlib import Path

import pytest


PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_presets.py"


_module_spec = importlib.util.spec_from_file_location("bench_presets", PATH)


bp = importlib.util.module_from_spec(_module_spec)


_module_spec.loader.exec_module(bp)


def test_interleaved_order_is_abba():
    assert bp.interleaved_order(1) == ["old", "new"]
    assert bp.interleaved_order(2) == ["old", "new", "new", "old"]
    assert bp.interleaved_order(3) == ["old", "new", "new", "old", "old", "new"]
    for r in range(1, 8):                             # each tree first in half the rounds
        order = bp.interleaved_order(r)
        assert order.count("old") == order.count("new") == r


@pytest.mark.parametrize("bad, err", [(0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_interleaved_order_rejects(bad, err):
    with pytest.raises(err, match="rounds"):
        bp.interleaved_order(bad)


def test_summarize_medians_and_ratio():
    # medians 11 and 6 (the means, 17 and 37, would give 0.46): ratio 11/6
    med_old, med_new, ratio = bp.summarize({"old": [30.0, 10.0, 11.0], "new": [100.0, 5.0, 6.0]})
    assert (med_old, med_new) == (11.0, 6.0)
    assert ratio == pytest.approx(11 / 6, rel=1e-12)
    # an even count: the median is the mean of the middle two
    assert bp.summarize({"old": [4.0, 8.0], "new": [1.0, 3.0, 2.0, 100.0]}) == (6.0, 2.5, 6.0 / 2.5)


@pytest.mark.parametrize("times", [{"old": [1.0]}, {"old": [], "new": [1.0]}, {"old": [1.0], "new": [0.0]},
                                   {"old": [float("nan")], "new": [1.0]}])
def test_summarize_rejects(times):
    with pytest.raises(ValueError, match="times"):
        bp.summarize(times)


def test_format_table():
    runs = [dict(tree="old", seconds=200.0, inner=198.4, compiled=0),
            dict(tree="new", seconds=90.0, inner=None, compiled=0),
            dict(tree="new", seconds=110.0, inner=None, compiled=3),
            dict(tree="old", seconds=240.0, inner=None, compiled=0)]
    lines = bp.format_table(["head"], runs)
    assert lines[0] == "head"
    assert lines[2] == "  1  old      200.0  preset's own timer 198.4 s"
    assert lines[3] == "  2  new       90.0"
    assert lines[4] == "  3  new      110.0  compiled: numba wrote 3 cache file(s)"
    # medians 220 and 100 → 2.20x
    assert lines[6] == "median old 220.0 s (n=2), new 100.0 s (n=2); ratio old/new = 2.20x"
    assert lines[7].startswith("WARNING: numba compiled during a timed run")
    assert len(bp.format_table(["head"], [dict(r, compiled=0) for r in runs])) == 7


def test_numba_cache_folders_match_numba(tmp_path):
    caching = pytest.importorskip("numba.core.caching")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "k.py").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.npz").write_text("")       # no .py: numba never caches for it
    sub = tmp_path / "pkg" / "sub"
    want = "sub_" + hashlib.sha1(str(sub).encode()).hexdigest()
    assert bp.numba_cache_folders(tmp_path) == {want}
    assert caching._CacheLocator.get_suitable_cache_subpath(str(sub / "k.py")) == want
