"""Fixtures shared by the tests of lwsim.analyze: one a_main run of the figures pipeline at smoke
size with its trained model written as the files `python -m lwsim.analyze` reads."""
from __future__ import annotations

import numpy as np
import pytest

import lwsim
from lwsim.figures import training as ex
from lwsim.figures.studies import preset_sizes
from lwsim.figures.studies.main.experiment import a_main

SMOKE = preset_sizes("smoke")


@pytest.fixture(scope="module")
def figures_run(tmp_path_factory):
    """a_main (smoke sizes) on a torch-convention GRU without LayerNorm, with its trained model."""
    c = dict({k: v for k, v in SMOKE["a_main"].items()
              if k not in ("seeds", "optimizers")},
             cell="gru", seed=212, optimizer="adamw", backend="numba")
    seen = {}
    mp = pytest.MonkeyPatch()
    mp.setattr(ex, "_a_cell", lambda name, cfg: lwsim.make_cell(
        "gru", cfg["D"], cfg["H"], convention="torch", readout="every"))
    real_train = ex.train

    def spy(cell, params, ds, **kw):
        res = real_train(cell, params, ds, **kw)
        seen.update(cell=cell, res=res, ds=ds)
        return res
    mp.setattr(ex, "train", spy)
    try:
        out = a_main(c)
    finally:
        mp.undo()
    cell, res, ds = seen["cell"], seen["res"], seen["ds"]
    d = tmp_path_factory.mktemp("model")
    pytest.importorskip("safetensors.numpy").save_file(cell.params_to_torch(res.params), str(d / "model.safetensors"))
    v = cell.params_to_torch({k: st["v"] for k, st in res.optimizer.state.items()})
    m = cell.params_to_torch({k: st["m"] for k, st in res.optimizer.state.items()})
    opt = {f"{k}.exp_avg_sq": a for k, a in v.items()}
    opt.update({f"{k}.exp_avg": a for k, a in m.items()})
    opt["step"] = np.array([res.optimizer.step_count], dtype=np.int64)
    pytest.importorskip("safetensors.numpy").save_file(opt, str(d / "opt.safetensors"),
                                metadata={"optimizer": "adamw", "betas": "0.9,0.999"})
    np.savez(d / "diag.npz", x=ds.x_diag, y=ds.y_diag)
    return c, out, res, d
