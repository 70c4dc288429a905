"""The a_main runs' rows of results.csv.gz (lwsim/figures/tidy.py, docs/experiments.md §5.8): per
run, every detection table it stored (each null and floor ablation under the main tail method, the
other tail methods under the "lag" null) × lag × N. Also the a_compare runs (same experiment)."""
from __future__ import annotations

from ...tidy import lag_n_rows


def run_rows(r):
    """The rows of one a_main result ``r``."""
    lags, grid = r["lags"], r["n_grid"]
    methods = [str(m) for m in (r.get("tail_methods") or ["auto"])]
    nulls = [str(n) for n in r["nulls"]]
    rows = []
    for null in nulls:
        sfx = "" if null == "lag" else f"_{null}"          # experiment.py: "lag" unsuffixed
        rows += lag_n_rows(lags, grid, null=null, tail_method=methods[0], per_lag={
            "f": r["f"], "mean": r[f"mean{sfx}"], "alpha_hat": r[f"alpha_hat{sfx}"],
            "sigma_hat": r[f"sigma_hat{sfx}"], "kappa_hat": r[f"kappa_hat{sfx}"],
            "n_samples": r.get("n_samples") if null == "lag" else None,
            "n_star": r[f"n_star{sfx}"], "reliable": r[f"reliable{sfx}"]},
            n_hat=r[f"n_hat{sfx}"], per_n={"h_n": r[f"h_n{sfx}"]})
    for m in methods[1:]:
        if m in nulls:                   # its keys would be a null's (no preset has both)
            continue
        rows += lag_n_rows(lags, grid, null="lag", tail_method=m, per_lag={
            "f": r["f"], "mean": r["mean"], "alpha_hat": r[f"alpha_hat_{m}"], "sigma_hat": r[f"sigma_hat_{m}"],
            "kappa_hat": r[f"kappa_hat_{m}"], "n_star": r[f"n_star_{m}"], "reliable": r[f"reliable_{m}"]},
            n_hat=r[f"n_hat_{m}"], per_n={"h_n": r[f"h_n_{m}"]})
    return rows


def group_rows(results, group):
    """[(group, "a_main", config, rows)] of the runs of ``group`` in ``results`` (none if absent)."""
    return [(group, "a_main", cfg, run_rows(r)) for cfg, r in results.get(group, ())]


def tidy(results):
    return group_rows(results, "a_main")
