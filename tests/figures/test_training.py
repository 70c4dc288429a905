"""Tests of lwsim/figures/training.py (laid out like the code: docs/testing.md).

Tests that kill the surviving mutants of mutmut on lwsim/figures/training.py (issue 32, docs/testing.md).

The trainings and detection tables of training.py are otherwise reached only by the slow study tests.
Here they run at tiny sizes, with recorders in place of the expensive calls (the task, ``train``,
the diagnostics, ``stats.detection_table``): each test pins what the documented construction passes
to them (the preset's keys, the defaults, the nulls and floor ablations of docs/statistics.md §3.3 and
docs/fidelity.md), hand-computed numbers (the gate biases, the master fit on exact data), or a
documented property (float64 results, a shared table per identical input).

The fused numba Adam/AdamW step (lwsim._optim_kernels) against the NumPy reference, bit for bit,
and the shared diagnostics of A15/A16 (training.init_windows, a_windows without the envelope).

Presets of [A] main (issue 13): `paper` is the final paper's configuration (the author's final
launcher), `paper-v1` the earlier code generation; plan.py enumerates both cheaply, and one run of
each, shrunk to smoke size, goes through the same code path (runner → experiments.a_main).

Training in float32 (as PyTorch's default dtype), diagnostics in float64 on the cast weights
(docs/experiments.md §5.2–5.3): deterministic, equal to the float64 training to float32 accuracy,
and cast once, exactly."""


from __future__ import annotations

import contextlib
import math
from types import SimpleNamespace

import numpy as np
import pytest

import lwsim
import lwsim.figures.training as training
from lwsim import stats
from lwsim.figures import timing, training as ex
from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.studies import preset_sizes


def _logit(p):
    return math.log(p / (1 - p))


def _arrays_equal(out, expect):
    assert sorted(out) == sorted(expect)
    for k, v in expect.items():
        assert out[k].dtype == np.float64 and out[k].shape == (len(v),), k
        np.testing.assert_array_equal(out[k], v, err_msg=k)


class _Res:
    def __init__(self, dtype):
        self.dtype, self.calls = dtype, []

    def astype(self, dtype):
        self.calls.append(dtype)
        return _Res(dtype)


# ---- the [A] training ----------------------------------------------------------------------------
A_CFG = dict(T=9, D=2, H=3, seed=11, task_lags=[1, 3], task_coefs=[0.5, -0.25], sigma_y=0.1, n_train=8, n_val=4,
             n_diag=6, cell="gru", s0=0.1, optimizer="adamw", lr=0.01, weight_decay=0.003, epochs=2, batch=4,
             clip=1.5, backend="numpy", train_dtype="float32")


# ---- the detection tables --------------------------------------------------------------------------
class _MS:
    """A matched statistic stand-in: its samples and its full-null (signal, noise) pair are labels."""

    def __init__(self, tag):
        self.samples = f"{tag}.samples"
        self.tag = tag

    def full_null(self):
        return f"{self.tag}.signal", f"{self.tag}.noise"


class _Diag:
    """Records the envelope / matched-statistic calls and detection_table's arguments."""

    def __init__(self, monkeypatch):
        self.calls, self.tables = [], []
        from lwsim import window            # the chain the studies call (lwsim/window.py)
        monkeypatch.setattr(window.dg, "envelope_and_matched", self.envelope_and_matched)
        monkeypatch.setattr(window.dg, "matched_statistic", self.matched_statistic)
        monkeypatch.setattr(window.stats, "detection_table", self.detection_table)

    def envelope_and_matched(self, cell, params, x, y, rates, lags, **kw):
        self.calls.append(("envelope", cell, params, x, y, rates, list(lags), kw))
        return "ENV", _MS(f"ms{np.dtype(cell.dtype).itemsize * 8}")

    def matched_statistic(self, cell, params, x, y, rates, lags, **kw):
        self.calls.append(("matched", cell, params, x, y, rates, list(lags), kw))
        return _MS(f"ms{np.dtype(cell.dtype).itemsize * 8}")

    def detection_table(self, samples, lags, n_grid, **kw):
        self.tables.append((samples, list(lags), n_grid, kw))
        return ("table", samples, kw.get("method"), kw.get("floors"), kw.get("noise"))


def _tiny():
    cell = lwsim.make_cell("gru", 2, 3)
    params = cell.init_params(seed=0)
    c = dict(lags=[1, 2], n_grid=[10, 20], eps=2.0, K=3, seed=4, backend="numpy")
    return cell, params, "X", "Y", c


