"""Tests of lwsim/reference.py (laid out like the code: docs/testing.md).

NumPy reference: BPTT and Jacobians against float64 central finite differences (docs/cells.md §1.7–1.8)."""


import numpy as np
import pytest

from lwsim import reference

from cellcases import CASES, case_id, make, random_data, random_params, rel_err


T, B = 5, 3


def fd_grad(cell, p, x, y, key, eps=1e-6):
    g = np.zeros_like(p[key])
    for idx in np.ndindex(g.shape):
        q = {k: v.copy() for k, v in p.items()}
        q[key][idx] += eps
        lp, _ = cell.loss_and_grad(q, x, y)
        q[key][idx] -= 2 * eps
        lm, _ = cell.loss_and_grad(q, x, y)
        g[idx] = (lp - lm) / (2 * eps)
    return g


def fd_jacobian(cell, p, x, trace, t, eps=1e-5):
    """Fourth-order central differences (LayerNorm at small variance is strongly curved)."""
    state = trace.state(t)
    flat = np.concatenate(state, axis=-1)
    S = flat.shape[-1]
    H = cell.n_hidden
    J = np.zeros((flat.shape[0], S, S))
    for j in range(S):
        outs = []
        for step in (2, 1, -1, -2):
            f = flat.copy()
            f[:, j] += step * eps
            st = (f[:, :H],) if S == H else (f[:, :H], f[:, H:])
            new, _ = cell.kind.step(np, p, cell, x[t], st)
            outs.append(np.concatenate(new, axis=-1))
        J[:, :, j] = (-outs[0] + 8 * outs[1] - 8 * outs[2] + outs[3]) / (12 * eps)
    return J


# ----------------------------------------------------------------------------------------------
# forward
# ----------------------------------------------------------------------------------------------


def test_loss_is_torch_mse():
    cell = make(("lstm", {}))
    p = random_params(cell, 3)
    x, y = random_data(cell, T, B, 3)
    loss, _ = cell.loss_and_grad(p, x, y)
    assert np.isclose(loss, np.mean((cell.forward(p, x).y - y) ** 2), rtol=1e-14)
    last = make(("lstm", {"readout": "last"}))
    l2, _ = last.loss_and_grad(p, x, y[-1])          # (B, n_out) targets accepted for "last"
    assert np.isclose(l2, np.mean((last.forward(p, x).y[-1] - y[-1]) ** 2), rtol=1e-14)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_jacobians_match_finite_differences(case):
    cell = make(case)
    p = random_params(cell, 4)
    x, _ = random_data(cell, T, B, 4)
    J = cell.jacobians(p, x)
    assert J.shape == (T, B, cell.state_size, cell.state_size)
    trace = cell.forward(p, x)
    for t in range(T):
        err = np.max(np.abs(J[t] - fd_jacobian(cell, p, x, trace, t))) / max(1.0, np.max(np.abs(J[t])))
        assert err <= 1e-7, (t, err)
    D = cell.jacobian_diagonal(p, x)
    assert np.max(np.abs(D - np.diagonal(J, axis1=2, axis2=3))) <= 1e-14


