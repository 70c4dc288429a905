"""Tests of lwsim/figures/cost.py (laid out like the code: docs/testing.md).

Mutation-testing kills for lwsim/figures/cost.py, the dry-run cost model (issue 32,
docs/testing.md). Numbers by hand: the cost terms from the sizes, the coefficients copied from
lwsim/data/reference_calibration.json (frozen here, so that a recalibration does not move them);
the calibration loop on stubbed probes, clocks and fit. No real probe runs.

--dry-run without set-up (docs/cluster.md, "Dry-run numbers"): the reference calibration
shipped in lwsim/data is used, labelled, and no cell reads "n/a".

CLI of the cluster/cost options (docs/cluster.md): --dry-run counts and core-hours on an empty
and a partly filled cache, cost-model arithmetic, --scheduler errors, LWSIM_SCHEDULER.

The diagnostic pass streams over sequence chunks (docs/cluster.md): its peak working memory
does not grow with the number of diagnostic sequences beyond the per-sequence outputs
((K + 3) · n_lags values each), far below one (T, sequences, H) array.

The run profile and the cost model on cases that separate right from wrong
(lwsim/figures/timing.py, docs/experiments.md §5.3; lwsim/figures/cost.py, docs/cluster.md).

Profile: a scripted clock (wall and numba-compile seconds advanced by hand, binary fractions so
every sum is exact) with compilation inside parts nested two deep, inside a top-level part and
outside every part; then the same with a real numba compilation inside a nested part. Cost model:
the fallbacks for experiments without a model on skewed fixed-cost sets (median ≠ mean, an even
count where the median interpolates), and an a_main-shaped experiment when a_main itself has no
calibration."""


import json
import os
import subprocess
import sys
import types

import pytest

from lwsim.figures import cost, drawing as FIG, plan as P, runner as RN
from lwsim.figures.plan import plan
from lwsim.figures.run import Run
from lwsim.figures.runner import Run


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


ROWS = [{"group": "a_main", "runs": 2, "cached": 1, "core_h": 0.5, "core_h_todo": 0.25, "peak_gb": 1.234,
         "generic": []},
        {"group": "new", "runs": 3, "cached": 0, "core_h": 2.0, "core_h_todo": 2.0, "peak_gb": 0.3,
         "generic": ["generic:a_main", "generic:fixed"]}]


# ----------------------------------------------------------------------------- cost model
A_MAIN_sharp_profile_cost = dict(T=10, D=2, H=4, n_train=8, n_val=2, n_diag=6, epochs=3, batch=4, K=2, lags=[1, 2, 3],
              n_grid=[25, 50], cell="gru", seed=0)


# ----------------------------------------------------------------------------------------------
# work
# ----------------------------------------------------------------------------------------------


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
    # private: the fit's public caller, calibrate(), times real probe runs and a GEMM subprocess
    rows = [({"one": 1.0, "diag": d}, 0.09 + 1e-7 * d) for d in (1e4, 3e5, 1e6)]
    assert cost._fit(rows) == pytest.approx({"one": 0.09, "diag": 1e-7}, rel=1e-6)


def test_generic_a_main_needs_every_key():
    partial = {k: v for k, v in A_MAIN_sharp_profile_cost.items() if k != "n_diag"}   # not a_main-shaped
    assert cost.work(Run.make("new_main", **partial)) == ({"one": 1.0}, "generic:fixed")


# ----------------------------------------------------------------------------------------------
# peak_bytes
# ----------------------------------------------------------------------------------------------


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


def test_dry_run_peak_memory_bound_at_final_paper_size():
    """12000 diagnostic sequences × T 1536 × 192 lags × K 50: the model's diagnostic part is one
    chunk of factor arrays plus (K + 3) · L · n_diag outputs, not K · L · n_diag · T."""
    c = dict(T=1536, D=16, H=256, n_train=8000, n_val=1000, n_diag=12000, batch=512, K=50,
             lags=list(range(8, 8 + 192)), cell="lstm", epochs=1500, n_grid=[25], seed=0)
    run = Run.make("a_main", **c)
    b = cost.peak_bytes(run)
    outputs = (50 + 3) * 192 * 12000 * 8
    chunk = cost.CHUNK * 1537 * 256 * 12 * 8
    assert b == pytest.approx(cost.BASELINE_BYTES + (8000 + 1000 + 12000) * 1536 * 17 * 8
                              + 512 * 1537 * 256 * 12 * 8 * 1.5 + chunk + outputs)
    assert chunk + outputs < 50 * 192 * 12000 * 1536 * 8 / 100      # ≪ the (K, lags, sequences, T) array


