"""A16 (docs/experiments.md §5.7): the delay task, the diagnostic at three training points, the
study end to end at smoke size."""
import numpy as np
import pytest

from lwsim.diagnostics import matched_statistic
from lwsim.figures.studies import preset_sizes

SMOKE = preset_sizes("smoke")
from lwsim.figures.studies import delay as dl
from lwsim.figures.training import _a_cell, _a_params, _float64, a_windows
from lwsim.train import train


def _cfg(cell="gru", N=16, delay=3, **kw):
    c = {k: v for k, v in SMOKE["a_delay"].items() if k not in ("seeds", "delays")}
    return dict(c, cell=cell, seed=212, delay=delay, N=N, backend="numpy", **kw)


def test_delay_task_exact_at_zero_noise():
    c = _cfg(sigma_y=0.0, delay=4)
    task = dl.delay_task(c)
    x, y = task.batch(5, np.random.SeedSequence(1))
    z = np.einsum("tbd,d->tb", np.asarray(x, float), task.u)
    y = np.asarray(y, float).reshape(z.shape)
    np.testing.assert_allclose(y[4:], c["coef"] * z[:-4], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(y[:4], 0.0)


def test_diagnostic_at_init_is_matched_statistic_on_initial_params():
    c = _cfg()
    ds = dl.delay_dataset(c, c["N"])
    cell = _a_cell(c["cell"], c).with_dtype("float64")
    p0 = {k: np.asarray(v, np.float64) for k, v in _a_params(cell, c).items()}
    got = dl.diagnostic(cell, p0, float(c["lr"]), ds, c)
    # independently: the matched statistic ψ̄ on the initial parameters with P = η·I and its table
    ms = matched_statistic(cell, p0, ds.x_diag, ds.y_diag, float(c["lr"]), [c["delay"]], n_directions=c["K"],
                           seed=c["seed"], progress=False)
    ref = a_windows(cell, p0, float(c["lr"]), ds.x_diag, ds.y_diag, dict(c, lags=[c["delay"]]), nulls=("lag",))
    assert got["lag"] == (float(ref["lag"].n_star[0]), float(ref["lag"].n_hat[0]))
    m = float(np.mean(np.asarray(ms.samples)[0]))
    assert np.isclose(abs(m), abs(float(ref["lag"].mean[0])), rtol=1e-6)


def test_checkpoint_equals_training_stopped_there():
    c = _cfg()
    ds = dl.delay_dataset(c, c["N"])
    cell = _a_cell(c["cell"], c)
    kw = dl.delay_train_kwargs(c)
    full = train(cell, _a_params(cell, c), ds, **kw)
    short = train(cell, _a_params(cell, c), ds, **dict(kw, steps=c["early"], checkpoints=[], best_checkpoint=False))
    k = c["early"]
    for name in short.params:
        np.testing.assert_array_equal(full.checkpoints[k][name], short.params[name])
    from lwsim import optim
    r_ck = optim.from_state_dict(full.checkpoints[k], full.checkpoint_opt_states[k]).rates()
    r_sh = short.optimizer.rates()
    for name in r_sh:
        np.testing.assert_allclose(np.asarray(r_ck[name]), np.asarray(r_sh[name]), rtol=1e-6)


def test_runs_cover_the_grid_and_differ_only_in_data():
    runs = dl.delay_runs("smoke", "numpy")
    s = SMOKE["a_delay"]
    assert len(runs) == 5 * len(s["seeds"]) * len(s["delays"]) * len(s["budgets"])
    assert dl.delay_train_kwargs(_cfg(N=8)) == dl.delay_train_kwargs(_cfg(N=32))


def test_smoke_end_to_end():
    out = dl.a_delay(_cfg(cell="constgate"))
    assert set(out) >= {"learned", "r2", "c_hat"} | {f"n_star_{n}_{p}" for n in dl.NULLS for p in dl.POINTS}
    rows = []
    for cell in ("constgate", "gru"):
        for s in (1, 2):
            for d, N, learned in ((2, 8, False), (2, 32, True), (5, 8, False), (5, 32, s == 1)):
                r = {"N": N, "delay": d, "learned": learned, "r2": 0.1, "c_hat": 0.3}
                for n in dl.NULLS:
                    for p in dl.POINTS:
                        r[f"n_star_{n}_{p}"] = 10.0 * d
                        r[f"n_hat_{n}_{p}"] = 32.0
                rows.append(({"cell": cell, "seed": s}, r))
    fig, data = dl.fig_a16({"a_delay": rows})
    sc = data["score"]
    assert sc["verdict"] in ("reproduced", "not reproduced", "inconclusive")
    assert sc["points"]["lag/final"]["auc"][0] is not None


def _row(cell, seed, delay, N, learned):
    return {"cell": cell, "seed": seed, "delay": delay, "N": N, "learned": learned}


def test_dynamic_range_by_hand():
    # lstm: ℓ* 2 learned at the smallest N in 2 of 3 seeds (majority), ℓ* 8 unlearned at the largest
    # in 2 of 3; gru: ℓ* 2 learned at the smallest N in 1 of 2 seeds (half: counts as learned),
    # nothing unlearned at the largest N
    rows = [_row("lstm", s, 2, 32, s != 3) for s in (1, 2, 3)] + \
           [_row("lstm", s, 8, 3200, s == 3) for s in (1, 2, 3)] + \
           [_row("lstm", s, 8, 32, False) for s in (1, 2, 3)] + [_row("lstm", s, 2, 3200, True) for s in (1, 2, 3)] + \
           [_row("gru", s, 2, 32, s == 1) for s in (1, 2)] + [_row("gru", s, 2, 3200, True) for s in (1, 2)]
    dr = dl.dynamic_range(rows)
    assert list(dr) == ["gru", "lstm"]                              # A_CELLS order, not alphabetical
    assert dr["lstm"] == {"unlearned_at_max_N": [8], "learned_at_min_N": [2]}
    assert dr["gru"] == {"unlearned_at_max_N": [], "learned_at_min_N": [2]}   # ℓ* 8 absent for gru


def test_finding10_section_states_rule_numbers_and_range():
    sc = {"verdict": "not reproduced", "best": "full/init", "n": 450, "n_learned": 143,
          "baselines": {"logN_logl": [0.92, 0.893, 0.952], "logN_logl_cell": [0.975, 0.966, 0.982]},
          "points": {"full/init": {"auc": [0.77, 0.7, 0.846], "balanced_accuracy": 0.699,
                                   "baseline_plus_diag": [0.929, 0.91, 0.955], "per_cell": {"gru": 0.79, "lstm": None}}}}
    lines = dl.finding10_lines({"A16": {"score": sc, "dynamic_range": {"lstm": {"unlearned_at_max_N": [8],
                                                                                "learned_at_min_N": [2]}}}})
    text = "\n".join(lines)
    assert "**not reproduced** (best null/point: full/init)" in text
    assert "450 runs, 143 learned. Baselines: (log ℓ*, log N) AUC 0.920 [0.893, 0.952]; + cell 0.975 [0.966, 0.982]." in text
    assert "| full/init | 0.770 [0.700, 0.846] | 0.699 | 0.929 [0.910, 0.955] | gru 0.790, lstm — |" in text
    assert "lstm: unlearned at max N [8], learned at min N [2]" in text
    assert dl._headline({"A16": {"score": sc}}) == [(10, dl.TITLE, "not reproduced")]
    assert dl._headline({}) == [(10, dl.TITLE, None)] and dl.finding10_lines({}) == []


def test_fig_a16_draws_a_point_outside_its_percentile_interval(monkeypatch):
    """A percentile bootstrap interval need not contain the point AUC (here 1.0 against [0.9, 0.95]):
    the error bar is clipped at the point instead of matplotlib refusing a negative length."""
    import matplotlib.pyplot as plt

    from lwsim.figures.studies import delay as dl
    from lwsim.stats import prediction as pr
    from tests.test_mut_delay import _Fakes, _rows
    f = _Fakes(lo_best=0.9, hi_best=0.95)
    monkeypatch.setattr(pr, "cv_logistic_scores", f.cv)
    monkeypatch.setattr(pr, "block_bootstrap", f.bootstrap)
    fig, data = dl.fig_a16({"a_delay": [({"cell": r["cell"], "seed": r["seed"]}, r) for r in _rows()]})
    try:
        assert data["score"]["points"]["lag/init"]["auc"] == [1.0, 0.9, 0.95]
        line, _, (bars,) = fig.axes[-1].containers[0]
        np.testing.assert_allclose(bars.get_segments()[0], [[0, 0.9], [0, 1.0]], atol=1e-12)
    finally:
        plt.close(fig)
