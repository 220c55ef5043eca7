"""Saved tensors as PyTorch has them: ``grad_fn._saved_<name>``, SavedTensor, saved-tensor hooks.

Each behaviour is run with retrograd and with PyTorch on the same numbers; results, error types
and the first sentence of each error must agree.
"""
import gc
import pathlib
import re
import sys
import weakref

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.saved_variable import SavedTensor
from retrograd.ops._declarations import REGISTRY

torch = pytest.importorskip("torch")

sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / "ops"))
import samples as _samples  # noqa: E402


def _first_sentence(message):
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", str(message).strip(), maxsplit=1)[0]


def _plain(value, m):
    """``value`` in terms both libraries share: tensors as (shape, dtype name, values, requires_grad)."""
    if isinstance(value, m.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype).split(".")[-1],
                np.round(value.detach().numpy().astype(float), 5).tolist(), value.requires_grad)
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_plain(v, m) for v in value]
    if type(value).__name__ == "SavedTensor":
        return "SavedTensor"
    return value


def _outcome(fn, m):
    """``("ok", what fn(m) returned)``, or the error's type and first sentence."""
    try:
        value = fn(m)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, _first_sentence(exc)
    return "ok", _plain(value, m)


def _as_in_torch(fn):
    """Runs ``fn(m)`` with retrograd and with PyTorch; both must give the same outcome, which it returns."""
    got, expected = _outcome(fn, rg), _outcome(fn, torch)
    assert got == expected
    return got


