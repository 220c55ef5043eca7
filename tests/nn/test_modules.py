"""retrograd.nn modules: registration, state_dict, repr, modes, hooks, init, and parity with torch.nn."""
from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import retrograd as rg
from retrograd import nn
from retrograd.nn import init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
        self.register_buffer("scale", rg.ones(1))
        self.register_buffer("scratch", rg.zeros(1), persistent=False)

    def forward(self, x):
        return self.head(rg.relu(self.bn(self.conv(x)))) * self.scale


def test_parameter_is_a_leaf_tensor_that_requires_grad_and_shares_data():
    data = rg.ones(2)
    p = nn.Parameter(data)
    assert isinstance(p, rg.Tensor) and p.requires_grad and p.is_leaf
    assert nn.Parameter(rg.ones(2), requires_grad=False).requires_grad is False
    p.detach()[0] = 5.0
    assert data.tolist() == [5.0, 1.0]
    assert repr(nn.Parameter(rg.tensor([1.0, 2.0]))) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_setattr_registers_parameters_modules_and_buffers():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight", "head.1.bias"]
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())
    assert [n for n, _ in net.named_buffers()] == ["scale", "scratch", "bn.running_mean", "bn.running_var",
                                                   "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["conv", "bn", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "conv", "bn", "head", "head.0", "head.1"]
    assert len(list(net.modules())) == 6 and len(list(net.children())) == 3
    net.extra = nn.Parameter(rg.zeros(1))
    assert "extra" in dict(net.named_parameters())
    del net.extra
    assert "extra" not in dict(net.named_parameters())
    with pytest.raises(TypeError, match="cannot assign"):
        net.conv = rg.ones(1)


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2


def test_register_parameter_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", nn.Parameter(rg.ones(1)))
    with pytest.raises(TypeError, match="cannot assign"):
        m.register_parameter("w", rg.ones(1))
    m.register_parameter("w", None)
    assert list(m.parameters()) == [] and m.w is None


def test_state_dict_round_trip_strict():
    rg.manual_seed(0)
    a = Net()
    rg.manual_seed(1)
    b = Net()
    sd = a.state_dict()
    assert list(sd) == ["scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var", "bn.num_batches_tracked", "head.1.weight", "head.1.bias"]
    assert all(not t.requires_grad for t in sd.values())
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n1, t1), (n2, t2) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert n1 == n2 and np.array_equal(t1.numpy(), t2.numpy())
    x = rg.randn(2, 1, 4, 4)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    # load copies in place: the Parameter objects (which optimizers hold) stay the same
    w = b.conv.weight
    b.load_state_dict(a.state_dict())
    assert b.conv.weight is w


def test_load_state_dict_strict_errors_and_non_strict():
    m = nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as err:
        m.load_state_dict({"weight": rg.ones(2, 3), "extra": rg.ones(1)})
    assert str(err.value).startswith('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: '
                                     '"bias". \n\tUnexpected key(s) in state_dict: "extra". ')
    with pytest.raises(RuntimeError, match="size mismatch for weight: copying a param with shape"):
        m.load_state_dict({"weight": rg.ones(3, 3), "bias": rg.ones(2)})
    keys = m.load_state_dict({"weight": rg.ones(2, 3)}, strict=False)
    assert keys.missing_keys == ["bias"] and m.weight.tolist() == [[1.0] * 3] * 2


def test_repr_like_pytorch():
    net = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.Dropout(0.25), nn.Flatten(), nn.Linear(8, 2), nn.GELU(), nn.LayerNorm(2),
                        nn.Embedding(5, 2, padding_idx=0), nn.Softmax(dim=1), nn.Tanh(), nn.Sigmoid())
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)\n"
        "  (1): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "  (2): ReLU()\n"
        "  (3): Dropout(p=0.25, inplace=False)\n"
        "  (4): Flatten(start_dim=1, end_dim=-1)\n"
        "  (5): Linear(in_features=8, out_features=2, bias=True)\n"
        "  (6): GELU(approximate='none')\n"
        "  (7): LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        "  (8): Embedding(5, 2, padding_idx=0)\n"
        "  (9): Softmax(dim=1)\n"
        "  (10): Tanh()\n"
        "  (11): Sigmoid()\n"
        ")")
    nested = nn.ModuleDict({"enc": nn.Sequential(nn.Linear(1, 1))})
    assert repr(nested) == ("ModuleDict(\n  (enc): Sequential(\n    (0): Linear(in_features=1, out_features=1, "
                            "bias=True)\n  )\n)")


