"""make_dot: draws the autograd graph behind a tensor with graphviz, in torchviz's style.

Boxes are graph nodes (``MulBackward0``...), light blue boxes are leaf tensors (named when
``params`` names them) with their shapes, orange boxes are saved tensors with their shapes
(``show_saved``), and the green box is the tensor the graph was drawn from. Edges run from
inputs towards the output, the direction of the forward pass.

With a profile (``profile=prof``, ``color_by="time"``) each node's fill is a colour scale of its
backward time in the profile; with ``color_by="memory"`` of the bytes it holds (its saved tensors
and, for a leaf's ``AccumulateGrad``, the leaf's ``.grad``: what ``memory_summary`` counts); the
value is in the node's label and the scale in the graph's. With ``explain=report`` (an
``autograd.explain`` result) the cut it found is drawn in red: the op that cut the path, with the
cause and source line as its label, between the leaf (named) and the node where the path enters
the graph; a cause without a cut op (the leaf does not require grad, the graph was freed...) is a
red note on the leaf.

Needs the ``graphviz`` Python package (``pip install 'retrograd[viz]'``) to build the graph and
the graphviz ``dot`` program to render it to a picture.
"""
from __future__ import annotations

import os
import textwrap

from .autograd import debug as _debug
from .autograd.accumulate_grad import AccumulateGrad
from .autograd.saved_variable import SavedTensor
from .profiler._events import _format_memory, _format_time, is_node_event
from ._tensor import Tensor

__all__ = ["make_dot"]

_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


# The fill scale of color_by, light (least) to dark (most): ColorBrewer's 9-class Purples, apart from the
# colours the graph already uses (light blue leaves, orange saved tensors, green outputs, red cuts).
SCALE = ("#fcfbfd", "#efedf5", "#dadaeb", "#bcbddc", "#9e9ac8", "#807dba", "#6a51a3", "#54278f", "#3f007d")
_DARK = 6  # from this step of SCALE on, labels are white
CUT_COLOR = "red"
# The causes of explain that name an op cutting the path from the input (drawn as a red box on the path).
_PATH_CUTS = (_debug.NO_GRAD, _debug.INFERENCE_MODE, _debug.DETACHED, _debug.NEW_TENSOR, _debug.NON_DIFFERENTIABLE)


def _node_times(profile) -> dict:
    """{sequence number: [total µs, count]} of the backward nodes' own ranges in ``profile`` (a ``profile``
    or its events)."""
    events = profile.events() if hasattr(profile, "events") else profile
    times = {}
    for e in events:
        if is_node_event(e) and e.sequence_nr >= 0:
            row = times.setdefault(e.sequence_nr, [0.0, 0])
            row[0] += e.cpu_time_total
            row[1] += 1
    return times


def _fill(value, largest) -> dict:
    """The node attributes of ``value`` on the scale from 0 to ``largest``."""
    step = round(value / largest * (len(SCALE) - 1)) if largest > 0 else 0
    attrs = {"fillcolor": SCALE[step]}
    if step >= _DARK:
        attrs["fontcolor"] = "white"
    return attrs


