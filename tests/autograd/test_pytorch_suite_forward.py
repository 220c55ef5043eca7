"""Scenarios of PyTorch's test/test_autograd.py (classes TestAutogradForwardMode and
TestAutogradForwardModeBatchedGrad), the CPU real-dtype ones, written again and run with retrograd and torch. See
test_pytorch_suite_basics.py for the method.

PyTorch's batched-grad scenarios run ``make_dual`` under its private legacy ``_vmap``, as its
``autograd.functional.jacobian(strategy="forward-mode", vectorize=True)`` does; here they run through that
public function. Out of scope: complex tangents (conjugate and negative views), PyTorch's private switch of
forward grads (``torch._C._set_fwd_grad_enabled``) and its private ops, and a ``__torch_dispatch__`` subclass.
"""
import weakref

import numpy as np
import pytest

import retrograd as rg

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import function, ones, outcome, randn, same_in_both

torch = pytest.importorskip("torch")


def _fw(lib):
    return lib.autograd.forward_ad


def test_forward_level_cleanup():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            inside = fw.unpack_dual(dual).tangent is bar
        after = fw.unpack_dual(dual).tangent is None
        with fw.dual_level():  # the dual keeps its tangent alive; the level does not, once the dual is gone
            tangent = randn(lib, 2, seed=2)
            ref = weakref.ref(tangent)
            dual = fw.make_dual(foo, tangent)
            reused = fw.unpack_dual(dual).tangent is tangent
            del tangent
            kept = ref() is not None
            del dual  # freed at once: nothing of the level refers back to it
            freed = ref() is None
        return inside, after, reused, kept, freed
    assert same_in_both(scenario) == ("ok", (True, True, True, True, True))


def test_size_check():
    def scenario(lib):
        fw = _fw(lib)
        foo, tangent = randn(lib, 2), randn(lib, 3)
        with fw.dual_level():
            try:
                fw.make_dual(foo, tangent)
            except RuntimeError as e:
                error = first_sentence(e)
            return error, fw.unpack_dual(fw.make_dual(foo, tangent[1:])).tangent
    assert same_in_both(scenario)[1][0] == ("Trying to set a forward gradient that has a different size than that "
                                            "of the original Tensor, this is not supported.")


def test_nested_level_is_refused():
    def scenario(lib):
        fw = _fw(lib)
        with fw.dual_level() as level:
            first = level
        with fw.dual_level():
            try:
                fw.enter_dual_level()
            except RuntimeError as e:
                return first, str(e)
    assert same_in_both(scenario) == ("ok", (0, "Nested forward mode AD is not supported at the moment"))


def test_default_level():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            baz = fw.make_dual(foo, bar)
            baz_primal, baz_tangent = fw.unpack_dual(baz)
            inside = (baz_tangent is bar, baz_primal._base is foo, fw.unpack_dual(baz_primal).tangent is None,
                      baz_primal)
        outside = fw.unpack_dual(baz)  # no level: the tensor itself, no tangent
        return inside, outside.primal is baz, outside.tangent
    assert same_in_both(scenario)[1][0][:3] == (True, True, True)


def test_grad_cleanup():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar, baz = randn(lib, 2), randn(lib, 2, seed=1), randn(lib, 2, seed=2)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            first = fw.unpack_dual(foo).tangent is None, fw.unpack_dual(dual).tangent is bar
        with fw.dual_level():
            second = fw.unpack_dual(dual).tangent is None
            new_dual = fw.make_dual(foo, baz)
            dual_primal, dual_tangent = fw.unpack_dual(dual)
            new_primal, new_tangent = fw.unpack_dual(new_dual)
            return first, second, dual_tangent is None, new_tangent is baz, (dual_primal - new_primal).abs().sum()
    assert same_in_both(scenario)[0] == "ok"


def test_detach_view_tracking():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            detached = dual.detach()
            tracked = fw.unpack_dual(detached).tangent is None, detached._base is None
        plain = randn(lib, 2)
        ref = weakref.ref(plain)
        out = plain.detach()  # a detached tensor does not keep what it was detached from alive
        del plain
        return tracked, ref() is None, out
    assert same_in_both(scenario)[1][:2] == ((True, True), True)


