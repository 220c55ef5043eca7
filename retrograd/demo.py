"""The demo: train a small convolutional network on the 8x8 handwritten digits.

``python -m retrograd demo`` trains ``DigitsNet`` with Adam and a cosine learning-rate schedule
on a fixed 80/20 split of the 1,797 digits (``retrograd.data.load_digits``), shows a progress
bar per epoch, and prints the test accuracy. With ``--out DIR`` it also writes:

- ``history.json``: per-epoch training loss, test loss and test accuracy;
- ``model.rg``: the trained weights (``retrograd.save`` of the state dict);
- ``loss.png`` and ``accuracy.png``: the curves (needs matplotlib, ``pip install 'retrograd[viz]'``);
- ``graph.png``: the autograd graph of one training step (``retrograd.viz.make_dot``; needs the
  graphviz package from the same extra and graphviz's ``dot`` program).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from . import _creation, _random
from .autograd import grad_mode
from .data import load_digits
from . import nn, optim
from .nn import functional as F
from .serialization import save
from .viz import make_dot

__all__ = ["DigitsNet", "train", "main"]

DEFAULTS = dict(epochs=8, batch_size=32, lr=1e-2, seed=0)
_SPLIT_SEED = 1797  # the test split is fixed, whatever --seed, so accuracies compare across runs
_TEST_FRACTION = 0.2
_EXTRA_HINT = ("pip install 'retrograd[viz]' (matplotlib and graphviz), and graphviz's 'dot' program for the graph "
               "picture (apt-get install graphviz, or brew install graphviz)")


class DigitsNet(nn.Module):
    """Two 3x3 convolutions with max pooling, then two linear layers: 8x8 image -> 10 logits.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.demo import DigitsNet
        >>> DigitsNet()(rg.zeros(5, 1, 8, 8)).shape
        retrograd.Size([5, 10])
    """

    def __init__(self, channels=(16, 32), hidden=64):
        super().__init__()
        c1, c2 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 8x8 -> 4x4
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 4x4 -> 2x2
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(c2 * 4, hidden), nn.ReLU(), nn.Linear(hidden, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def split_digits():
    """The digits as tensors, split into ``(x_train, y_train, x_test, y_test)`` (fixed 80/20 split)."""
    x, y = load_digits()
    order = np.random.default_rng(_SPLIT_SEED).permutation(len(y))
    n_test = int(round(len(y) * _TEST_FRACTION))
    test, tr = _creation.tensor(order[:n_test]), _creation.tensor(order[n_test:])
    return x[tr], y[tr], x[test], y[test]


def evaluate(model, x, y, batch_size=512):
    """Mean cross-entropy and accuracy of ``model`` on ``(x, y)``, without recording a graph."""
    model.eval()
    total_loss, correct = 0.0, 0
    with grad_mode.no_grad():
        for i in range(0, len(y), batch_size):
            logits = model(x[i:i + batch_size])
            target = y[i:i + batch_size]
            total_loss += F.cross_entropy(logits, target, reduction="sum").item()
            correct += int((logits.argmax(1) == target).sum().item())
    model.train()
    return total_loss / len(y), correct / len(y)


def train(epochs=DEFAULTS["epochs"], batch_size=DEFAULTS["batch_size"], lr=DEFAULTS["lr"], seed=DEFAULTS["seed"],
          out=None, progress=True, limit=None, log=print):
    """Trains ``DigitsNet`` on the digits and returns its history and final test accuracy.

    Args:
        epochs (int): passes over the training set.
        batch_size (int): images per step.
        lr (float): Adam's initial learning rate (annealed to 0 along a cosine).
        seed (int): seeds the initialization and the shuffling.
        out (str, optional): a folder to write the history, weights and pictures into.
        progress (bool): show a tqdm progress bar per epoch.
        limit (int, optional): train on the first ``limit`` training images only (quick runs).
        log (callable): where the messages go.

    Returns:
        dict: ``history`` (lists per epoch), ``test_accuracy``, ``seconds``, ``files`` written.
    """
    _random.manual_seed(seed)
    x_train, y_train, x_test, y_test = split_digits()
    if limit is not None:
        x_train, y_train = x_train[:limit], y_train[:limit]
    model = DigitsNet()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = (len(y_train) + batch_size - 1) // batch_size
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, epochs * steps_per_epoch))
    history = {"train_loss": [], "test_loss": [], "test_accuracy": []}
    graph_loss = None
    start = time.perf_counter()
    for epoch in range(epochs):
        order = _creation.randperm(len(y_train))
        bar = _progress(steps_per_epoch, f"epoch {epoch + 1}/{epochs}", progress)
        running, seen = 0.0, 0
        for i in range(0, len(y_train), batch_size):
            idx = order[i:i + batch_size]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            if graph_loss is None and out is not None:
                graph_loss = _graph_of(loss, model)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            running += loss.item() * len(idx)
            seen += len(idx)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{running / seen:.4f}")
        test_loss, test_acc = evaluate(model, x_test, y_test)
        history["train_loss"].append(running / seen)
        history["test_loss"].append(test_loss)
        history["test_accuracy"].append(test_acc)
        if bar is not None:
            bar.set_postfix(loss=f"{running / seen:.4f}", test_acc=f"{test_acc:.2%}")
            bar.close()
    seconds = time.perf_counter() - start
    accuracy = history["test_accuracy"][-1] if epochs else evaluate(model, x_test, y_test)[1]
    log(f"test accuracy: {accuracy:.2%} ({round(accuracy * len(y_test))}/{len(y_test)} digits) "
        f"after {epochs} epochs in {seconds:.1f} s")
    files = _write_outputs(out, history, model, graph_loss, log) if out is not None else []
    return {"history": history, "test_accuracy": accuracy, "seconds": seconds, "files": files, "model": model}


def _progress(total, desc, enabled):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="batch", leave=True, dynamic_ncols=True, file=sys.stderr)


def _graph_of(loss, model):
    """The graphviz graph of this step's loss, or the reason it cannot be drawn."""
    try:
        return make_dot(loss, params=dict(model.named_parameters()), show_saved=True)
    except ImportError as e:
        return e


