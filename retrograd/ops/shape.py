"""Shape ops: views (sharing memory and the version counter), flips, rolls and triangles.

Joining and splitting live in joining.py, copies and casts in copy.py."""
from __future__ import annotations

import numpy as np

from .. import _creation, _dtype
from .._size import ints
from .._tensor import INFERENCE_COUNTER, Tensor, _address, _wrap_dim, storage_array
from ..autograd import grad_mode
from ..autograd.function import NotImplementedNode
from ..autograd.graph import input_metadata
from ..autograd.variable import gradient_edge, move_retains_grad
from ._call import call_op
from ._declarations import defop, passthrough, tensor_method
from ._inplace import check_inplace
from .pointwise import formula_arrays


def shape_arg(shape, name="view", param="size"):
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape ``(2, 3)``; anything but ints raises PyTorch's TypeError
    for the parameter ``param`` of the method ``name``."""
    try:
        return ints(shape, name, param)
    except TypeError:
        if name != "view":
            raise
        # view has two signatures (sizes, or a dtype): PyTorch's error names the arguments' types
        got = ", ".join(type(s).__name__ for s in shape)
        raise TypeError(f"view() received an invalid combination of arguments - got ({got}), but expected one of:"
                        ) from None


def _infer(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _view(xp, input, shape):
    shape = _infer(shape, input.size)
    if input.flags.c_contiguous:  # always a view; the method is ten times cheaper than reshape(copy=False)
        return input.reshape(shape)
    try:
        return xp.reshape(input, shape, copy=False)
    except (ValueError, AttributeError):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.") from None


def _reshape(xp, input, shape):
    return xp.reshape(input, _infer(shape, input.size))


def _reshape_kind(input, shape):
    """How PyTorch's reshape of ``input`` to ``shape`` goes: "view" (contiguous), "alias" (strided, but a
    view would do: ``_reshape_alias``) or "copy" (a contiguous clone, then ``_unsafe_view``).

    NumPy's reshape views and copies in the same cases, so the result is a view of ``input`` (sharing
    its memory and version counter) exactly where PyTorch's is.
    """
    arr = input._data
    if arr.flags.c_contiguous:
        return "view"
    try:
        alias = arr.view()
        alias.shape = _infer(shape, arr.size)  # raises where only a copy has that shape
    except (ValueError, AttributeError, RuntimeError):
        return "copy"
    return "alias"


def _reshape_grad(grad, input_shape):
    if formula_arrays(grad) is not None:  # See Note [Formulas on arrays]: NumPy's reshape, no op call
        return Tensor._make(grad._data.reshape(input_shape), grad._device)
    return grad.reshape(input_shape)



view = defop("view", _view, view=True, input=_reshape_grad)
# See Note [Node names per call]: PyTorch's reshape is a view, an alias or a copy, each with its node.
reshape = defop("reshape", _reshape, view=True, node_name="View", input=_reshape_grad,
                node_names={"ReshapeAliasBackward0": lambda input, shape: _reshape_kind(input, shape) == "alias",
                            "UnsafeViewBackward0": lambda input, shape: _reshape_kind(input, shape) == "copy"})


@tensor_method
def flatten(input, start_dim=0, end_dim=-1):
    """Merges dims ``start_dim`` to ``end_dim`` of ``input`` into one.

    Args:
        input: the tensor.
        start_dim: the first dim to merge.
        end_dim: the last dim to merge.

    Returns:
        A view where the memory layout allows it, else a copy (as ``reshape``); a 0-d input gives a
        1-D tensor, and ``input`` itself comes back where ``start_dim`` and ``end_dim`` are one dim.

    Example::
        >>> import retrograd as rg
        >>> rg.flatten(rg.ones(2, 3, 4), start_dim=1).shape
        retrograd.Size([2, 12])
    """
    nd = input.dim()
    if nd == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input  # nothing to merge: the tensor itself, as PyTorch
    shape = input._data.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


@tensor_method
def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.dim())
    shape = input._data.shape
    return view(input, shape[:d] + tuple(sizes) + shape[d + 1:])  # splitting a dim always views, as PyTorch


def _transpose(xp, input, dim0, dim1):
    nd = input.ndim
    if nd == 0:
        _wrap_dim(dim0, 0), _wrap_dim(dim1, 0)
        return input[...]
    d0, d1 = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    # the method where it is NumPy's: np.swapaxes is a Python wrapper around it, some 0.4 us more a call
    return input.swapaxes(d0, d1) if xp is np else xp.swapaxes(input, d0, d1)


transpose = defop("transpose", _transpose, method=True, view=True,
                  input=lambda grad, dim0, dim1: grad.transpose(dim0, dim1))
swapaxes = tensor_method(transpose, name="swapaxes")


def _permute(xp, input, dims):
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}" if len(dims) != input.ndim else "permute(): duplicate dims are not allowed.")
    return xp.transpose(input, dims)


permute = defop("permute", _permute, view=True,
                input=lambda grad, dims: grad.permute(tuple(np.argsort([d % max(grad.dim(), 1) for d in dims]))))


def _t(xp, input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T if input.ndim == 2 else input[...]


t = defop("t", _t, method=True, view=True, input=lambda grad: grad.t())
alias = defop("alias", lambda xp, input: input[...], public=False, view=True, input=lambda grad: grad)


@tensor_method
def as_subclass(self, cls):
    """A tensor of class ``cls`` that is an alias of this one (a view of all of it): PyTorch's ``as_subclass``.

    It is in the graph as PyTorch's: an ``AliasBackward0`` where this tensor requires grad. It calls no
    ``__torch_function__``; ``Tensor.__torch_function__`` gives results their subclass with it.

    Raises:
        TypeError: ``cls`` is not Tensor nor a subclass of it.

    Example::
        >>> import retrograd as rg
        >>> class Tagged(rg.Tensor):
        ...     pass
        >>> y = rg.ones(2, requires_grad=True).as_subclass(Tagged)
        >>> type(y).__name__, y.grad_fn.name()
        ('Tagged', 'AliasBackward0')
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = call_op(alias.op, (self,))  # the op call itself, which looks for no __torch_function__
    return out if cls is Tensor else out._retyped(cls)


