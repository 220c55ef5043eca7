"""The schedulers of torch.optim.lr_scheduler: the same learning rates (and momenta), state and errors."""
import math
import warnings

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

EPOCHS = 40


def _pair(lrs=(0.1, 0.02), opt="SGD", **kwargs):
    ours = getattr(rg.optim, opt)([{"params": [rg.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs], lr=1.0,
                                  **kwargs)
    theirs = getattr(torch.optim, opt)([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs],
                                       lr=1.0, **kwargs)
    return ours, theirs


def _momenta(opt):
    return [(g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def _assert_same(ours, theirs, sched, ref):
    assert sched.get_last_lr() == pytest.approx(ref.get_last_lr(), rel=1e-12, abs=1e-15)
    assert [g["lr"] for g in ours.param_groups] == pytest.approx([g["lr"] for g in theirs.param_groups], rel=1e-12,
                                                                 abs=1e-15)
    for (m, b), (tm, tb) in zip(_momenta(ours), _momenta(theirs), strict=True):
        assert m == pytest.approx(tm, rel=1e-12, abs=1e-15) if tm is not None else m is None
        assert b == pytest.approx(tb, rel=1e-12) if tb is not None else b is None


def _run_both(ours, theirs, sched, ref, epochs=EPOCHS):
    _assert_same(ours, theirs, sched, ref)
    for _ in range(epochs):
        ours.step()
        theirs.step()
        sched.step()
        ref.step()
        _assert_same(ours, theirs, sched, ref)


def _half(epoch):
    return 0.5 ** (epoch // 3)


def _shrink(epoch):
    return 0.95 if epoch % 4 else 1.0


SCHEDULES = [
    ("LambdaLR", dict(lr_lambda=_half)),
    ("LambdaLR", dict(lr_lambda=[_half, lambda e: 1.0 / (e + 1)])),
    ("MultiplicativeLR", dict(lr_lambda=_shrink)),
    ("MultiplicativeLR", dict(lr_lambda=[_shrink, lambda e: 0.9])),
    ("MultiStepLR", dict(milestones=[3, 8, 8, 20])),
    ("MultiStepLR", dict(milestones=[30, 5], gamma=0.5)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=12)),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.0, total_iters=25)),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.25, total_iters=7)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=30, power=2.5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=[0.01, 0.002], max_lr=[0.1, 0.05], step_size_up=3, step_size_down=5,
                      mode="triangular2", base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97, cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 1 / (x + 1),
                      scale_mode="iterations")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.1], epochs=4, steps_per_epoch=10, pct_start=0.25, anneal_strategy="linear",
                        div_factor=10.0, final_div_factor=100.0)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS, three_phase=True, base_momentum=0.8, max_momentum=0.9)),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULES)])
def test_schedule_matches_torch(name, kwargs):
    ours, theirs = _pair(momentum=0.9)
    sched = getattr(rg.optim.lr_scheduler, name)(ours, **kwargs)
    ref = getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs)
    _run_both(ours, theirs, sched, ref)
    assert sorted(sched.state_dict()) == sorted(ref.state_dict())
    assert sorted(ours.param_groups[0]) == sorted(theirs.param_groups[0])


@pytest.mark.parametrize("name,kwargs", [("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
                                         ("OneCycleLR", dict(max_lr=0.3, total_steps=EPOCHS))])
def test_cycled_beta1_of_adam_matches_torch(name, kwargs):
    ours, theirs = _pair(opt="Adam")
    sched = getattr(rg.optim.lr_scheduler, name)(ours, **kwargs)
    ref = getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs)
    _run_both(ours, theirs, sched, ref)


def _warmup_then_cosine(lib, opt):
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.1, total_iters=5), s.CosineAnnealingLR(opt, T_max=10),
                                s.ExponentialLR(opt, gamma=0.9)], milestones=[5, 15])


def _constant_then_steps(lib, opt):
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.ConstantLR(opt, factor=0.5, total_iters=3), s.MultiStepLR(opt, [4, 9])],
                          milestones=[6])


def _chained(lib, opt):
    s = lib.optim.lr_scheduler
    return s.ChainedScheduler([s.ConstantLR(opt, factor=0.3, total_iters=4), s.ExponentialLR(opt, gamma=0.95),
                               s.StepLR(opt, step_size=7, gamma=0.5)])


def _chained_in_sequence(lib, opt):
    s = lib.optim.lr_scheduler
    chained = s.ChainedScheduler([s.LinearLR(opt, start_factor=0.5, total_iters=4), s.ExponentialLR(opt, gamma=0.9)])
    return s.SequentialLR(opt, [chained, s.PolynomialLR(opt, total_iters=20, power=2.0)], milestones=[8])


@pytest.mark.parametrize("build", [_warmup_then_cosine, _constant_then_steps, _chained, _chained_in_sequence])
def test_combined_schedules_match_torch(build):
    ours, theirs = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's members warn on their first steps inside SequentialLR
        sched, ref = build(rg, ours), build(torch, theirs)
        _run_both(ours, theirs, sched, ref)


