"""Symbolic one-step update maps and exact Jacobians of lwsim's cells (docs/cells.md, docs/theory.md §4.1).

Every cell of ``docs/cells.md`` is written down *once*, as its update equations, with symbolic
weights whose element names follow ``docs/conventions.md`` (``W_h[0,1]``, ``b_x[0]``, ...).
The Jacobian ∂h_t/∂h_{t−1} (for the LSTM the 2H×2H Jacobian of the state (h, c)) is obtained by
SymPy differentiation of that update map -- it is never written by hand here -- so it is an
independent check of lwsim's hand-written Jacobians (docs/cells.md §1.7).

Public API
----------
``update_map(cell, H, D, layernorm, bias, convention, s)`` -> :class:`CellMap`
    the symbolic one-step map (new state as a column Matrix) and its ordered symbols.
``jacobian(cell, H, D, layernorm, bias, convention, s)`` -> ``(J, syms)``
    J the S×S SymPy Matrix ∂state_t/∂state_{t−1}, syms the :class:`CellSymbols` (ordered).
``jacobian_fn(...)`` -> ``f(params, x, h_prev, c_prev=None) -> (S, S) ndarray``
``step_fn(...)``     -> ``f(params, x, h_prev, c_prev=None) -> h_t`` (``(h_t, c_t)`` for the LSTM)
``param_shapes(cell, H, D, layernorm, bias, convention)`` -> ``{name: shape}`` (lwsim names).

``params`` is lwsim's parameter dict (extra keys such as ``W_out``/``b_out`` are ignored).
All derivations are cached (``functools.lru_cache``): SymPy is slow, the results are immutable.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

__all__ = [
    "CELLS",
    "LN_EPS",
    "CellSymbols",
    "CellMap",
    "param_shapes",
    "update_map",
    "jacobian",
    "jacobian_fn",
    "step_fn",
    "configurations",
]

CELLS = ("rnn", "constgate", "sharedgate", "diaggate", "gru", "lstm")
#: LayerNorm epsilon of docs/cells.md §1.4, kept exact (1e-5 = 1/100000) in the symbolic map.
LN_EPS = sp.Rational(1, 100000)


# --------------------------------------------------------------------------------------------
# parameter names and shapes (docs/conventions.md)
# --------------------------------------------------------------------------------------------
def _norm_cell(cell: str, convention: str) -> tuple[str, str]:
    cell = cell.lower()
    if cell not in CELLS:
        raise ValueError(f"unknown cell {cell!r}; expected one of {CELLS}")
    convention = convention.lower()
    if cell == "gru":
        if convention not in ("cho", "torch"):
            raise ValueError("gru convention must be 'cho' or 'torch'")
    else:
        convention = "cho"  # irrelevant for other cells; normalised for caching
    return cell, convention


def param_shapes(cell: str, H: int = 2, D: int = 1, layernorm: bool = False, bias: bool = True,
                 convention: str = "cho") -> dict[str, tuple[int, ...]]:
    """lwsim names and shapes of the parameters entering the one-step map (no readout).

    See docs/theory.md §4.1.
    """
    cell, convention = _norm_cell(cell, convention)
    shp: dict[str, tuple[int, ...]] = {}
    if cell in ("rnn", "constgate", "sharedgate", "diaggate"):
        shp.update(W_x=(H, D), b_x=(H,), W_h=(H, H))
        if cell == "sharedgate":
            shp.update(w_s=(D,), b_s=(1,), u_s=(H,))
        elif cell == "diaggate":
            shp.update(W_s=(H, D), b_s=(H,), U_s=(H, H))
    elif cell == "gru" and convention == "cho":
        for g in "zrg":
            shp[f"W_{g}"] = (H, D)
        for g in "zrg":
            shp[f"U_{g}"] = (H, H)
        for g in "zrg":
            shp[f"b_{g}"] = (H,)
    elif cell == "gru":  # torch
        if layernorm:
            raise ValueError("LayerNorm is not available for gru convention 'torch' (docs/cells.md §1.4)")
        for g in ("ir", "iz", "in"):
            shp[f"W_{g}"] = (H, D)
        for g in ("hr", "hz", "hn"):
            shp[f"W_{g}"] = (H, H)
        for g in ("ir", "iz", "in", "hr", "hz", "hn"):
            shp[f"b_{g}"] = (H,)
    else:  # lstm
        for g in "ifgo":
            shp[f"W_{g}"] = (H, D)
        for g in "ifgo":
            shp[f"U_{g}"] = (H, H)
        for g in "ifgo":
            shp[f"b_{g}"] = (H,)
    if not bias:
        shp = {k: v for k, v in shp.items() if not k.startswith("b_")}
    if layernorm:
        shp.update(ln_gamma=(H,), ln_beta=(H,))
    return shp


def configurations(H: int = 2, D: int = 1):
    """Every (cell, convention, layernorm, bias) combination of docs/cells.md (26 in all)."""
    out = []
    for cell in CELLS:
        convs = ("cho", "torch") if cell == "gru" else ("cho",)
        for conv in convs:
            for ln in (False, True):
                if ln and conv == "torch":
                    continue
                for bias in (True, False):
                    out.append((cell, conv, ln, bias))
    return out


# --------------------------------------------------------------------------------------------
# symbols
# --------------------------------------------------------------------------------------------
def _sym_array(name: str, shape: tuple[int, ...]) -> sp.Matrix:
    """Column Matrix (vectors) or Matrix (matrices) of real symbols named like ``W_h[0,1]``."""
    if len(shape) == 1:
        return sp.Matrix(shape[0], 1, lambda i, _: sp.Symbol(f"{name}[{i}]", real=True))
    r, c = shape
    return sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}[{i},{j}]", real=True))


@dataclass(frozen=True)
class CellSymbols:
    """Ordered symbols of a symbolic cell map.

    ``params``: {lwsim name: Matrix of element symbols} (vectors are H×1 columns);
    ``x``: D×1 input; ``h``: H×1 previous state; ``c``: H×1 previous cell state (LSTM) or None.
    ``state`` = h (then c) flattened: the variables the Jacobian differentiates against.
    ``args`` = state, then x, then every parameter element in ``param_shapes`` order (row-major):
    the positional argument order of the lambdified functions.

    See docs/theory.md §4.1.
    """
    params: dict
    x: sp.Matrix
    h: sp.Matrix
    c: sp.Matrix | None
    shapes: dict = field(default_factory=dict)

    @property
    def state(self) -> list[sp.Symbol]:
        out = list(self.h)
        if self.c is not None:
            out += list(self.c)
        return out

    @property
    def args(self) -> list[sp.Symbol]:
        out = self.state + list(self.x)
        for name in self.shapes:
            out += list(self.params[name])
        return out


@dataclass(frozen=True)
class CellMap:
    """Symbolic one-step map: ``new_state`` = (h_t) or (h_t; c_t) as an S×1 Matrix.

    See docs/theory.md §4.1.
    """
    cell: str
    convention: str
    layernorm: bool
    bias: bool
    H: int
    D: int
    s: sp.Expr | None
    syms: CellSymbols
    h_new: sp.Matrix
    c_new: sp.Matrix | None
    gates: dict

    @property
    def new_state(self) -> sp.Matrix:
        if self.c_new is None:
            return self.h_new
        return self.h_new.col_join(self.c_new)


# --------------------------------------------------------------------------------------------
# elementwise building blocks
# --------------------------------------------------------------------------------------------
def _sigmoid(v: sp.Matrix) -> sp.Matrix:
    return v.applyfunc(lambda a: 1 / (1 + sp.exp(-a)))


def _tanh(v: sp.Matrix) -> sp.Matrix:
    return v.applyfunc(sp.tanh)


def _had(a: sp.Matrix, b: sp.Matrix) -> sp.Matrix:
    return a.multiply_elementwise(b)


def _layernorm(a: sp.Matrix, gamma: sp.Matrix, beta: sp.Matrix) -> sp.Matrix:
    """LN(a) = γ ⊙ (a − mean a)/sqrt(var a + 1e−5) + β over the H units, biased variance."""
    H = a.rows
    mean = sum(a) / H
    cen = a.applyfunc(lambda v: v - mean)
    var = sum(v**2 for v in cen) / H
    sd = sp.sqrt(var + LN_EPS)
    return _had(gamma, cen / sd) + beta


def _to_s(s) -> sp.Expr:
    if isinstance(s, sp.Basic):
        return s
    return sp.Rational(str(s))  # 0.05 -> 1/20 exactly (decimal value, not the binary float)


# --------------------------------------------------------------------------------------------
# the update maps (docs/cells.md §1.1–1.3), written once
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _update_map(cell: str, H: int, D: int, layernorm: bool, bias: bool, convention: str,
                s) -> CellMap:
    shapes = param_shapes(cell, H, D, layernorm, bias, convention)
    P = {name: _sym_array(name, shp) for name, shp in shapes.items()}
    x = _sym_array("x", (D,))
    h = _sym_array("h", (H,))
    c = _sym_array("c", (H,)) if cell == "lstm" else None
    ones = sp.ones(H, 1)

    def b(name, n=H):
        return P[name] if name in P else sp.zeros(n, 1)

    def ln(a):
        return _layernorm(a, P["ln_gamma"], P["ln_beta"]) if layernorm else a

    gates: dict = {}
    c_new = None
    s_val = None
    if cell in ("rnn", "constgate", "sharedgate", "diaggate"):
        a = P["W_x"] * x + b("b_x") + P["W_h"] * h
        cand = _tanh(ln(a))
        gates["cand"] = cand
        if cell == "rnn":
            h_new = cand
        elif cell == "constgate":
            s_val = _to_s(s)
            h_new = (1 - s_val) * h + s_val * cand
        elif cell == "sharedgate":
            pre = (P["w_s"].T * x)[0, 0] + b("b_s", 1)[0, 0] + (P["u_s"].T * h)[0, 0]
            st = 1 / (1 + sp.exp(-pre))
            gates["s"] = st
            h_new = (1 - st) * h + st * cand
        else:  # diaggate
            st = _sigmoid(P["W_s"] * x + b("b_s") + P["U_s"] * h)
            gates["s"] = st
            h_new = _had(ones - st, h) + _had(st, cand)
    elif cell == "gru" and convention == "cho":
        z = _sigmoid(P["W_z"] * x + b("b_z") + P["U_z"] * h)
        r = _sigmoid(P["W_r"] * x + b("b_r") + P["U_r"] * h)
        g = _tanh(ln(P["W_g"] * x + b("b_g") + P["U_g"] * _had(r, h)))
        gates.update(z=z, r=r, g=g)
        h_new = _had(ones - z, h) + _had(z, g)
    elif cell == "gru":  # torch.nn.GRU
        r = _sigmoid(P["W_ir"] * x + b("b_ir") + P["W_hr"] * h + b("b_hr"))
        z = _sigmoid(P["W_iz"] * x + b("b_iz") + P["W_hz"] * h + b("b_hz"))
        n = _tanh(P["W_in"] * x + b("b_in") + _had(r, P["W_hn"] * h + b("b_hn")))
        gates.update(r=r, z=z, n=n)
        h_new = _had(ones - z, n) + _had(z, h)
    else:  # lstm (torch.nn.LSTM + optional LN on g)
        i = _sigmoid(P["W_i"] * x + b("b_i") + P["U_i"] * h)
        f = _sigmoid(P["W_f"] * x + b("b_f") + P["U_f"] * h)
        g = _tanh(ln(P["W_g"] * x + b("b_g") + P["U_g"] * h))
        o = _sigmoid(P["W_o"] * x + b("b_o") + P["U_o"] * h)
        gates.update(i=i, f=f, g=g, o=o)
        c_new = _had(f, c) + _had(i, g)
        h_new = _had(o, _tanh(c_new))
    syms = CellSymbols(params=P, x=x, h=h, c=c, shapes=shapes)
    return CellMap(cell=cell, convention=convention, layernorm=layernorm, bias=bias, H=H, D=D,
                   s=s_val, syms=syms, h_new=h_new, c_new=c_new, gates=gates)


def _key(cell, H, D, layernorm, bias, convention, s):
    cell, convention = _norm_cell(cell, convention)
    if cell != "constgate":
        s = None  # s only enters the constgate map; normalise for caching
    elif not isinstance(s, sp.Basic):
        s = float(s)
        if not 0.0 < s <= 1.0:
            raise ValueError("constgate s must lie in (0, 1]")
    return cell, int(H), int(D), bool(layernorm), bool(bias), convention, s


def update_map(cell: str, H: int = 2, D: int = 1, layernorm: bool = False, bias: bool = True,
               convention: str = "cho", s=0.05) -> CellMap:
    """The symbolic one-step map of ``cell`` (see :class:`CellMap`; docs/theory.md §4.1)."""
    return _update_map(*_key(cell, H, D, layernorm, bias, convention, s))


@functools.lru_cache(maxsize=None)
def _jacobian(*key) -> tuple[sp.Matrix, CellSymbols]:
    m = _update_map(*key)
    state = m.syms.state
    # the derivation: differentiate the update map w.r.t. the previous state (SymPy ``diff``)
    J = m.new_state.jacobian(state)
    return J, m.syms


def jacobian(cell: str, H: int = 2, D: int = 1, layernorm: bool = False, bias: bool = True,
             convention: str = "cho", s=0.05) -> tuple[sp.Matrix, CellSymbols]:
    """∂state_t/∂state_{t−1} as an S×S SymPy Matrix (S = H, or 2H for the LSTM, state (h, c)),
    and the ordered symbols. Row q, column p: ∂state_t[q]/∂state_{t−1}[p].

    See docs/theory.md §4.1.
    """
    return _jacobian(*_key(cell, H, D, layernorm, bias, convention, s))


# --------------------------------------------------------------------------------------------
# NumPy callables
# --------------------------------------------------------------------------------------------
def _flatten_args(syms: CellSymbols, params: dict, x, h_prev, c_prev) -> list[np.ndarray]:
    H = syms.h.rows
    D = syms.x.rows
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    h_prev = np.asarray(h_prev, dtype=np.float64).reshape(-1)
    if x.shape != (D,):
        raise ValueError(f"x must have shape ({D},), got {x.shape}")
    if h_prev.shape != (H,):
        raise ValueError(f"h_prev must have shape ({H},), got {h_prev.shape}")
    vals = list(h_prev)
    if syms.c is not None:
        c_prev = np.zeros(H) if c_prev is None else np.asarray(c_prev, np.float64).reshape(-1)
        if c_prev.shape != (H,):
            raise ValueError(f"c_prev must have shape ({H},), got {c_prev.shape}")
        vals += list(c_prev)
    vals += list(x)
    for name, shp in syms.shapes.items():
        if name not in params:
            raise KeyError(f"missing parameter {name!r} (expected shape {shp})")
        arr = np.asarray(params[name], dtype=np.float64)
        if arr.size != int(np.prod(shp)):
            raise ValueError(f"parameter {name!r} must have shape {shp}, got {arr.shape}")
        vals += list(arr.reshape(-1))  # row-major, like the symbol Matrix
    return vals


@functools.lru_cache(maxsize=None)
def _lambdified(kind: str, *key):
    if kind == "jac":
        expr, syms = _jacobian(*key)
    else:
        m = _update_map(*key)
        expr, syms = m.new_state, m.syms
    extra = expr.free_symbols - set(syms.args)
    if extra:
        raise ValueError(f"cannot lambdify: free symbols {sorted(map(str, extra))} are not inputs "
                         "(use a numeric s for the NumPy functions)")
    f = sp.lambdify(syms.args, expr, modules="numpy", cse=True)
    return f, syms


def jacobian_fn(cell: str, H: int = 2, D: int = 1, layernorm: bool = False, bias: bool = True,
                convention: str = "cho", s=0.05):
    """NumPy callable ``f(params, x, h_prev, c_prev=None) -> (S, S)`` of the derived Jacobian.

    ``params`` uses lwsim names and shapes (e.g. W_x (H,D), b_x (H,), W_h (H,H), w_s (D,),
    b_s (1,), u_s (H,)); ``x`` (D,), ``h_prev`` (H,), ``c_prev`` (H,) for the LSTM (default 0).

    See docs/theory.md §4.1.
    """
    key = _key(cell, H, D, layernorm, bias, convention, s)
    f, syms = _lambdified("jac", *key)
    S = len(syms.state)

    def jac(params, x, h_prev, c_prev=None):
        out = np.asarray(f(*_flatten_args(syms, params, x, h_prev, c_prev)), dtype=np.float64)
        return out.reshape(S, S)

    jac.__doc__ = f"SymPy-derived ∂state_t/∂state_(t-1) of {key[0]} {key[1:]}"
    return jac


def step_fn(cell: str, H: int = 2, D: int = 1, layernorm: bool = False, bias: bool = True,
            convention: str = "cho", s=0.05):
    """NumPy callable of the symbolic update map: ``f(params, x, h_prev, c_prev=None)`` returns
    h_t (H,), or the pair (h_t, c_t) for the LSTM.

    See docs/theory.md §4.1.
    """
    key = _key(cell, H, D, layernorm, bias, convention, s)
    f, syms = _lambdified("step", *key)
    Hn = syms.h.rows
    lstm = syms.c is not None

    def step(params, x, h_prev, c_prev=None):
        out = np.asarray(f(*_flatten_args(syms, params, x, h_prev, c_prev)),
                         dtype=np.float64).reshape(-1)
        if lstm:
            return out[:Hn], out[Hn:]
        return out

    step.__doc__ = f"SymPy one-step map of {key[0]} {key[1:]}"
    return step
