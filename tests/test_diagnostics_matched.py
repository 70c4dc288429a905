"""Matched statistic ψ (docs/diagnostics.md §2.7) against a direct loop; unit directions; per-lag gradients (§2.2)."""
import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from cellcases import random_params, rel_err

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