def _short_where(where) -> str:
    return os.path.basename(where) if where else "unknown line"


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
    data = value.array
    return _size(data.shape) if data is not None else _size(getattr(value, "shape", ()) or ())


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50, profile=None, color_by=None,
             explain=None):
    """Returns a ``graphviz.Digraph`` of the autograd graph that produced ``var``.

    Args:
        var (Tensor or sequence of Tensor): the output(s) to draw the graph of.
        params (dict, optional): ``{name: tensor}`` (for example ``dict(model.named_parameters())``)
            to label the leaves.
        show_attrs (bool): list the non-tensor values each node saved (dims, shapes, scalars).
        show_saved (bool): draw each tensor a node saved for backward, with its shape.
        max_attr_chars (int): truncate attribute values to this many characters.
        profile (optional): a finished ``retrograd.profiler.profile`` (or its ``events()``) whose
            backward nodes colour the graph's: each node's own ranges, matched by sequence number,
            summed (``AccumulateGrad`` nodes have none and stay uncoloured).
        color_by (str, optional): ``"time"`` (the default with ``profile``): fill each node by its
            backward time in ``profile``; ``"memory"``: by the bytes it holds now (saved tensors, and a
            leaf's ``.grad`` for its ``AccumulateGrad``), as ``autograd.graph.memory_summary`` counts them.
        explain (Explanation, optional): what ``autograd.explain(var, leaf)`` found: the cut is drawn in red.

    Returns:
        graphviz.Digraph: render it with ``.render(filename, format="png")``; ``.source`` is its DOT text.

    Raises:
        ImportError: the ``graphviz`` package is missing (install ``retrograd[viz]``).
        ValueError: ``color_by`` is not ``"time"`` or ``"memory"``, or is ``"time"`` without a profile.

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
    if color_by is None and profile is not None:
        color_by = "time"
    if color_by not in (None, "time", "memory"):
        raise ValueError(f"color_by must be 'time' or 'memory', got {color_by!r}")
    if color_by == "time" and profile is None:
        raise ValueError("color_by='time' needs a profile: make_dot(..., profile=prof)")
    param_names = {id(t): name for name, t in (params or {}).items()}
    dot = Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    seen = set()
    outputs = (var,) if isinstance(var, Tensor) else tuple(var)
    nodes = _graph_nodes(outputs)
    scaled = {}  # node -> its value on the colour scale
    texts = {}  # node -> the value's line in its label
    if color_by == "time":
        times = _node_times(profile)
        for fn in nodes:
            row = times.get(fn.sequence_nr)
            if row is not None:
                scaled[fn] = row[0]
                texts[fn] = _format_time(row[0]) + (f" ({row[1]} runs)" if row[1] > 1 else "")
    elif color_by == "memory":
        for fn in nodes:
            saved, grad = _debug.node_bytes(fn)
            scaled[fn] = saved + grad
            texts[fn] = _format_memory(saved + grad) + (" (.grad)" if grad else "")
    largest = max(scaled.values(), default=0)
    marked = explain.node if explain is not None and explain.node in nodes else None

    def leaf_label(t, name=None):
        name = param_names.get(id(t), "") if name is None else name
        return f"{name}\n {_size(t.shape)}"

    def fn_label(fn):
        name = fn.name().rpartition("::")[2]  # a hand-written node's name without its C++ namespace
        if fn in texts:
            name += "\n" + texts[fn]
        if fn is marked and explain.cause == _debug.OVERWRITTEN:
            name += f"\ncut: {explain.cause}\n{_short_where(explain.where)}"
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

    def fn_attrs(fn):
        if fn is marked and explain.cause == _debug.OVERWRITTEN:
            return {"fillcolor": CUT_COLOR, "fontcolor": "white", "color": CUT_COLOR}
        return _fill(scaled[fn], largest) if fn in scaled else {}

    def add_fn(fn):  # one node and its edges; the walk is add_output's
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
                seen.add(variable)
                dot.node(str(id(variable)), leaf_label(variable), fillcolor="lightblue")
                dot.edge(str(id(variable)), str(id(fn)))
        dot.node(str(id(fn)), fn_label(fn), **fn_attrs(fn))
        for next_fn, _ in fn.next_functions:
            if next_fn is not None:
                dot.edge(str(id(next_fn)), str(id(fn)))

    def add_output(t):
        if t in seen:
            return
        seen.add(t)
        dot.node(str(id(t)), leaf_label(t, ""), fillcolor="darkolivegreen1")
        if t.grad_fn is None:
            return
        stack = [t.grad_fn]  # depth first without recursion: graphs may be a million nodes deep
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            add_fn(fn)
            stack.extend(next_fn for next_fn, _ in reversed(fn.next_functions) if next_fn is not None)
        dot.edge(str(id(t.grad_fn)), str(id(t)))

    for t in outputs:
        add_output(t)
    if color_by is not None:
        what = ("backward time of each node in the profile (its own ranges, summed)" if color_by == "time" else
                "bytes each node holds (saved tensors; a leaf's .grad at its AccumulateGrad)")
        top = (_format_time(largest) if color_by == "time" else _format_memory(largest)) if scaled else "none"
        dot.attr(label=f"fill: {what}, from white (0) to dark purple ({top})", labelloc="b")
    if explain is not None:
        _draw_explanation(dot, explain, outputs, seen, param_names, leaf_label)
    _resize(dot)
    return dot


def _graph_nodes(outputs) -> set:
    """Every node of the graphs behind ``outputs``."""
    nodes = set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if fn in nodes:
            continue
        nodes.add(fn)
        stack.extend(next_fn for next_fn, _ in fn.next_functions if next_fn is not None)
    return nodes


def _draw_explanation(dot, report, outputs, seen, param_names, leaf_label):
    """Draws ``report`` (an Explanation) on ``dot``: the leaf, named, and in red the op that cut its path (into
    the node where the path enters the graph, else into the output) or a note saying why it has no gradient."""
    leaf = report.input
    if leaf is None:
        return
    leaf_id = str(id(leaf))
    name = param_names.get(id(leaf)) or "input"
    if leaf not in seen:  # not in the graph (its path was cut), or not a leaf of it
        dot.node(leaf_id, leaf_label(leaf, name), fillcolor="lightblue", color=CUT_COLOR)
        if leaf.grad_fn is not None and leaf.grad_fn in seen:
            dot.edge(str(id(leaf.grad_fn)), leaf_id, style="dashed")
    red = dict(color=CUT_COLOR, fontcolor=CUT_COLOR, style="dashed")
    if report.cause in _PATH_CUTS and report.op is not None and leaf.requires_grad:
        cut_id = f"cut_{id(report)}"
        dot.node(cut_id, f"{report.op}\ncut: {report.cause}\n{_short_where(report.where)}", fillcolor=CUT_COLOR,
                 fontcolor="white", color=CUT_COLOR)
        dot.edge(leaf_id, cut_id, **red)
        entry = report.node if report.node in seen else outputs[0]  # else into the output's box
        dot.edge(cut_id, str(id(entry)), **red)
    elif report.cause != _debug.OVERWRITTEN or report.node not in seen:
        note_id = f"why_{id(report)}"
        text = "\n".join(textwrap.wrap(f"{report.cause}: {report.message}", 60))
        dot.node(note_id, text, shape="note", fillcolor="white", color=CUT_COLOR, fontcolor=CUT_COLOR)
        dot.edge(note_id, leaf_id, **red)


def _resize(dot, size_per_element=0.15, min_size=12):
    """Grows the page with the number of statements so big graphs stay legible (as torchviz)."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
