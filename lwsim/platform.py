"""The pinned numerical platform: one kernel set on every x86-64 with AVX2 + FMA (docs/performance.md,
"Bit-reproducibility").

Three libraries choose their kernels from the CPU, each once per process and before any user
code can change it, and each choice changes the last bits of a run:

  OpenBLAS   its core type, when the library loads (``OPENBLAS_CORETYPE``): SkylakeX on AVX-512,
             Haswell on AVX2 (Zen included), Sandybridge on older CPUs.
  NumPy      its SIMD dispatch of exp/log/tanh/sin/cos, when numpy is imported
             (``NPY_DISABLE_CPU_FEATURES``): X86_V4 on AVX-512, X86_V3 on AVX2. Disabling a level
             the CPU lacks is accepted silently (NumPy 2.4, checked), enabling one is an error, so
             the pin disables X86_V4 and the AVX-512 extensions.
  numba      the LLVM target of its kernels, when they are compiled (``NUMBA_CPU_NAME`` and
             ``NUMBA_CPU_FEATURES``: the name alone keeps the host's features, AVX-512 included);
             the target is part of numba's cache index, so pinned and native kernels are cached
             side by side.

and lwsim's own blocking of the per-step products follows the BLAS core
(``LWSIM_NUMBA_TUNING``, lwsim/backends/numba/tuning.py). :data:`PINNED` sets all four to the
AVX2 level (Haswell, 2013: every x86-64 server and desktop CPU since then has it), so a figure
grid gives the same bits on any such machine. None of these can be changed inside a running
process, so ``python -m lwsim.figures`` starts itself again with them (:func:`reexec_argv` /
:func:`pinned_env`) unless ``--native``; its pool workers inherit the environment. Dask workers
are started by the user: ``python -m lwsim.platform`` prints the lines to start them with.

The numba thread count per run also enters the bits (one row chunk per thread); the figure grid
fixes it from ``--jobs``/``--threads-per-run`` and the platform line reports it.
"""
from __future__ import annotations

import os
import sys

ENV_MODE = "LWSIM_PLATFORM"                 # "pinned" in a process started by pinned_env();
                                            # "native" set by the user: as --native, every run
NUMPY_DISABLE = "X86_V4 AVX512_ICL AVX512_SPR"
NUMBA_FEATURES = ("+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,"
                  "+popcnt,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave")
PINNED = {
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": NUMPY_DISABLE,
    "NUMBA_CPU_NAME": "haswell",
    "NUMBA_CPU_FEATURES": NUMBA_FEATURES,
    "LWSIM_NUMBA_TUNING": "avx2",
}
# what the pinned process must then report (checked by :func:`describe`)
EXPECTED = {"openblas": "Haswell", "numpy": "X86_V3", "tuning": "avx2"}
REQUIRED_FLAGS = ("avx2", "fma")


def host_flags():
    """The CPU's feature flags (lower case) from /proc/cpuinfo, else llvmlite's host features;
    empty when neither can be read."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    try:
        import llvmlite.binding as llvm
        return {k for k, v in llvm.get_host_cpu_features().items() if v}
    except Exception:                          # no llvmlite or an unknown platform: say "unknown"
        return set()


def pinnable(flags=None):
    """None when this CPU can run the pinned platform, else why not (one line). Needs x86-64
    with AVX2 and FMA: forcing OpenBLAS's Haswell kernels on a CPU without them would crash."""
    import platform as _pf
    machine = _pf.machine().lower()
    if machine not in ("x86_64", "amd64"):
        return f"this is a {machine} machine, the pinned platform is x86-64's"
    flags = host_flags() if flags is None else set(flags)
    missing = [f for f in REQUIRED_FLAGS if f not in flags]
    if missing:
        return f"this CPU lacks {' and '.join(m.upper() for m in missing)}"
    return None


