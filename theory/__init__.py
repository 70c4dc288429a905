"""theory: SymPy derivations behind lwsim (docs/theory.md).

Framework-free (SymPy + NumPy only). Every closed form is *derived* (solve, series, expand, diff,
rsolve) from the definitions in docs/, exported as a SymPy expression and as a lambdified
NumPy function, and checked against numerics / lwsim by ``tests/theory/test_*.py``.

Modules (imported lazily-cheap: nothing is derived at import time, derivations are cached):

* :mod:`theory.cells`     symbolic update maps and exact Jacobians of every cell (docs/theory.md §4.1)
* :mod:`theory.expansion` ε-expansion of Jacobian products, Γ, constant-gate transport,
  leaky / heavy-ball identities (docs/theory.md §4.2)
* :mod:`theory.stable`    κ_α and the SαS sample-mean scale (docs/theory.md §4.3)
* :mod:`theory.scaling`   sample complexity and learnability window H_N (docs/theory.md §4.4)
* :mod:`theory.report`    every result as LaTeX (``python -m theory``)
"""
from . import cells, expansion, scaling, stable

__all__ = ["cells", "expansion", "stable", "scaling"]
