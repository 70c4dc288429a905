"""Scoring a learnability window as a prediction of what was learned (docs/statistics.md §3.6).

A16 (docs/experiments.md §5.7) has one binary outcome per run, learned(ℓ*, N), and, per null and
training point, the diagnostic's continuous prediction −log(N*(ℓ*)/N) and its thresholded one
N̂(ℓ*) ≤ N. This module scores them:

- :func:`auc`: the area under the ROC curve, the Mann–Whitney statistic U/(n₁n₀) (scipy), ties
  counted ½;
- :func:`balanced_accuracy`: ½(TPR + TNR) (scikit-learn);
- :func:`cv_logistic_scores`: out-of-fold scores of a logistic model, leave-one-group-out
  (one group = one seed), for the baselines that know no diagnostic (scikit-learn);
- :func:`design`: their features (log ℓ*, log N[, cell one-hot][, the diagnostic]);
- :func:`block_bootstrap`: percentile intervals of any of these AUCs by resampling blocks
  (seeds, or cell × seed) with replacement;
- :func:`finding10`: the finding-10 verdict rule.
"""
from __future__ import annotations

import numbers

import numpy as np

from ._checks import as_rng, check_int, check_real

DIAG_CAP = 30.0     # |log(N*/N)| cap in the logistic feature: N* = ∞ (never detectable) → −cap


def _labels(label, n=None, name="label"):
    y = np.asarray(label)
    if y.dtype.kind not in "biu" or y.ndim != 1:
        raise TypeError(f"{name} must be a 1-D boolean (or 0/1) array, got dtype {y.dtype}, shape {y.shape}")
    if y.dtype.kind != "b" and not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name} must hold only 0/1 values")
    if n is not None and y.size != n:
        raise ValueError(f"{name} has {y.size} entries, the scores {n}")
    return y.astype(bool)


def _scores(name, score, allow_inf=True):
    s = np.asarray(score)
    if s.dtype.kind not in "fiu" or s.ndim != 1:
        raise TypeError(f"{name} must be a 1-D real array, got dtype {s.dtype}, shape {s.shape}")
    s = s.astype(float)
    if np.isnan(s).any() or (not allow_inf and np.isinf(s).any()):
        raise ValueError(f"{name} must not hold NaN{'' if allow_inf else ' or Inf'}")
    return s


def auc(score, label) -> float:
    """AUC = U / (n₁ n₀), U the Mann–Whitney statistic of the scores of the positives against the
    negatives (scipy.stats.mannwhitneyu): the probability that a random positive scores above a
    random negative, ties counting ½ (docs/statistics.md §3.6). ±Inf scores rank as extremes.
    NaN when either class is empty (no ranking to score)."""
    from scipy.stats import mannwhitneyu, rankdata
    s = _scores("score", score)
    y = _labels(label, s.size)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    # ranks are what matters: the scores' ranks (±inf at the extremes, ties averaged) give the same
    # U, and stay exact where a finite stand-in for ±inf would tie with a score of 2^53 or more
    s = rankdata(s)
    u = mannwhitneyu(s[y], s[~y], alternative="two-sided", method="asymptotic").statistic
    return float(u) / (n1 * n0)


def balanced_accuracy(predicted, label) -> float:
    """½(TPR + TNR) of a binary prediction (sklearn.metrics.balanced_accuracy_score); NaN when
    either true class is empty (docs/statistics.md §3.6)."""
    from sklearn.metrics import balanced_accuracy_score
    p = _labels(predicted, name="predicted")
    y = _labels(label, p.size)
    if y.all() or not y.any():
        return float("nan")
    return float(balanced_accuracy_score(y, p))


def diagnostic_score(n_star, N) -> np.ndarray:
    """−log(N*(ℓ*)/N): > 0 when the diagnostic says ℓ* is detectable within the run's budget N.
    N* = ∞ or NaN (never detectable) → −∞ (docs/statistics.md §3.6)."""
    ns = np.asarray(n_star, dtype=float)
    n = _scores("N", N, allow_inf=False)
    if ns.shape != n.shape:
        raise ValueError(f"n_star and N must have the same shape, got {ns.shape} and {n.shape}")
    if (n <= 0).any() or (ns[np.isfinite(ns)] <= 0).any():
        raise ValueError("N and finite n_star must be > 0")
    ns = np.where(np.isnan(ns), np.inf, ns)
    with np.errstate(divide="ignore"):
        return -np.log(ns / n)


