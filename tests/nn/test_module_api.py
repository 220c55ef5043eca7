"""Module's conveniences and the containers, compared with torch.nn on the same calls."""
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(rg)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and first sentence are what is compared
        return type(e).__name__, str(e).replace("torch", "retrograd")
    return None


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 3)
            self.seq = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ReLU())
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.register_buffer("steps", lib.tensor(0))

        def forward(self, x):
            return self.seq(self.fc(x))
    return Net()


def test_get_submodule_parameter_buffer_and_their_errors():
    def run(lib):
        net = _net(lib)
        found = [type(net.get_submodule("seq.0")).__name__, net.get_submodule("") is net,
                 tuple(net.get_parameter("seq.0.weight").shape), tuple(net.get_buffer("running").shape)]
        errors = [_error(lambda: net.get_submodule("seq.5")), _error(lambda: net.get_submodule("fc.weight")),
                  _error(lambda: net.get_parameter("running")), _error(lambda: net.get_parameter("fc.nope")),
                  _error(lambda: net.get_buffer("fc.weight")), _error(lambda: net.get_buffer("nothing"))]
        return found, errors
    expected, got = _both(run)
    assert got == expected


def test_named_buffers_and_modules_with_prefix_recurse_and_duplicates():
    def run(lib):
        net = _net(lib)
        shared = lib.nn.Linear(1, 1)
        net.a, net.b = shared, shared
        return ([n for n, _ in net.named_buffers(prefix="m")], [n for n, _ in net.named_buffers(recurse=False)],
                [n for n, _ in net.named_modules(prefix="root")],
                [n for n, _ in net.named_modules(remove_duplicate=False)],
                [n for n, _ in net.named_parameters(remove_duplicate=False)], [n for n, _ in net.named_children()])
    expected, got = _both(run)
    assert got == expected


def test_non_persistent_buffer_is_left_out_of_state_dict():
    def run(lib):
        net = _net(lib)
        return list(net.state_dict()), [n for n, _ in net.named_buffers()]
    expected, got = _both(run)
    assert got == expected


def test_state_dict_with_destination_prefix_and_keep_vars():
    def run(lib):
        net = _net(lib)
        dest = OrderedDict()
        out = net.state_dict(destination=dest, prefix="p.", keep_vars=True)
        return out is dest, list(out), out["p.fc.weight"] is net.fc.weight, out["p.fc.weight"].requires_grad, \
            net.state_dict()["fc.weight"].requires_grad
    expected, got = _both(run)
    assert got == expected


def test_load_state_dict_result_and_errors_match_pytorch():
    def run(lib):
        net = _net(lib)
        sd = net.state_dict()
        ok = net.load_state_dict(sd)
        sd.pop("fc.bias")
        sd["extra.key"] = lib.zeros(1)
        loose = net.load_state_dict(sd, strict=False)
        bad = dict(net.state_dict())
        bad["fc.weight"] = lib.zeros(4, 4)
        bad["fc.bias"] = 3
        errors = [_error(lambda: net.load_state_dict(sd)), _error(lambda: net.load_state_dict(bad)),
                  _error(lambda: net.load_state_dict([1]))]
        return repr(ok), tuple(ok), type(loose).__name__, loose.missing_keys, loose.unexpected_keys, errors
    expected, got = _both(run)
    assert got == expected


def test_load_state_dict_assign_replaces_the_tensors():
    def run(lib):
        net = lib.nn.Linear(2, 1)
        new_w = lib.full((1, 2), 5.0)
        net.load_state_dict({"weight": new_w, "bias": lib.zeros(1)}, assign=True)
        return (type(net.weight).__name__, net.weight.requires_grad, net.weight.tolist(),
                net.weight.data_ptr() == new_w.data_ptr() if lib is torch else np.shares_memory(
                    net.weight._data, new_w._data))
    expected, got = _both(run)
    assert got == expected


