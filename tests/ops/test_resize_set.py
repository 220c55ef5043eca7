"""``resize_``, ``resize_as_`` and ``set_`` (Note [resize_ and set_] in retrograd/ops/shape.py), against PyTorch.

Each scenario runs with retrograd and with torch on the same numbers.
"""

import pytest

import retrograd as rg
from errors_like_torch import first_sentence, outcome, same_in_both

torch = pytest.importorskip("torch")


def grid(lib, n):
    return lib.arange(float(n), dtype=lib.float64)


def geometry(t):
    return tuple(t.shape), t.stride(), t.storage_offset(), t._version


def test_resize_shrinking_keeps_the_first_elements_in_storage_order():
    def scenario(lib):
        x = grid(lib, 6).reshape(2, 3).t()
        y = x.resize_(2, 2)
        return y is x, geometry(x), x.tolist()
    same_in_both(scenario)


def test_resize_growing_keeps_the_old_elements_and_its_offset():
    def scenario(lib):
        x = grid(lib, 8)[2:5]
        x.resize_((2, 3))
        return geometry(x), x[0].tolist()
    assert same_in_both(scenario)[1][0] == ((2, 3), (3, 1), 2, 1)


def test_resize_of_a_view_within_its_storage_writes_through_to_its_base():
    def scenario(lib):
        base = grid(lib, 6).reshape(2, 3)
        v = base[0]
        v.resize_(5)
        v[4] = -1.0
        return geometry(v), base._version, base.tolist()
    same_in_both(scenario)


def test_resize_with_the_same_shape_changes_nothing_unless_a_format_is_asked_for():
    def scenario(lib):
        x = grid(lib, 6).reshape(3, 2).t()
        before = geometry(x)
        x.resize_(2, 3)
        same = geometry(x)
        x.resize_(2, 3, memory_format=lib.contiguous_format)
        y = lib.zeros(1, 2, 2, 2).resize_(1, 2, 2, 2, memory_format=lib.channels_last)
        return before == same, geometry(x), x.tolist(), geometry(y)
    same_in_both(scenario)


def test_resize_to_a_channels_last_format_and_resize_as_match_pytorchs():
    def scenario(lib):
        x = grid(lib, 4).resize_(2, 3, 2, 2, memory_format=lib.channels_last)
        template = lib.zeros(1, 2, 2, 2).contiguous(memory_format=lib.channels_last)
        a = grid(lib, 3).resize_as_(template)
        b = grid(lib, 3).resize_as_(template, memory_format=lib.channels_last)
        return geometry(x), geometry(a), geometry(b), x[0, :, 0, 0].tolist(), x[0, 0, 0, 1].item()
    same_in_both(scenario)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.ones(2, requires_grad=True).resize_(3),
    lambda lib: (lib.ones(2, requires_grad=True) * 2).resize_(3),
    lambda lib: lib.ones(2, 3, requires_grad=True)[0].resize_(2),
    lambda lib: lib.ones(2).resize_(2, -3),
    lambda lib: lib.ones(2).resize_(2.0),
    lambda lib: lib.ones(2).resize_(2, memory_format=lib.channels_last),
    lambda lib: lib.ones(2).resize_(2, memory_format=lib.preserve_format),
    lambda lib: lib.ones(2).resize_(2, memory_format=1),
    lambda lib: lib.ones(2).resize_as_(3),
], ids=["requires grad", "non-leaf", "view of a leaf", "negative", "float size", "format rank", "preserve",
        "not a format", "template not a tensor"])
def test_bad_resizes_raise_pytorchs_errors(bad):
    assert same_in_both(bad)[0] != "ok"


def test_resize_refuses_a_tensor_that_requires_grad_under_no_grad_too():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            x.resize_(3)
    assert same_in_both(scenario) == ("RuntimeError", "cannot resize variables that require grad")


def test_resize_and_set_of_an_inference_tensor_outside_inference_mode_raise_where_they_change_it():
    def scenario(lib):
        with lib.inference_mode():
            c = lib.ones(2)
        return [outcome(f, lib)[0] for f in (lambda lib: c.resize_(2), lambda lib: c.resize_(3),
                                             lambda lib: c.set_(lib.ones(3)))]
    assert same_in_both(scenario) == ("ok", ["ok", "RuntimeError", "RuntimeError"])  # the same shape: no change


