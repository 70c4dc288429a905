"""Mutation tests for theory/derivations.py (issue 32, docs/testing.md): the compact-Jacobian pieces on
hand-computed cases (every cell at H = D = 1, the LN rnn at H = 2) and against SymPy's derivative of
each update map, the checker's sensitivity, the page's format on hand-made items, and each section's
derived results against the committed, reviewed docs/derivations.md (one builder per test and without
the slow compact-Jacobian comparison, so that a mutant in one builder runs only that builder's test)."""
from __future__ import annotations

import math
import pathlib
import re

import numpy as np
import pytest
import sympy as sp

from theory import derivations as D

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _num(m):
    return np.array(sp.Matrix(m).evalf(), dtype=float)


def test_derivative_helpers_by_hand():
    a, b = sp.symbols("a b")
    assert D._dsig(sp.Matrix([a, b])) == sp.Matrix([a * (1 - a), b * (1 - b)])
    assert D._dsig(sp.Matrix([sp.Rational(1, 4)])) == sp.Matrix([sp.Rational(3, 16)])
    assert D._dtanh(sp.Matrix([a, sp.Rational(1, 2)])) == sp.Matrix([1 - a**2, sp.Rational(3, 4)])
    assert D._diag(sp.Matrix([a, b])) == sp.Matrix([[a, 0], [0, b]])


def test_ln_jacobian_by_hand():
    # a = (1, −1): mean 0, var 1, σ_a = √(1 + 10⁻⁵), â = a/σ_a; J = diag(γ)(I − 11ᵀ/2 − ââᵀ/2)/σ_a
    J = _num(D._ln_jacobian(sp.Matrix([1, -1]), sp.Matrix([2, 3])))
    sd2 = 1 + 1e-5
    d = (0.5 - 0.5 / sd2) / math.sqrt(sd2)                   # diagonal of the bracket / σ_a
    np.testing.assert_allclose(J, [[2 * d, -2 * d], [-3 * d, 3 * d]], rtol=1e-9)  # d: cancellation
    # a = (3, 1, 2): mean 2, var 2/3
    J = _num(D._ln_jacobian(sp.Matrix([3, 1, 2]), sp.Matrix([1, 1, 1])))
    sd = math.sqrt(2 / 3 + 1e-5)
    ah = np.array([1.0, -1.0, 0.0]) / sd
    np.testing.assert_allclose(J, (np.eye(3) - 1 / 3 - np.outer(ah, ah) / 3) / sd, rtol=1e-12)


def test_configs_by_hand():
    assert list(D._configs()) == [
        ("rnn", "cho", False), ("rnn", "cho", True), ("constgate", "cho", False),
        ("constgate", "cho", True), ("sharedgate", "cho", False), ("sharedgate", "cho", True),
        ("diaggate", "cho", False), ("diaggate", "cho", True), ("gru", "cho", False),
        ("gru", "cho", True), ("gru", "torch", False), ("lstm", "cho", False), ("lstm", "cho", True)]


def test_compact_jacobian_rnn_and_constgate_by_hand():
    """H = D = 1 without bias-free tricks: rnn J = tanh′(a) W_h, constant gate (1 − s) + s·J."""
    m = D._cells.update_map("rnn", H=1, D=1)
    P = m.syms.params
    pt = {m.syms.h[0]: 0.3, m.syms.x[0]: -0.2, P["W_h"][0, 0]: 0.7, P["W_x"][0, 0]: 0.4,
          P["b_x"][0]: 0.1}
    a = 0.7 * 0.3 + 0.4 * -0.2 + 0.1
    rnn = 0.7 * (1 - math.tanh(a) ** 2)
    assert _num(D.compact_jacobian("rnn", H=1, D=1).xreplace(pt))[0, 0] == pytest.approx(rnn, rel=1e-12)
    Jc = D.compact_jacobian("constgate", H=1, D=1, s=0.25)
    assert _num(Jc.xreplace(pt))[0, 0] == pytest.approx(0.75 + 0.25 * rnn, rel=1e-12)
    # the defaults: s = 0.05, D = 1, H = 2, no LayerNorm
    Jd = D.compact_jacobian("constgate", H=1)
    assert _num(Jd.xreplace(pt))[0, 0] == pytest.approx(0.95 + 0.05 * rnn, rel=1e-12)
    assert {str(v) for v in Jd.free_symbols} == {"h[0]", "x[0]", "W_h[0,0]", "W_x[0,0]", "b_x[0]"}
    assert D.compact_jacobian("rnn").shape == (2, 2)          # H = 2 by default
    assert D.compact_jacobian("lstm", H=1).shape == (2, 2)    # state (h, c)
    assert D.compact_jacobian("gru", "torch", H=3).shape == (3, 3)
    assert any(str(v).startswith("U_z") for v in D.compact_jacobian("gru", H=1).free_symbols)  # Cho
    # D enters through the input weights
    assert any("W_x[0,1]" in str(v) for v in D.compact_jacobian("rnn", H=1, D=2).free_symbols)


