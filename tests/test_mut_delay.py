"""Tests that kill the surviving mutants of mutmut on lwsim/figures/studies/delay.py (A16, finding 10;
issue 32, docs/testing.md): the score's wiring and numbers on a hand-made 16-run table, the dynamic
range's boundaries, finding 10's whole text, the run table, the cost model and the run plan. Every
expected value is written out by hand; none compares the code with itself."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.figures.studies import delay as dl
from lwsim.stats import prediction as pr

KEYS = ["lag/init", "lag/early", "lag/final", "full/init", "full/early", "full/final"]


# ------------------------------------------------------------------ a hand-made table of 16 runs
def _learned(cell, seed, delay, N):
    """ℓ* = 2 at N = 100 in both seeds, ℓ* = 2 at N = 10 in seed 1 (gru) or seed 2 (lstm) only: per
    cell 3 of 8 learned."""
    return delay == 2 and (N == 100 or seed == (1 if cell == "gru" else 2))


def _s(key, seed, delay, N, learned):
    """The diagnostic score −log(N*/N) in units of log 2 (N* = N·2^−s is exact)."""
    if key == "lag/init":
        return 1 if learned else 0          # AUC 1
    if key == "lag/early":
        return 1 if seed == 1 else 0        # AUC ½; per cell 9.5/15 (gru), 5.5/15 (lstm) (below)
    if key == "lag/final":
        return 0 if learned else 1          # AUC 0
    return None                             # full: N* = ∞ everywhere → −∞, AUC ½


def _rows():
    rows = []
    for cell in ("lstm", "gru"):
        for seed in (1, 2):
            for delay in (2, 8):
                for N in (10, 100):
                    y = _learned(cell, seed, delay, N)
                    r = {"cell": cell, "seed": seed, "delay": delay, "N": N, "learned": y, "r2": 0.5, "c_hat": 0.4}
                    for k in KEYS:
                        null, pt = k.split("/")
                        s = _s(k, seed, delay, N, y)
                        r[f"n_star_{null}_{pt}"] = math.inf if s is None else N * 2.0 ** -s
                        # N̂ ≤ N: = learned at lag/init; N̂ = 50 at lag/early (N = 100 predicted); else N̂ = N
                        r[f"n_hat_{null}_{pt}"] = ((N if y else 2 * N) if k == "lag/init" else
                                                   50.0 if k == "lag/early" else float(N))
                    rows.append(r)
    return rows


class _Fakes:
    """Stand-ins for the logistic baselines and the bootstrap that record their arguments: the
    baseline scores are fixed functions of the design's columns, the intervals fixed numbers."""

    def __init__(self, lo_best=0.85, lo_base=0.81, other=(0.2, 0.95), hi_best=0.99):
        self.calls, self.boot = [], None
        self.lo_best, self.lo_base, self.other, self.hi_best = lo_best, lo_base, other, hi_best

    def cv(self, X, y, groups):
        self.calls.append((np.array(X), np.array(y), np.array(groups)))
        X = np.asarray(X)
        if X.shape[1] == 2:                  # (log ℓ*, log N): −log ℓ*
            return -X[:, 0]
        if X.shape[1] == 3:                  # + cell (one column, 2 cells): −log ℓ* + log N
            return -X[:, 0] + X[:, 1]
        return X[:, 2]                       # + diagnostic: the capped diagnostic itself

    def bootstrap(self, scores, y, blocks, n_boot=1000):
        self.boot = (list(scores), np.array(y), np.array(blocks), n_boot)
        out = {k: self.other for k in scores}
        out["logN_logl"], out["logN_logl_cell"] = (self.lo_base, 0.97), (0.71, 0.93)
        out["lag/init"] = (self.lo_best, self.hi_best)
        out["lag/init+base"] = (float("nan"), 0.98)
        return out


@pytest.fixture
def fakes(monkeypatch):
    f = _Fakes()
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    return f