def test_to_dtype_tensor_half_double_float_and_type_keep_integer_buffers():
    def run(lib):
        net = _net(lib)
        dtypes = []
        for convert in (lambda m: m.double(), lambda m: m.half(), lambda m: m.float(),
                        lambda m: m.to(lib.float64), lambda m: m.to(lib.zeros(1, dtype=lib.float32)),
                        lambda m: m.to("cpu", lib.float64), lambda m: m.type(lib.float32)):
            assert convert(net) is net
            dtypes.append([str(t.dtype).split(".")[1] for t in net.state_dict().values()])
        return dtypes, _error(lambda: net.to(lib.int32))[0]
    expected, got = _both(run)
    assert got == expected


def test_requires_grad_zero_grad_train_eval_apply():
    def run(lib):
        net = _net(lib)
        net(lib.ones(1, 2)).sum().backward()
        net.zero_grad(set_to_none=False)
        zeros = [p.grad.abs().sum().item() for p in net.parameters()]
        net.zero_grad()
        nones = [p.grad is None for p in net.parameters()]
        net.requires_grad_(False)
        flags = [p.requires_grad for p in net.parameters()]
        modes = [m.training for m in net.eval().modules()] + [m.training for m in net.train().modules()]
        seen = []
        net.apply(lambda m: seen.append(type(m).__name__))
        return zeros, nones, flags, modes, seen, _error(lambda: net.train("yes"))
    expected, got = _both(run)
    assert got == expected


def test_register_errors_match_pytorch():
    def run(lib):
        net = _net(lib)
        return [_error(lambda: net.register_buffer("a.b", lib.zeros(1))),
                _error(lambda: net.register_buffer("", lib.zeros(1))),
                _error(lambda: net.register_buffer("fc", lib.zeros(1))),
                _error(lambda: net.register_buffer(1, lib.zeros(1))),
                _error(lambda: net.register_parameter("running", lib.nn.Parameter(lib.zeros(1)))),
                _error(lambda: net.add_module("x", 3)),
                _error(lambda: net.register_module("", lib.nn.ReLU())),
                _error(lambda: setattr(net, "fc", 3))]
    expected, got = _both(run)
    assert [e[0] for e in got] == [e[0] for e in expected]
    assert [e[1].split(" (")[0] for e in got] == [e[1].split(" (")[0] for e in expected]


def test_delattr_and_dir():
    def run(lib):
        net = _net(lib)
        del net.running
        del net.fc
        names = dir(net)
        return "running" in names, "seq" in names, "fc" in names, [n for n, _ in net.named_buffers()], \
            _error(lambda: net.fc)
    expected, got = _both(run)
    assert got == expected


def test_repr_of_nested_modules_and_containers_matches_pytorch():
    def run(lib):
        net = _net(lib)
        net.layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.ReLU(), lib.nn.ReLU()])
        net.empty = lib.nn.ModuleList()
        net.params = lib.nn.ParameterList([lib.nn.Parameter(lib.zeros(2, 3)), lib.ones(1), "s"])
        net.pdict = lib.nn.ParameterDict({"w": lib.zeros(2)})
        return repr(net)
    expected, got = _both(run)
    assert got == expected.replace("torch.", "retrograd.")


def test_share_memory_returns_the_module():
    net = rg.nn.Linear(1, 1)
    assert net.share_memory() is net


def test_sequential_slicing_append_insert_extend_pop_and_arithmetic():
    def run(lib):
        a, b, c = lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid()
        s = lib.nn.Sequential(a, b)
        out = [[type(m).__name__ for m in s[::-1]], type(s[1:]).__name__]
        s.append(c)
        s.insert(0, lib.nn.Identity())
        s.insert(-1, lib.nn.ELU())
        out.append(list(s._modules))
        out.append([type(m).__name__ for m in s])
        out.append(type(s.pop(1)).__name__)
        out.append([type(m).__name__ for m in s])
        s.extend([lib.nn.GELU()])
        del s[0:2]
        out.append([(k, type(m).__name__) for k, m in s._modules.items()])
        out.append([type(m).__name__ for m in (s + lib.nn.Sequential(a))])
        out.append(len(s * 2) == len(2 * s) == 2 * len(s))
        s *= 2
        out.append([k for k in s._modules])
        s += lib.nn.Sequential(b)
        out.append(len(s))
        out.append([k for k in dir(s) if k.isdigit()])
        out += [_error(lambda: s.insert(99, a)), _error(lambda: s.insert(0, 3)), _error(lambda: s + [a]),
                _error(lambda: s * 0), _error(lambda: s * 1.5), _error(lambda: s[10])]
        return out
    expected, got = _both(run)
    assert got == expected


