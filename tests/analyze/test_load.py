"""Tests of lwsim/analyze/load.py (laid out like the code: docs/testing.md).

Tests that kill the surviving mutants of mutmut on lwsim/analyze/load.py (issue 32,
docs/testing.md): files written byte by byte (safetensors headers, .npy members), every refusal's
whole message, the key checks, the weights, optimizer-state and data loaders on hand values.

lwsim.analyze: the CLI on a saved model gives the figures pipeline's numbers (docs/analyze.md).

lwsim.analyze: every bad input gets a clear error naming the file, the key and the shape.

Casts and copies keep every option (docs/cells.md §1.9, docs/experiments.md §5.2, docs/analyze.md):
``Cell.with_dtype`` over every cell and every option (s, convention, read-out, LayerNorm, bias),
``TrainResult.astype`` over every optimizer with non-default hyper-parameters and checkpoints, and
the ``python -m lwsim.analyze`` loader (weights written by lwsim, read back into the cell the CLI
builds) over every cell and option it can express."""


from __future__ import annotations

import io
import itertools
import json
import os
import pickle
import re
import struct
import types
import zipfile

import numpy as np
import pytest

import lwsim
from lwsim import analyze as an
from lwsim.analyze import LoadError, load as ld, load_data, load_optimizer, load_weights
from lwsim.analyze.load import infer_model, read_header
from lwsim.figures.studies import preset_sizes
from helpers import _options


st = pytest.importorskip("safetensors.numpy")


def _st(path, header, data=b"", raw=None):
    """A safetensors file by hand: 8-byte little-endian header length, the JSON header, the data."""
    head = raw if raw is not None else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + data)
    return path


def _err(fn, *a, **k):
    with pytest.raises(LoadError) as e:
        fn(*a, **k)
    return str(e.value)


F64 = {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}


# ------------------------------------------------------------------ npz headers
def _npy(arr=None, header=None, data=b"", version=(1, 0)):
    buf = io.BytesIO()
    if header is None:
        np.lib.format.write_array(buf, arr, version=version)
    else:
        np.lib.format.write_array_header_1_0(buf, header)
        buf.write(data)
    return buf.getvalue()


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return path


# ------------------------------------------------------------------ key, dtype and value checks
def _specs(**shapes):
    return {k: (s, np.dtype("float64")) for k, s in shapes.items()}


# ------------------------------------------------------------------ model shapes from the headers
def _gru_lwsim(D=3, H=2, n_out=5, bias=True):
    return {k: np.ones(s) for k, s in lwsim.make_cell("gru", D, H, n_out, bias=bias).param_shapes().items()}


def _lw_opt(tmp_path, bufs, meta=None, name="o.safetensors"):
    """An lwsim-layout optimizer file for a 1-input, 1-hidden GRU: every parameter's buffers ``bufs``
    ({buffer: value}), plus whatever extra arrays are in ``bufs`` under a key with a dot or 'step'."""
    cell = lwsim.make_cell("gru", 1, 1, 1)
    arrays = {}
    for b, v in bufs.items():
        if "." in b or b == "step":
            arrays[b] = np.asarray(v)
        else:
            arrays.update({f"{k}.{b}": np.full(s, float(v)) for k, s in cell.param_shapes().items()})
    st.save_file(arrays, str(tmp_path / name), metadata=meta)
    params = {k: np.full(s, 0.5) for k, s in cell.param_shapes().items()}
    return tmp_path / name, cell, params


SMOKE = preset_sizes("smoke")


safetensors_numpy = pytest.importorskip("safetensors.numpy")


H, D, NOUT, T, B = 4, 3, 2, 12, 24


@pytest.fixture
def lstm():
    cell = lwsim.make_cell("lstm", D, H, NOUT)
    return cell, cell.init_params(seed=0, scheme="torch")


@pytest.fixture
def files(tmp_path, lstm):
    cell, params = lstm
    w = cell.params_to_torch(params)
    safetensors_numpy.save_file(w, str(tmp_path / "w.safetensors"))
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", x=rng.standard_normal((T, B, D)), y=rng.standard_normal((T, B, NOUT)))
    opt = {f"{k}.exp_avg_sq": np.full(a.shape, 0.01) for k, a in w.items()}
    opt["step"] = np.array([5])
    safetensors_numpy.save_file(opt, str(tmp_path / "o.safetensors"))
    return tmp_path, w, opt


def _variants():
    """(name, options) for every cell and every combination of its options."""
    out = []
    for name in lwsim.CELL_NAMES:
        extra = {"constgate": [{"s": 0.3}, {"s": 0.05}], "gru": [{"convention": "cho"}, {"convention": "torch"}]}
        for ln, bias, readout, e in itertools.product((False, True), (False, True), ("every", "last"),
                                                      extra.get(name, [{}])):
            if ln and e.get("convention") == "torch":
                continue                                  # torch.nn.GRU has no LayerNorm
            out.append((name, dict(layernorm=ln, bias=bias, readout=readout, **e)))
    return out


VARIANTS = _variants()


# ----------------------------------------------------------------------------- analyze loader
def _load_via_cli(monkeypatch, tmp_path, argv):
    """The (cell, params) that ``python -m lwsim.analyze`` would analyse for ``argv`` (the analysis
    itself replaced by a stub)."""
    from lwsim.analyze import __main__ as cli
    seen = {}

    def stub(cell, params, x, y, **kw):
        seen.update(cell=cell, params=params)
        return types.SimpleNamespace(save=lambda out, dpi=80: [])
    monkeypatch.setattr(cli, "analyze", stub)
    cli.run(cli.parser().parse_args(argv + ["--out", str(tmp_path / "out")]))
    return seen["cell"], seen["params"]


def _data(tmp_path, D, n_out):
    path = tmp_path / "data.npz"
    rng = np.random.default_rng(0)
    np.savez(path, x=rng.standard_normal((6, 4, D)), y=rng.standard_normal((6, 4, n_out)))
    return str(path)


LWSIM_LAYOUT = [(n, o) for n, o in VARIANTS if n != "constgate" or o["s"] == 0.05]


TORCH_LAYOUT = [(n, o) for n, o in VARIANTS if n in ("gru", "lstm") and not o["layernorm"]
                and o.get("convention", "torch") == "torch"]


def test_analyze_loader_keeps_every_option_lwsim_layout(monkeypatch, tmp_path):
    data = _data(tmp_path, 3, 2)
    for dtype in ("float64", "float32"):
        for name, opts in LWSIM_LAYOUT:
            cell = lwsim.make_cell(name, 3, 4, 2, dtype=dtype, **opts)
            p = cell.init_params(seed=2, scheme="normal", sigma_w=0.5)
            w = tmp_path / "w.npz"
            np.savez(w, **{k: v.astype(np.float64) for k, v in p.items()})   # the file's dtype is not the cell's
            argv = ["--cell", name, "--hidden", "4", "--weights", str(w), "--layout", "lwsim", "--data", data,
                    "--readout", opts["readout"], "--dtype", dtype]
            argv += ["--layernorm"] if opts["layernorm"] else []
            argv += ["--convention", opts["convention"]] if "convention" in opts else []
            argv += ["--s", str(cell.s)] if name == "constgate" else []
            got, q = _load_via_cli(monkeypatch, tmp_path, argv)
            assert _options(got) == _options(cell) and got.dtype == cell.dtype, (name, opts, dtype)
            assert q.keys() == p.keys()
            for k in p:
                assert q[k].dtype == cell.dtype
                np.testing.assert_array_equal(q[k], p[k])


# ----------------------------------------------------------------------------------------------
# LoadError
# ----------------------------------------------------------------------------------------------


def test_missing_key(files, lstm):
    d, w, _ = files
    del w["weight_hh_l0"]
    safetensors_numpy.save_file(w, str(d / "w.safetensors"))
    with pytest.raises(LoadError, match=r"w\.safetensors.*missing \['weight_hh_l0'\].*weight_hh_l0 \(16, 4\)"):
        load_weights(d / "w.safetensors", lstm[0], "torch")


def test_extra_key(files, lstm):
    d, w, _ = files
    w["weight_ih_l1"] = w["weight_ih_l0"]
    safetensors_numpy.save_file(w, str(d / "w.safetensors"))
    with pytest.raises(LoadError, match=r"w\.safetensors.*unexpected \['weight_ih_l1'\]"):
        load_weights(d / "w.safetensors", lstm[0], "torch")


