"""Tests of lwsim/analyze (laid out like the code: docs/testing.md).

lwsim.analyze on an nn.LSTM trained by torch's Adam (optional: skipped without torch)."""


import json

import numpy as np
import pytest

import lwsim
from lwsim.analyze import load_optimizer, load_weights
from lwsim.analyze.__main__ import main


torch = pytest.importorskip("torch")


safetensors_torch = pytest.importorskip("safetensors.torch")


T, B, D, H, LR = 12, 24, 3, 4, 1e-2


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(D, H)                       # time-major
        self.readout = torch.nn.Linear(H, 1)

    def forward(self, x):
        return self.readout(self.rnn(x)[0])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.manual_seed(0)
    net = Net().double()
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(T, B, D, generator=g, dtype=torch.float64)
    y = torch.roll(x[..., :1], 3, dims=0)
    for _ in range(4):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    d = tmp_path_factory.mktemp("torch")
    strip = lambda k: k.split("rnn.", 1)[-1]                 # noqa: E731 -- nn.LSTM keys unprefixed
    sd = {strip(k): v.detach().contiguous() for k, v in net.state_dict().items()}
    safetensors_torch.save_file(sd, str(d / "model.safetensors"))
    names = [strip(n) for n, _ in net.named_parameters()]
    st = opt.state_dict()["state"]
    buffers = {}
    for i, name in enumerate(names):
        buffers[f"{name}.exp_avg"] = st[i]["exp_avg"].contiguous()
        buffers[f"{name}.exp_avg_sq"] = st[i]["exp_avg_sq"].contiguous()
        buffers[f"{name}.step"] = st[i]["step"].reshape(1).to(torch.float64)
    safetensors_torch.save_file(buffers, str(d / "opt.safetensors"),
                                metadata={"optimizer": "adam", "lr": str(LR)})
    np.savez(d / "diag.npz", x=x.numpy().transpose(1, 0, 2), y=y.numpy().transpose(1, 0, 2))
    with torch.no_grad():
        out = net(x).numpy()
    return d, net, st, names, x.numpy(), out


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def test_cli_on_torch_lstm(trained, tmp_path):
    d = trained[0]
    with pytest.warns(UserWarning, match="only 24"):
        rc = main(["--cell", "lstm", "--hidden", str(H), "--weights", str(d / "model.safetensors"),
                   "--optimizer-state", str(d / "opt.safetensors"), "--data", str(d / "diag.npz"),
                   "--batch-first", "--out", str(tmp_path), "--no-progress", "--backend", "numpy"])
    assert rc == 0
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["per_lag"]["lags"] == list(range(1, T // 2 + 1))
    assert "Adam" in rep["settings"]["rates"]


# ----------------------------------------------------------------------------------------------
# load_weights
# ----------------------------------------------------------------------------------------------


def test_lstm_rates_equal_torch_state_by_hand(trained):
    d, net, st, names, x, out = trained
    cell = lwsim.make_cell("lstm", D, H)
    params = load_weights(d / "model.safetensors", cell, "torch")
    np.testing.assert_allclose(cell.forward(params, x).y, out, rtol=1e-12, atol=1e-14)
    opt = load_optimizer(d / "opt.safetensors", cell, params, "torch")     # name, lr from metadata
    rates = opt.rates()
    i_hh = names.index("weight_hh_l0")
    v = st[i_hh]["exp_avg_sq"].numpy()
    t = float(st[i_hh]["step"])
    assert t == 4
    for j, gate in enumerate("ifgo"):                          # torch stacks i, f, g, o
        lam = LR / (np.sqrt(v[j * H:(j + 1) * H] / (1 - 0.999 ** t)) + 1e-8)
        np.testing.assert_allclose(rates[f"U_{gate}"], lam, rtol=1e-13)
    vb = st[names.index("bias_ih_l0")]["exp_avg_sq"].numpy() + st[names.index("bias_hh_l0")]["exp_avg_sq"].numpy()
    lam_b = LR / (np.sqrt(vb[H:2 * H] / (1 - 0.999 ** t)) + 1e-8)
    np.testing.assert_allclose(rates["b_f"], lam_b, rtol=1e-13)