def _timer():
    entered = []

    @contextlib.contextmanager
    def timer(name):
        entered.append(name)
        yield
    return timer, entered


DET_DEFAULTS = dict(eps=2.0, seed=4, n_boot=200, min_samples=None, cap_budget=False, fit_subsample=None,
                    method="auto")


# ---- the A15/A16 diagnostics: the envelope skipped, the initial point shared ------------------
def _tiny_optim_fused():
    import lwsim
    from lwsim.figures.training import a_null_tables
    cell = lwsim.make_cell("gru", 3, 4)
    p = cell.init_params(seed=2)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((12, 40, 3)), rng.standard_normal((12, 40, 1))
    c = dict(lags=[1, 2, 4], n_grid=[10, 40], eps=2.0, K=1, seed=5, backend="numba", n_boot=20)
    return cell, p, x, y, c, a_null_tables


PRESETS = {p: preset_sizes(p) for p in PRESET_NAMES}


SMOKE = PRESETS["smoke"]


# ----------------------------------------------------------------------------------------------
# _train_kwargs
# ----------------------------------------------------------------------------------------------


# ---- small helpers ----------------------------------------------------------------------------
def test_train_kwargs_pass_weight_decay_to_adamw_only():
    from lwsim.figures.studies.behaviour.experiment import behaviour_train_kwargs
    base = {k: v for k, v in preset_sizes("smoke")["a_behaviour"].items() if k != "seeds"}

    def kwargs(opt, lr, wd):
        return behaviour_train_kwargs(dict(base, optimizer=opt, lr=lr, weight_decay=wd, seed=1, backend="numpy"))

    assert kwargs("adam", 0.1, 0.5)["optimizer_kwargs"] == {"lr": 0.1}
    assert kwargs("sgd", 0.2, 0.0)["optimizer_kwargs"] == {"lr": 0.2}
    assert kwargs("adamw", 0.1, 0.5)["optimizer_kwargs"] == {"lr": 0.1, "weight_decay": 0.5}
    # private: every public caller passes weight_decay; only a direct call reaches its default
    assert training._train_kwargs("adamw", 0.1) == {"lr": 0.1, "weight_decay": 0.0}


# ----------------------------------------------------------------------------------------------
# _curves
# ----------------------------------------------------------------------------------------------


def test_curves_mode_a_takes_the_epoch_loss_and_mode_b_the_step_loss():
    # private: its public callers (train_a_model, the [B] experiments) train a network first (> 1 s)
    res = SimpleNamespace(curves={"val_step": [2, 4], "val_mse": [1, 0], "val_r2": [0, 1],    # ints: cast
                                  "epoch_train_loss": [3, 1], "train_loss": [9, 9, 9]})
    _arrays_equal(training._curves(res), {"curve_val_step": [2.0, 4.0], "curve_val_mse": [1.0, 0.0],
                                        "curve_val_r2": [0.0, 1.0], "curve_train_loss": [3.0, 1.0]})
    res = SimpleNamespace(curves={"train_loss": [4, 2, 1]})          # no validation, per-step loss
    out = training._curves(res)
    _arrays_equal(out, {"curve_val_step": [], "curve_val_mse": [], "curve_val_r2": [],
                        "curve_train_loss": [4.0, 2.0, 1.0]})
    _arrays_equal(training._curves(SimpleNamespace(curves={})),
                  {"curve_val_step": [], "curve_val_mse": [], "curve_val_r2": [], "curve_train_loss": []})


# ----------------------------------------------------------------------------------------------
# _train_dtype
# ----------------------------------------------------------------------------------------------


def test_train_dtype_default_and_message():
    # private: its public callers (train_a_model, the [B] experiments) train a network first (> 1 s)
    assert training._train_dtype({}) == "float64"
    assert training._train_dtype({"train_dtype": "float32"}) == "float32"
    with pytest.raises(ValueError, match=r"^train_dtype\b"):
        training._train_dtype({"train_dtype": "float16"})


# ----------------------------------------------------------------------------------------------
# _float64
# ----------------------------------------------------------------------------------------------