def pinned_env(environ=None):
    """(environment for a pinned process, [notes]): ``environ`` (default os.environ) with
    :data:`PINNED` set and ``LWSIM_PLATFORM=pinned``; a note for every variable the caller had
    set to another value (it is overridden, and said so)."""
    environ = dict(os.environ if environ is None else environ)
    notes = [f"{k}={environ[k]} from the environment is overridden by {v} (use --native to keep it)"
             for k, v in PINNED.items() if environ.get(k) not in (None, "", v)]
    environ.update(PINNED)
    environ[ENV_MODE] = "pinned"
    return environ, notes


def native_requested():
    """True when the environment asks for the native platform (``LWSIM_PLATFORM=native``): the same
    as ``--native`` on every command (the test suite sets it, so main([...]) runs in-process)."""
    return os.environ.get(ENV_MODE) == "native"


def is_pinned_process():
    """True in a process started with :func:`pinned_env` (its libraries loaded pinned)."""
    return os.environ.get(ENV_MODE) == "pinned"


def openblas_core():
    """SciPy's OpenBLAS core name (the BLAS of numba's kernels), or "unknown"."""
    from .backends.numba.tuning import openblas_core as core
    try:
        return core() or "unknown"
    except Exception:                          # reporting must never fail a run
        return "unknown"


def numpy_simd():
    """NumPy's SIMD target for float64 tanh (e.g. "X86_V3"), or "unknown"."""
    try:
        from numpy.lib.introspect import opt_func_info
        cur = opt_func_info(func_name="^tanh$", signature="float64")["tanh"]["dd"]["current"]
        return cur.split("(")[-1].rstrip(")") if cur.startswith("baseline") else cur
    except Exception:
        return "unknown"


def numba_target():
    """numba's LLVM CPU name ("haswell", "znver3", "skylake-avx512" …)."""
    try:
        from numba.core import config
        if config.CPU_NAME:
            return config.CPU_NAME
        import llvmlite.binding as llvm
        return llvm.get_host_cpu_name()
    except Exception:
        return "unknown"


def describe():
    """{"mode": "pinned"|"native", "openblas", "numpy", "numba", "tuning", "ok": bool}: what this
    process runs with. ``ok`` is False for a pinned process whose libraries did not take the pin
    (e.g. numpy was imported before the environment was set)."""
    from .backends.numba import tuning
    d = {"mode": "pinned" if is_pinned_process() else "native", "openblas": openblas_core(),
         "numpy": numpy_simd(), "numba": numba_target(), "tuning": tuning.profile()}
    d["ok"] = d["mode"] == "native" or all(d[k] == v for k, v in EXPECTED.items()) and \
        d["numba"] == PINNED["NUMBA_CPU_NAME"]
    return d


def platform_line(threads=None):
    """The FINDINGS.md platform line: mode, the four kernel choices, numba threads per run."""
    d = describe()
    thr = f", numba threads per run {threads}" if threads is not None else ""
    kernels = (f"OpenBLAS core {d['openblas']}, NumPy SIMD {d['numpy']}, numba target {d['numba']}, "
               f"lwsim kernels {d['tuning']}{thr}")
    if d["mode"] == "pinned" and d["ok"]:
        return (f"Platform: **pinned** ({kernels}): the same bits on any x86-64 with AVX2 + FMA "
                "at the same thread counts.")
    if d["mode"] == "pinned":
        return (f"Platform: pinned was asked but not in effect ({kernels}): the bits may differ "
                "from the pinned reference.")
    return (f"Platform: **native** (`--native`: {kernels}): the fastest kernels of this CPU; the "
            "last bits may differ from a pinned run or another CPU.")


def reexec_argv(module, argv):
    """The command line that runs ``python -m module *argv`` again (same interpreter)."""
    return [sys.executable, "-m", module, *list(argv)]


def die_with_parent():
    """preexec_fn of a pinned child process: on Linux it gets SIGKILL when its parent dies (no
    orphan keeps writing the cache after the parent was killed); elsewhere a no-op."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv=None):
    """``python -m lwsim.platform``: the shell lines that pin a process (e.g. Dask workers)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print("usage: python -m lwsim.platform  (prints the export lines of the pinned platform)",
              file=sys.stderr)
        return 2
    for k, v in {**PINNED, ENV_MODE: "pinned"}.items():
        print(f"export {k}='{v}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
