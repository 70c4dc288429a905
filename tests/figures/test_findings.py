"""Tests of lwsim/figures/findings.py (laid out like the code: docs/testing.md).

Provenance of FINDINGS.md's headline (lwsim/figures/findings.py, issue 41 item 6): each row's
verdict is its own finding's, from its own figure's data.

Hand-built rendered data give findings 4, 6 and 7 three different verdicts (and finding 9/10 none);
the headline rows must carry them in the right places.

Planted wrong-variable bug (seen failing, then restored):
  P1 write_findings: every headline row reads the first computed finding (rows[min(rows)])
     → test_headline_rows_carry_their_own_findings_verdict

Tests that kill mutmut's survivors in lwsim/figures/findings.py, the FINDINGS.md assembler
(issue 32, docs/testing.md). Every expected text is written out by hand.

The FINDINGS rules (lwsim.figures.findings, docs/experiments.md §5.5) on hand-built figure data.

Every rule gets cases whose verdict is known — reproduced, not reproduced, inconclusive — placed so
that a flipped comparison, a non-strict bound made strict (or the reverse), a mean for a median or
a seed-mean verdict that ignores one dissenting seed changes the outcome.

The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases."""


from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import lwsim.figures.findings as fa
from lwsim.figures import findings as fa, findings as report
from lwsim.figures.presets import A_CELLS
from lwsim.figures.studies.main import findings as F
from helpers import _r6


CMD = "python -m lwsim.figures --preset quick --out f --cache r"


PROV = ("Made by `" + CMD + "` from 3 cached runs (a 1, g 2); the numbers are in the JSON files beside the "
        "figures. That one command remakes every table below from the cache (computing what is missing), "
        "except where a section names a further command (\"Training dtype\").")


DTYPE_HEAD = ["## Training dtype", "",
              "Trained in float32 (PyTorch's default dtype, as [A] and [B]); diagnostics and statistics in "
              "float64 on the trained weights, cast once.", ""]


EARLIER = "\n".join([
    "# Findings, preset `quick`", "", "| # | finding | verdict |", "|---|---|---|",
    "| 1 | one | reproduced |", "| 2 | two | not run |", "",
    "## 1. one", "", "**reproduced** — old rule.", "",
    "## Table", "", "| x | y | 0.5 | 0.7 |", "| p | q | not run | 9 |", "a | b | stale", "",
    "## Gone", "", "old body", ""])


def _study(name, **kw):
    base = dict(name=name, findings=None, headline=None, before=None, after=None)
    base.update(kw)
    return SimpleNamespace(**base)


@pytest.fixture
def fake_studies(monkeypatch):
    s1 = _study(
        "s1",
        findings=lambda r: {1: (1, "reproduced", ["item a", "item b"], "rule one"),
                            3: (3, "not reproduced", [], "rule three")},
        headline=lambda r: [("h", "Head", None), ("h2", "Head2", "inconclusive")],
        before=lambda extra, rendered, results: [f"before {extra} {sorted(results)}", ""],
        after=lambda extra, rendered, results: [f"after {extra}"])
    s2 = _study("s2", findings=lambda r: {}, after=lambda extra, rendered, results: [f"after2 {extra}"])
    monkeypatch.setattr(fa, "studies", SimpleNamespace(STUDIES=[s1, _study("empty"), s2]))
    monkeypatch.setattr(fa, "TITLES", {1: "one", 2: "two", 3: "three"})
    monkeypatch.setattr(fa, "platform_line", lambda threads=None: f"PLATFORM {threads}")


N = [100, 1000, 10000, 100000]                   # mid index 2: growth = H[-1] − H[2]


def _a2(law, lam=0.05, seed_laws=None):
    return {"selected_bic": law, "selected": law, "per_seed_selected_bic": seed_laws or [law, law],
            "per_seed_lambda": [lam, lam],
            "fits": {"exponential": {"params": {"C": 1.0, "lambda": lam}},
                     "tempered": {"params": {"beta": 0.1, "k": 0.9, "l_c": 10.0}}}}


def _a1(*seeds):
    h = np.array(seeds, float)
    return {"N": N, "H_N_mean": h.mean(0).tolist(), "H_N_seeds": h.tolist()}


