"""The experiments behind the figures (docs/experiments.md §5.3), one registered function each.

Every function takes one JSON configuration (a cell × seed × optimizer × task point of a preset)
and returns a flat dict: NumPy arrays (stored in .npz) and JSON values. Runs are independent and
deterministic for their configuration, so the runner can cache, parallelise and resume them.
"""
from __future__ import annotations

import numpy as np

import lwsim
from lwsim import diagnostics as dg
from lwsim import stats
from lwsim.tasks import make as make_task
from lwsim.train import train

from .runner import experiment
from .timing import part


def _train_kwargs(opt, lr, weight_decay=0.0):
    kw = {"lr": lr}
    if opt == "adamw":
        kw["weight_decay"] = weight_decay
    return kw


def _curves(res):
    c = res.curves
    out = {"curve_val_step": np.asarray(c.get("val_step", []), dtype=float),
           "curve_val_mse": np.asarray(c.get("val_mse", []), dtype=float),
           "curve_val_r2": np.asarray(c.get("val_r2", []), dtype=float)}
    if "epoch_train_loss" in c:
        out["curve_train_loss"] = np.asarray(c["epoch_train_loss"], dtype=float)
    else:
        out["curve_train_loss"] = np.asarray(c.get("train_loss", []), dtype=float)
    return out


def _train_dtype(c):
    """The preset's training dtype (``train_dtype``; float64 when absent). [A] and [B] trained in
    PyTorch's default float32; lwsim's presets do the same (docs/experiments.md §5.3)."""
    dt = c.get("train_dtype", "float64")
    if dt not in ("float32", "float64"):
        raise ValueError(f"train_dtype must be 'float32' or 'float64', got {dt!r}")
    return dt


def _float64(cell, res):
    """The trained cell and result in float64, cast once: diagnostics and statistics always run
    in float64 whatever the training dtype."""
    if cell.dtype == np.float64:
        return cell, res
    return cell.with_dtype("float64"), res.astype("float64")


def _a_cell(name, c):
    opts = {"layernorm": True, "readout": "every", "dtype": _train_dtype(c)}
    if name == "constgate":
        opts["s"] = c["s0"]
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


# ----------------------------------------------------------------------------- [A] main
def _a_params(cell, c):
    """Initial parameters for the preset's ``gate_init`` (presets.py, docs/experiments.md §5.3):
    "lwsim"/"final" paper_a with gate biases logit(s0) (GRU: update gate), LSTM forget bias
    logit(0.95) ("lwsim") or logit(0.5) ("final"); "v1" as "lwsim" but GRU/LSTM biases drawn from
    PyTorch's nn.Linear(D, H) default U(−1/√D, 1/√D) (the earlier code left them at PyTorch's init)."""
    mode = c.get("gate_init", "lwsim")
    if mode not in ("lwsim", "final", "v1"):
        raise ValueError(f"gate_init must be 'lwsim', 'final' or 'v1', got {mode!r}")
    params = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"], f0=0.5 if mode == "final" else 0.95)
    if mode == "v1" and cell.name in ("gru", "lstm"):
        rng = np.random.default_rng([c["seed"], 0x7631])
        bound = 1.0 / np.sqrt(c["D"])
        for k in sorted(params):
            if k.startswith("b_") and k != "b_out":
                params[k] = rng.uniform(-bound, bound, params[k].shape).astype(cell.dtype)
    return params


def _a_detection(samples, lags, c, **null):
    """One detection table per tail method in ``tail_methods`` (the first is the main one);
    ``null``: detection_table's noise/noise_samples/floors (docs/statistics.md §3.3)."""
    kw = dict(eps=c["eps"], seed=c["seed"], n_boot=c.get("n_boot", 200), min_samples=c.get("min_samples"),
              cap_budget=c.get("cap_budget", False), fit_subsample=c.get("fit_subsample"), **null)
    return {m: stats.detection_table(samples, lags, c["n_grid"], method=m, **kw)
            for m in c.get("tail_methods", ["auto"])}


