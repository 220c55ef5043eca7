"""The op sweep: every registered op, on every sample of tests/ops/samples*.py.

For each sample: the forward matches NumPy (``ref``) and PyTorch (values, dtype, shape, and
whether each output requires grad); gradcheck and gradgradcheck pass in float64; and the first
and second derivatives match PyTorch's on the same numbers (skipped without torch). On one sample
per op, forward-mode AD's tangent matches finite differences and PyTorch's forward AD.
"""
from __future__ import annotations

import pathlib
import sys
import zlib

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.ops._declarations import REGISTRY

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import samples as _samples  # noqa: E402

SAMPLES = _samples.SAMPLES
CASES = [pytest.param(name, i, id=f"{name}-{i}") for name in sorted(SAMPLES) for i in range(len(SAMPLES[name]))]


# Known wrong results, fixed op by op; each is a strict xfail, so a fix must also remove it here.
KNOWN_BROKEN = {
}


def _mark(test, params):
    return [pytest.param(*p.values, id=p.id, marks=pytest.mark.xfail(strict=True, reason="known broken"))
            if f"{test}[{p.id}]" in KNOWN_BROKEN else p for p in params]


# -- the table itself --------------------------------------------------------------------------------
def test_every_registered_op_has_samples():
    missing = sorted(name for name in REGISTRY if not SAMPLES.get(name))
    assert not missing, f"registered ops without samples in tests/ops/samples*.py: {missing}"


def test_every_sample_names_an_op():
    unknown = sorted(name for name in SAMPLES if name not in REGISTRY and not callable(getattr(rg, name, None))
                     and not callable(getattr(rg.nn.functional, name, None)))
    assert not unknown, f"samples for names that are neither registered ops nor retrograd functions: {unknown}"


# -- helpers ----------------------------------------------------------------------------------------------
def _fresh(array):
    """A copy of ``array`` with the same contiguity (gradcheck perturbs its inputs in place)."""
    if array.flags.c_contiguous or array.ndim == 0 or array.size == 0:
        return array.copy()
    return _samples.nc(array)


def _inputs(sample, lib, requires_grad=True):
    """The sample's inputs as tensors of ``lib`` (retrograd or torch) sharing fresh arrays."""
    from_numpy = lib.from_numpy
    out = []
    for inp in sample.inputs:
        if isinstance(inp, _samples.Const):
            out.append(from_numpy(_fresh(inp.array)))
            continue
        t = from_numpy(_fresh(np.asarray(inp)))
        if requires_grad and inp.dtype.kind == "f":
            t.requires_grad_(True)
        out.append(t)
    return out


def _flat(out):
    """The tensors of an op's result (a tensor, or a possibly nested tuple/list of them)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _array(t):
    if hasattr(t, "_data"):
        return np.asarray(t.detach().numpy())
    return t.detach().numpy(force=True)  # force: PyTorch may hand back a lazy ZeroTensor


def _diff_inputs(tensors):
    return [t for t in tensors if t.requires_grad]


def _call(sample, lib, tensors):
    return sample.torch_call(lib, *tensors) if lib is not rg else sample.call(lib, *tensors)


def _sample(name, i):
    return SAMPLES[name][i]


def _counting(name):
    """Counts calls of op ``name``'s forward, to check that a sample exercises its op."""
    op = REGISTRY.get(name)
    calls = [0]
    if op is None:
        return None, calls
    original = op.forward

    def forward(*args):
        calls[0] += 1
        return original(*args)
    op.forward = forward
    return (op, original), calls


# -- forward -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,i", _mark("test_forward", CASES))
def test_forward(name, i):
    sample = _sample(name, i)
    tensors = _inputs(sample, rg)
    patched, calls = _counting(name)
    try:
        out = _flat(sample.call(rg, *tensors))
    finally:
        if patched:
            patched[0].forward = patched[1]
    if patched:
        assert calls[0], f"sample {i} of {name!r} does not call the op"
    if sample.ref is not None:
        ref = sample.ref(*[_fresh(np.asarray(getattr(x, "array", x))) for x in sample.inputs])
        ref = _flat(ref)
        assert len(ref) == len(out)
        for o, r in zip(out, ref, strict=True):
            r = np.asarray(r)
            assert tuple(o.shape) == r.shape
            rtol = {"float16": 1e-3, "float32": 1e-6}.get(o.dtype.name, 1e-7)
            np.testing.assert_allclose(_array(o), r, rtol=rtol, atol=1e-12)
    if not sample.torch:
        return
    torch = pytest.importorskip("torch")
    expected = _flat(_call(sample, torch, _inputs(sample, torch)))
    assert len(out) == len(expected)
    for k, (o, e) in enumerate(zip(out, expected, strict=True)):
        assert tuple(o.shape) == tuple(e.shape), f"output {k}: shape"
        assert o.dtype.name == str(e.dtype).replace("torch.", ""), f"output {k}: dtype {o.dtype} vs {e.dtype}"
        assert o.requires_grad == e.requires_grad, f"output {k}: requires_grad {o.requires_grad}"
        rtol = {"float16": 1e-3, "float32": 1e-6}.get(o.dtype.name, 1e-7)
        np.testing.assert_allclose(_array(o), _array(e), rtol=rtol, atol=1e-12, equal_nan=True,
                                   err_msg=f"output {k}")


