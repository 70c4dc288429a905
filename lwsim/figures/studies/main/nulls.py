"""Findings 1–5 under each detection null and each of the author's floors (docs/statistics.md §3.3,
docs/experiments.md §5.5, docs/fidelity.md).

An [A] main run stores one detection table per null ("lag", unsuffixed; "full"; "author") and per
floor ablation ("snr", "ecf", "floors", "f32"), its keys suffixed ``_<name>``
(training.a_null_tables). :func:`null_view` swaps a variant's keys in place of the "lag" ones,
so that the same figure builders and finding rules run on every variant: a verdict can then differ
between variants only through the detection table.
"""
from __future__ import annotations

import numpy as np

from ...common import _growth, by_cell
from ...training import FLOOR_ABLATIONS, NULL_KEYS, NULLS
from ...style import plt, save_figure
from .findings import TITLES, findings

ABLATIONS = tuple(a for a in FLOOR_ABLATIONS if a not in NULLS)      # snr, ecf, floors, f32
LABELS = {
    "lag": "lag: each lag's statistic against its own spread",
    "full": "full: against the spread of the whole per-sequence update",
    "author": "author: lag + σ̂ floor + ECF tiny-IQR grid + float32 diagnostics",
    "snr": "lag + SNR = 0 for σ̂ ≤ 1e−12",
    "ecf": "lag + the author's ECF grid for a tiny IQR",
    "floors": "lag + both floors (float64)",
    "f32": "lag on float32 diagnostics (no floors)",
}
# the figures whose data depend on the detection table (A2, A3 do not: they are shared)
NULL_FIGS = ("A1", "A4", "A5", "A6", "A7", "A14")
FINDINGS_1_5 = (1, 2, 3, 4, 5)


def variants(results):
    """The variants present in every [A] main run, in the order of NULLS then ABLATIONS."""
    runs = results.get("a_main") or []
    if not runs:
        return []
    have = set.intersection(*[{n for n in NULLS + ABLATIONS if n == "lag" or f"h_n_{n}" in res}
                              for _, res in runs])
    return [n for n in NULLS + ABLATIONS if n in have]


def null_view(results, name):
    """``results`` with each [A] main run's detection keys replaced by those of variant ``name``
    ("lag" returns ``results`` itself). Other run groups are shared, not copied."""
    if name == "lag":
        return results
    out = dict(results)
    view = []
    for cfg, res in results["a_main"]:
        missing = [k for k in NULL_KEYS if f"{k}_{name}" not in res]
        if missing:
            raise KeyError(f"run {cfg['cell']}/{cfg['seed']} has no {name!r} keys {missing}")
        view.append((cfg, {**res, **{k: res[f"{k}_{name}"] for k in NULL_KEYS}}))
    out["a_main"] = view
    return out


def draw_null_figure(name, fid, build, results, out=None):
    """Figure ``fid`` rebuilt by ``build`` from variant ``name``'s view of ``results``: its data.
    ``out``: a null's figure (not "lag"'s, not a floor ablation's) is written there as
    <out>/<fid>_<name>.png/.json, its first title marked with the null; the others are closed."""
    fig, data = build(null_view(results, name))
    if out is not None and name in NULLS and name != "lag":
        for ax in fig.axes[:1]:
            ax.set_title(f"{ax.get_title()} [{name} null]")
        save_figure(fig, data, f"{fid}_{name}", out, figure_id=fid)
    else:
        plt.close(fig)
    return data


def null_drawings(results, rendered_ids, figures, out=None):
    """{"<figure id>_<variant>": (draw_null_figure, args)}: every null figure of every variant, as
    jobs the engine runs in its drawing pool beside the figures (Study.drawings); their values
    are what :func:`findings_by_variant` would rebuild, so it takes them as ``drawn``."""
    groups = {"a_main": results.get("a_main") or []}       # the null figures read the [A] main runs only
    return {f"{fid}_{name}": (draw_null_figure, (name, fid, figures[fid], groups, out))
            for name in variants(results) for fid in NULL_FIGS if fid in rendered_ids}


