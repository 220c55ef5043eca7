"""The generated fast path of an op call (ops/_signature.py) does what the generic call_op does."""
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import _compiled
from retrograd.ops._compiled import eligible
from retrograd.ops._call import call_op
from retrograd.ops._declarations import REGISTRY


def _leaf(*shape, dtype=rg.float64):
    return rg.randn(*shape, dtype=dtype, requires_grad=True)


CASES = [
    ("mul", lambda: (_leaf(2, 3), _leaf(3))),
    ("mul", lambda: (_leaf(2, 3), 1.5)),
    ("add", lambda: (_leaf(2, 3), _leaf(2, 3), 2.0)),
    ("sub", lambda: (rg.arange(6).reshape(2, 3), _leaf(3), 1)),
    ("div", lambda: (_leaf(4), rg.tensor(2.0, dtype=rg.float32))),
    ("where", lambda: (rg.tensor([True, False, True]), _leaf(3), 0.0)),
    ("relu", lambda: (_leaf(5),)),
    ("tanh", lambda: (_leaf(2, 2),)),
    ("sum", lambda: (_leaf(2, 3), 1, True, None)),
    ("mean", lambda: (_leaf(2, 3), None, False, None)),
    ("reshape", lambda: (_leaf(2, 3), (3, 2))),
    ("expand", lambda: (rg.tensor(2.0, dtype=rg.float64, requires_grad=True), (2, 3))),
    ("matmul", lambda: (_leaf(2, 3), _leaf(3))),
    ("pow", lambda: (_leaf(3), 3)),
]


def _implementation(op, which):
    """The public function (compiled where built), or the generated Python function behind it."""
    if which == "compiled":
        return op.function
    return getattr(op.function, "python_call", op.function)


