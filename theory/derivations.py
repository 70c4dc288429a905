"""``docs/derivations.md``: every derived result, its assumptions and the test that checks it.

Written by ``python -m theory`` (see :func:`write`); ``tests/test_docs.py`` regenerates it and
fails when the committed file is stale. Results are shown in compact notation -- σ(·),
σ′ = σ(1 − σ), tanh′ = 1 − tanh², and the structure J = diag(…) + diag(…) W + … -- rather than
SymPy's expanded exponentials. The compact Jacobians are not typed in unchecked: each is built
here as a SymPy matrix from the cell's gate expressions and compared with SymPy's own
``jacobian`` of the update map (:func:`check_compact_jacobians`; a mismatch stops the
generation). Definitions: docs/cells.md §1.7, docs/theory.md §4.1–4.4.
"""
from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import sympy as sp

from . import cells as _cells
from . import expansion as _ex
from . import scaling as _sc
from . import stable as _st
from .report import latex

__all__ = ["Derivation", "derivations", "markdown", "write", "compact_jacobian",
           "check_compact_jacobians", "DOCS_PATH"]

DOCS_PATH = pathlib.Path(__file__).resolve().parent.parent / "docs" / "derivations.md"


@dataclasses.dataclass(frozen=True)
class Derivation:
    """One derived result: where it belongs, the formula (LaTeX), what it assumes, its tests.

    See docs/theory.md §4.1.
    """
    section: str
    title: str
    latex: str
    assumptions: str
    tests: tuple


# --------------------------------------------------------------------------------------------
# compact Jacobians (docs/cells.md §1.7), built from the gate expressions and checked
# --------------------------------------------------------------------------------------------
def _dsig(v: sp.Matrix) -> sp.Matrix:
    """σ′ written through the gate value: σ(1 − σ)."""
    return v.applyfunc(lambda a: a * (1 - a))


def _dtanh(v: sp.Matrix) -> sp.Matrix:
    return v.applyfunc(lambda a: 1 - a**2)


def _diag(v: sp.Matrix) -> sp.Matrix:
    return sp.diag(*list(v))


def _ln_jacobian(a: sp.Matrix, gamma: sp.Matrix) -> sp.Matrix:
    """J_LN = diag(γ) (1/σ_a) (I − 11ᵀ/H − â âᵀ/H)."""
    H = a.rows
    mean = sum(a) / H
    cen = a.applyfunc(lambda v: v - mean)
    sd = sp.sqrt(sum(v**2 for v in cen) / H + _cells.LN_EPS)
    ahat = cen / sd
    one = sp.ones(H, 1)
    return _diag(gamma) * (sp.eye(H) - one * one.T / H - ahat * ahat.T / H) / sd


