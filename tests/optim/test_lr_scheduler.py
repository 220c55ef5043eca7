"""LR schedulers: the same learning rates as torch.optim.lr_scheduler, epoch by epoch."""
import warnings

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _pair(lrs=(0.1, 0.02)):
    ours = rg.optim.SGD([{"params": [rg.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs], lr=1.0)
    theirs = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs], lr=1.0)
    return ours, theirs


@pytest.mark.parametrize("name,kwargs", [
    ("StepLR", dict(step_size=3)),
    ("StepLR", dict(step_size=2, gamma=0.5)),
    ("CosineAnnealingLR", dict(T_max=5)),
    ("CosineAnnealingLR", dict(T_max=4, eta_min=0.001)),
])
def test_schedule_matches_torch(name, kwargs):
    ours, theirs = _pair()
    sched = getattr(rg.optim.lr_scheduler, name)(ours, **kwargs)
    ref = getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs)
    assert sched.get_last_lr() == pytest.approx(ref.get_last_lr(), rel=1e-13)
    for _ in range(14):  # past T_max: the cosine climbs back
        ours.step()
        theirs.step()
        sched.step()
        ref.step()
        assert sched.get_last_lr() == pytest.approx(ref.get_last_lr(), rel=1e-12, abs=1e-15)
        assert [g["lr"] for g in ours.param_groups] == sched.get_last_lr()
    assert ours.param_groups[0]["initial_lr"] == 0.1


def test_state_dict_round_trip_resumes_the_schedule():
    ours, _ = _pair()
    sched = rg.optim.lr_scheduler.CosineAnnealingLR(ours, T_max=6)
    for _ in range(3):
        ours.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    resumed_opt, _ = _pair()
    resumed_opt.load_state_dict(ours.state_dict())
    resumed = rg.optim.lr_scheduler.CosineAnnealingLR(resumed_opt, T_max=6, last_epoch=2)
    resumed.load_state_dict(state)
    for _ in range(2):
        for opt, s in ((ours, sched), (resumed_opt, resumed)):
            opt.step()
            s.step()
    assert resumed.get_last_lr() == sched.get_last_lr()


def test_resuming_without_initial_lr_raises():
    ours, _ = _pair()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        rg.optim.lr_scheduler.StepLR(ours, step_size=2, last_epoch=4)


def test_stepping_before_the_optimizer_warns():
    ours, _ = _pair()
    sched = rg.optim.lr_scheduler.StepLR(ours, step_size=2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
    ours2, _ = _pair()
    sched2 = rg.optim.lr_scheduler.StepLR(ours2, step_size=2)
    ours2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_not_an_optimizer_raises():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        rg.optim.lr_scheduler.StepLR([], step_size=1)
