"""Tests of lwsim/stats/prediction.py (laid out like the code: docs/testing.md).

lwsim.stats.prediction on hand-computed tables (docs/statistics.md §3.6, docs/experiments.md §5.7).

Tests that kill the surviving mutants of mutmut on lwsim/stats/prediction.py (issue 32, docs/testing.md).

Each pins a hand-computed number or a documented property; none compares the code with itself."""


from __future__ import annotations

import numpy as np
import pytest

from lwsim.stats import prediction as pr


def _grid(cells=("a", "b"), seeds=(0, 1, 2)):
    rows = []
    for ci, cell in enumerate(cells):
        for s in seeds:
            for lag in (2, 4, 8, 16, 32):
                for N in (10, 30, 100, 300, 1000):
                    rows.append((ci, s, lag, N))
    return np.array(rows, float)


# ---- cv_logistic_scores -----------------------------------------------------------------------
def _cv_data():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    z = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 3.0, 2.0, 1.0, 0.0, 2.0, 1.0, 0.0])
    y = np.array([0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1], bool)
    g = np.repeat([0, 1, 2], 4)
    return np.c_[x, z], y, g


# ---- block_bootstrap ---------------------------------------------------------------------------
def _pair_auc(s, y):
    """The AUC's definition, pair by pair (ties ½): a fast stand-in for scipy in many resamples."""
    s, y = np.asarray(s, float), np.asarray(y, bool)
    d = s[y][:, None] - s[~y][None, :]
    return float(((d > 0) + 0.5 * (d == 0)).mean())


@pytest.fixture
def fast_auc(monkeypatch):
    monkeypatch.setattr(pr, "auc", _pair_auc)


# ----------------------------------------------------------------------------------------------
# auc
# ----------------------------------------------------------------------------------------------


def test_auc_hand_table_with_ties():
    # learned scores 3, 2, 2; unlearned 2, 1. Pairs: (3>2)(3>1)(2=2:½)(2>1)(2=2:½)(2>1) → 5/6
    s = [3, 2, 2, 2, 1]
    y = [1, 1, 1, 0, 0]
    assert pr.auc(s, y) == pytest.approx(5 / 6)


def test_auc_perfect_useless_reversed_and_undefined():
    y = np.array([0, 0, 1, 1, 1], bool)
    assert pr.auc([0, 1, 2, 3, 4], y) == 1.0
    assert pr.auc([4, 3, 2, 1, 0], y) == 0.0
    assert pr.auc([7, 7, 7, 7, 7], y) == 0.5           # useless: all ties
    assert np.isnan(pr.auc([1, 2, 3], [1, 1, 1]))     # one class only
    assert pr.auc([-np.inf, 0.0, np.inf], [0, 1, 1]) == 1.0   # never detectable ranks lowest


def test_planted_nstar_predicts_perfectly_and_baselines_do_not():
    # Planted: learned iff N ≥ N*(ℓ*, cell), with the boundary differing by cell and seed so that
    # (log ℓ*, log N) alone cannot separate it but N* does, exactly.
    rng = np.random.default_rng(3)
    r = _grid()
    nstar = r[:, 2] ** 1.5 * np.exp(rng.normal(0, 1.0, len(r)))
    y = r[:, 3] >= nstar
    score = pr.diagnostic_score(nstar, r[:, 3])
    np.testing.assert_allclose(score, -np.log(nstar / r[:, 3]))
    assert pr.auc(score, y) == 1.0
    assert pr.balanced_accuracy(nstar <= r[:, 3], y) == 1.0
    base = pr.cv_logistic_scores(pr.design(np.log(r[:, 2]), np.log(r[:, 3])), y, r[:, 1])
    a_base = pr.auc(base, y)
    assert a_base < 0.99
    with_diag = pr.cv_logistic_scores(pr.design(np.log(r[:, 2]), np.log(r[:, 3]), diag=score), y, r[:, 1])
    assert pr.auc(with_diag, y) > a_base


def test_logistic_cv_recovers_a_monotone_rule_and_one_cell_only():
    r = _grid(cells=("a",))
    y = np.log(r[:, 3]) - 1.2 * np.log(r[:, 2]) > 1.0
    cell = np.array(["a"] * len(r))                    # one cell only: no cell column
    X = pr.design(np.log(r[:, 2]), np.log(r[:, 3]), cell=cell)
    assert X.shape == (len(r), 2)
    p = pr.cv_logistic_scores(X, y, r[:, 1])
    assert np.all(np.isfinite(p))
    assert pr.auc(p, y) > 0.98


