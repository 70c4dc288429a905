"""A preset end to end, the current code against an older commit: wall times and their ratio.

Run:  python benchmarks/bench_presets.py [--old e4d8c26] [--preset quick] [--rounds 2] [--jobs N]
                                         [--only A2,B7] [--warmup smoke|same|none] [--no-lock]
                                         [--out benchmarks/results/bench_presets.txt]

What is measured: the wall time (time.perf_counter around the subprocess) of
    python -m lwsim.figures --preset P --cache <new empty folder> --out <new empty folder> --no-progress
for two trees, on the same machine in the same run:
  old — commit --old, exported with ``git archive REV | tar -x`` into a temporary folder
        (the repository is only read: no worktree, no checkout);
  new — the working directory as it is when the benchmark starts: its tracked and untracked,
        not ignored files (``git ls-files -co --exclude-standard``) copied into a temporary
        folder, so that edits made while the benchmark runs do not leak into it. Its id is
        ``git rev-parse HEAD``, plus "(+ uncommitted changes)" when ``git status --porcelain``
        lists anything.
How:
  * Both trees run under this Python (sys.executable) and its installed dependencies, with
    cwd = PYTHONPATH = the tree's root, so that each imports its own lwsim and theory (the
    editable install of lwsim is a finder appended to sys.meta_path, after the path finder,
    so PYTHONPATH wins). A probe subprocess checks this for both trees; the benchmark stops
    if either imports lwsim or theory from elsewhere.
  * Every run starts from an empty results cache (nothing is reused) and a warm numba cache:
    each tree gets its own NUMBA_CACHE_DIR, filled by one untimed warm-up run per tree
    (--warmup smoke by default, assuming the smoke preset calls every kernel with the argument
    types of the larger presets, as benchmarks/cost_accuracy.py does; "same" warms up with the
    timed preset itself, one more run of it per tree). After every timed run the numba cache
    folder is compared with its state before the run: a run that wrote to it compiled
    something, and is marked "compiled" in the table (then rerun with --warmup same). Every
    subfolder of a tree's NUMBA_CACHE_DIR must belong to a source folder of that tree (checked).
  * The environment of the runs is this process's, the same for both trees except
    PYTHONPATH and NUMBA_CACHE_DIR (thread caps such as OMP_NUM_THREADS pass through
    unchanged; LWSIM_SCHEDULER is removed so both use the local process pool).
  * Interleaved, ABBA: old, new, new, old, old, new, … (--rounds runs per tree), so that a
    slow drift of the machine (another job starting, thermal state) hits both trees alike.
  * The warm-ups and timed runs hold an exclusive flock on /tmp/lwsim-bench.lock, the lock
    other timing jobs on this machine take (``flock /tmp/lwsim-bench.lock CMD``); --no-lock
    skips it.
Each run is its own process group; Ctrl-C or SIGTERM ends it with its pool workers, and the
temporary folders are removed.
Printed: the machine (CPU model, cores), both commit ids, every run's wall time, the median of
each tree and the ratio median(old) / median(new) (> 1: the current code is faster).

This is a script, not a test: on a shared machine the times are noisy; read the ratio.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK_PATH = "/tmp/lwsim-bench.lock"
TREES = ("old", "new")


# ---------------------------------------------------------------- pure helpers (tested)
def interleaved_order(rounds):
    """ABBA order of ``rounds`` runs per tree: round r runs (old, new) when r is even, (new, old)
    when odd, i.e. old, new, new, old, old, new, …"""
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        raise TypeError(f"rounds must be an int, got {type(rounds).__name__}")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    order = []
    for r in range(rounds):
        order += ["old", "new"] if r % 2 == 0 else ["new", "old"]
    return order


def summarize(times):
    """{"old": [s, …], "new": [s, …]} → (median old, median new, ratio old/new)."""
    for tree in TREES:
        ts = times.get(tree)
        if not ts:
            raise ValueError(f"times[{tree!r}] must be a non-empty list of seconds")
        if not all(t > 0 for t in ts):
            raise ValueError(f"times[{tree!r}] must be positive seconds, got {ts}")
    med_old, med_new = statistics.median(times["old"]), statistics.median(times["new"])
    return med_old, med_new, med_old / med_new


def format_table(header, runs):
    """The report: ``header`` lines, one line per run (dicts with tree, seconds, compiled, and
    optionally inner = the time the preset printed itself), then medians and the ratio."""
    lines = list(header)
    lines.append(f"{'run':>3}  {'tree':<4} {'wall s':>9}  note")
    for i, run in enumerate(runs, 1):
        note = []
        if run.get("inner") is not None:
            note.append(f"preset's own timer {run['inner']:.1f} s")
        if run.get("compiled"):
            note.append(f"compiled: numba wrote {run['compiled']} cache file(s)")
        lines.append(f"{i:>3}  {run['tree']:<4} {run['seconds']:>9.1f}  {'; '.join(note)}".rstrip())
    times = {t: [r["seconds"] for r in runs if r["tree"] == t] for t in TREES}
    med_old, med_new, ratio = summarize(times)
    lines.append(f"median old {med_old:.1f} s (n={len(times['old'])}), new {med_new:.1f} s "
                 f"(n={len(times['new'])}); ratio old/new = {ratio:.2f}x")
    if any(r.get("compiled") for r in runs):
        lines.append("WARNING: numba compiled during a timed run: the warm-up missed a kernel "
                     "specialisation; rerun with --warmup same")
    return lines


# ---------------------------------------------------------------- machine and commits
def machine():
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    model = model or platform.processor() or platform.machine()
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {os.cpu_count()} logical CPUs ({affinity} usable by this process)"


def git(*args):
    r = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_presets: git {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def describe(rev):
    full = git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    subject = git("log", "-1", "--format=%s", full).strip()
    return full, subject


def export_old(rev, dest):
    """``git archive REV | tar -x -C dest``: the commit's files, the repository untouched."""
    dest.mkdir(parents=True)
    with tempfile.TemporaryFile() as buf:
        r = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], stdout=buf,
                           stderr=subprocess.PIPE)
        if r.returncode != 0:
            sys.exit(f"bench_presets: git archive {rev} failed: {r.stderr.decode().strip()}")
        buf.seek(0)
        with tarfile.open(fileobj=buf) as tar:
            if hasattr(tarfile, "tar_filter"):     # Python >= 3.11.4: no paths outside dest
                tar.extractall(dest, filter="tar")
            else:
                tar.extractall(dest)


