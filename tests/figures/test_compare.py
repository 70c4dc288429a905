"""Tests of lwsim/figures/compare.py (laid out like the code: docs/testing.md).

lwsim/figures/compare.py, the "bit-identical to …" report of ``python -m lwsim.figures``, pinned on
hand-built snapshots (issue 32: the report a user trusts to say whether a run reproduced).

Every expected line below is written out by hand from the report's documented format."""


from __future__ import annotations

import json
import math

from lwsim.figures import compare


FINDINGS = ("# Findings\n\nMade by `python -m lwsim.figures --preset quick --out figures --cache runs` from 3 runs\n\n"
            "| # | finding | verdict |\n|---|---|---|\n| 1 | one | reproduced |\n| 2 | two | inconclusive |\n\n"
            "## 1. one\n\n**reproduced**\n\n- slope 1.02\n\n## 2. two\n\n**inconclusive**\n\n- rho 0.40\n")


# --- the report ---------------------------------------------------------------------------------------
def _snap():
    return {"A1.json": json.dumps({"v": [1.0, 2.0]}).encode(), "A1.png": b"png1", "B1.png": b"png2",
            "FINDINGS.md": FINDINGS.encode()}


# ----------------------------------------------------------------------------------------------
# snapshot
# ----------------------------------------------------------------------------------------------


# --- snapshot ---------------------------------------------------------------------------------
def test_snapshot_takes_the_outputs_directly_in_the_folder(tmp_path):
    assert compare.snapshot(tmp_path / "absent") == {}
    (tmp_path / "A1.png").write_bytes(b"png")
    (tmp_path / "A1.json").write_bytes(b"{}")
    (tmp_path / "FINDINGS.md").write_bytes(b"# F")
    (tmp_path / "notes.txt").write_bytes(b"not an output")
    (tmp_path / "results.csv.gz").write_bytes(b"gz")
    (tmp_path / "other.csv.gz").write_bytes(b"not an output")
    (tmp_path / ".hidden.json").write_bytes(b"{}")
    (tmp_path / "medium").mkdir()
    (tmp_path / "medium" / "A1.json").write_bytes(b"{}")
    (tmp_path / "dir.json").mkdir()                       # a folder named like an output is not one
    snap = compare.snapshot(tmp_path)
    assert snap == {"A1.json": b"{}", "A1.png": b"png", "FINDINGS.md": b"# F", "results.csv.gz": b"gz"}
    assert list(snap) == ["A1.json", "A1.png", "FINDINGS.md", "results.csv.gz"]       # sorted by name
    assert compare.snapshot(tmp_path / "A1.png") == {}              # a file is not a folder
    assert compare.SUFFIXES == (".png", ".json", ".md") and compare.TABLES == ("results.csv.gz",)


# ----------------------------------------------------------------------------------------------
# _normal (through report and findings_diff)
# ----------------------------------------------------------------------------------------------


# --- normalisation and numbers ----------------------------------------------------------------------
def test_normal_drops_only_the_folder_arguments_of_markdown():
    md = b"by `x --out figures/a --cache runs/b` and --out c"
    # \\S+ takes the backtick: the folders and the closing backtick become "…"
    assert compare.findings_diff(b"", md) == ["  header and headline table; 1 line(s) differ:",
                                               "    + by `x --out \u2026 --cache \u2026 and --out c"]
    assert compare.report({"F.md": md}, {"F.md": b"by `x --out o --cache k` and --out c"}, "w") == \
        ["bit-identical to w (1 files)"]
    # JSON untouched: other folders in a JSON file are a difference
    assert compare.report({"A1.json": b"--out a --cache b"}, {"A1.json": b"--out x --cache b"}, "w")[0] == \
        "NOT bit-identical to w: 1 of 1 files differ"
    assert compare.findings_diff(b"", b"\xff ok") == ["  header and headline table; 1 line(s) differ:",
                                                       "    + \ufffd ok"]                      # bad UTF-8 replaced


# ----------------------------------------------------------------------------------------------
# _numbers (through json_diff: every number of the new side is "moved" from an empty list)
# ----------------------------------------------------------------------------------------------


