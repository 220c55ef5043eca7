"""The ``__torch_function__`` protocol, against PyTorch's on the same numbers.

Tensor subclasses keep their class through functions, methods, operators and indexing (the default
``Tensor.__torch_function__``); an overriding subclass receives the calls PyTorch's receives (func names
and types in order); NotImplemented, tensor-likes, the switches that disable the protocol, modes, autograd
through subclasses, and custom Functions. See Note [Where __torch_function__ is checked].
"""
import numpy as np
import pytest

import retrograd as rg

from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def _logging(lib, seen, name="Logged"):
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append((func.__name__, [t.__name__ for t in types]))
        return super(cls_ref[0], cls).__torch_function__(func, types, args, kwargs)
    cls = type(name, (lib.Tensor,), {"__torch_function__": classmethod(__torch_function__)})
    cls_ref = [cls]
    return cls


def test_a_plain_subclass_keeps_its_class_through_functions_methods_operators_and_indexing():
    def scenario(lib):
        class Tagged(lib.Tensor):
            pass
        x = randn(lib, 2, 3).as_subclass(Tagged)
        results = {
            "add": lib.add(x, 1), "exp": x.exp(), "radd": 1 + x, "mul": x * x, "matmul": x @ x.t(), "neg": -x,
            "getitem": x[0], "slice": x[:, 1:], "advanced": x[[0, 1], [2, 0]], "cat": lib.cat([x, x]),
            "stack": lib.stack([x, x]), "sum": x.sum(dim=0), "max": tuple(x.max(dim=1)), "split": lib.split(x, 1),
            "detach": x.detach(), "view_as": x.view_as(x), "clone": x.clone(), "reshape": x.reshape(-1),
            "T": x.T, "compare": x > 0, "pow": x ** 2,
        }

        def kind(r):
            return [kind(v) for v in r] if isinstance(r, (tuple, list)) else type(r).__name__
        return {k: (kind(r), r) for k, r in results.items()}, type(x.item() if x.numel() == 1 else x.tolist())
    same_in_both(scenario)


def test_as_subclass_is_an_alias_in_the_graph_and_refuses_a_class_that_is_not_a_tensor():
    def scenario(lib):
        class Tagged(lib.Tensor):
            pass
        a = randn(lib, 3, requires_grad=True)
        x = a.as_subclass(Tagged)
        (x * x).sum().backward()
        plain = randn(lib, 2).as_subclass(Tagged)
        return (type(x).__name__, x.grad_fn.name(), x.is_leaf, x._base is a, a.grad, type(a.grad).__name__,
                plain.grad_fn, plain.is_leaf, plain.as_subclass(lib.Tensor).__class__.__name__)
    assert same_in_both(scenario)[1][:3] == ("Tagged", "AliasBackward0", False)

    def refused(lib):
        return randn(lib, 2).as_subclass(int)
    assert same_in_both(refused)[0] == "TypeError"


def test_autograd_through_a_subclass_gives_plain_gradients_and_subclass_results():
    def scenario(lib):
        class Tagged(lib.Tensor):
            pass
        x = randn(lib, 2, 3).as_subclass(Tagged).requires_grad_()
        y = (x * x + x.exp() * 2).sum()
        y.backward()
        g, = lib.autograd.grad((x.sin() * x).sum(), x)
        return (type(y).__name__, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(), type(x.grad).__name__,
                x.grad, type(g).__name__, g)
    same_in_both(scenario)


