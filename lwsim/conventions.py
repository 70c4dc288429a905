"""The ``conventions`` keyword as data: :class:`Conventions`, :data:`LWSIM`, :data:`AUTHOR` (docs/fidelity.md).

Every function with a ``conventions=`` keyword accepts "lwsim" (exact, the default), "author"
(the approximations of the author's public code for [A] and [B], reproduced on purpose) or a
:class:`Conventions` object. It converts the keyword once, with :func:`as_conventions`, and then
reads the one field that governs each of its decisions, so one approximation can be switched
alone (an ablation):

    >>> import dataclasses
    >>> from lwsim.conventions import AUTHOR
    >>> no_floors = dataclasses.replace(AUTHOR, metric_floors=False)   # the author's [B], unfloored

Each field names one decision; its comment gives the docs/fidelity.md entry ("[A] n": the
numbered differences of "[A]: the differences"; "[B] n": the table of "[B] … approximates").
The first value of each choice is lwsim's exact one.
"""
from __future__ import annotations

import dataclasses

CONVENTIONS = ("lwsim", "author")                                  # the names the keyword accepts
DETECTION_FLOORS = ("snr", "ecf")        # the author's floors (lwsim.stats.detection.FLOORS)

# field → its choices, lwsim's first (validated in Conventions.__post_init__)
CHOICES = {
    "r_diagonal": ("exact", "weight_diagonals"),
    "gru_gamma0": ("leak_product", "three_terms"),
    "lstm_source_tangent": ("cell", "hidden"),
    "envelope_sources": ("previous_state", "source_state"),
    "envelope_neurons": ("sum", "mean"),
    "decay_fit_on": ("f", "log_mass"),
    "orientation": ("global", "per_batch"),
    "ecf_sigma": ("refit", "unclipped_intercept"),
    "mcculloch_table": ("exact", "linear_201"),
    "tempered_law": ("unit_coefficient", "free_coefficient"),
    "detection_mean": ("lower_bound", "point"),
    "gate_term_state": ("previous", "after_step"),
    "product_order": ("exact", "reversed"),
    "spectral_norm": ("svd", "power"),
    "median": ("median", "lower"),
    "profile_fit_count": ("trimmed", "valid"),
    "profile_failed_fit": ("nan", "unit_exponent"),
}


