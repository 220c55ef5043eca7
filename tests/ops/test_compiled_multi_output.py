"""The C op call on ops of several outputs (split, chunk, unbind, native layer_norm, max/min/sort/topk with their
indices, var_mean...) does what the Python definition, ``call_op``, does, and what PyTorch does.

See Note [The compiled op call]. In the "python" variant (and with RETROGRAD_COMPILED=0) both sides of each
comparison are the Python code; the comparisons with PyTorch hold in both.
"""
import gc
import sys

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.ops import _compiled
from retrograd.ops._call import call_op
from retrograd.ops._declarations import REGISTRY

from errors_like_torch import same_error


def _leaf(*shape):
    return rg.randn(*shape, dtype=rg.float64, requires_grad=True)


def _bound(op, args, kwargs):
    """The call's arguments bound to the op's parameters, defaults filled in: what call_op takes."""
    bound = op.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _c_takes(op, args):
    """Whether the C op call runs this call itself (False where it is not built or is switched off)."""
    module = _compiled.compiled_module()
    if module is None or not module.is_enabled():
        return False
    return module.call(_compiled.compiled_spec(op), *args) is not None


# (op name, arguments after the input, keyword arguments); the input is a fresh (4, 6) float64 leaf's
# function (x * 1.5, so that the outputs of view ops are views of a tensor with a history).
CASES = [
    ("split", (2, 1), {}),
    ("split", ([1, 5],), {"dim": 1}),
    ("split_with_sizes", ([3, 1],), {}),
    ("unbind", (1,), {}),
    ("unsafe_split", (3,), {"dim": 1}),
    ("layer_norm", ((6,), "w", "b", 1e-5), {}),
    ("layer_norm", ((6,), None, None, 1e-5), {}),
    ("max_dim", (1,), {}),
    ("min_dim", (0, True), {}),
    ("sort", (), {}),
    ("topk", (2,), {}),
    ("var_mean", (1,), {}),
    ("std_mean", (), {}),
    ("aminmax", (), {}),
    ("frexp", (), {}),
    ("cummax", (1,), {}),
]


def _make(case):
    name, rest, kwargs = case
    rg.manual_seed(5)
    x = _leaf(4, 6)
    w, b = _leaf(6), _leaf(6)
    rest = tuple(w if a == "w" else b if a == "b" else a for a in rest)
    return x, (x * 1.5,) + rest, kwargs


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_multi_output_call_builds_what_call_op_builds(case, engine_loop, slot_fields):
    op = REGISTRY[case[0]]
    leaf_c, args_c, kwargs = _make(case)
    leaf_p, args_p, _ = _make(case)
    if engine_loop == "compiled":
        assert _c_takes(op, _bound(op, args_c, kwargs)), "the C op call declined a plain call"
    fast = tuple(op.function(*args_c, **kwargs))
    slow = tuple(call_op(op, _bound(op, args_p, kwargs)))
    assert len(fast) == len(slow)
    for j, (f, s) in enumerate(zip(fast, slow)):
        np.testing.assert_array_equal(f.detach().numpy(), s.detach().numpy())
        assert f.dtype is s.dtype and f.requires_grad == s.requires_grad and f.output_nr == s.output_nr == (
            j if s.requires_grad else 0)
        assert type(f.grad_fn) is type(s.grad_fn)
        assert (f._base is not None) == (s._base is not None)
        if s._base is not None:
            assert f._base is args_c[0] and s._base is args_p[0]
            assert f._version_counter is args_c[0]._version_counter
            assert f._view_version == s._view_version and f._view_creation is s._view_creation
            assert [(step[0], step[1], step[2]) for step in f._view_fn] == [
                (step[0], step[1], step[2]) for step in s._view_fn]
    node_f, node_s = fast[0].grad_fn, slow[0].grad_fn
    if node_s is None:
        return
    assert all(t.grad_fn is node_f for t in fast if t.requires_grad)
    assert node_f.input_metadata == node_s.input_metadata
    assert [type(n) for n, _ in node_f.next_functions] == [type(n) for n, _ in node_s.next_functions]
    assert node_f.next_functions[0][0] is fast[0].grad_fn.next_functions[0][0]
    assert len(node_f._saved) == len(node_s._saved)
    for sf, ss in zip(node_f._saved, node_s._saved):
        pairs = list(zip(sf, ss)) if type(sf) is tuple and sf and type(sf[0]).__name__ == "SavedTensor" else [
            (sf, ss)]
        for a, b in pairs:
            if type(b).__name__ != "SavedTensor":
                assert type(a) is type(b) and (a == b or a is b)
                continue
            fa, fb = slot_fields(a), slot_fields(b)
            assert fa["is_output"] == fb["is_output"] and fa["saved_version"] == fb["saved_version"]
            assert fa["output_nr"] == fb["output_nr"] and fa["requires_grad"] == fb["requires_grad"]
            assert (fa["original"] is None) == (fb["original"] is None)
    seeds = [rg.ones_like(t) if t.requires_grad else None for t in fast]
    outs_f = [t for t in fast if t.requires_grad]
    outs_s = [t for t in slow if t.requires_grad]
    grads_f = rg.autograd.grad(outs_f, [leaf_c], [s for s in seeds if s is not None])
    grads_s = rg.autograd.grad(outs_s, [leaf_p], [rg.ones_like(t) for t in outs_s])
    np.testing.assert_allclose(grads_f[0].numpy(), grads_s[0].numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["split", "unbind", "layer_norm", "max", "sort", "var_mean"])