def test_inputs_checked():
    with pytest.raises(ValueError, match="label"):
        pr.auc([1.0, 2.0], [0, 2])
    with pytest.raises(ValueError, match="label"):
        pr.auc([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(TypeError, match="predicted"):
        pr.balanced_accuracy([1.5, 0.0], [1, 0])
    with pytest.raises(ValueError, match="groups"):
        pr.cv_logistic_scores(np.zeros((3, 1)), [1, 0, 1], [0, 1])
    with pytest.raises(ValueError, match="n_star"):
        pr.diagnostic_score([1.0, 2.0], [1.0])
    with pytest.raises(TypeError, match="diag_auc"):
        pr.finding10([], {}, 0.5, 0.5)
    with pytest.raises(ValueError, match="auc_lnc"):
        pr.finding10({"a": 0.5}, {"a": (0.4, 0.6)}, 0.5, float("nan"))


# ---- _labels / _scores ------------------------------------------------------------------------
def test_labels_kinds_shapes_and_messages():
    # bool, int and uint 0/1 labels are accepted and returned as bool
    for lab in ([True, False], np.array([1, 0]), np.array([1, 0], np.uint8)):
        assert pr.auc([2.0, 1.0], lab) == 1.0
    with pytest.raises(TypeError, match=r"\blabel\b"):
        pr.auc([2.0, 1.0], [1.0, 0.0])
    with pytest.raises(TypeError, match=r"shape \(1, 2\)"):
        pr.auc([2.0, 1.0], [[1, 0]])
    with pytest.raises(ValueError, match=r"\blabel\b.*0/1 values"):
        pr.auc([2.0, 1.0, 0.0], [1, 0, 2])
    with pytest.raises(ValueError, match=r"\blabel\b.*0/1 values"):
        pr.auc([2.0, 1.0, 0.0], [1, 0, -1])
    with pytest.raises(ValueError, match=r"\blabel has 2 entries\b.*\b3\b"):
        pr.auc([2.0, 1.0, 0.0], [1, 0])
    with pytest.raises(TypeError, match=r"\bpredicted\b"):
        pr.balanced_accuracy([0.5, 1.0], [1, 0])
    with pytest.raises(ValueError, match=r"\blabel has 3 entries\b.*\b2\b"):
        pr.balanced_accuracy([1, 0], [1, 0, 1])


def test_scores_kinds_shapes_and_messages():
    assert pr.auc(np.array([2, 1], np.uint8), [1, 0]) == 1.0          # unsigned ints are real
    with pytest.raises(TypeError, match=r"\bscore\b.*\bbool\b"):
        pr.auc([True, False], [1, 0])
    with pytest.raises(TypeError, match=r"\bscore\b.*\bcomplex128\b"):
        pr.auc([1j, 0j], [1, 0])
    with pytest.raises(TypeError, match=r"shape \(1, 2\)"):
        pr.auc([[2.0, 1.0]], [1, 0])
    with pytest.raises(ValueError, match=r"\bscore\b.*NaN"):
        pr.auc([np.nan, 1.0], [1, 0])
    with pytest.raises(ValueError, match=r"\bN\b.*NaN"):
        pr.diagnostic_score([1.0], [np.inf])
    with pytest.raises(ValueError, match=r"\bN\b.*NaN"):
        pr.diagnostic_score([1.0], [np.nan])


# ---- auc / balanced_accuracy ------------------------------------------------------------------
def test_auc_is_nan_for_either_empty_class():
    assert np.isnan(pr.auc([1.0, 2.0], [0, 0]))
    assert np.isnan(pr.auc([1.0, 2.0], [1, 1]))


def test_auc_infinite_scores_rank_as_extremes():
    # only infinities: +inf above -inf (no finite score to anchor the extremes)
    assert pr.auc([-np.inf, np.inf], [0, 1]) == 1.0
    assert pr.auc([np.inf, -np.inf], [0, 1]) == 0.0
    # +inf above the largest finite score, -inf below the smallest, whatever their values
    assert pr.auc([0.0, 5.0, np.inf], [0, 0, 1]) == 1.0
    assert pr.auc([5.0, 0.0, -np.inf], [1, 1, 0]) == 1.0
    assert pr.auc([0.0, 0.5, np.inf], [1, 1, 0]) == 0.0
    assert pr.auc([0.0, 0.5, -np.inf], [0, 0, 1]) == 0.0
    # finite scores spread by less than 1: pairs (inf > 0.2, 0.4) (0.3 > 0.2) (0.3 < 0.4) → 3/4,
    # and (0.2, 0.4 > −inf) (0.2 < 0.3) (0.4 > 0.3) → 3/4
    assert pr.auc([0.2, 0.4, np.inf, 0.3], [0, 0, 1, 1]) == 0.75
    assert pr.auc([0.2, 0.4, -np.inf, 0.3], [1, 1, 0, 0]) == 0.75
    # ties between infinities count ½: pairs (inf, inf) ½, (inf, 1) 1, (−inf, inf) 0, (−inf, 1) 0
    assert pr.auc([np.inf, -np.inf, np.inf, 1.0], [1, 1, 0, 0]) == pytest.approx(1.5 / 4)


def test_auc_u_over_pairs_hand_count():
    # positives 4, 1; negatives 3, 2, 0: pairs won 3 + 1 = 4 of 6
    assert pr.auc([4.0, 3.0, 2.0, 1.0, 0.0], [1, 0, 0, 1, 0]) == pytest.approx(4 / 6)


# ----------------------------------------------------------------------------------------------
# balanced_accuracy
# ----------------------------------------------------------------------------------------------


def test_balanced_accuracy_hand_table():
    y = np.array([1, 1, 1, 1, 0, 0], bool)
    p = np.array([1, 1, 1, 0, 1, 0], bool)            # TPR 3/4, TNR 1/2
    assert pr.balanced_accuracy(p, y) == pytest.approx(0.625)
    assert pr.balanced_accuracy(y, y) == 1.0
    assert pr.balanced_accuracy(np.ones(6, bool), y) == 0.5   # always "learned": useless
    assert np.isnan(pr.balanced_accuracy(p[:4], y[:4]))


def test_balanced_accuracy_nan_for_all_negative_labels():
    assert np.isnan(pr.balanced_accuracy([1, 0, 1], [0, 0, 0]))
    assert np.isnan(pr.balanced_accuracy([1, 0, 1], [1, 1, 1]))
    # TPR 1/2, TNR 2/2
    assert pr.balanced_accuracy([1, 0, 0, 0], [1, 1, 0, 0]) == pytest.approx(0.75)


# ----------------------------------------------------------------------------------------------
# diagnostic_score
# ----------------------------------------------------------------------------------------------


# ---- diagnostic_score -------------------------------------------------------------------------
def test_diagnostic_score_hand_values_and_never_detectable():
    out = pr.diagnostic_score([10.0, np.inf, np.nan, 100.0], [100.0, 5.0, 5.0, 10.0])
    np.testing.assert_allclose(out[[0, 3]], [np.log(10.0), -np.log(10.0)])
    assert out[1] == -np.inf and out[2] == -np.inf
    assert out.dtype == np.float64
    # integer N* is read as a float (no integer division)
    np.testing.assert_allclose(pr.diagnostic_score([3], [6]), [np.log(2.0)])


def test_diagnostic_score_bounds_and_messages():
    with pytest.raises(ValueError, match=r"\bN and finite n_star\b.*> 0"):
        pr.diagnostic_score([1.0], [0.0])
    with pytest.raises(ValueError, match=r"\bN and finite n_star\b.*> 0"):
        pr.diagnostic_score([0.0], [1.0])
    with pytest.raises(ValueError, match=r"\bN and finite n_star\b.*> 0"):
        pr.diagnostic_score([-1.0, np.inf], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"\bn_star and N\b.*same shape"):
        pr.diagnostic_score([1.0, 2.0], [1.0])
    with np.errstate(all="raise"):                       # no floating-point warning on N* = inf
        assert pr.diagnostic_score([np.inf], [2.0])[0] == -np.inf


def test_diagnostic_score_budgets_below_one_missing_n_star_and_underflow():
    # any N > 0 is a budget, also N ≤ 1: −log(1/0.5) = −log 2, −log(1/1) = 0
    np.testing.assert_allclose(pr.diagnostic_score([1.0, 1.0], [0.5, 1.0]), [-np.log(2.0), 0.0])
    # a missing N* (None) is read as NaN: never detectable
    np.testing.assert_array_equal(pr.diagnostic_score([None, 10.0], [5.0, 10.0]), [-np.inf, 0.0])
    # N*/N underflowing to 0: +inf (detectable at any budget), without a divide-by-zero warning
    with np.errstate(divide="raise", under="ignore"):
        assert pr.diagnostic_score([1e-300], [1e300])[0] == np.inf


# ----------------------------------------------------------------------------------------------
# design
# ----------------------------------------------------------------------------------------------


# ---- design ----------------------------------------------------------------------------------
def test_design_columns_by_hand():
    X = pr.design([0.0, 1.0, 2.0], [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(X, [[0, 3], [1, 4], [2, 5]])
    # cells c, a, b, a: sorted a, b, c; "a" dropped; columns b, c
    X = pr.design([0, 1, 2, 3], [4, 5, 6, 7], cell=["c", "a", "b", "a"])
    np.testing.assert_array_equal(X, [[0, 4, 0, 1], [1, 5, 0, 0], [2, 6, 1, 0], [3, 7, 0, 0]])
    assert X.dtype == np.float64
    # the diagnostic clipped at ±30 and its "finite" column; -inf → -30, finite 0
    X = pr.design([0, 0, 0, 0], [1, 1, 1, 1], diag=[-np.inf, 45.0, -31.0, 2.5])
    np.testing.assert_array_equal(X[:, 2], [-30.0, 30.0, -30.0, 2.5])
    np.testing.assert_array_equal(X[:, 3], [0.0, 1.0, 1.0, 1.0])
    assert pr.DIAG_CAP == 30.0
    # cell and diag together: cell columns first
    X = pr.design([0, 0], [1, 1], cell=["a", "b"], diag=[1.0, np.inf])
    np.testing.assert_array_equal(X, [[0, 1, 0, 1, 1], [0, 1, 1, 30, 0]])


def test_design_messages():
    with pytest.raises(ValueError, match=r"\blog_lag and log_n\b.*length"):
        pr.design([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match=r"\bcell\b.*one entry per row"):
        pr.design([0.0, 1.0], [1.0, 2.0], cell=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"\bdiag has 1 entries\b"):
        pr.design([0.0, 1.0], [1.0, 2.0], diag=[1.0])
    with pytest.raises(ValueError, match=r"\blog_lag\b.*NaN"):
        pr.design([np.inf], [1.0])
    with pytest.raises(ValueError, match=r"\blog_n\b.*NaN"):
        pr.design([1.0], [np.inf])
    with pytest.raises(ValueError, match=r"\bdiag\b.*NaN"):
        pr.design([1.0], [1.0], diag=[np.nan])


# ----------------------------------------------------------------------------------------------
# cv_logistic_scores
# ----------------------------------------------------------------------------------------------


def test_logistic_cv_is_out_of_fold():
    # A label that is pure noise per seed: in-sample fits could memorise nothing with 2 features,
    # but out-of-fold a group's own rows must not influence its prediction. Check that changing
    # group 0's labels leaves group 0's predictions unchanged.
    r = _grid()
    rng = np.random.default_rng(0)
    y = rng.random(len(r)) < 0.5
    X = np.c_[np.log(r[:, 2]), np.log(r[:, 3])]
    p1 = pr.cv_logistic_scores(X, y, r[:, 1])
    y2 = y.copy()
    y2[r[:, 1] == 0] = ~y2[r[:, 1] == 0]
    p2 = pr.cv_logistic_scores(X, y2, r[:, 1])
    np.testing.assert_allclose(p1[r[:, 1] == 0], p2[r[:, 1] == 0])
    assert not np.allclose(p1[r[:, 1] == 1], p2[r[:, 1] == 1])


def test_logistic_cv_one_class_fold_predicts_its_frequency():
    X = np.arange(6.0)[:, None]
    y = np.array([1, 1, 1, 1, 0, 0], bool)
    g = np.array([0, 0, 1, 1, 2, 2])
    p = pr.cv_logistic_scores(X, y, g)
    np.testing.assert_array_equal(p[4:], [0.0, 0.0])   # folds 0 and 1 only had learned rows: a constant


def test_cv_logistic_is_scale_invariant_standardised():
    # the features are standardised before the L2 fit: rescaling a column changes nothing
    X, y, g = _cv_data()
    a = pr.cv_logistic_scores(X, y, g, C=0.1)
    b = pr.cv_logistic_scores(X * [1000.0, 0.001], y, g, C=0.1)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_cv_logistic_regularisation_c_is_used():
    # C → 0: the slopes vanish and every held-out row of a fold gets the intercept only
    X, y, g = _cv_data()
    p = pr.cv_logistic_scores(X, y, g, C=1e-8)
    for lev in range(3):
        assert np.ptp(p[g == lev]) < 1e-6
    # the default (C = 1) does not flatten them
    q = pr.cv_logistic_scores(X, y, g)
    assert all(np.ptp(q[g == lev]) > 0.1 for lev in range(3))
    # and is C = 1 (not some other value): the slopes grow with C, so ptp is monotone in C
    p_half, p_one, p_two = (pr.cv_logistic_scores(X, y, g, C=c) for c in (0.5, 1.0, 2.0))
    np.testing.assert_allclose(q, p_one, rtol=1e-6)
    assert np.ptp(p_half[g == 0]) < np.ptp(q[g == 0]) < np.ptp(p_two[g == 0])


def test_cv_logistic_one_class_fold_all_negative():
    X = np.arange(6.0)[:, None]
    y = np.array([0, 0, 0, 0, 1, 1], bool)
    g = np.array([0, 0, 1, 1, 2, 2])
    p = pr.cv_logistic_scores(X, y, g)
    np.testing.assert_array_equal(p[4:], [0.0, 0.0])   # the other folds held only unlearned rows
    assert np.all(p[:4] != 0.0)


def test_cv_logistic_argument_messages():
    X, y, g = _cv_data()
    with pytest.raises(ValueError, match=r"\bX\b.*\(12,\)"):
        pr.cv_logistic_scores(X[:, 0], y, g)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"\bX\b.*\(12, 2\)"):
        pr.cv_logistic_scores(bad, y, g)
    with pytest.raises(ValueError, match=r"\blabel has 11 entries\b.*\b12\b"):
        pr.cv_logistic_scores(X, y[:11], g)
    with pytest.raises(ValueError, match=r"\bgroups\b.*one entry per row"):
        pr.cv_logistic_scores(X, y, g[:11])
    with pytest.raises(ValueError, match=r"\bgroups\b.*at least 2"):
        pr.cv_logistic_scores(X, y, np.zeros(12))
    with pytest.raises(ValueError, match=r"\bC\b.*> 0.0"):
        pr.cv_logistic_scores(X, y, g, C=0.0)
    # integer X is read as float
    out = pr.cv_logistic_scores(np.arange(6)[:, None], [0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2])
    assert out.dtype == np.float64 and out.shape == (6,)


def test_cv_logistic_missing_feature_is_refused_with_the_message():
    X, y, g = _cv_data()
    Xo = X.astype(object)
    Xo[0, 0] = None                                       # read as NaN: not finite
    with pytest.raises(ValueError, match=r"\bX\b.*\(12, 2\)"):
        pr.cv_logistic_scores(Xo, y, g)


def test_cv_logistic_one_class_fold_first_does_not_stop_the_others():
    # fold 0 holds both learned rows: its training rows are all unlearned → 0; folds 1 and 2 are
    # still fitted: fold 1 trains on x = 0, 1 (learned) and 4, 5 (unlearned), symmetric about 2.5,
    # so its rows x = 2 and 3 get opposite log-odds; fold 2's rows x = 4, 5 lie on the unlearned side
    X = np.arange(6.0)[:, None]
    y = np.array([1, 1, 0, 0, 0, 0], bool)
    g = np.array([0, 0, 1, 1, 2, 2])
    p = pr.cv_logistic_scores(X, y, g)
    np.testing.assert_array_equal(p[:2], [0.0, 0.0])
    assert p[2] > 0 > p[3] and p[2] == pytest.approx(-p[3], rel=1e-3)
    assert p[5] < p[4] < 0


def test_cv_logistic_two_groups_are_enough():
    p = pr.cv_logistic_scores(np.arange(4.0)[:, None], [1, 0, 1, 0], [0, 0, 1, 1])
    assert p.shape == (4,) and np.all(np.isfinite(p)) and np.all(p != 0.0)


# ----------------------------------------------------------------------------------------------
# block_bootstrap
# ----------------------------------------------------------------------------------------------


def test_block_bootstrap_keeps_blocks_whole_and_pairs():
    # two blocks: one all-perfect, one all-reversed; a resample is either block twice (AUC 1 or 0,
    # dropped when one class only) or both (AUC 0.5): whole blocks give only these values.
    # 25 rows per class per block: a row resample would mix both blocks (AUC near 0.5 always)
    y = np.tile(np.repeat([0, 1], 25), 2).astype(bool)
    s = np.r_[np.repeat([0.0, 1.0], 25), np.repeat([1.0, 0.0], 25)]
    b = np.repeat([0, 1], 50)
    ci = pr.block_bootstrap({"s": s, "same": s.copy()}, y, b, n_boot=400, seed=1)
    lo, hi = ci["s"]
    assert lo == 0.0 and hi == 1.0
    assert ci["_diff"]["same"] == (0.0, 0.0)           # the same resample for every score
    # a within-block row resample would give values strictly between
    rng = np.random.default_rng(0)
    y2 = np.repeat([0, 1], 50).astype(bool)
    s2 = np.r_[rng.normal(0, 1, 50), rng.normal(1, 1, 50)]
    b2 = np.arange(100) % 5
    lo2, hi2 = pr.block_bootstrap({"s": s2}, y2, b2, n_boot=300)["s"]
    assert lo2 < pr.auc(s2, y2) < hi2


def test_block_bootstrap_one_block_is_the_whole_sample():
    # one block: every resample is the data itself, AUC(a) = 1, AUC(b) = 0
    y = np.array([0, 0, 1, 1], bool)
    a = np.array([0.0, 1.0, 2.0, 3.0])
    out = pr.block_bootstrap({"a": a, "b": -a}, y, np.zeros(4), n_boot=5)
    assert out["a"] == (1.0, 1.0) and out["b"] == (0.0, 0.0)
    assert out["_diff"] == {"a": (0.0, 0.0), "b": (-1.0, -1.0)}     # AUC(name) − AUC(first name)
    out = pr.block_bootstrap({"b": -a, "a": a}, y, np.zeros(4), n_boot=5)
    assert out["_diff"] == {"b": (0.0, 0.0), "a": (1.0, 1.0)}
    assert set(out) == {"a", "b", "_diff"}


def test_block_bootstrap_level_sets_the_percentiles(fast_auc):
    # two blocks, one perfect and one reversed: resample AUC 1 (AA, p = ¼), 0 (BB, ¼), ½ (AB, ½).
    y = np.tile([0, 1], 2).astype(bool)
    s = np.array([0.0, 1.0, 1.0, 0.0])
    b = np.array([0, 0, 1, 1])
    assert pr.block_bootstrap({"s": s}, y, b, n_boot=400, seed=1)["s"] == (0.0, 1.0)
    # level 0.4: the 30 % and 70 % quantiles lie inside the ½ mass (25 % ± 2 % below it)
    assert pr.block_bootstrap({"s": s}, y, b, n_boot=400, seed=1, level=0.4)["s"] == (0.5, 0.5)
    # only the AA resamples are all 1: with level → 0 the interval is ½ too
    lo, hi = pr.block_bootstrap({"s": s}, y, b, n_boot=400, seed=1, level=0.01)["s"]
    assert lo == hi == 0.5


def test_block_bootstrap_skips_one_class_resamples():
    # block 0 all unlearned, block 1 all learned: only the mixed resamples (AB, BA) count; AUC 1
    y = np.array([0, 0, 1, 1], bool)
    s = np.array([0.0, 1.0, 2.0, 3.0])
    out = pr.block_bootstrap({"s": s}, y, np.array([0, 0, 1, 1]), n_boot=50, seed=3)
    assert out["s"] == (1.0, 1.0) and out["_diff"]["s"] == (0.0, 0.0)
    # one class only in every resample: no draw, NaN intervals
    out = pr.block_bootstrap({"s": s}, np.ones(4, bool), np.array([0, 0, 1, 1]), n_boot=20)
    assert all(np.isnan(v) for v in out["s"]) and all(np.isnan(v) for v in out["_diff"]["s"])
    out = pr.block_bootstrap({"s": s}, np.zeros(4, bool), np.array([0, 0, 1, 1]), n_boot=20)
    assert all(np.isnan(v) for v in out["s"])


def test_block_bootstrap_draws_every_block_with_replacement(fast_auc):
    # three blocks, each holding one class pair with its own AUC (1, 0, 1): resamples of 3
    # blocks drawn uniformly reach both 0 (BBB, 1/27) and 1 (8/27)
    y = np.tile([0, 1], 3).astype(bool)
    s = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    b = np.repeat([0, 1, 2], 2)
    lo, hi = pr.block_bootstrap({"s": s}, y, b, n_boot=300, seed=0, level=0.99)["s"]
    assert (lo, hi) == (0.0, 1.0)
    # a resample of 3 blocks with k perfect ones has AUC k/3 (cross-block pairs tie or split),
    # k ~ Binomial(3, 2/3): P(k ≤ 1) = 7/27, P(k ≤ 2) = 19/27, so the median is 2/3 (2 blocks
    # drawn would give ½ there)
    out = pr.block_bootstrap({"s": s}, y, b, n_boot=300, seed=0, level=0.02)["s"]
    assert out == pytest.approx((2 / 3, 2 / 3))


def test_block_bootstrap_defaults_are_seed_0_n_boot_1000_level_95(fast_auc):
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 20).astype(bool)
    s = np.r_[rng.normal(0, 1, 20), rng.normal(1, 1, 20)]
    b = np.arange(40) % 8
    default = pr.block_bootstrap({"s": s}, y, b)
    assert default == pr.block_bootstrap({"s": s}, y, b, n_boot=1000, seed=0, level=0.95)
    assert default != pr.block_bootstrap({"s": s}, y, b, n_boot=1000, seed=1, level=0.95)
    assert default != pr.block_bootstrap({"s": s}, y, b, n_boot=999, seed=0, level=0.95)
    assert default != pr.block_bootstrap({"s": s}, y, b, n_boot=1000, seed=0, level=0.9)


def test_block_bootstrap_argument_messages():
    y = np.array([0, 1], bool)
    with pytest.raises(TypeError, match=r"\bscores\b"):
        pr.block_bootstrap({}, y, [0, 1])
    with pytest.raises(TypeError, match=r"\bscores\b"):
        pr.block_bootstrap([[0.0, 1.0]], y, [0, 1])
    with pytest.raises(ValueError, match=r"\bsame length\b"):
        pr.block_bootstrap({"a": [0.0, 1.0], "b": [0.0]}, y, [0, 1])
    with pytest.raises(ValueError, match=r"\bscores\['a'\].*NaN"):
        pr.block_bootstrap({"a": [0.0, np.nan]}, y, [0, 1])
    with pytest.raises(ValueError, match=r"\blabel has 2 entries\b.*\b3\b"):
        pr.block_bootstrap({"a": [0.0, 1.0, 2.0]}, y, [0, 1, 2])
    with pytest.raises(ValueError, match=r"\bblocks\b"):
        pr.block_bootstrap({"a": [0.0, 1.0]}, y, [0, 1, 2])
    with pytest.raises(ValueError, match=r"\bn_boot\b.*>= 1"):
        pr.block_bootstrap({"a": [0.0, 1.0]}, y, [0, 1], n_boot=0)
    with pytest.raises(ValueError, match=r"\blevel\b.*> 0.0"):
        pr.block_bootstrap({"a": [0.0, 1.0]}, y, [0, 1], level=0.0)
    with pytest.raises(ValueError, match=r"\blevel\b.*< 1.0"):
        pr.block_bootstrap({"a": [0.0, 1.0]}, y, [0, 1], level=1.0)
    # n_boot = 1 is allowed
    assert pr.block_bootstrap({"a": [0.0, 1.0]}, y, [0, 0], n_boot=1)["a"] == (1.0, 1.0)


def test_block_bootstrap_goes_on_after_a_one_class_resample(monkeypatch):
    # block 0 all unlearned, block 1 all learned: half the resamples (AA, BB) are skipped, the
    # others scored; the loop must go on past a skipped one (about 25 of 50 scored)
    calls = []
    monkeypatch.setattr(pr, "auc", lambda s, y: calls.append(1) or 1.0)
    pr.block_bootstrap({"s": [0.0, 1.0, 2.0, 3.0]}, [0, 0, 1, 1], [0, 0, 1, 1], n_boot=50, seed=3)
    assert 10 < len(calls) < 40


# ----------------------------------------------------------------------------------------------
# finding10
# ----------------------------------------------------------------------------------------------


def test_finding10_rule():
    a = {("lag", "init"): 0.9, ("full", "final"): 0.7}
    ci = {("lag", "init"): (0.85, 0.95), ("full", "final"): (0.6, 0.8)}
    assert pr.finding10(a, ci, 0.7, 0.8) == ("reproduced", ("lag", "init"))
    assert pr.finding10(a, ci, 0.7, 0.85)[0] == "inconclusive"          # interval touches the baseline
    assert pr.finding10(a, ci, 0.9, 0.95)[0] == "not reproduced"        # ties do not beat
    assert pr.finding10({("x", "y"): float("nan")}, {("x", "y"): (np.nan, np.nan)}, 0.5, 0.5) == ("inconclusive", None)


# ---- finding10 --------------------------------------------------------------------------------
def test_finding10_ties_broken_by_name_and_nan_skipped():
    ci = {"a": (0.5, 0.9), "b": (0.7, 0.9), "c": (0.1, 0.2)}
    assert pr.finding10({"a": 0.8, "b": 0.8}, ci, 0.5, 0.6) == ("reproduced", "b")
    assert pr.finding10({"b": 0.8, "a": 0.8}, ci, 0.5, 0.6) == ("reproduced", "b")
    assert pr.finding10({"c": float("nan"), "a": 0.8}, ci, 0.5, 0.6) == ("inconclusive", "a")
    # the best has an AUC above auc_ln but its interval's low end does not beat auc_lnc
    assert pr.finding10({"a": 0.8}, ci, 0.79, 0.6) == ("inconclusive", "a")
    # every AUC at or below auc_ln: not reproduced, the best still named
    assert pr.finding10({"a": 0.8, "c": 0.3}, ci, 0.8, 0.6) == ("not reproduced", "a")
    # the interval's low end, not its high end, must beat auc_lnc
    assert pr.finding10({"c": 0.9}, ci, 0.5, 0.15) == ("inconclusive", "c")


def test_finding10_argument_messages():
    with pytest.raises(TypeError, match=r"\bdiag_auc\b"):
        pr.finding10({}, {}, 0.5, 0.5)
    with pytest.raises(ValueError, match=r"\bdiag_interval\b.*\['a', 'b'\]"):
        pr.finding10({"b": 0.5, "a": 0.5, "c": 0.5}, {"c": (0.0, 1.0)}, 0.5, 0.5)
    with pytest.raises(ValueError, match=r"\bauc_ln\b"):
        pr.finding10({"a": 0.5}, {"a": (0.4, 0.6)}, True, 0.5)
    with pytest.raises(ValueError, match=r"\bauc_ln\b"):
        pr.finding10({"a": 0.5}, {"a": (0.4, 0.6)}, "0.5", 0.5)
    with pytest.raises(ValueError, match=r"\bauc_lnc\b"):
        pr.finding10({"a": 0.5}, {"a": (0.4, 0.6)}, 0.5, float("inf"))
    # integers and numpy floats are finite numbers
    assert pr.finding10({"a": 0.5}, {"a": (0.4, 0.6)}, 1, np.float64(0.3)) == ("reproduced", "a")


# ----------------------------------------------------------------------------------------------
# Wrong-variable plants (issue 41 item 6): bugs mutmut cannot plant (a right computation fed
# another fold, another array, the training rows instead of the held-out ones …). Each was
# planted by hand in lwsim/stats/prediction.py, one at a time, and this file run against it.
#   P1  auc: the raw scores (±inf unmapped) passed to scipy ........ test_auc_inf_ranks_above_huge_finite_scores
#   P2  auc: `finite = s` (the ±inf extremes taken from all scores) . test_auc_inf_ranks_above_huge_finite_scores
#   P3  balanced_accuracy: (predicted, label) passed to sklearn swapped . test_balanced_accuracy_hand_table, ..._nan_for_all_negative_labels
#   P4  balanced_accuracy: the one-class check made on `predicted` .... test_balanced_accuracy_hand_table, ..._nan_for_all_negative_labels
#   P5  diagnostic_score: NaN N* located with isnan(N) ................ test_diagnostic_score_hand_values_and_never_detectable
#   P6  diagnostic_score: the N* > 0 check made on N .................. test_diagnostic_score_bounds_and_messages
#   P7  design: "finite" column computed from the clipped diagnostic .. test_design_columns_by_hand
#   P8  design: cell levels in order of appearance, not sorted ........ test_design_columns_by_hand
#   P9  cv: fitted on the held-out group's rows ....................... test_logistic_cv_is_out_of_fold
#   P10 cv: the scaler fitted on all rows (held-out ones included) .... test_cv_logistic_equals_per_fold_hand_fit (new)
#   P11 cv: the one-class check made on the held-out labels ........... test_cv_logistic_one_class_fold_all_negative, ..._first_does_not_stop_the_others
#   P12 cv: predict_proba instead of the log-odds ..................... test_cv_logistic_one_class_fold_first_does_not_stop_the_others
#   P13 cv: fitted on all rows (held-out included) .................... test_logistic_cv_is_out_of_fold
#   P14 cv: the first fold's model reused for every fold .............. test_logistic_cv_is_out_of_fold
#   P15 cv: held-out rows scored with their columns reversed .......... test_logistic_cv_recovers_a_monotone_rule_and_one_cell_only
#   P16 bootstrap: rows resampled instead of blocks ................... test_block_bootstrap_keeps_blocks_whole_and_pairs (+4)
#   P17 bootstrap: one draw reused for every resample ................. test_block_bootstrap_keeps_blocks_whole_and_pairs (+4)
#   P18 bootstrap: scored against the original rows' labels ........... test_block_bootstrap_keeps_blocks_whole_and_pairs, ..._skips_one_class_resamples
#   P19 bootstrap: a fresh resample per score (unpaired) .............. test_block_bootstrap_keeps_blocks_whole_and_pairs
#   P20 bootstrap: the one-class skip checks all labels, not the draw's  test_block_bootstrap_skips_one_class_resamples
#   P21 bootstrap: the first score's AUC recorded for every score ..... test_block_bootstrap_one_block_is_the_whole_sample (+6)
#   P22 bootstrap: "_diff" taken against the score itself ............. test_block_bootstrap_one_block_is_the_whole_sample
#   P23 bootstrap: `seed` ignored (always 0) .......................... test_block_bootstrap_defaults_are_seed_0_n_boot_1000_level_95
#   P24 bootstrap: as many blocks drawn as rows (up to 2× blocks) ..... test_block_bootstrap_draws_every_block_with_replacement (+2)
#   P25 bootstrap: blocks split by label (block × class) .............. test_block_bootstrap_draws_every_block_with_replacement (+2)
#   P26 bootstrap: "_diff" against the last score, not the first ...... test_block_bootstrap_one_block_is_the_whole_sample
#   P27 finding10: the interval's high end compared ................... test_finding10_rule, ..._ties_broken_by_name_and_nan_skipped
#   P28 finding10: the interval compared with auc_ln, not auc_lnc ..... test_finding10_rule
#   P29 finding10: the AUCs compared with auc_lnc, not auc_ln ......... test_finding10_ties_broken_by_name_and_nan_skipped
#   P30 finding10: the best taken over diag_auc, NaN included ......... test_finding10_ties_broken_by_name_and_nan_skipped
#   P31 finding10: "not reproduced" checked over diag_auc, NaN included  test_finding10_not_reproduced_ignores_nan_aucs (new)
#   P32 finding10: the interval of the first key, not the best's ...... test_finding10_ties_broken_by_name_and_nan_skipped
#   P33 finding10: the best chosen by interval low end, not by AUC .... test_finding10_best_is_the_highest_auc_not_the_highest_interval (new)
# ----------------------------------------------------------------------------------------------


def _hand_logistic(Xtr, ytr, Xte, C, scale_from):
    """L2-logistic log-odds by Newton's method, on features standardised with the mean and the
    (ddof 0) sd of ``scale_from``: minimises ½|w|² + C·Σ log-loss, the intercept unpenalised
    (sklearn's objective)."""
    mu, sd = scale_from.mean(axis=0), scale_from.std(axis=0)
    Z = np.c_[np.ones(len(Xtr)), (Xtr - mu) / sd]
    t = np.asarray(ytr, float)
    beta = np.zeros(Z.shape[1])
    pen = np.r_[0.0, np.ones(Z.shape[1] - 1)] / C
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-Z @ beta))
        step = np.linalg.solve((Z * (p * (1 - p))[:, None]).T @ Z + np.diag(pen), Z.T @ (p - t) + pen * beta)
        beta -= step
        if np.abs(step).max() < 1e-13:
            break
    return np.c_[np.ones(len(Xte)), (Xte - mu) / sd] @ beta


def test_cv_logistic_equals_per_fold_hand_fit():
    # group 0's features spread 8× wider: standardising with all rows rather than the training
    # rows changes the L2 geometry and so the held-out log-odds (by several units at C = 0.1)
    rng = np.random.default_rng(7)
    g = np.repeat([0, 1, 2, 3], 10)
    X = rng.normal(0, 1, (40, 2))
    X[g == 0] *= 8.0
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 1, 40)) > 0
    got = pr.cv_logistic_scores(X, y, g, C=0.1)
    want, all_rows_scaler, in_sample = (np.empty(40) for _ in range(3))
    for lev in range(4):
        t = g == lev
        want[t] = _hand_logistic(X[~t], y[~t], X[t], 0.1, X[~t])
        all_rows_scaler[t] = _hand_logistic(X[~t], y[~t], X[t], 0.1, X)
        in_sample[t] = _hand_logistic(X, y, X[t], 0.1, X)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-2)
    assert np.abs(got - all_rows_scaler).max() > 1.0     # the decoys are far from the result
    assert np.abs(got - in_sample).max() > 0.1


