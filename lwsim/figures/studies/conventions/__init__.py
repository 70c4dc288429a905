"""Conventions study (A13, docs/fidelity.md): f(ℓ) and Ĥ_N per cell under lwsim's exact conventions
and the author's code's (experiment.py: runs and computation; figures.py: A13; findings.py: the
FINDINGS.md section)."""
from __future__ import annotations

from ...config import declared
from ...study import Study
from ...workload import a_main_work, fwd, nlags
from ...tidy import lag_n_rows
from .experiment import CONVENTIONS, SIZES, conventions_runs
from .figures import FIGURES
from .findings import conventions_lines


def _a_conventions(c):
    """a_main's work with the diagnostics and statistics done twice (one per convention), plus
    both conventions' gate and transport factors of 16 sequences (docs/fidelity.md)."""
    w = a_main_work(c)
    T, H, f, L = c["T"], c["H"], fwd(c), nlags(c)
    train_steps = c["epochs"] * (3 * c["n_train"] + declared(c, "n_val", 0)) * T
    n16 = min(16, c["n_diag"])
    return {"one": 1.0, "train": w["train"],
            "diag": 2 * w["diag"] + 2 * n16 * T * (2 * f + L * H * H),
            "stats": 2 * w["stats"],
            "steps": train_steps + 2 * (w["steps"] - train_steps) + 2 * n16 * T * (1 + L)}


def _tidy(results):
    """The rows of results.csv.gz (lwsim/figures/tidy.py): per run, each convention × lag × N."""
    return [("a_conventions", "a_conventions", cfg,
             [row for conv in CONVENTIONS for row in lag_n_rows(
                 r["lags"], r["n_grid"], conventions=conv, per_lag={
                     "f": r[f"f_{conv}"], "mean": r[f"psi_mean_{conv}"], "alpha_hat": r[f"alpha_{conv}"],
                     "sigma_hat": r[f"sigma_{conv}"]}, n_hat=r[f"n_hat_{conv}"], per_n={"h_n": r[f"h_n_{conv}"]})])
            for cfg, r in results.get("a_conventions", ())]


def _after(rendered, results, extra):
    return conventions_lines(rendered)


STUDY = Study(name="conventions", docs="docs/fidelity.md (A13)", sizes=SIZES, groups={"a_conventions": conventions_runs},
              figures=FIGURES, needs={k: ("a_conventions",) for k in FIGURES}, after=_after,
              tidy=_tidy,
              work={"a_conventions": _a_conventions}, probes={"a_conventions": [dict(), dict(epochs=30), dict(n_diag=128), dict(n_boot=20, n_grid=[25, 100, 400]),
                      dict(cell="lstm")]})
