"""Checks across the project (cross-cutting; docs/testing.md).

No import circles in lwsim/ and theory/ (docs/project.md, "Layout"): the import graph is built
from the source with ast (no module is imported), every import counted, also those inside
functions; a cycle fails the test and is named."""


from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent


PACKAGES = ("lwsim", "theory")


def module_name(path, root=ROOT):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(mod, is_pkg, level, target):
    """The absolute module named by ``from <level dots><target>`` inside ``mod``."""
    if level == 0:
        return target
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[:len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


def import_graph(root=ROOT, packages=PACKAGES):
    """{module: {imported project modules}} over every .py file of ``packages`` under ``root``."""
    files = {module_name(p, root): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node.level, node.module)
                # "from pkg import name": name is a submodule when such a file exists
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for n in names:
                while n and n not in files:       # "a.b.c" where c is a name: its module
                    n = n.rpartition(".")[0]
                if n and n != mod:
                    edges.add(n)
        graph[mod] = edges
    return graph


def find_cycle(graph):
    """One cycle as a list of modules [a, b, ..., a], or None (iterative depth-first search)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for start in sorted(graph):
        if colour[start] != WHITE:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        colour[start] = GREY
        path = [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = BLACK
                stack.pop()
                path.pop()
            elif colour.get(nxt, BLACK) == GREY:
                return path[path.index(nxt):] + [nxt]
            elif colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_a_planted_cycle_is_found(tmp_path):
    pkg = tmp_path / "lwsim"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b  # inside a function: still an edge\n")
    (pkg / "sub" / "b.py").write_text("from ..c import x\n")
    (pkg / "c.py").write_text("import lwsim.a\nx = 1\n")
    graph = import_graph(tmp_path, ("lwsim",))
    assert graph["lwsim.a"] == {"lwsim.sub.b"} and graph["lwsim.sub.b"] == {"lwsim.c"}
    assert find_cycle(graph) == ["lwsim.a", "lwsim.sub.b", "lwsim.c", "lwsim.a"]
    (pkg / "c.py").write_text("x = 1\n")
    assert find_cycle(import_graph(tmp_path, ("lwsim",))) is None


def test_the_engine_imports_no_study_module_but_the_registry():
    """Only the registry (lwsim.figures.studies) names the studies; engine modules reach them
    through it."""
    graph = import_graph()
    engine = [m for m in graph if m.startswith("lwsim.figures.") and not m.startswith("lwsim.figures.studies")]
    for m in engine:
        direct = {n for n in graph[m] if n.startswith("lwsim.figures.studies.")}
        assert not direct, f"{m} imports study modules {sorted(direct)} directly"