def test_float64_casts_a_float32_model_once_and_leaves_a_float64_one():
    # private: its public callers (train_a_model, the [B] experiments) train a network first (> 1 s)
    cell = lwsim.make_cell("gru", 2, 3, dtype="float32")
    res = _Res("float32")
    c64, r64 = training._float64(cell, res)
    assert c64.dtype == np.float64 and c64.name == "gru" and c64.n_hidden == 3
    assert res.calls == ["float64"] and r64.dtype == "float64"
    cell = lwsim.make_cell("gru", 2, 3, dtype="float64")
    res = _Res("float64")
    c, r = training._float64(cell, res)
    assert c is cell and r is res and res.calls == []


def test_float32_model():
    cell = lwsim.make_cell("lstm", 2, 3)
    params = {"a": np.array([0.1, 1e-50]), "b": [1.0, 2.0]}
    from lwsim.window import _float32_model
    c32, p32 = _float32_model(cell, params)
    assert c32.dtype == np.float32 and c32.name == "lstm" and cell.dtype == np.float64
    assert sorted(p32) == ["a", "b"] and all(v.dtype == np.float32 for v in p32.values())
    np.testing.assert_array_equal(p32["a"], np.array([0.1, 0.0], np.float32))    # 1e-50 underflows in float32
    np.testing.assert_array_equal(p32["b"], [1.0, 2.0])


# ----------------------------------------------------------------------------------------------
# _a_cell
# ----------------------------------------------------------------------------------------------


# ---- the [A] and [B] cells and initial parameters --------------------------------------------------
def test_a_cell_options():
    # private: its public callers (train_a_model, a_behaviour) train a network first (> 1 s)
    c = {"D": 4, "H": 3, "s0": 0.2}
    cell = training._a_cell("gru", dict(c, train_dtype="float32"))
    assert (cell.name, cell.n_in, cell.n_hidden, cell.n_out) == ("gru", 4, 3, 1)
    assert cell.layernorm is True and cell.readout == "every" and cell.dtype == np.float32 and cell.bias is True
    cg = training._a_cell("constgate", c)
    assert cg.s == 0.2 and cg.dtype == np.float64 and cg.layernorm is True and cg.readout == "every"


# ----------------------------------------------------------------------------------------------
# _a_params
# ----------------------------------------------------------------------------------------------


def test_a_params_gate_biases_by_hand():
    """paper_a: GRU update-gate bias logit(s0) = log(0.2/0.8) = −1.386…, the other biases 0; LSTM forget
    bias logit(0.95) = 2.944… ("lwsim", "v1") or logit(0.5) = 0 ("final"); the cell's dtype."""
    # private: its public callers (train_a_model, a_behaviour) train a network first (> 1 s)
    c = {"D": 4, "H": 3, "s0": 0.2, "seed": 1}
    gru = training._a_cell("gru", c)
    p = training._a_params(gru, c)
    np.testing.assert_allclose(p["b_z"], _logit(0.2), rtol=1e-14)
    np.testing.assert_array_equal(p["b_r"], 0.0)
    lstm = training._a_cell("lstm", dict(c, train_dtype="float32"))
    for mode, f0 in (("lwsim", 0.95), ("final", 0.5)):
        p = training._a_params(lstm, dict(c, gate_init=mode))
        np.testing.assert_allclose(p["b_f"], _logit(f0), rtol=1e-6, atol=1e-7)
        assert all(v.dtype == np.float32 for v in p.values())
    # the weights are paper_a's draw for the run's seed (not the default seed 0)
    c7 = dict(c, seed=7)
    w = training._a_params(gru, c7)["W_r"]
    np.testing.assert_array_equal(w, gru.init_params(seed=7, scheme="paper_a")["W_r"])
    assert not np.array_equal(w, gru.init_params(seed=0, scheme="paper_a")["W_r"])
    with pytest.raises(ValueError, match=r"^gate_init\b"):
        training._a_params(gru, dict(c, gate_init="torch"))


@pytest.mark.parametrize("name", ["gru", "lstm"])
def test_a_params_v1_draws_the_pytorch_biases(name):
    """"v1": each gate bias but b_out drawn U(−1/√D, 1/√D) (D = 4: ±0.5) from
    default_rng([seed, 0x7631]), in sorted key order, in the cell's dtype; the rest as "lwsim"."""
    # private: its public callers (train_a_model, a_behaviour) train a network first (> 1 s)
    c = {"D": 4, "H": 3, "s0": 0.2, "seed": 7, "train_dtype": "float32"}
    cell = training._a_cell(name, c)
    base = training._a_params(cell, c)
    v1 = training._a_params(cell, dict(c, gate_init="v1"))
    rng = np.random.default_rng([7, 0x7631])
    gates = sorted(k for k in base if k.startswith("b_") and k != "b_out")
    assert len(gates) == (3 if name == "gru" else 4)
    for k in gates:
        expect = rng.uniform(-0.5, 0.5, base[k].shape).astype(np.float32)
        np.testing.assert_array_equal(v1[k], expect, err_msg=k)
        assert v1[k].dtype == np.float32
    for k in base:
        if k not in gates:
            np.testing.assert_array_equal(v1[k], base[k], err_msg=k)


