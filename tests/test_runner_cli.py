"""CLI of the cluster/cost options (docs/cluster.md): --dry-run counts and core-hours on an empty
and a partly filled cache, cost-model arithmetic, --scheduler errors, LWSIM_SCHEDULER."""
import json
import subprocess
import sys

import numpy as np
import pytest

from lwsim.figures import runcache as cache, cost
from lwsim.figures.__main__ import main, parse_args
from lwsim.figures.plan import plan
from lwsim.figures.runner import Run


def write_calibration(folder, coef):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / cost.CALIBRATION_FILE).write_text(json.dumps(
        {"backend": "numpy", "host": "h", "cpus": 2, "date": "d", "startup_s": 0.0, "coef": coef}))


def table_row(text, group):
    (line,) = [l for l in text.splitlines() if l.startswith(f"| {group} ")]
    return [c.strip() for c in line.strip("|").split("|")]


def test_dry_run_counts_empty_and_partly_filled(tmp_path, capsys):
    args = ["--dry-run", "--preset", "smoke", "--backend", "numpy", "--only", "A12,B7", "--cache", str(tmp_path)]
    assert main(args) == 0                          # no calibration yet: the shipped reference machine's
    out = capsys.readouterr().out
    assert "--calibrate" in out and "reference machine" in out
    row = table_row(out, "a_theory")
    assert row[:3] == ["a_theory", "9", "0"] and row[3] != "n/a"
    assert table_row(out, "b_expansion")[:3] == ["b_expansion", "2", "0"]
    # 2 s per a_theory run, 0.5 s + 1e-3 s per diag unit for b_expansion (T 12, H 6 → 10·T·H³)
    write_calibration(tmp_path, {"a_theory": {"one": 2.0, "stats": 0.0},
                                 "b_expansion": {"one": 0.5, "diag": 1e-3}})
    groups = plan(["A12", "B7"], "smoke", "numpy")
    for run in groups["a_theory"][:4]:
        cache.save(tmp_path, run, {"x": np.zeros(2)})
    bad = groups["b_expansion"][0]
    cache.save(tmp_path, bad, {"x": np.zeros(2)})
    cache.paths(tmp_path, bad)[1].write_bytes(b"garbage")   # a corrupted record does not count
    assert main(args) == 0
    out = capsys.readouterr().out
    assert table_row(out, "a_theory") == ["a_theory", "9", "4", "0.005", "0.00278", "0.30 GB"]
    be = 2 * (0.5 + 1e-3 * 10 * 12 * 6 ** 3) / 3600                 # 2 runs, none cached
    assert table_row(out, "b_expansion")[1:5] == ["2", "0", f"{be:.3g}", f"{be:.3g}"]
    assert table_row(out, "total")[1:3] == ["11", "4"]
    assert cache.paths(tmp_path, bad)[1].read_bytes() == b"garbage"  # a dry run moves nothing


def test_cost_model_terms_and_generic_fallback():
    c = dict(T=10, D=2, H=4, n_train=8, n_val=2, n_diag=6, epochs=3, batch=4, K=2, lags=[1, 2, 3],
             n_grid=[25, 50], cell="gru", seed=0)
    f = 2 * 3 * 4 * (4 + 2) + 12 * 3 * 4                           # G = 3 gate blocks for the GRU
    w, model = cost.work(Run.make("a_main", **c))
    assert model == "a_main"
    assert w == {"one": 1.0, "train": 3 * (3 * 8 + 2) * 10 * f,
                 "diag": 6 * 10 * (2 * f + 6 * 3 * 4) + 6 * 10 * (2 * f + 2 * (3 * f + 8 * 3 * 4)),
                 "stats": 3 * 6 * (2 + 1 * 200 / 100),                  # |N grid| + 1 method · n_boot/100
                 "steps": 3 * (3 * 8 + 2) * 10 + 6 * 10 * (4 + 3 * 2)}  # time steps, whatever the cell
    cal = {"coef": {"a_main": {"one": 1.0, "train": 1e-6, "diag": 2e-6, "stats": 1e-3, "steps": 1e-4},
                    "a_theory": {"one": 3.0}, "b_s1": {"one": 5.0}}}
    expect = 1.0 + 1e-6 * w["train"] + 2e-6 * w["diag"] + 1e-3 * 72 + 1e-4 * 1380
    assert cost.predict_seconds(Run.make("a_main", **c), cal) == (pytest.approx(expect), "a_main")
    assert cost.predict_seconds(Run.make("new_main", **c), cal) == (pytest.approx(expect), "generic:a_main")
    assert cost.predict_seconds(Run.make("new_thing", x=1), cal) == (3.0, "generic:fixed")   # median of 1, 3, 5
    inst = dict(c, statistic="instantaneous", tail_methods=["ecf", "mcculloch"], n_boot=500, fit_subsample=40)
    assert cost.work(Run.make("a_main", **inst))[0]["stats"] == 3 * 40 * (2 + 2 * 500 / 100)   # min(6·10, 40)


