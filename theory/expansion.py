"""First-order (Fréchet) expansion of Jacobian products and [B]'s identities (docs/theory.md §4.2).

Everything is derived by SymPy from definitions:

* non-commutative products Π_{i=1}^{n}(A_i + εB_i): ε-coefficients by ``expand``/``coeff`` and,
  independently, by ``diff`` in ε at 0 (the product rule; scales to large n without the 2^n
  expansion);
* the diagonal-leak specialisation Π_j (d_j + r_j): ``series`` in a scaling ε of the r_j for a
  concrete n, and for a generic n by differentiating the log-space form
  exp(Σ_j log(d_j + εr_j)) (which is also docs/diagnostics.md §2.3's prefix-sum formula);
* the linearised constant-gate transport ((1−s)I + sW)^ℓ with a commuting scalar stand-in w for W:
  first order by ``series``; the general binomial coefficient by an induction step (``diff``)
  solved with ``rsolve``; the remainder as the Σ_{k≥2} tail;
* the leaky-integrator / heavy-ball identities: unrolling the recurrences by iteration, and the
  kernels by ``rsolve``; the exponential lag schedule and its time constant by ``product`` and
  ``solve``.

Each result is a SymPy expression; the ``*_fn`` functions give NumPy evaluators.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp

__all__ = [
    "eps",
    "ProductExpansion",
    "product_expansion",
    "product_coefficient",
    "first_order_coefficient",
    "second_order_coefficient",
    "first_order_closed_form",
    "second_order_closed_form",
    "evaluate_words",
    "first_order_numeric",
    "second_order_numeric",
    "product_numeric",
    "GammaExpansion",
    "gamma_expansion",
    "gamma_general",
    "gamma_fn",
    "gamma_zero_order_fn",
    "ConstGateTransport",
    "constgate_transport",
    "constgate_exact_numeric",
    "constgate_first_order_numeric",
    "constgate_remainder_numeric",
    "constgate_remainder_bound_fn",
    "leaky_unrolled",
    "leaky_kernel",
    "leaky_initial_factor",
    "heavy_ball_unrolled",
    "heavy_ball_kernel",
    "leaky_over_heavy_ball",
    "lag_schedule",
    "time_constant",
    "time_constant_fn",
]

#: the commuting bookkeeping parameter of every expansion
eps = sp.Symbol("epsilon")
s = sp.Symbol("s", positive=True)
beta = sp.Symbol("beta", positive=True)
ell = sp.Symbol("ell", integer=True, positive=True)
k = sp.Symbol("k", integer=True, nonnegative=True)
i_ = sp.Symbol("i", integer=True, nonnegative=True)
w = sp.Symbol("w")  # commuting scalar stand-in for W


# ============================================================================================
# 1. Π_{i=1}^{n} (A_i + ε B_i) with non-commutative symbols
# ============================================================================================
@dataclass(frozen=True)
class ProductExpansion:
    """Result of :func:`product_expansion`: the product Π (A_i + εB_i) and its expansion.

    See docs/theory.md §4.2.
    """
    n: int
    A: tuple  # non-commutative symbols A_1..A_n (product order: A_1 leftmost)
    B: tuple
    product: sp.Expr  # Π (A_i + ε B_i), unexpanded
    expanded: sp.Expr  # full expansion: polynomial in ε with word coefficients


def _nc_symbols(n: int):
    A = sp.symbols(f"A_1:{n + 1}", commutative=False)
    B = sp.symbols(f"B_1:{n + 1}", commutative=False)
    return tuple(A), tuple(B)


@functools.lru_cache(maxsize=None)
def product_expansion(n: int) -> ProductExpansion:
    """Π_{i=1}^{n}(A_i + εB_i) and its full ``expand`` (2^n words; keep n ≲ 10).

    See docs/theory.md §4.2.
    """
    if n < 1:
        raise ValueError("n >= 1")
    A, B = _nc_symbols(n)
    prod = sp.Mul(*[a + eps * b for a, b in zip(A, B)])
    return ProductExpansion(n=n, A=A, B=B, product=prod, expanded=sp.expand(prod))


@functools.lru_cache(maxsize=None)
def product_coefficient(n: int, order: int) -> sp.Expr:
    """Coefficient of ε^order in the expanded product (``expand`` + ``coeff``).

    See docs/theory.md §4.2.
    """
    return product_expansion(n).expanded.coeff(eps, order)


@functools.lru_cache(maxsize=None)
def _taylor_coefficient(n: int, order: int) -> sp.Expr:
    """(1/order!) d^order/dε^order Π(A_i + εB_i) at ε = 0, by ``diff`` (product rule): O(n^order)
    words, no 2^n expansion."""
    A, B = _nc_symbols(n)
    prod = sp.Mul(*[a + eps * b for a, b in zip(A, B)])
    d = sp.diff(prod, eps, order) if order else prod
    return sp.expand(d.subs(eps, 0) / sp.factorial(order))


def first_order_coefficient(n: int) -> sp.Expr:
    """L₁ (ε¹ coefficient), derived by differentiating the product in ε at 0.

    See docs/theory.md §4.2.
    """
    return _taylor_coefficient(n, 1)


def second_order_coefficient(n: int) -> sp.Expr:
    """ε² coefficient, derived as (1/2) d²/dε² of the product at 0 (docs/theory.md §4.2)."""
    return _taylor_coefficient(n, 2)


def first_order_closed_form(n: int) -> sp.Expr:
    """The documented statement L₁ = Σ_i (Π_{j<i} A_j) B_i (Π_{j>i} A_j), built for comparison
    with the derivations (tests check they are identical).

    See docs/theory.md §4.2.
    """
    A, B = _nc_symbols(n)
    return sp.Add(*[sp.Mul(*A[:i], B[i], *A[i + 1:]) for i in range(n)])


def second_order_closed_form(n: int) -> sp.Expr:
    """Σ_{i<k} (Π_{j<i}A_j) B_i (Π_{i<j<k}A_j) B_k (Π_{j>k}A_j) (for comparison).

    See docs/theory.md §4.2.
    """
    A, B = _nc_symbols(n)
    terms = [sp.Mul(*A[:i], B[i], *A[i + 1:m], B[m], *A[m + 1:])
             for i in range(n) for m in range(i + 1, n)]
    return sp.Add(*terms) if terms else sp.S.Zero


def _word_structure(expr: sp.Expr, n: int):
    """[(coefficient, [("A"|"B", index), ...]), ...] for a sum of words in A_i, B_i."""
    A, B = _nc_symbols(n)
    lookup = {a: ("A", i) for i, a in enumerate(A)}
    lookup.update({b: ("B", i) for i, b in enumerate(B)})
    out = []
    for term in sp.Add.make_args(sp.expand(expr)):
        if term == 0:
            continue
        c, nc = term.args_cnc()
        coef = float(sp.Mul(*c))
        word = []
        for f in nc:
            base, exp = f.as_base_exp()
            word += [lookup[base]] * int(exp)
        out.append((coef, word))
    return out


def evaluate_words(expr: sp.Expr, As, Bs) -> np.ndarray:
    """Evaluate a (commutative-coefficient) sum of words in A_i, B_i by substituting matrices:
    each word A_1 B_2 A_3 ... becomes the matrix product As[0] @ Bs[1] @ As[2] @ ...

    ``As``, ``Bs``: sequences of n square arrays (same shape), index i ↔ A_{i+1}, B_{i+1}.

    See docs/theory.md §4.2.
    """
    As = [np.asarray(a, dtype=np.float64) for a in As]
    Bs = [np.asarray(b, dtype=np.float64) for b in Bs]
    n = len(As)
    if len(Bs) != n:
        raise ValueError("As and Bs must have the same length")
    eye = np.eye(As[0].shape[0])
    mats = {"A": As, "B": Bs}
    total = np.zeros_like(eye)
    for coef, word in _word_structure_cached(expr, n):
        m = eye
        for kind, idx in word:
            m = m @ mats[kind][idx]
        total = total + coef * m
    return total


@functools.lru_cache(maxsize=256)
def _word_structure_cached(expr, n):
    return tuple(_word_structure(expr, n))


def first_order_numeric(As, Bs) -> np.ndarray:
    """L₁ evaluated on matrices through the derived word structure (n = len(As)).

    See docs/theory.md §4.2.
    """
    return evaluate_words(first_order_coefficient(len(As)), As, Bs)


def second_order_numeric(As, Bs) -> np.ndarray:
    """ε² coefficient evaluated on matrices through the derived word structure.

    See docs/theory.md §4.2.
    """
    return evaluate_words(second_order_coefficient(len(As)), As, Bs)


def product_numeric(As, Bs, epsilon: float) -> np.ndarray:
    """F(ε) = Π_i (A_i + εB_i) numerically (A_1 leftmost), the reference for the expansions.

    See docs/theory.md §4.2.
    """
    out = np.eye(np.asarray(As[0]).shape[0])
    for a, b in zip(As, Bs):
        out = out @ (np.asarray(a, np.float64) + epsilon * np.asarray(b, np.float64))
    return out


# ============================================================================================
# 2. diagonal-leak specialisation: Γ of docs/diagnostics.md §2.3
# ============================================================================================
@dataclass(frozen=True)
class GammaExpansion:
    """Result of :func:`gamma_expansion`: Γ⁰, the first-order expansion and Γ.

    See docs/theory.md §4.2.
    """
    n: int
    d: tuple  # leaks d_1..d_n
    r: tuple  # diagonal corrections r_1..r_n
    zero_order: sp.Expr  # Γ⁰ = Π d_j
    first_order: sp.Expr  # Π d_j + Σ_j r_j Π_{k≠j} d_k  (series in ε, ε → 1)
    gamma: sp.Expr  # the same, factored as Π d_j · (1 + Σ r_j/d_j)
    relative: sp.Expr  # Γ/Γ⁰ = 1 + Σ r_j/d_j


@functools.lru_cache(maxsize=None)
def gamma_expansion(n: int) -> GammaExpansion:
    """First-order expansion of Π_{j=1}^{n}(d_j + r_j) in the r_j (scaling ε on r, ``series`` to
    order 1, ε → 1), factored by Γ⁰ = Π d_j.

    See docs/theory.md §4.2.
    """
    d = sp.symbols(f"d_1:{n + 1}", nonzero=True)
    r = sp.symbols(f"r_1:{n + 1}")
    F = sp.Mul(*[dj + eps * rj for dj, rj in zip(d, r)])
    first = sp.series(F, eps, 0, 2).removeO().subs(eps, 1)
    zero = F.subs(eps, 0)
    relative = sp.expand(sp.expand(first) / zero)  # = 1 + Σ r_j/d_j
    gamma = sp.Mul(zero, relative, evaluate=False)
    return GammaExpansion(n=n, d=tuple(d), r=tuple(r), zero_order=zero,
                          first_order=sp.expand(first), gamma=gamma, relative=relative)


@functools.lru_cache(maxsize=None)
def gamma_general():
    """Generic-n derivation in log space (docs/diagnostics.md §2.3's prefix-sum form): with
    F(ε) = exp(Σ_j log(d_j + εr_j)), F(0) + εF'(0) at ε = 1 gives
    exp(Σ log d_j) · (1 + Σ r_j/d_j) = Π d_j (1 + Σ r_j/d_j).

    Returns (Gamma, Gamma0) with ``IndexedBase`` d, r and symbolic n (d_j > 0).
    """
    n = sp.Symbol("n", integer=True, positive=True)
    j = sp.Symbol("j", integer=True, positive=True)
    d = sp.IndexedBase("d", positive=True)
    r = sp.IndexedBase("r", real=True)
    S = sp.Sum(sp.log(d[j] + eps * r[j]), (j, 1, n))
    F = sp.exp(S)
    F0 = F.subs(eps, 0)
    F1 = sp.diff(F, eps).subs(eps, 0).doit()
    first = (F0 + F1).subs(sp.exp(sp.Sum(sp.log(d[j]), (j, 1, n))),
                           sp.Product(d[j], (j, 1, n)))
    zero = F0.subs(sp.exp(sp.Sum(sp.log(d[j]), (j, 1, n))), sp.Product(d[j], (j, 1, n)))
    return sp.factor_terms(first), zero, (n, j, d, r)


@functools.lru_cache(maxsize=None)
def _gamma_lambdas(n: int):
    g = gamma_expansion(n)
    f1 = sp.lambdify([*g.d, *g.r], g.gamma, modules="numpy")
    f0 = sp.lambdify([*g.d], g.zero_order, modules="numpy")
    return f1, f0


def gamma_fn(n: int):
    """NumPy Γ(d, r) for arrays d, r of shape (n, ...) (leading axis = the n factors).

    See docs/theory.md §4.2.
    """
    f1, _ = _gamma_lambdas(n)

    def gamma(d, r):
        d = np.asarray(d, np.float64)
        r = np.asarray(r, np.float64)
        if d.shape[0] != n or r.shape[0] != n:
            raise ValueError(f"leading axis must be n={n}")
        return f1(*d, *r)

    return gamma


def gamma_zero_order_fn(n: int):
    """NumPy Γ⁰(d) = Π d_j for d of shape (n, ...) (docs/theory.md §4.2)."""
    _, f0 = _gamma_lambdas(n)

    def gamma0(d):
        d = np.asarray(d, np.float64)
        if d.shape[0] != n:
            raise ValueError(f"leading axis must be n={n}")
        return f0(*d)

    return gamma0


# ============================================================================================
# 3. linearised constant-gate transport ((1−s)I + sW)^ℓ
# ============================================================================================
@dataclass(frozen=True)
class ConstGateTransport:
    """Result of :func:`constgate_transport`: exact, first-order and remainder of M_ℓ.

    See docs/theory.md §4.2.
    """
    exact: sp.Expr  # ((1−s) + s w)^ℓ, w the commuting stand-in for W
    first_order: sp.Expr  # (1−s)^ℓ + ℓ s (1−s)^{ℓ−1} w
    coefficient: sp.Expr  # a_k(ℓ, s): coefficient of w^k (binomial)
    remainder: sp.Expr  # Σ_{k=2}^{ℓ} a_k w^k
    remainder_closed: sp.Expr  # exact − first_order (the same, un-summed)
    induction_ratio: sp.Expr  # c_{k+1}/c_k of the k-th derivative, from diff


@functools.lru_cache(maxsize=None)
def constgate_transport() -> ConstGateTransport:
    """Derive exact / first-order / remainder of M_ℓ = ((1−s)I + sW)^ℓ (tanh → identity).

    I and W commute, so M_ℓ is the scalar polynomial ((1−s) + s w)^ℓ evaluated at w = W.
    * first order in W: ``series`` in ε of ((1−s) + ε s w)^ℓ to order 1, ε → 1;
    * general coefficient: the k-th w-derivative is c_k ((1−s)+sw)^{ℓ−k}; one more ``diff``
      gives the recurrence c_{k+1} = s(ℓ−k) c_k, c_0 = 1, solved by ``rsolve``;
      a_k = c_k (1−s)^{ℓ−k}/k! (Taylor at w = 0) = binomial(ℓ,k) s^k (1−s)^{ℓ−k};
    * remainder: Σ_{k=2}^{ℓ} a_k w^k (= exact − first order).

    See docs/theory.md §4.2.
    """
    base = (1 - s) + s * w
    exact = base**ell
    first = sp.series(((1 - s) + eps * s * w) ** ell, eps, 0, 2).removeO().subs(eps, 1)
    first = sp.expand(sp.powsimp(sp.expand(first)))
    ck = sp.Symbol("c_k")
    ratio = sp.simplify(sp.diff(ck * base ** (ell - k), w) / (ck * base ** (ell - k - 1)))
    c = sp.Function("c")
    ck_sol = sp.rsolve(c(k + 1) - ratio * c(k), c(k), {c(0): 1})
    a_k = sp.simplify(ck_sol * base.subs(w, 0) ** (ell - k) / sp.factorial(k))
    remainder = sp.Sum(a_k * w**k, (k, 2, ell))
    return ConstGateTransport(exact=exact, first_order=first, coefficient=a_k,
                              remainder=remainder, remainder_closed=exact - first,
                              induction_ratio=ratio)


@functools.lru_cache(maxsize=None)
def _constgate_lambdas():
    t = constgate_transport()
    c0 = sp.lambdify([s, ell], t.first_order.coeff(w, 0), modules="numpy")
    c1 = sp.lambdify([s, ell], t.first_order.coeff(w, 1), modules="numpy")
    import scipy.special

    ak = sp.lambdify([s, ell, k], t.coefficient,
                     modules=[{"binomial": scipy.special.binom}, "numpy"])
    bound = sp.lambdify([s, ell, w], t.remainder_closed, modules="numpy")
    return c0, c1, ak, bound


def constgate_exact_numeric(W, s_val: float, ell_val: int) -> np.ndarray:
    """M_ℓ = ((1−s)I + sW)^ℓ by numpy matrix power (the reference; docs/theory.md §4.2)."""
    W = np.asarray(W, np.float64)
    return np.linalg.matrix_power((1 - s_val) * np.eye(W.shape[0]) + s_val * W, int(ell_val))


def constgate_first_order_numeric(W, s_val: float, ell_val: int) -> np.ndarray:
    """The derived first-order transport c₀(s,ℓ) I + c₁(s,ℓ) W (docs/theory.md §4.2)."""
    c0, c1, _, _ = _constgate_lambdas()
    W = np.asarray(W, np.float64)
    return c0(s_val, ell_val) * np.eye(W.shape[0]) + c1(s_val, ell_val) * W


def constgate_remainder_numeric(W, s_val: float, ell_val: int) -> np.ndarray:
    """The derived remainder Σ_{k=2}^{ℓ} a_k(ℓ,s) W^k (docs/theory.md §4.2)."""
    _, _, ak, _ = _constgate_lambdas()
    W = np.asarray(W, np.float64)
    out = np.zeros_like(W)
    Wk = W @ W
    for kk in range(2, int(ell_val) + 1):
        out = out + ak(s_val, int(ell_val), kk) * Wk
        Wk = Wk @ W
    return out


def constgate_remainder_bound_fn():
    """f(s, ell, w) = ((1−s)+s w)^ℓ − (1−s)^ℓ − ℓ s(1−s)^{ℓ−1} w; at w = ‖W‖ (any submultiplicative
    norm) it bounds ‖remainder‖ since every a_k ≥ 0.

    See docs/theory.md §4.2.
    """
    return _constgate_lambdas()[3]


# ============================================================================================
# 4. [B]'s identities: leaky integrator, heavy ball, exponential lag schedule
# ============================================================================================
def _u_symbols(n: int):
    return sp.symbols(f"u_1:{n + 1}")


@functools.lru_cache(maxsize=None)
def leaky_unrolled(n: int):
    """Iterate h_t = (1−s)h_{t−1} + s u_t from h_0 for n steps (symbolic). Returns
    (h_n expanded, (u_1..u_n), h_0).

    See docs/theory.md §4.2.
    """
    u = _u_symbols(n)
    h0 = sp.Symbol("h_0")
    h = h0
    for t in range(n):
        h = (1 - s) * h + s * u[t]
    return sp.expand(h), u, h0


@functools.lru_cache(maxsize=None)
def leaky_kernel() -> sp.Expr:
    """Weight of u_{t−i} in h_t: the impulse response c_i = (1−s)c_{i−1}, c_0 = s (``rsolve``)
    -> s (1−s)^i, in the symbol ``i``.

    See docs/theory.md §4.2.
    """
    c = sp.Function("c")
    return sp.rsolve(c(i_) - (1 - s) * c(i_ - 1), c(i_), {c(0): s})


@functools.lru_cache(maxsize=None)
def leaky_initial_factor() -> sp.Expr:
    """Weight of h_0 in h_t: c_t = (1−s)c_{t−1}, c_0 = 1 -> (1−s)^t (in the symbol ``i`` = t).

    See docs/theory.md §4.2.
    """
    c = sp.Function("c")
    return sp.rsolve(c(i_) - (1 - s) * c(i_ - 1), c(i_), {c(0): 1})


@functools.lru_cache(maxsize=None)
def heavy_ball_unrolled(n: int):
    """Iterate the momentum buffer v_k = β v_{k−1} + g_k from v_0 = 0 for n steps.
    Returns (v_n expanded, (g_1..g_n)).

    See docs/theory.md §4.2.
    """
    g = sp.symbols(f"g_1:{n + 1}")
    v = sp.S.Zero
    for t in range(n):
        v = beta * v + g[t]
    return sp.expand(v), g


@functools.lru_cache(maxsize=None)
def heavy_ball_kernel() -> sp.Expr:
    """Weight of g_{k−i} in v_k: c_i = β c_{i−1}, c_0 = 1 (``rsolve``) -> β^i.

    See docs/theory.md §4.2.
    """
    c = sp.Function("c")
    return sp.rsolve(c(i_) - beta * c(i_ - 1), c(i_), {c(0): 1})


@functools.lru_cache(maxsize=None)
def leaky_over_heavy_ball() -> sp.Expr:
    """Leaky kernel / heavy-ball kernel at β = 1 − s: the constant s, i.e. the leaky state is
    s × (heavy-ball sum of the inputs with β = 1 − s).

    See docs/theory.md §4.2.
    """
    return sp.simplify(leaky_kernel() / heavy_ball_kernel().subs(beta, 1 - s))


@functools.lru_cache(maxsize=None)
def lag_schedule() -> sp.Expr:
    """Zero-order lag factor of a constant gate: Π_{j=1}^{ℓ} d_j with d_j = 1 − s (``product``)
    -> μ_ℓ ∝ (1−s)^ℓ.

    See docs/theory.md §4.2.
    """
    j = sp.Symbol("j", integer=True, positive=True)
    return sp.product(1 - s, (j, 1, ell))


@functools.lru_cache(maxsize=None)
def time_constant() -> sp.Expr:
    """τ with μ_ℓ = exp(−ℓ/τ): solve log μ_ℓ = −ℓ/τ (0 < s < 1) -> −1/log(1−s).

    See docs/theory.md §4.2.
    """
    tau = sp.Symbol("tau", positive=True)
    logmu = sp.expand_log(sp.log(lag_schedule()), force=True)
    sol = sp.solve(sp.Eq(logmu, -ell / tau), tau)
    if len(sol) != 1:
        raise RuntimeError(f"unexpected solutions {sol}")
    return sol[0]


def time_constant_fn():
    """NumPy τ(s) = −1/log(1−s) (docs/theory.md §4.2)."""
    return sp.lambdify([s], time_constant(), modules="numpy")