# -- gradients ------------------------------------------------------------------------------------------
def _differentiable_cases(need_gradcheck):
    for p in CASES:
        name, i = p.values
        s = _sample(name, i)
        differentiable = name not in REGISTRY or REGISTRY[name].differentiable
        has_float = any(not isinstance(x, _samples.Const) and np.asarray(x).dtype.kind == "f" for x in s.inputs)
        if differentiable and has_float and (s.grad if need_gradcheck else s.torch):
            yield p


GRAD_CASES = list(_differentiable_cases(True))
TORCH_GRAD_CASES = list(_differentiable_cases(False))  # kinks too: the gradient PyTorch picks there


@pytest.mark.parametrize("name,i", _mark("test_gradcheck", GRAD_CASES))
def test_gradcheck(name, i):
    sample = _sample(name, i)
    tensors = _inputs(sample, rg)

    def fn(*ts):
        return tuple(t for t in _flat(sample.call(rg, *ts)) if t.is_floating_point())
    assert gradcheck(fn, tuple(tensors), eps=sample.eps, atol=sample.atol)
    if sample.gradgrad:
        assert gradgradcheck(fn, tuple(tensors), eps=sample.eps, atol=sample.atol)


@pytest.mark.parametrize("name,i", _mark("test_grads_match_torch", TORCH_GRAD_CASES))
def test_grads_match_torch(name, i):
    """First derivatives, and second derivatives along a random direction, equal PyTorch's."""
    torch = pytest.importorskip("torch")
    sample = _sample(name, i)
    results = []
    seed_rng = np.random.default_rng(7)
    seeds = None
    for lib in (rg, torch):
        tensors = _inputs(sample, lib)
        xs = _diff_inputs(tensors)
        outs = [o for o in _flat(_call(sample, lib, tensors)) if o.requires_grad]
        if seeds is None:
            seeds = [seed_rng.standard_normal(tuple(o.shape)) for o in outs]
            dirs = [seed_rng.standard_normal(tuple(x.shape)) for x in xs]
        gos = [lib.from_numpy(s.copy()).requires_grad_(True) for s in seeds]
        if not outs:
            results.append(([], []))
            continue
        grads = lib.autograd.grad(outs, xs, gos, create_graph=sample.gradgrad, allow_unused=True)
        first = [np.zeros(tuple(x.shape)) if g is None else _array(g) for g, x in zip(grads, xs, strict=True)]
        second = []
        if sample.gradgrad:
            terms = [(g * lib.from_numpy(d.copy())).sum() for g, d in zip(grads, dirs, strict=True)
                     if g is not None and g.requires_grad]
            if terms:
                total = terms[0]
                for t in terms[1:]:
                    total = total + t
                gg = lib.autograd.grad([total], xs + gos, allow_unused=True)
                second = [np.zeros(tuple(v.shape)) if g is None else _array(g)
                          for g, v in zip(gg, xs + gos, strict=True)]
        results.append((first, second))
    (ours, ours2), (theirs, theirs2) = results
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, err_msg=f"grad of input {k}")
    if ours2 or theirs2:
        assert len(ours2) == len(theirs2) or not (ours2 and theirs2)
        ours2 = ours2 or [np.zeros_like(b) for b in theirs2]
        theirs2 = theirs2 or [np.zeros_like(a) for a in ours2]
        for k, (a, b) in enumerate(zip(ours2, theirs2, strict=True)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, err_msg=f"second derivative, input {k}")


# -- forward-mode AD -------------------------------------------------------------------------------------
# Ops with backward formulas but no forward derivative yet (Note [Forward derivatives]): each is a
# strict xfail, so declaring one must also shrink this list. Composite functions reaching one count too.
MISSING_JVP = sorted(name for name, op in REGISTRY.items() if op.differentiable and op.jvp is None)
MISSING_JVP_COMPOSITES: dict = {}


