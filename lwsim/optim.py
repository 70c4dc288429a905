"""Optimizers in NumPy with PyTorch's semantics, defaults and hyper-parameter names (docs/experiments.md §5.2).

    opt = lwsim.optim.make("adamw", params, lr=1e-3, weight_decay=1e-4)
    opt.step(grads)          # updates the arrays of `params` in place
    opt.rates()              # per-parameter base rate λ (docs/diagnostics.md §2.4), dict like params
    sd = opt.state_dict(); opt.load_state_dict(sd)

| name | class | torch equivalent | defaults |
|---|---|---|---|
| ``sgd`` | :class:`SGD` | ``torch.optim.SGD`` | lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False |
| ``momentum`` | :class:`SGD` | ``torch.optim.SGD(momentum=0.9)`` | as sgd but momentum=0.9 |
| ``adam`` | :class:`Adam` | ``torch.optim.Adam`` | lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False |
| ``adamw`` | :class:`AdamW` | ``torch.optim.AdamW`` | as adam but weight_decay=1e-2 (decoupled) |
| ``rmsprop`` | :class:`RMSprop` | ``torch.optim.RMSprop`` | lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False |

Update rules (g the gradient; torch's single-tensor code, same operation order):

- SGD: g ← g + wd·p; with momentum μ: buf ← g at the first step, else buf ← μ·buf + (1−dampening)·g;
  g ← g + μ·buf (nesterov) or g ← buf; p ← p − lr·g.
- Adam: t ← t+1; g ← g + wd·p; m ← m + (1−β₁)(g − m); v ← β₂ v + (1−β₂) g²
  (amsgrad: v_max ← max(v_max, v), used for v below);
  p ← p − (lr/(1−β₁ᵗ)) · m / (sqrt(v)/sqrt(1−β₂ᵗ) + eps).
- AdamW: p ← p·(1 − lr·wd), then Adam without the L2 term.
- RMSprop: g ← g + wd·p; v ← α v + (1−α) g²; centered: g_avg ← g_avg + (1−α)(g − g_avg),
  den = sqrt(v − g_avg²) + eps, else den = sqrt(v) + eps; with momentum μ > 0:
  buf ← μ·buf + g/den, p ← p − lr·buf; else p ← p − lr·g/den.

State names (``state_dict()["state"][param]``): SGD ``buf``; Adam/AdamW ``m``, ``v`` (and
``v_max`` with amsgrad); RMSprop ``v`` (and ``buf`` with momentum, ``g_avg`` when centered).
The step counter is global (``opt.step_count``, ``state_dict()["step"]``).

Rates λ (docs/diagnostics.md §2.4): Adam/AdamW λ = lr / (sqrt(v̂) + eps), v̂ = v / (1 − β₂^step) (v_max with
amsgrad); before the first step v̂ := 0, i.e. λ = lr/eps. RMSprop λ = lr / (sqrt(v) + eps)
(centered: sqrt(v − g_avg²)); momentum does not enter λ. SGD (any momentum) λ = lr.
"""

from __future__ import annotations

import copy
import math
import numbers

import numpy as np

__all__ = [
    "OPTIMIZERS", "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "make", "from_state_dict",
    "clip_grad_norm", "NonFiniteGradientError",
]

OPTIMIZERS = ["sgd", "momentum", "adam", "adamw", "rmsprop"]


class NonFiniteGradientError(FloatingPointError, ValueError):
    """A gradient holds NaN or ±inf (docs/experiments.md §5.2)."""