def compact_jacobian(cell: str, convention: str = "cho", layernorm: bool = False, H: int = 2,
                     D: int = 1, s=0.05) -> sp.Matrix:
    """The structured Jacobian of docs/cells.md §1.7, as a SymPy matrix in the symbols of
    :func:`theory.cells.update_map` (same parameters, same state)."""
    m = _cells.update_map(cell, H=H, D=D, layernorm=layernorm, convention=convention, s=s)
    P, x, h, g = m.syms.params, m.syms.x, m.syms.h, m.gates
    I = sp.eye(H)
    b = (lambda k: P[k] if k in P else sp.zeros(H, 1))
    jln = (lambda a: _ln_jacobian(a, P["ln_gamma"])) if layernorm else (lambda a: I)
    if cell in ("rnn", "constgate", "sharedgate", "diaggate"):
        a = P["W_x"] * x + b("b_x") + P["W_h"] * h
        cand = g["cand"]
        core = _diag(_dtanh(cand)) * jln(a) * P["W_h"]
        if cell == "rnn":
            return core
        if cell == "constgate":
            return (1 - m.s) * I + m.s * core
        if cell == "sharedgate":
            st = g["s"]
            return (1 - st) * I + st * core + _dsig(sp.Matrix([st]))[0] * (cand - h) * P["u_s"].T
        st = g["s"]
        return (_diag(st.applyfunc(lambda v: 1 - v)) + _diag(st) * core
                + _diag((cand - h).multiply_elementwise(_dsig(st))) * P["U_s"])
    if cell == "gru" and convention == "cho":
        z, r, gg = g["z"], g["r"], g["g"]
        a = P["W_g"] * x + b("b_g") + P["U_g"] * r.multiply_elementwise(h)
        return (_diag(z.applyfunc(lambda v: 1 - v))
                + _diag((gg - h).multiply_elementwise(_dsig(z))) * P["U_z"]
                + _diag(z.multiply_elementwise(_dtanh(gg))) * jln(a) * P["U_g"]
                * (_diag(r) + _diag(h.multiply_elementwise(_dsig(r))) * P["U_r"]))
    if cell == "gru":
        z, r, n = g["z"], g["r"], g["n"]
        return (_diag(z) + _diag((h - n).multiply_elementwise(_dsig(z))) * P["W_hz"]
                + _diag(z.applyfunc(lambda v: 1 - v).multiply_elementwise(_dtanh(n)))
                * (_diag(r) * P["W_hn"]
                   + _diag((P["W_hn"] * h + b("b_hn")).multiply_elementwise(_dsig(r))) * P["W_hr"]))
    # lstm, state (h, c)
    i, f, gg, o = g["i"], g["f"], g["g"], g["o"]
    c = m.syms.c
    a = P["W_g"] * x + b("b_g") + P["U_g"] * h
    tc = m.c_new.applyfunc(sp.tanh)
    e = o.multiply_elementwise(_dtanh(tc))
    dc_dh = (_diag(c.multiply_elementwise(_dsig(f))) * P["U_f"]
             + _diag(gg.multiply_elementwise(_dsig(i))) * P["U_i"]
             + _diag(i.multiply_elementwise(_dtanh(gg))) * jln(a) * P["U_g"])
    dc_dc = _diag(f)
    dh_dh = _diag(tc.multiply_elementwise(_dsig(o))) * P["U_o"] + _diag(e) * dc_dh
    dh_dc = _diag(e.multiply_elementwise(f))
    return sp.Matrix(sp.BlockMatrix([[dh_dh, dh_dc], [dc_dh, dc_dc]]))


def _configs():
    for cell in _cells.CELLS:
        for conv in (("cho", "torch") if cell == "gru" else ("cho",)):
            for ln in ((False,) if conv == "torch" else (False, True)):
                yield cell, conv, ln


def check_compact_jacobians(n_points: int = 3, seed: int = 0, rtol: float = 1e-10) -> int:
    """Compare every compact Jacobian with SymPy's ``jacobian`` of the update map at seeded
    random points (H = 2, D = 1, with and without LayerNorm). Raises ``AssertionError`` naming
    the cell on a mismatch; returns the number of configurations checked.

    See docs/cells.md §1.7.
    """
    rng = np.random.default_rng(seed)
    count = 0
    for cell, conv, ln in _configs():
        J, syms = _cells.jacobian(cell, H=2, D=1, layernorm=ln, convention=conv)
        Jc = compact_jacobian(cell, conv, ln)
        for _ in range(n_points):
            vals = rng.uniform(-1.0, 1.0, len(syms.args))
            if ln:  # keep γ away from 0 so that the LN term matters
                vals = np.where([str(a).startswith("ln_gamma") for a in syms.args],
                                1.0 + 0.5 * vals, vals)
            # substitution + evalf: lambdify of the LayerNorm LSTM Jacobian takes minutes
            point = {a: sp.Float(v) for a, v in zip(syms.args, vals)}
            a = np.array(J.xreplace(point).evalf(), dtype=float)
            b = np.array(Jc.xreplace(point).evalf(), dtype=float)
            if not np.allclose(a, b, rtol=rtol, atol=1e-12):
                raise AssertionError(f"compact Jacobian of {cell} ({conv}, layernorm={ln}) differs "
                                     f"from the derived one by {np.abs(a - b).max():.3g}")
        count += 1
    return count


