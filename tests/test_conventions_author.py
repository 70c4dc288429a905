"""conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import lwsim
from lwsim import diagnostics as dg
from lwsim import stats
from lwsim.diagnostics.gamma import gate_factors
from lwsim.diagnostics.matched import _directions
from lwsim.diagnostics.rates import source_rates
from lwsim.stats import mcculloch, tailfit
from lwsim.stats.decay_author import tempered_author

T, B, D, H = 12, 3, 3, 5


def _cell(name, ln=True):
    opts = {"layernorm": ln}
    if name == "constgate":
        opts["s"] = 0.3
    return lwsim.make_cell(name, D, H, 1, **opts)


def _params(cell, seed=0):
    rng = np.random.default_rng(seed)
    p = {k: 0.6 * rng.standard_normal(s) for k, s in cell.param_shapes().items()}
    if "ln_gamma" in p:
        p["ln_gamma"] = 1.0 + p["ln_gamma"]
    return p


def _x(seed=1, b=B, t=T):
    return np.random.default_rng(seed).standard_normal((t, b, D))


# ---- the keyword ------------------------------------------------------------------------------
def test_conventions_keyword_is_validated():
    cell = _cell("diaggate")
    p, x = _params(cell), _x()
    with pytest.raises(ValueError, match="conventions"):
        dg.envelope(cell, p, x, 0.1, 3, progress=False, conventions="Author")
    with pytest.raises(TypeError, match="conventions"):
        stats.fit_alpha(np.random.default_rng(0).standard_normal(600), conventions=None)
    with pytest.raises(ValueError, match="conventions"):
        stats.fit_decay(np.arange(1, 20), np.exp(-np.arange(1, 20.0)), conventions="paper")
    with pytest.raises(ValueError, match="conventions"):
        gate_factors(cell, p, x, conventions="torch")
    with pytest.raises(ValueError, match="alpha_range"):
        stats.fit_alpha(np.random.default_rng(0).standard_normal(600), alpha_range="open", conventions="author")
    with pytest.raises(ValueError, match="cho"):
        gate_factors(lwsim.make_cell("gru", D, H, 1, convention="torch"),
                     _params(lwsim.make_cell("gru", D, H, 1, convention="torch")), x, conventions="author")


# ---- r_t without the LayerNorm Jacobian --------------------------------------------------------
def _hand_r_leaky(name, p, tr):
    """Author: r = (h̃ − h_{t−1}) s' u_qq + s (1 − h̃²) W_h,qq, loop over t, b, q."""
    out = np.zeros((T, B, H))
    for t in range(T):
        for b in range(B):
            for q in range(H):
                s = 1.0 - tr.leak[t, b, q]
                hp, c = tr.h[t, b, q], tr.cand[t, b, q]
                v = s * (1.0 - c * c) * p["W_h"][q, q]
                if name == "diaggate":
                    v += (c - hp) * s * (1.0 - s) * p["U_s"][q, q]
                elif name == "sharedgate":
                    v += (c - hp) * s * (1.0 - s) * p["u_s"][q]
                out[t, b, q] = v
    return out


@pytest.mark.parametrize("name", ["constgate", "sharedgate", "diaggate"])
def test_author_r_leaky_cells(name):
    cell = _cell(name)
    p, x = _params(cell), _x()
    fa = gate_factors(cell, p, x, conventions="author")
    np.testing.assert_allclose(fa.r, _hand_r_leaky(name, p, fa.trace), rtol=1e-12, atol=1e-14)
    fl = gate_factors(cell, p, x)
    assert np.abs(fa.r - fl.r).max() > 1e-2                 # LN on: they must differ
    plain = _cell(name, ln=False)                             # LN off: the same convention
    pp = {k: v for k, v in p.items() if not k.startswith("ln_")}
    np.testing.assert_allclose(gate_factors(plain, pp, x, conventions="author").r,
                               gate_factors(plain, pp, x).r, rtol=1e-10, atol=1e-13)


