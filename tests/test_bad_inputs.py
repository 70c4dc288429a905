"""Checks across the project (cross-cutting; docs/testing.md).

Bad inputs to the public API: a ValueError/TypeError naming the problem, raised before any work
(docs/troubleshooting.md lists each input and its message)."""


import json
import struct

import numpy as np
import pytest

import lwsim
import lwsim.diagnostics as dg
import lwsim.stats as st
from lwsim import optim, tasks
from lwsim.analyze import LoadError, analyze, load_optimizer, load_weights
from lwsim.analyze.load import infer_model, read_header
from lwsim.train import train


safetensors_numpy = pytest.importorskip("safetensors.numpy")


H, D, NOUT, T, B = 4, 3, 2, 10, 24


RNG = np.random.default_rng(0)


GRU = lwsim.make_cell("gru", 2, 3)


P = GRU.init_params(0)


X = RNG.standard_normal((6, 4, 2))


Y = RNG.standard_normal((6, 4, 1))


DS = tasks.make("multilag", T=16, D=2, lags=(1, 4), coefs=(1.0, 0.5), seed=0).dataset(32, 8, 0, seed=0)


SAMPLES = RNG.standard_normal((2, 50))


def _write_safetensors(path, header, data=b""):
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


@pytest.fixture
def lstm_files(tmp_path):
    cell = lwsim.make_cell("lstm", D, H, NOUT)
    w = cell.params_to_torch(cell.init_params(seed=0, scheme="torch"))
    safetensors_numpy.save_file(w, str(tmp_path / "w.safetensors"))
    return tmp_path, cell, w


