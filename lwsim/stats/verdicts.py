"""The verdict scheme of the findings (docs/experiments.md §5.5.1).

A finding is a measured answer: an effect measured once per seed, its 95% interval over seeds,
and a region taken from the claim. The verdict says where the interval lies:

- directional claims (effect > m, or effect ≤ m): reproduced when the interval lies on the claim's
  side of m, not reproduced when it lies on the other side, inconclusive when it contains m;
- equivalence claims (|effect − c| ≤ m): reproduced when the interval lies inside [c − m, c + m],
  not reproduced when it lies wholly outside, inconclusive when it straddles an edge;
- a claim with several parts (or cells) is the three-valued AND of its parts (:func:`all_of`).

"Every seed" is descriptive (:func:`seeds_on_side`); it never decides, so adding seeds cannot make a
true but noisy effect *less* likely to be called reproduced.
"""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
WITHHELD = "withheld"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, WITHHELD)

LEVEL = 0.95          # every interval of the scheme
CEILING_SHARE = 0.5   # trained-network gate: each cell's R² at least this share of the ceiling


@dataclasses.dataclass(frozen=True)
class Interval:
    """An effect's mean over seeds and its two-sided t interval; ``n`` seeds used, ``dropped``
    seeds whose effect was undefined (None or NaN). ``lo``/``hi`` are NaN when n < 2.
    See docs/experiments.md §5.5.1.
    """
    mean: float
    lo: float
    hi: float
    n: int
    dropped: int = 0

    @property
    def defined(self) -> bool:
        return self.n >= 2 and math.isfinite(self.lo) and math.isfinite(self.hi)

    def text(self, fmt=".3g") -> str:
        """``0.91 [0.85, 0.97] (3 seeds)``; ``n/a`` without seeds; one seed: its value, no interval."""
        if self.n == 0:
            return "n/a" + (f" ({self.dropped} seeds undefined)" if self.dropped else "")
        drop = f", {self.dropped} undefined" if self.dropped else ""
        if not self.defined:
            return f"{self.mean:{fmt}} (1 seed{drop}: no interval)"
        return f"{self.mean:{fmt}} [{self.lo:{fmt}}, {self.hi:{fmt}}] ({self.n} seeds{drop})"


def _values(values):
    out = []
    for v in values:
        if v is None:
            continue
        v = float(v)
        if math.isfinite(v):
            out.append(v)
    return out


def seed_interval(values, level=LEVEL) -> Interval:
    """Mean and 95% t interval x̄ ± t_{(1+level)/2, n−1} s/√n of per-seed values (None, NaN and ±inf
    are left out and counted in ``dropped``).
    See docs/experiments.md §5.5.1.
    """
    from scipy import stats

    values = list(values)
    v = _values(values)
    n, dropped = len(v), len(values) - len(v)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, dropped)
    m = float(np.mean(v))
    if n == 1:
        return Interval(m, math.nan, math.nan, 1, dropped)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * np.std(v, ddof=1) / math.sqrt(n))
    return Interval(m, m - half, m + half, n, dropped)


def decide(iv: Interval, *, above=None, at_most=None, within=None) -> str:
    """The verdict of one interval against one region (exactly one of):

    above=m      claim effect > m: reproduced iff lo > m, not reproduced iff hi < m;
    at_most=m    claim effect ≤ m: reproduced iff hi ≤ m, not reproduced iff lo > m;
    within=(c,m) claim |effect − c| ≤ m: reproduced iff c − m ≤ lo and hi ≤ c + m, not reproduced
                 iff hi < c − m or lo > c + m.
    Otherwise, or without an interval (fewer than two seeds), inconclusive.

    See docs/experiments.md §5.5.1.
    """
    given = [x is not None for x in (above, at_most, within)]
    if sum(given) != 1:
        raise ValueError("give exactly one region: above=, at_most= or within=")
    if not iv.defined:
        return INCONCLUSIVE
    if above is not None:
        return REPRODUCED if iv.lo > above else NOT_REPRODUCED if iv.hi < above else INCONCLUSIVE
    if at_most is not None:
        return REPRODUCED if iv.hi <= at_most else NOT_REPRODUCED if iv.lo > at_most else INCONCLUSIVE
    c, m = within
    if m < 0:
        raise ValueError(f"within=(c, m) needs a margin m >= 0, got {m}")
    if c - m <= iv.lo and iv.hi <= c + m:
        return REPRODUCED
    return NOT_REPRODUCED if iv.hi < c - m or iv.lo > c + m else INCONCLUSIVE


def judge(values, **region):
    """(interval, verdict, "k of n seeds"): :func:`seed_interval` of per-seed ``values``, its
    :func:`decide` against ``region`` (above=, at_most= or within=) and :func:`seeds_on_side`
    (docs/experiments.md §5.5.1)."""
    iv = seed_interval(values)
    return iv, decide(iv, **region), seeds_on_side(values, **region)