@dataclasses.dataclass(frozen=True)
class Conventions:
    """One choice per approximation of the author's code; the defaults are lwsim's (= :data:`LWSIM`).

    Frozen, hashable and picklable (it travels to worker processes). Build a mixed object with
    ``dataclasses.replace(AUTHOR, field=<lwsim's choice>)`` to measure one approximation alone.
    See docs/fidelity.md ("Conventions as data").
    """
    # ---- [A] Γ factors (lwsim.diagnostics.gamma.gate_factors, so transport_factors, envelope,
    # matched_statistic)
    r_diagonal: str = "exact"
    """[A] 1, 2: r_t = diag(J_t) − d_t exactly ("exact"), or from the weights' diagonals
    ("weight_diagonals": LayerNorm as the identity, diag(W_h), diag(U_g); the GRU candidate term
    as the product of diagonals z g' diag(U_g)(r + h r' diag(U_r)); GRU convention "cho" only)."""
    gru_gamma0: str = "leak_product"
    """[A] 2: the GRU's zero-order factor Γ⁰ = Π(1−z) ("leak_product") or the author's
    Π(1−z) + Π r + Π(1−z) r ("three_terms"; GRU "cho" only; other cells: no effect)."""
    lstm_source_tangent: str = "cell"
    """[A] 3: the LSTM's source tangent paired with its cell-path Γ, v^c ("cell") or v^h
    ("hidden"); matched_statistic."""
    # ---- [A] envelope (lwsim.diagnostics.envelope, rates.source_rates)
    envelope_sources: str = "previous_state"
    """[A] 4, 9: the envelope's sources. "previous_state": source k = t − ℓ ≥ 1 with Λ at h_{k−1};
    "source_state" (the author's): source k is the state h_k (Λ at h_k, source_rates; ConstGate/SharedGate/DiagGate
    windows from k = 0, i.e. t = ℓ … T; NumPy accumulation) and the envelope also returns
    ``log_mass``, the per-sequence quantity the author's runner fits."""
    envelope_neurons: str = "sum"
    """[A] 4, 12: the envelope's reduction over the neurons when ``neurons=None``: f = ⟨Σ_q |μ_q|⟩
    ("sum") or the author's earlier average ("mean", f ≈ f_lwsim/H)."""
    decay_fit_on: str = "f"
    """[A] 9: what the decay laws are fitted to in A13 (lwsim.figures.studies.conventions): f(ℓ)
    ("f") or exp of the mean log-mass per sequence ("log_mass", needs envelope_sources "source_state")."""
    orientation: str = "global"
    """[A] 7, 11: ``orient=True`` of matched_statistic: one sign per direction and lag ("global")
    or the sign of each batch of 128 sequences ("per_batch"), for both statistics."""
    # ---- [A] statistics (lwsim.stats)
    ecf_sigma: str = "refit"
    """[A] 5: the ECF σ̂, intercept refitted at the clipped α̂ ("refit") or the author's intercept
    of the unclipped slope in the data's units ("unclipped_intercept"); stats.tailfit.ecf_fit."""
    mcculloch_table: str = "exact"
    """[A] 6: McCulloch's table, lwsim's exact PCHIP one ("exact") or the author's linear one on
    linspace(1, 2, 201), linear interpolation ("linear_201", α̂ ∈ [1, 2]: fit_alpha then needs alpha_range "stable");
    stats.mcculloch, also for the bootstrap."""
    tempered_law: str = "unit_coefficient"
    """[A] 8: the tempered decay law, A ℓ^{−β} e^{−(ℓ/ℓ_c)^k} with p = 4 and a refined grid
    ("unit_coefficient") or the author's free cutoff coefficient, p = 5, its grids, no refinement
    ("free_coefficient"); stats.fit_decay."""
    detection_floors: tuple = ()
    """[A] 10: the floors detection_table applies when ``floors=None``, a subset of
    ("snr", "ecf"): none for lwsim, both for the author."""
    detection_mean: str = "lower_bound"
    """[A] 11: the mean detection_table puts in the SNR when ``mean_bound=None``: the lower 99.9%
    confidence bound of |m̄| ("lower_bound", docs/statistics.md §3.3.3: no lag detected from the
    estimation error of m̄) or the point estimate |m̄| ("point", the author's)."""
    # ---- [B] (lwsim.diagnostics: lr_profile, jacobian_anisotropy, gradient_covariance_metrics,
    # gradient_anisotropy, frechet_check, gate_split, gate_derivative_term)
    gate_term_state: str = "previous"
    """[B] 1: the gate term of J_t and B_j from φ(a_t) − h_{t−1} ("previous") or from the state
    after the step, φ(a_t) − h_t ("after_step"; the author's models only)."""
    product_order: str = "exact"
    """[B] 2: Jacobian products J_t ⋯ J_{k+1} ("exact") or J_{k+1} ⋯ J_t ("reversed"), also the
    Fréchet check's order."""
    spectral_norm: str = "svd"
    """[B] 3: ‖M‖₂ of lr_profile, exact σ_max ("svd") or ``power_iters`` power iterations on M
    ("power")."""
    median: str = "median"
    """[B] 4: lr_profile's medians (and P̄ the mean over pairs) ("median") or the lower median
    of torch.median for both ("lower")."""
    profile_fit_count: str = "trimmed"
    """[B] S1 fit (lr_profile's docstring): the gate-product fit needs ``min_points`` pairs after
    the trim ("trimmed") or before it, valid pairs ("valid", the author's)."""
    profile_failed_fit: str = "nan"
    """[B] S1 fit: μ̃^fit = (μ̃⁰)^s is NaN when the fit fails ("nan") or the author's s = 1
    ("unit_exponent")."""
    metric_floors: bool = False
    """[B] 5: the author's additive 1e−12 floors (AI, CE, the μ̃ ratios) and its gradient
    covariance preprocessing (rows /(‖g‖ + 1e−12), columns kept when their norm > 1e−10 √M)."""

    def __post_init__(self):
        for name, choices in CHOICES.items():
            v = getattr(self, name)
            if not isinstance(v, str) or v not in choices:
                raise ValueError(f"Conventions.{name} must be one of {choices}, got {v!r}")
        if not isinstance(self.metric_floors, bool):
            raise TypeError(f"Conventions.metric_floors must be a bool, got {type(self.metric_floors).__name__}")
        floors = self.detection_floors
        if isinstance(floors, str) or not isinstance(floors, (tuple, list)):
            raise TypeError(f"Conventions.detection_floors must be a tuple of names from {DETECTION_FLOORS}, "
                            f"got {floors!r}")
        bad = [f for f in floors if f not in DETECTION_FLOORS]
        if bad:
            raise ValueError(f"Conventions.detection_floors must be names from {DETECTION_FLOORS}, got {bad}")
        # canonical order, as a tuple (hashable): equal choices compare and hash equal
        object.__setattr__(self, "detection_floors", tuple(f for f in DETECTION_FLOORS if f in floors))

    @property
    def name(self):
        """"lwsim" or "author" for those two objects, else "custom(field=value, …)" (the fields that
        differ from lwsim's); what results record as their conventions."""
        for n, c in NAMED.items():
            if self == c:
                return n
        diff = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(LWSIM, f.name)]
        return f"custom({', '.join(diff)})"