def test_finding10_not_reproduced_ignores_nan_aucs():
    # the only finite AUC (0.4) is at or below auc_ln: "not reproduced"; a NaN AUC must not
    # count as one "above" the baseline (nor block the rule)
    ci = {"a": (0.3, 0.5), "c": (np.nan, np.nan)}
    assert pr.finding10({"c": float("nan"), "a": 0.4}, ci, 0.5, 0.6) == ("not reproduced", "a")
    assert pr.finding10({"a": 0.4}, ci, 0.5, 0.6) == ("not reproduced", "a")
    assert pr.finding10({"a": 0.55}, ci, 0.5, 0.6) == ("inconclusive", "a")   # the rule can say otherwise


def test_finding10_best_is_the_highest_auc_not_the_highest_interval():
    # a: highest AUC, wide interval (low end 0.6); b: lower AUC, narrow interval (low end 0.75).
    # The best is a, whose low end does not beat auc_lnc = 0.7: inconclusive. Chosen by the
    # interval (b) it would read "reproduced".
    a = {"a": 0.9, "b": 0.8}
    ci = {"a": (0.6, 0.95), "b": (0.75, 0.85)}
    assert pr.finding10(a, ci, 0.5, 0.7) == ("inconclusive", "a")
    assert ci["b"][0] > 0.7 > ci["a"][0]                                   # the decoy would differ