def test_score_passes_the_designs_groups_and_blocks(fakes):
    rows = _rows()
    dl.score(rows)
    y = np.array([_learned(r["cell"], r["seed"], r["delay"], r["N"]) for r in rows])
    assert len(fakes.calls) == 2 + 6
    ll = np.log([r["delay"] for r in rows])
    ln = np.log([r["N"] for r in rows])
    lstm = np.array([1.0] * 8 + [0.0] * 8)        # one-hot of the second cell name in sorted order ("lstm")
    (X0, y0, g0), (X1, y1, g1) = fakes.calls[:2]
    np.testing.assert_array_equal(X0, np.column_stack([ll, ln]))
    np.testing.assert_array_equal(X1, np.column_stack([ll, ln, lstm]))
    for X, yy, g in fakes.calls:
        np.testing.assert_array_equal(yy, y)
        np.testing.assert_array_equal(g, [r["seed"] for r in rows])           # leave one seed out
    # the diagnostic designs, in NULLS × POINTS order: lag/init's diagnostic is log 2 on learned runs
    X2 = fakes.calls[2][0]
    np.testing.assert_array_equal(X2[:, :2], np.column_stack([ll, ln]))
    np.testing.assert_allclose(X2[:, 2], np.where(y, np.log(2), 0.0), atol=1e-15)
    np.testing.assert_array_equal(X2[:, 3], 1.0)
    Xf = fakes.calls[5][0]                                                     # full/init: N* = ∞
    np.testing.assert_array_equal(Xf[:, 2], -30.0)
    np.testing.assert_array_equal(Xf[:, 3], 0.0)
    keys, yb, blocks, n_boot = fakes.boot
    assert keys == ["logN_logl", "logN_logl_cell"] + [k + s for k in KEYS for s in ("", "+base")]
    np.testing.assert_array_equal(yb, y)
    assert list(blocks) == [f"{c}/{s}" for c in ("lstm", "gru") for s in (1, 2) for _ in range(4)]
    assert n_boot == 500
    dl.score(rows, n_boot=7)
    assert fakes.boot[3] == 7


def test_score_numbers_by_hand(fakes):
    sc = dl.score(_rows())
    assert sc["n"] == 16 and sc["n_learned"] == 6 and sc["cells"] == ["gru", "lstm"]
    assert isinstance(sc["n"], int) and isinstance(sc["n_learned"], int)
    # baselines: −log ℓ*: the 6 learned (ℓ* 2) beat the 8 at ℓ* 8 and tie the 2 unlearned at ℓ* 2 → 54/60;
    # −log ℓ* + log N: 50/60 (module docstring of this test file's _Fakes)
    assert sc["baselines"] == {"logN_logl": [pytest.approx(0.9), 0.81, 0.97],
                               "logN_logl_cell": [pytest.approx(50 / 60), 0.71, 0.93]}
    assert list(sc["points"]) == KEYS
    p = sc["points"]
    assert p["lag/init"] == {"auc": [1.0, 0.85, 0.99], "per_cell": {"gru": 1.0, "lstm": 1.0},
                             "balanced_accuracy": 1.0, "baseline_plus_diag": [1.0, None, 0.98]}
    # lag/early (s = 1 in seed 1): learned with s = 1: 3, s = 0: 3; unlearned s = 1: 5, s = 0: 5 → U = 15 + 7.5
    # + 7.5 = 30 of 60; gru: learned s = 1: 2, s = 0: 1, unlearned s = 1: 2, s = 0: 3 → U = 6 + 2 + 1.5 = 9.5 of 15;
    # lstm: learned s = 1: 1, s = 0: 2, unlearned s = 1: 3, s = 0: 2 → U = 2 + 1.5 + 2 = 5.5 of 15;
    # N̂ = 50 (N = 100 predicted learned): TPR 4/6, TNR 6/10
    e = p["lag/early"]
    assert e["auc"] == [0.5, 0.2, 0.95]
    assert e["per_cell"] == {"gru": pytest.approx(9.5 / 15), "lstm": pytest.approx(5.5 / 15)}
    assert e["balanced_accuracy"] == pytest.approx((4 / 6 + 6 / 10) / 2)
    assert p["lag/final"]["auc"][0] == 0.0 and p["lag/final"]["per_cell"] == {"gru": 0.0, "lstm": 0.0}
    f = p["full/final"]
    assert f == {"auc": [0.5, 0.2, 0.95], "per_cell": {"gru": 0.5, "lstm": 0.5}, "balanced_accuracy": 0.5,
                 "baseline_plus_diag": [0.5, 0.2, 0.95]}
    # best lag/init (AUC 1): its interval's low end 0.85 > the cell baseline's 50/60 → reproduced
    assert (sc["verdict"], sc["best"]) == ("reproduced", "lag/init")


