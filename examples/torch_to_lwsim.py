"""Weights trained in PyTorch → lwsim → envelope f(ℓ), tail index α̂(ℓ), learnability window Ĥ_N.

A ``torch.nn.GRU`` (with an ``nn.Linear`` read-out) is trained briefly on the ``multilag`` task;
its state dict, converted to NumPy arrays, loads unchanged into lwsim's GRU with
``convention="torch"`` (docs/cells.md §1.2, §1.9). lwsim then computes, without torch:

- the envelope of effective learning rates f(ℓ) for the SGD rate η (docs/diagnostics.md §2.5),
- the matched statistic ψ̄_b(ℓ) (docs/diagnostics.md §2.7),
- its tail index α̂(ℓ), N̂(ℓ) and the learnability window Ĥ_N (docs/statistics.md §3.2–3.3).

When torch is not installed the training step is skipped and the weights saved beside this file
(``torch_gru_weights.npz``, produced by :func:`train_in_torch` with torch 2.14) are used.

Run: ``python examples/torch_to_lwsim.py [tiny|small]``; ``--retrain`` retrains with torch and
overwrites the saved weights.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

import lwsim
from lwsim import diagnostics as dg
from lwsim import stats, tasks

WEIGHTS = pathlib.Path(__file__).with_name("torch_gru_weights.npz")
T, D, H = 64, 4, 16                      # the saved model's sizes
TASK = dict(lags=[4, 8, 16], coefs=[0.6, 0.5, 0.4], sigma_y=0.1)
LR = 0.1                                 # the SGD rate used in torch, η of the envelope
SIZES = {"tiny": dict(n_diag=64, max_lag=24), "small": dict(n_diag=512, max_lag=48)}


def train_in_torch(steps: int = 600, seed: int = 0) -> dict:
    """Train nn.GRU + nn.Linear with SGD on multilag; return the state dict as NumPy arrays
    under lwsim's torch key names (``weight_ih_l0`` …, ``readout.weight``, ``readout.bias``)."""
    import torch  # only here: lwsim itself never imports torch

    torch.manual_seed(seed)
    gru = torch.nn.GRU(D, H)                 # time-major, like lwsim
    readout = torch.nn.Linear(H, 1)
    opt = torch.optim.SGD(list(gru.parameters()) + list(readout.parameters()), lr=LR)
    task = tasks.make("multilag", T=T, D=D, seed=seed, **TASK)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x, y = task.batch(32, rng)
        out, _ = gru(torch.from_numpy(x).float())
        loss = torch.nn.functional.mse_loss(readout(out), torch.from_numpy(y).float())
        opt.zero_grad()
        loss.backward()
        opt.step()
    sd = {k: v.detach().cpu().numpy() for k, v in gru.state_dict().items()}
    sd.update({f"readout.{k}": v.detach().cpu().numpy() for k, v in readout.state_dict().items()})
    # torch's own output on a fixed probe, so that lwsim can be checked against it without torch
    probe, _ = task.batch(4, np.random.default_rng(123))
    with torch.no_grad():
        out, _ = gru(torch.from_numpy(probe).float())
        sd["probe.x"] = probe
        sd["probe.y_torch"] = readout(out).numpy()
    return sd


def load_weights(retrain: bool = False) -> tuple[dict, str]:
    """The torch state dict (NumPy arrays) and where it came from."""
    if retrain:
        sd = train_in_torch()
        np.savez(WEIGHTS, **sd)
        return sd, "trained now in PyTorch (saved)"
    with np.load(WEIGHTS) as z:
        return {k: z[k] for k in z.files}, f"loaded from {WEIGHTS.name}"


def check_against_torch(cell, params, sd) -> float:
    """Largest |ŷ_lwsim − ŷ_torch| on the probe inputs saved with the weights (torch ran in
    float32, so agreement is to float32 round-off, ~1e−6)."""
    y = cell.forward(params, sd["probe.x"]).y
    err = float(np.abs(y - sd["probe.y_torch"]).max())
    if not err < 1e-4:
        raise AssertionError(f"lwsim's GRU differs from torch's by {err:.3g} on the probe")
    return err


def main(size: str = "tiny", retrain: bool = False) -> dict:
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    cfg = SIZES[size]
    sd, source = load_weights(retrain)
    cell = lwsim.make_cell("gru", n_in=D, n_hidden=H, n_out=1, convention="torch",
                           readout="every", dtype="float64")
    params = cell.params_from_torch({k: v for k, v in sd.items() if not k.startswith("probe.")})
    err = check_against_torch(cell, params, sd)
    task = tasks.make("multilag", T=T, D=D, seed=0, **TASK)
    x, y = task.batch(cfg["n_diag"], np.random.default_rng(1))
    lags = np.arange(1, cfg["max_lag"] + 1)

    env = dg.envelope(cell, params, x, LR, lags, progress=False)                   # f(ℓ)
    ms = dg.matched_statistic(cell, params, x, y, LR, lags, progress=False)        # ψ̄_b(ℓ)
    det = stats.detection_table(ms.samples, lags, n_grid=[10, 100, 1000, 10000], eps=20.0)
    loss, _ = cell.loss_and_grad(params, x, y)
    print(f"weights {source}; max |lwsim − torch| on the probe {err:.2e}; "
          f"loss on fresh data {loss:.4f}")
    print("lag  f(ℓ)        α̂(ℓ)  N̂(ℓ)")
    for i in range(0, lags.size, max(1, lags.size // 8)):
        print(f"{lags[i]:3d}  {env.f[i]:.4e}  {det.alpha[i]:.2f}  {det.n_hat[i]:g}")
    print("Ĥ_N for N =", det.n_grid.astype(int).tolist(), "→", det.h_n.tolist())
    return {"torch_error": err, "loss": loss, "f": env.f, "alpha": det.alpha, "h_n": det.h_n, "lags": lags}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args[0] if args else "tiny", retrain="--retrain" in sys.argv)
