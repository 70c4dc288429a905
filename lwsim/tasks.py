"""Seeded task generators (docs/experiments.md §5.1).

Every task produces time-major inputs ``x`` of shape (T, B, D) and targets ``y`` of shape
(T, B, 1) (float64 by default, ``dtype=`` option). Time is indexed t = 0, …, T−1 (array index).

``[A]`` tasks (``multilag``, ``sinmix``) have a target at every step (readout "every").
``[B]`` tasks (``adding``, ``recall``, ``ar2``, ``ar2_observed``, ``movingavg``, ``delaysum``,
``narma10``, ``narma20``) are read at the last step only (readout "last"): the target is
``y[T-1]``. Earlier steps hold 0 (``fill="zero"``, the default) or the *running target*
(``fill="running"``: the same quantity evaluated at step t, i.e. what the target would be if the
sequence ended at t; see each generator). ``y[T-1]`` is the same under both fillings.

API::

    task = lwsim.tasks.make("multilag", T=1024, D=16, seed=212, lags=..., coefs=..., sigma_y=0.3)
    x, y = task.batch(64, rng_or_seed)              # a fresh batch
    ds = task.dataset(n_train, n_val, n_diag, seed)  # fixed splits
    ds.x_train, ds.y_train, ds.x_val, ds.y_val, ds.x_diag, ds.y_diag

Decisions (where the papers leave a choice open):

- ``multilag``/``sinmix``: the term c_k (uᵀ x_{t−ℓ_k}) is present when t − ℓ_k ≥ 0 (0-based
  array index t). u is a unit vector drawn from the *task seed* (so train/val/diag sets and
  every batch share it); sequences are drawn from the dataset/batch seed.
- ``sinmix``: one random phase φ ~ U(0, 2π) per (sequence, channel, harmonic k); period 50;
  "small noise" is N(0, 0.05²) per entry (``noise=0.05``).
- ``adding``/``recall``: channels 0..D−2 carry U(0,1) values, channel D−1 is the mark channel.
  adding: one mark uniform in [0, ⌊T/2⌋), one in [⌊T/2⌋, T). recall: K distinct marks uniform in
  [0, ⌊T/3⌋). Target: sum of the channel-0 values at the marks. Running target: the sum over the
  marks seen so far.
- ``ar2``: z_n = 1.6 z_{n−1} − 0.7 z_{n−2} + N(0, 0.05²), started at 0 with ``burn_in=100``
  discarded steps; the visible series is z_0..z_T (T+1 values). Inputs are N(0,1) in all D
  channels, independent of z (a control task). Target at step t (running) is z_{t+1}; the
  last-step target is z_T. ``ar2_observed``: the same, with channel 0 = z_t (t < T), so the
  target z_T is a one-step-ahead prediction.
- ``movingavg``: all channels U(0,1); target (1/W) Σ_{s=T−W}^{T−1} x_{s,0}. Running target at t
  uses the window ending at t, zero-padded before 0 (divided by W).
- ``delaysum``: all channels U(0,1); target Σ_k w_k x_{T−1−d_k, 0}, delays (4,12,24,36), weights
  1/4 each (delay 0 would be the current input). Running target: Σ_k w_k x_{t−d_k,0} over the
  terms with t − d_k ≥ 0.
- ``inputs="author"`` (``ar2``, ``ar2_observed``, ``movingavg``, ``delaysum``, ``narma10``,
  ``narma20``): the inputs of [B]'s code (docs/fidelity.md, "[B]"): extra channels zero for
  movingavg/delaysum/NARMA; U(0,1) distractors and no burn-in (z started at 0) for ar2.
  Default ``inputs="lwsim"`` as described here.
- ``narma10``/``narma20``: channel 0 is u_t ~ U(0, 0.5), other channels independent U(0, 0.5)
  distractors. y_0 = 0 and u_n = y_n = 0 for n < 0;
  y_{n+1} = F(0.3 y_n + 0.05 y_n Σ_{i=0}^{o−1} y_{n−i} + 1.5 u_{n−o+1} u_n + 0.1), o = 10 or 20.
  NARMA-10 uses F = identity; NARMA-20 uses F = tanh (the usual stabilised form; without it the
  order-20 recursion diverges for some sequences). Option ``tanh=`` overrides either. The input
  at step t is u_t and the target (running) is y_{t+1}; the last-step target is y_T.
  ``burn_in`` (default 0) discards initial steps (their u are not shown). Without tanh the
  recursion occasionally diverges (NARMA-10, T = 1000: about 0.4% of sequences); a sequence whose
  |y| ever exceeds ``diverge_at`` (default 10; typical |y| < 1) is redrawn from the same
  generator (``resample=True``, deterministic; the distribution is conditioned on not
  diverging) or, with ``resample=False``, raises FloatingPointError.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["TASKS", "Task", "Dataset", "make", "from_config", "as_generator", "fixed_batch", "FixedBatchTask",
           "multilag_r2_ceiling"]

TASKS = [
    "multilag",
    "sinmix",
    "adding",
    "recall",
    "ar2",
    "ar2_observed",
    "movingavg",
    "delaysum",
    "narma10",
    "narma20",
]

_LAST_STEP = {"adding", "recall", "ar2", "ar2_observed", "movingavg", "delaysum", "narma10", "narma20"}


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def as_generator(rng_or_seed) -> np.random.Generator:
    """A numpy Generator from a Generator (returned as is), a SeedSequence or an int seed.

    See docs/experiments.md §5.1.
    """
    if isinstance(rng_or_seed, np.random.Generator):
        return rng_or_seed
    if isinstance(rng_or_seed, np.random.SeedSequence):
        return np.random.default_rng(rng_or_seed)
    if isinstance(rng_or_seed, bool) or rng_or_seed is None:
        raise TypeError(
            f"need an int seed, a numpy SeedSequence or a numpy Generator, got {rng_or_seed!r}"
        )
    if isinstance(rng_or_seed, numbers.Integral):
        if rng_or_seed < 0:
            raise ValueError(f"seed must be >= 0, got {rng_or_seed}")
        return np.random.default_rng(int(rng_or_seed))
    raise TypeError(
        "need an int seed, a numpy SeedSequence or a numpy Generator, "
        f"got {type(rng_or_seed).__name__}"
    )


def _int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _nonneg(name: str, value) -> float:
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def _int_tuple(name: str, values, minimum: int) -> tuple[int, ...]:
    try:
        out = tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {values!r}") from None
    if len(out) == 0:
        raise ValueError(f"{name} must not be empty")
    return tuple(_int(f"{name}[{i}]", v, minimum) for i, v in enumerate(out))


def _float_tuple(name: str, values, n: int) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r}") from None
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} entries but {n} are needed (one per lag/delay)")
    if not all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite, got {out}")
    return out


def _unit_vector(seed: int, D: int) -> np.ndarray:
    # Drawn from its own stream of the task seed: never shares draws with the sequences.
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7A5C]))
    u = rng.standard_normal(D)
    return u / np.linalg.norm(u)


# ---------------------------------------------------------------------------------------------
# generators: gen(task, rng, B) -> (x (T,B,D) float64, y_run (T,B) float64 running target)
# For [A] tasks y_run is the target itself.
# ---------------------------------------------------------------------------------------------
def _gen_multilag(task: "Task", rng: np.random.Generator, B: int):
    T, D, p = task.T, task.D, task.params
    x = rng.standard_normal((T, B, D))
    proj = x @ task.u  # (T, B)
    y = np.zeros((T, B))
    for lag, c in zip(p["lags"], p["coefs"]):
        y[lag:] += c * proj[: T - lag]
    if p["sigma_y"] > 0:
        y += p["sigma_y"] * rng.standard_normal((T, B))
    return x, y


def multilag_r2_ceiling(T, lags, coefs, sigma_y) -> float:
    """The best achievable R² on multilag with every step counted: the exact predictor
    E[y_t | x_≤t] = Σ_{k: ℓ_k ≤ t} c_k u·x_{t−ℓ_k} leaves only the noise σ_y², so with
    Var y_t = σ_y² + Σ_{k: ℓ_k ≤ t} c_k² (u·x ~ N(0, 1)),

        R²* = 1 − T σ_y² / Σ_{t=0}^{T−1} (σ_y² + Σ_{k: ℓ_k ≤ t} c_k²)

    (ratio of expectations; validation R² scatters around it by O(1/√(T·B))). docs/experiments.md §5.3.
    """
    T = _int("T", T, 1)
    lags = _int_tuple("lags", lags, 1)
    coefs = _float_tuple("coefs", coefs, len(lags))
    s2 = _nonneg("sigma_y", sigma_y) ** 2
    var = sum(s2 + sum(c * c for lag, c in zip(lags, coefs) if lag <= t) for t in range(T))
    if var == 0:
        raise ValueError("multilag_r2_ceiling: y is identically 0 (no coefficients, σ_y = 0)")
    return 1.0 - T * s2 / var


def _gen_sinmix(task: "Task", rng: np.random.Generator, B: int):
    T, D, p = task.T, task.D, task.params
    K = p["n_harmonics"]
    phases = rng.uniform(0.0, 2.0 * np.pi, size=(B, D, K))
    t = np.arange(T, dtype=np.float64)[:, None, None]
    x = np.zeros((T, B, D))
    for k in range(1, K + 1):
        x += np.sin(2.0 * np.pi * k * t / p["period"] + phases[None, :, :, k - 1]) / k
    if p["noise"] > 0:
        x += p["noise"] * rng.standard_normal((T, B, D))
    proj = np.tanh(x @ task.u)
    y = np.zeros((T, B))
    for lag, c in zip(p["lags"], p["coefs"]):
        y[lag:] += c * proj[: T - lag]
    if p["sigma_y"] > 0:
        y += p["sigma_y"] * rng.standard_normal((T, B))
    return x, y


def _marks_task(task: "Task", rng: np.random.Generator, B: int, positions: np.ndarray):
    """x: values U(0,1) in channels 0..D-2, mark channel D-1 at `positions` (B, K)."""
    T, D = task.T, task.D
    x = np.zeros((T, B, D))
    x[:, :, : D - 1] = rng.uniform(0.0, 1.0, size=(T, B, D - 1))
    cols = np.broadcast_to(np.arange(B)[:, None], positions.shape)
    x[positions, cols, D - 1] = 1.0
    y_run = np.cumsum(x[:, :, 0] * x[:, :, D - 1], axis=0)
    return x, y_run


def _gen_adding(task: "Task", rng: np.random.Generator, B: int):
    T = task.T
    half = T // 2
    first = rng.integers(0, half, size=B)
    second = rng.integers(half, T, size=B)
    return _marks_task(task, rng, B, np.stack([first, second], axis=1))


def _gen_recall(task: "Task", rng: np.random.Generator, B: int):
    n = task.T // 3
    K = task.params["K"]
    positions = np.argsort(rng.random((B, n)), axis=1)[:, :K]
    return _marks_task(task, rng, B, positions)


def _ar2_series(task: "Task", rng: np.random.Generator, B: int) -> np.ndarray:
    """z_0..z_T after burn-in, shape (T+1, B)."""
    p = task.params
    a1, a2 = p["phi"]
    n = p["burn_in"] + task.T + 1
    eps = p["noise"] * rng.standard_normal((n, B))
    z = np.zeros((n, B))
    z_1 = np.zeros(B)  # z_{n-1}
    z_2 = np.zeros(B)  # z_{n-2}
    for i in range(n):
        z[i] = a1 * z_1 + a2 * z_2 + eps[i]
        z_2, z_1 = z_1, z[i]
    return z[p["burn_in"]:]


def _gen_ar2(task: "Task", rng: np.random.Generator, B: int):
    z = _ar2_series(task, rng, B)
    if task.params["inputs"] == "author":       # [B]'s code: U(0, 1) distractors
        x = rng.uniform(0.0, 1.0, size=(task.T, B, task.D))
    else:
        x = rng.standard_normal((task.T, B, task.D))
    if task.name == "ar2_observed":
        x[:, :, 0] = z[:-1]
    return x, z[1:].copy()


def _gen_movingavg(task: "Task", rng: np.random.Generator, B: int):
    T, W = task.T, task.params["W"]
    x = rng.uniform(0.0, 1.0, size=(T, B, task.D))
    if task.params["inputs"] == "author":       # [B]'s code: only channel 0 is active
        x[:, :, 1:] = 0.0
    c = np.concatenate([np.zeros((1, B)), np.cumsum(x[:, :, 0], axis=0)], axis=0)  # c[t]=Σ_{s<t}
    t = np.arange(T)
    lo = np.maximum(t + 1 - W, 0)
    y_run = (c[t + 1] - c[lo]) / W
    return x, y_run


def _gen_delaysum(task: "Task", rng: np.random.Generator, B: int):
    T, p = task.T, task.params
    x = rng.uniform(0.0, 1.0, size=(T, B, task.D))
    if task.params["inputs"] == "author":       # [B]'s code: only channel 0 is active
        x[:, :, 1:] = 0.0
    y_run = np.zeros((T, B))
    for d, w in zip(p["delays"], p["weights"]):
        y_run[d:] += w * x[: T - d, :, 0]
    return x, y_run


def _narma_recursion(u_all: np.ndarray, order: int, tanh: bool) -> np.ndarray:
    """y_0..y_n for inputs u_0..u_{n-1} (columns are sequences), y_0 = 0."""
    n, B = u_all.shape
    y = np.zeros((n + 1, B))
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(n):
            window = y[max(0, i - order + 1): i + 1].sum(axis=0)
            u_lag = u_all[i - order + 1] if i - order + 1 >= 0 else 0.0
            val = 0.3 * y[i] + 0.05 * y[i] * window + 1.5 * u_lag * u_all[i] + 0.1
            y[i + 1] = np.tanh(val) if tanh else val
    return y


def _gen_narma(task: "Task", rng: np.random.Generator, B: int):
    T, D, p = task.T, task.D, task.params
    order, burn = p["order"], p["burn_in"]
    n = burn + T
    u_all = rng.uniform(0.0, 0.5, size=(n, B))
    y = _narma_recursion(u_all, order, p["tanh"])
    for _ in range(50):
        bad = ~(np.abs(y) <= p["diverge_at"]).all(axis=0)  # NaN counts as diverged
        if not bad.any():
            break
        if not p["resample"]:
            raise FloatingPointError(
                f"{task.name}: the NARMA recursion diverged (|y| > {p['diverge_at']:g}) for "
                f"{int(bad.sum())} of {B} sequences; use resample=True or tanh=True"
            )
        u_all[:, bad] = rng.uniform(0.0, 0.5, size=(n, int(bad.sum())))
        y[:, bad] = _narma_recursion(u_all[:, bad], order, p["tanh"])
    else:
        raise FloatingPointError(
            f"{task.name}: still {int(bad.sum())} of {B} diverging sequences after 50 redraws; "
            "use tanh=True or a shorter T"
        )
    x = np.empty((T, B, D))
    x[:, :, 0] = u_all[burn:]
    if D > 1:
        # [B]'s code ("author" inputs) leaves the extra channels at zero
        x[:, :, 1:] = 0.0 if p["inputs"] == "author" else rng.uniform(0.0, 0.5, size=(T, B, D - 1))
    return x, y[burn + 1:].copy()


# ---------------------------------------------------------------------------------------------
# task definitions: defaults and parameter validation
# ---------------------------------------------------------------------------------------------
def _check_lags(name, T, lags, label="lags"):
    if max(lags) >= T:
        raise ValueError(
            f"{name}: {label} {max(lags)} >= T={T}, that term would never be present; "
            f"pass a longer T or smaller {label}=..."
        )


def _prep_multilag(T, D, kw):
    lags = _int_tuple("lags", kw["lags"], 0)
    coefs = _float_tuple("coefs", kw["coefs"], len(lags))
    _check_lags("multilag", T, lags)
    return {"lags": lags, "coefs": coefs, "sigma_y": _nonneg("sigma_y", kw["sigma_y"])}


def _prep_sinmix(T, D, kw):
    lags = _int_tuple("lags", kw["lags"], 0)
    coefs = _float_tuple("coefs", kw["coefs"], len(lags))
    _check_lags("sinmix", T, lags)
    period = float(kw["period"])
    if not period > 0:
        raise ValueError(f"period must be > 0, got {period}")
    return {
        "lags": lags,
        "coefs": coefs,
        "sigma_y": _nonneg("sigma_y", kw["sigma_y"]),
        "noise": _nonneg("noise", kw["noise"]),
        "period": period,
        "n_harmonics": _int("n_harmonics", kw["n_harmonics"], 1),
    }


def _prep_marks(name, T, D, kw):
    if D < 2:
        raise ValueError(f"{name} needs D >= 2 (value channel(s) plus the mark channel), got D={D}")
    if name == "adding":
        if T < 2:
            raise ValueError(f"adding needs T >= 2, got T={T}")
        return {}
    K = _int("K", kw["K"], 1)
    if T // 3 < K:
        raise ValueError(f"recall needs K={K} distinct marks in the first third: T//3 >= K, got T={T}")
    return {"K": K}


def _inputs(kw):
    """``inputs``: "lwsim" (distractor channels) or "author" ([B]'s code, docs/fidelity.md)."""
    v = kw["inputs"]
    if v not in ("lwsim", "author"):
        raise ValueError(f"inputs must be 'lwsim' or 'author', got {v!r}")
    return v


def _prep_ar2(T, D, kw):
    phi = _float_tuple("phi", kw["phi"], 2)
    inputs = _inputs(kw)
    burn = kw["burn_in"]
    if burn is None:                            # [B]'s code starts z at 0 with no burn-in
        burn = 0 if inputs == "author" else 100
    return {"phi": phi, "noise": _nonneg("noise", kw["noise"]), "burn_in": _int("burn_in", burn, 0),
            "inputs": inputs}


def _prep_movingavg(T, D, kw):
    W = _int("W", kw["W"], 1)
    if W > T:
        raise ValueError(f"movingavg needs W <= T, got W={W}, T={T}")
    return {"W": W, "inputs": _inputs(kw)}


def _prep_delaysum(T, D, kw):
    delays = _int_tuple("delays", kw["delays"], 0)
    weights = kw["weights"]
    if weights is None:
        weights = (1.0 / len(delays),) * len(delays)
    weights = _float_tuple("weights", weights, len(delays))
    _check_lags("delaysum", T, delays, "delays")
    return {"delays": delays, "weights": weights, "inputs": _inputs(kw)}


def _prep_narma(order):
    def prep(T, D, kw):
        tanh = kw["tanh"]
        if tanh is None:
            tanh = order >= 20
        return {
            "order": order,
            "tanh": bool(tanh),
            "burn_in": _int("burn_in", kw["burn_in"], 0),
            "diverge_at": float(kw["diverge_at"]),
            "resample": bool(kw["resample"]),
            "inputs": _inputs(kw),
        }

    return prep


@dataclass(frozen=True)
class _Spec:
    defaults: dict  # T, D and task keywords
    prep: Callable
    gen: Callable
    n_draws_u: bool = False  # has a task-level unit vector u


_SPECS: dict[str, _Spec] = {
    "multilag": _Spec(
        dict(T=1024, D=16, lags=(32, 64, 128, 192, 256), coefs=(0.6, 0.5, 0.4, 0.32, 0.26), sigma_y=0.3),
        _prep_multilag, _gen_multilag, True,
    ),
    "sinmix": _Spec(
        dict(T=500, D=8, lags=(5, 20, 50), coefs=(1.0, 0.5, 0.25), sigma_y=0.01, noise=0.05,
             period=50.0, n_harmonics=5),
        _prep_sinmix, _gen_sinmix, True,
    ),
    "adding": _Spec(dict(T=80, D=4), lambda T, D, kw: _prep_marks("adding", T, D, kw), _gen_adding),
    "recall": _Spec(dict(T=120, D=6, K=5), lambda T, D, kw: _prep_marks("recall", T, D, kw), _gen_recall),
    "ar2": _Spec(dict(T=120, D=6, phi=(1.6, -0.7), noise=0.05, burn_in=None, inputs="lwsim"), _prep_ar2, _gen_ar2),
    "ar2_observed": _Spec(dict(T=120, D=6, phi=(1.6, -0.7), noise=0.05, burn_in=None, inputs="lwsim"), _prep_ar2, _gen_ar2),
    "movingavg": _Spec(dict(T=120, D=6, W=8, inputs="lwsim"), _prep_movingavg, _gen_movingavg),
    "delaysum": _Spec(dict(T=120, D=6, delays=(4, 12, 24, 36), weights=None, inputs="lwsim"), _prep_delaysum, _gen_delaysum),
    "narma10": _Spec(dict(T=120, D=6, tanh=None, burn_in=0, diverge_at=10.0, resample=True, inputs="lwsim"), _prep_narma(10), _gen_narma),
    "narma20": _Spec(dict(T=120, D=6, tanh=None, burn_in=0, diverge_at=10.0, resample=True, inputs="lwsim"), _prep_narma(20), _gen_narma),
}
assert set(_SPECS) == set(TASKS)


def _check_dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}") from None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    return dt


