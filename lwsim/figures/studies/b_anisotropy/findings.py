"""Finding 8 under both conventions (docs/fidelity.md, "[B]").

lwsim's finding 8 compares exact, unfloored quantities. [B]'s code computes the same quantities
with its approximations (``conventions="author"``: gate term from h_t, reversed products, power
iterations, lower medians, AI = σ₁/(σ₁₀ + 1e−12)). When the runs carry both (keys ``*_author``),
:func:`f8_conventions` applies finding 8's rule to each and reports the two verdicts side by side.
"""
from __future__ import annotations

import numpy as np

from ....stats import verdicts as V

RULE = ("μ̃ < 0.5 at the largest lag for every gated model and multi-gate AI ≥ plain+Adam on most "
        "tasks")


def _verdict(mu_last, ai_pairs):
    """Finding 8's rule on {model: μ̃ at the largest lag} and [(multi AI, plain AI) per task]."""
    lagdep = sum(v < 0.5 for v in mu_last.values())
    wins = sum(a >= b for a, b in ai_pairs)
    total = len(ai_pairs)
    if mu_last and lagdep == len(mu_last) and total and wins > total / 2:
        return "reproduced", lagdep, wins, total
    if lagdep == 0 and wins <= total / 2:
        return "not reproduced", lagdep, wins, total
    return "inconclusive", lagdep, wins, total


def _last_mu(d, prefix):
    keys = [k for k in d if k.startswith(prefix)]
    return float(np.asarray(d[keys[-1]], float)[-1]) if keys else None


def f8_conventions(rendered):
    """Rows comparing finding 8 under conventions "lwsim" (exact) and "author"; [] when the
    rendered B1/B4 data carry no author values."""
    b1, b4 = rendered.get("B1"), rendered.get("B4")
    if not b1 or not b4:
        return []
    rows, out = [], {}
    for conv, mu_prefix, ai_key in (("lwsim", "mu_", "median_last"),   # the earlier rule, both conventions
                                    ("author", "author_mu_", "median_last_author")):
        mu = {m: _last_mu(d, mu_prefix) for m, d in b1.items() if m != "rnn"}
        mu = {m: v for m, v in mu.items() if v is not None}
        pairs, plain_far = [], []
        for task, models in b4.items():
            if "diaggate" in models and "rnn" in models and ai_key in models["rnn"]:
                a = float(np.nanmedian(models["diaggate"][ai_key]))
                b = float(np.nanmedian(models["rnn"][ai_key]))
                pairs.append((a, b))
                plain_far.append(f"{task} {float(np.asarray(models['rnn'][ai_key], float)[-1]):.3g}")
        if not pairs:
            continue
        out[conv] = _verdict(mu, pairs)
        v, lagdep, wins, total = out[conv]
        mus = ", ".join(f"{m} {x:.3g}" for m, x in mu.items()) or "not computed"
        rows.append(f"earlier rule (μ̃ < 0.5, B4) under conventions {conv!r}: {v} — μ̃ at the largest lag {mus}; multi+SGD AI ≥ "
                    f"plain+Adam on {wins}/{total} tasks; plain+Adam median AI at the largest lag: "
                    + ", ".join(plain_far))
    if len(out) == 2:
        same = out["lwsim"][0] == out["author"][0]
        rows.append("the verdict " + ("does not change" if same else "CHANGES") +
                    " with the conventions (exact lwsim quantities vs [B]'s approximations)")
    return rows


def extend_f8(rendered, rows):
    """Append :func:`f8_conventions` to finding 8's items in ``rows`` (the findings dict)."""
    if 8 in rows:
        rows[8][2].extend(f8_conventions(rendered))
    return rows


MU_MARGIN = 0.1               # 8a: plain μ̃ − gated μ̃ at the largest lag
AI_RATIO_LOG2 = float(np.log2(0.9))   # 8b: multi-gate AI within 10% of plain + Adam or above


def _by_seed(d, key="values"):
    return dict(zip(d.get("seeds", []), d.get(key, [])))


