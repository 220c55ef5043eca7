"""Packed and padded batches of variable-length sequences: ``torch.nn.utils.rnn``, re-exported there.

A ``PackedSequence`` holds the rows of a batch of sequences step by step: the first element of
every sequence, then the second of those that have one, and so on; ``batch_sizes[t]`` says how
many sequences are still running at step ``t``. The sequences are sorted by decreasing length
(``sorted_indices`` says how, where the caller's order was another). The recurrent modules
(``nn.RNN``, ``nn.LSTM``, ``nn.GRU``) take and return it. Packing and unpacking are each one
``index_select`` of the rows, so gradients flow through them.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from .. import _creation, _dtype
from .._tensor import Tensor
from ..ops import cat, sort, stack

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of variable-length sequences packed step by step (see the module docstring).

    Made by ``pack_padded_sequence`` and ``pack_sequence``, not by hand.

    Args:
        data: the rows of every step, ``(sum(batch_sizes), *)``.
        batch_sizes: how many sequences run at each step (an int64 CPU tensor).
        sorted_indices: the order in which the sequences were packed, or None (as given).
        unsorted_indices: its inverse (computed when None).
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same sequence with ``data.to(*args, **kwargs)``; the indices follow to its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        move = (lambda t: None if t is None else t.to(device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        """The same sequence on a CUDA device."""
        return self.to(*args, device="cuda", **kwargs) if not args else self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        """The same sequence on the CPU."""
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        """Whether the data is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        """Whether the data is in pinned memory (never, here)."""
        return False


