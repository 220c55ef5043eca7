"""grad, grad_and_value, vjp, jacrev, functional_call and stack_module_state against torch.func, and their compositions.

Each scenario takes the library (``rg`` or ``torch``) and returns what it computed; errors are
compared by type and first sentence.
"""
import numpy as np
import pytest

import retrograd as rg
from retrograd.func import functional_call, grad, jacrev, stack_module_state, vjp, vmap
from retrograd.ops._call import interposition

from .test_vmap import check, t

torch = pytest.importorskip("torch")
_rng = np.random.default_rng(11)
X = _rng.standard_normal((3, 4))
V = _rng.standard_normal(4)
W = _rng.standard_normal((4, 5))


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert interposition.stack == ()


def _f(m):
    return lambda x: (x.sin() * x).sum()


def _mlp(m):
    def f(w, b, x):
        return ((x @ w + b).tanh() ** 2).sum()
    return f


SCENARIOS = {
    "grad": lambda m: m.func.grad(_f(m))(t(m, X)),
    "grad_argnums_tuple": lambda m: m.func.grad(_mlp(m), argnums=(0, 2))(t(m, W), t(m, V[:1] * 0 + 0.5), t(m, X)),
    "grad_negative_argnum": lambda m: m.func.grad(_mlp(m), argnums=-1)(t(m, W), t(m, V[0]), t(m, X)),
    "grad_pytree_argument": lambda m: m.func.grad(lambda d: (d["a"] * d["b"]).sum())({"a": t(m, V), "b": t(m, V * 2)}),
    "grad_has_aux": lambda m: m.func.grad(lambda x: ((x ** 2).sum(), x.mean()), has_aux=True)(t(m, V)),
    "grad_unused_input_is_zero": lambda m: m.func.grad(lambda x, y: (x * 2).sum(), argnums=1)(t(m, V), t(m, V)),
    "grad_and_value": lambda m: m.func.grad_and_value(_f(m))(t(m, X)),
    "grad_and_value_has_aux": lambda m: m.func.grad_and_value(lambda x: (x.sum(), {"n": x * 2}), has_aux=True)(
        t(m, V)),
    "grad_of_grad": lambda m: m.func.grad(lambda x: m.func.grad(lambda y: (y ** 3).sum())(x).sum())(t(m, V)),
    "vjp": lambda m: (lambda o, fn: (o, fn(t(m, np.ones((3, 4))))))(*m.func.vjp(lambda x: x.exp() * 2, t(m, X))),
    "vjp_two_primals_tuple_output": lambda m: (lambda o, fn: (o, fn((t(m, np.ones(5)), t(m, np.ones(4))))))(
        *m.func.vjp(lambda w, v: (v @ w, v * 3), t(m, W), t(m, V))),
    "vjp_has_aux": lambda m: (lambda o, fn, aux: (o, fn(t(m, np.ones(4))), aux))(
        *m.func.vjp(lambda x: (x ** 2, x.sum()), t(m, V), has_aux=True)),
    "jacrev": lambda m: m.func.jacrev(lambda x: x.sin() * x.sum())(t(m, V)),
    "jacrev_matrix_input": lambda m: m.func.jacrev(lambda x: x @ t(m, W))(t(m, X)),
    "jacrev_argnums_tuple": lambda m: m.func.jacrev(lambda w, v: v @ w, argnums=(0, 1))(t(m, W), t(m, V)),
    "jacrev_tuple_output": lambda m: m.func.jacrev(lambda x: (x.exp(), x.sum()))(t(m, V)),
    "jacrev_has_aux": lambda m: m.func.jacrev(lambda x: (x * 2, x.mean()), has_aux=True)(t(m, V)),
    "jacrev_chunk_size": lambda m: m.func.jacrev(lambda x: (x @ t(m, W)).tanh(), chunk_size=2)(t(m, V)),
    "jacrev_of_jacrev": lambda m: m.func.jacrev(m.func.jacrev(lambda x: (x ** 3).sum()))(t(m, V)),
    "per_sample_grads": lambda m: m.func.vmap(m.func.grad(_mlp(m)), in_dims=(None, None, 0))(
        t(m, W), t(m, V[:1].repeat(5)), t(m, X)),
    "per_sample_grads_argnums": lambda m: m.func.vmap(m.func.grad(_mlp(m), argnums=(0, 1)), in_dims=(None, None, 0))(
        t(m, W), t(m, np.ones(5)), t(m, X)),
    "vmap_of_jacrev": lambda m: m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()))(t(m, X)),
    "vmap_of_vjp": lambda m: m.func.vmap(lambda x, c: m.func.vjp(lambda y: y.exp(), x)[1](c))(t(m, X), t(m, X)),
    "vmap_of_vjp_fn": lambda m: m.func.vmap(m.func.vjp(lambda y: y.exp() * y, t(m, V))[1])(t(m, X)),
    "vmap_inside_grad": lambda m: m.func.grad(lambda w: m.func.vmap(lambda x: (x @ w).sum() ** 2)(t(m, X)).sum())(
        t(m, W)),
    "grad_of_vmap_of_grad": lambda m: m.func.grad(
        lambda w: m.func.vmap(m.func.grad(lambda w2, x: ((x @ w2) ** 2).sum()), in_dims=(None, 0))(w, t(m, X)).sum())(
        t(m, W)),
    "vmap_of_vmap_of_grad": lambda m: m.func.vmap(m.func.vmap(m.func.grad(lambda w, x: (x @ w).tanh().sum()),
                                                              in_dims=(None, 0)), in_dims=(None, 0))(
        t(m, W), t(m, X.reshape(3, 1, 4).repeat(2, 1))),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_transform_matches_torch_func(name):
    assert check(SCENARIOS[name])[0] == "ok"