def _jvp_cases():
    """One sample per op: its first with gradient checks and a floating input."""
    for name in sorted(SAMPLES):
        for i, s in enumerate(SAMPLES[name]):
            if (name not in REGISTRY or REGISTRY[name].differentiable) and s.grad and any(
                    not isinstance(x, _samples.Const) and np.asarray(x).dtype.kind == "f" for x in s.inputs):
                missing = name if name in MISSING_JVP else MISSING_JVP_COMPOSITES.get(name)
                marks = () if missing is None else pytest.mark.xfail(
                    strict=True, raises=NotImplementedError, reason=f"no forward derivative for {missing}")
                yield pytest.param(name, i, id=f"{name}-{i}", marks=marks)
                break


def _tangents(sample, tensors):
    rng = np.random.default_rng(zlib.crc32(repr(sample).encode()))
    return [rng.standard_normal(tuple(t.shape)) if not isinstance(x, _samples.Const) and t.dtype.is_floating_point
            else None for x, t in zip(sample.inputs, tensors, strict=True)]


def _forward_ad(lib, sample, call):
    """The float outputs and their tangents (zeros where none) under ``lib``'s forward AD."""
    tensors = _inputs(sample, lib)  # requiring grad: the samples of backward ops differentiate their inputs
    tangents = _tangents(sample, tensors)
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [t if v is None else fw.make_dual(t, lib.from_numpy(v.copy())) for t, v in zip(tensors, tangents,
                                                                                             strict=True)]
        outs = [o for o in _flat(call(lib, *duals)) if o.is_floating_point()]
        got = []
        for o in outs:
            t = fw.unpack_dual(o).tangent
            got.append(np.zeros(tuple(o.shape)) if t is None else _array(t))
    return tensors, tangents, got


def _check_jvp(sample):
    """The sample's tangents match central differences, and PyTorch's forward AD where it has one."""
    tensors, tangents, got = _forward_ad(rg, sample, sample.call)
    eps = sample.eps

    def moved(sign):
        ts = [t if v is None else rg.from_numpy(np.asarray(_array(t) + sign * eps * v)).requires_grad_(True)
              for t, v in zip(tensors, tangents, strict=True)]
        return [_array(o) for o in _flat(sample.call(rg, *ts)) if o.is_floating_point()]
    for k, (g, hi, lo) in enumerate(zip(got, moved(1), moved(-1), strict=True)):
        np.testing.assert_allclose(g, (hi - lo) / (2 * eps), rtol=1e-3, atol=sample.atol, err_msg=f"output {k}")
    if not sample.torch:
        return
    torch = pytest.importorskip("torch")
    try:
        _, _, expected = _forward_ad(torch, sample, sample.torch_call)
    except NotImplementedError:
        return  # PyTorch has no forward derivative for it
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9, err_msg=f"output {k} against torch")


@pytest.mark.parametrize("name,i", list(_jvp_cases()))
def test_jvp_matches_finite_differences_and_torch(name, i):
    _check_jvp(_sample(name, i))


# Ops whose forward derivative branches on its arguments (modes, shapes, packed rows): every sample with gradient
# checks, not only the first.
JVP_EVERY_SAMPLE = ("linalg_qr", "linalg_svd", "linalg_lstsq", "embedding_bag", "ctc_loss", "rnn_layer", "put",
                    "take")


def _other_jvp_cases():
    """The samples of JVP_EVERY_SAMPLE with gradient checks that test_jvp_matches_finite_differences_and_torch
    leaves out."""
    swept = {tuple(p.values) for p in _jvp_cases()}
    return [pytest.param(name, i, id=f"{name}-{i}") for name in JVP_EVERY_SAMPLE
            for i, s in enumerate(SAMPLES[name]) if s.grad and (name, i) not in swept]


@pytest.mark.parametrize("name,i", _other_jvp_cases())
def test_jvp_of_every_sample_matches_finite_differences_and_torch(name, i):
    _check_jvp(_sample(name, i))


