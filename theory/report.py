"""Every derived result as (section, title, LaTeX) -- used by ``python -m theory --latex``.

``python -m theory`` writes docs/derivations.md instead (:func:`theory.derivations.write`; the compact,
documented forms with assumptions and tests live in :mod:`theory.derivations`). The mathematics
behind each result: docs/theory.md §4.1–4.4.
"""
from __future__ import annotations

import sympy as sp

from . import cells as _cells
from . import expansion as _ex
from . import scaling as _sc
from . import stable as _st

__all__ = ["results", "render", "latex"]


_LATEX_NAMES = {"lam": r"\lambda", "ln_gamma": r"\gamma^{\mathrm{LN}}",
                "ln_beta": r"\beta^{\mathrm{LN}}"}


def _symbol_latex(name: str) -> str:
    """``W_h[0,1]`` -> ``{W_{h}}_{0 1}``, ``h[0]`` -> ``h_{0}``, ``lam`` -> ``\\lambda``."""
    if "[" not in name:
        return _LATEX_NAMES.get(name, sp.latex(sp.Symbol(name)))
    base, idx = name[:-1].split("[", 1)
    b = _LATEX_NAMES.get(base, sp.latex(sp.Symbol(base)))
    return "{%s}_{%s}" % (b, idx.replace(",", " "))


def latex(expr: sp.Expr) -> str:
    """sp.latex with lwsim element symbols and ``lam`` rendered readably (docs/derivations.md)."""
    names = {a: _symbol_latex(a.name) for a in expr.free_symbols if isinstance(a, sp.Symbol)}
    return sp.latex(expr, symbol_names=names)


def _eq(lhs: str, rhs: sp.Expr | str) -> str:
    r = rhs if isinstance(rhs, str) else latex(rhs)
    return f"{lhs} = {r}"


def _expansion_results(n: int):
    out = []
    out.append(("expansion", f"Product (n={n})", _eq(r"F(\epsilon)", _ex.product_expansion(n).product)))
    out.append(("expansion", f"epsilon^0 coefficient F_0 (n={n})",
                _eq("F_0", _ex.product_coefficient(n, 0))))
    out.append(("expansion", f"epsilon^1 coefficient L_1 (n={n})",
                _eq("L_1", _ex.first_order_coefficient(n))))
    out.append(("expansion", f"epsilon^2 coefficient (n={n})",
                _eq("L_2", _ex.second_order_coefficient(n))))
    g = _ex.gamma_expansion(n)
    out.append(("expansion", f"Gamma, diagonal leak (n={n})", _eq(r"\Gamma", g.gamma)))
    out.append(("expansion", f"Gamma^0 (n={n})", _eq(r"\Gamma^{0}", g.zero_order)))
    G, G0, _ = _ex.gamma_general()
    out.append(("expansion", "Gamma, generic n (log-space derivation)", _eq(r"\Gamma", G)))
    out.append(("expansion", "Gamma^0, generic n", _eq(r"\Gamma^{0}", G0)))
    t = _ex.constgate_transport()
    w = r"\;(w \to W)"
    out.append(("expansion", "constant gate: exact transport", _eq(r"M_\ell", t.exact) + w))
    out.append(("expansion", "constant gate: first order", _eq(r"M_\ell^{(1)}", t.first_order) + w))
    out.append(("expansion", "constant gate: induction ratio c_{k+1}/c_k",
                _eq(r"c_{k+1}/c_k", t.induction_ratio)))
    out.append(("expansion", "constant gate: coefficient of W^k", _eq("a_k", t.coefficient)))
    out.append(("expansion", "constant gate: remainder", _eq(r"M_\ell - M_\ell^{(1)}", t.remainder)))
    out.append(("expansion", "leaky state unrolled (n=3)", _eq("h_3", _ex.leaky_unrolled(3)[0])))
    out.append(("expansion", "leaky kernel (weight of u_{t-i})", _eq("c_i", _ex.leaky_kernel())))
    out.append(("expansion", "leaky initial factor (weight of h_0 in h_i)",
                _eq("c_i", _ex.leaky_initial_factor())))
    out.append(("expansion", "heavy-ball kernel (weight of g_{k-i})",
                _eq("b_i", _ex.heavy_ball_kernel())))
    out.append(("expansion", "leaky / heavy-ball kernel at beta = 1 - s",
                _eq(r"c_i / b_i|_{\beta=1-s}", _ex.leaky_over_heavy_ball())))
    out.append(("expansion", "constant-gate lag schedule", r"\mu_\ell \propto " + latex(_ex.lag_schedule())))
    out.append(("expansion", "time constant", _eq(r"\tau", _ex.time_constant())))
    return out


