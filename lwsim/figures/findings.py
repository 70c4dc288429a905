"""FINDINGS.md: each finding of 05 §5.5 with the measured numbers and an honest verdict.

A finding whose figures were not rendered in this call is reported as "not run". The rules
below are deliberately simple and stated in the report, so a reader can check each verdict.
"""
from __future__ import annotations

import numpy as np

from ..io import atomic_write_bytes

FAST = ("constgate", "sharedgate")
SLOW = ("diaggate", "gru", "lstm")
SLOW_LAWS = ("power", "tempered")


def _growth(h):
    """Ĥ_N growth over the upper half of the N grid (last minus middle)."""
    h = np.asarray(h, float)
    return float(h[-1] - h[len(h) // 2])


def f1_f2(r):
    a1, a2 = r.get("A1"), r.get("A2")
    if a1 is None or a2 is None:
        return None
    out = []
    for cells, laws, want_growth, name in ((FAST, ("exponential",), False, 1), (SLOW, SLOW_LAWS, True, 2)):
        rows, ok_law, ok_growth = [], 0, 0
        for c in cells:
            if c not in a2:
                continue
            # BIC decides the regime: the tempered law nests the others and AIC over-selects it on
            # noisy envelopes (lwsim.stats.fit_decay); the AIC choice is reported beside it.
            sel, g = a2[c]["selected_bic"], _growth(a1[c]["H_N_mean"])
            fits = a2[c].get("fits", {})
            lam = fits.get("exponential", {}).get("params", {}).get("lambda", np.nan)
            tp = fits.get("tempered", {}).get("params", {})
            # the tempered law nests the exponential one (β = 0, k = 1): show its shape parameters
            # so a reader can see when "tempered" is an exponential with a small power prefactor
            rows.append(f"{c}: selected law {sel} by BIC ({a2[c]['selected']} by AIC; exponential λ = "
                        f"{lam:.3g}, tempered β = {tp.get('beta', np.nan):.2f}, k = {tp.get('k', np.nan):.2f}, "
                        f"ℓ_c = {tp.get('l_c', np.nan):.3g}), "
                        f"Ĥ_N growth over the upper half of the N grid {g:+.1f} lags")
            ok_law += sel in laws
            ok_growth += (g > 0) if want_growth else (g <= 0.1 * max(1.0, float(np.max(a1[c]["H_N_mean"]))))
        n = len(rows)
        verdict = ("reproduced" if ok_law == n and ok_growth == n else
                   "not reproduced" if ok_law == 0 and ok_growth == 0 else "inconclusive")
        out.append((name, verdict, rows, f"rule: law in {laws} by BIC for each cell and Ĥ_N "
                    + ("still growing" if want_growth else "saturated (growth ≤ 10% of its maximum)")))
    return out


def f3(r):
    a1, a2, a3 = r.get("A1"), r.get("A2"), r.get("A3")
    if not (a1 and a2 and a3):
        return None
    from scipy.stats import spearmanr
    cells = [c for c in a3 if c in a1]
    spread = [a3[c]["log10_tau_iqr"] for c in cells]
    hmax = [float(np.asarray(a1[c]["H_N_mean"])[-1]) for c in cells]
    rows = [f"{c}: IQR of log10 τ = {s:.3f}, Ĥ_N at the largest N = {h:.1f}" for c, s, h in zip(cells, spread, hmax)]
    rho = spearmanr(spread, hmax).statistic if len(cells) >= 3 else np.nan
    rows.append(f"Spearman ρ(spread, Ĥ_N) across cells = {rho:.2f}")
    verdict = "inconclusive" if not np.isfinite(rho) else ("reproduced" if rho > 0.5 else
                                                           "not reproduced" if rho < 0 else "inconclusive")
    return [(3, verdict, rows, "rule: Spearman ρ > 0.5 across cells")]


def f4(r):
    a6 = r.get("A6")
    if not a6:
        return None
    fast = [a6[c]["mean"] for c in FAST if c in a6]
    slow = [a6[c]["mean"] for c in SLOW if c in a6]
    rows = [f"{c}: mean α̂ = {a6[c]['mean']:.3f}, fraction α̂ < 1.9 = {a6[c]['fraction_below_1.9']:.2f}" for c in a6]
    if not fast or not slow:
        return [(4, "inconclusive", rows, "needs both groups")]
    diff = float(np.mean(fast) - np.mean(slow))
    rows.append(f"mean α̂ (constgate, sharedgate) − mean α̂ (diaggate, gru, lstm) = {diff:+.3f}")
    verdict = "reproduced" if diff > 0.02 else "not reproduced" if diff < -0.02 else "inconclusive"
    return [(4, verdict, rows, "rule: slow-decay cells have mean α̂ lower by > 0.02")]


def f5(r):
    a5 = r.get("A5")
    if not a5:
        return None
    p = a5["pooled"]
    rows = [f"pooled slope of log N̂ on −κ̂ log f: {p['slope']}, R² {p['r2']}, n {p['n']}"]
    rows += [f"{c}: slope {v['fit']['slope']}" for c, v in a5.items() if c != "pooled"]
    s = p["slope"]
    verdict = "inconclusive" if s is None else ("reproduced" if abs(s - 1) <= 0.3 else "not reproduced")
    return [(5, verdict, rows, "rule: |pooled slope − 1| ≤ 0.3")]


def f6(r):
    a11 = r.get("A11")
    if not a11:
        return None
    rhos = np.array([row["spearman"] for row in a11["table"]], float)
    rows = [f"{row['cell']}/{row['optimizer']}/seed {row['seed']}: Spearman ρ {row['spearman']:.3f}, "
            f"slope ratio {row['slope_ratio']:.3f}, off-diagonal energy {row['offdiag_mean']:.3f}"
            for row in a11["table"]]
    med = float(np.nanmedian(rhos))
    rows.append(f"median Spearman ρ = {med:.3f}")
    verdict = "reproduced" if med >= 0.9 else "not reproduced" if med < 0.5 else "inconclusive"
    return [(6, verdict, rows, "rule: median Spearman ρ ≥ 0.9 across cells × optimizers × seeds")]


def f7(r):
    b7 = r.get("B7")
    if not b7:
        return None
    slopes = [run["slope"] for runs in b7.values() for run in runs]
    rows = [f"{c}: slopes {[round(run['slope'], 3) for run in runs]}" for c, runs in b7.items()]
    verdict = "reproduced" if all(abs(s - 2) <= 0.1 for s in slopes) else "not reproduced"
    return [(7, verdict, rows, "rule: every log–log slope over the five smallest ε within 2 ± 0.1")]


def f8(r):
    b1, b4 = r.get("B1"), r.get("B4")
    if not b1 or not b4:
        return None
    rows, lagdep = [], 0
    for m, d in b1.items():
        keys = [k for k in d if k.startswith("mu_")]
        mu = np.asarray(d[keys[-1]], float)
        rows.append(f"B1 {m}: μ̃ at the largest lag (final checkpoint) = {mu[-1]:.3g}")
        lagdep += mu[-1] < 0.5
    wins, total = 0, 0
    for task, models in b4.items():
        if "diaggate" in models and "rnn" in models:
            a, b = np.nanmedian(models["diaggate"]["median_last"]), np.nanmedian(models["rnn"]["median_last"])
            rows.append(f"B4 {task}: median AI multi+SGD {a:.3g} vs plain+Adam {b:.3g}")
            wins += a >= b
            total += 1
    verdict = ("reproduced" if lagdep == len(b1) and total and wins > total / 2 else
               "not reproduced" if lagdep == 0 and wins <= total / 2 else "inconclusive")
    return [(8, verdict, rows, "rule: μ̃ < 0.5 at the largest lag for every gated model and multi-gate AI ≥ plain+Adam "
             "on most tasks")]


TITLES = {
    1: "ConstGate and SharedGate envelopes decay exponentially; their Ĥ_N saturates",
    2: "DiagGate, GRU and LSTM envelopes decay more slowly; their Ĥ_N keeps growing",
    3: "Broader time-scale spectra go with slower decay and larger Ĥ_N",
    4: "Heavier tails (smaller α̂) in the slow-decay cells",
    5: "Master proportionality slope near 1",
    6: "The first-order envelope tracks the exact one",
    7: "[B] Fréchet truncation error scales as ε²",
    8: "[B] Gates make the effective learning rate lag-dependent; multi-gate anisotropy ≥ plain RNN + Adam",
}


def findings(rendered):
    rows = {}
    for fn in (f1_f2, f3, f4, f5, f6, f7, f8):
        for item in fn(rendered) or []:
            rows[item[0]] = item
    return rows


def write_findings(rendered, preset, path):
    rows = findings(rendered)
    lines = [f"# Findings (05 §5.5), preset `{preset}`", "",
             "Generated by `python -m lwsim.figures`; numbers from the JSON files beside the figures.", "",
             "| # | finding | verdict |", "|---|---|---|"]
    for k, title in TITLES.items():
        lines.append(f"| {k} | {title} | {rows[k][1] if k in rows else 'not run'} |")
    lines.append("")
    for k, title in TITLES.items():
        lines.append(f"## {k}. {title}")
        if k not in rows:
            lines += ["", "Not run in this call (its figures were not requested).", ""]
            continue
        _, verdict, items, rule = rows[k]
        lines += ["", f"**{verdict}** — {rule}.", ""] + [f"- {it}" for it in items] + [""]
    atomic_write_bytes(path, "\n".join(lines).encode())
    return rows
