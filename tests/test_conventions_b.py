"""[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way.
"""
import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg
from lwsim import tasks
from lwsim.diagnostics import author_b as ab
from lwsim.diagnostics.anisotropy import sample_triples
from lwsim.figures.studies import b_expansion, b_rates
from lwsim.figures.studies.b_anisotropy import figures as b_s2_figures
from lwsim.figures.studies.b_anisotropy.findings import f8_conventions


def _sig(a):
    return 1.0 / (1.0 + np.exp(-a))


def _setup(name="diaggate", H=4, D=2, T=7, B=3, seed=0):
    cell = lwsim.make_cell(name, D, H, bias=False, readout="last")
    p = cell.init_params(seed=seed, scheme="normal", sigma_w=0.6)
    x = np.random.default_rng(seed + 1).uniform(size=(T, B, D))
    return cell, p, x


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


def _rev(J, b, t, k):
    M = np.eye(J.shape[-1])
    for j in range(k + 1, t + 1):           # J_{k+1} ⋯ J_t: earliest on the left
        M = M @ J[j - 1, b]
    return M


# ----------------------------------------------------------------------------- the keyword
@pytest.mark.parametrize("bad,exc", [("Author", ValueError), ("paper", ValueError), (1, TypeError)])
def test_conventions_validated_everywhere(bad, exc):
    cell, p, x = _setup(H=10, T=5)
    G = np.random.default_rng(0).standard_normal((12, 30))
    for call in (lambda: dg.lr_profile(cell, p, x, progress=False, conventions=bad),
                 lambda: dg.jacobian_anisotropy(cell, p, x, [1], n_samples=2, r=2, n_energy=3,
                                                progress=False, conventions=bad),
                 lambda: dg.gradient_covariance_metrics(G, r=3, conventions=bad),
                 lambda: dg.frechet_check(cell, p, x[:, :1], conventions=bad),
                 lambda: dg.gate_derivative_term(cell, p, x, conventions=bad)):
        with pytest.raises(exc, match="conventions"):
            call()


def test_author_conventions_only_for_the_authors_models():
    cell = lwsim.make_cell("gru", 2, 4, bias=False, readout="last")
    p = cell.init_params(seed=0)
    x = np.zeros((3, 1, 2))
    with pytest.raises(ValueError, match="author"):
        dg.gate_derivative_term(cell, p, x, conventions="author")


# ----------------------------------------------------------------------------- item 1: gate term
@pytest.mark.parametrize("name", ["diaggate", "sharedgate"])
def test_author_jacobians_use_the_state_after_the_step(name):
    cell, p, x = _setup(name)
    Ja = ab.author_jacobians(cell, p, x)
    np.testing.assert_allclose(Ja, _author_J(cell, p, x), atol=1e-13)
    assert np.abs(Ja - np.asarray(cell.jacobians(p, x))).max() > 1e-3     # not the exact J


def test_author_jacobians_of_plain_and_leaky_are_exact():
    for name in ("rnn", "constgate"):
        cell, p, x = _setup(name)
        np.testing.assert_array_equal(ab.author_jacobians(cell, p, x), np.asarray(cell.jacobians(p, x)))


# ----------------------------------------------------------------------------- item 2: order
def test_reversed_products():
    rng = np.random.default_rng(3)
    J = rng.standard_normal((6, 2, 3, 3))
    b, t = np.array([0, 1, 1]), np.array([5, 6, 4])
    W = ab.sampled_products(J, b, t, 3, "reversed")
    for i in range(3):
        np.testing.assert_allclose(W[i], _rev(J, b[i], t[i], t[i] - 3), atol=1e-13)
    E = ab.sampled_products(J, b, t, 3, "exact")
    np.testing.assert_allclose(E[0], J[4, 0] @ J[3, 0] @ J[2, 0], atol=1e-13)
    for tt, Wt in ab.iterate_products(J, 4, "reversed"):
        for ell in range(1, Wt.shape[0] + 1):
            np.testing.assert_allclose(Wt[ell - 1, 1], _rev(J, 1, tt, tt - ell), atol=1e-13)


# ----------------------------------------------------------------------------- items 3–5
def test_power_norm_estimates_the_eigenvalue_not_the_norm():
    M = np.array([[0.5, 10.0], [0.0, 0.4]])                  # σ_max ≈ 10.0, |λ_max| = 0.5
    est = ab.power_norm(M[None], iters=400, rng=0)[0]
    assert est == pytest.approx(0.5, rel=1e-6)
    v = np.random.default_rng(1).standard_normal(2)            # 5 iterations by hand
    v /= np.linalg.norm(v) + 1e-12
    for _ in range(5):
        v = M @ v
        v /= np.linalg.norm(v) + 1e-12
    assert ab.power_norm(M[None], iters=5, rng=1)[0] == pytest.approx(np.linalg.norm(M @ v), rel=1e-14)


