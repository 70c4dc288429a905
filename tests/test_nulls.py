"""The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases."""
import numpy as np
import pytest

from lwsim import stats
from lwsim.figures import training
from lwsim.stats.nulls import NULL_NAMES, NULLS, get_null
from lwsim.stats.tailfit import ecf_fit
from theory.planted import planted_check


# ----------------------------------------------------------------------------- author floors
def test_snr_floor_hand_computed():
    # |m̄| N^{1/2} / σ̂ with α̂ = 2 (κ = 2): 1e-13 · 100 / 1e-13 = 100, above ε = 20 ...
    assert stats.snr(1e-13, 2.0, 1e-13, 1e4) == pytest.approx(100.0)
    # ... but the author's compute_snr returns 0 whenever σ̂ ≤ 1e-12
    assert stats.snr(1e-13, 2.0, 1e-13, 1e4, sigma_floor=1e-12) == 0.0
    assert stats.snr(1e-13, 2.0, 1e-12, 1e4, sigma_floor=1e-12) == 0.0          # ≤, not <
    assert stats.snr(1e-11, 2.0, 2e-12, 1e4, sigma_floor=1e-12) == pytest.approx(500.0)
    assert stats.n_star(1e-13, 2.0, 1e-13, eps=20.0) == pytest.approx(400.0)     # (20·1)^2
    assert stats.n_star(1e-13, 2.0, 1e-13, eps=20.0, sigma_floor=1e-12) == np.inf


def test_detection_table_snr_floor_makes_tiny_lags_undetectable():
    rng = np.random.default_rng(0)
    base = rng.standard_normal(2000)
    # lag 1: scale 1 (σ̂ ≈ 0.71 for N(0,1): SαS σ = std/√2); lag 2: the same shape at 1e-13
    rows = np.stack([0.5 + base, 1e-13 * (0.5 + base)])
    grid = [10, 100, 1000]
    lag = stats.detection_table(rows, [1, 2], grid, method="ecf")
    flo = stats.detection_table(rows, [1, 2], grid, method="ecf", floors=("snr",))
    assert lag.n_hat[0] == lag.n_hat[1] == flo.n_hat[0]          # scale-free without the floor
    assert flo.n_hat[1] == np.inf and flo.n_star[1] == np.inf
    assert list(flo.h_n) == [0.0 if n < lag.n_hat[0] else 1.0 for n in grid]
    assert flo.floors == ("snr",) and lag.floors == ()
    auth = stats.detection_table(rows, [1, 2], grid, method="ecf", conventions="author")
    assert auth.floors == ("snr", "ecf") and auth.n_hat[1] == np.inf


def test_ecf_tiny_iqr_author_grid_hand_case():
    """Half the samples at one value (IQR ≤ 1e-12 when spread 1e-11 sits in the tails only):
    lwsim gives up (IQR ≤ 1e-10), the author sets the grid from 1.349·std."""
    x = np.zeros(1000)
    x[:100] = 1e-11 * np.linspace(-3, 3, 100)
    x[100:200] = 1e-11 * np.linspace(-3, 3, 100)
    q25, q75 = np.percentile(x, [25, 75])
    assert q75 - q25 <= 1e-12
    a, s, iqr, ok = ecf_fit(x)
    assert not ok and s == 0.0
    a2, s2, _, ok2 = ecf_fit(x, tiny_iqr="author")
    assert ok2 and s2 > 0
    # IQR in (1e-12, 1e-10]: the author fits on IQR/1.349 like lwsim does above 1e-10
    y = 1e-11 * np.random.default_rng(1).standard_normal(4000)
    ay, sy, _, oky = ecf_fit(y, tiny_iqr="author")
    az, sz, _, okz = ecf_fit(y * 1e3)                       # the same data, scaled above lwsim's floor
    assert oky and okz and ay == pytest.approx(az, abs=1e-9) and sy * 1e3 == pytest.approx(sz, rel=1e-9)
    assert not ecf_fit(y)[3]
    # nothing at all: std = 0 → both give up
    assert not ecf_fit(np.zeros(100), tiny_iqr="author")[3]


def test_floors_argument_checks():
    x = np.random.default_rng(0).standard_normal((2, 100))
    with pytest.raises(ValueError, match="floors"):
        stats.detection_table(x, [1, 2], [10], floors=("sigma",))
    with pytest.raises(TypeError, match="floors"):
        stats.detection_table(x, [1, 2], [10], floors=3)
    with pytest.raises(ValueError, match="sigma_floor"):
        stats.snr(1.0, 2.0, 1.0, 10, sigma_floor=-1.0)


