"""lwsim.stats.prediction on hand-computed tables (docs/statistics.md §3.6, docs/experiments.md §5.7)."""
import numpy as np
import pytest

from lwsim.stats import prediction as pr


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


def test_balanced_accuracy_hand_table():
    y = np.array([1, 1, 1, 1, 0, 0], bool)
    p = np.array([1, 1, 1, 0, 1, 0], bool)            # TPR 3/4, TNR 1/2
    assert pr.balanced_accuracy(p, y) == pytest.approx(0.625)
    assert pr.balanced_accuracy(y, y) == 1.0
    assert pr.balanced_accuracy(np.ones(6, bool), y) == 0.5   # always "learned": useless
    assert np.isnan(pr.balanced_accuracy(p[:4], y[:4]))


def _grid(cells=("a", "b"), seeds=(0, 1, 2)):
    rows = []
    for ci, cell in enumerate(cells):
        for s in seeds:
            for lag in (2, 4, 8, 16, 32):
                for N in (10, 30, 100, 300, 1000):
                    rows.append((ci, s, lag, N))
    return np.array(rows, float)


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


def test_logistic_cv_recovers_a_monotone_rule_and_one_cell_only():
    r = _grid(cells=("a",))
    y = np.log(r[:, 3]) - 1.2 * np.log(r[:, 2]) > 1.0
    cell = np.array(["a"] * len(r))                    # one cell only: no cell column
    X = pr.design(np.log(r[:, 2]), np.log(r[:, 3]), cell=cell)
    assert X.shape == (len(r), 2)
    p = pr.cv_logistic_scores(X, y, r[:, 1])
    assert np.all(np.isfinite(p))
    assert pr.auc(p, y) > 0.98


def test_logistic_cv_one_class_fold_predicts_its_frequency():
    X = np.arange(6.0)[:, None]
    y = np.array([1, 1, 1, 1, 0, 0], bool)
    g = np.array([0, 0, 1, 1, 2, 2])
    p = pr.cv_logistic_scores(X, y, g)
    np.testing.assert_array_equal(p[4:], [0.0, 0.0])   # folds 0 and 1 only had learned rows: a constant


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


def test_finding10_rule():
    a = {("lag", "init"): 0.9, ("full", "final"): 0.7}
    ci = {("lag", "init"): (0.85, 0.95), ("full", "final"): (0.6, 0.8)}
    assert pr.finding10(a, ci, 0.7, 0.8) == ("reproduced", ("lag", "init"))
    assert pr.finding10(a, ci, 0.7, 0.85)[0] == "inconclusive"          # interval touches the baseline
    assert pr.finding10(a, ci, 0.9, 0.95)[0] == "not reproduced"        # ties do not beat
    assert pr.finding10({("x", "y"): float("nan")}, {("x", "y"): (np.nan, np.nan)}, 0.5, 0.5) == ("inconclusive", None)


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
