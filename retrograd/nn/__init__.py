"""``retrograd.nn``: layers, their parameters, initializers and ``functional``, as ``torch.nn``.

Example::
    >>> import retrograd as rg
    >>> net = rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.ReLU(), rg.nn.Linear(8, 2))
    >>> net(rg.randn(3, 4)).shape
    retrograd.Size([3, 2])
"""
from . import functional, init, utils
from .modules import *  # noqa: F401,F403 - the layers

from . import modules as _modules
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .parallel import DataParallel

__all__ = ["functional", "init", "utils", "Parameter", "UninitializedParameter", "UninitializedBuffer", "DataParallel"] + list(_modules.__all__)
