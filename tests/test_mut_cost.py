"""Mutation-testing kills for lwsim/figures/cost.py, the dry-run cost model (issue 32,
docs/testing.md). Numbers by hand: the cost terms from the sizes, the coefficients copied from
lwsim/data/reference_calibration.json (frozen here, so that a recalibration does not move them);
the calibration loop on stubbed probes, clocks and fit. No real probe runs."""
import json
import os
import subprocess
import sys
import types

import pytest

from lwsim.figures import cost
from lwsim.figures import drawing as FIG
from lwsim.figures import plan as P
from lwsim.figures import runner as RN
from lwsim.figures.run import Run

# lwsim/data/reference_calibration.json (2026-12-02, 2-core AMD EPYC), copied by hand
REF_COEF = {
    "a_behaviour": {"one": 0.016540678386727816, "train": 2.0087103051143078e-11, "diag": 2.0087103051143078e-11,
                    "stats": 1.5847625321580187e-06, "steps": 1.714265850596924e-07},
    "a_conventions": {"one": 0.047596961740559406, "train": 4.4549526277645695e-10,
                      "diag": 3.4043381857937856e-11, "stats": 0.0, "steps": 1.7044414478135841e-07},
    "a_fidelity": {"one": 0.005859916430573576, "train": 2.0087103051143078e-11, "diag": 4.898628959427887e-10,
                   "steps": 1.310070532214608e-07},
    "a_main": {"one": 0.04339171039334396, "train": 2.0087103051143078e-11, "diag": 1.6212392691641115e-10,
               "stats": 1.696774382002047e-05, "steps": 0.0},
    "a_theory": {"one": 0.02337834038338972, "stats": 1.0533239228647878e-07},
    "b_expansion": {"one": 0.0020736266464957097, "diag": 2.4610061582620393e-10},
    "b_s1": {"one": 0.009994155284767211, "train": 2.0087103051143078e-11, "diag": 2.478896229679737e-08,
             "steps": 5.719815955936685e-08},
    "b_s2": {"one": 0.005338892660403766, "train": 2.0087103051143078e-11, "diag": 1.3920627670678137e-09,
             "steps": 4.1575910945785536e-07},
    "a_delay": {"one": 0.02260211782365927, "train": 3.4461726346425654e-10, "diag": 2.0087103051143078e-11,
                "stats": 1.6360492150589946e-06, "steps": 0.0005180190562102276},
}
REF = {"cpu": "AMD EPYC (Zen 3, AVX2)", "backend": "numba", "host": "vm", "cpus": 2,
       "date": "2026-12-02 01:16:04", "startup_s": 4.115430974, "coef": REF_COEF,
       "gemm_flops_per_s": 49783186627.45616}

A_MAIN = dict(T=10, D=2, H=4, n_train=8, n_val=2, n_diag=6, epochs=3, batch=4, K=2, lags=[1, 2, 3],
              n_grid=[25, 50], cell="gru", seed=0,
              # the rest of a valid a_main configuration: no term of the cost model reads them
              optimizer="adamw", lr=1e-3, weight_decay=0.0, clip=1.0, s0=0.05, sigma_y=0.3, eps=20.0,
              task_lags=[1], task_coefs=[0.5])


# ------------------------------------------------------------------------------ predict_seconds
def test_predict_a_main_with_the_reference_coefficients():
    # fwd = 2·3·4·(4 + 2) + 12·3·4 = 288 (GRU); train 3·(3·8 + 2)·10·288 = 224640,
    # diag 6·10·(576 + 72) + 6·10·(576 + 2·(864 + 96)) = 188640, stats 3·6·(2 + 2) = 72, steps 1380 (rate 0)
    # 0.04339171039334396 + 224640 · 2.0087e-11 + 188640 · 1.6212e-10 + 72 · 1.6968e-05
    seconds, model = cost.predict_seconds(Run.make("a_main", **A_MAIN), {"coef": REF_COEF})
    assert model == "a_main" and seconds == pytest.approx(0.04464848337278835, rel=1e-12)
    # an unknown experiment: the median of the nine fixed costs (a_behaviour's, 5th of 9)
    assert cost.predict_seconds(Run.make("new_thing", x=1), {"coef": REF_COEF}) == (0.016540678386727816,
                                                                                    "generic:fixed")


def test_generic_median_counts_a_model_without_a_fixed_cost_as_zero():
    cal = {"coef": {"a": {"train": 1.0}, "b": {"one": 4.0}}}             # median of 0 and 4
    assert cost.predict_seconds(Run.make("new_thing", x=1), cal) == (2.0, "generic:fixed")


