"""[B]'s S2 experiment ``b_s2`` (docs/experiments.md §5.4): anisotropy of Jacobian products and of
the gradient covariance over checkpoints, per task × model."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from lwsim import diagnostics as dg
from lwsim.tasks import make as make_task
from lwsim.train import train

from ...config import BTrained, list_field, run_config
from ...training import _b_cell, _float64
from ...run import experiment
from ...timing import part


S2_GRAD_OFFSET = {"rnn": 0, "sharedgate": 1000, "diaggate": 2000}   # [B]'s per-model seed offsets


def _s2_author_rows(task, c, ck, rng):
    """[B]'s gradient batch at checkpoint ck: rounds of ``probe`` sequences seeded
    seed + ck + model offset + 100000 + rows so far, plus 1e−6 input jitter."""
    base = c["seed"] + ck + S2_GRAD_OFFSET.get(c["cell"], 0) + 100000
    xs, ys, done = [], [], 0
    while done < c["n_examples"]:
        xb, yb = task.batch(c["probe"], base + done)
        xs.append(xb + 1e-6 * rng.standard_normal(xb.shape))
        ys.append(yb)
        done += c["probe"]
    return (np.concatenate(xs, axis=1)[:, :c["n_examples"]], np.concatenate(ys, axis=1)[:, :c["n_examples"]])


@run_config("b_s2")
class BAnisotropy(BTrained):
    """A b_s2 run: ``optimizer`` on ``task``, at each checkpoint the Jacobian-product anisotropy on
    ``lags`` (``n_triples``) and the gradient covariance of ``n_examples`` sequences under each of
    ``conventions``; ``protocol``, ``task_inputs`` and ``train_batch_seed`` as described in b_s2;
    ``b6_errorbars`` how B6 draws its spread."""
    optimizer: str
    task: str
    lags: list[int]
    n_examples: int
    n_triples: int
    b6_errorbars: str = "iqr"
    protocol: str = "lwsim"
    task_inputs: str = "lwsim"
    train_batch_seed: int = 0
    conventions: str | list[str] = list_field("lwsim")
    CHOICES: ClassVar[dict] = {"b6_errorbars": ("iqr", "quartiles"), "protocol": ("lwsim", "author"),
                               "task_inputs": ("lwsim", "author"), "conventions": ("lwsim", "author")}


@experiment("b_s2")
def b_s2(c):
    """Anisotropy of Jacobian products and of the gradient covariance over checkpoints (B4–B6).

    ``protocol`` "lwsim" (default): fresh batches, checkpoint c after c updates, triples and
    gradients on one batch of n_examples, ``sampling`` lwsim. "author" ([B]'s S2 code,
    docs/fidelity.md): training on one fixed batch (drawn from ``train_batch_seed``, the same for
    every seed as in [B]'s code) plus 1e−6 jitter, checkpoint c after c + 1 updates, Jacobians on
    a separate batch of ``probe`` sequences, triples drawn as [B] (sampling "author", new draw per
    checkpoint), gradient rows from new seeds per checkpoint and model. ``conventions``: a list
    of "lwsim"/"author"; keys of "author" carry the suffix ``_author``.
    """
    from lwsim.tasks import fixed_batch
    c = BAnisotropy.of(c)
    author = c.protocol == "author"
    # task_inputs "author": [B]'s inputs (zero extra channels; ar2: U(0,1), no burn-in); adding has one kind
    kw = {} if c["task"] == "adding" else {"inputs": c.task_inputs}
    task = make_task(c["task"], T=c["T"], D=c["D"], seed=c["seed"], **kw)
    cell = _b_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="torch")
    shift = 1 if author else 0                   # [B]: checkpoint "it" is saved after it + 1 updates
    train_data = fixed_batch(task, c["batch"], c.train_batch_seed) if author else task
    with part("training"):
        res = train(cell, params, train_data, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]},
                    steps=max(c["checkpoints"]) + shift, batch_size=c["batch"], backend=c["backend"],
                    seed=c["seed"], checkpoints=[ck + shift for ck in c["checkpoints"]], validate=False,
                    progress=False)
        cell, res = _float64(cell, res)
    if author:
        x_probe, _ = task.batch(c["probe"], c["seed"])
    else:
        x, y = task.batch(c["n_examples"], c["seed"] + 104729)
        x_probe = x
    lags = [l for l in c["lags"] if l < c["T"]]
    out = {"lags": np.asarray(lags)}
    r = min(10, c["H"])
    n_energy = min(16, c["H"])
    rng = np.random.default_rng([c["seed"], 0x52])
    for i, ck in enumerate(c["checkpoints"]):
        p = res.checkpoints[ck + shift]
        if author:
            x, y = _s2_author_rows(task, c, ck, rng)
        with part("diagnostics"):
            G, _ = dg.per_example_gradients(cell, p, x, y, backend=c["backend"], progress=False)
        for conv in c.conventions:
            sfx = "" if conv == "lwsim" else f"_{conv}"
            with part("diagnostics"):
                ja = dg.jacobian_anisotropy(cell, p, x_probe, lags, n_samples=c["n_triples"],
                                            seed=c["seed"] + 7919 * i if author else c["seed"], r=r,
                                            n_energy=n_energy, backend=c["backend"], progress=False,
                                            conventions=conv, sampling="author" if author else "lwsim")
                ga = dg.gradient_covariance_metrics(G, r=min(10, c["n_examples"] - 1), conventions=conv)
            out[f"ai{sfx}_{ck}"], out[f"ce{sfx}_{ck}"] = ja.ai_median, ja.ce_median
            out[f"gai{sfx}_{ck}"], out[f"gce{sfx}_{ck}"] = float(ga.ai), float(ga.ce)
            out[f"gpr{sfx}_{ck}"] = float(ga.pr)
    return out