def test_a_params_v1_leaves_gated_baselines_alone():
    # private: its public callers (train_a_model, a_behaviour) train a network first (> 1 s)
    c = {"D": 4, "H": 3, "s0": 0.2, "seed": 7}
    cell = training._a_cell("diaggate", c)
    base, v1 = training._a_params(cell, c), training._a_params(cell, dict(c, gate_init="v1"))
    assert all(np.array_equal(base[k], v1[k]) for k in base)


def test_gate_init_options():
    # private: its public callers (train_a_model, a_behaviour) train a network first (> 1 s)
    from lwsim.figures.studies.main.experiment import AMain
    from lwsim.figures.training import _a_cell, _a_params
    base = {k: v for k, v in SMOKE["a_main"].items() if k not in ("seeds", "optimizers")}
    c = AMain.of(dict(base, D=4, H=3, s0=0.05, seed=1, cell="gru", backend="numba", optimizer="adamw"))
    lstm = _a_cell("lstm", c)
    logit = lambda p: np.log(p / (1 - p))                                # noqa: E731
    np.testing.assert_allclose(_a_params(lstm, c)["b_f"], logit(0.95))  # lwsim default (quick)
    np.testing.assert_allclose(_a_params(lstm, c.replace(gate_init="final"))["b_f"], 0.0)   # logit(0.5)
    gru = _a_cell("gru", c)
    base, v1 = _a_params(gru, c), _a_params(gru, c.replace(gate_init="v1"))
    for k in ("b_z", "b_r", "b_g"):                                      # PyTorch: U(−1/√D, 1/√D)
        assert np.abs(v1[k]).max() <= 0.5 and np.ptp(v1[k]) > 0 and not np.allclose(v1[k], base[k])
    assert all(np.array_equal(v1[k], base[k]) for k in base if not k.startswith("b_") or k == "b_out")
    dg = _a_cell("diaggate", c)                                          # gated baselines: s0 either way
    np.testing.assert_array_equal(_a_params(dg, c.replace(gate_init="v1"))["b_s"], _a_params(dg, c)["b_s"])
    with pytest.raises(ValueError, match="gate_init"):
        _a_params(gru, c.replace(gate_init="torch"))


# ----------------------------------------------------------------------------------------------
# train_a_model
# ----------------------------------------------------------------------------------------------


def test_train_a_model_wiring(monkeypatch):
    seen = {}

    class Task:
        def dataset(self, *a, **kw):
            seen["dataset"] = (a, kw)
            return "DS"

    def make_task(*a, **kw):
        seen["task"] = (a, kw)
        return Task()

    def train(cell, params, ds, **kw):
        seen["train"] = (cell, params, ds, kw)
        return _Res("float32")

    monkeypatch.setattr(training, "make_task", make_task)
    monkeypatch.setattr(training, "train", train)
    prof = timing.Profile()
    with timing.active(prof):
        ds, cell, res = training.train_a_model(A_CFG)
    assert seen["task"] == (("multilag",), dict(T=9, D=2, seed=11, lags=[1, 3], coefs=[0.5, -0.25], sigma_y=0.1))
    assert seen["dataset"] == ((8, 4, 6), {"seed": 11})
    tcell, tparams, tds, kw = seen["train"]
    assert tds == "DS" and tcell.dtype == np.float32 and tcell.name == "gru" and tcell.layernorm
    np.testing.assert_allclose(tparams["b_z"], _logit(0.1), rtol=1e-6)                 # the preset's init
    assert kw == dict(optimizer="adamw", optimizer_kwargs={"lr": 0.01, "weight_decay": 0.003}, epochs=2,
                      batch_size=4, clip=1.5, backend="numpy", seed=11, progress=False)
    assert ds == "DS" and cell.dtype == np.float64 and res.dtype == "float64"         # cast to float64
    assert prof.seconds["training"] > 0


