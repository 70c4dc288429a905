"""Did this run reproduce the reference? The files a run wrote against those of another folder, or
against what its own folder held before (docs/performance.md, "Bit-reproducibility").

``python -m lwsim.figures`` takes a :func:`snapshot` of its --out folder before it writes, and after
the run prints :func:`report`: "bit-identical to the previous files (N files)", or which files
differ — each finding whose verdict or numbers moved (FINDINGS.md, verdict by verdict), each JSON
number that moved (old → new), each PNG whose pixels moved, the results table
(results.csv.gz) when it differs. ``--compare DIR`` compares with DIR
instead (e.g. a clone's committed figures/). FINDINGS.md's command line names the folders, so its
``--out``/``--cache`` arguments are not compared.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

SUFFIXES = (".png", ".json", ".md")
TABLES = ("results.csv.gz",)            # the results table (tidy.FILE, docs/experiments.md §5.8)
_PATHS = re.compile(r"--out \S+ --cache \S+")


def snapshot(folder):
    """{file name: bytes} of the PNG, JSON and Markdown files and the results table directly in
    ``folder`` ({} if absent).
    Sub-folders (figures/medium/) are other outputs and are not included."""
    p = Path(folder)
    if not p.is_dir():
        return {}
    return {f.name: f.read_bytes() for f in sorted(p.iterdir())
            if f.is_file() and (f.suffix in SUFFIXES or f.name in TABLES) and not f.name.startswith(".")}


def _normal(name, data):
    """The bytes that count: FINDINGS.md without its command's folder arguments."""
    if name.endswith(".md"):
        return _PATHS.sub("--out … --cache …", data.decode("utf-8", "replace")).encode()
    return data


def _numbers(obj, path=""):
    """{json path: number} of every number (and numeric string such as "nan") in ``obj``."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_numbers(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_numbers(v, f"{path}[{i}]"))
    elif isinstance(obj, bool) or obj is None:
        out[path] = obj
    elif isinstance(obj, (int, float)):
        out[path] = float(obj)
    else:
        out[path] = obj
    return out


def _rel(a, b):
    if not (isinstance(a, float) and isinstance(b, float)) or not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def json_diff(old, new, limit=3):
    """One line: how many numbers of a figure's JSON moved, the largest relative change, the
    first ``limit`` of them (path: old → new)."""
    try:
        a, b = _numbers(json.loads(old)), _numbers(json.loads(new))
    except ValueError:
        return "not valid JSON on one side"
    absent = object()            # not a string: a JSON value "<absent>" must not pass for a missing key
    moved = [k for k in sorted(set(a) | set(b)) if a.get(k, absent) != b.get(k, absent)]
    if not moved:
        return "same numbers, different bytes"
    worst = max(_rel(a.get(k), b.get(k)) for k in moved)
    shown = "; ".join(f"{k}: {a.get(k, '<absent>')!r} → {b.get(k, '<absent>')!r}" for k in moved[:limit])
    return (f"{len(moved)} of {len(b)} values differ, largest relative change {worst:.2g} ({shown}"
            + (" …)" if len(moved) > limit else ")"))


def _sections(text):
    """{heading: [lines]} of a FINDINGS.md ('' for the part before the first heading)."""
    out, head = {"": []}, ""
    for line in text.splitlines():
        if line.startswith("## "):
            head = line[3:].strip()
            out[head] = []
        else:
            out[head].append(line)
    return out


def _verdicts(text):
    """{finding number: verdict} of FINDINGS.md's headline table."""
    rows = {}
    for line in _sections(text)[""]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            rows[cells[0]] = cells[2]
    return rows


def _excerpt(text, other, width=240):
    """``text`` cut to ``width`` characters around its first difference from ``other`` (long
    FINDINGS lines differ in one number far from their start)."""
    i = next((k for k, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    start = max(0, min(i - 80, len(text) - width))
    return ("…" if start else "") + text[start:start + width] + ("…" if start + width < len(text) else "")


def findings_diff(old, new, limit=4):
    """Lines: finding by finding (in the new file's order), the verdict old → new when it moved
    and the changed lines of its section."""
    old, new = (_normal("F.md", x).decode() for x in (old, new))
    va, vb = _verdicts(old), _verdicts(new)
    sa, sb = _sections(old), _sections(new)
    lines = []
    for head in sb:
        before, after = sa.get(head), sb[head]
        if before == after:
            continue
        num = head.split(".", 1)[0]
        label = f"finding {num}" if num.isdigit() else (f"section '{head}'" if head else "header and headline table")
        moved = f": verdict {va.get(num)} → {vb.get(num)}" if num.isdigit() and va.get(num) != vb.get(num) else \
            (f": verdict {vb.get(num)} (unchanged)" if num.isdigit() else "")
        if before is None:
            lines.append(f"  {label}: not in the previous file")
            continue
        import difflib
        diff = [x for x in difflib.unified_diff(before, after, lineterm="", n=0)
                if x[:1] in "+-" and not x.startswith(("+++", "---")) and x[1:].strip()]
        lines.append(f"  {label}{moved}; {sum(x[0] == '+' for x in diff)} line(s) differ:")
        gone = [x[1:].strip() for x in diff if x[0] == "-"]
        came = [x[1:].strip() for x in diff if x[0] == "+"]
        for i, x in enumerate(diff[:2 * limit]):
            text = x[1:].strip()
            other = (came if x[0] == "-" else gone)
            j = (gone if x[0] == "-" else came).index(text)
            lines.append(f"    {x[0]} {_excerpt(text, other[j] if j < len(other) else '')}")
        if len(diff) > 2 * limit:
            lines.append(f"    … {len(diff) - 2 * limit} more")
    for head in sa:
        if head not in sb:
            lines.append(f"  section '{head}': in the previous file only")
    return lines


def report(before, after, where):
    """Lines of the comparison of snapshot ``after`` (this run's files) with ``before``; ``where``
    names the previous files ("the previous files in figures/", "figures_ref/")."""
    if not before:
        return [f"nothing to compare with: {where} held no figures"]
    common = sorted(set(before) & set(after))
    same = [n for n in common if _normal(n, before[n]) == _normal(n, after[n])]
    extra = []
    if set(before) - set(after):
        extra.append(f"{len(set(before) - set(after))} file(s) only in {where}: "
                     + ", ".join(sorted(set(before) - set(after))[:8]))
    if set(after) - set(before):
        extra.append(f"{len(set(after) - set(before))} new file(s): " + ", ".join(sorted(set(after) - set(before))[:8]))
    if len(same) == len(common):
        return [f"bit-identical to {where} ({len(same)} files)"] + extra
    lines = [f"NOT bit-identical to {where}: {len(common) - len(same)} of {len(common)} files differ"]
    differ = [n for n in common if n not in same]
    if "FINDINGS.md" in differ:
        lines.append(" FINDINGS.md, verdict by verdict:")
        lines += findings_diff(before["FINDINGS.md"], after["FINDINGS.md"])
    for n in differ:
        if n.endswith(".json"):
            lines.append(f" {n}: {json_diff(before[n], after[n])}")
    for n in differ:
        if n in TABLES:
            lines.append(f" {n} differs")
    pngs = [n for n in differ if n.endswith(".png")]
    if pngs:
        lines.append(f" {len(pngs)} PNG(s) differ: {', '.join(pngs)}")
    return lines + extra
