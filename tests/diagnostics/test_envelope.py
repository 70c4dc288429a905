"""Tests of lwsim/diagnostics/envelope.py (laid out like the code: docs/testing.md).

Λ (docs/diagnostics.md §2.4), μ and the envelope (§2.5), time scales (§2.6).

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ.

conventions="author": the summary statistics returned beside f, Λ and σ̂, against loops written
here from the author's formulas (docs/fidelity.md; docs/diagnostics.md §2.5, §2.8–2.9), on cases
where the two conventions differ, and the [B] cut-off metrics with a cut-off below the number of
singular values (CE over the first ``n_energy`` values only, not all of them)."""


from __future__ import annotations

import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim.diagnostics.gamma import gate_factors

from cellcases import random_params
from helpers import _params


RNG = np.random.default_rng(10)


def _rates(p, seed=0, scale=1e-3):
    rng = np.random.default_rng(seed)
    return {k: scale * rng.uniform(0.2, 3.0, size=v.shape) for k, v in p.items()}


# ------------------------------------------------------------------ envelope
def _brute_envelope(cell, p, x, rates, lags, order, form, eta):
    g = dg.transport_factors(cell, p, x, lags, order=order, engine="numpy")
    g0 = dg.transport_factors(cell, p, x, lags, order=0, engine="numpy")
    lam = dg.source_rates(dg.recurrent_rates(cell, rates), cell.forward(p, x).h, form)
    f, fg, m = [], [], []
    for i, ell in enumerate(lags):
        mu = lam[:len(lam) - ell] * g[i, ell:]                # Λ(b, k = t − ℓ) Γ(t, ℓ), t = ℓ+1 … T
        f.append(np.abs(mu).sum(axis=2).mean())
        m.append(np.abs(mu).mean(axis=(0, 1)))
        fg.append(eta * np.abs(g0[i, ell:]).sum(axis=2).mean())
    return np.array(f), np.array(fg), np.array(m)


T, B, D, H = 12, 3, 3, 5


def _cell(name, ln=True):
    opts = {"layernorm": ln}
    if name == "constgate":
        opts["s"] = 0.3
    return lwsim.make_cell(name, D, H, 1, **opts)


def _x(seed=1, b=B, t=T):
    return np.random.default_rng(seed).standard_normal((t, b, D))


# ---- envelope: windows from h₀, Λ at h_k, mean over neurons, log-mass ---------------------------
def _rates_conventions_author(cell, seed=5):
    rng = np.random.default_rng(seed)
    return {k: rng.uniform(0.1, 1.0, (H, H)) for k in cell.recurrent_keys}


# ----------------------------------------------------------------------------- envelope
def _author_lambda(cell, p, x, lam):
    """Λ at h_k for every source k = 0 … T (row k), (T+1, B, H): Rayleigh quotient of the mean
    rate matrix at h_k, the row mean where h_k = 0."""
    h = gate_factors(cell, p, x, conventions="author").trace.h
    lam_bar = sum(lam.values()) / len(lam)
    out = np.empty(h.shape[:2] + (H,))
    for k in range(h.shape[0]):
        for b in range(h.shape[1]):
            hk = h[k, b]
            out[k, b] = lam_bar.mean(1) if not hk.any() else (lam_bar @ hk ** 2) / (hk ** 2).sum()
    return out