def test_layout_mismatch(files, lstm):
    d, _, _ = files
    cell, params = lstm
    np.savez(d / "lw.npz", **params)                 # lwsim names, read as torch layout
    with pytest.raises(LoadError, match=r"lw\.npz: key 'weight_ih_l0' missing.*--layout lwsim"):
        infer_model(d / "lw.npz", "lstm", H, "torch")
    with pytest.raises(LoadError, match=r"w\.safetensors: keys do not match cell 'lstm' \(layout lwsim\): "
                                        r"missing \['W_i'.*--layout torch"):
        infer_model(d / "w.safetensors", "lstm", H, "lwsim")
    # a GRU file read as an LSTM: 12 rows, not 4·H = 16
    g = lwsim.make_cell("gru", D, H, NOUT, convention="torch")
    safetensors_numpy.save_file(g.params_to_torch(g.init_params(0, "torch")), str(d / "g.safetensors"))
    with pytest.raises(LoadError, match=r"g\.safetensors: key 'weight_ih_l0' has shape \(12, 3\), expected \(16, D\)"):
        infer_model(d / "g.safetensors", "lstm", H, "torch")


def test_wrong_hidden_size(files):
    d, _, _ = files
    with pytest.raises(LoadError, match=r"'weight_ih_l0' has shape \(16, 3\), expected \(32, D\).*hidden 8"):
        infer_model(d / "w.safetensors", "lstm", 8, "torch")


def test_data_D_mismatch(files):
    d, _, _ = files
    with pytest.raises(LoadError, match=r"d\.npz: key 'x' has shape \(12, 24, 3\), expected \(T, B, 5\).*D = 5"):
        load_data(d / "d.npz", 5, NOUT)


def test_data_nout_mismatch(files):
    d, _, _ = files
    with pytest.raises(LoadError, match=r"d\.npz: key 'y' has shape \(12, 24, 2\), expected \(T, B, 1\).*n_out = 1"):
        load_data(d / "d.npz", D, 1)


def test_data_keys(files):
    d, _, _ = files
    np.savez(d / "k.npz", inputs=np.zeros((T, B, D)), y=np.zeros((T, B, NOUT)))
    with pytest.raises(LoadError, match=r"k\.npz: keys do not match: missing \['x'\], unexpected \['inputs'\]"):
        load_data(d / "k.npz", D, NOUT)


def test_nan_in_weights(files, lstm):
    d, w, _ = files
    w["weight_hh_l0"] = w["weight_hh_l0"].copy()
    w["weight_hh_l0"][0, 0] = np.nan
    safetensors_numpy.save_file(w, str(d / "w.safetensors"))
    with pytest.raises(LoadError, match=r"w\.safetensors: key 'weight_hh_l0' holds 1 NaN/Inf"):
        load_weights(d / "w.safetensors", lstm[0], "torch")


def test_nan_in_data(files):
    d, _, _ = files
    x = np.zeros((T, B, D))
    x[3, 4, 1] = np.nan
    np.savez(d / "d.npz", x=x, y=np.zeros((T, B, NOUT)))
    with pytest.raises(LoadError, match=r"d\.npz: key 'x' holds 1 NaN/Inf"):
        load_data(d / "d.npz", D, NOUT)


def test_pickled_object_array_refused(files, monkeypatch):
    d, _, _ = files
    np.savez(d / "obj.npz", x=np.array([{"a": 1}, None], dtype=object), y=np.zeros((T, B, NOUT)))
    called = []
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: called.append(1))
    with pytest.raises(LoadError, match=r"obj\.npz: key 'x' is a pickled object array.*never unpickles"):
        read_header(d / "obj.npz")
    with pytest.raises(LoadError, match="pickled object array"):
        load_data(d / "obj.npz", D, NOUT)
    assert not called


@pytest.mark.parametrize("ext", [".pt", ".pth"])
def test_torch_file_refused(tmp_path, ext):
    p = tmp_path / f"model{ext}"
    p.write_bytes(b"PK\x03\x04 not opened")
    with pytest.raises(LoadError, match=r"model\.pt.*refused: loading them runs arbitrary code.*safetensors"):
        read_header(p)


def test_truncated_safetensors(files, lstm):
    d, _, _ = files
    raw = (d / "w.safetensors").read_bytes()
    (d / "w.safetensors").write_bytes(raw[:-8])
    with pytest.raises(LoadError, match=r"w\.safetensors: file is \d+ bytes, its header describes"):
        load_weights(d / "w.safetensors", lstm[0], "torch")