def findings_by_variant(results, rendered, figures, out=None, drawn=None):
    """{variant: findings rows} for findings 1–5: the figures that depend on the detection table are
    rebuilt in memory from the variant's view (``figures``: id → builder), the others reused.
    ``out``: also write the nulls' figures (not the floor ablations') as <out>/<id>_<null>.png/.json,
    their titles marked with the null. ``drawn``: {"<id>_<variant>": data} already drawn (by
    :func:`null_drawings`' jobs), used instead of rebuilding."""
    drawn = drawn or {}
    result = {}
    suffixed = {f"{fid}_{n}" for fid in NULL_FIGS for n in NULLS + ABLATIONS}
    for name in variants(results):
        data = {k: v for k, v in rendered.items() if k not in suffixed}   # every part reads this variant
        for fid in NULL_FIGS:
            if fid in rendered:
                key = f"{fid}_{name}"
                data[fid] = drawn[key] if key in drawn else draw_null_figure(name, fid, figures[fid], results, out)
        rows = findings(data)
        result[name] = {k: rows[k] for k in FINDINGS_1_5 if k in rows}
    return result


def _per_variant(results, measure):
    """{variant: {cell: [measure(Ĥ_N over the N grid) per seed]}} from the runs."""
    out = {}
    for name in variants(results):
        sfx = "" if name == "lag" else f"_{name}"
        out[name] = {cell: [measure(np.asarray(r[f"h_n{sfx}"], float)) for r in rs]
                     for cell, rs in by_cell(results["a_main"]).items()}
    return out


def h_last_table(results):
    """{variant: {cell: [Ĥ_N at the largest N per seed]}} from the runs."""
    return _per_variant(results, lambda h: float(h[-1]))


def growth_table(results):
    """{variant: {cell: [Ĥ_N growth over the upper half of the N grid per seed]}} (finding 1's measure)."""
    return _per_variant(results, _growth)


def _mean(v):
    v = [x for x in v if x is not None and np.isfinite(x)]
    return float(np.mean(v)) if v else float("nan")


def null_lines(by_variant, results):
    """FINDINGS.md sections: findings 1–5 side by side under the three nulls (each with its rule and
    numbers), then what each of the author's floors does to Ĥ_N and to findings 1 and 5."""
    if not by_variant:
        return []
    nulls = [n for n in NULLS if n in by_variant]
    out = ["## Findings 1–5 under each null", "",
           "The same rules on the same trained models; only the detection table changes "
           "(docs/statistics.md §3.3). " + "; ".join(f"**{LABELS[n]}**" for n in nulls) + ".", "",
           "| # | finding | " + " | ".join(nulls) + " |", "|---|---|" + "---|" * len(nulls)]
    for k in FINDINGS_1_5:
        out.append(f"| {k} | {TITLES[k]} | "
                   + " | ".join(by_variant[n][k][1] if k in by_variant[n] else "not run" for n in nulls) + " |")
    out.append("")
    hl, gr = h_last_table(results), growth_table(results)
    cells = list(next(iter(hl.values())).keys()) if hl else []
    if cells:
        names = [n for n in NULLS + ABLATIONS if n in hl]
        out += ["Ĥ_N at the largest N (mean over seeds; min…max) and, in brackets, its growth over the upper "
                "half of the N grid (mean over seeds), per cell and variant:", "",
                "| variant | " + " | ".join(cells) + " |", "|---|" + "---|" * len(cells)]
        for n in names:
            out.append(f"| {LABELS[n]} | " + " | ".join(
                f"{_mean(hl[n][c]):.1f} ({min(hl[n][c]):g}…{max(hl[n][c]):g}) [{_mean(gr[n][c]):+.1f}]"
                for c in cells) + " |")
        out.append("")
    abl = [n for n in ABLATIONS if n in by_variant]
    if abl:
        out += ["The author's floors one at a time (findings 1 and 5):", "",
                "| variant | finding 1 | finding 5 |", "|---|---|---|"]
        for n in ["lag"] + abl + (["author"] if "author" in by_variant else []):
            out.append(f"| {LABELS[n]} | " + " | ".join(
                by_variant[n][k][1] if k in by_variant[n] else "not run" for k in (1, 5)) + " |")
        out.append("")
    for n in nulls:
        out += [f"### Under the {n!r} null", ""]
        for k in FINDINGS_1_5:
            if k not in by_variant[n]:
                continue
            _, verdict, items, rule = by_variant[n][k]
            out += [f"**{k}. {TITLES[k]}: {verdict}** — {rule}.", ""] + [f"- {it}" for it in items] + [""]
    return out