def test_set_to_another_tensor_shares_its_storage_and_geometry():
    def scenario(lib):
        src = grid(lib, 6)
        x = lib.zeros(3)
        x.set_(src.reshape(2, 3).t()[1:])
        x[0, 1] = 10.0
        return geometry(x), src._version, src.tolist()
    same_in_both(scenario)


def test_set_with_a_geometry_and_set_with_nothing_match_pytorchs():
    def scenario(lib):
        src = grid(lib, 10)
        x = lib.zeros(3, dtype=lib.float64)
        x.set_(src, 2, (2, 2), (1, 3))
        first = geometry(x), x.tolist()
        x.set_(src, 1, (2, 2))  # the same shape, no stride: its strides stay, as PyTorch's
        second = geometry(x), x.tolist()
        x.set_(src, 0, (3,))
        third = geometry(x)
        x.set_()
        return first, second, third, geometry(x)
    same_in_both(scenario)


def test_set_of_a_parameter_under_no_grad_then_backward():
    def scenario(lib):
        p = lib.nn.Parameter(lib.ones(4, dtype=lib.float64))
        with lib.no_grad():
            p.set_(lib.arange(3.0, dtype=lib.float64))
        (p * p).sum().backward()
        return p.requires_grad, p.is_leaf, p._version, p.grad.tolist()
    same_in_both(scenario)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.ones(2, requires_grad=True).set_(lib.ones(3)),
    lambda lib: lib.ones(2, requires_grad=True).set_(),
    lambda lib: lib.ones(2, 3, requires_grad=True)[0].set_(lib.ones(3)),
    lambda lib: lib.ones(2).set_(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.ones(2, dtype=lib.float64).set_(lib.ones(2)),
], ids=["leaf requires grad", "empty on a leaf", "view of a leaf", "int64 source", "float32 source"])
def test_bad_sets_raise_pytorchs_errors(bad):
    assert same_in_both(bad)[0] != "ok"


def test_set_to_a_number_raises_pytorchs_type_error():
    expected = "set_() received an invalid combination of arguments - got (int), but expected one of:"
    for lib in (rg, torch):
        with pytest.raises(TypeError) as info:
            lib.ones(2).set_(3)
        assert str(info.value).startswith(expected)


def _next_names(t):
    return [None if fn is None else type(fn).__name__ for fn, _ in t.grad_fn.next_functions]


def test_set_where_something_requires_grad_records_a_node_that_raises_in_backward():
    # PyTorch's NotImplemented node: the call succeeds; a backward pass that reaches the node raises.
    def scenario(lib):
        x = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        s = grid(lib, 3).requires_grad_()
        a = x * 2
        a.retain_grad()
        b = a.set_(s * 1)
        y = lib.ones(3, dtype=lib.float64)
        z = y.set_(s * 1)
        return (b is a, type(b.grad_fn).__name__, b.grad_fn.name(), _next_names(b), b.requires_grad, b.is_leaf,
                b.retains_grad, b._version, b.tolist(), _next_names(z), z.is_leaf, z._version)
    same_in_both(scenario)


@pytest.mark.parametrize("into", ["a result", "a tensor that does not require grad"])
def test_a_backward_pass_through_set_raises_and_the_engine_keeps_working(into):
    def scenario(lib):
        x = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        s = grid(lib, 3).requires_grad_()
        target = x * 2 if into == "a result" else lib.ones(3, dtype=lib.float64)
        b = target.set_(s * 1)
        try:
            lib.autograd.grad((b * b).sum(), s)
        except RuntimeError as e:
            error = first_sentence(e)
        (g,) = lib.autograd.grad((s * s).sum(), s)  # a pass that does not reach the node
        return error, g.tolist()
    assert same_in_both(scenario)[1][0] == "derivative for set_ is not implemented"


def test_set_of_a_view_where_something_requires_grad_raises_at_the_call():
    # PyTorch rebases the view's history through its base and raises in backward; retrograd refuses at the call.
    v = (rg.ones(3, requires_grad=True) * 2)[:2]
    with pytest.raises(RuntimeError, match="^derivative for set_ is not implemented"):
        v.set_(rg.ones(2))
    assert v.shape == (2,) and v._version == 0