def f8(r):
    """Finding 8 by the verdict scheme (docs/experiments.md §5.5.2): 8a the plain RNN's μ̃ at the largest
    lag minus each gated model's, per seed, above 0.1; 8b per task the log2 ratio of the multi-gate's
    realised-gradient anisotropy (B6) to plain + Adam's, per seed, above log2 0.9, on most tasks."""
    b1, b4, b6 = r.get("B1"), r.get("B4"), r.get("B6")
    if not b1 or not (b4 or b6):
        return None
    rows, part_a = [], []
    plain = (b1.get("rnn") or {}).get("last_lag_mu_seeds")
    for m, d in b1.items():
        if m == "rnn":
            continue
        gated = d.get("last_lag_mu_seeds")
        if gated is None:       # figures from before the contrast: the final checkpoint's mean μ̃ only
            keys = [k for k in d if k.startswith("mu_")]
            rows.append(f"B1 {m}: μ̃ at the largest lag (final checkpoint) = {np.asarray(d[keys[-1]], float)[-1]:.3g}")
            part_a.append(V.INCONCLUSIVE)
            continue
        if plain is None:
            rows.append(f"8a {m}: μ̃ at the largest lag per seed {[round(x, 3) for x in gated]}; no plain-RNN "
                        "contrast in this call → inconclusive")
            part_a.append(V.INCONCLUSIVE)
            continue
        iv, v, side = V.judge([p - g for p, g in zip(plain, gated)], above=MU_MARGIN)
        part_a.append(v)
        rows.append(f"8a {m}: plain μ̃ − {m} μ̃ at the largest lag (final checkpoint), per seed {iv.text()} → {v} "
                    f"(region > {MU_MARGIN}; {side}); plain "
                    f"{np.mean(plain):.3g}, {m} {np.mean(gated):.3g}")
    part_b = []
    for task, models in (b6 or {}).items():
        multi, ref = (models.get("diaggate") or {}).get("AI"), (models.get("rnn") or {}).get("AI")
        if not multi or not ref or "values" not in multi:
            continue
        a, b = _by_seed(multi), _by_seed(ref)
        ratio = [float(np.log2(a[s] / b[s])) if a[s] > 0 and b[s] > 0 else None for s in a if s in b]
        iv, v, side = V.judge(ratio, above=AI_RATIO_LOG2)
        part_b.append(v)
        rows.append(f"8b {task}: log2(AI multi+SGD / AI plain+Adam) of the realised gradients (B6), per seed "
                    f"{iv.text()} → {v} (region > log2 0.9 = {AI_RATIO_LOG2:.3f}; {side})")
    for task, models in (b4 or {}).items():
        if "diaggate" in models and "rnn" in models:
            a, b = np.nanmedian(models["diaggate"]["median_last"]), np.nanmedian(models["rnn"]["median_last"])
            rows.append(f"beside it, B4 {task} (Jacobian products, does not decide): median AI multi+SGD {a:.3g} "
                        f"vs plain+Adam {b:.3g}")
    va = V.all_of(part_a)
    vb = V.most_of(part_b) if part_b else V.INCONCLUSIVE
    rows.insert(0, f"parts: 8a {va} (AND over the gated models), 8b {vb} (on most of {len(part_b)} tasks)")
    return [(8, V.all_of([va, vb]), rows, f"rule: 8a each gated model's 95% seed interval of plain μ̃ − gated μ̃ "
             f"above {MU_MARGIN}, AND; 8b per task the seed interval of log2(AI ratio) above log2 0.9, on most "
             "tasks; 8a AND 8b (docs/experiments.md §5.5.2)")]


TITLES = {8: "[B] Gates make the effective learning rate lag-dependent; multi-gate anisotropy ≥ plain RNN + Adam"}


def findings(rendered):
    """Finding 8 (B1 of the S1 study and B4), with its reading under both conventions."""
    rows = {item[0]: item for item in f8(rendered) or []}
    return extend_f8(rendered, rows)