# ---------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------
def _real(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _check_lr(lr) -> float:
    lr = _real("lr", lr)
    if lr <= 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    return lr


def _check_unit(name, value) -> float:
    value = _real(name, value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value}")
    return value


def _check_nonneg(name, value) -> float:
    value = _real(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _check_params(params) -> dict:
    if not isinstance(params, dict) or not params:
        raise TypeError("params must be a non-empty dict {name: numpy array}")
    for k, p in params.items():
        if not isinstance(p, np.ndarray):
            raise TypeError(f"param {k!r} must be a numpy array, got {type(p).__name__}")
        if p.dtype.kind != "f":
            raise TypeError(f"param {k!r} must be a floating-point array, got dtype {p.dtype}")
        if not p.flags.writeable:
            raise ValueError(f"param {k!r} is read-only; the optimizer updates params in place")
    return params


class KeyMismatchError(KeyError, ValueError):
    """Keys of a dict argument (gradients, a state_dict, its buffers) do not match the parameters.

    A KeyError for code that catches it as one, and a ValueError (a bad argument value) like every
    other input error; its message prints without KeyError's quotes. See docs/troubleshooting.md.
    """

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _check_keys(what: str, got, expected) -> None:
    got, expected = set(got), set(expected)
    if got != expected:
        missing = sorted(expected - got)
        extra = sorted(got - expected)
        raise KeyMismatchError(f"{what} keys do not match the parameters: missing {missing}, unexpected {extra}")


# ---------------------------------------------------------------------------------------------
# base class
# ---------------------------------------------------------------------------------------------
class Optimizer:
    """Base class. ``params`` is the dict whose arrays are updated in place by :meth:`step`.

    See docs/experiments.md §5.2.
    """

    name = "base"
    _defaults: dict = {}
    _state_keys: tuple = ()

    def __init__(self, params: dict, **hyper):
        self.params = _check_params(params)
        unknown = set(hyper) - set(self._defaults)
        if unknown:
            raise TypeError(
                f"optimizer {self.name!r} got unknown hyper-parameter(s) {sorted(unknown)}; "
                f"accepted: {sorted(self._defaults)}"
            )
        merged = dict(self._defaults)
        merged.update(hyper)
        self.hyper = self._validate(merged)
        self.step_count = 0
        self.state = {k: {s: np.zeros_like(p) for s in self._active_state_keys()} for k, p in params.items()}

    # -- to be provided by subclasses
    def _validate(self, h: dict) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _active_state_keys(self) -> tuple:
        return self._state_keys

    def _update(self, p: np.ndarray, g: np.ndarray, st: dict) -> None:  # pragma: no cover
        raise NotImplementedError

    def _rate(self, p: np.ndarray, st: dict) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # -- public API
    def __repr__(self) -> str:
        hp = ", ".join(f"{k}={v!r}" for k, v in self.hyper.items())
        return f"{type(self).__name__}({self.name!r}, {hp}, step={self.step_count})"

    @property
    def lr(self) -> float:
        return self.hyper["lr"]

    def _prepare_grads(self, grads: dict, check_finite: bool = True) -> dict:
        """The gradients as arrays of the parameters' dtypes, keys and shapes checked; finiteness
        too unless the caller has established it (train: a finite total norm implies it)."""
        if not isinstance(grads, dict):
            raise TypeError(f"grads must be a dict like params, got {type(grads).__name__}")
        _check_keys("grads", grads, self.params)
        out = {}
        for k, p in self.params.items():
            g = np.asarray(grads[k])
            if g.shape != p.shape:
                raise ValueError(f"grad {k!r} has shape {g.shape}, param has {p.shape}")
            if check_finite and not np.all(np.isfinite(g)):
                raise NonFiniteGradientError(
                    f"grad {k!r} holds non-finite values (NaN/inf) at optimizer step "
                    f"{self.step_count + 1}; lower the lr, clip gradients, or check the data"
                )
            out[k] = g.astype(p.dtype, copy=False)
        return out

    def step(self, grads: dict) -> None:
        """One update of every parameter (in place). ``grads`` must have exactly the
        parameters' keys and shapes and be finite; it is not modified."""
        self._apply(self._prepare_grads(grads))

    def _apply(self, grads: dict) -> None:
        """The update with gradients already checked by :meth:`_prepare_grads`."""
        self.step_count += 1
        for k, p in self.params.items():
            self._update(p, grads[k], self.state[k])

    def rates(self) -> dict:
        """Per-parameter base rate λ (docs/diagnostics.md §2.4), a dict of arrays shaped like params."""
        return {k: self._rate(p, self.state[k]) for k, p in self.params.items()}

    def state_dict(self) -> dict:
        """Copy of the full state: {"name", "hyper", "step", "state": {param: {buffer: array}}}."""
        return {
            "name": self.name,
            "hyper": copy.deepcopy(self.hyper),
            "step": int(self.step_count),
            "state": {k: {s: a.copy() for s, a in st.items()} for k, st in self.state.items()},
        }

    def load_state_dict(self, sd: dict) -> None:
        """Restore hyper-parameters, step and buffers (copied into this optimizer's arrays)."""
        for key in ("name", "hyper", "step", "state"):
            if key not in sd:
                raise KeyMismatchError(f"optimizer state_dict lacks {key!r} (it needs name, hyper, step, state)")
        if sd["name"] != self.name:
            raise ValueError(f"state_dict is for optimizer {sd['name']!r}, this is {self.name!r}")
        unknown = set(sd["hyper"]) - set(self._defaults)   # refused as the constructor refuses them
        if unknown:
            raise TypeError(f"optimizer state_dict for {self.name!r} has unknown hyper-parameter(s) "
                            f"{sorted(unknown)}; accepted: {sorted(self._defaults)}")
        hyper = dict(self._defaults)
        hyper.update(sd["hyper"])
        hyper = self._validate(hyper)
        keys = {s for s in self._active_state_keys_for(hyper)}
        _check_keys("optimizer state", sd["state"], self.params)
        new_state = {}
        for k, p in self.params.items():
            st = sd["state"][k]
            if set(st) != keys:
                raise KeyMismatchError(f"optimizer state for {k!r} has buffers {sorted(st)}, expected {sorted(keys)}")
            new_state[k] = {}
            for s in keys:
                a = np.asarray(st[s])
                if a.shape != p.shape:
                    raise ValueError(f"optimizer buffer {k}.{s} has shape {a.shape}, param has {p.shape}")
                new_state[k][s] = np.array(a, dtype=p.dtype, copy=True)
        step = sd["step"]
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 0:
            raise ValueError(f"state_dict step must be an int >= 0, got {step!r}")
        self.hyper = hyper
        self.state = new_state
        self.step_count = int(step)

    def _active_state_keys_for(self, hyper: dict) -> tuple:
        saved = self.hyper
        self.hyper = hyper
        try:
            return self._active_state_keys()
        finally:
            self.hyper = saved


# ---------------------------------------------------------------------------------------------
class SGD(Optimizer):
    """torch.optim.SGD (heavy-ball momentum, optional dampening and Nesterov).

    See docs/experiments.md §5.2.
    """

    name = "sgd"
    _defaults = {"lr": 1e-3, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False}

    def __init__(self, params, **hyper):
        super().__init__(params, **hyper)

    def _validate(self, h):
        h["lr"] = _check_lr(h["lr"])
        h["momentum"] = _check_unit("momentum", h["momentum"])
        h["dampening"] = _check_unit("dampening", h["dampening"])
        h["weight_decay"] = _check_nonneg("weight_decay", h["weight_decay"])
        h["nesterov"] = bool(h["nesterov"])
        if h["nesterov"] and (h["momentum"] <= 0 or h["dampening"] != 0):
            raise ValueError("nesterov momentum requires momentum > 0 and dampening = 0")
        return h

    def _active_state_keys(self):
        return ("buf",) if self.hyper["momentum"] > 0 else ()

    def _update(self, p, g, st):
        h = self.hyper
        if h["weight_decay"] != 0:
            g = g + h["weight_decay"] * p
        mu = h["momentum"]
        if mu > 0:
            buf = st["buf"]
            if self.step_count == 1:
                buf[...] = g
            else:
                buf *= mu
                buf += (1.0 - h["dampening"]) * g
            g = g + mu * buf if h["nesterov"] else buf
        p -= h["lr"] * g

    def _rate(self, p, st):
        return np.full_like(p, self.hyper["lr"])


class Momentum(SGD):
    """SGD with heavy-ball momentum, default momentum 0.9 (name "momentum").

    See docs/experiments.md §5.2.
    """

    name = "momentum"
    _defaults = dict(SGD._defaults, momentum=0.9)

    def _validate(self, h):
        h = super()._validate(h)
        if h["momentum"] <= 0:
            raise ValueError("optimizer 'momentum' needs momentum > 0 (use 'sgd' for plain SGD)")
        return h


def _fusable(p, g, *buffers) -> bool:
    """The fused kernel updates p and the buffers through flat views: all C-contiguous, one
    floating dtype (the gradient may be a strided view; it is only read)."""
    return (p.dtype in (np.float32, np.float64) and g.dtype == p.dtype and p.flags.c_contiguous
            and all(b.dtype == p.dtype and b.flags.c_contiguous for b in buffers))


class Adam(Optimizer):
    """torch.optim.Adam (L2 weight decay added to the gradient; docs/experiments.md §5.2)."""

    name = "adam"
    _defaults = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}
    _decoupled = False

    def _validate(self, h):
        h["lr"] = _check_lr(h["lr"])
        try:
            b1, b2 = h["betas"]
        except (TypeError, ValueError):
            raise ValueError(f"betas must be a pair (beta1, beta2), got {h['betas']!r}") from None
        h["betas"] = (_check_unit("betas[0]", b1), _check_unit("betas[1]", b2))
        h["eps"] = _check_nonneg("eps", h["eps"])
        h["weight_decay"] = _check_nonneg("weight_decay", h["weight_decay"])
        h["amsgrad"] = bool(h["amsgrad"])
        return h

    def _active_state_keys(self):
        return ("m", "v", "v_max") if self.hyper["amsgrad"] else ("m", "v")

    def _apply(self, grads):
        """Every parameter in one fused numba pass each (lwsim._optim_kernels.adam_update: the
        operations of :meth:`_update`, same bits), the step's scalars computed once per dtype;
        arrays the kernel cannot update through flat views take the NumPy path."""
        from ._optim_kernels import adam_update
        self.step_count += 1
        scalars = {}
        for k, p in self.params.items():
            g, st = grads[k], self.state[k]
            if not _fusable(p, g, *st.values()):
                self._update(p, g, st)
                continue
            s = scalars.get(p.dtype)
            if s is None:
                s = scalars[p.dtype] = self._fused_scalars(p.dtype.type)
            m, v = st["m"].reshape(-1), st["v"].reshape(-1)
            adam_update(p.reshape(-1), g.reshape(-1), m, v, st["v_max"].reshape(-1) if "v_max" in st else v, *s)

    def _fused_scalars(self, f):
        """adam_update's scalars, each cast to the arrays' dtype ``f`` as NumPy casts a Python float."""
        h = self.hyper
        lr, wd, eps = h["lr"], h["weight_decay"], h["eps"]
        b1, b2 = h["betas"]
        t = self.step_count
        return (f(1.0 - lr * wd), f(wd), f(1.0 - b1), f(b2), f(1.0 - b2), f(lr / (1.0 - b1 ** t)),
                f(math.sqrt(1.0 - b2 ** t)), f(eps), self._decoupled and wd != 0, h["amsgrad"])

    def _update(self, p, g, st):
        """The NumPy reference (torch's single-tensor code, same operation order)."""
        h = self.hyper
        lr, wd, eps = h["lr"], h["weight_decay"], h["eps"]
        b1, b2 = h["betas"]
        t = self.step_count
        if wd != 0:
            if self._decoupled:
                p *= 1.0 - lr * wd
            else:
                g = g + wd * p
        m, v = st["m"], st["v"]
        m += (1.0 - b1) * (g - m)  # torch: exp_avg.lerp_(grad, 1 - beta1)
        v *= b2
        v += (1.0 - b2) * (g * g)
        if h["amsgrad"]:
            np.maximum(st["v_max"], v, out=st["v_max"])
            v = st["v_max"]
        step_size = lr / (1.0 - b1 ** t)
        denom = np.sqrt(v) / math.sqrt(1.0 - b2 ** t) + eps
        p -= step_size * (m / denom)

    def _rate(self, p, st):
        h = self.hyper
        v = st["v_max"] if h["amsgrad"] else st["v"]
        t = self.step_count
        vhat = v / (1.0 - h["betas"][1] ** t) if t > 0 else np.zeros_like(v)
        return h["lr"] / (np.sqrt(vhat) + h["eps"])


class AdamW(Adam):
    """torch.optim.AdamW: decoupled weight decay p ← p(1 − lr·wd), default wd 1e-2.

    See docs/experiments.md §5.2.
    """

    name = "adamw"
    _defaults = dict(Adam._defaults, weight_decay=1e-2)
    _decoupled = True


class RMSprop(Optimizer):
    """torch.optim.RMSprop (docs/experiments.md §5.2)."""

    name = "rmsprop"
    _defaults = {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0,
                 "centered": False}

    def _validate(self, h):
        h["lr"] = _check_lr(h["lr"])
        h["alpha"] = _check_unit("alpha", h["alpha"])
        h["eps"] = _check_nonneg("eps", h["eps"])
        h["weight_decay"] = _check_nonneg("weight_decay", h["weight_decay"])
        h["momentum"] = _check_unit("momentum", h["momentum"])
        h["centered"] = bool(h["centered"])
        return h

    def _active_state_keys(self):
        keys = ["v"]
        if self.hyper["momentum"] > 0:
            keys.append("buf")
        if self.hyper["centered"]:
            keys.append("g_avg")
        return tuple(keys)

    def _denom(self, st):
        if self.hyper["centered"]:
            return np.sqrt(st["v"] - st["g_avg"] * st["g_avg"]) + self.hyper["eps"]
        return np.sqrt(st["v"]) + self.hyper["eps"]

    def _update(self, p, g, st):
        h = self.hyper
        if h["weight_decay"] != 0:
            g = g + h["weight_decay"] * p
        a = h["alpha"]
        v = st["v"]
        v *= a
        v += (1.0 - a) * (g * g)
        if h["centered"]:
            st["g_avg"] += (1.0 - a) * (g - st["g_avg"])  # torch: grad_avg.lerp_(grad, 1 - alpha)
        den = self._denom(st)
        if h["momentum"] > 0:
            buf = st["buf"]
            buf *= h["momentum"]
            buf += g / den
            p -= h["lr"] * buf
        else:
            p -= h["lr"] * (g / den)

    def _rate(self, p, st):
        return self.hyper["lr"] / self._denom(st)


_CLASSES = {"sgd": SGD, "momentum": Momentum, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop}


def make(name: str, params: dict, **hyper) -> Optimizer:
    """Build an optimizer by name (one of :data:`OPTIMIZERS`) over ``params`` (updated in place).

    See docs/experiments.md §5.2.
    """
    if not isinstance(name, str) or name.lower() not in _CLASSES:
        raise ValueError(f"unknown optimizer {name!r}; valid optimizers: {', '.join(OPTIMIZERS)}")
    return _CLASSES[name.lower()](params, **hyper)


def from_state_dict(params: dict, sd: dict) -> Optimizer:
    """An optimizer over ``params`` restored from ``sd`` (hyper-parameters, step, buffers).

    See docs/experiments.md §5.2.
    """
    if not isinstance(sd, dict):
        raise TypeError(f"sd must be an optimizer state_dict (a dict), got {type(sd).__name__}")
    for key in ("name", "hyper"):
        if key not in sd:
            raise KeyMismatchError(f"optimizer state_dict lacks {key!r} (it needs name, hyper, step, state)")
    opt = make(sd["name"], params, **sd["hyper"])
    opt.load_state_dict(sd)
    return opt


def squared_norm(arrays) -> float:
    """Σ_k ‖g_k‖² in float64: each array's Σ g² by np.sum (NumPy's pairwise sum), then the arrays'
    totals added one by one in order. An explicit loop rather than sum(): Python 3.12's sum() of
    floats compensates its rounding errors, 3.11's does not, and the trainers must give the same bits
    on both (the fused trainer repeats this order exactly, backends/numba/fused.py).

    See docs/experiments.md §5.2.
    """
    total = 0.0
    for g in arrays:
        total += float(np.sum(np.square(g, dtype=np.float64)))
    return total


def clip_grad_norm(grads: dict, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> float:
    """torch.nn.utils.clip_grad_norm_ on a dict of gradient arrays.

    total = (Σ_k ‖g_k‖^p)^{1/p} over all arrays (p = norm_type, 2 or inf); if
    c = max_norm / (total + 1e-6) < 1 every gradient is scaled by c. The dict entries are
    replaced by the scaled arrays (the dict is modified in place; the arrays passed in are
    not). Returns the total norm before clipping (a float).

    See docs/experiments.md §5.2.
    """
    if not isinstance(grads, dict):
        raise TypeError(f"grads must be a dict of arrays, got {type(grads).__name__}")
    max_norm = _real("max_norm", max_norm)
    if max_norm <= 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm}")
    norm_type = float(norm_type)
    if not grads:
        return 0.0
    arrays = {k: np.asarray(g) for k, g in grads.items()}
    if norm_type == math.inf:
        total = max(float(np.max(np.abs(g))) if g.size else 0.0 for g in arrays.values())
    elif norm_type == 2.0:
        total = math.sqrt(squared_norm(arrays.values()))
    else:
        raise ValueError(f"norm_type must be 2 or inf, got {norm_type}")
    if error_if_nonfinite and not math.isfinite(total):
        raise NonFiniteGradientError(f"the total gradient norm is {total}")
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for k, g in arrays.items():
            grads[k] = g * np.asarray(coef, dtype=g.dtype)
    return total