def test_score_verdict_inconclusive_and_not_reproduced(monkeypatch):
    f = _Fakes(lo_best=0.8)                  # 0.8 < 50/60: not above the cell baseline; AUC 1 > 0.9: not "not"
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    sc = dl.score(_rows())
    assert (sc["verdict"], sc["best"]) == ("inconclusive", "lag/init")
    f.lo_best = float("nan")                 # an undefined interval (None in the output) is not "above"
    sc = dl.score(_rows())
    assert sc["points"]["lag/init"]["auc"] == [1.0, None, 0.99]
    assert (sc["verdict"], sc["best"]) == ("inconclusive", "lag/init")
    rows = [r for r in _rows() if r["delay"] == 8 or r["learned"]]
    for r in rows:                           # the diagnostics say nothing: every AUC ½ < the baselines' 1
        for k in KEYS:
            null, pt = k.split("/")
            r[f"n_star_{null}_{pt}"] = float(r["N"])
    sc = dl.score(rows)
    assert sc["baselines"]["logN_logl"][0] == 1.0
    assert sc["verdict"] == "not reproduced"
    f.lo_base = 0.4                          # the rule compares with the baseline's AUC (1), not its interval
    assert dl.score(rows)["verdict"] == "not reproduced"


def test_score_one_class_only_is_inconclusive(fakes):
    rows = [dict(r, learned=True) for r in _rows()]
    sc = dl.score(rows)
    assert sc["n_learned"] == 16 and (sc["verdict"], sc["best"]) == ("inconclusive", None)
    assert sc["baselines"]["logN_logl"][0] is None and sc["points"]["lag/init"]["auc"][0] is None
    assert sc["points"]["lag/init"]["per_cell"] == {"gru": None, "lstm": None}
    assert sc["points"]["lag/init"]["balanced_accuracy"] is None


def test_score_end_to_end_without_fakes():
    """The real baselines and bootstrap on the hand table: the diagnostic AUCs are those above, and
    (log ℓ*, log N) separates the learned runs except the 2 ties at (2, 10): a finite AUC in [½, 1]."""
    sc = dl.score(_rows(), n_boot=20)
    assert sc["points"]["lag/init"]["auc"][0] == 1.0
    assert sc["points"]["lag/early"]["auc"][0] == 0.5
    assert sc["points"]["lag/early"]["per_cell"] == {"gru": pytest.approx(9.5 / 15), "lstm": pytest.approx(5.5 / 15)}
    lo, hi = sc["points"]["lag/init"]["auc"][1:]
    assert lo == 1.0 and hi == 1.0                     # AUC 1 in every resample with both classes
    assert 0.5 <= sc["baselines"]["logN_logl"][0] <= 1.0


def test_nan_none():
    assert dl._nan_none(None) is None and dl._nan_none(float("nan")) is None and dl._nan_none(np.inf) is None
    assert dl._nan_none(-np.inf) is None
    v = dl._nan_none(np.float64(0.25))
    assert v == 0.25 and type(v) is float
    assert type(dl._nan_none(1)) is float


# ------------------------------------------------------------------------------- the run table
def test_table_row_by_hand():
    res = {"delay": np.int64(4), "N": 32.0, "learned": np.bool_(True), "r2": np.float32(0.5), "c_hat": 1,
           "extra": "ignored"}
    for i, k in enumerate(KEYS):
        null, pt = k.split("/")
        res[f"n_star_{null}_{pt}"] = i + 1
        res[f"n_hat_{null}_{pt}"] = 10 * (i + 1)
    rows = dl.table([({"cell": "gru", "seed": "7", "other": 1}, res)])
    want = {"cell": "gru", "seed": 7, "delay": 4, "N": 32, "learned": True, "r2": 0.5, "c_hat": 1.0}
    for i, k in enumerate(KEYS):
        null, pt = k.split("/")
        want[f"n_star_{null}_{pt}"] = float(i + 1)
        want[f"n_hat_{null}_{pt}"] = float(10 * (i + 1))
    assert rows == [want]
    assert list(rows[0]) == list(want)
    r = rows[0]
    assert type(r["seed"]) is int and type(r["delay"]) is int and type(r["N"]) is int
    assert type(r["learned"]) is bool and type(r["r2"]) is float and type(r["c_hat"]) is float
    assert all(type(r[k]) is float for k in r if k.startswith("n_"))
    assert dl.table([]) == []