@pytest.mark.parametrize("which", ["compiled", "python"])
@pytest.mark.parametrize("name,make", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_generated_call_matches_generic_call(name, make, which):
    op = REGISTRY[name]
    assert eligible(op), f"{name} no longer takes the generated path"
    rg.manual_seed(3)
    fast_args = make()
    rg.manual_seed(3)
    slow_args = make()
    kwonly = [p.name for p in op.signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    npos = len(op.params) - len(kwonly)
    fast = _implementation(op, which)(*fast_args[:npos], **dict(zip(kwonly, fast_args[npos:], strict=True)))
    slow = call_op(op, slow_args)
    np.testing.assert_array_equal(fast.numpy(force=True), slow.numpy(force=True))
    assert fast.dtype is slow.dtype
    assert fast.requires_grad == slow.requires_grad
    assert type(fast.grad_fn) is type(slow.grad_fn)
    if fast.grad_fn is not None:
        assert [type(n) for n, _ in fast.grad_fn.next_functions] == [
            type(n) for n, _ in slow.grad_fn.next_functions]
        assert fast.grad_fn.saved_values().keys() == slow.grad_fn.saved_values().keys()
        fast_leaves = [a for a in fast_args if isinstance(a, rg.Tensor) and a.requires_grad]
        slow_leaves = [a for a in slow_args if isinstance(a, rg.Tensor) and a.requires_grad]
        seed = rg.ones_like(fast)
        g_fast = rg.autograd.grad(fast, fast_leaves, seed, create_graph=True)
        g_slow = rg.autograd.grad(slow, slow_leaves, seed, create_graph=True)
        for a, b in zip(g_fast, g_slow, strict=True):
            np.testing.assert_allclose(a.numpy(force=True), b.numpy(force=True), rtol=1e-12)
            assert a.requires_grad == b.requires_grad


def test_generated_call_records_nothing_without_grad_mode():
    x = _leaf(3)
    with rg.no_grad():
        y = REGISTRY["mul"].function(x, x)
    assert y.grad_fn is None and not y.requires_grad


def _compiled_or_skip():
    module = _compiled.compiled_module()
    if module is None or not module.is_enabled():
        pytest.skip("the compiled op call is not built or is switched off")
    return module


def test_compiled_call_is_built_where_a_compiler_exists(expects_compiled):
    assert _compiled.compiled_module() is not None, "retrograd/_C/_op_call was not built"
    assert hasattr(REGISTRY["mul"].function, "python_call")


def test_compiled_call_takes_plain_calls_and_leaves_the_rest_to_python():
    module = _compiled_or_skip()
    spec = _compiled.compiled_spec(REGISTRY["mul"])
    x = _leaf(2, 3)
    assert isinstance(module.call(spec, x, 2.0), rg.Tensor)
    view = x.t()
    assert isinstance(module.call(spec, view, 2.0), rg.Tensor)  # a view, as made
    with rg.no_grad():
        x.add_(1.0)  # its base changed in place: Python regenerates the view's history
    assert module.call(spec, view, 2.0) is None
    assert rg.mul(view, 2.0).grad_fn.next_functions[0][0] is view.grad_fn
    assert module.call(spec, x, rg.ones(3, dtype=rg.float32)) is None  # mixed dtypes
    small = rg.tensor([1, 2], dtype=rg.uint8)
    assert module.call(_compiled.compiled_spec(REGISTRY["add"]), small, 1000, 1) is None  # NumPy overflows
    assert rg.add(small, 1000).tolist() == [233, 234]  # the Python path wraps as PyTorch


def test_compiled_call_leaks_no_reference():
    _compiled_or_skip()
    x = _leaf(4)
    y = rg.randn(4, dtype=rg.float64)
    cpu = x.device
    keep = x * y  # keeps x's AccumulateGrad alive, so later edges find it through the weak reference
    acc = keep.grad_fn.next_functions[0][0]
    for _ in range(10):
        (x * y).tanh().sum()
    gc.collect()
    watched = (x, y, cpu, x._data, y._data, REGISTRY["mul"].node_cls, acc)
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(500):
        assert (x * y).grad_fn.next_functions[0][0] is acc
        (x * y).tanh().sum()
        with rg.no_grad():
            x * y
    gc.collect()
    after = [sys.getrefcount(o) for o in watched]
    assert after == before


def _same(a, b):
    return a is b or (type(a) in (bool, int, tuple) and a == b)


def test_compiled_call_saves_and_links_views_as_the_python_path(slot_fields):
    # Both paths save the same fields (the same objects) and link a view to its base the same way.
    _compiled_or_skip()
    x = _leaf(2, 3)
    mid = x * 2.0
    keep = x * mid  # x's AccumulateGrad stays alive: both paths find it
    view = mid.t()
    cases = [("mul", (x, mid)), ("tanh", (mid,)), ("expand", (view[0:1], (4, 2))),
             ("reshape", (view, (6,))),  # NumPy copies: not a view
             ("reshape", (mid[1], (3, 1)))]  # a view of a view
    for name, args in cases:
        op = REGISTRY[name]
        fast, slow = op.function(*args), op.function.python_call(*args)
        for s_fast, s_slow in zip(fast.grad_fn._saved, slow.grad_fn._saved, strict=True):
            if type(s_fast).__name__ != "SavedTensor":
                assert _same(s_fast, s_slow) or s_fast == s_slow, name
                continue
            f, s = slot_fields(s_fast), slot_fields(s_slow)
            if f["is_output"]:  # each saved its own result
                assert f.pop("array") is fast._data and s.pop("array") is slow._data
                assert f.pop("version_counter") is fast._vc and s.pop("version_counter") is slow._vc
            for field in f:
                assert _same(f[field], s[field]), f"{name}: SavedTensor.{field}"
        is_view = fast._base is not None
        assert (slow._base is not None) == is_view, name
        if is_view:
            for field in ("_base", "_vc", "_view_version", "_view_no_grad"):
                assert _same(getattr(fast, field), getattr(slow, field)), f"{name}: {field}"
            assert fast._view_fn == slow._view_fn, name
    assert keep.grad_fn is not None
    assert rg.expand(view[0:1], (4, 2))._base is mid and rg.reshape(mid[1], (3, 1))._base is mid


def test_compiled_call_makes_a_leaf_accumulator_as_the_python_path(slot_fields):
    # A leaf with no live AccumulateGrad gets one from the C call with the fields that
    # AccumulateGrad.__init__ sets, held weakly, and the same one for every edge while it lives.
    _compiled_or_skip()
    from retrograd.autograd.variable import accumulator_lock as _accumulator_lock, grad_accumulator
    x, y = _leaf(2, 3), _leaf(2, 3)
    fast = (x * 2.0).grad_fn.next_functions[0][0]
    slow = grad_accumulator(y)
    assert type(fast) is type(slow) and x._grad_accumulator() is fast
    f, s = slot_fields(fast), slot_fields(slow)
    assert f.pop("_variable")() is x and s.pop("_variable")() is y
    assert type(f.pop("lock")) is type(s.pop("lock"))
    assert f == s
    assert (x * 3.0).grad_fn.next_functions[0][0] is fast  # found again through the weak reference
    del fast
    gc.collect()
    assert x._grad_accumulator() is None  # the leaf does not keep it alive
    z, made = _leaf(3), []
    worker = threading.Thread(target=lambda: made.append((z * 2.0).grad_fn.next_functions[0][0]))
    with _accumulator_lock:  # busy: the call goes to the Python path, which waits for the lock
        worker.start()
        worker.join(0.2)
        assert worker.is_alive() and not made
    worker.join(10)
    assert z._grad_accumulator() is made[0]
    (x * x).sum().backward()
    assert np.allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_compiled_leaf_accumulator_leaks_no_reference():
    _compiled_or_skip()
    from retrograd.autograd.accumulate_grad import AccumulateGrad
    x = _leaf(4)
    for _ in range(10):
        (x * 2.0).sum().backward()
    gc.collect()
    watched = (x, x._data, x.device, AccumulateGrad, x._data.dtype)
    before = [sys.getrefcount(o) for o in watched] + [weakref.getweakrefcount(x)]
    blocks = sys.getallocatedblocks()
    for _ in range(500):
        x.grad = None
        (x * 2.0).sum().backward()  # each graph makes a new AccumulateGrad and frees it
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] + [weakref.getweakrefcount(x)] == before
    assert sys.getallocatedblocks() - blocks < 250  # nothing made per graph is left behind


def test_compiled_call_leaves_atomic_saved_values_untracked():
    # A saved tuple of plain values (a multiplier, a shape, flags) cannot be in a reference
    # cycle: the C call drops it from the collector's tracking, as the collector itself would.
    _compiled_or_skip()
    x = _leaf(2, 3)
    scaled = x * 2  # saves the int 2 (and None: no tensor of x's is needed)
    summed = x.sum()  # saves x's shape, dim None, keepdim False
    product = x * x  # saves SavedTensors: may be in a cycle, stays tracked
    assert not gc.is_tracked(scaled.grad_fn._saved) and not gc.is_tracked(summed.grad_fn._saved)
    assert not gc.is_tracked(summed.grad_fn._saved[0])
    assert gc.is_tracked(product.grad_fn._saved)
    scaled.sum().backward()
    summed.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 3.0))