def _sig(v):
    return 1 / (1 + math.exp(-v))


def _at(J, values):
    """J at the point {symbol name: value} (every free symbol named), as a float array."""
    assert {str(v) for v in J.free_symbols} <= set(values)
    return _num(J.xreplace({v: values[str(v)] for v in J.free_symbols}))


# one scalar point for every H = D = 1 cell: each symbol its own value, so that a swapped name shows
_P1 = {"h[0]": 0.3, "c[0]": -0.6, "x[0]": -0.2, "W_x[0,0]": 0.4, "b_x[0]": 0.1, "W_h[0,0]": 0.7,
       "w_s[0]": 0.8, "b_s[0]": -0.3, "u_s[0]": 0.9, "W_s[0,0]": -0.7, "U_s[0,0]": 1.1,
       "W_z[0,0]": 0.5, "W_r[0,0]": -0.4, "W_g[0,0]": 0.6, "U_z[0,0]": 1.2, "U_r[0,0]": -0.8,
       "U_g[0,0]": 0.9, "b_z[0]": 0.2, "b_r[0]": -0.1, "b_g[0]": 0.3,
       "W_ir[0,0]": 0.5, "W_iz[0,0]": -0.6, "W_in[0,0]": 0.7, "W_hr[0,0]": 1.3, "W_hz[0,0]": -0.9,
       "W_hn[0,0]": 0.8, "b_ir[0]": 0.1, "b_iz[0]": 0.2, "b_in[0]": -0.3, "b_hr[0]": 0.4,
       "b_hz[0]": -0.5, "b_hn[0]": 0.6,
       "W_i[0,0]": 0.3, "W_f[0,0]": -0.5, "W_o[0,0]": 0.9, "U_i[0,0]": 1.1, "U_f[0,0]": -0.7,
       "U_o[0,0]": 0.4, "b_i[0]": -0.2, "b_f[0]": 0.5, "b_o[0]": 0.1}


