"""``python -m theory``: write docs/derivations.md (every derived result, its assumptions and tests).

``--out PATH`` writes elsewhere. ``--latex`` (or ``--section``) prints the raw LaTeX of the derived
results instead: ``--section`` (repeatable: cells, expansion, stable, scaling; default all),
``--n`` (number of factors shown for the product expansions, default 3), ``--H``/``--D`` (cell
sizes, default 2/1), ``--layernorm`` (show the cells' Jacobians with LayerNorm -- long).
"""
from __future__ import annotations

import argparse

from .report import render, results


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m theory", description=__doc__.splitlines()[0])
    p.add_argument("--section", action="append",
                   choices=["cells", "expansion", "stable", "scaling"])
    p.add_argument("--n", type=int, default=3)
    p.add_argument("--H", type=int, default=2)
    p.add_argument("--D", type=int, default=1)
    p.add_argument("--layernorm", action="store_true")
    p.add_argument("--latex", action="store_true", help="print the LaTeX instead of writing docs")
    p.add_argument("--out", default=None, help="where to write derivations.md")
    a = p.parse_args(argv)
    if not (a.latex or a.section):
        from .derivations import DOCS_PATH, write
        print(f"wrote {write(a.out or DOCS_PATH)}")
        return
    sections = tuple(a.section) if a.section else ("cells", "expansion", "stable", "scaling")
    print(render(results(sections, n=a.n, H=a.H, D=a.D, layernorm=a.layernorm)))


if __name__ == "__main__":
    main()
