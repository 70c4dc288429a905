"""Matched statistic, statistic="instantaneous" (docs/diagnostics.md §2.7; the earlier code of [A]): the samples are
ψ_{b,t}(ℓ) at every counted step, b-major, checked against a direct loop and against the
per-sequence means."""
import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from cellcases import random_params

RNG = np.random.default_rng(31)


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


@pytest.mark.parametrize("mask", [None, np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1], bool)])
def test_instantaneous_samples_match_direct_loop(mask):
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3, n_out=1, layernorm=True)
    p = random_params(cell, 1)
    T, B = 10, 5
    x, y = RNG.standard_normal((T, B, 2)), RNG.standard_normal((T, B, 1))
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


def test_instantaneous_averages_to_the_sequence_statistic():
    cell = lwsim.make_cell("gru", n_in=2, n_hidden=3, n_out=1)
    p = random_params(cell, 3)
    T, B = 12, 4
    x, y = RNG.standard_normal((T, B, 2)), RNG.standard_normal((T, B, 1))
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
    x, y = RNG.standard_normal((6, 2, 2)), RNG.standard_normal((6, 2, 1))
    with pytest.raises(ValueError, match="statistic"):
        dg.matched_statistic(cell, p, x, y, 1e-2, [1], statistic="pointwise", progress=False)


def test_single_direction_orientation_flips_negative_lags():
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=3)
    p = random_params(cell, 4)
    x, y = RNG.standard_normal((9, 3, 2)), RNG.standard_normal((9, 3, 1))
    kw = dict(seed=2, statistic="instantaneous", progress=False)
    raw = dg.matched_statistic(cell, p, x, y, 1e-2, [1, 2, 3, 5], **kw)
    ori = dg.matched_statistic(cell, p, x, y, 1e-2, [1, 2, 3, 5], orient=True, **kw)
    for a, b, sg in zip(raw.samples, ori.samples, ori.signs[0]):
        assert sg == (-1.0 if a.mean() < 0 else 1.0)
        np.testing.assert_array_equal(b, sg * a)
        assert b.mean() >= 0
