"""split_with_sizes and the unsafe splits, nanmedian, index_reduce, as_strided_scatter and div(out=), against
PyTorch on the same numbers: node names, errors (type and first sentence), what the outputs are, and the gradients
the op sweep (test_op_table.py) does not reach."""
import functools
import subprocess
import sys
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import gradcheck, gradgradcheck
import errors_like_torch

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")

NAN = float("nan")


def _plain(value):
    if isinstance(value, (rg.Tensor, torch.Tensor)):
        a = np.asarray(value.detach().tolist(), dtype=float).round(10)
        return np.where(np.isnan(a), None, a).tolist()  # NaN as None, which equals itself
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


same_in_both = functools.partial(errors_like_torch.same_in_both, plain=_plain)


def f64(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


# -- split_with_sizes and the unsafe splits ------------------------------------------------------------------------
SPLITS = {
    "split": lambda lib, b: b.split(2),
    "split with sizes": lambda lib, b: b.split([1, 2]),
    "split_with_sizes": lambda lib, b: lib.split_with_sizes(b, [1, 2]),
    "split_with_sizes method": lambda lib, b: b.split_with_sizes([2, 1], dim=0),
    "chunk": lambda lib, b: b.chunk(2),
    "unsafe_split": lambda lib, b: lib.unsafe_split(b, 2),
    "unsafe_split_with_sizes": lambda lib, b: b.unsafe_split_with_sizes([1, 2]),
    "unsafe_chunk": lambda lib, b: lib.unsafe_chunk(b, 2),
}


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_split_family_node_names_and_values_match_torch(split):
    def scenario(lib):
        b = f64(lib, [[1., 2.], [3., 4.], [5., 6.]], requires_grad=True) * 1
        pieces = SPLITS[split](lib, b)
        return [p.grad_fn.name() for p in pieces], pieces
    same_in_both(scenario)


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_unsafe_split_outputs_share_memory_but_are_not_views(split):
    b = rg.arange(6.).reshape(3, 2).requires_grad_() * 1
    first = SPLITS[split](rg, b)[0]
    assert first._base is None and np.shares_memory(first._data, b._data)
    first.mul_(2)  # no view error: the write is recorded as on any tensor
    assert first.grad_fn.name() == "MulBackward0" and b._version == 0


def test_split_with_sizes_output_written_in_place_raises_torchs_view_error():
    def scenario(lib):
        b = f64(lib, [1., 2., 3.], requires_grad=True) * 2
        b.split_with_sizes([1, 2])[1].add_(1)
    assert same_in_both(scenario) == ("RuntimeError", "Output 1 of SplitWithSizes is a view and is being modified "
                                                      "inplace.")


@pytest.mark.parametrize("call", [
    lambda lib: lib.split_with_sizes(lib.ones(4), [1, 2]),
    lambda lib: lib.split_with_sizes(lib.ones(4), [-1, 5]),
    lambda lib: lib.unsafe_split_with_sizes(lib.ones(4), [5, -1]),
    lambda lib: lib.split_with_sizes(lib.ones(4), 2),
    lambda lib: lib.unsafe_split(lib.ones(4), [1, 3]),
    lambda lib: lib.unsafe_split(lib.ones(4), -1),
    lambda lib: lib.split(lib.ones(4), -1),
    lambda lib: lib.unsafe_split(lib.ones(4), 0),
    lambda lib: lib.split(lib.tensor(1.), 1),
    lambda lib: lib.unsafe_split_with_sizes(lib.tensor(1.), [1]),
    lambda lib: lib.unsafe_chunk(lib.ones(4), 0),
    lambda lib: lib.unsafe_chunk(lib.tensor(1.), 1),
    lambda lib: lib.chunk(lib.tensor(1.), 0),
    lambda lib: lib.split_with_sizes(lib.ones(4), [2, 2], dim=1),
], ids=["not summing", "negative", "unsafe negative", "an int", "unsafe a list", "unsafe negative size",
        "split negative size", "unsafe zero size", "0-d", "unsafe 0-d", "no chunks", "unsafe chunk 0-d", "chunk 0-d",
        "bad dim"])
def test_split_family_errors_match_torch(call):
    assert same_in_both(call)[0] != "ok"


def test_unsafe_split_gradient_after_an_in_place_write_matches_torch():
    def scenario(lib):
        a = f64(lib, [[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
        s1, s2, s3 = lib.unsafe_chunk(a * a, 3)
        s1.mul_(s2)
        (s1.sum() + 2 * s3.sum()).backward()
        return a.grad
    same_in_both(scenario)


@pytest.mark.parametrize("fn", [
    lambda x: x.split_with_sizes([1, 2], 1),
    lambda x: rg.unsafe_split(x, 2, 0),
    lambda x: rg.unsafe_split_with_sizes(x, [2, 1], -1),
    lambda x: rg.unsafe_chunk(x, 2),
    lambda x: rg.nanmedian(x, 1),
    lambda x: rg.nanmedian(x),
], ids=["split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "nanmedian dim",
        "nanmedian"])
def test_forward_derivatives_batch_over_tangents(fn):
    x = rg.tensor([[1., 4., 2.], [0., -1., 3.], [5., 7., 6.]], dtype=rg.float64, requires_grad=True)
    assert gradcheck(lambda t: tuple(o for o in _as_tuple(fn(t)) if o.is_floating_point()), (x,),
                     check_forward_ad=True, check_batched_forward_grad=True, check_batched_grad=True)


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


# -- nanmedian -----------------------------------------------------------------------------------------------------
ROWS = [[NAN, NAN, NAN], [1., NAN, 3.], [NAN, 5., 4.], [2., 2., NAN], [0., 9., 1.]]


@pytest.mark.parametrize("keepdim", [False, True])
def test_nanmedian_along_a_dim_matches_torch(keepdim):
    def scenario(lib):
        x = f64(lib, ROWS[1:])  # an all-NaN row's index is PyTorch's sort's choice
        out = lib.nanmedian(x, 1, keepdim=keepdim)
        return type(out).__name__, out.values, out.indices, x.nanmedian(0).indices
    same_in_both(scenario)


def test_nanmedian_of_an_all_nan_row_is_nan():
    values, indices = rg.nanmedian(rg.tensor(ROWS), 1)
    assert np.isnan(values[0].item()) and values[1:].tolist() == [1., 4., 2., 1.] and 0 <= indices[0].item() < 3


@pytest.mark.parametrize("values", [[1., NAN, 3., 2.], [NAN, NAN], [2., 1., 2., NAN, 2.], []],
                         ids=["some NaN", "all NaN", "ties", "empty"])
def test_nanmedian_of_all_elements_and_its_gradient_match_torch(values):
    def scenario(lib):
        x = f64(lib, values, requires_grad=True)
        m = lib.nanmedian(x)
        if not values:
            return m, m.grad_fn.name()
        m.backward()
        return m, x.grad, m.grad_fn.name()
    same_in_both(scenario)


def test_nanmedian_gradient_goes_to_the_chosen_element_as_torchs():
    def scenario(lib):
        x = f64(lib, ROWS[1:], requires_grad=True)
        out = x.nanmedian(-1)
        (out.values * f64(lib, [1., 2., 3., 4.])).sum().backward()
        return x.grad, out.values.grad_fn.name()
    same_in_both(scenario)


@pytest.mark.parametrize("call", [lambda lib: lib.nanmedian(lib.ones(2, 0), 1),
                                  lambda lib: lib.nanmedian(lib.ones(2), 1),
                                  lambda lib: lib.nanmedian(lib.tensor([3, 1, 2, 5]), 0)],
                         ids=["empty dim", "bad dim", "integers"])
def test_nanmedian_edges_match_torch(call):
    same_in_both(call)


# -- index_reduce --------------------------------------------------------------------------------------------------
def _index_reduce_inputs(lib):
    return lib.ones(3, 2), lib.arange(4.).reshape(2, 2) + 1


@pytest.mark.parametrize("call", [
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 2]), s, "sum"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 3]), s, "amax"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, -1]), s, "amin"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0., 1.]), s, "prod"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([[0, 1]]), s, "mean"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 1, 2]), s, "amax"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 1]), lib.ones(2, 3), "amax"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 1]), s.double(), "amax"),
    lambda lib, x, s: lib.index_reduce(x, 2, lib.tensor([0, 1]), s, "amax"),
], ids=["sum", "out of range", "negative", "float index", "2-d index", "too many indices", "shapes", "dtypes",
        "bad dim"])