def _unsqueeze(xp, input, dim):
    d = _wrap_dim(dim, input.ndim + 1)
    out = xp.expand_dims(input, d)
    if d and d == input.ndim and out.strides[d] != input.itemsize and xp is np:
        # NumPy gives a new last dim of a non-contiguous array its neighbour's stride; PyTorch gives it 1
        out = strided_view(input, out.shape, tuple(s // input.itemsize for s in input.strides) + (1,),
                           _storage_offset(input))
    return out


unsqueeze = defop("unsqueeze", _unsqueeze, method=True, view=True,
                  input=lambda grad, dim: grad.squeeze(dim if dim >= 0 else dim + grad.dim()))


def _squeeze(xp, input, dim=None):
    if dim is None:
        return xp.reshape(input, tuple(s for s in input.shape if s != 1))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)  # a 0-d tensor's dims are [-1, 0], as PyTorch's
    keep = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
    return xp.reshape(input, keep)  # a dim whose size is not 1 stays, as PyTorch


squeeze = defop("squeeze", _squeeze, method=True, view=True, input=_reshape_grad,
                node_names={"SqueezeBackward1": lambda dim: isinstance(dim, int),  # See Note [Node names per call]
                            "SqueezeBackward2": lambda dim: dim is not None})


# Note [In-place view ops]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# ``t_``, ``transpose_`` (``swapdims_``, ``swapaxes_``), ``unsqueeze_`` and ``squeeze_`` change a
# tensor's shape and strides in place, as PyTorch's: the tensor object stays, its array becomes the
# view the out-of-place op makes of it, and its version counter moves on (a node that saved it
# refuses it). Where the call is recorded, its history is that op's node, named as PyTorch names
# the in-place overload (``TBackward1``...), on the tensor's old history; a view stays a view of
# its base, with the op added to its chain. PyTorch's errors of an in-place op come first (a leaf
# that requires grad, a view of one, a view not made the default way). Views taken of the tensor
# before the call are re-made at their next use: their chain replays on the new shape where it still
# makes them, else an as_strided of the storage does (PyTorch re-makes every stale view with as_strided).
_INPLACE_VIEW_NODES = {}  # (op node class, PyTorch's name) -> the node class of that name


def _inplace_view(self, make, node_name):
    """Gives ``self`` the metadata of ``make(self)``, a view op's result. See Note [In-place view ops]."""
    if self._vc is INFERENCE_COUNTER and not grad_mode.inference_now():
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
            "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")
    if grad_mode.recording() and self.requires_grad:
        check_inplace(self)
    out = make(self)
    self._data = out._data
    if self._base is not None:
        self._view_fn = out._view_fn
    fn = out._node
    if fn is not None:
        key = (type(fn), node_name)
        cls = _INPLACE_VIEW_NODES.get(key)
        if cls is None:
            cls = _INPLACE_VIEW_NODES[key] = type(node_name, (type(fn),), {"__slots__": ()})
        fn.__class__ = cls
        # A retain_grad hook stays with the old node: .grad then has the old shape, as in PyTorch.
        self._node, self._output_nr, self._requires_grad = fn, out._output_nr, True
    self._version_counter.bump()
    if self._base is not None:
        self._view_version = self._version_counter.version  # its grad_fn is current: nothing to regenerate
    return self


@tensor_method
def t_(self, *args):
    """In-place :meth:`t`: transposes this tensor of at most 2 dims (See Note [In-place view ops]).

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(2, 3)
        >>> x.t_().shape, x._version
        (retrograd.Size([3, 2]), 1)
    """
    if args:
        raise TypeError(f"TensorBase.t_() takes no arguments ({len(args)} given)")
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _inplace_view(self, t, "TBackward1")


@tensor_method
def transpose_(self, dim0, dim1):
    """In-place :meth:`transpose` (See Note [In-place view ops])."""
    return _inplace_view(self, lambda x: transpose(x, dim0, dim1), "TransposeBackward1")


@tensor_method
def swapdims_(self, dim0, dim1):
    """In-place swap of two dims, as ``transpose_`` (See Note [In-place view ops])."""
    return _inplace_view(self, lambda x: transpose(x, dim0, dim1), "TransposeBackward1")