# ----------------------------------------------------------------------------- the two nulls
def test_planted_nulls_differ_in_a_known_way():
    """A transported signal with its own transported noise, ψ(ℓ) = f(ℓ)(c + Z_ℓ), plus a big
    lag-1 term in the whole update: under "lag" the SNR is flat in ℓ (every lag detectable at the
    same N), under "full" N̂(ℓ) = (ε σ_full / (c f(ℓ)))^κ grows as f falls."""
    rng = np.random.default_rng(7)
    n, c = 4000, 0.5
    lags = np.array([1.0, 2.0, 4.0, 8.0])
    f = np.exp(-0.5 * lags)
    z = rng.standard_normal((lags.size, n))
    psi = f[:, None] * (c + z)
    full = 5.0 * rng.standard_normal(n) + psi.sum(axis=0)        # big lag-1 term + every lag's share
    grid = np.geomspace(1, 1e7, 57)
    lag = stats.detection_table(psi, lags, grid, method="ecf", eps=2.0)
    ful = stats.detection_table(psi, lags, grid, method="ecf", eps=2.0, noise="full", noise_samples=full)
    assert np.ptp(np.log(lag.n_hat)) < np.log(grid[1] / grid[0]) * 2.5      # flat up to grid steps
    # the full fit is one (α̂, σ̂) for every lag, of the whole update's samples
    sig_full = stats.fit_alpha(full - full.mean(), method="ecf").sigma
    assert np.all(ful.sigma == sig_full) and np.all(ful.alpha == ful.alpha[0])
    expect = (2.0 * sig_full / np.abs(ful.mean)) ** ful.kappa
    np.testing.assert_allclose(ful.n_star, expect, rtol=1e-12)
    assert np.all(np.diff(ful.n_hat) > 0)                          # N̂ grows with ℓ under "full"
    # N*(ℓ)/N*(1) = (f(1)/f(ℓ))^κ̂ = e^{κ̂ (ℓ − 1)/2}, within the sample means' 3% error (per factor)
    ratio = ful.n_star / ful.n_star[0]
    np.testing.assert_allclose(np.log(ratio), ful.kappa[0] * 0.5 * (lags - 1), atol=ful.kappa[0] * 0.1)
    assert ful.noise == "full" and lag.noise == "lag"


def test_full_null_argument_checks():
    x = np.random.default_rng(0).standard_normal((2, 100))
    with pytest.raises(ValueError, match="noise_samples is required"):
        stats.detection_table(x, [1, 2], [10], noise="full")
    with pytest.raises(ValueError, match="noise_samples is required"):
        stats.detection_table(x, [1, 2], [10], noise_samples=x[0])
    with pytest.raises(ValueError, match="noise must be"):
        stats.detection_table(x, [1, 2], [10], noise="global", noise_samples=x[0])
    with pytest.raises(ValueError, match=r"\(2, n\)"):
        stats.detection_table(x, [1, 2], [10], noise="full", noise_samples=np.ones((3, 100)))


@pytest.mark.parametrize("law", ["exponential", "power", "logarithmic"])
def test_planted_checker_nulls_agree(law):
    """The planted noise does not depend on ℓ: both nulls pass the checker, with windows one
    lag step apart at most."""
    lag = planted_check(law, 1.6, n_lags=30, n_samples=8000, seed=3)
    full = planted_check(law, 1.6, n_lags=30, n_samples=8000, seed=3, noise="full")
    assert lag.passes and full.passes
    assert np.max(np.abs(lag.h_measured - full.h_measured)) <= lag.resolution
    assert full.table.noise == "full" and np.ptp(full.table.sigma) == 0.0


# ----------------------------------------------------------------------------- nested exponential
def test_nested_exponential_verdicts():
    lags = np.arange(1.0, 200.0)
    noise = np.exp(0.02 * np.random.default_rng(0).standard_normal(lags.size))
    e = stats.nested_exponential(lags, np.exp(-0.05 * lags) * noise)
    assert e.exponential_ok and not e.slower and e.lam == pytest.approx(0.05, rel=0.01)
    assert e.beta_ci[0] <= 0 <= e.beta_ci[1] and e.k_ci[0] <= 1 <= e.k_ci[1]
    s = stats.nested_exponential(lags, np.exp(-(lags / 5) ** 0.5) * noise)     # stretched exponential
    assert not s.exponential_ok and s.slower and s.delta_bic > 10 and s.k_ci[1] < 1
    assert s.k == pytest.approx(0.5, abs=0.05)
    p = stats.nested_exponential(lags, lags ** -1.5 * noise)                   # power law: ℓ_c beyond ℓ_max
    assert not p.exponential_ok and p.slower and p.l_c > lags[-1]
    fast = stats.nested_exponential(lags, np.exp(-(lags / 20) ** 2) * noise)  # faster than exponential
    assert not fast.exponential_ok and not fast.slower


def test_nested_exponential_delta_bic_threshold_decides():
    lags = np.arange(1.0, 120.0)
    f = np.exp(-0.04 * lags) * lags ** -0.05 * np.exp(0.03 * np.random.default_rng(2).standard_normal(lags.size))
    t = stats.nested_exponential(lags, f)
    strict = stats.nested_exponential(lags, f, delta_bic=abs(t.delta_bic) + 1)
    assert strict.exponential_ok            # ΔBIC below the threshold: not rejected whatever the intervals
    assert strict.delta_bic == t.delta_bic