# -- grad_fn._saved_<name> and _raw_saved_<name> -----------------------------------------------------
def test_saved_inputs_and_outputs_are_tensors_named_as_in_pytorch():
    def saved(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * (x + 1)
        e = x.exp()
        return (y.grad_fn._saved_self, y.grad_fn._saved_other, e.grad_fn._saved_result,
                e.grad_fn._saved_result.grad_fn is e.grad_fn,
                y.grad_fn._saved_other.grad_fn is y.grad_fn.next_functions[1][0])
    assert _as_in_torch(saved)[0] == "ok"


def test_saved_inputs_are_the_input_tensors_themselves():
    def saved(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        c = m.tensor([3.0, 4.0])
        b = x.clone()
        v = b[0]
        y, z, u, e = x * b, x * c, v * v, x.exp()
        d = b * b
        b.detach_()
        return (y.grad_fn._saved_self is x, y.grad_fn._saved_other is b, z.grad_fn._saved_other is c,
                u.grad_fn._saved_self is v, d.grad_fn._saved_self is b, e.grad_fn._saved_result is e)
    assert _as_in_torch(saved) == ("ok", ("tuple", [True, True, True, True, True, False]))


def test_a_saved_input_that_is_gone_is_given_back_connected_to_its_graph():
    def saved(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * x.clone()
        other = y.grad_fn._saved_other
        return other, other.grad_fn is y.grad_fn.next_functions[1][0]
    assert _as_in_torch(saved) == ("ok", ("tuple", [("tensor", (2,), "float32", [1.0, 2.0], True), True]))


def test_saved_scalars_ints_and_tuples_are_values():
    def saved(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        return ((x ** 2).grad_fn._saved_exponent, (x ** 2.5).grad_fn._saved_exponent,
                x.sum(1, keepdim=True).grad_fn._saved_dim, x.sum(1, keepdim=True).grad_fn._saved_keepdim,
                x.sum(1).grad_fn._saved_self_sym_sizes, x.transpose(0, 1).grad_fn._saved_dim1,
                x.permute([1, 0]).grad_fn._saved_dims, x.unsqueeze(0).grad_fn._saved_dim,
                x.cumsum(1).grad_fn._saved_dim, x.amax(1).grad_fn._saved_dim)
    assert _as_in_torch(saved)[0] == "ok"


def test_python_numbers_an_op_takes_as_tensors_are_saved_as_0d_tensors():
    def saved(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        return ((x * 3).grad_fn._saved_other, (x * 2.5).grad_fn._saved_other, (x / 2).grad_fn._saved_other,
                (x * True).grad_fn._saved_other)
    assert _as_in_torch(saved)[0] == "ok"


def test_values_no_formula_needed_are_none():
    def saved(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        c = m.tensor([3.0, 4.0])
        return (x * 3).grad_fn._saved_self, (x * c).grad_fn._saved_self, (c * x).grad_fn._saved_other
    assert _as_in_torch(saved)[0] == "ok"


def test_outputs_of_a_multi_output_op_are_saved_under_pytorch_names():
    def saved(m):
        x = m.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
        values, indices = x.max(1)
        return values.grad_fn._saved_indices, values.grad_fn._saved_dim, x.min(0)[0].grad_fn._saved_indices
    assert _as_in_torch(saved)[0] == "ok"


def test_unknown_saved_names_raise_attribute_error():
    def unknown(m):
        return (m.ones(2, requires_grad=True) * 2).grad_fn._saved_nothing_like_this
    assert _as_in_torch(unknown) == ("AttributeError", "'MulBackward0' object has no attribute "
                                                       "'_saved_nothing_like_this'")


def test_raw_saved_values_are_saved_tensors_only_for_tensors():
    def raw(m):
        x = m.ones(2, requires_grad=True)
        p = x ** 2
        return type(p.grad_fn._raw_saved_self).__name__, hasattr(p.grad_fn, "_raw_saved_exponent")
    assert _as_in_torch(raw) == ("ok", ("tuple", ["SavedTensor", False]))


def test_raw_saved_tensor_of_a_value_not_saved_unpacks_to_none_and_takes_no_hooks():
    def raw(m):
        y = m.ones(2, requires_grad=True) * 3
        saved = y.grad_fn._raw_saved_self
        assert saved.unpack() is None
        saved.register_hooks(lambda t: t, lambda t: t)
    assert _as_in_torch(raw) == ("RuntimeError", "Calling register_hooks on a saved tensor with value None is "
                                                 "forbidden")


def test_dir_lists_the_saved_values_under_pytorch_names():
    def listed(m):
        x = m.ones(2, 3, requires_grad=True)
        nodes = [x * x, x.exp(), x.sum(1), x.max(1)[0], x.sum(), x.mean(), x.mean(0)]  # sum(), mean(): no dim kept
        return [(names := sorted(a for a in dir(y.grad_fn) if a.startswith(("_saved_", "_raw_saved_"))),
                 [getattr(y.grad_fn, a) for a in names if not a.startswith("_raw")]) for y in nodes]
    assert _as_in_torch(listed)[0] == "ok"


def test_retrograd_formula_names_work_beside_pytorch_names():
    x = rg.ones(2, 3, requires_grad=True)
    y = x * x
    assert y.grad_fn._saved_input.tolist() == y.grad_fn._saved_self.tolist()
    s = x.sum(1)
    assert s.grad_fn._saved_input_shape == s.grad_fn._saved_self_sym_sizes == (2, 3)
    values, _ = x.max(1)
    assert values.grad_fn._saved_result[1].tolist() == values.grad_fn._saved_indices.tolist() == [0, 0]


# The PyTorch names retrograd's node lacks, by op: its formulas are written differently, or save
# shapes instead of tensors.
PYTORCH_ONLY = {
    "convolution": {"dilation", "input", "output_padding", "padding", "stride", "transposed"},
    "elu": {"input_scale"},
    "embedding": {"sparse", "weight_sym_argsize_0"}, "gather": {"self", "sparse_grad"},
    "index_add": {"source", "source_dim"}, "index_copy": {"source", "source_dim"},
    "addmm": {"mat1_sym_sizes", "mat1_sym_strides"},
    "linalg_det": {"LU", "pivots"}, "linalg_slogdet": {"LU", "pivots"}, "linalg_solve": {"LU", "pivots"},
    "linalg_svd": {"S_sym_argsize_minus_1"}, "linalg_lstsq": {"solution"}, "layer_norm": {"bias"},
    "masked_select": {"self"}, "max_pool2d_with_indices": {"ceil_mode", "padding"},
    "mm": {"mat2_sym_sizes", "mat2_sym_strides", "self_sym_sizes", "self_sym_strides"},
    "native_batch_norm": {"result1", "result2", "running_mean", "running_var", "training"},
    "nll_loss": {"total_weight"}, "select_index": {"dim", "index"},
    "slice_index": {"dim", "end", "start", "step"}, "split": {"self_sym_sizes", "split_size"},
    "squeeze": {"dim"},
    "outer": {"other"}, "erfinv": {"self"},
    "convolution_transpose": {"output_padding", "transposed"},
    "ctc_loss": {"result0", "result1"}, "group_norm": {"C", "HxW", "N", "group", "result1", "result2"},
    "embedding_bag": {"result2", "result3", "scale_grad_by_freq", "sparse", "weight_sym_argsize_0"},
    "rrelu_with_noise": {"lower", "noise", "training", "upper"},
    "take": {"self"},  # the backward needs only its shape, as gather's
    "frexp": {"exponent"}, "triangular_solve": {"solution"},  # retrograd's formulas read them from the result
    # pivoting is always on (PyTorch's CPU refuses it off), and lu_unpack's formula reads its input's shape
    "linalg_lu": {"pivot"}, "linalg_lu_factor_ex": {"pivot"},
    "lu_unpack": {"LU_data_sym_argsize_minus_1", "LU_data_sym_argsize_minus_2"},
}
# Names PyTorch always saves and retrograd only where a formula that runs needs them (else None).
SAVED_WHERE_NEEDED = {"add": {"alpha"}, "sub": {"alpha"}, "pow": {"exponent"},
                      **{op: {"alpha", "beta"} for op in ("addmm", "addmv", "baddbmm", "addr")},
                      "addbmm": {"alpha", "beta", "batch1_sym_argsize_0", "batch1_sym_argsize_1", "batch2_sym_argsize_2"},
                      "ldexp": {"result"}}
# Names both save, with other values: retrograd's op does it in other steps (indexing keeps NumPy
# indices, max_pool2d its resolved stride, nll_loss a 1-d target).
OTHER_VALUES = {"index": {"indices", "self_sym_sizes"}, "index_put": {"indices"}, "max_pool2d_with_indices": {"stride"},
                "nll_loss": {"target"}, "select_index": {"self_sym_sizes"},
                "norm": {"ord"}, "outer": {"self"},  # norm keeps "fro"; outer is mul of reshaped inputs in PyTorch
                # the 2-d pairs of the column ops; mode and padding_idx as given, and the max's rows (not
                # offset2bag); PReLU's weight before PyTorch reshapes it
                "convolution_transpose": {"dilation", "padding", "stride"},
                "embedding_bag": {"mode", "padding_idx", "result1"}, "prelu": {"weight"},
                "linalg_eigh": {"eigenvectors"},  # eigenvectors are defined up to sign; LAPACK's drivers differ
                # the losses keep their reduction's name; PyTorch, its enum
                "binary_cross_entropy": {"reduction"}, "binary_cross_entropy_with_logits": {"reduction"}}


def _sample_tensors(sample, m):
    out = []
    for inp in sample.inputs:
        if isinstance(inp, _samples.Const):
            out.append(m.from_numpy(inp.array.copy()))
            continue
        array = np.asarray(inp).copy()
        t = m.from_numpy(array)
        out.append(t.requires_grad_(True) if array.dtype.kind == "f" else t)
    return out


def _flat(out):
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _node_of(sample, m, call):
    nodes = [t.grad_fn for t in _flat(call(m, *_sample_tensors(sample, m))) if getattr(t, "grad_fn", None)]
    return nodes[0] if nodes else None


def _same_saved(value, expected):
    if isinstance(expected, torch.Tensor):
        return (isinstance(value, rg.Tensor) and tuple(value.shape) == tuple(expected.shape)
                and str(value.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
                and np.allclose(value.detach().numpy(), expected.detach().numpy(), equal_nan=True))
    if isinstance(expected, (tuple, list)):
        return (isinstance(value, type(expected)) and len(value) == len(expected)
                and all(_same_saved(v, e) for v, e in zip(value, expected)))
    if type(expected) is int and expected >= 2 ** 63:  # PyTorch shows a negative int64 as unsigned
        expected -= 2 ** 64
    if type(expected) in (int, float) and type(value) in (int, float):  # a default Scalar: 1 or 1.0
        return value == expected
    return type(value) is type(expected) and value == expected


def _registry_cases():
    return [pytest.param(name, i, id=f"{name}-{i}") for name in sorted(_samples.SAMPLES) if name in REGISTRY
            for i, sample in enumerate(_samples.SAMPLES[name]) if sample.torch and REGISTRY[name].differentiable]


@pytest.mark.parametrize("name,i", _registry_cases())
def test_every_registered_node_saves_what_pytorch_saves_under_its_names(name, i):
    sample = _samples.SAMPLES[name][i]
    node = _node_of(sample, rg, sample.call)
    expected = _node_of(sample, torch, sample.torch_call)
    if type(node) is not REGISTRY[name].node_cls or expected is None or \
            re.sub(r"\d+$", "", expected.name()) != re.sub(r"\d+$", "", type(node).__name__):
        pytest.skip("PyTorch records this call with another node")
    for attr in (a for a in dir(expected) if a.startswith("_saved_")):
        saved_name = attr[len("_saved_"):]
        if saved_name in OTHER_VALUES.get(name, ()):
            continue
        if saved_name in PYTORCH_ONLY.get(name, ()):
            assert not hasattr(node, attr), f"{attr} is saved now: take it out of PYTORCH_ONLY"
            continue
        value = getattr(node, attr)
        if value is None and saved_name in SAVED_WHERE_NEEDED.get(name, ()):
            continue
        assert _same_saved(value, getattr(expected, attr)), attr
        if isinstance(getattr(expected, attr), torch.Tensor):
            raw = getattr(node, f"_raw_saved_{saved_name}", None)
            # a Python number PyTorch took as a tensor stays a number in retrograd, with no SavedTensor
            assert type(raw) is SavedTensor or (name in ("mul", "div", "div_rounding", "div_mode_none")
                                                and value.dim() == 0), attr


# -- after backward ---------------------------------------------------------------------------------
def test_saved_tensors_accessed_after_backward_raise_backward_a_second_time():
    def after(m):
        x = m.ones(2, requires_grad=True)
        y = x * x
        y.sum().backward()
        return y.grad_fn._saved_self
    assert _as_in_torch(after)[1].startswith("Trying to backward through the graph a second time")


def test_raw_saved_tensor_after_backward_exists_but_unpacking_raises():
    def unpacked(m):
        x = m.ones(2, requires_grad=True)
        y = x.exp()
        y.sum().backward()
        saved = y.grad_fn._raw_saved_result
        assert type(saved).__name__ == "SavedTensor"
        return saved.unpack()
    assert _as_in_torch(unpacked)[1].startswith("Trying to backward through the graph a second time")


def test_register_hooks_after_backward_raises():
    def registered(m):
        x = m.ones(2, requires_grad=True)
        y = x * x
        y.sum().backward()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    assert _as_in_torch(registered) == ("RuntimeError", "Calling register_hooks on a saved tensor after it has "
                                                        "been freed.")


def test_saved_list_of_tensors_after_backward_raises_also_raw():
    x = rg.ones(2, requires_grad=True)
    y = rg.einsum("i,i->", x, x * 2)
    assert len(y.grad_fn._raw_saved_operands) == 2 and y.grad_fn._saved_operands[0].tolist() == [1.0, 1.0]
    y.backward()
    for attr in ("_saved_operands", "_raw_saved_operands"):
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            getattr(y.grad_fn, attr)


def test_saved_scalars_stay_after_backward():
    def after(m):
        x = m.ones(2, 3, requires_grad=True)
        y = x.sum(1)
        y.sum().backward()
        return y.grad_fn._saved_dim, y.grad_fn._saved_self_sym_sizes
    assert _as_in_torch(after) == ("ok", ("tuple", [("tuple", [1]), ("tuple", [2, 3])]))


def _backward_twice_cases():
    return [pytest.param(name, i, id=f"{name}-{i}") for name in sorted(_samples.SAMPLES) if name in REGISTRY
            for i, sample in enumerate(_samples.SAMPLES[name]) if REGISTRY[name].differentiable and sample.grad]


def _holds_saved_tensor(value):
    if type(value) is SavedTensor:
        return True
    return type(value) in (list, tuple) and any(type(v) is SavedTensor for v in value)


@pytest.mark.parametrize("name,i", _backward_twice_cases())
def test_backward_through_every_node_that_saved_tensors_a_second_time_raises(name, i):
    sample = _samples.SAMPLES[name][i]
    outputs = [t for t in _flat(sample.call(rg, *_sample_tensors(sample, rg)))
               if isinstance(t, rg.Tensor) and t.requires_grad]
    nodes = [t.grad_fn for t in outputs if type(t.grad_fn) is REGISTRY[name].node_cls]
    if not nodes or not any(_holds_saved_tensor(v) for v in nodes[0].saved_values().values()):
        pytest.skip("the node saved no tensor: it may run again, as in PyTorch")
    node = nodes[0]
    roots = [t for t in outputs if t.grad_fn is node]
    rg.autograd.backward([t.sum() for t in roots])
    with pytest.raises(RuntimeError) as info:
        rg.autograd.backward([t.sum() for t in roots])
    x = torch.ones(1, requires_grad=True)
    y = x.exp()
    y.backward()
    with pytest.raises(RuntimeError) as expected:
        y.backward()
    assert _first_sentence(info.value) == _first_sentence(expected.value)
    for saved_name, value in node.saved_values().items():
        if _holds_saved_tensor(value):
            with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
                getattr(node, f"_saved_{saved_name}")


# Nodes that save a tensor in PyTorch and none in retrograd, so that a second backward works:
# indexing keeps its indices as NumPy arrays, a rounded division's zero gradient needs nothing.
# (A Python number, as in x * 3, PyTorch also saves as a tensor and retrograd as the number.)
SAVED_TENSORS_ONLY_IN_PYTORCH = {"index", "index_put", "div_rounding"}


def _lone_node(sample, m, call, node_kind):
    """The sample's node of ``node_kind`` and its outputs, where the node is the graph's only one (else None)."""
    outputs = [t for t in _flat(call(m, *_sample_tensors(sample, m))) if isinstance(t, m.Tensor) and t.requires_grad]
    nodes = [t.grad_fn for t in outputs if t.grad_fn is not None and node_kind(t.grad_fn)]
    if not nodes or any(n is not None and type(n).__name__ != "AccumulateGrad" for n, _ in nodes[0].next_functions):
        return None, None
    return nodes[0], [t for t in outputs if t.grad_fn is nodes[0]]


def _second_backward(m, roots):
    m.autograd.backward([t.sum() for t in roots])
    return _outcome(lambda m: m.autograd.backward([t.sum() for t in roots]), m)


@pytest.mark.parametrize("name,i", [c for c in _backward_twice_cases()
                                    if _samples.SAMPLES[c.values[0]][c.values[1]].torch])
def test_backward_a_second_time_through_a_node_that_saved_no_tensor_runs_as_in_pytorch(name, i):
    sample = _samples.SAMPLES[name][i]
    node, roots = _lone_node(sample, rg, sample.call, lambda n: type(n) is REGISTRY[name].node_cls)
    if node is None or any(_holds_saved_tensor(v) for v in node.saved_values().values()):
        pytest.skip("not a graph of this node alone, or one that saved a tensor (see the test above)")
    kind = re.sub(r"\d+$", "", type(node).__name__)
    expected_node, expected_roots = _lone_node(sample, torch, sample.torch_call,
                                               lambda n: re.sub(r"\d+$", "", n.name()) == kind)
    if expected_node is None:
        pytest.skip("PyTorch records this call with another graph")
    tensors_saved = [a[len("_saved_"):] for a in dir(expected_node) if a.startswith("_saved_")
                     and any(isinstance(v, torch.Tensor) for v in _flat(getattr(expected_node, a)))]
    wrapped_numbers = [n for n in tensors_saved if not hasattr(node, f"_raw_saved_{n}")
                       and isinstance(getattr(node, f"_saved_{n}", None), rg.Tensor)]
    got, expected = _second_backward(rg, roots), _second_backward(torch, expected_roots)
    assert got == ("ok", None)
    if tensors_saved:
        assert expected[0] == "RuntimeError" and expected[1].startswith("Trying to backward through the graph a "
                                                                         "second time")
        assert name in SAVED_TENSORS_ONLY_IN_PYTORCH or wrapped_numbers == tensors_saved
    else:
        assert expected == ("ok", None)


# -- register_hooks on one saved tensor -------------------------------------------------------------
@pytest.mark.parametrize("hooks", [pytest.param(lambda: (lambda t: t,), id="one"),
                                   pytest.param(lambda: (1, 2), id="not-callable"),
                                   pytest.param(lambda: (lambda t: t, lambda t: t, lambda t: t), id="three")])
def test_register_hooks_takes_two_callables(hooks):
    def registered(m):
        y = m.ones(2, requires_grad=True) * 2  # kept: PyTorch's SavedTensor does not keep its node alive
        y.grad_fn._raw_saved_self.register_hooks(*hooks())
    assert _as_in_torch(registered) == ("TypeError", "register_hooks(): incompatible function arguments.")


def test_register_hooks_twice_raises():
    def registered(m):
        y = m.ones(2, requires_grad=True).exp()
        saved = y.grad_fn._raw_saved_result
        saved.register_hooks(lambda t: t, lambda t: t)
        saved.register_hooks(lambda t: t, lambda t: t)
    assert _as_in_torch(registered) == ("RuntimeError", "Calling register_hooks on a saved tensor whose hooks have "
                                                        "already been set.")


@pytest.mark.parametrize("saved_name", ["self", "other"])
def test_registered_hooks_give_backward_the_unpacked_value(saved_name):
    def grads(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True) * 1
        y = a * b
        getattr(y.grad_fn, f"_raw_saved_{saved_name}").register_hooks(lambda t: t * 2, lambda p: p + 1)
        shown = getattr(y.grad_fn, f"_saved_{saved_name}")
        y.sum().backward()
        return shown, a.grad
    assert _as_in_torch(grads)[0] == "ok"


def test_registered_hooks_keep_the_saved_leaf_connected():
    def saved(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t.detach(), lambda t: t)
        unpacked = y.grad_fn._saved_self
        return unpacked, unpacked.requires_grad, unpacked.grad_fn
    assert _as_in_torch(saved)[0] == "ok"


def test_register_hooks_pack_hook_modifying_its_input_raises():
    def registered(m):
        y = m.ones(2, requires_grad=True).exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t.add_(1), lambda t: t)
    assert _as_in_torch(registered) == ("RuntimeError", "A saved tensor pack hook is modifying its input in place.")


# -- saved_tensors_hooks --------------------------------------------------------------------------
def test_pack_hook_modifying_its_input_raises_and_the_forward_runs_after():
    def forward(m):
        a = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            try:
                (a * 1).sin()
            except RuntimeError as exc:
                message = _first_sentence(exc)
        return message, a.exp(), a._version
    assert _as_in_torch(forward) == ("ok", ("tuple", ["A saved tensor pack hook is modifying its input in place.",
                                                      ("tensor", (2,), "float32", [2.71828] * 2, True), 0]))


def test_pack_hook_gets_the_saved_tensor_itself_without_grad_mode():
    def packed(m):
        b = m.ones(2, requires_grad=True) * 2
        seen = []
        with m.autograd.graph.saved_tensors_hooks(lambda t: seen.append((t, m.is_grad_enabled())) or t.detach(),
                                                  lambda t: t):
            d = b.exp()
            b * b
        return seen[0][0] is d, seen[1][0] is b, seen[1][0].grad_fn is b.grad_fn, [s[1] for s in seen]
    assert _as_in_torch(packed) == ("ok", ("tuple", [True, True, True, ("list", [False, False, False])]))


def test_tensor_a_pack_hook_returned_is_used_as_modified_later():
    def grads(m):
        a = m.ones(3, requires_grad=True)
        b = a * 2
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            c = b * b
        b.add_(1)  # the hooks own the saved value: no version check, the modified value is used
        c.sum().backward()
        return a.grad
    assert _as_in_torch(grads) == ("ok", ("tensor", (3,), "float32", [12.0] * 3, False))


@pytest.mark.parametrize("packed", ["input-itself", "own-clone"])
def test_what_a_pack_hook_returned_modified_in_place_afterwards_is_used_unchecked(packed):
    def grads(m):
        kept = []

        def pack(t):
            kept.append(t if packed == "input-itself" else t.detach().clone())
            return kept[-1]
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 2
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            c = (b * b).sum()
        for t in kept:
            with m.no_grad():
                t.mul_(3)
        c.backward()
        return a.grad, b._version
    assert _as_in_torch(grads)[0] == "ok"


def test_pack_hook_may_return_anything_that_unpack_turns_back_into_a_tensor():
    def grads(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.tolist(), lambda p: m.tensor(p)):
            y = a * a.exp()
        y.sum().backward()
        return a.grad
    assert _as_in_torch(grads)[0] == "ok"


def test_unpack_hook_returning_a_non_tensor_raises_type_error():
    def grads(m):
        a = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: 42, lambda p: p):
            y = a * a
        y.sum().backward()
    assert _as_in_torch(grads) == ("TypeError", "Output of saved tensor unpack_hook expected to be a Tensor but got "
                                                "result of type int")


def test_unpacked_tensor_shares_the_unpack_hook_result_version_counter():
    def unpacked(m):
        v = m.ones(2)
        with m.autograd.graph.saved_tensors_hooks(lambda t: 0, lambda p: v):
            e = m.ones(2, requires_grad=True).exp()
            f = m.ones(2).mul(m.ones(2, requires_grad=True))
        result = e.grad_fn._saved_result
        v.add_(1)
        return f.grad_fn._saved_self is v, result._version, result.grad_fn is e.grad_fn
    assert _as_in_torch(unpacked) == ("ok", ("tuple", [True, 1, True]))


def test_innermost_saved_tensors_hooks_apply():
    def order(m):
        log = []
        x = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t.detach(), lambda t: t):
            with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t.detach(), lambda t: t):
                x * x
            x.sin()
        x.cos()
        return log
    assert _as_in_torch(order) == ("ok", ("list", ["inner", "inner", "outer"]))


def test_hooks_saved_during_a_double_backward_are_the_ones_in_force():
    def grads(m):
        log = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append(1) or t.detach(), lambda t: t):
            (g,) = m.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad, len(log) > 0
    assert _as_in_torch(grads)[0] == "ok"


def test_wrapped_numbers_are_not_given_to_pack_hooks():
    def grads(m):
        def refuse(t):
            raise RuntimeError("this hook should not be called")
        a = m.ones(5, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(refuse, refuse):
            out = (a * 3).sum()
            return m.autograd.grad(out, (a,))
    assert _as_in_torch(grads)[0] == "ok"


def test_extra_exit_of_saved_tensors_hooks_from_an_unpack_hook_does_not_crash():
    def run(m):
        def unpack(x):
            ctx_1.__exit__()
            return x
        ctx_1 = m.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        ctx_2 = m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x)
        for _ in range(3):
            with ctx_2:
                ctx_1.__enter__()
                x = m.ones(3, 3, requires_grad=True)
                x.sin().sum().backward()
        for _ in range(3):
            ctx_1.__exit__()
        y = m.tensor(1.0, requires_grad=True).exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)  # no default hooks are left
        return x.grad
    assert _as_in_torch(run)[0] == "ok"
    assert rg.autograd.graph._saved_hooks_state.hooks is None


# -- freeing what the hooks packed ------------------------------------------------------------------
class _Packed:
    def __init__(self, tensor):
        self.tensor = tensor.detach()


@pytest.mark.parametrize("lib", ["retrograd", "torch"])
def test_packed_values_are_freed_by_backward(lib):
    m = rg if lib == "retrograd" else torch
    refs = []

    def pack(t):
        packed = _Packed(t)
        refs.append(weakref.ref(packed))
        return packed
    x = m.ones(3, requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, lambda p: p.tensor):
        y = (x * x).exp().sum()
    assert len(refs) == 3 and all(r() is not None for r in refs)
    y.backward()
    assert all(r() is None for r in refs)


@pytest.mark.parametrize("lib,detach", [pytest.param("retrograd", True, id="retrograd-packs-detached"),
                                         pytest.param("torch", True, id="torch-packs-detached"),
                                         pytest.param("retrograd", False, id="retrograd-packs-itself")])
def test_packed_values_are_freed_with_the_graph(lib, detach):
    # A pack hook returning its input makes a saved output hold its own graph: retrograd's
    # collector frees that cycle; PyTorch's, through its C++ graph, cannot (its docs warn of it).
    m = rg if lib == "retrograd" else torch
    refs = []

    def pack(t):
        refs.append(weakref.ref(t))
        return t.detach() if detach else t  # returning t itself forms a cycle: freed by the collector
    x = m.ones(3, requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, lambda p: p):
        y = (x * x).exp()
    del y
    gc.collect()
    assert [r() is None for r in refs] == [False, False, True]  # the output is freed; x, the leaf, lives on


def test_saved_tensors_hooks_entered_inside_an_unpack_hook_leak_nothing():
    def scope(m):
        def unpack(x):
            weak_ctx().__enter__()
            return x
        ctx = m.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        weak_ctx = weakref.ref(ctx)
        x = m.ones(3, requires_grad=True)
        with ctx:
            x.sin().sum().backward()
        return weakref.ref(x)
    for m in (rg, torch):
        ref = scope(m)
        gc.collect()
        assert ref() is None
    assert rg.autograd.graph._saved_hooks_state.hooks is None  # what the unpack hook entered did not outlive it


# -- detach_() of a saved tensor ----------------------------------------------------------------------
def test_backward_through_a_saved_input_detached_in_place_raises():
    def grads(m):
        a = m.tensor(1.0, requires_grad=True).clone()
        b = a.sin()
        a.detach_()
        b.backward()
    assert _as_in_torch(grads) == ("RuntimeError", "Trying to use a saved tensor that has been detached in-place, "
                                                   "i.e. with .detach_().This is not supported, please use "
                                                   "out-of-place `.detach()` instead")


def test_backward_through_a_saved_output_detached_in_place_works():
    def grads(m):
        x = m.tensor(1.0, requires_grad=True)
        a = x.clone()
        b = a.exp()
        a.detach_()
        b.backward()
        return x.grad
    assert _as_in_torch(grads)[0] == "ok"


def test_saved_input_detached_in_place_is_shown_without_history():
    def shown(m):
        a = m.tensor([1.0, 2.0], requires_grad=True).clone()
        b = a * a
        a.detach_()
        return b.grad_fn._saved_self, b.grad_fn._saved_self.grad_fn
    assert _as_in_torch(shown)[0] == "ok"


@pytest.mark.parametrize("which", ["detached-input", "output"])
def test_unpacking_a_raw_saved_tensor_without_its_node_raises_as_detached(which):
    def unpacked(m):
        a = m.tensor([1.0, 2.0], requires_grad=True).clone()
        if which == "output":
            e = a.exp()
            return e.grad_fn._raw_saved_result.unpack()
        b = a * a
        a.detach_()
        return b.grad_fn._raw_saved_self.unpack()
    assert _as_in_torch(unpacked)[1].startswith("Trying to use a saved tensor that has been detached in-place")


def test_saved_input_detached_in_place_with_hooks_keeps_its_saved_history():
    def grads(m):
        x = m.tensor(1.0, requires_grad=True)
        a = x.clone()
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            b = a.sin()
        a.detach_()
        b.backward()
        return x.grad
    assert _as_in_torch(grads)[0] == "ok"


# -- save_on_cpu and disable_saved_tensors_hooks ------------------------------------------------------
@pytest.mark.parametrize("pin_memory", [False, True])
def test_save_on_cpu_gives_the_same_gradients(pin_memory):
    def grads(m):
        a = m.tensor([0.5, 1.0, 2.0], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.save_on_cpu(pin_memory=pin_memory):
            y = (a * a.exp()).sin().sum()
        y.backward()
        return a.grad
    assert _as_in_torch(grads)[0] == "ok"


def test_saved_tensors_hooks_inside_disable_saved_tensors_hooks_raise_its_message():
    def entered(m):
        with m.autograd.graph.disable_saved_tensors_hooks("saved tensor hooks are off here"):
            with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    assert _as_in_torch(entered) == ("RuntimeError", "saved tensor hooks are off here")


def test_save_on_cpu_inside_disable_saved_tensors_hooks_raises_its_message():
    def entered(m):
        with m.autograd.graph.disable_saved_tensors_hooks("no save_on_cpu"):
            with m.autograd.graph.save_on_cpu():
                pass
    assert _as_in_torch(entered) == ("RuntimeError", "no save_on_cpu")


def test_disable_saved_tensors_hooks_while_hooks_are_set_raises_and_keeps_them():
    def entered(m):
        log = []
        with m.autograd.graph.saved_tensors_hooks(lambda x: log.append(1) or x.detach(), lambda x: x):
            try:
                with m.autograd.graph.disable_saved_tensors_hooks("not while hooks are set"):
                    pass
            except RuntimeError as exc:
                log.append(str(exc))
            m.ones(2, requires_grad=True).exp()
        return log
    assert _as_in_torch(entered) == ("ok", ("list", ["not while hooks are set", 1]))


def test_nested_disable_saved_tensors_hooks_restores_the_outer_message():
    def entered(m):
        messages = []
        with m.autograd.graph.disable_saved_tensors_hooks("outer"):
            with m.autograd.graph.disable_saved_tensors_hooks("inner"):
                try:
                    m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()
                except RuntimeError as exc:
                    messages.append(str(exc))
            try:
                m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()
            except RuntimeError as exc:
                messages.append(str(exc))
        with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            messages.append("enabled")
        return messages
    assert _as_in_torch(entered) == ("ok", ("list", ["inner", "outer", "enabled"]))


# -- allow_mutation_on_saved_tensors --------------------------------------------------------------------
def test_mutating_a_saved_tensor_under_allow_mutation_keeps_the_saved_value():
    def grads(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]], requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
            return a.grad, b
    assert _as_in_torch(grads)[0] == "ok"


def test_mutating_a_saved_tensor_without_allow_mutation_raises():
    def grads(m):
        a = m.tensor([0.5, 1.0], requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
    for m in (rg, torch):
        error, message = _outcome(grads, m)
        assert error == "RuntimeError" and message.startswith(
            "one of the variables needed for gradient computation has been modified by an inplace operation: ")


@pytest.mark.parametrize("case", ["save-view-modify-base", "save-base-modify-view", "save-twice",
                                  "save-then-backward-then-modify", "modify-twice", "double-backward"])
def test_allow_mutation_clones_what_shares_the_written_memory(case):
    def grads(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = m.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]], requires_grad=True)
            b = a.clone()
            if case == "save-view-modify-base":
                out = (b[0] ** 2).sum()
                b.mul_(3)
            elif case == "save-base-modify-view":  # (PyTorch misses a view at an offset, b[1], and uses its new value)
                out = (b ** 2).sum()
                b[:1].mul_(3)
            elif case == "save-twice":
                out = (b * b).sum() + (b ** 3).sum()
                b.exp_()
            elif case == "save-then-backward-then-modify":
                out = (b ** 2).sum()
                out.backward()
                b.sin_()
                return a.grad, len(ctx.cloned)
            elif case == "modify-twice":
                out = (b ** 2).sum()
                b.sin_()
                out2 = (b ** 2).sum()
                b.cos_()
                out = out + out2
            else:
                out = (b ** 3).sum()
                b.sin_()
                (g,) = m.autograd.grad(out, a, create_graph=True)
                g.sum().backward()
                return g, a.grad
            out.backward()
            return a.grad, len(ctx.cloned)
    assert _as_in_torch(grads)[0] == "ok"