def snapshot_new(dest):
    """The working directory's tracked and untracked, not ignored files, copied into ``dest``."""
    names = git("ls-files", "-z", "-co", "--exclude-standard").split("\0")
    for name in filter(None, names):
        src = REPO / name
        if not src.is_file():                      # tracked but deleted in the working tree
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name)


# ---------------------------------------------------------------- running a tree
def tree_env(tree_root, numba_dir):
    env = dict(os.environ)
    env.pop("LWSIM_SCHEDULER", None)
    env["PYTHONPATH"] = str(tree_root)
    env["NUMBA_CACHE_DIR"] = str(numba_dir)
    env.setdefault("MPLBACKEND", "Agg")
    return env


def check_imports(name, tree_root, env, presets=()):
    """Fail unless lwsim, lwsim.figures.__main__ and theory import from ``tree_root`` under
    ``env``, and the tree knows every preset in ``presets``."""
    # lwsim.figures may be a namespace package (no __init__.py in older commits): check the
    # file that ``python -m lwsim.figures`` runs
    # presets.PRESET_NAMES since the studies own their sizes; presets.PRESETS in older trees
    code = ("import importlib.util, lwsim, theory; import lwsim.figures.presets as P; "
            "print(' '.join(getattr(P, 'PRESET_NAMES', None) or P.PRESETS)); print(lwsim.__file__); "
            "print(theory.__file__); "
            "print(importlib.util.find_spec('lwsim.figures.__main__').origin)")
    r = subprocess.run([sys.executable, "-c", code], cwd=tree_root, env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"bench_presets: importing lwsim from the {name} tree failed:\n{r.stderr[-3000:]}")
    known, *paths = r.stdout.splitlines()
    missing = [p for p in presets if p not in known.split()]
    if missing:
        sys.exit(f"bench_presets: the {name} tree has no preset {missing}; it has {known}")
    root = Path(tree_root).resolve()
    for path in paths:
        if root not in Path(path).resolve().parents:
            sys.exit(f"bench_presets: the {name} tree imported {path}, not a file under {root}")


