"""Size: the tuple subclass that ``Tensor.shape`` returns, and the reading of a size argument (``ints``)."""
import operator

_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _as_int(s):
    """``s`` as an int where it is one (a Python or NumPy integer, a 0-d integer tensor; not a bool), else None."""
    if isinstance(s, bool) or type(s).__name__ == "bool_":
        return None
    try:
        return operator.index(s)
    except TypeError:
        return None


def ints(args, name, param="size"):
    """The ints of a size argument given as ``f(2, 3)`` or ``f((2, 3))``, with PyTorch's errors for anything else.

    ``args`` is what the variadic parameter received; ``name`` the function and ``param`` the parameter,
    as the message names them.

    Raises:
        TypeError: an element that is not an int, or one beyond int64.
    """
    single = len(args) == 1 and isinstance(args[0], (tuple, list))
    seq = args[0] if single else args
    for s in seq:  # the common case, plain ints, at the cost of one loop
        if type(s) is not int or not _INT64_MIN <= s <= _INT64_MAX:
            break
    else:
        return tuple(seq)
    out = []
    for pos, s in enumerate(seq):
        n = _as_int(s)
        kind = type(s).__name__
        if n is None and single:
            raise TypeError(f"{name}(): argument '{param}' (position 1) must be tuple of ints, but found element of "
                            f"type {kind} at pos {pos}")
        if n is None and len(seq) == 1:
            raise TypeError(f"{name}(): argument '{param}' (position 1) must be tuple of ints, not {kind}")
        if n is None:
            raise TypeError(f"{name}(): argument '{param}' failed to unpack the object at pos {pos + 1} with error "
                            f"\"type must be tuple of ints,but got {kind}\"")
        if not _INT64_MIN <= n <= _INT64_MAX:
            raise TypeError(f"{name}(): argument '{param}' failed to unpack the object at pos {pos + 1} with error "
                            "\"Overflow when unpacking long long")  # PyTorch's first line ends so
        out.append(n)
    return tuple(out)


class Size(tuple):
    """A tensor's shape; a tuple of ints that prints like ``retrograd.Size([2, 3])``."""

    __slots__ = ()

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"retrograd.Size({list(self)})"

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    # Concatenation and repetition give a Size, as torch.Size's do (a tuple's would give a tuple).
    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__
