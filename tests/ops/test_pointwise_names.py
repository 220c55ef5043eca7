"""PyTorch's further pointwise names (retrograd/ops/trig.py, retrograd/ops/arithmetic.py): in-place forms, alias
names, top-level in-place functions, errors and ``out=``, against torch on the same numbers.

The ops' values and derivatives (gradcheck, gradgradcheck, PyTorch's first and second derivatives, node names) are
swept with the rest of the op table from tests/ops/samples_trig.py.
"""

import numpy as np
import pytest
from errors_like_torch import first_sentence, same_error

import retrograd as rg
from retrograd.ops._methods import TOP_LEVEL_INPLACE

torch = pytest.importorskip("torch")

X = [[0.3, -0.6, 0.8], [0.1, 0.45, -0.2]]  # inside (-1, 1): every function here is defined and smooth there
Y = [[0.7, 0.2, -0.4], [1.5, -0.3, 0.9]]
Z = [[1.2, 0.8, 1.1], [0.6, 1.4, 0.9]]


def _t(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# (in-place call on a non-leaf ``y``, given the library and two constant tensors ``a``, ``b``)
INPLACE = {
    **{f"{n}_": (lambda n: lambda lib, y, a, b: getattr(y, f"{n}_")())(n) for n in (
        "acos", "asin", "atan", "asinh", "atanh", "sinh", "cosh", "arccos", "arcsin", "arctan", "arcsinh",
        "arctanh", "deg2rad", "rad2deg", "exp2", "expm1", "log1p", "rsqrt", "tan", "sign", "square", "fix",
        "negative", "absolute")},
    "acosh_": lambda lib, y, a, b: (y.add_(2)).acosh_(),
    "arccosh_": lambda lib, y, a, b: (y.add_(2)).arccosh_(),
    "log10_": lambda lib, y, a, b: (y.add_(1)).log10_(),
    "log2_": lambda lib, y, a, b: (y.add_(1)).log2_(),
    "rsqrt_ of positives": lambda lib, y, a, b: (y.add_(1)).rsqrt_(),
    "ldexp_": lambda lib, y, a, b: y.ldexp_(b),
    "nextafter_": lambda lib, y, a, b: y.nextafter_(a),
    "addcmul_": lambda lib, y, a, b: y.addcmul_(a, b, value=0.5),
    "addcdiv_": lambda lib, y, a, b: y.addcdiv_(a, b, value=-2),
    "greater_": lambda lib, y, a, b: y.greater_(a),
    "greater_equal_": lambda lib, y, a, b: y.greater_equal_(0.1),
    "less_": lambda lib, y, a, b: y.less_(a),
    "less_equal_": lambda lib, y, a, b: y.less_equal_(a),
    "not_equal_": lambda lib, y, a, b: y.not_equal_(0.1),
    "tril_": lambda lib, y, a, b: y.tril_(),
    "triu_": lambda lib, y, a, b: y.triu_(1),
    "cumsum_": lambda lib, y, a, b: y.cumsum_(1),
    "cumsum_ with a dtype": lambda lib, y, a, b: y.cumsum_(0, dtype=lib.float64),
    "fill_diagonal_": lambda lib, y, a, b: y.fill_diagonal_(0.25),
    "mvlgamma_": lambda lib, y, a, b: y.add_(2).mvlgamma_(2),
    "polygamma_": lambda lib, y, a, b: y.add_(2).polygamma_(1),
    "renorm_": lambda lib, y, a, b: y.renorm_(2, 0, 0.5),
    "top-level acos_": lambda lib, y, a, b: lib.acos_(y),
    "top-level arctanh_": lambda lib, y, a, b: lib.arctanh_(y),
    "top-level ldexp_": lambda lib, y, a, b: lib.ldexp_(y, b),
    "top-level xlogy_": lambda lib, y, a, b: lib.xlogy_(y, b),
    "top-level clamp_": lambda lib, y, a, b: lib.clamp_(y, -0.5, 0.5),
}


def _inplace_run(lib, name):
    """The result, version step, node name and leaf gradient of an in-place call on ``x * 1``."""
    x = _t(lib, X).requires_grad_()
    y = x * 1
    before = y._version
    out = INPLACE[name](lib, y, _t(lib, Y), _t(lib, Z))
    assert out is y
    node = y.grad_fn.name()
    try:
        (y * _t(lib, Z)).sum().backward()
    except NotImplementedError as exc:  # PyTorch has no derivative for the in-place acosh, asinh and atanh
        return y.detach().numpy(), y._version - before, node, first_sentence(exc)
    return y.detach().numpy(), y._version - before, node, x.grad.numpy()


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_form_matches_torch(name):
    ours, theirs = _inplace_run(rg, name), _inplace_run(torch, name)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-15)  # SciPy's polygamma and PyTorch's differ
    assert ours[1:3] == theirs[1:3]
    if isinstance(theirs[3], str):
        assert ours[3] == theirs[3]
        return
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-9, atol=1e-15)