# ---------------------------------------------------------------------------- dynamic range
def _r(cell, seed, delay, N, learned):
    return {"cell": cell, "seed": seed, "delay": delay, "N": N, "learned": learned}


def test_dynamic_range_counts_only_the_extreme_N_and_half_is_learned():
    rows = [
        # N = 10 (min): ℓ* 2 learned in 1 of 2 seeds (½ → learned); ℓ* 4 in 0 of 2
        _r("lstm", 1, 2, 10, True), _r("lstm", 2, 2, 10, False), _r("lstm", 1, 4, 10, False),
        _r("lstm", 2, 4, 10, False),
        # N = 50 (middle): the opposite everywhere; it must not count
        _r("lstm", 1, 2, 50, False), _r("lstm", 2, 2, 50, False), _r("lstm", 1, 4, 50, True),
        _r("lstm", 2, 4, 50, True),
        # N = 100 (max): ℓ* 2 learned in both; ℓ* 4 in 1 of 2 (½: not unlearned)
        _r("lstm", 1, 2, 100, True), _r("lstm", 2, 2, 100, True), _r("lstm", 1, 4, 100, True),
        _r("lstm", 2, 4, 100, False),
        # a cell outside A_CELLS comes after them; ℓ* 4 unlearned at N = 100 in both seeds
        _r("zz", 1, 4, 100, False), _r("zz", 2, 4, 100, False),
        _r("constgate", 1, 2, 10, True),
    ]
    dr = dl.dynamic_range(rows)
    assert list(dr) == ["constgate", "lstm", "zz"]
    assert dr["lstm"] == {"unlearned_at_max_N": [], "learned_at_min_N": [2]}
    assert dr["zz"] == {"unlearned_at_max_N": [4], "learned_at_min_N": []}
    assert dr["constgate"] == {"unlearned_at_max_N": [], "learned_at_min_N": [2]}
    rows[9] = _r("lstm", 2, 2, 100, False)          # ℓ* 2 at the max: ½ → still learned
    rows[10] = _r("lstm", 1, 4, 100, False)         # ℓ* 4 at the max: 0 of 2 → unlearned
    assert dl.dynamic_range(rows)["lstm"]["unlearned_at_max_N"] == [4]


def test_cell_order():
    assert dl._cell_order({"zz", "lstm", "aa", "gru"}) == ["gru", "lstm", "aa", "zz"]
    assert dl._cell_order(set()) == []


# ------------------------------------------------------------------------- finding 10's text
SC = {"verdict": "inconclusive", "best": "lag/early", "n": 16, "n_learned": 6,
      "baselines": {"logN_logl": [0.9, 0.8123, None], "logN_logl_cell": [None, 0.5, 0.99999]},
      "points": {"lag/early": {"auc": [0.63333, 0.2, 0.95], "balanced_accuracy": None,
                               "baseline_plus_diag": [1.0, None, 0.98], "per_cell": {"gru": 0.5, "lstm": None}},
                 "full/final": {"auc": [None, None, None], "balanced_accuracy": 0.5,
                                "baseline_plus_diag": [0.5, 0.25, 0.75], "per_cell": {}}}}
HEAD = [
    "## 10. The window predicts which delays are learnable, beyond ℓ*, N and the cell (A16)", "",
    "**inconclusive** (best null/point: lag/early). Rule (lwsim.stats.prediction.finding10, decided before "
    "looking): reproduced when the best null × training point's pooled AUC of −log(N*/N) has its 95% cell × "
    "seed block-bootstrap interval above the (log ℓ*, log N, cell) baseline's AUC; not reproduced when no null "
    "× point's AUC exceeds the (log ℓ*, log N) baseline's; inconclusive otherwise. Baselines: L2 logistic "
    "regressions (scikit-learn), leave-one-seed-out.", "",
    "16 runs, 6 learned. Baselines: (log ℓ*, log N) AUC 0.900 [0.812, —]; + cell — [0.500, 1.000].", "",
    "| null/point | AUC [95%] | balanced acc. (N̂ ≤ N) | (log ℓ*, log N) + diagnostic AUC | per cell |",
    "|---|---|---|---|---|",
    "| lag/early | 0.633 [0.200, 0.950] | — | 1.000 [—, 0.980] | gru 0.500, lstm — |",
    "| full/final | — [—, —] | 0.500 | 0.500 [0.250, 0.750] |  |",
]


