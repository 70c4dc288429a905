"""Tests of lwsim/diagnostics/matched.py (laid out like the code: docs/testing.md).

Matched statistic ψ (docs/diagnostics.md §2.7) against a direct loop; unit directions; per-lag gradients (§2.2).

Matched statistic, statistic="instantaneous" (docs/diagnostics.md §2.7; the earlier code of [A]): the samples are
ψ_{b,t}(ℓ) at every counted step, b-major, checked against a direct loop and against the
per-sequence means.

The "full" null (docs/statistics.md §3.3): the whole per-sequence update ζ along each direction,
held to independent computations — BPTT on single sequences, and the exact lag decomposition.

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ."""


from __future__ import annotations

import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg, stats
from lwsim.diagnostics.matched import _directions

from cellcases import random_params, rel_err
from helpers import _params


RNG = np.random.default_rng(20)


def _psi_direct(cell, p, x, y, rates, lags, w, order, form, weight):
    """ψ̄_b(ℓ) = mean_t Σ_q Λ_q(b, t−ℓ) Γ_q(b, t, ℓ) δ_q(b, t) v_q(b, t−ℓ), one (b, t, ℓ) at a time."""
    tr = cell.forward(p, x)
    H = cell.n_hidden
    fac = dg.gate_factors(cell, p, x)
    lam = dg.source_rates(dg.recurrent_rates(cell, rates), tr.h, form)
    delta = (tr.y - y) @ p["W_out"]
    v = cell.tangents(p, x, w)
    if cell.name == "lstm":
        v = v[..., H:]
    T, B, _ = x.shape
    out = np.full((len(lags), B), np.nan)
    for i, ell in enumerate(lags):
        for b in range(B):
            vals = []
            for t in range(ell + 1, T + 1):
                if not weight[t - 1]:
                    continue
                k = t - ell
                prod = np.prod(fac.d[k:t, b], axis=0)              # d_{k+1} … d_t
                g = prod * (1 + (fac.r[k:t, b] / fac.d[k:t, b]).sum(axis=0)) if order == 1 else prod
                if fac.readout is not None:
                    g = g * fac.readout[t - 1, b]
                vals.append(np.sum(lam[k - 1, b] * g * delta[t - 1, b] * v[k, b]))
            out[i, b] = np.mean(vals)
    return out


CASES = [("diaggate", {"layernorm": True}, None), ("lstm", {}, None),
         ("gru", {}, np.array([True, False, True, True, False, True, True, True, False, True])),
         ("sharedgate", {"readout": "last"}, None)]


RNG_matched_instantaneous = np.random.default_rng(31)


def _psi_t_direct(cell, p, x, y, rates, lags, w, weight):
    """ψ_{b,t}(ℓ) = Σ_q Λ_q(b, t−ℓ) Γ_q(b, t, ℓ) δ_q(b, t) v_q(b, t−ℓ) (order 1), b-major lists."""
    tr = cell.forward(p, x)
    fac = dg.gate_factors(cell, p, x)
    lam = dg.source_rates(dg.recurrent_rates(cell, rates), tr.h, "rayleigh")
    delta = (tr.y - y) @ p["W_out"]
    v = cell.tangents(p, x, w)
    T, B, _ = x.shape
    out = []
    for ell in lags:
        vals = []
        for b in range(B):
            for t in range(ell + 1, T + 1):
                if not weight[t - 1]:
                    continue
                k = t - ell
                g = np.prod(fac.d[k:t, b], axis=0) * (1 + (fac.r[k:t, b] / fac.d[k:t, b]).sum(axis=0))
                vals.append(np.sum(lam[k - 1, b] * g * delta[t - 1, b] * v[k, b]))
        out.append(np.array(vals))
    return out


GATED = [("constgate", {"s": 0.3}), ("sharedgate", {"layernorm": True}), ("diaggate", {}),
         ("gru", {"layernorm": True}), ("gru", {"convention": "torch"}), ("lstm", {}),
         ("diaggate", {"readout": "last"})]


def _data(cell, T=9, B=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, B, cell.n_in)), rng.standard_normal((T, B, cell.n_out))