# ------------------------------------------------------------------------------ peak_bytes
@pytest.fixture
def memory(monkeypatch):
    """Study memory terms by hand: experiment m declares outputs 5 and chunk 7 bytes, n declares nothing."""
    seen = []

    def m(c):
        seen.append(c)
        return {"outputs": 5.0, "chunk": 7.0}
    monkeypatch.setattr(cost, "_registry", lambda: ({}, {"m": m, "n": lambda c: {}}, {}))
    return seen


@pytest.mark.parametrize("config, want", [
    # nothing set: T = H = D = 1, G = 2 (diaggate), batch 1, no sequences, K = L = 1, no n_diag:
    # trace 1·2·1·(2·2 + 4)·8·1.5 = 192, chunk 16·2·1·12·8 = 3072
    ({}, 300e6 + 192 + 3072),
    # an unknown cell: G = 2; n_seq from n_seq (3), batch from probe (5):
    # data 3·4·3·8 = 288, trace 5·5·2·8·8·1.5 = 4800, chunk 16·5·2·12·8 = 15360
    ({"n_seq": 3, "D": 2, "T": 4, "H": 2, "cell": "weird", "probe": 5, "K": 3}, 300e6 + 288 + 4800 + 15360),
    # n_examples when there is no n_diag / n_seq: data 2·1·2·8 = 32
    ({"n_examples": 2}, 300e6 + 32 + 192 + 3072),
    # lstm (G = 4): trace 1·2·1·(8 + 4)·8·1.5 = 288; train + val sequences 1 + 2: data 3·1·2·8 = 48
    ({"cell": "lstm", "n_train": 1, "n_val": 2}, 300e6 + 48 + 288 + 3072),
    # instantaneous, 2 lags, n_diag 2, T 3, K 1: data 2·3·2·8 = 96, trace 1·4·1·8·8·1.5 = 384,
    # chunk 16·4·12·8 = 6144, outputs 4·2·2·8 = 128 + 3·2·2·3·8 = 288
    ({"statistic": "instantaneous", "n_diag": 2, "T": 3, "lags": [1, 2]}, 300e6 + 96 + 384 + 6144 + 128 + 288),
    # instantaneous without n_diag: no outputs; T 2: trace 1·3·8·8·1.5 = 288, chunk 16·3·12·8 = 4608
    ({"statistic": "instantaneous", "T": 2}, 300e6 + 288 + 4608),
    # not instantaneous: no per-time outputs; n_diag 2 with K unset (1): outputs 4·1·2·8 = 64, data 2·2·8 = 32
    ({"statistic": "sequence", "n_diag": 2}, 300e6 + 32 + 192 + 3072 + 64),
])
def test_peak_bytes_by_hand(memory, config, want):
    assert cost.peak_bytes(Run.make("x", **config)) == want


def test_peak_bytes_a_study_own_memory_terms(memory):
    # m: its outputs (5 bytes) replace the model's, its chunk (7 bytes) is added to the model's
    assert cost.peak_bytes(Run.make("m", n_diag=2)) == 300e6 + 32 + 192 + 3072 + 7 + 5
    assert [m.as_dict() for m in memory] == [{"n_diag": 2}]
    # n declares nothing: the model's outputs (4·1·2·8 = 64) and chunk stay
    assert cost.peak_bytes(Run.make("n", n_diag=2)) == 300e6 + 32 + 192 + 3072 + 64


# ------------------------------------------------------------------------------ _fit
def test_fit_a_row_without_a_term_counts_it_as_zero():
    # the first run has no diag work: times 1, 2, 3 = 1 + 0.1 · (0, 10, 20) exactly
    rows = [({"one": 1.0}, 1.0), ({"one": 1.0, "diag": 10.0}, 2.0), ({"one": 1.0, "diag": 20.0}, 3.0)]
    assert cost._fit(rows) == pytest.approx({"one": 1.0, "diag": 0.1}, rel=1e-9)