def design(log_lag, log_n, cell=None, diag=None) -> np.ndarray:
    """The baselines' features (docs/statistics.md §3.6): columns log ℓ*, log N; with ``cell`` a
    one-hot column per cell name (the first dropped: the intercept carries it); with ``diag`` the
    diagnostic score −log(N*/N) capped at ±DIAG_CAP and a 0/1 column "finite" (so N* = ∞ is its
    own level rather than an arbitrary large number)."""
    a = _scores("log_lag", log_lag, allow_inf=False)
    b = _scores("log_n", log_n, allow_inf=False)
    if a.size != b.size:
        raise ValueError(f"log_lag and log_n differ in length: {a.size} and {b.size}")
    cols = [a, b]
    if cell is not None:
        cell = np.asarray(cell)
        if cell.shape != a.shape:
            raise ValueError(f"cell must have one entry per row ({a.size}), got shape {cell.shape}")
        for name in sorted(set(cell.tolist()))[1:]:
            cols.append((cell == name).astype(float))
    if diag is not None:
        d = _scores("diag", diag)
        if d.size != a.size:
            raise ValueError(f"diag has {d.size} entries, log_lag {a.size}")
        cols += [np.clip(d, -DIAG_CAP, DIAG_CAP), np.isfinite(d).astype(float)]
    return np.column_stack(cols)


