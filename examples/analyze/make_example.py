"""Make the example report in examples/analyze/report/ (about a minute on 2 cores).

A GRU (torch convention, as nn.GRU) is trained in lwsim on the multilag task, saved the way a
PyTorch user would save theirs (safetensors, PyTorch key names, Adam's exp_avg_sq), and analysed
by the command line, exactly as in docs/analyze.md:

    python examples/analyze/make_example.py
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

import lwsim
from lwsim.tasks import make as make_task
from lwsim.train import train

T, D, H, SEED = 64, 4, 16, 0
OUT = Path(__file__).resolve().parent / "report"

task = make_task("multilag", T=T, D=D, seed=SEED, lags=[4, 8, 16], coefs=[0.6, 0.5, 0.4])
ds = task.dataset(n_train=256, n_val=64, n_diag=512, seed=SEED)
cell = lwsim.make_cell("gru", D, H, convention="torch")
res = train(cell, cell.init_params(seed=SEED, scheme="torch"), ds, optimizer="adamw",
            optimizer_kwargs={"lr": 3e-3}, epochs=10, batch_size=32, clip=1.0, backend="numba",
            seed=SEED, progress=False)

with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)
    save_file(cell.params_to_torch(res.params), str(tmp / "model.safetensors"))
    v = cell.params_to_torch({k: st["v"] for k, st in res.optimizer.state.items()})
    state = {f"{k}.exp_avg_sq": a for k, a in v.items()}
    state["step"] = np.array([res.optimizer.step_count])
    save_file(state, str(tmp / "opt.safetensors"), metadata={"optimizer": "adamw", "lr": "3e-3"})
    np.savez(tmp / "diag.npz", x=ds.x_diag, y=ds.y_diag)
    cmd = [sys.executable, "-m", "lwsim.analyze", "--cell", "gru", "--hidden", str(H),
           "--weights", str(tmp / "model.safetensors"), "--optimizer-state", str(tmp / "opt.safetensors"),
           "--data", str(tmp / "diag.npz"), "--out", str(OUT), "--K", "2", "--no-progress"]
    subprocess.run(cmd, check=True)
    # the report names the temporary files; state the ones a user would have instead
    for name in ("report.md", "report.json"):
        p = OUT / name
        p.write_text(p.read_text().replace(str(tmp) + "/", ""))
