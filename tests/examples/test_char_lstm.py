"""examples/char_lstm.py: the same script trains identically on retrograd and on PyTorch, step by step."""
import importlib.util
import pathlib

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

_PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "char_lstm.py"
_spec = importlib.util.spec_from_file_location("char_lstm_example", _PATH)
char_lstm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(char_lstm)


def _setup(lib, state, chars, index, layers):
    CharLSTM, TextWindows = char_lstm.make_classes(lib)
    model = CharLSTM(len(chars), embed_size=8, hidden_size=16, num_layers=layers).double()
    model.load_state_dict({k: lib.tensor(v.copy()) for k, v in state.items()})
    data = TextWindows([index[c] for c in char_lstm.TEXT], 12)
    loader = lib.utils.data.DataLoader(data, batch_size=4, shuffle=False, drop_last=True)
    return model, loader


@pytest.mark.parametrize("layers", [1, 2])
def test_training_steps_match_torch_loss_by_loss_and_parameters(layers):
    chars, index = char_lstm.vocabulary(char_lstm.TEXT)
    torch.manual_seed(0)
    CharLSTM, _ = char_lstm.make_classes(torch)
    reference = CharLSTM(len(chars), embed_size=8, hidden_size=16, num_layers=layers).double()
    state = {k: v.detach().numpy().copy() for k, v in reference.state_dict().items()}
    rg_model, rg_loader = _setup(rg, state, chars, index, layers)
    t_model, t_loader = _setup(torch, state, chars, index, layers)
    runs = []
    for lib, model, loader in ((rg, rg_model, rg_loader), (torch, t_model, t_loader)):
        model.train()
        runs.append((lib, model, lib.nn.CrossEntropyLoss(), lib.optim.Adam(model.parameters(), lr=0.01), iter(loader)))
    for _ in range(5):
        losses = []
        for lib, model, loss_fn, optimizer, batches in runs:
            x, y = next(batches)
            losses.append(char_lstm.train_step(lib, model, loss_fn, optimizer, x, y))
        np.testing.assert_allclose(losses[0], losses[1], rtol=1e-10)
        for (name, p), (_, q) in zip(rg_model.named_parameters(), t_model.named_parameters(), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-8, atol=1e-10, err_msg=name)


def test_script_trains_and_samples_text(capsys):
    losses = char_lstm.main(["--steps", "30", "--batch-size", "8", "--window", "16", "--hidden", "32",
                             "--sample", "40", "--lr", "0.02"])
    out = capsys.readouterr().out
    assert len(losses) == 30
    assert np.mean(losses[-5:]) < np.mean(losses[:5])  # it learns
    assert np.log(len(char_lstm.vocabulary(char_lstm.TEXT)[0])) > losses[0] - 0.5  # starts near chance
    sampled = out.strip().splitlines()[-1]
    assert sampled.startswith("The ") and len(sampled) >= 40
    assert set(sampled) <= set(char_lstm.TEXT)
