"""Tests of lwsim/conventions.py (laid out like the code: docs/testing.md).

Conventions as data (lwsim.conventions, docs/fidelity.md "Conventions as data").

Every function with a ``conventions=`` keyword gives the same bits for the name ("lwsim",
"author") and the object (LWSIM, AUTHOR); bad keywords raise as before; a mixed object
(dataclasses.replace(AUTHOR, field=lwsim's choice)) changes exactly what its field governs; the
objects are frozen, hashable and picklable.

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ.

[B]'s quantities under conventions="author" and the author's protocol options (docs/fidelity.md).

Every expectation is rebuilt here from the author's formulas with explicit loops (gate term from
the state after the step, products J_{k+1} ⋯ J_t, power iterations, lower medians, floors), not by
calling the code under test a second way."""


from __future__ import annotations

import dataclasses
import pickle
import warnings

import numpy as np
import pytest

import lwsim
from lwsim import diagnostics as dg, stats, window
from lwsim.analyze import core
from lwsim.conventions import AUTHOR, CHOICES, Conventions, LWSIM, as_conventions, check_conventions
from lwsim.diagnostics.gamma import gate_factors
from lwsim.diagnostics.rates import source_rates
from lwsim.stats import mcculloch, tailfit
from helpers import _params, _setup


T, B, D, H = 10, 3, 3, 4


def _model(name="diaggate", b=B, t=T, **opts):
    cell = lwsim.make_cell(name, D, H, 1, layernorm=True, **opts)
    rng = np.random.default_rng(1)
    return cell, _params(cell), rng.standard_normal((t, b, D)), rng.standard_normal((t, b, 1))


def _bmodel(b=6):
    """[B]'s multi-gate model (the author's [B] functions exist for the author's models only)."""
    cell = lwsim.make_cell("diaggate", 2, 4, bias=False, readout="last")
    p = cell.init_params(seed=0, scheme="normal", sigma_w=0.6)
    rng = np.random.default_rng(1)
    return cell, p, rng.uniform(size=(7, b, 2)), rng.standard_normal((7, b, 1))


def _samples(n=600, seed=0):
    return 100.0 * np.random.default_rng(seed).standard_normal(n)      # ECF slope > 2: α̂ clipped


def _quantiles():
    return np.quantile(np.sort(_samples()), mcculloch.PROBS)


def _decay_data():
    lags = np.arange(1, 25.0)
    return lags, 3.0 * lags ** -0.7 * np.exp(-(lags / 9.0) ** 0.8)


def _envelope(conv, **kw):
    cell, p, x, _ = _model()
    return dg.envelope(cell, p, x, 0.1, 4, progress=False, engine="numpy", conventions=conv, **kw)


def _matched(conv, **kw):
    cell, p, x, y = _model()
    return dg.matched_statistic(cell, p, x, y, 0.1, 4, n_directions=2, progress=False, engine="numpy",
                                conventions=conv, **kw)


