"""Helpers shared by several test files (folded by tools/fold_test_helpers.py: the same
function was copied into each file that needed it)."""
from __future__ import annotations

import lwsim
import math
import numpy as np


def _author_J(cell, p, x):
    """[B]'s compute_J_blocks, by hand: J_t = diag(g) D W + diag(1−g) + diag(φ(a_t) − h_t) σ' U_g."""
    T, B, _ = x.shape
    H = cell.n_hidden
    h = np.zeros((B, H))
    J = np.zeros((T, B, H, H))
    for t in range(T):
        a = x[t] @ p["W_x"].T + h @ p["W_h"].T
        phi = np.tanh(a)
        if cell.name == "diaggate":
            g = _sig(x[t] @ p["W_s"].T + h @ p["U_s"].T)
            Ug = p["U_s"]
        else:
            g = np.repeat(_sig(x[t] @ p["w_s"] + h @ p["u_s"])[:, None], H, axis=1)
            Ug = np.broadcast_to(p["u_s"][None, :], (H, H))
        h_new = g * phi + (1 - g) * h
        for b in range(B):
            J[t, b] = (np.diag(g[b] * (1 - phi[b] ** 2)) @ p["W_h"] + np.diag(1 - g[b])
                       + np.diag((phi[b] - h_new[b]) * g[b] * (1 - g[b])) @ Ug)
        h = h_new
    return J


def _b_cell(c, name):
    opts = {"bias": False, "readout": "last", "dtype": "float32"}
    if name == "constgate":
        opts["s"] = c.get("s", 0.8)
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


def _close(fig):
    import matplotlib.pyplot as plt
    plt.close(fig)


def _edges(coll):
    """{x: (lowest y, highest y)} of a fill_between polygon: the band's lower and upper edges."""
    out = {}
    for x, y in coll.get_paths()[0].vertices:
        lo, hi = out.get(float(x), (math.inf, -math.inf))
        out[float(x)] = (min(lo, float(y)), max(hi, float(y)))
    return out


def _legend(ax):
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()], leg.get_texts()[0].get_fontsize()


def _options(cell):
    """Everything a cell carries except its dtype."""
    return {k: v for k, v in vars(cell).items() if k != "dtype"}


def _params(cell, seed=0):
    rng = np.random.default_rng(seed)
    p = {k: 0.6 * rng.standard_normal(s) for k, s in cell.param_shapes().items()}
    if "ln_gamma" in p:
        p["ln_gamma"] = 1.0 + p["ln_gamma"]
    return p


def _product(J, b, t, ell):
    """M_{t,ℓ} = J_t J_{t−1} ⋯ J_{t−ℓ+1} with J[t−1] = ∂h_t/∂h_{t−1} (source k = t − ℓ)."""
    W = np.eye(J.shape[-1])
    for s in range(t - ell + 1, t + 1):
        W = J[s - 1, b] @ W
    return W


def _r6(rhos):
    return {"A11": {"table": [{"cell": "gru", "optimizer": "sgd", "seed": i, "spearman": r, "slope_ratio": 1.0,
                               "offdiag_mean": 0.1} for i, r in enumerate(rhos)]}}


def _rev(J, b, t, k):
    M = np.eye(J.shape[-1])
    for j in range(k + 1, t + 1):           # J_{k+1} ⋯ J_t: earliest on the left
        M = M @ J[j - 1, b]
    return M


def _setup(name="diaggate", H=4, D=2, T=7, B=3, seed=0):
    cell = lwsim.make_cell(name, D, H, bias=False, readout="last")
    p = cell.init_params(seed=seed, scheme="normal", sigma_w=0.6)
    x = np.random.default_rng(seed + 1).uniform(size=(T, B, D))
    return cell, p, x


def _sig(a):
    return 1.0 / (1.0 + np.exp(-a))


# The trainers' small problem (tests/backends/numba/test_fused.py and test_lanes.py): sizes, task,
# data (with n_out = 2 its targets twice, the second scaled: two read-out units) and cells
TRAINER_T, TRAINER_D, TRAINER_H = 12, 3, 5


def trainer_task():
    from lwsim import tasks
    return tasks.make("multilag", T=TRAINER_T, D=TRAINER_D, seed=3, lags=(1, 3), coefs=(0.8, 0.5), sigma_y=0.2)


def trainer_data(n_out, n_train=21, n_val=9):
    ds = trainer_task().dataset(n_train=n_train, n_val=n_val, seed=2)
    if n_out == 1:
        return ds
    two = (lambda y: np.concatenate([y, -0.5 * y], axis=2))
    return (ds.x_train, two(ds.y_train), ds.x_val, two(ds.y_val))


def trainer_cell(name, opts, dtype):
    opts = dict(opts)
    n_out = opts.pop("n_out", 1)
    return lwsim.make_cell(name, TRAINER_D, TRAINER_H, n_out, dtype=dtype, **opts)
