"""Finding 9: the diagnostic window Ĥ_N tracks the learned window H^beh_N (A15, docs/experiments.md §5.6).

Rules (stated in FINDINGS.md beside the numbers):

- tracking, per null: Spearman ρ between Ĥ_N and H^beh_N over every cell × N × seed ("pooled"),
  and the same ρ within each seed (over cells × N). Reproduced when the best null's pooled
  ρ ≥ ``RHO_YES`` and its ρ ≥ ``RHO_YES`` in every seed; not reproduced when every null's pooled
  ρ < ``RHO_NO`` (undefined ones aside); inconclusive otherwise (also when no ρ is defined).
- which null tracks better: the one with the larger pooled ρ, when it leads by ≥ ``RHO_LEAD`` and
  its per-seed ρ is larger in every seed; otherwise no null is clearly better.
- growth law of H^beh_N per cell (seed means over N): "flat" when max − min ≤ 10% of
  max(1, max H^beh); else H = a + b log N and H = A N^β are fitted by least squares (the power law
  on log H, log N over H > 0) and compared by their residual sum of squares in lags over every
  point: the smaller wins, "indistinguishable" when the larger is < ``RSS_RATIO`` × the smaller.
  Beside it, the law of the cell's envelope (BIC, A2's rule) and the growth law [A] derives from
  it (docs/theory.md §4.4): exponential/tempered → log N, power → a power of N.
"""
from __future__ import annotations

import numpy as np

RHO_YES, RHO_NO, RHO_LEAD, RSS_RATIO = 0.5, 0.2, 0.1, 1.25     # the earlier rule (reported beside)
RHO_MARGIN = 0.3        # the scheme's region (docs/experiments.md §5.5.2): per-seed within-N ρ > 0.3
THEORY_GROWTH = {"exponential": "log", "tempered": "log", "power": "power"}
TITLE = "The diagnostic window Ĥ_N tracks the learned window H^beh_N (A15)"


