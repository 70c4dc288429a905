"""Scoring the window as a prediction of what is learned (docs/statistics.md §3.6, docs/experiments.md §5.7).

Each run (cell, seed, N, ℓ*) has a binary outcome learned(ℓ*, N) and, from the diagnostic, N*(ℓ*)
(continuous) and N̂(ℓ*) (on the N grid). This module scores that prediction and its baselines:

- :func:`auc`: AUC = U / (n₁ n₀), U the Mann–Whitney statistic of the scores of the learned runs
  against the unlearned (scipy.stats.mannwhitneyu; ties count ½): the probability that a random
  learned run scores above a random unlearned one. The diagnostic's score is −log(N*/N).
- :func:`balanced_accuracy`: ½(TPR + TNR) of a binary prediction (here N̂(ℓ*) ≤ N).
- :func:`logistic_cv`: leave-one-group-out (one seed out) out-of-fold probabilities of an L2
  logistic regression (scikit-learn) on given features; the baselines use (log ℓ*, log N),
  (log ℓ*, log N, one-hot cell) and (log ℓ*, log N, −log(N*/N)).
- :func:`block_bootstrap`: percentile interval of a statistic over resampled blocks (seeds, or
  cell × seed blocks), each block drawn whole with replacement.
- :func:`finding10`: the finding-10 rule (docs/experiments.md §5.7).

scikit-learn rather than statsmodels: the outcome is often perfectly separable on these grids
(a lag learned at every N above a boundary), where an unpenalised maximum-likelihood Logit
(statsmodels) diverges or raises; scikit-learn's L2-penalised fit stays finite and is the
well-kept standard for out-of-fold prediction.
"""
from __future__ import annotations

import numpy as np

LOGISTIC_C = 1.0           # inverse L2 strength on standardised features (sklearn's default)


def _labels(label, name="label"):
    y = np.asarray(label)
    if y.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {y.shape}")
    if y.dtype != bool:
        if not np.all(np.isin(y, (0, 1))):
            raise ValueError(f"{name} must be boolean or 0/1")
        y = y.astype(bool)
    return y


def _scores(score, n, name="score"):
    s = np.asarray(score, dtype=float)
    if s.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) like the labels, got {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{name} must be finite")
    return s


def auc(score, label):
    """AUC = U/(n₁n₀) with U = Σ_{i learned} Σ_{j not} [s_i > s_j] + ½[s_i = s_j] (Mann–Whitney,
    scipy), or None when either class is empty (docs/statistics.md §3.6)."""
    y = _labels(label)
    s = _scores(score, y.size)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return None
    from scipy.stats import mannwhitneyu
    u = mannwhitneyu(s[y], s[~y], alternative="two-sided", method="asymptotic").statistic
    return float(u) / (n1 * n0)


def balanced_accuracy(pred, label):
    """½(TP/(TP+FN) + TN/(TN+FP)) of a boolean prediction, or None when either class is empty
    (docs/statistics.md §3.6)."""
    y = _labels(label)
    p = _labels(pred, "pred")
    if p.shape != y.shape:
        raise ValueError(f"pred must have the labels' shape {y.shape}, got {p.shape}")
    if y.all() or not y.any():
        return None
    return 0.5 * (float(np.mean(p[y])) + float(np.mean(~p[~y])))


def logistic_cv(features, label, groups, C=LOGISTIC_C):
    """Out-of-fold P(learned) of an L2 logistic regression, leaving one group (seed) out at a time:
    for each group g, fit on the rows of the other groups (features standardised on them) and
    predict the rows of g. A training fold with one class predicts its class frequency (0 or 1)
    for g. Returns an array of the labels' length (docs/statistics.md §3.6)."""
    y = _labels(label)
    X = np.asarray(features, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ValueError(f"features must have shape ({y.size}, k), got {np.shape(features)}")
    if not np.all(np.isfinite(X)):
        raise ValueError("features must be finite")
    g = np.asarray(groups)
    if g.shape != (y.size,):
        raise ValueError(f"groups must have shape ({y.size},), got {g.shape}")
    if not (isinstance(C, (int, float)) and C > 0):
        raise ValueError(f"C must be a positive number, got {C!r}")
    from sklearn.linear_model import LogisticRegression
    out = np.empty(y.size)
    for grp in np.unique(g):
        test = g == grp
        tr = ~test
        if not tr.any():
            raise ValueError("groups must hold at least two distinct values for leave-one-group-out")
        ytr = y[tr]
        if ytr.all() or not ytr.any():
            out[test] = float(ytr[0])
            continue
        mu, sd = X[tr].mean(0), X[tr].std(0)
        sd = np.where(sd > 0, sd, 1.0)    # a constant column (one cell only) carries nothing; keep it finite
        m = LogisticRegression(C=C, max_iter=1000).fit((X[tr] - mu) / sd, ytr)
        out[test] = m.predict_proba((X[test] - mu) / sd)[:, 1]
    return out


def block_bootstrap(stat, blocks, n_boot=1000, seed=0, level=0.95):
    """Percentile interval of ``stat(idx)`` over resampled blocks: each replicate draws as many
    blocks as there are, with replacement, and takes the rows of every drawn block (repeated
    blocks repeated). Replicates where ``stat`` returns None are dropped; returns (lo, hi) or
    (None, None) when fewer than half are defined (docs/statistics.md §3.6)."""
    b = np.asarray(blocks)
    if b.ndim != 1 or b.size == 0:
        raise ValueError("blocks must be a non-empty one-dimensional array")
    if not (isinstance(n_boot, (int, np.integer)) and n_boot >= 10):
        raise ValueError(f"n_boot must be an integer ≥ 10, got {n_boot!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    ub = np.unique(b)
    rows = [np.flatnonzero(b == k) for k in ub]
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_boot):
        pick = rng.integers(0, ub.size, ub.size)
        v = stat(np.concatenate([rows[i] for i in pick]))
        if v is not None:
            vals.append(v)
    if len(vals) < n_boot / 2:
        return None, None
    a = (1 - level) / 2
    return float(np.quantile(vals, a)), float(np.quantile(vals, 1 - a))


def finding10(candidates, base, base_cell):
    """The finding-10 rule (docs/experiments.md §5.7), decided before looking at results.

    candidates: {name: (auc, lo, hi)} of each null × training point (pooled AUC with its interval);
    base: the (log ℓ*, log N) baseline's AUC; base_cell: the (log ℓ*, log N, cell) baseline's AUC.
    Best = the candidate with the largest AUC. "reproduced" when best's interval lies above
    base_cell (lo > base_cell); "not reproduced" when no candidate's AUC exceeds base; else
    "inconclusive" (also when nothing is defined). Returns (verdict, best name or None)."""
    if not isinstance(candidates, dict):
        raise TypeError("candidates must be a dict {name: (auc, lo, hi)}")
    ok = {k: v for k, v in candidates.items() if v is not None and v[0] is not None}
    if not ok or base is None or base_cell is None:
        return "inconclusive", None
    best = max(ok, key=lambda k: ok[k][0])
    a, lo, _ = ok[best]
    if lo is not None and lo > base_cell:
        return "reproduced", best
    if all(v[0] <= base for v in ok.values()):
        return "not reproduced", best
    return "inconclusive", best
