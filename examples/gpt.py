"""A small GPT, trained on a built-in text, character by character: ``python examples/gpt.py``.

Token and position embeddings, a stack of pre-norm ``nn.TransformerEncoderLayer`` blocks under a
causal mask, a final LayerNorm and a linear head; AdamW with gradient clipping and a learning
rate that warms up linearly and then decays along a cosine (``SequentialLR`` of ``LinearLR`` and
``CosineAnnealingLR``); sampling with top-k and ``multinomial``. Every function takes the library
as its first argument, so the same code trains with retrograd or with PyTorch:
``python examples/gpt.py --torch`` (tests/examples/test_gpt.py runs both from the same weights).
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

TEXT = """\
It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.
However little known the feelings or views of such a man may be on his first entering a neighbourhood, this truth is
so well fixed in the minds of the surrounding families, that he is considered the rightful property of some one or
other of their daughters.
"My dear Mr. Bennet," said his lady to him one day, "have you heard that Netherfield Park is let at last?"
Mr. Bennet replied that he had not.
"But it is," returned she; "for Mrs. Long has just been here, and she told me all about it."
Mr. Bennet made no answer.
"Do you not want to know who has taken it?" cried his wife impatiently.
"You want to tell me, and I have no objection to hearing it."
This was invitation enough.
"""


class Vocabulary:
    """The characters of a text, each an integer id."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        return "".join(self.chars[int(i)] for i in ids)


def make_model(torch, vocab_size, block_size=32, d_model=32, n_head=4, n_layer=2, dropout=0.1):
    """The GPT as a ``torch.nn.Module`` of library ``torch`` (retrograd or PyTorch)."""
    nn = torch.nn

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block_size
            self.tok_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(block_size, d_model)
            self.drop = nn.Dropout(dropout)
            self.blocks = nn.ModuleList([
                nn.TransformerEncoderLayer(d_model, n_head, dim_feedforward=4 * d_model, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
                for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab_size, bias=False)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(block_size),
                                 persistent=False)

        def forward(self, idx):
            t = idx.shape[1]
            pos = torch.arange(t, device=idx.device)
            x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
            mask = self.mask[:t, :t]
            for block in self.blocks:
                x = block(x, src_mask=mask, is_causal=True)
            return self.head(self.ln_f(x))

    return GPT()


def make_optimizer(torch, model, lr=3e-3, weight_decay=0.1, warmup=10, steps=200):
    """AdamW (weight decay on the matrices only) and a linear warm-up then cosine decay of the learning rate."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler
    warm = sched.LinearLR(optimizer, start_factor=1.0 / warmup, end_factor=1.0, total_iters=warmup)
    cosine = sched.CosineAnnealingLR(optimizer, T_max=max(steps - warmup, 1), eta_min=lr / 10)
    return optimizer, sched.SequentialLR(optimizer, [warm, cosine], milestones=[warmup])


def batches(data, block_size, batch_size, seed=0):
    """Endless (inputs, targets) NumPy batches of random windows of ``data``, targets shifted by one."""
    rng = np.random.default_rng(seed)
    while True:
        starts = rng.integers(0, len(data) - block_size - 1, batch_size)
        x = np.stack([data[s:s + block_size] for s in starts])
        y = np.stack([data[s + 1:s + block_size + 1] for s in starts])
        yield x, y


def train_step(torch, model, optimizer, scheduler, x, y, clip=1.0):
    """One step: the cross-entropy of the next characters, backward, clipping, AdamW, the schedule."""
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    scheduler.step()
    return loss.item()


def sample(torch, model, idx, max_new_tokens, temperature=1.0, top_k=10, generator=None):
    """Continues ``idx`` (N, T) by ``max_new_tokens`` characters, each drawn from the top ``top_k``."""
    model.eval()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(idx[:, -model.block_size:])[:, -1, :] / temperature
            top, _ = torch.topk(logits, min(top_k, logits.shape[-1]))
            logits = logits.masked_fill(logits < top[:, -1:], float("-inf"))
            probs = torch.nn.functional.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
    model.train()
    return idx


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=200, help="characters to generate after training")
    parser.add_argument("--torch", action="store_true", help="run on PyTorch instead of retrograd")
    args = parser.parse_args(argv)
    if args.torch:
        import torch
    else:
        import retrograd as torch
    torch.manual_seed(args.seed)
    vocab = Vocabulary(TEXT)
    data = vocab.encode(TEXT)
    model = make_model(torch, len(vocab), block_size=args.block_size)
    warmup = max(1, min(10, args.steps // 10))
    optimizer, scheduler = make_optimizer(torch, model, warmup=warmup, steps=args.steps)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, {len(vocab)} characters, {len(data)} tokens")
    start = time.perf_counter()
    stream = batches(data, args.block_size, args.batch_size, seed=args.seed)
    for step in range(1, args.steps + 1):
        x, y = next(stream)
        loss = train_step(torch, model, optimizer, scheduler, torch.tensor(x), torch.tensor(y))
        if step == 1 or step % 20 == 0 or step == args.steps:
            print(f"step {step:4d}  loss {loss:.3f}  (uniform: {math.log(len(vocab)):.3f})  "
                  f"lr {scheduler.get_last_lr()[0]:.2e}  {time.perf_counter() - start:.1f}s")
    if args.sample:
        prompt = torch.tensor(vocab.encode("It is")[None, :])
        out = sample(torch, model, prompt, args.sample)
        print(vocab.decode(out[0].tolist()))
    return model


if __name__ == "__main__":
    main()