def test_compact_jacobian_gated_cells_by_hand():
    """H = D = 1, the chain rule by hand at _P1 (h = 0.3, x = −0.2): each gated cell's scalar
    Jacobian (the LSTM's 2×2 in the state (h, c))."""
    p = _P1
    h, x, c = p["h[0]"], p["x[0]"], p["c[0]"]
    # a = 0.4·(−0.2) + 0.1 + 0.7·0.3 = 0.23
    cand = math.tanh(p["W_x[0,0]"] * x + p["b_x[0]"] + p["W_h[0,0]"] * h)
    core = (1 - cand**2) * p["W_h[0,0]"]
    # shared gate: s = σ(w_s x + b_s + u_s h); J = (1 − s) + s core + s(1 − s)(cand − h) u_s
    st = _sig(p["w_s[0]"] * x + p["b_s[0]"] + p["u_s[0]"] * h)
    want = (1 - st) + st * core + st * (1 - st) * (cand - h) * p["u_s[0]"]
    assert _at(D.compact_jacobian("sharedgate", H=1), p)[0, 0] == pytest.approx(want, rel=1e-12)
    # diagonal gate: the same with W_s, U_s
    st = _sig(p["W_s[0,0]"] * x + p["b_s[0]"] + p["U_s[0,0]"] * h)
    want = (1 - st) + st * core + (cand - h) * st * (1 - st) * p["U_s[0,0]"]
    assert _at(D.compact_jacobian("diaggate", H=1), p)[0, 0] == pytest.approx(want, rel=1e-12)
    # Cho's GRU: h' = (1 − z) h + z g, g = tanh(W_g x + b_g + U_g r h)
    z = _sig(p["W_z[0,0]"] * x + p["b_z[0]"] + p["U_z[0,0]"] * h)
    r = _sig(p["W_r[0,0]"] * x + p["b_r[0]"] + p["U_r[0,0]"] * h)
    g = math.tanh(p["W_g[0,0]"] * x + p["b_g[0]"] + p["U_g[0,0]"] * r * h)
    want = ((1 - z) + (g - h) * z * (1 - z) * p["U_z[0,0]"]
            + z * (1 - g**2) * p["U_g[0,0]"] * (r + h * r * (1 - r) * p["U_r[0,0]"]))
    assert _at(D.compact_jacobian("gru", "cho", H=1), p)[0, 0] == pytest.approx(want, rel=1e-12)
    # torch's GRU: h' = (1 − z) n + z h, n = tanh(W_in x + b_in + r (W_hn h + b_hn))
    r = _sig(p["W_ir[0,0]"] * x + p["b_ir[0]"] + p["W_hr[0,0]"] * h + p["b_hr[0]"])
    z = _sig(p["W_iz[0,0]"] * x + p["b_iz[0]"] + p["W_hz[0,0]"] * h + p["b_hz[0]"])
    hn = p["W_hn[0,0]"] * h + p["b_hn[0]"]
    n = math.tanh(p["W_in[0,0]"] * x + p["b_in[0]"] + r * hn)
    want = (z + (h - n) * z * (1 - z) * p["W_hz[0,0]"]
            + (1 - z) * (1 - n**2) * (r * p["W_hn[0,0]"] + hn * r * (1 - r) * p["W_hr[0,0]"]))
    assert _at(D.compact_jacobian("gru", "torch", H=1), p)[0, 0] == pytest.approx(want, rel=1e-12)
    # LSTM: c' = f c + i g, h' = o tanh(c'); state (h, c)
    i = _sig(p["W_i[0,0]"] * x + p["b_i[0]"] + p["U_i[0,0]"] * h)
    f = _sig(p["W_f[0,0]"] * x + p["b_f[0]"] + p["U_f[0,0]"] * h)
    o = _sig(p["W_o[0,0]"] * x + p["b_o[0]"] + p["U_o[0,0]"] * h)
    g = math.tanh(p["W_g[0,0]"] * x + p["b_g[0]"] + p["U_g[0,0]"] * h)
    tc = math.tanh(f * c + i * g)
    e = o * (1 - tc**2)
    dc_dh = (c * f * (1 - f) * p["U_f[0,0]"] + g * i * (1 - i) * p["U_i[0,0]"]
             + i * (1 - g**2) * p["U_g[0,0]"])
    want = [[tc * o * (1 - o) * p["U_o[0,0]"] + e * dc_dh, e * f], [dc_dh, f]]
    np.testing.assert_allclose(_at(D.compact_jacobian("lstm", H=1), p), want, rtol=1e-12)