def train_a_model(c):
    """The [A] training of a run configuration: multilag data, the cell, its preset's initial
    parameters, the optimizer, trained in the preset's ``train_dtype`` (docs/experiments.md §5.3).
    Returns (dataset, cell, TrainResult), the cell and result cast to float64."""
    with part("training"):
        task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"],
                         coefs=c["task_coefs"], sigma_y=c["sigma_y"])
        ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
        cell = _a_cell(c["cell"], c)
        res = train(cell, _a_params(cell, c), ds, optimizer=c["optimizer"],
                    optimizer_kwargs=_train_kwargs(c["optimizer"], c["lr"], c["weight_decay"]),
                    epochs=c["epochs"], batch_size=c["batch"], clip=c["clip"], backend=c["backend"],
                    seed=c["seed"], progress=False)
        cell, res = _float64(cell, res)
    return ds, cell, res


NULLS = ("lag", "full", "author")   # the detection nulls of docs/statistics.md §3.3 (a_windows)
# the author's floors one at a time (docs/fidelity.md): name → (float32 diagnostics, floors)
FLOOR_ABLATIONS = {"snr": (False, ("snr",)), "ecf": (False, ("ecf",)), "floors": (False, ("snr", "ecf")),
                   "f32": (True, ()), "author": (True, ("snr", "ecf"))}
# run keys of a detection table (stored with the suffix _<null> for every null but "lag") → its field
TABLE_KEYS = {"mean": "mean", "alpha_hat": "alpha", "sigma_hat": "sigma", "kappa_hat": "kappa", "n_hat": "n_hat",
              "n_star": "n_star", "reliable": "reliable", "h_n": "h_n"}
NULL_KEYS = (*TABLE_KEYS, "master")


def _float32_model(cell, params):
    """The model in float32 (the author's diagnostic arithmetic): exact for float32-trained weights."""
    return cell.with_dtype("float32"), {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}


def a_null_tables(cell, params, rates, x_diag, y_diag, c, nulls=NULLS, ablations=(), timer=None, **matched_kw):
    """The envelope, the matched statistic and a detection table per null and floor ablation for
    one trained float64 model (docs/statistics.md §3.3, docs/fidelity.md).

    Returns (env, ms, tables): tables[name] = {tail method: DetectionTable} for every name in
    ``nulls`` ("lag", "full", "author") and ``ablations`` (keys of FLOOR_ABLATIONS). "full" tests
    m̄ against the whole per-sequence update (MatchedStatistic.full_null); "author" is "lag" with
    the author's floors on float32 diagnostics. The float32 pass runs only when a name needs it.
    """
    import contextlib
    timer = timer or (lambda name: contextlib.nullcontext())
    lags = np.asarray(c["lags"])
    names = list(nulls) + [a for a in ablations if a not in nulls]
    bad = [n for n in names if n not in ("lag", "full") and n not in FLOOR_ABLATIONS]
    if bad:
        raise ValueError(f"unknown null(s) {bad}: use 'lag', 'full' or one of {sorted(FLOOR_ABLATIONS)}")
    statistic = matched_kw.get("statistic", "sequence")
    engine = "numpy" if statistic == "instantaneous" else "numba"
    common = dict(n_directions=c["K"], seed=c["seed"], orient=c.get("orient", False), engine=engine,
                  backend=c["backend"], progress=False, timer=timer, **matched_kw)
    env, ms = dg.envelope_and_matched(cell, params, x_diag, y_diag, rates, lags, full_noise="full" in names,
                                      **common)
    ms32 = None
    diag32 = c.get("diag_dtype", "float64")
    if diag32 not in ("float64", "float32"):
        raise ValueError(f"diag_dtype must be 'float64' or 'float32', got {diag32!r}")
    diag32 = diag32 == "float32"                       # the "lag" table on the author's arithmetic
    if diag32 or any(FLOOR_ABLATIONS[n][0] for n in names if n in FLOOR_ABLATIONS):
        cell32, p32 = _float32_model(cell, params)   # the matched statistic only: the envelope is float64's
        kw32 = {k: v for k, v in common.items() if k not in ("timer", "envelope_kwargs")}
        with timer("matched"):
            ms32 = dg.matched_statistic(cell32, p32, x_diag, y_diag, rates, lags, dtype="float32", **kw32)
    tables = {}
    with timer("tails"):
        for n in names:
            if n == "lag":
                tables[n] = _a_detection((ms32 if diag32 else ms).samples, lags, c)
            elif n == "full":
                signal, noise = ms.full_null()
                tables[n] = _a_detection(signal, lags, c, noise="full", noise_samples=noise)
            else:
                f32, floors = FLOOR_ABLATIONS[n]
                tables[n] = _a_detection((ms32 if f32 else ms).samples, lags, c, floors=floors)
    return env, ms, tables


