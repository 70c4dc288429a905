"""--dry-run without set-up (docs/cluster.md, "Dry-run numbers"): the reference calibration
shipped in lwsim/data is used, labelled, and no cell reads "n/a"."""
import json
import subprocess
import sys

from lwsim.figures import cost
from lwsim.figures.plan import plan


def test_reference_calibration_is_shipped_and_marked():
    cal = cost.reference_calibration()
    assert cal["reference"] is True and cal["cpu"].startswith("AMD EPYC")
    assert {"a_main", "a_behaviour", "b_s2"} <= set(cal["coef"])
    assert cal["gemm_flops_per_s"] > 1e9


def test_reference_label_and_numbers(tmp_path):
    cal = cost.reference_calibration()
    rows = cost.dry_run_table(plan(["A1"], "quick", "numba"), tmp_path, cal)
    text = cost.format_dry_run(rows, "quick", cal)
    assert "reference machine: AMD EPYC (Zen 3, AVX2), 2 cpus" in text
    assert "run --calibrate for yours" in text and "n/a" not in text
    # the a_main rows are Σ work · coefficient, by hand from the shipped coefficients
    c = cal["coef"]["a_main"]
    by_hand = sum(sum(cost.work(r)[0].get(t, 0.0) * c.get(t, 0.0) for t in cost.TERMS)
                  for r in plan(["A1"], "quick", "numba")["a_main"]) / 3600
    assert rows[0]["group"] == "a_main" and abs(rows[0]["core_h"] - by_hand) < 1e-12


def test_own_calibration_wins_and_missing_reference(tmp_path, monkeypatch):
    own = dict(cost.reference_calibration(), host="mine", date="2030-01-01 00:00:00")
    own.pop("reference")
    (tmp_path / cost.CALIBRATION_FILE).write_text(json.dumps(own))
    p = subprocess.run([sys.executable, "-m", "lwsim.figures", "--preset", "paper", "--dry-run",
                        "--cache", str(tmp_path), "--only", "B7"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "calibration 2030-01-01 00:00:00 on mine" in p.stdout
    assert "reference machine" not in p.stdout
    monkeypatch.setattr(cost, "REFERENCE_FILE", tmp_path / "missing.json")
    assert cost.reference_calibration() is None


def test_cli_dry_run_without_calibration(tmp_path):
    p = subprocess.run([sys.executable, "-m", "lwsim.figures", "--preset", "paper", "--dry-run",
                        "--cache", str(tmp_path / "empty")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "reference machine:" in p.stdout and "n/a" not in p.stdout
    total = [line for line in p.stdout.splitlines() if line.startswith("| total")][0]
    assert float(total.split("|")[4]) > 1e3                 # paper: thousands of core-hours


def test_core_hours_column_in_one_unit():
    """Every core-hours cell is a number of hours (issue 33 item 6: 2 s read "2 s" beside 0.0295)."""
    rows = [{"group": "fast", "runs": 1, "cached": 0, "core_h": 2 / 3600, "core_h_todo": 0.0,
             "peak_gb": 0.3, "generic": []},
            {"group": "slow", "runs": 2, "cached": 1, "core_h": 0.0295, "core_h_todo": 1234.5,
             "peak_gb": 1.0, "generic": []}]
    lines = cost.format_dry_run(rows, "quick", None).splitlines()
    assert lines[3] == "| fast | 1 | 0 | 0.000556 | 0 | 0.30 GB |"
    assert lines[4] == "| slow | 2 | 1 | 0.0295 | 1.23e+03 | 1.00 GB |"
    assert lines[5] == "| total | 3 | 1 | 0.0301 | 1.23e+03 | 1.00 GB |"      # 0.0295 + 0.000556
