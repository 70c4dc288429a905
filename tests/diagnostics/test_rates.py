"""Tests of lwsim/diagnostics/rates.py (laid out like the code: docs/testing.md).

conventions="author": each approximation of the author's code (docs/fidelity.md), pinned against
a small re-implementation written here from the author's formulas, and shown to differ from lwsim's
exact convention on a case where the two must differ."""


from __future__ import annotations

import numpy as np

from lwsim.diagnostics.rates import source_rates


T, B, D, H = 12, 3, 3, 5


def test_author_source_rates_use_h_k():
    h = np.random.default_rng(0).standard_normal((T + 1, B, H))
    h[0] = 0.0
    lam = np.random.default_rng(1).uniform(0.1, 1.0, (H, H))
    a = source_rates(lam, h, conventions="author")
    assert a.shape == (T + 1, B, H)
    np.testing.assert_allclose(a[0], np.broadcast_to(lam.mean(1), (B, H)))   # h₀ = 0: row mean
    np.testing.assert_allclose(a[4, 1], lam @ h[4, 1] ** 2 / (h[4, 1] ** 2).sum())
    np.testing.assert_allclose(source_rates(lam, h)[4, 1], lam @ h[4, 1] ** 2 / (h[4, 1] ** 2).sum())
    assert not np.allclose(a[1:], source_rates(lam, h))