def a_windows(cell, params, opt, x_diag, y_diag, c, nulls=NULLS):
    """Detection tables of one trained model under each null: {null: stats.DetectionTable}.

    "lag": each lag's statistic against its own (transported) spread; "full": against the spread of
    the whole per-sequence update along the same directions; "author": "lag" with the author's
    floors and float32 diagnostics (docs/statistics.md §3.3, docs/fidelity.md). ``c`` is a run
    configuration with the [A] keys lags, n_grid, eps, K, seed, backend (and the a_main options).
    The tables' ``h_n`` is Ĥ_N over ``c["n_grid"]``; Ĥ_N at any budget N is
    ``stats.learnability_window(t.lags, t.n_hat, N)``.
    """
    _, _, tables = a_null_tables(cell, params, opt, x_diag, y_diag, c, nulls=nulls)
    return {n: next(iter(t.values())) for n, t in tables.items()}


@experiment("a_main")
def a_main(c):
    """Train on multilag, then envelope, time scales, matched statistic, tail fits, Ĥ_N (A1–A10).

    The statistic, Λ, orientation, tail fits and fit window follow the preset's options (listed in
    presets.py; docs/experiments.md §5.3): absent options keep lwsim's defaults.
    """
    ds, cell, res = train_a_model(c)
    p, opt = res.params, res.optimizer
    lags = np.asarray(c["lags"])
    no_lambda = c.get("rates", "optimizer") == "none"          # Λ ≡ 1: the earlier code's statistic
    rates = 1.0 if no_lambda else opt
    statistic = c.get("statistic", "sequence")
    # one pass over the diagnostic sequences: each chunk's forward pass and Jacobian diagonal serve
    # the envelope and the matched statistic (counted under "envelope" in the profile); the nulls
    # and floor ablations of the preset (docs/statistics.md §3.3) on the same samples
    nulls = [n for n in c.get("nulls", ["lag"]) if not (n == "full" and statistic == "instantaneous")]
    env, ms, null_tables = a_null_tables(cell, p, rates, ds.x_diag, ds.y_diag, c, nulls=nulls,
                                         ablations=c.get("floor_ablations", []), timer=part,
                                         envelope_kwargs={"eta": 1.0 if no_lambda else None},
                                         statistic=statistic)
    with part("envelope"):
        f, f_gates = (env.f / c["H"], env.f_gates / c["H"]) if no_lambda else (env.f, env.f_gates)  # mean over q
        ts = dg.timescales(lags, env.m)
        tau = np.where(np.isinf(ts.tau), np.nan, ts.tau)
        rho = dg.rate_timescale_spearman(env.lam_neuron, ts.tau)
    tables = null_tables.pop("lag")
    main_method = next(iter(tables))
    det = tables[main_method]
    with part("fits"):
        if c.get("decay_window", "all") == "author":
            decay = stats.fit_decay(lags, f, floor=stats.envelope_floor(f), trim=0.02)
        else:
            decay = stats.fit_decay(lags, f)
        master = _master(det, f)
    null_out = {}
    for name, by_method in null_tables.items():  # the other nulls, keys with the suffix _<null>
        t = by_method[main_method]
        with part("fits"):
            mst = _master(t, f)
        null_out.update({f"{key}_{name}": getattr(t, field) for key, field in TABLE_KEYS.items()})
        null_out[f"master_{name}"] = mst
    B = ds.x_diag.shape[1]
    psi = (np.stack([s.reshape(B, -1).mean(axis=1) for s in ms.samples]) if statistic == "instantaneous"
           else ms.samples)                         # per-sequence means either way
    extra = {}
    for m, t in tables.items():
        if m != main_method:
            extra.update({f"alpha_hat_{m}": t.alpha, f"sigma_hat_{m}": t.sigma, f"kappa_hat_{m}": t.kappa,
                          f"n_hat_{m}": t.n_hat, f"n_star_{m}": t.n_star, f"reliable_{m}": t.reliable,
                          f"h_n_{m}": t.h_n})
    return {
        "lags": lags, "f": f, "f_gates": f_gates, "R": env.ratio, "m": env.m,
        "lam_mean": env.lam_mean, "lam_std": env.lam_std, "lam_neuron": env.lam_neuron,
        "tau": tau, "tau_r2": ts.r2, "tau_inf": np.isinf(ts.tau),
        "psi": psi, "mean": det.mean, "alpha_hat": det.alpha, "sigma_hat": det.sigma,
        "kappa_hat": det.kappa, "n_hat": det.n_hat, "n_star": det.n_star,
        "reliable": det.reliable, "n_grid": det.n_grid, "h_n": det.h_n,
        "n_samples": det.n_samples, "tail_methods": list(tables), **extra,
        "nulls": ["lag"] + list(null_tables), **null_out,
        "decay": _decay_dict(decay), "master": master,
        "lam_tau_spearman": float(rho[0]) if np.ndim(rho) else float(rho),
        "final_val_mse": float(res.curves["val_mse"][-1]) if res.curves.get("val_mse") else None,
        "final_val_r2": float(res.curves["val_r2"][-1]) if res.curves.get("val_r2") else None,
        **_curves(res),
    }


