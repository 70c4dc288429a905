"""The public cell object (docs/cells.md §1.4–1.9): options, parameters, initialisation, backends.

``lwsim.make_cell(name, ...)`` returns a :class:`Cell`; its methods check their input and
dispatch to a backend: "numpy" (the reference, :mod:`lwsim.reference`), "numba" (fused CPU
kernels, :mod:`lwsim.backends.numba`) or "cupy" (the reference on the GPU).
"""
from __future__ import annotations

import zlib

import numpy as np

from .. import reference
from .._validate import as_real_array, check_choice, check_int, check_real
from .registry import KINDS

CELL_NAMES = tuple(KINDS)               # the built-in cells; registry.cell_names() adds registered ones
BACKENDS = ("numpy", "numba", "cupy")
SCHEMES = ("paper_a", "torch", "normal")
OPTIONS = ("layernorm", "bias", "readout", "dtype", "s", "convention")   # make_cell's keywords


def _rng(seed, name):
    # One independent stream per parameter name: adding a parameter never shifts the others.
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode())]))


def _orthogonal(rng, shape):
    """(Semi-)orthogonal matrix: QR of a Gaussian matrix with the sign of R's diagonal fixed."""
    rows, cols = shape
    a = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    return q if rows >= cols else q.T


class Cell:
    """One recurrent cell with its options (docs/cells.md §1.4). Build with :func:`make_cell`."""

    def __init__(self, name, n_in, n_hidden, n_out=1, *, layernorm=False, bias=True,
                 readout="every", dtype="float64", s=None, convention=None):
        self.name = check_choice("name", name, KINDS)
        self.kind = kind = KINDS[name]
        self.n_in = check_int("n_in", n_in, 1)
        self.n_hidden = check_int("n_hidden", n_hidden, 1)
        self.n_out = check_int("n_out", n_out, 1)
        if not isinstance(layernorm, bool) or not isinstance(bias, bool):
            raise TypeError("layernorm and bias must be bools")
        self.layernorm, self.bias = layernorm, bias
        self.readout = check_choice("readout", readout, ("every", "last"))
        self.dtype = _parse_dtype(dtype)
        # an option that does not apply to this cell is an error, never silently ignored
        for opt, value in (("s", s), ("convention", convention)):
            if value is not None and opt not in kind.options:
                owners = " or ".join(k.name for k in KINDS.values() if opt in k.options)
                raise ValueError(f"{opt}={value!r} applies only to the {owners} cell, not to {name!r}; "
                                 f"drop it")
        self.s = check_real("s", 0.05 if s is None else s, 0.0, 1.0, lo_open=True) if "s" in kind.options else None
        self.convention = (check_choice("convention", "cho" if convention is None else convention, ("cho", "torch"))
                           if "convention" in kind.options else None)
        if self.convention == "torch" and layernorm:
            raise ValueError("layernorm is not available for gru convention='torch' (torch.nn.GRU has none)")

    # ------------------------------------------------------------------ description
    def __repr__(self):
        opts = [f"n_in={self.n_in}", f"n_hidden={self.n_hidden}", f"n_out={self.n_out}",
                f"layernorm={self.layernorm}", f"bias={self.bias}", f"readout={self.readout!r}",
                f"dtype={self.dtype.name!r}"]
        if self.s is not None:
            opts.append(f"s={self.s}")
        if self.convention is not None:
            opts.append(f"convention={self.convention!r}")
        return f"Cell({self.name!r}, {', '.join(opts)})"

    def with_dtype(self, dtype):
        """The same cell computing in ``dtype`` ("float32"/"float64"): e.g. train in float32 as
        PyTorch does, then run the diagnostics in float64 on the cast weights (docs/cells.md §1.9)."""
        return Cell(self.name, self.n_in, self.n_hidden, self.n_out, layernorm=self.layernorm, bias=self.bias,
                    readout=self.readout, dtype=dtype, s=self.s, convention=self.convention)

    @property
    def state_size(self):
        """S: H, or 2H for the LSTM (state (h, c))."""
        return 2 * self.n_hidden if self.kind.has_cell_state else self.n_hidden

    @property
    def recurrent_keys(self):
        """The recurrent H×H matrices (docs/diagnostics.md §2.4)."""
        return self.kind.recurrent_keys(self)

    @property
    def gate_keys(self):
        return self.kind.gate_keys(self)

    def param_shapes(self):
        shapes = dict(self.kind.param_shapes(self))
        if self.layernorm:
            shapes["ln_gamma"] = shapes["ln_beta"] = (self.n_hidden,)
        shapes["W_out"] = (self.n_out, self.n_hidden)
        if self.bias:
            shapes["b_out"] = (self.n_out,)
        return shapes

    # ------------------------------------------------------------------ initialisation, §1.5
    def init_params(self, seed=0, scheme="paper_a", s0=0.05, f0=0.95, sigma_w=0.2):
        """Parameters as a dict of NumPy arrays (docs/cells.md §1.5); same seed, same bits.

        paper_a: non-gate matrices (semi-)orthogonal, biases 0; gate weights zero with the gate bias
        at logit(s0) (gru: update gate; "torch" convention logit(1 − s0), since its z is the
        retention), LSTM forget bias logit(f0). torch: U(−k, k), k = 1/√fan_in (nn.GRU/nn.LSTM:
        fan_in = H for every tensor). normal: weights N(0, sigma_w²), biases 0. LN γ = 1, β = 0.
        """
        seed = check_int("seed", seed, 0)
        check_choice("scheme", scheme, SCHEMES)
        s0 = check_real("s0", s0, 0.0, 1.0, lo_open=True, hi_open=True)
        f0 = check_real("f0", f0, 0.0, 1.0, lo_open=True, hi_open=True)
        sigma_w = check_real("sigma_w", sigma_w, 0.0)
        shapes = self.param_shapes()
        gate_biases = self.kind.gate_biases(self, s0, f0)
        params = {}
        for name, shape in shapes.items():
            rng = _rng(seed, name)
            is_bias = name.startswith("b_")
            if name == "ln_gamma":
                v = np.ones(shape)
            elif name == "ln_beta":
                v = np.zeros(shape)
            elif scheme == "torch":
                k = 1.0 / np.sqrt(self._fan_in(name, shape))
                v = rng.uniform(-k, k, size=shape)
            elif scheme == "normal":
                v = np.zeros(shape) if is_bias else sigma_w * rng.standard_normal(shape)
            elif is_bias:
                v = np.full(shape, gate_biases.get(name, 0.0))
            elif name in self.gate_keys:
                v = np.zeros(shape)
            elif len(shape) == 2:
                v = _orthogonal(rng, shape)
            else:                                   # gate vectors w_s, u_s are gate weights
                v = np.zeros(shape)
            params[name] = np.ascontiguousarray(v, dtype=self.dtype)
        return params

    def _fan_in(self, name, shape):
        if self.kind.torch_fan_in and name not in ("W_out", "b_out"):
            return self.n_hidden                    # torch.nn.GRU/LSTM: k = 1/√hidden_size
        if name in ("W_out", "b_out"):
            return self.n_hidden
        if len(shape) == 2:
            return shape[1]
        if name in ("u_s",):
            return self.n_hidden
        return self.n_in                            # b_x, b_s, w_s: biases of the input maps

    # ------------------------------------------------------------------ checks
    def check_params(self, params, xp=np):
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict of arrays, got {type(params).__name__}")
        shapes = self.param_shapes()
        missing = sorted(set(shapes) - set(params))
        extra = sorted(set(params) - set(shapes))
        if missing or extra:
            raise ValueError(f"params keys do not match {self!r}: missing {missing}, unexpected {extra}")
        return {k: as_real_array(f"params[{k!r}]", params[k], self.dtype, shape=shapes[k], xp=xp)
                for k in shapes}

    def check_x(self, x, xp=np):
        x = as_real_array("x", x, self.dtype, ndim=3, xp=xp)
        T, B, D = x.shape
        if T < 1 or B < 1:
            raise ValueError(f"x must have T >= 1 and B >= 1, got shape {tuple(x.shape)}")
        if D != self.n_in:
            raise ValueError(f"x must have shape (T, B, {self.n_in}) (time-major), got {tuple(x.shape)}")
        return x

    def check_y(self, y, x, xp=np):
        T, B, _ = x.shape
        y = as_real_array("y", y, self.dtype, xp=xp)
        if self.readout == "last" and y.shape == (B, self.n_out):
            full = xp.zeros((T, B, self.n_out), dtype=self.dtype)
            full[-1] = y
            return full
        if tuple(y.shape) != (T, B, self.n_out):
            raise ValueError(f"y must have shape {(T, B, self.n_out)}"
                             + (f" or {(B, self.n_out)}" if self.readout == "last" else "")
                             + f", got {tuple(y.shape)}")
        return y

    def check_mask(self, mask, T):
        if mask is None:
            return None
        if self.readout == "last":
            raise ValueError("mask is only used with readout='every'")
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (T,):
            raise ValueError(f"mask must be a boolean array of shape ({T},), got {m.dtype} {m.shape}")
        if not m.any():
            raise ValueError("mask must select at least one time step")
        return m

    # ------------------------------------------------------------------ backends
    def _backend(self, backend):
        check_choice("backend", backend, BACKENDS)
        if backend == "numpy":
            return _NumpyBackend
        if backend == "numba":
            from ..backends import numba as nb
            return nb
        from ..backends import cupy as cp
        return cp

    def _prepare(self, params, x, backend):
        be = self._backend(backend)
        return be, self.check_params(params), self.check_x(x)

    def forward(self, params, x, backend="numpy"):
        """Forward pass → :class:`lwsim.reference.Trace` (docs/cells.md §1.9)."""
        be, p, x = self._prepare(params, x, backend)
        return be.forward(self, p, x)

    def loss_and_grad(self, params, x, y, backend="numpy", mask=None):
        """Mean-squared loss (§1.6) and its exact gradient by BPTT (§1.8): (L, grads)."""
        be, p, x = self._prepare(params, x, backend)
        y = self.check_y(y, x)
        mask = self.check_mask(mask, x.shape[0])
        return be.loss_and_grad(self, p, x, y, mask)

    def jacobians(self, params, x, backend="numpy"):
        """J[t−1] = ∂h_t/∂h_{t−1}: (T, B, S, S), S = H or 2H for the LSTM (§1.7)."""
        be, p, x = self._prepare(params, x, backend)
        return be.jacobians(self, p, x, diagonal=False)

    def jacobian_diagonal(self, params, x, backend="numpy"):
        """diag(J_t): (T, B, S), in O(T·B·H²) without forming J."""
        be, p, x = self._prepare(params, x, backend)
        return be.jacobians(self, p, x, diagonal=True)

    def forward_and_jacobian_diagonal(self, params, x, backend="numpy"):
        """(:meth:`forward`, :meth:`jacobian_diagonal`) from one forward pass where the backend
        can (numba), else two calls; the same values either way (docs/cells.md §1.9)."""
        be, p, x = self._prepare(params, x, backend)
        fused = getattr(be, "forward_and_jacobian_diagonal", None)
        if fused is not None:
            return fused(self, p, x)
        return be.forward(self, p, x), be.jacobians(self, p, x, diagonal=True)

    def lag_gradients(self, params, x, y, max_lag=None, backend="numpy", mask=None):
        """Per-lag gradients g_ℓ, ℓ = 0 … max_lag (docs/diagnostics.md §2.2): (L, [dict, ...]).

        Σ_ℓ g_ℓ equals the BPTT gradient (read-out parameters are counted at ℓ = 0).
        """
        if max_lag is not None:
            check_int("max_lag", max_lag, 0)
        be, p, x = self._prepare(params, x, backend)
        y = self.check_y(y, x)
        mask = self.check_mask(mask, x.shape[0])
        return be.lag_gradients(self, p, x, y, mask, max_lag)

    def tangents(self, params, x, direction, backend="numpy", forward=None):
        """Forward-mode v_t = (∂h_t/∂θ)[w], t = 0 … T: (T+1, B, S) (docs/diagnostics.md §2.7).

        ``direction``: a dict shaped like ``params`` → (T+1, B, S); or a list of K such dicts →
        (K, T+1, B, S). backend="numba" computes the K tangents in one pass (one forward, the K·B
        rows of each step in one GEMM); "numpy"/"cupy" run one reference pass per direction.
        ``forward``: optionally the trace of :meth:`forward` (or :meth:`forward_and_jacobian_diagonal`)
        with the same params, x and backend="numba": that backend then reuses its forward pass
        instead of running it again (the same values); other backends ignore it.
        """
        be, p, x = self._prepare(params, x, backend)

        def checked(d, name):           # as params are checked (keys, shapes, finite), named
            if not isinstance(d, dict):
                raise TypeError(f"{name} must be a dict of arrays shaped like params, got {type(d).__name__}")
            try:
                return self.check_params(d)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{name}: {e}") from None
        extra = {"forward": forward} if backend == "numba" and forward is not None else {}
        if isinstance(direction, dict):
            return be.tangents(self, p, x, checked(direction, "direction"), **extra)
        if not isinstance(direction, (list, tuple)):
            raise TypeError("direction must be a dict of arrays shaped like params, or a list of them, "
                            f"got {type(direction).__name__}")
        if not direction:
            raise ValueError("direction must be a dict or a non-empty list of dicts, got an empty list")
        dps = [checked(d, f"direction[{k}]") for k, d in enumerate(direction)]
        if backend == "numba":
            return be.tangents(self, p, x, dps, **extra)
        return np.stack([be.tangents(self, p, x, dp) for dp in dps])

    # ------------------------------------------------------------------ PyTorch weights
    def params_from_torch(self, state_dict):
        """Parameters from a torch.nn.GRU (convention "torch") or torch.nn.LSTM state dict.

        Keys weight_ih_l0 (G·H, D), weight_hh_l0 (G·H, H), bias_ih_l0, bias_hh_l0 (G·H), gate order
        r, z, n (GRU) and i, f, g, o (LSTM); optional readout.weight / readout.bias (an nn.Linear).
        Values: NumPy arrays (call ``.detach().cpu().numpy()`` on tensors first); no torch import.
        LSTM biases are summed (b_ih + b_hh) since the LSTM equations only see their sum.
        """
        from .torch_io import params_from_torch
        return params_from_torch(self, state_dict)

    def params_to_torch(self, params):
        """Inverse of :meth:`params_from_torch` (NumPy arrays under torch key names)."""
        from .torch_io import params_to_torch
        return params_to_torch(self, self.check_params(params))