def test_oversized_npz_header(tmp_path):
    """A header claiming more data than the member holds fails before any allocation."""
    buf = tmp_path / "big.npz"
    np.savez(buf, x=np.zeros((2, 2, 3)), y=np.zeros((2, 2, 2)))
    import zipfile
    with zipfile.ZipFile(buf) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    hdr = members["x.npy"]
    members["x.npy"] = hdr.replace(b"'shape': (2, 2, 3), ", b"'shape': (99999, 99, 3),")
    with zipfile.ZipFile(buf, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    with pytest.raises(LoadError, match=r"big\.npz: key 'x' declares shape \(99999, 99, 3\).*larger than"):
        read_header(buf)


def test_optimizer_state_missing_key(files, lstm):
    d, _, opt = files
    del opt["weight_hh_l0.exp_avg_sq"]
    safetensors_numpy.save_file(opt, str(d / "o.safetensors"))
    with pytest.raises(LoadError, match=r"o\.safetensors: optimizer adam state keys do not match: "
                                        r"missing \['weight_hh_l0.exp_avg_sq'\]"):
        load_optimizer(d / "o.safetensors", lstm[0], lstm[1], "torch", "adam", {"lr": 1e-3})


def test_optimizer_needs_lr_and_step(files, lstm):
    d, _, opt = files
    with pytest.raises(LoadError, match="learning rate is unknown"):
        load_optimizer(d / "o.safetensors", lstm[0], lstm[1], "torch", "adam", {})
    del opt["step"]
    safetensors_numpy.save_file(opt, str(d / "o.safetensors"))
    with pytest.raises(LoadError, match="no optimizer step count"):
        load_optimizer(d / "o.safetensors", lstm[0], lstm[1], "torch", "adam", {"lr": 1e-3})


def test_layout_mismatch_lists_the_keys_found(files, lstm):
    """Un-stripped module prefixes (rnn./fc.) are named with the keys found (issue 33 item 4)."""
    d, w, _ = files
    pre = {("fc." + k[len("readout."):]) if k.startswith("readout.") else "rnn." + k: v for k, v in w.items()}
    np.savez(d / "pre.npz", **pre)
    with pytest.raises(LoadError) as err:
        infer_model(d / "pre.npz", "lstm", H, "torch")
    msg = str(err.value)
    assert "found ['fc.bias', 'fc.weight', 'rnn.bias_hh_l0'" in msg
    assert "module prefixes 'fc.', 'rnn.'" in msg and "strip e.g. 'rnn.'" in msg
    cell, params = lstm
    with pytest.raises(LoadError, match=r"found \['bias_hh_l0', 'bias_ih_l0', 'readout\.bias', 'readout\.weight', 'weight_hh_l0'"):
        infer_model(d / "w.safetensors", "lstm", H, "lwsim")


def test_analyze_loader_keeps_constgate_s(monkeypatch, tmp_path):
    cell = lwsim.make_cell("constgate", 3, 4, 2, s=0.3)
    w = tmp_path / "w.npz"
    np.savez(w, **cell.init_params(seed=2, scheme="normal", sigma_w=0.5))
    argv = ["--cell", "constgate", "--hidden", "4", "--weights", str(w), "--layout", "lwsim",
            "--data", _data(tmp_path, 3, 2)]
    got, _ = _load_via_cli(monkeypatch, tmp_path, argv + ["--s", "0.3"])
    assert got.s == 0.3
    from lwsim.analyze.load import LoadError
    with pytest.raises(LoadError, match="needs --s"):       # never a silent default s
        _load_via_cli(monkeypatch, tmp_path, argv)


def test_analyze_loader_keeps_every_option_torch_layout(monkeypatch, tmp_path):
    data = _data(tmp_path, 3, 2)
    assert len(TORCH_LAYOUT) == 8
    for name, opts in TORCH_LAYOUT:
        cell = lwsim.make_cell(name, 3, 4, 2, **opts)
        p = cell.init_params(seed=2, scheme="normal", sigma_w=0.5)
        w = tmp_path / "t.npz"
        np.savez(w, **cell.params_to_torch(p))
        got, q = _load_via_cli(monkeypatch, tmp_path, ["--cell", name, "--hidden", "4", "--weights", str(w),
                                                       "--layout", "torch", "--data", data,
                                                       "--readout", opts["readout"]])
        assert _options(got) == _options(cell), (name, opts)
        for k in p:
            np.testing.assert_allclose(q[k], p[k], rtol=0, atol=0)


# ----------------------------------------------------------------------------------------------
# read_header: the safetensors header's entries
# ----------------------------------------------------------------------------------------------


def test_header_entry_accepts_zero_and_equal_offsets(tmp_path):
    # a zero-size array at equal offsets [8, 8] and a scalar at offset 0
    p = _st(tmp_path / "z.safetensors", {"s": {"dtype": "F64", "shape": [], "data_offsets": [0, 8]},
                                         "w": {"dtype": "F64", "shape": [0, 3], "data_offsets": [8, 8]}},
            np.float64(2.5).tobytes())
    assert read_header(p) == ({"s": ((), np.dtype("float64")), "w": ((0, 3), np.dtype("float64"))}, {})
    got = ld.read_arrays(p)
    assert got["s"] == 2.5 and got["w"].shape == (0, 3)


# ----------------------------------------------------------------------------------------------
# read_header
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ file kinds
def test_kind(tmp_path):
    for ext in (".pt", ".PTH", ".pkl"):
        p = tmp_path / f"m{ext}"
        assert _err(ld.read_header, p) == (
            f"{p}: PyTorch/pickle files ({ext.lower()}) are refused: loading them runs arbitrary code. Save the "
            "state dict with safetensors instead, e.g. safetensors.torch.save_file(model.state_dict(), "
            "'model.safetensors') (see docs/analyze.md)")
    assert _err(ld.read_header, tmp_path / "m.txt") == f"{tmp_path / 'm.txt'}: unknown file type '.txt'; expected .safetensors or .npz"
    assert _err(ld.read_header, tmp_path / "m") == f"{tmp_path / 'm'}: unknown file type ''; expected .safetensors or .npz"
    assert _err(ld.read_header, tmp_path / "no.npz") == f"{tmp_path / 'no.npz'}: no such file"
    (tmp_path / "dir.safetensors").mkdir()
    assert _err(ld.read_header, tmp_path / "dir.safetensors") == f"{tmp_path / 'dir.safetensors'}: no such file"
    np.savez(tmp_path / "a.npz", x=np.zeros(2))
    os.rename(tmp_path / "a.npz", tmp_path / "A.NPZ")                # the extension's case does not matter
    assert ld.read_header(tmp_path / "A.NPZ") == ({"x": ((2,), np.dtype("float64"))}, {})
    _st(tmp_path / "b.SafeTensors", {"x": F64}, b"\0" * 16)
    assert read_header(tmp_path / "b.SafeTensors") == ({"x": ((2,), np.dtype("float64"))}, {})


# ------------------------------------------------------------------ safetensors headers
def test_safetensors_header_by_hand(tmp_path):
    # two keys listed out of order: the data ends at the larger end offset, 24
    p = _st(tmp_path / "a.safetensors", {"b": {"dtype": "I32", "shape": [2], "data_offsets": [16, 24]},
                                         "a": F64, "__metadata__": {"lr": "0.1"}}, b"\0" * 24)
    specs, meta = ld.read_header(p)
    assert specs == {"b": ((2,), np.dtype("int32")), "a": ((2,), np.dtype("float64"))} and meta == {"lr": "0.1"}
    assert type(meta) is dict
    p = _st(tmp_path / "n.safetensors", {"__metadata__": None, "e": {"dtype": "BOOL", "shape": [0],
                                                                    "data_offsets": [0, 0]}})
    assert ld.read_header(p) == ({"e": ((0,), np.dtype("bool"))}, {})
    for code, name in (("F32", "float32"), ("F16", "float16"), ("I64", "int64"), ("I16", "int16"),
                       ("I8", "int8"), ("U8", "uint8")):
        size = np.dtype(name).itemsize
        p = _st(tmp_path / f"{code}.safetensors", {"k": {"dtype": code, "shape": [1], "data_offsets": [0, size]}},
                b"\0" * size)
        assert ld.read_header(p)[0] == {"k": ((1,), np.dtype(name))}


def test_safetensors_header_refusals(tmp_path):
    p = tmp_path / "s.safetensors"
    p.write_bytes(b"\1" * 7)
    assert _err(ld.read_header, p) == f"{p}: not a safetensors file (shorter than 8 bytes)"
    p.write_bytes(struct.pack("<Q", 0))                               # 8 bytes, empty header
    assert _err(ld.read_header, p) == (f"{p}: not a safetensors file (header is not JSON: Expecting value: "
                                       "line 1 column 1 (char 0))")
    p.write_bytes(struct.pack("<Q", 3) + b"{}")                      # length 3 in a 10-byte file
    assert _err(ld.read_header, p) == f"{p}: not a safetensors file (header length 3 for a 10-byte file)"
    p.write_bytes(struct.pack("<Q", 2) + b"{}")                      # exactly the rest: fine
    assert ld.read_header(p) == ({}, {})
    p.write_bytes(struct.pack(">Q", 2) + b"{}")                      # big-endian length: refused
    assert _err(ld.read_header, p) == f"{p}: not a safetensors file (header length {2 << 56} for a 10-byte file)"
    # a length over the 100 MiB cap in a (sparse) file large enough to hold it
    n = 100 * 2 ** 20 + 1
    with open(p, "wb") as fh:
        fh.write(struct.pack("<Q", n))
        fh.truncate(8 + n)
    assert _err(ld.read_header, p) == f"{p}: not a safetensors file (header length {n} for a {8 + n}-byte file)"
    _st(p, ["x"])
    assert _err(ld.read_header, p) == (f"{p}: malformed safetensors header: a JSON list instead of an object "
                                       "{key: {dtype, shape, data_offsets}}")
    for meta in ("x", {"a": 1}, ["a"]):
        _st(p, {"__metadata__": meta})
        assert _err(ld.read_header, p) == f"{p}: malformed safetensors header: __metadata__ must map names to strings"
    sorted_codes = "['BOOL', 'F16', 'F32', 'F64', 'I16', 'I32', 'I64', 'I8', 'U8']"
    for dtype, shown in (("BF16", "'BF16'"), (5, "5"), (None, "None")):
        _st(p, {"w": {"dtype": dtype, "shape": [1], "data_offsets": [0, 2]}}, b"\0\0")
        assert _err(ld.read_header, p) == (f"{p}: key 'w' has dtype {shown}; lwsim reads {sorted_codes} "
                                           "(convert bfloat16 to float32 before saving)")
    _st(p, {"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    assert _err(ld.read_header, p) == f"{p}: key 'w' declares shape (2,) float64 but 8 bytes"
    # a key that begins at byte 8: 16 − 8 = 8 bytes for a (2,) float64 that needs 16
    _st(p, {"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
            "w": {"dtype": "F64", "shape": [2], "data_offsets": [8, 16]}}, b"\0" * 16)
    assert _err(ld.read_header, p) == f"{p}: key 'w' declares shape (2,) float64 but 8 bytes"
    _st(p, {"w": F64}, b"\0" * 17)
    hlen = len(json.dumps({"w": F64}))
    assert _err(ld.read_header, p) == f"{p}: file is {8 + hlen + 17} bytes, its header describes {8 + hlen + 16}"
    # the data's end is the largest end offset, whatever the order of the keys
    _st(p, {"b": {"dtype": "F64", "shape": [1], "data_offsets": [8, 16]},
            "a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8)
    assert "its header describes" in _err(ld.read_header, p)


@pytest.mark.parametrize("entry, says", [
    ([1], "is a JSON list, expected an object with dtype, shape, data_offsets"),
    ("F64", "is a JSON str, expected an object with dtype, shape, data_offsets"),
    ({}, "has no dtype, shape, data_offsets"),
    ({"dtype": "F64"}, "has no shape, data_offsets"),
    ({"dtype": "F64", "shape": "2", "data_offsets": [0, 16]}, "has shape '2', expected a list of non-negative integers"),
    ({"dtype": "F64", "shape": [2.0], "data_offsets": [0, 16]}, "has shape [2.0], expected a list of non-negative integers"),
    ({"dtype": "F64", "shape": [True], "data_offsets": [0, 8]}, "has shape [True], expected a list of non-negative integers"),
    ({"dtype": "F64", "shape": [-1], "data_offsets": [0, 8]}, "has shape [-1], expected a list of non-negative integers"),
    ({"dtype": "F64", "shape": [2], "data_offsets": [0]}, "has data_offsets [0], expected 2 non-negative integers"),
    ({"dtype": "F64", "shape": [2], "data_offsets": [0, 8, 16]},
     "has data_offsets [0, 8, 16], expected 2 non-negative integers"),
    ({"dtype": "F64", "shape": [2], "data_offsets": [-1, 16]}, "has data_offsets [-1, 16], expected 2 non-negative integers"),
    ({"dtype": "F64", "shape": [1], "data_offsets": [16, 8]}, "has data_offsets [16, 8] (end before begin)"),
])
def test_header_entry_refusals(tmp_path, entry, says):
    p = _st(tmp_path / "e.safetensors", {"w": entry}, b"\0" * 16)
    assert _err(ld.read_header, p) == f"{p}: malformed safetensors header: key 'w' {says}"


def test_npz_header_by_hand(tmp_path):
    p = _zip(tmp_path / "a.npz", {"x.npy": _npy(np.zeros((2, 3), np.float32)),
                                  "v2.npy": _npy(np.arange(4, dtype=np.int16), version=(2, 0)),
                                  "b.npy": _npy(np.array([True])), "raw": _npy(np.zeros(1, np.uint8))})
    assert ld.read_header(p) == ({"x": ((2, 3), np.dtype("float32")), "v2": ((4,), np.dtype("int16")),
                                  "b": ((1,), np.dtype("bool")), "raw": ((1,), np.dtype("uint8"))}, {})
    # declared data exactly as large as the whole member: accepted (only larger is refused)
    hdr = {"descr": "<f8", "fortran_order": False, "shape": (1,)}
    n = len(_npy(header=hdr))                                        # header bytes (a multiple of 64)
    hdr["shape"] = ((n + 8) // 8,)
    p = _zip(tmp_path / "b.npz", {"e.npy": _npy(header=hdr, data=b"\0" * 8)})
    assert ld.read_header(p)[0] == {"e": (((n + 8) // 8,), np.dtype("float64"))}


def test_npz_header_refusals(tmp_path):
    p = tmp_path / "z.npz"
    p.write_bytes(b"not a zip")
    assert _err(ld.read_header, p) == f"{p}: not an .npz file (not a zip archive)"
    _zip(p, {"x.npy": b"garbage-bytes"})
    assert re.fullmatch(re.escape(f"{p}: key 'x' is not a .npy array (") + r".+\)", _err(ld.read_header, p))
    _zip(p, {"o.npy": _npy(header={"descr": "|O", "fortran_order": False, "shape": (2,)})})
    assert _err(ld.read_header, p) == (f"{p}: key 'o' is a pickled object array (dtype object); refused, lwsim "
                                       "never unpickles. Save plain numeric arrays")
    for descr, name in (("<c16", "complex128"), ("<U3", "<U3"), ("<M8[s]", "datetime64[s]")):
        _zip(p, {"c.npy": _npy(header={"descr": descr, "fortran_order": False, "shape": (1,)}, data=b"\0" * 16)})
        assert _err(ld.read_header, p) == f"{p}: key 'c' has dtype {name}; expected a real numeric array"
    hdr = {"descr": "<f8", "fortran_order": False, "shape": (1000,)}
    raw = _npy(header=hdr, data=b"\0" * 8)
    _zip(p, {"big.npy": raw})
    assert _err(ld.read_header, p) == (f"{p}: key 'big' declares shape (1000,) float64, larger than its "
                                       f"{len(raw)}-byte member")


# ----------------------------------------------------------------------------------------------
# read_arrays
# ----------------------------------------------------------------------------------------------


def test_read_arrays(tmp_path):
    st.save_file({"a": np.arange(2.0), "b": np.ones(3, np.float32)}, str(tmp_path / "w.safetensors"))
    got = ld.read_arrays(tmp_path / "w.safetensors")
    assert sorted(got) == ["a", "b"] and got["a"].tolist() == [0.0, 1.0] and got["b"].dtype == np.float32
    got = ld.read_arrays(tmp_path / "w.safetensors", ["b"])
    assert list(got) == ["b"] and got["b"].tolist() == [1.0, 1.0, 1.0]
    np.savez(tmp_path / "d.npz", a=np.arange(3), b=np.zeros(1))
    got = ld.read_arrays(tmp_path / "d.npz")
    assert list(got) == ["a", "b"] and got["a"].tolist() == [0, 1, 2]
    assert list(ld.read_arrays(tmp_path / "d.npz", ["b"])) == ["b"]
    with pytest.raises(LoadError, match="PyTorch/pickle"):
        ld.read_arrays(tmp_path / "w.pt")


def test_read_arrays_never_unpickles_and_reads_only_the_keys_asked(tmp_path):
    # an object member (a pickle) next to a plain one: asked for, it is refused by numpy itself
    # (allow_pickle=False, even without read_header's vetting); not asked for, it is never read
    np.savez(tmp_path / "o.npz", x=np.arange(2.0), o=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="Object arrays cannot be loaded when allow_pickle=False"):
        ld.read_arrays(tmp_path / "o.npz", ["o"])
    with pytest.raises(ValueError, match="allow_pickle=False"):
        ld.read_arrays(tmp_path / "o.npz")
    got = ld.read_arrays(tmp_path / "o.npz", ["x"])
    assert list(got) == ["x"] and got["x"].tolist() == [0.0, 1.0]


# ----------------------------------------------------------------------------------------------
# check_keys
# ----------------------------------------------------------------------------------------------


def test_check_keys():
    ld.check_keys("p", _specs(a=(2,), b=(3, 1)), {"a": (2,), "b": [3, 1]})
    assert _err(ld.check_keys, "p", _specs(a=(2,), z=(1,), y=(1,)), {"a": (2,), "c": (1,), "b": (4, 2)},
                what="gru (torch layout, hidden 2) ") == (
        "p: gru (torch layout, hidden 2) keys do not match: missing ['b', 'c'], unexpected ['y', 'z']; "
        "expected a (2,), c (1,), b (4, 2)")
    assert _err(ld.check_keys, "p", _specs(a=(2,)), {"a": (2,), "b": (1,)}) == (
        "p: keys do not match: missing ['b'], unexpected []; expected a (2,), b (1,)")
    assert _err(ld.check_keys, "p", _specs(a=(2,), z=(1,)), {"a": (2,)}) == (
        "p: keys do not match: missing [], unexpected ['z']; expected a (2,)")
    assert _err(ld.check_keys, "p", _specs(a=(3,)), {"a": (2,)}) == "p: key 'a' has shape (3,), expected (2,)"
    assert _err(ld.check_keys, "p", _specs(a=(3,)), {"a": (2,)}, what="opt state ") == (
        "p: key 'a' has shape (3,), expected (2,) (opt state)")
    # optional keys: allowed, shape-checked when present and given; None = any shape
    ld.check_keys("p", _specs(a=(2,), o=(5,), s=(7,)), {"a": None}, {"o": (5,), "s": None, "q": (1,)})
    ld.check_keys("p", _specs(a=(9, 9)), {"a": None}, None)
    assert _err(ld.check_keys, "p", _specs(a=(2,), o=(4,)), {"a": (2,)}, {"o": (5,)}) == (
        "p: key 'o' has shape (4,), expected (5,)")


# ----------------------------------------------------------------------------------------------
# check_layout
# ----------------------------------------------------------------------------------------------


def test_check_float_layout_and_finite(tmp_path):
    specs = {"a": ((1,), np.dtype("int8")), "b": ((1,), np.dtype("float32")), "c": ((1,), np.dtype("bool")),
             "d": ((1,), np.dtype("uint8"))}
    ld.check_float("p", specs, ["b", "missing"])
    assert _err(ld.check_float, "p", specs, ["a", "b", "c", "zz"]) == (
        "p: integer/boolean weights refused: a (int8), c (bool); quantised weights must be dequantised to "
        "float32 or float64 before saving (lwsim does not know their scale and zero point)")
    assert _err(ld.check_float, "p", specs, ["d"], what="optimizer buffers").startswith(
        "p: integer/boolean optimizer buffers refused: d (uint8); ")
    assert ld.check_layout("torch") == "torch" and ld.check_layout("lwsim") == "lwsim"
    assert _err(ld.check_layout, "Torch") == "layout must be one of 'torch', 'lwsim' (case-sensitive), got 'Torch'"
    assert _err(ld.check_layout, None) == "layout must be one of 'torch', 'lwsim' (case-sensitive), got None"
    np.savez(tmp_path / "ok.npz", x=np.ones((2, 1, 1)), y=np.arange(2.0).reshape(2, 1, 1))
    x, y = load_data(tmp_path / "ok.npz", 1, 1)
    assert x.tolist() == [[[1.0]], [[1.0]]] and y.tolist() == [[[0.0]], [[1.0]]]
    np.savez(tmp_path / "bad.npz", x=np.ones((2, 2, 1)), y=np.array([[np.nan, 1.0], [np.inf, -np.inf]])[:, :, None])
    assert _err(load_data, tmp_path / "bad.npz", 1, 1) == f"{tmp_path / 'bad.npz'}: key 'y' holds 3 NaN/Inf value(s)"
    np.savez(tmp_path / "h.npz", x=np.array([np.nan], np.float16).reshape(1, 1, 1), y=np.ones((1, 1, 1)))
    assert _err(load_data, tmp_path / "h.npz", 1, 1) == f"{tmp_path / 'h.npz'}: key 'x' holds 1 NaN/Inf value(s)"


# ----------------------------------------------------------------------------------------------
# found_keys
# ----------------------------------------------------------------------------------------------


def test_found_keys():
    assert ld.found_keys({"b": 0, "a": 0}) == "found ['a', 'b']"
    assert ld.found_keys({"readout.weight": 0, "w": 0}) == "found ['readout.weight', 'w']"
    keys = {f"k{i:02d}": 0 for i in range(13)}
    assert ld.found_keys(keys) == "found [" + ", ".join(f"'k{i:02d}'" for i in range(12)) + ", … (13 keys)]"
    assert ld.found_keys({f"k{i:02d}": 0 for i in range(12)}) == "found [" + ", ".join(
        f"'k{i:02d}'" for i in range(12)) + "]"
    assert ld.found_keys(keys, show=2) == "found ['k00', 'k01', … (13 keys)]"
    assert ld.found_keys({"rnn.weight_ih_l0": 0, "fc.weight": 0, "readout.bias": 0, "rnn.x.y": 0}) == (
        "found ['fc.weight', 'readout.bias', 'rnn.weight_ih_l0', 'rnn.x.y'] with module prefixes 'fc.', 'rnn.': "
        "layout torch wants the nn.GRU/nn.LSTM's own names (strip e.g. 'rnn.') and 'readout.' for the nn.Linear "
        "(rename e.g. 'fc.'), docs/analyze.md")


# ----------------------------------------------------------------------------------------------
# torch_shapes
# ----------------------------------------------------------------------------------------------


def test_torch_shapes():
    assert ld.torch_shapes("gru", 4, 3, 2, True) == {
        "weight_ih_l0": (12, 3), "weight_hh_l0": (12, 4), "readout.weight": (2, 4),
        "bias_ih_l0": (12,), "bias_hh_l0": (12,), "readout.bias": (2,)}
    assert ld.torch_shapes("lstm", 2, 1, 1, False) == {
        "weight_ih_l0": (8, 1), "weight_hh_l0": (8, 2), "readout.weight": (1, 2)}
    assert _err(ld.torch_shapes, "constgate", 2, 1, 1, True) == (
        "layout 'torch' supports cells gru and lstm (nn.GRU / nn.LSTM), got 'constgate'")


# ----------------------------------------------------------------------------------------------
# infer_model
# ----------------------------------------------------------------------------------------------


def test_infer_model_lwsim_layout(tmp_path):
    np.savez(tmp_path / "w.npz", **_gru_lwsim())
    assert ld.infer_model(tmp_path / "w.npz", "gru", 2, "lwsim") == (3, 5, True)
    np.savez(tmp_path / "nb.npz", **_gru_lwsim(bias=False))
    assert ld.infer_model(tmp_path / "nb.npz", "gru", 2, "lwsim") == (3, 5, False)
    # D from the first input matrix of the right rank, in the cell's order (W_z: 3-D here, skipped)
    w = _gru_lwsim()
    w["W_z"], w["W_r"], w["W_g"] = np.ones((2, 3, 1)), np.ones((2, 7)), np.ones((2, 9))
    np.savez(tmp_path / "odd.npz", **w)
    assert ld.infer_model(tmp_path / "odd.npz", "gru", 2, "lwsim") == (7, 5, True)
    w = _gru_lwsim()
    del w["W_z"]
    np.savez(tmp_path / "noz.npz", **w)
    assert ld.infer_model(tmp_path / "noz.npz", "gru", 2, "lwsim") == (3, 5, True)
    # constgate with its option s (passed to the probe cells)
    cg = {k: np.ones(s) for k, s in lwsim.make_cell("constgate", 4, 2, 1, s=0.5).param_shapes().items()}
    np.savez(tmp_path / "cg.npz", **cg)
    assert ld.infer_model(tmp_path / "cg.npz", "constgate", 2, "lwsim", s=0.5) == (4, 1, True)
    w = _gru_lwsim()
    del w["W_out"]
    np.savez(tmp_path / "nout.npz", **w)
    p = tmp_path / "nout.npz"
    assert _err(ld.infer_model, p, "gru", 2, "lwsim") == (
        f"{p}: keys do not match cell 'gru' (layout lwsim): missing ['W_out']; found ['U_g', 'U_r', 'U_z', "
        "'W_g', 'W_r', 'W_z', 'b_g', 'b_out', 'b_r', 'b_z']; is this a torch-layout file (--layout torch)?")
    np.savez(tmp_path / "noD.npz", W_out=np.ones((5, 2)))
    assert "missing ['W_z', 'W_r', 'W_g', 'U_z'" in _err(ld.infer_model, tmp_path / "noD.npz", "gru", 2, "lwsim")
    # no b_out: a bias-free cell, whose missing keys are its six matrices (no b_z, b_r, b_g, b_out)
    assert _err(ld.infer_model, tmp_path / "noD.npz", "gru", 2, "lwsim") == (
        f"{tmp_path / 'noD.npz'}: keys do not match cell 'gru' (layout lwsim): missing ['W_z', 'W_r', 'W_g', "
        "'U_z', 'U_r', 'U_g']; found ['W_out']; is this a torch-layout file (--layout torch)?")
    assert _err(ld.infer_model, p, "gru", 2, "LWSIM") == (
        "layout must be one of 'torch', 'lwsim' (case-sensitive), got 'LWSIM'")


def test_infer_model_torch_layout(tmp_path):
    t = {"weight_ih_l0": np.ones((6, 3)), "weight_hh_l0": np.ones((6, 2)), "readout.weight": np.ones((5, 2))}
    st.save_file(t, str(tmp_path / "t.safetensors"))
    p = tmp_path / "t.safetensors"
    assert ld.infer_model(p, "gru", 2, "torch") == (3, 5, False)
    st.save_file({**t, "bias_ih_l0": np.ones(6)}, str(tmp_path / "b.safetensors"))
    assert ld.infer_model(tmp_path / "b.safetensors", "gru", 2, "torch") == (3, 5, True)
    assert _err(ld.infer_model, p, "constgate", 2, "torch") == (
        f"{p}: layout 'torch' supports cells gru and lstm, got 'constgate'")
    assert _err(ld.infer_model, p, "lstm", 2, "torch") == (
        f"{p}: key 'weight_ih_l0' has shape (6, 3), expected (8, D) for lstm with 4 gates × hidden 2")
    assert _err(ld.infer_model, p, "gru", 3, "torch") == (
        f"{p}: key 'weight_ih_l0' has shape (6, 3), expected (9, D) for gru with 3 gates × hidden 3")
    st.save_file({**t, "weight_ih_l0": np.ones(6)}, str(p))
    assert "key 'weight_ih_l0' has shape (6,), expected (6, D)" in _err(ld.infer_model, p, "gru", 2, "torch")
    st.save_file({**t, "readout.weight": np.ones((5, 3))}, str(p))
    assert _err(ld.infer_model, p, "gru", 2, "torch") == (
        f"{p}: key 'readout.weight' has shape (5, 3), expected (n_out, 2)")
    st.save_file({**t, "readout.weight": np.ones(2)}, str(p))
    assert _err(ld.infer_model, p, "gru", 2, "torch") == (
        f"{p}: key 'readout.weight' has shape (2,), expected (n_out, 2)")
    for gone in ("weight_ih_l0", "readout.weight"):
        st.save_file({k: v for k, v in t.items() if k != gone}, str(p))
        assert _err(ld.infer_model, p, "gru", 2, "torch") == (
            f"{p}: key '{gone}' missing (layout torch expects ['bias_hh_l0', 'bias_ih_l0', 'readout.bias', "
            f"'readout.weight', 'weight_hh_l0', 'weight_ih_l0']); {ld.found_keys({k: 0 for k in t if k != gone})}; "
            "is this an lwsim-layout file (--layout lwsim)?")


def test_good_files_load(files, lstm):
    d, w, _ = files
    cell, params = lstm
    assert infer_model(d / "w.safetensors", "lstm", H, "torch") == (D, NOUT, True)
    p = load_weights(d / "w.safetensors", cell, "torch")
    for k in params:
        np.testing.assert_allclose(p[k], params[k], rtol=0, atol=1e-15)
    x, y = load_data(d / "d.npz", D, NOUT)
    assert x.shape == (T, B, D) and y.shape == (T, B, NOUT)
    opt = load_optimizer(d / "o.safetensors", cell, p, "torch", "adam", {"lr": 1e-3})
    lam = 1e-3 / (np.sqrt(0.01 / (1 - 0.999 ** 5)) + 1e-8)
    np.testing.assert_allclose(opt.rates()["U_f"], lam, rtol=1e-14)
    # LSTM: the two bias buffers are summed, as the biases are
    np.testing.assert_allclose(opt.state["b_f"]["v"], 0.02, rtol=1e-14)
    # lwsim layout: the cell's own names; D, n_out and the bias read from the shapes
    np.savez(d / "lw.npz", **params)
    assert infer_model(d / "lw.npz", "lstm", H, "lwsim") == (D, NOUT, True)
    p2 = load_weights(d / "lw.npz", cell, "lwsim")
    for k in params:
        np.testing.assert_array_equal(p2[k], params[k])


# ----------------------------------------------------------------------------------------------
# load_weights
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ weights
def test_load_weights_lwsim_layout(tmp_path):
    cell = lwsim.make_cell("gru", 3, 2, 5, dtype="float32")
    w = {k: np.asfortranarray(np.full(s, 0.5)) for k, s in cell.param_shapes().items()}
    np.savez(tmp_path / "w.npz", **w)
    p = ld.load_weights(tmp_path / "w.npz", cell, "lwsim")
    assert sorted(p) == sorted(w)
    # members stored in the reverse order: the parameters still come in the cell's order
    np.savez(tmp_path / "rev.npz", **dict(reversed(list(w.items()))))
    assert list(ld.load_weights(tmp_path / "rev.npz", cell, "lwsim")) == list(cell.param_shapes())
    for k, a in p.items():
        assert a.dtype == np.float32 and a.flags.c_contiguous and a.shape == w[k].shape and (a == 0.5).all()
    w["W_z"] = np.ones((2, 4))
    np.savez(tmp_path / "bad.npz", **w)
    assert _err(ld.load_weights, tmp_path / "bad.npz", cell, "lwsim") == (
        f"{tmp_path / 'bad.npz'}: key 'W_z' has shape (2, 4), expected (2, 3) (gru (lwsim layout, hidden 2))")
    w["W_z"] = np.ones((2, 3), np.int8)
    np.savez(tmp_path / "int.npz", **w)
    assert _err(ld.load_weights, tmp_path / "int.npz", cell, "lwsim").startswith(
        f"{tmp_path / 'int.npz'}: integer/boolean weights refused: W_z (int8); quantised weights")
    w["W_z"] = np.full((2, 3), np.inf)
    np.savez(tmp_path / "inf.npz", **w)
    assert _err(ld.load_weights, tmp_path / "inf.npz", cell, "lwsim") == f"{tmp_path / 'inf.npz'}: key 'W_z' holds 6 NaN/Inf value(s)"
    with pytest.raises(LoadError, match="layout must be one of"):
        ld.load_weights(tmp_path / "w.npz", cell, "LWSIM")


def test_load_weights_torch_layout(tmp_path):
    cell = lwsim.make_cell("gru", 1, 1, 1, convention="torch")
    # torch gate order r, z, n: rows 0, 1, 2 of the (3H, ·) blocks
    t = {"weight_ih_l0": np.array([[1.0], [2.0], [3.0]]), "weight_hh_l0": np.array([[4.0], [5.0], [6.0]]),
         "bias_ih_l0": np.array([7.0, 8.0, 9.0]), "bias_hh_l0": np.array([10.0, 11.0, 12.0]),
         "readout.weight": np.array([[13.0]]), "readout.bias": np.array([14.0])}
    st.save_file(t, str(tmp_path / "t.safetensors"))
    p = ld.load_weights(tmp_path / "t.safetensors", cell)                   # torch is the default layout
    assert {k: v.tolist() for k, v in p.items()} == {k: v.tolist() for k, v in cell.params_from_torch(t).items()}
    assert p["W_out"].tolist() == [[13.0]] and p["b_out"].tolist() == [14.0]
    st.save_file({k: v for k, v in t.items() if k != "bias_hh_l0"}, str(tmp_path / "m.safetensors"))
    m = tmp_path / "m.safetensors"
    assert _err(ld.load_weights, m, cell) == (
        f"{m}: gru (torch layout, hidden 1) keys do not match: missing ['bias_hh_l0'], unexpected []; expected "
        "weight_ih_l0 (3, 1), weight_hh_l0 (3, 1), readout.weight (1, 1), bias_ih_l0 (3,), bias_hh_l0 (3,), "
        "readout.bias (1,)")
    st.save_file({**t, "readout.bias": np.array([1], np.int32)}, str(m))
    assert "integer/boolean weights refused: readout.bias (int32)" in _err(ld.load_weights, m, cell)
    st.save_file({**t, "readout.bias": np.array([np.nan])}, str(m))
    assert _err(ld.load_weights, m, cell) == f"{m}: key 'readout.bias' holds 1 NaN/Inf value(s)"


def test_rates_from_file_equal_hand_formula(figures_run):
    """λ = lr / (sqrt(v / (1 − β₂^t)) + eps) on the recurrent blocks read back from torch layout."""
    c, out, res, d = figures_run
    cell = lwsim.make_cell("gru", c["D"], c["H"], convention="torch")
    params = an.load_weights(d / "model.safetensors", cell, "torch")
    opt = an.load_optimizer(d / "opt.safetensors", cell, params, "torch", "adamw", {"lr": c["lr"]})
    t = res.optimizer.step_count
    raw = safetensors_numpy.load_file(str(d / "opt.safetensors"))
    H = c["H"]
    v_hz = raw["weight_hh_l0.exp_avg_sq"][H:2 * H]                  # torch order r, z, n
    lam = c["lr"] / (np.sqrt(v_hz / (1 - 0.999 ** t)) + 1e-8)
    np.testing.assert_allclose(opt.rates()["W_hz"], lam, rtol=1e-13)
    for k in params:
        np.testing.assert_array_equal(params[k], res.params[k])


# ----------------------------------------------------------------------------------------------
# load_optimizer: hyper-parameters from the metadata
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ optimizer state
def _hyper_loaded(tmp_path, name, meta, bufs=None):
    """The hyper-parameters of the optimizer load_optimizer builds from an lwsim-layout file whose
    metadata is ``meta`` (strings, as safetensors stores them)."""
    r, cell, params = _lw_opt(tmp_path, bufs or {"v": 1.0, "step": np.array([3])},
                              meta={"optimizer": name, **meta}, name=f"{name}.safetensors")
    return load_optimizer(r, cell, params, "lwsim").hyper


def test_hyper_from_meta(tmp_path):
    got = _hyper_loaded(tmp_path, "adam", {"step": "3", "format": "pt", "lr": "0.5", "betas": "(0.9, 0.99)",
                                           "amsgrad": "True", "eps": "1e-8", "weight_decay": "0"},
                        {"v": 1.0, "v_max": 1.0, "step": np.array([3])})
    assert got == {"lr": 0.5, "betas": (0.9, 0.99), "amsgrad": True, "eps": 1e-8, "weight_decay": 0.0}
    assert type(got["lr"]) is float and type(got["betas"][0]) is float
    assert _hyper_loaded(tmp_path, "rmsprop", {"lr": "0.5", "centered": " no ", "momentum": "0.25",
                                               "alpha": "0.75"}) == {
        "lr": 0.5, "alpha": 0.75, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.25, "centered": False}
    assert _hyper_loaded(tmp_path, "sgd", {"lr": "0.5", "nesterov": " YES ", "momentum": "0.25",
                                           "dampening": "0"}, {"step": np.array([3])}) == {
        "lr": 0.5, "momentum": 0.25, "dampening": 0.0, "weight_decay": 0.0, "nesterov": True}
    assert _hyper_loaded(tmp_path, "sgd", {"lr": "0.5", "momentum": "0.25", "dampening": "0.125"},
                         {"step": np.array([3])})["dampening"] == 0.125
    got = _hyper_loaded(tmp_path, "adam", {"lr": "1", "betas": "[0.8,0.7]", "amsgrad": "1"},
                        {"v": 1.0, "v_max": 1.0, "step": np.array([3])})
    assert (got["betas"], got["amsgrad"]) == ((0.8, 0.7), True)
    assert _hyper_loaded(tmp_path, "rmsprop", {"lr": "1", "centered": "0"})["centered"] is False
    got = _hyper_loaded(tmp_path, "adam", {"lr": "1", "betas": "0.5, 0.25 ", "amsgrad": "no"})
    assert (got["betas"], got["amsgrad"]) == ((0.5, 0.25), False)
    assert _hyper_loaded(tmp_path, "sgd", {"lr": "1", "nesterov": "yes", "momentum": "0.5"},
                         {"step": np.array([3])})["nesterov"] is True
    for meta, bad in (({"lr": "fast"}, "lr='fast' is not a valid lr"), ({"lr": "1", "betas": "a,b"},
                      "betas='a,b' is not a valid betas"),
                      # only brackets and blanks are stripped around a pair: a stray letter is refused
                      ({"lr": "1", "betas": "X0.5, 0.25X"}, "betas='X0.5, 0.25X' is not a valid betas")):
        with pytest.raises(LoadError) as e:
            _hyper_loaded(tmp_path, "adam", meta)
        assert str(e.value) == f"{tmp_path / 'adam.safetensors'}: metadata {bad}"


# ----------------------------------------------------------------------------------------------
# load_optimizer
# ----------------------------------------------------------------------------------------------


def test_load_optimizer_adam_rates_by_hand(tmp_path):
    """λ = lr / (sqrt(v / (1 − β₂^t)) + eps): v = 2, β₂ = 0.5, t = 1, eps = 0 → lr / 2."""
    p, cell, params = _lw_opt(tmp_path, {"v": 2.0, "m": 0.25, "step": np.array([1])},
                              meta={"optimizer": "Adam", "betas": "(0.9, 0.5)", "eps": "0", "lr": "0.5"})
    opt = ld.load_optimizer(p, cell, params, "lwsim")
    assert repr(opt).startswith("Adam('adam', lr=0.5, betas=(0.9, 0.5), eps=0.0,") and opt.step_count == 1
    assert all(np.allclose(r, 0.25) for r in opt.rates().values())
    assert all((st_["m"] == 0.25).all() for st_ in opt.state.values())
    # a copy of the caller's parameters
    assert all(opt.params[k] is not params[k] and (opt.params[k] == 0.5).all() for k in params)
    # name given in either case, agreeing with the metadata; lr given and equal (allclose) to the metadata's
    opt = ld.load_optimizer(p, cell, params, "lwsim", "ADAM", {"lr": 0.5 + 1e-12})
    assert opt.hyper["lr"] == 0.5 + 1e-12 and opt.hyper["betas"] == (0.9, 0.5)
    # m missing: zero (λ does not read it); the step from the metadata
    p, cell, params = _lw_opt(tmp_path, {"v": 2.0}, meta={"step": "3"}, name="nom.safetensors")
    opt = ld.load_optimizer(p, cell, params, "lwsim", "adam", {"lr": 0.5, "betas": (0.9, 0.5), "eps": 0.0})
    assert opt.step_count == 3 and all((st_["m"] == 0).all() for st_ in opt.state.values())
    # 1 − 0.5³ = 0.875: λ = 0.5 / sqrt(2 / 0.875)
    assert np.allclose(opt.rates()["W_z"], 0.5 / np.sqrt(2 / 0.875))


def test_load_optimizer_sgd_needs_no_buffer(tmp_path):
    p, cell, params = _lw_opt(tmp_path, {"step": np.array([0])})
    opt = ld.load_optimizer(p, cell, params, "lwsim", "sgd", {"lr": 0.125})
    assert opt.step_count == 0 and all(np.allclose(r, 0.125) for r in opt.rates().values())
    opt = ld.load_optimizer(p, cell, params, "lwsim", "momentum", {"lr": 0.125})
    assert all((st_["buf"] == 0).all() for st_ in opt.state.values())


def test_load_optimizer_rmsprop_centered_torch_layout(tmp_path):
    cell = lwsim.make_cell("gru", 1, 1, 1, convention="torch", bias=False)
    shapes = ld.torch_shapes("gru", 1, 1, 1, False)
    arrays = {f"{k}.square_avg": np.full(s, 5.0) for k, s in shapes.items()}
    arrays.update({f"{k}.grad_avg": np.full(s, 1.0) for k, s in shapes.items()})
    arrays.update({f"{k}.momentum_buffer": np.full(s, 0.5) for k, s in shapes.items()})
    arrays.update({f"{k}.step": np.array([4.0]) for k in shapes})
    st.save_file(arrays, str(tmp_path / "r.safetensors"),
                 metadata={"optimizer": "rmsprop", "centered": "true", "momentum": "0.5", "eps": "0", "lr": "1"})
    params = {k: np.zeros(s) for k, s in cell.param_shapes().items()}
    opt = ld.load_optimizer(tmp_path / "r.safetensors", cell, params)          # torch layout by default
    assert opt.step_count == 4 and opt.hyper["centered"] is True
    # centred: λ = lr / sqrt(v − g²) = 1 / sqrt(5 − 1) = 0.5
    assert all(np.allclose(r, 0.5) for r in opt.rates().values())
    assert all((s["buf"] == 0.5).all() and (s["g_avg"] == 1.0).all() for s in opt.state.values())
    del arrays["weight_hh_l0.grad_avg"]
    st.save_file(arrays, str(tmp_path / "r2.safetensors"),
                 metadata={"optimizer": "rmsprop", "centered": "1", "momentum": "0.5"})
    p = tmp_path / "r2.safetensors"
    msg = _err(ld.load_optimizer, p, cell, params, "torch", None, {"lr": 1.0})
    head, listed = msg.split("; expected ")
    assert head == f"{p}: optimizer rmsprop state keys do not match: missing ['weight_hh_l0.grad_avg'], unexpected []"
    # the rate buffers (square_avg, grad_avg) per parameter, in a set's order
    assert sorted(re.findall(r"[\w.]+ \(\d+, \d+\)", listed)) == sorted(
        f"{k}.{b} {s}" for k, s in (("weight_ih_l0", "(3, 1)"), ("weight_hh_l0", "(3, 1)"),
                                    ("readout.weight", "(1, 1)")) for b in ("square_avg", "grad_avg"))


def test_load_optimizer_refusals(tmp_path):
    p, cell, params = _lw_opt(tmp_path, {"v": 2.0, "step": np.array([1])}, meta={"optimizer": "adam"})
    assert _err(ld.load_optimizer, p, cell, params, "lwsim", "sgd", {"lr": 1.0}) == (
        f"{p}: metadata says optimizer 'adam', --optimizer says 'sgd'")
    assert _err(ld.load_optimizer, p, cell, params, "lwsim", "adam") == (
        f"{p}: the learning rate is unknown (λ scales with it): pass --lr or store it in the safetensors "
        "metadata ('lr')")
    q, *_ = _lw_opt(tmp_path, {"v": 2.0, "step": np.array([1])}, meta={"lr": "0.1"}, name="q.safetensors")
    assert _err(ld.load_optimizer, q, cell, params, "lwsim") == (
        f"{q}: no optimizer name; pass --optimizer (adam, adamw, rmsprop, sgd, momentum)")
    assert _err(ld.load_optimizer, q, cell, params, "lwsim", "adam", {"lr": 0.2}) == (
        f"{q}: metadata lr=0.1 disagrees with the given lr=0.2")
    assert _err(ld.load_optimizer, q, cell, params, "lwsim", "lion") == (
        f"{q}: optimizer 'lion': unknown optimizer 'lion'; valid optimizers: {', '.join(lwsim.optim.OPTIMIZERS)}")
    assert _err(ld.load_optimizer, q, cell, params, "lwsim", "sgd", {"bogus": 1}) == (
        f"{q}: optimizer 'sgd': optimizer 'sgd' got unknown hyper-parameter(s) ['bogus']; accepted: "
        "['dampening', 'lr', 'momentum', 'nesterov', 'weight_decay']")
    with pytest.raises(LoadError, match="layout must be one of"):
        ld.load_optimizer(q, cell, params, "Torch", "sgd")
    # v (the rate buffer) is required; an unknown buffer is not accepted
    r, *_ = _lw_opt(tmp_path, {"m": 1.0, "step": np.array([1])}, name="r.safetensors")
    assert "optimizer adam state keys do not match: missing ['U_g.v', 'U_r.v', 'U_z.v'" in _err(
        ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1})
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "zz": 1.0, "step": np.array([1])}, name="z.safetensors")
    assert "missing [], unexpected ['U_g.zz'" in _err(ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1})
    # the optional buffers and per-parameter steps are shape-checked when given with a shape
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "W_z.m": np.ones(3), "W_z.step": np.ones(2), "step": np.array([1])},
                    name="m.safetensors")
    assert _err(ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1}) == (
        f"{r}: key 'W_z.m' has shape (3,), expected (1, 1) (optimizer adam state)")
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "W_z.step": np.ones(2), "step": np.array([1])}, name="s.safetensors")
    assert _err(ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1}) == (
        f"{r}: step entries must hold one number each")
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "step": np.array([1], np.int64), "U_z.step": np.array([True])},
                    name="i.safetensors")
    ld.load_optimizer(r, cell, params, "lwsim", "adam", {"lr": 0.1})           # integer/bool steps are fine
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "W_z.m": np.ones((1, 1), np.int8), "step": np.array([1])},
                    name="q8.safetensors")
    assert _err(ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1}).startswith(
        f"{r}: integer/boolean optimizer buffers refused: W_z.m (int8); quantised weights")
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "W_z.m": np.array([[np.nan]]), "step": np.array([1])}, name="n.safetensors")
    assert _err(ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1}) == (
        f"{r}: key 'W_z.m' holds 1 NaN/Inf value(s)")
    # a bad hyper-parameter in the metadata is named with the file
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "step": np.array([1])}, meta={"lr": "fast"}, name="h.safetensors")
    assert _err(ld.load_optimizer, r, cell, params, "lwsim", "adam") == f"{r}: metadata lr='fast' is not a valid lr"
    # amsgrad: v_max is a rate buffer (λ reads it), so it is required like v
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "step": np.array([1])}, meta={"amsgrad": "true"}, name="a.safetensors")
    assert "keys do not match: missing ['U_g.v_max', 'U_r.v_max', 'U_z.v_max'" in _err(
        ld.load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1})
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "v_max": 4.0, "step": np.array([1])}, meta={"amsgrad": "true"},
                    name="a2.safetensors")
    opt = ld.load_optimizer(r, cell, params, "lwsim", "adam", {"lr": 0.1, "eps": 0.0, "betas": (0.9, 0.5)})
    assert np.allclose(opt.rates()["W_z"], 0.1 / np.sqrt(4.0 / 0.5))   # λ from v_max = 4, 1 − β₂ = 0.5
    # the optimizer's own refusal (parameters of another shape than the cell's) as a LoadError naming the file
    r, *_ = _lw_opt(tmp_path, {"v": 1.0, "step": np.array([1])}, name="neg.safetensors")
    msg = _err(ld.load_optimizer, r, cell, {**params, "W_z": np.ones((2, 2))}, "lwsim", "adam", {"lr": 0.1})
    assert re.fullmatch(re.escape(f"{r}: optimizer buffer W_z.") + r"[mv] has shape \(1, 1\), param has \(2, 2\)", msg)