def _r12(fast_law, fast_h, slow_law, slow_h, **kw):
    a1 = {c: _a1(*fast_h) for c in F.FAST} | {c: _a1(*slow_h) for c in F.SLOW}
    a2 = {c: _a2(fast_law, **kw) for c in F.FAST} | {c: _a2(slow_law) for c in F.SLOW}
    return {"A1": a1, "A2": a2}


FLAT = ([0, 5, 20, 20], [0, 5, 20, 20])          # growth 0


GROW = ([0, 5, 10, 40], [0, 5, 10, 30])          # growth 30, 20


# ----------------------------------------------------------------------------------------------
# platform_line
# ----------------------------------------------------------------------------------------------


def test_platform_line_passes_the_threads(monkeypatch):
    import lwsim.platform
    monkeypatch.setattr(lwsim.platform, "platform_line", lambda threads=None: f"P{threads}")
    assert fa.platform_line(3) == "P3"
    assert fa.platform_line() == "PNone"


# ----------------------------------------------------------------------------------------------
# dtype_lines
# ----------------------------------------------------------------------------------------------


def test_dtype_lines_without_and_with_a_twin(monkeypatch):
    assert fa.dtype_lines({}, None, None, "quick") == []
    assert fa.dtype_lines({}, "float32", None, "quick") == DTYPE_HEAD
    assert fa.dtype_lines({}, "float64", None, "quick") == [
        "## Training dtype", "",
        "Trained in float64; diagnostics and statistics in float64 on the trained weights, cast once.", ""]
    assert fa.dtype_lines({}, "float32", ("float64", None), "medium") == DTYPE_HEAD + [
        "Verdicts with float64 training: not computed (its runs are not in the cache: run "
        "`python -m lwsim.figures --preset medium --train-dtype float64 --out <another folder>` with the "
        "same --cache, then this command again).", ""]
    monkeypatch.setattr(fa, "TITLES", {1: "one", 2: "two", 3: "three", 4: "four"})
    rows = {1: (1, "reproduced", [], ""), 2: (2, "inconclusive", [], ""), 4: (4, "not reproduced", [], "")}
    trows = {1: (1, "reproduced", [], ""), 2: (2, "reproduced", [], ""), 3: (3, "inconclusive", [], ""),
             4: (4, "reproduced", [], "")}
    assert fa.dtype_lines(rows, "float32", ("float64", trows), "quick") == DTYPE_HEAD + [
        "The same preset trained in float64 (runs from the cache): verdict(s) moved: 2, 4.", "",
        "| # | float32 | float64 |", "|---|---|---|",
        "| 1 | reproduced | reproduced |", "| 2 | inconclusive | reproduced |",
        "| 3 | not run | inconclusive |", "| 4 | not reproduced | reproduced |", ""]
    same = {1: (1, "reproduced", [], "")}
    assert fa.dtype_lines(same, "float32", ("float64", {}), "quick")[4:7] == [
        "The same preset trained in float64 (runs from the cache): no verdict moved.", "",
        "| # | float32 | float64 |"]
    assert fa.dtype_lines(same, "float32", ("float64", {}), "quick")[-3:] == [
        "| 3 | not run | not run |", "| 4 | not run | not run |", ""]


# ----------------------------------------------------------------------------------------------
# provenance_lines
# ----------------------------------------------------------------------------------------------


def test_provenance_lines_whole():
    assert fa.provenance_lines("quick", CMD, {"g": [1, 2], "a": [3]}) == [PROV, ""]
    assert fa.provenance_lines("quick", None, {"g": [1]}) == [
        "Generated by `python -m lwsim.figures`; numbers from the JSON files beside the figures.", ""]


def test_findings_provenance_line():
    from lwsim.figures.findings import provenance_lines
    lines = provenance_lines("quick", "python -m lwsim.figures --preset quick --out f --cache r",
                             {"b": [1, 2], "a": [1]})
    assert lines[0].startswith("Made by `python -m lwsim.figures --preset quick --out f --cache r` from 3 cached "
                               "runs (a 1, b 2)")
    assert provenance_lines("quick", None, {})[0].startswith("Generated by")


# ----------------------------------------------------------------------------------------------
# _cells
# ----------------------------------------------------------------------------------------------


def test_cells_of_a_table_line():
    # private: its public caller diffs whole FINDINGS files; the pipe-stripping of one row by hand needs the helper
    assert fa._cells("| a | b |") == ["a", "b"]
    assert fa._cells("  | 1 | x y |z|  ") == ["1", "x y", "z"]
    assert fa._cells("| a |X|") == ["a", "X"]          # only the pipes are stripped from the ends


