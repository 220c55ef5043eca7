"""nn.utils.parametrize, parametrizations.weight_norm and the old weight_norm, against torch.nn.utils."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

W = np.arange(9.0).reshape(3, 3) / 4 - 1


def _both(fn):
    return fn(torch), fn(rg)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and first line are what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


def _parametrizations(lib):
    class Sym(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(lib.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, A):
            return A / 2
    return Sym, Scale


def _linear(lib):
    lin = lib.nn.Linear(3, 3).double()
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W))
        lin.bias.copy_(lib.tensor([1.0, 2.0, 3.0]))
    return lin


def test_register_parametrization_moves_the_tensor_and_computes_it_as_torch():
    def run(lib):
        P = lib.nn.utils.parametrize
        Sym, Scale = _parametrizations(lib)
        lin = _linear(lib)
        P.register_parametrization(lin, "weight", Sym())
        P.register_parametrization(lin, "weight", Scale())
        out = [type(lin).__name__, list(lin.state_dict()), lin.weight.tolist(), P.is_parametrized(lin),
               P.is_parametrized(lin, "bias"), P.type_before_parametrizations(lin).__name__,
               [n for n, _ in lin.named_parameters()], repr(lin)]
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        lin(x).pow(2).sum().backward()
        out += [lin.parametrizations.weight.original.grad.tolist(), x.grad.tolist()]
        return out
    expected, got = _both(run)
    assert got == expected


def test_assigning_a_parametrized_tensor_stores_its_right_inverse():
    def run(lib):
        Sym, Scale = _parametrizations(lib)
        lin = _linear(lib)
        lib.nn.utils.parametrize.register_parametrization(lin, "weight", Sym())
        lib.nn.utils.parametrize.register_parametrization(lin, "weight", Scale())
        original = lin.parametrizations.weight.original
        lin.weight = lib.tensor(np.full((3, 3), 4.0))
        return lin.parametrizations.weight.original is original, original.tolist(), lin.weight.tolist()
    expected, got = _both(run)
    assert got == expected


def test_cached_computes_each_parametrized_tensor_once():
    def run(lib):
        P = lib.nn.utils.parametrize
        calls = []
        Sym, _ = _parametrizations(lib)

        class Counting(Sym):
            def forward(self, X):
                calls.append(1)
                return super().forward(X)
        lin = P.register_parametrization(_linear(lib), "weight", Counting())
        calls.clear()
        with P.cached():
            same = lin.weight is lin.weight
        return same, len(calls), lin.weight is lin.weight
    expected, got = _both(run)
    assert got == expected


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_restores_the_class_and_a_parameter(leave_parametrized):
    def run(lib):
        P = lib.nn.utils.parametrize
        Sym, Scale = _parametrizations(lib)
        lin = P.register_parametrization(_linear(lib), "weight", Scale())
        P.remove_parametrizations(lin, "weight", leave_parametrized=leave_parametrized)
        return (type(lin).__name__, list(lin.state_dict()), lin.weight.tolist(), type(lin.weight).__name__,
                hasattr(lin, "parametrizations"), lin.weight.requires_grad)
    expected, got = _both(run)
    assert got == expected


def test_parametrize_errors_match_torch():
    def run(lib):
        P = lib.nn.utils.parametrize
        Sym, Scale = _parametrizations(lib)
        lin = _linear(lib)

        class Shrink(lib.nn.Module):
            def forward(self, x):
                return x[:1]

        class NoInverse(lib.nn.Module):
            def forward(self, x):
                return x

        class Float(lib.nn.Module):
            def forward(self, x):
                return x.float()
        out = [_error(lambda: P.remove_parametrizations(lin, "weight")),
               _error(lambda: P.register_parametrization(lin, "bias", Shrink())),
               _error(lambda: P.register_parametrization(lin, "bias", Float())),
               _error(lambda: lib.nn.utils.parametrize.ParametrizationList([], lin.bias))]
        P.register_parametrization(lin, "weight", NoInverse())
        out.append(_error(lambda: setattr(lin, "weight", lib.zeros(3, 3, dtype=lib.float64))))
        out.append(_error(lambda: P.register_parametrization(lin, "weight", Shrink())))
        return [(t, m.replace(repr(lin), "<module>")) if m else None for t, m in (e or (None, None) for e in out)]
    expected, got = _both(run)
    assert got == expected


def test_parametrized_tensor_gradient_passes_gradcheck():
    class Sym(rg.nn.Module):  # no right_inverse: the original is the tensor given, unchanged
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    def parametrized(w):
        m = rg.nn.Module()
        m.register_buffer("weight", w)
        rg.nn.utils.parametrize.register_parametrization(m, "weight", Sym())
        rg.nn.utils.parametrize.register_parametrization(m, "weight", rg.nn.Tanh())
        return m.weight
    assert rg.autograd.gradcheck(parametrized, (rg.tensor(W, requires_grad=True),))


def test_parametrizations_weight_norm_matches_torch():
    def run(lib):
        out = []
        for dim in (0, 1, None):
            lin = lib.nn.utils.parametrizations.weight_norm(_linear(lib), dim=dim)
            x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
            y = lin(x)
            y.pow(2).sum().backward()
            pw = lin.parametrizations.weight
            out.append((list(lin.state_dict()), y.tolist(), pw.original0.tolist(), pw.original0.grad.tolist(),
                        pw.original1.grad.tolist(), x.grad.tolist()))
        return out
    expected, got = _both(run)
    for e, g in zip(expected, got, strict=True):
        assert g[0] == e[0]
        for a, b in zip(g[1:], e[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_parametrizations_weight_norm_loads_an_old_weight_norm_state_dict():
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            old = lib.nn.utils.weight_norm(_linear(lib))
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 3).double())
        result = new.load_state_dict(old.state_dict())
        return tuple(result), new.weight.tolist()
    expected, got = _both(run)
    assert got[0] == expected[0]
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


def test_old_weight_norm_and_remove_weight_norm_match_torch():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin = lib.nn.utils.weight_norm(_linear(lib), dim=1)
        names = [n for n, _ in lin.named_parameters()]
        with lib.no_grad():
            lin.weight_g.mul_(2)
        y = lin(lib.tensor(np.ones((1, 3))))
        y.sum().backward()
        grads = lin.weight_g.grad.tolist(), lin.weight_v.grad.tolist()
        errors = [_error(lambda: lib.nn.utils.weight_norm(lin)), _error(lambda: lib.nn.utils.remove_weight_norm(lin,
                                                                                                               "bias"))]
        lib.nn.utils.remove_weight_norm(lin)
        return ([type(x.message).__name__ for x in w], names, y.tolist(), grads,
                [(t, m.split(" in ")[0]) for t, m in errors], [n for n, _ in lin.named_parameters()],
                type(lin.weight).__name__, lin.weight.tolist())
    expected, got = _both(run)
    assert got[:2] == expected[:2] and got[4:7] == expected[4:7]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-12)
    for ours, theirs in zip(got[3], expected[3]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_allclose(got[7], expected[7], rtol=1e-12)


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_matches_torch_from_the_same_singular_vectors(training):
    torch.manual_seed(0)  # the power iteration's accuracy depends on the weights: fix them
    ref = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(3, 4).double())
    ours = rg.nn.utils.parametrizations.spectral_norm(rg.nn.Linear(3, 4).double())
    state = {k: rg.tensor(v.numpy()) for k, v in ref.state_dict().items()}
    assert list(state) == list(ours.state_dict())
    ours.load_state_dict(state)
    ours.train(training)
    ref.train(training)
    x = np.arange(6.0).reshape(2, 3)
    y, ty = ours(rg.tensor(x)), ref(torch.tensor(x))
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.parametrizations.weight.original.grad.numpy(),
                               ref.parametrizations.weight.original.grad.numpy(), rtol=1e-9)
    for key, value in ref.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-10, err_msg=key)
    largest = np.linalg.svd(ours.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(largest - 1) < 1e-6


def test_spectral_norm_errors_match_torch():
    def run(lib):
        sn = lib.nn.utils.parametrizations.spectral_norm
        return [_error(lambda: sn(lib.nn.Linear(2, 2), name="nope"))[0],
                _error(lambda: sn(lib.nn.Linear(2, 2), dim=3)),
                _error(lambda: sn(lib.nn.Linear(2, 2), n_power_iterations=0))]
    expected, got = _both(run)
    assert got == expected