ERRORS = {
    "grad_non_scalar_output": lambda m: m.func.grad(lambda x: x * 2)(t(m, X)),
    "grad_argnum_out_of_range": lambda m: m.func.grad(lambda x: x.sum(), argnums=2)(t(m, X)),
    "grad_negative_argnum_out_of_range": lambda m: m.func.grad(lambda x: x.sum(), argnums=-2)(t(m, X)),
    "grad_argnums_float": lambda m: m.func.grad(lambda x: x.sum(), argnums=1.5)(t(m, X)),
    "grad_argnums_empty": lambda m: m.func.grad(lambda x: x.sum(), argnums=())(t(m, X)),
    "grad_argnums_repeated": lambda m: m.func.grad(lambda x: x.sum(), argnums=(0, 0))(t(m, X)),
    "grad_has_aux_not_a_pair": lambda m: m.func.grad(lambda x: x.sum(), has_aux=True)(t(m, X)),
    "grad_has_aux_triple": lambda m: m.func.grad(lambda x: (x.sum(), 1, 2), has_aux=True)(t(m, X)),
    "grad_non_tensor_input": lambda m: m.func.grad(lambda x: x)(5.0),
    "grad_no_inputs": lambda m: m.func.grad(lambda: 1)(),
    "grad_non_tensor_output": lambda m: m.func.grad(lambda x: 5)(t(m, X)),
    "vjp_non_tensor_primal": lambda m: m.func.vjp(lambda x: x, 5.0),
    "vjp_non_tensor_output": lambda m: m.func.vjp(lambda x: 5, t(m, X)),
    "vjp_has_aux_not_a_pair": lambda m: m.func.vjp(lambda x: x, t(m, X), has_aux=True),
    "vjp_cotangent_shape": lambda m: m.func.vjp(lambda x: x, t(m, X))[1](t(m, V)),
    "vjp_cotangent_structure": lambda m: m.func.vjp(lambda x: x, t(m, X))[1]([t(m, X)]),
    "jacrev_argnum_out_of_range": lambda m: m.func.jacrev(lambda x: x, argnums=3)(t(m, X)),
    "jacrev_chunk_size_zero": lambda m: m.func.jacrev(lambda x: x, chunk_size=0)(t(m, X)),
    "jacrev_non_tensor_output": lambda m: m.func.jacrev(lambda x: 5)(t(m, X)),
    "jacrev_has_aux_not_a_pair": lambda m: m.func.jacrev(lambda x: x, has_aux=True)(t(m, X)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_transform_errors_match_torch_func(name):
    assert check(ERRORS[name])[0] != "ok"


def test_transforms_leave_their_inputs_alone():
    x = rg.tensor([1.0, 2.0])
    g = grad(lambda a: (a ** 2).sum())(x)
    assert not x.requires_grad and x.grad is None
    assert not g.requires_grad  # nothing outside asked for a graph


def test_grad_composes_with_autograd_outside():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    g = grad(lambda a: (a ** 3).sum())(x)  # 3 x^2, differentiable in x
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


# -- per-sample gradients of an MLP 32-64-10, batch 64 --------------------------------------------------------
def _mlp_state(lib):
    rng = np.random.default_rng(5)
    params = {"w1": rng.standard_normal((32, 64)) * 0.2, "b1": rng.standard_normal(64) * 0.1,
              "w2": rng.standard_normal((64, 10)) * 0.2, "b2": rng.standard_normal(10) * 0.1}
    x = rng.standard_normal((64, 32))
    y = rng.integers(0, 10, 64)
    return ({k: lib.from_numpy(v) for k, v in params.items()}, lib.from_numpy(x), lib.from_numpy(y))


def _loss(lib):
    def loss(p, x, y):
        h = (x @ p["w1"] + p["b1"]).relu()
        return lib.nn.functional.cross_entropy((h @ p["w2"] + p["b2"]).unsqueeze(0), y.unsqueeze(0))
    return loss


def test_per_sample_gradients_of_an_mlp_match_torch_func_and_a_loop():
    params, x, y = _mlp_state(rg)
    ours = vmap(grad(_loss(rg)), in_dims=(None, 0, 0))(params, x, y)
    tp, tx, ty = _mlp_state(torch)
    theirs = torch.func.vmap(torch.func.grad(_loss(torch)), in_dims=(None, 0, 0))(tp, tx, ty)
    loop = [grad(_loss(rg))(params, x[i], y[i]) for i in range(64)]
    for k in params:
        assert tuple(ours[k].shape) == (64,) + tuple(params[k].shape)
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].numpy(), rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(ours[k].numpy(), np.stack([g[k].numpy() for g in loop]), rtol=1e-7, atol=1e-10)


# -- functional_call and stack_module_state --------------------------------------------------------------------
def _linear(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(4, 3)
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(np.arange(12.0).reshape(3, 4) / 10).to(m.weight.dtype))
        m.bias.zero_()
    return m


class _Tied:
    def __init__(self, lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2)
                self.b = lib.nn.Linear(2, 2)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))
        self.module = Tied()
        with lib.no_grad():
            for p in self.module.parameters():
                p.fill_(0.5)