def test_finding10_lines_whole():
    dr = {"gru": {"unlearned_at_max_N": [8, 16], "learned_at_min_N": []},
          "lstm": {"unlearned_at_max_N": [], "learned_at_min_N": [2]}}
    lines = dl.finding10_lines({"A16": {"score": SC, "dynamic_range": dr}})
    assert lines == HEAD + ["", "Dynamic range (issue 30 item 5): gru: unlearned at max N [8, 16], learned at "
                                "min N []; lstm: unlearned at max N [], learned at min N [2]", ""]
    assert dl._after({"A16": {"score": SC, "dynamic_range": dr}}, None, None) == lines
    assert dl.finding10_lines({"A16": {"score": SC}}) == HEAD + [""]
    assert dl.finding10_lines({"A16": {"score": SC, "dynamic_range": {}}}) == HEAD + [""]
    assert dl.finding10_lines({"A16": None}) == [] and dl._after({}, None, None) == []
    assert dl._headline({"A16": None}) == [(10, dl.TITLE, None)]
    assert dl._fmt(None) == "—" and dl._fmt(0.12345) == "0.123"


# ------------------------------------------------------------------------------- the cost model
def test_work_by_hand():
    # GRU (3 gates), H 2, D 1: forward cost 2·3·2·(2 + 1) + 12·3·2 = 108 per step and sequence
    c = dict(T=10, H=2, D=1, cell="gru", steps=22, batch=4, n_val=3, val_every=5, n_diag=6, K=2,
             n_grid=[1, 2, 3], n_boot=300)
    # evaluations 22 // 5 + 1 = 5; diagnostic evaluations 3 points × 2 nulls = 6
    assert dl._work(c) == {"one": 1.0,
                           "train": 22 * 4 * 10 * 3 * 108 + 5 * 3 * 10 * 108,          # 301320
                           "diag": 6 * 10 * 108 + 6 * 6 * 10 * (2 * 108 + 2 * (3 * 108 + 8 * 2)),   # 329040
                           "stats": 6 * 6 * (3 + 3.0),                                   # 216
                           "steps": 22 + 5 + 6}
    assert dl._work(c)["train"] == 301320 and dl._work(c)["diag"] == 329040 and dl._work(c)["steps"] == 33
    # defaults: K 1, no validation set, val_every 1 (21 evaluations), one N, 200 bootstrap draws
    d = dict(T=10, H=2, D=1, cell="gru", steps=20, batch=4, n_diag=6)
    assert dl._work(d) == {"one": 1.0, "train": 259200, "diag": 6480 + 360 * 556, "stats": 36 * 3.0,
                           "steps": 47}
    assert dl._work(dict(d, val_every=0))["steps"] == 47                 # val_every 0 counts as 1


# ------------------------------------------------------------------------------ plan and inputs
def _cfg(**kw):
    c = {k: v for k, v in SMOKE["a_delay"].items() if k not in ("seeds", "delays")}
    return dict(c, **{"cell": "gru", "seed": 212, "delay": 3, "N": 16, "backend": "numpy", **kw})


def test_train_kwargs_by_hand():
    c = _cfg(clip=0.7, val_every=4, early=3, steps=11, batch=5, lr=0.02, weight_decay=0.001)
    assert dl.delay_train_kwargs(c) == dict(
        optimizer="adamw", optimizer_kwargs={"lr": 0.02, "weight_decay": 0.001}, steps=11, batch_size=5, clip=0.7,
        backend="numpy", seed=212, val_every=4, best_checkpoint=True, progress=False, checkpoints=[3])
    assert dl.delay_train_kwargs(dict(c, optimizer="sgd"))["optimizer_kwargs"] == {"lr": 0.02}