# --------------------------------------------------------------------------------------------
# the list of results
# --------------------------------------------------------------------------------------------
_T = "tests/theory/test_cells.py::"
_CELL_TESTS = (_T + "test_spec_closed_forms_match_derivation", _T + "test_against_lwsim",
               "tests/test_reference.py::test_jacobians_match_finite_differences",
               "tests/theory/test_derivations.py::test_compact_jacobians_equal_the_derivation")
_CELL_ASSUME = ("exact derivative of the one-step map (no approximation); the gate-derivative "
                "terms use h_{t−1}; LN with the biased variance and ε = 10⁻⁵")

_COMPACT = {
    ("rnn", "cho"): r"J_t = \operatorname{diag}(\tanh'_t)\, J_{\mathrm{LN}}\, W_h",
    ("constgate", "cho"): r"J_t = (1-s)\,I + s\,\operatorname{diag}(\tanh'_t)\, J_{\mathrm{LN}}\, W_h",
    ("sharedgate", "cho"): (r"J_t = (1-s_t)\,I + s_t\operatorname{diag}(\tanh'_t)\,J_{\mathrm{LN}}\,W_h"
                            r" + \sigma'(s_t)\,(\tilde h_t - h_{t-1})\,u_s^{\top}"),
    ("diaggate", "cho"): (r"J_t = \operatorname{diag}(1-s_t) + \operatorname{diag}(s_t\odot\tanh'_t)"
                          r"\,J_{\mathrm{LN}}\,W_h + \operatorname{diag}\big((\tilde h_t - h_{t-1})"
                          r"\odot\sigma'(s_t)\big)\,U_s"),
    ("gru", "cho"): (r"J_t = \operatorname{diag}(1-z_t) + \operatorname{diag}\big((g_t-h_{t-1})"
                     r"\odot\sigma'(z_t)\big)U_z + \operatorname{diag}(z_t\odot\tanh'(g_t))\,"
                     r"J_{\mathrm{LN}}\,U_g\big[\operatorname{diag}(r_t) + \operatorname{diag}"
                     r"(h_{t-1}\odot\sigma'(r_t))\,U_r\big]"),
    ("gru", "torch"): (r"J_t = \operatorname{diag}(z_t) + \operatorname{diag}\big((h_{t-1}-n_t)"
                       r"\odot\sigma'(z_t)\big)W_{hz} + \operatorname{diag}\big((1-z_t)\odot"
                       r"\tanh'(n_t)\big)\big[\operatorname{diag}(r_t)W_{hn} + \operatorname{diag}"
                       r"\big((W_{hn}h_{t-1}+b_{hn})\odot\sigma'(r_t)\big)W_{hr}\big]"),
    ("lstm", "cho"): (r"\begin{aligned}\frac{\partial c_t}{\partial h_{t-1}} &= \operatorname{diag}"
                      r"(c_{t-1}\odot\sigma'(f_t))U_f + \operatorname{diag}(g_t\odot\sigma'(i_t))U_i"
                      r" + \operatorname{diag}(i_t\odot\tanh'(g_t))\,J_{\mathrm{LN}}\,U_g,\qquad"
                      r"\frac{\partial c_t}{\partial c_{t-1}} = \operatorname{diag}(f_t),\\"
                      r"\frac{\partial h_t}{\partial h_{t-1}} &= \operatorname{diag}(\tanh(c_t)"
                      r"\odot\sigma'(o_t))U_o + \operatorname{diag}(e_t)\frac{\partial c_t}"
                      r"{\partial h_{t-1}},\qquad \frac{\partial h_t}{\partial c_{t-1}} = "
                      r"\operatorname{diag}(e_t\odot f_t),\quad e_t = o_t\odot\tanh'(c_t)"
                      r"\end{aligned}"),
}
_UPDATE = {
    ("rnn", "cho"): r"h_t = \tilde h_t = \tanh(\mathrm{LN}(a_t)),\quad a_t = W_x x_t + b_x + W_h h_{t-1}",
    ("constgate", "cho"): r"h_t = (1-s)\,h_{t-1} + s\,\tilde h_t",
    ("sharedgate", "cho"): (r"s_t = \sigma(w_s^{\top}x_t + b_s + u_s^{\top}h_{t-1}),\quad "
                            r"h_t = (1-s_t)\,h_{t-1} + s_t\,\tilde h_t"),
    ("diaggate", "cho"): (r"s_t = \sigma(W_s x_t + b_s + U_s h_{t-1}),\quad "
                          r"h_t = (1-s_t)\odot h_{t-1} + s_t\odot\tilde h_t"),
    ("gru", "cho"): (r"z_t, r_t = \sigma(W_{z,r}x_t + b_{z,r} + U_{z,r}h_{t-1}),\ g_t = \tanh(\mathrm{LN}"
                     r"(W_g x_t + b_g + U_g(r_t\odot h_{t-1}))),\ h_t = (1-z_t)\odot h_{t-1} + z_t\odot g_t"),
    ("gru", "torch"): (r"r_t, z_t = \sigma(W_{i\cdot}x_t + b_{i\cdot} + W_{h\cdot}h_{t-1} + b_{h\cdot}),\ "
                       r"n_t = \tanh(W_{in}x_t + b_{in} + r_t\odot(W_{hn}h_{t-1} + b_{hn})),\ "
                       r"h_t = (1-z_t)\odot n_t + z_t\odot h_{t-1}"),
    ("lstm", "cho"): (r"i_t, f_t, o_t = \sigma(\cdot),\ g_t = \tanh(\mathrm{LN}(W_g x_t + b_g + U_g h_{t-1})),"
                      r"\ c_t = f_t\odot c_{t-1} + i_t\odot g_t,\ h_t = o_t\odot\tanh(c_t)"),
}
_LN = (r"J_{\mathrm{LN}} = \operatorname{diag}(\gamma^{\mathrm{LN}})\,\frac{1}{\sigma_a}\Big(I - "
       r"\frac{\mathbf{1}\mathbf{1}^{\top}}{H} - \frac{\hat a\hat a^{\top}}{H}\Big),\quad "
       r"\hat a = \frac{a-\bar a}{\sigma_a},\ \sigma_a = \sqrt{\operatorname{var}(a) + 10^{-5}}"
       r"\quad(J_{\mathrm{LN}} = I\ \text{without LayerNorm})")


