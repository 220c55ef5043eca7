"""Channel shuffle (ShuffleNet's): the channels of an ``(N, C, *)`` input split into ``groups`` groups and
interleaved, as a private op of the table with PyTorch's node ``ChannelShuffleBackward0``.

Shuffling by ``groups`` is a permutation of the channels whose inverse is shuffling by ``C // groups``, so the
gradient is the same op with the other count of groups (and so is every higher derivative).
"""
from __future__ import annotations

from ._declarations import LINEAR, defjvp, defop


def _channel_shuffle(xp, input, groups):
    n, c, *rest = input.shape
    x = input.reshape((n, groups, c // groups) + tuple(rest))
    return x.swapaxes(1, 2).reshape(input.shape)


channel_shuffle = defop("channel_shuffle", _channel_shuffle, public=False,
                        input=lambda grad, groups: channel_shuffle(grad, grad.shape[1] // groups))
defjvp(LINEAR, "channel_shuffle")