def test_author_lstm_r_and_readout():
    cell = _cell("lstm")
    p, x = _params(cell), _x()
    fa = gate_factors(cell, p, x, conventions="author")
    tr = fa.trace
    i, f, g, o = (tr.gates[k] for k in "ifgo")
    e = o * (1 - np.tanh(tr.c[1:]) ** 2)
    hand = np.zeros((T, B, H))
    for t in range(T):
        cd = (tr.c[t] * f[t] * (1 - f[t]) * np.diag(p["U_f"]) + i[t] * (1 - g[t] ** 2) * np.diag(p["U_g"])
              + g[t] * i[t] * (1 - i[t]) * np.diag(p["U_i"]))
        hand[t] = cd * (e[t - 1] if t > 0 else 0.0)
    np.testing.assert_allclose(fa.r, hand, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fa.readout, e, rtol=1e-12)
    assert np.abs(fa.r - gate_factors(cell, p, x).r).max() > 1e-2


# ---- GRU: diag(U_g)·diag(U_r) and Γ⁰ = Π(1−z) + Π r + Π(1−z) r ---------------------------------
def test_author_gru_r_and_gamma():
    cell = _cell("gru", ln=False)
    p, x = _params(cell), _x()
    fa = gate_factors(cell, p, x, conventions="author")
    z, r, g = (fa.trace.gates[k] for k in "zrg")
    hp = fa.trace.h[:-1]
    rd = (g - hp) * z * (1 - z) * np.diag(p["U_z"]) + z * (1 - g ** 2) * np.diag(p["U_g"]) * (
        r + hp * r * (1 - r) * np.diag(p["U_r"]))
    np.testing.assert_allclose(fa.r, rd, rtol=1e-12, atol=1e-14)
    assert np.abs(fa.r - gate_factors(cell, p, x).r).max() > 1e-3   # diag(U_g diag(h r') U_r) ≠
    lags = [1, 3, 7]
    G = dg.transport_factors(cell, p, x, lags, conventions="author")
    G0 = dg.transport_factors(cell, p, x, lags, order=0, conventions="author")
    d = 1 - z
    for i, ell in enumerate(lags):
        for t in range(ell + 1, T + 1):                      # windows j = t−ℓ+1 … t (1-based)
            w = slice(t - ell, t)
            g0 = d[w].prod(0) + r[w].prod(0) + (d[w] * r[w]).prod(0)
            np.testing.assert_allclose(G0[i, t - 1], g0, rtol=1e-12)
            np.testing.assert_allclose(G[i, t - 1], g0 + d[w].prod(0) * (rd[w] / d[w]).sum(0), rtol=1e-11)
        assert np.isnan(G[i, :ell]).all()
    Gl = dg.transport_factors(cell, p, x, lags)
    assert np.nanmax(np.abs(G - Gl)) > 1e-2


# ---- envelope: windows from h₀, Λ at h_k, mean over neurons, log-mass ---------------------------
def _rates(cell, seed=5):
    rng = np.random.default_rng(seed)
    return {k: rng.uniform(0.1, 1.0, (H, H)) for k in cell.recurrent_keys}


@pytest.mark.parametrize("name", ["diaggate", "gru", "lstm"])
def test_author_envelope_matches_hand_loops(name):
    cell = _cell(name, ln=(name != "gru"))
    p, x, lam = _params(cell), _x(), _rates(cell)
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


def test_author_source_rates_use_h_k():
    h = np.random.default_rng(0).standard_normal((T + 1, B, H))
    h[0] = 0.0
    lam = np.random.default_rng(1).uniform(0.1, 1.0, (H, H))
    a = source_rates(lam, h, conventions="author")
    assert a.shape == (T + 1, B, H)
    np.testing.assert_allclose(a[0], np.broadcast_to(lam.mean(1), (B, H)))   # h₀ = 0: row mean
    np.testing.assert_allclose(a[4, 1], lam @ h[4, 1] ** 2 / (h[4, 1] ** 2).sum())
    np.testing.assert_allclose(source_rates(lam, h)[4, 1], lam @ h[4, 1] ** 2 / (h[4, 1] ** 2).sum())
    assert not np.allclose(a[1:], source_rates(lam, h))


