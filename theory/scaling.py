"""Sample complexity and the learnability window (docs/statistics.md §3.3, docs/theory.md §4.4), derived with SymPy.

Detection rule: lag ℓ is detectable with N samples iff SNR = |m(ℓ)| N^{1/κ}/σ > ε, with the
signal m(ℓ) = c f(ℓ). Solving SNR = ε for N gives the sample complexity
N(ℓ) = (εσ/(c f(ℓ)))^κ = A^κ f(ℓ)^{−κ}, A = εσ/c. The learnability window is
H_N = sup{ℓ : f(ℓ) ≥ A N^{−1/κ}}; for a decreasing envelope it is the root of
f(ℓ) = A N^{−1/κ}, obtained by ``solve`` for the three envelope laws

    "exponential"  f = C e^{−λℓ}        (parameter ``lam``)
    "power"        f = C ℓ^{−β}         (parameter ``beta``)
    "logarithmic"  f = C (log ℓ)^{−γ}   (parameter ``gamma``; ℓ > 1)

Growth exponents (``diff`` after N = e^u): dH_N/dlog N = 1/(λκ) (exponential law: logarithmic
growth), dlog H_N/dlog N = 1/(κβ) (power law: polynomial growth), dlog log H_N/dlog N = 1/(κγ)
(logarithmic law: exponential growth). ∂H_N/∂κ < 0 for N > 1: heavier tails (larger κ) shrink
every window. All symbols are positive.
"""
from __future__ import annotations

import functools

import sympy as sp

__all__ = [
    "LAWS", "N", "kappa", "C", "A", "lam", "beta", "gamma", "ell", "H",
    "epsilon", "sigma", "c",
    "law_parameter", "envelope", "envelope_fn", "A_definition", "snr",
    "sample_complexity", "learnability_window", "learnability_window_fn",
    "samples_needed", "samples_needed_fn", "growth_exponent", "growth_quantity", "regime",
    "window_kappa_derivative", "window_shrinks_with_kappa",
]

LAWS = ("exponential", "power", "logarithmic")

N = sp.Symbol("N", positive=True)
kappa = sp.Symbol("kappa", positive=True)
C = sp.Symbol("C", positive=True)
A = sp.Symbol("A", positive=True)
lam = sp.Symbol("lam", positive=True)
beta = sp.Symbol("beta", positive=True)
gamma = sp.Symbol("gamma", positive=True)
ell = sp.Symbol("ell", positive=True)
H = sp.Symbol("H", positive=True)
epsilon = sp.Symbol("epsilon", positive=True)  # detection threshold
sigma = sp.Symbol("sigma", positive=True)  # SαS scale of the matched statistic
c = sp.Symbol("c", positive=True)  # signal gain m(ℓ) = c f(ℓ)
_u = sp.Symbol("u", positive=True)  # log N (N > 1)

_PARAM = {"exponential": lam, "power": beta, "logarithmic": gamma}
_REGIME = {"exponential": "logarithmic growth: H_N linear in log N, slope 1/(lam*kappa)",
           "power": "polynomial growth: H_N ∝ N^(1/(kappa*beta))",
           "logarithmic": "exponential growth: log H_N ∝ N^(1/(kappa*gamma))"}


def _check(law: str) -> str:
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    return law


def law_parameter(law: str) -> sp.Symbol:
    """The decay parameter of the law: lam, beta or gamma (docs/theory.md §4.4)."""
    return _PARAM[_check(law)]


def envelope(law: str, x: sp.Expr = ell) -> sp.Expr:
    """f(ℓ) of the law (the definition; docs/theory.md §4.4)."""
    law = _check(law)
    if law == "exponential":
        return C * sp.exp(-lam * x)
    if law == "power":
        return C * x ** (-beta)
    return C * sp.log(x) ** (-gamma)


def envelope_fn(law: str):
    """NumPy f(ell, C, param) (docs/theory.md §4.4)."""
    return sp.lambdify([ell, C, law_parameter(law)], envelope(law), modules="numpy")


def A_definition() -> sp.Expr:
    """A = εσ/c (docs/theory.md §4.4)."""
    return epsilon * sigma / c


def snr(law: str) -> sp.Expr:
    """SNR(ℓ, N) = c f(ℓ) N^{1/κ}/σ (docs/statistics.md §3.3 with m = c f)."""
    return c * envelope(law) * N ** (1 / kappa) / sigma