def _cell_items():
    out = [Derivation("cells", "notation", r"\sigma'(v) = \sigma(v)\,(1-\sigma(v)),\quad "
                      r"\tanh'(v) = 1-\tanh^2(v),\quad \tanh'_t = 1-\tilde h_t^{2}",
                      "σ′ and tanh′ are written through the gate or candidate values, as lwsim "
                      "computes them", ()),
           Derivation("cells", "LayerNorm Jacobian", _LN, "LN over the H units, biased variance",
                      ("tests/theory/test_derivations.py::test_compact_jacobians_equal_the_derivation",))]
    J, _ = _cells.jacobian("rnn", H=2, D=1)
    out.append(Derivation("cells", "rnn without LayerNorm, H = 2, D = 1: SymPy's entry (0, 0) "
                          "(the one full expansion short enough to show)",
                          r"\frac{\partial h_{t,0}}{\partial h_{t-1,0}} = " + latex(J[0, 0]),
                          _CELL_ASSUME, _CELL_TESTS[:1]))
    for (cell, conv), tex in _COMPACT.items():
        name = cell + (f' "{conv}"' if cell == "gru" else "")
        out.append(Derivation("cells", f"{name}: update map", _UPDATE[(cell, conv)],
                              "the update equations of docs/cells.md §1.1–1.3", ()))
        out.append(Derivation("cells", f"{name}: one-step Jacobian", tex, _CELL_ASSUME, _CELL_TESTS))
    return out


def _collected(expr: sp.Expr, symbols) -> sp.Expr:
    """Group an expanded polynomial by ``symbols`` and factor each coefficient."""
    parts = sp.collect(sp.expand(expr), symbols, evaluate=False)
    return sp.Add(*[sp.factor(c) * k for k, c in parts.items()], evaluate=False)