# -- bfloat16 ------------------------------------------------------------------------------------------------------
# Each op's first sample in bfloat16, in retrograd and in PyTorch's CPU: the outputs' dtypes, shapes and values, and
# the gradients' dtypes and values, within bfloat16's rounding (a few units of 2**-8 of the output's scale: most are
# equal to the bit, as both compute in float32 and round once; see Note [bfloat16 arrays] in retrograd/_dtype.py).
# Where PyTorch refuses bfloat16 (retrograd/ops/bfloat16.py), the same error. Samples without PyTorch's
# comparison (the random ops) run in retrograd alone: bfloat16 results and gradients.
BFLOAT16_REFERENCE_IN_FLOAT32 = {
    "linalg_matrix_exp": "PyTorch's bfloat16 kernel overflows to inf on this sample; ours is the float32 result "
                         "rounded, compared with PyTorch's in float32, rounded",
    "matrix_exp": "torch.matrix_exp is linalg_matrix_exp: the same",
}
BFLOAT16_CASES = [pytest.param(name, id=name) for name in sorted(SAMPLES)]


def _bf16_inputs(sample, lib, dtype):
    """The sample's inputs as tensors of ``lib``, the floating ones cast to ``dtype`` (requiring grad unless Const)."""
    out = []
    for inp in sample.inputs:
        if isinstance(inp, _samples.Const):
            out.append(lib.from_numpy(_fresh(inp.array)).to(dtype))
            continue
        t = lib.from_numpy(_fresh(np.asarray(inp)))
        if inp.dtype.kind == "f":
            t = t.to(dtype).requires_grad_(True)
        out.append(t)
    return out


def _bf16_run(sample, lib, dtype):
    """(outputs as (shape, dtype name, requires_grad, float64 values), gradients as (dtype name, float64 values))
    of the sample in ``dtype``, or the exception it raised."""
    def values(t):
        t = t.detach()
        return _array(t.to(lib.float64)) if t.dtype.is_floating_point else _array(t)
    try:
        tensors = _bf16_inputs(sample, lib, dtype)
        outs = _flat(_call(sample, lib, tensors))
        found = [(tuple(o.shape), str(o.dtype).split(".")[-1], o.requires_grad, values(o)) for o in outs]
        xs, diff = _diff_inputs(tensors), [o for o in outs if o.requires_grad]
        rng = np.random.default_rng(3)
        seeds = [lib.from_numpy(rng.standard_normal(tuple(o.shape))).to(o.dtype) for o in diff]
        grads = lib.autograd.grad(diff, xs, seeds, allow_unused=True) if diff and xs else []
        return found, [None if g is None else (str(g.dtype).split(".")[-1], values(g)) for g in grads]
    except Exception as exc:  # noqa: BLE001 - compared with the other library's
        return exc


def _close(ours, theirs, share, what):
    scale = max(1.0, float(np.max(np.abs(theirs[np.isfinite(theirs)]), initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=share * scale, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", BFLOAT16_CASES)
def test_first_sample_in_bfloat16_matches_torch(name):
    sample = SAMPLES[name][0]
    ours = _bf16_run(sample, rg, rg.bfloat16)
    if not sample.torch:
        if isinstance(ours, Exception):  # a refusal of PyTorch's (ctc_loss_backward runs ctc_loss)
            assert "not implemented for 'BFloat16'" in str(ours), ours
            return
        assert all(d == "bfloat16" for _, d, _, v in ours[0] if v.dtype.kind == "f")
        assert all(g is None or g[0] == "bfloat16" for g in ours[1])
        return
    torch = pytest.importorskip("torch")
    in_float32 = name in BFLOAT16_REFERENCE_IN_FLOAT32
    theirs = _bf16_run(sample, torch, torch.float32 if in_float32 else torch.bfloat16)
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(ours) is type(theirs) and str(ours).split("\n")[0] == str(theirs).split("\n")[0], (ours, theirs)
        return
    if in_float32:  # PyTorch's float32 values rounded to bfloat16, of bfloat16 dtypes
        bf16 = rg.bfloat16.np
        theirs = ([(s, "bfloat16" if d == "float32" else d, r, v.astype(bf16).astype(np.float64) if d == "float32"
                    else v) for s, d, r, v in theirs[0]], [])
        ours = (ours[0], [])
    assert len(ours[0]) == len(theirs[0])
    for k, (a, b) in enumerate(zip(ours[0], theirs[0], strict=True)):
        assert a[:3] == b[:3], f"output {k}: shape, dtype, requires_grad"
        _close(a[3], b[3], 2 ** -6, f"output {k}")
    for k, (a, b) in enumerate(zip(ours[1], theirs[1], strict=True)):
        if a is None or b is None:  # an unused input: zeros in the other (PyTorch's zeros of a double backward)
            c = b if a is None else a
            assert not np.any(c[1]), f"gradient {k}"
            continue
        assert a[0] == b[0], f"gradient {k}: dtype"
        _close(a[1], b[1], 2 ** -5, f"gradient {k}")