def test_outputs_match_pytorchs(name):
    # requires_grad, output_nr, grad_fn's name and integer outputs outside the graph, as PyTorch's
    data = np.random.default_rng(1).standard_normal((3, 4))
    results = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=True) * 2
        out = {"split": lambda: x.split(2, 1), "unbind": lambda: x.unbind(0),
               "layer_norm": lambda: lib.nn.functional.layer_norm(x, (4,)), "max": lambda: x.max(1),
               "sort": lambda: x.sort(1), "var_mean": lambda: lib.var_mean(x, 1)}[name]()
        outs = (out,) if isinstance(out, lib.Tensor) else tuple(out)
        results.append([(t.requires_grad, t.output_nr, None if t.grad_fn is None else t.grad_fn.name(),
                         str(t.dtype).split(".")[1], t.detach().numpy().round(10).tolist()) for t in outs])
    assert results[0] == results[1]


def test_views_of_a_split_modified_in_place_raise_pytorchs_error():
    # The outputs of a split are views made by a function of several views: writing into one is PyTorch's
    # error; made under no_grad, its error for that; the version counter is the base's
    data = np.arange(6.0)
    for make in (lambda lib, x: x.split(2), lambda lib, x: x.chunk(3), lambda lib, x: x.view(3, 2).unbind(0)):
        same_error(lambda lib: make(lib, lib.tensor(data, requires_grad=True) * 1)[1].mul_(2))

        def under_no_grad(lib):
            x = lib.tensor(data, requires_grad=True) * 1
            with lib.no_grad():
                piece = make(lib, x)[0]
            piece.add_(1)
        same_error(under_no_grad)
    versions = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=True) * 1
        a, b, c = x.split(2)
        with lib.no_grad():
            x.add_(1)
            b.mul_(3)  # a write into one view under no_grad: the base's counter, shared by every view
        versions.append((a._version, b._version, c._version, x._version, b.tolist(), a.tolist()))
    assert versions[0] == versions[1] == (2, 2, 2, 2, [9.0, 12.0], [1.0, 2.0])


def test_hooks_on_outputs_see_their_gradients():
    data = np.random.default_rng(2).standard_normal((2, 6))
    seen = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=True)
        w = lib.ones(6, dtype=x.dtype, requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (6,), w)
        a, b, c = y.split(2, 1)
        got = []
        for t in (a, c):
            t.register_hook(lambda g, got=got: got.append(g.tolist()))
        b.retain_grad()
        (a * 2 + b + c * 3).sum().backward()
        seen.append((got, b.grad.tolist(), np.round(x.grad.numpy(), 10).tolist()))
    assert seen[0] == seen[1]