def _expansion_items():
    TE = "tests/theory/test_expansion.py::"
    nc = "A_i, B_i non-commuting matrices, ε a scalar"
    n = 3
    L1, L2 = _ex.first_order_coefficient(n), _ex.second_order_coefficient(n)
    g = _ex.gamma_expansion(n)
    G, G0, _ = _ex.gamma_general()
    t = _ex.constgate_transport()
    h3, h0, us = _ex.leaky_unrolled(3)[0], None, None
    syms = sorted(h3.free_symbols, key=str)
    h3c = _collected(h3, [v for v in syms if str(v) != "s"])
    w = r"\quad(w \to W)"
    return [
        Derivation("expansion", "product of n = 3 factors", r"F(\epsilon) = " +
                   latex(_ex.product_expansion(n).product), nc, (TE + "test_symbolic_coefficients",)),
        Derivation("expansion", "first-order (Fréchet) coefficient L₁, n = 3", "L_1 = " + latex(L1),
                   nc + "; order of the factors kept",
                   (TE + "test_symbolic_coefficients", TE + "test_noncommutativity_is_kept",
                    TE + "test_coefficients_match_finite_differences")),
        Derivation("expansion", "second-order coefficient L₂, n = 3", "L_2 = " + latex(L2), nc,
                   (TE + "test_symbolic_coefficients", TE + "test_truncation_error_slopes")),
        Derivation("expansion", "general L₁ and L₂",
                   r"L_1 = \sum_i \Big(\prod_{j<i}A_j\Big)B_i\Big(\prod_{j>i}A_j\Big),\quad "
                   r"L_2 = \sum_{i<k}\Big(\prod_{j<i}A_j\Big)B_i\Big(\prod_{i<j<k}A_j\Big)B_k"
                   r"\Big(\prod_{j>k}A_j\Big)", nc + "; remainder F − F₀ − εL₁ = O(ε²)",
                   (TE + "test_symbolic_coefficients", TE + "test_truncation_error_slopes",
                    TE + "test_expansion_on_lwsim_jacobians")),
        Derivation("expansion", "Γ, diagonal leak, n = 3", r"\Gamma = " + latex(g.gamma),
                   "A_j = diag(d_j), first order in the diagonal perturbations r_j, d_j ≠ 0",
                   (TE + "test_gamma_symbolic", TE + "test_gamma_equals_diagonal_of_product_expansion",
                    "tests/diagnostics/test_gamma.py::test_prefix_sum_gamma_equals_direct_loop")),
        Derivation("expansion", "Γ and Γ⁰ for any n (log-space derivation)",
                   r"\Gamma = " + latex(G) + r",\qquad \Gamma^{0} = " + latex(G0),
                   "d_j > 0 (log space); first order in r_j",
                   (TE + "test_gamma_symbolic",
                    "tests/diagnostics/test_gamma.py::test_gamma0_equals_leak_product_exactly",
                    "tests/diagnostics/test_gamma.py::test_gamma_error_shrinks_as_E_squared")),
        Derivation("expansion", "constant gate, linearised: exact transport",
                   r"M_\ell = " + latex(t.exact) + w, "tanh → identity, constant s; I and W commute",
                   (TE + "test_constgate_symbolic", TE + "test_constgate_closed_forms_vs_matrix_powers")),
        Derivation("expansion", "constant gate: first order", r"M_\ell^{(1)} = " + latex(t.first_order) + w,
                   "as above, first order in s W", (TE + "test_constgate_closed_forms_vs_matrix_powers",)),
        Derivation("expansion", "constant gate: coefficient of W^k (by induction, rsolve)",
                   r"c_{k+1}/c_k = " + latex(t.induction_ratio) + r",\quad a_k = " + latex(t.coefficient),
                   "as above", (TE + "test_constgate_symbolic",)),
        Derivation("expansion", "constant gate: remainder",
                   r"M_\ell - M_\ell^{(1)} = " + latex(t.remainder) + w, "as above",
                   (TE + "test_constgate_closed_forms_vs_matrix_powers",)),
        Derivation("expansion", "leaky state unrolled, t = 3", "h_3 = " + latex(h3c),
                   "constant s, inputs u_t", (TE + "test_leaky_and_heavy_ball_symbolic",)),
        Derivation("expansion", "leaky and heavy-ball kernels",
                   r"h_t = (1-s)^t h_0 + \sum_i c_i\,u_{t-i},\ c_i = " + latex(_ex.leaky_kernel())
                   + r";\quad v_k = \sum_i b_i\, g_{k-i},\ b_i = " + latex(_ex.heavy_ball_kernel())
                   + r";\quad c_i/b_i\big|_{\beta=1-s} = " + latex(_ex.leaky_over_heavy_ball()),
                   "zero initial buffer for the heavy ball; β = 1 − s",
                   (TE + "test_leaky_and_heavy_ball_symbolic", TE + "test_leaky_and_heavy_ball_numeric")),
        Derivation("expansion", "constant-gate lag schedule and time constant",
                   r"\mu_\ell \propto " + latex(_ex.lag_schedule()) + r",\qquad \tau = "
                   + latex(_ex.time_constant()), "zero order (gates only), constant s ∈ (0, 1)",
                   (TE + "test_lag_schedule_and_time_constant",
                    "tests/diagnostics/test_envelope.py::test_constgate_linear_envelope_and_timescales_closed_form")),
    ]