@tensor_method
def swapaxes_(self, axis0, axis1):
    """In-place swap of two dims, as ``transpose_`` (See Note [In-place view ops])."""
    return _inplace_view(self, lambda x: transpose(x, axis0, axis1), "TransposeBackward1")


@tensor_method
def unsqueeze_(self, dim):
    """In-place :meth:`unsqueeze` (See Note [In-place view ops])."""
    return _inplace_view(self, lambda x: unsqueeze(x, dim), "UnsqueezeBackward1")


@tensor_method
def squeeze_(self, dim=None):
    """In-place :meth:`squeeze`: the dims of size 1 (those of ``dim``, an int or a tuple, if given).

    See Note [In-place view ops].
    """
    name = "SqueezeBackward3" if dim is None else "SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5"
    return _inplace_view(self, lambda x: squeeze(x, dim), name)


# -- as_strided: any geometry of a tensor's storage ---------------------------------------------------
# See Note [Strides and storage] in _tensor.py.
def strided_view(input, size, stride, offset):
    """The array of ``size``, ``stride`` and ``offset`` (in elements) over ``input``'s storage, checked as PyTorch's.

    It is a view of the storage's owner; it is read-only where ``input`` is, or where two of its elements are one
    (a stride 0), as an expanded tensor is.
    """
    if len(stride) != len(size):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    root = storage_array(input)
    itemsize = input.itemsize
    if not isinstance(root, np.ndarray):
        raise NotImplementedError(f"as_strided is implemented for CPU tensors only, not {type(input).__name__}")
    numel = 1
    for n in size:
        numel *= n
    needed = (1 + offset + sum((n - 1) * st for n, st in zip(size, stride))) * itemsize
    if numel == 0:
        offset = min(offset, root.nbytes // itemsize)  # an empty view reads nothing: any offset will do
    elif needed > root.nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage of "
                           f"size {root.nbytes}")
    buffer = root if root.flags.c_contiguous or root.flags.f_contiguous else root.ravel(order="K")
    out = np.ndarray(size, input.dtype, buffer, offset * itemsize, tuple(st * itemsize for st in stride))
    if not input.flags.writeable or any(st == 0 and n > 1 for n, st in zip(size, stride)):
        out.setflags(write=False)
    return out


def _storage_offset(input):
    return (_address(input) - _address(storage_array(input))) // input.itemsize


def _as_strided_forward(xp, input, size, stride, storage_offset=None, geometry=None):
    return strided_view(input, tuple(size), tuple(stride),
                        _storage_offset(input) if storage_offset is None else storage_offset)


def _positions(shape, stride, offset):
    """The storage position of each element of the geometry (``shape``, ``stride``, ``offset``), as an int array."""
    pos = np.full((), offset, dtype=np.int64)
    for n, st in zip(shape, stride):
        pos = pos[..., None] + np.arange(n, dtype=np.int64) * st
    return pos


def _as_strided_geometries(input_shape, size, stride, storage_offset, geometry):
    """The storage positions of the input's and the output's elements, from the lowest of either, and how many."""
    in_stride, in_offset = geometry
    out_offset = in_offset if storage_offset is None else storage_offset
    shared = min(in_offset, out_offset)
    pos_in = _positions(input_shape, in_stride, in_offset - shared)
    pos_out = _positions(size, stride, out_offset - shared)
    n = 1 + max(int(pos_in.max(initial=0)), int(pos_out.max(initial=0)))
    return pos_in, pos_out, n


def _as_strided_backward(grad, input_shape, size, stride, storage_offset, geometry):
    """PyTorch's gradient of ``as_strided``: ``grad`` added into a zero storage at the output's geometry, read back at
    the input's; a storage element that several input elements share gives each an equal part."""
    pos_in, pos_out, n = _as_strided_geometries(input_shape, size, stride, storage_offset, geometry)
    device = grad.device
    storage = _creation.zeros(n, dtype=grad.dtype, device=device)
    if pos_out.size:
        storage = storage.index_add(0, _creation.tensor(pos_out.reshape(-1), device=device), grad.reshape(-1))
    counts = np.bincount(pos_in.reshape(-1), minlength=n)
    if (counts > 1).any():
        storage = storage / _creation.tensor(np.maximum(counts, 1), dtype=grad.dtype, device=device)
    return storage.take(_creation.tensor(pos_in, device=device))


def _as_strided_jvp(input_t, input_shape, size, stride, storage_offset, geometry):
    """The tangent of ``as_strided``: each output element's is that of the input element at its storage position
    (zero where the output reads outside the input)."""
    pos_in, pos_out, n = _as_strided_geometries(input_shape, size, stride, storage_offset, geometry)
    which = np.full(n, -1, dtype=np.int64)
    which[pos_in.reshape(-1)] = np.arange(pos_in.size)
    src = which[pos_out]
    device = input_t.device
    out = input_t.reshape(-1).take(_creation.tensor(np.maximum(src, 0), device=device))
    if (src < 0).any():
        out = out * _creation.tensor(src >= 0, dtype=input_t.dtype, device=device)
    return out


# The input's geometry (its strides and storage offset) rides along as an argument, so that the node saves it, not
# the input (whose version moves on where the view is written to), as PyTorch's node saves self_geometry.
_as_strided = defop("as_strided", _as_strided_forward, public=False, view=True, tensor_args=("input",),
                    input=_as_strided_backward, jvp=_as_strided_jvp)


