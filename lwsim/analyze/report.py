"""The result of :func:`lwsim.analyze.analyze`: numbers, Markdown, JSON and figures (docs/analyze.md)."""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from .. import diagnostics as dg
from ..io import atomic_write_bytes, to_jsonable

N_NEURONS_SHOWN = 10


def _decay_dict(decay):
    if decay is None:
        return None
    return {"selected": decay.selected, "selected_bic": decay.selected_bic, "n": decay.n,
            "fits": {law: {"params": f.params, "r2": f.r2, "ssr": f.ssr, "aic": f.aic, "bic": f.bic}
                     for law, f in decay.fits.items()}}


def _fmt(v, digits=3):
    if v is None:
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    v = float(v)
    if np.isnan(v):
        return "—"
    if np.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v != 0 and (abs(v) >= 1e4 or abs(v) < 1e-3):
        return f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}"


@dataclasses.dataclass
class Report:
    """Everything :func:`~lwsim.analyze.analyze` measured, with the settings it used.

    See docs/analyze.md.
    """
    settings: dict
    envelope: object          # lwsim.diagnostics.Envelope
    timescales: object        # lwsim.diagnostics.TimeScales
    matched: object           # lwsim.diagnostics.MatchedStatistic
    detection: object         # lwsim.stats.DetectionTable
    decay: object | None      # lwsim.stats.DecayFit (None: too few lags)
    master: object | None     # lwsim.stats.MasterFit (None: too few detectable lags)
    exact: object | None      # lwsim.diagnostics.ExactEnvelope (None: not computed)
    notes: list
    warnings: list
    detection_nulls: dict = None   # {"lag": table, "full": table} (docs/statistics.md §3.3); detection is one of them

    # ------------------------------------------------------------------ numbers
    @property
    def lags(self):
        return self.detection.lags.astype(np.int64)

    def long_lag_neurons(self):
        """Neuron indices by decreasing time scale τ_q (τ = ∞, no decay, first; undefined last)."""
        tau = self.timescales.tau
        key = np.where(np.isnan(tau), -np.inf, tau)
        return np.argsort(-key, kind="stable")

    def to_dict(self) -> dict:
        env, det, ts = self.envelope, self.detection, self.timescales
        tau = ts.tau
        rho = dg.rate_timescale_spearman(env.lam_neuron, tau)
        per_lag = {"lags": self.lags, "f": env.f, "f_gates": env.f_gates, "R": env.ratio,
                   "lam_mean": env.lam_mean, "lam_std": env.lam_std, "count": env.count,
                   "mean": det.mean, "alpha_hat": det.alpha, "sigma_hat": det.sigma,
                   "kappa_hat": det.kappa, "n_hat": det.n_hat, "n_star": det.n_star,
                   "reliable": det.reliable, "method": list(det.method)}
        exact = None
        if self.exact is not None:
            from scipy.stats import spearmanr
            sp = spearmanr(self.exact.f, env.f).statistic if self.lags.size > 2 else np.nan
            exact = {"f_exact": self.exact.f, "offdiag": self.exact.offdiag, "spearman_f": float(sp)}
        return {
            "settings": self.settings, "notes": self.notes, "warnings": self.warnings,
            "per_lag": per_lag,
            "window": {"n_grid": det.n_grid, "h_n": det.h_n, "eps": det.eps, "noise": det.noise,
                       "h_n_by_null": {n: t.h_n for n, t in (self.detection_nulls or {}).items()}},
            "decay": _decay_dict(self.decay),
            "master": self.master.to_dict() if self.master is not None else None,
            "exact": exact,
            "neurons": {"lam": env.lam_neuron, "tau": tau, "tau_r2": ts.r2, "tau_slope": ts.slope,
                        "m": env.m, "long_lag_order": self.long_lag_neurons()},
            "lam_tau_spearman": float(rho[0]),
        }

    def to_json(self, indent=1) -> str:
        """JSON text; ∞ and NaN as the strings "inf" and "nan"."""
        return json.dumps(to_jsonable(self.to_dict(), "report"), indent=indent, allow_nan=False,
                          ensure_ascii=False)

    # ------------------------------------------------------------------ Markdown
    def to_markdown(self, figures=()) -> str:
        d = self.to_dict()
        s, det, pl = self.settings, self.detection, d["per_lag"]
        out = ["# Learnability-window report", ""]
        src = s.get("sources") or {}
        out += [f"Model `{s['cell']}`; diagnostic data T = {s['T']}, B = {s['B']} sequences."]
        out += [f"- {k}: `{v}`" for k, v in src.items()]
        out += [f"- rates λ: {s['rates']}", f"- K = {s['K']} direction(s), seed {s['seed']}, "
                f"ε = {_fmt(s['eps'])}, statistic {s['statistic']}, conventions {s.get('conventions')}, "
                f"backend {s['backend']}", ""]
        if self.notes:
            out += ["Defaults used:", ""] + [f"- {n}" for n in self.notes] + [""]
        if self.warnings:
            out += ["**Warnings**", ""] + [f"- {w}" for w in self.warnings] + [""]
        out += ["## Summary", ""]
        h = det.h_n
        out += [f"- learnability window Ĥ_N at the largest budget N = {int(det.n_grid[-1])}: "
                f"**{_fmt(h[-1])}** lags (lag grid up to {int(self.lags[-1])})"]
        if d["decay"] is not None:
            sel = d["decay"]["selected_bic"]
            par = ", ".join(f"{k} {_fmt(v)}" for k, v in d["decay"]["fits"][sel]["params"].items())
            out += [f"- envelope decay law (BIC): **{sel}** ({par}; R² "
                    f"{_fmt(d['decay']['fits'][sel]['r2'])})"]
        if d["master"] is not None:
            m = d["master"]
            out += [f"- master check log N̂ = a + b·(−κ̂ log f): slope b = **{_fmt(m['slope'])}** "
                    f"(theory 1), R² {_fmt(m['r2'])}, {m['n']} lags"]
        if d["exact"] is not None:
            out += [f"- exact vs first-order envelope: Spearman ρ = {_fmt(d['exact']['spearman_f'])}"]
        out += [f"- Spearman ρ(Λ_q, τ_q) across neurons: {_fmt(d['lam_tau_spearman'])}", ""]
        nulls = self.detection_nulls or {det.noise: det}
        out += ["## Learnability window Ĥ_N", "",
                f"Under the null **{det.noise}** (the report's), and beside it every null computed: "
                "\"lag\" tests each lag's statistic against its own spread, \"full\" against the spread of "
                "the whole per-sequence update (docs/statistics.md §3.3).", "",
                "| N | " + " | ".join(f"Ĥ_N ({n})" for n in nulls) + " |", "|---|" + "---|" * len(nulls)]
        out += [f"| {int(n)} | " + " | ".join(_fmt(t.h_n[i]) for t in nulls.values()) + " |"
                for i, n in enumerate(det.n_grid)] + [""]
        out += ["## Per lag", "",
                "| ℓ | f(ℓ) | " + ("f_exact(ℓ) | " if d["exact"] else "")
                + "m̄ | α̂ | σ̂ | N̂ | N* | reliable |",
                "|---" * (8 + bool(d["exact"])) + "|"]
        for i, ell in enumerate(pl["lags"]):
            row = [str(int(ell)), _fmt(pl["f"][i])]
            if d["exact"]:
                row.append(_fmt(d["exact"]["f_exact"][i]))
            row += [_fmt(pl["mean"][i]), _fmt(pl["alpha_hat"][i]), _fmt(pl["sigma_hat"][i]),
                    _fmt(pl["n_hat"][i]), _fmt(pl["n_star"][i]),
                    "yes" if pl["reliable"][i] else "**no**"]
            out.append("| " + " | ".join(row) + " |")
        nd = d["neurons"]
        order = nd["long_lag_order"][:N_NEURONS_SHOWN]
        out += ["", f"## Neurons with the longest time scales (top {len(order)} of {s['H']})", "",
                "| neuron q | τ_q | R² of the fit | Λ_q |", "|---|---|---|---|"]
        out += [f"| {int(q)} | {_fmt(nd['tau'][q])} | {_fmt(nd['tau_r2'][q])} | {_fmt(nd['lam'][q])} |"
                for q in order]
        if figures:
            out += ["", "## Figures", ""] + [f"![{Path(f).stem}]({Path(f).name})" for f in figures]
        out += ["", "Definitions: docs/analyze.md; f, τ: docs/diagnostics.md §2.5–2.6; α̂, σ̂, N̂, Ĥ_N: "
                "docs/statistics.md §3.3; decay laws and master check: §3.4–3.5.", ""]
        return "\n".join(out)

    # ------------------------------------------------------------------ figures
    def figures(self) -> dict:
        """{name: matplotlib Figure}: envelope, window, tails, neurons."""
        import matplotlib.pyplot as plt
        env, det, ts = self.envelope, self.detection, self.timescales
        lags = self.lags
        figs = {}
        fig, ax = plt.subplots(figsize=(5, 3.4))
        ax.semilogy(lags, env.f, "o-", ms=3, label="f(ℓ) first order")
        if self.exact is not None:
            ax.semilogy(lags, self.exact.f, "s--", ms=3, label="f_exact(ℓ)")
        ax.semilogy(lags, env.f_gates, ":", label="f_gates(ℓ)")
        ax.set(xlabel="lag ℓ", ylabel="envelope", title="Envelope")
        ax.legend(fontsize=8)
        fig.tight_layout()                          # keeps the x label inside the picture
        figs["envelope"] = fig
        fig, ax = plt.subplots(figsize=(5, 3.4))
        nulls = self.detection_nulls or {self.settings.get("noise", "lag"): det}
        for name, d in nulls.items():              # every null computed (lag and full), each labelled
            ax.semilogx(d.n_grid, d.h_n, "o-" if name == "lag" else "s--", ms=4,
                        label=f"{name} null" + (" (report)" if d is det and len(nulls) > 1 else ""))
        ax.legend(fontsize=8)
        ax.set(xlabel="sample budget N", ylabel=r"$\hat{H}_N$ (lags)", title="Learnability window")
        # decades only, written plainly: matplotlib's minor labels (3×10¹ 4×10¹ …) collide here
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
        decades = np.log10(max(det.n_grid) / min(det.n_grid)) if len(det.n_grid) else 0.0
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if decades <= 2.5 else (1.0,)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        fig.tight_layout()                          # keeps the x label inside the picture
        figs["window"] = fig
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
        rel = det.reliable
        for ax, v, name in ((a1, det.alpha, "α̂(ℓ)"), (a2, det.sigma, "σ̂(ℓ)")):
            ax.plot(lags[rel], v[rel], "o", ms=4, label="reliable")
            ax.plot(lags[~rel], v[~rel], "x", ms=5, color="C3", label="unreliable")
            ax.set(xlabel="lag ℓ", title=name)
        a2.set_yscale("log")
        a1.legend(fontsize=8)
        fig.tight_layout()
        figs["tails"] = fig
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
        tau = ts.tau[np.isfinite(ts.tau) & (ts.tau > 0)]
        if tau.size:
            a1.hist(np.log10(tau), bins=min(20, max(3, tau.size // 2)))
        a1.set(xlabel="log₁₀ τ_q", ylabel="neurons", title="Time-scale spectrum")
        ok = np.isfinite(ts.tau)
        a2.loglog(env.lam_neuron[ok], ts.tau[ok], "o", ms=4)
        a2.set(xlabel="Λ_q", ylabel="τ_q", title="Rate vs time scale")
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
        for axis in (a2.xaxis, a2.yaxis):           # 1–2–5 in plain numbers; minor labels collided
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0), numticks=8))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
        fig.tight_layout()
        figs["neurons"] = fig
        return figs

    def save(self, out_dir, dpi=120) -> list:
        """Write report.md, report.json and one PNG per figure into ``out_dir``; returns the paths."""
        import matplotlib.pyplot as plt
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, fig in self.figures().items():
            p = out / f"{name}.png"
            fig.savefig(p, dpi=dpi)
            plt.close(fig)
            paths.append(p)
        for name, text in (("report.json", self.to_json()), ("report.md", self.to_markdown(paths))):
            atomic_write_bytes(out / name, text.encode())
            os.chmod(out / name, 0o644)             # a report to share, not the temp file's 0600
        return [out / "report.md", out / "report.json", *paths]