def test_numbers_paths_and_values():
    obj = {"a": {"b": [1, 2.5, "nan"]}, "t": True, "n": None, "s": "x", "e": [], "d": {}}
    # ints as floats (1 → 1.0), bools and None kept, strings as given; empty containers hold none
    assert compare.json_diff("[]", json.dumps(obj), limit=9) == (
        "6 of 6 values differ, largest relative change inf (a.b[0]: '<absent>' → 1.0; "
        "a.b[1]: '<absent>' → 2.5; a.b[2]: '<absent>' → 'nan'; n: '<absent>' → None; s: '<absent>' → 'x'; "
        "t: '<absent>' → True)")
    assert compare.json_diff("[]", "[[3]]") == "1 of 1 values differ, largest relative change inf ([0][0]: '<absent>' → 3.0)"
    assert compare.json_diff("[]", "7") == "1 of 1 values differ, largest relative change inf (: '<absent>' → 7.0)"


# ----------------------------------------------------------------------------------------------
# _rel (through json_diff's largest relative change)
# ----------------------------------------------------------------------------------------------


def _worst(old, new):
    return compare.json_diff(old, new).split("largest relative change ")[1].split(" (")[0]


def test_rel():
    assert _worst("[1.0]", "[1.5]") == "0.33"                        # 0.5 / 1.5 (not 0.5 / 1)
    assert _worst("[-2.0]", "[1.0]") == "1.5"                        # 3 / 2: the larger magnitude
    assert _worst("[0.0]", "[1e-310]") == "1e-10"                    # the floor 1e-300, not the tiny value
    assert _worst("[1.0]", "[Infinity]") == "inf" and _worst("[NaN]", "[1.0]") == "inf"
    assert _worst('["nan"]', "[1.0]") == "inf" and _worst("[null]", "[1.0]") == "inf"
    assert _worst("[1.0]", "[null]") == "inf"
    assert _worst("[1.0, 0.0]", "[1.5, 0.0]") == "0.33"              # an unchanged 0 is not moved


# ----------------------------------------------------------------------------------------------
# json_diff
# ----------------------------------------------------------------------------------------------


def test_json_diff_lines():
    old = json.dumps({"h": [1.0, 2.0, 4.0, 8.0], "k": 1})
    assert compare.json_diff(old, old + " ") == "same numbers, different bytes"
    assert compare.json_diff("{", old) == "not valid JSON on one side"
    assert compare.json_diff(old, "[") == "not valid JSON on one side"
    new = json.dumps({"h": [1.0, 3.0, 5.0, 8.0], "k": 1})
    # 2 of 5 values; largest relative change max(1/3, 1/5) = 0.33
    assert compare.json_diff(old, new) == "2 of 5 values differ, largest relative change 0.33 (h[1]: 2.0 → 3.0; h[2]: 4.0 → 5.0)"
    assert compare.json_diff(old, new, limit=1) == ("2 of 5 values differ, largest relative change 0.33 "
                                                    "(h[1]: 2.0 → 3.0 …)")
    gone = json.dumps({"h": [1.0, 2.0, 4.0, 8.0]})
    assert compare.json_diff(old, gone) == "1 of 4 values differ, largest relative change inf (k: 1.0 → '<absent>')"
    came = json.dumps({"h": [1.0, 2.0, 4.0, 8.0], "k": 1, "z": "s"})
    assert compare.json_diff(old, came) == "1 of 6 values differ, largest relative change inf (z: '<absent>' → 's')"


# --- after the mutation run: the survivors' cases -------------------------------------------------
def test_json_diff_missing_keys_and_nulls():
    # a key that appears with null, or disappears from null, has moved
    assert compare.json_diff('{"a": 1}', '{"a": 1, "b": null}') == \
        "1 of 2 values differ, largest relative change inf (b: '<absent>' → None)"
    assert compare.json_diff('{"a": 1, "b": null}', '{"a": 1}') == \
        "1 of 1 values differ, largest relative change inf (b: None → '<absent>')"
    # the string "<absent>" as a value is not a missing key
    assert compare.json_diff('{"a": 1}', '{"a": 1, "b": "<absent>"}').startswith("1 of 2 values differ")
    assert compare.json_diff('{"a": 1, "b": "<absent>"}', '{"a": 1}').startswith("1 of 1 values differ")


def test_json_diff_default_limit_and_exactly_limit():
    old = json.dumps([1.0, 2.0, 3.0, 4.0])
    new = json.dumps([2.0, 3.0, 4.0, 5.0])
    # default limit 3: three shown, then " …)"; relative changes 1/2, 1/3, 1/4, 1/5
    assert compare.json_diff(old, new) == ("4 of 4 values differ, largest relative change 0.5 "
                                           "([0]: 1.0 → 2.0; [1]: 2.0 → 3.0; [2]: 3.0 → 4.0 …)")
    three = json.dumps([2.0, 3.0, 4.0, 4.0])
    assert compare.json_diff(old, three).endswith("[2]: 3.0 → 4.0)")        # exactly the limit: no "…"