def test_compact_jacobian_layernorm_rnn_by_hand():
    """rnn with LayerNorm, H = 2, D = 1, W_h = I, W_x = 0, b_x = 0, h = (0.5, −0.5): a = h has mean
    0 and variance 1/4, σ_a = √(1/4 + 10⁻⁵), â = a/σ_a; LN(a) = γ â + β with β = 0; J_LN =
    diag(γ)(I − 11ᵀ/2 − ââᵀ/2)/σ_a, whose bracket is [[d, −d], [−d, d]], d = 1/2 − (1/4)/(2σ_a²)."""
    J = D.compact_jacobian("rnn", layernorm=True)
    sd2 = 0.25 + 1e-5
    d = 0.5 - 0.25 / (2 * sd2)
    gam = (1.5, 0.8)
    pt = {"h[0]": 0.5, "h[1]": -0.5, "x[0]": 0.3, "W_x[0,0]": 0.0, "W_x[1,0]": 0.0, "b_x[0]": 0.0,
          "b_x[1]": 0.0, "W_h[0,0]": 1.0, "W_h[0,1]": 0.0, "W_h[1,0]": 0.0, "W_h[1,1]": 1.0,
          "ln_gamma[0]": gam[0], "ln_gamma[1]": gam[1], "ln_beta[0]": 0.0, "ln_beta[1]": 0.0}
    sd = math.sqrt(sd2)
    t = [1 - math.tanh(gam[0] * 0.5 / sd) ** 2, 1 - math.tanh(-gam[1] * 0.5 / sd) ** 2]   # tanh′ of γ â
    want = np.array([[t[0] * gam[0] * d, -t[0] * gam[0] * d], [-t[1] * gam[1] * d, t[1] * gam[1] * d]]) / sd
    np.testing.assert_allclose(_at(J, pt), want, rtol=1e-9)


@pytest.mark.parametrize("cell, conv, ln", list(D._configs()))
def test_compact_jacobian_is_the_derivative(cell, conv, ln):
    """The property the page states: each compact form equals SymPy's derivative of the update map
    (theory.cells.jacobian), here at H = 2 and, without LayerNorm, D = 2 (the page uses D = 1; the
    LN LSTM's derivative at D = 2 takes 16 s), s = 0.3 for the constant gate, one seeded point with
    the LN gains in [0.5, 1.5]."""
    d = 1 if ln else 2
    J, syms = D._cells.jacobian(cell, H=2, D=d, layernorm=ln, convention=conv, s=0.3)
    Jc = D.compact_jacobian(cell, conv, ln, H=2, D=d, s=0.3)
    u = np.random.default_rng(7).uniform(-1.0, 1.0, len(syms.args))
    point = {a: sp.Float(1.0 + 0.5 * v if str(a).startswith("ln_gamma") else v)
             for a, v in zip(syms.args, u)}
    assert Jc.free_symbols <= set(syms.args)
    np.testing.assert_allclose(_num(Jc.xreplace(point)), _num(J.xreplace(point)),
                               rtol=1e-10, atol=1e-13)


def test_check_compact_jacobians_counts_and_defaults(monkeypatch):
    seeds, draws = [], []
    real = np.random.default_rng

    class Rng:
        def __init__(self, seed):
            seeds.append(seed)
            self.g = real(seed)

        def uniform(self, lo, hi, n):
            draws.append((lo, hi, n))
            return self.g.uniform(lo, hi, n)

    monkeypatch.setattr(D.np.random, "default_rng", Rng)
    monkeypatch.setattr(D, "_configs", lambda: iter([("rnn", "cho", False)]))
    assert D.check_compact_jacobians() == 1
    # rnn, H = 2, D = 1: h (2) + x (1) + W_x (2) + b_x (2) + W_h (4) = 11 arguments, 3 points
    assert seeds == [0] and draws == [(-1.0, 1.0, 11)] * 3
    # one count per configuration: rnn and the constant gate, 1 point each -> 2
    monkeypatch.setattr(D, "_configs", lambda: iter([("rnn", "cho", False), ("constgate", "cho", False)]))
    assert D.check_compact_jacobians(n_points=1) == 2


def test_check_compact_jacobians_is_strict(monkeypatch):
    """A relative error of 10⁻⁶ in one compact Jacobian is caught, with its name in the message."""
    real = D.compact_jacobian
    monkeypatch.setattr(D, "compact_jacobian",
                        lambda cell, conv="cho", ln=False, **kw:
                        real(cell, conv, ln, **kw) * (1 + sp.Rational(1, 10**6) * (1 if cell == "gru" else 0)))
    monkeypatch.setattr(D, "_configs", lambda: iter([("rnn", "cho", False), ("gru", "torch", False)]))
    with pytest.raises(AssertionError) as e:
        D.check_compact_jacobians(n_points=1)
    assert str(e.value).startswith("compact Jacobian of gru (torch, layernorm=False) differs from "
                                   "the derived one by ")
    assert 0 < float(str(e.value).rsplit(" ", 1)[1]) < 1e-5