def test_repr_matches_torch_text():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Conv2d(3, 8, (3, 5), stride=(1, 2), dilation=2, groups=1), nn.MaxPool2d(2),
                         nn.BatchNorm1d(8, bias=False), nn.CrossEntropyLoss(), nn.LeakyReLU(0.2),
                         nn.LayerNorm((2, 3), bias=False), nn.LayerNorm(4), nn.Embedding(3, 2, max_norm=1.0),
                         nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((2, 3)), nn.Dropout(), nn.ELU(), nn.SiLU(),
                         nn.Softplus(), nn.Identity(), nn.Conv1d(2, 4, 3, padding=1, padding_mode="reflect"))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 8, (3, 5), stride=(1, 2), dilation=2, groups=1),
                                 torch.nn.MaxPool2d(2), torch.nn.BatchNorm1d(8, bias=False),
                                 torch.nn.CrossEntropyLoss(), torch.nn.LeakyReLU(0.2),
                                 torch.nn.LayerNorm((2, 3), bias=False), torch.nn.LayerNorm(4),
                                 torch.nn.Embedding(3, 2, max_norm=1.0), torch.nn.AvgPool2d(2),
                                 torch.nn.AdaptiveAvgPool2d((2, 3)), torch.nn.Dropout(), torch.nn.ELU(),
                                 torch.nn.SiLU(), torch.nn.Softplus(), torch.nn.Identity(),
                                 torch.nn.Conv1d(2, 4, 3, padding=1, padding_mode="reflect"))
    assert repr(ours) == repr(theirs)


def test_train_eval_propagate_and_change_dropout_and_batchnorm():
    net = nn.Sequential(nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(3)))
    assert net.training and net[1][0].training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    x = rg.randn(4, 3)
    np.testing.assert_allclose(net(x).detach().numpy(), (x / math.sqrt(1 + 1e-5)).numpy(), rtol=1e-6)
    net.train()
    assert all(m.training for m in net.modules())
    bn = net[1][0]
    net(x)
    assert bn.num_batches_tracked.item() == 1
    assert np.any(bn.running_mean.numpy() != 0)


def test_forward_hooks_and_pre_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append(("pre", m)) or (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(("post", args[0].tolist())) or out + 1)
    out = lin(rg.ones(1, 2))
    assert calls == [("pre", lin), ("post", [[0.0, 0.0]])]
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None] + 1, rtol=1e-6)
    h1.remove()
    h2.remove()
    calls.clear()
    lin(rg.ones(1, 2))
    assert calls == []


def test_zero_grad_apply_and_requires_grad():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    net(rg.ones(3, 2)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not np.any(p.grad.numpy()) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Linear", "Sequential"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_double_keeps_parameter_objects_and_integer_buffers():
    net = Net()
    w = net.conv.weight
    net.double()
    assert net.conv.weight is w and w.dtype == rg.float64 and isinstance(w, nn.Parameter)
    assert net.bn.running_mean.dtype == rg.float64 and net.bn.num_batches_tracked.dtype == rg.int64
    net.to(rg.float32)
    assert w.dtype == rg.float32
    net.float()
    assert net(rg.randn(1, 1, 4, 4)).dtype == rg.float32


def test_containers():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.append(nn.Sigmoid())
    assert len(ml) == 3 and isinstance(ml[-1], nn.Sigmoid) and [n for n, _ in ml.named_children()] == ["0", "1", "2"]
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.Linear(1, 2)
    assert list(md.keys()) == ["a", "b"] and "a" in md
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]