def test_view_inplace_differentiable_views():
    def scenario(lib):
        fw = _fw(lib)
        original_foo, original_bar = randn(lib, 2), ones(lib, 2)
        foo, bar = original_foo.clone(), original_bar.clone()
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            view = dual[0]
            view.mul_(2)  # the tangent of the base follows
            return fw.unpack_dual(dual).tangent, fw.unpack_dual(view).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_view_inplace_from_a_dual_into_a_plain_base():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 3), randn(lib, 3, seed=1)
        base = ones(lib, 5)
        with fw.dual_level():
            base[1:4].copy_(fw.make_dual(foo, bar) * 2)
            return fw.unpack_dual(base).tangent, fw.unpack_dual(base[2:]).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_non_differentiable():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            plain = (fw.unpack_dual(dual > 0).tangent is None, fw.unpack_dual(dual.argmax()).tangent is None,
                     fw.unpack_dual(dual == bar).tangent is None)
            dual.eq_(bar)  # in place: the values become 0 or 1, whose tangent is zero
            return plain, dual, fw.unpack_dual(dual).tangent
    assert same_in_both(scenario) == ("ok", ((True, True, True), [0.0, 0.0], [0.0, 0.0]))


def test_make_dual_refuses_integer_primal_and_tangent():
    def scenario(lib):
        fw = _fw(lib)
        floats, longs = lib.ones(2, 2), lib.ones(2, 2, dtype=lib.int64)
        errors = []
        with fw.dual_level():
            for primal, tangent in ((floats, longs), (longs, longs), (longs, floats)):
                try:
                    fw.make_dual(primal, tangent)
                except ValueError as e:
                    errors.append(first_sentence(e))
        return errors
    assert same_in_both(scenario) == ("ok", [
        "Expected tangent to be floating point or complex, but got: retrograd.int64",
        "Expected primal to be floating point or complex, but got: retrograd.int64",
        "Expected primal to be floating point or complex, but got: retrograd.int64"])


def test_custom_function_jvp_and_save_for_forward():
    def scenario(lib):
        fw = _fw(lib)

        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            return x * y

        def backward(ctx, g):
            return g, g

        def jvp(ctx, x_t, y_t):
            x, y = ctx.saved_tensors
            return x_t * y + y_t * x
        Mul = function(lib, forward, backward, name="Mul", jvp=jvp)
        with fw.dual_level():
            a = fw.make_dual(randn(lib, 3), randn(lib, 3, seed=1))
            b = fw.make_dual(randn(lib, 3, seed=2), randn(lib, 3, seed=3))
            return fw.unpack_dual(Mul.apply(a, b)).tangent, fw.unpack_dual(Mul.apply(a, randn(lib, 3))).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_custom_function_without_jvp_raises():
    def scenario(lib):
        fw = _fw(lib)
        Id = function(lib, lambda ctx, x: x.clone(), lambda ctx, g: g, name="Id")
        with fw.dual_level():
            Id.apply(fw.make_dual(randn(lib, 2), randn(lib, 2)))
    assert same_in_both(scenario)[0] == "NotImplementedError"


def test_forward_over_reverse_hessian_vector_product():
    def scenario(lib):
        fw = _fw(lib)
        x = randn(lib, 4, requires_grad=True)
        v = randn(lib, 4, seed=5)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            (g,) = lib.autograd.grad((d.tanh() * d.exp()).sum(), x, create_graph=True)
            return fw.unpack_dual(g).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_backward_through_a_tangent():
    def scenario(lib):
        fw = _fw(lib)
        x = randn(lib, 3, requires_grad=True)
        t = randn(lib, 3, seed=4, requires_grad=True)
        with fw.dual_level():
            out = fw.unpack_dual((fw.make_dual(x, t) ** 2).sin()).tangent
            out.sum().backward()
        return x.grad, t.grad
    assert same_in_both(scenario)[0] == "ok"


# -- the layout of a tangent ----------------------------------------------------------------------------------
def test_make_dual_copies_a_tangent_of_another_layout():
    def scenario(lib):
        fw = _fw(lib)
        primal, tangent = randn(lib, 2, 3).t(), randn(lib, 3, 2, seed=1)
        with fw.dual_level():
            t = fw.unpack_dual(fw.make_dual(primal, tangent)).tangent
            return t is tangent, t.stride() == primal.stride(), t
    assert same_in_both(scenario)[1][:2] == (False, True)