def _rates(p, seed=3):
    rng = np.random.default_rng(seed)
    return {k: rng.uniform(0.5, 2.0, np.shape(v)) * 1e-2 for k, v in p.items()}


def _zeta_by_bptt(cell, p, x, y, rates, w, mask=None):
    """(n_out/2) ⟨P ∇L_b, w⟩ with ∇L_b from loss_and_grad on sequence b alone."""
    out = []
    for b in range(x.shape[1]):
        _, g = cell.loss_and_grad(p, x[:, b:b + 1], y[:, b:b + 1], mask=mask)
        out.append(cell.n_out / 2 * sum(float((rates[k] * g[k] * w[k]).sum()) for k in g))
    return np.array(out)


T, B, D, H = 12, 3, 3, 5


def _cell(name, ln=True):
    opts = {"layernorm": ln}
    if name == "constgate":
        opts["s"] = 0.3
    return lwsim.make_cell(name, D, H, 1, **opts)


def _x(seed=1, b=B, t=T):
    return np.random.default_rng(seed).standard_normal((t, b, D))


# ----------------------------------------------------------------------------------------------
# random_direction
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mask", [None, np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1], bool)])
def test_instantaneous_samples_match_direct_loop(mask):
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3, n_out=1, layernorm=True)
    p = random_params(cell, 1)
    T, B = 10, 5
    x, y = RNG_matched_instantaneous.standard_normal((T, B, 2)), RNG_matched_instantaneous.standard_normal((T, B, 1))
    rates = {k: 1e-3 * np.random.default_rng(2).uniform(0.5, 2, v.shape) for k, v in p.items()}
    lags = [1, 4, 9]
    ms = dg.matched_statistic(cell, p, x, y, rates, lags, seed=7, mask=mask, chunk=2,
                              statistic="instantaneous", progress=False)
    w = dg.random_direction(p, int(np.random.SeedSequence([7, 0]).generate_state(1)[0]))
    ref = _psi_t_direct(cell, p, x, y, rates, lags, w, np.ones(T, bool) if mask is None else mask)
    assert ms.per_direction is None and len(ms.samples) == 3
    for got, want in zip(ms.samples, ref):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    if mask is None:
        assert [s.size for s in ms.samples] == [B * (T - ell) for ell in lags]   # n = B(T − ℓ)


@pytest.mark.parametrize("name,opts", GATED, ids=[f"{n}-{o}" for n, o in GATED])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_full_noise_equals_single_sequence_bptt(name, opts, backend):
    cell = lwsim.make_cell(name, n_in=2, n_hidden=3, n_out=2, **opts)
    p = random_params(cell, 5)
    x, y = _data(cell)
    rates = _rates(p)
    ms = dg.matched_statistic(cell, p, x, y, rates, [1, 3], n_directions=2, seed=11, full_noise=True,
                              backend=backend)
    dirs = [dg.random_direction(p, int(np.random.SeedSequence([11, i]).generate_state(1)[0])) for i in range(2)]
    for k, w in enumerate(dirs):
        ref = _zeta_by_bptt(cell, p, x, y, rates, w)
        np.testing.assert_allclose(ms.noise[k], ref, rtol=1e-11, atol=1e-15 * np.abs(ref).max())


def test_full_noise_with_mask_and_sgd_rate():
    cell = lwsim.make_cell("gru", n_in=2, n_hidden=3, n_out=1)
    p = random_params(cell, 2)
    x, y = _data(cell, T=8)
    mask = np.array([True, False, True, True, False, True, True, False])
    ms = dg.matched_statistic(cell, p, x, y, 0.05, [2], seed=4, full_noise=True, mask=mask)
    w = dg.random_direction(p, int(np.random.SeedSequence([4, 0]).generate_state(1)[0]))
    ref = _zeta_by_bptt(cell, p, x, y, {k: 0.05 for k in p}, w, mask=mask)
    np.testing.assert_allclose(ms.noise[0], ref, rtol=1e-11)
    assert ms.n_counted == mask.sum()