def _write_outputs(out, history, model, graph, log):
    os.makedirs(out, exist_ok=True)
    files = []
    path = os.path.join(out, "history.json")
    with open(path, "w") as fh:
        json.dump(history, fh, indent=1)
    files.append(path)
    path = os.path.join(out, "model.rg")
    save(model.state_dict(), path)
    files.append(path)
    missing = []
    try:
        files += _plot_curves(out, history)
    except ImportError:
        missing.append("matplotlib")
    if isinstance(graph, ImportError) or graph is None:
        missing.append("graphviz (Python package)")
    else:
        try:
            files.append(graph.render(os.path.join(out, "graph"), format="png", cleanup=True))
        except Exception as e:  # graphviz.ExecutableNotFound when the 'dot' program is missing
            if type(e).__name__ != "ExecutableNotFound":
                raise
            missing.append("graphviz's 'dot' program")
    for f in files:
        log(f"wrote {f}")
    if missing:
        log(f"no pictures from {', '.join(missing)}: to get them, {_EXTRA_HINT}")
    return files


def _plot_curves(out, history):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = range(1, len(history["train_loss"]) + 1)
    paths = []
    for name, series, ylabel in (("loss", [("train", history["train_loss"]), ("test", history["test_loss"])],
                                  "cross-entropy"),
                                 ("accuracy", [("test", [100 * a for a in history["test_accuracy"]])],
                                  "accuracy (%)")):
        fig, ax = plt.subplots(figsize=(5, 3.5), dpi=100)
        for label, values in series:
            ax.plot(epochs, values, marker="o", label=label)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        ax.set_title(f"DigitsNet on 8x8 digits: {name}")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = os.path.join(out, f"{name}.png")
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv=None):
    """Command line of the demo; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m retrograd demo",
                                     description="Train a small convolutional network on the 8x8 handwritten "
                                                 "digits with retrograd and print its test accuracy.")
    parser.add_argument("--epochs", type=int, default=DEFAULTS["epochs"], help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"], help="images per step")
    parser.add_argument("--lr", type=float, default=DEFAULTS["lr"], help="Adam's initial learning rate")
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="seed of initialization and shuffling")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="write history.json, model.rg and the pictures (loss, accuracy, autograd graph) here")
    parser.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)  # quick runs in the tests
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    args = parser.parse_args(argv)
    if args.epochs < 0 or args.batch_size < 1 or args.lr <= 0:
        parser.error("--epochs must be >= 0, --batch-size >= 1 and --lr > 0")
    train(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed, out=args.out,
          progress=not args.no_progress, limit=args.limit)
    return 0