# ------------------------------------------------------------------ analyze: n_grid and checks up front
@pytest.fixture
def small_model():
    cell = lwsim.make_cell("gru", 2, 3, convention="torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((T, B, 2)), rng.standard_normal((T, B, 1))
    return cell, cell.init_params(seed=0, scheme="torch"), x, y


@pytest.fixture
def no_work(monkeypatch):
    """Every pass over the data fails loudly: an input error must come before any of them."""
    def boom(*a, **k):
        raise AssertionError("a pass over the data started before the input was checked")
    for name in ("envelope_and_matched", "envelope", "matched_statistic", "exact_envelope"):
        monkeypatch.setattr(dg, name, boom)


# ------------------------------------------------------------------ the further bad inputs
def _make_adam():
    return optim.make("adam", {"a": np.ones(2)}, lr=0.1)


FURTHER = {
    # lwsim.make_cell and Cell methods
    "cell name": (lambda: lwsim.make_cell("GRU", 2, 3), ValueError, r"name must be one of \[.*'gru'.*\], got 'GRU'"),
    "cell name type": (lambda: lwsim.make_cell(None, 2, 3), TypeError, r"name must be a string"),
    "n_hidden 0": (lambda: lwsim.make_cell("gru", 2, 0), ValueError, r"n_hidden must be >= 1, got 0"),
    "n_in float": (lambda: lwsim.make_cell("gru", 2.5, 3), TypeError, r"n_in must be an integer"),
    "layernorm str": (lambda: lwsim.make_cell("gru", 2, 3, layernorm="yes"), TypeError,
                      r"layernorm and bias must be bools"),
    "dtype int32": (lambda: lwsim.make_cell("gru", 2, 3, dtype="int32"), ValueError,
                    r"dtype must be 'float32' or 'float64'"),
    "readout": (lambda: lwsim.make_cell("gru", 2, 3, readout="first"), ValueError, r"readout must be one of"),
    "init scheme": (lambda: GRU.init_params(0, scheme="xavier"), ValueError, r"scheme must be one of"),
    "init seed": (lambda: GRU.init_params(-1), ValueError, r"seed must be >= 0"),
    "forward x 2-D": (lambda: GRU.forward(P, X[0]), ValueError, r"x must have 3 dimensions"),
    "forward x D": (lambda: GRU.forward(P, np.zeros((6, 4, 5))), ValueError,
                    r"x must have shape \(T, B, 2\) \(time-major\)"),
    "forward x NaN": (lambda: GRU.forward(P, np.full((6, 4, 2), np.nan)), ValueError, r"x contains NaN or Inf"),
    "forward params key": (lambda: GRU.forward({k: v for k, v in P.items() if k != "W_out"}, X), ValueError,
                           r"params keys do not match"),
    "forward backend": (lambda: GRU.forward(P, X, backend="numab"), ValueError, r"backend must be one of"),
    "loss y shape": (lambda: GRU.loss_and_grad(P, X, Y[:, :2]), ValueError, r"y must have shape \(6, 4, 1\)"),
    "with_dtype": (lambda: GRU.with_dtype("float16"), ValueError, r"dtype must be 'float32' or 'float64'"),
    # lwsim.tasks
    "task name": (lambda: tasks.make("copy", T=10, D=2), ValueError, r"unknown task 'copy'; valid tasks: multilag"),
    "task T": (lambda: tasks.make("multilag", T=0, D=2), ValueError, r"T must be >= 1, got 0"),
    "task keyword": (lambda: tasks.make("multilag", T=10, D=2, foo=3), TypeError, r"unknown keyword\(s\) \['foo'\]"),
    "task lag >= T": (lambda: tasks.make("multilag", T=16, D=2), ValueError, r"lags 256 >= T=16"),
    # lwsim.train
    "train optimizer": (lambda: train(GRU, GRU.init_params(0), DS, optimizer="adamx", epochs=1, batch_size=8,
                                      progress=False), ValueError, r"unknown optimizer 'adamx'; valid optimizers"),
    "train epochs+steps": (lambda: train(GRU, GRU.init_params(0), DS, epochs=1, steps=1, progress=False), ValueError,
                           r"exactly one of epochs="),
    "train batch > n": (lambda: train(GRU, GRU.init_params(0), DS, epochs=1, progress=False), ValueError,
                        r"batch_size 64 > number of training sequences 32"),
    "train D": (lambda: train(lwsim.make_cell("gru", 5, 3), lwsim.make_cell("gru", 5, 3).init_params(0), DS, epochs=1,
                              batch_size=8, progress=False), ValueError,
                r"data has D=2 input channels but the cell has n_in=5"),
    "train hyper": (lambda: train(GRU, GRU.init_params(0), DS, epochs=1, batch_size=8, optimizer_kwargs={"lrr": 1},
                                  progress=False), TypeError, r"unknown hyper-parameter\(s\) \['lrr'\]"),
    # lwsim.optim
    "optim lr": (lambda: optim.make("adam", {"a": np.ones(2)}, lr=-1), ValueError, r"lr must be > 0"),
    "optim betas": (lambda: optim.make("adam", {"a": np.ones(2)}, betas=(0.9,)), ValueError, r"betas must be a pair"),
    "optim grads keys": (lambda: _make_adam().step({"b": np.ones(2)}), ValueError,
                         r"grads keys do not match the parameters: missing \['a'\], unexpected \['b'\]"),
    "optim state_dict": (lambda: optim.from_state_dict({"a": np.ones(2)}, {"name": "adam"}), ValueError,
                         r"optimizer state_dict lacks 'hyper'"),
    "optim state_dict type": (lambda: optim.from_state_dict({"a": np.ones(2)}, [1]), TypeError,
                              r"sd must be an optimizer state_dict"),
    # lwsim.diagnostics
    "envelope lag 0": (lambda: dg.envelope(GRU, P, X, 1.0, [0, 1], progress=False), ValueError, r"\blags\b.*>= 1"),
    "envelope rates": (lambda: dg.envelope(GRU, P, X, "adam", 2, progress=False), TypeError, r"rates must be a number"),
    "envelope rnn": (lambda: dg.envelope(lwsim.make_cell("rnn", 2, 3), lwsim.make_cell("rnn", 2, 3).init_params(0), X,
                                         1.0, 2, progress=False), ValueError, r"the envelope needs a leak"),
    "envelope order": (lambda: dg.envelope(GRU, P, X, 1.0, 2, order=2, progress=False), ValueError, r"order must be 0"),
    "matched K": (lambda: dg.matched_statistic(GRU, P, X, Y, 1.0, 2, n_directions=0, progress=False), ValueError,
                  r"n_directions must be >= 1"),
    "timescales lag 0": (lambda: dg.timescales([0, 1], np.ones((2, 3))), ValueError, r"lags must be finite and >= 1"),
    "timescales lags str": (lambda: dg.timescales(["a", "b"], np.ones((2, 3))), TypeError, r"lags must be a 1-D array"),
    # lwsim.stats
    "fit_alpha few": (lambda: st.fit_alpha(np.ones(5)), ValueError, r"x needs at least 20 values"),
    "fit_alpha method": (lambda: st.fit_alpha(SAMPLES[0], method="mle"), ValueError, r"method must be one of"),
    "detection eps": (lambda: st.detection_table(SAMPLES, [1, 2], [10], eps=0), ValueError, r"\beps\b.*> 0"),
    "detection rows": (lambda: st.detection_table(SAMPLES, [1, 2, 3], [10]), ValueError,
                       r"samples_per_lag has 2 rows, lags has 3"),
    "fit_decay lags": (lambda: st.fit_decay([1, 1, 2], [1.0, 1.0, 0.5]), ValueError, r"lags must be distinct"),
    "kappa alpha": (lambda: st.kappa(0.0), ValueError, r"alpha must lie in \(1, 2\]"),
}


# ------------------------------------------------------------------ malformed safetensors headers
@pytest.mark.parametrize("header, message", [
    (["weight_ih_l0"], r"bad\.safetensors: malformed safetensors header: a JSON list instead of an object"),
    ({"w": {"dtype": "F64", "data_offsets": [0, 8]}}, r"bad\.safetensors: .*key 'w' has no shape"),
    ({"w": {"shape": [1], "data_offsets": [0, 8]}}, r"bad\.safetensors: .*key 'w' has no dtype"),
    ({"w": {"dtype": "F64", "shape": [1]}}, r"bad\.safetensors: .*key 'w' has no data_offsets"),
    ({"w": [1, 2]}, r"bad\.safetensors: .*key 'w' is a JSON list"),
    ({"w": {"dtype": "F64", "shape": ["a"], "data_offsets": [0, 8]}}, r"key 'w' has shape \['a'\]"),
    ({"w": {"dtype": "F64", "shape": [1], "data_offsets": [8]}}, r"key 'w' has data_offsets \[8\], expected 2"),
    ({"w": {"dtype": ["F64"], "shape": [1], "data_offsets": [0, 8]}}, r"key 'w' has dtype \['F64'\]"),
    ({"__metadata__": {"lr": 0.1}}, r"__metadata__ must map names to strings"),
])
def test_malformed_safetensors_header(tmp_path, header, message):
    path = _write_safetensors(tmp_path / "bad.safetensors", header, b"\0" * 8)
    with pytest.raises(LoadError, match=message):
        read_header(path)


# ------------------------------------------------------------------ integer (quantised) weights
def test_integer_weights_refused(lstm_files):
    d, cell, w = lstm_files
    w = dict(w, weight_hh_l0=np.round(w["weight_hh_l0"] * 100).astype(np.int8))
    safetensors_numpy.save_file(w, str(d / "q.safetensors"))
    assert infer_model(d / "q.safetensors", "lstm", H, "torch") == (D, NOUT, True)   # shapes are fine
    with pytest.raises(LoadError, match=r"q\.safetensors: integer/boolean weights refused: "
                                        r"weight_hh_l0 \(int8\); quantised weights must be dequantised"):
        load_weights(d / "q.safetensors", cell, "torch")
    np.savez(d / "q.npz", **{k: v.astype(np.uint8) if k == "W_out" else v
                             for k, v in cell.init_params(seed=0).items()})
    with pytest.raises(LoadError, match=r"W_out \(uint8\)"):
        load_weights(d / "q.npz", cell, "lwsim")


def test_integer_optimizer_buffers_refused(lstm_files):
    d, cell, w = lstm_files
    params = load_weights(d / "w.safetensors", cell, "torch")
    opt = {f"{k}.exp_avg_sq": np.ones(a.shape, dtype=np.int32) for k, a in w.items()}
    opt["step"] = np.array([5])                    # an integer step count is fine
    safetensors_numpy.save_file(opt, str(d / "o.safetensors"))
    with pytest.raises(LoadError, match=r"integer/boolean optimizer buffers refused: .*\(int32\)"):
        load_optimizer(d / "o.safetensors", cell, params, "torch", "adam", {"lr": 1e-3})


# ------------------------------------------------------------------ options that do not apply
@pytest.mark.parametrize("name, options, message", [
    ("lstm", {"convention": "keras"}, r"\bconvention='keras'.*\bgru\b.*'lstm'"),
    ("lstm", {"convention": "cho"}, r"\bconvention='cho'.*\bgru\b"),
    ("rnn", {"s": 0.3}, r"\bs=0\.3.*\bconstgate\b.*'rnn'"),
    ("gru", {"convention": "Torch"}, r"\bconvention\b.*'Torch'"),
])
def test_option_not_for_this_cell(name, options, message):
    with pytest.raises(ValueError, match=message):
        lwsim.make_cell(name, 2, 3, **options)


def test_unknown_option_lists_the_options():
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['layer_norm'\]; the options are layernorm, "
                                        r"bias, readout, dtype, s, convention"):
        lwsim.make_cell("gru", 2, 3, layer_norm=True)