def test_integer_inplace_forms_match_torch():
    for lib in (rg, torch):
        x = lib.tensor([5, -7, 9])
        x.floor_divide_(2)
        assert x.tolist() == [2, -4, 4]
    for name in ("sign_", "square_", "fix_", "negative_", "absolute_"):
        ours, theirs = rg.tensor([3, -2, 0]), torch.tensor([3, -2, 0])
        getattr(ours, name)()
        getattr(theirs, name)()
        assert ours.tolist() == theirs.tolist(), name


@pytest.mark.parametrize("alias,name", [
    ("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"), ("arccosh", "acosh"), ("arcsinh", "asinh"),
    ("arctanh", "atanh"), ("fix", "trunc"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
    ("less_equal", "le"), ("not_equal", "ne")])
def test_alias_is_its_function_and_method(alias, name):
    assert getattr(rg, alias) is getattr(rg, name)
    assert getattr(rg.Tensor, alias) is getattr(rg.Tensor, name)
    assert getattr(rg.Tensor, f"{alias}_") is getattr(rg.Tensor, f"{name}_")
    assert hasattr(torch, alias) and hasattr(torch.Tensor, f"{alias}_")


def test_every_top_level_inplace_function_is_torchs():
    for name in TOP_LEVEL_INPLACE + ("detach_",):
        assert callable(getattr(torch, name, None)), name
        assert getattr(rg, name) is getattr(rg.Tensor, name)
    # and none of torch's pointwise ones that retrograd's tensors have is left out
    missing = [n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and hasattr(rg.Tensor, n)
               and not hasattr(rg, n)]
    assert missing == []


def test_positive_returns_its_input_and_refuses_bools():
    x = rg.tensor([1.0, -2.0], requires_grad=True)
    assert rg.positive(x) is x and x.positive() is x
    assert rg.positive(rg.tensor([1, 2])).tolist() == [1, 2]
    same_error(lambda lib: lib.positive(lib.tensor([True])))


@pytest.mark.parametrize("call", [
    lambda lib: lib.frexp(lib.tensor([1, 2])),
    lambda lib: lib.nextafter(lib.tensor([1, 2]), lib.tensor([2, 3])),
    lambda lib: lib.addcdiv(lib.tensor([1.0]), lib.tensor([1]), lib.tensor([2])),
    lambda lib: lib.tensor([1.0, 2.0], requires_grad=True).acos_(),
    lambda lib: lib.renorm(lib.ones(2, 2), 0, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 0, -0.5),
    lambda lib: lib.renorm(lib.ones(2), 2, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 2, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2, dtype=lib.int64), 2, 0, 1.0),
    lambda lib: lib.mvlgamma(lib.ones(2), 0),
    lambda lib: lib.ones(3).fill_diagonal_(1.0),
    lambda lib: lib.ones(2, 3, 3).fill_diagonal_(1.0),
], ids=["frexp of integers", "nextafter of integers", "addcdiv of integers", "in place on a leaf", "renorm p 0",
        "renorm maxnorm < 0", "renorm 1-D", "renorm dim", "renorm integers", "mvlgamma p 0",
        "fill_diagonal_ 1-D", "fill_diagonal_ unequal dims"])
