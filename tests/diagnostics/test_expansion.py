"""Tests of lwsim/diagnostics/expansion.py (laid out like the code: docs/testing.md).

Checks of the first-order expansion (docs/diagnostics.md §2.10): gate split, Fréchet slope 2, envelope fidelity.

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way."""


import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim.cells import _candidate

from cellcases import random_params
from helpers import _author_J, _setup, _sig


RNG = np.random.default_rng(50)


CANDIDATE_KEYS = {"gru": ("U_g",), "gru_torch": ("W_hn", "b_hn"), "lstm": ("U_g",)}


# ---------------------------------------------------------------- B_j = derivative through the gates
def _ln(p, a):
    c = a - a.mean()
    return p["ln_gamma"] * c / np.sqrt((c * c).mean() + 1e-5) + p["ln_beta"]


def _step_split(cell, p, x, h, c, hg):
    """One step with h_{t−1} entering the gate pre-activations as hg and everything else as h:
    B_j = ∂(state_t)/∂hg at hg = h (written out here, independently of lwsim)."""
    b = lambda k: p.get(k, 0.0)                                        # noqa: E731
    if cell.name in ("sharedgate", "diaggate"):
        a = p["W_x"] @ x + b("b_x") + p["W_h"] @ h
        cand = np.tanh(_ln(p, a) if cell.layernorm else a)
        if cell.name == "sharedgate":
            s = _sig(p["w_s"] @ x + b("b_s") + p["u_s"] @ hg)
        else:
            s = _sig(p["W_s"] @ x + b("b_s") + p["U_s"] @ hg)
        return (1 - s) * h + s * cand
    if cell.name == "gru" and cell.convention == "cho":
        z = _sig(p["W_z"] @ x + b("b_z") + p["U_z"] @ hg)
        r = _sig(p["W_r"] @ x + b("b_r") + p["U_r"] @ hg)
        a = p["W_g"] @ x + b("b_g") + p["U_g"] @ (r * h)
        g = np.tanh(_ln(p, a) if cell.layernorm else a)
        return (1 - z) * h + z * g
    if cell.name == "gru":
        r = _sig(p["W_ir"] @ x + b("b_ir") + p["W_hr"] @ hg + b("b_hr"))
        z = _sig(p["W_iz"] @ x + b("b_iz") + p["W_hz"] @ hg + b("b_hz"))
        n = np.tanh(p["W_in"] @ x + b("b_in") + r * (p["W_hn"] @ h + b("b_hn")))
        return (1 - z) * n + z * h
    gi, gf, go = (_sig(p[f"W_{k}"] @ x + b(f"b_{k}") + p[f"U_{k}"] @ hg) for k in "ifo")
    a = p["W_g"] @ x + b("b_g") + p["U_g"] @ h
    g = np.tanh(_ln(p, a) if cell.layernorm else a)
    c_new = gf * c + gi * g
    return np.concatenate([go * np.tanh(c_new), c_new])


# ----------------------------------------------------------------------------------------------
# gate_derivative_term
# ----------------------------------------------------------------------------------------------


def test_author_conventions_only_for_the_authors_models():
    cell = lwsim.make_cell("gru", 2, 4, bias=False, readout="last")
    p = cell.init_params(seed=0)
    x = np.zeros((3, 1, 2))
    with pytest.raises(ValueError, match="author"):
        dg.gate_derivative_term(cell, p, x, conventions="author")


# ----------------------------------------------------------------------------- appendix
def test_frechet_author_order_and_gate_term():
    cell, p, x = _setup("diaggate", H=3, T=4, B=1)
    x = x[:, :1]
    eps = dg.expansion.AUTHOR_EPS
    fa = dg.frechet_check(cell, p, x, eps, conventions="author")
    Ja = _author_J(cell, p, x)[:, 0]
    Bm = np.asarray(dg.gate_derivative_term(cell, p, x, conventions="author"))[:, 0]
    A = Ja - Bm
    np.testing.assert_allclose(A, (np.asarray(cell.jacobians(p, x)) - dg.gate_derivative_term(cell, p, x))[:, 0],
                               atol=1e-13)
    prod = lambda Ms: np.linalg.multi_dot(list(Ms)) if len(Ms) > 1 else Ms[0]
    F0 = prod(A)                                                     # A_1 A_2 ⋯ A_T (author)
    L1 = sum(prod([*A[:i], Bm[i], *A[i + 1:]]) for i in range(4))
    E = [np.linalg.norm(prod(A + e * Bm) - F0 - e * L1) for e in eps]
    np.testing.assert_allclose(fa.E[0], E, rtol=1e-6, atol=1e-15)     # round-off at the smallest ε
    assert eps[1] == 3e-5 and eps.size == 11


# ----------------------------------------------------------------------------------------------
# gate_split
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sharedgate", "diaggate"])
def test_gate_split_matches_formula(name):
    cell = lwsim.make_cell(name, n_in=2, n_hidden=4, layernorm=True)
    p = random_params(cell, 0)
    x = RNG.standard_normal((5, 2, 2))
    A, Bm = dg.gate_split(cell, p, x)
    tr = cell.forward(p, x)
    s = tr.gates["s"] * np.ones((1, 1, 4))
    for t in range(5):
        rec = {k: v[t] for k, v in tr.records.items()}
        want = s[t][:, :, None] * _candidate.jacobian(np, p, cell, rec) + (1 - s[t])[:, :, None] * np.eye(4)
        np.testing.assert_allclose(A[t], want, rtol=1e-12, atol=1e-15)
    assert np.abs(Bm).max() > 0


@pytest.mark.parametrize("name,opts", [("gru", {"layernorm": True}), ("gru", {"convention": "torch"}),
                                       ("lstm", {"layernorm": True})])
