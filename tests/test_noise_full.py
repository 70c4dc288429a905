"""The "full" null (docs/statistics.md §3.3): the whole per-sequence update ζ along each direction,
held to independent computations — BPTT on single sequences, and the exact lag decomposition."""
import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim import stats
from cellcases import random_params

RNG = np.random.default_rng(24)
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
