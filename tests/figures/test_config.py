"""Tests of lwsim/figures/config.py (laid out like the code: docs/testing.md).

lwsim/figures/config.py: the typed run configurations (docs/project.md, "Studies")."""


from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import lwsim.figures.studies as studies
from lwsim.figures.config import CONFIGS, RunConfig, Undeclared, config_of, declared
from lwsim.figures.presets import PRESET_NAMES
from lwsim.figures.studies.b_anisotropy.experiment import BAnisotropy
from lwsim.figures.studies.main.experiment import AMain


ROOT = Path(__file__).resolve().parents[2]


def _main(**over):
    base = {k: v for k, v in studies.preset_sizes("smoke")["a_main"].items() if k not in ("seeds", "optimizers")}
    return {**base, "cell": "gru", "seed": 212, "optimizer": "adamw", "backend": "numba", **over}


def _config_gets(path):
    """`.get(` calls on a run configuration: receivers named c / cfg / config, or `<x>.config`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            recv = node.func.value
            if (isinstance(recv, ast.Name) and recv.id in ("c", "cfg", "config")) or \
                    (isinstance(recv, ast.Attribute) and recv.attr == "config") or \
                    (isinstance(recv, ast.Subscript) and isinstance(recv.value, ast.Subscript)     # runs[0][0].get
                     and isinstance(recv.slice, ast.Constant) and recv.slice.value == 0):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_every_experiment_of_the_registry_declares_its_configuration():
    exps = {r.experiment for build in studies.group_builders().values() for r in build("smoke", "numba")}
    assert exps == {"a_main", "a_fidelity", "a_theory", "a_conventions", "a_behaviour", "a_delay", "b_s1", "b_s2",
                    "b_expansion"}
    assert exps <= set(CONFIGS) and all(CONFIGS[e].experiment == e for e in exps)


# ----------------------------------------------------------------------------------------------
# run_config
# ----------------------------------------------------------------------------------------------


def test_a_declaration_error_is_loud():
    from lwsim.figures.config import run_config
    with pytest.raises(ValueError, match=r"\ba_main\b.*\balready\b"):
        @run_config("a_main")
        class Again(RunConfig):
            x: int


def test_run_config_declares_a_frozen_keyword_only_registered_class(monkeypatch):
    import dataclasses

    from lwsim.figures import config as cfgmod
    monkeypatch.setattr(cfgmod, "CONFIGS", dict(CONFIGS))      # leave the registry as it was

    @cfgmod.run_config("toy_exp")
    class Toy(RunConfig):
        n: int
        xs: list[int] = cfgmod.list_field(1, 2)
        table: dict = dataclasses.field(default_factory=dict)

    assert cfgmod.CONFIGS["toy_exp"] is Toy and Toy.experiment == "toy_exp"
    with pytest.raises(TypeError, match=r"\bdict\b"):
        Toy.of({"n": 1})

    @cfgmod.run_config("toy_exp2")
    class Toy2(RunConfig):
        n: int
        xs: list[int] = cfgmod.list_field(1, 2)
    with pytest.raises(TypeError, match="positional"):
        Toy2(3)                                                # keyword-only
    a, b = Toy2.of({"n": 1}), Toy2.of({"n": 2})
    assert a.xs == [1, 2] and a.xs is not b.xs and Toy2.read({}, "xs") == [1, 2]
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.n = 5


def test_no_get_on_a_run_configuration_outside_its_declaration():
    """Defaults live in config.py's declarations; readers never supply one (issue 41 item 3)."""
    found = [hit for p in sorted((ROOT / "lwsim" / "figures").rglob("*.py")) if p.name != "config.py"
             for hit in _config_gets(p)]
    assert found == []


# ----------------------------------------------------------------------------------------------
# Undeclared
# ----------------------------------------------------------------------------------------------


def test_an_undeclared_experiment_reads_its_keys_as_given():
    u = config_of("new_thing", {"T": 3})
    assert isinstance(u, Undeclared) and u["T"] == 3 and declared(u, "T", 1) == 3 and declared(u, "H", 1) == 1
    assert u.as_dict() == {"T": 3} and "T" in u and list(u) == ["T"]
    assert u.keys() == ("T",) and u.items() == (("T", 3),)
    with pytest.raises(TypeError, match=r"^configuration\b"):
        Undeclared([1])
    # strict=False: a configuration that does not validate (a partial cost probe) is read as given
    assert isinstance(config_of("a_main", {"T": 3}, strict=False), Undeclared)
    with pytest.raises(ValueError, match=r"\ba_main\b.*\bmissing\b"):
        config_of("a_main", {"T": 3})