def invert_permutation(permutation):
    """The inverse of a permutation of ``0..n-1`` (None stays None).

    Example::
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import invert_permutation
        >>> invert_permutation(rg.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    inverse = np.empty(permutation.numel(), dtype=np.int64)
    inverse[permutation._host()] = np.arange(permutation.numel())
    return _creation.tensor(inverse, device=permutation.device)


def _lengths_list(lengths):
    """``lengths`` (a tensor or a sequence of ints) as a list of Python ints, checked as PyTorch does."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device} Long tensor")
        return [int(v) for v in lengths._host()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    """How many of the sorted ``lengths`` exceed each step."""
    sizes = []
    for t in range(lengths[0] if lengths else 0):
        b = len(lengths)
        while b and lengths[b - 1] <= t:
            b -= 1
        sizes.append(b)
    return sizes


def _row_index(batch_sizes, steps, batch, batch_first):
    """For each packed row, its row in the padded input flattened to ``(steps * batch, *)``."""
    index = []
    for t, b in enumerate(batch_sizes):
        index.extend((i * steps + t) if batch_first else (t * batch + i) for i in range(b))
    return index


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch of variable-length sequences.

    Args:
        input: ``(T, B, *)`` padded sequences (``(B, T, *)`` with ``batch_first``).
        lengths: the length of each sequence (a list of ints or a 1-D int64 CPU tensor).
        batch_first: the batch is the first dimension of ``input``.
        enforce_sorted: the lengths must be sorted in decreasing order; if False, they are sorted
            here and ``sorted_indices`` records how.

    Returns:
        A ``PackedSequence``.

    Raises:
        RuntimeError: unsorted lengths with ``enforce_sorted``, a length that is not positive, or
            as many lengths as sequences in the batch.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_padded_sequence
        >>> x = rg.tensor([[1, 4], [2, 5], [3, 0]])
        >>> pack_padded_sequence(x, [3, 2]).data
        tensor([1, 4, 2, 5, 3])
    """
    length_list = _lengths_list(lengths)
    sorted_indices = None
    batch_dim = 0 if batch_first else 1
    if not enforce_sorted:
        values, sorted_indices = sort(_creation.tensor(length_list, dtype=_dtype.int64), descending=True)
        length_list = [int(v) for v in values._host()]
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(batch_dim, sorted_indices)
    batch = input.shape[batch_dim]
    if len(length_list) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(length_list)} "
                           f"(batch_size={batch})")
    if any(a < b for a, b in zip(length_list, length_list[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if length_list and length_list[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    steps = input.shape[1 - batch_dim]
    if length_list[0] > steps:
        raise RuntimeError(f"Expected the longest length ({length_list[0]}) to be at most the padded length {steps}")
    sizes = _batch_sizes(length_list)
    rows = _creation.tensor(_row_index(sizes, steps, batch, batch_first), dtype=_dtype.int64, device=input.device)
    data = input.reshape((steps * batch,) + tuple(input.shape[2:])).index_select(0, rows)
    return PackedSequence(data, _creation.tensor(sizes, dtype=_dtype.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch back into a tensor: the inverse of ``pack_padded_sequence``.

    Args:
        sequence: a ``PackedSequence``.
        batch_first: return ``(B, T, *)`` instead of ``(T, B, *)``.
        padding_value: the value of the padded elements.
        total_length: pad to this many steps instead of the longest sequence's.

    Returns:
        ``(padded, lengths)``: the padded tensor, and each sequence's length (int64), in the
        caller's order.

    Raises:
        ValueError: ``total_length`` is shorter than the longest sequence.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> padded, lengths = pad_packed_sequence(pack_sequence([rg.tensor([1, 2]), rg.tensor([3])]))
        >>> padded.tolist(), lengths.tolist()
        ([[1, 3], [2, 0]], [2, 1])
    """
    sizes = [int(v) for v in sequence.batch_sizes._host()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    data = sequence.data
    batch = sizes[0] if sizes else 0
    rest = tuple(data.shape[1:])
    n = data.shape[0]
    where = np.full(steps * batch, n, dtype=np.int64)  # every padded slot reads the padding row, at index n
    where[_row_index(sizes, steps, batch, batch_first)] = np.arange(n)
    filler = _creation.full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    source = cat([data, filler])
    padded = source.index_select(0, _creation.tensor(where, device=data.device))
    padded = padded.reshape(((batch, steps) if batch_first else (steps, batch)) + rest)
    lengths = np.array([sum(1 for b in sizes if b > i) for i in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices
        padded = padded.index_select(0 if batch_first else 1, order)
        lengths = lengths[order._host()]
    return padded, _creation.tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks variable-length sequences ``(L_i, *)`` into one padded tensor.

    Args:
        sequences: the tensors, each ``(L_i, *)`` with the same trailing shape.
        batch_first: return ``(B, T, *)`` instead of ``(T, B, *)``.
        padding_value: the value of the padded elements.
        padding_side: ``"right"`` (pad after each sequence) or ``"left"``.

    Returns:
        The padded tensor; ``T`` is the longest length.

    Raises:
        RuntimeError: ``sequences`` is not iterable or empty, or ``padding_side`` is neither side.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pad_sequence
        >>> pad_sequence([rg.tensor([1, 2, 3]), rg.tensor([4])], batch_first=True).tolist()
        [[1, 2, 3], [4, 0, 0]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        short = longest - s.shape[0]
        if short:
            filler = _creation.full((short,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, filler] if padding_side == "right" else [filler, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded tensor back into its sequences: the inverse of ``pad_sequence``.

    Args:
        padded_sequences: ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``).
        lengths: the length of each sequence.
        batch_first: the batch is the first dimension.

    Returns:
        A list of ``B`` tensors ``(L_i, *)``.

    Unlike PyTorch's, it leaves ``padded_sequences`` as it was (PyTorch transposes it in place
    where ``batch_first`` is False).
    """
    batch_major = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [seq[:length] for seq, length in zip(batch_major, _lengths_list(lengths), strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length sequences: ``pad_sequence``, then ``pack_padded_sequence``.

    Args:
        sequences: the tensors ``(L_i, *)``, by decreasing length unless ``enforce_sorted`` is False.
        enforce_sorted: require decreasing lengths (else sort them, recording ``sorted_indices``).

    Returns:
        A ``PackedSequence``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> pack_sequence([rg.tensor([1, 2, 3]), rg.tensor([4, 5]), rg.tensor([6])]).batch_sizes
        tensor([3, 2, 1])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a ``PackedSequence``, in the caller's order: the inverse of ``pack_sequence``."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