@pytest.mark.parametrize("name,opts", [("diaggate", {"layernorm": True}), ("lstm", {}), ("gru", {})])
def test_full_noise_with_identity_rates_is_the_sum_over_all_lags(name, opts):
    """P = I: ζ_b = (n_out/2) Σ_ℓ ⟨g_ℓ, w⟩, every lag of the exact decomposition (read-out at ℓ = 0)."""
    cell = lwsim.make_cell(name, n_in=2, n_hidden=3, n_out=2, **opts)
    p = random_params(cell, 8)
    x, y = _data(cell, T=7, B=3, seed=1)
    ms = dg.matched_statistic(cell, p, x, y, 1.0, [1, 2, 5], seed=6, full_noise=True)
    w = dg.random_direction(p, int(np.random.SeedSequence([6, 0]).generate_state(1)[0]))
    for b in range(3):
        _, per_lag = cell.lag_gradients(p, x[:, b:b + 1], y[:, b:b + 1])
        total = sum(float((g[k] * w[k]).sum()) for g in per_lag for k in g)
        partial = sum(float((g[k] * w[k]).sum()) for g in per_lag[:3] for k in g)   # lags 0…2 only
        assert ms.noise[0, b] == pytest.approx(cell.n_out / 2 * total, rel=1e-11)
        assert abs(ms.noise[0, b] - cell.n_out / 2 * partial) > 1e-6 * abs(total)  # the long lags count


# ----------------------------------------------------------------------------------------------
# _directions
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,opts,mask", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("order", [1, 0])
def test_matched_statistic_matches_direct_loop(name, opts, mask, order):
    cell = lwsim.make_cell(name, n_in=2, n_hidden=3, n_out=2, **opts)
    p = random_params(cell, 1)
    T, B = 10, 4
    x = RNG.standard_normal((T, B, 2))
    y = RNG.standard_normal((T, B, 2))
    rates = {k: 1e-3 * np.random.default_rng(2).uniform(0.5, 2, v.shape) for k, v in p.items()}
    lags = [1, 4, 9]
    weight = np.zeros(T, bool) if cell.readout == "last" else (np.ones(T, bool) if mask is None else mask)
    if cell.readout == "last":
        weight[-1] = True
    res = {}
    for engine in ("numpy", "numba"):
        res[engine] = dg.matched_statistic(cell, p, x, y, rates, lags, n_directions=2, seed=7, order=order,
                                           mask=mask, engine=engine, chunk=3, progress=False)
    m = res["numpy"]
    assert m.samples.shape == (3, B) and m.per_direction.shape == (2, 3, B)
    ws = dg.matched._directions(p, 2, 7, None)
    want = np.mean([_psi_direct(cell, p, x, y, rates, lags, w, order, "rayleigh", weight) for w in ws], axis=0)
    np.testing.assert_allclose(m.samples, want, rtol=1e-10, atol=1e-14 * np.abs(want).max())
    np.testing.assert_allclose(res["numba"].samples, m.samples, rtol=1e-10, atol=1e-14 * np.abs(want).max())


def test_orientation_and_directions():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)
    p = random_params(cell, 3)
    w = dg.random_direction(p, seed=5)
    assert sum(float((v ** 2).sum()) for v in w.values()) == pytest.approx(1.0)
    w2 = dg.random_direction(dict(reversed(list(p.items()))), seed=5)
    assert all(np.array_equal(w[k], w2[k]) for k in p)            # dict order does not matter
    wk = dg.random_direction(p, seed=5, keys=["W_h"])
    assert np.linalg.norm(wk["W_h"]) == pytest.approx(1.0) and not wk["U_s"].any()
    x = RNG.standard_normal((12, 6, 2))
    y = RNG.standard_normal((12, 6, 1))
    a = dg.matched_statistic(cell, p, x, y, 0.01, [1, 3], n_directions=3, progress=False)
    b = dg.matched_statistic(cell, p, x, y, 0.01, [1, 3], n_directions=3, orient=True, progress=False)
    assert np.all(b.per_direction.mean(axis=2) >= 0)
    np.testing.assert_allclose(np.abs(b.per_direction), np.abs(a.per_direction))
    np.testing.assert_allclose(b.per_direction, a.per_direction * b.signs[:, :, None])