# ----------------------------------------------------------------------------------------------
# _sections (through findings_diff)
# ----------------------------------------------------------------------------------------------


# --- FINDINGS.md ------------------------------------------------------------------------------------
def test_sections_and_verdicts():
    # the heading's text is stripped; the part before the first heading is its own ('') section
    assert compare.findings_diff(b"x\n##  a b \nz", b"x\n##  a b \ny") == \
        ["  section 'a b'; 1 line(s) differ:", "    - z", "    + y"]
    two = FINDINGS.replace("- slope 1.02", "- slope 1.03").replace("- rho 0.40", "- rho 0.41")
    assert compare.findings_diff(FINDINGS.encode(), two.encode()) == [
        "  finding 1: verdict reproduced (unchanged); 1 line(s) differ:", "    - - slope 1.02", "    + - slope 1.03",
        "  finding 2: verdict inconclusive (unchanged); 1 line(s) differ:", "    - - rho 0.40", "    + - rho 0.41"]
    # only three-cell rows whose first cell is a number; rows of a section are not the headline table
    head = "| 1 | a | b | c |\n| x | a | b |\n|3|t|v|\n## 4. f\n| 4 | f | no |\n"
    old = head + "## 3. t\np\n## 1. a\np\n"
    new = head.replace("| 4 | f | no |", "| 4 | f | no |\nq") + "## 3. t\nq\n## 1. a\nq\n"
    assert [x for x in compare.findings_diff(old.encode(), new.encode()) if "verdict" in x] == [
        "  finding 4: verdict None (unchanged); 1 line(s) differ:",
        "  finding 3: verdict v (unchanged); 1 line(s) differ:",
        "  finding 1: verdict None (unchanged); 1 line(s) differ:"]


# ----------------------------------------------------------------------------------------------
# _verdicts (through findings_diff)
# ----------------------------------------------------------------------------------------------


def test_verdicts_of_compact_rows():
    assert compare.findings_diff(b"|5|f|X|\n## 5. f\na\n", b"|5|f|Y|\n## 5. f\nb\n") == [
        "  header and headline table; 1 line(s) differ:", "    - |5|f|X|", "    + |5|f|Y|",
        "  finding 5: verdict X → Y; 1 line(s) differ:", "    - a", "    + b"]


# ----------------------------------------------------------------------------------------------
# _excerpt (through findings_diff: each changed line is shown as its excerpt)
# ----------------------------------------------------------------------------------------------


def _shown(old, new, limit=4):
    """The excerpts findings_diff shows for one changed line of a section."""
    return compare.findings_diff(f"## N\n{old}\n".encode(), f"## N\n{new}\n".encode(), limit=limit)[1:]


def test_excerpt_around_the_first_difference():
    a = "x" * 300 + "A" + "y" * 300
    b = "x" * 300 + "B" + "y" * 300
    # the difference at 300: the window starts 80 before it, 240 long, cut on both sides
    assert _shown(a, b) == ["    - …" + a[220:460] + "…", "    + …" + b[220:460] + "…"]
    assert _shown("short", "shirt") == ["    - short", "    + shirt"]
    # no difference inside the shorter: the window ends at the end of the shorter one (200 of "ab"*200)
    assert _shown("ab" * 200, "ab" * 100) == ["    - …" + ("ab" * 200)[120:360] + "…", "    + " + "ab" * 100]
    # the difference past the end: the window is the last 240 characters, cut only in front
    assert _shown("ab" * 200, "ab" * 200 + "c") == ["    - …" + ("ab" * 200)[160:400], "    + …" + ("ab" * 200 + "c")[161:401]]
    # an unpaired removal is cut against "": from its start
    assert compare.findings_diff(("## N\n" + "z" * 300 + "\n").encode(), b"## N\n") == \
        ["  section 'N'; 0 line(s) differ:", "    - " + "z" * 240 + "…"]


