"""Recurrent layers: RNN, LSTM, GRU and their cells, as ``torch.nn``'s.

Each layer and direction is one ``rnn_layer`` op over the whole sequence (Note [Fused recurrent
layers] in ops/recurrent.py); this module checks the arguments as PyTorch does, stacks layers and
directions, applies dropout between layers, and turns padded, batch-first, unbatched and packed
inputs into the packed rows the op runs on.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import _creation
from ..._tensor import Tensor
from ...ops import cat, stack
from ...ops.recurrent import GATES, rnn_layer
from .. import functional as F, init
from ..parameter import Parameter
from .._packing import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def _layers(mode, data, batch_sizes, hx, cx, weights, bias, proj, num_layers, dropout, training, bidirectional):
    """The stacked layers over packed rows ``data``: ``(output rows, h_n, c_n)`` (``c_n`` None but for LSTM).

    ``hx``/``cx``: ``(num_layers * directions, B, *)``; ``weights``: the flat list, PyTorch's order.
    """
    directions = 2 if bidirectional else 1
    per = 2 + (2 if bias else 0) + (1 if proj else 0)
    layer_input = data
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = weights[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if bias else (None, None)
            result = rnn_layer([layer_input, hx[k], None if cx is None else cx[k], w[0], w[1], b_ih, b_hh,
                                w[-1] if proj else None], batch_sizes, mode, direction == 1)
            outs.append(result[0])
            hs.append(result[1])
            cs.append(result[2])
        layer_input = outs[0] if directions == 1 else cat(outs, 1)
        if dropout and training and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    return layer_input, stack(hs), (stack(cs) if cx is not None else None)


class RNNBase(Module):
    """The common part of RNN, LSTM and GRU: parameters, their names and checks (PyTorch's ``RNNBase``).

    Args:
        mode: ``"LSTM"``, ``"GRU"``, ``"RNN_TANH"`` or ``"RNN_RELU"``.
        input_size, hidden_size: the features of the input and of the hidden state.
        num_layers: recurrent layers stacked (default 1).
        bias: use ``bias_ih`` and ``bias_hh`` (default True).
        batch_first: inputs and outputs are ``(B, T, *)`` instead of ``(T, B, *)``.
        dropout: probability of dropout on the outputs of each layer but the last, in training.
        bidirectional: run a second, reversed direction in each layer (``*_reverse`` parameters).
        proj_size: LSTM only: project the hidden state to this size (``weight_hr_l<k>``).
        device, dtype: of the parameters.
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input)), ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, Parameter(_creation.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        """The parameters in PyTorch's flat order (layer, direction, then ih, hh, biases, hr)."""
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters per layer and direction, as lists."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Accepted for PyTorch's sake; parameters here are always usable as they are (a no-op)."""

    def reset_parameters(self):
        """Every parameter uniform in ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size)]``, PyTorch's initialization."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        """Raises PyTorch's errors for an input of the wrong dtype, rank or feature size."""
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        """``(num_layers * directions, batch, real hidden size)``."""
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, batch, self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """Raises RuntimeError where ``hx`` is not of ``expected_hidden_size``."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- the forward shared by the three ---------------------------------------------------------------
    def _zeros(self, batch, size, like):
        directions = 2 if self.bidirectional else 1
        return _creation.zeros((self.num_layers * directions, batch, size), dtype=like.dtype, device=like.device)

    def _prepare(self, input, hx):
        """The input as packed rows: ``(rows, batch_sizes, sorted, unsorted, hx, how to give the output back)``."""
        if isinstance(input, PackedSequence):
            data, sizes, sorted_indices, unsorted_indices = input
            batch_sizes = tuple(int(b) for b in sizes._host())
            return data, batch_sizes, sorted_indices, unsorted_indices, hx, ("packed", sizes)
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return input, None, None, None, hx, ("batched" if is_batched else "unbatched", None)

    def _run(self, input, batch_sizes, hx, cx):
        """The layers over a checked input (packed rows, or a 3-D tensor): output as the input's kind, h_n, c_n."""
        if batch_sizes is None:
            seq = input.transpose(0, 1) if self.batch_first else input
            steps, batch = seq.shape[0], seq.shape[1]
            rows = seq.reshape(steps * batch, seq.shape[2])
            sizes = (batch,) * steps
        else:
            rows, sizes = input, batch_sizes
        out, h, c = _layers(self.mode, rows, sizes, hx, cx, self._flat_weights, self.bias, self.proj_size > 0,
                            self.num_layers, self.dropout, self.training, self.bidirectional)
        if batch_sizes is None:
            out = out.reshape(steps, batch, out.shape[1])
            if self.batch_first:
                out = out.transpose(0, 1)
        return out, h, c

    @staticmethod
    def _finish(kind, out, sizes, sorted_indices, unsorted_indices, batch_first):
        if kind == "packed":
            return PackedSequence(out, sizes, sorted_indices, unsorted_indices)
        if kind == "unbatched":
            return out.squeeze(0 if batch_first else 1)
        return out


def _hidden_rank_error(is_batched, got, lstm=False):
    kind, rank = ("batched 3-D", 3) if is_batched else ("unbatched 2-D", 2)
    if lstm:
        return RuntimeError(f"For {kind} input, hx and cx should also be {rank}-D but got ({got[0]}-D, {got[1]}-D) "
                            f"tensors")
    return RuntimeError(f"For {kind} input, hx should also be {rank}-D but got {got}-D tensor")


class _SingleState(RNNBase):
    """RNN and GRU: one hidden state."""

    _label = "RNN"

    def forward(self, input, hx=None):
        """Runs the layers over ``input``; returns ``(output, h_n)``.

        Args:
            input: ``(T, B, input_size)`` (``(B, T, *)`` with ``batch_first``), ``(T, input_size)``
                unbatched, or a ``PackedSequence``.
            hx: the initial hidden state ``(num_layers * directions, B, hidden_size)`` (zeros if None).
        """
        if not isinstance(input, PackedSequence):
            if input.dim() not in (2, 3):
                raise ValueError(f"{self._label}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 f"{'tensor instead' if self._label == 'RNN' else 'instead'}")
            if hx is not None and hx.dim() != input.dim():
                raise _hidden_rank_error(input.dim() == 3, hx.dim())
        data, batch_sizes, sorted_indices, unsorted_indices, hx, (kind, sizes) = self._prepare(input, hx)
        if kind == "unbatched" and hx is not None:
            hx = hx.unsqueeze(1)
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else data.size(0 if self.batch_first else 1)
            hx = self._zeros(batch, self.hidden_size, data)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        out, h, _ = self._run(data, batch_sizes, hx, None)
        out = self._finish(kind, out, sizes, sorted_indices, unsorted_indices, self.batch_first)
        if kind == "unbatched":
            h = h.squeeze(1)
        return out, self.permute_hidden(h, unsorted_indices)


class RNN(_SingleState):
    """An Elman RNN, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU), as ``torch.nn.RNN``.

    Args:
        input_size, hidden_size, num_layers, nonlinearity (``"tanh"`` or ``"relu"``), bias,
        batch_first, dropout, bidirectional, device, dtype: as PyTorch's (see ``RNNBase``).

    Example::
        >>> import retrograd as rg
        >>> rnn = rg.nn.RNN(4, 8, num_layers=2)
        >>> output, h_n = rnn(rg.randn(5, 3, 4))
        >>> output.shape, h_n.shape
        (retrograd.Size([5, 3, 8]), retrograd.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def extra_repr(self):
        s = super().extra_repr()
        return s + (f", nonlinearity={self.nonlinearity}" if self.nonlinearity != "tanh" else "")


class GRU(_SingleState):
    """A gated recurrent unit network (gates r, z, n in PyTorch's order), as ``torch.nn.GRU``.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, device,
        dtype: as PyTorch's (see ``RNNBase``).

    Example::
        >>> import retrograd as rg
        >>> gru = rg.nn.GRU(4, 8, batch_first=True)
        >>> output, h_n = gru(rg.randn(3, 5, 4))
        >>> output.shape, h_n.shape
        (retrograd.Size([3, 5, 8]), retrograd.Size([1, 3, 8]))
    """

    _label = "GRU"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """A long short-term memory network (gates i, f, g, o in PyTorch's order), as ``torch.nn.LSTM``.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, proj_size,
        device, dtype: as PyTorch's (see ``RNNBase``).

    Example::
        >>> import retrograd as rg
        >>> lstm = rg.nn.LSTM(4, 8, proj_size=3)
        >>> output, (h_n, c_n) = lstm(rg.randn(5, 2, 4))
        >>> output.shape, h_n.shape, c_n.shape
        (retrograd.Size([5, 2, 3]), retrograd.Size([1, 2, 3]), retrograd.Size([1, 2, 8]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        """``(num_layers * directions, batch, hidden_size)``."""
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        """Runs the layers over ``input``; returns ``(output, (h_n, c_n))``.

        Args:
            input: ``(T, B, input_size)`` (``(B, T, *)`` with ``batch_first``), ``(T, input_size)``
                unbatched, or a ``PackedSequence``.
            hx: ``(h_0, c_0)``, each ``(num_layers * directions, B, *)`` (zeros if None).
        """
        if not isinstance(input, PackedSequence):
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
            if hx is not None and (hx[0].dim() != input.dim() or hx[1].dim() != input.dim()):
                raise _hidden_rank_error(input.dim() == 3, (hx[0].dim(), hx[1].dim()), lstm=True)
        data, batch_sizes, sorted_indices, unsorted_indices, hx, (kind, sizes) = self._prepare(input, hx)
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else data.size(0 if self.batch_first else 1)
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(batch, real_hidden, data), self._zeros(batch, self.hidden_size, data))
            self.check_forward_args(data, hx, batch_sizes)
        else:
            if kind == "unbatched":
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            if kind != "packed":
                self.check_forward_args(data, hx, batch_sizes)
            hx = self.permute_hidden(hx, sorted_indices)
            if kind == "packed":
                self.check_forward_args(data, hx, batch_sizes)
        out, h, c = self._run(data, batch_sizes, hx[0], hx[1])
        out = self._finish(kind, out, sizes, sorted_indices, unsorted_indices, self.batch_first)
        if kind == "unbatched":
            h, c = h.squeeze(1), c.squeeze(1)
        return out, self.permute_hidden((h, c), unsorted_indices)


# -- cells -----------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """The common part of the cells: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` (PyTorch's RNNCellBase)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size), device=device,
                                                   dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self):
        """Every parameter uniform in ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size)]``, PyTorch's initialization."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, states):
        """PyTorch's checks of a batched input and its states (``hidden0``, ``hidden1``)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for k, h in enumerate(states):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")

    def _step(self, mode, input, h, c):
        self._check(input, (h,) if c is None else (h, c))
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"expected scalar type {self.weight_ih.dtype} but found {input.dtype}")
        return rnn_layer([input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None],
                         (input.shape[0],), mode, False)

    def _unbatched(self, name, input, hx, hidden_name="hidden"):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = () if hx is None else ((hx,) if isinstance(hx, Tensor) else tuple(hx))
        for k, value in enumerate(states):
            if value.dim() not in (1, 2):
                label = hidden_name if isinstance(hx, Tensor) else f"hx[{k}]"
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {value.dim()}D instead")
        return input.dim() == 2


class RNNCell(RNNCellBase):
    """One step of an Elman RNN, ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU), as ``torch.nn.RNNCell``.

    Example::
        >>> import retrograd as rg
        >>> cell = rg.nn.RNNCell(4, 6)
        >>> cell(rg.randn(3, 4)).shape
        retrograd.Size([3, 6])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """The next hidden state ``(B, hidden_size)`` (``(hidden_size,)`` unbatched); ``hx`` zeros if None."""
        batched = self._unbatched("RNNCell", input, hx)
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, hx, None)[1]
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM: returns ``(h', c')``, as ``torch.nn.LSTMCell``.

    Example::
        >>> import retrograd as rg
        >>> cell = rg.nn.LSTMCell(4, 6)
        >>> h, c = cell(rg.randn(3, 4))
        >>> h.shape, c.shape
        (retrograd.Size([3, 6]), retrograd.Size([3, 6]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """``(h', c')``, each ``(B, hidden_size)`` (unbatched ``(hidden_size,)``); ``hx``: ``(h, c)``, zeros if None."""
        batched = self._unbatched("LSTMCell", input, hx)
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        result = self._step("LSTM", input, hx[0], hx[1])
        h, c = result[1], result[2]
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU, as ``torch.nn.GRUCell``.

    Example::
        >>> import retrograd as rg
        >>> cell = rg.nn.GRUCell(4, 6)
        >>> cell(rg.randn(4)).shape
        retrograd.Size([6])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """The next hidden state ``(B, hidden_size)`` (``(hidden_size,)`` unbatched); ``hx`` zeros if None."""
        batched = self._unbatched("GRUCell", input, hx)
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        h = self._step("GRU", input, hx, None)[1]
        return h if batched else h.squeeze(0)
