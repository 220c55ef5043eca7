"""Adadelta, Adagrad, Adamax, NAdam, RAdam, ASGD and LBFGS: torch.optim's trajectories, state and errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]
STEPS = 15

CASES = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1, maximize=True, foreach=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True, foreach=False)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-4, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, betas=(0.3, 0.99), weight_decay=0.1, maximize=True, capturable=False)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("NAdam", dict(lr=0.01, betas=(0.4, 0.999), foreach=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),  # rho_t passes 5 at step 6
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.7), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),  # averaging starts at step 6
    ("ASGD", dict(lr=0.05, t0=3, maximize=True, foreach=False)),
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


def _assert_state_matches(opt, ref, ours, theirs):
    for p, q in zip(ours, theirs, strict=True):
        mine, expected = opt.state[p], ref.state[q]
        assert list(mine) == list(expected)
        for key in mine:
            np.testing.assert_allclose(np.asarray(mine[key].numpy(), dtype=np.float64), expected[key].numpy(),
                                       rtol=1e-12, atol=1e-14, err_msg=key)
            assert str(mine[key].dtype).split(".")[-1] == str(expected[key].dtype).split(".")[-1]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name, kwargs):
    rng = np.random.default_rng(11)
    ours, theirs = _params(rng)
    opt = getattr(rg.optim, name)(ours, **kwargs)
    ref = getattr(torch.optim, name)(theirs, **kwargs)
    for step in range(STEPS):
        # The last parameter has no gradient on step 3: it is left alone, state included.
        _set_grads(ours, theirs, rng, skip=len(SHAPES) - 1 if step == 3 else None)
        opt.step()
        ref.step()
        _assert_close(ours, theirs)
    _assert_state_matches(opt, ref, ours, theirs)
    assert opt.state_dict()["param_groups"] == ref.state_dict()["param_groups"]


def test_quadratic_gradients_computed_by_each_library_give_the_same_path():
    a = np.random.default_rng(5).standard_normal((4, 4))
    a = a @ a.T + np.eye(4)
    x0 = np.arange(4.0)
    for name in ("Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD"):
        w = rg.tensor(x0, dtype=rg.float64, requires_grad=True)
        v = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        opt, ref = getattr(rg.optim, name)([w], lr=0.05), getattr(torch.optim, name)([v], lr=0.05)
        for _ in range(12):
            for lib, x, o in ((rg, w, opt), (torch, v, ref)):
                o.zero_grad()
                (x @ lib.tensor(a, dtype=lib.float64) @ x).backward()
                o.step()
            np.testing.assert_allclose(w.detach().numpy(), v.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("name", ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD"])
def test_param_groups_with_their_own_lr_match_torch(name):
    rng = np.random.default_rng(12)
    ours, theirs = _params(rng)
    opt = getattr(rg.optim, name)([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.3}], lr=0.02)
    ref = getattr(torch.optim, name)([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.3}], lr=0.02)
    for _ in range(10):
        _set_grads(ours, theirs, rng)
        opt.step()
        ref.step()
        _assert_close(ours, theirs)


def _run(lib, params, opt, grads):
    for gs in grads:
        for p, g in zip(params, gs, strict=True):
            p.grad = lib.tensor(g, dtype=lib.float64)
        opt.step()


def _resume_mid_run(lib, name, kwargs, values, grads):
    """The parameters after all ``grads``, run straight through and with a state_dict round trip halfway."""
    straight = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    _run(lib, straight, getattr(lib.optim, name)(straight, **kwargs), grads)
    first = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    opt1 = getattr(lib.optim, name)(first, **kwargs)
    _run(lib, first, opt1, grads[:6])
    resumed = [p.detach().clone().requires_grad_() for p in first]
    opt2 = getattr(lib.optim, name)(resumed, lr=123.0)  # the loaded groups replace these options
    opt2.load_state_dict(opt1.state_dict())
    _run(lib, resumed, opt2, grads[6:])
    return [p.detach().numpy() for p in straight], [p.detach().numpy() for p in resumed]


@pytest.mark.parametrize("name,kwargs", [("Adadelta", dict(weight_decay=0.1)), ("Adagrad", dict(lr_decay=0.1)),
                                         ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
                                         ("RAdam", dict(lr=0.01)), ("ASGD", dict(t0=2))])
def test_state_dict_round_trip_continues_as_torchs(name, kwargs):
    # NAdam's mu_product is a float32 scalar that loading casts to the parameters' float64, in both
    # libraries, and later products keep the extra bits: the resumed run differs in the last bits, as
    # PyTorch's does. Elsewhere resuming changes nothing (ASGD's eta and mu are rounded to float32 at
    # every step, whatever their dtype).
    rng = np.random.default_rng(13)
    values = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(12)]
    straight, resumed = _resume_mid_run(rg, name, kwargs, values, grads)
    ref_straight, ref_resumed = _resume_mid_run(torch, name, kwargs, values, grads)
    for a, b, c, d in zip(straight, resumed, ref_straight, ref_resumed, strict=True):
        np.testing.assert_allclose(b, d, rtol=1e-12, atol=1e-14)
        assert np.array_equal(a, b) == np.array_equal(c, d)
    assert all(np.array_equal(a, b) for a, b in zip(straight, resumed, strict=True)) == (name != "NAdam")


@pytest.mark.parametrize("name,kwargs", [("Adadelta", dict(rho=0.8)), ("Adagrad", dict(lr_decay=0.1)),
                                         ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
                                         ("RAdam", dict(lr=0.01)), ("ASGD", dict(t0=2))])
def test_a_state_dict_saved_by_torch_loads_and_continues(name, kwargs):
    rng = np.random.default_rng(14)
    ours, theirs = _params(rng)
    ref = getattr(torch.optim, name)(theirs, **kwargs)
    for _ in range(5):
        _set_grads(ours, theirs, rng)
        ref.step()
    saved = ref.state_dict()
    converted = {"param_groups": saved["param_groups"],
                 "state": {k: {n: rg.tensor(v.numpy()) for n, v in s.items()} for k, s in saved["state"].items()}}
    for p, q in zip(ours, theirs, strict=True):
        with rg.no_grad():
            p.copy_(rg.tensor(q.detach().numpy()))
    opt = getattr(rg.optim, name)(ours)
    opt.load_state_dict(converted)
    ref = getattr(torch.optim, name)(theirs)  # loading casts float32 scalars (NAdam's mu_product) in both
    ref.load_state_dict(saved)
    for _ in range(5):
        _set_grads(ours, theirs, rng)
        opt.step()
        ref.step()
        _assert_close(ours, theirs)
    _assert_state_matches(opt, ref, ours, theirs)


def test_adagrad_makes_its_state_at_construction_as_torch():
    w = rg.zeros(3, requires_grad=True)
    opt = rg.optim.Adagrad([w], initial_accumulator_value=0.5)
    assert list(opt.state[w]) == ["step", "sum"] and opt.state[w]["sum"].tolist() == [0.5] * 3
    assert opt.state[w]["step"].item() == 0.0
    late = rg.zeros(2, requires_grad=True)
    opt.add_param_group({"params": [late]})
    late.grad = rg.ones(2)
    opt.step()
    assert opt.state[late]["step"].item() == 1.0


# -- LBFGS -----------------------------------------------------------------------------------------

_A = np.array([[3.0, 0.5, 0.0, 0.2], [0.5, 2.0, 0.3, 0.0], [0.0, 0.3, 1.5, 0.1], [0.2, 0.0, 0.1, 1.0]])
_B = np.array([1.0, -2.0, 0.5, 3.0])


def _objective(lib, x):
    # Strongly convex with a quartic term: L-BFGS converges without amplifying the last-bit
    # differences of the two libraries' kernels (on Rosenbrock's valley they grow to 1e-10).
    n = x.shape[0]
    a, b = lib.tensor(_A[:n, :n], dtype=lib.float64), lib.tensor(_B[:n], dtype=lib.float64)
    return 0.5 * (x @ a @ x) - (b * x).sum() + 0.25 * (x ** 4).sum()


def _lbfgs_pair(x0, **kwargs):
    w = rg.tensor(x0, dtype=rg.float64, requires_grad=True)
    v = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    opt, ref = rg.optim.LBFGS([w], **kwargs), torch.optim.LBFGS([v], **kwargs)

    def closure_for(lib, x, o, calls):
        def closure():
            calls.append(1)
            o.zero_grad()
            loss = _objective(lib, x)
            loss.backward()
            return loss
        return closure

    return w, v, opt, ref, closure_for


@pytest.mark.parametrize("kwargs", [dict(), dict(line_search_fn="strong_wolfe"),
                                    dict(lr=0.5, max_iter=4, history_size=3),
                                    dict(max_iter=6, history_size=2, line_search_fn="strong_wolfe"),
                                    dict(max_iter=30, max_eval=12, tolerance_change=1e-6,
                                         line_search_fn="strong_wolfe")])
def test_lbfgs_trajectory_matches_torch(kwargs):
    x0 = np.array([3.0, -2.0, 2.5, -3.0])
    w, v, opt, ref, closure_for = _lbfgs_pair(x0, **kwargs)
    ours_calls, their_calls = [], []
    for _ in range(8):
        loss = opt.step(closure_for(rg, w, opt, ours_calls))
        expected = ref.step(closure_for(torch, v, ref, their_calls))
        assert loss.item() == pytest.approx(expected.item(), rel=1e-12)
        np.testing.assert_allclose(w.detach().numpy(), v.detach().numpy(), rtol=1e-12, atol=1e-14)
        assert len(ours_calls) == len(their_calls)
    mine, theirs = opt.state[w], ref.state[v]
    assert set(mine) == set(theirs)
    assert mine["func_evals"] == theirs["func_evals"] and mine["n_iter"] == theirs["n_iter"]
    np.testing.assert_allclose(mine["d"].numpy(), theirs["d"].numpy(), rtol=1e-9, atol=1e-12)


def test_lbfgs_state_dict_round_trip_continues_the_same_trajectory():
    x0 = np.array([-1.2, 1.0, 0.5])
    w, v, opt, ref, closure_for = _lbfgs_pair(x0, max_iter=3, line_search_fn="strong_wolfe")
    for _ in range(2):
        opt.step(closure_for(rg, w, opt, []))
    resumed = w.detach().clone().requires_grad_()
    opt2 = rg.optim.LBFGS([resumed], max_iter=3, line_search_fn="strong_wolfe")
    opt2.load_state_dict(opt.state_dict())
    for _ in range(3):
        opt.step(closure_for(rg, w, opt, []))
        opt2.step(closure_for(rg, resumed, opt2, []))
    np.testing.assert_array_equal(w.detach().numpy(), resumed.detach().numpy())


def test_lbfgs_stops_at_once_where_the_gradient_vanishes():
    w = rg.ones(2, dtype=rg.float64, requires_grad=True)
    opt = rg.optim.LBFGS([w])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0 and len(calls) == 1 and w.tolist() == [1.0, 1.0]
    assert opt.state[w] == {"func_evals": 1, "n_iter": 0}


def test_lbfgs_errors_match_torch():
    def errors(lib, fn):
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, str(e).split(". ")[0]
        return None

    def groups(lib):
        lib.optim.LBFGS([{"params": [lib.zeros(1, requires_grad=True)]},
                         {"params": [lib.zeros(1, requires_grad=True)]}])

    def line_search(lib):
        w = lib.ones(1, requires_grad=True)
        opt = lib.optim.LBFGS([w], line_search_fn="backtracking")

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss
        opt.step(closure)

    for fn in (groups, line_search, lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)], lr=-1.0)):
        assert errors(rg, fn) == errors(torch, fn) is not None


# -- errors ----------------------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("Adadelta", dict(lr=-1.0)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1e-3)),
    ("Adadelta", dict(weight_decay=-0.1)),
    ("Adagrad", dict(lr=-0.5)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-0.2)), ("Adagrad", dict(eps=-1.0)),
    ("Adagrad", dict(fused=True, foreach=True)),
    ("Adamax", dict(lr=-1.0)), ("Adamax", dict(eps=-1.0)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-2)),
    ("NAdam", dict(lr=-1.0)), ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(momentum_decay=-0.1)),
    ("NAdam", dict(eps=-1.0)), ("NAdam", dict(weight_decay=-1.0)),
    ("RAdam", dict(lr=-1.0)), ("RAdam", dict(betas=(-0.1, 0.9))), ("RAdam", dict(eps=-1.0)),
    ("RAdam", dict(weight_decay=-1.0)),
    ("ASGD", dict(lr=-1.0)), ("ASGD", dict(weight_decay=-1.0)),
    ("Adam", dict(lr=-1.0)), ("SGD", dict(lr=0.1, momentum=-0.5)), ("RMSprop", dict(eps=-1.0)),
]


def _raised(lib, name, kwargs, params):
    try:
        getattr(lib.optim, name)(params, **kwargs)
    except Exception as e:  # noqa: BLE001 - comparing what each library raises
        return type(e).__name__, str(e).split(". ")[0]
    return None


@pytest.mark.parametrize("name,kwargs", BAD_ARGUMENTS, ids=[f"{n}-{list(k)[0]}" for n, k in BAD_ARGUMENTS])
def test_bad_arguments_raise_what_torch_raises(name, kwargs):
    ours = _raised(rg, name, kwargs, [rg.zeros(1, requires_grad=True)])
    theirs = _raised(torch, name, kwargs, [torch.zeros(1, requires_grad=True)])
    assert theirs is not None and ours == theirs


def test_a_tensor_lr_must_have_one_element():
    for name in ("Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD", "LBFGS"):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            getattr(rg.optim, name)([rg.zeros(1, requires_grad=True)], lr=rg.tensor([0.1, 0.2]))
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], lr=torch.tensor([0.1, 0.2]))


@pytest.mark.parametrize("name", ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD"])
def test_defaults_and_group_keys_match_torch(name):
    ours = getattr(rg.optim, name)([rg.zeros(1, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


# -- implementation switches -----------------------------------------------------------------------

# PyTorch's foreach ASGD computes eta in float32 tensor arithmetic and so leaves its own default path
# by about 1e-9; retrograd gives the default path's numbers for every setting (compared without it).
SWITCHES = [(name, {"foreach": value}) for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adadelta", "Adagrad",
                                                     "Adamax", "NAdam", "RAdam", "ASGD") for value in (True, False)
            if (name, value) != ("ASGD", True)]
SWITCHES += [(name, {"fused": True}) for name in ("SGD", "Adam", "AdamW", "Adagrad")]


@pytest.mark.parametrize("name,kwargs", SWITCHES, ids=[f"{n}-{k}" for n, k in SWITCHES])
def test_implementation_switches_give_torchs_numbers(name, kwargs):
    rng = np.random.default_rng(15)
    ours, theirs = _params(rng)
    extra = dict(lr=0.01, weight_decay=0.1) if name != "SGD" else dict(lr=0.01, momentum=0.9)
    opt = getattr(rg.optim, name)(ours, **extra, **kwargs)
    ref = getattr(torch.optim, name)(theirs, **extra, **kwargs)
    for _ in range(10):
        _set_grads(ours, theirs, rng)
        opt.step()
        ref.step()
        _assert_close(ours, theirs)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_with_foreach_or_differentiable_raises_what_torch_raises(name):
    for kwargs in (dict(fused=True, foreach=True), dict(fused=True, differentiable=True)):
        ours = _raised(rg, name, dict(lr=0.1, **kwargs), [rg.zeros(1, requires_grad=True)])
        theirs = _raised(torch, name, dict(lr=0.1, **kwargs), [torch.zeros(1, requires_grad=True)])
        assert theirs is not None and ours == theirs


@pytest.mark.parametrize("name", ["Adam", "Adagrad", "NAdam", "ASGD"])
def test_scalar_state_follows_a_float64_default_dtype_as_torch(name):
    rng = np.random.default_rng(16)
    ours, theirs = _params(rng)
    previous, previous_torch = rg.get_default_dtype(), torch.get_default_dtype()
    rg.set_default_dtype(rg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        opt, ref = getattr(rg.optim, name)(ours, lr=0.01), getattr(torch.optim, name)(theirs, lr=0.01)
        for _ in range(8):
            _set_grads(ours, theirs, rng)
            opt.step()
            ref.step()
            _assert_close(ours, theirs)
        _assert_state_matches(opt, ref, ours, theirs)
    finally:
        rg.set_default_dtype(previous)
        torch.set_default_dtype(previous_torch)


def _from_torch(value):
    """A torch state value with every tensor (also inside lists) turned into a retrograd one."""
    if isinstance(value, torch.Tensor):
        return rg.tensor(value.detach().numpy())
    if isinstance(value, list):
        return [_from_torch(v) for v in value]
    return value


def test_lbfgs_loads_a_state_dict_saved_by_torch_and_continues():
    x0 = np.array([3.0, -2.0, 2.5, -3.0])
    w, v, opt, ref, closure_for = _lbfgs_pair(x0, max_iter=3, history_size=4, line_search_fn="strong_wolfe")
    for _ in range(2):
        ref.step(closure_for(torch, v, ref, []))
    saved = ref.state_dict()
    with rg.no_grad():
        w.copy_(rg.tensor(v.detach().numpy()))
    opt.load_state_dict({"param_groups": saved["param_groups"],
                         "state": {k: {n: _from_torch(x) for n, x in s.items()} for k, s in saved["state"].items()}})
    for _ in range(3):
        opt.step(closure_for(rg, w, opt, []))
        ref.step(closure_for(torch, v, ref, []))
        np.testing.assert_allclose(w.detach().numpy(), v.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert opt.state[w]["n_iter"] == ref.state[v]["n_iter"]