def test_check_compact_jacobians_draws_ln_gains_around_one(monkeypatch):
    """The LN gains are drawn in [0.5, 1.5] (away from 0): an LN term that is wrong only for γ > 1
    is caught (seed 0 draws such a γ), while the other arguments stay in [−1, 1]."""
    real = D.compact_jacobian

    def capped(cell, conv="cho", ln=False, **kw):
        J = real(cell, conv, ln, **kw)
        m = D._cells.update_map(cell, layernorm=ln)
        return J.xreplace({g: sp.Min(g, 1) for g in m.syms.params["ln_gamma"]})
    monkeypatch.setattr(D, "compact_jacobian", capped)
    monkeypatch.setattr(D, "_configs", lambda: iter([("rnn", "cho", True)]))
    with pytest.raises(AssertionError, match=r"rnn \(cho, layernorm=True\)"):
        D.check_compact_jacobians(n_points=1)


def test_check_compact_jacobians_points(monkeypatch):
    """The point: uniform(−1, 1) draws of the seeded generator, the LN gains mapped to 1 + 0.5 u."""
    real = D.compact_jacobian
    points = []

    class Recorder:
        def __init__(self, J):
            self.J = J

        def xreplace(self, point):
            points.append(point)
            return self.J.xreplace(point)
    monkeypatch.setattr(D, "compact_jacobian", lambda *a, **k: Recorder(real(*a, **k)))
    monkeypatch.setattr(D, "_configs", lambda: iter([("rnn", "cho", True)]))
    assert D.check_compact_jacobians(n_points=1, seed=5) == 1
    _, syms = D._cells.jacobian("rnn", H=2, D=1, layernorm=True)
    u = np.random.default_rng(5).uniform(-1.0, 1.0, len(syms.args))
    (point,) = points
    for a, v in zip(syms.args, u):
        want = 1.0 + 0.5 * v if str(a).startswith("ln_gamma") else v
        assert float(point[a]) == pytest.approx(want, rel=1e-15), a


def test_check_compact_jacobians_absolute_tolerance(monkeypatch):
    """An entry that should be 0 (∂c_{t,1}/∂c_{t−1,0} of the LSTM) off by 10⁻⁹ is caught."""
    real = D.compact_jacobian

    def off(*a, **k):
        J = real(*a, **k).copy()
        J[3, 2] += sp.Float(1e-9)
        return J
    monkeypatch.setattr(D, "compact_jacobian", off)
    monkeypatch.setattr(D, "_configs", lambda: iter([("lstm", "cho", False)]))
    with pytest.raises(AssertionError, match="lstm"):
        D.check_compact_jacobians(n_points=1)


def test_collected_by_hand():
    x, y, s = sp.symbols("x y s")
    e = D._collected(3 * x * s + y * s + x + 2 * x * s**2, [x, y])   # x (1 + 3s + 2s²) + y s
    assert set(e.args) == {x * (s + 1) * (2 * s + 1), s * y}
    assert sp.expand(e - (3 * x * s + y * s + x + 2 * x * s**2)) == 0
    # the term free of the grouped symbols stays one group (not merged into the sum)
    e = D._collected(x * s + s + y, [x])
    assert len(e.args) == 2 and s + y in e.args and x * s in e.args