# ----------------------------------------------------------------------------- findings per null
def _runs():
    """Two seeds of one cell, with the "full" keys and a partial ablation on one seed only."""
    base = dict(lags=np.array([1.0, 2.0]), n_grid=np.array([10.0, 100.0, 1000.0]), f=np.array([1.0, 0.5]))
    out = []
    for seed, (h_lag, h_full) in enumerate((([1.0, 2.0, 2.0], [0.0, 1.0, 2.0]), ([2.0, 2.0, 2.0], [0.0, 0.0, 1.0]))):
        r = dict(base, h_n=np.array(h_lag), h_n_full=np.array(h_full))
        for k in ("mean", "alpha_hat", "sigma_hat", "kappa_hat", "n_hat", "n_star", "reliable", "master"):
            r[k], r[f"{k}_full"] = f"{k}-lag", f"{k}-full"
        if seed == 0:
            r["h_n_snr"] = np.array(h_lag)
        out.append(({"cell": "gru", "seed": seed, "optimizer": "adamw"}, r))
    return {"a_main": out, "b_s1": ["untouched"]}


def test_null_view_swaps_only_the_detection_keys():
    from lwsim.figures.studies.main.nulls import null_view, variants
    R = _runs()
    assert variants(R) == ["lag", "full"]            # "snr" is missing in one run: not a variant
    assert null_view(R, "lag") is R
    V = null_view(R, "full")
    assert V["b_s1"] is R["b_s1"]
    (_, r0), (_, r1) = V["a_main"]
    assert list(r0["h_n"]) == [0.0, 1.0, 2.0] and r0["mean"] == "mean-full" and r0["master"] == "master-full"
    assert list(r0["f"]) == [1.0, 0.5]                # the envelope is shared by every null
    assert list(R["a_main"][0][1]["h_n"]) == [1.0, 2.0, 2.0]      # the input is not modified
    with pytest.raises(KeyError, match="snr"):
        null_view(R, "snr")


def test_h_last_and_growth_tables_hand_computed():
    from lwsim.figures.studies.main.nulls import growth_table, h_last_table
    R = _runs()
    assert h_last_table(R) == {"lag": {"gru": [2.0, 2.0]}, "full": {"gru": [2.0, 1.0]}}
    # growth = last − middle of the N grid: lag 2−2, 2−2; full 2−1, 1−0
    assert growth_table(R) == {"lag": {"gru": [0.0, 0.0]}, "full": {"gru": [1.0, 1.0]}}


def test_findings_provenance_line():
    from lwsim.figures.findings import provenance_lines
    lines = provenance_lines("quick", "python -m lwsim.figures --preset quick --out f --cache r",
                             {"b": [1, 2], "a": [1]})
    assert lines[0].startswith("Made by `python -m lwsim.figures --preset quick --out f --cache r` from 3 cached "
                               "runs (a 1, b 2)")
    assert provenance_lines("quick", None, {})[0].startswith("Generated by")


def test_nested_exponential_ignores_intervals_on_the_box_edge(monkeypatch):
    """A stretched exponential with k = 0.1 drives the tempered fit onto its k = 0.2 edge; there the
    Gauss–Newton intervals are not evidence (here made to cover everything): ΔBIC alone decides."""
    import lwsim.stats.decay as decay
    lags = np.arange(1.0, 300.0)
    f = np.exp(-3 * lags ** 0.1) * np.exp(0.01 * np.random.default_rng(1).standard_normal(lags.size))
    monkeypatch.setattr(decay, "_tempered_cov", lambda lg, y, p: np.full(4, 1e6))
    t = stats.nested_exponential(lags, f)
    assert t.at_edge and t.k == pytest.approx(0.2) and t.delta_bic > 10
    assert t.beta_ci[0] <= 0 <= t.beta_ci[1] and t.k_ci[0] <= 1 <= t.k_ci[1]
    assert not t.exponential_ok and t.slower                # k̂ = 0.2 < 1 read from the point estimate


# ---- the declarations (lwsim/stats/nulls.py)
def test_the_null_declarations():
    assert NULL_NAMES == ("lag", "full", "snr", "ecf", "floors", "f32", "author")
    assert [(n.noise, n.float32, n.floors) for n in NULLS.values()] == [
        ("lag", False, ()), ("full", False, ()), ("lag", False, ("snr",)), ("lag", False, ("ecf",)),
        ("lag", False, ("snr", "ecf")), ("lag", True, ()), ("lag", True, ("snr", "ecf"))]
    assert get_null("author") is NULLS["author"] and "§3.3.2" in NULLS["author"].section
    # the figures' ablations are these declarations, in this order
    assert training.FLOOR_ABLATIONS == {n: (NULLS[n].float32, NULLS[n].floors)
                                      for n in ("snr", "ecf", "floors", "f32", "author")}
