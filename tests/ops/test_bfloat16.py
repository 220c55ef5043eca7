"""bfloat16 as a dtype like the others, against PyTorch's CPU on the same numbers (Note [bfloat16 arrays] in
retrograd/_dtype.py): factories, casts, promotion, printing, indexing, in-place ops, save/load, autograd, nn layers
and optimizers; and ml_dtypes, which holds its arrays, imported only when a bfloat16 tensor is first made."""
from __future__ import annotations

import io
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def _run(code):
    """Runs ``code`` in a fresh interpreter of this tree; returns its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_retrograd_leaves_ml_dtypes_unimported_until_a_bfloat16_tensor_is_made():
    out = _run("import sys, retrograd as rg\n"
               "x = (rg.ones(2, requires_grad=True) * 2).sum(); x.backward()\n"
               "print('ml_dtypes' in sys.modules, rg.finfo(rg.bfloat16).eps, rg.promote_types(rg.bfloat16, rg.int8))\n"
               "rg.zeros(2, dtype=rg.bfloat16)\n"
               "print('ml_dtypes' in sys.modules)\n")
    assert out.split() == ["False", "0.0078125", "retrograd.bfloat16", "True"]


def test_without_ml_dtypes_bfloat16_raises_naming_the_package_and_the_rest_works():
    out = _run("import sys\n"
               "sys.modules['ml_dtypes'] = None  # as if not installed\n"
               "import retrograd as rg\n"
               "for make in (lambda: rg.zeros(2, dtype=rg.bfloat16), lambda: rg.ones(2).bfloat16(),\n"
               "             lambda: rg.ones(2).sum(dtype=rg.bfloat16)):\n"
               "    try:\n"
               "        make()\n"
               "    except ModuleNotFoundError as e:\n"
               "        print(e.name, 'pip install ml_dtypes' in str(e))\n"
               "x = rg.ones(2, requires_grad=True); (x * 3).sum().backward()\n"
               "print(x.grad.tolist(), rg.finfo(rg.bfloat16).bits)\n")
    assert out.splitlines() == ["ml_dtypes True"] * 3 + ["[3.0, 3.0] 16"]


# -- the dtype everywhere a dtype appears, against PyTorch -----------------------------------------------------------
def _inplace(m, x):
    y = x.clone()
    y.add_(0.01)
    y.mul_(m.tensor([1.5, 1.5, 1.5, 1.5]))
    y.exp_()
    return y.clamp_(max=1.2)


def _setitem(m, x):
    y = x.clone()
    y[1] = 0.7
    y[2:] = m.tensor([1.1, 2.2])
    return y


_X = [0.1, 0.2, 0.3, 0.4]
FACTS = {
    "zeros": lambda m: m.zeros(2, dtype=m.bfloat16),
    "full": lambda m: m.full((2,), 0.1, dtype=m.bfloat16),
    "empty": lambda m: m.empty(2, 3, dtype=m.bfloat16).shape,
    "arange": lambda m: m.arange(0, 1, 0.25, dtype=m.bfloat16),
    "linspace": lambda m: m.linspace(-3.3, 7.1, 17, dtype=m.bfloat16),
    "eye": lambda m: m.eye(2, dtype=m.bfloat16),
    "randn": lambda m: m.randn(2, dtype=m.bfloat16).dtype,
    "randint": lambda m: m.randint(0, 5, (2,), dtype=m.bfloat16).dtype,
    "zeros_like": lambda m: m.zeros_like(m.ones(2), dtype=m.bfloat16),
    "full_like": lambda m: m.full_like(m.ones(2, dtype=m.bfloat16), 0.3),
    "rand_like": lambda m: m.rand_like(m.ones(2, dtype=m.bfloat16)).dtype,
    "tensor": lambda m: m.tensor([0.1, 1e5, 3.14159, 1e-5], dtype=m.bfloat16),
    "new_ones": lambda m: m.ones(2, dtype=m.bfloat16).new_ones(3),
    "to": lambda m: m.tensor([0.1, 0.2]).to(m.bfloat16),
    "bfloat16()": lambda m: m.tensor([1.00390625, 1.01171875, -1.00390625]).bfloat16(),  # ties to even
    "back to float": lambda m: m.tensor([0.1, 0.2]).bfloat16().float(),
    "to long": lambda m: m.tensor([1.7, -2.5]).bfloat16().long(),
    "from int": lambda m: m.tensor([257, 3]).bfloat16(),
    "is_floating_point": lambda m: m.ones(1, dtype=m.bfloat16).is_floating_point(),
    "element_size": lambda m: m.ones(1, dtype=m.bfloat16).element_size(),
    "item": lambda m: m.tensor(0.1, dtype=m.bfloat16).item(),
    "tolist": lambda m: m.tensor(_X, dtype=m.bfloat16).tolist(),
    "int()": lambda m: int(m.tensor(2.7, dtype=m.bfloat16)),
    "repr": lambda m: repr(m.tensor([0.1, 0.3], dtype=m.bfloat16)).replace("torch", "retrograd"),
    "repr 0-d": lambda m: repr(m.tensor(0.1, dtype=m.bfloat16, requires_grad=True)).replace("torch", "retrograd"),
    "repr scientific": lambda m: repr(m.tensor([123456.0, 1e-5], dtype=m.bfloat16)).replace("torch", "retrograd"),
    "repr empty": lambda m: repr(m.zeros(0, dtype=m.bfloat16)).replace("torch", "retrograd"),
    "slice": lambda m: m.tensor(_X, dtype=m.bfloat16)[1:3],
    "index": lambda m: m.tensor(_X, dtype=m.bfloat16)[m.tensor([0, 2])],
    "mask": lambda m: (lambda x: x[x > 0.15])(m.tensor(_X, dtype=m.bfloat16)),
    "setitem": lambda m: _setitem(m, m.tensor(_X, dtype=m.bfloat16)),
    "in place": lambda m: _inplace(m, m.tensor(_X, dtype=m.bfloat16)),
    "float32 into bfloat16": lambda m: m.tensor(_X, dtype=m.bfloat16).add_(m.tensor([0.001] * 4)),
    "bfloat16 into float32": lambda m: m.zeros(4).add_(m.tensor(_X, dtype=m.bfloat16)),
    "copy_": lambda m: m.zeros(4, dtype=m.bfloat16).copy_(m.tensor(_X)),
    "with float16": lambda m: (m.ones(2, dtype=m.bfloat16) + m.ones(2, dtype=m.float16)).dtype,
    "with float32": lambda m: (m.ones(2, dtype=m.bfloat16) + m.ones(2)).dtype,
    "with int64": lambda m: (m.ones(2, dtype=m.bfloat16) + m.ones(2, dtype=m.int64)).dtype,
    "with a Python float": lambda m: m.tensor(_X, dtype=m.bfloat16) * 0.1,  # 0.1 in float32, rounded once
    "with a 0-d float32": lambda m: m.tensor(_X, dtype=m.bfloat16) + m.tensor(1.001),  # cast to bfloat16 first
    "minus a Python float": lambda m: m.tensor(_X, dtype=m.bfloat16) - 0.1001,  # rounded to bfloat16 first
    "compared with a Python float": lambda m: m.tensor(_X, dtype=m.bfloat16) > 0.2,  # 0.2001953125
    "remainder of a Python float": lambda m: m.tensor(_X, dtype=m.bfloat16) % 0.1001,
    "0-d bfloat16 with float32": lambda m: (m.ones(2) + m.tensor(1.0, dtype=m.bfloat16)).dtype,
    "matmul": lambda m: m.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=m.bfloat16) @ m.tensor([[1.1, 2.2], [3.3, 4.4]],
                                                                                         dtype=m.bfloat16),
    "mm of bfloat16 and float32": lambda m: m.mm(m.ones(2, 2, dtype=m.bfloat16), m.ones(2, 2)),
    "sum": lambda m: m.full((1000,), 0.1, dtype=m.bfloat16).sum(),  # accumulated in float32
    "sum to float32": lambda m: m.full((1000,), 0.1, dtype=m.bfloat16).sum(dtype=m.float32),
    "sum of float32 to bfloat16": lambda m: m.full((100,), 1.003).sum(dtype=m.bfloat16),  # cast first
    "mean": lambda m: m.linspace(0, 1, 50, dtype=m.bfloat16).mean(),
    "var": lambda m: m.linspace(0, 1, 50, dtype=m.bfloat16).var(),
    "cumsum": lambda m: m.full((300,), 0.1, dtype=m.bfloat16).cumsum(0)[-3:],
    "softmax": lambda m: m.softmax(m.tensor(_X, dtype=m.bfloat16), 0),
    "nan_to_num": lambda m: m.nan_to_num(m.tensor([float("inf"), float("-inf"), float("nan")], dtype=m.bfloat16)),
    "finfo": lambda m: str(m.finfo(m.bfloat16)),
    "promote_types": lambda m: [str(m.promote_types(m.bfloat16, d)) for d in (m.float16, m.float32, m.int8)],
}


def _described(value):
    if isinstance(value, (rg.Tensor, torch.Tensor)):
        wide = value.detach().to(rg.float64 if isinstance(value, rg.Tensor) else torch.float64)
        return str(value.dtype).split(".")[-1], tuple(value.shape), wide.tolist()
    return str(value).replace("torch.", "retrograd.")


def _outcome(fn, m):
    try:
        return _described(fn(m))
    except Exception as exc:  # noqa: BLE001 - compared with PyTorch's
        return type(exc).__name__, str(exc).split("\n")[0]


@pytest.mark.parametrize("name", list(FACTS))
def test_bfloat16_behaves_as_pytorch_s(name):
    assert _outcome(FACTS[name], rg) == _outcome(FACTS[name], torch)


def test_numpy_refuses_bfloat16_with_pytorch_s_type_error():
    x, y = rg.ones(2, dtype=rg.bfloat16), torch.ones(2, dtype=torch.bfloat16)
    for call in (lambda t: t.numpy(), lambda t: t.numpy(force=True), lambda t: np.asarray(t)):
        with pytest.raises(TypeError) as ours:
            call(x)
        with pytest.raises(TypeError) as theirs:
            call(y)
        assert str(ours.value) == str(theirs.value) == "Got unsupported ScalarType BFloat16"


def test_save_and_load_keep_bfloat16_values_bit_for_bit():
    x = rg.randn(3, 4).bfloat16().t()
    buf = io.BytesIO()
    rg.save({"x": x, "p": rg.nn.Parameter(rg.ones(2, dtype=rg.bfloat16))}, buf)
    buf.seek(0)
    got = rg.load(buf)
    assert got["x"].dtype is rg.bfloat16 and got["x"].shape == x.shape and bool((got["x"] == x).all())
    assert got["p"].dtype is rg.bfloat16 and got["p"].requires_grad


def test_the_type_names_are_pytorch_s():
    from retrograd import _dtype
    np_dtype = rg.bfloat16.np
    assert (_dtype.scalar_type_name(np_dtype), _dtype.type_meta_name(np_dtype), _dtype.tensor_type_name(np_dtype)) \
        == ("BFloat16", "c10::BFloat16", "retrograd.BFloat16Tensor")
    assert rg.ones(1).bfloat16().dtype is rg.bfloat16 is _dtype.from_numpy_dtype(np_dtype)


# -- autograd ---------------------------------------------------------------------------------------------------------
def _mixed_graph(m):
    a = m.tensor([0.1, 0.2], dtype=m.bfloat16, requires_grad=True)
    b = m.tensor([0.3, 0.7], requires_grad=True)
    c = m.tensor(1.3, requires_grad=True)
    out = (a * b).sum() + (a * c).sum() + (a.float() * 3).sum()
    out.backward()
    return [(str(t.grad.dtype).split(".")[-1], t.grad.double().tolist()) for t in (a, b, c)] + [str(out.dtype)[-7:]]


def _leaf_grads(m):
    w = m.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=m.bfloat16, requires_grad=True)
    x = m.tensor([[1.1, 2.2], [3.3, 4.4]], dtype=m.bfloat16)
    (x @ w).tanh().sum().backward()
    (x @ w).sigmoid().mean().backward()  # accumulated into the bfloat16 .grad
    return str(w.grad.dtype).split(".")[-1], w.grad.double().tolist()


@pytest.mark.parametrize("scenario", [_mixed_graph, _leaf_grads])
def test_gradients_have_pytorch_s_dtypes_and_values(scenario):
    assert scenario(rg) == scenario(torch)


def test_gradcheck_refuses_bfloat16_as_pytorch_s():
    outcomes = []
    for m in (rg, torch):
        x = m.tensor([0.5, 1.5, 2.5], dtype=m.bfloat16, requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError) as info:  # GradcheckError, a RuntimeError in both
                m.autograd.gradcheck(lambda t: t * 2, (x,))
        outcomes.append((type(info.value).__name__, str(seen[0].message), str(info.value).split("\n")[0]))
    assert outcomes[0] == outcomes[1]


# -- nn layers and optimizers -----------------------------------------------------------------------------------------
LAYERS = {
    "Linear": (lambda nn: nn.Linear(4, 3), (2, 4)),
    "Conv2d": (lambda nn: nn.Conv2d(2, 3, 3, padding=1), (2, 2, 5, 5)),
    "LayerNorm": (lambda nn: nn.LayerNorm(4), (3, 4)),
    "Embedding": (lambda nn: nn.Embedding(5, 4), None),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(4), (16, 4)),
    "GRU": (lambda nn: nn.GRU(4, 3, batch_first=True), (2, 3, 4)),
}


def _layer(m, name):
    make, shape = LAYERS[name]
    layer = make(m.nn)
    for i, p in enumerate(layer.parameters()):
        p.data = m.from_numpy(np.random.default_rng(i).standard_normal(tuple(p.shape)).astype(np.float32) * 0.5)
    layer.to(m.bfloat16)
    x = m.tensor([[1, 2], [4, 0]]) if shape is None else m.from_numpy(
        np.random.default_rng(9).standard_normal(shape)).to(m.bfloat16)
    y = layer(x)
    y = y[0] if isinstance(y, tuple) else y
    y.float().square().sum().backward()
    return [(str(t.dtype).split(".")[-1], t.detach().double().numpy()) for t in [y] + [p.grad for p in
                                                                                     layer.parameters()]]


@pytest.mark.parametrize("name", list(LAYERS))
def test_nn_layers_in_bfloat16_match_pytorch(name):
    for (ours_dtype, ours), (their_dtype, theirs) in zip(_layer(rg, name), _layer(torch, name), strict=True):
        assert ours_dtype == their_dtype == "bfloat16"
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=2 ** -5 * max(1.0, np.abs(theirs).max()))


OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD"]


def _optimized(m, name):
    w = m.from_numpy(np.linspace(-1, 1, 6).astype(np.float32)).to(m.bfloat16).requires_grad_()
    opt = getattr(m.optim, name)([w], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    state = sorted((k, str(v.dtype).split(".")[-1]) for k, v in opt.state[w].items() if hasattr(v, "dtype"))
    return str(w.dtype).split(".")[-1], w.detach().double().tolist(), state


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizers_step_bfloat16_parameters_as_pytorch_s(name):
    """The op path (the array path takes float32 and float64 only), of PyTorch's dtypes and values within a unit
    of bfloat16: PyTorch's own ``add_(t, alpha=a)`` rounds otherwise in its vectorized body (as here: in float32,
    once) than in the scalar tail of a short tensor (``a * t`` rounded first)."""
    (dtype, ours, state), (their_dtype, theirs, their_state) = _optimized(rg, name), _optimized(torch, name)
    assert (dtype, state) == (their_dtype, their_state) and dtype == "bfloat16"
    np.testing.assert_allclose(ours, theirs, rtol=2 ** -7, atol=2 ** -9)