def test_no_grad_and_inference_mode_record_nothing():
    x = _leaf(4, 6) * 1
    with rg.no_grad():
        a, b = x.split(3, 1)
        y, mean, rstd = REGISTRY["layer_norm"].function(x, (6,), None, None, 1e-5)
        v, i = x.max(1)
    for t in (y, mean, rstd, v, i):
        assert not t.requires_grad and t.grad_fn is None
    tx = torch.randn(4, 6, requires_grad=True) * 1
    with torch.no_grad():
        ta, tb = tx.split(3, 1)
    for t, want in ((a, ta), (b, tb)):  # views made under no_grad: requiring grad through their base, as PyTorch's
        assert (t.requires_grad, t.grad_fn, t._base is x) == (want.requires_grad, want.grad_fn, want._base is tx)
    assert a._version_counter is x._version_counter
    kinds = []
    for lib, t in ((rg, x), (torch, tx)):  # views of a normal tensor stay normal tensors; the other outputs not
        with lib.inference_mode():
            pieces = t.split(3, 1) + (lib.nn.functional.layer_norm(t, (6,)),) + tuple(t.sort(0))
        kinds.append([(p.is_inference(), p.requires_grad, p.grad_fn is None) for p in pieces])
    assert kinds[0] == kinds[1]
    with torch.inference_mode():
        tx = torch.randn(4, 6, requires_grad=True) * 1
    with rg.inference_mode():
        rx = rg.randn(4, 6, requires_grad=True) * 1
    for lib, t in ((rg, rx), (torch, tx)):  # split of an inference tensor outside inference mode: inference tensors
        pieces = t.split(3, 1)
        assert [p.is_inference() for p in pieces] == [True, True]
    same_error(lambda lib: lib.randn(4, 6, requires_grad=True).split(3, 1)[0].add_(1))


def test_forward_ad_dual_inputs_go_to_python():
    # Forward-mode AD interposes on every op call: the C op call declines, and the tangents come out of the
    # Python path as PyTorch's
    data = np.random.default_rng(3).standard_normal((3, 4))
    tangent = np.random.default_rng(4).standard_normal((3, 4))
    results = []
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(data), lib.tensor(tangent))
            if lib is rg:
                assert not _c_takes(REGISTRY["split"], (x, 2, 1))
            outs = list(x.split(2, 1)) + [lib.nn.functional.layer_norm(x, (4,))] + list(x.max(1))
            results.append([None if fw.unpack_dual(t).tangent is None else
                            np.round(fw.unpack_dual(t).tangent.numpy(), 8).tolist() for t in outs])
    assert results[0] == results[1]


def test_gradients_by_finite_differences():
    x = rg.randn(3, 6, dtype=rg.float64, requires_grad=True)
    w = rg.randn(6, dtype=rg.float64, requires_grad=True)

    def f(x, w):
        a, b = rg.nn.functional.layer_norm(x, (6,), w).chunk(2, 1)
        m, _ = (a * b).max(1)
        v, mean = rg.var_mean(x.unbind(0)[1] * m.sum(), 0)
        return v + mean
    assert rg.autograd.gradcheck(f, (x, w))


def test_multi_output_call_leaks_no_reference():
    x = _leaf(4, 6)
    w = _leaf(6)
    ln = REGISTRY["layer_norm"].function

    def step():
        y = x * 1
        a, b = y.split(3, 1)
        out, mean, rstd = ln(a, (3,), None, None, 1e-5)
        v, i = b.max(1)
        (out.sum() + v.sum() + (y.unbind(0)[0] * w).sum()).backward()
        with rg.no_grad():
            x.split(2)
    for _ in range(5):
        step()
    gc.collect()
    watched = (x, w, x._data, REGISTRY["split"].node_cls, rg.float64)
    before = [sys.getrefcount(o) for o in watched]
    blocks = sys.getallocatedblocks()
    for _ in range(100):
        step()
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before
    assert sys.getallocatedblocks() - blocks < 100


def test_saved_tensor_hooks_pack_in_the_python_paths_order():
    # Arguments first, then every output of the saved result tuple (integer indices and nondiff outputs too)
    x = _leaf(2, 3) * 1
    w = _leaf(3)
    calls = [("layer_norm", (x, (3,), w, None, 1e-5)), ("max_dim", (x, 1)), ("sort", (x,)), ("var_mean", (x, 1))]
    for name, args in calls:
        op = REGISTRY[name]
        packed = []
        for run in (lambda: op.function(*args), lambda: call_op(op, _bound(op, args, {}))):
            seen = []
            with rg.autograd.graph.saved_tensors_hooks(lambda t: (seen.append((t.shape, t.dtype)), t)[1],
                                                       lambda t: t):
                run()
            packed.append(seen)
        assert packed[0] == packed[1] and packed[0], name