def spearman(x, y):
    """Spearman ρ (ties get average ranks) or None with < 3 pairs or a constant variable."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    from scipy.stats import rankdata
    rx, ry = rankdata(x), rankdata(y)
    return float(np.corrcoef(rx, ry)[0, 1])


def growth_law(N, H):
    """The growth law of H against N (the rule in the module docstring) → dict."""
    N, H = np.asarray(N, float), np.asarray(H, float)
    out = {"law": "flat", "log_slope": None, "power_beta": None, "rss_log": None, "rss_power": None,
           "rise": float(H.max() - H.min())}
    if out["rise"] <= 0.1 * max(1.0, float(H.max())):
        return out
    lx = np.log(N)
    b, a = np.polyfit(lx, H, 1)
    out["log_slope"], out["rss_log"] = float(b), float(np.sum((H - (a + b * lx)) ** 2))
    pos = H > 0
    if pos.sum() >= 2 and np.ptp(lx[pos]) > 0:
        beta, la = np.polyfit(lx[pos], np.log(H[pos]), 1)
        out["power_beta"], out["rss_power"] = float(beta), float(np.sum((H - np.exp(la) * N ** beta) ** 2))
    if out["rss_power"] is None:
        out["law"] = "log"
        return out
    lo, hi = sorted((out["rss_log"], out["rss_power"]))
    if hi < RSS_RATIO * lo:
        out["law"] = "indistinguishable"
    else:
        out["law"] = "log" if out["rss_log"] < out["rss_power"] else "power"
    return out


def _points(a15):
    return a15["scatter"]


def tracking(a15, key="h_beh"):
    """{null: {"pooled": ρ, "per_seed": {seed: ρ}, "within_N": mean over N of ρ}} of Ĥ_N vs ``key``."""
    pts = _points(a15)
    out = {}
    for null in a15["nulls"]:
        x = [p[key] for p in pts]
        y = [p["h_diag"][null] for p in pts]
        seeds = sorted({p["seed"] for p in pts})
        per_seed = {str(s): spearman([p[key] for p in pts if p["seed"] == s],
                                     [p["h_diag"][null] for p in pts if p["seed"] == s]) for s in seeds}
        within = [spearman([p[key] for p in pts if p["N"] == n], [p["h_diag"][null] for p in pts if p["N"] == n])
                  for n in sorted({p["N"] for p in pts})]
        within = [w for w in within if w is not None]
        out[null] = {"pooled": spearman(x, y), "per_seed": per_seed,
                     "within_N": float(np.mean(within)) if within else None, "n": len(pts)}
    return out


def within_n_by_seed(a15, null, key="h_beh"):
    """{seed: mean over N of Spearman ρ(Ĥ_N, ``key``) across the cells at that N} for one null (finding
    9's effect: within one N the common growth with N cannot inflate ρ); None where no N gives a ρ."""
    pts = _points(a15)
    out = {}
    for s in sorted({p["seed"] for p in pts}):
        rs = [spearman([p[key] for p in pts if p["seed"] == s and p["N"] == n],
                       [p["h_diag"][null] for p in pts if p["seed"] == s and p["N"] == n])
              for n in sorted({p["N"] for p in pts if p["seed"] == s})]
        rs = [r for r in rs if r is not None]
        out[s] = float(np.mean(rs)) if rs else None
    return out


def scheme(a15):
    """(verdict, best null, rows): each null's per-seed within-N ρ with its 95% seed interval; the
    verdict is the best null's (the largest mean) against ρ > 0.3; beside it the one-sided rate."""
    from ....stats import verdicts as V
    ivs = {null: V.seed_interval(list(within_n_by_seed(a15, null).values())) for null in a15["nulls"]}
    rows = [f"null {null}: per-seed mean within-N ρ(Ĥ_N, H^beh_N) across cells {iv.text()} → "
            f"{V.decide(iv, above=RHO_MARGIN)} (region > {RHO_MARGIN})" for null, iv in ivs.items()]
    defined = {n: iv for n, iv in ivs.items() if iv.n}
    if not defined:
        return V.INCONCLUSIVE, None, rows
    best = max(defined, key=lambda n: defined[n].mean)
    pts = _points(a15)
    beyond = [p["h_beh"] > p["h_diag"][best] for p in pts
              if np.isfinite(p["h_beh"]) and np.isfinite(p["h_diag"][best])]
    if beyond:
        rows.append(f"one-sided reading (null {best}): learned beyond the diagnostic window (H^beh_N > Ĥ_N) in "
                    f"{sum(beyond)} of {len(beyond)} runs ({sum(beyond) / len(beyond):.0%})")
    return V.decide(defined[best], above=RHO_MARGIN), best, rows


def verdict(track):
    """(verdict, best null or None, which-null sentence) from :func:`tracking`'s output."""
    pooled = {n: t["pooled"] for n, t in track.items() if t["pooled"] is not None}
    if not pooled:
        return "inconclusive", None, "ρ undefined for every null (a window constant over the points)"
    best = max(pooled, key=pooled.get)
    seeds_best = list(track[best]["per_seed"].values())
    if pooled[best] >= RHO_YES and seeds_best and all(r is not None and r >= RHO_YES for r in seeds_best):
        v = "reproduced"
    elif all(r < RHO_NO for r in pooled.values()):
        v = "not reproduced"
    else:
        v = "inconclusive"
    others = [n for n in pooled if n != best]
    clear = [n for n in others if pooled[best] - pooled[n] >= RHO_LEAD and all(
        rb is not None and (ro is None or rb > ro)
        for rb, ro in zip(track[best]["per_seed"].values(), track[n]["per_seed"].values()))]
    if not others:
        which = f"only one null ({best})"
    elif len(clear) == len(others):
        which = f"{best} tracks behaviour better (pooled ρ ahead by ≥ {RHO_LEAD} and ahead in every seed)"
    else:
        which = f"no null clearly better (largest pooled ρ: {best})"
    return v, best, which


def _f(v, fmt=".2f"):
    return "n/a" if v is None else f"{v:{fmt}}"


def f9(rendered):
    """(9, verdict, rows, rule) from the rendered A15 data, or None when A15 was not rendered."""
    a15 = rendered.get("A15")
    if not a15:
        return None
    from ...common import spread_text
    track, track_s = tracking(a15, "h_beh"), tracking(a15, "h_beh_smooth")
    v_old, _, which = verdict(track)
    v, best, rows = scheme(a15)
    rows.append(f"the earlier rule (pooled ρ ≥ {RHO_YES} in every seed) would say: {v_old}")
    for null, t in track.items():
        rows.append(f"null {null}: Spearman ρ(Ĥ_N, H^beh_N) pooled over {t['n']} cell × N × seed points "
                    f"{_f(t['pooled'])} (per seed {spread_text(list(t['per_seed'].values()), '.2f')}; "
                    f"mean within-N ρ across cells × seeds {_f(t['within_N'])}); against the smooth H^beh_½ "
                    f"{_f(track_s[null]['pooled'])}")
    rows.append(f"which null: {which}")
    pts = a15["scatter"]
    keys = sorted({k for p in pts for k in p.get("h_diag_points", {})})
    if keys:      # issue 30 item 6: the diagnostic at the initial parameters and the early checkpoint
        rows.append("Ĥ_N at three training points (init: initial parameters, P = η·I; early: step steps/10; "
                    "final: above), pooled Spearman ρ with H^beh_N: " + "; ".join(
                        f"{k} {_f(spearman([p['h_beh'] for p in pts if k in p['h_diag_points']], [p['h_diag_points'][k] for p in pts if k in p['h_diag_points']]))}"
                        for k in keys) + "; " + "; ".join(f"{n}/final {_f(t['pooled'])}" for n, t in track.items()))
    for cell, d in a15["cells"].items():
        rows.append(f"{cell}: H^beh_N spread over seeds (sd) at N = " + ", ".join(
            f"{n:g}: {s:.1f}" for n, s in zip(d["N"], d["h_beh_sd"])))
    for cell, d in a15["cells"].items():
        g, env = d["growth"], d.get("envelope", {})
        law = env.get("selected_bic")
        pred = THEORY_GROWTH.get(law)
        rows.append(f"{cell}: H^beh_N from {_f(d['h_beh_mean'][0], '.1f')} (N = {d['N'][0]:g}) to "
                    f"{_f(d['h_beh_mean'][-1], '.1f')} (N = {d['N'][-1]:g}), at the largest N "
                    f"{spread_text(d['h_beh_seeds_last'], '.1f')}; growth law {g['law']} (RSS log {_f(g['rss_log'], '.3g')}, "
                    f"power {_f(g['rss_power'], '.3g')}, β {_f(g['power_beta'])}); envelope law {law or 'n/a'} by BIC "
                    f"(per seed {', '.join(str(s) for s in env.get('per_seed_selected_bic', [])) or 'n/a'}) → [A] "
                    f"predicts {pred or 'n/a'} growth" + ("" if pred is None or g["law"] in ("flat", "indistinguishable")
                                                         else " (agrees)" if pred == g["law"] else " (disagrees)")
                    + "; Ĥ_N at the largest N " + ", ".join(
                        f"{n} {spread_text(d['h_diag'][n]['seeds_last'], '.1f')}" for n in a15["nulls"]))
    rule = (f"rule: the best null's 95% seed interval of the per-seed mean within-N Spearman ρ(Ĥ_N, H^beh_N) "
            f"across cells above {RHO_MARGIN} (docs/experiments.md §5.5.2); described beside it: the pooled ρ over "
            f"cells × N × seeds, a null tracks better when its pooled ρ leads by ≥ {RHO_LEAD} and leads in every seed; growth law: "
            f"flat if the seed-mean H^beh rises ≤ 10% of its maximum, else the smaller RSS of a + b log N and "
            f"A N^β ('indistinguishable' within a factor {RSS_RATIO})")
    return (9, v, rows, rule)


def finding9_lines(rendered):
    """FINDINGS.md section of finding 9 (appended after the other findings)."""
    head = [f"## 9. {TITLE}", ""]
    item = f9(rendered)
    if item is None:
        return head + ["Not run in this call (A15 was not requested).", ""]
    _, v, rows, rule = item
    return head + [f"**{v}** — {rule}.", ""] + [f"- {r}" for r in rows] + [""]