def _analyze(conv):
    cell, p, x, y = _model(b=20, t=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return core.analyze(cell, p, x, y, conventions=conv, backend="numpy", progress=False, exact=False,
                            n_grid=[10, 20])


def _detect(conv):
    cell, p, x, y = _model()
    ms = dg.matched_statistic(cell, p, x, y, 0.1, [1, 2], progress=False, full_noise=True)
    samples = np.random.default_rng(3).standard_normal((2, 40)) + ms.samples.mean(axis=1)[:, None]
    ms = dataclasses.replace(ms, samples=samples)
    return window.detect(ms, [1, 2], [10, 40], ("lag",), n_boot=20, conventions=conv)


# name → f(conventions): every function (and method) that takes the keyword, on small inputs
CASES = {
    "ecf_fit": lambda c: tailfit.ecf_fit(_samples(), conventions=c),
    "fit_alpha": lambda c: stats.fit_alpha(_samples(300), n_boot=20, conventions=c),
    "fit_alpha_mcculloch": lambda c: stats.fit_alpha(_samples(300), method="mcculloch", n_boot=20, conventions=c),
    "detection_table": lambda c: stats.detection_table(
        np.random.default_rng(2).standard_normal((3, 60)) + 0.3, [1, 2, 3], [10, 100], n_boot=20, conventions=c),
    "iqr_theory": lambda c: mcculloch.iqr_theory(np.array([1.003, 1.5, 1.9]), c),
    "alpha_from_quantiles": lambda c: mcculloch.alpha_from_quantiles(_quantiles(), 1.0, c),
    "mcculloch_point": lambda c: mcculloch.mcculloch_point(np.sort(_samples()), 1.0, c),
    "bootstrap_alphas": lambda c: mcculloch.bootstrap_alphas(np.sort(_samples()), 10, np.random.default_rng(4), 1.0, c),
    "fit_decay": lambda c: stats.fit_decay(*_decay_data(), conventions=c),
    "gate_factors": lambda c: gate_factors(*_model()[:3], conventions=c),
    "gate_factors_gru": lambda c: gate_factors(*_model("gru")[:3], conventions=c),
    "gate_factors_lstm": lambda c: gate_factors(*_model("lstm")[:3], conventions=c),
    "transport_factors": lambda c: dg.transport_factors(*_model("gru")[:3], 4, conventions=c),
    "source_rates": lambda c: source_rates(np.full((H, H), 0.1), np.random.default_rng(5).standard_normal((T + 1, B, H)),
                                           conventions=c),
    "envelope": _envelope,
    "envelope_gru": lambda c: dg.envelope(*_model("gru")[:3], 0.1, 4, progress=False, conventions=c),
    "matched_statistic": lambda c: _matched(c, orient=True),
    "matched_lstm": lambda c: dg.matched_statistic(*_model("lstm"), 0.1, 3, progress=False, conventions=c),
    "matched_instantaneous": lambda c: _matched(c, orient=True, statistic="instantaneous"),
    "envelope_and_matched": lambda c: dg.envelope_and_matched(*_model(), 0.1, 3, progress=False, conventions=c),
    "lr_profile": lambda c: dg.lr_profile(*_bmodel()[:3], min_points=5, progress=False, conventions=c),
    "jacobian_anisotropy": lambda c: dg.jacobian_anisotropy(*_bmodel()[:3], [1, 3], n_samples=5, r=2, n_energy=3,
                                                            progress=False, conventions=c),
    "gradient_covariance_metrics": lambda c: dg.gradient_covariance_metrics(
        np.random.default_rng(6).standard_normal((8, 12)), r=3, conventions=c),
    "gradient_anisotropy": lambda c: dg.gradient_anisotropy(*_bmodel(), r=3, progress=False, conventions=c),
    "gate_derivative_term": lambda c: dg.expansion.gate_derivative_term(*_bmodel()[:3], conventions=c),
    "gate_split": lambda c: dg.gate_split(*_bmodel()[:3], conventions=c),
    "frechet_check": lambda c: dg.frechet_check(*_bmodel()[:3], conventions=c),
    "analyze": _analyze,
    "window.detect": _detect,
}


def same_bits(a, b, where="result"):
    """Assert that a and b hold the same bits, through dataclasses, dicts, sequences and arrays."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            same_bits(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            same_bits(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: lengths {len(a)} vs {len(b)}"
        for i, (u, v) in enumerate(zip(a, b)):
            same_bits(u, v, f"{where}[{i}]")
    elif isinstance(a, (np.ndarray, np.generic, float)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype == object:
            same_bits(a.tolist(), b.tolist(), where)
        else:
            assert a.tobytes() == b.tobytes(), f"{where}: the bits differ"
    elif hasattr(a, "__dict__") and not callable(a):            # e.g. a cell's Trace
        same_bits(vars(a), vars(b), where)
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


T_conventions_author, B_conventions_author, D_conventions_author, H_conventions_author = 12, 3, 3, 5


def _cell(name, ln=True):
    opts = {"layernorm": ln}
    if name == "constgate":
        opts["s"] = 0.3
    return lwsim.make_cell(name, D_conventions_author, H_conventions_author, 1, **opts)


def _x(seed=1, b=B_conventions_author, t=T_conventions_author):
    return np.random.default_rng(seed).standard_normal((t, b, D_conventions_author))


# ---- the name and the object give the same bits ---------------------------------------------------
@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("which", ["lwsim", "author"])
def test_name_and_object_give_the_same_bits(name, which):
    fn = CASES[name]
    same_bits(fn(which), fn({"lwsim": LWSIM, "author": AUTHOR}[which]), name)


@pytest.mark.parametrize("name", ["ecf_fit", "fit_decay", "envelope", "matched_statistic", "lr_profile",
                                  "gradient_covariance_metrics", "frechet_check"])
def test_the_two_conventions_differ_on_these_inputs(name):
    """The bit tests above compare two different results (not lwsim's twice)."""
    with pytest.raises(AssertionError):
        same_bits(CASES[name]("lwsim"), CASES[name]("author"))


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
        gate_factors(lwsim.make_cell("gru", D_conventions_author, H_conventions_author, 1, convention="torch"),
                     _params(lwsim.make_cell("gru", D_conventions_author, H_conventions_author, 1, convention="torch")), x, conventions="author")


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


# ----------------------------------------------------------------------------------------------
# Conventions
# ----------------------------------------------------------------------------------------------


def test_conventions_fields_are_validated():
    with pytest.raises(ValueError, match=r"\bConventions\.ecf_sigma\b"):
        Conventions(ecf_sigma="author")
    with pytest.raises(ValueError, match=r"\bConventions\.median\b"):
        dataclasses.replace(AUTHOR, median=None)
    with pytest.raises(TypeError, match=r"\bConventions.metric_floors\b"):
        Conventions(metric_floors="yes")
    with pytest.raises(TypeError, match=r"\bConventions\.detection_floors\b"):
        Conventions(detection_floors="snr")
    with pytest.raises(ValueError, match=r"\bConventions\.detection_floors\b.*\['x'\]"):
        Conventions(detection_floors=("snr", "x"))
    assert Conventions(detection_floors=["ecf", "snr"]).detection_floors == ("snr", "ecf")   # canonical


def test_a_mix_the_code_cannot_honour_says_so():
    cell, p, x, _ = _model("gru")
    mixed = dataclasses.replace(LWSIM, gru_gamma0="three_terms")
    with pytest.raises(ValueError, match=r"\bConventions\.gru_gamma0\b.*\benvelope_sources\b"):
        dg.envelope(cell, p, x, 0.1, 3, progress=False, conventions=mixed)
    torch = lwsim.make_cell("gru", D, H, 1, convention="torch")
    with pytest.raises(ValueError, match="needs the GRU convention 'cho'"):
        gate_factors(torch, _params(torch), x, conventions=mixed)
    with pytest.raises(ValueError, match="alpha_range must be 'stable'"):
        stats.fit_alpha(_samples(), alpha_range="open", conventions=dataclasses.replace(LWSIM, mcculloch_table="linear_201"))
    stats.fit_alpha(_samples(), alpha_range="open", n_boot=20,            # the ECF σ̂ alone has no such limit
                    conventions=dataclasses.replace(LWSIM, ecf_sigma="unclipped_intercept"))


# ---- one approximation alone (ablations) -----------------------------------------------------------
def test_ablate_the_ecf_sigma():
    """AUTHOR with lwsim's ECF σ̂: ecf_fit is lwsim's, the McCulloch fit still the author's."""
    mixed = dataclasses.replace(AUTHOR, ecf_sigma="refit")
    x = _samples()
    same_bits(tailfit.ecf_fit(x, conventions=mixed), tailfit.ecf_fit(x, conventions=LWSIM))
    assert tailfit.ecf_fit(x, conventions=AUTHOR)[1] != tailfit.ecf_fit(x, conventions=LWSIM)[1]
    xs = np.sort(x)
    same_bits(mcculloch.mcculloch_point(xs, 1.0, mixed), mcculloch.mcculloch_point(xs, 1.0, AUTHOR))
    assert mcculloch.mcculloch_point(xs, 1.0, AUTHOR) != mcculloch.mcculloch_point(xs, 1.0, LWSIM)


def test_ablate_the_b_floors():
    """AUTHOR without its [B] floors: the gradient-covariance metrics are lwsim's, the Fréchet check
    (no floor in it) still the author's."""
    mixed = dataclasses.replace(AUTHOR, metric_floors=False)
    f = CASES["gradient_covariance_metrics"]
    same_bits(f(mixed), f(LWSIM))
    with pytest.raises(AssertionError):
        same_bits(f(AUTHOR), f(LWSIM))
    g = CASES["frechet_check"]
    same_bits(g(mixed), g(AUTHOR))
    with pytest.raises(AssertionError):
        same_bits(g(AUTHOR), g(LWSIM))


def test_ablate_the_neuron_average():
    """AUTHOR summing over the neurons: the envelope is the author's with neurons="sum" (f is H times
    the average), the matched statistic the author's."""
    mixed = dataclasses.replace(AUTHOR, envelope_neurons="sum")
    env, env_a = _envelope(mixed), _envelope(AUTHOR)
    same_bits(dataclasses.replace(env, conventions="x"),
              dataclasses.replace(_envelope(AUTHOR, neurons="sum"), conventions="x"))
    np.testing.assert_allclose(env.f, H * env_a.f, rtol=1e-14)
    assert env.log_mass.tobytes() != env_a.log_mass.tobytes()          # the final launcher's log-mass
    same_bits(_matched(mixed, orient=True), _matched(AUTHOR, orient=True))


def test_ablate_the_tempered_law():
    """AUTHOR with lwsim's tempered law: fit_decay is lwsim's, the ECF the author's."""
    mixed = dataclasses.replace(AUTHOR, tempered_law="unit_coefficient")
    same_bits(stats.fit_decay(*_decay_data(), conventions=mixed), stats.fit_decay(*_decay_data(), conventions=LWSIM))
    same_bits(tailfit.ecf_fit(_samples(), conventions=mixed), tailfit.ecf_fit(_samples(), conventions=AUTHOR))


def test_gru_three_term_gamma0_alone():
    """lwsim's r_t with the author's three-term Γ⁰: r from the exact diagonal, the reset gate the author's."""
    cell, p, x, _ = _model("gru")
    mixed = dataclasses.replace(LWSIM, gru_gamma0="three_terms")
    fm, fl, fa = (gate_factors(cell, p, x, conventions=c) for c in (mixed, LWSIM, AUTHOR))
    same_bits((fm.d, fm.r), (fl.d, fl.r))
    assert fl.reset is None and fm.reset.tobytes() == fa.reset.tobytes()


# ---- the objects ----------------------------------------------------------------------------------
def test_conventions_are_frozen_hashable_and_picklable():
    mixed = dataclasses.replace(AUTHOR, product_order="exact")
    with pytest.raises(dataclasses.FrozenInstanceError):
        AUTHOR.median = "median"
    assert len({LWSIM, AUTHOR, mixed, Conventions(), dataclasses.replace(mixed)}) == 3
    assert hash(Conventions()) == hash(LWSIM)
    for c in (LWSIM, AUTHOR, mixed):
        back = pickle.loads(pickle.dumps(c))
        assert back == c and hash(back) == hash(c) and back.name == c.name


# ----------------------------------------------------------------------------------------------
# as_conventions
# ----------------------------------------------------------------------------------------------


def test_as_conventions_maps_names_to_the_instances():
    assert as_conventions("lwsim") is LWSIM and as_conventions("author") is AUTHOR
    assert as_conventions(AUTHOR) is AUTHOR and LWSIM == Conventions()
    mixed = dataclasses.replace(AUTHOR, median="median")
    assert as_conventions(mixed) is mixed and check_conventions(mixed) is mixed
    assert check_conventions("author") == "author"
    assert (LWSIM.name, AUTHOR.name) == ("lwsim", "author")
    assert mixed.name == ("custom(" + ", ".join(f"{f}={getattr(AUTHOR, f)!r}" for f in
                                               [f.name for f in dataclasses.fields(AUTHOR)] if f != "median") + ")")
    # every field differs between the two instances: AUTHOR switches every approximation on
    for f in dataclasses.fields(Conventions):
        assert getattr(LWSIM, f.name) != getattr(AUTHOR, f.name), f.name
    for f, choices in CHOICES.items():
        assert (getattr(LWSIM, f), getattr(AUTHOR, f)) == choices, f


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_bad_keyword_errors(name):
    with pytest.raises(ValueError, match=r"\bconventions\b.*'Author'"):
        CASES[name]("Author")
    with pytest.raises(TypeError, match=r"\bconventions\b"):
        CASES[name](dataclasses.asdict(AUTHOR))
