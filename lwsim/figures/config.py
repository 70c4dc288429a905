"""Typed run configurations (docs/experiments.md §5.3, docs/project.md "Studies").

A run is an experiment name plus a JSON configuration (run.py); the configuration's hash keys the
results cache, so it holds exactly the keys its run group set. Each experiment declares here, once,
what its configuration may hold: one frozen, keyword-only dataclass per experiment, its fields
typed, the optional ones with their default. ``config_of(experiment, mapping)`` validates a
configuration once (unknown keys, missing keys, wrong types: ValueError/TypeError naming the key)
and returns the typed object the experiment, its cost model and its figures read, by attribute
(``c.n_boot``) or, for the code that indexes, by key (``c["T"]``). A default lives only here: the
readers never supply one.

This module imports no study; the [A] and [B] field sets shared by several studies are the
mix-ins below, and each experiment's class is registered with :func:`run_config`.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import field
from typing import ClassVar

import numpy as np

CONFIGS: dict[str, type] = {}          # experiment → its configuration class


def run_config(experiment):
    """Class decorator: make ``cls`` a frozen keyword-only dataclass and register it as the
    configuration of ``experiment``."""
    def deco(cls):
        if experiment in CONFIGS:
            raise ValueError(f"experiment {experiment!r} has a configuration class already "
                             f"({CONFIGS[experiment].__name__})")
        cls = dataclasses.dataclass(frozen=True, kw_only=True)(cls)
        cls.experiment = experiment
        CONFIGS[experiment] = cls
        return cls
    return deco


def _fits(value, tp) -> bool:
    """Whether ``value`` (as JSON gives it back, or as Python code builds it) is of type ``tp``."""
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, (bool, np.bool_))
    if tp is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if tp is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if tp is str:
        return isinstance(value, str)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is list:
        return isinstance(value, (list, tuple)) and all(_fits(v, args[0]) for v in value)
    raise TypeError(f"configuration field type {tp!r} is not supported")   # a declaration error


def _name(tp) -> str:
    return tp.__name__ if isinstance(tp, type) else str(tp)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunConfig:
    """Base of every run configuration: validation, key access and the set keys.

    Subclasses declare fields and, in ``CHOICES``, the values a string option may take; build
    them with :meth:`of`.
    """
    experiment: ClassVar[str] = ""
    CHOICES: ClassVar[dict] = {}

    @classmethod
    def of(cls, config):
        """The typed configuration of the mapping ``config`` (a configuration of this class is
        returned as it is). ValueError names unknown or missing keys, TypeError a key of the
        wrong type."""
        if isinstance(config, cls):
            return config
        if isinstance(config, RunConfig):
            config = config.as_dict()
        if not isinstance(config, typing.Mapping):
            raise TypeError(f"{cls.experiment} configuration must be a mapping, got {type(config).__name__}")
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(config) - set(known))
        if unknown:
            raise ValueError(f"{cls.experiment} configuration: unknown key(s) {unknown}; "
                             f"known keys: {sorted(known)}")
        missing = sorted(k for k, f in known.items() if k not in config
                         and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
        if missing:
            raise ValueError(f"{cls.experiment} configuration: missing key(s) {missing}")
        return cls(**config)

    @classmethod
    def read(cls, config, key):
        """``key`` of a recorded configuration (a figure's ``(config, result)`` pairs hold the dict
        that keyed the run): its value, or the default declared here when the run did not set it.
        KeyError for a key this class does not declare or a required key the run lacks."""
        f = {f.name: f for f in dataclasses.fields(cls)}.get(key)
        if f is None:
            raise KeyError(f"{cls.experiment} configuration declares no key {key!r}")
        if key in config:
            return config[key]
        if f.default is not dataclasses.MISSING:
            return f.default
        if f.default_factory is not dataclasses.MISSING:
            return f.default_factory()
        raise KeyError(f"{cls.experiment} configuration lacks the required key {key!r}")

    def __post_init__(self):
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not _fits(v, hints[f.name]):
                raise TypeError(f"{self.experiment} configuration: {f.name} must be {_name(hints[f.name])}, "
                                f"got {v!r} ({type(v).__name__})")
        for cls in type(self).__mro__:
            for key, allowed in vars(cls).get("CHOICES", {}).items():
                v = getattr(self, key)
                if any(x not in allowed for x in (v if isinstance(v, (list, tuple)) else [v])):
                    raise ValueError(f"{self.experiment} configuration: {key} must be "
                                     f"{'among' if isinstance(v, (list, tuple)) else 'one of'} {allowed}, got {v!r}")

    # the readers that index (c["T"]) and the helpers that iterate keep working
    def __getitem__(self, key):
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return tuple(f.name for f in dataclasses.fields(self))

    def __iter__(self):
        return iter(self.keys())

    def __contains__(self, key):
        return key in self.keys()

    def items(self):
        return tuple((k, getattr(self, k)) for k in self.keys())

    def as_dict(self) -> dict:
        """Every field with its value (defaults filled)."""
        return dict(self.items())

    def replace(self, **changes):
        """A copy with ``changes``, validated."""
        return type(self).of({**self.as_dict(), **changes})



class Undeclared:
    """The configuration of an experiment that declares no class (a study's new experiment before
    it does): its keys as given, read-only, for the engine's generic cost and warm-up models.
    Every experiment of lwsim declares its class."""

    def __init__(self, config):
        if not isinstance(config, typing.Mapping):
            raise TypeError(f"configuration must be a mapping, got {type(config).__name__}")
        self._config = dict(config)

    def __getitem__(self, key):
        return self._config[key]

    def keys(self):
        return tuple(self._config)

    def __iter__(self):
        return iter(self._config)

    def __contains__(self, key):
        return key in self._config

    def items(self):
        return tuple(self._config.items())

    def as_dict(self) -> dict:
        return dict(self._config)



def config_of(experiment, config, strict=True):
    """``config`` validated as the configuration of ``experiment`` (its registered class), or
    :class:`Undeclared` when the experiment declares none. ``strict=False``: a configuration that
    does not validate (a partial probe of the cost model) is also read as given."""
    if experiment not in CONFIGS:
        return Undeclared(config)
    try:
        return CONFIGS[experiment].of(config)
    except (TypeError, ValueError):
        if strict:
            raise
        return Undeclared(config)


def declared(config, key, absent=None):
    """``key``'s value when ``config`` (typed, :class:`Undeclared` or a plain dict) has it, else
    ``absent``: how the cost and warm-up models, written once for every experiment, read a size
    an experiment may not have (``absent`` is the model's term for "none", never a default of the
    configuration: a typed configuration has every field it declares)."""
    return config[key] if key in config else absent


def list_field(*values):
    """A list-valued field defaulting to a fresh ``list(values)``."""
    return field(default_factory=lambda: list(values))


# ----------------------------------------------------------------------------- shared field sets
@dataclasses.dataclass(frozen=True, kw_only=True)
class Trained(RunConfig):
    """A model trained by the run: its cell, sizes, optimizer and training dtype (docs/experiments.md §5.3).
    ``train_dtype`` float64 when absent (every preset sets float32, as [A] and [B] trained)."""
    cell: str
    seed: int
    backend: str = "numba"
    train_dtype: str = "float64"
    T: int
    D: int
    H: int
    batch: int
    lr: float
    CHOICES: ClassVar[dict] = {"backend": ("numpy", "numba", "cupy"), "train_dtype": ("float32", "float64")}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ATrained(Trained):
    """The [A] training (lwsim/figures/training.py): multilag data, AdamW-type optimizer, clipping,
    gate biases at logit(s0); ``gate_init`` "lwsim" | "final" | "v1" (studies/main/sizes.py)."""
    optimizer: str = "adamw"
    weight_decay: float
    clip: float
    s0: float
    sigma_y: float
    n_val: int
    n_diag: int
    gate_init: str = "lwsim"
    CHOICES: ClassVar[dict] = {"gate_init": ("lwsim", "final", "v1")}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AWindow(RunConfig):
    """The [A] window chain's options (lwsim.window; studies/main/sizes.py lists their meaning):
    budgets, threshold ε, directions K, and the statistic's options with lwsim's defaults (the
    lags are each experiment's own: a grid, or the task's delay)."""
    n_grid: list[int]
    eps: float
    K: int = 1
    orient: bool = False
    diag_dtype: str = "float64"
    tail_methods: list[str] = list_field("auto")
    n_boot: int = 200
    min_samples: int | None = None
    cap_budget: bool = False
    fit_subsample: int | None = None
    statistic: str = "sequence"
    rates: str = "optimizer"
    decay_window: str = "all"
    CHOICES: ClassVar[dict] = {"statistic": ("sequence", "instantaneous"), "rates": ("optimizer", "none"),
                               "decay_window": ("all", "author"), "diag_dtype": ("float64", "float32"),
                               "tail_methods": ("auto", "ecf", "mcculloch")}


@dataclasses.dataclass(frozen=True, kw_only=True)
class BTrained(Trained):
    """The [B] training (studies b_rates, b_anisotropy): steps, checkpoints, probe batch; ``s`` is
    the ConstGate cell's fixed leak ([B]'s leaky RNN, s = 0.8)."""
    steps: int
    checkpoints: list[int] = list_field(0)
    probe: int
    s: float = 0.8


@dataclasses.dataclass(frozen=True, kw_only=True)
class AMultilag(RunConfig):
    """The multilag task y_t = Σ_k c_k z_{t−ℓ_k} + σ_y ε_t's lags and coefficients (lwsim.tasks)."""
    task_lags: list[int]
    task_coefs: list[float]