def test_declared_ufunc_forwards_are_their_ufuncs():
    # Each same_as_ufunc declaration (made by ufunc() and shortcut()) holds: where its conditions hold, the forward returns
    # what the NumPy ufunc returns, for float, int and bool arrays and Python scalars.
    declared = [op for op in REGISTRY.values() if getattr(op.kernel, "same_as_ufunc", None)]
    assert {op.name for op in declared} >= {"add", "mul", "div", "neg", "exp", "tanh", "eq"}
    rng = np.random.default_rng(0)
    values = [rng.uniform(0.5, 2.0, (2, 3)), rng.integers(1, 5, (2, 3)), rng.integers(0, 2, (2, 3)).astype(bool)]
    for op in declared:
        name, nargs, when = op.kernel.same_as_ufunc
        fn = getattr(np, name)
        for first in values:
            for second in (values[0], 3, 2.5):
                args = [first, second][:nargs] + [None] * (len(op.params) - nargs)
                for pos, value in when:
                    args[pos] = value
                with np.errstate(all="ignore"):
                    try:
                        want = fn(*args[:nargs])
                    except TypeError:  # the ufunc has no loop for these dtypes: nor has the forward
                        with pytest.raises(TypeError):
                            op.forward(np, *args)
                        continue
                    got = op.forward(np, *args)
                np.testing.assert_array_equal(got, want, err_msg=op.name)
                assert np.asarray(got).dtype == np.asarray(want).dtype, op.name


