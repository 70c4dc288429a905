"""Measured effect of each of [B]'s code approximations (docs/fidelity.md, "[B]").

    python benchmarks/fidelity_effects_b.py            # the paper's sizes at initialisation
    python benchmarks/fidelity_effects_b.py --small    # a quick look (seconds)

Every number compares lwsim's exact quantity with the same quantity under one of the author's
approximations, on the same weights and inputs (PyTorch default init, no biases, the adding task,
S1: T 80, H 64, probe 12; S2: T 120, H 64, 64 probe sequences, 64 triples per lag; appendix:
T 100, H 64, N(0, 0.2²) weights, 5 seeds).
"""
from __future__ import annotations

import argparse

import numpy as np

import lwsim
from lwsim import diagnostics as dg
from lwsim.diagnostics import author_b as ab
from lwsim.tasks import make

LEAKY_S = 0.8


def cell_of(name, D, H):
    opts = {"bias": False, "readout": "last"}
    if name == "constgate":
        opts["s"] = LEAKY_S
    return lwsim.make_cell(name, D, H, **opts)


def rel(a, b):
    return np.linalg.norm(a - b, axis=(-2, -1)) / np.linalg.norm(b, axis=(-2, -1))


def gate_term(T, H, seed=0):
    print("1. gate term from h_t instead of h_{t−1} (S2 probe, adding, init)")
    x, _ = make("adding", T=T, D=6, seed=seed).batch(8, seed)
    for name in ("sharedgate", "diaggate"):
        cell = cell_of(name, 6, H)
        p = cell.init_params(seed=seed, scheme="torch")
        J = np.asarray(cell.jacobians(p, x))
        Ja = ab.author_jacobians(cell, p, x)
        B = dg.gate_derivative_term(cell, p, x)
        Ba = dg.gate_derivative_term(cell, p, x, conventions="author")
        rj, rb = rel(Ja, J).ravel(), rel(Ba, B).ravel()
        print(f"   {name:10s} ‖J_author − J‖_F/‖J‖_F median {np.median(rj):.3f} (max {rj.max():.3f}); "
              f"‖B_author − B‖_F/‖B‖_F median {np.median(rb):.3f} (max {rb.max():.3f})")


def s1_effects(T, H, probe, seed=0):
    print("2–4. S1 profile (adding, init): order, power iterations, medians")
    task = make("adding", T=T, D=4, seed=seed)
    x, _ = task.batch(probe, seed + 7919)
    lags = np.arange(1, T)
    for name in ("constgate", "sharedgate", "diaggate"):
        cell = cell_of(name, 4, H)
        p = cell.init_params(seed=seed, scheme="torch")
        J = np.asarray(cell.jacobians(p, x), dtype=np.float64)
        S = ab.transport_norms(J, lags, "exact", "svd")
        Sr = ab.transport_norms(J, lags, "reversed", "svd")
        Sp = ab.transport_norms(J, lags, "exact", "power", 5, seed)
        ok = np.isfinite(S)
        d_order = np.abs(Sr[ok] - S[ok]) / S[ok]
        d_pow = (Sp[ok] - S[ok]) / S[ok]
        med = np.array([np.median(r[np.isfinite(r)]) for r in S.reshape(lags.size, -1)])
        lmed = np.array([ab.lower_median(r) for r in S.reshape(lags.size, -1)])
        mu, mul = med / med[0], lmed / lmed[0]
        prof = dg.lr_profile(cell, p, x, progress=False, min_points=50)
        profa = dg.lr_profile(cell, p, x, progress=False, min_points=50, conventions="author", seed=seed)
        inj, inja = prof.predictors["injection"], profa.predictors["injection"]
        print(f"   {name:10s} order: |ΔS|/S max {d_order.max():.3f} (median {np.median(d_order):.2e}); "
              f"power: ΔS/S min {d_pow.min():+.3f} (median {np.median(d_pow):+.2e}); "
              f"lower median: max |Δμ̃|/μ̃ {np.max(np.abs(mul - mu) / mu):.3f}; "
              f"μ̃⁰ lower-median vs mean P̄: max |Δ|/μ̃⁰ {np.nanmax(np.abs(inja.mu0 - inj.mu0) / inj.mu0):.3f}")
        print(f"   {'':10s} all author conventions: μ̃ at lag {lags[-1]} {prof.mu[-1]:.3g} → {profa.mu[-1]:.3g}; "
              f"s(Πg) {inj.fit.s:.3f} → {inja.fit.s:.3f}; s(Π(1−g)) "
              f"{prof.predictors['retention'].fit.s:.3f} → {profa.predictors['retention'].fit.s:.3f}")