def _master(det, f):
    """The master fit on the detectable lags of one detection table (docs/statistics.md §3.5)."""
    finite = np.isfinite(det.n_hat)
    try:
        return stats.fit_master(det.n_hat[finite], det.kappa[finite], f[finite]).__dict__
    except ValueError as exc:                       # too few detectable lags at this size
        return {"error": str(exc)}


def _decay_dict(decay):
    return {"selected": decay.selected, "selected_bic": decay.selected_bic, "n": decay.n,
            "fits": {law: {"params": f.params, "r2": f.r2, "ssr": f.ssr, "aic": f.aic, "bic": f.bic}
                     for law, f in decay.fits.items()}}


# ----------------------------------------------------------------------------- [A] appendix
@experiment("a_fidelity")
def a_fidelity(c):
    """Exact vs first-order envelope on sinmix (A11)."""
    task = make_task("sinmix", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"])
    ds = task.dataset(c["n_train"], 0, c["n_seq"], seed=c["seed"])
    opts = {"layernorm": True}
    if c["cell"] == "constgate":
        opts["s"] = c["s"]
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], dtype=_train_dtype(c), **opts)
    params = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s"])
    with part("training"):
        res = train(cell, params, ds, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]},
                    epochs=c["epochs"], batch_size=c["batch"], backend=c["backend"], seed=c["seed"],
                    validate=False, progress=False)
        cell, res = _float64(cell, res)
    with part("envelope"):
        fid = dg.envelope_fidelity(cell, res.params, ds.x_diag, res.optimizer, c["lags"],
                                   n_times=c["n_time"], seed=c["seed"], backend=c["backend"], progress=False)
    return {"lags": np.asarray(fid.lags), "f_exact": fid.f_exact, "f_approx": fid.f_approx,
            "offdiag": fid.offdiag, "spearman": fid.spearman, "pearson_log": fid.pearson_log,
            "slope_exact": fid.slope_exact, "slope_approx": fid.slope_approx,
            "slope_ratio": fid.slope_ratio}


# ----------------------------------------------------------------------------- [A] theory checker
@experiment("a_theory")
def a_theory(c):
    """Planted model of docs/theory.md §4.4: X = c f(ℓ) + SαS(α, σ) per lag → Ĥ_N vs the derived H_N (A12).

    theory.planted.planted_check at its defaults (law parameter λ = 0.08 / β = 1 / γ = 1, C = σ = 1,
    signal gain and N grid from theory.planted.choose_grid); eps defaults to theory.planted.EPS.
    """
    from theory.planted import EPS, planted_check
    with part("tails"):                 # planted samples, their detection table and the exponent fit
        r = planted_check(c["law"], c["alpha"], eps=c.get("eps", EPS), seed=c["seed"],
                          n_lags=c["n_lags"], n_samples=c["n_samples"])
    v = r.verdict()
    return {"law": r.law, "alpha": r.alpha, "lags": r.lags, "f": r.f, "n_grid": r.n_grid,
            "h_n": r.h_measured, "h_theory": r.h_theory, "h_theory_lo": r.h_theory_lo,
            "h_theory_hi": r.h_theory_hi, "alpha_hat": np.asarray(r.table.alpha), "kappa": r.kappa,
            "param_name": r.param_name, "param": r.param, "signal_gain": r.c, "eps": r.eps,
            "exponent_measured": r.exponent_measured, "exponent_theory": r.exponent_theory,
            "frac_resolution": v["frac_resolution"], "frac_band": v["frac_band"],
            "check_passes": v["passes"]}