def test_auc_inf_ranks_above_huge_finite_scores():
    # "±Inf scores rank as extremes" (the docstring), whatever the finite scores' magnitude. A bug
    # found planting for issue 41 item 6, fixed: auc mapped +inf to max(finite) + 1, equal to
    # max(finite) once |max| ≥ 2**53, so +inf tied with the largest finite score.
    assert pr.auc([1e17, np.inf], [0, 1]) == 1.0
    assert pr.auc([-1e17, -np.inf], [1, 0]) == 1.0


# ----------------------------------------------------------------------------------------------
# nested_by_group, stratified_auc (finding 10 by the verdict scheme, docs/experiments.md §5.5.2)
# ----------------------------------------------------------------------------------------------


def test_nested_by_group_by_hand():
    # group 1: p0 = ½ for both rows; p1 = ¾ for the positive, ¼ for the negative
    # B0 = ¼, B1 = 1/16, reduction ¾; deviance 2 log 2 and −2 log ¾. Group 2: both models equal
    s0 = [0.0, 0.0, 1.0, -1.0]
    s1 = [np.log(3.0), -np.log(3.0), 1.0, -1.0]
    out = pr.nested_by_group(s0, s1, [1, 0, 1, 0], [1, 1, 2, 2])
    assert out[1]["brier0"] == pytest.approx(0.25) and out[1]["brier1"] == pytest.approx(1 / 16)
    assert out[1]["brier_reduction"] == pytest.approx(0.75)
    assert out[1]["deviance0"] == pytest.approx(2 * np.log(2)) and out[1]["deviance1"] == pytest.approx(-2 * np.log(0.75))
    assert out[2]["brier_reduction"] == pytest.approx(0.0) and list(out) == [1, 2]
    # a near-perfect base model: B0 tiny but > 0, so the reduction is defined (B0 = 0 exactly gives None)
    big = pr.nested_by_group([50.0, -50.0], [50.0, -50.0], [1, 0], [0, 0])
    assert big[0]["brier_reduction"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match=r"\bscore1\b"):
        pr.nested_by_group([0.0, 0.0], [0.0], [1, 0], [0, 0])
    with pytest.raises(ValueError, match=r"\bgroups\b"):
        pr.nested_by_group([0.0, 0.0], [0.0, 0.0], [1, 0], [0])