# ------------------------------------------------------------------------------ gemm_rate, cpu_seconds
def test_gemm_rate_program_and_environment(monkeypatch):
    seen = []

    def run(cmd, **kw):
        seen.append((cmd, kw))
        return types.SimpleNamespace(stdout="numpy says hi\n1234.5\n")
    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setenv("LWSIM_MUT_MARK", "kept")
    assert cost.gemm_rate() == 1234.5                              # the last line
    ((cmd, kw),) = seen
    assert cmd == [sys.executable, "-c",
                   "import time, numpy as np\n"
                   "a, b = np.random.default_rng(0).standard_normal((384, 256)), np.ones((256, 256))\n"
                   "best = float('inf')\n"
                   "for _ in range(20):\n"
                   "    t = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t)\n"
                   "print(2.0 * 384 * 256 ** 2 / max(best, 1e-9))\n"]
    env = kw.pop("env")
    assert kw == {"capture_output": True, "text": True, "timeout": 300, "check": True}
    assert env["LWSIM_MUT_MARK"] == "kept"                         # the caller's environment …
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        assert env[k] == "1"                                       # … capped at one thread


def test_cpu_seconds_collects_first_and_times_the_call(monkeypatch):
    events = []
    ticks = iter([5.0, 7.25])
    monkeypatch.setattr(cost, "gc", types.SimpleNamespace(collect=lambda: events.append("gc")))
    monkeypatch.setattr(cost, "time", types.SimpleNamespace(process_time=lambda: events.append("t") or next(ticks)))
    assert cost.cpu_seconds(lambda c: events.append(("fn", c)), {"a": 1}) == 2.25
    assert events == ["gc", "t", ("fn", {"a": 1}), "t"]


# ------------------------------------------------------------------------------ probes
@pytest.fixture
def fake_plan(monkeypatch):
    """plan(figures, preset, backend) by hand over two figures; records its calls."""
    calls = []
    b1, a1, a2 = Run.make("b", T=1), Run.make("a", T=1), Run.make("a", T=2)

    def plan(figures, preset, backend):
        calls.append((figures, preset, backend))
        if preset == "smoke":
            return {"g": [b1, a1, b1], "h": [a2]}
        if preset == "quick":
            return {"g": [Run.make("c", T=10, H=2)], "h": [Run.make("b", T=10), Run.make("a", T=10, H=1)]}
        raise AssertionError(preset)
    monkeypatch.setattr(FIG, "FIGURES", {"F9": None, "F1": None})
    monkeypatch.setattr(P, "plan", plan)
    monkeypatch.setattr(cost, "_registry", lambda: ({}, {}, {"a": [{"T": 20}, {"H": 3}]}))
    return calls, (b1, a1, a2)


def test_firsts_first_run_of_each_experiment(fake_plan):
    calls, (b1, a1, a2) = fake_plan
    assert cost._firsts("smoke", "numba") == {"b": b1, "a": a1}
    assert calls == [(["F9", "F1"], "smoke", "numba")]


def test_probes_by_hand(fake_plan):
    calls, (b1, a1, a2) = fake_plan
    warm, probes = cost._probes("numpy")
    assert warm == [b1, a1, a2]                                    # the smoke preset, each run once
    # by experiment name: its smoke run when the smoke preset has one, then the quick run with each
    # of the study's probe updates (none: the quick run itself)
    assert probes == [a1, Run.make("a", T=20, H=1), Run.make("a", T=10, H=3),
                      b1, Run.make("b", T=10),
                      Run.make("c", T=10, H=2)]
    assert [c[1:] for c in calls] == [("smoke", "numpy")] * 2 + [("quick", "numpy")]
    assert all(c[0] == ["F9", "F1"] for c in calls)


# ------------------------------------------------------------------------------ calibrate
@pytest.fixture
def calib(monkeypatch):
    """calibrate on stubs: probes whose CPU time is their t (a negative t fails), a GEMM rate of 4, a
    fit that returns its inputs, a process clock at 10 then 12.5 (start-up 2.5 s)."""
    seen = {"threads": [], "cpu": [], "fit": [], "warm": [], "backend": []}
    warm = [Run.make("cw", x=1), Run.make("cw", x=2, bad=True)]
    probes = [Run.make("cp", t=4.0), Run.make("cp", t=-1.0), Run.make("cp", t=1.0), Run.make("cq", t=0.2),
              Run.make("cq", t=0.25), Run.make("cq", t=0.05), Run.make("cq", t=3.0)]

    def run_warm(config):
        seen["warm"].append(config)
        if config.get("bad"):
            raise ValueError("no")
    monkeypatch.setitem(RN.EXPERIMENTS, "cw", run_warm)
    monkeypatch.setitem(RN.EXPERIMENTS, "cp", len)
    monkeypatch.setitem(RN.EXPERIMENTS, "cq", abs)
    monkeypatch.setattr(RN, "limit_threads", lambda n: seen["threads"].append(n))
    monkeypatch.setattr(cost, "_probes", lambda backend: seen["backend"].append(backend) or (warm, probes))

    def cpu(fn, config):
        seen["cpu"].append((fn, config["t"]))
        if config["t"] < 0:
            raise ValueError("gone")
        return config["t"]
    monkeypatch.setattr(cost, "cpu_seconds", cpu)
    monkeypatch.setattr(cost, "work", lambda run: ({"one": 1.0, "stats": 2 * run.config["t"]}, "ignored"))

    def fit(rows, floor=None):
        seen["fit"].append((rows, floor))
        return {"one": float(len(rows))}
    monkeypatch.setattr(cost, "_fit", fit)
    monkeypatch.setattr(cost, "gemm_rate", lambda: 4.0)
    ticks = iter([10.0, 12.5, 20.0, 21.0])
    monkeypatch.setattr(cost, "time", types.SimpleNamespace(process_time=lambda: next(ticks),
                                                            strftime=lambda fmt: f"<{fmt}>"))
    monkeypatch.setattr(cost.platform, "node", lambda: "probe-host")
    monkeypatch.setattr(cost.os, "cpu_count", lambda: 6)
    monkeypatch.setattr(cost, "print", lambda *a, **k: seen["print"].append((a, k)), raising=False)
    seen["print"] = []
    return seen


