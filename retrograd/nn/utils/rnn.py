"""Packed and padded batches of variable-length sequences, as ``torch.nn.utils.rnn``.

The code lives in ``retrograd/nn/_packing.py``, beside the layers that take packed batches, so
that ``nn.modules`` imports it without importing the rest of ``nn.utils``.
"""
from .._packing import (PackedSequence, invert_permutation, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                        pad_sequence, unpack_sequence, unpad_sequence)

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

for _public in (PackedSequence, invert_permutation, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                pad_sequence, unpack_sequence, unpad_sequence):
    _public.__module__ = __name__  # where users find them, as torch.nn.utils.rnn's
del _public