def _stable_items():
    TS = "tests/theory/test_stable.py::"
    a = "X_i i.i.d. SαS(α, σ), α ∈ (0, 2]; N samples"
    return [
        Derivation("stable", "characteristic function", r"\varphi(t) = " +
                   latex(_st.characteristic_function()), "symmetric α-stable, scale σ",
                   (TS + "test_symbolic_results",)),
        Derivation("stable", "sample mean", r"\varphi(t/N)^N = " +
                   latex(_st.sample_mean_characteristic_function()) + r",\qquad \sigma_N = "
                   + latex(_st.sample_mean_scale()), a,
                   (TS + "test_characteristic_function_of_mean", TS + "test_monte_carlo_slope_lwsim",
                    "tests/stats/test_stable.py::test_sample_mean_concentrates_at_rate_n_to_minus_one_over_kappa")),
        Derivation("stable", "concentration exponent and κ_α",
                   r"\frac{d\log\sigma_N}{d\log N} = " + latex(_st.mean_scale_exponent())
                   + r",\quad \kappa_\alpha = " + latex(_st.kappa_alpha()) + r",\quad \sigma_N = "
                   + latex(_st.sample_mean_scale_kappa()), a + "; α ∈ (1, 2]",
                   (TS + "test_symbolic_results", TS + "test_lwsim_closed_forms_match_derivation",
                    "tests/stats/test_stable.py::test_kappa")),
        Derivation("stable", "heavier tails, larger κ", r"\frac{d\kappa_\alpha}{d\alpha} = "
                   + latex(_st.dkappa_dalpha()), "α ∈ (1, 2]", (TS + "test_symbolic_results",)),
    ]


