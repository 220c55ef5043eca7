"""Module hooks (forward, full backward, global, state_dict), compared call by call with torch.nn."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.nn.modules import module as rg_module

torch = pytest.importorskip("torch")

W = np.arange(6.0).reshape(2, 3) / 10
B = np.array([0.5, -0.5])


def _linear(lib):
    lin = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W))
        lin.bias.copy_(lib.tensor(B))
    return lin


def _lists(ts):
    return [None if t is None else t.tolist() for t in ts]


def _both(fn):
    return fn(torch), fn(rg)


def test_forward_hooks_run_in_pytorchs_order_with_prepend_and_kwargs():
    def run(lib):
        calls = []
        lin = _linear(lib)

        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lin

            def forward(self, x, scale=1.0):
                return self.lin(x) * scale
        m = Wrap()
        m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kw: calls.append(("prekw", sorted(kw))) or (args, {"scale": 2.0}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("fw1"))
        m.register_forward_hook(lambda mod, args, kw, out: calls.append(("fwkw", kw["scale"])), with_kwargs=True,
                                prepend=True)
        m.register_forward_hook(lambda mod, args, out: out + 1)
        out = m(lib.ones(1, 3, dtype=lib.float64), scale=3.0)
        calls.append(out.tolist())
        return calls
    expected, got = _both(run)
    assert got == expected


def test_forward_pre_hook_single_value_is_wrapped_and_replaces_args():
    def run(lib):
        lin = _linear(lib)
        lin.register_forward_pre_hook(lambda m, args: args[0] * 0)
        return lin(lib.ones(2, 3, dtype=lib.float64)).tolist()
    expected, got = _both(run)
    assert got == expected


def test_forward_pre_hook_with_kwargs_bad_return_raises():
    def run(lib):
        lin = _linear(lib)
        lin.register_forward_pre_hook(lambda m, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError) as info:
            lin(lib.ones(1, 3, dtype=lib.float64))
        return str(info.value)
    expected, got = _both(run)
    assert got == expected


def test_removed_hooks_do_not_run_and_flags_are_dropped():
    def run(lib):
        calls = []
        lin = _linear(lib)
        h1 = lin.register_forward_hook(lambda m, a, k, o: calls.append("kw"), with_kwargs=True, always_call=True)
        h2 = lin.register_forward_pre_hook(lambda m, a, k: calls.append("prekw"), with_kwargs=True)
        lin(lib.ones(1, 3, dtype=lib.float64))
        h1.remove()
        h2.remove()
        h1.remove()  # twice is fine
        lin(lib.ones(1, 3, dtype=lib.float64))
        return calls, len(lin._forward_hooks_with_kwargs), len(lin._forward_hooks_always_called), \
            len(lin._forward_pre_hooks_with_kwargs)
    expected, got = _both(run)
    assert got == expected


def test_always_call_forward_hook_runs_when_forward_raises():
    def run(lib):
        calls = []

        class Bad(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        m = Bad()
        m.register_forward_hook(lambda mod, a, o: calls.append(("always", o)), always_call=True)
        m.register_forward_hook(lambda mod, a, o: calls.append("never"))
        m.register_forward_hook(lambda mod, a, o: 1 / 0, always_call=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="boom"):
                m(lib.ones(1))
        return calls, [str(x.message) for x in w]
    expected, got = _both(run)
    assert got == expected


def _full_backward_run(lib, *, pre_scale=None, replace_input=False, prepend=False):
    calls = []
    lin = _linear(lib)
    if pre_scale is not None:
        lin.register_full_backward_pre_hook(
            lambda m, go: calls.append(("pre", _lists(go))) or (go[0] * pre_scale,))
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(("bw1", _lists(gi), _lists(go))))
    if replace_input:
        lin.register_full_backward_hook(lambda m, gi, go: calls.append("bw0") or (gi[0] * 10,), prepend=prepend)
    x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = lin(x)
    (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
    return calls, x.grad.tolist(), lin.weight.grad.tolist(), lin.bias.grad.tolist()


def test_full_backward_hook_sees_grad_input_and_grad_output_as_pytorch():
    assert _full_backward_run(rg) == _full_backward_run(torch)


def test_full_backward_pre_hook_replaces_grad_output():
    assert _full_backward_run(rg, pre_scale=2.0) == _full_backward_run(torch, pre_scale=2.0)


@pytest.mark.parametrize("prepend", [False, True])
def test_full_backward_hook_replaces_grad_input(prepend):
    expected = _full_backward_run(torch, replace_input=True, prepend=prepend)
    assert _full_backward_run(rg, replace_input=True, prepend=prepend) == expected


def test_full_backward_hook_with_non_tensor_args_and_tuple_output():
    def run(lib):
        calls = []

        class Two(lib.nn.Module):
            def forward(self, a, k, b):
                return a * k, (a * b).sum()
        m = Two()
        m.register_full_backward_hook(lambda mod, gi, go: calls.append((_lists(gi), _lists(go))))
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        u, v = m(a, 3.0, b)
        (u.sum() * 2).backward()  # v gets no gradient: zeros, as PyTorch's
        return calls, a.grad.tolist(), _lists([b.grad])
    expected, got = _both(run)
    assert got == expected


def test_full_backward_hook_returning_wrong_count_raises():
    def run(lib):
        lin = _linear(lib)
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        x = lib.ones(1, 3, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lin(x).sum().backward()
        return str(info.value)
    expected, got = _both(run)
    assert got == expected


def test_full_backward_pre_hook_returning_wrong_count_raises():
    def run(lib):
        lin = _linear(lib)
        lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        with pytest.raises(RuntimeError) as info:
            lin(lib.ones(1, 3, dtype=lib.float64, requires_grad=True)).sum().backward()
        return str(info.value)
    expected, got = _both(run)
    assert got == expected


def test_full_backward_hook_fires_on_outputs_when_no_input_requires_grad():
    def run(lib):
        got = []
        lin = _linear(lib)
        lin.register_full_backward_hook(lambda m, gi, go: got.append((gi, _lists(go))))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
        return got, [str(x.message).split(" See ")[0] for x in w], lin.bias.grad.tolist()
    expected, got = _both(run)
    assert got == expected


def test_full_backward_hook_must_return_none_when_no_input_requires_grad():
    def run(lib):
        lin = _linear(lib)
        lin.register_full_backward_hook(lambda m, gi, go: (lib.ones(1),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as info:
                lin(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
        return str(info.value)
    expected, got = _both(run)
    assert got == expected


def test_inplace_on_input_with_full_backward_hook_raises():
    def run(lib):
        class AddOne(lib.nn.Module):
            def forward(self, a):
                return a.add_(1)
        m = AddOne()
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError) as info:
            m(lib.ones(2, requires_grad=True).clone())
        return str(info.value).split(". ")[0]
    expected, got = _both(run)
    assert got == expected.replace("BackwardHookFunctionBackward", "BackwardHookFunction")


def test_full_and_regular_backward_hooks_on_one_module_raise():
    def run(lib):
        msgs = []
        m = lib.nn.Linear(1, 1)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError) as info:
            m.register_backward_hook(lambda *a: None)
        msgs.append(str(info.value))
        m = lib.nn.Linear(1, 1)
        m.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError) as info:
            m.register_full_backward_hook(lambda *a: None)
        msgs.append(str(info.value))
        return msgs
    expected, got = _both(run)
    assert got == expected


def test_deprecated_backward_hook_runs_on_the_output_node():
    def run(lib):
        calls = []

        class Mul(lib.nn.Module):
            def forward(self, a, b):
                return a * b
        m = Mul()
        m.register_backward_hook(lambda mod, gi, go: calls.append((_lists(gi), _lists(go))))
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(a, b).sum().backward()
            m(a.exp(), b).sum().backward()  # two nodes in forward: PyTorch's FutureWarning
        return calls, [(type(x.message).__name__, str(x.message)) for x in w], a.grad.tolist()
    expected, got = _both(run)
    assert got == expected


def test_global_hooks_run_before_the_modules_own_and_are_removable():
    def run(lib, mod):
        calls = []
        lin = _linear(lib)
        lin.register_forward_pre_hook(lambda m, a: calls.append("own pre"))
        lin.register_forward_hook(lambda m, a, o: calls.append("own fw"))
        lin.register_full_backward_pre_hook(lambda m, go: calls.append("own bpre"))
        lin.register_full_backward_hook(lambda m, gi, go: calls.append("own bw"))
        handles = [mod.register_module_forward_pre_hook(lambda m, a: calls.append("global pre")),
                   mod.register_module_forward_hook(lambda m, a, k, o: calls.append(("global fw", k)),
                                                    with_kwargs=True),
                   mod.register_module_full_backward_pre_hook(lambda m, go: calls.append("global bpre")),
                   mod.register_module_full_backward_hook(lambda m, gi, go: calls.append("global bw"))]
        try:
            lin(lib.ones(1, 3, dtype=lib.float64, requires_grad=True)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        calls.append("removed")
        lin(lib.ones(1, 3, dtype=lib.float64, requires_grad=True)).sum().backward()
        return calls
    expected = run(torch, torch.nn.modules.module)
    got = run(rg, rg_module)
    assert got == expected


def test_global_full_and_regular_backward_hooks_raise():
    def run(mod):
        h = mod.register_module_full_backward_hook(lambda *a: None)
        try:
            with pytest.raises(RuntimeError) as info:
                mod.register_module_backward_hook(lambda *a: None)
        finally:
            h.remove()
        return str(info.value)
    expected = run(torch.nn.modules.module)
    torch.nn.modules.module._global_is_full_backward_hook = None
    got = run(rg_module)
    rg_module._global_is_full_backward_hook = None
    assert got == expected


def test_full_backward_hook_gradients_pass_gradcheck():
    lin = rg.nn.Linear(3, 2).double()
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 1.0,))
    lin.register_full_backward_pre_hook(lambda m, go: None)
    x = rg.randn(2, 3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: lin(t), (x,))


def test_state_dict_hooks_run_as_pytorchs():
    def run(lib):
        calls = []
        net = lib.nn.Sequential(lib.nn.Linear(1, 1))
        net[0].register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))

        def post(m, sd, prefix, meta):
            calls.append(("post", prefix, sorted(sd), meta))
        net[0].register_state_dict_post_hook(post)
        net._register_state_dict_hook(lambda m, sd, prefix, meta: {"replaced": 1})
        out = net.state_dict(keep_vars=True)
        calls.append(out)
        calls.append(dict(net[0].state_dict()._metadata))
        return calls
    expected, got = _both(run)
    assert got == expected


def test_state_dict_post_hook_returning_a_value_raises():
    def run(lib):
        m = lib.nn.Linear(1, 1)
        m.register_state_dict_post_hook(lambda *a: {})
        with pytest.raises(RuntimeError) as info:
            m.state_dict()
        return str(info.value)
    expected, got = _both(run)
    assert got == expected


def test_load_state_dict_post_hook_can_clear_incompatible_keys():
    def run(lib):
        calls = []
        net = lib.nn.Sequential(lib.nn.Linear(1, 1))

        def clear(m, keys):
            calls.append((type(m).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()
            keys.unexpected_keys.clear()
        net[0].register_load_state_dict_post_hook(lambda m, keys: calls.append(("child", list(keys.missing_keys))))
        net.register_load_state_dict_post_hook(clear)
        result = net.load_state_dict({"0.weight": lib.ones(1, 1), "extra": lib.ones(1)})
        calls.append((repr(result), net[0].weight.tolist()))
        return calls
    expected, got = _both(run)
    assert got == expected


def test_load_state_dict_pre_hook_sees_the_modules_entries():
    def run(lib):
        calls = []
        net = lib.nn.Sequential(lib.nn.Linear(1, 1))
        net[0].register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors: calls.append((prefix, sorted(sd), strict)))
        net.load_state_dict(net.state_dict())
        return calls
    expected, got = _both(run)
    assert got == expected
