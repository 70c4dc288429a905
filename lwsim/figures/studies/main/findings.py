"""Findings 1–5 of the [A] main grid (docs/experiments.md §5.5): the rules, with the measured
numbers beside each verdict; and the trainings' validation R² (A8)."""
from __future__ import annotations

import numpy as np

from ....stats import verdicts as V
from ...common import _fmt, _growth, spread_text

FAST = ("constgate", "sharedgate")
SLOW = ("diaggate", "gru", "lstm")
SLOW_LAWS = ("power", "tempered")

TITLES = {
    1: "ConstGate and SharedGate envelopes decay exponentially; their Ĥ_N saturates",
    2: "DiagGate, GRU and LSTM envelopes decay more slowly; their Ĥ_N keeps growing",
    3: "Broader time-scale spectra go with slower decay and larger Ĥ_N",
    4: "Heavier tails (smaller α̂) in the slow-decay cells",
    5: "Master proportionality slope near 1",
}


GROWTH_MARGIN = 0.10      # 1c/2b: growth over the upper half of the N grid, share of max(1, max Ĥ_N)
BOX = 0.2                 # 1a/2a: |k − 1| ≤ 0.2 and |β| ≤ 0.2 is the exponential class
FACTOR_LOG2 = 1.0         # 1b: measured growth rate within a factor 2 of [A]'s 1/(κ̂ λ)
RHO_MARGIN = 0.3          # 3: Spearman ρ > 0.3 for both halves
ALPHA_GAP = 0.02          # 4: mean α̂ fast − slow > 0.02
SLOPE_MARGIN = 0.3        # 5: |slope − 1| ≤ 0.3
RATIO_FLOOR_LOG2 = -6.0   # 1b: a non-positive measured slope counts as a ratio of 1/64
NULL_OF_PART = {"1b": "full", "1c": "author", "2b": "full", "3": "full"}


def view(r, null):
    """(data, null used): ``r`` with the figures of ``null``'s detection table (keys "<id>_<null>",
    present in the headline's data) in place of the lag null's; data of a single null (the section
    "under each null", whose keys carry no suffix) is returned as it is."""
    keys = [k for k in ("A1", "A4", "A5", "A6", "A7", "A14") if f"{k}_{null}" in r]
    if null == "lag" or not keys:
        return r, None if null != "lag" else "lag"
    return {**r, **{k: r[f"{k}_{null}"] for k in keys}}, null