# ---- matched statistic: batch orientation, LSTM hidden tangent ----------------------------------
def test_author_orientation_by_128_sequence_batches():
    cell = _cell("diaggate", ln=False)
    p = _params(cell, 4)
    Bb = 300
    x = _x(2, b=Bb, t=10)
    y = np.random.default_rng(9).standard_normal((10, Bb, 1))
    kw = dict(progress=False, conventions="author", order=1)
    raw = dg.matched_statistic(cell, p, x, y, 0.1, [1, 2, 4], **kw)
    ori = dg.matched_statistic(cell, p, x, y, 0.1, [1, 2, 4], orient=True, **kw)
    hand = raw.samples.copy()
    for lo in range(0, Bb, 128):                         # counts are equal: batch mean of ψ̄_b
        m = raw.samples[:, lo:lo + 128].mean(axis=1)
        hand[:, lo:lo + 128] *= np.where(m < 0, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(ori.samples, hand, rtol=1e-13)
    assert ori.signs.shape == (1, 3, Bb)
    glob = dg.matched_statistic(cell, p, x, y, 0.1, [1, 2, 4], orient=True, progress=False)
    mixed = [np.unique(ori.signs[0, i]).size > 1 for i in range(3)]
    assert any(mixed)                                    # batches disagree → differs from one sign
    i = mixed.index(True)
    np.testing.assert_allclose(np.abs(glob.samples), np.abs(raw.samples), rtol=1e-12)   # LN off: same ψ
    assert not np.allclose(ori.samples[i], glob.samples[i])


def test_author_lstm_pairs_gamma_with_hidden_tangent():
    cell = _cell("lstm", ln=False)
    p = _params(cell, 4)
    x = _x(5)
    y = np.random.default_rng(6).standard_normal((T, B, 1))
    lags = [1, 3]
    ms = dg.matched_statistic(cell, p, x, y, 0.2, lags, order=0, progress=False, conventions="author")
    w = _directions(cell.check_params(p), 1, 0, None)[0]
    v = cell.tangents(p, x, w)
    G0 = dg.transport_factors(cell, p, x, lags, order=0, conventions="author")
    tr = cell.forward(p, x)
    delta = (tr.y - y) @ p["W_out"]
    for i, ell in enumerate(lags):
        psi = np.zeros(B)
        for t in range(ell + 1, T + 1):
            psi += (0.2 * G0[i, t - 1] * delta[t - 1] * v[t - ell][..., :H]).sum(-1)   # v^h_{t−ℓ} (v[0] = 0)
        np.testing.assert_allclose(ms.samples[i], psi / (T - ell), rtol=1e-11)
    lw = dg.matched_statistic(cell, p, x, y, 0.2, lags, order=0, progress=False)
    assert np.abs(lw.samples - ms.samples).max() > 1e-3 * np.abs(ms.samples).max()


# ---- ECF: σ̂ from the unclipped intercept ------------------------------------------------------
def _author_ecf(x):
    """The author's ECF regression, written from its formulas (raw units, direct cos/sin)."""
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    s = iqr / 1.349
    t = np.linspace(0.05 / s, 3.0 / s, 50)
    tx = np.outer(t, x)
    phi2 = np.cos(tx).mean(1) ** 2 + np.sin(tx).mean(1) ** 2
    m = (phi2 > 0.01) & (phi2 < 0.95)
    Y, X = np.log(-np.log(phi2[m])), np.log(t[m])
    w = np.exp(-2.0 * (np.log(phi2[m]) + 0.7) ** 2)
    w /= w.sum()
    Xb, Yb = np.average(X, weights=w), np.average(Y, weights=w)
    slope = np.sum(w * (X - Xb) * (Y - Yb)) / np.sum(w * (X - Xb) ** 2)
    a = float(np.clip(slope, 1.0, 2.0))
    return a, (np.exp(Yb - slope * Xb) / 2.0) ** (1.0 / a), slope


@pytest.mark.parametrize("kind", ["gauss", "sas15"])
def test_author_ecf_sigma(kind):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3000) * 0.8 if kind == "gauss" else sps.levy_stable.rvs(1.5, 0, size=3000, random_state=8)
    a, s, slope = _author_ecf(x)
    f = stats.fit_alpha(x, method="ecf", conventions="author")
    assert f.method == "ecf"
    np.testing.assert_allclose([f.alpha, f.sigma], [a, s], rtol=1e-9)
    lw = stats.fit_alpha(x, method="ecf")
    if kind == "gauss":                      # α̂ clipped at 2: σ̂ differs and is not scale-equivariant
        assert slope > 2.0 and abs(f.sigma / lw.sigma - 1) > 1e-4
        g = stats.fit_alpha(100 * x, method="ecf", conventions="author")
        np.testing.assert_allclose(g.sigma / f.sigma, 100 ** (slope / 2.0), rtol=1e-8)
    else:                                    # no clipping: the same σ̂
        assert 1 < slope < 2
        np.testing.assert_allclose(f.sigma, lw.sigma, rtol=1e-10)


