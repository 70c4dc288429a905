"""Safe loading of a user's weights, optimizer state and diagnostic data (docs/analyze.md).

Only two containers are read, and neither can run code:

- ``.safetensors`` (the ``safetensors`` package's NumPy API), header parsed first;
- ``.npz`` read with ``allow_pickle=False``; every member's ``.npy`` header is read before any
  data, so a pickled object array is refused by name, never unpickled.

PyTorch ``.pt``/``.pth`` (and other pickle) files are refused: loading them runs arbitrary code.
Every key and shape is checked against the cell from the headers alone, before the arrays are
read, so a wrong or oversized file fails before anything large is allocated.

Weights, layout ``torch``: ``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``
(nn.GRU / nn.LSTM, one layer), ``readout.weight``, ``readout.bias`` (nn.Linear); layout ``lwsim``:
the cell's own parameter names (docs/conventions.md).

Optimizer state: one array per parameter and buffer, key ``"<param>.<buffer>"``; torch buffer
names (``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``, ``square_avg``, ``grad_avg``,
``momentum_buffer``; per-parameter ``<param>.step`` accepted) or lwsim's (``m``, ``v``, ``v_max``,
``g_avg``, ``buf``), a global ``step`` (array or safetensors metadata) and optionally the
hyper-parameters in the safetensors metadata (``optimizer``, ``lr``, ``betas``, ``eps``, …).
Torch buffers are mapped to lwsim's names with :func:`lwsim.cells.torch_io.params_from_torch`
(LSTM: the two bias buffers summed, as for the biases themselves).
"""
from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np

from .. import optim
from ..cells.registry import KINDS

REFUSED = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib", ".tar")
_ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "I64": "int64", "I32": "int32",
              "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}
_MAX_HEADER = 100 * 2 ** 20           # a safetensors header beyond this is not a weights file
LAYOUTS = ("torch", "lwsim")                # key names: nn.GRU/nn.LSTM's, or lwsim's parameters
_ADAM_T = {"m": "exp_avg", "v": "exp_avg_sq", "v_max": "max_exp_avg_sq"}
_SGD_T = {"buf": "momentum_buffer"}
TORCH_BUFFERS = {"adam": _ADAM_T, "adamw": _ADAM_T, "sgd": _SGD_T, "momentum": _SGD_T,
                 "rmsprop": {"v": "square_avg", "g_avg": "grad_avg", "buf": "momentum_buffer"}}
_HYPER_TYPES = {"lr": float, "eps": float, "weight_decay": float, "momentum": float, "alpha": float,
                "dampening": float, "betas": "pair", "amsgrad": "bool", "centered": "bool",
                "nesterov": "bool"}


class LoadError(ValueError):
    """A user file is unsafe, malformed or does not match the cell (the message names it).

    See docs/analyze.md.
    """


# ----------------------------------------------------------------------------- headers
def _kind(path) -> str:
    p = Path(path)
    ext = p.suffix.lower()
    if ext in REFUSED:
        raise LoadError(f"{p}: PyTorch/pickle files ({ext}) are refused: loading them runs arbitrary "
                        "code. Save the state dict with safetensors instead, e.g. "
                        "safetensors.torch.save_file(model.state_dict(), 'model.safetensors') "
                        "(see docs/analyze.md)")
    if ext not in (".safetensors", ".npz"):
        raise LoadError(f"{p}: unknown file type {ext!r}; expected .safetensors or .npz")
    if not p.is_file():
        raise LoadError(f"{p}: no such file")
    return ext[1:]


def _safetensors_header(path):
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise LoadError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        n = int.from_bytes(head, "little")
        if n > min(size - 8, _MAX_HEADER):
            raise LoadError(f"{path}: not a safetensors file (header length {n} for a {size}-byte file)")
        try:
            hdr = json.loads(fh.read(n))
        except ValueError as exc:
            raise LoadError(f"{path}: not a safetensors file (header is not JSON: {exc})") from None
    if not isinstance(hdr, dict):
        raise LoadError(f"{path}: malformed safetensors header: a JSON {type(hdr).__name__} instead of "
                        "an object {key: {dtype, shape, data_offsets}}")
    meta = hdr.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise LoadError(f"{path}: malformed safetensors header: __metadata__ must map names to strings")
    specs, end = {}, 0
    for key, v in hdr.items():
        shape, (lo, hi) = _header_entry(path, key, v)
        dt = _ST_DTYPES.get(v["dtype"]) if isinstance(v["dtype"], str) else None
        if dt is None:
            raise LoadError(f"{path}: key {key!r} has dtype {v.get('dtype')!r}; lwsim reads "
                            f"{sorted(_ST_DTYPES)} (convert bfloat16 to float32 before saving)")
        if hi - lo != math.prod(shape) * np.dtype(dt).itemsize:
            raise LoadError(f"{path}: key {key!r} declares shape {shape} {dt} but {hi - lo} bytes")
        specs[key] = (shape, np.dtype(dt))
        end = max(end, hi)
    if size != 8 + n + end:
        raise LoadError(f"{path}: file is {size} bytes, its header describes {8 + n + end}")
    return specs, dict(meta)


