"""``python -m theory``: print the LaTeX of every derived result.

Options: ``--section`` (repeatable: cells, expansion, stable, scaling; default all), ``--n`` (number
of factors shown for the product expansions, default 3), ``--H``/``--D`` (cell sizes, default 2/1),
``--layernorm`` (show the cells' Jacobians with LayerNorm -- long).
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
    a = p.parse_args(argv)
    sections = tuple(a.section) if a.section else ("cells", "expansion", "stable", "scaling")
    print(render(results(sections, n=a.n, H=a.H, D=a.D, layernorm=a.layernorm)))


if __name__ == "__main__":
    main()