@functools.lru_cache(maxsize=None)
def sample_complexity(law: str) -> sp.Expr:
    """N(ℓ): solve SNR(ℓ, N) = ε for N, then write εσ/c = A  ->  A^κ f(ℓ)^{−κ} (as a function
    of ℓ).

    See docs/theory.md §4.4.
    """
    sol = sp.solve(sp.Eq(snr(law), epsilon), N)
    if len(sol) != 1:
        raise RuntimeError(f"unexpected solutions {sol}")
    e = sol[0].subs(epsilon, A * c / sigma)
    return sp.powsimp(sp.simplify(e), force=True)


def _tidy(e: sp.Expr) -> sp.Expr:
    """Presentation only (an identity for positive symbols): (C N^{1/κ}/A)^{1/β} ->
    (C/A)^{1/β} N^{1/(κβ)}; applied inside exp() too."""
    if isinstance(e, sp.exp):
        return sp.exp(_tidy(e.args[0]))
    e = sp.expand_power_base(sp.powdenest(e, force=True), force=True)
    return sp.powsimp(e, combine="base", force=True)


@functools.lru_cache(maxsize=None)
def learnability_window(law: str) -> sp.Expr:
    """H_N in the symbols N, kappa, C, A and the law's parameter: the root in ℓ of
    f(ℓ) = A N^{−1/κ} (``solve``); f decreasing, so it is sup{ℓ : f(ℓ) ≥ A N^{−1/κ}}.

    See docs/theory.md §4.4.
    """
    law = _check(law)
    sol = sp.solve(sp.Eq(envelope(law), A * N ** (-1 / kappa)), ell)
    if len(sol) != 1:
        raise RuntimeError(f"unexpected solutions {sol}")
    e = sol[0]
    if law == "exponential":
        # (1/λ)[log(C/A) + (1/κ) log N]: combine the N-free logs (identity for positive symbols)
        num = sp.expand(sp.expand_log(e * lam, force=True))
        free = sum((a for a in sp.Add.make_args(num) if not a.has(N)), sp.S.Zero)
        return (sp.logcombine(free, force=True) + (num - free)) / lam
    return _tidy(e)


def learnability_window_fn(law: str):
    """NumPy H_N taking keyword arguments N, kappa, C, A and lam / beta / gamma.

    See docs/theory.md §4.4.
    """
    return sp.lambdify([N, kappa, C, A, law_parameter(law)], learnability_window(law),
                       modules="numpy")


@functools.lru_cache(maxsize=None)
def samples_needed(law: str) -> sp.Expr:
    """N needed to reach the horizon H: the sample complexity at ℓ = H (symbols H, kappa, C, A,
    parameter). It is the inverse of ``learnability_window`` (checked by the tests).

    See docs/theory.md §4.4.
    """
    return sample_complexity(law).subs(ell, H)


def samples_needed_fn(law: str):
    """NumPy N(H) taking keyword arguments H, kappa, C, A and lam / beta / gamma.

    See docs/theory.md §4.4.
    """
    return sp.lambdify([H, kappa, C, A, law_parameter(law)], samples_needed(law),
                       modules="numpy")


def growth_quantity(law: str, h: sp.Expr) -> sp.Expr:
    """The quantity whose slope in log N is the growth exponent: H_N (exponential law),
    log H_N (power law), log log H_N (logarithmic law).

    See docs/theory.md §4.4.
    """
    law = _check(law)
    if law == "exponential":
        return h
    if law == "power":
        return sp.log(h)
    return sp.log(sp.log(h))


@functools.lru_cache(maxsize=None)
def growth_exponent(law: str) -> sp.Expr:
    """d growth_quantity(H_N) / d log N (``diff`` with N = e^u): 1/(λκ), 1/(κβ), 1/(κγ).

    See docs/theory.md §4.4.
    """
    hu = learnability_window(law).subs(N, sp.exp(_u))
    q = sp.expand_log(growth_quantity(law, hu), force=True)
    return sp.simplify(sp.diff(q, _u))


def regime(law: str) -> str:
    """How H_N grows with N under ``law``, as one sentence (docs/theory.md §4.4)."""
    return _REGIME[_check(law)]


@functools.lru_cache(maxsize=None)
def window_kappa_derivative(law: str) -> sp.Expr:
    """∂H_N/∂κ (symbols N, kappa, C, A, parameter; docs/theory.md §4.4)."""
    return sp.simplify(sp.diff(learnability_window(law), kappa))


@functools.lru_cache(maxsize=None)
def window_shrinks_with_kappa(law: str) -> bool:
    """SymPy's sign verdict on ∂H_N/∂κ for N > 1 (N = e^u, u > 0, all parameters positive):
    True when the derivative is provably negative.

    See docs/theory.md §4.4.
    """
    d = sp.simplify(sp.diff(learnability_window(law).subs(N, sp.exp(_u)), kappa))
    return bool(d.is_negative)