METRICS = [5.0, 4.0, 4.0, 3.9999, 4.1, 4.2, 3.0, 3.0, 3.0, 3.0, 2.9, 3.5, 3.5, 3.5, 3.5, 3.5, 1.0, 1.0, 1.0, 1.0,
           1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]


@pytest.mark.parametrize("kwargs", [dict(patience=2), dict(mode="max", patience=1, factor=0.5),
                                    dict(patience=1, threshold=0.1, threshold_mode="abs", cooldown=2),
                                    dict(patience=0, factor=0.5, min_lr=[0.01, 0.005], eps=1e-3),
                                    dict(mode="max", threshold_mode="abs", threshold=0.5, patience=1, min_lr=0.03)])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    ours, theirs = _pair()
    sched = rg.optim.lr_scheduler.ReduceLROnPlateau(ours, **kwargs)
    ref = torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **kwargs)
    _assert_same(ours, theirs, sched, ref)
    for metric in METRICS:
        ours.step()
        theirs.step()
        sched.step(rg.tensor(metric))
        ref.step(torch.tensor(metric))
        _assert_same(ours, theirs, sched, ref)
        assert (sched.num_bad_epochs, sched.cooldown_counter, sched.best) == (ref.num_bad_epochs,
                                                                              ref.cooldown_counter, ref.best)
    assert sorted(sched.state_dict()) == sorted(ref.state_dict())


def test_reduce_lr_on_plateau_state_dict_round_trip_resumes():
    ours, _ = _pair()
    sched = rg.optim.lr_scheduler.ReduceLROnPlateau(ours, patience=1, cooldown=1)
    for metric in METRICS[:10]:
        sched.step(metric)
    other, _ = _pair()
    other.load_state_dict(ours.state_dict())
    resumed = rg.optim.lr_scheduler.ReduceLROnPlateau(other)
    resumed.load_state_dict(sched.state_dict())
    for metric in METRICS[10:]:
        sched.step(metric)
        resumed.step(metric)
        assert resumed.get_last_lr() == sched.get_last_lr()


@pytest.mark.parametrize("name,kwargs", [("MultiStepLR", dict(milestones=[2, 5])), ("LinearLR", dict(total_iters=8)),
                                         ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
                                         ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS)),
                                         ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2)),
                                         ("LambdaLR", dict(lr_lambda=_half))])
def test_state_dict_round_trip_resumes_the_schedule(name, kwargs):
    ours, _ = _pair(momentum=0.9)
    sched = getattr(rg.optim.lr_scheduler, name)(ours, **kwargs)
    for _ in range(10):
        ours.step()
        sched.step()
    other, _ = _pair(momentum=0.9)
    other.load_state_dict(ours.state_dict())
    resumed = getattr(rg.optim.lr_scheduler, name)(other, **kwargs, last_epoch=9) if name != "LambdaLR" else \
        rg.optim.lr_scheduler.LambdaLR(other, **kwargs)
    resumed.load_state_dict(sched.state_dict())
    for _ in range(15):
        for opt, s in ((ours, sched), (other, resumed)):
            opt.step()
            s.step()
        assert resumed.get_last_lr() == sched.get_last_lr()
        assert other.param_groups[0].get("momentum") == ours.param_groups[0].get("momentum")


def test_combined_state_dict_holds_each_members_state():
    ours, theirs = _pair()
    sched, ref = _chained(rg, ours), _chained(torch, theirs)
    for _ in range(3):
        for opt, s in ((ours, sched), (theirs, ref)):
            opt.step()
            s.step()
    mine, expected = sched.state_dict(), ref.state_dict()
    assert sorted(mine) == sorted(expected)
    assert [sorted(s) for s in mine["_schedulers"]] == [sorted(s) for s in expected["_schedulers"]]
    assert [s["last_epoch"] for s in mine["_schedulers"]] == [s["last_epoch"] for s in expected["_schedulers"]]


def test_lambda_state_dict_saves_callable_objects_not_functions():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate ** epoch

    ours, theirs = _pair()
    mine = rg.optim.lr_scheduler.LambdaLR(ours, [Decay(), _half]).state_dict()
    expected = torch.optim.lr_scheduler.LambdaLR(theirs, [Decay(), _half]).state_dict()
    assert mine["lr_lambdas"] == expected["lr_lambdas"] == [{"rate": 0.5}, None]


def test_closed_form_epoch_argument_warns_and_matches_torch():
    ours, theirs = _pair()
    sched = rg.optim.lr_scheduler.MultiStepLR(ours, milestones=[2, 6])
    ref = torch.optim.lr_scheduler.MultiStepLR(theirs, milestones=[2, 6])
    ours.step()
    theirs.step()
    for epoch in (4, 7, 1):
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sched.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.step(epoch)
        assert sched.get_last_lr() == pytest.approx(ref.get_last_lr(), rel=1e-12)