# ------------------------------------------------------------------ Λ
def test_rayleigh_rates_match_definition_and_rowmean_fallback():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=4)
    p = random_params(cell, 0)
    rates = _rates(p)
    lam = dg.recurrent_rates(cell, rates)
    np.testing.assert_allclose(lam, (rates["W_h"] + rates["U_s"]) / 2)      # mean over W_h, U_s
    h = RNG.standard_normal((3, 4))
    h[1] = 0.0
    got = dg.rayleigh_rates(lam, h)
    for b in range(3):
        for q in range(4):
            if b == 1:
                want = sum(lam[q, j] for j in range(4)) / 4                    # row mean at h = 0
            else:
                want = sum(lam[q, j] * h[b, j] ** 2 for j in range(4)) / sum(h[b, j] ** 2 for j in range(4))
            assert got[b, q] == pytest.approx(want, rel=1e-13)
    np.testing.assert_allclose(dg.rowmean_rates(lam), lam.mean(axis=1))
    # source rates: row k−1 uses h_{k−1}; k = 1 has h_0 = 0 → row mean
    x = RNG.standard_normal((5, 2, 2))
    hs = cell.forward(p, x).h
    src = dg.source_rates(lam, hs)
    np.testing.assert_allclose(src[0], np.broadcast_to(lam.mean(axis=1), (2, 4)))
    np.testing.assert_allclose(src[3], dg.rayleigh_rates(lam, hs[3]))
    np.testing.assert_allclose(dg.source_rates(lam, hs, "rowmean")[3], np.broadcast_to(lam.mean(axis=1), (2, 4)))


def test_rates_inputs():
    cell = lwsim.make_cell("gru", n_in=2, n_hidden=3)
    p = random_params(cell, 1)
    assert dg.recurrent_rates(cell, 0.01) == 0.01
    assert dg.base_rate(0.01) == 0.01

    class Opt:
        lr = 0.5

        def rates(self):
            return {k: np.full(v.shape, 0.5) for k, v in p.items()}
    np.testing.assert_allclose(dg.recurrent_rates(cell, Opt()), 0.5)
    assert dg.base_rate(Opt()) == 0.5
    with pytest.raises(ValueError, match="eta"):
        dg.base_rate(_rates(p))
    bad = _rates(p)
    del bad["U_r"]
    with pytest.raises(ValueError, match="U_r"):
        dg.recurrent_rates(cell, bad)
    bad = _rates(p)
    bad["U_z"] = np.ones((2, 2))
    with pytest.raises(ValueError, match="U_z"):
        dg.recurrent_rates(cell, bad)
    with pytest.raises(TypeError, match="rates"):
        dg.recurrent_rates(cell, "adam")
    with pytest.raises(ValueError, match="rates"):
        dg.recurrent_rates(cell, -1.0)


# ----------------------------------------------------------------------------------------------
# envelope
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,opts", [("diaggate", {"layernorm": True}), ("lstm", {}),
                                       ("gru", {"convention": "torch"})])
@pytest.mark.parametrize("order,form", [(1, "rayleigh"), (0, "rowmean")])
def test_envelope_matches_brute_force_and_engines_agree(name, opts, order, form):
    cell = lwsim.make_cell(name, n_in=2, n_hidden=4, **opts)
    p = random_params(cell, 2)
    x = RNG.standard_normal((14, 5, 2))
    rates, lags = _rates(p), [1, 2, 5, 13]
    want_f, want_fg, want_m = _brute_envelope(cell, p, x, rates, lags, order, form, 1e-3)
    for engine, chunk in (("numpy", 2), ("numba", 3)):
        env = dg.envelope(cell, p, x, rates, lags, order=order, form=form, eta=1e-3, engine=engine,
                          chunk=chunk, progress=False)
        np.testing.assert_allclose(env.f, want_f, rtol=1e-12)
        np.testing.assert_allclose(env.f_gates, want_fg, rtol=1e-12)
        np.testing.assert_allclose(env.m, want_m, rtol=1e-12)
        np.testing.assert_allclose(env.ratio, want_f / want_fg, rtol=1e-12)
        assert list(env.count) == [(14 - ell) * 5 for ell in lags]