# ---------------------------------------------------------------------------------------------
# public objects
# ---------------------------------------------------------------------------------------------
class Task:
    """A seeded task generator. Build with :func:`make`.

    Attributes: ``name``, ``T``, ``D``, ``n_out`` (=1), ``seed`` (task seed), ``dtype``,
    ``fill`` ("zero"|"running", last-step tasks), ``params`` (task keywords after validation),
    ``readout`` ("every" for [A] tasks, "last" for [B] tasks), ``u`` (unit vector, multilag/sinmix;
    else None).

    See docs/experiments.md §5.1.
    """

    n_out = 1

    def __init__(self, name: str, T: int, D: int, seed: int, dtype, fill: str, params: dict):
        self.name = name
        self.T = T
        self.D = D
        self.seed = seed
        self.dtype = dtype
        self.fill = fill
        self.params = params
        self.readout = "last" if name in _LAST_STEP else "every"
        self.u = _unit_vector(seed, D) if _SPECS[name].n_draws_u else None

    def __repr__(self) -> str:
        kw = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Task({self.name!r}, T={self.T}, D={self.D}, seed={self.seed}, {kw})"

    def config(self) -> dict:
        """JSON-ready description; ``from_config(task.config())`` rebuilds the same task."""
        cfg = {"name": self.name, "T": self.T, "D": self.D, "seed": self.seed,
               "dtype": self.dtype.name, "fill": self.fill}
        for k, v in self.params.items():
            if k == "order":
                continue
            cfg[k] = list(v) if isinstance(v, tuple) else v
        return cfg

    def batch(self, B: int, rng_or_seed) -> tuple[np.ndarray, np.ndarray]:
        """A fresh batch: x (T, B, D), y (T, B, 1), drawn from ``rng_or_seed``
        (an int seed, a SeedSequence, or a numpy Generator, which is advanced)."""
        B = _int("batch size B", B, 1)
        rng = as_generator(rng_or_seed)
        x, y_run = _SPECS[self.name].gen(self, rng, B)
        if self.readout == "last" and self.fill == "zero":
            y = np.zeros_like(y_run)
            y[-1] = y_run[-1]
        else:
            y = y_run
        return x.astype(self.dtype, copy=False), y[:, :, None].astype(self.dtype, copy=False)

    def dataset(self, n_train: int, n_val: int = 0, n_diag: int = 0, seed=None) -> "Dataset":
        """Fixed train/val/diag splits. The sequences of each split come from an independent
        child stream of ``seed`` (default: the task seed), so a split does not change when
        the size of another one does; u (multilag/sinmix) is the task's, shared by all."""
        n_train = _int("n_train", n_train, 0)
        n_val = _int("n_val", n_val, 0)
        n_diag = _int("n_diag", n_diag, 0)
        if n_train + n_val + n_diag == 0:
            raise ValueError("dataset needs at least one sequence (n_train + n_val + n_diag > 0)")
        if seed is None:
            seed = self.seed
        seed = _int("seed", seed, 0)
        children = np.random.SeedSequence([seed, 0xDA7A]).spawn(3)
        out = {}
        for split, n, ss in zip(("train", "val", "diag"), (n_train, n_val, n_diag), children):
            if n > 0:
                out[split] = self.batch(n, np.random.default_rng(ss))
            else:
                out[split] = (np.zeros((self.T, 0, self.D), self.dtype), np.zeros((self.T, 0, 1), self.dtype))
        return Dataset(
            x_train=out["train"][0], y_train=out["train"][1],
            x_val=out["val"][0], y_val=out["val"][1],
            x_diag=out["diag"][0], y_diag=out["diag"][1],
            readout=self.readout, task=self, seed=seed,
        )


