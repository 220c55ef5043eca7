"""The ``out=`` argument of the ops that take it in PyTorch, against PyTorch (See Note [The out= argument] in
retrograd/ops/_call.py).

Each scenario runs with retrograd and with torch on the same numbers.
"""
import re
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops._signature import OUT_OPS

torch = pytest.importorskip("torch")


def _first_sentence(msg):
    return re.split(r"(?<=[a-z]\.)\s", str(msg), maxsplit=1)[0]


def outcome(scenario, lib):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = scenario(lib)
        return ("ok", result, [_first_sentence(w.message) for w in caught if w.category is UserWarning])
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return (type(e).__name__, _first_sentence(e))


def same_in_both(scenario):
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    assert ours == theirs
    return ours


def values(lib, *shape, start=1.0):
    return lib.arange(start, start + np.prod(shape), dtype=lib.float64).reshape(shape)


CALLS = {
    "mul": lambda lib, a, b, out: lib.mul(a, b, out=out),
    "add with alpha": lambda lib, a, b, out: lib.add(a, b, alpha=2, out=out),
    "sub": lambda lib, a, b, out: lib.sub(a, b, out=out),
    "exp": lambda lib, a, b, out: lib.exp(a, out=out),
    "pow": lambda lib, a, b, out: lib.pow(a, 2, out=out),
    "where": lambda lib, a, b, out: lib.where(a > 2, a, b, out=out),
    "clamp": lambda lib, a, b, out: lib.clamp(a, 2.0, 3.0, out=out),
    "sum over a dim": lambda lib, a, b, out: lib.sum(a, 0, keepdim=True, out=out),
    "mean over a dim": lambda lib, a, b, out: lib.mean(a, 1, out=out),
    "amax": lambda lib, a, b, out: lib.amax(a, 0, out=out),
    "matmul": lambda lib, a, b, out: lib.matmul(a, b.t(), out=out),
    "mm": lambda lib, a, b, out: lib.mm(a, b.t(), out=out),
    "cat": lambda lib, a, b, out: lib.cat([a, b], 1, out=out),
    "stack": lambda lib, a, b, out: lib.stack([a, b], out=out),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_out_is_written_bumped_and_returned_as_pytorchs(call):
    def scenario(lib):
        a, b = values(lib, 2, 2), values(lib, 2, 2, start=-1.0)
        expected = CALLS[call](lib, a, b, None)
        out = lib.empty(expected.shape, dtype=lib.float64)
        result = CALLS[call](lib, a, b, out)
        return result is out, out.tolist() == expected.tolist(), out._version, out.requires_grad, out.grad_fn
    assert same_in_both(scenario)[1][:2] == (True, True)


@pytest.mark.parametrize("call", ["mul", "sum over a dim", "cat"])
def test_out_refuses_inputs_or_out_requiring_grad_with_grad_mode_on(call):
    def scenario(lib):
        a, b = values(lib, 2, 2).requires_grad_(), values(lib, 2, 2, start=-1.0)
        refused = []
        for args in ((a, b, lib.zeros(4, 4, dtype=lib.float64)), (b, a, lib.zeros(4, 4, dtype=lib.float64)),
                     (b, b, lib.zeros(4, 4, dtype=lib.float64, requires_grad=True)), (a[0:1] * 1, b, lib.zeros(0))):
            try:
                CALLS[call](lib, *args)
                refused.append(None)
            except RuntimeError as e:
                refused.append(str(e))
        return refused
    assert "functions with out=... arguments don't support automatic differentiation" in same_in_both(scenario)[1][0]


def test_out_with_inputs_requiring_grad_under_no_grad_or_inference_mode_as_pytorchs():
    def scenario(lib):
        a, b = values(lib, 2, 2).requires_grad_(), values(lib, 2, 2, start=-1.0)
        leaf = lib.zeros(2, 2, dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            lib.mul(a, b, out=leaf)
        with lib.inference_mode():
            c = lib.zeros(2, 2, dtype=lib.float64)
            lib.mul(a, b, out=c)
        return leaf.tolist(), leaf.requires_grad, leaf.is_leaf, leaf._version, c.tolist()
    same_in_both(scenario)


@pytest.mark.parametrize("shape", [(0,), (3,), (8,), (2, 3)], ids=["empty", "too small", "large enough", "2-D"])
def test_out_of_another_shape_is_resized_with_pytorchs_warning(shape):
    def scenario(lib):
        a, b = values(lib, 2, 2), values(lib, 2, 2, start=-1.0)
        out = lib.zeros(*shape, dtype=lib.float64)
        alias, ptr = out.detach(), out.data_ptr()
        lib.mul(a, b, out=out)
        return tuple(out.shape), out.stride(), out.tolist(), out._version, alias._version, out.data_ptr() == ptr
    same_in_both(scenario)


def test_out_view_is_resized_within_its_storage_as_pytorchs():
    def scenario(lib):
        base = lib.zeros(8, dtype=lib.float64)
        view = base[2:5]
        lib.mul(values(lib, 2, 2), 2.0, out=view)
        return tuple(view.shape), view._base is base, view.storage_offset(), base.tolist(), base._version
    same_in_both(scenario)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_out_of_another_dtype_casts_or_refuses_as_pytorch(dtype):
    def scenario(lib):
        out = lib.zeros(2, 2, dtype=getattr(lib, dtype))
        lib.mul(values(lib, 2, 2), 0.5, out=out)
        return out.tolist(), str(out.dtype).split(".")[1]
    same_in_both(scenario)


def test_out_may_be_an_input_as_pytorchs():
    def scenario(lib):
        a = values(lib, 2, 2)
        return lib.add(a, a, out=a).tolist(), a._version
    same_in_both(scenario)


def test_out_none_is_the_plain_call():
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    y = rg.mul(a, 3.0, out=None)
    assert y.grad_fn.name() == "MulBackward0"
    assert rg.cat([a, a], out=None).grad_fn.name() == "CatBackward0"


def test_out_that_is_not_a_tensor_raises_type_error():
    with pytest.raises(TypeError, match=r"mul\(\): argument 'out' must be Tensor, not list"):
        rg.mul(rg.ones(2), 2.0, out=[0.0, 0.0])


_NOT_TENSORS = {"int": 3, "float": 2.5, "bool": True, "str": "s", "list": [1.0]}
_MORE_CALLS = {
    "div": lambda lib, a, b, out: lib.div(a, 2, out=out),
    "div floor": lambda lib, a, b, out: lib.div(a, b, rounding_mode="floor", out=out),
    "floor_divide": lambda lib, a, b, out: lib.floor_divide(a, 2, out=out),
}
# Where PyTorch's binding has several overloads that the call could be, it says "received an invalid
# combination of arguments" (and lists them) where retrograd names the argument: the same TypeError.
_OTHER_WORDING = {("div", "str"), ("div", "list"),
                  *((call, kind) for call in ("clamp", "mean over a dim", "mm", "pow") for kind in _NOT_TENSORS)}


def test_out_given_a_number_or_another_object_raises_or_wraps_it_as_pytorchs():
    # add, sub, mul, div and floor_divide take a number for out= (a new 0-d tensor: int64, float64 or bool,
    # resized with PyTorch's warning), so out=3 fails on the result's dtype (RuntimeError); the others raise
    # a TypeError.
    def first_line(lib, call, kind):
        a, b = values(lib, 2, 2), values(lib, 2, 2, start=-1.0)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = {**CALLS, **_MORE_CALLS}[call](lib, a, b, _NOT_TENSORS[kind])
            return ("ok", result.tolist(), str(result.dtype).rpartition(".")[2],
                    [_first_sentence(w.message) for w in caught])
        except (TypeError, RuntimeError) as e:
            return type(e).__name__, str(e).splitlines()[0]
    differing = set()
    for call in sorted({**CALLS, **_MORE_CALLS}):
        for kind in _NOT_TENSORS:
            ours, theirs = first_line(rg, call, kind), first_line(torch, call, kind)
            assert ours[0] == theirs[0], (call, kind, ours, theirs)
            if ours != theirs:
                assert theirs[1].startswith(f"{call.split()[0]}() received an invalid combination of arguments")
                differing.add((call, kind))
    assert differing == _OTHER_WORDING


def test_signature_shows_the_ops_own_parameters():
    import inspect
    assert str(inspect.signature(rg.mul)) == "(input, other)"
    assert rg.mul(rg.ones(2), 2.0, out=rg.zeros(2)).tolist() == [2.0, 2.0]


def test_every_op_taking_out_has_an_out_overload_in_pytorch():
    missing = [name for name in sorted(OUT_OPS) if not any(
        "out" in s.overload_name.lower() for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}"))]
    assert not missing
