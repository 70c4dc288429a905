"""Run tools/relayout_tests.py and prove that no test was lost (issue 41 item 6).

    python tools/check_relayout.py

1. collects the test node ids (``pytest --collect-only -q``) before the move;
2. runs the move (tools/relayout_tests.py), which returns old test -> new test for every test;
3. collects again and maps each old node id (parameters included) to its new one: every mapped id
   must be collected after, per old file the counts must be equal (minus the reported exact
   duplicates, whose ids map onto the test kept), and no id may appear that no old id maps to.
Exit status 0 when all holds; otherwise the missing and unexpected ids are listed.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import relayout_tests  # noqa: E402


def collect() -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                       cwd=ROOT, capture_output=True, text=True, env=env)
    ids = [line.strip() for line in r.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if r.returncode not in (0, 5) or "error" in r.stdout.splitlines()[-1:][0].lower():
        sys.exit("collection failed:\n" + r.stdout[-4000:] + r.stderr[-4000:])
    return ids


def main() -> int:
    before = collect()
    report = relayout_tests.run(quiet=False)
    after = collect()
    after_set = set(after)
    dropped = {f"tests/{src}::{name}" for _, src, name, _ in report.dropped}
    missing, mapped_to, per_old = [], Counter(), Counter()
    for node in before:
        path, rest = node.split("::", 1)
        name, params = (rest.split("[", 1) + [""])[:2]
        new = report.nodes.get(f"{path}::{name}")
        if new is None:
            missing.append(f"{node} (no new place)")
            continue
        new_id = new + ("[" + params if params else "")
        if new_id not in after_set:
            missing.append(f"{node} -> {new_id} (not collected)")
            continue
        per_old[path] += 1
        if f"{path}::{name}" not in dropped:
            mapped_to[new_id] += 1
    extra = sorted(i for i in after_set if i not in mapped_to)
    twice = sorted(i for i, c in mapped_to.items() if c > 1)
    print(f"\nbefore: {len(before)} node ids in {len({n.split('::')[0] for n in before})} files; "
          f"after: {len(after)} in {len({n.split('::')[0] for n in after})} files; "
          f"exact duplicates dropped: {len(dropped)} tests")
    counts_before = Counter(n.split("::")[0] for n in before)
    bad_counts = [f"{f}: {counts_before[f]} before, {per_old[f]} found after" for f in sorted(counts_before)
                  if counts_before[f] != per_old[f]]
    for title, rows in (("old ids not found after", missing), ("new ids no old id maps to", extra),
                        ("new ids two old ids map to", twice), ("per-file counts differ", bad_counts)):
        if rows:
            print(f"\n{title} ({len(rows)}):")
            for r in rows[:200]:
                print("  " + r)
    ok = not (missing or extra or twice or bad_counts)
    print("\nOK: every old test has its new node id" if ok else "\nFAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