def test_errors_match_torch(call):
    same_error(call)


def test_frexp_returns_torchs_named_tuple():
    values = [0.0, 1.0, -8.0, 0.375, 3e-3]
    ours, theirs = rg.frexp(rg.tensor(values)), torch.frexp(torch.tensor(values))
    assert type(ours).__name__ == type(theirs).__name__ == "frexp"
    assert ours.mantissa.tolist() == theirs.mantissa.tolist()
    assert ours.exponent.tolist() == theirs.exponent.tolist()
    assert str(ours.exponent.dtype).split(".")[1] == str(theirs.exponent.dtype).split(".")[1] == "int32"
    assert not ours.exponent.requires_grad


@pytest.mark.parametrize("name", ["acos", "arcsin", "atanh", "sinh", "cosh", "deg2rad", "log10", "log2", "exp2",
                                  "fix", "ldexp", "nextafter", "addcmul", "addcdiv"])
def test_out_matches_torch(name):
    args = {"ldexp": lambda lib: (_t(lib, X), _t(lib, Z)), "nextafter": lambda lib: (_t(lib, X), _t(lib, Y)),
            "addcmul": lambda lib: (_t(lib, X), _t(lib, Y), _t(lib, Z)),
            "addcdiv": lambda lib: (_t(lib, X), _t(lib, Y), _t(lib, Z))}.get(name, lambda lib: (_t(lib, X),))
    results = []
    for lib in (rg, torch):
        out = lib.zeros(2, 3, dtype=lib.float64)
        got = getattr(lib, name)(*args(lib), out=out)
        assert got is out
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["acos", "asin", "atan", "sinh", "cosh", "log10", "log2"])
def test_foreach_forms_exist_and_match_torch(name):
    fn = f"_foreach_{name}"
    assert hasattr(rg, fn) and hasattr(rg, fn + "_")
    grads = []
    for lib in (rg, torch):
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in ([0.25, 0.5], [0.75])]
        outs = getattr(lib, fn)(xs)
        assert outs[0].grad_fn.name() == f"Foreach{name.capitalize()}Backward0"
        sum(o.sum() for o in outs).backward()
        grads.append([o.detach().numpy() for o in outs] + [x.grad.numpy() for x in xs])
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_foreach_addcmul_inplace_records_torchs_node():
    names = []
    for lib in (rg, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        lib._foreach_addcmul_([b], [a], [a], value=2)
        lib._foreach_addcdiv_([b], [a], [a + 1])
        names.append(b.grad_fn.name())
        b.sum().backward()
        names.append(a.grad.tolist())
    assert names[0] == "AddcdivBackward0" and names[:2] == names[2:]


@pytest.mark.parametrize("shape,transposed,wrap", [((7, 3), False, True), ((7, 3), False, False),
                                                    ((3, 7), True, True), ((3, 3, 3), False, False)])
def test_fill_diagonal_matches_torch(shape, transposed, wrap):
    filled = []
    for lib in (rg, torch):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        x = x.t() if transposed else x
        x.fill_diagonal_(-1.0, wrap=wrap)
        filled.append(x.tolist())
    assert filled[0] == filled[1]


def test_mvlgamma_below_its_domain_is_torchs():
    # PyTorch 2.13 no longer refuses elements at most (p - 1) / 2: the sum of log|gamma|, inf at a pole
    values = [0.9, 1.0, 0.25, 2.0]
    ours, theirs = rg.mvlgamma(rg.tensor(values, dtype=rg.float64), 3), torch.mvlgamma(torch.tensor(
        values, dtype=torch.float64), 3)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