def test_train_a_model_for_real_at_a_tiny_size():
    ds, cell, res = training.train_a_model(dict(A_CFG, epochs=1))
    assert cell.dtype == np.float64 and all(v.dtype == np.float64 for v in res.params.values())
    assert ds.x_diag.shape == (9, 6, 2) and res.n_steps == 2              # (T, n_diag, D); 8 sequences, batch 4


def test_presets_train_in_float32_and_diagnose_in_float64():
    for preset in ("smoke", "quick", "medium", "paper", "paper-v1"):
        for exp in ("a_main", "a_fidelity", "b_s1", "b_s2"):
            assert PRESETS[preset][exp]["train_dtype"] == "float32", (preset, exp)
    c = dict(PRESETS["smoke"]["a_main"], cell="gru", seed=212, optimizer="adamw", backend="numba")
    c = {k: v for k, v in c.items() if k not in ("seeds", "optimizers")}
    _, cell, res = ex.train_a_model(c)
    assert cell.dtype == np.float64
    for k, v in res.params.items():
        assert v.dtype == np.float64
        np.testing.assert_array_equal(v, v.astype(np.float32))     # float32 weights, cast exactly
    assert all(b.dtype == np.float64 for st in res.optimizer.state.values() for b in st.values())
    with pytest.raises(ValueError, match="train_dtype"):
        ex.train_a_model(dict(c, train_dtype="float16"))


# ----------------------------------------------------------------------------------------------
# a_null_tables
# ----------------------------------------------------------------------------------------------


def test_a_null_tables_default_nulls_with_the_envelope(monkeypatch):
    d = _Diag(monkeypatch)
    cell, params, x, y, c = _tiny()
    timer, entered = _timer()
    env, ms, tables = training.a_null_tables(cell, params, 0.01, x, y, c, timer=timer)
    assert env == "ENV" and ms.tag == "ms64"
    kind, ecell, eparams, ex, ey, rates, lags, kw = d.calls[0]
    assert kind == "envelope" and ecell is cell and eparams is params and (ex, ey, rates) == ("X", "Y", 0.01)
    assert lags == [1, 2]
    assert kw == dict(full_noise=True, n_directions=3, seed=4, orient=False, engine="numba", backend="numpy",
                      progress=False, timer=timer)
    # "author" = "lag" with both floors on float32 diagnostics: one float32 matched statistic
    kind, c32, p32, *_, kw32 = d.calls[1]
    assert len(d.calls) == 2 and kind == "matched" and c32.dtype == np.float32
    assert all(v.dtype == np.float32 for v in p32.values())
    assert d.calls[1][3:7] == ("X", "Y", 0.01, [1, 2])                      # the same sequences, η and lags
    assert kw32 == dict(dtype="float32", n_directions=3, seed=4, orient=False, engine="numba", backend="numpy",
                        progress=False)
    assert list(tables) == ["lag", "full", "author"]
    assert tables["lag"] == {"auto": ("table", "ms64.samples", "auto", None, None)}
    assert tables["full"] == {"auto": ("table", "ms64.signal", "auto", None, "full")}
    assert tables["author"] == {"auto": ("table", "ms32.samples", "auto", ("snr", "ecf"), None)}
    assert d.tables[1][3] == dict(DET_DEFAULTS, noise="full", noise_samples="ms64.noise")
    assert d.tables[0][3] == DET_DEFAULTS and d.tables[0][:3] == ("ms64.samples", [1, 2], [10, 20])
    assert d.tables[2][3] == dict(DET_DEFAULTS, floors=("snr", "ecf"))
    assert entered == ["matched", "tails"]


def test_a_null_tables_without_the_envelope_and_the_preset_options(monkeypatch):
    d = _Diag(monkeypatch)
    cell, params, x, y, c = _tiny()
    c.update(orient=True, n_boot=30, min_samples=50, cap_budget=True, fit_subsample=7, tail_methods=["ecf", "auto"])
    timer, entered = _timer()
    env, ms, tables = training.a_null_tables(cell, params, 0.5, x, y, c, nulls=("lag",), timer=timer,
                                           need_envelope=False, envelope_kwargs={"k": 1}, chunk=5)
    assert env is None and ms.tag == "ms64" and entered == ["matched", "tails"]
    assert len(d.calls) == 1
    kind, mcell, _, _, _, rates, _, kw = d.calls[0]
    assert kind == "matched" and mcell is cell and rates == 0.5
    # matched_statistic takes neither the timer nor envelope_kwargs; the rest as the envelope would
    assert kw == dict(full_noise=False, n_directions=3, seed=4, orient=True, engine="numba", backend="numpy",
                      progress=False, chunk=5)
    assert list(tables) == ["lag"] and list(tables["lag"]) == ["ecf", "auto"]
    for (_, _, _, kw), method in zip(d.tables, ["ecf", "auto"]):
        assert kw == dict(eps=2.0, seed=4, n_boot=30, min_samples=50, cap_budget=True, fit_subsample=7, method=method)


