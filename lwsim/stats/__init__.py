"""lwsim.stats — α-stable noise, tail-index fits, detection rule, decay-law fits (docs/statistics.md).

- :mod:`.stable`     SαS sampling (Chambers–Mallows–Stuck), κ_α                      (docs/statistics.md §3.1)
- :mod:`.tailfit`    ECF regression + McCulloch quantiles, selection → :class:`TailFit` (docs/statistics.md §3.2)
- :mod:`.detection`  SNR, N̂(ℓ), N*(ℓ), Ĥ_N, noise floor, :func:`detection_table`     (docs/statistics.md §3.3)
- :mod:`.prediction` AUC, balanced accuracy, cross-validated logistic baselines, finding 10 (docs/statistics.md §3.6)
- :mod:`.decay`      exponential / power / logarithmic / tempered fits, master check (docs/statistics.md §3.4–3.5)
"""
from .decay import (LAWS, DecayFit, LawFit, MasterFit, NestedExponentialTest, envelope_floor, fit_decay,
                    fit_master, fit_master_window, nested_exponential)
from .detection import (DetectionTable, detectable, detection_table, learnability_window, n_star,
                        noise_floor, sample_complexity, snr)
from .mcculloch import iqr_theory, ratio_theory
from . import prediction
from .stable import inv_kappa, kappa, mean_scale, sample_sas
from .tailfit import TailFit, fit_alpha

__all__ = [
    "LAWS", "DecayFit", "DetectionTable", "LawFit", "MasterFit", "NestedExponentialTest", "TailFit", "detectable",
    "detection_table", "envelope_floor", "fit_alpha", "fit_decay", "fit_master", "fit_master_window",
    "inv_kappa", "iqr_theory", "kappa",
    "learnability_window", "mean_scale", "n_star", "nested_exponential", "noise_floor", "prediction", "ratio_theory", "sample_complexity",
    "sample_sas", "snr",
]