@tensor_method
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given sizes, strides and offset, in elements (``storage_offset``:
    ``input``'s own if None).

    Args:
        input: the tensor whose storage to view.
        size: the shape of the view.
        stride: the step along each dim of the view.
        storage_offset: where the view's first element is in the storage.

    Returns:
        A view sharing the storage and version counter of ``input``; its gradient adds up where its elements
        overlap (``AsStridedBackward0``).

    Raises:
        RuntimeError: PyTorch's errors, for a view that would read outside the storage among others.

    Example::
        >>> import retrograd as rg
        >>> x = rg.arange(6.)
        >>> x.as_strided((2, 3), (1, 2))
        tensor([[0., 2., 4.],
                [1., 3., 5.]])
        >>> x.as_strided((4, 3), (1, 1))  # overlapping windows of 3
        tensor([[0., 1., 2.],
                [1., 2., 3.],
                [2., 3., 4.],
                [3., 4., 5.]])
    """
    return _as_strided(input, _int_tuple(size, "size", 1), _int_tuple(stride, "stride", 2), storage_offset,
                       (input.stride(), input.storage_offset()))


def _int_tuple(value, param, position, name="as_strided"):
    """``value``, a sequence of ints, as a tuple; PyTorch's TypeError for anything else (an int included)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name}(): argument '{param}' (position {position}) must be tuple of ints, not "
                        f"{type(value).__name__}")
    return ints((value,), name, param)


def _scattered(input_shape, size, stride, storage_offset, geometry):
    """Of an as_strided_scatter: the (flat) input elements the view covers, and the (flat) src element each takes,
    the last written where src elements overlap."""
    pos_in, pos_out, n = _as_strided_geometries(input_shape, size, stride, storage_offset, geometry)
    writer = np.full(n, -1, dtype=np.int64)
    writer[pos_out.reshape(-1)] = np.arange(pos_out.size)
    which = writer[pos_in.reshape(-1)]
    covered = np.flatnonzero(which >= 0)
    return covered, which[covered]


def _as_strided_scatter_forward(xp, input, src, size, stride, storage_offset=None, geometry=None):
    covered, taken = _scattered(input.shape, size, stride, storage_offset, geometry)
    out = xp.array(input, order="C").reshape(-1)
    out[covered] = src.reshape(-1)[taken]
    return out.reshape(input.shape)


def _as_strided_scatter_input_grad(grad, input_shape, size, stride, storage_offset, geometry):
    """``grad`` where the input's element is kept, zero where src replaced it."""
    covered, _ = _scattered(input_shape, size, stride, storage_offset, geometry)
    if not covered.size:
        return grad
    return grad.reshape(-1).index_fill(0, _creation.tensor(covered, device=grad.device), 0.).reshape(input_shape)


def _as_strided_scatter_src_grad(grad, input_shape, src_shape, size, stride, storage_offset, geometry):
    """The gradient of each src element: that of the output elements that took it (none for one overwritten)."""
    covered, taken = _scattered(input_shape, size, stride, storage_offset, geometry)
    numel = 1
    for n in src_shape:
        numel *= n
    out = grad.new_zeros(numel)
    if covered.size:
        out = out.index_add(0, _creation.tensor(taken, device=grad.device),
                            grad.reshape(-1).index_select(0, _creation.tensor(covered, device=grad.device)))
    return out.reshape(src_shape)


# The input's geometry rides along as as_strided's does: the positions are in the frame of its storage.
_as_strided_scatter = defop("as_strided_scatter", _as_strided_scatter_forward, public=False,
                            tensor_args=("input", "src"), input=_as_strided_scatter_input_grad,
                            src=_as_strided_scatter_src_grad)