def _parse_dtype(dtype):
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d not in (np.dtype("float32"), np.dtype("float64")):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    return d


class _NumpyBackend:
    """backend="numpy": the reference with xp = numpy."""

    @staticmethod
    def forward(cell, p, x):
        return reference.forward(np, cell, p, x)

    @staticmethod
    def loss_and_grad(cell, p, x, y, mask):
        loss, grads = reference.loss_and_grad(np, cell, p, x, y, mask)
        return float(loss), grads

    @staticmethod
    def jacobians(cell, p, x, diagonal):
        return reference.jacobians(np, cell, p, x, diagonal)

    @staticmethod
    def lag_gradients(cell, p, x, y, mask, max_lag):
        loss, g = reference.lag_gradients(np, cell, p, x, y, mask, max_lag)
        return float(loss), g

    @staticmethod
    def tangents(cell, p, x, dp):
        return reference.tangents(np, cell, p, x, dp)


def make_cell(name, n_in, n_hidden, n_out=1, **options):
    """Build a cell (docs/cells.md §1.9). Options: layernorm, bias, readout, dtype, s, convention."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, one of {tuple(KINDS)}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"make_cell: unknown option(s) {unknown}; the options are {', '.join(OPTIONS)}")
    return Cell(name, n_in, n_hidden, n_out, **options)