def numba_cache_state(numba_dir):
    """{relative path: (size, mtime_ns)} of every file in a numba cache folder."""
    state = {}
    for p in Path(numba_dir).rglob("*"):
        if p.is_file():
            st = p.stat()
            state[str(p.relative_to(numba_dir))] = (st.st_size, st.st_mtime_ns)
    return state


def numba_cache_folders(tree_root):
    """The NUMBA_CACHE_DIR subfolders numba uses for the source folders of a tree: the folder's
    name, "_", the SHA-1 of its absolute path (numba.core.caching, get_suitable_cache_subpath)."""
    names = set()
    for top in {os.path.abspath(tree_root), os.path.realpath(tree_root)}:
        for folder, _, files in os.walk(top):
            if any(f.endswith(".py") for f in files):
                names.add(os.path.basename(folder) + "_" + hashlib.sha1(folder.encode()).hexdigest())
    return names


def check_numba_dir(name, tree_root, numba_dir):
    """Every numba cache file of a tree's NUMBA_CACHE_DIR must belong to a source folder of that
    tree (else the runs used another tree's kernels), and the warm-up must have written some."""
    files = list(numba_cache_state(numba_dir))
    if not any(k.endswith(".nbi") for k in files):
        sys.exit(f"bench_presets: the {name} tree's warm-up wrote no numba cache into {numba_dir}")
    own = numba_cache_folders(tree_root)
    stray = sorted({Path(k).parts[0] for k in files} - own)
    if stray:
        sys.exit(f"bench_presets: numba cache folders in {numba_dir} not from the {name} tree "
                 f"{tree_root}: {stray[:3]}")


def run_preset(tree_root, env, preset, work, jobs, only):
    """One end-to-end run from an empty results cache: (wall seconds, the preset's own timer)."""
    cache, out = work / "cache", work / "out"
    cmd = [sys.executable, "-m", "lwsim.figures", "--preset", preset, "--cache", str(cache),
           "--out", str(out), "--no-progress"]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    if only:
        cmd += ["--only", only]
    t0 = time.perf_counter()
    # its own process group: on Ctrl-C or SIGTERM the run and its pool workers are ended together
    proc = subprocess.Popen(cmd, cwd=tree_root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate()
    except BaseException:
        end_group(proc)
        raise
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"bench_presets: {' '.join(cmd)} in {tree_root} exited {proc.returncode}\n"
                 f"--- stdout (tail)\n{stdout[-2000:]}\n--- stderr (tail)\n{stderr[-4000:]}")
    inner = None
    for line in reversed(stdout.splitlines()):     # "lwsim.figures: … in 12.3 s"
        if line.startswith("lwsim.figures:") and line.rstrip().endswith(" s"):
            try:
                inner = float(line.rstrip()[:-2].rsplit(" ", 1)[1])
            except ValueError:
                pass
            break
    shutil.rmtree(work, ignore_errors=True)        # results are not needed; keep /tmp small
    return seconds, inner