def test_per_lag_gradients_sum_to_bptt():
    cell = lwsim.make_cell("lstm", n_in=2, n_hidden=3, layernorm=True)
    p = random_params(cell, 4)
    x = RNG.standard_normal((7, 2, 2))
    y = RNG.standard_normal((7, 2, 1))
    lg = dg.lag_gradient_profile(cell, p, x, y)
    loss, grads = cell.loss_and_grad(p, x, y)
    assert lg.loss == loss and lg.norms.shape == (7,)
    total = lg.total()
    for k in p:
        assert rel_err(total[k], grads[k]) <= 1e-10, k


# ----------------------------------------------------------------------------------------------
# matched_statistic
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["diaggate", "lstm"])
def test_direction_groups_and_backends_agree(name, monkeypatch):
    """K directions through the tangent pass in groups (numba: one pass per group) give the
    per-direction results of one pass per direction, and the NumPy reference's."""
    from lwsim.diagnostics import matched
    cell = lwsim.make_cell(name, 3, 4, layernorm=True)
    p = cell.init_params(seed=2, scheme="torch")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((10, 6, 3)), rng.standard_normal((10, 6, 1))
    run = lambda backend: dg.matched_statistic(cell, p, x, y, 0.1, [1, 2, 4], n_directions=3, seed=5,
                                               backend=backend, progress=False)
    grouped = run("numba")
    monkeypatch.setattr(matched, "TANGENT_GROUP_ELEMENTS", 1)          # one direction per pass
    single = run("numba")
    ref = run("numpy")
    np.testing.assert_allclose(grouped.per_direction, single.per_direction, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(grouped.per_direction, ref.per_direction, rtol=1e-11, atol=1e-15)


def test_instantaneous_averages_to_the_sequence_statistic():
    cell = lwsim.make_cell("gru", n_in=2, n_hidden=3, n_out=1)
    p = random_params(cell, 3)
    T, B = 12, 4
    x, y = RNG_matched_instantaneous.standard_normal((T, B, 2)), RNG_matched_instantaneous.standard_normal((T, B, 1))
    lags = [2, 5]
    kw = dict(n_directions=3, seed=5, orient=True, progress=False, engine="numpy")
    seq = dg.matched_statistic(cell, p, x, y, 1e-2, lags, **kw)
    inst = dg.matched_statistic(cell, p, x, y, 1e-2, lags, statistic="instantaneous", **kw)
    np.testing.assert_array_equal(inst.signs, seq.signs)       # equal counts: same mean sign
    for i, ell in enumerate(lags):
        np.testing.assert_allclose(inst.samples[i].reshape(B, T - ell).mean(axis=1), seq.samples[i],
                                   rtol=1e-10, atol=1e-15)


def test_statistic_is_validated():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)
    p = random_params(cell, 1)
    x, y = RNG_matched_instantaneous.standard_normal((6, 2, 2)), RNG_matched_instantaneous.standard_normal((6, 2, 1))
    with pytest.raises(ValueError, match="statistic"):
        dg.matched_statistic(cell, p, x, y, 1e-2, [1], statistic="pointwise", progress=False)


def test_single_direction_orientation_flips_negative_lags():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)
    p = random_params(cell, 4)
    x, y = RNG_matched_instantaneous.standard_normal((9, 3, 2)), RNG_matched_instantaneous.standard_normal((9, 3, 1))
    kw = dict(seed=2, statistic="instantaneous", progress=False)
    raw = dg.matched_statistic(cell, p, x, y, 1e-2, [1, 2, 3, 5], **kw)
    ori = dg.matched_statistic(cell, p, x, y, 1e-2, [1, 2, 3, 5], orient=True, **kw)
    for a, b, sg in zip(raw.samples, ori.samples, ori.signs[0]):
        assert sg == (-1.0 if a.mean() < 0 else 1.0)
        np.testing.assert_array_equal(b, sg * a)
        assert b.mean() >= 0


