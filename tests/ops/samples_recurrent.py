"""Samples of the recurrent layers' kernels (retrograd/ops/recurrent.py); format in samples.py.

retrograd's op is called directly (one layer and direction over packed rows); PyTorch's call is
its ``torch.lstm`` / ``torch.gru`` / ``torch.rnn_tanh`` / ``torch.rnn_relu`` with one layer, on the
same rows: padded ``(T, B, *)`` (a reversed direction by flipping time) or packed with
``batch_sizes``. Both end the output in a reshape, whose node (ViewBackward0) both libraries name
alike. ``rnn_layer_backward``, the fused backward, is reached as PyTorch reaches its own: by a
first-order ``autograd.grad`` of the layer.
"""
from samples import A, Const, Sample, add

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_TORCH = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


def _ours(m, mode, tensors, batch_sizes, reverse):
    x, h, c, *weights = tensors
    full = [x, h, c if mode == "LSTM" else None] + list(weights)
    while len(full) < 8:
        full.append(None)
    outs = m.ops.recurrent.rnn_layer(full, batch_sizes, mode, reverse)
    out = outs[0].reshape(x.shape[0], outs[0].shape[1])  # a view in both libraries: the same node names
    return (out,) + tuple(outs[1:3] if mode == "LSTM" else outs[1:2])


def _theirs(torch, mode, tensors, batch_sizes, reverse):
    x, h, c, *weights = tensors
    fn = getattr(torch, _TORCH[mode])
    hx = (h[None], c[None]) if mode == "LSTM" else h[None]
    has_bias = len(weights) >= 4
    if len(set(batch_sizes)) > 1:  # packed rows
        outs = fn(x, torch.tensor(batch_sizes), hx, weights, has_bias, 1, 0.0, False, False)
        return (outs[0].reshape(outs[0].shape),) + tuple(o[0] for o in outs[1:])
    steps, batch = len(batch_sizes), batch_sizes[0]
    seq = x.reshape(steps, batch, x.shape[1])
    outs = fn(seq.flip(0) if reverse else seq, hx, weights, has_bias, 1, 0.0, False, False, False)
    out = outs[0].flip(0) if reverse else outs[0]
    return (out.reshape(steps * batch, out.shape[2]),) + tuple(o[0] for o in outs[1:])


def _layer(mode, batch_sizes, inputs, hidden=3, proj=0, bias=True, reverse=False, note=""):
    """A sample of ``rnn_layer``: inputs ``x, h0, c0, weights...`` (``c0`` a dummy where not LSTM)."""
    gates = _GATES[mode] * hidden
    out = proj or hidden
    arrays = [A(sum(batch_sizes), inputs), A(batch_sizes[0], out), A(batch_sizes[0], hidden) if mode == "LSTM"
              else Const(A(1)), A(gates, inputs, low=-1, high=1), A(gates, out, low=-1, high=1)]
    if bias:
        arrays += [A(gates, low=-1, high=1), A(gates, low=-1, high=1)]
    if proj:
        arrays.append(A(proj, hidden, low=-1, high=1))
    return Sample(lambda m, *ts: _ours(m, mode, ts, batch_sizes, reverse), *arrays,
                  torch_call=lambda torch, *ts: _theirs(torch, mode, ts, batch_sizes, reverse),
                  note=note or f"{mode} {batch_sizes}")


add("rnn_layer",
    _layer("LSTM", (2, 2, 2), 2),
    _layer("LSTM", (2, 2, 2), 2, reverse=True, note="LSTM reversed"),
    _layer("LSTM", (3, 2, 1), 2, proj=2, note="LSTM packed, projected"),
    _layer("LSTM", (2, 2), 2, bias=False, note="LSTM without bias"),
    _layer("GRU", (2, 2, 2), 2),
    _layer("GRU", (3, 1, 1), 2, note="GRU packed"),
    _layer("GRU", (2, 2), 2, reverse=True, bias=False, note="GRU reversed, without bias"),
    _layer("RNN_TANH", (2, 2, 2), 2),
    _layer("RNN_TANH", (3, 2), 2, note="RNN packed"),
    _layer("RNN_RELU", (2, 2, 2), 2))


def _backward(mode, batch_sizes, inputs, hidden=3, proj=0):
    """The first-order gradients of a layer: its fused backward, compared with PyTorch's."""
    layer = _layer(mode, batch_sizes, inputs, hidden=hidden, proj=proj)

    def grads(m, run, *ts):
        outs = run(m, mode, ts, batch_sizes, False)
        xs = [t for t in ts if t.requires_grad]
        seeds = [(o * o).sum() for o in outs]  # a fixed, nonlinear use of every output
        return m.autograd.grad(sum(seeds[1:], seeds[0]), xs)
    return Sample(lambda m, *ts: grads(m, _ours, *ts), *layer.inputs,
                  torch_call=lambda torch, *ts: grads(torch, _theirs, *ts), grad=False, note=f"{mode} gradients")


add("rnn_layer_backward",
    _backward("LSTM", (2, 2, 1), 2, proj=2),
    _backward("GRU", (2, 1), 2),
    _backward("RNN_TANH", (2, 2), 2))