def test_gradients_through_a_subclass_match_finite_differences():
    class Tagged(rg.Tensor):
        pass

    def fn(x):
        t = x.as_subclass(Tagged)
        return (t * t.exp()).sum(dim=0) + t[0]
    x = rg.tensor(np.random.default_rng(3).standard_normal((3, 2)), dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(fn, (x,))
    assert type(fn(x)) is Tagged


def test_an_overriding_subclass_sees_the_calls_pytorch_shows_it():
    def scenario(lib):
        seen = []
        Logged = _logging(lib, seen)
        x = randn(lib, 2, 3).as_subclass(Logged).requires_grad_()
        y = lib.add(x.exp(), 1)
        z = (y * 2 + 1).sum(dim=0)
        w = z[1] - lib.cat([z, z]).mean()
        u = x.view_as(x).detach()
        w.backward()
        calls = list(seen)  # what reading .grad would add is left out (retrograd's properties do not dispatch)
        return calls, type(w).__name__, type(u).__name__, x.grad
    calls = same_in_both(scenario)[1][0]
    assert [c[0] for c in calls] == ["requires_grad_", "exp", "add", "mul", "add", "sum", "__getitem__", "cat",
                                     "mean", "sub", "view_as", "detach", "backward"]


def test_subclasses_come_before_their_superclasses_and_all_not_implemented_raises_pytorchs_type_error():
    def scenario(lib):
        order = []

        class Base(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                order.append(("Base", [t.__name__ for t in types]))
                return NotImplemented

        class Derived(Base):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                order.append(("Derived", [t.__name__ for t in types]))
                return NotImplemented
        a, b = randn(lib, 2).as_subclass(Base), randn(lib, 2).as_subclass(Derived)
        try:
            lib.add(a, b)
        except TypeError as e:
            return order, str(e).replace("torch.", "retrograd.").split("\n")[0]
    assert same_in_both(scenario)[1][0] == [("Derived", ["Derived", "Base"]), ("Base", ["Derived", "Base"])]

    def unrelated(lib):
        class P(lib.Tensor):
            pass

        class Q(lib.Tensor):
            pass
        return lib.add(randn(lib, 2).as_subclass(P), randn(lib, 2).as_subclass(Q))
    assert same_in_both(unrelated)[0] == "TypeError"

    def derived_wins(lib):
        class P(lib.Tensor):
            pass

        class R(P):
            pass
        return [type(r).__name__ for r in (lib.add(randn(lib, 2).as_subclass(P), randn(lib, 2).as_subclass(R)),
                                           randn(lib, 2).as_subclass(P) * randn(lib, 2).as_subclass(R))]
    assert same_in_both(derived_wins) == ("ok", ["R", "R"])


def test_a_tensor_like_takes_the_calls_it_is_an_argument_of():
    def scenario(lib):
        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("handled", func.__name__, [t.__name__ for t in types],
                        [type(a).__name__ for a in args], sorted((kwargs or {}).items()))
        x, like = randn(lib, 2), Like()
        return (lib.add(like, 1), lib.mul(x, like), x + like, lib.exp(like), lib.cat([x, like]),
                lib.overrides.is_tensor_like(like), lib.overrides.is_tensor_like(x), lib.overrides.is_tensor_like(1),
                lib.overrides.has_torch_function((x, like)), lib.overrides.has_torch_function((x, 1)))
    result = same_in_both(scenario)[1]
    assert result[0][:3] == ("handled", "add", ["Like"])


def test_handle_torch_function_serves_a_users_own_function():
    def scenario(lib):
        def scale(x, factor=2):
            if lib.overrides.has_torch_function((x,)):
                return lib.overrides.handle_torch_function(scale, (x,), x, factor=factor)
            return x * factor

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func.__name__, len(args), kwargs
        return scale(Like(), factor=3), scale(randn(lib, 2))
    same_in_both(scenario)


def test_the_switches_that_disable_the_protocol():
    def scenario(lib):
        seen = []
        Logged = _logging(lib, seen)
        x = randn(lib, 2).as_subclass(Logged)
        with lib._C.DisableTorchFunctionSubclass():
            a = x + 1
            b = x.exp()
        with lib._C.DisableTorchFunction():
            c = lib.mul(x, 2)
        d = x - 1
        return type(a).__name__, type(b).__name__, type(c).__name__, type(d).__name__, seen, a, d
    assert same_in_both(scenario)[1][:5] == ("Tensor", "Tensor", "Tensor", "Logged", [("sub", ["Logged"])])


def test_a_torch_function_mode_sees_each_call_first_and_runs_with_itself_off():
    def scenario(lib):
        seen = []

        class Recording(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                # (PyTorch's methods give a mode the types [Tensor] for a plain self, its functions []: retrograd's
                # methods are its functions, so only the functions' types are compared)
                seen.append((func.__name__, [t.__name__ for t in types] if func.__name__ in ("add", "sum") else
                             "-"))
                if func.__name__ == "neg":
                    return "negated"
                return func(*args, **(kwargs or {}))
        Logged = _logging(lib, seen)
        x = randn(lib, 2, 3)
        with Recording():
            y = lib.add(x, 1).exp().sum(dim=1)
            n = -x
            z = x.as_subclass(Logged) * 2
        after = x * 3
        return seen, y, n, type(z).__name__, after
    calls = same_in_both(scenario)[1][0]
    assert calls == [("add", []), ("exp", "-"), ("sum", []), ("neg", "-"), ("mul", "-"), ("mul", ["Logged"])]


def test_a_custom_function_dispatches_inside_its_forward_and_through_view_as_for_an_input_returned_as_is():
    def scenario(lib):
        seen = []
        Logged = _logging(lib, seen)
        same = function(lib, lambda ctx, x: x, lambda ctx, g: g, name="Same")
        double = function(lib, lambda ctx, x: x * 2, lambda ctx, g: g * 2, name="Double")
        x = randn(lib, 3).as_subclass(Logged).requires_grad_()
        seen.clear()
        a = same.apply(x)
        b = double.apply(x)
        calls = list(seen)
        (a + b).sum().backward()
        return calls, type(a).__name__, type(b).__name__, a.grad_fn.name(), b.grad_fn.name(), x.grad
    assert same_in_both(scenario)[1][0] == [("view_as", ["Logged"]), ("mul", ["Logged"])]


def test_parameters_and_plain_tensors_take_no_detour():
    def scenario(lib):
        p = lib.nn.Parameter(randn(lib, 2))
        q = (p * 2 + lib.exp(p)).sum()
        q.backward()
        return type(q).__name__, type(p * 1).__name__, type(p[0]).__name__, p.grad, \
            lib.overrides.has_torch_function((p, randn(lib, 2)))
    assert same_in_both(scenario)[1][:3] == ("Tensor", "Tensor", "Tensor")
