"""Tests of theory/report.py (laid out like the code: docs/testing.md).

Mutation tests for theory/report.py (issue 32, docs/testing.md): the LaTeX of every derived result
(``python -m theory --latex``), pinned as text worked out by hand from the closed forms.

Every formula below is the derived result written out (docs/theory.md §4.1–4.4): e.g. the window of
the exponential law solves C e^{−λH} = A N^{−1/κ}, so H_N = (log(C/A) + log N / κ)/λ; the rnn cell at
H = D = 1 has ∂h_t/∂h_{t−1} = W_h (1 − tanh²(W_h h + W_x x + b_x)); with LayerNorm over one unit the
candidate is tanh(β^LN), a constant, so the rnn Jacobian is 0 and the constant gate's is 1 − s = 19/20."""


from __future__ import annotations

import sympy as sp

from theory import report


J = r"\partial s_t/\partial s_{t-1} = "


ARG1 = r"{W_{h}}_{0 0} {h}_{0} + {W_{x}}_{0 0} {x}_{0} + {b_{x}}_{0}"


RNN11 = (J + r"\left[\begin{matrix}{W_{h}}_{0 0} \left(1 - \tanh^{2}{\left(" + ARG1
         + r" \right)}\right)\end{matrix}\right]")


CONST11 = (J + r"\left[\begin{matrix}\frac{{W_{h}}_{0 0} \left(1 - \tanh^{2}{\left(" + ARG1
           + r" \right)}\right)}{20} + \frac{19}{20}\end{matrix}\right]")


CELLS = ["rnn", "constgate", "sharedgate", "diaggate", "gru (cho)", "gru (torch)", "lstm"]


# the n-independent part of the expansion section (n only enters the first six results)
EXP_TAIL = [
    ("expansion", "Gamma, generic n (log-space derivation)",
     r"\Gamma = \left(\sum_{j=1}^{n} \frac{{r}_{j}}{{d}_{j}} + 1\right) \prod_{j=1}^{n} {d}_{j}"),
    ("expansion", "Gamma^0, generic n", r"\Gamma^{0} = \prod_{j=1}^{n} {d}_{j}"),
    ("expansion", "constant gate: exact transport",
     r"M_\ell = \left(s w - s + 1\right)^{\ell}\;(w \to W)"),
    ("expansion", "constant gate: first order",
     r"M_\ell^{(1)} = \ell s w \left(1 - s\right)^{\ell - 1} + \left(1 - s\right)^{\ell}\;(w \to W)"),
    ("expansion", "constant gate: induction ratio c_{k+1}/c_k", r"c_{k+1}/c_k = s \left(\ell - k\right)"),
    ("expansion", "constant gate: coefficient of W^k",
     r"a_k = s^{k} \left(1 - s\right)^{\ell - k} {\binom{\ell}{k}}"),
    ("expansion", "constant gate: remainder",
     r"M_\ell - M_\ell^{(1)} = \sum_{k=2}^{\ell} s^{k} w^{k} \left(1 - s\right)^{\ell - k} {\binom{\ell}{k}}"),
    ("expansion", "leaky state unrolled (n=3)",
     r"h_3 = - h_{0} s^{3} + 3 h_{0} s^{2} - 3 h_{0} s + h_{0} + s^{3} u_{1} - 2 s^{2} u_{1} "
     r"- s^{2} u_{2} + s u_{1} + s u_{2} + s u_{3}"),
    ("expansion", "leaky kernel (weight of u_{t-i})", r"c_i = s \left(1 - s\right)^{i}"),
    ("expansion", "leaky initial factor (weight of h_0 in h_i)", r"c_i = \left(1 - s\right)^{i}"),
    ("expansion", "heavy-ball kernel (weight of g_{k-i})", r"b_i = \beta^{i}"),
    ("expansion", "leaky / heavy-ball kernel at beta = 1 - s", r"c_i / b_i|_{\beta=1-s} = s"),
    ("expansion", "constant-gate lag schedule", r"\mu_\ell \propto \left(1 - s\right)^{\ell}"),
    ("expansion", "time constant", r"\tau = - \frac{1}{\log{\left(1 - s \right)}}"),
]