def test_lambda_statistics_per_lag():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)
    p = random_params(cell, 3)
    x = RNG.standard_normal((9, 4, 2))
    rates = _rates(p)
    env = dg.envelope(cell, p, x, rates, [1, 4, 8], eta=1.0, chunk=3, progress=False)
    lam = dg.source_rates(dg.recurrent_rates(cell, rates), cell.forward(p, x).h)
    for i, ell in enumerate([1, 4, 8]):
        vals = lam[:9 - ell]                                    # sources k = 1 … T − ℓ
        assert env.lam_mean[i] == pytest.approx(vals.mean(), rel=1e-12)
        assert env.lam_std[i] == pytest.approx(vals.std(), rel=1e-9)
    np.testing.assert_allclose(env.lam_neuron, lam.mean(axis=(0, 1)), rtol=1e-12)


def test_constgate_linear_envelope_and_timescales_closed_form():
    s, eta, H = 0.1, 0.01, 3
    cell = lwsim.make_cell("constgate", n_in=2, n_hidden=H, s=s)
    p = random_params(cell, 4)
    p["W_h"] = np.zeros_like(p["W_h"])
    x = RNG.standard_normal((40, 2, 2))
    lags = np.arange(1, 30)
    env = dg.envelope(cell, p, x, eta, lags, progress=False)
    np.testing.assert_allclose(env.f, eta * H * (1 - s) ** lags, rtol=1e-12)
    np.testing.assert_allclose(env.ratio, 1.0, rtol=1e-12)
    ts = dg.timescales(lags, env.m)
    np.testing.assert_allclose(ts.tau, dg.constgate_timescale(s), rtol=1e-9)
    np.testing.assert_allclose(ts.r2, 1.0, atol=1e-12)
    assert dg.constgate_timescale(s) == pytest.approx(-1 / np.log(0.9))


@pytest.mark.parametrize("name", ["diaggate", "gru", "lstm"])
def test_author_envelope_matches_hand_loops(name):
    cell = _cell(name, ln=(name != "gru"))
    p, x, lam = _params(cell), _x(), _rates_conventions_author(cell)
    lags = [1, 2, 5]
    env = dg.envelope(cell, p, x, lam, lags, eta=0.3, progress=False, conventions="author")
    fa = gate_factors(cell, p, x, conventions="author")
    h = fa.trace.h
    lam_bar = sum(lam.values()) / len(lam)
    G = dg.transport_factors(cell, p, x, lags, conventions="author")   # t ≥ ℓ+1 (pinned above)
    G0 = dg.transport_factors(cell, p, x, lags, order=0, conventions="author")
    for i, ell in enumerate(lags):
        mass, mass_g0, logm = 0.0, 0.0, 0.0
        for b in range(B):
            per_b = []
            first = ell + 1 if name in ("gru", "lstm") else ell   # baselines: also the window from h₀
            for t in range(first, T + 1):
                k = t - ell
                hk = h[k, b]
                Lam = lam_bar.mean(1) if not hk.any() else (lam_bar @ hk ** 2) / (hk ** 2).sum()
                if t > ell:
                    gam, gam0 = G[i, t - 1, b], G0[i, t - 1, b]
                else:                                         # Γ of the first window, by hand
                    w = slice(0, ell)
                    dd = fa.d[w, b]
                    gam0 = dd.prod(0)
                    if fa.reset is not None:
                        gam0 = gam0 + fa.reset[w, b].prod(0) + (dd * fa.reset[w, b]).prod(0)
                    gam = gam0 + dd.prod(0) * (fa.r[w, b] / dd).sum(0)
                    if fa.readout is not None:
                        gam, gam0 = gam * fa.readout[t - 1, b], gam0 * fa.readout[t - 1, b]
                per_b.append(np.abs(Lam * gam))
                mass_g0 += np.abs(gam0).sum()
            per_b = np.array(per_b)
            mass += per_b.sum()
            logm += np.log(per_b.mean() + 1e-30)
        n = B * (T - first + 1)
        np.testing.assert_allclose(env.f[i], mass / (n * H), rtol=1e-11)
        np.testing.assert_allclose(env.f_gates[i], 0.3 * mass_g0 / (n * H), rtol=1e-11)
        np.testing.assert_allclose(env.log_mass[i], logm / B, rtol=1e-11)
    lw = dg.envelope(cell, p, x, lam, lags, eta=0.3, progress=False)
    assert lw.log_mass is None and env.conventions == "author"
    assert np.all(env.log_mass < np.log(env.f) - 1e-6)    # the runner's fit target is not log f (Jensen)
    assert np.all(np.abs(env.f * H / lw.f - 1) > 1e-3)