# ----------------------------------------------------------------------------- [B] S1
def _b_cell(name, c, readout="last"):
    opts = {"bias": False, "readout": readout, "dtype": _train_dtype(c)}
    if name == "constgate":
        opts["s"] = c.get("s", 0.8)
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


@experiment("b_s1")
def b_s1(c):
    """Effective-LR profiles over checkpoints on the adding task (B1–B3)."""
    task = make_task("adding", T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="torch")
    with part("training"):
        res = train(cell, params, task, optimizer="sgd", optimizer_kwargs={"lr": c["lr"]},
                    steps=c["steps"], batch_size=c["batch"], backend=c["backend"], seed=c["seed"],
                    checkpoints=c["checkpoints"], validate=False, progress=False)
        cell, res = _float64(cell, res)
    x_probe, _ = task.batch(c["probe"], c["seed"] + 7919)
    out = {}
    convs = c.get("conventions", "lwsim")
    convs = [convs] if isinstance(convs, str) else list(convs)
    for ck in c["checkpoints"]:
        # conventions "author": [B]'s approximations (docs/fidelity.md), keys with suffix _author
        # (unsuffixed when it is the only one); min_points 50 as [B]
        for conv in convs:
            sfx = "" if conv == convs[0] else f"_{conv}"
            with part("diagnostics"):
                prof = dg.lr_profile(cell, res.checkpoints[ck], x_probe, min_points=c.get("min_points", 10),
                                     backend=c["backend"], progress=False, conventions=conv, seed=c["seed"])
            out[f"mu{sfx}_{ck}"] = prof.mu
            for pr in prof.predictors.values():
                out[f"{pr.name}{sfx}_mu0_{ck}"] = pr.mu0
                out[f"{pr.name}{sfx}_mufit_{ck}"] = pr.mu_fit
                out[f"{pr.name}{sfx}_s_{ck}"] = float(pr.fit.s) if pr.fit is not None else float("nan")
                out[f"{pr.name}{sfx}_r2_{ck}"] = float(pr.fit.r2) if pr.fit is not None else float("nan")
        out["lags"] = prof.lags
        out["predictor_names"] = sorted(prof.predictors)
    return out


# ----------------------------------------------------------------------------- [B] S2
S2_GRAD_OFFSET = {"rnn": 0, "sharedgate": 1000, "diaggate": 2000}   # [B]'s per-model seed offsets


def _s2_author_rows(task, c, ck, rng):
    """[B]'s gradient batch at checkpoint ck: rounds of ``probe`` sequences seeded
    seed + ck + model offset + 100000 + rows so far, plus 1e−6 input jitter."""
    base = c["seed"] + ck + S2_GRAD_OFFSET.get(c["cell"], 0) + 100000
    xs, ys, done = [], [], 0
    while done < c["n_examples"]:
        xb, yb = task.batch(c["probe"], base + done)
        xs.append(xb + 1e-6 * rng.standard_normal(xb.shape))
        ys.append(yb)
        done += c["probe"]
    return (np.concatenate(xs, axis=1)[:, :c["n_examples"]], np.concatenate(ys, axis=1)[:, :c["n_examples"]])