# ----------------------------------------------------------------------------------------------
# load_optimizer: the step count
# ----------------------------------------------------------------------------------------------


def test_step(tmp_path):
    def step(bufs, meta=None):
        r, cell, params = _lw_opt(tmp_path, {"v": 1.0, **bufs}, meta=meta)
        return load_optimizer(r, cell, params, "lwsim", "adam", {"lr": 0.1}).step_count

    def err(bufs, meta=None):
        r, cell, params = _lw_opt(tmp_path, {"v": 1.0, **bufs}, meta=meta)
        return _err(load_optimizer, r, cell, params, "lwsim", "adam", {"lr": 0.1}).removeprefix(f"{r}: ")

    assert step({"step": np.array([5])}) == 5
    assert step({"W_z.step": np.array([5.0]), "b_z.step": np.array(5)}, {"step": "5"}) == 5
    assert step({}, {"step": "0"}) == 0 and type(step({}, {"step": "7"})) is int
    assert err({"step": np.array([1, 2])}) == "step entries must hold one number each"
    assert err({}, {"step": "x"}) == "metadata step='x' is not a number"
    assert err({}) == "no optimizer step count: add a 'step' array or metadata (Adam's bias correction needs it)"
    assert err({"step": np.array([5])}, {"step": "6"}) == (
        "inconsistent or invalid step counts {'step': 5.0, 'metadata step': 6.0}")
    assert err({"step": np.array([2.5])}) == "inconsistent or invalid step counts {'step': 2.5}"
    assert err({"step": np.array([-1])}) == "inconsistent or invalid step counts {'step': -1.0}"


