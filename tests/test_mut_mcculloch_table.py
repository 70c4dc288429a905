"""lwsim/stats/make_mcculloch_table.py's build() on a coarse grid with stub quantile functions
(issue 32, docs/testing.md): the grid, the near-one replacement, the checks and the file's keys."""
from __future__ import annotations

import numpy as np
import pytest

from lwsim.stats import make_mcculloch_table as mk


def _stub_quantiles(alpha, probs=(0.75, 0.95)):
    return np.array([1.0, 4.0 - alpha])          # ratio q95/q75 = 4 − α: strictly decreasing


@pytest.fixture
def stubs(monkeypatch):
    monkeypatch.setattr(mk, "_check_parametrisation", lambda: None)
    monkeypatch.setattr(mk, "sas_quantiles", _stub_quantiles)
    seen = []
    monkeypatch.setattr(mk, "gil_pelaez_quantiles", lambda a, probs=(0.75, 0.95): seen.append(a) or _stub_quantiles(a))
    return seen


def test_build_on_a_grid_without_points_near_one(stubs, tmp_path):
    # step 0.5: α = 0.5, 1, 1.5, 2 — none within 0.0055 of 1 except 1 itself (not replaced)
    path = mk.build(tmp_path / "sub" / "t.npz", step=0.5)
    assert path == tmp_path / "sub" / "t.npz" and path.exists()
    with np.load(path) as d:
        np.testing.assert_allclose(d["alpha"], [0.5, 1.0, 1.5, 2.0])
        np.testing.assert_allclose(d["ratio"], [3.5, 3.0, 2.5, 2.0])
        np.testing.assert_allclose(d["iqr"], [2.0] * 4)
        assert str(d["parameterization"]) == "S1, beta=0"
    assert stubs == [0.8, 1.3, 1.7]                # only the spot checks away from α = 1


def test_build_replaces_the_points_near_one(stubs, tmp_path):
    # step 0.005: 0.995 and 1.005 lie within 0.0055 of 1 and are recomputed by Gil-Pelaez
    mk.build(tmp_path / "t.npz", step=0.005)
    assert stubs[:2] == [pytest.approx(0.995), pytest.approx(1.005)] and stubs[2:] == [0.8, 1.3, 1.7]