def test_full_noise_is_invariant_to_the_requested_lags():
    cell = lwsim.make_cell("sharedgate", n_in=2, n_hidden=4, n_out=1, layernorm=True)
    p = random_params(cell, 3)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((30, 600, 2)), rng.standard_normal((30, 600, 1))
    rates = _rates(p)
    tabs = []
    for lags in ([1, 2, 3], [5, 17, 29], [2, 29]):
        ms = dg.matched_statistic(cell, p, x, y, rates, lags, seed=2, full_noise=True)
        sig, noise = ms.full_null()
        assert noise.shape == (600,)
        tabs.append(stats.detection_table(sig, lags, [100, 1000], noise="full", noise_samples=noise))
    for t in tabs[1:]:
        assert t.alpha[0] == tabs[0].alpha[0] and t.sigma[0] == tabs[0].sigma[0]
        assert np.all(t.alpha == t.alpha[0]) and np.all(t.sigma == t.sigma[0])


def test_full_null_signal_units_and_orientation():
    """signal = (n_ℓ/n_0) ψ̄; with K > 1 oriented directions the noise rows carry each lag's signs."""
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3, n_out=1)
    p = random_params(cell, 1)
    x, y = _data(cell, T=10, B=6, seed=3)
    ms = dg.matched_statistic(cell, p, x, y, 1.0, [1, 4], n_directions=3, seed=2, full_noise=True, orient=True)
    sig, noise = ms.full_null()
    np.testing.assert_allclose(sig[0], ms.samples[0] * 9 / 10)
    np.testing.assert_allclose(sig[1], ms.samples[1] * 6 / 10)
    assert noise.shape == (2, 6)
    np.testing.assert_allclose(noise[1], (ms.signs[:, 1, None] * ms.noise).mean(axis=0))
    plain = dg.matched_statistic(cell, p, x, y, 1.0, [1, 4], n_directions=3, seed=2)
    with pytest.raises(ValueError, match="full_noise=True"):
        plain.full_null()


def test_full_noise_bad_inputs():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)
    p = random_params(cell, 1)
    x, y = _data(cell, T=6, B=2)
    with pytest.raises(TypeError, match="full_noise"):
        dg.matched_statistic(cell, p, x, y, 1.0, [1], full_noise=1)
    with pytest.raises(ValueError, match="statistic='sequence'"):
        dg.matched_statistic(cell, p, x, y, 1.0, [1], full_noise=True, statistic="instantaneous")
    with pytest.raises(ValueError, match="no entry for the parameters"):
        dg.matched_statistic(cell, p, x, y, {k: np.ones((3, 3)) for k in cell.recurrent_keys}, [1],
                             full_noise=True)
    with pytest.raises(ValueError, match="float32 cell"):
        dg.matched_statistic(cell, p, x, y, 1.0, [1], dtype="float32")
    with pytest.raises(ValueError, match="dtype"):
        dg.matched_statistic(cell, p, x, y, 1.0, [1], dtype="float16")


# ----------------------------------------------------------------------------- the author's arithmetic
def test_float32_diagnostics_close_to_float64_and_not_equal():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=4, n_out=1, layernorm=True)
    p = random_params(cell, 4)
    x, y = _data(cell, T=20, B=8, seed=2)
    c32 = cell.with_dtype("float32")
    p32 = {k: v.astype(np.float32) for k, v in p.items()}
    p64 = {k: v.astype(np.float64) for k, v in p32.items()}              # the same weights, float64
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    m64 = dg.matched_statistic(cell, p64, x32.astype(np.float64), y32.astype(np.float64), 1.0, [1, 5, 12], seed=1)
    m32 = dg.matched_statistic(c32, p32, x32, y32, 1.0, [1, 5, 12], seed=1, dtype="float32")
    rel = np.abs(m32.samples - m64.samples) / np.abs(m64.samples).max()
    assert rel.max() < 1e-4 and rel.max() > 1e-10      # float32 round-off, not float64's


@pytest.mark.parametrize("name,H,order,mask", [("diaggate", 9, 1, None), ("lstm", 8, 0, None),
                                                ("gru", 17, 1, np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1], bool))])