def test_cost_model_conventions_and_fixed_overhead():
    c = dict(T=10, D=2, H=4, n_train=8, n_val=2, n_diag=20, epochs=3, batch=4, K=2, lags=[1, 2, 3],
             n_grid=[25, 50], cell="gru", seed=0)
    f = 2 * 3 * 4 * (4 + 2) + 12 * 3 * 4
    wm, _ = cost.work(Run.make("a_main", **c))
    wc, model = cost.work(Run.make("a_conventions", **c))
    assert model == "a_conventions"                 # its own model, no longer generic
    # trains once, diagnoses and fits twice (one per convention) + factors of 16 sequences
    assert wc == {"one": 1.0, "train": wm["train"],
                  "diag": 2 * wm["diag"] + 2 * 16 * 10 * (2 * f + 3 * 4 * 4),
                  "stats": 2 * wm["stats"],
                  "steps": 3 * 26 * 10 + 2 * 20 * 10 * (4 + 3 * 2) + 2 * 16 * 10 * (1 + 3)}
    rates = {"one": 0.5, "train": 1e-6, "diag": 2e-6, "stats": 1e-3, "steps": 1e-4}
    cal = {"coef": {"a_main": rates, "a_conventions": rates}}
    pm, pc = (cost.predict_seconds(Run.make(e, **c), cal)[0] for e in ("a_main", "a_conventions"))
    assert pc - pm == pytest.approx(2e-6 * (wc["diag"] - wm["diag"]) + 1e-3 * wm["stats"]
                                    + 1e-4 * (wc["steps"] - wm["steps"])) and pc > 1.4 * pm
    # the fixed per-run overhead: a run with (almost) no work costs the calibrated "one"
    tiny = Run.make("b_expansion", T=1, H=1, D=1, seed=0)
    cal = {"coef": {"b_expansion": {"one": 0.09, "diag": 1e-9}}}
    assert cost.predict_seconds(tiny, cal)[0] == pytest.approx(0.09 + 1e-9 * 10)
    # calibration fits the overhead next to a rate, from runs of 0.09 s … 0.2 s
    rows = [({"one": 1.0, "diag": d}, 0.09 + 1e-7 * d) for d in (1e4, 3e5, 1e6)]
    assert cost._fit(rows) == pytest.approx({"one": 0.09, "diag": 1e-7}, rel=1e-6)


def test_calibration_fit_recovers_planted_rates():
    rows = [({"one": 1.0, "train": t, "stats": s}, 0.2 + 1e-3 * t + 5e-4 * s)
            for t, s in [(10, 0), (100, 10), (1000, 30), (30, 3000)]]
    coef = cost._fit(rows)
    assert coef == pytest.approx({"one": 0.2, "train": 1e-3, "stats": 5e-4}, rel=1e-6)


def test_calibration_fit_floor_on_flop_rates():
    # no FLOP share in the planted times: the plain fit gives train 0 (infinitely fast operations)
    rows = [({"one": 1.0, "train": t, "steps": n}, 0.5 + 1e-3 * n) for t, n in [(1e3, 10), (5e4, 10), (2e4, 300), (1e5, 90)]]
    assert cost._fit(rows)["train"] == 0.0
    coef = cost._fit(rows, floor={"train": 1e-6})
    assert coef["train"] == pytest.approx(1e-6, rel=1e-9)            # held at the GEMM bound
    assert coef["one"] > 0 and coef["steps"] > 0
    # an inactive bound changes nothing: planted rates recovered exactly
    rows = [({"one": 1.0, "train": t, "steps": n}, 0.2 + 1e-3 * t + 5e-4 * n) for t, n in [(10, 0), (100, 10), (1000, 30), (30, 3000)]]
    assert cost._fit(rows, floor={"train": 1e-6}) == pytest.approx({"one": 0.2, "train": 1e-3, "steps": 5e-4}, rel=1e-6)
    assert 1e8 < cost.gemm_rate(n=64, batch=64, repeat=3) < 1e13      # operations per CPU-second


def test_scheduler_option_and_env(monkeypatch):
    monkeypatch.delenv("LWSIM_SCHEDULER", raising=False)
    assert parse_args([]).scheduler is None
    monkeypatch.setenv("LWSIM_SCHEDULER", "tcp://10.0.0.1:8786")
    assert parse_args([]).scheduler == "tcp://10.0.0.1:8786"
    assert parse_args(["--scheduler", "local"]).scheduler == "local"


def test_cli_unreachable_scheduler_exit_code(tmp_path):
    p = subprocess.run([sys.executable, "-m", "lwsim.figures", "--preset", "smoke", "--only", "B7",
                        "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o"), "--no-progress",
                        "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "2"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 2 s" in p.stderr


@pytest.mark.parametrize("args, message", [(["--threads-per-run", "0"], "--threads-per-run must be >= 1"),
                                           (["--retries", "-1"], "--retries must be >= 0"),
                                           (["--scheduler-timeout", "0"], "--scheduler-timeout must be > 0")])
def test_bad_cluster_options(args, message, capsys):
    with pytest.raises(SystemExit):
        parse_args(args)
    assert message in capsys.readouterr().err