def all_of(verdicts) -> str:
    """Three-valued AND: reproduced iff every part is; not reproduced iff any part is not;
    inconclusive otherwise (also with no parts). A withheld part withholds the whole.
    See docs/experiments.md §5.5.1.
    """
    vs = list(verdicts)
    for v in vs:
        if v not in VERDICTS:
            raise ValueError(f"verdicts must be among {VERDICTS}, got {v!r}")
    if not vs:
        return INCONCLUSIVE
    if WITHHELD in vs:
        return WITHHELD
    if NOT_REPRODUCED in vs:
        return NOT_REPRODUCED
    return REPRODUCED if all(v == REPRODUCED for v in vs) else INCONCLUSIVE


def most_of(verdicts) -> str:
    """"On most parts": reproduced when more than half are reproduced, not reproduced when more
    than half are not, inconclusive otherwise.
    See docs/experiments.md §5.5.1.
    """
    vs = list(verdicts)
    n = len(vs)
    if sum(v == REPRODUCED for v in vs) * 2 > n:
        return REPRODUCED
    if sum(v == NOT_REPRODUCED for v in vs) * 2 > n:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def seeds_on_side(values, *, above=None, at_most=None, within=None) -> str:
    """Descriptive: "k of n seeds" whose own value lies in the claim's region. (docs/experiments.md §5.5.1)"""
    v = _values(values)
    if above is not None:
        k = sum(x > above for x in v)
    elif at_most is not None:
        k = sum(x <= at_most for x in v)
    elif within is not None:
        k = sum(abs(x - within[0]) <= within[1] for x in v)
    else:
        raise ValueError("give exactly one region: above=, at_most= or within=")
    return f"{k} of {len(v)} seeds"


def ceiling_gate(shares_by_cell, threshold=CEILING_SHARE):
    """None when every cell's seed-mean share of the R² ceiling is at least ``threshold``; otherwise
    the reason a verdict is withheld, naming the lowest cell ("networks at 9% of the ceiling
    (constgate)"). A cell without a share withholds too.
    See docs/experiments.md §5.5.1.
    """
    worst, worst_cell = math.inf, None
    for cell, shares in shares_by_cell.items():
        v = _values(shares)
        m = float(np.mean(v)) if v else -math.inf
        if m < worst:
            worst, worst_cell = m, cell
    if worst_cell is None or worst >= threshold:
        return None
    if not math.isfinite(worst):
        return f"no R² for {worst_cell}'s networks"
    return f"networks at {worst:.0%} of the ceiling ({worst_cell}; the rule needs {threshold:.0%} in every cell)"


def _rank(a):
    from scipy.stats import rankdata
    return rankdata(a)


def _rho(rx, ry):
    rx, ry = rx - rx.mean(), ry - ry.mean()
    d = math.sqrt(float(rx @ rx) * float(ry @ ry))
    return float(rx @ ry) / d if d > 0 else math.nan


def spearman_p(x, y, groups=None, n_perm=9999, seed=0):
    """(ρ, p): Spearman's ρ of x and y (ranked within each group when ``groups`` is given, then
    pooled) and its two-sided permutation p. Exact — every ordering — for one group of at most 8
    points; otherwise ``n_perm`` random permutations within each group (seed ``seed``) and
    p = (b + 1)/(B + 1), b the permutations with |ρ| ≥ |ρ_obs|.
    See docs/experiments.md §5.5.1.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-dimensional of one length, got {x.shape} and {y.shape}")
    g = np.zeros(len(x), int) if groups is None else np.asarray(groups)
    if g.shape != x.shape:
        raise ValueError(f"groups must have x's length {len(x)}, got {g.shape}")
    idx = [np.flatnonzero(g == k) for k in dict.fromkeys(g.tolist())]
    rx, ry = np.empty(len(x)), np.empty(len(y))
    for i in idx:
        rx[i], ry[i] = _rank(x[i]), _rank(y[i])
    rho = _rho(rx, ry)
    if not math.isfinite(rho):
        return rho, math.nan
    tol = 1e-12
    if len(idx) == 1 and len(x) <= 8:
        perms = itertools.permutations(range(len(x)))
        hits = total = 0
        for p in perms:
            total += 1
            hits += abs(_rho(rx, ry[list(p)])) >= abs(rho) - tol
        return rho, hits / total
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_perm):
        yp = ry.copy()
        for i in idx:
            yp[i] = ry[i][rng.permutation(len(i))]
        hits += abs(_rho(rx, yp)) >= abs(rho) - tol
    return rho, (hits + 1) / (n_perm + 1)
