"""FINDINGS.md section: does any verdict change under conventions="author"? (A13, docs/fidelity.md)

A13 computes both conventions on the same trained weights (a small dedicated run, not the a_main
grid), so the comparison isolates the conventions. The rules are those of findings 1, 2 and 4
evaluated per convention on the A13 run (:func:`lwsim.figures.studies.conventions.figures.summary`).
"""
from __future__ import annotations

RULE_TEXT = {
    "slow_cells_decay_slower": "findings 1–2: every slow cell (DiagGate/GRU/LSTM) has a smaller exponential rate λ than every fast cell",
    "fast_cells_saturate": "finding 1: Ĥ_N of ConstGate/SharedGate stops growing over the upper half of the N grid",
    "slow_cells_keep_growing": "finding 2: Ĥ_N of the slow cells still grows over the upper half of the N grid",
    "heavier_tails_in_slow_cells": "finding 4: mean α̂ of the fast cells > mean α̂ of the slow cells",
}


def conventions_lines(rendered):
    """Markdown lines for FINDINGS.md ([] when A13 was not rendered)."""
    if "A13" not in rendered:
        return []
    s = rendered["A13"]["summary"]
    lw, au = s["lwsim"]["rules"], s["author"]["rules"]
    lines = ["## Conventions: lwsim vs the author's code (A13, docs/fidelity.md)", ""]
    if not lw or not au:
        return lines + ["Not enough cells with a decay fit in A13 to apply the rules.", ""]
    changed = [k for k in RULE_TEXT if lw.get(k) != au.get(k)]
    lines += [f"**{'verdicts change' if changed else 'no verdict changes'}** with conventions=\"author\" "
              f"({len(changed)} of {len(RULE_TEXT)} rules differ), same weights and sequences.", ""]
    for k, text in RULE_TEXT.items():
        lines.append(f"- {text}: lwsim {'yes' if lw[k] else 'no'}, author {'yes' if au[k] else 'no'}"
                     + (" — **changes**" if k in changed else ""))
    for cell, p in s["lwsim"]["cells"].items():
        a = s["author"]["cells"][cell]
        fmt = lambda v: "n/a" if v is None else f"{v:.4f}"  # noqa: E731
        lines.append(f"- {cell}: λ {fmt(p['lambda'])} → {fmt(a['lambda'])}, Ĥ_N growth "
                     f"{p['h_growth']:+.1f} → {a['h_growth']:+.1f}, mean α̂ {p['alpha_mean']:.3f} → {a['alpha_mean']:.3f}")
    return lines + [""]