def test_runs_plan_by_hand():
    runs = dl.delay_runs("smoke", "numba")
    assert {r.experiment for r in runs} == {"a_delay"}
    first = runs[0].config
    assert first["cell"] == "constgate" and first["seed"] == 212 and first["delay"] == 2 and first["N"] == 8
    assert first["backend"] == "numba" and "seeds" not in first and "delays" not in first
    assert first["T"] == 16 and first["steps"] == 10 and first["budgets"] == [8, 32]
    assert [(r.config["cell"], r.config["seed"], r.config["delay"], r.config["N"]) for r in runs[:8]] == [
        ("constgate", 212, 2, 8), ("constgate", 212, 2, 32), ("constgate", 212, 5, 8), ("constgate", 212, 5, 32),
        ("constgate", 1001, 2, 8), ("constgate", 1001, 2, 32), ("constgate", 1001, 5, 8),
        ("constgate", 1001, 5, 32)]
    assert runs[-1].config["cell"] == "lstm" and len(runs) == 40


def test_task_and_dataset_by_hand():
    c = _cfg(T=7, D=2, delay=3, N=5)
    task = dl.delay_task(c)
    assert task.T == 7 and task.D == 2 and task.seed == 212
    ds = dl.delay_dataset(c, 5)
    assert ds.x_train.shape == (7, 5, 2) and ds.x_val.shape[1] == c["n_val"] and ds.x_diag.shape[1] == c["n_diag"]
    assert ds.seed == 212 and ds.task.T == 7 and ds.readout == "every"
    again = dl.delay_dataset(c, 5)
    np.testing.assert_array_equal(ds.x_train, again.x_train)         # the training stream is seeded
    other = dl.delay_dataset(dict(c, seed=213), 5)
    assert not np.array_equal(ds.x_train, other.x_train)


def test_diagnostic_asks_both_nulls_at_the_task_lag(monkeypatch):
    from types import SimpleNamespace
    seen = {}

    def fake(cell, params, rates, x, y, cc, nulls=("lag",), lags=None):
        seen.update(cell=cell, params=params, rates=rates, x=x, y=y, lags=lags, nulls=nulls, n=cc["n_diag"])
        return {n: SimpleNamespace(n_star=np.array([np.float32(40.0 + i)]), n_hat=np.array([100 + i]))
                for i, n in enumerate(nulls)}
    monkeypatch.setattr(dl, "a_windows", fake)
    ds = SimpleNamespace(x_diag="X", y_diag="Y")
    out = dl.diagnostic("cell", "p", 0.5, ds, {"delay": 7.0, "n_diag": 9})
    assert out == {"lag": (40.0, 100.0), "full": (41.0, 101.0)}
    assert all(type(v) is float for t in out.values() for v in t)
    assert seen == dict(cell="cell", params="p", rates=0.5, x="X", y="Y", lags=[7], nulls=("lag", "full"), n=9)
    assert type(seen["lags"][0]) is int
    if hasattr(dl, "init_windows"):          # shared=True: the initial model's cached windows instead
        monkeypatch.setattr(dl, "a_windows", None)
        monkeypatch.setattr(dl, "init_windows", fake)
        assert dl.diagnostic("cell", "p", 0.5, ds, {"delay": 7.0, "n_diag": 9}, shared=True) == out