# ----------------------------------------------------------------------------------------------
# merge_earlier
# ----------------------------------------------------------------------------------------------


def test_merge_earlier_whole_text():
    new = "\n".join([
        "# Findings, preset `quick`", "", "| # | finding | verdict |", "|---|---|---|",
        "| 1 | one | not run |", "| 2 | two | not run |", "",
        "## 1. one", "", "Not run in this call (its figures were not requested).", "",
        "## Table", "", "| x | y | not run | 0.8 |", "| p | q | not run | not run |",
        "x | y | not run | 0.8", "| a | b | not run |", "| two | cells |", ""]) + "\n"
    out = fa.merge_earlier(new, EARLIER)
    assert out == "\n".join([
        "# Findings, preset `quick`", "", "| # | finding | verdict |", "|---|---|---|",
        "| 1 | one | reproduced (earlier) |", "| 2 | two | not run |", "",
        "## 1. one", "", fa.KEPT, "", "**reproduced** — old rule.", "",
        "## Table", "", "| x | y | 0.5 (earlier) | 0.8 |", "| p | q | not run | 9 (earlier) |",
        "x | y | not run | 0.8", "| a | b | not run |", "| two | cells |", "", "",
        "## Gone", "", fa.KEPT, "", "old body"]) + "\n"     # the new text's last line, then the old section
    # not the same preset (title line): nothing merged; nothing earlier: nothing merged
    assert fa.merge_earlier(new, "# Findings, preset `medium`\n" + EARLIER.split("\n", 1)[1]) == new
    assert fa.merge_earlier(new, None) == new and fa.merge_earlier(new, "") == new
    # without the final newline the merged text has none either
    assert not fa.merge_earlier(new.rstrip("\n"), EARLIER).endswith("\n")


# ----------------------------------------------------------------------------------------------
# write_findings
# ----------------------------------------------------------------------------------------------


def test_headline_rows_carry_their_own_findings_verdict(tmp_path):
    fast = ("constgate", "sharedgate")
    a6 = {c: {"mean": 1.9 if c in fast else 1.5, "fraction_below_1.9": 0.0,
              "mean_seeds": [1.9 if c in fast else 1.5] * 3} for c in A_CELLS}      # gap 0.4 in every seed
    a8 = {c: {"final_val_r2": [0.6] * 3, "r2_ceiling": 0.9, "sigma_y": 0.3} for c in A_CELLS}   # 67% of the ceiling
    a11 = {"table": [{"cell": "gru", "optimizer": "adamw", "seed": 1, "spearman": 0.7, "pearson_log": 0.99,
                      "slope_ratio": 1.0, "offdiag_mean": 0.0}]}                        # one seed: no interval
    b7 = {"sharedgate": [{"slope": 5.0, "remainder": 2.0, "seed": s} for s in range(3)]}
    rendered = {"A6": a6, "A8": a8, "A11": a11, "B7": b7}
    path = tmp_path / "FINDINGS.md"
    rows = fa.write_findings(rendered, "smoke", path)
    assert {k: v[1] for k, v in rows.items()} == {4: "reproduced", 6: "inconclusive", 7: "not reproduced"}
    table = path.read_text().split("| # | finding | verdict |")[1].split("\n\n")[0]     # the headline table
    head = {ln.split(" | ")[0].strip("| "): ln.split(" | ")[-1].strip(" |")
            for ln in table.splitlines() if ln.startswith("| ") and ln[2].isdigit()}
    assert (head["4"], head["6"], head["7"]) == ("reproduced", "inconclusive", "not reproduced")
    assert head["1"] == head["8"] == head["9"] == head["10"] == "not run"