# ----------------------------------------------------------------------------------------------
# config_of
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_run_of_every_preset_validates(preset):
    n = 0
    for build in studies.group_builders().values():
        for r in build(preset, "numba"):
            c = config_of(r.experiment, r.config)
            assert isinstance(c, CONFIGS[r.experiment])
            # every key the run set comes back unchanged; the rest are the declared defaults
            assert {k: c[k] for k in r.config} == r.config
            n += 1
    assert n > 0


def test_defaults_live_in_the_declaration():
    c = AMain.of(_main())
    assert "n_boot" not in _main() and c.n_boot == 200 and c["n_boot"] == 200
    assert (c.K, c.orient, c.diag_dtype, c.tail_methods, c.min_samples, c.cap_budget, c.fit_subsample) == \
        (1, False, "float64", ["auto"], None, False, None)
    assert (c.statistic, c.rates, c.decay_window, c.gate_init) == ("sequence", "optimizer", "all", "lwsim")
    # a list default is a fresh list per configuration
    assert AMain.of(_main()).tail_methods is not c.tail_methods
    assert BAnisotropy.read({}, "protocol") == "lwsim" and BAnisotropy.read({"protocol": "author"}, "protocol") == "author"
    assert BAnisotropy.read({}, "conventions") == ["lwsim"]
    with pytest.raises(KeyError, match=r"\bno key\b.*\bnope\b"):
        BAnisotropy.read({}, "nope")
    with pytest.raises(KeyError, match=r"\brequired\b.*\btask\b"):
        BAnisotropy.read({}, "task")


def test_bad_configurations_name_the_key():
    with pytest.raises(ValueError, match=r"\bunknown\b.*\bepochz\b"):
        AMain.of(_main(epochz=3))
    cfg = _main()
    del cfg["lr"], cfg["eps"]
    with pytest.raises(ValueError, match=r"\bmissing\b.*\beps\b.*\blr\b"):
        AMain.of(cfg)
    with pytest.raises(TypeError, match=r"\bH\b"):
        AMain.of(_main(H=6.0))
    with pytest.raises(TypeError, match=r"\borient\b"):
        AMain.of(_main(orient=1))
    with pytest.raises(TypeError, match=r"\blags\b"):
        AMain.of(_main(lags=[1, 2.5]))
    with pytest.raises(ValueError, match=r"\bstatistic\b"):
        AMain.of(_main(statistic="per-step"))
    with pytest.raises(ValueError, match=r"\bnulls\b"):
        AMain.of(_main(nulls=["lag", "fulll"]))
    with pytest.raises(ValueError, match=r"\bbackend\b"):
        AMain.of(_main(backend="jax"))
    with pytest.raises(TypeError, match=r"^a_main\b.*\bmapping\b"):
        AMain.of([("H", 6)])
    # a configuration of another experiment is read as its keys: here a_main's own are unknown to A13's
    from lwsim.figures.studies.conventions.experiment import AConventions
    with pytest.raises(ValueError, match=r"\bunknown\b.*\bfloor_ablations\b.*\bnulls\b"):
        AConventions.of(AMain.of(_main()))
    # ints are floats; bools are neither ints nor floats; None only where declared
    assert AMain.of(_main(lr=1)).lr == 1
    with pytest.raises(TypeError, match=r"\blr\b"):
        AMain.of(_main(lr=True))
    assert AMain.of(_main(min_samples=None)).min_samples is None


def test_the_experiment_validates_its_configuration_once_at_entry():
    from lwsim.figures.run import EXPERIMENTS
    with pytest.raises(ValueError, match=r"\bunknown\b.*\bepochz\b"):
        EXPERIMENTS["a_main"](_main(epochz=1))


# ----------------------------------------------------------------------------------------------
# declared
# ----------------------------------------------------------------------------------------------


def test_typed_configuration_reads_like_the_recorded_one():
    c = AMain.of(_main())
    assert c.of(c) is c and AMain.of(c.as_dict()) == c
    assert "H" in c and "nope" not in c and list(c) == list(c.keys())
    with pytest.raises(KeyError) as err:
        c["nope"]
    assert err.value.args == ("nope",)
    d = c.replace(H=7)
    assert d.H == 7 and c.H == 6
    with pytest.raises(TypeError, match=r"\bH\b"):
        c.replace(H="7")
    assert declared(c, "H", 0) == 6 and declared(c, "n_lags", 3) == 3 and declared(c, "n_lags") is None
    json.dumps(dict(c.items()))                                       # its values stay JSON values