def test_float32_statistic_is_the_authors_numpy_arithmetic_bit_for_bit(name, H, order, mask):
    """dtype="float32": ψ̄ is, bit for bit, the author's NumPy/torch arithmetic written out here —
    Γ from float64 prefix sums exp(P_t − P_{t−ℓ})·((1 + Q_t) − Q_{t−ℓ})·e cast to float32, the
    float32 products Λ·Γ·δ·v summed over q by ``sum(axis=2, dtype=float32)``, the weighted sum over
    t in float64 — for chunks of several sequences and H from 8 up (the sizes of A15)."""
    cell = lwsim.make_cell(name, n_in=2, n_hidden=H, n_out=1).with_dtype("float32")
    p = {k: v.astype(np.float32) for k, v in random_params(cell.with_dtype("float64"), 3).items()}
    T, B, lags = 12, 7, np.array([1, 3, 4, 11])
    x, y = (a.astype(np.float32) for a in _data(cell, T=T, B=B, seed=4))
    rates = {k: 1e-3 * np.random.default_rng(2).uniform(0.5, 2, v.shape) for k, v in p.items()}
    ms = dg.matched_statistic(cell, p, x, y, rates, lags, seed=7, order=order, mask=mask, chunk=B,
                              dtype="float32", progress=False)
    fac = dg.gate_factors(cell, p, x)
    d, r = fac.d.astype(np.float64), fac.r.astype(np.float64)
    P = np.concatenate([np.zeros((1, B, H)), np.cumsum(np.log(d), axis=0)])
    Q = np.concatenate([np.zeros((1, B, H)), np.cumsum(r / d, axis=0)])
    lam = dg.source_rates(dg.recurrent_rates(cell, rates), fac.trace.h).astype(np.float32)
    delta = (fac.trace.y - y) @ p["W_out"]
    v = cell.tangents(p, x, _directions(p, 1, 7, None)[0])
    v = (v[..., H:] if name == "lstm" else v).astype(np.float32)
    weight = np.ones(T) if mask is None else mask.astype(np.float64)
    want = np.zeros((lags.size, B))
    for i, ell in enumerate(lags):
        g = np.exp(P[ell + 1:] - P[1:T + 1 - ell])
        if order == 1:
            g = g * (1.0 + Q[ell + 1:] - Q[1:T + 1 - ell])
        if fac.readout is not None:
            g = g * fac.readout[ell:].astype(np.float64)
        per_t = (lam[:T - ell] * g.astype(np.float32) * delta[ell:] * v[1:T - ell + 1]).sum(axis=2, dtype=np.float32)
        want[i] = (weight[ell:, None] * per_t).sum(axis=0) / weight[ell:].sum()
    assert np.array_equal(ms.samples, want)


def test_float32_diagnostics_underflow_a_long_window_to_zero():
    """ConstGate d = 1 − s = 0.1: Γ over ℓ = 50 steps is 1e−50, below float32's smallest subnormal
    (1.4e−45): the author's float32 window is exactly 0 where float64 keeps it."""
    cell = lwsim.make_cell("constgate", n_in=2, n_hidden=3, n_out=1, s=0.9)
    p = random_params(cell, 1)
    x, y = _data(cell, T=60, B=4, seed=5)
    c32, p32 = cell.with_dtype("float32"), {k: v.astype(np.float32) for k, v in p.items()}
    m64 = dg.matched_statistic(cell, p, x, y, 1.0, [2, 50], seed=1, order=0)
    m32 = dg.matched_statistic(c32, p32, x.astype(np.float32), y.astype(np.float32), 1.0, [2, 50], seed=1,
                               order=0, dtype="float32")
    assert np.all(m64.samples[1] != 0) and np.all(m32.samples[1] == 0)
    assert np.all(m32.samples[0] != 0)


