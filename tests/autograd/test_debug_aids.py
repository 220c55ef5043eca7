"""Debugging aids: ``autograd.explain`` names why a tensor got no gradient, and where the path was cut."""
import gc

import pytest

import retrograd as rg
from retrograd.autograd import debug
from retrograd.ops._call import interposition

THIS = __file__


@pytest.fixture(autouse=True)
def _no_interposer_left():
    yield
    assert interposition.stack == ()


def _line(marker):
    """The source line of this file that holds ``marker``, as explain reports it."""
    with open(THIS, encoding="utf-8") as f:
        for i, text in enumerate(f, 1):
            if marker in text and "_line(" not in text:
                return f"{THIS}:{i}"
    raise AssertionError(marker)


def test_an_input_that_does_not_require_grad_is_named():
    x = rg.ones(2)
    why = rg.autograd.explain((x * 2).sum(), x)
    assert why.cause == debug.DOES_NOT_REQUIRE_GRAD
    assert str(why).startswith("The input does not require grad: it is a leaf made with requires_grad=False")


def test_an_input_made_under_no_grad_is_named_with_its_op_and_line():
    w = rg.ones(2, requires_grad=True)
    with rg.autograd.explain_mode():
        with rg.no_grad():
            x = w * 2  # made-under-no-grad
    why = rg.autograd.explain((x * 3).sum(), x)
    assert (why.cause, why.op, why.where) == (debug.NO_GRAD, "mul", _line("# made-under-no-grad"))
    assert "under no_grad" in why.message


def test_a_path_cut_by_no_grad_names_the_op_and_line():
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        with rg.no_grad():
            y = x.exp()  # cut-by-no-grad
        loss = (y + 1).sum()
    why = rg.autograd.explain(loss, x)
    assert (why.cause, why.op, why.where) == (debug.NO_GRAD, "exp", _line("# cut-by-no-grad"))
    assert why.message == f"The path was cut by no_grad: exp at {why.where} ran under it."


def test_a_path_cut_by_inference_mode_is_named():
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        with rg.inference_mode():
            y = x * 2  # cut-by-inference
        loss = (y.clone() + 1).sum()
    why = rg.autograd.explain(loss, x)
    assert (why.cause, why.op, why.where) == (debug.INFERENCE_MODE, "mul", _line("# cut-by-inference"))


@pytest.mark.parametrize("cut", ["detach", "data"])
def test_a_path_cut_by_detach_or_data_names_the_op_that_took_the_alias(cut):
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        alias = x.detach() if cut == "detach" else x.data
        loss = (alias * 2).sum()  # takes-the-alias
    why = rg.autograd.explain(loss, x)
    assert (why.cause, why.op, why.where) == (debug.DETACHED, "mul", _line("# takes-the-alias"))
    assert why.message.startswith("The path was cut by detach() or .data")


@pytest.mark.parametrize("trip", ["item", "numpy", "tolist"])
def test_a_value_round_trip_is_reported_as_a_new_tensor_entering_an_op(trip):
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        s = x * 2
        values = {"item": lambda: s.sum().item(), "numpy": lambda: s.detach().numpy().copy(),
                  "tolist": lambda: s.tolist()}[trip]()
        fresh = rg.tensor(values)
        loss = (fresh * 3).sum()  # takes-the-values
    why = rg.autograd.explain(loss, x)
    assert (why.cause, why.op, why.where) == (debug.NEW_TENSOR, "mul", _line("# takes-the-values"))
    assert "new tensor with no history" in why.message


@pytest.mark.parametrize("make, op", [(lambda x: x.argmax().float(), "argmax"), (lambda x: (x > 0).float(), "gt"),
                                      (lambda x: x.long().float(), "_to_copy")])
def test_a_non_differentiable_op_is_named(make, op):
    x = rg.tensor([1.0, 3.0, 2.0], requires_grad=True)
    with rg.autograd.explain_mode():
        loss = (make(x) * rg.ones(1)).sum()
    why = rg.autograd.explain(loss, x)
    assert (why.cause, why.op) == (debug.NON_DIFFERENTIABLE, op)
    assert why.where.startswith(THIS)


