"""``torch.ops.aten``: PyTorch's names of the ops, for code that is handed an op call and names the op it wants.

A selective checkpointing policy (``retrograd.utils.checkpoint.create_selective_checkpoint_contexts``)
receives the op of each call and compares it with ``torch.ops.aten.mm.default`` and the like; here
``retrograd.ops.aten.mm.default`` is that name. See Note [PyTorch's op names].
"""
from __future__ import annotations

import os

__all__ = ["OpOverload", "OpOverloadPacket", "aten", "overload_of"]


# Note [PyTorch's op names]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch names an op below autograd ``aten.<packet>.<overload>``: the packet is the op's name
# (``mm``, ``mul_`` for the in-place form), the overload one of its schemas (``mul.Tensor``,
# ``var_mean.correction``). retrograd has one implementation per op name and no schemas, so the
# overloads of one packet name the same op: they compare equal (and hash alike), and the
# overload a call is given (``overload_of``) is PyTorch's usual one where ``_RENAMED`` knows it,
# ``default`` otherwise, for its repr only. Most ops have PyTorch's name; ``_RENAMED`` maps
# those that do not, and a ``matmul`` call is named by the ops PyTorch decomposes it into
# (``mm``, ``bmm``, ``mv``, ``dot``), as PyTorch's policies name those. The names that can be
# written are PyTorch's, with their overloads (``_aten_ops.txt``, from PyTorch's schemas by
# scripts/write_aten_names.py): one that is not raises PyTorch's AttributeError, so a typo in a
# policy does not go unnoticed, while an op retrograd lacks may appear in a policy written for
# PyTorch (it matches no call). A call of a retrograd op that PyTorch does not have is named by
# retrograd's name (``overload_of``), which cannot be written.
_NAMES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_aten_ops.txt")
_known = None  # PyTorch's op names: {packet: (overload, ...)}, read on first use


def _pytorch_names() -> dict:
    global _known
    if _known is None:
        with open(_NAMES_FILE, encoding="utf-8") as f:
            _known = {parts[0]: tuple(parts[1:]) for parts in (line.split() for line in f)
                      if parts and not parts[0].startswith("#")}
    return _known
class OpOverload:
    """One overload of an op, as ``torch._ops.OpOverload``: ``aten.mm.default``. See Note [PyTorch's op names]."""

    __slots__ = ("overloadpacket", "_overloadname")

    def __init__(self, packet, overload):
        self.overloadpacket = packet
        self._overloadname = overload

    @property
    def __name__(self):  # noqa: PLW3201 - PyTorch's attribute
        return f"{self.overloadpacket.__name__}.{self._overloadname}"

    def name(self) -> str:
        """The qualified name, ``aten::mm`` (``aten::mul.Tensor`` for an overload other than the default)."""
        base = f"aten::{self.overloadpacket.__name__}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other.overloadpacket is self.overloadpacket

    def __hash__(self):
        return hash(self.overloadpacket)

    def __str__(self):
        return f"aten.{self.__name__}"

    def __repr__(self):
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', overload='{self._overloadname}')>"


class OpOverloadPacket:
    """An op of every overload, as ``torch._ops.OpOverloadPacket``: ``aten.mm``; ``aten.mm.default`` is an overload."""

    def __init__(self, name):
        self.__name__ = name
        self._overloads = {}

    def __getattr__(self, overload):
        if overload.startswith("_"):
            raise AttributeError(overload)
        found = self._overloads.get(overload)
        if found is None:
            known = _pytorch_names().get(self.__name__)
            if known is not None and overload not in known:
                raise AttributeError(f"The underlying op of 'aten.{self.__name__}' has no overload name '{overload}'")
            found = self._overload(overload)
        return found

    def _overload(self, overload):
        """The overload ``overload``, made on first use without checking its name (``overload_of``)."""
        found = self._overloads.get(overload)
        return found if found is not None else self._overloads.setdefault(overload, OpOverload(self, overload))

    def overloads(self) -> list:
        """PyTorch's names of the op's overloads (for an op PyTorch lacks, those its calls were given)."""
        known = _pytorch_names().get(self.__name__)
        return list(known) if known is not None else list(self._overloads)

    def __str__(self):
        return f"aten.{self.__name__}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"