@tensor_method
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written into the elements its :meth:`as_strided` view of these sizes,
    strides and offset would see.

    Args:
        input: the tensor to copy.
        src: the values, of shape ``size``.
        size: the shape of the view.
        stride: the step along each dim of the view, in elements of ``input``'s storage.
        storage_offset: where the view's first element is in the storage (``input``'s own if None).

    Returns:
        A new tensor of ``input``'s shape and dtype (``AsStridedScatterBackward0``). Where elements of ``src``
        overlap, the last one is written; an element of the view outside ``input`` is dropped.

    Raises:
        RuntimeError: PyTorch's errors, for a ``src`` not of shape ``size`` or a view outside the storage.

    Example::
        >>> import retrograd as rg
        >>> rg.as_strided_scatter(rg.zeros(6), rg.tensor([1., 2., 3.]), (3,), (2,), 1)
        tensor([0., 1., 0., 2., 0., 3.])
    """
    size = _int_tuple(size, "size", 3, "as_strided_scatter")
    stride = _int_tuple(stride, "stride", 4, "as_strided_scatter")
    offset = input.storage_offset() if storage_offset is None else storage_offset
    strided_view(input._data, size, stride, offset)  # the checks of the view, as PyTorch's
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(size)}")
    return _as_strided_scatter(input, src, size, stride, storage_offset, (input.stride(), input.storage_offset()))


@tensor_method
def as_strided_(self, size, stride, storage_offset=None):
    """In-place :meth:`as_strided`: this tensor takes that geometry of its storage (See Note [In-place view ops]).

    Example::
        >>> import retrograd as rg
        >>> x = rg.arange(6.)
        >>> x.as_strided_((3, 2), (1, 3)).stride(), x._version
        ((1, 3), 1)
    """
    return _inplace_view(self, lambda x: as_strided(x, size, stride, storage_offset), "AsStridedBackward1")


_ndarray = np.ndarray


def _expand(xp, input, size):
    size = tuple(size)
    if input.ndim == 0 and xp is np and -1 not in size:
        # A scalar to any shape (the gradient of a full reduction): a zero-stride array made
        # directly, several times cheaper than np.broadcast_to, and read-only like it.
        out = _ndarray(size, input.dtype, input, 0, (0,) * len(size))  # by position: faster than by keyword
        out.setflags(False)  # write=False, by position: no keyword dict; cheaper than going through out.flags
        return out  # every stride 0, as PyTorch's expand of a 0-d tensor
    target = expanded_shape(input.shape, size)
    out = xp.broadcast_to(input, target)
    if 1 in target and input.ndim and xp is np:
        # NumPy gives a dim of size 1 stride 0; PyTorch keeps the input's, and gives a new one the stride it would
        # have if contiguous
        lead, itemsize = len(target) - input.ndim, input.itemsize
        strides = [0] * len(target)
        for i in range(len(target) - 1, -1, -1):
            if i >= lead:
                strides[i] = input.strides[i - lead] // itemsize if input.shape[i - lead] == target[i] else 0
            elif target[i] == 1:
                strides[i] = target[i + 1] * strides[i + 1] if i + 1 < len(target) else 1
        if tuple(st * itemsize for st in strides) != out.strides:
            out = strided_view(input, target, tuple(strides), _storage_offset(input))
    return out


def expanded_shape(shape, size):
    """The shape ``expand(size)`` gives a tensor of ``shape`` (``-1`` kept); raises PyTorch's errors where it cannot."""
    ndim = len(shape)
    if len(size) < ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size=[{', '.join(map(str, size))}]): the "
                           f"number of sizes provided ({len(size)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({ndim})")
    lead = len(size) - ndim
    target = tuple(shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(size))
    for i in range(ndim):
        if shape[i] != 1 and shape[i] != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match the existing size "
                               f"({shape[i]}) at non-singleton dimension {lead + i}.  Target sizes: "
                               f"{list(size)}.  Tensor sizes: {list(shape)}")
    return target


expand = defop("expand", _expand, view=True, input=lambda grad, input_shape: grad.sum_to_size(input_shape))


def broadcast_to(input, size):
    """Broadcasts ``input`` to ``size`` without copying, as ``expand``.

    Args:
        input: the tensor.
        size: the new shape.

    Returns:
        A read-only view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.broadcast_to(rg.tensor([1., 2.]), (2, 2))
        tensor([[1., 2.],
                [1., 2.]])
    """
    return expand(input, tuple(size))


@tensor_method
def expand_as(input, other):
    """Expands ``input`` to the shape of ``other``, as ``expand(input, other.shape)``.

    Args:
        input: the tensor.
        other: the tensor whose shape to take.

    Returns:
        A read-only view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.expand_as(rg.tensor([1., 2.]), rg.ones(2, 2))
        tensor([[1., 2.],
                [1., 2.]])
    """
    return expand(input, other._data.shape)


def _repeat(xp, input, repeats):
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = (1,) * (len(repeats) - input.ndim) + input.shape
    target = [r * s for r, s in zip(repeats, padded, strict=True)]
    negative = [d for d in target if d < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {target}")
    return xp.tile(input.reshape(padded), repeats)


def _repeat_backward(grad, input_shape, repeats):
    """The gradient of ``repeat``: the sum over the copies, as the gradient viewed as (r0, s0, r1, s1, ...)."""
    padded = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    copies = tuple(d for r, s in zip(repeats, padded, strict=True) for d in (r, s))
    if not copies:
        return grad
    return grad.reshape(copies).sum(tuple(range(0, len(copies), 2))).reshape(input_shape)


repeat = defop("repeat", _repeat, public=False, input=_repeat_backward)  # Tensor.repeat(*sizes): _methods.py


def _diagonal(xp, input, offset=0, dim1=0, dim2=1):
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return xp.diagonal(input, offset, d1, d2)


def _diagonal_backward_fwd(xp, grad, input_shape, offset, dim1, dim2):
    out = xp.zeros(input_shape, dtype=grad.dtype)
    nd = len(input_shape)
    moved = xp.moveaxis(out, (_wrap_dim(dim1, nd), _wrap_dim(dim2, nd)), (-2, -1))
    n = grad.shape[-1]
    rows = xp.arange(n) + (max(-offset, 0))
    cols = xp.arange(n) + (max(offset, 0))
    moved[..., rows, cols] = grad
    return out


_diagonal_backward = defop("diagonal_backward", _diagonal_backward_fwd, public=False,
                           grad=lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2))
diagonal = defop("diagonal", _diagonal, method=True, view=True,
                 input=lambda grad, input_shape, offset, dim1, dim2:
                 _diagonal_backward(grad, input_shape, offset, dim1, dim2))
