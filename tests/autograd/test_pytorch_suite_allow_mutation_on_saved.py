"""Scenarios of PyTorch's test/test_autograd.py, class TestAllowMutationOnSaved
(``autograd.graph.allow_mutation_on_saved_tensors``), written again and run with retrograd and torch on the same
numbers. See test_pytorch_suite_basics.py for the method. The complex scenario (``conj`` views) is out of scope.
"""
import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


def counts(ctx):
    """How many saved tensors the context has cloned, and how many it tracks (freed graphs go by reference counts)."""
    return len(list(ctx.cloned.items())), len(list(ctx.tid_to_weakhandle.items()))


def _square_then_sin_(lib, a, view):
    b = a.clone()
    c = b.view_as(b) if view else b
    out = (b ** 2).sum()
    c.sin_()
    out.sum().backward()
    return a.grad


@pytest.mark.parametrize("view", [False, True])
def test_modifying_a_saved_tensor_raises_outside_and_works_inside(view):
    def scenario(lib):
        a = randn(lib, 2, 3, requires_grad=True)
        try:
            _square_then_sin_(lib, a, view)
            raised = None
        except RuntimeError as e:
            raised = "modified by an inplace operation" in str(e)
        a.grad = None
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            da = _square_then_sin_(lib, a, view)
        return raised, da, counts(ctx)[0]
    assert same_in_both(scenario)[1][0] is True


def test_saved_base_modified_through_a_view():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = randn(lib, 2, 3, requires_grad=True)
            b = a.clone()
            c = b[:1]
            out = b ** 2
            c *= 10
            out.sum().backward()
            inside = counts(ctx)[0]
        return a.grad, inside, counts(ctx)[0]
    same_in_both(scenario)


def test_saved_view_modified_through_its_base():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = randn(lib, 2, 3, requires_grad=True)
            b = a.clone()
            out = (b[:] ** 2).sum()
            b *= 2
            out.backward()
        return a.grad
    same_in_both(scenario)


def test_double_backward_through_a_modified_saved_tensor():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = randn(lib, 2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            lib.autograd.grad(out, a, create_graph=True)
            (da,) = lib.autograd.grad(out, a, create_graph=True)
            (d2a,) = lib.autograd.grad(da.sum(), a)
        return da, d2a, counts(ctx)[0]
    same_in_both(scenario)


def test_no_clone_for_a_tensor_no_longer_saved():
    def scenario(lib):
        seen = []
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = randn(lib, 2, 3, requires_grad=True).clone()
            out = (a ** 2).sum()
            seen.append(counts(ctx))
            out.backward()
            a.sin_()
            seen.append(counts(ctx)[0])
            out = (a ** 2).sum()
            a.sin_()
            seen.append(counts(ctx)[0])
            del out
            seen.append(counts(ctx)[0])
        return seen
    assert same_in_both(scenario) == ("ok", [(0, 1), 0, 1, 0])


def test_a_tensor_saved_many_times_is_cloned_once():
    def scenario(lib):
        seen = []
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = randn(lib, 2, 3, requires_grad=True).clone()
            b = a ** 2
            c = a ** 2
            a.sin_()
            seen.append(counts(ctx)[0])
            del b, c
            seen.append(counts(ctx)[0])
        return seen
    assert same_in_both(scenario) == ("ok", [1, 0])


def test_a_tensor_saved_at_two_versions_is_cloned_twice():
    def scenario(lib):
        seen = []
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = randn(lib, 2, 3, requires_grad=True).clone()
            b = a ** 2
            a.sin_()
            c = a ** 2
            a.sin_()
            seen.append(counts(ctx)[0])
            del b
            seen.append(counts(ctx)[0])
            del c
            seen.append(counts(ctx)[0])
        return seen
    assert same_in_both(scenario) == ("ok", [2, 1, 0])


def test_out_argument_writing_a_saved_tensor_clones_it():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
            b = lib.tensor([1.0], dtype=lib.float64)
            out = a * b
            first = counts(ctx)[1]
            lib.sin(lib.tensor([2.0], dtype=lib.float64), out=b)
            second = counts(ctx)[0]
            out.backward()
            return first, second, counts(ctx)[0], a.grad
    assert same_in_both(scenario) == ("ok", (1, 1, 0, [1.0]))


@pytest.mark.parametrize("where", ["outside", "another context"])
def test_backward_outside_the_recording_context_raises(where):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = randn(lib, 2, 3, requires_grad=True)
            out = (a ** 2).sum()
        if where == "outside":
            out.backward()
        else:
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                out.backward()
    assert same_in_both(scenario) == ("AssertionError", "Trying to backward outside of the "
                                      "'allow_mutation_on_saved_tensors' contextin which the graph was originally "
                                      "recorded.")


def test_nested_contexts_raise():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                pass
    assert same_in_both(scenario) == ("RuntimeError", "allow_mutation_on_saved_tensors contexts cannot be nested")


def test_context_works_again_after_a_nesting_error():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            try:
                with lib.autograd.graph.allow_mutation_on_saved_tensors():
                    pass
            except RuntimeError:
                pass
        a = randn(lib, 2, 3, requires_grad=True)
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            return _square_then_sin_(lib, a, view=False)
    same_in_both(scenario)


def test_inplace_foreach_op_on_saved_tensors():
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = [lib.tensor(1.0, dtype=lib.float64, requires_grad=True) for _ in range(2)]
            b = lib._foreach_exp(a)
            lib._foreach_add_(b, 1)
            (b[0] + b[1]).backward()
        return [a[0].grad, a[1].grad]
    same_in_both(scenario)