@pytest.mark.parametrize("cell", [lwsim.make_cell("constgate", 2, 3, s=0.3),
                                  lwsim.make_cell("gru", 2, 3, convention="torch"), GRU,
                                  lwsim.make_cell("lstm", 2, 3)])
def test_with_dtype_keeps_the_cell_options(cell):
    # the options that do not apply stay unset (None), so the copy is built without an error
    c32 = cell.with_dtype("float32")
    assert (c32.s, c32.convention, c32.dtype) == (cell.s, cell.convention, np.float32)


@pytest.mark.parametrize("layout", ["Torch", "LWSIM", "pytorch", ""])
def test_unknown_layout(lstm_files, layout):
    d, cell, _ = lstm_files
    msg = rf"\blayout\b.*'{layout}'"
    with pytest.raises(LoadError, match=msg):
        load_weights(d / "w.safetensors", cell, layout)
    with pytest.raises(LoadError, match=msg):
        infer_model(d / "w.safetensors", "lstm", H, layout)
    with pytest.raises(LoadError, match=msg):
        load_optimizer(d / "w.safetensors", cell, {}, layout, "sgd", {"lr": 0.1})


def test_analyze_single_budget(small_model):
    cell, params, x, y = small_model
    with pytest.warns(UserWarning, match="only 24 diagnostic sequences"):
        rep = analyze(cell, params, x, y, n_grid=20, lags=3, backend="numpy", exact=False, progress=False)
    assert rep.detection.n_grid.tolist() == [20.0]
    assert rep.detection.h_n.shape == (1,)