# ---- McCulloch: the author's 201-point table with R(1.005) = R(1) --------------------------------
def test_author_mcculloch_table_and_interpolation():
    tab = mcculloch.author_table()
    q75, q95 = sps.levy_stable.ppf([0.75, 0.95], 1.005, 0.0)     # what scipy gave the author
    np.testing.assert_allclose(tab["ratio"][1], q95 / q75, rtol=1e-7)
    np.testing.assert_allclose(tab["ratio"][1], np.tan(0.45 * np.pi), rtol=1e-9)   # = R(1), Cauchy
    np.testing.assert_allclose(tab["iqr"][100], 2 * sps.levy_stable.ppf(0.75, 1.5, 0.0), rtol=1e-7)
    # hand rule on one quantile row: R̂ = (q95 − q05)/(IQR + 1e−12), linear interpolation on sorted R
    fine = mcculloch.table()
    j = int(np.argmin(np.abs(fine["alpha"] - 1.3)))
    q = np.array([-fine["ratio"][j], -1.0, 1.0, fine["ratio"][j]]) * 0.7
    a_grid = np.linspace(1, 2, 201)
    R = np.interp(a_grid, fine["alpha"], fine["ratio"])
    I = np.interp(a_grid, fine["alpha"], fine["iqr"])
    R[1], I[1] = R[0], I[0]
    o = np.argsort(R)
    r_hat = (q[3] - q[0]) / (1.4 + 1e-12)
    a, s, _ = mcculloch.author_quantile_fit(q)
    np.testing.assert_allclose(a, np.interp(r_hat, R[o], a_grid[o]), rtol=1e-12)
    np.testing.assert_allclose(s, 1.4 / (np.interp(r_hat, R[o], I[o]) + 1e-12), rtol=1e-12)
    # near α = 1 they must differ: R̂ = R(1.004) lies between R(1.01) and the repeated R(1), where
    # the author interpolates linearly over [1, 1.01] (the largest effect, ≈ 5e−5 in α̂)
    k = int(np.argmin(np.abs(fine["alpha"] - 1.004)))
    q = np.array([-fine["ratio"][k], -1.0, 1.0, fine["ratio"][k]])
    a_auth = float(mcculloch.author_quantile_fit(q)[0])
    a_lw = float(mcculloch.alpha_from_quantiles(q, 1.0)[0])
    assert abs(a_lw - 1.004) < 1e-6 and abs(a_auth - a_lw) > 3e-5


def test_author_fit_alpha_mcculloch_uses_author_table():
    x = stats.sample_sas(1.0, 1.0, size=4000, seed=3)
    f = stats.fit_alpha(x, method="mcculloch", n_boot=0, conventions="author")
    q = np.quantile(np.sort(x), mcculloch.PROBS)
    a, s, _ = mcculloch.author_quantile_fit(q)
    assert (f.alpha, f.sigma) == (float(a), float(s))
    det = stats.detection_table(x[None], [1], [100, 1000], method="mcculloch", n_boot=20, conventions="author")
    assert det.alpha[0] == pytest.approx(stats.fit_alpha(x - x.mean(), method="mcculloch", n_boot=0,
                                                         conventions="author").alpha, abs=1e-12)


# ---- tempered law: free cutoff coefficient, p = 5 ------------------------------------------------
def test_author_tempered_law():
    ell = np.arange(1, 33, dtype=float)
    f = 3 * ell ** -0.4 * np.exp(-0.6 * (ell / 9) ** 0.8) * np.exp(0.02 * np.random.default_rng(1).standard_normal(32))
    laws = ("exponential", "power", "tempered")          # keeps ℓ = 1 (no log log ℓ)
    fit = stats.fit_decay(ell, f, laws=laws, conventions="author").fits["tempered"]
    y = np.log(f)
    lo, hi = 0.5, 64.0
    best = (np.inf,)
    for k in (0.25, 0.35, 0.5, 0.7, 1.0, 1.3, 1.6):
        for lc in np.logspace(np.log10(lo), np.log10(hi), 40):
            X = np.column_stack([np.ones(32), np.log(ell), (ell / lc) ** k])
            c = np.linalg.lstsq(X, y, rcond=None)[0]
            ssr = ((y - X @ c) ** 2).sum()
            if ssr < best[0]:
                best = (ssr, c, lc, k)
    ssr, c, lc, k = best
    assert fit.p == 5 and fit.params["k"] == k and fit.params["l_c"] == pytest.approx(lc, rel=1e-12)
    np.testing.assert_allclose([fit.params["beta"], fit.params["cutoff_coeff"], fit.ssr], [-c[1], -c[2], ssr],
                               rtol=1e-8)
    np.testing.assert_allclose(fit.aic, 32 * np.log(ssr / 32) + 10, rtol=1e-12)
    params, s2 = tempered_author(ell, y)
    assert params == fit.params and s2 == fit.ssr
    lw = stats.fit_decay(ell, f, laws=laws).fits["tempered"]
    assert lw.p == 4 and "cutoff_coeff" not in lw.params and lw.ssr != fit.ssr