def _header_entry(path, key, v):
    """(shape, (begin, end)) of one safetensors header entry, or LoadError naming what is wrong."""
    if not isinstance(v, dict):
        raise LoadError(f"{path}: malformed safetensors header: key {key!r} is a JSON "
                        f"{type(v).__name__}, expected an object with dtype, shape, data_offsets")
    missing = [f for f in ("dtype", "shape", "data_offsets") if f not in v]
    if missing:
        raise LoadError(f"{path}: malformed safetensors header: key {key!r} has no {', '.join(missing)}")

    def ints(field, n=None):
        val = v[field]
        ok = isinstance(val, list) and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0
                                           for i in val) and (n is None or len(val) == n)
        if not ok:
            want = f"{n} non-negative integers" if n else "a list of non-negative integers"
            raise LoadError(f"{path}: malformed safetensors header: key {key!r} has {field} {val!r}, "
                            f"expected {want}")
        return tuple(val)
    shape, offsets = ints("shape"), ints("data_offsets", 2)
    if offsets[1] < offsets[0]:
        raise LoadError(f"{path}: malformed safetensors header: key {key!r} has data_offsets "
                        f"{list(offsets)} (end before begin)")
    return shape, offsets


def _npz_header(path):
    specs = {}
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise LoadError(f"{path}: not an .npz file (not a zip archive)") from None
    with zf:
        for info in zf.infolist():
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            with zf.open(info) as fh:
                try:
                    version = np.lib.format.read_magic(fh)
                    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read(fh)
                except ValueError as exc:
                    raise LoadError(f"{path}: key {key!r} is not a .npy array ({exc})") from None
            if dtype.hasobject:
                raise LoadError(f"{path}: key {key!r} is a pickled object array (dtype {dtype}); "
                                "refused, lwsim never unpickles. Save plain numeric arrays")
            if dtype.kind not in "fiub":
                raise LoadError(f"{path}: key {key!r} has dtype {dtype}; expected a real numeric array")
            if math.prod(shape) * dtype.itemsize > info.file_size:
                raise LoadError(f"{path}: key {key!r} declares shape {shape} {dtype}, larger than "
                                f"its {info.file_size}-byte member")
            specs[key] = (tuple(shape), dtype)
    return specs, {}


def read_header(path):
    """({key: (shape, dtype)}, metadata) from the file's headers only (no array data read).

    See docs/analyze.md.
    """
    kind = _kind(path)
    return _safetensors_header(path) if kind == "safetensors" else _npz_header(path)


def read_arrays(path, keys=None) -> dict:
    """The arrays of ``path`` (all, or ``keys``), after :func:`read_header` has vetted it.

    See docs/analyze.md.
    """
    kind = _kind(path)
    if kind == "safetensors":
        from safetensors.numpy import load_file
        out = load_file(str(path))
    else:
        with np.load(path, allow_pickle=False) as z:
            out = {k: z[k] for k in (z.files if keys is None else keys)}
    return out if keys is None else {k: out[k] for k in keys}


def check_keys(path, specs, expected, optional=None, what="") -> None:
    """Exactly the ``expected`` keys (plus ``optional``) with their shapes, else LoadError.

    See docs/analyze.md.
    """
    optional = optional or {}
    missing = sorted(set(expected) - set(specs))
    extra = sorted(set(specs) - set(expected) - set(optional))
    if missing or extra:
        exp = ", ".join(f"{k} {tuple(s)}" for k, s in expected.items())
        raise LoadError(f"{path}: {what}keys do not match: missing {missing}, unexpected {extra}; "
                        f"expected {exp}")
    for k, shape in {**expected, **{k: v for k, v in optional.items() if k in specs}}.items():
        if shape is not None and tuple(specs[k][0]) != tuple(shape):
            raise LoadError(f"{path}: key {k!r} has shape {tuple(specs[k][0])}, expected {tuple(shape)}"
                            + (f" ({what.strip()})" if what else ""))