def test_lower_median():
    assert ab.lower_median([4.0, 1.0, 3.0, 2.0]) == 2.0       # np.median: 2.5
    assert ab.lower_median([5.0, np.nan, 1.0, 3.0]) == 3.0
    assert ab.lower_median([3.0, 1.0, 2.0]) == 2.0


def test_floored_metrics():
    sv = np.array([2.0, 1.0, 1e-13])
    ai, ce = ab.floored_metrics(sv, r=3, n_energy=3)
    assert ai == pytest.approx(2.0 / (1e-13 + 1e-12), rel=1e-14)
    assert ce == pytest.approx(5.00000000000000001 / (5.0 + 1e-12), rel=1e-14)


# ----------------------------------------------------------------------------- S1 profile
def test_lr_profile_author_assembly(monkeypatch):
    # power iterations replaced by the exact σ_max so the profile can be rebuilt by hand
    monkeypatch.setattr(ab, "power_norm", lambda W, iters, rng: np.linalg.svd(W, compute_uv=False)[..., 0])
    cell, p, x = _setup("diaggate", H=4, T=6, B=2)
    T, B = x.shape[:2]
    prof = dg.lr_profile(cell, p, x, progress=False, conventions="author", min_points=2)
    J = _author_J(cell, p, x)
    g = np.asarray(cell.forward(p, x).gates["s"])
    S = {h: [] for h in range(1, T)}
    P = {h: [] for h in range(1, T)}
    for b in range(B):
        for t in range(2, T + 1):
            for k in range(1, t):
                S[t - k].append(np.linalg.svd(_rev(J, b, t, k), compute_uv=False)[0])
                P[t - k].append(np.prod(g[k - 1:t, b], axis=0).mean())     # Π_{j=k}^{t} g_j
    lmed = lambda v: np.sort(v)[(len(v) - 1) // 2]
    medS = np.array([lmed(S[h]) for h in range(1, T)])
    np.testing.assert_allclose(prof.mu, medS / (medS[0] + 1e-12), rtol=1e-12)
    pbar = np.array([lmed(P[h]) for h in range(1, T)])
    inj = prof.predictors["injection"]
    np.testing.assert_allclose(inj.pbar, pbar, rtol=1e-12)
    np.testing.assert_allclose(inj.mu0, pbar / (pbar[0] + 1e-12), rtol=1e-12)
    np.testing.assert_allclose(inj.mu_fit, (inj.mu0 + 1e-12) ** inj.fit.s, rtol=1e-12)


def test_fit_power_counts_min_points_before_the_trim_for_the_author():
    rng = np.random.default_rng(0)
    P = rng.uniform(0.1, 1.0, 50)
    S = P ** 0.7
    assert np.isnan(dg.fit_power(S, P, min_points=50).s)                 # 48 after the trim
    assert dg.fit_power(S, P, min_points=50, count="valid").s == pytest.approx(0.7, rel=1e-10)
    assert np.isnan(dg.fit_power(S[:49], P[:49], min_points=50, count="valid").s)


# ----------------------------------------------------------------------------- S2
def test_author_sampling():
    bs, ts = sample_triples(2, 6, [2], 100, 0, "author")             # all 8 candidates
    got = sorted(zip(bs[0][bs[0] >= 0], ts[0][ts[0] >= 0]))
    assert got == [(b, t) for b in range(2) for t in range(2, 6)]      # t ≤ T − 1, k = t − 2 ≥ 0
    assert (bs[0] < 0).sum() == 92
    bs, ts = sample_triples(3, 10, [4], 5, 7, "author")
    pick = np.random.RandomState(7).choice(18, size=5, replace=False)  # without replacement
    np.testing.assert_array_equal(bs[0], pick // 6)
    np.testing.assert_array_equal(ts[0], pick % 6 + 4)


def test_jacobian_anisotropy_author():
    cell, p, x = _setup("diaggate", H=6, T=8, B=3)
    ja = dg.jacobian_anisotropy(cell, p, x, [1, 3], n_samples=5, seed=2, r=3, n_energy=5,
                                progress=False, conventions="author", sampling="author")
    J = _author_J(cell, p, x)
    for i, h in enumerate([1, 3]):
        ai = []
        for b, t in ja.samples[i]:
            sv = np.linalg.svd(_rev(J, b, t, t - h), compute_uv=False)
            ai.append(sv[0] / (sv[2] + 1e-12))
        np.testing.assert_allclose(ja.ai[i], ai, rtol=1e-12)
        assert ja.ai_median[i] == pytest.approx(np.median(ai), rel=1e-12)


def test_gradient_covariance_author_floors_and_column_rule():
    rng = np.random.default_rng(0)
    G = rng.standard_normal((8, 6))
    G[:, 5] = 1e-9 * rng.standard_normal(8)      # std ~1e-9 of the others: below lwsim's rtol
    ex = dg.gradient_covariance_metrics(G, r=3)
    au = dg.gradient_covariance_metrics(G, r=3, conventions="author")
    assert ex.n_columns == 5 and au.n_columns == 6       # lwsim drops it, the author's rule keeps it
    s = au.singular_values
    assert au.ai == pytest.approx(s[0] / (s[2] + 1e-12), rel=1e-14, abs=0)
    assert au.ce == pytest.approx((s[:3] ** 2).sum() / ((s ** 2).sum() + 1e-12), rel=1e-14, abs=0)
    # the author's threshold is absolute, 1e−10·√M (≈ 2.83e−10 for M = 8), not relative
    G = rng.standard_normal((8, 6))
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    for j, norm in ((4, 5e-10), (5, 2e-10)):
        v = rng.standard_normal(8)
        v -= v.mean()
        G[:, j] = norm * v / np.linalg.norm(v)
    au = dg.gradient_covariance_metrics(G, r=3, conventions="author")
    assert au.n_columns == 5 and au.n_dropped == 1


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


# ----------------------------------------------------------------------------- tasks
@pytest.mark.parametrize("name", ["movingavg", "delaysum", "narma10"])
def test_author_inputs_zero_extra_channels(name):
    a = tasks.make(name, T=40, D=4, inputs="author")
    l = tasks.make(name, T=40, D=4)
    xa, ya = a.batch(5, 3)
    xl, yl = l.batch(5, 3)
    assert np.all(xa[:, :, 1:] == 0) and np.all(xl[:, :, 1:] > 0)
    np.testing.assert_array_equal(xa[:, :, 0], xl[:, :, 0])
    np.testing.assert_array_equal(ya, yl)


def test_author_ar2():
    task = tasks.make("ar2", T=30, D=3, inputs="author")
    assert task.params["burn_in"] == 0 and tasks.make("ar2", T=30, D=3).params["burn_in"] == 100
    x, y = task.batch(4, 11)
    rng = np.random.default_rng(11)
    e = 0.05 * rng.standard_normal((31, 4))
    z = np.zeros((31, 4))
    z[0] = e[0]
    z[1] = 1.6 * z[0] + e[1]
    for t in range(1, 30):
        z[t + 1] = 1.6 * z[t] - 0.7 * z[t - 1] + e[t + 1]
    np.testing.assert_allclose(y[-1, :, 0], z[30], rtol=1e-12)
    np.testing.assert_array_equal(x, rng.uniform(0.0, 1.0, size=(30, 4, 3)))
    with pytest.raises(ValueError, match="inputs"):
        tasks.make("ar2", inputs="paper")


def test_fixed_batch():
    base = tasks.make("adding", T=10, D=3)
    fb = tasks.fixed_batch(base, 6, seed=5)
    x0, y0 = base.batch(6, 5)
    x1, y1 = fb.batch(6, 1)
    x2, _ = fb.batch(6, 2)
    np.testing.assert_array_equal(y1, y0)
    assert 0 < np.abs(x1 - x0).max() < 1e-5 and np.abs(x1 - x2).max() > 0
    with pytest.raises(ValueError, match="B"):
        fb.batch(5, 1)


# ----------------------------------------------------------------------------- protocol
def test_b_s2_author_protocol(monkeypatch):
    from lwsim.figures.studies.b_anisotropy import experiment as ex
    calls = {}
    real_train, real_ja = ex.train, dg.jacobian_anisotropy

    def spy_train(cell, params, data, **kw):
        calls["train"] = (data, kw)
        return real_train(cell, params, data, **kw)

    def spy_ja(*a, **kw):
        calls.setdefault("ja", []).append(kw)
        return real_ja(*a, **kw)

    monkeypatch.setattr(ex, "train", spy_train)
    monkeypatch.setattr(ex.dg, "jacobian_anisotropy", spy_ja)
    c = dict(T=12, D=3, H=6, batch=4, steps=2, checkpoints=[0, 2], n_examples=12, lags=[1, 2], n_triples=3,
             protocol="author", probe=4, task_inputs="author", conventions=["lwsim", "author"],
             cell="diaggate", optimizer="sgd", lr=1e-2, task="movingavg", seed=0, backend="numpy")
    out = ex.b_s2(c)
    data, kw = calls["train"]
    assert isinstance(data, tasks.FixedBatchTask) and data.params["inputs"] == "author"
    assert kw["steps"] == 3 and kw["checkpoints"] == [1, 3]      # checkpoint it after it + 1 updates
    assert {k["sampling"] for k in calls["ja"]} == {"author"}
    assert [k["seed"] for k in calls["ja"]][::2] == [0, 7919]     # a new draw per checkpoint
    assert "ai_author_2" in out and "gai_author_0" in out


# ----------------------------------------------------------------------------- figures, findings
def _s1_runs(**opts):
    runs = []
    for m in ("sharedgate",):
        for seed in (0, 1):
            r = {"lags": np.array([1, 2]), "predictor_names": ["injection", "retention"]}
            for ck in (0, 5):
                r[f"mu_{ck}"] = np.array([1.0, 0.5])
                for name, s in (("injection", 1.0 + seed), ("retention", 3.0 + seed)):
                    r[f"{name}_s_{ck}"], r[f"{name}_r2_{ck}"] = s, 0.9
                    r[f"{name}_mu0_{ck}"] = np.array([1.0, 0.4])
                    r[f"{name}_mufit_{ck}"] = np.array([1.0, 0.3])
            runs.append(({"cell": m, "checkpoints": [0, 5], "seed": seed, **opts}, r))
    return {"b_s1": runs}


def test_b3_uses_the_gate_product_by_default():
    _, d = b_rates.fig_b3(_s1_runs())
    assert d["sharedgate"]["predictor"] == "injection"
    np.testing.assert_allclose(d["sharedgate"]["s_mean"], [1.5, 1.5])
    _, d = b_rates.fig_b3(_s1_runs(b3_predictor="retention"))
    np.testing.assert_allclose(d["sharedgate"]["s_mean"], [3.5, 3.5])
    with pytest.raises(ValueError, match="b3_predictor"):
        b_rates.fig_b3(_s1_runs(b3_predictor="both"))


def test_b1_predictors_at_every_checkpoint():
    _, d = b_rates.fig_b1(_s1_runs(b1_predictors="all"))
    assert "injection_fit_0" in d["sharedgate"] and "injection_fit_5" in d["sharedgate"]
    _, d = b_rates.fig_b1(_s1_runs())
    assert "injection_fit_0" not in d["sharedgate"] and "injection_fit_5" in d["sharedgate"]


def test_b6_quartile_error_bars():
    runs = []
    for m, o, lr in b_s2_figures.B_S2_MODELS:
        for seed, v in enumerate((1.0, 2.0, 4.0, 10.0, 20.0)):
            runs.append(({"cell": m, "task": "adding", "checkpoints": [0], "seed": seed,
                          "b6_errorbars": "quartiles"}, {"gai_0": v, "gce_0": v, "gpr_0": v}))
    fig, d = b_s2_figures.fig_b6({"b_s2": runs})
    eb = [c for c in fig.axes[0].containers if hasattr(c, "has_yerr")][0]
    seg = eb.lines[2][0].get_segments()[0]
    np.testing.assert_allclose(sorted(seg[:, 1]), [2.0, 10.0])          # q25 … q75, not med ± IQR/2
    assert d["adding"]["rnn"]["AI"]["median"] == 4.0


def test_b7_robust_seed_filter():
    keep = b_expansion.robust_seeds([1.0, 2.0, 3.0, 4.0, 100.0], [2.0, 2.0, np.nan, 2.0, 2.0])
    np.testing.assert_array_equal(keep, [True, True, False, True, False])
    eps = np.array([1e-2, 1e-1, 1.0])
    runs = [({"cell": "diaggate", "seed": s, "b7_aggregate": "robust"},
             {"eps": eps, "E": eps ** 2 * v, "C2": np.full(3, v), "slope": 2.0})
            for s, v in enumerate((1.0, 2.0, 3.0, 4.0, 100.0))]
    _, d = b_expansion.fig_b7({"b_expansion": runs})
    np.testing.assert_allclose(d["diaggate"]["C2_median"], 2.5)          # seed with 100 excluded
    assert list(d["diaggate"]["kept"]) == [True] * 4 + [False]


def test_f8_under_both_conventions():
    b1 = {"sharedgate": {"mu_0": [1, 0.1], "author_mu_0": [1, 0.9]}}
    b4 = {t: {"diaggate": {"median_last": [30.0], "median_last_author": [30.0]},
              "rnn": {"median_last": [220.0], "median_last_author": [20.0]}} for t in ("a", "b", "c")}
    rows = f8_conventions({"B1": b1, "B4": b4})
    assert rows[0].startswith("conventions 'lwsim': inconclusive")
    assert "0/3" in rows[0]
    assert rows[1].startswith("conventions 'author': inconclusive") and "3/3" in rows[1]
    b1["sharedgate"]["author_mu_0"] = [1, 0.2]
    rows = f8_conventions({"B1": b1, "B4": b4})
    assert rows[1].startswith("conventions 'author': reproduced")
    assert "CHANGES" in rows[2]
    assert f8_conventions({"B1": b1}) == []
