"""``python -m theory``: write docs/derivations.md (every derived result, its assumptions and tests).

Where it writes: ``--out PATH`` (a file, or a folder to hold derivations.md; ``--out -`` prints to
stdout); by default docs/derivations.md under the current directory when it has a docs/ folder
(the repository root), else the page is printed to stdout, never written into the installed
package. ``--latex`` (or ``--section``) prints the raw LaTeX of the derived results instead:
``--section`` (repeatable: cells, expansion, stable, scaling; default all), ``--n`` (number of
factors shown for the product expansions, default 3), ``--H``/``--D`` (cell sizes, default 2/1),
``--layernorm`` (show the cells' Jacobians with LayerNorm -- long). See docs/theory.md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from lwsim._cli import ArgumentParser

from .report import render, results

PAGE = "derivations.md"


def target(out, cwd=None):
    """(path to write, or None for stdout; a one-line problem, or None) for ``--out``.

    See docs/theory.md and docs/troubleshooting.md.
    """
    cwd = Path.cwd() if cwd is None else Path(cwd)
    if out == "-":
        return None, None
    if out is None:
        docs = cwd / "docs"
        return (docs / PAGE if docs.is_dir() else None), None
    path = cwd / out
    if path.is_dir():
        path = path / PAGE
    folder = path.parent
    if not folder.is_dir():
        return None, f"--out {out}: folder {folder} does not exist; create it or give another path"
    if not os.access(folder, os.W_OK | os.X_OK):
        return None, f"--out {out}: folder {folder} is not writable"
    return path, None


def main(argv=None) -> int:
    p = ArgumentParser(prog="python -m theory", description=__doc__.splitlines()[0])
    p.add_argument("--section", action="append", help="with --latex: one part of the LaTeX (repeatable; default: all)",
                   choices=["cells", "expansion", "stable", "scaling"])
    p.add_argument("--n", type=int, default=3,
                   help="factors shown for the product expansions, with --latex (default: 3)")
    p.add_argument("--H", type=int, default=2, help="hidden size of the cells shown (default: 2)")
    p.add_argument("--D", type=int, default=1, help="input size of the cells shown (default: 1)")
    p.add_argument("--layernorm", action="store_true",
                   help="show the cells' Jacobians with LayerNorm (long)")
    p.add_argument("--latex", action="store_true", help="print the LaTeX instead of writing docs")
    p.add_argument("--out", default=None,
                   help="file or folder for derivations.md, - for stdout (default: ./docs/ when it "
                        "exists, else stdout)")
    a = p.parse_args(argv)
    for flag, v in (("--n", a.n), ("--H", a.H), ("--D", a.D)):
        if v < 1:
            p.error(f"{flag} must be >= 1, got {v}")
    if not (a.latex or a.section):
        from .derivations import markdown, write
        path, problem = target(a.out)
        if problem:
            print(f"theory: error: {problem}", file=sys.stderr)
            return 2
        if path is None:
            sys.stdout.write(markdown())
            if a.out is None:
                print("python -m theory: no docs/ folder here, so the page went to stdout; "
                      "--out FILE writes it to a file", file=sys.stderr)
            return 0
        print(f"wrote {write(path)}")
        return 0
    sections = tuple(a.section) if a.section else ("cells", "expansion", "stable", "scaling")
    print(render(results(sections, n=a.n, H=a.H, D=a.D, layernorm=a.layernorm)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