LWSIM = Conventions()
"""lwsim's exact conventions (the default)."""

AUTHOR = Conventions(
    r_diagonal="weight_diagonals", gru_gamma0="three_terms", lstm_source_tangent="hidden",
    envelope_sources="source_state", envelope_neurons="mean", decay_fit_on="log_mass", orientation="per_batch",
    ecf_sigma="unclipped_intercept", mcculloch_table="linear_201", tempered_law="free_coefficient",
    detection_floors=DETECTION_FLOORS, detection_mean="point", gate_term_state="after_step", product_order="reversed",
    spectral_norm="power", median="lower", profile_fit_count="valid", profile_failed_fit="unit_exponent", metric_floors=True)
"""Every approximation of the author's code (``conventions="author"``)."""

NAMED = {"lwsim": LWSIM, "author": AUTHOR}


def as_conventions(conventions):
    """The keyword → a :class:`Conventions`: "lwsim" → :data:`LWSIM`, "author" → :data:`AUTHOR`, an
    object unchanged. TypeError for anything else than a string or a Conventions, ValueError for
    an unknown name."""
    if isinstance(conventions, Conventions):
        return conventions
    if not isinstance(conventions, str):
        raise TypeError(f"conventions must be a string, one of {CONVENTIONS}, or a Conventions, "
                        f"got {type(conventions).__name__}")
    if conventions not in CONVENTIONS:
        raise ValueError(f"conventions must be one of {CONVENTIONS}, got {conventions!r}")
    return NAMED[conventions]


def check_conventions(conventions):
    """Validate the keyword like :func:`as_conventions`; returns it unchanged (a name or an object)."""
    as_conventions(conventions)
    return conventions


def author_cells():
    """The cells whose kind declares itself one of [B]'s author models (``kind.author_b``): the
    four leaky cells, plus any registered cell that says so (docs/cells.md §1.10)."""
    from .cells.registry import KINDS
    return tuple(name for name, kind in KINDS.items() if kind.author_b)


def need_author_cell(cell):
    """Return None if ``cell`` is one of the author's [B] models, else raise ValueError.

    See docs/fidelity.md (used by lwsim.diagnostics.author_b and .expansion).
    """
    if not cell.kind.author_b:
        raise ValueError(f"conventions='author' exists for the author's models {author_cells()}, "
                         f"not for {cell.name!r}")