# ----------------------------------------------------------------------------------------------
# latex: symbol names
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ symbol names
def test_symbol_latex_by_hand():
    assert report.latex(sp.Symbol("lam")) == r"\lambda"
    assert report.latex(sp.Symbol("ln_gamma[1]")) == r"{\gamma^{\mathrm{LN}}}_{1}"
    assert report.latex(sp.Symbol("ln_beta[0]")) == r"{\beta^{\mathrm{LN}}}_{0}"
    assert report.latex(sp.Symbol("W_h[0,1]")) == r"{W_{h}}_{0 1}"
    assert report.latex(sp.Symbol("W_h[10,2]")) == r"{W_{h}}_{10 2}"
    assert report.latex(sp.Symbol("h[0]")) == r"{h}_{0}"
    assert report.latex(sp.Symbol("x")) == "x"
    assert report.latex(sp.Symbol("alpha")) == r"\alpha"
    # only the first bracket splits base from index (the closing one is dropped)
    assert report.latex(sp.Symbol("a[0[1]")) == r"{a}_{0[1}"


# ----------------------------------------------------------------------------------------------
# latex
# ----------------------------------------------------------------------------------------------


def test_latex_renames_every_free_symbol():
    lam, w, g = sp.Symbol("lam"), sp.Symbol("W_h[0,1]"), sp.Symbol("ln_gamma[1]")
    assert report.latex(lam * w + g) == r"{W_{h}}_{0 1} \lambda + {\gamma^{\mathrm{LN}}}_{1}"
    assert report.latex(sp.Integer(3)) == "3"
    # private: _eq only formats results()' equations; no public function takes a left-hand side
    assert report._eq("a", "b") == "a = b"
    assert report._eq("F_0", lam) == r"F_0 = \lambda"


# ----------------------------------------------------------------------------------------------
# results
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ sections
def test_stable_section_by_hand():
    assert report.results(("stable",)) == [
        ("stable", "characteristic function", r"\varphi(t) = e^{- \sigma^{\alpha} t^{\alpha}}"),
        ("stable", "characteristic function of the sample mean",
         r"\varphi(t/N)^N = e^{- N^{1 - \alpha} \sigma^{\alpha} t^{\alpha}}"),
        ("stable", "scale of the sample mean", r"\sigma_N = N^{-1 + \frac{1}{\alpha}} \sigma"),
        ("stable", "exponent d log sigma_N / d log N",
         r"\frac{d\log\sigma_N}{d\log N} = \frac{1 - \alpha}{\alpha}"),
        ("stable", "kappa_alpha", r"\kappa_\alpha = \frac{\alpha}{\alpha - 1}"),
        ("stable", "scale with kappa", r"\sigma_N = N^{- \frac{1}{\kappa}} \sigma"),
        ("stable", "d kappa / d alpha",
         r"\frac{d\kappa_\alpha}{d\alpha} = - \frac{1}{\left(\alpha - 1\right)^{2}}"),
    ]


