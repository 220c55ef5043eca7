"""Optimizers: the same updates as torch.optim on the same parameters and gradients (float64)."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]
STEPS = 6

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.2, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.7)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("RMSprop", dict(lr=0.01, centered=True, eps=1e-4)),
    ("RMSprop", dict(lr=0.01, weight_decay=0.1, maximize=True)),
]


def _params(rng):
    values = [rng.standard_normal(s) for s in SHAPES]
    ours = [rg.tensor(v, dtype=rg.float64, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    return ours, theirs


def _set_grads(ours, theirs, rng, skip=None):
    for i, (p, q) in enumerate(zip(ours, theirs, strict=True)):
        if i == skip:
            p.grad, q.grad = None, None
            continue
        g = rng.standard_normal(p.shape)
        p.grad = rg.tensor(g, dtype=rg.float64)
        q.grad = torch.tensor(g, dtype=torch.float64)


def _assert_close(ours, theirs):
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_updates_match_torch(name, kwargs):
    rng = np.random.default_rng(1)
    ours, theirs = _params(rng)
    opt = getattr(rg.optim, name)(ours, **kwargs)
    ref = getattr(torch.optim, name)(theirs, **kwargs)
    versions = [p._version for p in ours]
    for step in range(STEPS):
        # The last parameter has no gradient on step 2: it must be left alone, state included.
        _set_grads(ours, theirs, rng, skip=len(SHAPES) - 1 if step == 2 else None)
        opt.step()
        ref.step()
        _assert_close(ours, theirs)
    assert all(p.is_leaf and p.requires_grad for p in ours)
    assert all(p._version > v for p, v in zip(ours, versions, strict=True))
    for p, q in zip(ours, theirs, strict=True):
        mine, ref_state = opt.state[p], ref.state[q]
        assert set(mine) == set(ref_state)
        for key in mine:
            np.testing.assert_allclose(np.asarray(mine[key].detach().numpy(), dtype=np.float64),
                                       ref_state[key].detach().numpy(), rtol=1e-12, atol=1e-14)


def test_param_groups_use_their_own_options():
    rng = np.random.default_rng(2)
    ours, theirs = _params(rng)
    opt = rg.optim.SGD([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    ref = torch.optim.SGD([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert opt.param_groups[0]["momentum"] == 0 and opt.param_groups[1]["lr"] == 0.5
    for _ in range(3):
        _set_grads(ours, theirs, rng)
        opt.step()
        ref.step()
    _assert_close(ours, theirs)


def test_add_param_group_takes_the_defaults():
    a, b = rg.zeros(2, requires_grad=True), rg.zeros(3, requires_grad=True)
    opt = rg.optim.Adam([a], lr=0.1, betas=(0.5, 0.6))
    opt.add_param_group({"params": b, "eps": 1e-3})
    group = opt.param_groups[1]
    assert group["params"] == [b] and group["lr"] == 0.1 and group["betas"] == (0.5, 0.6) and group["eps"] == 1e-3


def test_closure_runs_with_grad_and_its_loss_is_returned():
    w = rg.tensor([2.0], requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with rg.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0 and w.item() == 1.0


def test_zero_grad_sets_to_none_or_zeros_in_place():
    w = rg.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    opt = rg.optim.SGD([w], lr=0.1)
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_parameter_errors_match_torch():
    w = rg.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an iterable"):
        rg.optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        rg.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        rg.optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer parameters need to be organized in ordered collections"):
        rg.optim.SGD([{"params": {w}}], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        rg.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        rg.optim.Adam([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        rg.optim.AdamW([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        rg.optim.SGD([w], nesterov=True)
    with pytest.raises(ValueError, match="Invalid alpha value: -0.5"):
        rg.optim.RMSprop([w], alpha=-0.5)


def test_state_dict_has_torchs_layout():
    rng = np.random.default_rng(3)
    ours, theirs = _params(rng)
    opt = rg.optim.Adam([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.1}], amsgrad=True)
    ref = torch.optim.Adam([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.1}], amsgrad=True)
    _set_grads(ours, theirs, rng)
    opt.step()
    ref.step()
    mine, expected = opt.state_dict(), ref.state_dict()
    assert mine["param_groups"] == expected["param_groups"]
    assert set(mine["state"]) == set(expected["state"]) == {0, 1, 2}
    assert {k: set(v) for k, v in mine["state"].items()} == {k: set(v) for k, v in expected["state"].items()}
    assert mine["state"][0]["step"].dtype == rg.float32


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("AdamW", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(momentum=0.3, centered=True))])
def test_state_dict_round_trip_continues_the_same_trajectory(name, kwargs):
    rng = np.random.default_rng(4)
    values = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(5)]

    def run(params, opt, steps):
        for gs in steps:
            for p, g in zip(params, gs, strict=True):
                p.grad = rg.tensor(g, dtype=rg.float64)
            opt.step()

    straight = [rg.tensor(v, dtype=rg.float64, requires_grad=True) for v in values]
    opt = getattr(rg.optim, name)(straight, **kwargs)
    run(straight, opt, grads)

    first = [rg.tensor(v, dtype=rg.float64, requires_grad=True) for v in values]
    opt1 = getattr(rg.optim, name)(first, **kwargs)
    run(first, opt1, grads[:3])
    saved = opt1.state_dict()
    resumed = [p.detach().clone().requires_grad_() for p in first]
    opt2 = getattr(rg.optim, name)(resumed, lr=123.0)  # the loaded groups replace these options
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == kwargs.get("lr", opt1.defaults["lr"])
    assert opt2.param_groups[0]["params"][0] is resumed[0]
    run(resumed, opt2, grads[3:])
    run(first, opt1, grads[3:])  # the loaded state is a copy: stepping opt2 did not disturb opt1
    for a, b, c in zip(straight, resumed, first, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        np.testing.assert_array_equal(a.detach().numpy(), c.detach().numpy())


def test_load_state_dict_rejects_mismatched_groups():
    a, b = rg.zeros(2, requires_grad=True), rg.zeros(2, requires_grad=True)
    saved = rg.optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        rg.optim.SGD([a], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        rg.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(saved)


def test_differentiable_is_refused():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        rg.optim.Adamax([rg.zeros(1, requires_grad=True)], differentiable=True)  # SGD and Adam record it: test_optim_differentiable.py


def test_step_hooks_run_around_the_step_and_can_be_removed():
    w = rg.tensor([1.0], requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.5)
    seen = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(("pre", o is opt, w.item())))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(("post", w.item())))
    w.grad = rg.tensor([1.0])
    opt.step()
    pre.remove()
    opt.step()
    assert seen == [("pre", True, 1.0), ("post", 0.5), ("post", 0.0)]
