"""Where a run's wall time goes: a profile split into named parts (docs/experiments.md §5.3,
"Where the time goes").

    prof = Profile()
    with active(prof):
        with part("training"):
            ...
    prof.finish()   # {"training": s, ..., "compile": s, "other": s, "wall": s}

Parts (PARTS): training, envelope, matched (matched statistic), tails (α-stable tail fits,
bootstrap included, and the detection table), fits (decay-law and master fits), diagnostics (the
other diagnostics: [B]'s rate profiles, anisotropy, Fréchet checks, gate factors), compile (numba:
compilation and loading compiled kernels from numba's disk cache), other (the rest: what no part
names, e.g. result assembly). A part's seconds are its own: nested parts and the compilation that
happened inside it are counted where they belong, so the parts add up to the run's wall time
exactly, and ``other`` says how much of it no part names.

Compilation is timed by a listener on numba's global compiler lock, which numba holds while it
compiles a new specialisation or loads one from its cache (numba.core.event). The clock is
process-wide: two runs in threads of one process would share it (the runner gives each run a
process, or a Dask worker task, one at a time).

``part`` outside an active profile does nothing, so experiments run the same when called directly.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import time

PARTS = ("training", "envelope", "matched", "tails", "fits", "diagnostics", "compile", "other")


class _CompileClock:
    """Seconds during which numba's compiler lock was held (nested acquisitions counted once):
    wall time, and CPU time of the holding thread (``cpu``; less sensitive to a busy machine)."""

    def __init__(self):
        self.total = 0.0
        self.cpu = 0.0
        self.count = 0
        self._depth = 0
        self._t0 = 0.0
        self._c0 = 0.0
        self._tid = None
        self._lock = threading.Lock()

    def on_start(self):
        with self._lock:
            if self._depth == 0:
                self._t0 = time.perf_counter()
                self._c0 = time.thread_time()      # CPU of the thread that took the lock ...
                self._tid = threading.get_ident()
            self._depth += 1

    def on_end(self):
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self.total += time.perf_counter() - self._t0
                if threading.get_ident() == self._tid:   # ... counted only when that thread ends it
                    self.cpu += max(0.0, time.thread_time() - self._c0)   # (another thread's clock
                self.count += 1                                            # is not comparable)

    def seconds(self):
        """Total so far, the lock-holding period in progress included."""
        with self._lock:
            ongoing = time.perf_counter() - self._t0 if self._depth else 0.0
            return self.total + ongoing


_CLOCK = []


def compile_clock():
    """The process-wide :class:`_CompileClock` (installed on first use)."""
    compile_seconds()
    return _CLOCK[0]


def compile_seconds():
    """Seconds this process has spent in numba compilation (and cache loads) since first asked."""
    if not _CLOCK:
        import numba.core.event as ev
        clock = _CompileClock()

        class _Listener(ev.Listener):
            def on_start(self, event):
                clock.on_start()

            def on_end(self, event):
                clock.on_end()

        ev.register("numba:compiler_lock", _Listener())
        _CLOCK.append(clock)
    return _CLOCK[0].seconds()


class Profile:
    """Wall time of one run split into :data:`PARTS` (see the module docstring)."""

    def __init__(self):
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self._stack = []                  # [name, t0, c0, child wall, child compile]
        self._t0 = time.perf_counter()
        self._c0 = compile_seconds()
        self._top_wall = 0.0              # wall and compile inside top-level parts
        self._top_compile = 0.0

    @contextlib.contextmanager
    def part(self, name):
        if name not in PARTS or name in ("compile", "other"):
            raise ValueError(f"part must be one of {PARTS[:-2]}, got {name!r}")
        frame = [name, time.perf_counter(), compile_seconds(), 0.0, 0.0]
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            wall = time.perf_counter() - frame[1]
            comp = compile_seconds() - frame[2]
            # own time = wall − nested parts' wall − compilation outside nested parts
            self.seconds[name] += (wall - frame[3]) - (comp - frame[4])
            if self._stack:
                self._stack[-1][3] += wall
                self._stack[-1][4] += comp
            else:
                self._top_wall += wall
                self._top_compile += comp

    def finish(self):
        """{part: seconds} plus ``wall``; the parts add up to ``wall``."""
        wall = time.perf_counter() - self._t0
        comp = compile_seconds() - self._c0
        out = dict(self.seconds)
        out["compile"] = comp
        # outside every part: wall − (parts' wall) − (compilation outside parts)
        out["other"] = (wall - self._top_wall) - (comp - self._top_compile)
        out["wall"] = wall
        return out


_ACTIVE = contextvars.ContextVar("lwsim_profile", default=None)


@contextlib.contextmanager
def active(profile):
    """Make ``profile`` the one :func:`part` records into, for the duration."""
    token = _ACTIVE.set(profile)
    try:
        yield profile
    finally:
        _ACTIVE.reset(token)


def part(name):
    """Context manager: time the enclosed code as ``name`` of the active profile (no-op if none)."""
    prof = _ACTIVE.get()
    return contextlib.nullcontext() if prof is None else prof.part(name)


def summarize(profiles):
    """Sum of several {part: seconds} profiles (missing parts count 0) → {part: seconds, "wall": s}."""
    out = dict.fromkeys(PARTS + ("wall",), 0.0)
    for p in profiles:
        for k in out:
            out[k] += float(p.get(k, 0.0))
    return out


def profile_rows(groups, cache_dir):
    """[(group, n_runs, n_profiled, summed profile)] from the cache records of ``groups``
    ({group: [Run]}, plan.plan); a run listed twice is counted once, in its first group."""
    from .runcache import profile
    seen, rows = set(), []
    for group, runs in groups.items():
        runs = [r for r in dict.fromkeys(runs) if r not in seen]
        seen.update(runs)
        profs = [p for p in (profile(cache_dir, r) for r in runs) if p is not None]
        rows.append((group, len(runs), len(profs), summarize(profs)))
    return rows


def format_profile(rows, preset, wall=None):
    """The --profile table: one row per experiment (sum over its runs) and a total row.

    rows: [(experiment, n_runs, n_profiled, {part: seconds, "wall": s})]. Shares are of the
    preset's total wall time (the sum over every profiled run); ``wall``: the invocation's end-to-end
    seconds, printed below the table."""
    total = summarize(r[3] for r in rows)
    grand = total["wall"]
    head = f"{'experiment':<14}{'runs':>6}{'wall s':>10}{'share':>7} | " + " ".join(f"{p:>11}" for p in PARTS)
    lines = [f"lwsim.figures --profile, preset {preset}: seconds per part, summed over the runs "
             f"(share of the preset's wall time in brackets)", head, "-" * len(head)]

    def fmt(name, n, n_prof, prof):
        share = prof["wall"] / grand if grand > 0 else 0.0
        cells = " ".join(f"{prof[p]:>6.1f}({100 * prof[p] / grand:>2.0f}%)" if grand > 0 else f"{prof[p]:>11.1f}"
                         for p in PARTS)
        runs = f"{n_prof}/{n}" if n_prof != n else f"{n}"
        return f"{name:<14}{runs:>6}{prof['wall']:>10.1f}{100 * share:>6.1f}% | {cells}"
    for name, n, n_prof, prof in rows:
        lines.append(fmt(name, n, n_prof, prof))
    lines.append("-" * len(head))
    lines.append(fmt("total", sum(r[1] for r in rows), sum(r[2] for r in rows), total))
    if wall is not None:
        lines.append(f"end to end: {wall:.1f} s of wall time for this invocation (runs in parallel workers, "
                     f"cached runs, process start-up, figures and FINDINGS included)")
    missing = sum(r[1] - r[2] for r in rows)
    if missing:
        lines.append(f"{missing} run(s) have no profile (not computed yet, or cached by an older lwsim): "
                     f"not counted")
    return "\n".join(lines)