diagonal_copy = defop("diagonal_copy", lambda xp, input, offset=0, dim1=0, dim2=1:
                      _diagonal(xp, input, offset, dim1, dim2).copy(), node_name="DiagonalBackward0_copy",
                      input=lambda grad, input_shape, offset, dim1, dim2:
                      _diagonal_backward(grad, input_shape, offset, dim1, dim2))


def _flip(xp, input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return xp.flip(input, axis=tuple(_wrap_dim(d, input.ndim) for d in dims)).copy() if input.ndim else input.copy()


flip = defop("flip", _flip, input=lambda grad, dims: grad.flip(dims))


def _roll(xp, input, shifts, dims=None):
    return xp.roll(input, shifts, axis=dims)


def _neg_shifts(shifts):
    return -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)


roll = defop("roll", _roll, method=True, input=lambda grad, shifts, dims: grad.roll(_neg_shifts(shifts), dims))
tril = defop("tril", lambda xp, input, diagonal=0: xp.tril(input, diagonal), method=True, inplace=True,
             input=lambda grad, diagonal: grad.tril(diagonal))
triu = defop("triu", lambda xp, input, diagonal=0: xp.triu(input, diagonal), method=True, inplace=True,
             input=lambda grad, diagonal: grad.triu(diagonal))


@tensor_method
def movedim(input, source, destination):
    """Moves the dims ``source`` to positions ``destination`` (a view)."""
    nd = input.dim()
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, nd) for s in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    rest = [d for d in range(nd) if d not in src]
    perm = [None] * nd
    for s, d in zip(src, dst, strict=True):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(input, tuple(perm))


moveaxis = tensor_method(movedim, name="moveaxis")


# -- more of PyTorch's shape ops: rotations, flips, diagonal embeddings, sliding windows -------------------
swapdims = tensor_method(transpose, name="swapdims")


@tensor_method
def fliplr(input):
    """``input`` with its columns (dim 1) in reverse order; at least 2-D.

    Example::
        >>> import retrograd as rg
        >>> rg.fliplr(rg.tensor([[1., 2.], [3., 4.]]))
        tensor([[2., 1.],
                [4., 3.]])
    """
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@tensor_method
def flipud(input):
    """``input`` with its rows (dim 0) in reverse order; at least 1-D.

    Example::
        >>> import retrograd as rg
        >>> rg.flipud(rg.tensor([1., 2., 3.]))
        tensor([3., 2., 1.])
    """
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _rot90(xp, input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return xp.rot90(input, k, axes=(d0, d1)).copy()


rot90 = defop("rot90", _rot90, method=True, input=lambda grad, k, dims: grad.rot90(-k, dims))


def _diag_embed(xp, input, offset=0, dim1=-2, dim2=-1):
    nd = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(offset) if input.ndim else 1 + abs(offset)
    values = input if input.ndim else input.reshape(1)
    out = xp.zeros(values.shape[:-1] + (n, n), dtype=input.dtype)
    rows = xp.arange(values.shape[-1]) + max(-offset, 0)
    out[..., rows, rows + offset] = values
    return xp.moveaxis(out, (-2, -1), (d1, d2))


diag_embed = defop("diag_embed", _diag_embed, method=True,
                   input=lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2))


def _unfold(xp, input, dimension, size, step):
    if input.ndim == 0:
        _wrap_dim(dimension, 0)
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return input.reshape(1)
    d = _wrap_dim(dimension, input.ndim)
    if size > input.shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {input.shape[d]} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    windows = np.lib.stride_tricks.sliding_window_view(input, size, axis=d) if xp is np else \
        xp.lib.stride_tricks.sliding_window_view(input, size, axis=d)
    return windows[(slice(None),) * d + (slice(None, None, step),)]


def _unfold_backward_forward(xp, grad, input_shape, dim, size, step):
    """The gradient of ``unfold``: each window's gradient added back at the window's place."""
    out = xp.zeros(tuple(input_shape), dtype=grad.dtype)
    if not input_shape:
        return grad.reshape(())
    d = _wrap_dim(dim, len(input_shape))
    moved = xp.moveaxis(grad, -1, d + 1)  # (..., windows, size, ...)
    for w in range(grad.shape[d]):
        place = (slice(None),) * d + (slice(w * step, w * step + size),)
        out[place] += moved[(slice(None),) * d + (w,)]
    return out


_unfold_backward = defop("unfold_backward", _unfold_backward_forward, public=False,
                         grad=lambda grad, dim, size, step: grad.unfold(dim, size, step))
unfold = defop("unfold", _unfold, method=True, public=False, view=True,  # Tensor.unfold; F.unfold is im2col
               input=lambda grad, input_shape, dimension, size, step:
               _unfold_backward(grad, input_shape, dimension, size, step))


@tensor_method
def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; fewer ``dims`` than dims count from the right.

    Example::
        >>> import retrograd as rg
        >>> rg.tile(rg.tensor([1., 2.]), (2,))
        tensor([1., 2., 1., 2.])
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


