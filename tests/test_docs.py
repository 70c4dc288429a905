"""Checks across the project (cross-cutting; docs/testing.md).

The documentation: docs/derivations.md is current, the compact Jacobians it shows equal the
SymPy derivation, and the MkDocs site builds with ``--strict`` (docs/index.md)."""


from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest


ROOT = pathlib.Path(__file__).resolve().parent.parent


def _have_mkdocs() -> bool:
    return all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings",
                                                      "mkdocstrings_handlers.python"))


# --------------------------------------------------------------------------------------------
# the project refers to its own docs, never to a specification outside it
# --------------------------------------------------------------------------------------------
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".js", ".sh", ".json"}


SCAN = ("lwsim", "theory", "tests", "benchmarks", "docs", "examples", "figures", ".ci")


SKIP_DIRS = {".venv", "__pycache__", ".git", "site", "runs", ".hypothesis", ".pytest_cache",
             "node_modules", "build", "dist"}


# References are: the folder ("shared/"), the spec's file names ("02-diagnostics.md"), bare
# numbered citations ("02 §2.7", "(04 §4.4)"), "spec 05", and prose about "the spec" /
# "specification" / "spec's" / a "| spec |" table header. Words such as specialisation,
# spectrum, spectra, spectral, inspect, respect and identifiers (spec.defaults, _Spec, specs[k],
# test_spec_closed_forms…, importlib.util.find_spec) do not match.
_S = "spe" + "c"                       # so that this file does not match its own patterns


SPEC_REFERENCE = re.compile(
    "|".join([
        r"shared/",
        r"(?<![\w/])0[1-5]-(?:cells|diagnostics|statistics|theory|experiments)\b",
        r"(?<![\w/.])0[1-5] ?§",
        rf"\b{_S}s?\.? ?0?[1-5]\b(?![\w.(\[])",
        rf"\b(?:the|a|per|this|our) {_S}s?\b(?![\w.(\[=_])",
        rf"\b{_S}(?:'s|ification|ifications)\b",
        rf"^\s*(?:\"\"\"|#|-)?\s*{_S}\s*:",
        rf"\|\s*{_S}\s*\|",
        rf"\b{_S}\s+(?:section|§)",
    ]), re.IGNORECASE)


def _project_text_files():
    for name in ("README.md", "pyproject.toml", "mkdocs.yml"):
        if (ROOT / name).exists():
            yield ROOT / name
    for top in SCAN:
        for p in sorted((ROOT / top).rglob("*")):
            if p.is_file() and p.suffix in TEXT_SUFFIXES and not SKIP_DIRS & set(p.relative_to(ROOT).parts):
                yield p


def spec_references(text: str) -> list:
    """(line number, line) of every reference to the developer specification in ``text``."""
    return [(i, line) for i, line in enumerate(text.splitlines(), 1) if SPEC_REFERENCE.search(line)]


# --------------------------------------------------------------------------------------------
# docstrings point to the docs, and every citation "docs/<page>.md §N.M" resolves
# --------------------------------------------------------------------------------------------
# modules with no quantity of their own to define (plumbing, I/O, plotting, the tour)
NO_SECTION = {"lwsim/io.py", "lwsim/demo.py", "lwsim/backends/__init__.py",
              "lwsim/backends/numba/blas.py", "lwsim/backends/numba/common.py",
              "lwsim/backends/numba/threads.py", "lwsim/backends/numba/workspace.py",
              "lwsim/figures/drawing.py"}


CITATION = re.compile(r"docs/([a-z_]+)\.md(?: §(\d+)\.(\d+))?")


def _public_modules():
    for top in ("lwsim", "theory"):
        for p in sorted((ROOT / top).rglob("*.py")):
            rel = p.relative_to(ROOT)
            if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
                continue
            yield rel.as_posix(), p


# the modules whose public functions and classes each define a documented quantity
CITED_DEFS = ("lwsim/diagnostics/", "lwsim/stats/", "theory/", "lwsim/analyze/", "lwsim/cells/",
              "lwsim/tasks.py", "lwsim/optim.py", "lwsim/train.py")


def _uncited_public_defs() -> list:
    import ast

    pages, bad = {}, []
    for rel, p in _public_modules():
        if rel in NO_SECTION or not rel.startswith(CITED_DEFS):
            continue
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    or node.name.startswith("_"):
                continue
            where = f"{rel}:{node.lineno} {node.name}"
            m = CITATION.search(ast.get_docstring(node) or "")
            if not m:
                bad.append(where + " (no docs/<page>.md citation)")
                continue
            page = ROOT / "docs" / f"{m.group(1)}.md"
            if page not in pages:
                pages[page] = _headings(page) if page.exists() else None
            if pages[page] is None:
                bad.append(f"{where}: {m.group(0)} (no such page)")
            elif m.group(2) and (m.group(2), m.group(3)) not in pages[page]:
                bad.append(f"{where}: {m.group(0)} (no such section)")
    return bad


def _headings(page: pathlib.Path) -> set:
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{1,4}\s+(\d+)\.(\d+)\b", line)
        if m:
            out.add((m.group(1), m.group(2)))
    return out