def test_compiled_call_calls_a_replaced_forward():
    # While op.forward is the declared forward the C call may call the ufunc; once it is
    # replaced, the replacement runs.
    _compiled_or_skip()
    op = REGISTRY["mul"]
    original, calls = op.forward, []

    def forward(xp, input, other):
        calls.append(1)
        return original(xp, input, other)
    op.forward = forward
    try:
        out = rg.mul(_leaf(3), 2.0)
    finally:
        op.forward = original
    assert calls == [1] and out.shape == (3,)


def test_op_function_binds_arguments_as_its_python_function():
    # The compiled public function binds positional, keyword and default arguments as the
    # generated Python function does, and leaves every call it cannot bind to that function,
    # which raises the TypeError a Python function would.
    module = _compiled_or_skip()
    fn = rg.sum
    assert type(fn) is module.OpFunction and fn.python_call is not fn
    x = _leaf(2, 3)
    calls = [((x,), {}), ((x, 1), {}), ((x,), {"dim": 1}), ((x, 0, True), {}), ((x,), {"keepdim": True, "dim": 0}),
             ((), {"input": x}), ((x, None, False), {"dtype": rg.float32})]
    for args, kwargs in calls:
        got, want = fn(*args, **kwargs), fn.python_call(*args, **kwargs)
        assert type(got.grad_fn) is type(want.grad_fn) and got.dtype == want.dtype, (args, kwargs)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    for args, kwargs in [((x,), {"dims": 1}), ((x, 1), {"dim": 1}), ((), {}), ((x, 1, True, None, 5), {})]:
        with pytest.raises(TypeError) as compiled:
            fn(*args, **kwargs)
        with pytest.raises(TypeError) as python:
            fn.python_call(*args, **kwargs)
        assert str(compiled.value) == str(python.value)
    mixed = rg.add(x, rg.ones(3, dtype=rg.float32), alpha=2)  # the C call declines: the Python function
    assert mixed.dtype == rg.float64 and type(mixed.grad_fn).__name__ == "AddBackward0"


def test_op_function_is_a_function_to_its_users():
    # Signature, name, docs, binding as a method and operator, pickling by reference, weak references.
    import inspect
    import pickle
    module = _compiled_or_skip()
    assert type(rg.mul) is module.OpFunction
    assert str(inspect.signature(rg.add)) == "(input, other, *, alpha=1)"
    assert str(inspect.signature(rg.ones(1).add)) == "(other, *, alpha=1)"
    assert rg.mul.__name__ == rg.mul.__qualname__ == "mul" and rg.mul.__module__ == "retrograd"
    assert rg.mul.__doc__.startswith("Multiplies") and inspect.isroutine(rg.mul) and rg.mul.op is REGISTRY["mul"]
    assert repr(rg.mul) == "<function mul>"
    x = _leaf(3)
    assert rg.Tensor.__mul__ is rg.mul and rg.Tensor.mul is rg.mul
    assert x.mul.__self__ is x and x.mul.__func__ is rg.mul
    for y in (x * 2.0, 2.0 * x, x.mul(2.0), rg.Tensor.mul(x, 2.0), rg.mul(x, other=2.0)):
        np.testing.assert_array_equal(y.detach().numpy(), 2.0 * x.detach().numpy())
    assert pickle.loads(pickle.dumps(rg.mul)) is rg.mul
    assert weakref.ref(rg.mul)() is rg.mul