def _f32(m, a):
    return m.from_numpy(np.asarray(a, dtype=np.float32))


FC = {
    "replaces_and_restores": lambda m: (lambda mod: (m.func.functional_call(
        mod, {"weight": _f32(m, np.ones((3, 4)))}, (_f32(m, X),)), mod.weight))(_linear(m)),
    "single_argument_and_kwargs": lambda m: m.func.functional_call(
        _linear(m), {"bias": _f32(m, np.ones(3))}, _f32(m, X), {}),
    "several_dicts": lambda m: m.func.functional_call(
        _linear(m), ({"weight": _f32(m, np.ones((3, 4)))}, {"bias": _f32(m, np.ones(3))}), (_f32(m, X),)),
    "repeated_key": lambda m: m.func.functional_call(
        _linear(m), ({"weight": _f32(m, np.ones((3, 4)))}, {"weight": _f32(m, np.ones((3, 4)))}), (_f32(m, X),)),
    "strict_missing": lambda m: m.func.functional_call(
        _linear(m), {"weight": _f32(m, np.ones((3, 4)))}, (_f32(m, X),), strict=True),
    "strict_unexpected": lambda m: m.func.functional_call(
        _linear(m), {"weight": _f32(m, np.ones((3, 4))), "bias": _f32(m, np.ones(3)), "foo": _f32(m, [1])},
        (_f32(m, X),), strict=True),
    "tied_weights_follow": lambda m: m.func.functional_call(
        _Tied(m).module, {"a.weight": _f32(m, np.zeros((2, 2)))}, (_f32(m, X[:, :2]),)),
    "tied_weights_conflict": lambda m: m.func.functional_call(
        _Tied(m).module, {"a.weight": _f32(m, np.zeros((2, 2))), "b.weight": _f32(m, np.ones((2, 2)))},
        (_f32(m, X[:, :2]),)),
    "grad_through_functional_call": lambda m: (lambda mod: m.func.grad(
        lambda p: m.func.functional_call(mod, p, (_f32(m, X),)).pow(2).sum())(
        {k: v.detach() for k, v in mod.named_parameters()}))(_linear(m)),
    "stack_module_state_empty": lambda m: m.func.stack_module_state([]),
    "stack_module_state_modes": lambda m: m.func.stack_module_state([m.nn.Linear(2, 2), m.nn.Linear(2, 2).eval()]),
    "stack_module_state_classes": lambda m: m.func.stack_module_state([m.nn.Linear(2, 2), m.nn.Tanh()]),
}


@pytest.mark.parametrize("name", sorted(FC))
def test_functional_call_matches_torch_func(name):
    check(FC[name])


def test_functional_call_restores_the_module_after_an_error():
    m = rg.nn.Linear(2, 2)
    w = m.weight
    with pytest.raises(RuntimeError):  # a weight of the wrong shape: the forward fails
        functional_call(m, {"weight": rg.zeros(2, 3)}, (rg.ones(1, 2),))
    assert m.weight is w and m._parameters["weight"] is w


def test_an_ensemble_by_stack_module_state_and_vmap():
    models = [rg.nn.Linear(4, 3) for _ in range(5)]
    params, buffers = stack_module_state(models)
    assert tuple(params["weight"].shape) == (5, 3, 4) and params["weight"].requires_grad and params["weight"].is_leaf
    x = rg.from_numpy(X).float()
    base = models[0]
    out = vmap(lambda p, b: functional_call(base, (p, b), (x,)), in_dims=(0, 0))(params, buffers)
    expected = np.stack([mod(x).detach().numpy() for mod in models])
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)


