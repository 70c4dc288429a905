"""Run mutmut 3 on one module against that module's own tests (issue 32).

    nice -n 15 python tools/mutation.py lwsim/stats/decay.py tests/stats/test_decay.py [-- -k expr]

What it does: fixes mutmut's configuration from pyproject.toml's [tool.mutmut]
(source_paths, do_not_mutate, ...) and overrides, for this run only,
``only_mutate`` (the module given; a folder means every .py in it) and the pytest
test selection (the test files given), then calls ``mutmut run --max-children N``
(N = $MUTMUT_CHILDREN, default 1: the machine is shared; $MUTMUT_TIMEOUT_MULTIPLIER raises
mutmut's per-mutant time limit, 15 x the tests' time by default, on a loaded machine). mutmut always works in
``./mutants/``; so that runs on different modules (or by different people) never
share it, the run happens in a scratch copy of the tree,
``$MUTMUT_WORKDIR`` (default /tmp/lwsim-mutation/<module>), holding lwsim/, theory/,
tests/, docs/, README.md and pyproject.toml. That copy is refreshed first (``--keep``
keeps its ``mutants/``, e.g. to re-run after adding a test: only the changed
functions' mutants are redone; ``--names=PAT[,PAT...]`` runs only the mutants whose names
match those fnmatch patterns, e.g. the survivors of an earlier run). Afterwards it prints
``mutmut results`` (the survivors). To read a finished run again without re-running it:

    python tools/mutation.py <module> --show <mutant name> [...]   # each mutant's diff
    python tools/mutation.py <module> --results                   # every mutant and its status

Decorated functions (``@numba.njit`` among them) are never mutated by mutmut 3:
the numba kernels are out of scope by construction. See docs/testing.md.
"""
from __future__ import annotations

import fnmatch
import os
import shutil
import sys
from pathlib import Path


def _configure(module: str, selection: list[str]) -> None:
    """mutmut's configuration from pyproject.toml, restricted to ``module`` and the pytest ``selection``."""
    from mutmut import configuration
    cfg = configuration._load_config()
    cfg.only_mutate = [module.rstrip("/") + "/*" if Path(module).is_dir() else module]
    # a module named explicitly is mutated even if do_not_mutate lists it (e.g. lwsim/figures/*)
    cfg.do_not_mutate = [p for p in cfg.do_not_mutate
                         if not any(fnmatch.fnmatch(m, p) for m in (module, module.rstrip("/") + "/x.py"))]
    cfg.pytest_add_cli_args_test_selection = selection
    # a loaded machine makes mutants overrun mutmut's per-mutant limit (15 x the tests' time + 1 s):
    # $MUTMUT_TIMEOUT_MULTIPLIER raises it (the run then tells slow from looping mutants again)
    if os.environ.get("MUTMUT_TIMEOUT_MULTIPLIER"):
        cfg.timeout_multiplier = float(os.environ["MUTMUT_TIMEOUT_MULTIPLIER"])
    configuration._config = cfg


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    argv = [a for a in argv if a != "--keep"]
    # --names=PAT[,PAT...]: run only the mutants whose names match (fnmatch patterns, e.g.
    # 'lwsim.x.x_f__mutmut_*'); with --keep the others keep their earlier verdicts
    names = [p for a in argv if a.startswith("--names=") for p in a.split("=", 1)[1].split(",") if p]
    argv = [a for a in argv if not a.startswith("--names=")]
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    module, tests = argv[0], argv[1:]
    root = Path(__file__).resolve().parent.parent
    if not (root / module).exists():
        print(f"tools/mutation.py: error: no such module {module}", file=sys.stderr)
        return 2
    slug = module.rstrip("/").replace("/", "_").removesuffix(".py")
    work = Path(os.environ.get("MUTMUT_WORKDIR", f"/tmp/lwsim-mutation/{slug}"))
    if tests[0] in ("--show", "--results"):     # read the last run of this module; nothing is re-run
        os.chdir(work)
        sys.path.insert(0, str(work))
        from mutmut.__main__ import cli
        _configure(module, [])
        commands = [["show", n] for n in tests[1:]] if tests[0] == "--show" else [["results", "--all", "true"]]
        for args in commands:
            try:
                cli.main(args, standalone_mode=False)
            except SystemExit:
                pass
        return 0
    work.mkdir(parents=True, exist_ok=True)
    if not keep and (work / "mutants").exists():
        shutil.rmtree(work / "mutants")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "mutants")
    for name in ("lwsim", "theory", "tests", "docs"):
        if (work / name).exists():
            shutil.rmtree(work / name)
        shutil.copytree(root / name, work / name, ignore=ignore)
    for name in ("README.md", "pyproject.toml"):
        shutil.copy2(root / name, work / name)
    os.chdir(work)
    sys.path.insert(0, str(work))
    _configure(module, list(tests) + extra)
    from mutmut.__main__ import cli
    children = os.environ.get("MUTMUT_CHILDREN", "1")
    try:
        cli.main(["run", "--max-children", children, *names], standalone_mode=False)
    finally:
        try:
            cli.main(["results"], standalone_mode=False)
        except SystemExit:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
