"""A one-minute tour of lwsim: every cell's loss, exact gradient check and Jacobian spectrum.

Run ``python -m lwsim.demo``. (The main job, ``python -m lwsim.figures``, reproduces the papers.)
"""
from __future__ import annotations

import numpy as np

import lwsim


def main():
    rng = np.random.default_rng(0)
    T, B, D, H = 32, 8, 4, 16
    x = rng.standard_normal((T, B, D))
    y = rng.standard_normal((T, B, 1))
    print(f"{'cell':<12}{'loss':>10}{'|g|':>10}{'dir.deriv. rel.err':>20}{'ρ(J_T)':>10}")
    for name in lwsim.CELL_NAMES:
        cell = lwsim.make_cell(name, D, H, layernorm=True)
        p = cell.init_params(seed=0, scheme="paper_a")
        loss, g = cell.loss_and_grad(p, x, y)
        w = {k: rng.standard_normal(v.shape) for k, v in p.items()}
        eps = 1e-6
        lp = cell.loss_and_grad({k: p[k] + eps * w[k] for k in p}, x, y)[0]
        lm = cell.loss_and_grad({k: p[k] - eps * w[k] for k in p}, x, y)[0]
        exact = sum(float((g[k] * w[k]).sum()) for k in p)
        err = abs((lp - lm) / (2 * eps) - exact) / abs(exact)
        J = cell.jacobians(p, x)[-1, 0]
        gnorm = np.sqrt(sum(float((v ** 2).sum()) for v in g.values()))
        print(f"{name:<12}{loss:>10.4f}{gnorm:>10.4f}{err:>20.2e}{np.abs(np.linalg.eigvals(J)).max():>10.4f}")


if __name__ == "__main__":
    main()
