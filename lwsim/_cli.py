"""Checks the command lines run before any work (docs/troubleshooting.md).

Each returns None when the argument is usable, else the one-line message the CLI prints before it
exits with status 2: a user's mistake is reported up front, never as a traceback after the runs.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

GPU_INSTALL = "pip install 'lwsim[gpu]'"


def folder_problem(path, flag) -> str | None:
    """Why ``path`` cannot be the output folder given by ``flag`` (None: it can).

    It may exist (a folder we can write into) or not (its nearest existing parent is a folder we
    can write into, so it can be created)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        return f"{flag} {path}: is an existing file, not a folder; give a folder path"
    probe = p
    while not probe.exists():                      # the nearest existing ancestor gets the mkdir
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        return f"{flag} {path}: cannot create it, {probe} is a file"
    if not os.access(probe, os.W_OK | os.X_OK):
        where = "" if probe == p else f" ({probe} is read-only for you)"
        return f"{flag} {path}: folder is not writable{where}; give a folder you can write to"
    return _write_probe(p, flag)


def _write_probe(p, flag) -> str | None:
    """Create ``p`` (and its missing parents) and a file in it, then remove what was created: the
    only check that also catches read-only filesystems and places where root's os.access says yes
    (/proc, /sys), before any run rather than after the whole grid (issue 33)."""
    import tempfile
    made = []
    try:
        for q in reversed([p, *p.parents]):
            if not q.exists():
                q.mkdir()
                made.append(q)
        fd, tmp = tempfile.mkstemp(dir=p, prefix=".lwsim-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return f"{flag} {p}: cannot create a file there ({exc.strerror or exc}); give a folder you can write to"
    finally:
        for q in reversed(made):
            try:
                q.rmdir()
            except OSError:
                pass
    return None


def backend_problem(backend, flag="--backend") -> str | None:
    """Why ``backend`` cannot run on this machine (None: it can): cupy needs CuPy and a CUDA GPU."""
    if backend != "cupy":
        return None
    from .backends.cupy import available
    if available():
        return None
    try:
        import cupy  # noqa: F401
    except ImportError:
        return f"{flag} cupy needs CuPy, which is not installed: {GPU_INSTALL} (CuPy for CUDA 12), " \
               f"or use {flag} numba"
    return f"{flag} cupy: CuPy sees no CUDA GPU on this machine; use {flag} numba"


def error_prefix(prog) -> str:
    """The one prefix of every command-line error, ``<module>: error:`` (``lwsim.figures: error:``,
    never ``python -m lwsim.figures: error:``), argparse's and the programs' own alike."""
    return f"{prog.removeprefix('python -m ')}: error:"


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump; exit status 2 as argparse's) under
    :func:`error_prefix`, and a description without reST double backticks (``x`` reads x)."""

    def __init__(self, *args, description=None, **kwargs):
        if description is not None:
            description = description.replace("``", "")
        super().__init__(*args, description=description, **kwargs)

    def error(self, message):
        self.exit(2, f"{error_prefix(self.prog)} {message} (--help lists the options)\n")