def _scaling_items():
    TS = "tests/theory/test_scaling.py::"
    TP = "tests/theory/test_planted.py::"
    out = [Derivation("scaling", "detection threshold", "A = " + latex(_sc.A_definition()) +
                      r",\qquad \mathrm{SNR} = \frac{c\,f(\ell)\,N^{1/\kappa}}{\sigma} = \epsilon",
                      "matched-statistic mean c f(ℓ), SαS noise of scale σ (docs/statistics.md §3.3)",
                      (TS + "test_window_solves_threshold_equation",
                       TS + "test_lwsim_detection_rule_matches"))]
    for law in _sc.LAWS:
        out.append(Derivation(
            "scaling", f"{law} envelope",
            r"f(\ell) = " + latex(_sc.envelope(law)) + r",\quad N(\ell) = " + latex(_sc.sample_complexity(law))
            + r",\quad H_N = " + latex(_sc.learnability_window(law)) + r",\quad N(H) = "
            + latex(_sc.samples_needed(law)),
            "f decreasing, all symbols positive" + ("; ℓ > 1" if law == "logarithmic" else "")
            + "; H_N continuous, not clipped at 0",
            (TS + "test_window_solves_threshold_equation", TS + "test_window_matches_spec_table",
             TS + "test_samples_needed_is_the_inverse", TP + "test_measured_window_matches_derived")))
        out.append(Derivation(
            "scaling", f"{law} envelope: growth and dependence on κ ({_sc.regime(law)})",
            r"\frac{d\,q(H_N)}{d\log N} = " + latex(_sc.growth_exponent(law))
            + r",\qquad \frac{\partial H_N}{\partial\kappa} = " + latex(_sc.window_kappa_derivative(law)),
            "q = H_N, log H_N, log log H_N for the exponential, power, logarithmic law; the sign "
            f"of ∂H_N/∂κ is negative for N > 1 (SymPy: {_sc.window_shrinks_with_kappa(law)})",
            (TS + "test_growth_exponents_against_finite_differences",
             TS + "test_heavier_tails_shrink_the_window_symbolic",
             TP + "test_mutation_alpha_for_kappa_in_theory_fails")))
    return out


def derivations() -> list:
    """Every derived result as a :class:`Derivation`, in the order of docs/theory.md §4.1–4.4."""
    return _cell_items() + _expansion_items() + _stable_items() + _scaling_items()


_HEADINGS = {
    "cells": ("1. Cells and their one-step Jacobians (theory/cells.py, docs/theory.md §4.1)",
              "SymPy differentiates each update map (H = 2, D = 1) with `jacobian`; the compact forms "
              "below are built from the cell's gate expressions and equal that derivative at "
              "seeded random points, with and without LayerNorm (checked every time this file "
              "is generated, and by the test named). Definitions: docs/cells.md §1.7."),
    "expansion": ("2. Expansions of Jacobian products (theory/expansion.py, docs/theory.md §4.2)",
                  "Coefficients of ε^k are derived as (1/k!) d^kF/dε^k at ε = 0 and cross-checked "
                  "against `expand(F).coeff(ε, k)`. Definitions: docs/diagnostics.md §2.3, §2.10."),
    "stable": ("3. Heavy tails and concentration (theory/stable.py, docs/theory.md §4.3)",
               "From the characteristic function of a symmetric α-stable law. Definitions: "
               "docs/statistics.md §3.1."),
    "scaling": ("4. Sample complexity and the learnability window (theory/scaling.py, docs/theory.md §4.4)",
                "SymPy solves SNR = ε for N and f(ℓ) = A N^{−1/κ} for ℓ. Definitions: "
                "docs/statistics.md §3.3."),
}


def markdown(items=None) -> str:
    """The text of docs/derivations.md."""
    items = derivations() if items is None else items
    n_checked = check_compact_jacobians()
    lines = ["# Derivations (generated)", "",
             "<!-- Generated by `python -m theory`; do not edit. tests/test_docs.py fails when "
             "this file is stale. -->", "",
             "Every closed form that the SymPy package `theory` derives, in compact notation, "
             "with the assumptions it rests on and the tests that hold it against lwsim's code or "
             "simulations. How each module derives its results: [theory.md](theory.md).", "",
             f"The compact Jacobians of §1 were compared with SymPy's derivative for "
             f"{n_checked} cell configurations while this page was generated.", ""]
    section = None
    for d in items:
        if d.section != section:
            section = d.section
            head, intro = _HEADINGS[section]
            lines += [f"## {head}", "", intro, ""]
        lines += [f"**{d.title}**", "", "$$", d.latex, "$$", ""]
        if d.assumptions:
            lines += [f"*Assumptions:* {d.assumptions}.", ""]
        if d.tests:
            lines += ["*Checked by:* " + ", ".join(f"`{t}`" for t in d.tests) + ".", ""]
    return "\n".join(lines).rstrip() + "\n"


def write(path=DOCS_PATH) -> pathlib.Path:
    """Write docs/derivations.md (or ``path``) and return its path."""
    path = pathlib.Path(path)
    text = markdown()
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