@pytest.mark.parametrize("overwrite", ["zero_", "fill_", "copy_"])
def test_an_in_place_overwrite_on_the_path_is_named(overwrite):
    x = rg.ones(3, requires_grad=True)
    with rg.autograd.explain_mode():
        y = x * 2
        {"zero_": lambda: y.zero_(), "fill_": lambda: y.fill_(5.0), "copy_": lambda: y.copy_(rg.ones(3))}[overwrite]()
        loss = (y * 3).sum()
    why = rg.autograd.explain(loss, x)
    assert (why.cause, why.op) == (debug.OVERWRITTEN, overwrite)
    loss.backward()
    assert x.grad.abs().sum().item() == 0.0  # what explain foretold


def test_a_freed_graph_is_named():
    x = rg.ones(2, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    x.grad = None
    why = rg.autograd.explain(loss, x)
    assert why.cause == debug.GRAPH_FREED
    assert "retain_graph=True" in why.message
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_a_grad_reset_to_none_is_named():
    model = rg.nn.Linear(2, 1)
    opt = rg.optim.SGD(model.parameters(), lr=0.1)
    loss = model(rg.ones(1, 2)).sum()
    loss.backward(retain_graph=True)
    opt.zero_grad(set_to_none=True)
    why = rg.autograd.explain(loss, model.weight)
    assert why.cause == debug.GRAD_IS_NONE
    assert "zero_grad(set_to_none=True)" in why.message


def test_a_non_leaf_without_retain_grad_is_named():
    x = rg.ones(2, requires_grad=True)
    h = x * 2
    loss = (h * h).sum()
    loss.backward()
    why = rg.autograd.explain(loss, h)
    assert why.cause == debug.NON_LEAF and "MulBackward0" in why.message and "retain_grad()" in why.message
    h2 = x * 2
    h2.retain_grad()
    loss = (h2 * h2).sum()
    loss.backward()
    assert rg.autograd.explain(loss, h2).cause == debug.HAS_GRADIENT


def test_without_the_recording_mode_a_missing_path_says_how_to_find_it():
    x = rg.ones(2, requires_grad=True)
    with rg.no_grad():
        y = x * 2
    why = rg.autograd.explain((y * x).sum(), rg.ones(2, requires_grad=True))
    assert why.cause == debug.NOT_REACHED and "explain_mode()" in why.message
    why = rg.autograd.explain(y.sum(), x)
    assert why.cause == debug.NOT_REACHED and why.message.startswith("The output has no graph")


def test_explain_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="explain"):
        rg.autograd.explain(1.0, rg.ones(1))


def test_the_recording_mode_records_nothing_once_left_and_frees_its_records():

    x = rg.ones(2, requires_grad=True)
    with rg.autograd.explain_mode():
        y = x * 2
    assert id(y) in debug._records
    key = id(y)
    del y
    gc.collect()
    assert key not in debug._records
    z = x * 3
    assert id(z) not in debug._records


def test_detect_nonfinite_names_the_first_forward_op_and_backward_node_with_stats_and_module_path():
    model = rg.nn.Sequential(rg.nn.Linear(2, 2))
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    with rg.autograd.detect_nonfinite() as found:
        h = x.log()  # the-first-non-finite-op
        model(h).sum().backward()
    fwd, bwd = found.forward, found.backward
    assert (fwd.kind, fwd.name, fwd.module) == ("forward", "log", None)
    assert fwd.inputs == [{"shape": [2], "min": 0.0, "max": 1.0, "nan": 0, "inf": 0}]
    assert fwd.traceback[-1].startswith(f'  File "{THIS}", line {_line("# the-first-non-finite-op").split(":")[-1]}')
    assert bwd.kind == "backward" and bwd.name.endswith(("Backward0", "Backward4"))
    assert bwd.module == "Sequential/0:Linear"
    assert all(s is None or (s["nan"], s["inf"]) == (0, 0) for s in bwd.inputs)  # its inputs were finite
    assert str(fwd).startswith("The first non-finite result came from op log. Its inputs:")
    assert "Traceback of the forward call:" in str(bwd)


def test_detect_nonfinite_sees_a_gradient_that_only_backward_makes_non_finite():
    x = rg.tensor([0.0, 4.0], requires_grad=True)
    with rg.autograd.detect_nonfinite() as found:
        y = x.sqrt()  # finite forward
        y.sum().backward()
    assert found.forward is None  # the formula's own op calls are not the forward's
    assert found.backward.name == "SqrtBackward0"
    assert found.backward.inputs == [{"shape": [2], "min": 1.0, "max": 1.0, "nan": 0, "inf": 0}]
    assert found.backward.traceback[-1].startswith(f'  File "{THIS}"')