def check_float(path, specs, keys, what="weights") -> None:
    """Refuse integer or boolean arrays among ``keys``: quantised weights (int8, uint8, …) carry a
    scale and zero point this file does not give, so reading their integers as floats would
    analyse another model. Dequantise to float32/float64 before saving.

    See docs/analyze.md.
    """
    bad = [f"{k} ({specs[k][1]})" for k in keys if k in specs and specs[k][1].kind != "f"]
    if bad:
        raise LoadError(f"{path}: integer/boolean {what} refused: {', '.join(bad)}; quantised weights "
                        "must be dequantised to float32 or float64 before saving (lwsim does not know "
                        "their scale and zero point)")


def check_layout(layout) -> str:
    """``layout`` is "torch" or "lwsim" (case-sensitive), else LoadError listing both.

    See docs/analyze.md.
    """
    if layout not in LAYOUTS:
        raise LoadError(f"layout must be one of {', '.join(map(repr, LAYOUTS))} (case-sensitive), "
                        f"got {layout!r}")
    return layout


def _finite(path, arrays):
    for k, a in arrays.items():
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            bad = int(np.size(a) - np.isfinite(a).sum())
            raise LoadError(f"{path}: key {k!r} holds {bad} NaN/Inf value(s)")
    return arrays


# ----------------------------------------------------------------------------- weights
def found_keys(specs, show=12) -> str:
    """The keys a file holds, for a layout mismatch: 'found [...]' (the first ``show``), plus the
    prefixes to strip when every key carries one (e.g. a module's ``rnn.``/``fc.``).

    See docs/analyze.md.
    """
    keys = sorted(specs)
    listed = ", ".join(map(repr, keys[:show])) + (f", … ({len(keys)} keys)" if len(keys) > show else "")
    out = f"found [{listed}]"
    prefixes = sorted({k.split(".", 1)[0] + "." for k in keys if "." in k} - {"readout."})
    if prefixes:
        out += (f" with module prefixes {', '.join(map(repr, prefixes))}: layout torch wants the "
                "nn.GRU/nn.LSTM's own names (strip e.g. 'rnn.') and 'readout.' for the nn.Linear "
                "(rename e.g. 'fc.'), docs/analyze.md")
    return out


def torch_gates(cell_name):
    """G, the gate blocks of the cell's torch.nn state dict (its kind's ``torch_gates``), or None
    when the cell has no torch layout (docs/cells.md §1.10)."""
    kind = KINDS.get(cell_name)
    return None if kind is None or kind.torch_gates is None else len(kind.torch_gates)


def _torch_cells():
    return " and ".join(n for n, k in KINDS.items() if k.torch_gates is not None)


def torch_shapes(cell_name, H, D, n_out, bias) -> dict:
    """Expected PyTorch state-dict shapes of nn.GRU/nn.LSTM (one layer) plus an nn.Linear read-out.

    See docs/analyze.md.
    """
    G = torch_gates(cell_name)
    if G is None:
        raise LoadError(f"layout 'torch' supports cells {_torch_cells()} (nn.GRU / nn.LSTM), got {cell_name!r}")
    out = {"weight_ih_l0": (G * H, D), "weight_hh_l0": (G * H, H), "readout.weight": (n_out, H)}
    if bias:
        out.update({"bias_ih_l0": (G * H,), "bias_hh_l0": (G * H,), "readout.bias": (n_out,)})
    return out