def test_excerpt_width_is_240():
    # "abc"+z*300 against "abd": first difference at 2, start max(0, min(-78, 63)) = 0; 240 shown then "…"
    assert _shown("abc" + "z" * 300, "abd")[0] == "    - abc" + "z" * 237 + "…"
    # exactly 240 characters: nothing cut
    assert _shown("q" * 240, "r")[0] == "    - " + "q" * 240


# ----------------------------------------------------------------------------------------------
# findings_diff
# ----------------------------------------------------------------------------------------------


def test_findings_diff_lines():
    new = (FINDINGS.replace("| 2 | two | inconclusive |", "| 2 | two | reproduced |")
           .replace("**inconclusive**\n\n- rho 0.40", "**reproduced**\n\n- rho 0.55")
           .replace("- slope 1.02", "- slope 1.03") + "\n## Extra\n\nnew text\n")
    new = new.replace("--out figures --cache runs", "--out o --cache c")         # folders do not count
    assert compare.findings_diff(FINDINGS.encode(), new.encode()) == [
        "  header and headline table; 1 line(s) differ:",
        "    - | 2 | two | inconclusive |",
        "    + | 2 | two | reproduced |",
        "  finding 1: verdict reproduced (unchanged); 1 line(s) differ:",
        "    - - slope 1.02",
        "    + - slope 1.03",
        "  finding 2: verdict inconclusive → reproduced; 2 line(s) differ:",
        "    - **inconclusive**",                    # two hunks (a blank line between), each - then +
        "    + **reproduced**",
        "    - - rho 0.40",
        "    + - rho 0.55",
        "  section 'Extra': not in the previous file"]
    header = FINDINGS.replace("from 3 runs", "from 4 runs")
    assert compare.findings_diff(FINDINGS.encode(), header.encode()) == [
        "  header and headline table; 1 line(s) differ:",
        "    - Made by `python -m lwsim.figures --preset quick --out … --cache … from 3 runs",
        "    + Made by `python -m lwsim.figures --preset quick --out … --cache … from 4 runs"]
    dropped = FINDINGS.split("## 2. two")[0]
    assert compare.findings_diff(FINDINGS.encode(), dropped.encode()) == ["  section '2. two': in the previous file only"]


def test_findings_diff_limits_and_blank_lines():
    old = "## 1. f\n" + "".join(f"a{i}\n" for i in range(6))
    new = "## 1. f\n\n\n" + "".join(f"b{i}\n" for i in range(6))     # blank lines added: not counted
    lines = compare.findings_diff(old.encode(), new.encode(), limit=2)
    assert lines == ["  finding 1: verdict None (unchanged); 6 line(s) differ:",
                     "    - a0", "    - a1", "    - a2", "    - a3", "    … 8 more"]
    sec = compare.findings_diff(b"## Notes\nx\n", b"## Notes\ny\n")
    assert sec == ["  section 'Notes'; 1 line(s) differ:", "    - x", "    + y"]


def test_findings_diff_headings_with_dots_and_new_sections_between():
    old = b"## 1. slope 1.5 rule\nA\n## 2. f\nB\n"
    new = b"## 1. slope 1.5 rule\nA2\n## New\nN\n## 2. f\nB2\n"
    assert compare.findings_diff(old, new) == [
        "  finding 1: verdict None (unchanged); 1 line(s) differ:", "    - A", "    + A2",
        "  section 'New': not in the previous file",                  # and the next section still follows
        "  finding 2: verdict None (unchanged); 1 line(s) differ:", "    - B", "    + B2"]


def test_findings_diff_counts_added_lines_and_unpaired_removals():
    old = b"## 1. f\na\nb\n"
    new = b"## 1. f\nc\n"
    # two lines removed, one added: "1 line(s) differ" counts the added ones; the unpaired removal is
    # excerpted against nothing
    assert compare.findings_diff(old, new) == ["  finding 1: verdict None (unchanged); 1 line(s) differ:",
                                               "    - a", "    - b", "    + c"]
    assert compare.findings_diff(b"## 1. f\na\n", b"## 1. f\n") == [
        "  finding 1: verdict None (unchanged); 0 line(s) differ:", "    - a"]


def test_findings_diff_long_lines_are_cut_around_their_pair():
    a = "x" * 300 + "A" + "y" * 299
    b = "x" * 300 + "B" + "y" * 299
    got = compare.findings_diff(f"## 1. f\n{a}\n".encode(), f"## 1. f\n{b}\n".encode())
    # the first difference at 300: 240 characters from 220, cut on both sides (length 600)
    assert got == ["  finding 1: verdict None (unchanged); 1 line(s) differ:",
                   "    - …" + a[220:460] + "…", "    + …" + b[220:460] + "…"]