def test_make_dual_copies_a_tangent_whose_storage_is_smaller_than_the_primals():
    def scenario(lib):
        fw = _fw(lib)
        primal, tangent = randn(lib, 5)[:4].detach(), randn(lib, 4, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(primal, tangent)
            unpacked = fw.unpack_dual(dual).tangent
            before = tangent.clone()
            unpacked *= 2  # a copy: the tangent given is left as it was
            strided = dual.as_strided((5,), (1,), 0)  # the whole storage: the tangent's has the same size
            return unpacked is tangent, bool(lib.allclose(before, tangent)), strided, fw.unpack_dual(strided).tangent
    assert same_in_both(scenario)[1][:2] == (False, True)


def test_tangents_of_tensors_without_elements_keep_any_strides_and_offset():
    def scenario(lib):
        fw = _fw(lib)
        a = lib.ones(0).as_strided((0, 1), (1, 1), 0)
        b = lib.ones(0).as_strided((0, 1), (1, 0), 0)
        with fw.dual_level():
            diagonal = lib.diagonal(fw.make_dual(a, b), offset=0)
            first = tuple(diagonal.shape), tuple(fw.unpack_dual(diagonal).tangent.shape)
        a = lib.tensor([1.0]).as_strided((0,), (1,), 1)
        b = lib.tensor([1.0]).as_strided((0,), (1,), 2)
        with fw.dual_level():
            kept = fw.unpack_dual(fw.make_dual(a, b)).tangent is b
        a = lib.tensor([1.0]).as_strided((1,), (2,), 0)
        b = lib.tensor([1.0]).as_strided((1,), (1,), 0)
        with fw.dual_level():
            sliced = fw.make_dual(a, b)[1:]
            return first, kept, tuple(sliced.shape), tuple(fw.unpack_dual(sliced).tangent.shape)
    assert same_in_both(scenario) == ("ok", (((0,), (0,)), True, (0,), (0,)))


def test_a_tangent_with_a_tangent_of_its_own_is_refused():
    def scenario(lib):
        fw = _fw(lib)
        with fw.dual_level():
            dual = fw.make_dual(randn(lib, 2), randn(lib, 2, seed=1))
            fw.make_dual(randn(lib, 2, seed=2), dual)
    assert same_in_both(scenario) == ("RuntimeError", "Setting a forward grad that itself has a forward gradient at "
                                                      "the same level0 is not supported.")


# -- batched forward grads (PyTorch's under its legacy vmap; here through the vectorized forward Jacobian) -----------
def test_gradcheck_of_batched_forward_grads():
    def scenario(lib):
        a, b = randn(lib, 4, 4, requires_grad=True), randn(lib, 4, 4, requires_grad=True, seed=1)
        check = dict(check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True)
        return lib.autograd.gradcheck(lib.sin, a, **check), lib.autograd.gradcheck(lib.add, (a, b), **check)
    assert same_in_both(scenario) == ("ok", (True, True))


def _forward_jacobian(lib, fn, x):
    return lib.autograd.functional.jacobian(fn, x, strategy="forward-mode", vectorize=True)


def test_vectorized_forward_jacobian_of_an_input_of_another_layout_than_its_tangents():
    def scenario(lib):
        return _forward_jacobian(lib, lambda x: x.sin() * 2, randn(lib, 2, 3).t())
    assert same_in_both(scenario)[0] == "ok"


@pytest.mark.parametrize("view", ["whole", "transposed"])
def test_vectorized_forward_jacobian_through_a_copy_into_a_view_of_a_plain_tensor(view):
    def scenario(lib):
        def fn(x):
            base = lib.zeros(2, 2, dtype=x.dtype)
            target = base.view_as(base) if view == "whole" else base.transpose(0, 1)
            target.copy_(x * 3)
            return target, base
        return _forward_jacobian(lib, fn, randn(lib, 2, 2))
    assert same_in_both(scenario)[0] == "ok"


def test_vectorized_forward_jacobian_of_an_input_narrowed_from_a_larger_storage():
    def scenario(lib):
        x = randn(lib, 5)[:4]
        return _forward_jacobian(lib, lambda x: x.exp(), x), _forward_jacobian(lib, lambda x: x[1:].cos(), x)
    assert same_in_both(scenario)[0] == "ok"


def test_vectorized_forward_jacobian_of_a_view_past_the_input_differs_from_pytorch():
    # PyTorch's legacy vmap refuses an as_strided of a batched tensor that reads past its elements (the storage
    # of a batch of tangents holds the elements alone); retrograd's gives the Jacobian, rows of zeros past them.
    def scenario(lib):
        return _forward_jacobian(lib, lambda x: x.as_strided((5,), (1,), 0), randn(lib, 5)[:4])
    reverse = torch.autograd.functional.jacobian(lambda x: x.as_strided((5,), (1,), 0), randn(torch, 5)[:4])
    assert outcome(scenario, torch)[0] == "RuntimeError"
    assert outcome(scenario, rg) == ("ok", reverse.tolist())


# -- packing and unpacking ----------------------------------------------------------------------------------------
def test_make_dual_of_an_inference_tensor_in_inference_mode():
    def scenario(lib):
        fw = _fw(lib)
        with lib.inference_mode():
            foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
            before = foo.clone()
            with fw.dual_level():
                dual = fw.make_dual(foo, bar)
                is_view = dual._is_view()
                dual += 1  # writes foo: the dual is its alias
                return is_view, bool(lib.allclose(foo, before)), fw.unpack_dual(dual).tangent
    assert same_in_both(scenario) == ("ok", (False, False, None))


def test_a_dual_prints_its_tangent():
    def scenario(lib):
        fw = _fw(lib)
        with fw.dual_level():
            a = lib.tensor([1.0, 2.0, 3.0])
            b = fw.make_dual(a, lib.tensor([4.0, 5.0, 6.0]))
            primal, tangent = fw.unpack_dual(b)
            return ["tangent=" in str(t) for t in (a, b, primal, tangent)], str(b)
    assert same_in_both(scenario) == ("ok", ([False, True, False, False],
                                             "tensor([1., 2., 3.], tangent=tensor([4., 5., 6.]))"))


def test_basic_packing_unpacking():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            baz = fw.make_dual(foo, bar)
            primal, tangent = fw.unpack_dual(baz)
            again = fw.unpack_dual(baz)  # a named tuple; each call a new view of the primal, the same tangent
            plain = fw.unpack_dual(foo)
            return (primal, tangent is bar, type(again).__name__, again.primal is not primal, again.primal,
                    again.tangent is bar, plain.primal, plain.tangent)
    assert same_in_both(scenario)[1][1:4] == (True, "UnpackedDualTensor", True)


def test_advanced_packing_unpacking():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), ones(lib, 2)
        seen = []
        with fw.dual_level():  # memory and version counters are shared
            dual = fw.make_dual(foo, bar)
            seen.append(dual.data_ptr() == foo.data_ptr())
            foo.add_(1)
            seen.append(foo._version == dual._version)
            primal, tangent = fw.unpack_dual(dual)
            seen.append((primal.data_ptr() == foo.data_ptr(), tangent.data_ptr() == bar.data_ptr(), tangent is bar))
            foo.add_(1)
            bar.add_(1)
            seen.append((foo._version == primal._version, bar._version == tangent._version))
        with fw.dual_level():  # backward through packing and unpacking; detach, no_grad and detach_
            foo.requires_grad_()
            bar.requires_grad_()
            dual = fw.make_dual(foo, bar)
            primal, tangent = fw.unpack_dual(dual)
            seen.append(lib.autograd.grad(primal.sum(), (foo, bar), retain_graph=True, allow_unused=True))
            seen.append(lib.autograd.grad(tangent.sum(), (foo, bar), retain_graph=True, allow_unused=True))
            p, t = fw.unpack_dual(dual.detach() * 2)
            seen.append((p.requires_grad, p, t))
            with lib.no_grad():
                out = dual * 3
            p, t = fw.unpack_dual(out)
            seen.append((p.requires_grad, t.requires_grad, p, t))
            copy = dual.clone()
            copy.detach_()
            p, t = fw.unpack_dual(copy * 2)
            seen.append((p.requires_grad, p, t))
        return seen
    assert same_in_both(scenario)[0] == "ok"