def infer_model(path, cell_name, H, layout, **options):
    """(D, n_out, bias) of the model in ``path`` from its headers, checking the hidden size H.

    See docs/analyze.md.
    """
    import lwsim
    check_layout(layout)
    specs, _ = read_header(path)
    if layout == "torch":
        G = torch_gates(cell_name)
        if G is None:
            raise LoadError(f"{path}: layout 'torch' supports cells {_torch_cells()}, got {cell_name!r}")
        for k in ("weight_ih_l0", "readout.weight"):
            if k not in specs:
                raise LoadError(f"{path}: key {k!r} missing (layout torch expects "
                                f"{sorted(torch_shapes(cell_name, H, 'D', 'n_out', True))}); "
                                f"{found_keys(specs)}; is this an lwsim-layout file (--layout lwsim)?")
        s_ih, s_out = specs["weight_ih_l0"][0], specs["readout.weight"][0]
        if len(s_ih) != 2 or s_ih[0] != G * H:
            raise LoadError(f"{path}: key 'weight_ih_l0' has shape {s_ih}, expected ({G * H}, D) "
                            f"for {cell_name} with {G} gates × hidden {H}")
        if len(s_out) != 2 or s_out[1] != H:
            raise LoadError(f"{path}: key 'readout.weight' has shape {s_out}, expected (n_out, {H})")
        return int(s_ih[1]), int(s_out[0]), "bias_ih_l0" in specs
    # Probe cells with n_in, n_out = 1 and 2 tell which parameter axis carries D and n_out.
    bias = "b_out" in specs
    p1 = lwsim.make_cell(cell_name, 1, H, 1, bias=bias, **options).param_shapes()
    p2 = lwsim.make_cell(cell_name, 2, H, 2, bias=bias, **options).param_shapes()
    D = n_out = None
    for k in p1:
        if k not in specs or p1[k] == p2[k] or len(specs[k][0]) != len(p1[k]):
            continue
        axis = next(i for i, (a, b) in enumerate(zip(p1[k], p2[k])) if a != b)
        if k == "W_out":
            n_out = int(specs[k][0][0])
        elif D is None:
            D = int(specs[k][0][axis])
    if D is None or n_out is None:
        missing = [k for k in p1 if k not in specs]
        raise LoadError(f"{path}: keys do not match cell {cell_name!r} (layout lwsim): missing "
                        f"{missing}; {found_keys(specs)}; is this a torch-layout file (--layout torch)?")
    return D, n_out, bias


def load_weights(path, cell, layout="torch") -> dict:
    """lwsim parameters of ``cell`` from ``path`` (keys and shapes checked before reading).

    See docs/analyze.md.
    """
    check_layout(layout)
    specs, _ = read_header(path)
    if layout == "torch":
        want = torch_shapes(cell.name, cell.n_hidden, cell.n_in, cell.n_out, cell.bias)
        check_keys(path, specs, want, what=f"{cell.name} (torch layout, hidden {cell.n_hidden}) ")
        check_float(path, specs, want)
        arrays = _finite(path, read_arrays(path, list(want)))
        return cell.params_from_torch(arrays)
    want = cell.param_shapes()
    check_keys(path, specs, want, what=f"{cell.name} (lwsim layout, hidden {cell.n_hidden}) ")
    check_float(path, specs, want)
    arrays = _finite(path, read_arrays(path, list(want)))
    return {k: np.ascontiguousarray(a, dtype=cell.dtype) for k, a in arrays.items()}


# ----------------------------------------------------------------------------- optimizer state
def _hyper_from_meta(path, meta):
    out = {}
    for k, v in meta.items():
        if k in ("optimizer", "step"):
            continue
        t = _HYPER_TYPES.get(k)
        if t is None:
            continue                                  # free-form metadata (e.g. "format": "pt")
        try:
            if t == "pair":
                out[k] = tuple(float(s) for s in v.strip("()[] ").split(","))
            elif t == "bool":
                out[k] = v.strip().lower() in ("1", "true", "yes")
            else:
                out[k] = t(v)
        except ValueError:
            raise LoadError(f"{path}: metadata {k}={v!r} is not a valid {k}") from None
    return out


def _active_buffers(name, hyper):
    """lwsim buffer names of optimizer ``name`` with ``hyper`` (what load_state_dict wants)."""
    probe = optim.make(name, {"p": np.zeros(1)}, **hyper)
    return tuple(probe.state["p"])