def s2_effects(T, H, probe, n_triples, seed=0):
    print("2, 5. S2 Jacobian anisotropy (adding, init): order, floors, all author conventions")
    task = make("adding", T=T, D=6, seed=seed)
    x, _ = task.batch(probe, seed)
    lags = [1, 2, 4, 8, 12, 16, 24, 32, 40]
    for name in ("rnn", "sharedgate", "diaggate"):
        cell = cell_of(name, 6, H)
        p = cell.init_params(seed=seed, scheme="torch")
        J = np.asarray(cell.jacobians(p, x), dtype=np.float64)
        bs, ts = dg.anisotropy.sample_triples(probe, T, lags, n_triples, seed, "author")
        ai = {k: [] for k in ("exact", "reversed", "floored")}
        for i, h in enumerate(lags):
            ok = bs[i] >= 0
            for order in ("exact", "reversed"):
                sv = np.linalg.svd(ab.sampled_products(J, bs[i, ok], ts[i, ok], h, order), compute_uv=False)
                ai[order].append(np.median(sv[:, 0] / sv[:, 9]))
                if order == "exact":
                    ai["floored"].append(np.median(ab.floored_metrics(sv, 10, 16)[0]))
        ex, rv, fl = (np.array(ai[k]) for k in ("exact", "reversed", "floored"))
        full = dg.jacobian_anisotropy(cell, p, x, lags, n_samples=n_triples, seed=seed, progress=False,
                                      conventions="author", sampling="author").ai_median
        print(f"   {name:10s} median AI per lag, exact: {np.array2string(ex, precision=3)}")
        print(f"   {'':10s} reversed order: max |Δ|/AI {np.max(np.abs(rv - ex) / ex):.3f}; floor 1e−12: AI at "
              f"lag 40 {ex[-1]:.4g} → {fl[-1]:.4g}; all author conventions at lag 40: {full[-1]:.4g}")


def expansion_effects(T, H, seeds):
    print("1, 2. Appendix E(ε) (N(0, 0.2²) weights, sinusoid inputs): gate term and order")
    for name in ("sharedgate", "diaggate"):
        r_order, r_gate, r_all, slopes = [], [], [], []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            t = np.linspace(0, 12, T)
            x = (np.sin(np.linspace(0.03, 0.09, 3)[None] * t[:, None] + rng.standard_normal(3))
                 + 0.05 * rng.standard_normal((T, 3)))[:, None, :]
            cell = lwsim.make_cell(name, 3, H, bias=False, readout="last")
            p = cell.init_params(seed=seed, scheme="normal", sigma_w=0.2)
            eps = dg.expansion.AUTHOR_EPS
            A, B = dg.gate_split(cell, p, x)
            _, Ba = dg.gate_split(cell, p, x, conventions="author")
            E = dg.frechet_from_split(A, B, eps).E[0]
            Eo = dg.frechet_from_split(A[::-1], B[::-1], eps).E[0]
            Eg = dg.frechet_from_split(A, Ba, eps).E[0]
            fa = dg.frechet_check(cell, p, x, eps, conventions="author")
            r_order.append(np.max(np.abs(Eo - E) / E))
            r_gate.append(np.max(np.abs(Eg - E) / E))
            r_all.append(np.max(np.abs(fa.E[0] - E) / E))
            slopes.append(fa.slope[0])
        print(f"   {name:10s} max over ε of |ΔE|/E: order {np.max(r_order):.3f}, gate term "
              f"{np.max(r_gate):.3f}, both {np.max(r_all):.3f}; author slopes "
              f"{np.min(slopes):.4f}…{np.max(slopes):.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    a = ap.parse_args()
    if a.small:
        gate_term(40, 16)
        s1_effects(24, 16, 4)
        s2_effects(48, 16, 8, 16)
        expansion_effects(40, 16, [0, 1])
    else:
        gate_term(120, 64)
        s1_effects(80, 64, 12)
        s2_effects(120, 64, 64, 64)
        expansion_effects(100, 64, [0, 1, 2, 3, 4])


if __name__ == "__main__":
    main()