def test_op_function_binds_in_c_and_leaves_the_rest_to_python():
    # An OpFunction built around a counting stand-in for the Python function: every call it can
    # bind runs the C call, and only the others reach the Python function.
    import inspect
    module = _compiled_or_skip()
    op = REGISTRY["sum"]
    calls = []

    def python_fn(*args, **kwargs):
        calls.append((args, kwargs))
        return op.function.python_call(*args, **kwargs)
    names = tuple(op.signature.parameters)
    fn = module.OpFunction(_compiled.compiled_spec(op), python_fn, names,
                           tuple(p.default for p in op.signature.parameters.values()), inspect.Parameter.empty)
    x = _leaf(2, 3)
    for args, kwargs in [((x,), {}), ((x, 1), {}), ((x,), {"keepdim": True, "dim": 0}), ((), {"input": x}),
                         ((x, None, False), {"dtype": rg.float32})]:
        np.testing.assert_array_equal(fn(*args, **kwargs).detach().numpy(),
                                      op.function(*args, **kwargs).detach().numpy())
    assert calls == []
    for args, kwargs in [((x,), {"dims": 1}), ((x, 1), {"dim": 1}), ((), {})]:
        with pytest.raises(TypeError):
            fn(*args, **kwargs)
    assert len(calls) == 3
    view = x.t()
    with rg.no_grad():
        x.add_(1.0)  # the view's base changed in place: the C call declines, Python runs it
    assert fn(view, dim=0).shape == (2,) and len(calls) == 4


def test_generated_code_shows_its_own_source_in_tracebacks():
    # The generated public function registers its source with linecache under a file name of its
    # own, so a traceback through it shows the line that ran, not File "<string>".
    import traceback
    fn = getattr(rg.sub, "python_call", rg.sub)  # the generated Python function, also where the C call exists
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors") as info:
        fn(rg.tensor([True]), rg.tensor([False]))
    frames = [f for f in traceback.extract_tb(info.tb) if "<generated>" in f.filename]
    assert frames and frames[0].filename.endswith("sub.call.py") and frames[0].name == "sub"
    assert "_op.forward(xp" in frames[0].line


def test_compiled_call_takes_a_view_of_a_parameter_made_without_grad_mode():
    # A formula's transpose of a saved parameter (no grad mode) is a view that requires grad only
    # through its base: the C call takes it while grad mode is off, and leaves it to Python while on.
    module = _compiled_or_skip()
    spec = _compiled.compiled_spec(REGISTRY["matmul"])
    w = _leaf(3, 2)
    g = rg.tensor(np.arange(4.0).reshape(2, 2))
    with rg.no_grad():
        view = w.mT
        out = module.call(spec, g, view)
        assert isinstance(out, rg.Tensor) and not out.requires_grad and out.grad_fn is None
        np.testing.assert_array_equal(out.numpy(), g.numpy() @ w.detach().numpy().T)
    assert module.call(spec, g, view) is None


@pytest.mark.parametrize("which", ["compiled", "python"])
def test_input_metadata_is_the_results_own_and_shared_between_equal_results(which):
    # Each node's input_metadata is ((shape, dtype, None),) of its result (an AccumulateGrad's: of its leaf), also
    # past the C's cache of those tuples, which keeps one per dtype object and shape for up to 8 dtype objects at
    # once: the leaves here have 10 (float64 with metadata, each its own object). Two results of one shape and
    # dtype share the tuple in the C op call.
    mul = _implementation(REGISTRY["mul"], which)
    dtypes = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]
    dtypes += [np.dtype(np.float64, metadata={"k": k}) for k in range(10)]
    nodes = []
    for shape in [(2,), (3, 1), (), (2, 0), (2,)]:
        for dtype in dtypes * 2:
            x = rg.from_numpy(np.ones(shape, dtype=dtype)).requires_grad_()
            for other in (x, 2):
                y = mul(x, other)
                nodes.append((y.grad_fn, y))
                nodes.append((y.grad_fn.next_functions[0][0], x))
    for node, t in nodes:
        assert node.input_metadata == ((t._data.shape, t._data.dtype, None),)
        assert node.input_metadata[0][1] is t._data.dtype
    if which == "compiled" and rg.is_compiled("ops"):
        x = rg.ones(2, dtype=rg.float64, requires_grad=True)
        same = [mul(x, k).grad_fn for k in range(3)]
        assert all(n.input_metadata is same[0].input_metadata for n in same)
