"""ChannelShuffle: the channels split into groups and interleaved."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """(N, g * k, *) read as (N, k, g, *): see ``functional.channel_shuffle``.

    Example::
        >>> import retrograd as rg
        >>> rg.nn.ChannelShuffle(2)
        ChannelShuffle(groups=2)
        >>> rg.nn.ChannelShuffle(2)(rg.arange(4.).reshape(1, 4, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