@pytest.mark.parametrize("kw, exc, message", [
    ({"n_grid": [0, 10]}, ValueError, r"\bn_grid\b.*> 0"),
    ({"n_grid": [[10]]}, ValueError, r"\bn_grid\b.*1-dimensional"),
    ({"n_grid": "20"}, TypeError, r"\bn_grid\b"),
    ({"eps": 0}, ValueError, r"\beps\b.*> 0"),
    ({"eps": "20"}, TypeError, r"\beps\b"),
    ({"statistic": "sequences"}, ValueError, r"\bstatistic\b.*'sequences'"),
    ({"conventions": "Author"}, ValueError, r"\bconventions\b.*'Author'"),
    ({"lags": [0, 1]}, ValueError, r"\blags\b.*>= 1"),
    ({"lags": 10}, ValueError, r"\blags\b.*<= T - 1 = 9"),
    ({"exact": "yes"}, TypeError, r"\bexact\b"),
    ({"rates": ("adam", {"lr": 0.1})}, ValueError, r"adaptive"),
])
def test_analyze_checks_before_any_pass(small_model, no_work, kw, exc, message):
    cell, params, x, y = small_model
    with pytest.raises(exc, match=message):
        analyze(cell, params, x, y, backend="numpy", progress=False, **kw)


@pytest.mark.parametrize("case", list(FURTHER), ids=list(FURTHER))
def test_further_bad_inputs(case):
    fn, exc, message = FURTHER[case]
    with pytest.raises(exc, match=message):
        fn()