# ----------------------------------------------------------------------------------------------
# _firsts
# ----------------------------------------------------------------------------------------------


def test_firsts_first_run_of_each_experiment(fake_plan):
    # private: its one public caller, calibrate(), times every probe run and a GEMM subprocess
    calls, (b1, a1, a2) = fake_plan
    assert cost._firsts("smoke", "numba") == {"b": b1, "a": a1}
    assert calls == [(["F9", "F1"], "smoke", "numba")]


# ----------------------------------------------------------------------------------------------
# _probes
# ----------------------------------------------------------------------------------------------


def test_probes_by_hand(fake_plan):
    # private: its one public caller, calibrate(), times every probe run and a GEMM subprocess
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


# ----------------------------------------------------------------------------------------------
# _fit
# ----------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------ _fit
def test_fit_a_row_without_a_term_counts_it_as_zero():
    # private: the fit's public caller, calibrate(), times real probe runs and a GEMM subprocess
    # the first run has no diag work: times 1, 2, 3 = 1 + 0.1 · (0, 10, 20) exactly
    rows = [({"one": 1.0}, 1.0), ({"one": 1.0, "diag": 10.0}, 2.0), ({"one": 1.0, "diag": 20.0}, 3.0)]
    assert cost._fit(rows) == pytest.approx({"one": 1.0, "diag": 0.1}, rel=1e-9)


def test_calibration_fit_recovers_planted_rates():
    # private: the fit's public caller, calibrate(), times real probe runs and a GEMM subprocess
    rows = [({"one": 1.0, "train": t, "stats": s}, 0.2 + 1e-3 * t + 5e-4 * s)
            for t, s in [(10, 0), (100, 10), (1000, 30), (30, 3000)]]
    coef = cost._fit(rows)
    assert coef == pytest.approx({"one": 0.2, "train": 1e-3, "stats": 5e-4}, rel=1e-6)


def test_calibration_fit_floor_on_flop_rates():
    # private: the fit's public caller, calibrate(), times real probe runs and a GEMM subprocess
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


# ----------------------------------------------------------------------------------------------
# gemm_rate
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# cpu_seconds
# ----------------------------------------------------------------------------------------------


def test_cpu_seconds_collects_first_and_times_the_call(monkeypatch):
    events = []
    ticks = iter([5.0, 7.25])
    monkeypatch.setattr(cost, "gc", types.SimpleNamespace(collect=lambda: events.append("gc")))
    monkeypatch.setattr(cost, "time", types.SimpleNamespace(process_time=lambda: events.append("t") or next(ticks)))
    assert cost.cpu_seconds(lambda c: events.append(("fn", c)), {"a": 1}) == 2.25
    assert events == ["gc", "t", ("fn", {"a": 1}), "t"]


# ----------------------------------------------------------------------------------------------
# calibrate
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# reference_calibration
# ----------------------------------------------------------------------------------------------


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


def test_reference_calibration_is_shipped_and_marked():
    cal = cost.reference_calibration()
    assert cal["reference"] is True and cal["cpu"].startswith("AMD EPYC")
    assert {"a_main", "a_behaviour", "b_s2"} <= set(cal["coef"])
    assert cal["gemm_flops_per_s"] > 1e9


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


# ----------------------------------------------------------------------------------------------
# load_calibration
# ----------------------------------------------------------------------------------------------


def test_load_calibration_default_folder_and_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cost.load_calibration() is None                         # no runs/calibration.json
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "calibration.json").write_text(json.dumps(REF))
    assert cost.load_calibration() == REF                          # not marked "reference"
    for bad in ("{not json", json.dumps({"host": "vm"}), json.dumps(["coef"])):
        (tmp_path / "runs" / "calibration.json").write_text(bad)
        assert cost.load_calibration() is None, bad