def test_warm_restarts_with_fractional_epochs_match_torch():
    ours, theirs = _pair()
    sched = rg.optim.lr_scheduler.CosineAnnealingWarmRestarts(ours, T_0=4, T_mult=2)
    ref = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs, T_0=4, T_mult=2)
    ours.step()
    theirs.step()
    for i in range(60):
        epoch = i * 0.45
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step(epoch)
            ref.step(epoch)
        assert sched.get_last_lr() == pytest.approx(ref.get_last_lr(), rel=1e-12, abs=1e-15)
        assert (sched.T_i, sched.last_epoch) == (ref.T_i, ref.last_epoch)
        assert sched.T_cur == pytest.approx(ref.T_cur, rel=1e-12, abs=1e-15)


def test_get_lr_outside_step_warns_as_torch():
    ours, theirs = _pair()
    sched = rg.optim.lr_scheduler.ExponentialLR(ours, gamma=0.5)
    with pytest.warns(UserWarning, match="To get the last learning rate computed by the scheduler, please use"):
        sched.get_lr()
    ours.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_stepping_before_the_optimizer_warns_for_the_new_schedulers():
    for build in (lambda o: rg.optim.lr_scheduler.LambdaLR(o, _half),
                  lambda o: rg.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=5),
                  lambda o: rg.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1)):
        ours, _ = _pair(momentum=0.9)
        sched = build(ours)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer"):
            sched.step()


def test_one_cycle_past_its_total_steps_raises_as_torch():
    for lib in (rg, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
            sched.step()


def _raised(lib, build):
    opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
    adam = lib.optim.Adam([lib.zeros(1, requires_grad=True)])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(lib.optim.lr_scheduler, opt, adam)
    except Exception as e:  # noqa: BLE001 - comparing what each library raises
        message = e.args[0] if isinstance(e, KeyError) else str(e)  # str() of a KeyError is its repr
        return type(e).__name__, message.split("\n")[0].split(". ")[0]
    return None


def _adagrad(opt):
    """An optimizer with neither momentum nor betas, over the same parameters."""
    lib = rg if isinstance(opt, rg.optim.Optimizer) else torch
    return lib.optim.Adagrad(opt.param_groups[0]["params"])


BAD = [
    lambda s, o, a: s.LambdaLR(o, [_half, _half]),
    lambda s, o, a: s.MultiplicativeLR(o, 0.5),
    lambda s, o, a: s.ConstantLR(o, factor=1.5),
    lambda s, o, a: s.LinearLR(o, start_factor=0.0),
    lambda s, o, a: s.LinearLR(o, end_factor=2.0),
    lambda s, o, a: s.SequentialLR(o, [], milestones=[]),
    lambda s, o, a: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[]),
    lambda s, o, a: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(a, 3)], milestones=[2]),
    lambda s, o, a: s.SequentialLR(o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[2]),
    lambda s, o, a: s.SequentialLR(o, [s.StepLR(o, 2), object()], milestones=[2]),
    lambda s, o, a: s.ChainedScheduler([]),
    lambda s, o, a: s.ChainedScheduler([s.StepLR(o, 2), s.ReduceLROnPlateau(o)]),
    lambda s, o, a: s.ReduceLROnPlateau(o, factor=1.0),
    lambda s, o, a: s.ReduceLROnPlateau(o, mode="median"),
    lambda s, o, a: s.ReduceLROnPlateau(o, threshold_mode="ratio"),
    lambda s, o, a: s.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]),
    lambda s, o, a: s.ReduceLROnPlateau([]),
    lambda s, o, a: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, mode="square"),
    lambda s, o, a: s.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1),
    lambda s, o, a: s.CyclicLR(_adagrad(o), base_lr=0.01, max_lr=0.1),  # no momentum to cycle
    lambda s, o, a: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o, a: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda s, o, a: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda s, o, a: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda s, o, a: s.OneCycleLR(o, max_lr=0.1),
    lambda s, o, a: s.OneCycleLR(o, max_lr=0.1, total_steps=0),
    lambda s, o, a: s.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=3),
    lambda s, o, a: s.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=-1),
    lambda s, o, a: s.OneCycleLR(a, max_lr=0.1, total_steps=5, pct_start=1),
    lambda s, o, a: s.OneCycleLR(a, max_lr=0.1, total_steps=5, anneal_strategy="exp"),
    lambda s, o, a: s.OneCycleLR(_adagrad(o), max_lr=0.1, total_steps=5),  # no momentum to cycle
    lambda s, o, a: s.StepLR(o, 2, last_epoch=3),
]


@pytest.mark.parametrize("build", BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_bad_arguments_raise_what_torch_raises(build):
    theirs = _raised(torch, build)
    assert theirs is not None and _raised(rg, build) == theirs


def test_a_tensor_lr_is_updated_in_place_as_torch():
    w = rg.zeros(1, requires_grad=True)
    lr = rg.tensor(0.1)
    opt = rg.optim.Adam([w], lr=lr)
    sched = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and math.isclose(lr.item(), 0.05, rel_tol=1e-6)
    assert isinstance(sched.get_last_lr()[0], rg.Tensor) and sched.get_last_lr()[0] is not lr