@tensor_method
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) of ``input`` repeated ``repeats`` times, in place of the original.

    ``repeat_interleave(repeats)`` alone repeats each index ``i`` ``repeats[i]`` times.

    Example::
        >>> import retrograd as rg
        >>> rg.repeat_interleave(rg.tensor([1., 2.]), 2)
        tensor([1., 1., 2., 2.])
        >>> rg.repeat_interleave(rg.tensor([2, 1]))
        tensor([0, 0, 1])
    """
    if repeats is None:  # repeat_interleave(repeats): the indices, repeated
        counts = input._host()
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        return _creation.tensor(np.repeat(np.arange(counts.size), counts), device=input.device)
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = _wrap_dim(dim, input.dim())
    n = input.shape[d] if input.dim() else 1
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if input.dim() == 0:
            input, d = input.reshape(1), 0
        shape = tuple(input.shape)
        wide = input.unsqueeze(d + 1).expand(shape[:d + 1] + (repeats,) + shape[d + 1:])
        # a copy, then a view, as PyTorch's
        return wide.contiguous().view(shape[:d] + (shape[d] * repeats,) + shape[d + 1:])
    counts = repeats._host()
    if counts.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if counts.size == 1:
        counts = np.full(n, counts.reshape(-1)[0])
    if counts.size != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{counts.size} and input.size({d}) = {n}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = _creation.tensor(np.repeat(np.arange(n), counts), device=input.device)
    return (input.reshape(1) if input.dim() == 0 else input).index_select(d, index)


def _triangle_indices(which, row, col, offset, dtype, device):
    rows, cols = which(row, offset, col)
    return _creation.tensor(np.stack([rows, cols]).reshape(2, -1), dtype=dtype or _dtype.int64, device=device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) indices of the upper triangle of a ``row`` x ``col`` matrix, from diagonal ``offset`` up.

    Example::
        >>> import retrograd as rg
        >>> rg.triu_indices(2, 3)
        tensor([[0, 0, 0, 1, 1],
                [0, 1, 2, 1, 2]])
    """
    return _triangle_indices(np.triu_indices, row, col, offset, dtype, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) indices of the lower triangle of a ``row`` x ``col`` matrix, from diagonal ``offset`` down.

    Example::
        >>> import retrograd as rg
        >>> rg.tril_indices(2, 2)
        tensor([[0, 1, 1],
                [0, 0, 1]])
    """
    return _triangle_indices(np.tril_indices, row, col, offset, dtype, device)


# -- resize_ and set_: a new geometry, or a new storage -------------------------------------------------------
# Note [resize_ and set_]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Both change a tensor's array in place, as PyTorch's, and neither is differentiable. ``resize_`` gives the tensor
# a new shape, laid out in a memory format (row-major by default), from its storage offset: within its storage
# where that is large enough (shrinking keeps the first elements), else in a new storage that starts with a copy
# of the old one (the new elements are zeros); unlike PyTorch's, where the storage itself grows, the tensor's
# other views then keep the old storage. The same shape, with no format asked for, changes nothing. ``set_``
# makes the tensor share ``source``'s array (storage, offset, shape and strides), or a geometry of its storage,
# or (no source) a new empty storage. Each bumps the tensor's version counter where its shape changes
# (``resize_``) or always (``set_``). With grad mode on, ``resize_`` refuses a tensor that requires grad (also a
# view of one), and ``set_`` raises an in-place op's errors, then, where anything requires grad, gives the tensor
# PyTorch's NotImplemented node, which raises "derivative for set_ is not implemented" if a backward pass
# reaches it (a view, whose history PyTorch rebases through its base, is refused at the call); in inference
# mode neither checks anything. Both drop a leaf's gradient accumulator, as PyTorch's do: the graphs recorded
# before lead to the old one, which the leaf no longer reaches (``grad`` of them with respect to the leaf finds it
# unused; its GradientEdge still works).
def _changed_array(self, data, bump):
    """Gives ``self`` the array ``data``, bumping its version first where ``bump`` (an inference tensor's raises
    PyTorch's error outside inference mode). See Note [resize_ and set_]."""
    self._grad_accumulator = None
    if bump:
        self._version_counter.bump()
        if self._base is not None:
            self._view_version = self._version_counter.version  # no history to regenerate: nothing requires grad
    self._data = data
    return self


def _resized(data, xp, shape, strides, offset):
    """An array of ``shape`` and ``strides`` at ``offset`` of ``data``'s storage, a larger copy of it where needed."""
    itemsize = data.itemsize
    numel = 1
    for n in shape:
        numel *= n
    needed = offset + (1 + sum((n - 1) * st for n, st in zip(shape, strides)) if numel else 0)
    root = storage_array(data)
    if xp is np and needed * itemsize <= root.nbytes:
        out = strided_view(data, shape, strides, offset)
        if not out.flags.writeable and root.flags.writeable:  # a resized expanded tensor has elements of its own
            out.setflags(write=True)
        return out
    storage = xp.zeros(max(needed, root.size), dtype=data.dtype)
    storage[:root.size] = root.ravel(order="K")
    byte_strides = tuple(st * itemsize for st in strides)
    if xp is np:
        return np.ndarray(shape, data.dtype, storage, offset * itemsize, byte_strides)
    return xp.lib.stride_tricks.as_strided(storage[offset:], shape, byte_strides)


@tensor_method
def resize_(self, *sizes, memory_format=None):
    """Gives this tensor the shape ``sizes`` in place, over its own storage (grown where needed); returns ``self``.

    Its strides are those of ``memory_format`` (row-major by default); the same shape, with no format asked for,
    leaves the tensor as it is. Shrinking keeps the first elements in storage order; growing leaves the new ones
    uninitialised (zeros here). See Note [resize_ and set_].

    Raises:
        RuntimeError: with grad mode on, a tensor that requires grad; a negative size; ``preserve_format``, or a
            channels_last format for a shape of another rank (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> x = rg.arange(6.)
        >>> x.resize_(2, 2), x._version
        (tensor([[0., 1.],
                [2., 3.]]), 1)
    """
    shape = shape_arg(sizes, "resize_")
    if self.requires_grad and not grad_mode.inference_now():
        raise RuntimeError("cannot resize variables that require grad")
    if any(n < 0 for n in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    data = self._data
    if memory_format is None:
        if shape == data.shape:
            self._grad_accumulator = None
            return self
        fmt = _creation.contiguous_format
    else:
        fmt = _creation.check_memory_format(memory_format, "resize_")
    if fmt is _creation.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")  # PyTorch's words, with no space
    strides = _creation.format_strides(shape, fmt)
    new = _resized(data, self._device.backend.xp, shape, strides, self.storage_offset())
    return _changed_array(self, new, shape != data.shape)


@tensor_method
def resize_as_(self, the_template, *, memory_format=None):
    """:meth:`resize_` to the shape of ``the_template``; returns ``self``.

    Example::
        >>> import retrograd as rg
        >>> rg.zeros(1).resize_as_(rg.zeros(2, 3)).shape
        retrograd.Size([2, 3])
    """
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    return resize_(self, the_template._data.shape, memory_format=memory_format)


@tensor_method
def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Makes this tensor share ``source``'s storage and geometry (or, with ``storage_offset``, ``size`` and
    ``stride``, that geometry of its storage); without a source, a new empty storage. Returns ``self``.

    Only tensor sources are taken (retrograd has no Storage objects). See Note [resize_ and set_].

    Raises:
        RuntimeError: a source of another dtype; with grad mode on, an in-place op's errors (a leaf that requires
            grad, a view of one), and a view where anything requires grad. Elsewhere, where anything requires grad,
            the tensor's new node raises PyTorch's "derivative for set_ is not implemented" in backward.

    Example::
        >>> import retrograd as rg
        >>> x, s = rg.zeros(2), rg.arange(6.)
        >>> x.set_(s[1:]).storage_offset(), x.shape, x._version
        (1, retrograd.Size([5]), 1)
    """
    if source is not None and not isinstance(source, Tensor):
        raise TypeError(f"set_() received an invalid combination of arguments - got ({type(source).__name__}), but "
                        "expected one of:")
    unimplemented = grad_mode.recording() and (self.requires_grad or (source is not None and source.requires_grad))
    if unimplemented:
        if self.requires_grad:
            check_inplace(self)
        if self._base is not None:  # the view's history would need rebasing through its base: refused at the call
            raise RuntimeError("derivative for set_ is not implemented")
        edges = (gradient_edge(self) if self.requires_grad else None,
                 gradient_edge(source) if source is not None and source.requires_grad else None)
    if source is None:
        out = _changed_array(self, self._device.backend.xp.empty(0, dtype=self._data.dtype), True)
        return _unimplemented_history(out, edges) if unimplemented else out
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(f"Could not set tensor of type {_dtype.type_meta_name(source.dtype)} to a tensor of type "
                           f"{_dtype.type_meta_name(self.dtype)}")
    if source._device is not self._device:
        raise RuntimeError(f"Attempted to set the storage of a tensor on device \"{self._device}\" to a storage on "
                           f"different device \"{source._device}\".  This is no longer allowed; the devices must "
                           "match.")
    data = source._data
    if storage_offset is not None or size is not None:
        if storage_offset is None or size is None:
            raise TypeError("set_() received an invalid combination of arguments - got (Tensor), but expected one "
                            "of:")
        shape = ints((size,), "set_", "size")
        strides = (ints((stride,), "set_", "stride") if stride is not None else
                   self.stride() if shape == self._data.shape else _creation.format_strides(shape,
                                                                                           _creation.contiguous_format))
        data = strided_view(data, shape, strides, storage_offset)
    out = _changed_array(self, data, True)
    return _unimplemented_history(out, edges) if unimplemented else out


def _unimplemented_history(self, edges):
    """Gives ``self``, just written in place by ``set_``, a node that raises PyTorch's "derivative for set_ is not
    implemented" if a backward pass reaches it (PyTorch's NotImplemented node; Note [resize_ and set_])."""
    old_fn, old_nr = self._node, self._output_nr
    self._node = NotImplementedNode("set_", edges, (input_metadata(self._data, self._device),))
    self._output_nr, self._requires_grad = 0, True
    if self._retains_grad:
        move_retains_grad(self, old_fn, old_nr)
    return self


# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import LINEAR, defjvp  # noqa: E402

defjvp(LINEAR, "as_strided_scatter")
defjvp(LINEAR, "alias", "view", "reshape", "transpose", "permute", "t", "unsqueeze", "squeeze", "expand", "repeat",
       "diagonal_backward", "diagonal", "diagonal_copy", "flip", "roll", "tril", "triu", "rot90", "diag_embed",
       "unfold_backward",
       "unfold")

