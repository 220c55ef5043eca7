"""Parameters as one flat vector and back, as ``torch.nn.utils.parameters_to_vector``."""
from __future__ import annotations

from ..._tensor import Tensor
from ...ops import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param, device):
    """The device all parameters share; raise PyTorch's TypeError when one differs."""
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's values, flattened and concatenated in order.

    The result is differentiable in the parameters.

    Example::
        >>> import retrograd as rg
        >>> rg.nn.utils.parameters_to_vector([rg.ones(2, 2), rg.zeros(1)])
        tensor([1., 1., 1., 1., 0.])
    """
    device, parts = None, []
    for p in parameters:
        device = _check_same_device(p, device)
        parts.append(p.reshape(-1))
    return cat(parts)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``, replacing each one's ``.data``.

    Raises:
        TypeError: ``vec`` is not a Tensor, or the parameters are on different devices.

    Example::
        >>> import retrograd as rg
        >>> w = [rg.zeros(2), rg.zeros(1)]
        >>> rg.nn.utils.vector_to_parameters(rg.tensor([1.0, 2.0, 3.0]), w)
        >>> w[0], w[1]
        (tensor([1., 2.]), tensor([3.]))
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device, start = None, 0
    for p in parameters:
        device = _check_same_device(p, device)
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
