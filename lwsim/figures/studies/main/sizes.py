"""The [A] main grid's sizes per preset (docs/experiments.md §5.3, docs/presets.md): the run group
``a_main``'s configuration before the cell, seed and optimizer are added.

quick, medium and smoke shrink [A]'s earlier code generation's sizes (:data:`A_MAIN_V1_SIZES`) and
keep lwsim's defaults for every option; paper is the final paper (the author's final launcher),
paper-v1 the earlier code generation with its statistic.

Options of experiments.a_main (absent = lwsim's default, listed first; docs/experiments.md §5.3):
  statistic      "sequence" (ψ̄_b, N counts sequences) | "instantaneous" (ψ_{b,t}, N counts time points)
  rates          "optimizer" (Λ from the trained optimizer) | "none" (Λ ≡ 1, f averaged over neurons)
  orient         False | True (per direction and lag, docs/diagnostics.md §2.7)
  tail_methods   ["auto"] | list of "ecf"/"mcculloch"/"auto": one detection table each, the
                 first is the main one, the others are stored with the suffix _<method>
  n_boot         200 | bootstrap resamples of the McCulloch CI
  min_samples    None | int: fewer samples per lag → α̂ = 2, σ̂ = 0, never detectable
  cap_budget     False | True: a budget N uses min(N, n_ℓ) samples
  fit_subsample  None | int: tail fits on at most this many samples
  decay_window   "all" (floor 0, no trim) | "author" (stats.envelope_floor(f), 2% trim)
  gate_init      "lwsim" (gate biases logit(0.05), LSTM forget 0.95) | "final" (LSTM forget 0.5)
                 | "v1" (GRU/LSTM biases PyTorch's U(−1/√D, 1/√D))
  nulls          ["lag"] | names from "lag", "full", "author": a detection table per null
                 (docs/statistics.md §3.3), stored with the suffix _<null> ("lag" unsuffixed)
  floor_ablations []  | names from training.FLOOR_ABLATIONS: the author's floors one at a time
  diag_dtype     "float64" | "float32": the "lag" table from the matched statistic in the author's
                 float32 arithmetic (the envelope stays float64, as the author's)
"""
from __future__ import annotations

from ...presets import SEEDS_MEDIUM, A_LAGS_FINAL, A_OPTIONS_FINAL, A_OPTIONS_V1, N_GRID_FINAL, NULLS_ALL, lag_grid, int_lags

ABLATIONS_ALL = ["snr", "ecf", "floors", "f32"]

# [A] main at the earlier code generation's sizes (the author's repository README, "as in the paper").
A_MAIN_V1_SIZES = dict(train_dtype="float32", T=1024, D=16, H=128, n_train=8000, n_val=1000, n_diag=8000, epochs=750, batch=512,
                       lr=1e-3, weight_decay=1e-4, clip=1.0, s0=0.05,
                       task_lags=[32, 64, 128, 192, 256], task_coefs=[0.6, 0.5, 0.4, 0.32, 0.26],
                       sigma_y=0.3, lags=int_lags(4, 256, 128),
                       n_grid=[25, 50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800,
                               6400, 9600, 12800],
                       eps=0.1, seeds=[212, 1001, 2002, 3003, 4004], optimizers=["adamw"], K=1)

# The final paper (the author's final launcher): per-sequence means ψ̄_b Λ-weighted, K = 50
# oriented directions, ECF and McCulloch Ĥ_N both reported.
PAPER = dict(train_dtype="float32", T=1536, D=16, H=256, n_train=8000, n_val=1000, n_diag=12000, epochs=1500, batch=384,
             lr=2e-4, weight_decay=1e-4, clip=1.0, s0=0.05,
             task_lags=[64, 128, 256, 384, 512, 768], task_coefs=[0.60, 0.50, 0.40, 0.30, 0.22, 0.16],
             sigma_y=0.4, lags=A_LAGS_FINAL, n_grid=list(N_GRID_FINAL),
             eps=20.0, seeds=[2, 12, 31, 41, 51], optimizers=["adamw"], K=50,
             nulls=NULLS_ALL, **A_OPTIONS_FINAL)
PAPER_V1 = dict(A_MAIN_V1_SIZES, nulls=NULLS_ALL, **A_OPTIONS_V1)

# eps = 20 (the default threshold, docs/statistics.md §3.3): with the paper's 0.1 every lag is detectable
# at the smallest N at this size. n_diag >= 500 so that the tail fits are reliable (docs/statistics.md §3.2).
# Lags reach 224 (T = 256) so that Ĥ_N is not capped by the lag grid at the largest N.
QUICK = dict(A_MAIN_V1_SIZES, T=256, D=8, H=32, n_train=256, n_val=64, n_diag=512, epochs=30, eps=20.0,
             batch=32, lr=3e-3, task_lags=[8, 16, 32, 48, 64], lags=lag_grid(1, 224, 28),
             n_grid=[25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200],
             seeds=[212, 1001, 2002], nulls=NULLS_ALL, floor_ablations=ABLATIONS_ALL)
SMOKE = dict(QUICK, T=24, D=3, H=6, n_train=32, n_val=16, n_diag=32, epochs=1,
             batch=16, task_lags=[2, 4, 8], task_coefs=[0.6, 0.5, 0.4], lags=[2, 3, 4, 5, 6, 8, 10, 12, 14, 16],
             n_grid=[25, 100, 400, 1600], seeds=[212])
# medium: T 384, H 48; 1024 training sequences and lr 1e-2: at quick's 256 sequences GRU/ConstGate
# overfit at validation R² ≈ 0.1 whatever the lr; with 1024 sequences × 40 epochs an LSTM at
# this size reached R² 0.67 and a ConstGate 0.19 (still rising), hence 60 epochs.
MEDIUM = dict(QUICK, T=384, H=48, n_train=1024, n_val=128, n_diag=1024, epochs=60,
              lr=1e-2, task_lags=[8, 16, 32, 64, 96], lags=lag_grid(1, 336, 36),
              n_grid=[25 * 2 ** i for i in range(14)], seeds=SEEDS_MEDIUM)

SIZES = {"a_main": {"smoke": SMOKE, "quick": QUICK, "medium": MEDIUM, "paper": PAPER, "paper-v1": PAPER_V1}}
