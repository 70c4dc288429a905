"""Optimizer base rates Λ: Rayleigh-quotient projection of the preconditioner (docs/diagnostics.md §2.4).

Per-parameter rates λ on each recurrent H×H matrix U (``cell.recurrent_keys``) come from the
optimizer (``opt.rates()``: Adam/AdamW λ = η/(sqrt(v̂) + ε), RMSprop λ = η/(sqrt(v) + ε),
SGD λ = η). They are averaged over the cell's recurrent matrices, λ = mean_U λ^U, and projected on
the presynaptic state h_{k−1} of the source step k:

    Λ^{(q)}(b, k) = Σ_j λ_qj h_{k−1,j}² / Σ_j h_{k−1,j}²      (row mean if h_{k−1} = 0),

the lag-dependent ("rayleigh") form; Λ^{(q)} = (1/H) Σ_j λ_qj is the lag-independent ("rowmean")
LayerNorm simplification. For SGD both equal η.

``rates`` arguments accept: a real number η (SGD), a dict like params (``opt.rates()``), or an
optimizer object (anything with a ``rates()`` method; its ``lr`` is then the base η).
"""
from __future__ import annotations

import numbers

import numpy as np

from ..conventions import as_conventions
from .._validate import check_choice, check_real
from ._util import to_numpy

FORMS = ("rayleigh", "rowmean")


def _as_rates(rates):
    """(rates as number-or-dict, η or None)."""
    if isinstance(rates, bool):
        raise TypeError("rates must be a number (SGD η), a dict of per-parameter rates or an optimizer")
    if isinstance(rates, numbers.Real):
        eta = check_real("rates", rates, 0.0, lo_open=True)
        return eta, eta
    if isinstance(rates, dict):
        return rates, None
    if callable(getattr(rates, "rates", None)):
        lr = getattr(rates, "lr", None)
        return rates.rates(), (float(lr) if isinstance(lr, numbers.Real) else None)
    raise TypeError("rates must be a number (SGD η), a dict of per-parameter rates (opt.rates()) "
                    f"or an optimizer with a rates() method, got {type(rates).__name__}")


def base_rate(rates, eta=None):
    """η for the gates-only envelope f_gates (§2.5): ``eta`` if given, else the SGD number or
    the optimizer's ``lr``. A bare rates dict carries no η: pass ``eta=``.

    See docs/diagnostics.md §2.4, §2.5.
    """
    if eta is not None:
        return check_real("eta", eta, 0.0, lo_open=True)
    _, e = _as_rates(rates)
    if e is None:
        raise ValueError("eta is required when rates is a dict (pass eta=<learning rate>, "
                         "or pass the optimizer itself)")
    return e


def recurrent_rates(cell, rates):
    """λ averaged over the cell's recurrent matrices: a float (SGD η) or an (H, H) array.

    See docs/diagnostics.md §2.4.
    """
    r, _ = _as_rates(rates)
    if not isinstance(r, dict):
        return float(r)
    H = cell.n_hidden
    acc = np.zeros((H, H))
    for key in cell.recurrent_keys:
        if key not in r:
            raise ValueError(f"rates has no entry for the recurrent matrix {key!r} of cell "
                             f"{cell.name!r} (needs {list(cell.recurrent_keys)})")
        lam = to_numpy(r[key])
        if np.asarray(lam).dtype.kind not in "fiu":
            raise TypeError(f"rates[{key!r}] must be a real array, got dtype {np.asarray(lam).dtype}")
        lam = np.asarray(lam, dtype=np.float64)
        if lam.shape not in ((), (H, H)):
            raise ValueError(f"rates[{key!r}] must have shape ({H}, {H}) (or be a scalar), got {lam.shape}")
        if not np.all(np.isfinite(lam)) or np.any(lam < 0):
            raise ValueError(f"rates[{key!r}] must be finite and >= 0")
        acc += lam
    return acc / len(cell.recurrent_keys)


def rowmean_rates(lam, H=None):
    """Lag-independent Λ^{(q)} = (1/H) Σ_j λ_qj: (H,) (a float λ gives a constant vector; pass H).

    See docs/diagnostics.md §2.4.
    """
    if np.ndim(lam) == 0:
        if H is None:
            raise ValueError("H is required for a scalar rate")
        return np.full(H, float(lam))
    return np.asarray(lam, dtype=np.float64).mean(axis=1)


def rayleigh_rates(lam, h):
    """Λ^{(q)} = Σ_j λ_qj h_j² / Σ_j h_j² for every leading index of h (..., H) → (..., H).

    Rows with h = 0 fall back to the row mean. ``lam`` is an (H, H) array or a float (then Λ = λ).

    See docs/diagnostics.md §2.4.
    """
    h = np.asarray(h, dtype=np.float64)
    if np.ndim(lam) == 0:
        return np.full(h.shape, float(lam))
    lam = np.asarray(lam, dtype=np.float64)
    h2 = h * h
    den = h2.sum(axis=-1, keepdims=True)
    num = h2 @ lam.T
    zero = den == 0
    out = num / np.where(zero, 1.0, den)
    return np.where(zero, lam.mean(axis=1), out)


def source_rates(lam, h, form="rayleigh", conventions="lwsim"):
    """Λ for every source step k = 1 … T: (T, B, H), row k − 1 uses h_{k−1} = h[k − 1].

    h: the trace's states (T+1, B, H); lam from :func:`recurrent_rates`; form "rayleigh" | "rowmean".
    conventions="author" or Conventions.envelope_sources "source_state" (the author's later envelope,
    docs/fidelity.md): Λ of source step k is
    taken at h_k instead of h_{k−1}, for k = 0 … T (its windows may start at h₀): (T+1, B, H),
    row k uses h[k].
    """
    check_choice("form", form, FORMS)
    author_sources = as_conventions(conventions).envelope_sources == "source_state"
    h = to_numpy(h)
    src = h if author_sources else h[:-1]
    if form == "rowmean":
        return np.broadcast_to(rowmean_rates(lam, h.shape[-1]), src.shape).astype(np.float64)
    return rayleigh_rates(lam, src)