def test_lag_decomposition_matches_transport_products():
    """g_{t,ℓ} = δ_tᵀ M_{t,t−ℓ} B_{t−ℓ}: lag 1 of the last step via explicit J (docs/diagnostics.md §2.2)."""
    cell = make(("diaggate", {"readout": "last"}))
    p = random_params(cell, 6)
    x, y = random_data(cell, 4, 1, 6)
    _, per_lag = cell.lag_gradients(p, x, y)
    trace = cell.forward(p, x)
    J = cell.jacobians(p, x)
    _, dy = reference.output_errors(np, cell, trace, y, None)
    delta = dy[-1] @ p["W_out"]                      # δ_T
    for lag in range(1, 4):
        u = delta
        for j in range(lag):                           # u = M_{T,T−ℓ}ᵀ δ_T
            u = np.einsum("bi,bij->bj", u, J[-1 - j])
        # B_{T−ℓ} for b_x: ∂⁺h_k/∂b_x = diag(s_k ⊙ h̃'_k) (no LN)
        k = 3 - lag
        s, cand = trace.gates["s"][k], trace.cand[k]
        expect = (u * s * (1 - cand ** 2)).sum(axis=0)
        assert rel_err(per_lag[lag]["b_x"], expect) <= 1e-12


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangents_match_finite_differences(case):
    cell = make(case)
    p = random_params(cell, 8)
    x, _ = random_data(cell, T, B, 8)
    rng = np.random.default_rng(9)
    w = {k: rng.standard_normal(v.shape) for k, v in p.items()}
    v = cell.tangents(p, x, w)
    eps = 1e-6

    def states(q):
        tr = cell.forward(q, x)
        return tr.h if tr.c is None else np.concatenate([tr.h, tr.c], axis=-1)
    fd = (states({k: p[k] + eps * w[k] for k in p}) - states({k: p[k] - eps * w[k] for k in p})) / (2 * eps)
    assert rel_err(v, fd) <= 1e-7


# ----------------------------------------------------------------------------------------------
# loss_and_grad
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bptt_matches_finite_differences(case):
    cell = make(case)
    p = random_params(cell, 1)
    x, y = random_data(cell, T, B, 1)
    loss, grads = cell.loss_and_grad(p, x, y)
    assert set(grads) == set(p)
    for key in p:
        err = rel_err(grads[key], fd_grad(cell, p, x, y, key))
        assert err <= 1e-6, (key, err)


def test_bptt_with_mask_matches_finite_differences():
    cell = make(("diaggate", {"layernorm": True}))
    p = random_params(cell, 2)
    x, y = random_data(cell, T, B, 2)
    mask = np.array([False, True, False, True, True])
    loss, grads = cell.loss_and_grad(p, x, y, mask=mask)
    diff = cell.forward(p, x).y - y
    assert np.isclose(loss, np.mean(diff[mask] ** 2))
    for key in ("W_h", "U_s", "ln_gamma"):
        fd = np.zeros_like(p[key])
        for idx in np.ndindex(fd.shape):
            q = {k: v.copy() for k, v in p.items()}
            q[key][idx] += 1e-6
            lp = cell.loss_and_grad(q, x, y, mask=mask)[0]
            q[key][idx] -= 2e-6
            lm = cell.loss_and_grad(q, x, y, mask=mask)[0]
            fd[idx] = (lp - lm) / 2e-6
        assert rel_err(grads[key], fd) <= 1e-6


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_lag_decomposition_sums_to_bptt(case):
    cell = make(case)
    p = random_params(cell, 5)
    x, y = random_data(cell, 6, B, 5)
    loss, grads = cell.loss_and_grad(p, x, y)
    loss2, per_lag = cell.lag_gradients(p, x, y)
    assert loss2 == loss
    assert len(per_lag) == 6
    for key in p:
        total = sum(g[key] for g in per_lag)
        assert rel_err(total, grads[key]) <= 1e-10, key


@pytest.mark.parametrize("case", [c for c in CASES if not c[1].get("bias") is False][:12], ids=case_id)
def test_float32_agrees_with_float64(case):
    c64 = make(case)
    c32 = make(case, dtype="float32")
    p = random_params(c64, 7)
    x, y = random_data(c64, T, B, 7)
    l64, g64 = c64.loss_and_grad(p, x, y)
    l32, g32 = c32.loss_and_grad(p, x, y)
    assert all(v.dtype == np.float32 for v in g32.values())
    assert abs(l32 - l64) <= 1e-5 * abs(l64)
    for k in p:
        assert rel_err(g32[k], g64[k]) <= 1e-4, k
    J32 = c32.jacobians(p, x)
    assert J32.dtype == np.float32
    assert rel_err(J32, c64.jacobians(p, x)) <= 1e-5
