"""examples/vae.py: the same script under retrograd and under PyTorch trains step for step alike."""
import contextlib
import importlib.util
import io
import os
import types

import numpy as np
import pytest

import retrograd as rg

PATH = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "vae.py")
RETROGRAD_IMPORTS = """import retrograd as torch
from retrograd import nn, optim
from retrograd.data import load_digits
from retrograd.nn import functional as F
from retrograd.utils.data import DataLoader, TensorDataset
"""
TORCH_IMPORTS = """import torch
from torch import nn, optim
from retrograd.data import load_digits
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset
"""


def _load_retrograd():
    spec = importlib.util.spec_from_file_location("vae_example", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_torch():
    """The example's source with PyTorch's imports in place of retrograd's: nothing else changes."""
    source = open(PATH, encoding="utf-8").read()
    assert RETROGRAD_IMPORTS in source
    module = types.ModuleType("vae_example_torch")
    exec(compile(source.replace(RETROGRAD_IMPORTS, TORCH_IMPORTS), PATH, "exec"), module.__dict__)  # noqa: S102
    return module


def _fixed_noise(lib, model, noises):
    """Makes ``model.reparameterize`` use the given eps, one per call, instead of ``randn_like``."""
    it = iter(noises)

    def reparameterize(mu, logvar):
        return mu + lib.tensor(next(it), dtype=mu.dtype) * lib.exp(0.5 * logvar)
    model.reparameterize = reparameterize


def test_vae_losses_and_parameters_match_pytorch_step_by_step():
    torch = pytest.importorskip("torch")
    ours, theirs = _load_retrograd(), _load_torch()
    model, ref = ours.VAE().double(), theirs.VAE().double()
    with torch.no_grad():
        for (name, p), (ref_name, q) in zip(model.named_parameters(), ref.named_parameters(), strict=True):
            assert name == ref_name
            q.copy_(torch.tensor(p.detach().numpy()))
    (train_set, _), (ref_train, _) = ours.digits(rg.float64), theirs.digits(torch.float64)
    batch = 32
    loader = rg.utils.data.DataLoader(train_set, batch_size=batch, shuffle=False)
    ref_loader = torch.utils.data.DataLoader(ref_train, batch_size=batch, shuffle=False)
    steps = 4
    noises = np.random.default_rng(0).standard_normal((steps, batch, ours.LATENT))
    _fixed_noise(rg, model, noises)
    _fixed_noise(torch, ref, noises)
    opt, ref_opt = rg.optim.Adam(model.parameters(), lr=1e-3), torch.optim.Adam(ref.parameters(), lr=1e-3)
    for step, ((x,), (ref_x,)) in enumerate(zip(loader, ref_loader)):
        if step == steps:
            break
        for m, o, data, lib in ((model, opt, x, rg), (ref, ref_opt, ref_x, torch)):
            o.zero_grad()
            recon, mu, logvar = m(data)
            loss = (ours if lib is rg else theirs).loss_function(recon, data, mu, logvar)
            loss.backward()
            o.step()
            if lib is rg:
                got = loss.item()
            else:
                expected = loss.item()
        assert got == pytest.approx(expected, rel=1e-10)
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


def test_vae_train_helper_lowers_the_loss():
    ours = _load_retrograd()
    rg.manual_seed(0)
    train_set, test_set = ours.digits()
    loader = rg.utils.data.DataLoader(train_set, batch_size=128, shuffle=True)
    model = ours.VAE()
    opt = rg.optim.Adam(model.parameters(), lr=1e-3)
    test_loader = rg.utils.data.DataLoader(test_set, batch_size=128)
    before = ours.test(model, test_loader)
    first = ours.train(model, opt, loader, 1)
    second = ours.train(model, opt, loader, 2)
    assert second < first and ours.test(model, test_loader) < before


def test_vae_script_main_runs_and_prints_a_digit():
    ours = _load_retrograd()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ours.main(["--epochs", "1", "--log-interval", "0"])
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("====> Epoch: 1 Average loss:")
    assert lines[-9] == "A digit decoded from a random code:" and all(len(line) == 8 for line in lines[-8:])