def test_scaling_section_by_hand():
    G = r"\frac{d\,q(H_N)}{d\log N} = "
    D = r"\frac{\partial H_N}{\partial\kappa} = "
    P = r"N^{\frac{1}{\beta \kappa}} \left(\frac{C}{A}\right)^{\frac{1}{\beta}}"
    L = r"N^{\frac{1}{\gamma \kappa}} \left(\frac{C}{A}\right)^{\frac{1}{\gamma}}"
    assert report.results(("scaling",)) == [
        ("scaling", "A", r"A = \frac{\epsilon \sigma}{c}"),
        ("scaling", "exponential: envelope", r"f(\ell) = C e^{- \ell \lambda}"),
        ("scaling", "exponential: sample complexity",
         r"N(\ell) = \left(\frac{A e^{\ell \lambda}}{C}\right)^{\kappa}"),
        ("scaling", "exponential: learnability window",
         r"H_N = \frac{\log{\left(\frac{C}{A} \right)} + \frac{\log{\left(N \right)}}{\kappa}}{\lambda}"),
        ("scaling", "exponential: samples needed for horizon H",
         r"N(H) = \left(\frac{A e^{H \lambda}}{C}\right)^{\kappa}"),
        ("scaling", "exponential: growth exponent (logarithmic growth: H_N linear in log N, "
                    "slope 1/(lam*kappa))", G + r"\frac{1}{\kappa \lambda}"),
        ("scaling", "exponential: dH_N/dkappa (negative for N>1: True)",
         D + r"- \frac{\log{\left(N \right)}}{\kappa^{2} \lambda}"),
        ("scaling", "power: envelope", r"f(\ell) = C \ell^{- \beta}"),
        ("scaling", "power: sample complexity",
         r"N(\ell) = \left(\frac{A \ell^{\beta}}{C}\right)^{\kappa}"),
        ("scaling", "power: learnability window", "H_N = " + P),
        ("scaling", "power: samples needed for horizon H",
         r"N(H) = \left(\frac{A H^{\beta}}{C}\right)^{\kappa}"),
        ("scaling", "power: growth exponent (polynomial growth: H_N ∝ N^(1/(kappa*beta)))",
         G + r"\frac{1}{\beta \kappa}"),
        ("scaling", "power: dH_N/dkappa (negative for N>1: True)",
         D + r"- \frac{" + P + r" \log{\left(N \right)}}{\beta \kappa^{2}}"),
        ("scaling", "logarithmic: envelope", r"f(\ell) = C \log{\left(\ell \right)}^{- \gamma}"),
        ("scaling", "logarithmic: sample complexity",
         r"N(\ell) = \left(\frac{A \log{\left(\ell \right)}^{\gamma}}{C}\right)^{\kappa}"),
        ("scaling", "logarithmic: learnability window", "H_N = e^{" + L + "}"),
        ("scaling", "logarithmic: samples needed for horizon H",
         r"N(H) = \left(\frac{A \log{\left(H \right)}^{\gamma}}{C}\right)^{\kappa}"),
        ("scaling", "logarithmic: growth exponent (exponential growth: log H_N ∝ "
                    "N^(1/(kappa*gamma)))", G + r"\frac{1}{\gamma \kappa}"),
        ("scaling", "logarithmic: dH_N/dkappa (negative for N>1: True)",
         D + r"- \frac{" + L + r" e^{A^{- \frac{1}{\gamma}} C^{\frac{1}{\gamma}} "
         r"N^{\frac{1}{\gamma \kappa}}} \log{\left(N \right)}}{\gamma \kappa^{2}}"),
    ]


def test_expansion_section_n3_by_hand():
    assert report.results(("expansion",), n=3) == [
        ("expansion", "Product (n=3)", r"F(\epsilon) = \left(\epsilon B_{1} + A_{1}\right) "
         r"\left(\epsilon B_{2} + A_{2}\right) \left(\epsilon B_{3} + A_{3}\right)"),
        ("expansion", "epsilon^0 coefficient F_0 (n=3)", r"F_0 = A_{1} A_{2} A_{3}"),
        ("expansion", "epsilon^1 coefficient L_1 (n=3)",
         r"L_1 = A_{1} A_{2} B_{3} + A_{1} B_{2} A_{3} + B_{1} A_{2} A_{3}"),
        ("expansion", "epsilon^2 coefficient (n=3)",
         r"L_2 = A_{1} B_{2} B_{3} + B_{1} A_{2} B_{3} + B_{1} B_{2} A_{3}"),
        ("expansion", "Gamma, diagonal leak (n=3)", r"\Gamma = d_{1} d_{2} d_{3} \left(1 + "
         r"\frac{r_{3}}{d_{3}} + \frac{r_{2}}{d_{2}} + \frac{r_{1}}{d_{1}}\right)"),
        ("expansion", "Gamma^0 (n=3)", r"\Gamma^{0} = d_{1} d_{2} d_{3}"),
    ] + EXP_TAIL


def test_expansion_section_n1_by_hand():
    """One factor: F = A₁ + εB₁, so F₀ = A₁, L₁ = B₁, L₂ = 0, Γ = d₁(1 + r₁/d₁)."""
    assert report.results(("expansion",), n=1) == [
        ("expansion", "Product (n=1)", r"F(\epsilon) = \epsilon B_{1} + A_{1}"),
        ("expansion", "epsilon^0 coefficient F_0 (n=1)", "F_0 = A_{1}"),
        ("expansion", "epsilon^1 coefficient L_1 (n=1)", "L_1 = B_{1}"),
        ("expansion", "epsilon^2 coefficient (n=1)", "L_2 = 0"),
        ("expansion", "Gamma, diagonal leak (n=1)", r"\Gamma = d_{1} \left(1 + \frac{r_{1}}{d_{1}}\right)"),
        ("expansion", "Gamma^0 (n=1)", r"\Gamma^{0} = d_{1}"),
    ] + EXP_TAIL