def test_instantaneous_author_orientation_per_batch_of_128():
    """statistic="instantaneous", conventions="author", orient: ψ_{b,t} ← sgn(mean of its 128-sequence
    batch over (b, t)) ψ_{b,t}, against an independent loop over the unoriented samples."""
    cell = lwsim.make_cell("sharedgate", n_in=2, n_hidden=3, n_out=1)
    p = random_params(cell, 2)
    x, y = _data(cell, T=6, B=300, seed=9)
    y[:, :128] -= 5.0                     # opposite error signs in the first two batches
    y[:, 128:256] += 5.0
    kw = dict(seed=3, statistic="instantaneous", engine="numpy", progress=False)
    raw = dg.matched_statistic(cell, p, x, y, 1.0, [1, 3], conventions="author", **kw)
    ori = dg.matched_statistic(cell, p, x, y, 1.0, [1, 3], conventions="author", orient=True, **kw)
    for i, ell in enumerate([1, 3]):
        per_seq = raw.samples[i].reshape(300, 6 - ell)
        expect = per_seq.copy()
        for lo in (0, 128, 256):
            m = per_seq[lo:lo + 128].mean()
            expect[lo:lo + 128] *= -1.0 if m < 0 else 1.0
        np.testing.assert_array_equal(ori.samples[i], expect.ravel())
        signs = ori.signs[0][i].reshape(300, 6 - ell)[:, 0]
        assert set(np.unique(signs)) <= {-1.0, 1.0}
    # the batches disagree somewhere (else this would not test per-batch signs)
    flat = [np.unique(ori.signs[0][i].reshape(300, -1)[:, 0]) for i in range(2)]
    assert any(u.size == 2 for u in flat)


def test_author_envelope_summed_over_neurons_final_launcher():
    """conventions="author": the earlier code averages |μ| over neurons, the final launcher sums
    (f × H); its per-sequence log mass is log Σ_q mean_t |μ| (checked by hand from the mean version's
    per-neuron m, one sequence at a time)."""
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=4, n_out=1)
    p = random_params(cell, 3)
    x, _ = _data(cell, T=12, B=3, seed=4)
    mean = dg.envelope(cell, p, x, 0.1, [1, 3, 6], conventions="author", engine="numpy")
    summ = dg.envelope(cell, p, x, 0.1, [1, 3, 6], conventions="author", engine="numpy", neurons="sum")
    np.testing.assert_allclose(summ.f, 4 * mean.f, rtol=1e-14)
    np.testing.assert_allclose(summ.m, mean.m, rtol=1e-14)
    per_seq = [dg.envelope(cell, p, x[:, b:b + 1], 0.1, [1, 3, 6], conventions="author", engine="numpy",
                           neurons="sum") for b in range(3)]
    np.testing.assert_allclose(summ.log_mass, np.mean([np.log(e.f + 1e-30) for e in per_seq], axis=0), rtol=1e-12)
    lw = dg.envelope(cell, p, x, 0.1, [1, 3, 6])
    assert lw.log_mass is None
    with pytest.raises(ValueError, match="neurons"):
        dg.envelope(cell, p, x, 0.1, [1], neurons="max")


def test_a_main_diag_dtype_float32_is_the_f32_ablation():
    """Preset option diag_dtype="float32": the main ("lag") table is the float32 one, equal to the
    "f32" ablation computed beside it; the default keeps float64 (different last bits)."""
    from lwsim.figures.studies.main import experiment as ex
    from lwsim.figures.studies import preset_sizes
    SMOKE = preset_sizes("smoke")
    c = dict({k: v for k, v in SMOKE["a_main"].items()
              if k not in ("seeds", "optimizers")},
             cell="diaggate", seed=212, optimizer="adamw", backend="numba", nulls=["lag"], floor_ablations=["f32"])
    base = ex.a_main(c)
    f32 = ex.a_main(dict(c, diag_dtype="float32"))
    np.testing.assert_array_equal(f32["mean"], f32["mean_f32"])
    np.testing.assert_array_equal(f32["mean"], base["mean_f32"])
    assert not np.array_equal(base["mean"], base["mean_f32"])
    with pytest.raises(ValueError, match="diag_dtype"):
        ex.a_main(dict(c, diag_dtype="float16"))


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