def growth_share(h, last_lag):
    """Ĥ_N's rise over the upper half of the N grid / max(1, max Ĥ_N); None when Ĥ_N reaches the
    last lag of the grid in that half (capped: the growth cannot be read)."""
    h = np.asarray(h, float)
    if last_lag is not None and np.nanmax(h[len(h) // 2:]) >= last_lag:
        return None
    return _growth(h) / max(1.0, float(np.max(h)))


def growth_rate_log2(h, n, lam, kappa, last_lag):
    """1b's effect: log2 of (least-squares slope of Ĥ_N on ln N over the points with 0 < Ĥ_N < the
    last lag, at least 3) × κ̂ λ, [A]'s rate being 1/(κ̂ λ); None when it cannot be read."""
    h, n = np.asarray(h, float), np.asarray(n, float)
    if lam is None or kappa is None or not (np.isfinite(lam) and lam > 0 and np.isfinite(kappa) and kappa > 0):
        return None
    ok = (h > 0) & (h < (np.inf if last_lag is None else last_lag))
    if ok.sum() < 3:
        return None
    slope = float(np.polyfit(np.log(n[ok]), h[ok], 1)[0])
    ratio = slope * kappa * lam
    return RATIO_FLOOR_LOG2 if ratio <= 2.0 ** RATIO_FLOOR_LOG2 else float(np.log2(ratio))


def _seed_list(a, key):
    v = a.get(key)
    return [] if v is None else list(v)


def _nested(a2c):
    return [t if t and "error" not in t else None for t in a2c.get("per_seed_nested_exp", [])]


def _last_lag(a2c):
    lags = a2c.get("lags")
    return float(np.asarray(lags, float)[-1]) if lags is not None and len(lags) else None


def _kappas(a14, c):
    return [p.get("kappa_median") for p in _seed_list((a14 or {}).get(c, {}), "per_seed")]


def _part(label, iv, verdict, region, side):
    return f"{label}: {iv.text()} → {verdict} (region {region}; {side})"


def gate(r):
    """None, or why [A]'s verdicts are withheld: the networks' final validation R² as a share of the
    ceiling (A8), each cell's seed mean at least 50% (docs/experiments.md §5.5.1)."""
    a8 = r.get("A8")
    if not a8:
        return "no A8 (the networks' R²) in this call"
    shares = {c: [None if v is None or not d.get("r2_ceiling") else v / d["r2_ceiling"]
                  for v in d.get("final_val_r2", [])] for c, d in a8.items()}
    return V.ceiling_gate(shares)


def _gated(verdict, why):
    return V.WITHHELD if why else verdict


def f1_f2(r):
    """Findings 1 (1a, 1b, 1c) and 2 (2a, 2b) by the scheme of docs/experiments.md §5.5.2."""
    a1, a2 = r.get("A1"), r.get("A2")
    if a1 is None or a2 is None:
        return None
    why = gate(r)
    full, full_name = view(r, "full")
    auth, auth_name = view(r, "author")
    out = []
    for name, cells in ((1, FAST), (2, SLOW)):
        rows, parts = [], {"a": [], "b": [], "c": []}
        for c in cells:
            if c not in a2 or c not in a1:
                continue
            nested = _nested(a2[c])
            k_iv = V.seed_interval([t and t["k"] for t in nested])
            b_iv = V.seed_interval([t and t["beta"] for t in nested])
            if name == 1:
                va = V.all_of([V.decide(k_iv, within=(1.0, BOX)), V.decide(b_iv, within=(0.0, BOX))])
            else:
                slow = k_iv.defined and k_iv.hi < 1 - BOX or b_iv.defined and b_iv.lo > BOX
                fast_ok = k_iv.defined and b_iv.defined and k_iv.lo >= 1 - BOX and b_iv.hi <= BOX
                va = V.REPRODUCED if slow else V.NOT_REPRODUCED if fast_ok else V.INCONCLUSIVE
            parts["a"].append(va)
            last = _last_lag(a2[c])
            rows.append(f"{c} — {name}a decay class: k {k_iv.text()}, β {b_iv.text()} → {va} "
                        f"(exponential class: |k − 1| ≤ {BOX} and |β| ≤ {BOX}"
                        + ("" if name == 1 else f"; slower: k's interval below {1 - BOX:g} or β's above {BOX}") + ")")
            # growth under the full null: 2b directional, 1b against [A]'s own rate
            fa1 = full["A1"].get(c, a1[c])
            hs = _seed_list(fa1, "H_N_seeds")
            if name == 1:
                lams = _seed_list(a2[c], "per_seed_lambda")
                kaps = _kappas(full.get("A14"), c)
                eff = [growth_rate_log2(h, fa1["N"], lam, kap, last)
                       for h, lam, kap in zip(hs, lams + [None] * len(hs), kaps + [None] * len(hs))]
                iv = V.seed_interval(eff)
                vb = V.decide(iv, within=(0.0, FACTOR_LOG2))
                parts["b"].append(vb)
                rows.append(f"{c} — 1b " + _part(f"log2(measured Ĥ_N rate / [A]'s 1/(κ̂λ)) under the "
                                                 f"{full_name + ' null' if full_name else 'null of this section'}", iv, vb, "|log2 ratio| ≤ 1",
                                                 V.seeds_on_side(eff, within=(0.0, FACTOR_LOG2))))
                ah = _seed_list(auth["A1"].get(c, a1[c]), "H_N_seeds")
                g = [growth_share(h, last) for h in ah]
                ivc = V.seed_interval(g)
                vc = V.decide(ivc, at_most=GROWTH_MARGIN)
                parts["c"].append(vc)
                floor_lag = _floor_lag(auth.get("A7", {}).get(c))
                rows.append(f"{c} — 1c " + _part(f"Ĥ_N growth share under the {auth_name + ' null' if auth_name else 'null of this section'}",
                                                 ivc, vc, f"≤ {GROWTH_MARGIN}", V.seeds_on_side(g, at_most=GROWTH_MARGIN))
                            + f"; σ̂ reaches the floor 1e−12 first at lag {floor_lag} (first seed)")
            else:
                g = [growth_share(h, last) for h in hs]
                iv = V.seed_interval(g)
                vb = V.decide(iv, above=GROWTH_MARGIN)
                parts["b"].append(vb)
                rows.append(f"{c} — 2b " + _part(f"Ĥ_N growth share under the {full_name + ' null' if full_name else 'null of this section'}",
                                                 iv, vb, f"> {GROWTH_MARGIN}", V.seeds_on_side(g, above=GROWTH_MARGIN)))
        if not rows:
            continue
        sub = {p: V.all_of(v) for p, v in parts.items() if v}
        verdict = _gated(V.all_of(sub.values()), why)
        rows.insert(0, "parts: " + ", ".join(f"{name}{p} {v}" for p, v in sub.items())
                    + (f"; **withheld**: {why}" if why else ""))
        out.append((name, verdict, rows,
                    "rule (docs/experiments.md §5.5.2): each part's 95% seed interval against its region, "
                    "AND over parts and cells" + ("; withheld below 50% of the R² ceiling" if why else "")))
    return out


def _floor_lag(a7c):
    if not a7c:
        return "n/a"
    s, lags = np.asarray(a7c.get("sigma_hat", []), float), a7c.get("lags", [])
    hit = np.flatnonzero(s <= 1e-12)
    return f"{lags[hit[0]]:g}" if hit.size else "none (never)"


def _nested_text(t):
    """One seed's nested test (stats.nested_exponential) in a line."""
    return (f"ΔBIC {t['delta_bic']:+.1f}, β {t['beta']:.2f} [{t['beta_ci'][0]:.2f}, {t['beta_ci'][1]:.2f}], "
            f"k {t['k']:.2f} [{t['k_ci'][0]:.2f}, {t['k_ci'][1]:.2f}]" + (" (box edge)" if t["at_edge"] else "")
            + (" → exponential" if t["exponential_ok"] else " → slower than exponential" if t["slower"]
               else " → not exponential"))


def f3(r):
    """Finding 3: per seed across the seed's runs, Spearman ρ of the IQR of log10 τ with −λ and with
    Ĥ_N (full null) at the largest N; each half's seed interval above 0.3, AND."""
    a1, a2, a3 = r.get("A1"), r.get("A2"), r.get("A3")
    if not (a1 and a2 and a3):
        return None
    full, full_name = view(r, "full")
    cells = [c for c in a3 if c in a1 and c in a2]
    iqr = {c: _seed_list(a3[c], "log10_tau_iqr_seeds") for c in cells}
    lam = {c: _seed_list(a2[c], "per_seed_lambda") for c in cells}
    hl = {c: [float(np.asarray(h, float)[-1]) for h in _seed_list(full["A1"].get(c, a1[c]), "H_N_seeds")]
          for c in cells}
    n = min((len(iqr[c]) for c in cells), default=0)
    n = min([n] + [len(lam[c]) for c in cells] + [len(hl[c]) for c in cells]) if cells else 0
    rows = [f"{c}: IQR of log10 τ per seed {spread_text(iqr[c])}, −λ {spread_text([-x for x in lam[c]])}, "
            f"Ĥ_N at the largest N ({full_name or 'lag'} null) {spread_text(hl[c])}" for c in cells]
    if len(cells) < 3 or n == 0:
        return [(3, _gated(V.INCONCLUSIVE, gate(r)), rows, "needs at least 3 cells and per-seed spectra (A3)")]
    from scipy.stats import spearmanr
    halves, verdicts = {"decay (−λ)": [[-lam[c][i] for c in cells] for i in range(n)],
                        "Ĥ_N": [[hl[c][i] for c in cells] for i in range(n)]}, []
    for label, ys in halves.items():
        rhos = [float(spearmanr([iqr[c][i] for c in cells], y).statistic) for i, y in enumerate(ys)]
        iv = V.seed_interval(rhos)
        v = V.decide(iv, above=RHO_MARGIN)
        verdicts.append(v)
        x = [iqr[c][i] for i in range(n) for c in cells]
        yy = [v_ for y in ys for v_ in y]
        rho_p, p = V.spearman_p(x, yy, groups=[i for i in range(n) for _ in cells])
        rows.append(_part(f"per-seed Spearman ρ(IQR log10 τ, {label}) over {len(cells)} cells", iv, v,
                          f"> {RHO_MARGIN}", V.seeds_on_side(rhos, above=RHO_MARGIN))
                    + f"; pooled within-seed ρ {rho_p:.2f}, permutation p {p:.3g}")
    why = gate(r)
    if why:
        rows.append(f"**withheld**: {why}")
    return [(3, _gated(V.all_of(verdicts), why), rows,
             f"rule: both halves' 95% seed intervals of ρ above {RHO_MARGIN} (docs/experiments.md §5.5.2)")]


def f4(r):
    """Finding 4: per seed, mean α̂ (fast cells) − mean α̂ (slow cells); seed interval above 0.02."""
    a6 = r.get("A6")
    if not a6:
        return None
    rows = [f"{c}: mean α̂ = {a6[c]['mean']:.3f} (per seed {spread_text(a6[c].get('mean_seeds', []))}), "
            f"fraction α̂ < 1.9 = {a6[c]['fraction_below_1.9']:.2f}" for c in a6]
    fast, slow = [c for c in FAST if c in a6], [c for c in SLOW if c in a6]
    if not fast or not slow:
        return [(4, V.INCONCLUSIVE, rows, "needs both groups")]
    per = [_seed_list(a6[c], "mean_seeds") for c in fast + slow]
    n = min(len(p) for p in per)
    gap = [float(np.mean([a6[c]["mean_seeds"][i] for c in fast]) - np.mean([a6[c]["mean_seeds"][i] for c in slow]))
           for i in range(n)]
    iv = V.seed_interval(gap)
    v = V.decide(iv, above=ALPHA_GAP)
    inv = lambda a: 1 - 1 / a                                           # noqa: E731  1/κ = 1 − 1/α
    fa, sa = np.mean([a6[c]["mean"] for c in fast]), np.mean([a6[c]["mean"] for c in slow])
    rows.append(_part("mean α̂ (constgate, sharedgate) − mean α̂ (diaggate, gru, lstm), per seed", iv, v,
                      f"> {ALPHA_GAP}", V.seeds_on_side(gap, above=ALPHA_GAP))
                + f"; through κ: 1/κ̂ of the slow cells is {inv(sa) / inv(fa) - 1:+.1%} against the fast "
                  "cells' ([A]'s growth exponents scale as 1/κ)")
    why = gate(r)
    if why:
        rows.append(f"**withheld**: {why}")
    return [(4, _gated(v, why), rows, f"rule: the 95% seed interval of the gap above {ALPHA_GAP} "
             "(docs/experiments.md §5.5.2)")]


def master_diagnosis(summary, n_lags, a_min=0.7, b_max=0.3, clamp_frac=0.5):
    """Which factor of log N* = κ̂ log ε + κ̂ log σ̂ − κ̂ log |m̄| breaks the master law for one cell
    (A14 summary: seed means): |m̄| ∝ f^a with a < ``a_min``; σ̂ ∝ f^b with b > ``b_max`` (σ̂ falls
    with ℓ); more than ``clamp_frac`` of the lags at the grid ends (N̂ = smallest N, or never)."""
    mean = lambda k: (summary.get(k) or {}).get("mean")          # noqa: E731
    out = []
    a, b = mean("slope_mean_vs_f"), mean("slope_sigma_vs_f")
    if a is not None and a < a_min:
        out.append(f"|m̄| falls more slowly than f (a = {a:.2f} < {a_min})")
    if b is not None and b > b_max:
        out.append(f"σ̂ falls with ℓ (b = {b:.2f} > {b_max})")
    ends = (mean("n_at_smallest_N") or 0) + (mean("n_never") or 0)
    if n_lags and ends > clamp_frac * n_lags:
        out.append(f"the grid clamps most lags ({ends:.1f} of {n_lags} at its ends)")
    return out


def _sig(v, digits=3):
    """A number at ``digits`` significant digits (FINDINGS never prints 17-digit floats); n/a for None."""
    return "n/a" if v is None else f"{v:.{digits}g}"


def f5(r):
    a5, a14 = r.get("A5"), r.get("A14")
    if not a5 and not a14:
        return None
    rows = []
    if a5:
        p = a5["pooled"]
        rows.append(f"pooled slope of log N̂ on −κ̂ log f (A5): {_sig(p['slope'])}, R² {_sig(p['r2'])}, n {p['n']}")
        rows += [f"{c}: slope {_sig(v['fit']['slope'])}" for c, v in a5.items() if c != "pooled"]
    if not a14:
        return [(5, V.INCONCLUSIVE, rows, "needs A14 (the per-seed N* slopes)")]
    P = a14["pooled"]
    rows.append(f"master slope, three ways: pooled points {_fmt(P['nhat']['slope'])} (R² {_fmt(P['nhat']['r2'])}, "
                f"per seed {spread_text(P['nhat_per_seed'], '.2f')}); author's way (seed means in the power-law "
                f"window, α̂ > 1.01) per cell "
                + ", ".join(f"{c} {_fmt(v)}" for c, v in P["author_per_cell"].items())
                + f"; with N* for N̂ {_fmt(P['nstar']['slope'])} (per seed {spread_text(P['nstar_per_seed'], '.2f')})")
    for c, d in a14.items():
        if c == "pooled":
            continue
        S = d["summary"]
        sp = lambda k, fmt=".2f": spread_text([p[k] for p in d["per_seed"]], fmt)   # noqa: E731
        why = master_diagnosis(S, d["n_lags"])
        rows.append(f"{c}: |m̄| ∝ f^a, a = {sp('slope_mean_vs_f')}; σ̂ ∝ f^b, b = {sp('slope_sigma_vs_f')}; "
                    f"predicted slope a − b = {sp('predicted_master_slope')}; median κ̂ {sp('kappa_median')}; "
                    f"of {d['n_lags']} lags, at the smallest N {sp('n_at_smallest_N', '.1f')}, never "
                    f"{sp('n_never', '.1f')}; slope with N̂ {sp('master_slope_nhat')}, with N* "
                    f"{sp('master_slope_nstar')} → " + ("; ".join(why) if why else "no single factor breaks it"))
    verdicts = []
    for c, d in a14.items():
        if c == "pooled":
            continue
        slopes = [p.get("master_slope_nstar") for p in d["per_seed"]]
        iv = V.seed_interval(slopes)
        v = V.decide(iv, within=(1.0, SLOPE_MARGIN))
        verdicts.append(v)
        rows.append(f"{c} — " + _part("master slope with N* per seed", iv, v, f"|slope − 1| ≤ {SLOPE_MARGIN}",
                                      V.seeds_on_side(slopes, within=(1.0, SLOPE_MARGIN))))
    piv = V.seed_interval(P["nhat_per_seed"])
    rows.append(f"beside it, the pooled slope (all cells, N̂) per seed: {piv.text()} → "
                f"{V.decide(piv, within=(1.0, SLOPE_MARGIN))} by the same region (does not decide)")
    why = gate(r)
    if why:
        rows.append(f"**withheld**: {why}")
    return [(5, _gated(V.all_of(verdicts), why), rows,
             f"rule: each cell's 95% seed interval of the N* slope inside 1 ± {SLOPE_MARGIN}, AND over cells "
             "(docs/experiments.md §5.5.2)")]


def findings(rendered):
    """{k: (k, verdict, items, rule)} for findings 1–5 from the rendered figures' data."""
    rows = {}
    for fn in (f1_f2, f3, f4, f5):
        for item in fn(rendered) or []:
            rows[item[0]] = item
    return rows


def training_lines(rendered):
    """Final validation R² of every [A] main run (A8), per cell and seed: how well the trained
    models fit the task decides how much of the findings is about trained networks."""
    a8 = rendered.get("A8")
    if not a8:
        return []
    ceiling = next((d["r2_ceiling"] for d in a8.values() if d.get("r2_ceiling") is not None), None)
    if ceiling is None:
        out = ["Final validation R² of the [A] main trainings (A8), per seed:", ""]
    else:
        sig = next(d["sigma_y"] for d in a8.values() if d.get("r2_ceiling") is not None)
        out = [f"Final validation R² of the [A] main trainings (A8), per seed, against its ceiling "
               f"R²* = {ceiling:.3f}: the exact predictor's R², the best any network can reach given "
               f"the task's noise σ_y = {sig:g} (R²* = 1 − T σ_y² / Σ_t Var y_t, "
               "`lwsim.tasks.multilag_r2_ceiling`); the share of the ceiling reached in brackets:", ""]

    def _seed(v):
        if v is None:
            return "n/a"
        return f"{v:.3f}" if ceiling is None else f"{v:.3f} ({v / ceiling:.0%})"
    out += [f"- {c}: {', '.join(_seed(v) for v in d.get('final_val_r2', []))}" for c, d in a8.items()]
    return out + [""]