@dataclass
class Dataset:
    """Fixed splits (time-major). Empty splits have B = 0. ``readout`` says where targets live
    ("every" step, or the "last" step y[T−1]); ``task`` is the generating Task (or None when
    built from arrays).

    See docs/experiments.md §5.1.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    x_diag: np.ndarray | None = None
    y_diag: np.ndarray | None = None
    readout: str = "every"
    task: Task | None = None
    seed: int | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        for split in ("train", "val", "diag"):
            x, y = getattr(self, "x_" + split), getattr(self, "y_" + split)
            if (x is None) != (y is None):
                raise ValueError(f"{split}: x and y must both be given or both be None")
            if x is None:
                continue
            if x.ndim != 3:
                raise ValueError(f"x_{split} must be (T, B, D), got shape {x.shape}")
            if y.ndim == 2:
                y = y[:, :, None]
                setattr(self, "y_" + split, y)
            if y.ndim != 3 or y.shape[:2] != x.shape[:2]:
                raise ValueError(
                    f"y_{split} must be (T, B, n_out) matching x_{split} {x.shape}, got {y.shape}"
                )
        if self.readout not in ("every", "last"):
            raise ValueError(f"readout must be 'every' or 'last', got {self.readout!r}")

    def _n(self, split):
        x = getattr(self, "x_" + split)
        return 0 if x is None else x.shape[1]

    @property
    def n_train(self) -> int:
        return self._n("train")

    @property
    def n_val(self) -> int:
        return self._n("val")

    @property
    def n_diag(self) -> int:
        return self._n("diag")

    @property
    def T(self) -> int:
        return self.x_train.shape[0]

    @property
    def D(self) -> int:
        return self.x_train.shape[2]

    @property
    def train(self):
        return self.x_train, self.y_train

    @property
    def val(self):
        return self.x_val, self.y_val

    @property
    def diag(self):
        return self.x_diag, self.y_diag

    def config(self) -> dict:
        cfg = {"n_train": self.n_train, "n_val": self.n_val, "n_diag": self.n_diag,
               "seed": self.seed, "readout": self.readout}
        if self.task is not None:
            cfg["task"] = self.task.config()
        cfg.update(self.info)
        return cfg


def make(name: str, T: int | None = None, D: int | None = None, seed: int = 0,
         dtype="float64", fill: str = "zero", **kw) -> Task:
    """Build a task by name (one of :data:`TASKS`). ``T``/``D`` default per task (see
    module docstring); ``seed`` is the task seed (fixes u for multilag/sinmix and is the
    default dataset seed). Task keywords (e.g. multilag ``lags``, ``coefs``, ``sigma_y``)
    keep the documented defaults (docs/experiments.md §5.1) unless given."""
    if not isinstance(name, str) or name not in _SPECS:
        raise ValueError(f"unknown task {name!r}; valid tasks: {', '.join(TASKS)}")
    spec = _SPECS[name]
    allowed = {k for k in spec.defaults if k not in ("T", "D")}
    unknown = set(kw) - allowed
    if unknown:
        raise TypeError(
            f"task {name!r} got unknown keyword(s) {sorted(unknown)}; "
            f"accepted: {sorted(allowed) or 'none'} (plus T, D, seed, dtype, fill)"
        )
    T = _int("T", spec.defaults["T"] if T is None else T, 1)
    D = _int("D", spec.defaults["D"] if D is None else D, 1)
    seed = _int("seed", seed, 0)
    if fill not in ("zero", "running"):
        raise ValueError(f"fill must be 'zero' or 'running', got {fill!r}")
    merged = {k: v for k, v in spec.defaults.items() if k not in ("T", "D")}
    merged.update(kw)
    params = spec.prep(T, D, merged)
    return Task(name, T, D, seed, _check_dtype(dtype), fill, params)


def from_config(cfg: dict) -> Task:
    """Inverse of :meth:`Task.config` (docs/experiments.md §5.1)."""
    cfg = dict(cfg)
    name = cfg.pop("name")
    return make(name, **cfg)


class FixedBatchTask(Task):
    """A task whose every batch is one fixed batch plus fresh N(0, jitter²) input noise — the
    training data of [B]'s S2 code (docs/fidelity.md, "[B]"). Build with :func:`fixed_batch`."""

    def __init__(self, task: Task, B: int, seed, jitter: float):
        super().__init__(task.name, task.T, task.D, task.seed, task.dtype, task.fill, task.params)
        self.n = _int("B", B, 1)
        self.jitter = _nonneg("jitter", jitter)
        self.x, self.y = task.batch(self.n, seed)

    def batch(self, B: int, rng_or_seed) -> tuple[np.ndarray, np.ndarray]:
        if B != self.n:
            raise ValueError(f"this fixed-batch task holds {self.n} sequences, asked for B={B}")
        rng = as_generator(rng_or_seed)
        x = self.x + self.jitter * rng.standard_normal(self.x.shape)
        return x.astype(self.dtype, copy=False), self.y.copy()


def fixed_batch(task: Task, B: int, seed, jitter: float = 1e-6) -> FixedBatchTask:
    """``task`` restricted to one batch of ``B`` sequences drawn from ``seed``; each
    ``batch(B, rng)`` returns it with N(0, ``jitter``²) added to the inputs.

    See docs/experiments.md §5.1.
    """
    if not isinstance(task, Task):
        raise TypeError(f"task must be a lwsim.tasks.Task, got {type(task).__name__}")
    return FixedBatchTask(task, B, seed, jitter)