# ----------------------------------------------------------------------------------------------
# predict_seconds
# ----------------------------------------------------------------------------------------------


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


def test_generic_fixed_cost_is_the_median_of_a_skewed_set():
    # fixed costs 1, 2, 30: median 2 (mean 11); the "one" term only, whatever the other rates
    cal = {"coef": {"a_theory": {"one": 1.0, "stats": 5.0}, "b_s1": {"one": 30.0, "train": 1.0},
                    "b_expansion": {"one": 2.0, "diag": 3.0}}}
    assert cost.predict_seconds(Run.make("new_thing", x=1), cal) == (2.0, "generic:fixed")
    # an even count: 1, 2, 4, 100 → 3 (interpolated; lower median 2, upper 4, mean 26.75)
    cal["coef"] = {"a": {"one": 1.0}, "b": {"one": 100.0}, "c": {"one": 4.0}, "d": {"one": 2.0}}
    assert cost.predict_seconds(Run.make("new_thing", x=1), cal) == (3.0, "generic:fixed")


def test_generic_a_main_shape_without_a_main_calibration():
    # an a_main-shaped experiment when only other experiments are calibrated: the median fixed
    # cost, not zero seconds
    cal = {"coef": {"a_theory": {"one": 1.0}, "b_s1": {"one": 30.0}, "b_expansion": {"one": 2.0}}}
    seconds, model = cost.predict_seconds(Run.make("new_main", **A_MAIN_sharp_profile_cost), cal)
    assert (seconds, model) == (2.0, "generic:fixed")
    # with a_main calibrated, its rates (not the median fixed cost)
    cal["coef"]["a_main"] = {"one": 0.5, "train": 1e-6, "steps": 1e-3}
    w, _ = cost.work(Run.make("a_main", **A_MAIN_sharp_profile_cost))
    assert cost.predict_seconds(Run.make("new_main", **A_MAIN_sharp_profile_cost), cal) == (
        pytest.approx(0.5 + 1e-6 * w["train"] + 1e-3 * w["steps"]), "generic:a_main")


def test_uncalibrated_experiment_with_a_model_is_flagged_generic():
    # b_expansion has a work model but no coefficients here: median fixed cost, flagged
    cal = {"coef": {"a_theory": {"one": 1.0}, "b_s1": {"one": 30.0}, "a_main": {"one": 4.0}}}
    run = Run.make("b_expansion", T=12, H=6, seed=0)
    assert cost.predict_seconds(run, cal) == (4.0, "generic:fixed")


# ----------------------------------------------------------------------------------------------
# dry_run_table
# ----------------------------------------------------------------------------------------------


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


def test_dry_run_table_flags_generic_and_sums_uncached(tmp_path):
    cal = {"coef": {"a_theory": {"one": 1.0}, "b_s1": {"one": 30.0}, "b_expansion": {"one": 2.0}}}
    groups = {"new": [Run.make("new_thing", x=i) for i in range(3)]}
    from lwsim.figures import runcache
    import numpy as np
    runcache.save(tmp_path, groups["new"][1], {"y": np.zeros(1)})
    (row,) = cost.dry_run_table(groups, tmp_path, cal)
    assert row["cached"] == 1 and row["generic"] == ["generic:fixed"]
    assert row["core_h"] == pytest.approx(3 * 2.0 / 3600) and row["core_h_todo"] == pytest.approx(2 * 2.0 / 3600)


# ----------------------------------------------------------------------------------------------
# _fmt_h
# ----------------------------------------------------------------------------------------------


def test_fmt_h_none():
    # a group without a calibrated estimate: its core-hours read "n/a" (the total then too)
    row = {"group": "g", "runs": 2, "cached": 0, "core_h": None, "core_h_todo": 0.000556, "peak_gb": 1.0, "generic": []}
    assert cost.format_dry_run([row], "quick", None).splitlines()[3:] == [
        "| g | 2 | 0 | n/a | 0.000556 | 1.00 GB |", "| total | 2 | 0 | n/a | 0.000556 | 1.00 GB |"]


# ----------------------------------------------------------------------------------------------
# format_dry_run
# ----------------------------------------------------------------------------------------------


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