# -- in-place ops and views ----------------------------------------------------------------------------------------
def test_view_inplace_non_differentiable_views():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), ones(lib, 2)
        seen = []
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            dual *= 2  # foo is a view of the dual that no forward grad flows to
            seen.append((fw.unpack_dual(foo).tangent, bar, fw.unpack_dual(dual).tangent, foo))
            primal, tangent = fw.unpack_dual(dual)
            seen.append((fw.unpack_dual(primal).tangent, fw.unpack_dual(tangent).tangent))
            primal *= 2  # the dual's tangent stays
            seen.append(tuple(fw.unpack_dual(dual)))
            tangent *= 2  # the dual's primal stays
            seen.append(tuple(fw.unpack_dual(dual)))
        return seen
    assert same_in_both(scenario)[0] == "ok"


def test_view_inplace_differentiable_views_and_plain_tensors_written_from_duals():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), ones(lib, 2)
        seen = []
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            view = dual.narrow(0, 0, 1)
            view *= 2  # the base's tangent follows; foo (not forward differentiable) gets none
            seen.append((fw.unpack_dual(foo).tangent, fw.unpack_dual(dual).tangent, fw.unpack_dual(view).tangent))
            baz = randn(lib, 2, seed=2)
            baz += dual
            seen.append(fw.unpack_dual(baz).tangent)
            baz = randn(lib, 2, seed=3)
            baz[0] = dual[0]  # the rest of baz gets a tangent of zeros
            seen.append(fw.unpack_dual(baz).tangent)
            baz = randn(lib, 2, seed=4)
            detached = baz.detach()
            detached += dual  # a detached alias passes nothing on
            seen.append(fw.unpack_dual(baz).tangent)
        return seen
    assert same_in_both(scenario)[0] == "ok"


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_"])
def test_inplace_from_a_dual_into_a_view_of_a_plain_tensor_makes_the_tangents_views(op):
    def scenario(lib):
        fw = _fw(lib)
        base = randn(lib, 2, 2)
        view = base.transpose(0, 1)
        with fw.dual_level():
            getattr(view, op)(fw.make_dual(randn(lib, 2, 2, seed=1), randn(lib, 2, 2, seed=2)))
            p, t = fw.unpack_dual(base)
            p_before, t_before = p.clone(), t.clone()
            view *= 2
            p, t = fw.unpack_dual(base)
            return bool(lib.allclose(p_before * 2, p)), bool(lib.allclose(t_before * 2, t)), t
    assert same_in_both(scenario)[1][:2] == (True, True)