def test_calibrate_by_hand(tmp_path, monkeypatch, calib):
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning) as caught:
        record = cost.calibrate()                                  # defaults: runs/, numba, progress
    assert [str(w.message) for w in caught] == [
        "calibration warm-up cw {\"bad\": true, \"x\": 2} failed: ValueError('no')",
        "calibration probe cp {\"t\": -1.0} failed: ValueError('gone')"]
    assert calib["threads"] == [1] and calib["backend"] == ["numba"]
    assert calib["warm"] == [{"x": 1}, {"bad": True, "x": 2}]
    # repeats: 4.0 once (≥ 3 s); -1 fails at once, the next probes still run; 1.0 twice; 0.2 until
    # ≥ 0.5 s (3); 0.25 twice (0.5 exactly); 0.05 five times (the cap); 3.0 once (3 s exactly)
    assert [t for _, t in calib["cpu"]] == [4.0, -1.0, 1.0, 1.0, 0.2, 0.2, 0.2, 0.25, 0.25] + [0.05] * 5 + [3.0]
    assert [fn for fn, _ in calib["cpu"]] == [len] * 4 + [abs] * 11
    assert calib["fit"] == [([({"one": 1.0, "stats": 8.0}, 4.0), ({"one": 1.0, "stats": 2.0}, 1.0)],
                             {"train": 0.25, "diag": 0.25}),
                            ([({"one": 1.0, "stats": 0.4}, 0.2), ({"one": 1.0, "stats": 0.5}, 0.25),
                              ({"one": 1.0, "stats": 0.1}, 0.05), ({"one": 1.0, "stats": 6.0}, 3.0)],
                             {"train": 0.25, "diag": 0.25})]
    want = {"backend": "numba", "host": "probe-host", "cpus": 6, "date": "<%Y-%m-%d %H:%M:%S>", "startup_s": 2.5,
            "coef": {"cp": {"one": 2.0}, "cq": {"one": 4.0}}, "gemm_flops_per_s": 4.0,
            "probes": {"cp": [4.0, 1.0], "cq": [0.2, 0.25, 0.05, 3.0]}}
    assert record == want
    assert json.loads((tmp_path / "runs" / "calibration.json").read_text()) == want
    assert calib["print"] == [((line,), {"flush": True}) for line in [
        "  calibrate 1/7 cp             4.000 s",
        "  calibrate 3/7 cp             1.000 s",
        "  calibrate 4/7 cq             0.200 s",
        "  calibrate 5/7 cq             0.250 s",
        "  calibrate 6/7 cq             0.050 s",
        "  calibrate 7/7 cq             3.000 s"]]


def test_calibrate_quiet_backend_and_folder(tmp_path, calib):
    with pytest.warns(UserWarning):
        record = cost.calibrate(tmp_path / "cal", backend="numpy", progress=False)
    assert record["backend"] == "numpy" and calib["backend"] == ["numpy"]
    assert json.loads((tmp_path / "cal" / "calibration.json").read_text())["backend"] == "numpy"
    assert calib["print"] == []


