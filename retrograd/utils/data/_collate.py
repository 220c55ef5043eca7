"""``default_collate`` and ``default_convert``: how a DataLoader turns samples into a batch, as PyTorch's."""
from __future__ import annotations

import collections.abc
import re

import numpy as np

from ... import _creation, _dtype
from ..._tensor import Tensor
from ...ops.joining import stack

__all__ = ["default_collate", "default_convert"]

_NOT_NUMERIC = re.compile(r"[SaUO]")  # NumPy dtype kinds that are strings or objects


def default_convert(data):
    """NumPy arrays (anywhere in ``data``'s containers) as tensors; the rest as it is.

    What a DataLoader applies to each sample when automatic batching is off (``batch_size=None``).
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) or (isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_))):
        if _NOT_NUMERIC.search(data.dtype.str) is not None:
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks a list of samples into a batch, keeping their structure, as ``torch.utils.data.default_collate``.

    Tensors are stacked along a new first dimension; NumPy arrays and scalars become tensors and are
    stacked; Python floats become a float64 tensor and ints an int64 one; strings stay a sequence;
    mappings, named tuples and sequences are collated field by field (tuples give lists, as PyTorch).

    Raises:
        RuntimeError: if the sequences of a batch differ in length.
        TypeError: for a sample of another kind.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.utils.data import default_collate
        >>> default_collate([(rg.tensor([1., 2.]), 0), (rg.tensor([3., 4.]), 1)])
        [tensor([[1., 2.],
                [3., 4.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray) or isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        if _NOT_NUMERIC.search(elem.dtype.str) is not None:
            raise TypeError(_collate_error(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.shape != ():
            return default_collate([_creation.as_tensor(b) for b in batch])
        return _creation.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return _creation.tensor(batch, dtype=_dtype.bool)
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_collate_error(type(elem)))


def _collate_error(what) -> str:
    return ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            f"found {what}")