def test_jacrev_agrees_with_autograd_functional_jacobian():
    x = rg.from_numpy(V)
    f = lambda a: (a @ rg.from_numpy(W)).tanh()  # noqa: E731
    np.testing.assert_allclose(jacrev(f)(x).numpy(), rg.autograd.functional.jacobian(f, x).numpy(), rtol=1e-10)


def test_vjp_fn_may_be_called_again():
    out, fn = vjp(lambda a: a * a, rg.from_numpy(V))
    (g1,) = fn(rg.ones(4))
    (g2,) = fn(rg.ones(4) * 2)
    np.testing.assert_allclose(g2.numpy(), 2 * g1.numpy())


# -- autograd.grad(is_grads_batched=True) ---------------------------------------------------------------------
def test_is_grads_batched_runs_one_vmapped_pass():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp() * x
    calls = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append(tuple(grad_outputs[0].shape)))
    (g,) = rg.autograd.grad(y, x, rg.eye(3), is_grads_batched=True)
    assert calls == [(3,)]  # one pass, the node seeing one sample's shape
    assert not g.requires_grad
    ta = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tg,) = torch.autograd.grad(ta.exp() * ta, ta, torch.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)


def test_is_grads_batched_beside_plain_passes_on_other_threads():
    # All three passes wait for each other inside a hook, so they are in flight at once: the batched
    # one leaves the loop the others run on as it was, during the pass and after it.
    import threading

    from retrograd.autograd import engine
    before = engine.compiled_loop_in_use()
    meeting = threading.Barrier(3)
    seen, results, errors = {}, {}, []

    def graph(lib, x, name):
        h = x.sin() * x
        if lib is rg:
            def meet(grad):
                meeting.wait(timeout=60)
                seen[name] = engine.compiled_loop_in_use()
            h.register_hook(meet)
        return (h * x + h.exp()).tanh()

    def batched(lib):
        x = lib.tensor(X, requires_grad=True)
        return lib.autograd.grad(graph(lib, x, "batched"), x, lib.eye(12, dtype=lib.float64).reshape(12, 3, 4),
                                 is_grads_batched=True)[0]

    def plain(lib, name):
        x = lib.tensor(X * (2.0 if name == "plain 2" else 1.0), requires_grad=True)
        graph(lib, x, name).sum().backward()
        return x.grad

    def run(name, fn):
        try:
            results[name] = fn(rg)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            meeting.abort()

    jobs = {"batched": batched, "plain 1": lambda lib: plain(lib, "plain 1"),
            "plain 2": lambda lib: plain(lib, "plain 2")}
    threads = [threading.Thread(target=run, args=item) for item in jobs.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert seen == dict.fromkeys(jobs, before)
    assert engine.compiled_loop_in_use() is before
    for name, fn in jobs.items():
        np.testing.assert_allclose(results[name].numpy(), fn(torch).numpy(), rtol=1e-12, atol=1e-14)


def test_per_sample_gradients_of_a_conv2d_match_torch_func():
    rng = np.random.default_rng(2)
    xa, wa, ba = rng.standard_normal((5, 1, 1, 6, 6)), rng.standard_normal((2, 1, 3, 3)), rng.standard_normal(2)

    def run(lib):
        conv = lib.nn.Conv2d(1, 2, 3).double()
        params = {"weight": lib.from_numpy(wa), "bias": lib.from_numpy(ba)}
        loss = lambda p, x: (lib.func.functional_call(conv, p, (x,)) ** 2).sum()  # noqa: E731
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, lib.from_numpy(xa))

    ours, theirs = run(rg), run(torch)
    for k in ("weight", "bias"):
        assert tuple(ours[k].shape) == tuple(theirs[k].shape)
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].numpy(), rtol=1e-10, atol=1e-12)


def test_forward_over_reverse_compositions_give_the_hessian_as_torch_func():
    def f(lib):
        return lambda x: (x ** 3).sum() + (x[0] * x[1]).sin()
    xa = np.array([1.0, 2.0])
    expected = torch.func.hessian(f(torch))(torch.tensor(xa)).numpy()
    x = rg.tensor(xa)
    fn = f(rg)
    for transform in (rg.func.hessian(fn), rg.func.jacfwd(rg.func.jacrev(fn)), rg.func.jacfwd(rg.func.grad(fn)),
                      rg.func.jacrev(rg.func.jacrev(fn))):
        np.testing.assert_allclose(transform(x).numpy(), expected, rtol=1e-12, atol=1e-12)