def test_cells_section_h1_by_hand():
    items = report.results(("cells",), H=1, D=1)
    assert [(s, t) for s, t, _ in items] == [("cells", f"{c}: Jacobian, H=1, D=1") for c in CELLS]
    assert items[0][2] == RNN11            # with the bias b_x: the bias-free variants are left out
    assert items[1][2] == CONST11          # (1 − s) + s·rnn at s = 0.05
    for _, _, tex in items[:-1]:       # 1×1 (one row); the LSTM's state (h, c) is 2×2
        assert tex.startswith(J + r"\left[\begin{matrix}") and r"\\" not in tex
    assert items[-1][2].count(r"\\") == 1 and items[-1][2].count("&") == 2
    assert r"\tanh{\left({\beta^{\mathrm{LN}}}_{0} \right)}" not in items[2][2]
    # each GRU in its own convention: torch's weights are W_hz, W_hr, W_hn; Cho's U_z, U_r, U_g
    assert "{W_{hz}}_{0 0}" in items[5][2] and "U_{z}" not in items[5][2]
    assert "{U_{z}}_{0 0}" in items[4][2] and "W_{hz}" not in items[4][2]


def test_cells_section_layernorm_by_hand():
    """LayerNorm over one unit: the candidate is tanh(β^LN), a constant (no torch GRU with LN)."""
    items = report.results(("cells",), H=1, D=1, layernorm=True)
    names = ["rnn", "constgate", "sharedgate", "diaggate", "gru (cho)", "lstm"]
    assert [(s, t) for s, t, _ in items] == [("cells", f"{c} +LN: Jacobian, H=1, D=1") for c in names]
    assert items[0][2] == J + r"\left[\begin{matrix}0\end{matrix}\right]"
    assert items[1][2] == J + r"\left[\begin{matrix}\frac{19}{20}\end{matrix}\right]"
    assert r"\tanh{\left({\beta^{\mathrm{LN}}}_{0} \right)}" in items[2][2]


def test_cells_section_size_enters_title_and_matrix():
    items = report.results(("cells",), H=1, D=2)
    assert items[0][1] == "rnn: Jacobian, H=1, D=2"
    assert "{W_{x}}_{0 1} {x}_{1}" in items[0][2]


def test_results_defaults_and_order(monkeypatch):
    calls = []
    monkeypatch.setattr(report, "_cell_results", lambda H, D, ln: calls.append(("cells", H, D, ln)) or [1])
    monkeypatch.setattr(report, "_expansion_results", lambda n: calls.append(("expansion", n)) or [2])
    monkeypatch.setattr(report, "_stable_results", lambda: calls.append(("stable",)) or [3])
    monkeypatch.setattr(report, "_scaling_results", lambda: calls.append(("scaling",)) or [4])
    assert report.results() == [1, 2, 3, 4]
    assert calls == [("cells", 2, 1, False), ("expansion", 3), ("stable",), ("scaling",)]
    calls.clear()
    assert report.results(("scaling", "stable")) == [3, 4]
    assert report.results(("expansion",), n=5) == [2] and calls[-1] == ("expansion", 5)
    assert report.results(("cells",), H=4, D=3, layernorm=True) == [1]
    assert calls[-1] == ("cells", 4, 3, True)
    assert report.results(()) == []


# ----------------------------------------------------------------------------------------------
# render
# ----------------------------------------------------------------------------------------------


def test_render_by_hand():
    items = [("a", "one", "x = 1"), ("a", "two", "y"), ("b", "three", r"\alpha")]
    assert report.render(items) == ("% ===== a =====\n% one\n\\[ x = 1 \\]\n% two\n\\[ y \\]\n"
                                    "% ===== b =====\n% three\n\\[ \\alpha \\]")
    # a section seen again after another one gets its heading again
    assert report.render([("a", "t", "1"), ("b", "u", "2"), ("a", "v", "3")]).count("=====") == 6
    assert report.render([]) == ""
    # an empty section name is still a section of its own
    assert report.render([("", "t", "x")]) == "% =====  =====\n% t\n\\[ x \\]"
