"""make_dot: draws the autograd graph behind a tensor with graphviz, in torchviz's style.

Boxes are graph nodes (``MulBackward0``...), light blue boxes are leaf tensors (named when
``params`` names them) with their shapes, orange boxes are saved tensors with their shapes
(``show_saved``), and the green box is the tensor the graph was drawn from. Edges run from
inputs towards the output, the direction of the forward pass.

Needs the ``graphviz`` Python package (``pip install 'retrograd[viz]'``) to build the graph and
the graphviz ``dot`` program to render it to a picture.
"""
from __future__ import annotations

from .autograd.accumulate_grad import AccumulateGrad
from .autograd.saved_variable import SavedTensor
from ._tensor import Tensor

__all__ = ["make_dot"]

_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


def _size(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _saved_items(fn):
    """``(name, value)`` of what a node saved for backward, SavedTensors included."""
    saved_values = getattr(fn, "saved_values", None)  # a built-in op's node
    if saved_values is not None:
        yield from saved_values().items()
    variables = getattr(fn, "_saved_variables", None)  # a custom Function's ctx.save_for_backward
    if isinstance(variables, tuple):
        for i, value in enumerate(variables):
            yield f"saved_tensors[{i}]", value


def _saved_shape(value) -> str:
    if value.released:
        return "(freed)"
    data = value.data if value.data is not None else None
    return _size(data.shape) if data is not None else _size(getattr(value, "shape", ()) or ())


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """Returns a ``graphviz.Digraph`` of the autograd graph that produced ``var``.

    Args:
        var (Tensor or sequence of Tensor): the output(s) to draw the graph of.
        params (dict, optional): ``{name: tensor}`` (for example ``dict(model.named_parameters())``)
            to label the leaves.
        show_attrs (bool): list the non-tensor values each node saved (dims, shapes, scalars).
        show_saved (bool): draw each tensor a node saved for backward, with its shape.
        max_attr_chars (int): truncate attribute values to this many characters.

    Returns:
        graphviz.Digraph: render it with ``.render(filename, format="png")``.

    Raises:
        ImportError: the ``graphviz`` package is missing (install ``retrograd[viz]``).

    Example::
        >>> import retrograd as rg
        >>> w = rg.randn(3, requires_grad=True)
        >>> dot = rg.viz.make_dot((w * 2).sum(), params={"w": w})  # doctest: +SKIP
        >>> dot.render("graph", format="png")  # doctest: +SKIP
    """
    try:
        from graphviz import Digraph
    except ImportError as e:
        raise ImportError("retrograd.viz.make_dot needs the graphviz package: pip install 'retrograd[viz]' "
                          "(and the graphviz 'dot' program, e.g. apt-get install graphviz, to render)") from e
    param_names = {id(t): name for name, t in (params or {}).items()}
    dot = Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    seen = set()

    def leaf_label(t, name=None):
        name = param_names.get(id(t), "") if name is None else name
        return f"{name}\n {_size(t.shape)}"

    def fn_label(fn):
        name = fn.name().rpartition("::")[2]  # a hand-written node's name without its C++ namespace
        if not show_attrs:
            return name
        lines = []
        for attr, value in _saved_items(fn):
            if isinstance(value, SavedTensor) or value is None or (
                    isinstance(value, list) and any(isinstance(v, SavedTensor) for v in value)):
                continue
            text = str(value)
            if len(text) > max_attr_chars:
                text = text[:max_attr_chars - 3] + "..."
            lines.append(f"{attr}: {text}")
        return name + ("\n" + "\n".join(lines) if lines else "")

    def add_fn(fn):
        if fn in seen:
            return
        seen.add(fn)
        if show_saved:
            for attr, value in _saved_items(fn):
                values = value if isinstance(value, list) else [value]
                for i, v in enumerate(values):
                    if isinstance(v, SavedTensor):
                        key = str(id(v))
                        label = attr if len(values) == 1 else f"{attr}[{i}]"
                        dot.node(key, f"{label}\n{_saved_shape(v)}", fillcolor="orange")
                        dot.edge(key, str(id(fn)), dir="none")
        if isinstance(fn, AccumulateGrad):
            variable = fn.variable
            if variable is not None:
                dot.node(str(id(variable)), leaf_label(variable), fillcolor="lightblue")
                dot.edge(str(id(variable)), str(id(fn)))
        dot.node(str(id(fn)), fn_label(fn))
        for next_fn, _ in fn.next_functions:
            if next_fn is not None:
                dot.edge(str(id(next_fn)), str(id(fn)))
                add_fn(next_fn)

    def add_output(t):
        if t in seen:
            return
        seen.add(t)
        dot.node(str(id(t)), leaf_label(t, ""), fillcolor="darkolivegreen1")
        if t.grad_fn is not None:
            add_fn(t.grad_fn)
            dot.edge(str(id(t.grad_fn)), str(id(t)))

    outputs = (var,) if isinstance(var, Tensor) else tuple(var)
    for t in outputs:
        add_output(t)
    _resize(dot)
    return dot


def _resize(dot, size_per_element=0.15, min_size=12):
    """Grows the page with the number of statements so big graphs stay legible (as torchviz)."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