def test_module_list_methods_match_pytorch():
    def run(lib):
        ml = lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.Tanh()])
        ml.insert(1, lib.nn.Sigmoid())
        ml.append(lib.nn.ELU())
        ml += [lib.nn.GELU()]
        out = [[type(m).__name__ for m in ml], type(ml.pop(0)).__name__, list(ml._modules)]
        del ml[::2]
        out.append([(k, type(m).__name__) for k, m in ml._modules.items()])
        out.append(type(ml + [lib.nn.ReLU()]).__name__)
        ml[-1] = lib.nn.Identity()
        out.append(repr(ml))
        out += [_error(lambda: ml.extend(3)), _error(lambda: ml[7])]
        return out
    expected, got = _both(run)
    assert got == expected


def test_module_dict_methods_match_pytorch():
    def run(lib):
        md = lib.nn.ModuleDict([("b", lib.nn.ReLU()), ("a", lib.nn.Tanh())])
        md.update({"c": lib.nn.ELU()})
        out = [list(md.keys()), type(md.pop("b")).__name__, list(md), "a" in md, len(md)]
        out += [_error(lambda: md.update(3)), _error(lambda: md.update([("x",)])), _error(lambda: md.update([3]))]
        md.clear()
        out.append(len(md))
        return out
    expected, got = _both(run)
    assert got == expected


def test_parameter_list_registers_and_converts_tensors():
    def run(lib):
        pl = lib.nn.ParameterList([lib.zeros(2), lib.nn.Parameter(lib.ones(1), requires_grad=False)])
        pl.append(lib.ones(3))
        pl.extend([lib.ones(4)])
        pl += [lib.ones(5)]
        pl[0] = lib.full((2,), 7.0)
        out = [len(pl), [type(p).__name__ for p in pl], [p.requires_grad for p in pl],
               [n for n, _ in pl.named_parameters()],
               pl[0].tolist(), len(pl[1:4]), [k for k in dir(pl) if k.isdigit()]]
        out += [_error(lambda: pl(1)), _error(lambda: pl.extend(lib.ones(2))), _error(lambda: pl[9])]
        return out
    expected, got = _both(run)
    assert got == expected


def test_parameter_dict_behaves_as_pytorchs():
    def run(lib):
        pd = lib.nn.ParameterDict({"b": lib.zeros(1), "a": lib.ones(1)})
        pd.update(OrderedDict([("z", lib.ones(2)), ("y", lib.ones(3))]))
        pd["x"] = lib.nn.Parameter(lib.ones(1))
        out = [list(pd), list(reversed(pd)), [n for n, _ in pd.named_parameters()], "a" in pd, len(pd)]
        out.append(tuple(pd.pop("z").shape))
        k, v = pd.popitem()
        out.append((k, tuple(v.shape)))
        out.append(tuple(pd.setdefault("new", lib.zeros(4)).shape))
        out.append(pd.get("missing", "dflt"))
        out.append(list(pd.copy()))
        out.append(list(pd | lib.nn.ParameterDict({"q": lib.zeros(1)})))
        pd |= lib.nn.ParameterDict({"r": lib.zeros(1)})
        out.append(list(pd.keys()))
        out.append(list(pd.fromkeys(["m", "n"])))
        out += [_error(lambda: pd[3]), _error(lambda: pd(1)), _error(lambda: pd.update(3)),
                _error(lambda: pd.update([("k",)]))]
        pd.clear()
        out.append(len(pd))
        return out
    expected, got = _both(run)
    assert got == expected


def test_parameter_list_gradients_reach_each_parameter():
    ps = rg.nn.ParameterList([rg.ones(2, dtype=rg.float64), rg.full((2,), 3.0, dtype=rg.float64)])
    (ps[0] * ps[1]).sum().backward()
    assert ps[0].grad.tolist() == [3.0, 3.0] and ps[1].grad.tolist() == [1.0, 1.0]
