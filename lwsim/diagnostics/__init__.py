"""Diagnostics of docs/diagnostics.md: transports, Γ, Λ, μ, envelopes, time scales, matched
statistic, [B]'s effective-LR profile and anisotropy, and the checks of the first-order expansion.

| docs/diagnostics.md | module | main functions |
|---|---|---|
| §2.1, §2.8 | :mod:`.transport` | iterate_products, transport_diagonals, transport_norms, neuron_transport_diagonals |
| §2.2 | :mod:`.lag_gradients` | lag_gradient_profile |
| §2.3 | :mod:`.gamma` | gate_factors, gamma, transport_factors |
| §2.4 | :mod:`.rates` | recurrent_rates, rayleigh_rates, rowmean_rates, source_rates |
| §2.5 | :mod:`.envelope` | envelope, exact_envelope, rate_timescale_spearman |
| §2.6 | :mod:`.timescales` | timescales, constgate_timescale |
| §2.7 | :mod:`.matched` | matched_statistic, envelope_and_matched, random_direction |
| §2.8 | :mod:`.profile` | lr_profile, gate_products, fit_power |
| §2.9 | :mod:`.anisotropy` | jacobian_anisotropy, gradient_anisotropy, singular_value_metrics |
| §2.10 | :mod:`.expansion` | gate_split, frechet_check, envelope_fidelity, fidelity_table |

Conventions (see ``_util``): step t = 1 … T at array index t − 1, lag ℓ = t − k with source k ≥ 1
(invalid pairs are NaN), lags as an int L (1 … L) or an increasing sequence. Everything is
computed and returned in float64. ``backend`` is passed to the cell methods; ``engine`` selects the
numba kernels or the NumPy implementation for the O(B·T·L·H) loops.
"""
from .behaviour import BehaviouralWindow, LagCoefficients, behavioural_window, lag_coefficients  # §2.11
from .anisotropy import (GradientAnisotropy, JacobianAnisotropy, gradient_anisotropy,
                         gradient_covariance_metrics, jacobian_anisotropy, median_iqr,
                         per_example_gradients, singular_value_metrics)
from .envelope import Envelope, ExactEnvelope, envelope, exact_envelope, rate_timescale_spearman
from .expansion import (EnvelopeFidelity, FrechetCheck, envelope_fidelity, fidelity_table,
                        frechet_check, frechet_from_split, gate_derivative_term, gate_split)
from .gamma import GateFactors, gamma, gate_factors, prefix_sums, transport_factors
from .lag_gradients import LagGradients, lag_gradient_profile
from .matched import MatchedStatistic, envelope_and_matched, matched_statistic, random_direction
from .profile import LRProfile, PowerFit, Predictor, fit_power, gate_products, lr_profile
from .rates import (base_rate, rayleigh_rates, recurrent_rates, rowmean_rates, source_rates)
from .timescales import TimeScales, constgate_timescale, timescales
from .transport import (iterate_products, neuron_transport_diagonals, offdiag_fraction,
                        spectral_norms, transport_diagonals, transport_norms, transport_products)

__all__ = [
    "Envelope", "EnvelopeFidelity", "ExactEnvelope", "FrechetCheck", "GateFactors",
    "GradientAnisotropy", "JacobianAnisotropy", "LRProfile", "LagGradients", "MatchedStatistic",
    "PowerFit", "Predictor", "TimeScales", "base_rate", "constgate_timescale", "envelope",
    "envelope_and_matched", "envelope_fidelity", "exact_envelope", "fidelity_table", "fit_power", "frechet_check",
    "frechet_from_split", "gamma", "gate_derivative_term", "gate_factors", "gate_products",
    "gate_split", "gradient_anisotropy", "gradient_covariance_metrics", "iterate_products",
    "jacobian_anisotropy", "lag_gradient_profile", "lr_profile", "matched_statistic", "median_iqr",
    "neuron_transport_diagonals", "offdiag_fraction", "per_example_gradients", "prefix_sums",
    "random_direction", "rate_timescale_spearman", "rayleigh_rates", "recurrent_rates",
    "rowmean_rates", "singular_value_metrics", "source_rates", "spectral_norms", "timescales",
    "transport_diagonals", "transport_factors", "transport_norms", "transport_products",
]