class _OpNamespace:
    """``torch.ops.aten``: a packet per attribute."""

    def __init__(self, name):
        self.name = name
        self._packets = {}

    def __getattr__(self, name):
        if name.startswith("__") or name == "_packets" or name not in _pytorch_names():
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")
        return self._packet(name)

    def _packet(self, name):
        """The packet ``name``, made on first use without checking its name (``overload_of``)."""
        found = self._packets.get(name)
        return found if found is not None else self._packets.setdefault(name, OpOverloadPacket(name))

    def __repr__(self):
        return f"'_OpNamespace' '{self.name}'"


aten = _OpNamespace("aten")

# retrograd's op name -> PyTorch's packet and usual overload, where either is not (name, "default").
_RENAMED = {
    "add": ("add", "Tensor"), "sub": ("sub", "Tensor"), "mul": ("mul", "Tensor"), "div": ("div", "Tensor"),
    "add_scalar": ("add", "Tensor"), "mul_scalar": ("mul", "Tensor"), "div_rounding": ("div", "Tensor_mode"),
    "var": ("var", "correction"), "std": ("std", "correction"), "var_mean": ("var_mean", "correction"),
    "std_mean": ("std_mean", "correction"), "softmax": ("softmax", "int"), "log_softmax": ("log_softmax", "int"),
    "transpose": ("transpose", "int"), "unbind": ("unbind", "int"), "split": ("split", "Tensor"),
    "select_index": ("select", "int"), "slice_index": ("slice", "Tensor"), "index": ("index", "Tensor"),
    "max_all": ("max", "default"), "max_dim": ("max", "dim"), "min_all": ("min", "default"),
    "min_dim": ("min", "dim"), "median_all": ("median", "default"), "median_dim": ("median", "dim"),
    "copy": ("copy_", "default"), "fill": ("fill_", "Scalar"),
    "zero": ("zero_", "default"), "convolution_transpose": ("convolution", "default"),
    "empty": ("empty", "memory_format"), "dropout_bernoulli": ("bernoulli", "float"),
}
# Ops whose usual overload depends on whether an operand is a tensor: op -> (its position, then the
# overload for a tensor and for a number).
_BY_OPERAND = {name: (1, "Tensor", "Scalar") for name in ("eq", "ne", "lt", "le", "gt", "ge")}
_BY_OPERAND.update({"pow": (1, "Tensor_Tensor", "Tensor_Scalar"), "masked_fill": (2, "Tensor", "Scalar"),
                    "fill": (1, "Tensor", "Scalar")})
# Factories whose overload depends on which arguments a call gives (Note [Factories as op calls]):
# op -> a function of the call's arguments (in the factory's parameter order) giving the overload.
# ``arange(0, n, 1)`` is named ``start``, where PyTorch's binding, which sees the step given, says
# ``start_step``: the overloads of one packet compare equal, so only the repr differs.
_BY_ARGS = {
    "arange": lambda a: "default" if a[1] is None else "start" if a[2] == 1 else "start_step",
    "eye": lambda a: "default" if a[1] is None else "m",
    "rand": lambda a: "default" if a[1] is None else "generator",
    "randn": lambda a: "default" if a[1] is None else "generator",
    "randperm": lambda a: "default" if a[1] is None else "generator",
    "randint": lambda a: ("default" if a[2] is None else "low") if a[3] is None else (
        "generator" if a[2] is None else "low_generator"),
}
_by_call = {}  # (op name, in place, overload or None) -> OpOverload


def _matmul_packet(args):
    """The op PyTorch's matmul decomposes into for these operands' numbers of dims."""
    a, b = (getattr(t, "ndim", 0) for t in args[:2])
    if a == 1 and b == 1:
        return "dot"
    if b == 1:
        return "mv"
    if b == 2:
        return "mm"
    return "bmm"


def overload_of(name, args, inplace) -> OpOverload:
    """PyTorch's name of a call of retrograd's op ``name`` on ``args`` (Note [PyTorch's op names])."""
    if name == "matmul":
        name = _matmul_packet(args)
    chosen = None
    by_operand = _BY_OPERAND.get(name)
    if by_operand is not None and by_operand[0] < len(args):
        chosen = by_operand[1] if hasattr(args[by_operand[0]], "shape") else by_operand[2]
    elif name in _BY_ARGS:
        chosen = _BY_ARGS[name](args)
    key = (name, inplace, chosen)
    found = _by_call.get(key)
    if found is None:
        packet, overload = _RENAMED.get(name, (name, "default"))
        if inplace and not packet.endswith("_"):
            packet += "_"
        found = _by_call[key] = aten._packet(packet)._overload(chosen or overload)
    return found
