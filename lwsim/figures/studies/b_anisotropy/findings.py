"""Finding 8 under both conventions (docs/fidelity.md, "[B]").

lwsim's finding 8 compares exact, unfloored quantities. [B]'s code computes the same quantities
with its approximations (``conventions="author"``: gate term from h_t, reversed products, power
iterations, lower medians, AI = σ₁/(σ₁₀ + 1e−12)). When the runs carry both (keys ``*_author``),
:func:`f8_conventions` applies finding 8's rule to each and reports the two verdicts side by side.
"""
from __future__ import annotations

import numpy as np

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
    for conv, mu_prefix, ai_key in (("lwsim", "mu_", "median_last"),
                                    ("author", "author_mu_", "median_last_author")):
        mu = {m: _last_mu(d, mu_prefix) for m, d in b1.items()}
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
        rows.append(f"conventions {conv!r}: {v} — μ̃ at the largest lag {mus}; multi+SGD AI ≥ "
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


TITLES = {8: "[B] Gates make the effective learning rate lag-dependent; multi-gate anisotropy ≥ plain RNN + Adam"}


def findings(rendered):
    """Finding 8 (B1 of the S1 study and B4), with its reading under both conventions."""
    rows = {item[0]: item for item in f8(rendered) or []}
    return extend_f8(rendered, rows)