# ------------------------------------------------------------------------------- figure A16
def test_fig_a16_panels_by_hand(monkeypatch):
    """gru with both seeds, lstm with seed 1 only (12 runs); fake baselines and intervals (above)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from lwsim.figures.style import color
    f = _Fakes(lo_best=0.9, other=(float("nan"), float("nan")), hi_best=1.0)     # other intervals undefined
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    import warnings
    rows = [r for r in _rows() if not (r["cell"] == "lstm" and r["seed"] == 2)]
    for r in rows:          # lstm's full/init at ℓ* 2: N* 1e−11 (N = 10) and ∞ (N = 100), the rest ∞
        if r["cell"] == "lstm" and r["delay"] == 2 and r["N"] == 10:
            r["n_star_full_init"] = 1e-11
    res = [({"cell": r["cell"], "seed": r["seed"]}, r) for r in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # drawn without a warning (no mean of an empty cell either)
        fig, data = dl.fig_a16({"a_delay": res})
    try:
        assert data["delays"] == [2, 8] and data["budgets"] == [10, 100] and len(data["rows"]) == 12
        assert data["dynamic_range"] == {"gru": {"unlearned_at_max_N": [8], "learned_at_min_N": [2]},
                                         "lstm": {"unlearned_at_max_N": [8], "learned_at_min_N": []}}
        # baselines (fakes): −log ℓ*: 4 learned at ℓ* 2 against 2 unlearned at ℓ* 2 and 6 at ℓ* 8 → 28/32;
        # −log ℓ* + log N: 28/32 too; lag/init's AUC 1 with its low end 0.9 > 0.875: reproduced
        assert data["score"]["baselines"]["logN_logl"][0] == 0.875 and data["score"]["verdict"] == "reproduced"
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert len(axes) == 3
        # learned fraction over seeds, rows N = 10, 100 × columns ℓ* = 2, 8
        want_m = {"gru": [[0.5, 0.0], [1.0, 0.0]], "lstm": [[0.0, 0.0], [1.0, 0.0]]}
        # the boundary N* = N: seed-and-N geometric mean of N* at each ℓ*, at log10(N*/10) on the N axis
        # (N = 10 → 0, N = 100 → 1); N* = ∞ (full) is clipped to 1e12, beyond N = 100 → 1.5; lstm's
        # full/init at ℓ* 2: √(1e−11 · 1e12) = √10 < 10, below the smallest N → −0.5
        want_y = {"gru": {"lag/init": [0.25 * np.log10(125000) - 1, 0.5],        # N* 5, 50, 10, 50 | 10, 100, 10, 100
                          "lag/final": [0.25 * np.log10(500000) - 1, 0.25 * np.log10(62500) - 1]},
                  "lstm": {"lag/init": [0.5 * np.log10(500) - 1, 0.5], "lag/final": [0.5 * np.log10(500) - 1,
                                                                                     0.5 * np.log10(250) - 1]}}
        for ax, cl in zip(axes[:2], ("gru", "lstm")):
            mesh = ax.collections[0]
            np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(2, 2), want_m[cl])
            assert mesh.get_clim() == (0, 1) and mesh.get_cmap().name == "Greens"
            np.testing.assert_array_equal(mesh.get_coordinates()[0, :, 0], [-0.5, 0.5, 1.5])
            np.testing.assert_array_equal(mesh.get_coordinates()[:, 0, 1], [-0.5, 0.5, 1.5])
            lines = ax.get_lines()
            assert [ln.get_label() for ln in lines] == ["N* = N, lag/init", "N* = N, lag/final", "N* = N, full/init",
                                                        "N* = N, full/final"]
            assert [(to_hex(ln.get_color()), ln.get_linestyle(), ln.get_linewidth()) for ln in lines] == [
                (to_hex("C0"), ":", 1.2), (to_hex("C0"), "-", 1.2), (to_hex("C3"), ":", 1.2), (to_hex("C3"), "-", 1.2)]
            for ln in lines:
                np.testing.assert_array_equal(ln.get_xdata(), [0, 1])
            np.testing.assert_allclose(lines[0].get_ydata(), want_y[cl]["lag/init"], rtol=1e-12)
            np.testing.assert_allclose(lines[1].get_ydata(), want_y[cl]["lag/final"], rtol=1e-12)
            np.testing.assert_array_equal(lines[2].get_ydata(), [1.5, 1.5] if cl == "gru" else [-0.5, 1.5])
            np.testing.assert_array_equal(lines[3].get_ydata(), [1.5, 1.5])
            assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "8"] and list(ax.get_xticks()) == [0, 1]
            assert [t.get_text() for t in ax.get_yticklabels()] == ["10", "100"] and list(ax.get_yticks()) == [0, 1]
            assert ax.get_xlabel() == "ℓ*" and ax.get_title() == cl
            assert to_hex(ax.title.get_color()) == to_hex(color(cl))
        assert axes[0].get_ylabel() == "N (training sequences)" and axes[1].get_ylabel() == ""
        leg = axes[0].get_legend()
        assert [t.get_text() for t in leg.get_texts()] == ["N* = N, lag/init", "N* = N, lag/final",
                                                            "N* = N, full/init", "N* = N, full/final"]
        assert leg._loc == 2 and leg.get_texts()[0].get_fontsize() == 6 and axes[1].get_legend() is None
        # last panel: each AUC with its interval, lag in C0 and full in C3, then the two baselines
        ax = axes[2]
        # lag/early: 3 + 1 learned, 5 + 3 unlearned: U = 9 + 7.5 + 1.5; full/init: the 4 learned at −∞ tie
        # 7 unlearned at −∞ and lose to lstm's (2, 10) at −log(1e−12): U = 14
        aucs = [1.0, 18 / 32, 0.0, 14 / 32, 0.5, 0.5]
        lims = [(0.9, 1.0)] + [(a, a) for a in aucs[1:]]          # an undefined end: a bar of length 0
        assert len(ax.containers) == 6
        for i, (c, a, (lo, hi)) in enumerate(zip(ax.containers, aucs, lims)):
            line, _, (bars,) = c
            assert list(line.get_xdata()) == [i] and line.get_ydata()[0] == pytest.approx(a)
            assert line.get_marker() == "o" and line.get_linestyle() == "None"
            assert to_hex(line.get_color()) == to_hex("C0" if i < 3 else "C3")
            np.testing.assert_allclose(bars.get_segments()[0], [[i, lo], [i, hi]], atol=1e-12)
        base = [ln for ln in ax.get_lines() if ln.get_label() in ("logN_logl", "logN_logl_cell")]
        assert [(ln.get_label(), list(ln.get_ydata()), ln.get_linestyle(), to_hex(ln.get_color()), ln.get_linewidth())
                for ln in base] == [("logN_logl", [0.875, 0.875], "--", "#000000", 1.0),
                                    ("logN_logl_cell", [0.875, 0.875], "-.", "#000000", 1.0)]
        assert [t.get_text() for t in ax.get_xticklabels()] == KEYS and list(ax.get_xticks()) == list(range(6))
        assert ax.get_xticklabels()[0].get_rotation() == 60 and ax.get_xticklabels()[0].get_fontsize() == 7
        assert ax.get_ylabel() == "AUC of −log(N*/N)" and ax.get_title() == "finding 10: reproduced"
        leg = ax.get_legend()
        assert [t.get_text() for t in leg.get_texts()] == ["logN_logl", "logN_logl_cell"]
        assert leg.get_texts()[0].get_fontsize() == 6
    finally:
        plt.close(fig)


def test_fig_a16_one_class_only_draws_no_aucs_or_baselines(fakes):
    import matplotlib.pyplot as plt
    rows = [dict(r, learned=True) for r in _rows()]
    rows += [dict(r, cell="constgate") for r in rows if r["cell"] == "gru"]      # 3 cells: 4 panels
    fig, data = dl.fig_a16({"a_delay": [({"cell": r["cell"], "seed": r["seed"]}, r) for r in rows]})
    none = [dict(r, learned=False) for r in rows if r["cell"] == "gru" and not (r["delay"] == 8 and r["N"] == 10)]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a (N, ℓ*) without runs is NaN without a mean-of-empty warning
        fig0, _ = dl.fig_a16({"a_delay": [({"cell": r["cell"], "seed": r["seed"]}, r) for r in none]})
    try:
        # the colour scale is the fraction's [0, 1] whatever the data: all learned (1) and none learned (0)
        assert fig.axes[0].collections[0].get_clim() == (0, 1) and fig0.axes[0].collections[0].get_clim() == (0, 1)
        m0 = np.asarray(fig0.axes[0].collections[0].get_array()).reshape(2, 2)
        assert m0[0, 0] == 0.0 and np.isnan(m0[0, 1]) and list(m0[1]) == [0.0, 0.0]   # (N 10, ℓ* 8): no runs
        assert list(fig.get_size_inches()) == pytest.approx([3 * 4.2, 2 * 3.3])    # 3 columns, 2 rows
        assert [a.get_title() for a in fig.axes if a.get_visible()][:3] == ["constgate", "gru", "lstm"]
        ax = [a for a in fig.axes if a.get_visible()][-1]
        assert ax.containers == [] and ax.get_lines() == [] and ax.get_legend() is None
        assert ax.get_title() == "finding 10: inconclusive"
    finally:
        plt.close(fig)
        plt.close(fig0)
