"""The pytrees of the function transforms: nested tuples, lists and dicts whose leaves are anything else."""
from __future__ import annotations

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "LEAF"]


class TreeSpec:
    """The structure of a pytree: its container type, keys (for a dict) and children's specs; a leaf's is LEAF."""

    __slots__ = ("kind", "keys", "children")

    def __init__(self, kind, keys, children):
        self.kind = kind
        self.keys = keys
        self.children = children

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind is other.kind and self.keys == other.keys
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.keys, len(self.children)))

    def __repr__(self):
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        return f"TreeSpec({self.kind.__name__}, {list(self.keys) if self.keys is not None else None}, [{inner}])"


LEAF = TreeSpec(None, None, ())


def tree_flatten(tree):
    """The leaves of ``tree`` in order, and its spec."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec(dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if isinstance(tree, (tuple, list)) and type(tree) in (tuple, list) or _is_namedtuple(tree):
        kind = type(tree)
        return TreeSpec(kind, None, tuple(_flatten(c, leaves) for c in tree))
    leaves.append(tree)
    return LEAF


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def tree_unflatten(leaves, spec):
    """The pytree of ``spec`` with ``leaves`` in order."""
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec.kind is None:
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.keys, children, strict=True))
    if spec.kind in (tuple, list):
        return spec.kind(children)
    return spec.kind(*children)  # a namedtuple


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)