def test_index_reduce_errors_match_torch(call):
    assert same_in_both(lambda lib: call(lib, *_index_reduce_inputs(lib)))[0] != "ok"


@pytest.mark.parametrize("call", [
    lambda lib, x, s: x.index_reduce_(0, lib.tensor([0, 0]), s, "prod"),
    lambda lib, x, s: x.index_reduce(-1, lib.tensor([1, 1]), s, "mean", include_self=False),
    lambda lib, x, s: lib.index_reduce(lib.tensor(1.), 0, lib.tensor([0]), lib.tensor(3.), "amin"),
    lambda lib, x, s: lib.index_reduce(lib.tensor([1, 2, 3]), 0, lib.tensor([0, 0]), lib.tensor([3, 4]), "mean"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([], dtype=lib.int64), lib.ones(0, 2), "amax"),
    lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 0], dtype=lib.int32), s, "amin", include_self=False),
], ids=["in place", "mean without self", "0-d", "integer mean", "no indices", "int32 index"])
def test_index_reduce_values_match_torch(call):
    same_in_both(lambda lib: call(lib, *_index_reduce_inputs(lib)))


# Calls that fail their checks, then three that run: PyTorch warns (TORCH_WARN_ONCE) at the first that runs,
# once per process whatever the filters, at the caller's line. Seen in a fresh process of PyTorch's, and here
# in this one with retrograd's once-flag cleared.
_BETA_SCRIPT = """
import sys, warnings
lib = __import__(sys.argv[1]) if __name__ == "__main__" else lib
x, i, s = lib.ones(3), lib.tensor([0, 1]), lib.tensor([2., 3.])
calls = [lambda: x.index_reduce(0, i, s, "bad"), lambda: x.index_reduce(0, i.float(), s, "prod"),
         lambda: x.index_reduce(0, i, s, "prod"), lambda: lib.index_reduce(x, 0, i, s, "amax"),
         lambda: x.index_reduce_(0, i, s, "mean")]
seen = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for k, call in enumerate(calls):
        try:
            call()
        except Exception:
            pass
        seen += [(k, w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename) for w in caught]
        caught.clear()
print(repr(seen))
"""


