"""Checks across the project (cross-cutting; docs/testing.md).

One truth per statement (issue 33 item 5): the places that state the same fact agree."""


import re
from pathlib import Path

from lwsim.figures import cost


ROOT = Path(__file__).resolve().parent.parent


def test_reference_machine_is_one_machine():
    """Every 'reference machine' is the shipped calibration's CPU, defined once in performance.md."""
    cpu = cost.reference_calibration()["cpu"]                       # "AMD EPYC (Zen 3, AVX2)"
    perf = (ROOT / "docs" / "performance.md").read_text()
    section = perf.split("## The reference machine", 1)[1].split("\n## ", 1)[0]
    assert "2-core AMD EPYC (Zen 3,\nAVX2" in section or "2-core AMD EPYC (Zen 3, AVX2" in section
    assert cpu == "AMD EPYC (Zen 3, AVX2)"
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "lwsim").rglob("*.py"))]:
        text = " ".join(path.read_text().split())
        for m in re.finditer(r"reference machine", text):
            near = text[max(0, m.start() - 300):m.end() + 300]
            assert "Xeon" not in near and "AVX-512 EPYC" not in near, (path, near)


def test_presets_medium_time_is_the_measured_one():
    presets = (ROOT / "docs" / "presets.md").read_text()
    comment = re.search(r"--preset medium .*#\s*(.*)", presets).group(1)
    measured = re.search(r"took \*\*(\d+ min \d+ s)\*\* end to end", presets).group(1)
    assert measured in comment, (comment, measured)