def test_a_null_tables_ablations_and_diagnostic_dtype(monkeypatch):
    d = _Diag(monkeypatch)
    cell, params, x, y, c = _tiny()
    _, _, tables = training.a_null_tables(cell, params, 0.01, x, y, c, nulls=("lag",),
                                        ablations=("snr", "lag", "ecf", "floors"))
    assert list(tables) == ["lag", "snr", "ecf", "floors"]                     # "lag" once
    assert [k for k, *_ in d.calls] == ["envelope"]                          # no float32 pass is needed
    assert d.calls[0][-1]["full_noise"] is False
    assert tables["snr"]["auto"][1:4] == ("ms64.samples", "auto", ("snr",))
    assert tables["ecf"]["auto"][3] == ("ecf",) and tables["floors"]["auto"][3] == ("snr", "ecf")
    d.calls.clear()
    _, _, tables = training.a_null_tables(cell, params, 0.01, x, y, c, nulls=("lag",), ablations=("f32",))
    assert [k for k, *_ in d.calls] == ["envelope", "matched"]
    assert tables["f32"]["auto"][1:4] == ("ms32.samples", "auto", ())
    assert tables["lag"]["auto"][1] == "ms64.samples"
    d.calls.clear()
    # diag_dtype float32: the "lag" table on the float32 statistic; the envelope stays float64
    _, ms, tables = training.a_null_tables(cell, params, 0.01, x, y, dict(c, diag_dtype="float32"), nulls=("lag",))
    assert [k for k, *_ in d.calls] == ["envelope", "matched"] and ms.tag == "ms64"
    assert tables["lag"]["auto"][1] == "ms32.samples"
    with pytest.raises(ValueError, match=r"^diag_dtype\b"):
        training.a_null_tables(cell, params, 0.01, x, y, dict(c, diag_dtype="float16"), nulls=("lag",))


def test_a_null_tables_instantaneous_statistic_runs_the_numpy_engine(monkeypatch):
    d = _Diag(monkeypatch)
    cell, params, x, y, c = _tiny()
    training.a_null_tables(cell, params, 0.01, x, y, c, nulls=("lag",), statistic="instantaneous")
    assert d.calls[0][-1]["engine"] == "numpy" and d.calls[0][-1]["statistic"] == "instantaneous"
    training.a_null_tables(cell, params, 0.01, x, y, c, nulls=("lag",), statistic="sequence")
    assert d.calls[1][-1]["engine"] == "numba"


def test_a_null_tables_unknown_null_message():
    cell, params, x, y, c = _tiny()
    with pytest.raises(ValueError, match=r"\bnull\(s\) \['zz', 'yy'\]"):
        training.a_null_tables(cell, params, 0.01, x, y, c, nulls=("lag", "zz"), ablations=("yy",))


def test_a_windows_without_the_envelope_are_the_same_tables():
    cell, p, x, y, c, a_null_tables = _tiny_optim_fused()
    env, _, with_env = a_null_tables(cell, p, 0.01, x, y, c, nulls=("lag", "full"))
    none, _, alone = a_null_tables(cell, p, 0.01, x, y, c, nulls=("lag", "full"), need_envelope=False)
    assert env is not None and none is None
    for n in ("lag", "full"):
        a, b = next(iter(with_env[n].values())), next(iter(alone[n].values()))
        for field in ("n_hat", "n_star", "mean", "alpha", "sigma"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=f"{n}.{field}")


# ----------------------------------------------------------------------------------------------
# a_windows
# ----------------------------------------------------------------------------------------------


