"""lwsim.analyze: every bad input gets a clear error naming the file, the key and the shape."""
import pickle

import numpy as np
import pytest

import lwsim
from lwsim.analyze import LoadError, analyze, load_data, load_optimizer, load_weights
from lwsim.analyze.__main__ import main
from lwsim.analyze.load import infer_model, read_header

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


def test_data_batch_first(files):
    d, _, _ = files
    x, y = load_data(d / "d.npz", D, NOUT)
    np.savez(d / "bf.npz", x=x.transpose(1, 0, 2), y=y.transpose(1, 0, 2))
    x2, y2 = load_data(d / "bf.npz", D, NOUT, batch_first=True)
    np.testing.assert_array_equal(x2, x)
    np.testing.assert_array_equal(y2, y)


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


def test_too_few_sequences(lstm):
    cell, params = lstm
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match=r"x has 10 sequences; the tail fit needs at least 20"):
        analyze(cell, params, rng.standard_normal((T, 10, D)), np.zeros((T, 10, NOUT)), progress=False)


def test_cli_reports_error_and_warning(files, tmp_path, capsys):
    d, _, _ = files
    rc = main(["--cell", "lstm", "--hidden", "8", "--weights", str(d / "w.safetensors"),
               "--data", str(d / "d.npz"), "--out", str(tmp_path / "r"), "--no-progress"])
    assert rc == 2
    assert "w.safetensors: key 'weight_ih_l0' has shape (16, 3)" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="only 24 diagnostic sequences"):
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "w.safetensors"),
                   "--optimizer-state", str(d / "o.safetensors"), "--optimizer", "adam", "--lr", "1e-3",
                   "--data", str(d / "d.npz"), "--out", str(tmp_path / "r"), "--no-progress",
                   "--backend", "numpy", "--lags", "4"])
    assert rc == 0
    assert "**no**" in (tmp_path / "r" / "report.md").read_text()


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


def test_cli_console_says_what_it_assumed(files, tmp_path, capsys):
    """Layout, T and B read, λ = 1 without an optimizer, an extrapolated budget, the batch-first
    hint of the small-B warning: all on the console (issue 33 item 4)."""
    d, _, _ = files
    with pytest.warns(UserWarning) as rec:
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "w.safetensors"),
                   "--data", str(d / "d.npz"), "--out", str(tmp_path / "r"), "--no-progress",
                   "--backend", "numpy", "--lags", "4", "--n-grid", "10,100000"])
    assert rc == 0
    out = capsys.readouterr().out
    assert f"as layout torch: lstm, D = {D}, H = {H}, n_out = {NOUT}, with bias" in out
    assert f"d.npz: T = {T} steps, B = {B} sequences, from time-major (T, B, ·) arrays " \
           "(pass --batch-first if they are (B, T, ·))" in out
    assert "no optimizer given (--optimizer, --optimizer-state): assuming rates λ = 1" in out
    texts = [str(w.message) for w in rec]
    assert any(f"T = {T} steps and B = {B} sequences: if the arrays are batch-first (B, T, ·), "
               "pass --batch-first" in t for t in texts)
    assert any(f"budgets up to N = 100000 exceed the {B} available sequences; Ĥ_N at those N is "
               "extrapolated" in t for t in texts)
    report = (tmp_path / "r" / "report.md").read_text()
    assert "extrapolated" in report
    # within the sequences, with an optimizer and batch-first data: no such lines
    np.savez(d / "bf.npz", **{k: np.load(d / "d.npz")[k].transpose(1, 0, 2) for k in ("x", "y")})
    with pytest.warns(UserWarning) as rec:
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "w.safetensors"),
                   "--data", str(d / "bf.npz"), "--batch-first", "--optimizer", "sgd", "--lr", "0.1",
                   "--out", str(tmp_path / "r2"), "--no-progress", "--backend", "numpy", "--lags", "4",
                   "--n-grid", "10,24"])
    assert rc == 0
    out = capsys.readouterr().out
    assert f"T = {T} steps, B = {B} sequences, from batch-first (B, T, ·) arrays (--batch-first)" in out
    assert "no optimizer given" not in out
    assert not any("extrapolated" in str(w.message) for w in rec)