def cv_logistic_scores(X, label, groups, C=1.0) -> np.ndarray:
    """Out-of-fold logistic scores, leave one group (seed) out: for each group, a standardised
    L2-logistic regression (sklearn, regularisation ``C``) fitted on the other groups gives the
    held-out rows' log-odds (docs/statistics.md §3.6). A training fold with one class only
    predicts a constant (its rows then tie). Needs ≥ 2 groups."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise ValueError(f"X must be a finite 2-D array, got shape {X.shape}")
    y = _labels(label, X.shape[0])
    g = np.asarray(groups)
    if g.shape != (X.shape[0],):
        raise ValueError(f"groups must have one entry per row ({X.shape[0]}), got shape {g.shape}")
    C = check_real("C", C, 0.0, lo_open=True)
    levels = np.unique(g)
    if levels.size < 2:
        raise ValueError("groups must hold at least 2 distinct values (leave-one-group-out)")
    out = np.empty(y.size)
    for lev in levels:
        test = g == lev
        ytr = y[~test]
        if ytr.all() or not ytr.any():
            out[test] = 0.0
            continue
        model = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=1000))
        model.fit(X[~test], ytr)
        out[test] = model.decision_function(X[test])
    return out


def nested_by_group(score0, score1, label, groups) -> dict:
    """Finding 10's effect (docs/experiments.md §5.5.2): two out-of-fold log-odds scores of nested
    models (``score0`` base + cell, ``score1`` base + cell + diagnostic), compared on each held-out
    group (seed). Returns {group: {"brier0", "brier1", "brier_reduction", "deviance0", "deviance1"}}:
    Brier score mean((p − y)²) with p = 1/(1 + e^{−s}); relative reduction 1 − B₁/B₀ (None when
    B₀ = 0); deviance −2 mean(y log p + (1 − y) log(1 − p)) per row."""
    s0, s1 = _scores("score0", score0, allow_inf=False), _scores("score1", score1, allow_inf=False)
    y = _labels(label, s0.size)
    if s1.size != s0.size:
        raise ValueError(f"score1 has {s1.size} entries, score0 {s0.size}")
    g = np.asarray(groups)
    if g.shape != (s0.size,):
        raise ValueError(f"groups must have one entry per row ({s0.size}), got shape {g.shape}")
    out = {}
    for lev in np.unique(g):
        m = g == lev
        row = {}
        for k, s in (("0", s0[m]), ("1", s1[m])):
            pr = 1.0 / (1.0 + np.exp(-s))
            row[f"brier{k}"] = float(np.mean((pr - y[m]) ** 2))
            # log p = −log(1 + e^{−s}), log(1 − p) = −log(1 + e^{s}), computed stably
            row[f"deviance{k}"] = float(2 * np.mean(np.where(y[m], np.logaddexp(0.0, -s), np.logaddexp(0.0, s))))
        row["brier_reduction"] = 1.0 - row["brier1"] / row["brier0"] if row["brier0"] > 0 else None
        out[lev.item() if hasattr(lev, "item") else lev] = row
    return out


def stratified_auc(score, label, strata) -> float:
    """Mean AUC of ``score`` within the strata (e.g. fixed (ℓ*, N)) that hold both classes; NaN when
    none does. Within a stratum the budget and the delay are fixed, so only the cells and seeds rank
    (docs/experiments.md §5.5.2, finding 10)."""
    s = _scores("score", score)
    y = _labels(label, s.size)
    st = np.asarray(strata)
    if st.shape != (s.size,):
        raise ValueError(f"strata must have one entry per row ({s.size}), got shape {st.shape}")
    vals = [auc(s[st == k], y[st == k]) for k in np.unique(st) if 0 < y[st == k].sum() < (st == k).sum()]
    return float(np.mean(vals)) if vals else float("nan")


def block_bootstrap(scores: dict, label, blocks, n_boot=1000, seed=0, level=0.95) -> dict:
    """Percentile intervals of the AUC of every score in ``scores`` ({name: 1-D scores}) by
    resampling whole blocks (e.g. seeds, or cell × seed) with replacement, the same resample for
    every score so that differences are paired (docs/statistics.md §3.6). Resamples with one class
    only are skipped. Returns {name: (lo, hi)} and, under "_diff", {name: (lo, hi)} of
    AUC(name) − AUC(first name)."""
    if not isinstance(scores, dict) or not scores:
        raise TypeError("scores must be a non-empty dict {name: scores}")
    S = {k: _scores(f"scores[{k!r}]", v) for k, v in scores.items()}
    n = next(iter(S.values())).size
    if any(v.size != n for v in S.values()):
        raise ValueError("every score array must have the same length")
    y = _labels(label, n)
    b = np.asarray(blocks)
    if b.shape != (n,):
        raise ValueError(f"blocks must have one entry per row ({n}), got shape {b.shape}")
    n_boot = check_int("n_boot", n_boot, minimum=1)
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    rng = as_rng(seed)
    levels = np.unique(b)
    rows = [np.flatnonzero(b == lev) for lev in levels]
    draws = {k: [] for k in S}
    for _ in range(n_boot):
        idx = np.concatenate([rows[i] for i in rng.integers(0, len(rows), len(rows))])
        yy = y[idx]
        if yy.all() or not yy.any():
            continue
        for k, v in S.items():
            draws[k].append(auc(v[idx], yy))
    q = ((1 - level) / 2, (1 + level) / 2)
    first = next(iter(S))
    out, diff = {}, {}
    for k, d in draws.items():
        d = np.asarray(d)
        out[k] = tuple(np.quantile(d, q)) if d.size else (float("nan"), float("nan"))
        dd = d - np.asarray(draws[first])
        diff[k] = tuple(np.quantile(dd, q)) if dd.size else (float("nan"), float("nan"))
    out["_diff"] = diff
    return out


def finding10(diag_auc: dict, diag_interval: dict, auc_ln: float, auc_lnc: float):
    """Finding 10's verdict (docs/experiments.md §5.7), fixed before any result was seen.

    diag_auc: {(null, point): pooled AUC of −log(N*/N)}; diag_interval: {(null, point): (lo, hi)};
    auc_ln, auc_lnc: the cross-validated AUCs of the (log ℓ*, log N) and (log ℓ*, log N, cell)
    baselines. The best (null, point) is the one with the highest AUC. "reproduced" when its
    interval lies above the (log ℓ*, log N, cell) baseline's AUC (lo > auc_lnc); "not reproduced"
    when no (null, point) has an AUC above the (log ℓ*, log N) baseline's; "inconclusive"
    otherwise. Returns (verdict, best key)."""
    if not isinstance(diag_auc, dict) or not diag_auc:
        raise TypeError("diag_auc must be a non-empty dict {(null, point): AUC}")
    missing = set(diag_auc) - set(diag_interval)
    if missing:
        raise ValueError(f"diag_interval lacks {sorted(missing)}")
    for name, v in (("auc_ln", auc_ln), ("auc_lnc", auc_lnc)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    finite = {k: v for k, v in diag_auc.items() if np.isfinite(v)}
    if not finite:
        return "inconclusive", None
    best = max(finite, key=lambda k: (finite[k], str(k)))
    if diag_interval[best][0] > auc_lnc:
        return "reproduced", best
    if all(v <= auc_ln for v in finite.values()):
        return "not reproduced", best
    return "inconclusive", best
