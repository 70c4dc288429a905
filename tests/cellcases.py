"""Shared cases for the cell tests: every cell × the options that matter, random inputs."""
import numpy as np

import lwsim

# (name, options) — LN on/off, bias on/off, readout every/last, both GRU conventions.
CASES = []
for _name in ("rnn", "constgate", "sharedgate", "diaggate", "gru", "lstm"):
    for _ln in (False, True):
        for _bias in (True, False):
            _opts = {"layernorm": _ln, "bias": _bias}
            if _name == "constgate":
                _opts["s"] = 0.3
            CASES.append((_name, _opts))
CASES.append(("gru", {"convention": "torch", "bias": True}))
CASES.append(("gru", {"convention": "torch", "bias": False}))
CASES += [(n, {"readout": "last", "layernorm": True}) for n in ("diaggate", "gru", "lstm")]
CASES.append(("gru", {"convention": "torch", "readout": "last"}))


def case_id(case):
    name, opts = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in sorted(opts.items()))


def random_params(cell, seed, scale=0.5):
    """Every entry random (biases and LN γ, β too) so that each term of each formula is exercised."""
    rng = np.random.default_rng(seed)
    p = {}
    for k, shape in cell.param_shapes().items():
        v = scale * rng.standard_normal(shape)
        if k == "ln_gamma":
            v = 1.0 + v
        p[k] = v.astype(cell.dtype)
    return p


def random_data(cell, T, B, seed):
    rng = np.random.default_rng(seed + 1000)
    x = rng.standard_normal((T, B, cell.n_in))
    y = rng.standard_normal((T, B, cell.n_out))
    return x.astype(cell.dtype), y.astype(cell.dtype)


def make(case, n_in=2, n_hidden=4, n_out=2, **extra):
    name, opts = case
    return lwsim.make_cell(name, n_in=n_in, n_hidden=n_hidden, n_out=n_out, **{**opts, **extra})


def rel_err(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))