def _stable_results():
    return [
        ("stable", "characteristic function", _eq(r"\varphi(t)", _st.characteristic_function())),
        ("stable", "characteristic function of the sample mean",
         _eq(r"\varphi(t/N)^N", _st.sample_mean_characteristic_function())),
        ("stable", "scale of the sample mean", _eq(r"\sigma_N", _st.sample_mean_scale())),
        ("stable", "exponent d log sigma_N / d log N",
         _eq(r"\frac{d\log\sigma_N}{d\log N}", _st.mean_scale_exponent())),
        ("stable", "kappa_alpha", _eq(r"\kappa_\alpha", _st.kappa_alpha())),
        ("stable", "scale with kappa", _eq(r"\sigma_N", _st.sample_mean_scale_kappa())),
        ("stable", "d kappa / d alpha", _eq(r"\frac{d\kappa_\alpha}{d\alpha}", _st.dkappa_dalpha())),
    ]


def _scaling_results():
    out = [("scaling", "A", _eq("A", _sc.A_definition()))]
    for law in _sc.LAWS:
        out += [
            ("scaling", f"{law}: envelope", _eq(r"f(\ell)", _sc.envelope(law))),
            ("scaling", f"{law}: sample complexity", _eq(r"N(\ell)", _sc.sample_complexity(law))),
            ("scaling", f"{law}: learnability window", _eq("H_N", _sc.learnability_window(law))),
            ("scaling", f"{law}: samples needed for horizon H", _eq("N(H)", _sc.samples_needed(law))),
            ("scaling", f"{law}: growth exponent ({_sc.regime(law)})",
             _eq(r"\frac{d\,q(H_N)}{d\log N}", _sc.growth_exponent(law))),
            ("scaling", f"{law}: dH_N/dkappa (negative for N>1: "
                        f"{_sc.window_shrinks_with_kappa(law)})",
             _eq(r"\frac{\partial H_N}{\partial\kappa}", _sc.window_kappa_derivative(law))),
        ]
    return out


def _cell_results(H: int, D: int, layernorm: bool):
    out = []
    for cell, conv, ln, bias in _cells.configurations(H, D):
        if ln != layernorm or not bias:
            continue
        J, _ = _cells.jacobian(cell, H=H, D=D, layernorm=ln, bias=bias, convention=conv)
        name = f"{cell}" + (f" ({conv})" if cell == "gru" else "") + (" +LN" if ln else "")
        out.append(("cells", f"{name}: Jacobian, H={H}, D={D}",
                    _eq(r"\partial s_t/\partial s_{t-1}", J)))
    return out


def results(sections=("cells", "expansion", "stable", "scaling"), n: int = 3, H: int = 2,
            D: int = 1, layernorm: bool = False):
    """List of (section, title, latex) for the requested sections (docs/derivations.md)."""
    out = []
    if "cells" in sections:
        out += _cell_results(H, D, layernorm)
    if "expansion" in sections:
        out += _expansion_results(n)
    if "stable" in sections:
        out += _stable_results()
    if "scaling" in sections:
        out += _scaling_results()
    return out


def render(items) -> str:
    """The LaTeX text of (section, title, latex) items, one comment line per section.

    See docs/derivations.md.
    """
    lines = []
    section = None
    for sec, title, tex in items:
        if sec != section:
            lines.append(f"% ===== {sec} =====")
            section = sec
        lines.append(f"% {title}")
        lines.append(f"\\[ {tex} \\]")
    return "\n".join(lines)