# ---- A13 summary rules and the FINDINGS.md section ---------------------------------------------
def _a13_results(lam, growth, alpha):
    """Synthetic A13 results: per cell (λ, Ĥ_N growth, mean α̂) per convention."""
    from lwsim.figures.presets import A_CELLS
    cells = {}
    for i, cell in enumerate(A_CELLS):
        r = {}
        for conv in ("lwsim", "author"):
            h = np.zeros(6)
            h[3:] = 5.0
            h[-1] = 5.0 + growth[conv][i]                    # growth over the upper half: h[-1] − h[3]
            r[f"decay_{conv}"] = {"lambda": lam[conv][i], "selected_bic": "tempered"}
            r[f"h_n_{conv}"] = h
            r[f"alpha_{conv}"] = np.array([alpha[conv][i] - 0.1, alpha[conv][i] + 0.1])
        cells[cell] = [r]
    return cells


def test_a13_rules_and_findings_section():
    from lwsim.figures.studies.conventions.figures import summary
    from lwsim.figures.studies.conventions.findings import conventions_lines
    lam = {"lwsim": [0.10, 0.12, 0.05, 0.06, 0.07], "author": [0.10, 0.12, 0.05, 0.11, 0.07]}
    growth = {"lwsim": [0, 0, 3, 2, 1], "author": [0, 0, 3, 2, 1]}
    alpha = {"lwsim": [1.9, 1.8, 1.5, 1.6, 1.7], "author": [1.9, 1.8, 1.5, 1.6, 1.7]}
    s = summary(_a13_results(lam, growth, alpha))
    assert s["lwsim"]["rules"] == {"slow_cells_decay_slower": True, "fast_cells_saturate": True,
                                   "slow_cells_keep_growing": True, "heavier_tails_in_slow_cells": True}
    # author: the GRU's λ (0.11) is above ConstGate's (0.10): only the first rule flips
    assert s["author"]["rules"]["slow_cells_decay_slower"] is False
    assert s["lwsim"]["cells"]["gru"] == {"lambda": 0.06, "selected_bic": ["tempered"], "h_growth": 2.0,
                                          "alpha_mean": pytest.approx(1.6)}
    lines = conventions_lines({"A13": {"summary": s}})
    assert "**verdicts change**" in lines[2] and "(1 of 4 rules differ)" in lines[2]
    assert sum("— **changes**" in ln for ln in lines) == 1
    same = summary(_a13_results({"lwsim": lam["lwsim"], "author": lam["lwsim"]}, growth, alpha))
    assert "**no verdict changes**" in conventions_lines({"A13": {"summary": same}})[2]
    # boundaries: growth 0 counts as saturated, mean α̂ equal is not "heavier tails"
    edge = summary(_a13_results({"lwsim": [0.07, 0.12, 0.05, 0.06, 0.07], "author": lam["author"]},
                                {"lwsim": [0, 0, 0, 2, 1], "author": [0.5, 0, 3, 2, 1]},
                                {"lwsim": [1.6] * 5, "author": [1.6] * 5}))
    assert edge["lwsim"]["rules"]["slow_cells_keep_growing"] is False
    assert edge["author"]["rules"]["fast_cells_saturate"] is False
    assert edge["lwsim"]["rules"]["heavier_tails_in_slow_cells"] is False
    assert edge["lwsim"]["rules"]["slow_cells_decay_slower"] is False      # a tie is not "slower"
    assert conventions_lines({}) == []