def test_a_windows_takes_the_first_tail_method_of_each_null(monkeypatch):
    d = _Diag(monkeypatch)
    cell, params, x, y, c = _tiny()
    out = training.a_windows(cell, params, 0.2, x, y, dict(c, tail_methods=["ecf", "auto"]), nulls=("lag", "full"))
    assert list(out) == ["lag", "full"]
    assert out["lag"] == ("table", "ms64.samples", "ecf", None, None)
    assert out["full"] == ("table", "ms64.signal", "ecf", None, "full")
    assert [k for k, *_ in d.calls] == ["matched"] and d.calls[0][-1]["full_noise"] is True   # no envelope
    out = training.a_windows(cell, params, 0.2, x, y, c)                                       # NULLS
    assert list(out) == ["lag", "full", "author"]


# ----------------------------------------------------------------------------------------------
# init_windows
# ----------------------------------------------------------------------------------------------


def test_init_windows_key_is_insensitive_to_dict_order_and_tells_shapes_and_names(monkeypatch):
    calls = []
    monkeypatch.setattr(training, "a_windows", lambda *a, **kw: calls.append((a, kw)) or {"n": len(calls)})
    monkeypatch.setattr(training, "_SHARED", {})
    cell, _, _, _, c = _tiny()
    c = dict(c, lags=np.array([1, 2]))                          # not JSON: stored by its str()
    x, y = np.zeros((2, 3, 2)), np.zeros((2, 3, 1))
    p = {"a": np.zeros((2, 2)), "b": np.ones(2)}
    first = training.init_windows(cell, p, np.float32(0.5), x, y, dict(c, N=8), nulls=("lag",))
    (args, kw), = calls
    assert args[2] == 0.5 and type(args[2]) is float and kw == {"nulls": ("lag",), "lags": None}   # P = η·I, η a float
    assert args[0] is cell and args[1] is p and args[3] is x and args[4] is y and args[5]["N"] == 8
    # the same content in another order (config, parameters), η as a float: a hit
    again = training.init_windows(cell, {"b": np.ones(2), "a": np.zeros((2, 2))}, 0.5, x, y,
                                dict(reversed(list(dict(c, N=16).items()))), nulls=("lag",))
    assert again is first and len(calls) == 1
    training.init_windows(cell, {"a": np.zeros((4,)), "b": np.ones(2)}, 0.5, x, y, c, nulls=("lag",))   # reshaped
    training.init_windows(cell, {"a2": np.zeros((2, 2)), "b": np.ones(2)}, 0.5, x, y, c, nulls=("lag",))  # renamed
    training.init_windows(cell, {"a": np.zeros((2, 2), np.float32), "b": np.ones(2)}, 0.5, x, y, c,
                        nulls=("lag",))                                                            # float32
    training.init_windows(cell, p, 0.5, x.reshape(2, 2, 3), y, c, nulls=("lag",))                     # x reshaped
    training.init_windows(cell, p, 0.5, x, y.astype(np.float32), c, nulls=("lag",))                   # y float32
    training.init_windows(cell, p, 0.5, x, y, c, nulls=("lag", "full"))                               # other nulls
    training.init_windows(lwsim.make_cell("lstm", 2, 3), p, 0.5, x, y, c, nulls=("lag",))              # other cell
    assert len(calls) == 8


def test_init_windows_computes_once_per_input_and_ignores_only_n(monkeypatch):
    # private: init_windows' cache size is visible only in its module-level store
    import lwsim.figures.training as training
    cell, p, x, y, c, _ = _tiny_optim_fused()
    calls = []
    real = training.a_windows

    def spy(*a, **kw):
        calls.append(1)
        return real(*a, **kw)
    monkeypatch.setattr(training, "a_windows", spy)
    monkeypatch.setattr(training, "_SHARED", {})
    first = training.init_windows(cell, p, 0.01, x, y, dict(c, N=10), nulls=("lag",))
    again = training.init_windows(cell, p, 0.01, x, y, dict(c, N=40), nulls=("lag",))   # another N: a hit
    assert len(calls) == 1 and again is first
    fresh = real(cell, p, 0.01, x, y, c, nulls=("lag",))
    np.testing.assert_array_equal(first["lag"].n_hat, fresh["lag"].n_hat)
    p2 = dict(p, W_out=p["W_out"] + 1e-12)                                   # other weights: a miss
    training.init_windows(cell, p2, 0.01, x, y, dict(c, N=10), nulls=("lag",))
    training.init_windows(cell, p, 0.02, x, y, dict(c, N=10), nulls=("lag",))   # other η: a miss
    training.init_windows(cell, p, 0.01, x, y, dict(c, N=10, eps=1.0), nulls=("lag",))  # other config
    y2 = y.copy()
    y2[0, 0, 0] += 1.0
    training.init_windows(cell, p, 0.01, x, y2, dict(c, N=10), nulls=("lag",))  # other sequences
    assert len(calls) == 5 and len(training._SHARED) == 5
    monkeypatch.setattr(training, "_SHARED_MAX", 5)
    training.init_windows(cell, p, 0.03, x, y, c, nulls=("lag",))                # the oldest goes
    assert len(training._SHARED) == 5 and len(calls) == 6
    training.init_windows(cell, p, 0.01, x, y, c, nulls=("lag",))
    assert len(calls) == 7                                                      # it was the first


