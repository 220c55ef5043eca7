"""examples/gpt.py: the same GPT trains step for step alike on retrograd and on PyTorch, from the same weights."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

_PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt.py"


@pytest.fixture(scope="module")
def gpt():
    spec = importlib.util.spec_from_file_location("example_gpt", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pair(gpt, vocab_size, **config):
    torch.manual_seed(0)
    theirs = gpt.make_model(torch, vocab_size, dropout=0.0, **config).double()
    ours = gpt.make_model(rg, vocab_size, dropout=0.0, **config).double()
    ours.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_losses_and_parameters_equal_torch_step_by_step(gpt):
    vocab = gpt.Vocabulary(gpt.TEXT)
    data = vocab.encode(gpt.TEXT)
    ours, theirs = _pair(gpt, len(vocab), block_size=16, d_model=16, n_head=2, n_layer=2)
    opt, sched = gpt.make_optimizer(rg, ours, warmup=2, steps=6)
    topt, tsched = gpt.make_optimizer(torch, theirs, warmup=2, steps=6)
    stream = gpt.batches(data, 16, 4, seed=1)
    for step in range(5):
        x, y = next(stream)
        loss = gpt.train_step(rg, ours, opt, sched, rg.tensor(x), rg.tensor(y), clip=0.5)
        expected = gpt.train_step(torch, theirs, topt, tsched, torch.tensor(x), torch.tensor(y), clip=0.5)
        assert loss == pytest.approx(expected, rel=1e-10), f"step {step}"
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
        theirs_params = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            np.testing.assert_allclose(p.detach().numpy(), theirs_params[name].detach().numpy(), rtol=1e-9,
                                       atol=1e-11, err_msg=f"step {step}: {name}")
    assert loss < np.log(len(vocab)) + 0.5  # and it learns something at all


def test_greedy_sampling_equals_torch_and_top_k_samples_stay_in_the_top_k(gpt):
    vocab = gpt.Vocabulary(gpt.TEXT)
    ours, theirs = _pair(gpt, len(vocab), block_size=8, d_model=16, n_head=2, n_layer=1)
    prompt = vocab.encode("It is")[None, :]
    greedy = gpt.sample(rg, ours, rg.tensor(prompt), 12, top_k=1)
    expected = gpt.sample(torch, theirs, torch.tensor(prompt), 12, top_k=1)
    assert greedy.tolist() == expected.tolist()
    assert ours.training  # sample() puts the model back in training mode
    drawn = gpt.sample(rg, ours, rg.tensor(prompt), 6, top_k=3, generator=rg.Generator().manual_seed(5))
    again = gpt.sample(rg, ours, rg.tensor(prompt), 6, top_k=3, generator=rg.Generator().manual_seed(5))
    assert drawn.tolist() == again.tolist() and tuple(drawn.shape) == (1, 11)
    with rg.no_grad():
        ours.eval()
        for t in range(5, 11):  # each drawn character is among the 3 likeliest after what came before
            logits = ours(drawn[:, max(0, t - 8):t])[0, -1]
            assert int(drawn[0, t]) in rg.topk(logits, 3).indices.tolist()


def test_script_trains_and_samples_on_retrograd(gpt, capsys):
    model = gpt.main(["--steps", "3", "--batch-size", "2", "--block-size", "8", "--sample", "5"])
    out = capsys.readouterr().out
    assert "parameters, 41 characters" in out and "step    3" in out and isinstance(model, rg.nn.Module)
    assert "It is" in out  # the prompt, then the sampled continuation