@pytest.mark.parametrize("name", ["diaggate", "gru"])
def test_author_envelope_lambda_statistics_counts_and_per_neuron_means(name):
    cell = _cell(name, ln=(name != "gru"))
    p, x, lam = _params(cell), _x(), _rates_conventions_author(cell)
    lags = [1, 2, 5]
    env = dg.envelope(cell, p, x, lam, lags, eta=0.3, progress=False, conventions="author")
    lw = dg.envelope(cell, p, x, lam, lags, eta=0.3, progress=False)
    L = _author_lambda(cell, p, x, lam)
    first_src = 0 if name == "diaggate" else 1                # diaggate counts the window from h₀
    for i, ell in enumerate(lags):
        src = L[first_src:T - ell + 1]                         # sources k = first … T − ℓ
        assert env.lam_mean[i] == pytest.approx(src.mean(), rel=1e-12)
        assert env.lam_std[i] == pytest.approx(src.std(), rel=1e-9)
        assert env.count[i] == B * (T - ell + 1 - first_src)
    np.testing.assert_allclose(env.lam_neuron, L.mean(axis=(0, 1)), rtol=1e-12)   # every k = 0 … T
    np.testing.assert_allclose(env.m.sum(axis=1) / H, env.f, rtol=1e-12)         # m per neuron, f ÷ H
    np.testing.assert_allclose(env.ratio, env.f / env.f_gates, rtol=1e-12)
    # the conventions differ in each of these
    assert np.all(np.abs(env.lam_mean - lw.lam_mean) > 1e-6 * np.abs(lw.lam_mean))
    assert np.max(np.abs(env.lam_neuron - lw.lam_neuron)) > 1e-6
    if name == "diaggate":
        assert np.all(env.count == lw.count + B)


# ----------------------------------------------------------------------------------------------
# rate_timescale_spearman
# ----------------------------------------------------------------------------------------------


def test_timescales_fit_rules():
    lags = np.arange(1, 11)
    m = np.stack([np.exp(-lags / 4.0), np.exp(0.1 * lags), np.where(lags < 5, 1.0, 0.0)], axis=1)
    ts = dg.timescales(lags, m)
    assert ts.tau[0] == pytest.approx(4.0)
    assert ts.tau[1] == np.inf                    # growing → ∞
    assert np.isnan(ts.tau[2]) and ts.n_points[2] == 4   # < 5 positive points
    rho, _ = dg.rate_timescale_spearman(np.array([1.0, 2, 3, 4]), np.array([10.0, 20, np.inf, np.nan]))
    assert rho == pytest.approx(1.0)


def test_exact_envelope_matches_transports_and_first_order_at_lag_one():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=4)
    p = random_params(cell, 5)
    x = RNG.standard_normal((10, 3, 2))
    rates, lags = _rates(p), [1, 3, 7]
    ex = dg.exact_envelope(cell, p, x, rates, lags, chunk=2, progress=False)
    D = dg.neuron_transport_diagonals(cell, p, x, lags, progress=False)
    lam = dg.source_rates(dg.recurrent_rates(cell, rates), cell.forward(p, x).h)
    for i, ell in enumerate(lags):
        assert ex.f[i] == pytest.approx(np.abs(lam[:10 - ell] * D[i, ell:]).sum(axis=2).mean(), rel=1e-12)
    env = dg.envelope(cell, p, x, rates, lags, eta=1.0, progress=False)
    assert ex.f[0] == pytest.approx(env.f[0], rel=1e-12)       # Γ_{t,1} = diag J_t exactly
    assert np.all((ex.offdiag > 0) & (ex.offdiag < 1))