# ----------------------------------------------------------------------------------------------
# _master
# ----------------------------------------------------------------------------------------------


# ---- the master fit and the decay-law dict ---------------------------------------------------------
def test_master_on_exact_data_drops_the_undetectable_lags():
    """log N̂ = 1 + 2·(−κ log f) exactly on 10 lags: slope 2, intercept 1, r² 1; an infinite and a NaN
    N̂ are not detectable and are dropped."""
    # private: its public caller, train_a_model, trains a network first (> 1 s)
    kappa = np.linspace(1.0, 2.0, 12)
    f = np.linspace(0.3, 0.9, 12)
    n_hat = np.exp(1.0 + 2.0 * (-kappa * np.log(f)))
    n_hat[3], n_hat[8] = np.inf, np.nan
    out = training._master(SimpleNamespace(n_hat=n_hat, kappa=kappa), f)
    assert sorted(out) == ["intercept", "n", "r2", "slope"] and out["n"] == 10
    assert out["slope"] == pytest.approx(2.0, rel=1e-10) and out["intercept"] == pytest.approx(1.0, rel=1e-10)
    assert out["r2"] == pytest.approx(1.0, rel=1e-12)


def test_master_too_few_lags_is_an_error_entry():
    # private: its public caller, train_a_model, trains a network first (> 1 s)
    det = SimpleNamespace(n_hat=np.array([10.0, 20.0, np.inf, 40.0]), kappa=np.ones(4))
    assert training._master(det, np.full(4, 0.5)) == {
        "error": "fit_master needs >= 10 usable lags (finite n_hat and kappa, f > 0) with >= 3 distinct n_hat; "
                 "got 3 lags, 3 distinct n_hat"}


# ----------------------------------------------------------------------------------------------
# _decay_dict
# ----------------------------------------------------------------------------------------------


def test_decay_dict():
    # private: its public callers (train_a_model, the [B] experiments) train a network first (> 1 s)
    fit = SimpleNamespace(params={"C": 1.0, "beta": 0.5}, r2=0.9, ssr=0.1, aic=-3.0, bic=-2.0)
    decay = SimpleNamespace(selected="power", selected_bic="exponential", n=12, fits={"power": fit}, window=(1, 9))
    assert training._decay_dict(decay) == {
        "selected": "power", "selected_bic": "exponential", "n": 12,
        "fits": {"power": {"params": {"C": 1.0, "beta": 0.5}, "r2": 0.9, "ssr": 0.1, "aic": -3.0, "bic": -2.0}}}


def test_decay_dict_of_a_real_fit():
    # private: its public callers (train_a_model, the [B] experiments) train a network first (> 1 s)
    lags = np.arange(1, 13, dtype=float)
    d = training._decay_dict(stats.fit_decay(lags, 5.0 * lags ** -1.5))
    assert set(d["fits"]) >= {"power", "exponential"} and d["selected"] == "power"
    assert d["fits"]["power"]["params"]["beta"] == pytest.approx(1.5, rel=1e-9)
    assert d["fits"]["power"]["params"]["C"] == pytest.approx(5.0, rel=1e-9)


# ----------------------------------------------------------------------------------------------
# _b_cell
# ----------------------------------------------------------------------------------------------


def test_b_cell_options():
    # private: its public callers (the [B] experiments) train a network first (> 1 s)
    c = {"D": 2, "H": 5, "train_dtype": "float32"}
    cell = training._b_cell("gru", c)
    assert (cell.name, cell.n_in, cell.n_hidden) == ("gru", 2, 5)
    assert cell.bias is False and cell.readout == "last" and cell.dtype == np.float32
    assert training._b_cell("gru", c, readout="every").readout == "every"
    assert training._b_cell("constgate", {"D": 2, "H": 5}).s == 0.8                  # the default s
    assert training._b_cell("constgate", {"D": 2, "H": 5, "s": 0.3}).s == 0.3