def test_stratified_auc_ranks_only_within_strata():
    # within each stratum the positive scores higher (AUC 1); pooled, stratum b's negative (3) beats
    # stratum a's positive (2): the pooled AUC is 3/4
    s, y, st = [1.0, 2.0, 3.0, 4.0, 9.0], [0, 1, 0, 1, 1], ["a", "a", "b", "b", "c"]
    assert pr.stratified_auc(s, y, st) == 1.0          # stratum c (one class) is left out
    assert pr.auc(s[:4], y[:4]) == 0.75
    assert np.isnan(pr.stratified_auc([1.0, 2.0], [1, 1], ["a", "a"]))
    with pytest.raises(ValueError, match=r"\bstrata\b"):
        pr.stratified_auc([1.0, 2.0], [0, 1], ["a"])


def test_nested_by_group_refuses_infinite_scores():
    with pytest.raises(ValueError, match=r"\bscore0\b"):
        pr.nested_by_group([np.inf, 0.0], [0.0, 0.0], [1, 0], [0, 0])
    with pytest.raises(ValueError, match=r"\bscore1\b"):
        pr.nested_by_group([0.0, 0.0], [0.0, -np.inf], [1, 0], [0, 0])


def test_nested_by_group_zero_base_brier_label_length_and_plain_keys():
    # s = 40: e^{−40} ≈ 4e−18 is below half an ulp of 1, so p = 1 exactly and B0 = B1 = 0: reduction None
    zero = pr.nested_by_group([40.0, 40.0], [40.0, 40.0], [1, 1], [7, 7])
    assert zero[7]["brier0"] == 0.0 and zero[7]["brier1"] == 0.0 and zero[7]["brier_reduction"] is None
    # one label per row, checked against the scores
    for lab in ([1, 0, 1], [1]):
        with pytest.raises(ValueError, match=r"\blabel\b"):
            pr.nested_by_group([0.0, 0.0], [0.0, 0.0], lab, [0, 0])
    # the groups come back as plain Python values (int from an int array, str from an object array)
    out = pr.nested_by_group([0.0, 0.0], [0.0, 0.0], [1, 0], np.array([3, 5]))
    assert [type(k) for k in out] == [int, int] and list(out) == [3, 5]
    obj = pr.nested_by_group([0.0, 0.0], [0.0, 0.0], [1, 0], np.array(["s1", "s2"], dtype=object))
    assert list(obj) == ["s1", "s2"] and all(type(k) is str for k in obj)
    assert obj["s1"]["brier0"] == pytest.approx(0.25)            # p = ½ against y = 1


def test_stratified_auc_skips_one_class_strata_quietly_and_names_its_arguments():
    import warnings
    # stratum a ranks its positive above its negative (AUC 1); stratum n holds only negatives and
    # stratum p only positives: both are left out, so the mean is 1
    s, y, st = [1.0, 2.0, 5.0, 0.0, 9.0], [0, 1, 0, 0, 1], ["a", "a", "n", "n", "p"]
    assert pr.stratified_auc(s, y, st) == 1.0
    # no stratum with both classes: NaN, without a warning (no mean of an empty list)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(pr.stratified_auc([1.0, 2.0], [0, 0], ["a", "b"]))
    for lab in ([0, 1, 1], [1]):
        with pytest.raises(ValueError, match=r"\blabel\b"):
            pr.stratified_auc([1.0, 2.0], lab, ["a", "a"])
    with pytest.raises(ValueError, match=r"\bscore\b"):
        pr.stratified_auc([np.nan, 2.0], [0, 1], ["a", "a"])
    with pytest.raises(TypeError, match=r"\bscore\b"):
        pr.stratified_auc([[1.0, 2.0]], [0, 1], ["a", "a"])