def end_group(proc, grace=10.0):
    """SIGTERM to the run's process group, SIGKILL after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass
    proc.wait()


@contextmanager
def bench_lock(enabled):
    if not enabled:
        yield
        return
    with open(LOCK_PATH, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for {LOCK_PATH} (another timing job holds it) …")
            fcntl.flock(f, fcntl.LOCK_EX)
        say(f"holding {LOCK_PATH}")
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def say(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _terminate(signum, frame):
    raise SystemExit(f"bench_presets: signal {signum}, cleaning up")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", default="e4d8c26", help="older commit to compare with (default e4d8c26)")
    ap.add_argument("--preset", default="quick", help="preset of both trees (default quick; smoke to try)")
    ap.add_argument("--rounds", type=int, default=2, help="timed runs per tree (default 2)")
    ap.add_argument("--jobs", type=int, default=None, help="--jobs of both trees (default: theirs)")
    ap.add_argument("--only", default=None, help="--only of both trees, e.g. A2,B7 (default: all)")
    ap.add_argument("--warmup", default="smoke", choices=["smoke", "same", "none"],
                    help="untimed warm-up preset per tree filling its numba cache (default smoke)")
    ap.add_argument("--out", default=None, help="append the table to this file, e.g. "
                                                 "benchmarks/results/bench_presets.txt")
    ap.add_argument("--no-lock", action="store_true", help=f"do not take {LOCK_PATH}")
    ap.add_argument("--tmp", default=None, help="parent of the temporary folder (default: system's)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    if args.jobs is not None and args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")

    old_id, old_subject = describe(args.old)
    head_id, _ = describe("HEAD")
    dirty = bool(git("status", "--porcelain").strip())
    new_label = head_id + (" (+ uncommitted changes)" if dirty else "")
    order = interleaved_order(args.rounds)

    signal.signal(signal.SIGTERM, _terminate)
    root = Path(tempfile.mkdtemp(prefix="lwsim-bench-presets-", dir=args.tmp))
    try:
        trees = {"old": root / "old" / "tree", "new": root / "new" / "tree"}
        export_old(old_id, trees["old"])
        snapshot_new(trees["new"])
        envs = {}
        for name in TREES:
            numba_dir = root / name / "numba-cache"
            numba_dir.mkdir()
            envs[name] = tree_env(trees[name], numba_dir)
            check_imports(name, trees[name], envs[name],
                          [args.preset] + (["smoke"] if args.warmup == "smoke" else []))
        say(f"old {old_id[:10]} and new {new_label[:10]}{' +changes' if dirty else ''} in {root}; "
            f"both import their own lwsim/theory")

        runs = []
        with bench_lock(not args.no_lock):
            if args.warmup != "none":
                preset = args.preset if args.warmup == "same" else "smoke"
                for name in TREES:
                    say(f"warm-up {name}: preset {preset} (untimed) …")
                    s, _ = run_preset(trees[name], envs[name], preset, root / "work", args.jobs,
                                      args.only if preset == args.preset else None)
                    check_numba_dir(name, trees[name], envs[name]["NUMBA_CACHE_DIR"])
                    say(f"warm-up {name}: done in {s:.1f} s")
            for i, name in enumerate(order, 1):
                numba_dir = envs[name]["NUMBA_CACHE_DIR"]
                before = numba_cache_state(numba_dir)
                say(f"run {i}/{len(order)} {name}: preset {args.preset} …")
                s, inner = run_preset(trees[name], envs[name], args.preset, root / "work", args.jobs,
                                      args.only)
                after = numba_cache_state(numba_dir)
                compiled = sum(1 for k, v in after.items() if before.get(k) != v)
                runs.append(dict(tree=name, seconds=s, inner=inner, compiled=compiled))
                say(f"run {i}/{len(order)} {name}: {s:.1f} s"
                    + (f" (numba wrote {compiled} cache file(s))" if compiled else ""))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    import numba
    import numpy
    header = [
        f"bench_presets {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: preset {args.preset}"
        f"{' --only ' + args.only if args.only else ''}, --jobs {args.jobs or 'default'}, "
        f"{args.rounds} run(s) per tree, ABBA order, fresh results cache per run, "
        + (f"warm numba cache (warm-up: {args.warmup})" if args.warmup != "none"
           else "numba cache empty before the first run of each tree (no warm-up)"),
        f"machine: {machine()}; Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"numba {numba.__version__}",
        f"old: {old_id} {old_subject[:70]}",
        f"new: {new_label}",
    ]
    lines = format_table(header, runs)
    text = "\n".join(lines)
    print("\n" + text, flush=True)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:                      # the temporary folders are already removed
        sys.exit("bench_presets: interrupted")
