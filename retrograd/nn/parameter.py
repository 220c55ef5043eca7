"""Parameter: a Tensor that a Module registers as one of its parameters."""
from __future__ import annotations

from .._creation import empty
from .._overrides import disabled_torch_function_impl
from .._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and that ``Module.__setattr__`` registers.

    It shares its data (and version counter) with the tensor it is made from.

    Args:
        data: the initial value (an empty float tensor if None).
        requires_grad: whether it requires grad (default True).

    Example::
        >>> import retrograd as rg
        >>> p = rg.nn.Parameter(rg.ones(2))
        >>> p
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
    """

    # As PyTorch's: a Parameter takes part in calls as a plain Tensor (Note [Where __torch_function__ is checked]).
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        t = Tensor._alias_of(data)._retyped(cls)
        t._requires_grad = False
        if requires_grad:
            if t._data.dtype.kind not in "fV":  # PyTorch's words for a new tensor, not requires_grad_()'s
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(Tensor._make(self._data.copy(), self._device), self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor._make(self._host(), self._device).__reduce_ex__(protocol),
                                     self._requires_grad))


def _rebuild_parameter(tensor_reduce, requires_grad):
    fn, args = tensor_reduce
    return Parameter(fn(*args).detach(), requires_grad)