def test_write_findings_whole_file(fake_studies, tmp_path):
    path = tmp_path / "FINDINGS.md"
    twin = ("float64", {1: (1, "inconclusive", [], ""), 3: (3, "not reproduced", [], "")})
    rows = fa.write_findings({}, "quick", path, dtype="float32", twin=twin, extras={"s1": "X", "s2": "Y"},
                             results={"g": [1, 2], "a": [3]}, command=CMD, threads=2)
    assert sorted(rows) == [1, 3]
    expect = [
        "# Findings (docs/experiments.md §5.5), preset `quick`", "", PROV, "", "PLATFORM 2", "",
        fa.VERDICT_WORDS, "", "| # | finding | verdict |", "|---|---|---|",
        "| 1 | one | reproduced |", "| 2 | two | not run |", "| 3 | three | not reproduced |",
        "| h | Head | not run |", "| h2 | Head2 | inconclusive |", "",
        *fa.rules_changed_lines({1: (1, "reproduced", [], ""), 3: (3, "not reproduced", [], ""),
                                 "h2": ("h2", "inconclusive", [], "")}, "quick"),
        *DTYPE_HEAD,
        "The same preset trained in float64 (runs from the cache): verdict(s) moved: 1.", "",
        "| # | float32 | float64 |", "|---|---|---|", "| 1 | reproduced | inconclusive |",
        "| 2 | not run | not run |", "| 3 | not reproduced | not reproduced |", "",
        "before X ['a', 'g']", "",
        "## 1. one", "", "**reproduced** — rule one.", "", "- item a", "- item b", "",
        "## 2. two", "", "Not run in this call (its figures were not requested).", "",
        "## 3. three", "", "**not reproduced** — rule three.", "", "",
        "after X", "after2 Y"]
    assert path.read_text() == "\n".join(expect)


def test_write_findings_defaults_and_earlier(fake_studies, tmp_path):
    path = tmp_path / "FINDINGS.md"
    fa.write_findings({}, "quick", path, earlier="# Findings (docs/experiments.md §5.5), preset `quick`\n\n"
                      "## Old study\n\nkept line\n")
    text = path.read_text()
    assert "before None []" in text and text.count("after None") == 1 and "after2 None" in text
    assert "## Training dtype" not in text and "PLATFORM None" in text
    assert text.endswith("\n".join(["after None", "after2 None", "## Old study", "", fa.KEPT, "", "kept line"]))


def test_write_findings_names_its_preset_in_the_twin_command(fake_studies, tmp_path):
    path = tmp_path / "FINDINGS.md"
    fa.write_findings({}, "medium", path, dtype="float32", twin=("float64", None))
    assert "`python -m lwsim.figures --preset medium --train-dtype float64 --out <another folder>`" in path.read_text()


def test_write_findings_table(tmp_path):
    r = _r12("exponential", FLAT, "tempered", GROW) | _r6([0.95, 0.96, 0.97])
    rows = report.write_findings(r, "quick", tmp_path / "F.md")
    text = (tmp_path / "F.md").read_text()
    assert rows[1][1] == "withheld" and rows[6][1] == "reproduced"          # no A8: [A]'s verdicts withheld
    assert "| 1 | ConstGate and SharedGate envelopes decay exponentially; their Ĥ_N saturates | withheld |" in text
    assert "| 7 | [B] Fréchet truncation error scales as ε² | not run |" in text


def test_verdict_words_defined_once_at_the_top(tmp_path):
    """The verdict words are defined once, above the headline table (issue 33 item 5)."""
    r = _r12("exponential", FLAT, "tempered", GROW) | _r6([0.95, 0.96])
    report.write_findings(r, "quick", tmp_path / "F.md")
    text = (tmp_path / "F.md").read_text()
    head = text.split("| # | finding | verdict |")[0]
    for word in ("**reproduced**", "**not reproduced**", "**inconclusive**", "**not run**"):
        assert head.count(word + " — ") == 1 and text.count(word + " — ") <= 1 + text.count(f"\n{word} — rule"), word
    assert text.count("Verdicts: ") == 1 and "Verdicts: " in head


def test_rules_changed_table_by_hand():
    lines = fa.rules_changed_lines({1: (1, "withheld", [], ""), 10: (10, "inconclusive", [], "")}, "medium")
    assert lines[0] == "## Rules changed (issue 43: every finding decided by an interval against a margin)"
    assert lines[2] == "| # | old rule | new rule | old verdict | new verdict | why |"
    rows = {ln.split(" | ")[0].strip("| "): ln.split(" | ") for ln in lines[4:14]}
    assert list(rows) == [str(k) for k in range(1, 11)]
    assert rows["1"][3:5] == ["not reproduced", "withheld"]            # medium's published verdict, then now
    assert rows["3"][3:5] == ["inconclusive", "not run"]               # medium's 3 was inconclusive (quick's reproduced)
    assert rows["10"][3:5] == ["not reproduced", "inconclusive"]
    assert fa.rules_changed_lines({}, "smoke")[4].split(" | ")[3] == "n/a"    # no published verdict for smoke