def test_findings_diff_limit_boundaries():
    def diff(n, limit=2):
        old = "## 1. f\n" + "".join(f"a{i}\n" for i in range(n))
        new = "## 1. f\n" + "".join(f"b{i}\n" for i in range(n))
        return compare.findings_diff(old.encode(), new.encode(), limit=limit)
    # 2 changed lines = 4 diff lines = 2·limit: all shown, no "more"
    assert diff(2) == ["  finding 1: verdict None (unchanged); 2 line(s) differ:",
                       "    - a0", "    - a1", "    + b0", "    + b1"]
    # 5 diff lines would need an odd count: 3 removed, 2 added
    odd = compare.findings_diff(b"## 1. f\na0\na1\na2\n", b"## 1. f\nb0\nb1\n", limit=2)
    assert odd[-1] == "    … 1 more" and len(odd) == 6
    # the default limit is 4: 5 changed lines = 10 diff lines, 8 shown
    five = diff(5, limit=4)
    assert five[-1] == "    … 2 more" and len(five) == 10
    assert compare.findings_diff(("## 1. f\n" + "".join(f"a{i}\n" for i in range(5))).encode(),
                                 ("## 1. f\n" + "".join(f"b{i}\n" for i in range(5))).encode()) == five


# ----------------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------------


def test_report_identical():
    a = _snap()
    assert compare.report({}, a, "figures/") == ["nothing to compare with: figures/ held no figures"]
    assert compare.report(a, dict(a), "figures/") == ["bit-identical to figures/ (4 files)"]
    b = dict(a, **{"FINDINGS.md": FINDINGS.replace("--out figures --cache runs", "--out x --cache y").encode()})
    assert compare.report(a, b, "ref/") == ["bit-identical to ref/ (4 files)"]
    c = dict(a)
    del c["B1.png"]
    c["C1.png"] = b"new"
    assert compare.report(a, c, "ref/") == ["bit-identical to ref/ (3 files)", "1 file(s) only in ref/: B1.png",
                                            "1 new file(s): C1.png"]


def test_report_differences_in_order():
    a = _snap()
    b = dict(a, **{"A1.json": json.dumps({"v": [1.0, 3.0]}).encode(), "A1.png": b"other", "B1.png": b"other2",
                   "FINDINGS.md": FINDINGS.replace("- rho 0.40", "- rho 0.41").encode()})
    assert compare.report(a, b, "ref/") == [
        "NOT bit-identical to ref/: 4 of 4 files differ",
        " FINDINGS.md, verdict by verdict:",
        "  finding 2: verdict inconclusive (unchanged); 1 line(s) differ:",
        "    - - rho 0.40",
        "    + - rho 0.41",
        " A1.json: 1 of 2 values differ, largest relative change 0.33 (v[1]: 2.0 → 3.0)",
        " 2 PNG(s) differ: A1.png, B1.png"]
    only_png = dict(a, **{"B1.png": b"x"})
    only_png["Z.png"] = b"z"
    assert compare.report(a, only_png, "ref/") == ["NOT bit-identical to ref/: 1 of 4 files differ",
                                                   " 1 PNG(s) differ: B1.png", "1 new file(s): Z.png"]
    table = dict(a, **{"results.csv.gz": b"t2", "B1.png": b"x"})      # the results table: one line
    assert compare.report(dict(a, **{"results.csv.gz": b"t1"}), table, "ref/") == [
        "NOT bit-identical to ref/: 2 of 5 files differ", " results.csv.gz differs", " 1 PNG(s) differ: B1.png"]


def test_report_lists_at_most_eight_names():
    a = {f"F{i}.png": b"x" for i in range(10)}
    b = {"F0.png": b"x"}
    assert compare.report(a, b, "r/") == ["bit-identical to r/ (1 files)",
                                          "9 file(s) only in r/: " + ", ".join(f"F{i}.png" for i in range(1, 9))]


def test_report_new_files_listed_with_commas_up_to_eight():
    a = {"A.png": b"x"}
    b = dict(a, **{f"N{i}.png": b"n" for i in range(9)})
    assert compare.report(a, b, "r/") == ["bit-identical to r/ (1 files)",
                                          "9 new file(s): " + ", ".join(f"N{i}.png" for i in range(8))]