# ------------------------------------------------------------------ the page
def test_markdown_format_by_hand(monkeypatch):
    monkeypatch.setattr(D, "check_compact_jacobians", lambda: 7)
    items = [D.Derivation("cells", "one", "a = b", "none", ("t::x", "t::y")),
             D.Derivation("cells", "two", "c", "", ()),
             D.Derivation("stable", "three", "d", "x", ("t::z",))]
    text = D.markdown(items)
    head, intro = D._HEADINGS["cells"]
    shead, sintro = D._HEADINGS["stable"]
    assert text == "\n".join([
        "# Derivations (generated)", "",
        "<!-- Generated by `python -m theory`; do not edit. tests/test_docs.py fails when this file "
        "is stale. -->", "",
        "Every closed form that the SymPy package `theory` derives, in compact notation, with the "
        "assumptions it rests on and the tests that hold it against lwsim's code or simulations. How "
        "each module derives its results: [theory.md](theory.md).", "",
        "The compact Jacobians of §1 were compared with SymPy's derivative for 7 cell configurations "
        "while this page was generated.", "",
        f"## {head}", "", intro, "",
        "**one**", "", "$$", "a = b", "$$", "", "*Assumptions:* none.", "",
        "*Checked by:* `t::x`, `t::y`.", "",
        "**two**", "", "$$", "c", "$$", "",
        f"## {shead}", "", sintro, "",
        "**three**", "", "$$", "d", "$$", "", "*Assumptions:* x.", "", "*Checked by:* `t::z`."]) + "\n"
    assert head.startswith("1. Cells") and shead.startswith("3. Heavy tails")
    monkeypatch.setattr(D, "derivations", lambda: items)     # no items given: every derivation
    assert D.markdown() == text
    with pytest.raises(KeyError):                            # every item needs a known section
        D.markdown([D.Derivation("", "t", "x", "", ())])


_PAGE = (ROOT / "docs" / "derivations.md").read_text(encoding="utf-8")


def _committed(k):
    """The committed page's preamble and its k-th section (1-based), as markdown() writes a page of
    that section's items alone."""
    parts = re.split(r"(?m)^(?=## )", _PAGE)
    assert len(parts) == 5
    return (parts[0] + parts[k]).rstrip() + "\n"


@pytest.mark.parametrize("builder, k, n", [("_cell_items", 1, 17), ("_expansion_items", 2, 13),
                                           ("_stable_items", 3, 4), ("_scaling_items", 4, 7)])
def test_each_section_matches_the_committed_page(monkeypatch, builder, k, n):
    """docs/derivations.md is the reviewed text of every result (regenerated by `python -m theory`,
    checked by test_docs); here it pins each builder's items (section, title, LaTeX, assumptions,
    tests), one section per case and without the slow compact-Jacobian comparison."""
    monkeypatch.setattr(D, "check_compact_jacobians", lambda: 13)
    items = getattr(D, builder)()
    assert len(items) == n
    assert all(type(d) is D.Derivation and type(d.tests) is tuple for d in items)
    assert D.markdown(items) == _committed(k)


def test_derivations_concatenates_the_sections_in_order(monkeypatch):
    for name in ("_cell_items", "_expansion_items", "_stable_items", "_scaling_items"):
        monkeypatch.setattr(D, name, lambda name=name: [name, name[1:]])
    assert D.derivations() == ["_cell_items", "cell_items", "_expansion_items", "expansion_items",
                               "_stable_items", "stable_items", "_scaling_items", "scaling_items"]


def test_write(tmp_path, monkeypatch):
    monkeypatch.setattr(D, "markdown", lambda items=None: "# page\n")
    out = D.write(tmp_path / "d.md")
    assert out == tmp_path / "d.md" and out.read_text(encoding="utf-8") == "# page\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.md"]
    assert D.write(str(tmp_path / "e.md")) == tmp_path / "e.md"
    # a temporary file left by an interrupted write is the one reused and renamed
    (tmp_path / "f.md.tmp").write_text("stale", encoding="utf-8")
    D.write(tmp_path / "f.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.md", "e.md", "f.md"]
    assert D.DOCS_PATH == ROOT / "docs" / "derivations.md"


def test_write_is_utf8_whatever_the_locale(tmp_path, monkeypatch):
    """The page (σ′, κ_α, 10⁻⁵) is written as UTF-8 even where the locale's encoding is ASCII (the
    C locale set at run time; Python's UTF-8 mode, when on, would hide the locale anyway)."""
    import locale
    text = "σ′ = σ(1 − σ), κ_α, 10⁻⁵\n"
    monkeypatch.setattr(D, "markdown", lambda items=None: text)
    old = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C")
        D.write(tmp_path / "d.md")
    finally:
        locale.setlocale(locale.LC_CTYPE, old)
    assert (tmp_path / "d.md").read_bytes() == text.encode("utf-8")