def test_allow_mutation_on_saved_tensors_cannot_be_nested():
    def nested(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            with m.autograd.graph.allow_mutation_on_saved_tensors():
                pass
    assert _as_in_torch(nested) == ("RuntimeError", "allow_mutation_on_saved_tensors contexts cannot be nested")


@pytest.mark.parametrize("where", ["outside", "another-context"])
def test_backward_outside_the_allow_mutation_context_that_saved_raises(where):
    def grads(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.ones(2, 3, requires_grad=True)
            out = (a.clone() ** 2).sum()
        if where == "outside":
            out.backward()
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            out.backward()
    assert _as_in_torch(grads) == ("AssertionError", "Trying to backward outside of the "
                                                     "'allow_mutation_on_saved_tensors' contextin which the graph "
                                                     "was originally recorded.")


def test_allow_mutation_state_is_cleared_on_exit_and_the_context_can_reopen():
    with rg.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = rg.ones(2, requires_grad=True)
        b = a.clone()
        out = (b * b).sum()
        b.add_(1)
        assert len(ctx.cloned) == 1 and not ctx.original  # b, saved twice at one version: one handle, cloned
        out.backward()
    assert not ctx.cloned and not ctx.original and not ctx.sid_to_tid
    assert a.grad.tolist() == [2.0, 2.0]
    with rg.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b * b).sum()
        b.add_(1)
        out.backward()
    assert a.grad.tolist() == [4.0, 4.0]