def test_deepcopy_and_pickle_keep_parameters():
    net = nn.Linear(2, 2)
    clone = copy.deepcopy(net)
    assert isinstance(clone.weight, nn.Parameter) and clone.weight is not net.weight
    np.testing.assert_array_equal(clone.weight.detach().numpy(), net.weight.detach().numpy())
    p = pickle.loads(pickle.dumps(net.weight))
    assert isinstance(p, nn.Parameter) and p.requires_grad


def test_default_initialization_bounds_and_fans():
    rg.manual_seed(0)
    lin = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)
    assert np.abs(lin.weight.detach().numpy()).max() <= bound and np.abs(lin.bias.detach().numpy()).max() <= bound
    assert np.abs(lin.weight.detach().numpy()).max() > 0.9 * bound
    conv = nn.Conv2d(4, 6, 3)
    assert init._calculate_fan_in_and_fan_out(conv.weight) == (36, 54)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / 6
    w = init.kaiming_normal_(rg.empty(400, 300), mode="fan_out", nonlinearity="relu")
    assert abs(float(w.numpy().std()) - math.sqrt(2 / 400)) < 0.003
    w = init.xavier_uniform_(rg.empty(30, 20), gain=init.calculate_gain("tanh"))
    assert np.abs(w.numpy()).max() <= 5 / 3 * math.sqrt(6 / 50)
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.zeros_(rg.ones(2)).tolist() == [0.0, 0.0]
    assert init.constant_(rg.ones(2), 3.0).tolist() == [3.0, 3.0]
    e = nn.Embedding(4, 3, padding_idx=2)
    assert e.weight[2].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(rg.ones(3))


def test_init_is_reproducible_with_manual_seed():
    rg.manual_seed(5)
    a = nn.Linear(3, 3).weight.detach().numpy().copy()
    rg.manual_seed(5)
    b = nn.Linear(3, 3).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)


def _copy_params(ours, theirs, torch):
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert n1 == n2
        with torch.no_grad():
            p2.copy_(torch.from_numpy(p1.detach().numpy().copy()))


def test_small_network_gradients_equal_pytorch():
    torch = pytest.importorskip("torch")

    def build(m):
        return m.Sequential(m.Conv2d(1, 3, 3, padding=1), m.BatchNorm2d(3), m.ReLU(), m.MaxPool2d(2),
                            m.Conv2d(3, 4, 3, groups=1), m.GELU(), m.Flatten(), m.Linear(4, 5), m.LayerNorm(5),
                            m.Tanh(), m.Linear(5, 3))
    rg.manual_seed(0)
    ours = build(nn).double()
    theirs = build(torch.nn).double()
    _copy_params(ours, theirs, torch)
    x = np.random.default_rng(0).standard_normal((4, 1, 6, 6))
    t = np.array([0, 2, 1, 2])
    loss = nn.CrossEntropyLoss(label_smoothing=0.1)(ours(rg.tensor(x)), rg.tensor(t))
    tloss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(theirs(torch.tensor(x)), torch.tensor(t))
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours[1], name).numpy(), getattr(theirs[1], name).numpy(), rtol=1e-12)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(rg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,args", [("MSELoss", ()), ("L1Loss", ()), ("BCEWithLogitsLoss", ()),
                                       ("BCELoss", ()), ("NLLLoss", ()), ("CrossEntropyLoss", ())])
def test_loss_modules_match_pytorch(name, args):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 0.9, (4, 3))
    if name in ("NLLLoss", "CrossEntropyLoss"):
        y = np.array([0, 2, 1, 1])
    else:
        y = rng.uniform(0, 1, (4, 3))
    for reduction in ("mean", "sum", "none"):
        ours = getattr(nn, name)(*args, reduction=reduction)(rg.tensor(x), rg.tensor(y))
        theirs = getattr(torch.nn, name)(*args, reduction=reduction)(torch.tensor(x), torch.tensor(y))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_batchnorm_momentum_none_is_cumulative_average():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.BatchNorm1d(2, momentum=None).double(), torch.nn.BatchNorm1d(2, momentum=None).double()
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.standard_normal((5, 2))
        ours(rg.tensor(x))
        theirs(torch.tensor(x))
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-12)
    assert ours.num_batches_tracked.item() == 3
