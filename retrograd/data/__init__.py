"""Data sets shipped with retrograd: the 8x8 handwritten digits (see ATTRIBUTION.md in this folder)."""
from __future__ import annotations

import os

import numpy as np

from .. import _creation, _dtype

__all__ = ["load_digits"]

_DIGITS = os.path.join(os.path.dirname(__file__), "digits.npz")


def load_digits(as_tensors: bool = True):
    """The UCI optical recognition of handwritten digits data: 1,797 images of 8x8 pixels.

    Pixels are integers from 0 to 16 (counts of set pixels in 4x4 blocks of a 32x32 bitmap);
    labels are the digits 0 to 9, about 180 of each. The data is CC BY 4.0; see ATTRIBUTION.md.

    Args:
        as_tensors (bool): return retrograd tensors (images scaled to [0, 1] as float32 of shape
            (1797, 1, 8, 8), labels as int64) instead of the raw uint8 NumPy arrays of shapes
            (1797, 8, 8) and (1797,).

    Returns:
        tuple: ``(images, labels)``.

    Example::
        >>> from retrograd.data import load_digits
        >>> images, labels = load_digits()
        >>> images.shape, labels[:5].tolist()
        (retrograd.Size([1797, 1, 8, 8]), [0, 1, 2, 3, 4])
    """
    with np.load(_DIGITS, allow_pickle=False) as archive:
        images, labels = archive["images"], archive["targets"]
    if not as_tensors:
        return images, labels
    x = _creation.tensor((images.astype(np.float32) / 16.0)[:, None, :, :], dtype=_dtype.float32)
    y = _creation.tensor(labels.astype(np.int64), dtype=_dtype.int64)
    return x, y
