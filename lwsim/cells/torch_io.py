"""PyTorch state-dict layouts ↔ lwsim parameters (docs/cells.md §1.9), without importing torch.

torch.nn.GRU stacks its gates as (r, z, n), torch.nn.LSTM as (i, f, g, o), each block H rows:
weight_ih_l0 (G·H, D), weight_hh_l0 (G·H, H), bias_ih_l0 and bias_hh_l0 (G·H).
"""
from __future__ import annotations

import numpy as np

from .._validate import as_real_array

_READOUT = {"readout.weight": "W_out", "readout.bias": "b_out"}


def _gate_order(cell):
    order = cell.kind.torch_gates              # None: no torch.nn counterpart (docs/cells.md §1.10)
    if order is not None and cell.convention != "cho":     # a cho-convention GRU is not nn.GRU
        return order
    raise ValueError("params_from_torch supports gru (convention='torch') and lstm only, "
                     f"got {cell!r}")


def params_from_torch(cell, state_dict):
    """lwsim parameters of ``cell`` from a PyTorch nn.GRU/nn.LSTM state dict.

    See docs/cells.md §1.9.
    """
    order = _gate_order(cell)
    if cell.layernorm:
        raise ValueError("torch.nn.GRU/LSTM have no LayerNorm: build the cell with layernorm=False")
    if not hasattr(state_dict, "keys"):
        raise TypeError("state_dict must be a mapping of torch key names to arrays")
    H, D, G = cell.n_hidden, cell.n_in, len(order)
    want = {"weight_ih_l0": (G * H, D), "weight_hh_l0": (G * H, H)}
    if cell.bias:
        want.update({"bias_ih_l0": (G * H,), "bias_hh_l0": (G * H,)})
    allowed = set(want) | set(_READOUT)
    extra = sorted(set(state_dict) - allowed)
    missing = sorted(set(want) - set(state_dict))
    if extra or missing:
        raise ValueError(f"state_dict keys: missing {missing}, unexpected {extra} "
                         f"(expected {sorted(want)} and optional readout.weight/readout.bias)")
    t = {k: as_real_array(f"state_dict[{k!r}]", state_dict[k], cell.dtype, shape=v)
         for k, v in want.items()}
    blocks = lambda a: {g: a[j * H:(j + 1) * H] for j, g in enumerate(order)}   # noqa: E731
    w_ih, w_hh = blocks(t["weight_ih_l0"]), blocks(t["weight_hh_l0"])
    p = {}
    if cell.kind.family == "gru":          # nn.GRU keys map one to one (both biases kept)
        for g in order:
            p[f"W_i{g}"], p[f"W_h{g}"] = w_ih[g], w_hh[g]
        if cell.bias:
            b_ih, b_hh = blocks(t["bias_ih_l0"]), blocks(t["bias_hh_l0"])
            for g in order:
                p[f"b_i{g}"], p[f"b_h{g}"] = b_ih[g], b_hh[g]
    else:
        for g in order:
            p[f"W_{g}"], p[f"U_{g}"] = w_ih[g], w_hh[g]
        if cell.bias:
            b_ih, b_hh = blocks(t["bias_ih_l0"]), blocks(t["bias_hh_l0"])
            for g in order:
                p[f"b_{g}"] = b_ih[g] + b_hh[g]
    shapes = cell.param_shapes()
    # Readout: taken when given, else initialised like the cell's default (explicitly zero here).
    for tk, k in _READOUT.items():
        if k not in shapes:
            continue
        if tk in state_dict:
            p[k] = as_real_array(f"state_dict[{tk!r}]", state_dict[tk], cell.dtype, shape=shapes[k])
        else:
            p[k] = np.zeros(shapes[k], dtype=cell.dtype)
    return {k: np.ascontiguousarray(v) for k, v in p.items()}


def params_to_torch(cell, params):
    """Inverse layout; LSTM biases go to bias_ih_l0 with bias_hh_l0 = 0 (only the sum matters).

    See docs/cells.md §1.9.
    """
    order = _gate_order(cell)
    out = {}
    if cell.kind.family == "gru":          # nn.GRU keys map one to one (both biases kept)
        out["weight_ih_l0"] = np.concatenate([params[f"W_i{g}"] for g in order])
        out["weight_hh_l0"] = np.concatenate([params[f"W_h{g}"] for g in order])
        if cell.bias:
            out["bias_ih_l0"] = np.concatenate([params[f"b_i{g}"] for g in order])
            out["bias_hh_l0"] = np.concatenate([params[f"b_h{g}"] for g in order])
    else:
        out["weight_ih_l0"] = np.concatenate([params[f"W_{g}"] for g in order])
        out["weight_hh_l0"] = np.concatenate([params[f"U_{g}"] for g in order])
        if cell.bias:
            out["bias_ih_l0"] = np.concatenate([params[f"b_{g}"] for g in order])
            out["bias_hh_l0"] = np.zeros_like(out["bias_ih_l0"])
    out["readout.weight"] = params["W_out"]
    if cell.bias:
        out["readout.bias"] = params["b_out"]
    return out