# ------------------------------------------------------------------------------ calibration files
def test_reference_calibration_read_and_refused(tmp_path, monkeypatch):
    path = tmp_path / "ref.json"
    monkeypatch.setattr(cost, "REFERENCE_FILE", path)
    assert cost.reference_calibration() is None                    # missing
    path.write_text(json.dumps(REF))
    assert cost.reference_calibration() == dict(REF, reference=True)
    for bad in ("{not json", json.dumps({"host": "vm"}), json.dumps(["coef"]), json.dumps(None)):
        path.write_text(bad)
        assert cost.reference_calibration() is None, bad


def test_load_calibration_default_folder_and_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cost.load_calibration() is None                         # no runs/calibration.json
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "calibration.json").write_text(json.dumps(REF))
    assert cost.load_calibration() == REF                          # not marked "reference"
    for bad in ("{not json", json.dumps({"host": "vm"}), json.dumps(["coef"])):
        (tmp_path / "runs" / "calibration.json").write_text(bad)
        assert cost.load_calibration() is None, bad


# ------------------------------------------------------------------------------ dry run table and text
def test_dry_run_table_without_calibration_and_empty_group(tmp_path, memory):
    groups = {"g": [Run.make("x"), Run.make("x", n_examples=2)], "empty": []}
    rows = cost.dry_run_table(groups, tmp_path, None)
    # peak: the larger of 300003264 and 300003296 bytes; no calibration: no core-hours
    assert rows == [{"group": "g", "runs": 2, "cached": 0, "core_h": None, "core_h_todo": None,
                     "peak_gb": 0.300003296, "generic": []},
                    {"group": "empty", "runs": 0, "cached": 0, "core_h": None, "core_h_todo": None,
                     "peak_gb": 0.0, "generic": []}]
    rows = cost.dry_run_table({"empty": []}, tmp_path, {"coef": REF_COEF})
    assert rows[0]["core_h"] is None and rows[0]["peak_gb"] == 0.0
    (row,) = cost.dry_run_table({"g": [Run.make("x")]}, tmp_path, {"coef": REF_COEF})
    assert row["core_h"] == row["core_h_todo"] == 0.016540678386727816 / 3600
    assert row["generic"] == ["generic:fixed"]


def test_fmt_h_none():
    assert cost._fmt_h(None) == "n/a"


ROWS = [{"group": "a_main", "runs": 2, "cached": 1, "core_h": 0.5, "core_h_todo": 0.25, "peak_gb": 1.234,
         "generic": []},
        {"group": "new", "runs": 3, "cached": 0, "core_h": 2.0, "core_h_todo": 2.0, "peak_gb": 0.3,
         "generic": ["generic:a_main", "generic:fixed"]}]


def test_format_dry_run_reference_header_and_generic_flag():
    lines = cost.format_dry_run(ROWS, "paper", dict(REF, reference=True)).splitlines()
    assert lines == [
        "dry run: preset paper, reference machine: AMD EPYC (Zen 3, AVX2), 2 cpus, calibrated 2026-12-02; "
        "run --calibrate for yours",
        "| experiment | runs | cached | core-hours (all) | core-hours (to run) | peak memory / run |",
        "|---|---|---|---|---|---|",
        "| a_main | 2 | 1 | 0.5 | 0.25 | 1.23 GB |",
        "| new (generic estimate: generic:a_main, generic:fixed) | 3 | 0 | 2 | 2 | 0.30 GB |",
        "| total | 5 | 1 | 2.5 | 2.25 | 1.23 GB |"]
    # a reference record without a cpu name: its host
    ref = {k: v for k, v in REF.items() if k != "cpu"}
    assert cost.format_dry_run([], "quick", dict(ref, reference=True)).splitlines()[0] == (
        "dry run: preset quick, reference machine: vm, 2 cpus, calibrated 2026-12-02; run --calibrate for yours")


def test_format_dry_run_own_calibration_and_none():
    lines = cost.format_dry_run([], "smoke", REF).splitlines()
    assert lines[0] == ("dry run: preset smoke, calibration 2026-12-02 01:16:04 on vm (numba, 2 cpus; "
                        "+4 s numba start-up per worker)")
    assert lines[3] == "| total | 0 | 0 | 0 | 0 | 0.00 GB |"         # no rows
    rows = [dict(ROWS[0], core_h=None, core_h_todo=None)]
    lines = cost.format_dry_run(rows, "quick", None).splitlines()
    assert lines[0] == ("dry run: preset quick (no calibration: run `python -m lwsim.figures --calibrate` "
                        "for core-hours)")
    assert lines[3] == "| a_main | 2 | 1 | n/a | n/a | 1.23 GB |"
    assert lines[4] == "| total | 2 | 1 | n/a | n/a | 1.23 GB |"