def load_optimizer(path, cell, params, layout="torch", name=None, hyper=None):
    """An lwsim optimizer over a copy of ``params`` holding the state in ``path``.

    name / hyper: from the caller (CLI flags) or the safetensors metadata; when both give a value
    they must agree. Buffers λ does not read (Adam's m, momentum buffers) default to zero.

    See docs/analyze.md.
    """
    check_layout(layout)
    specs, meta = read_header(path)
    hyper = dict(hyper or {})
    meta_name = meta.get("optimizer")
    if name is None:
        name = meta_name
    elif meta_name is not None and meta_name.lower() != name.lower():
        raise LoadError(f"{path}: metadata says optimizer {meta_name!r}, --optimizer says {name!r}")
    if name is None:
        raise LoadError(f"{path}: no optimizer name; pass --optimizer (adam, adamw, rmsprop, sgd, momentum)")
    name = name.lower()
    for k, v in _hyper_from_meta(path, meta).items():
        if k in hyper and not np.allclose(hyper[k], v):
            raise LoadError(f"{path}: metadata {k}={v!r} disagrees with the given {k}={hyper[k]!r}")
        hyper.setdefault(k, v)
    if "lr" not in hyper:
        raise LoadError(f"{path}: the learning rate is unknown (λ scales with it): pass --lr "
                        "or store it in the safetensors metadata ('lr')")
    try:
        active = _active_buffers(name, hyper)
    except (TypeError, ValueError) as exc:
        raise LoadError(f"{path}: optimizer {name!r}: {exc}") from None
    rate_buffers = {"v", "v_max", "g_avg"} & set(active)
    if layout == "torch":
        names = torch_shapes(cell.name, cell.n_hidden, cell.n_in, cell.n_out, cell.bias)
        buf_name = {b: TORCH_BUFFERS[name][b] for b in active}
    else:
        names = cell.param_shapes()
        buf_name = {b: b for b in active}
    expected = {f"{k}.{buf_name[b]}": s for k, s in names.items() for b in rate_buffers}
    optional = {f"{k}.{buf_name[b]}": s for k, s in names.items() for b in set(active) - rate_buffers}
    optional.update({f"{k}.step": None for k in names}, step=None)
    check_keys(path, specs, expected, optional, what=f"optimizer {name} state ")
    check_float(path, specs, [k for k in specs if k != "step" and not k.endswith(".step")],
                what="optimizer buffers")
    arrays = _finite(path, read_arrays(path, [k for k in specs]))
    step = _step(path, arrays, meta, names)
    state_t = {b: {k: arrays.get(f"{k}.{buf_name[b]}", np.zeros(s)) for k, s in names.items()}
               for b in active}
    if layout == "torch":
        state = {b: cell.params_from_torch(st) for b, st in state_t.items()}
    else:
        state = state_t
    p = {k: np.array(v, copy=True) for k, v in params.items()}
    opt = optim.make(name, p, **hyper)
    sd = {"name": name, "hyper": opt.hyper, "step": step,
          "state": {k: {b: state[b][k] for b in active} for k in p}}
    try:
        opt.load_state_dict(sd)
    except (KeyError, ValueError) as exc:
        raise LoadError(f"{path}: {exc}") from None
    return opt


def _step(path, arrays, meta, names):
    steps = {k: arrays[k] for k in arrays if k == "step" or k.endswith(".step")}
    vals = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in steps.items() if np.size(v) == 1}
    if len(vals) != len(steps):
        raise LoadError(f"{path}: step entries must hold one number each")
    if "step" in meta:
        try:
            vals["metadata step"] = float(meta["step"])
        except ValueError:
            raise LoadError(f"{path}: metadata step={meta['step']!r} is not a number") from None
    if not vals:
        raise LoadError(f"{path}: no optimizer step count: add a 'step' array or metadata "
                        "(Adam's bias correction needs it)")
    uniq = set(vals.values())
    if len(uniq) != 1 or not float(next(iter(uniq))).is_integer() or next(iter(uniq)) < 0:
        raise LoadError(f"{path}: inconsistent or invalid step counts {vals}")
    return int(next(iter(uniq)))


# ----------------------------------------------------------------------------- data
def load_data(path, n_in, n_out, batch_first=False):
    """(x, y) time-major, x (T, B, n_in), y (T, B, n_out), checked from the headers first.

    See docs/analyze.md.
    """
    specs, _ = read_header(path)
    order = "(B, T, {})" if batch_first else "(T, B, {})"
    want = {"x": order.format(n_in), "y": order.format(n_out)}
    missing = sorted(set(want) - set(specs))
    extra = sorted(set(specs) - set(want))
    if missing or extra:
        raise LoadError(f"{path}: keys do not match: missing {missing}, unexpected {extra}; expected "
                        f"x {want['x']} and y {want['y']}" + ("" if batch_first else " (time-major; "
                        "--batch-first for PyTorch's batch-first arrays)"))
    sx, sy = specs["x"][0], specs["y"][0]
    for k, s, last in (("x", sx, n_in), ("y", sy, n_out)):
        if len(s) != 3 or s[2] != last:
            raise LoadError(f"{path}: key {k!r} has shape {s}, expected {want[k]} to match the weights "
                            f"({'D' if k == 'x' else 'n_out'} = {last})")
    if sx[:2] != sy[:2]:
        raise LoadError(f"{path}: x has shape {sx} and y {sy}; their first two axes must agree")
    arrays = _finite(path, read_arrays(path, ["x", "y"]))
    x, y = (np.asarray(arrays[k], dtype=np.float64) for k in ("x", "y"))
    if batch_first:
        x, y = x.transpose(1, 0, 2), y.transpose(1, 0, 2)
    return np.ascontiguousarray(x), np.ascontiguousarray(y)
