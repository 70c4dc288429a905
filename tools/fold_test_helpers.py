"""Fold the test helpers that the relayout copied into several files (tools/relayout_tests.py copies
a helper into every destination of a split file) into one module, tests/helpers.py.

    python tools/fold_test_helpers.py [--dry-run]

A module-level function (not a test, not a fixture) is folded when the same name with the same
source text is defined in two or more test files (where a name has several definitions, the one
copied most, if it is copied into two files or more and no other is copied as often; files with
another definition keep theirs) and every name it reads is a builtin, one of the modules imported
in HELPER_IMPORTS, or another folded helper. Running it again folds what is new (tests/helpers.py
keeps what it holds). Each file then imports it
(`from helpers import name`; pytest's pythonpath holds tests/). Deterministic; prints what moved.
"""
from __future__ import annotations

import argparse
import ast
import builtins
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
TARGET = TESTS / "helpers.py"
# the imports a folded helper may use, as written at the top of tests/helpers.py
HELPER_IMPORTS = {
    "np": "import numpy as np",
    "lwsim": "import lwsim",
    "pytest": "import pytest",
    "math": "import math",
}


def _is_fixture(fn):
    for d in fn.decorator_list:
        node = d.func if isinstance(d, ast.Call) else d
        if isinstance(node, ast.Attribute) and node.attr == "fixture":
            return True
    return False


def _free_names(fn):
    """Names the function reads that it does not bind (parameters, assignments, loops, imports)."""
    bound = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    loads = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not fn:
            bound |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            if isinstance(node, ast.FunctionDef):
                bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.comprehension):
            for n in ast.walk(node.target):
                if isinstance(n, ast.Name):
                    bound.add(n.id)
    return loads - bound - set(dir(builtins))


def candidates(files):
    """{name: source} of the helpers defined identically in ≥ 2 files, and {file: [name]}."""
    defs = defaultdict(lambda: defaultdict(list))        # name -> source -> [file]
    nodes = {}
    for f in files:
        text = f.read_text()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("test") and not _is_fixture(node) \
                    and not node.decorator_list:
                src = ast.get_source_segment(text, node)
                defs[node.name][src].append(f)
                nodes[(node.name, src)] = node
    shared = {}
    for name, by_src in defs.items():
        counts = sorted((len(fs) for fs in by_src.values()), reverse=True)
        if counts[0] < 2 or (len(counts) > 1 and counts[1] == counts[0]):
            continue
        src, fs = max(by_src.items(), key=lambda kv: len(kv[1]))
        shared[name] = (src, fs)
    # keep only helpers whose free names are allowed (iterate: a helper may read another folded one)
    changed = True
    while changed:
        changed = False
        for name in sorted(shared):
            src, _ = shared[name]
            free = _free_names(nodes[(name, src)])
            if not free <= (set(HELPER_IMPORTS) | set(shared)):
                del shared[name]
                changed = True
    return shared, nodes


def fold(dry_run=False):
    files = sorted(p for p in TESTS.rglob("test_*.py"))
    shared, nodes = candidates(files)
    if not shared:
        print("nothing to fold")
        return {}
    old = {}                                          # what tests/helpers.py holds already
    if TARGET.exists():
        text = TARGET.read_text()
        old = {n.name: ast.get_source_segment(text, n) for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
        clash = sorted(n for n in shared if n in old and old[n] != shared[n][0])
        if clash:
            raise SystemExit(f"tests/helpers.py defines {clash} differently: rename one first")
    srcs = {**old, **{name: src for name, (src, _) in shared.items()}}
    used_imports = sorted({k for src in srcs.values() for k in _free_names(ast.parse(src).body[0])
                           if k in HELPER_IMPORTS})
    body = ['"""Helpers shared by several test files (folded by tools/fold_test_helpers.py: the same',
            'function was copied into each file that needed it)."""', "from __future__ import annotations", ""]
    body += [HELPER_IMPORTS[k] for k in used_imports] + ["", ""]
    body += ["\n\n\n".join(srcs[name] for name in sorted(srcs)), ""]
    per_file = defaultdict(list)
    for name, (_, fs) in shared.items():
        for f in fs:
            per_file[f].append(name)
    for f, names in sorted(per_file.items()):
        print(f"{f.relative_to(ROOT)}: {', '.join(sorted(names))}")
    if dry_run:
        return per_file
    TARGET.write_text("\n".join(body))
    for f, names in per_file.items():
        text = f.read_text()
        tree = ast.parse(text)
        spans = sorted(((n.lineno, n.end_lineno) for n in tree.body
                        if isinstance(n, ast.FunctionDef) and n.name in names), reverse=True)
        lines = text.splitlines(keepends=True)
        for a, b in spans:                            # drop the definition and the blank lines after it
            end = b
            while end < len(lines) and not lines[end].strip():
                end += 1
            del lines[a - 1:end]
        # the import goes after the last top-level import
        tree2 = ast.parse("".join(lines))
        last = max(n.end_lineno for n in tree2.body if isinstance(n, (ast.Import, ast.ImportFrom)))
        lines.insert(last, f"from helpers import {', '.join(sorted(names))}\n")
        f.write_text("".join(lines))
    return per_file


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true")
    fold(ap.parse_args().dry_run)