def test_index_reduce_warns_once_that_it_is_in_beta_as_torch(capsys):
    from retrograd.ops import indexing
    indexing._beta_warned.clear()
    exec(compile(_BETA_SCRIPT, "<string>", "exec"), {"__name__": "test", "lib": rg})
    ours = capsys.readouterr().out
    theirs = subprocess.run([sys.executable, "-c", _BETA_SCRIPT, "torch"], capture_output=True, text=True,
                            timeout=60, check=True).stdout
    assert ours == theirs
    assert ours.startswith("[(2, 'UserWarning', 'index_reduce() is in beta and the API may change at any time.', "
                           "'<string>')]")


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_gradients_with_zeros_and_ties_match_torch(reduce, include_self):
    def scenario(lib):
        x = f64(lib, [[0., 2.], [1., 1.], [3., 0.]], requires_grad=True)
        s = f64(lib, [[0., 2.], [1., 0.], [3., 0.], [2., 5.]], requires_grad=True)
        out = lib.index_reduce(x, 0, lib.tensor([0, 2, 0, 2]), s, reduce, include_self=include_self)
        out.backward(f64(lib, [[1., 2.], [3., 4.], [5., 6.]]))
        return out, x.grad, s.grad, out.grad_fn.name()
    same_in_both(scenario)


def test_index_reduce_prod_of_two_zeros_refuses_double_backward_as_torch():
    def scenario(lib):
        x, s = f64(lib, [1.], requires_grad=True), f64(lib, [0., 0.], requires_grad=True)
        out = lib.index_reduce(x, 0, lib.tensor([0, 0]), s, "prod")
        gx, gs = lib.autograd.grad(out.sum(), (x, s), create_graph=True)
        first = (gx, gs, gs.grad_fn.name())
        lib.autograd.grad(gs.sum(), s)
        return first
    assert same_in_both(scenario) == ("RuntimeError", "index_reduce(): Double backward is unsupported for source "
                                                      "when >1 zeros in source are scattered to the same position "
                                                      "in self")


def test_index_reduce_forward_derivative_is_the_means_only_as_torchs():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        out = []
        with fw.dual_level():
            x = fw.make_dual(lib.ones(3, 2, dtype=lib.float64), lib.ones(3, 2, dtype=lib.float64))
            s = lib.arange(4., dtype=lib.float64).reshape(2, 2)
            out.append(fw.unpack_dual(lib.index_reduce(x, 0, lib.tensor([0, 0]), s, "mean")).tangent)
            lib.index_reduce(x, 0, lib.tensor([0, 0]), s, "amax")
        return out
    assert same_in_both(scenario)[0] == "NotImplementedError"
    x = rg.randn(3, 2, dtype=rg.float64, requires_grad=True)
    s = rg.randn(2, 2, dtype=rg.float64, requires_grad=True)
    assert gradcheck(lambda x, s: rg.index_reduce(x, 0, rg.tensor([0, 0]), s, "mean", include_self=False), (x, s),
                     check_forward_ad=True, check_batched_forward_grad=True)


