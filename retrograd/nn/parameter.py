"""Parameter: a Tensor that a Module registers as one of its parameters."""
from __future__ import annotations

from .._creation import empty
from .._overrides import disabled_torch_function_impl
from .._tensor import Tensor

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer"]


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



# -- uninitialized parameters and buffers (the Lazy modules') -------------------------------------------------------
class UninitializedTensorMixin:
    """A parameter or buffer with no shape yet: every use but ``materialize`` raises, as PyTorch's.

    ``materialize(shape)`` gives it an array of ``shape`` (uninitialized values) and turns it into its
    ``cls_to_become`` in place, so that whoever holds it (a module, an optimizer) holds the real one.
    """

    def materialize(self, shape, device=None, dtype=None):
        """Gives this tensor an array of ``shape`` (on ``device``, of ``dtype``: its own by default) and makes it a
        ``cls_to_become``."""
        from .._creation import empty as _empty  # noqa: PLC0415 - creation is a layer below; kept at the use
        made = _empty(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,),
                      device=self._device if device is None else device,
                      dtype=Tensor.dtype.__get__(self) if dtype is None else dtype)
        object.__setattr__(self, "_data", made._data)
        object.__setattr__(self, "_device", made._device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (type(self), (self._requires_grad,))

    def requires_grad_(self, requires_grad=True):
        self._requires_grad = bool(requires_grad)
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise ValueError(f"Attempted to use an uninitialized parameter in {func}. This error happens when you are "
                         f"using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` "
                         "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                         "parameters before calling torch functions")


def is_lazy(param):
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a Lazy module before its first forward; ``materialize`` makes it a ``Parameter``.

    Example::
        >>> import retrograd as rg
        >>> p = rg.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', retrograd.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        t = Tensor._alias_of(empty(0, device=device, dtype=dtype))._retyped(cls)
        t._requires_grad = bool(requires_grad)
        return t

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a Lazy module before its first forward; ``materialize`` makes it a plain ``Tensor``."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        t = Tensor._alias_of(empty(0, device=device, dtype=dtype))._retyped(cls)
        t._requires_grad = bool(requires_grad)
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass
