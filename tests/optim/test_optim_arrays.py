"""The optimizers' updates on arrays: the same bits, versions and errors as the op path, and PyTorch's versions.

See Note [Optimizer updates on arrays] in retrograd/optim/optimizer.py. ``opt._array_updates = False``
forces the op path, the definition, which every comparison here runs beside the array path.
"""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=1, nesterov=True, weight_decay=1, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.0, 0.9), weight_decay=1)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.7)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("RMSprop", dict(lr=0.01, centered=True, eps=1e-4)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.3, 0.99), weight_decay=0.1, maximize=True)),  # lerp's second formula
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01, betas=(0.4, 0.999), weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),  # rectified from step 6
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.7), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1, maximize=True)),  # averaging from step 6
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _record(lib, name, kwargs, dtype, arrays=True, steps=10):
    """Parameters, their versions and their states (arrays, versions, dtypes) after ``steps`` steps; the last
    parameter has no gradient on step 3. Also returns how many updates took the array path."""
    rng = np.random.default_rng(7)
    params = [lib.tensor(rng.standard_normal(s), dtype=getattr(lib, dtype), requires_grad=True) for s in SHAPES]
    opt = getattr(lib.optim, name)(params, **kwargs)
    ran = []
    if lib is rg:
        opt._array_updates = arrays
        update = opt._arrays_update

        def counted(*args):
            ran.append(update(*args))
            return ran[-1]
        opt._arrays_update = counted
    for step in range(steps):
        for i, p in enumerate(params):
            g = rng.standard_normal(p.shape)
            p.grad = None if (step == 3 and i == len(params) - 1) else lib.tensor(g, dtype=getattr(lib, dtype))
        opt.step()
    values = [p.detach().numpy().copy() for p in params]
    versions = [p._version for p in params]
    states = [{k: (v.detach().numpy().copy(), v._version, str(v.dtype).split(".")[-1])
               for k, v in opt.state[p].items()} for p in params]
    return values, versions, states, sum(ran)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_the_array_path_gives_the_op_paths_bits_versions_and_state(name, kwargs, dtype):
    values, versions, states, ran = _record(rg, name, kwargs, dtype)
    op_values, op_versions, op_states, op_ran = _record(rg, name, kwargs, dtype, arrays=False)
    assert op_ran == 0
    # every update but the first of SGD's momentum buffer (made by the op path) ran on the arrays
    assert ran == 29 - (3 if name == "SGD" and kwargs.get("momentum") else 0)
    for a, b in zip(values, op_values, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert versions == op_versions
    for mine, theirs in zip(states, op_states, strict=True):
        assert list(mine) == list(theirs)
        for key in mine:
            assert mine[key][0].tobytes() == theirs[key][0].tobytes() and mine[key][1:] == theirs[key][1:], key


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_versions_move_as_pytorchs(name, kwargs):
    # the parameters' and the states' version counters, against torch's single-tensor (CPU default) step
    _, versions, states, ran = _record(rg, name, kwargs, "float32", steps=4)
    _, their_versions, their_states, _ = _record(torch, name, kwargs, "float32", steps=4)
    assert ran > 0
    assert versions == their_versions
    assert [{k: v[1] for k, v in s.items()} for s in states] == [{k: v[1] for k, v in s.items()} for s in their_states]


@pytest.mark.parametrize("name,kwargs", [("AdamW", dict(lr=0.01, weight_decay=0.1)), ("Adam", dict(amsgrad=True)),
                                         ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)), ("RMSprop", dict()),
                                         ("NAdam", dict()), ("ASGD", dict(t0=2))])
def test_float32_updates_match_torch(name, kwargs):
    values, _, states, ran = _record(rg, name, kwargs, "float32")
    their_values, _, their_states, _ = _record(torch, name, kwargs, "float32")
    assert ran > 0
    for a, b in zip(values, their_values, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
    for mine, theirs in zip(states, their_states, strict=True):
        for key in mine:
            np.testing.assert_allclose(mine[key][0], theirs[key][0], rtol=2e-6, atol=1e-7, err_msg=key)


def _first_sentence(lib, fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e).replace(lib.__name__ + ".", "").split(". ")[0]
    return None


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                                  "RAdam", "ASGD"])
def test_a_graph_that_saved_the_parameter_raises_after_step_as_torch(name):
    def run(lib):
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (w * x).sum()  # saves w for x's gradient
        w.grad = lib.tensor([0.1, 0.2, 0.3])
        getattr(lib.optim, name)([w], lr=0.1).step()
        return y.backward()
    ours, theirs = _first_sentence(rg, lambda: run(rg)), _first_sentence(torch, lambda: run(torch))
    assert ours == theirs and ours.startswith("one of the variables needed for gradient computation has been "
                                              "modified by an inplace operation: [FloatTensor [3]]")


def test_allow_mutation_on_saved_tensors_keeps_the_saved_values_through_a_step():
    def run(lib, arrays):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = (w * x).sum()
            w.grad = lib.tensor([0.1, 0.2, 0.3])
            opt = lib.optim.AdamW([w], lr=0.1)
            if lib is rg:
                opt._array_updates = arrays
            opt.step()
            y.backward()
            return x.grad.numpy(), w.detach().numpy()
    ours, op_path, theirs = run(rg, True), run(rg, False), run(torch, None)
    assert ours[0].tolist() == op_path[0].tolist() == [0.5, -1.0, 2.0]  # the values before the step
    np.testing.assert_array_equal(ours[1], op_path[1])
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_state_dict_round_trip_mid_training_continues_bit_for_bit():
    # saved by the op path, loaded by the array path and the other way round: the same trajectory
    rng = np.random.default_rng(8)
    values = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(8)]

    def run(params, opt, steps):
        for gs in steps:
            for p, g in zip(params, gs, strict=True):
                p.grad = rg.tensor(g)
            opt.step()

    for name, kwargs in [("AdamW", dict(lr=0.01, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
                         ("NAdam", dict(lr=0.01)), ("ASGD", dict(t0=2))]:
        straight = [rg.tensor(v, requires_grad=True) for v in values]
        run(straight, getattr(rg.optim, name)(straight, **kwargs), grads)
        for first_arrays in (True, False):
            first = [rg.tensor(v, requires_grad=True) for v in values]
            opt1 = getattr(rg.optim, name)(first, **kwargs)
            opt1._array_updates = first_arrays
            run(first, opt1, grads[:4])
            resumed = [p.detach().clone().requires_grad_() for p in first]
            opt2 = getattr(rg.optim, name)(resumed, lr=123.0)
            opt2.load_state_dict(opt1.state_dict())
            opt2._array_updates = not first_arrays
            run(resumed, opt2, grads[4:])
            for a, b in zip(straight, resumed, strict=True):
                assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes(), name


def _pair(name, kwargs, make=None, profile=False):
    """For the array path and the op path: the parameters after 3 steps, what each ``_arrays_update`` call
    returned, and the profile of the last step where ``profile``."""
    results = []
    for arrays in (True, False):
        rng = np.random.default_rng(9)
        params = [rg.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]
        if make is not None:
            params = [make(p) for p in params]
        opt = getattr(rg.optim, name)(params, **kwargs)
        opt._array_updates = arrays
        update, ran = opt._arrays_update, []
        opt._arrays_update = lambda *a, _u=update, _r=ran: _r.append(_u(*a)) or _r[-1]
        prof = None
        for _ in range(3):
            for p in params:
                p.grad = rg.tensor(rng.standard_normal(p.shape), dtype=p.dtype)
            if profile:
                with rg.profiler.profile() as prof:
                    opt.step()
            else:
                opt.step()
        results.append(([p.detach().numpy() for p in params], ran, prof))
    return results


def test_a_profiler_sees_the_op_calls_of_the_step():
    (values, ran, prof), (op_values, _, _) = _pair("AdamW", dict(lr=0.01), profile=True)
    assert ran == []  # the interposer sends every update to the op path
    assert {"aten::add_", "aten::mul_", "aten::sqrt"} <= {e.key for e in prof.key_averages()}
    for a, b in zip(values, op_values, strict=True):
        assert a.tobytes() == b.tobytes()


class _Marked(rg.Tensor):
    pass


@pytest.mark.parametrize("case", ["tensor lr", "numpy scalar eps", "subclass", "differentiable", "float16"])
def test_what_the_arrays_cannot_show_takes_the_op_path(case):
    kwargs, make = dict(lr=0.01), None
    if case == "tensor lr":
        kwargs.update(lr=rg.tensor(0.01))
    elif case == "numpy scalar eps":
        kwargs.update(eps=np.float64(1e-8))
    elif case == "subclass":
        make = lambda p: p.detach().as_subclass(_Marked).requires_grad_()  # noqa: E731 - a leaf, as PyTorch needs
    elif case == "differentiable":
        kwargs.update(differentiable=True)
        make = lambda p: p.clone()  # noqa: E731 - a differentiable step updates a non-leaf
    else:
        make = lambda p: p.detach().to(rg.float16).requires_grad_()  # noqa: E731
    (values, ran, _), (op_values, _, _) = _pair("Adam", kwargs, make=make)
    assert not any(ran) and len(ran) == (9 if case in ("subclass", "float16") else 0)
    for a, b in zip(values, op_values, strict=True):
        assert a.tobytes() == b.tobytes()


def test_a_parameter_listed_twice_is_updated_twice_as_on_the_op_path():
    results = []
    for arrays in (True, False):
        w = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            opt = rg.optim.AdamW([w, w], lr=0.1, weight_decay=0.5)
        opt._array_updates = arrays
        for _ in range(3):
            w.grad = rg.tensor([0.1, 0.2, 0.3])
            opt.step()
        results.append((w.detach().numpy().tobytes(), w._version, opt.state[w]["step"].item()))
    assert results[0] == results[1] and results[0][2] == 6.0


def test_an_expanded_parameter_raises_the_op_paths_error_as_torch():
    def run(lib):
        w = lib.zeros(1).expand(3)
        w.grad = lib.ones(3)
        lib.optim.SGD([w], lr=0.1).step()
    ours, theirs = _first_sentence(rg, lambda: run(rg)), _first_sentence(torch, lambda: run(torch))
    assert ours == theirs == "unsupported operation: more than one element of the written-to tensor refers to a " \
                             "single memory location"


def test_hooks_zero_grad_and_a_scheduler_see_the_array_path_as_the_op_path():
    results = []
    for arrays in (True, False):
        w = rg.tensor([1.0, -2.0], requires_grad=True)
        b = rg.tensor([0.5], requires_grad=True)
        opt = rg.optim.AdamW([{"params": [w]}, {"params": [b], "lr": 0.3, "weight_decay": 0.0, "amsgrad": True}],
                             lr=0.1)
        opt._array_updates = arrays
        sched = rg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        seen = []
        opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(("pre", w.tolist(), w._version)))
        opt.register_step_post_hook(lambda o, args, kwargs: seen.append(("post", w.tolist(), w._version)))
        for step in range(5):
            opt.zero_grad(set_to_none=step % 2 == 0)
            ((w * w).sum() + (b * 3).sum()).backward()
            opt.step()
            sched.step()
        results.append((seen, b.tolist(), opt.state_dict()["param_groups"]))
    assert results[0] == results[1]


def test_a_state_the_update_lacks_raises_where_the_op_path_raises():
    # RMSprop makes its momentum buffer on the first step only if momentum was on then, as PyTorch's
    results = []
    for arrays in (True, False):
        w = rg.tensor([0.5, -1.0], requires_grad=True)
        opt = rg.optim.RMSprop([w], lr=0.1)
        opt._array_updates = arrays
        w.grad = rg.tensor([0.1, 0.2])
        opt.step()
        opt.param_groups[0]["momentum"] = 0.5
        with pytest.raises(KeyError, match="momentum_buffer"):
            opt.step()
        results.append((w.detach().numpy().tobytes(), w._version,
                        {k: (v.numpy().tobytes(), v._version) for k, v in opt.state[w].items()}))
    assert results[0] == results[1]
