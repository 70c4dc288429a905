"""Tests of lwsim/stats (laid out like the code: docs/testing.md).

lwsim.stats: every bad input gets a ValueError/TypeError naming the argument (no silent NaN)."""


from __future__ import annotations

import numpy as np
import pytest

from lwsim.stats import (
    detectable,
    detection_table,
    fit_decay,
    fit_master,
    kappa,
    learnability_window,
    n_star,
    noise_floor,
    sample_complexity,
    snr,
)


LAGS = np.arange(1.0, 21.0)


@pytest.mark.parametrize("call,match", [
    (lambda: snr(1.0, 0.9, 1.0, 10), "alpha"), (lambda: snr(1.0, 2.1, 1.0, 10), "alpha"),
    (lambda: snr(1.0, 1.5, -1.0, 10), "sigma"), (lambda: snr(1.0, 1.5, 1.0, 0), "N"),
    (lambda: snr(np.nan, 1.5, 1.0, 10), "mean"), (lambda: detectable(1.0, 1.5, 1.0, 10, eps=0), "eps"),
    (lambda: sample_complexity(1.0, 1.5, 1.0, []), "n_grid"),
    (lambda: sample_complexity(1.0, 1.5, 1.0, [10, -1]), "n_grid"),
    (lambda: sample_complexity([1.0, 2.0], [1.5, 1.5, 1.5], 1.0, [10]), "mean, alpha, sigma must broadcast"),
    (lambda: snr([1.0, 2.0], 1.5, 1.0, [10, 20, 30]), "must broadcast"),
    (lambda: n_star([1.0, 2.0], 1.5, [1.0, 1.0, 1.0]), "must broadcast"),
    (lambda: n_star(1.0, 1.5, 1.0, eps=-1), "eps"),
    (lambda: learnability_window(LAGS, np.ones(19), 10), "mismatched"),
    (lambda: learnability_window(LAGS, -np.ones(20), 10), "n_hat"),
    (lambda: learnability_window(LAGS - 1, np.ones(20), 10), "lags"),
    (lambda: learnability_window(LAGS, np.full(20, np.nan), 10), "n_hat"),
    (lambda: noise_floor(np.ones(3), np.ones(3), 10, np.ones(3)), "kappa"),
    (lambda: noise_floor(np.ones(3), np.ones(2), 10, np.full(3, 2.0)), "mismatched"),
    (lambda: detection_table(np.zeros((3, 100)), LAGS, [10]), "mismatched"),
    (lambda: detection_table(np.zeros(100), LAGS[:1], [10]), "samples_per_lag"),
    (lambda: detection_table(np.zeros((1, 19)), LAGS[:1], [10]), "samples_per_lag needs at least 20"),
    (lambda: fit_decay(LAGS, np.ones(19)), "mismatched"),
    (lambda: fit_decay(LAGS, np.r_[np.ones(19), np.nan]), "f contains NaN"),
    (lambda: fit_decay(np.r_[LAGS[:-1], 1.0], np.ones(20)), "distinct"),
    (lambda: fit_decay(LAGS, np.ones(20), trim=0.5), "trim"),
    (lambda: fit_decay(LAGS, np.ones(20), floor=-1), "floor"),
    (lambda: fit_decay(LAGS, np.ones(20), min_points=4), "min_points"),
    (lambda: fit_decay(LAGS, np.ones(20), laws=("stretched",)), "laws"),
    (lambda: fit_decay(LAGS, -np.ones(20)), "usable points"),
    (lambda: fit_master(np.ones(12), np.ones(11), np.ones(12)), "mismatched"),
    (lambda: fit_master(np.ones(12), np.full(12, 2.0), np.ones(12)), "distinct"),
])
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="mean"):
        snr("a", 1.5, 1.0, 10)
    with pytest.raises(TypeError, match="min_points"):
        fit_decay(LAGS, np.ones(20), min_points=8.0)
