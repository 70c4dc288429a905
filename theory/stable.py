"""Heavy tails and concentration (docs/theory.md §4.3), derived from the characteristic function.

A symmetric α-stable (SαS) variable with scale σ has φ(t) = exp(−σ^α |t|^α), 1 < α ≤ 2.
The mean of N i.i.d. copies has φ_N(t) = φ(t/N)^N; writing φ_N(t) = exp(−σ_N^α |t|^α) and
solving for σ_N (SymPy ``solve``) gives σ_N = σ N^{1/α − 1}. The concentration exponent κ_α is
*defined* by σ_N = σ N^{−1/κ_α}; solving 1/α − 1 = −1/κ for κ gives κ_α = α/(α − 1).
(φ is even, so the derivation is done for t > 0.)
"""
from __future__ import annotations

import functools

import sympy as sp

__all__ = [
    "alpha", "sigma", "N", "t", "kappa",
    "characteristic_function",
    "sample_mean_characteristic_function",
    "sample_mean_scale",
    "mean_scale_exponent",
    "kappa_alpha",
    "alpha_of_kappa",
    "sample_mean_scale_kappa",
    "dkappa_dalpha",
    "kappa_fn",
    "sample_mean_scale_fn",
    "characteristic_function_fn",
]

alpha = sp.Symbol("alpha", positive=True)
sigma = sp.Symbol("sigma", positive=True)
N = sp.Symbol("N", positive=True)
t = sp.Symbol("t", positive=True)
kappa = sp.Symbol("kappa", positive=True)
_sigma_N = sp.Symbol("sigma_N", positive=True)


def characteristic_function() -> sp.Expr:
    """φ(t) = exp(−σ^α |t|^α) of SαS(α, σ) (the definition; docs/theory.md §4.3)."""
    return sp.exp(-sigma**alpha * sp.Abs(t) ** alpha)


@functools.lru_cache(maxsize=None)
def sample_mean_characteristic_function() -> sp.Expr:
    """φ of the mean of N i.i.d. copies: φ(t/N)^N, simplified (docs/theory.md §4.3)."""
    return sp.simplify(sp.powsimp(characteristic_function().subs(t, t / N) ** N, force=True))


@functools.lru_cache(maxsize=None)
def sample_mean_scale() -> sp.Expr:
    """σ_N solving log φ(t/N)^N = −σ_N^α t^α  ->  σ N^{1/α − 1} (docs/theory.md §4.3)."""
    lhs = sp.expand_log(sp.log(characteristic_function().subs(t, t / N) ** N), force=True)
    sol = sp.solve(sp.Eq(lhs, -_sigma_N**alpha * t**alpha), _sigma_N)
    if len(sol) != 1:
        raise RuntimeError(f"unexpected solutions {sol}")
    return sp.powdenest(sp.powsimp(sol[0], force=True), force=True)


@functools.lru_cache(maxsize=None)
def mean_scale_exponent() -> sp.Expr:
    """d log σ_N / d log N  ->  1/α − 1 = (1 − α)/α (docs/theory.md §4.3)."""
    u = sp.Symbol("u", real=True)
    return sp.simplify(sp.diff(sp.log(sample_mean_scale().subs(N, sp.exp(u))), u))


@functools.lru_cache(maxsize=None)
def kappa_alpha() -> sp.Expr:
    """κ_α from σ_N = σ N^{−1/κ}: solve d log σ_N/d log N = −1/κ for κ -> α/(α − 1).

    See docs/theory.md §4.3.
    """
    sol = sp.solve(sp.Eq(mean_scale_exponent(), -1 / kappa), kappa)
    if len(sol) != 1:
        raise RuntimeError(f"unexpected solutions {sol}")
    return sp.simplify(sol[0])


@functools.lru_cache(maxsize=None)
def alpha_of_kappa() -> sp.Expr:
    """Inverse of κ_α: α = κ/(κ − 1) (docs/theory.md §4.3)."""
    sol = sp.solve(sp.Eq(kappa, kappa_alpha()), alpha)
    if len(sol) != 1:
        raise RuntimeError(f"unexpected solutions {sol}")
    return sol[0]


@functools.lru_cache(maxsize=None)
def sample_mean_scale_kappa() -> sp.Expr:
    """σ_N written with κ: substitute α = α(κ) -> σ N^{−1/κ} (docs/theory.md §4.3)."""
    e = sample_mean_scale().subs(alpha, alpha_of_kappa())
    return sp.powsimp(sp.simplify(e), force=True)


@functools.lru_cache(maxsize=None)
def dkappa_dalpha() -> sp.Expr:
    """dκ_α/dα = −1/(α−1)² < 0: heavier tails (smaller α) mean larger κ (docs/theory.md §4.3)."""
    return sp.simplify(sp.diff(kappa_alpha(), alpha))


def kappa_fn():
    """NumPy κ(α) = α/(α − 1) (docs/theory.md §4.3)."""
    return sp.lambdify([alpha], kappa_alpha(), modules="numpy")


def sample_mean_scale_fn():
    """NumPy σ_N(sigma, N, alpha) = σ N^{1/α − 1} (keyword names sigma, N, alpha).

    See docs/theory.md §4.3.
    """
    return sp.lambdify([sigma, N, alpha], sample_mean_scale(), modules="numpy")


def characteristic_function_fn():
    """NumPy φ(t, sigma, alpha) of SαS (docs/theory.md §4.3)."""
    return sp.lambdify([t, sigma, alpha], characteristic_function(), modules="numpy")