def test_derivations_page_is_current():
    from theory import derivations

    text = derivations.markdown()
    committed = (ROOT / "docs" / "derivations.md").read_text(encoding="utf-8")
    assert committed == text, "docs/derivations.md is stale: run `python -m theory`"


@pytest.mark.skipif(not _have_mkdocs(), reason="the docs extra is not installed: pip install '.[docs]'")
def test_mkdocs_build_strict(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                        str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    site = tmp_path / "site"
    for page in ("cells", "diagnostics", "statistics", "theory", "experiments", "derivations",
                 "api", "gallery", "examples"):
        assert (site / page / "index.html").exists(), page
    assert (site / "figures" / "A1.png").exists()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "matched_statistic" in api and "detection_table" in api


def test_reference_pattern():
    s = "spe" + "c"
    bad = [f"see ../shared/{s}/", "(02-diagnostics.md §2.7)", "(04 §4.4)", "03 §3.2: unreliable",
           f"({s} 05 §5.5)", f"{s} 03", f"the {s}'s formula", f"the {s} leaves it open",
           f"The {s}ification lives", f"{s.capitalize()}: ../x", f"| {s} | module |",
           f"{s} section 2"]
    good = ["spectral_norms(M)", f'if "name" not in {s}:', "specialisation of Γ", "the spectra of τ", "inspect.signature",
            "with respect to h", f"{s}.defaults['T']", f"_{s.capitalize()}(dict(T=1))",
            f"{s}s[k][0]", f"test_{s}_closed_forms_match_derivation", f"util.find_{s}('numba')",
            f"for {s} in specs:", f"def _fmt(v, {s}='{{:.3g}}'):", "docs/diagnostics.md §2.7",
            "tests/test_theory_scaling.py::test_window_matches_spec_table", "(docs/theory.md §4.4)"]
    assert all(spec_references(b) for b in bad), [b for b in bad if not spec_references(b)]
    assert not any(spec_references(g) for g in good), [g for g in good if spec_references(g)]


def test_nothing_refers_to_the_specification():
    this = pathlib.Path(__file__).resolve()
    hits = []
    for p in _project_text_files():
        if p.resolve() == this:
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:120]}" for i, line in spec_references(text)]
    assert not hits, "cite the docs pages (docs/cells.md §1.x …) instead:\n" + "\n".join(hits)


def test_module_docstrings_cite_their_docs_page():
    import ast

    missing = []
    for rel, p in _public_modules():
        doc = ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or ""
        if rel not in NO_SECTION and not CITATION.search(doc):
            missing.append(rel)
    assert not missing, "module docstrings without a docs/<page>.md citation: " + ", ".join(missing)


def test_public_docstrings_cite_their_docs_section():
    # every public function and class says where its quantity is documented, and that § exists
    bad = _uncited_public_defs()
    assert not bad, "public docstrings without a resolving docs citation:\n" + "\n".join(bad)


def test_every_docs_citation_resolves():
    this = pathlib.Path(__file__).resolve()
    pages, bad = {}, []
    for p in _project_text_files():
        if p.resolve() == this or p.suffix == ".json":
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                page = ROOT / "docs" / f"{m.group(1)}.md"
                if page not in pages:
                    pages[page] = _headings(page) if page.exists() else None
                where = f"{p.relative_to(ROOT)}:{i}: {m.group(0)}"
                if pages[page] is None:
                    bad.append(where + " (no such page)")
                elif m.group(2) and (m.group(2), m.group(3)) not in pages[page]:
                    bad.append(where + " (no such section)")
    assert not bad, "\n".join(bad)


def test_docs_pages_keep_the_section_numbers():
    # a citation "docs/diagnostics.md §2.7" must land on section 2.7: every page keeps its numbers
    expected = {"cells": 9, "diagnostics": 10, "statistics": 5, "theory": 4, "experiments": 5}
    for i, (page, n) in enumerate(expected.items(), 1):
        assert _headings(ROOT / "docs" / f"{page}.md") >= {(str(i), str(k)) for k in range(1, n + 1)}, page


def test_every_cited_test_exists():
    # docs and derivations name the tests that check each quantity: those tests must exist
    defs = {}
    for p in (ROOT / "tests").rglob("test_*.py"):
        defs[p.relative_to(ROOT / "tests").as_posix()] = set(re.findall(r"^def (test_\w+)", p.read_text(encoding="utf-8"), re.M))
    everywhere = set().union(*defs.values())
    bad = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for f, name in re.findall(r"tests/((?:\w+/)*test_\w+\.py)::(test_\w+)", line):
                if name not in defs.get(f, ()):
                    bad.append(f"{page.name}:{i}: tests/{f}::{name}")
            for name in re.findall(r"(?<![\w.])::(test_\w+)", line):
                if name not in everywhere:
                    bad.append(f"{page.name}:{i}: ::{name}")
            for f in re.findall(r"tests/((?:\w+/)*test_\w+\.py)", line):
                if f not in defs:
                    bad.append(f"{page.name}:{i}: tests/{f}")
    assert not bad, "cited tests that do not exist:\n" + "\n".join(bad)