# ----------------------------------------------------------------------------------------------
# envelope_and_matched
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,conventions", [("gru", "lwsim"), ("lstm", "lwsim"), ("sharedgate", "author")])
def test_envelope_and_matched_equals_separate_calls(name, conventions):
    """One pass sharing each chunk's gate factors gives exactly the two separate results."""
    cell = lwsim.make_cell(name, 3, 5, layernorm=True)
    p = cell.init_params(seed=4, scheme="torch")
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((12, 37, 3)), rng.standard_normal((12, 37, 1))
    kw = dict(chunk=16, backend="numba", progress=False, conventions=conventions)
    eng = "numpy" if conventions == "author" else "numba"
    env, ms = dg.envelope_and_matched(cell, p, x, y, 0.1, [1, 2, 5], envelope_kwargs={"engine": eng},
                                      n_directions=2, seed=3, orient=True, **kw)
    env1 = dg.envelope(cell, p, x, 0.1, [1, 2, 5], engine=eng, **kw)
    ms1 = dg.matched_statistic(cell, p, x, y, 0.1, [1, 2, 5], n_directions=2, seed=3, orient=True, **kw)
    for field in ("f", "f_gates", "m", "count", "lam_mean", "lam_std", "lam_neuron"):
        np.testing.assert_array_equal(getattr(env, field), getattr(env1, field), err_msg=field)
    np.testing.assert_array_equal(ms.per_direction, ms1.per_direction)
    np.testing.assert_array_equal(ms.signs, ms1.signs)
    # Λ ≡ 1 as the earlier code: rates 1.0 and eta 1.0 for the envelope
    env0, _ = dg.envelope_and_matched(cell, p, x, y, 1.0, [1, 2], envelope_kwargs={"eta": 1.0}, **kw)
    np.testing.assert_array_equal(env0.f, dg.envelope(cell, p, x, 1.0, [1, 2], eta=1.0, **kw).f)


@pytest.mark.parametrize("B,T,H,order,with_e,readout_last", [
    (1, 9, 3, 1, False, False), (5, 12, 4, 0, True, False), (33, 11, 2, 1, True, False),
    (70, 14, 3, 1, False, False), (40, 10, 5, 0, False, True)])
def test_blocked_kernel_bits_equal_the_per_sequence_kernel(B, T, H, order, with_e, readout_last):
    """The numba engine's kernel (sequences side by side in blocks, docs/performance.md) gives the
    bits of the earlier per-sequence kernel: ragged last blocks, a masked step, e or none, order 0/1."""
    from lwsim.diagnostics import _kernels
    rng = np.random.default_rng([B, T, H])
    d = rng.uniform(0.5, 1.0, (T, B, H))
    rd = rng.uniform(-0.2, 0.3, (T, B, H))
    e = rng.uniform(0.1, 1.0, (T, B, H)) if with_e else None
    lam, delta = rng.uniform(0, 2, (T, B, H)), rng.standard_normal((T, B, H))
    v = rng.standard_normal((T + 1, B, H))
    weight = np.zeros(T) if readout_last else np.ones(T)
    weight[-1] = 1.0
    weight[T // 2] = 0.0
    lags = np.array([1, 2, 5, T - 1])
    bt = lambda a: np.ascontiguousarray(a.transpose(1, 0, 2))                    # noqa: E731
    want_p, want_c = np.zeros((4, B)), np.zeros((4, B))
    _kernels.matched_accumulate_tiled(bt(d), bt(rd), bt(np.ones_like(d) if e is None else e), bt(lam), bt(delta),
                                      bt(v), weight, lags, order, want_p, want_c)
    for bs in sorted({1, 4, min(_kernels.MATCHED_BLOCK, B)}):
        blk = lambda a: _kernels.matched_blocks(a, bs)                          # noqa: E731
        p, c = np.zeros((4, B)), np.zeros((4, B))
        _kernels.matched_accumulate(blk(d), blk(rd), blk(d if e is None else e), e is not None, blk(lam), blk(delta),
                                    blk(v), weight, lags, order, p, c, bs)
        assert np.array_equal(p, want_p) and np.array_equal(c, want_c), bs
    assert np.count_nonzero(want_p) > 0