@experiment("b_s2")
def b_s2(c):
    """Anisotropy of Jacobian products and of the gradient covariance over checkpoints (B4–B6).

    ``protocol`` "lwsim" (default): fresh batches, checkpoint c after c updates, triples and
    gradients on one batch of n_examples, ``sampling`` lwsim. "author" ([B]'s S2 code,
    docs/fidelity.md): training on one fixed batch (drawn from ``train_batch_seed``, the same for
    every seed as in [B]'s code) plus 1e−6 jitter, checkpoint c after c + 1 updates, Jacobians on
    a separate batch of ``probe`` sequences, triples drawn as [B] (sampling "author", new draw per
    checkpoint), gradient rows from new seeds per checkpoint and model. ``conventions``: a list
    of "lwsim"/"author"; keys of "author" carry the suffix ``_author``.
    """
    from lwsim.tasks import fixed_batch
    author = c.get("protocol", "lwsim") == "author"
    # task_inputs "author": [B]'s inputs (zero extra channels; ar2: U(0,1), no burn-in); adding has one kind
    kw = {} if c["task"] == "adding" else {"inputs": c.get("task_inputs", "lwsim")}
    task = make_task(c["task"], T=c["T"], D=c["D"], seed=c["seed"], **kw)
    cell = _b_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="torch")
    shift = 1 if author else 0                   # [B]: checkpoint "it" is saved after it + 1 updates
    train_data = fixed_batch(task, c["batch"], c.get("train_batch_seed", 0)) if author else task
    with part("training"):
        res = train(cell, params, train_data, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]},
                    steps=max(c["checkpoints"]) + shift, batch_size=c["batch"], backend=c["backend"],
                    seed=c["seed"], checkpoints=[ck + shift for ck in c["checkpoints"]], validate=False,
                    progress=False)
        cell, res = _float64(cell, res)
    if author:
        x_probe, _ = task.batch(c["probe"], c["seed"])
    else:
        x, y = task.batch(c["n_examples"], c["seed"] + 104729)
        x_probe = x
    lags = [l for l in c["lags"] if l < c["T"]]
    out = {"lags": np.asarray(lags)}
    r = min(10, c["H"])
    n_energy = min(16, c["H"])
    rng = np.random.default_rng([c["seed"], 0x52])
    for i, ck in enumerate(c["checkpoints"]):
        p = res.checkpoints[ck + shift]
        if author:
            x, y = _s2_author_rows(task, c, ck, rng)
        with part("diagnostics"):
            G, _ = dg.per_example_gradients(cell, p, x, y, backend=c["backend"], progress=False)
        for conv in c.get("conventions", ["lwsim"]):
            sfx = "" if conv == "lwsim" else f"_{conv}"
            with part("diagnostics"):
                ja = dg.jacobian_anisotropy(cell, p, x_probe, lags, n_samples=c["n_triples"],
                                            seed=c["seed"] + 7919 * i if author else c["seed"], r=r,
                                            n_energy=n_energy, backend=c["backend"], progress=False,
                                            conventions=conv, sampling="author" if author else "lwsim")
                ga = dg.gradient_covariance_metrics(G, r=min(10, c["n_examples"] - 1), conventions=conv)
            out[f"ai{sfx}_{ck}"], out[f"ce{sfx}_{ck}"] = ja.ai_median, ja.ce_median
            out[f"gai{sfx}_{ck}"], out[f"gce{sfx}_{ck}"] = float(ga.ai), float(ga.ce)
            out[f"gpr{sfx}_{ck}"] = float(ga.pr)
    return out


# ----------------------------------------------------------------------------- [B] expansion
@experiment("b_expansion")
def b_expansion(c):
    """Fréchet truncation error of Jacobian products along a trajectory (B7, B8)."""
    T, D, H = c["T"], c["D"], c["H"]
    rng = np.random.default_rng(c["seed"])
    t = np.linspace(0, 12, T)
    fk = np.linspace(0.03, 0.09, D)
    # phases: lwsim U(0, 2π); "author": N(0, 1), as [B]'s appendix code draws them
    phase = rng.standard_normal(D) if c.get("phases", "lwsim") == "author" else rng.uniform(0, 2 * np.pi, D)
    x = (np.sin(fk[None, :] * t[:, None] + phase) + 0.05 * rng.standard_normal((T, D)))[:, None, :]
    cell = lwsim.make_cell(c["cell"], D, H, bias=False, readout="last")
    params = cell.init_params(seed=c["seed"], scheme="normal", sigma_w=c["sigma_w"])
    eps = dg.expansion.AUTHOR_EPS if c.get("eps_grid", "lwsim") == "author" else dg.expansion.DEFAULT_EPS
    with part("diagnostics"):
        fc = dg.frechet_check(cell, params, x, eps, conventions=c.get("conventions", "lwsim"))
    return {"eps": fc.eps, "E": np.asarray(fc.E).reshape(len(fc.eps), -1)[:, 0],
            "C2": np.asarray(fc.C2).reshape(len(fc.eps), -1)[:, 0],
            "slope": float(np.ravel(fc.slope)[0]), "remainder": float(np.ravel(fc.remainder)[0]),
            "norm_A": np.ravel(fc.norm_A), "norm_B": np.ravel(fc.norm_B), "ratio": np.ravel(fc.ratio)}


from . import experiments_fidelity  # noqa: E402,F401  (registers a_conventions: A13, docs/fidelity.md)
from . import experiments_behaviour  # noqa: E402,F401  (registers a_behaviour: A15, docs/experiments.md §5.6)