@pytest.mark.parametrize("view", ["whole", "transposed"])
def test_inplace_copy_of_a_dual_into_a_view_of_a_plain_tensor(view):
    def scenario(lib):
        fw = _fw(lib)
        base = lib.zeros(2, 2, dtype=lib.float64)
        target = base.view_as(base) if view == "whole" else base.transpose(0, 1)
        tangent = randn(lib, 2, 2, seed=1)
        with fw.dual_level():
            x = fw.make_dual(randn(lib, 2, 2), tangent)
            target.copy_(x)
            x_t, view_t, base_t = (fw.unpack_dual(t).tangent for t in (x, target, target._base))
            # a view of the whole base with the tangent's layout shares the tangent; another is a view of the base's
            return (x_t is tangent, view_t is base_t, view_t._is_view(), view_t._base is base_t, view_t, base_t)
    assert same_in_both(scenario)[1][0] is True


def test_out_variant_with_a_dual_is_refused():
    def scenario(lib):
        fw = _fw(lib)
        errors = []
        with fw.dual_level():
            dual, plain = fw.make_dual(randn(lib, 2), randn(lib, 2, seed=1)), randn(lib, 2, seed=2)
            for out, other in ((dual, plain), (plain, dual)):
                try:
                    lib.add(plain, other, out=out)
                except NotImplementedError as e:
                    errors.append(str(e))
        return errors
    assert same_in_both(scenario) == ("ok", ["Trying to use forward AD with add_out that does not support it because "
                                             "it is an out= function"] * 2)


def test_leaving_a_level_with_a_backward_graph_through_a_dual():
    def scenario(lib):
        fw = _fw(lib)
        a = randn(lib, 10, requires_grad=True)
        with fw.dual_level():
            db = fw.make_dual(randn(lib, 10, seed=1), a).exp()  # the tangent has a graph of its own
            tangent = fw.unpack_dual(db).tangent
        tangent.sum().backward()
        return a.grad, fw.unpack_dual(db).tangent
    assert same_in_both(scenario)[0] == "ok"
