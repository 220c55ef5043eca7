"""retrograd.viz.make_dot: the graph's DOT text, coloured by a profile's times or by the bytes each node
holds, and the cut that ``autograd.explain`` found drawn in red.

The DOT text is parsed here (no graphviz program needed); it is rendered only where ``dot`` is installed.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

import retrograd as rg
from retrograd.autograd import debug
from retrograd.profiler import profile
from retrograd.profiler._events import _format_time

pytest.importorskip("graphviz")
from retrograd import viz  # noqa: E402 - needs graphviz only to be called, but its tests need it

THIS = os.path.basename(__file__)
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")'  # a quoted string, newlines and \" inside
                    r'|(?P<id>[A-Za-z_][A-Za-z0-9_]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))'  # a name or a numeral
                    r'|(?P<op>->|[\[\]{}=;,]))', re.S)


def _tokens(text):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None, f"not DOT at {text[pos:pos + 40]!r}"
        pos = m.end()
        if m.group("str") is not None:
            out.append(("id", m.group("str")[1:-1].replace('\\"', '"')))
        elif m.group("id") is not None:
            out.append(("id", m.group("id")))
        else:
            out.append(("op", m.group("op")))
    return out


def parse_dot(text):
    """The nodes ({id: attrs}), edges ([(tail, head, attrs)]) and graph attributes of a DOT digraph; fails on
    anything that is not DOT's statement grammar (as graphviz's package writes it)."""
    toks = _tokens(text)
    assert toks[:2] == [("id", "digraph"), ("op", "{")] and toks[-1] == ("op", "}"), "not a digraph"
    toks, i = toks[2:-1], 0
    nodes, edges, graph = {}, [], {}

    def attrs(i):
        found = {}
        if i < len(toks) and toks[i] == ("op", "["):
            i += 1
            while toks[i] != ("op", "]"):
                (kind_k, key), eq, (kind_v, value) = toks[i], toks[i + 1], toks[i + 2]
                assert kind_k == kind_v == "id" and eq == ("op", "="), toks[i:i + 3]
                found[key] = value
                i += 3
                if toks[i] == ("op", ","):
                    i += 1
            i += 1
        return found, i

    while i < len(toks):
        kind, first = toks[i]
        assert kind == "id", toks[i]
        if first in ("graph", "node", "edge") and toks[i + 1] == ("op", "["):
            a, i = attrs(i + 1)
            if first == "graph":
                graph.update(a)
        elif toks[i + 1] == ("op", "="):
            graph[first] = toks[i + 2][1]
            i += 3
        elif toks[i + 1] == ("op", "->"):
            kind, head = toks[i + 2]
            assert kind == "id", toks[i + 2]
            a, i = attrs(i + 3)
            edges.append((first, head, a))
        else:
            a, i = attrs(i + 1)
            nodes.setdefault(first, {}).update(a)
        if i < len(toks) and toks[i] == ("op", ";"):
            i += 1
    return nodes, edges, graph


def _named(nodes, first_line):
    """The ids of the nodes whose label starts with the line ``first_line``."""
    return [k for k, a in nodes.items() if a.get("label", k).split("\n")[0] == first_line]


def _line(marker):
    with open(__file__) as f:
        return next(f"{THIS}:{n}" for n, text in enumerate(f, 1) if text.rstrip().endswith(marker))


def test_time_colouring_fills_each_node_by_its_backward_time_in_the_profile():
    x = rg.ones(4, requires_grad=True)
    w = rg.ones(4, requires_grad=True)
    with profile() as prof:
        loss = (x * w).exp().sin().sum()
        loss.backward(retain_graph=True)
        loss.backward()
    nodes, edges, graph = parse_dot(viz.make_dot(loss, params={"x": x, "w": w}, profile=prof).source)
    events = prof.events()
    times = {}
    for name in ("MulBackward0", "ExpBackward0", "SinBackward0", "SumBackward0"):
        (key,) = _named(nodes, name)
        mine = [e.cpu_time_total for e in events if e.name == name]  # one node of each type: its own ranges
        assert len(mine) == 2
        times[key] = sum(mine)
        assert nodes[key]["label"] == f"{name}\n{_format_time(times[key])} (2 runs)"
        assert nodes[key]["fillcolor"] in viz.SCALE
    slowest = max(times, key=times.get)
    assert nodes[slowest]["fillcolor"] == viz.SCALE[-1] and nodes[slowest]["fontcolor"] == "white"
    for key in _named(nodes, "AccumulateGrad"):  # no sequence number: not matched, not coloured
        assert "fillcolor" not in nodes[key]
    assert graph["label"].startswith("fill: backward time of each node in the profile")
    assert graph["label"].endswith(f"to dark purple ({_format_time(times[slowest])})")
    assert edges == parse_dot(viz.make_dot(loss, params={"x": x, "w": w}).source)[1]  # the graph as without colours


def test_memory_colouring_fills_each_node_by_the_bytes_memory_summary_counts():
    x = rg.ones(4, dtype=rg.float64, requires_grad=True)  # 32 bytes
    loss = (x * x).exp().sum()  # MulBackward0 saves x twice, ExpBackward0 its result
    loss.backward(retain_graph=True)  # x.grad: 32 bytes at its AccumulateGrad
    nodes, _, graph = parse_dot(viz.make_dot(loss, params={"x": x}, color_by="memory").source)
    summary = rg.autograd.graph.memory_summary(loss)
    labels = {}
    for name, (count, saved, grad) in summary.by_type.items():
        (key,) = _named(nodes, name.rpartition("::")[2])
        labels[name] = nodes[key]["label"].split("\n")[1]
        assert nodes[key]["fillcolor"] == viz.SCALE[round((saved + grad) / 64 * 8)]
    assert labels == {"MulBackward0": "64 B", "ExpBackward0": "32 B", "SumBackward0": "0 B",
                      "torch::autograd::AccumulateGrad": "32 B (.grad)"}
    assert graph["label"].startswith("fill: bytes each node holds") and graph["label"].endswith("(64 B)")


def test_color_by_is_checked():
    loss = (rg.ones(2, requires_grad=True) * 2).sum()
    with pytest.raises(ValueError, match="color_by must be 'time' or 'memory'"):
        viz.make_dot(loss, color_by="flops")
    with pytest.raises(ValueError, match="color_by='time' needs a profile"):
        viz.make_dot(loss, color_by="time")


def test_a_path_cut_by_no_grad_is_drawn_in_red_from_the_named_leaf_into_the_node_it_enters():
    x = rg.ones(3, requires_grad=True)
    w = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        with rg.no_grad():
            y = x.exp()  # the-cut
        loss = (y * w).sum()
    why = rg.autograd.explain(loss, x)
    nodes, edges, _ = parse_dot(viz.make_dot(loss, params={"x": x, "w": w}, explain=why).source)
    (cut,) = _named(nodes, "exp")
    assert nodes[cut]["label"] == f"exp\ncut: no_grad\n{_line('# the-cut')}"
    assert nodes[cut]["fillcolor"] == "red"
    (leaf,) = _named(nodes, "x")  # not in the graph: drawn for the explanation, named
    (mul,) = _named(nodes, "MulBackward0")
    red = [(a, b) for a, b, attrs in edges if attrs.get("color") == "red"]
    assert red == [(leaf, cut), (cut, mul)]


def test_a_detached_path_is_drawn_into_the_op_that_took_the_alias():
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        loss = (x.detach() * 2).sum()
    why = rg.autograd.explain(loss, x)
    nodes, edges, _ = parse_dot(viz.make_dot(loss, explain=why).source)
    (cut,) = _named(nodes, "mul")
    assert nodes[cut]["label"].split("\n")[1] == "cut: detached"
    (leaf,) = _named(nodes, "input")  # unnamed by params
    (output,) = [k for k, a in nodes.items() if a.get("fillcolor") == "darkolivegreen1"]
    assert [(a, b) for a, b, attrs in edges if attrs.get("color") == "red"] == [(leaf, cut), (cut, output)]


def test_an_in_place_overwrite_marks_the_overwriting_node_itself():
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        y = x * 2
        y.zero_()  # the-overwrite
        loss = (y * 3).sum()
    why = rg.autograd.explain(loss, x)
    nodes, edges, _ = parse_dot(viz.make_dot(loss, params={"x": x}, explain=why).source)
    (zero,) = _named(nodes, "ZeroBackward0")
    assert nodes[zero]["label"] == f"ZeroBackward0\ncut: overwritten\n{_line('# the-overwrite')}"
    assert nodes[zero]["fillcolor"] == "red"
    assert len(_named(nodes, "x")) == 1 and not any(a.get("color") == "red" for _, _, a in edges)


def test_a_cause_without_a_cut_op_is_a_red_note_on_the_leaf():
    x = rg.ones(3)
    loss = (x * 2).sum()
    why = rg.autograd.explain(loss, x)
    nodes, edges, _ = parse_dot(viz.make_dot(loss, params={"x": x}, explain=why).source)
    (note,) = [k for k, a in nodes.items() if a.get("shape") == "note"]
    assert nodes[note]["label"].startswith("does_not_require_grad: The input does not require grad")
    (leaf,) = _named(nodes, "x")
    assert [(a, b) for a, b, _ in edges] == [(note, leaf)]
    assert why.cause == debug.DOES_NOT_REQUIRE_GRAD


def test_a_graph_deeper_than_the_recursion_limit_is_drawn():
    x = rg.ones(1, requires_grad=True)
    y = x
    for _ in range(300):
        y = y * 1.0
    depth, frame, limit = 0, sys._getframe(), sys.getrecursionlimit()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    sys.setrecursionlimit(depth + 100)  # the graph is deeper than the stack may grow
    try:
        source = viz.make_dot(y, color_by="memory").source
    finally:
        sys.setrecursionlimit(limit)
    assert len(_named(parse_dot(source)[0], "MulBackward0")) == 300


@pytest.mark.skipif(shutil.which("dot") is None, reason="the graphviz dot program is not installed")
def test_the_coloured_and_marked_dot_text_renders(tmp_path):
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        with rg.no_grad():
            y = x.exp()
        loss = (y * x).sum()
    with profile() as prof:
        loss.backward(retain_graph=True)
    dot = viz.make_dot(loss, params={"x": x}, profile=prof, explain=rg.autograd.explain(loss, x))
    done = subprocess.run(["dot", "-Tsvg"], input=dot.source, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "<svg" in done.stdout, done.stderr