def test_set_aside_keeps_a_findings_file_lwsim_cannot_merge(tmp_path):
    path = tmp_path / "FINDINGS.md"
    assert fa.set_aside(path, "quick") is None                       # nothing there
    path.write_text(fa.findings_title("quick") + "\n\nours\n")
    assert fa.set_aside(path, "quick") is None and path.read_text() == fa.findings_title("quick") + "\n\nours\n"
    path.write_text("# My notes on the quick run\n")                 # hand-written
    kept = fa.set_aside(path, "quick")
    assert kept == tmp_path / "FINDINGS.kept.md" and not path.exists()
    assert kept.read_text() == "# My notes on the quick run\n"
    path.write_text(fa.findings_title("medium") + "\n")                       # another preset's
    assert fa.set_aside(path, "quick") == tmp_path / "FINDINGS.kept-2.md"
    path.write_text("x\n")
    assert fa.set_aside(path, "quick") == tmp_path / "FINDINGS.kept-3.md"
    assert (tmp_path / "FINDINGS.kept.md").read_text() == "# My notes on the quick run\n"
    assert (tmp_path / "FINDINGS.kept-2.md").read_text() == fa.findings_title("medium") + "\n"


def test_set_aside_title_is_the_written_title(fake_studies, tmp_path):
    path = tmp_path / "FINDINGS.md"
    fa.write_findings({}, "smoke", path)
    assert path.read_text().split("\n", 1)[0] == fa.findings_title("smoke") == "# Findings (docs/experiments.md §5.5), preset `smoke`"
    assert fa.set_aside(path, "smoke") is None


def test_rules_changed_table_whole_frame():
    lines = fa.rules_changed_lines({7: (7, "reproduced", [], "")}, "quick")
    assert lines[:4] == ["## Rules changed (issue 43: every finding decided by an interval against a margin)", "",
                         "| # | old rule | new rule | old verdict | new verdict | why |", "|---|---|---|---|---|---|"]
    assert lines[10] == ("| 7 | every slope within 2 ± 0.1 | each model's seed interval inside 2 ± 0.1 | reproduced | "
                         "reproduced | every-seed rule |")
    assert lines[14:] == ["", "The old verdicts are those published before the change (commit 8ce2d38); the "
                          "detection rule changed with them (the lower bound of |m̄|, docs/statistics.md §3.3.3), so "
                          "a new verdict reflects both.", ""]


def test_write_findings_rules_table_reads_the_studies_headline_verdicts(monkeypatch, tmp_path):
    # a study whose finding is a headline only (as A15/A16's 9 and 10): its verdict, not "not run"; a
    # headline without a verdict stays "not run"
    s = _study("s10", findings=lambda r: {}, headline=lambda r: [(10, "Ten", "inconclusive"), (9, "Nine", None)])
    monkeypatch.setattr(fa, "studies", SimpleNamespace(STUDIES=[s]))
    path = tmp_path / "FINDINGS.md"
    fa.write_findings({}, "quick", path)
    text = path.read_text()
    want = fa.rules_changed_lines({10: (10, "inconclusive", [], "")}, "quick")
    assert "\n".join(want[4:14]) in text
    assert want[12].split(" | ")[4] == "not run" and want[13].split(" | ")[4] == "inconclusive"


def test_set_aside_reads_any_bytes_and_the_title_line_exactly(tmp_path):
    path = tmp_path / "FINDINGS.md"
    path.write_bytes(b"\xff\xfe not UTF-8\n")                          # foreign bytes: kept aside, no error
    assert fa.set_aside(path, "quick") == tmp_path / "FINDINGS.kept.md"
    path.write_text(fa.findings_title("quick") + " \n")               # a trailing space: not lwsim's title
    assert fa.set_aside(path, "quick") == tmp_path / "FINDINGS.kept-2.md"


def test_merge_earlier_adds_no_second_final_newline():
    new = "# Findings (docs/experiments.md §5.5), preset `quick`\n\n## A\n\nNot run in this call\n"
    old = "# Findings (docs/experiments.md §5.5), preset `quick`\n\n## A\n\nkept\n"
    out = fa.merge_earlier(new, old)
    assert out.endswith("kept\n") and not out.endswith("\n\n")
    # nothing replaced: the text comes back as it is, its one final newline included
    done = "# Findings (docs/experiments.md §5.5), preset `quick`\n\n## A\n\ncomputed\n"
    assert fa.merge_earlier(done, old) == done