# -- as_strided_scatter --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.as_strided_scatter(x, lib.zeros(2, 3), (2, 2), (3, 1)),
    lambda lib, x: lib.as_strided_scatter(x, lib.zeros(2, 2), (2, 2), (3, 1), 10),
    lambda lib, x: lib.as_strided_scatter(x, lib.zeros(2, 2), (2, 2), (3, 1, 1)),
    lambda lib, x: lib.as_strided_scatter(x, lib.zeros(2, 2), 2, (3, 1)),
    lambda lib, x: x.as_strided_scatter(lib.zeros(2, 2), (2, 2), (-1, 1)),
], ids=["src shape", "out of the storage", "strides", "an int size", "negative stride"])
def test_as_strided_scatter_errors_match_torch(call):
    assert same_in_both(lambda lib: call(lib, lib.arange(6.).reshape(2, 3)))[0] != "ok"


@pytest.mark.parametrize("offset", [None, 0, 1, 3, 4])
def test_as_strided_scatter_offsets_are_in_the_inputs_storage_as_torchs(offset):
    def scenario(lib):
        x = lib.arange(8.)[2:]
        out = lib.as_strided_scatter(x, lib.tensor([-1., -2.]), (2,), (1,), offset)
        return out, x  # the input is not written
    same_in_both(scenario)


def test_as_strided_scatter_src_gradient_matches_torch():
    def scenario(lib):
        s = f64(lib, [[1., 2.], [3., 4.]], requires_grad=True)
        out = lib.as_strided_scatter(lib.arange(9., dtype=lib.float64).reshape(3, 3), s, (2, 2), (1, 3), 1)
        out.backward(lib.arange(9., dtype=lib.float64).reshape(3, 3) + 1)
        return out, s.grad, out.grad_fn.name()
    same_in_both(scenario)


def test_as_strided_scatter_input_gradient_is_zero_where_src_was_written():
    # PyTorch's own gradient of the input is the reverse (it fails gradcheck); finite differences decide.
    x = rg.arange(6., dtype=rg.float64).requires_grad_()
    s = rg.zeros(3, dtype=rg.float64, requires_grad=True)
    rg.as_strided_scatter(x, s, (3,), (2,), 1).backward(rg.arange(6., dtype=rg.float64) + 1)
    assert x.grad.tolist() == [1., 0., 3., 0., 5., 0.] and s.grad.tolist() == [2., 4., 6.]
    x2, s2 = rg.randn(3, 2, dtype=rg.float64, requires_grad=True), rg.randn(2, 2, dtype=rg.float64, requires_grad=True)
    fn = lambda x, s: rg.as_strided_scatter(x.t(), s, (2, 2), (1, 2), 1)  # noqa: E731 - a non-contiguous input
    assert gradcheck(fn, (x2, s2), check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True)
    assert gradgradcheck(fn, (x2, s2))


def test_as_strided_scatter_with_overlapping_src_writes_the_last_and_gives_it_the_gradient():
    s = rg.tensor([[1., 2.], [3., 4.]], dtype=rg.float64, requires_grad=True)
    out = rg.zeros(3, dtype=rg.float64).as_strided_scatter(s, (2, 2), (1, 1))
    out.backward(rg.tensor([1., 2., 3.], dtype=rg.float64))
    assert out.tolist() == [1., 3., 4.] and s.grad.tolist() == [[1., 0.], [2., 3.]]


# -- div(out=) -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rounding_mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "int64"), ("int64", "float32"),
                                    ("float64", "int64")], ids=["float", "integer", "float into integer",
                                                                "integer into float"])
def test_div_out_writes_bumps_and_returns_out_as_torch(rounding_mode, dtypes):
    def scenario(lib):
        a = lib.tensor([7, -7, 9], dtype=getattr(lib, dtypes[1]))
        out = lib.empty(3, dtype=getattr(lib, dtypes[0]))
        result = lib.div(a, 2, rounding_mode=rounding_mode, out=out)
        return result is out, out, out._version
    same_in_both(scenario)


@pytest.mark.parametrize("rounding_mode", [None, "floor"])
def test_div_out_refuses_inputs_requiring_grad_as_torch(rounding_mode):
    def scenario(lib):
        lib.div(f64(lib, [1., 2.], requires_grad=True), 2., rounding_mode=rounding_mode, out=lib.empty(2))
    assert same_in_both(scenario) == ("RuntimeError", "div(): functions with out=... arguments don't support "
                                                      "automatic differentiation, but one of the arguments requires "
                                                      "grad.")


def test_div_out_resizes_out_as_torch():
    def scenario(lib):
        out = lib.empty(0, dtype=lib.int64)
        lib.div(lib.tensor([[7, 8]]), lib.tensor([2, 3]), rounding_mode="trunc", out=out)
        return out, list(out.shape)
    same_in_both(scenario)