# ----------------------------------------------------------------------------------------------
# load_data
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------ data
def test_load_data(tmp_path):
    x = np.arange(2 * 3 * 1, dtype=np.float32).reshape(2, 3, 1)            # (T, B, D) = (2, 3, 1)
    y = np.arange(2 * 3 * 2).reshape(2, 3, 2)                               # integers: cast to float64
    np.savez(tmp_path / "d.npz", x=x, y=y)
    gx, gy = ld.load_data(tmp_path / "d.npz", 1, 2)
    assert gx.dtype == np.float64 and gy.dtype == np.float64 and gx.tolist() == x.tolist() and gy.tolist() == y.tolist()
    # batch-first: the same file read as (B, T, ·) = (2, 3, ·) → time-major (3, 2, ·)
    bx, by = ld.load_data(tmp_path / "d.npz", 1, 2, batch_first=True)
    assert bx.shape == (3, 2, 1) and by.shape == (3, 2, 2) and bx.flags.c_contiguous and by.flags.c_contiguous
    assert bx[2, 1, 0] == x[1, 2, 0] and by[1, 0, 1] == y[0, 1, 1]
    p = tmp_path / "d.npz"
    assert _err(ld.load_data, p, 2, 2) == (
        f"{p}: key 'x' has shape (2, 3, 1), expected (T, B, 2) to match the weights (D = 2)")
    assert _err(ld.load_data, p, 1, 3, batch_first=True) == (
        f"{p}: key 'y' has shape (2, 3, 2), expected (B, T, 3) to match the weights (n_out = 3)")
    np.savez(tmp_path / "k.npz", x=x, z=y)
    k = tmp_path / "k.npz"
    assert _err(ld.load_data, k, 1, 2) == (
        f"{k}: keys do not match: missing ['y'], unexpected ['z']; expected x (T, B, 1) and y (T, B, 2) "
        "(time-major; --batch-first for PyTorch's batch-first arrays)")
    assert _err(ld.load_data, k, 1, 2, batch_first=True) == (
        f"{k}: keys do not match: missing ['y'], unexpected ['z']; expected x (B, T, 1) and y (B, T, 2)")
    np.savez(k, x=x, y=y, w=x)
    assert "missing [], unexpected ['w']" in _err(ld.load_data, k, 1, 2)
    np.savez(k, x=x[..., 0], y=y)
    assert _err(ld.load_data, k, 1, 2) == f"{k}: key 'x' has shape (2, 3), expected (T, B, 1) to match the weights (D = 1)"
    np.savez(k, x=x, y=y[:, :2])
    assert _err(ld.load_data, k, 1, 2) == f"{k}: x has shape (2, 3, 1) and y (2, 2, 2); their first two axes must agree"
    np.savez(k, x=x, y=y[:1])
    assert "their first two axes must agree" in _err(ld.load_data, k, 1, 2)
    np.savez(k, x=np.full((2, 3, 1), np.nan), y=y)
    assert _err(ld.load_data, k, 1, 2) == f"{k}: key 'x' holds 6 NaN/Inf value(s)"


def test_data_batch_first(files):
    d, _, _ = files
    x, y = load_data(d / "d.npz", D, NOUT)
    np.savez(d / "bf.npz", x=x.transpose(1, 0, 2), y=y.transpose(1, 0, 2))
    x2, y2 = load_data(d / "bf.npz", D, NOUT, batch_first=True)
    np.testing.assert_array_equal(x2, x)
    np.testing.assert_array_equal(y2, y)