def test_detect_nonfinite_can_raise_at_the_first_finding_and_the_engine_keeps_working():
    x = rg.tensor([0.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="The first non-finite gradient came from backward node SqrtBackward0"):
        with rg.autograd.detect_nonfinite(raise_error=True):
            x.sqrt().sum().backward()
    y = rg.tensor([1.0, 4.0], requires_grad=True)
    y.sqrt().sum().backward()
    assert y.grad.tolist() == [0.5, 0.25]


def test_detect_nonfinite_finds_nothing_in_a_finite_step():
    x = rg.tensor([1.0, 4.0], requires_grad=True)
    with rg.autograd.detect_nonfinite() as found:
        x.sqrt().sum().backward()
    assert found.forward is None and found.backward is None


def test_memory_summary_counts_saved_tensors_per_node_and_type_and_gradient_buffers():
    x = rg.ones(4, requires_grad=True)  # float32: 16 bytes
    y = (x * x).exp()  # MulBackward0 saves x twice; ExpBackward0 saves its result
    loss = y.sum()
    s = rg.autograd.graph.memory_summary(loss)
    assert s.by_type["MulBackward0"] == [1, 32, 0]
    assert s.by_type["ExpBackward0"] == [1, 16, 0]
    assert s.by_type["SumBackward0"][1] == 0
    assert (s.total_saved_bytes, s.unique_saved_bytes, s.total_grad_bytes) == (48, 32, 0)
    assert [n["name"] for n in s.largest] == ["MulBackward0", "ExpBackward0"]
    loss.backward(retain_graph=True)
    s = rg.autograd.graph.memory_summary(loss)
    assert s.by_type["torch::autograd::AccumulateGrad"] == [1, 0, 16] and s.total_grad_bytes == 16
    assert str(s).startswith("4 nodes; saved tensors 48 B (32 B in distinct arrays); gradient buffers 16 B")
    loss.backward()  # frees the graph: nothing saved is held any more
    assert rg.autograd.graph.memory_summary(loss).total_saved_bytes == 0


def test_memory_summary_counts_bytes_per_module_recorded_under_record_module_paths():
    net = rg.nn.Sequential(rg.nn.Linear(3, 2), rg.nn.Tanh())
    x = rg.ones(4, 3)
    out = net(x).sum()  # recorded outside: no module rows
    assert rg.autograd.graph.memory_summary(out).by_module == {}
    with rg.autograd.graph.record_module_paths():
        out = net(x).sum()
    s = rg.autograd.graph.memory_summary(out)
    # Linear: AddmmBackward0 saves its input (4x3 float32, for the weight's gradient), and TBackward0 nothing;
    # Tanh saves its result (4x2)
    assert s.by_module == {"Sequential/0:Linear": [2, 4 * 12, 0], "Sequential/1:Tanh": [1, 4 * 8, 0]}
    assert "Sequential/0:Linear" in str(s)
    with rg.autograd.graph.record_module_paths(), rg.autograd.detect_nonfinite() as found:
        rg.nn.Sequential(rg.nn.Linear(3, 2))(rg.full((1, 3), float("inf"))).sum()
    assert found.forward.module == "Sequential/0:Linear"  # detect_nonfinite shares the module paths


class _KeepsItsOutput(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_memory_summary_names_the_nodes_a_reference_cycle_keeps_alive():
    x = rg.ones(3, requires_grad=True)
    plain = (x * x).sum()
    assert rg.autograd.graph.memory_summary(plain).cycles == []
    y = _KeepsItsOutput.apply(x)
    y.grad_fn.kept = y  # the node holds its own output: output -> node -> output
    s = rg.autograd.graph.memory_summary((y * y).sum())
    assert s.cycles == [{"nodes": ["_KeepsItsOutputBackward"], "objects": ["_KeepsItsOutputBackward", "Tensor"]}]
    assert "held by a reference cycle: _KeepsItsOutputBackward (the cycle: _KeepsItsOutputBackward -> Tensor)" in str(s)
    assert rg.autograd.graph.memory_summary((y * y).sum(), find_cycles=False).cycles == []
