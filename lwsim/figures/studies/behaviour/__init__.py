"""Behaviour study (A15, finding 9; docs/experiments.md §5.6): does the diagnostic window Ĥ_N track
the window a network learns? experiment.py: runs and computation; figures.py: A15; findings.py:
finding 9's rule and section."""
from __future__ import annotations

from ...config import declared
from ...study import Study
from ...workload import fwd, nlags
from ...tidy import lag_n_rows
from .experiment import SIZES, behaviour_runs
from .figures import FIGURES
from .findings import TITLE, f9, finding9_lines


def _a_behaviour(c):
    """A15 (experiment.py): ``steps`` training steps whatever N, validation every
    ``val_every``; one forward pass for ĉ(ℓ); the matched statistic and tail fits once per null
    (three: lag, full, author); the envelope only in the largest-N run (1 / number of budgets)."""
    T, H, f, L, K = c["T"], c["H"], fwd(c), nlags(c), declared(c, "K", 1)
    nb, n_val, n_diag, n_nulls = len(declared(c, "budgets", [1])), declared(c, "n_val", 0), c["n_diag"], 3
    n_evals = c["steps"] // max(1, declared(c, "val_every", 1)) + 1
    return {"one": 1.0, "train": c["steps"] * c["batch"] * T * 3 * f + n_evals * n_val * T * f,
            "diag": n_diag * T * f + n_nulls * n_diag * T * (2 * f + K * (3 * f + 8 * L * H))
            + n_diag * T * (2 * f + 6 * L * H) / nb,
            "stats": n_nulls * L * n_diag * (len(declared(c, "n_grid", [1])) + declared(c, "n_boot", 200) / 100),
            "steps": c["steps"] * c["batch"] * T * 3 + n_evals * n_val * T + n_nulls * n_diag * T * (4 + 3 * K)}


def _headline(rendered):
    nine = f9(rendered)
    return [(9, TITLE, nine[1] if nine else None)]


def _after(rendered, results, extra):
    return finding9_lines(rendered)


def _tidy(results):
    """The rows of results.csv.gz (lwsim/figures/tidy.py): per run (trained on config_N
    sequences), each null × lag × N of the diagnostic's N grid; Ĥ_N computed from N̂(ℓ)."""
    return [("a_behaviour", "a_behaviour", cfg,
             [row for null in r["nulls"] for row in lag_n_rows(r["lags"], r["n_grid"], null=str(null),
                                                               n_hat=r[f"n_hat_{null}"])])
            for cfg, r in results.get("a_behaviour", ())]


STUDY = Study(name="behaviour", docs="docs/experiments.md §5.6 (A15, finding 9)", sizes=SIZES,
              groups={"a_behaviour": behaviour_runs}, figures=FIGURES, needs={k: ("a_behaviour",) for k in FIGURES},
              headline=_headline, after=_after, tidy=_tidy, work={"a_behaviour": _a_behaviour},
              probes={"a_behaviour": [dict(), dict(steps=60), dict(n_diag=128), dict(cell="lstm")]})
