"""A character-level LSTM language model, written as a PyTorch script, run on retrograd.

The model reads a window of characters and predicts, at each position, the next one:
``nn.Embedding`` -> ``nn.LSTM`` -> ``nn.Linear``, trained with ``nn.CrossEntropyLoss`` and
``optim.Adam`` on windows of a small built-in text served by a ``Dataset`` and a ``DataLoader``.
Afterwards it samples new text one character at a time with ``multinomial``.

Every function takes the library as its ``torch`` argument, so the same code runs on PyTorch
(``python examples/char_lstm.py --torch``) and on retrograd (the default, ``import retrograd as
torch``); tests/examples/test_char_lstm.py trains both from the same weights and compares them.

    python examples/char_lstm.py --steps 300 --sample 200
"""
from __future__ import annotations

import argparse
import time

TEXT = """\
It was a bright cold day in the garden, and the bees were busy among the late flowers.
The old gardener walked slowly along the path, stopping now and then to look at the roses.
He had planted them many years ago, when the house was new and the trees were small.
Now the trees were tall, the roses were wild, and the path was covered with moss.
Every morning he came out with his basket and his knife, and every evening he went in
with the basket full of flowers and the knife a little duller than before.
The children of the house liked to follow him, asking the names of the plants,
and he told them the names, and the stories of the names, and the stories of the stories.
"""


def vocabulary(text):
    """The sorted characters of ``text`` and a map from each to its index."""
    chars = sorted(set(text))
    return chars, {c: i for i, c in enumerate(chars)}


def make_classes(torch):
    """The model and the dataset, built on ``torch`` (PyTorch or retrograd)."""
    nn = torch.nn

    class CharLSTM(nn.Module):
        """Embedding, a stacked LSTM and a linear read-out to next-character logits."""

        def __init__(self, vocab_size, embed_size=16, hidden_size=64, num_layers=1, dropout=0.0):
            super().__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers=num_layers, batch_first=True, dropout=dropout)
            self.head = nn.Linear(hidden_size, vocab_size)

        def forward(self, x, state=None):
            out, state = self.lstm(self.embed(x), state)
            return self.head(out), state

    class TextWindows(torch.utils.data.Dataset):
        """Every window of ``length`` characters, with the same window shifted by one as its target."""

        def __init__(self, ids, length):
            self.ids = torch.tensor(ids, dtype=torch.long)
            self.length = length

        def __len__(self):
            return len(self.ids) - self.length

        def __getitem__(self, i):
            chunk = self.ids[i:i + self.length + 1]
            return chunk[:-1], chunk[1:]

    return CharLSTM, TextWindows


def train_step(torch, model, loss_fn, optimizer, x, y):
    """One optimisation step on a batch: forward, loss, backward, gradient clipping, update; returns the loss."""
    logits, _ = model(x)
    loss = loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def train(torch, model, loader, steps, lr=0.01, log=None):
    """Trains ``model`` with Adam for ``steps`` batches of ``loader`` (cycled); returns the loss of each step."""
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    while len(losses) < steps:
        for x, y in loader:
            losses.append(train_step(torch, model, loss_fn, optimizer, x, y))
            if log is not None and len(losses) % 50 == 0:
                log(f"step {len(losses):4d}  loss {losses[-1]:.3f}")
            if len(losses) == steps:
                break
    return losses


def sample(torch, model, chars, index, prompt, length, temperature=0.8, generator=None):
    """``prompt`` continued by ``length`` characters drawn one at a time from the model."""
    model.eval()
    out = list(prompt)
    with torch.no_grad():
        x = torch.tensor([[index[c] for c in prompt]], dtype=torch.long)
        logits, state = model(x)
        for _ in range(length):
            probs = torch.softmax(logits[0, -1] / temperature, dim=-1)
            nxt = int(torch.multinomial(probs, 1, generator=generator).item())
            out.append(chars[nxt])
            logits, state = model(torch.tensor([[nxt]], dtype=torch.long), state)
    return "".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--sample", type=int, default=200, help="characters to generate after training")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torch", action="store_true", help="run on PyTorch instead of retrograd")
    args = parser.parse_args(argv)
    if args.torch:
        import torch
    else:
        import retrograd as torch
    torch.manual_seed(args.seed)
    chars, index = vocabulary(TEXT)
    CharLSTM, TextWindows = make_classes(torch)
    model = CharLSTM(len(chars), hidden_size=args.hidden, num_layers=args.layers)
    data = TextWindows([index[c] for c in TEXT], args.window)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, shuffle=True, drop_last=True)
    start = time.perf_counter()
    losses = train(torch, model, loader, args.steps, lr=args.lr, log=print)
    print(f"{args.steps} steps in {time.perf_counter() - start:.1f} s; final loss {losses[-1]:.3f}")
    if args.sample:
        print(sample(torch, model, chars, index, "The ", args.sample))
    return losses


if __name__ == "__main__":
    main()