def test_gate_split_without_candidate_recurrence_is_the_leak(name, opts):
    """With the candidate's recurrent weights zero, A_j is only the leak (cell-path) structure."""
    cell = lwsim.make_cell(name, n_in=2, n_hidden=3, **opts)
    p = random_params(cell, 1)
    for k in CANDIDATE_KEYS[name + ("_torch" if opts.get("convention") == "torch" else "")]:
        if k in p:
            p[k] = np.zeros_like(p[k])
    x = RNG.standard_normal((4, 2, 2))
    A, Bm = dg.gate_split(cell, p, x)
    tr = cell.forward(p, x)
    d = tr.leak
    if name == "lstm":
        e = tr.gates["o"] * (1 - np.tanh(tr.c[1:]) ** 2)
        want = np.zeros_like(A)
        for i in range(3):
            want[..., i, 3 + i] = e[..., i] * d[..., i]
            want[..., 3 + i, 3 + i] = d[..., i]
    else:
        want = d[..., None] * np.eye(3)
    np.testing.assert_allclose(A, want, atol=1e-14)
    assert np.abs(Bm).max() > 0


# ----------------------------------------------------------------------------------------------
# frechet_check
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,opts", [("sharedgate", {}), ("diaggate", {"layernorm": True}),
                                       ("gru", {}), ("gru", {"convention": "torch"}), ("lstm", {})])
def test_frechet_truncation_error_slope_two(name, opts):
    cell = lwsim.make_cell(name, n_in=3, n_hidden=6, **opts)
    p = cell.init_params(0, scheme="normal", sigma_w=0.4)
    x = np.sin(np.linspace(0, 6, 20)[:, None, None] * np.array([0.5, 0.8, 1.1])) + 0.05 * RNG.standard_normal((20, 2, 3))
    res = dg.frechet_check(cell, p, x)
    assert res.E.shape == (2, 11) and res.ratio.shape == (20, 2)
    np.testing.assert_allclose(res.slope, 2.0, atol=0.1)
    assert np.all(np.isfinite(res.remainder)) and np.all(res.remainder > 0)
    np.testing.assert_allclose(res.C2, res.E / res.eps ** 2)
    np.testing.assert_allclose(res.ratio, res.norm_B / res.norm_A)


def test_frechet_constgate_is_trivial():
    cell = lwsim.make_cell("constgate", n_in=2, n_hidden=3)
    p = random_params(cell, 2)
    res = dg.frechet_check(cell, p, RNG.standard_normal((6, 1, 2)))
    assert np.all(res.E == 0) and np.all(res.norm_B == 0)


# ----------------------------------------------------------------------------------------------
# fidelity_table
# ----------------------------------------------------------------------------------------------


def test_fidelity_table_known():
    lags = np.array([1, 2, 4, 8, 16])
    t = dg.fidelity_table(lags, 1.0 / lags, 1.0 / lags)
    assert t["spearman"] == pytest.approx(1) and t["pearson_log"] == pytest.approx(1)
    assert t["slope_ratio"] == pytest.approx(1)
    t = dg.fidelity_table(lags, 1.0 / lags, 3.0 / lags ** 2)
    assert t["slope_exact"] == pytest.approx(-1) and t["slope_approx"] == pytest.approx(-2)
    assert t["slope_ratio"] == pytest.approx(2)


# ----------------------------------------------------------------------------------------------
# envelope_fidelity
# ----------------------------------------------------------------------------------------------


def test_envelope_fidelity_with_all_times_equals_full_envelopes():
    cell = lwsim.make_cell("lstm", n_in=2, n_hidden=3)
    p = random_params(cell, 3)
    x = RNG.standard_normal((9, 3, 2))
    rates = {k: 1e-3 * np.random.default_rng(4).uniform(0.5, 2, v.shape) for k, v in p.items()}
    lags = [1, 2, 5, 8]
    fid = dg.envelope_fidelity(cell, p, x, rates, lags, n_times=100, chunk=2, progress=False)
    ex = dg.exact_envelope(cell, p, x, rates, lags, progress=False)
    env = dg.envelope(cell, p, x, rates, lags, eta=1.0, progress=False)
    np.testing.assert_allclose(fid.f_exact, ex.f, rtol=1e-12)
    np.testing.assert_allclose(fid.f_approx, env.f, rtol=1e-12)
    np.testing.assert_allclose(fid.offdiag, ex.offdiag, rtol=1e-12)
    assert -1 <= fid.spearman <= 1 and np.isfinite(fid.slope_ratio)


@pytest.mark.parametrize("name,opts", [("sharedgate", {"layernorm": True}), ("diaggate", {}),
                                       ("gru", {"layernorm": True}), ("gru", {"convention": "torch"}),
                                       ("lstm", {"layernorm": True})])
def test_gate_term_is_the_derivative_through_the_gates(name, opts):
    cell = lwsim.make_cell(name, n_in=2, n_hidden=3, **opts)
    p = random_params(cell, 5)
    x = RNG.standard_normal((4, 2, 2))
    _, Bm = dg.gate_split(cell, p, x)
    tr = cell.forward(p, x)
    H, eps = 3, 1e-6
    for t in range(4):
        for b in range(2):
            h = tr.h[t, b]
            c = tr.c[t, b] if tr.c is not None else None
            fd = np.zeros((cell.state_size, cell.state_size))
            for j in range(H):
                dh = np.zeros(H)
                dh[j] = eps
                fd[:, j] = (_step_split(cell, p, x[t, b], h, c, h + dh)
                            - _step_split(cell, p, x[t, b], h, c, h - dh)) / (2 * eps)
            np.testing.assert_allclose(Bm[t, b], fd, atol=1e-8)
