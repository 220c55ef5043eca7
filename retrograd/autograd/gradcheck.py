"""gradcheck and gradgradcheck: compare autograd's gradients with finite differences, as PyTorch's do.

``gradcheck(func, inputs)`` takes, for every input that requires grad and every output that
does, the Jacobian twice: numerically, by central differences on the input's array, and
analytically, one vector-Jacobian product per output element through ``autograd.grad``. The
analytical one is computed twice, to catch a backward that is not deterministic
(``nondet_tol``). ``fast_mode`` compares instead one random projection ``v^T J u`` of each
Jacobian (PyTorch's fast gradcheck): one backward per output and two evaluations per input,
instead of one backward per output element and two evaluations per input element. Then come the
checks that need no finite differences: batched gradients (``check_batched_grad``), a zero
gradient for a zero grad_output, and undefined (None) output gradients (``check_undefined_grad``);
with ``check_forward_ad``, forward mode's Jacobians against central differences too, a tangent
of zeros against no tangent (``check_undefined_grad``), and (``check_batched_forward_grad``)
forward mode vmapped over two stacked tangents of an input.

The checks and their order are PyTorch's (``torch/autograd/gradcheck.py``), and so are the first
sentences of its messages.
"""
from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from .. import _dtype
from .._creation import rand, tensor, zeros_like
from .._tensor import Tensor
from ._api import grad as autograd_grad
from .function import Function

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian", "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


_NONDET_HINT = ("\n\nA backward that uses non-deterministic algorithms (atomic adds, for example) can fail this "
                "check; pass nondet_tol=<tolerance> to gradcheck or gradgradcheck to accept differences up to it.")
_FAST_MODE_HINT = ("\nThe numbers above are the projections v^T J u of both Jacobians on random vectors (fast "
                   "mode). The full Jacobians, computed one element at a time (slow mode), are:\n\n")
_SLOW_WOULD_PASS = ("\nElement by element the two Jacobians agree within the tolerances, so the check passes with "
                    "fast_mode=False; the projection adds up small differences.")
_BATCHED_HINT = ("gradcheck or gradgradcheck failed while testing batched gradients (check_batched_grad=True): "
                 "autograd.grad(..., is_grads_batched=True) on two stacked grad_outputs did not give the gradients "
                 "of each of them. Pass check_batched_grad=False to skip this check.")
_BATCHED_FORWARD_HINT = ("gradcheck failed while testing batched gradient computation with forward-mode AD "
                         "(check_batched_forward_grad=True): forward mode vmapped over two stacked tangents of an "
                         "input did not give the tangents of each of them. Pass check_batched_forward_grad=False to "
                         "skip this check.")
_UNDEFINED_HINT = ("A backward is called with None for an output whose gradient is undefined (with "
                   "materialize_grads off), and must then treat it as zeros.")


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_tensor(t) -> bool:
    return isinstance(t, Tensor) and t._data.dtype.kind in "fV"  # bfloat16: "V" (Note [bfloat16 arrays])


def _differentiable_outputs(outputs):
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad)


def _differentiable_inputs(inputs):
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def _host64(t) -> np.ndarray:
    """A float64 copy of ``t``'s values on the host, flattened."""
    return t._host().astype(np.float64).reshape(-1)


def _as_tensor(array, like):
    """``array`` (host) as a tensor of ``like``'s dtype, device and shape."""
    return tensor(np.asarray(array).reshape(like._data.shape), dtype=like.dtype, device=like.device)


def _check_inputs(inputs) -> None:
    """PyTorch's checks of gradcheck's inputs: one requires grad, none overlaps itself, float64 advised."""
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp._data.dtype != np.float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=4)
        arr = inp._data  # an MKL-DNN input has no strides to check (Note [The MKL-DNN layout] in ops/mkldnn.py)
        if not inp.is_mkldnn and arr.size and any(st == 0 and sz > 1 for st, sz in zip(arr.strides, arr.shape,
                                                                                        strict=True)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _check_outputs(outputs) -> None:
    """PyTorch's refusal of outputs gradcheck cannot compare: MKL-DNN ones (raised even without raise_exception)."""
    if any(o.is_mkldnn for o in outputs):
        raise ValueError("MKLDNN output is not supported at gradcheck yet. Please call to_dense(masked_grad=...) on "
                         "the output of fn for gradcheck.")


# -- numerical: central differences on the inputs' arrays ---------------------------------------------
def _perturbed(inputs, inp):
    """The array to perturb for the input ``inp``, and a function giving the inputs to evaluate ``fn`` at.

    A strided input's own array is perturbed (in place, restored after). An MKL-DNN input, as in
    PyTorch, is perturbed as a dense copy, converted back to MKL-DNN for each evaluation."""
    if not inp.is_mkldnn:
        return inp._data, lambda: inputs
    dense = inp._data.copy()
    k = next(i for i, a in enumerate(inputs) if a is inp)
    return dense, lambda: (*inputs[:k], Tensor._make(dense, inp.device).to_mkldnn(), *inputs[k + 1:])


def _evaluate(fn, inputs):
    """``fn(*inputs)``'s floating-point outputs: (shape, dtype, float64 copy of the values)."""
    return [(o.shape, o.dtype, _host64(o)) for o in _as_tuple(fn(*inputs)) if _is_float_tensor(o)]


def _difference(lo, hi, eps, where):
    """Per output, ``(hi - lo) / (2 eps)``, after checking that the perturbed outputs have one shape and dtype."""
    columns = []
    for (shape_lo, dtype_lo, a), (shape_hi, dtype_hi, b) in zip(lo, hi, strict=True):
        if shape_lo != shape_hi:
            raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed "
                                 f"{where}by {eps}, but got: shapes {shape_lo} and {shape_hi}.")
        if dtype_lo != dtype_hi:
            raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
                                 f"{where}by {eps}, but got: dtypes {dtype_lo} and {dtype_hi}.")
        columns.append((b - a) / (2 * eps))
    return columns


def _numerical_jacobian(fn, inputs, inp, float_outputs, eps):
    """Per float output, the (numel(inp) x numel(output)) Jacobian by central differences, one element at a time.

    The input's array is changed in place and restored, without a version bump (as PyTorch
    perturbs ``input.data``)."""
    data, at = _perturbed(inputs, inp)
    rows = []
    for idx in np.ndindex(*data.shape):
        orig = data[idx].item()
        try:
            data[idx] = orig - eps
            lo = _evaluate(fn, at())
            data[idx] = orig + eps
            hi = _evaluate(fn, at())
        finally:
            data[idx] = orig
        rows.append(_difference(lo, hi, eps, f"on index {idx} "))
    return [np.array([r[j] for r in rows]).reshape(data.size, o.numel()) for j, o in enumerate(float_outputs)]


def _numerical_jvp(fn, inputs, inp, u, eps):
    """Per float output, ``J u`` by central differences along the unit vector ``u`` (fast mode)."""
    data, at = _perturbed(inputs, inp)
    orig = data.copy()
    delta = inp._device.backend.xp.asarray((u * eps).reshape(data.shape), dtype=data.dtype)
    try:
        data[...] = orig - delta
        lo = _evaluate(fn, at())
        data[...] = orig + delta
        hi = _evaluate(fn, at())
    finally:
        data[...] = orig
    return _difference(lo, hi, eps, "")


# -- analytical: vector-Jacobian products through autograd.grad -----------------------------------------
def _vjps(output, diff_inputs, seeds):
    """``seed^T J`` for each seed (host arrays of the output's size): per input, a list of float64 rows or None."""
    rows = [[] for _ in diff_inputs]
    sizes_ok = dtypes_ok = True
    for seed in seeds:
        grads = autograd_grad(output, diff_inputs, _as_tensor(seed, output), retain_graph=True, allow_unused=True)
        for row, g, inp in zip(rows, grads, diff_inputs, strict=True):
            if g is None:
                row.append(None)
                continue
            if g.shape != inp.shape:
                sizes_ok = False
            elif g.dtype != inp.dtype:
                dtypes_ok = False
            row.append(_host64(g))
    return rows, sizes_ok, dtypes_ok


def _stack_rows(rows, inp):
    """The (numel(inp) x len(rows)) matrix whose columns are ``rows`` (None: zeros)."""
    out = np.zeros((inp.numel(), len(rows)))
    for j, r in enumerate(rows):
        if r is not None:
            out[:, j] = r
    return out


def _analytical_jacobian(output, diff_inputs, seeds, nondet_tol, check_grad_dtypes):
    """Per input, the (numel(input) x len(seeds)) matrix of vector-Jacobian products, computed twice.

    Raises GradcheckError where a gradient has the wrong dtype (``check_grad_dtypes``) or size, or
    where the two computations differ by more than ``nondet_tol``."""
    rows1, sizes_ok, dtypes_ok = _vjps(output, diff_inputs, seeds)
    rows2, _, _ = _vjps(output, diff_inputs, seeds)
    if not dtypes_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    first = [_stack_rows(r, inp) for r, inp in zip(rows1, diff_inputs, strict=True)]
    second = [_stack_rows(r, inp) for r, inp in zip(rows2, diff_inputs, strict=True)]
    for a, b in zip(first, second, strict=True):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient. The tolerance for nondeterminism was {nondet_tol}."
                                 + _NONDET_HINT)
    return first


def _unit_seeds(output):
    n = output.numel()
    for k in range(n):
        seed = np.zeros(n)
        seed[k] = 1
        yield seed


def _mismatch(output_idx, input_idx, numerical, analytical, forward=False) -> str:
    kind = "Jacobian computed with forward mode mismatch" if forward else "Jacobian mismatch"
    return (f"{kind} for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


# -- forward mode: Jacobian-vector products through autograd.forward_ad -------------------------------------
ForwardMode = namedtuple("ForwardMode", ["dual_level", "make_dual", "unpack_dual"])
ForwardMode.__doc__ = "What gradcheck uses of autograd.forward_ad, which runs on the ops above this module."
_forward_mode = []  # the ForwardMode, once autograd.forward_ad is imported


def use_forward_mode(mode) -> None:
    """Gives gradcheck forward-mode AD (``autograd.forward_ad`` calls it when it is imported)."""
    _forward_mode[:] = [mode]


def _tangents_of_outputs(func, inputs, position, tangents):
    """For each tangent of ``inputs[position]``, the float outputs' tangents as float64 host arrays (zeros: none).

    As in PyTorch, every input that requires grad is passed detached, with a tangent of zeros but
    ``inputs[position]``."""
    forward_ad = _forward_mode[0]
    rows = []
    for t in tangents:
        with forward_ad.dual_level():
            args = [forward_ad.make_dual(a.detach(), t if k == position else zeros_like(a))
                    if isinstance(a, Tensor) and a.requires_grad else a for k, a in enumerate(inputs)]
            outs = [o for o in _as_tuple(func(*args)) if _is_float_tensor(o)]
            rows.append([np.zeros(o.numel()) if (tan := forward_ad.unpack_dual(o).tangent) is None else _host64(tan)
                         for o in outs])
    return rows


def _check_forward_ad(func, func_out, inputs, eps, rtol, atol, fast_mode):
    """Forward mode's Jacobians (``fast_mode``: J u on random unit vectors u) against central differences."""
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_tensor(o)]
    rng = np.random.default_rng(0)
    diff = [(k, a) for k, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad]
    if any(a.is_mkldnn for _, a in diff):
        raise ValueError("MKLDNN inputs are not support for forward AD gradcheck.")
    for j, (position, inp) in enumerate(diff):
        if fast_mode:
            u = _random_unit(rng, inp.numel())
            numerical = _numerical_jvp(func, inputs, inp, u, eps)
            analytical = _tangents_of_outputs(func, inputs, position, [tensor(u.reshape(tuple(inp.shape)),
                                                                              dtype=inp.dtype)])[0]
            for i, (n, a) in enumerate(zip(numerical, analytical, strict=True)):
                if not np.allclose(a, n.reshape(-1), rtol=rtol, atol=atol):
                    raise GradcheckError(_mismatch(i, j, tensor(n.reshape(-1)), tensor(a), forward=True))
            continue
        numerical = _numerical_jacobian(func, inputs, inp, float_outputs, eps)
        basis = np.eye(inp.numel())
        tangents = [tensor(basis[k].reshape(tuple(inp.shape)), dtype=inp.dtype) for k in range(inp.numel())]
        rows = _tangents_of_outputs(func, inputs, position, tangents)
        for i, out in enumerate(float_outputs):
            a = np.array([r[i] for r in rows]).reshape(inp.numel(), out.numel())
            if not np.allclose(a, numerical[i], rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch(i, j, tensor(numerical[i], dtype=out.dtype), tensor(a, dtype=inp.dtype),
                                               forward=True))


_vmap = []  # retrograd.func.vmap, once retrograd.func (above this module) is imported


def use_vmap(vmap) -> None:
    """Gives gradcheck ``vmap`` for ``check_batched_forward_grad`` (``retrograd.func`` calls it when it is imported)."""
    _vmap[:] = [vmap]


def _check_batched_forward_grad(func, inputs) -> None:
    """Forward mode vmapped over two stacked tangents of each input equals the two tangents one at a time."""
    forward_ad = _forward_mode[0]
    rng = np.random.default_rng(2)
    for position, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad and _is_float_tensor(inp)):
            continue

        def jvp(tangent, position=position):
            with forward_ad.dual_level():
                args = [forward_ad.make_dual(a.detach(), tangent) if k == position else
                        a.detach() if isinstance(a, Tensor) else a for k, a in enumerate(inputs)]
                tangents = []
                for out in _as_tuple(func(*args)):
                    if out is None:
                        continue
                    primal, t = forward_ad.unpack_dual(out)
                    tangents.append(zeros_like(primal) if t is None else t)
                return tuple(tangents)
        seeds = rng.standard_normal((2,) + tuple(inp.shape))
        expected = [np.stack(shards) for shards in zip(*[[_host64(t).reshape(tuple(t.shape)) for t in jvp(
            tensor(seed, dtype=inp.dtype, device=inp.device))] for seed in seeds], strict=True)]
        try:
            result = _vmap[0](jvp)(tensor(seeds, dtype=inp.dtype, device=inp.device))
        except RuntimeError as ex:
            raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{_BATCHED_FORWARD_HINT}") from ex
        for output_idx, (res, exp) in enumerate(zip(result, expected, strict=True)):
            got = _host64(res).reshape(tuple(res.shape))
            if not np.allclose(got, exp):  # PyTorch's message names the output's index twice
                raise GradcheckError(f"For output {output_idx} and input {output_idx}:\n\n{_BATCHED_FORWARD_HINT}\n\n"
                                     f"Got:\n{tensor(got)}\n\nExpected:\n{tensor(exp)}")


def _check_undefined_forward_mode(func, inputs) -> None:
    """Each input with a tangent of zeros gives the outputs the tangents that the input without one gives."""
    forward_ad = _forward_mode[0]
    rng = np.random.default_rng(3)
    diff = [k for k, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad]
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(a.detach(), tensor(rng.standard_normal(tuple(a.shape)), dtype=a.dtype))
                 if k in diff else a for k, a in enumerate(inputs)]
        for k in diff:
            tangents = []
            for arg in (forward_ad.make_dual(inputs[k].detach(), zeros_like(inputs[k])), inputs[k].detach()):
                args = duals[:k] + [arg] + duals[k + 1:]
                tangents.append([forward_ad.unpack_dual(o).tangent for o in _as_tuple(func(*args))
                                 if _is_float_tensor(o)])
            for index, (zero, none) in enumerate(zip(*tangents)):
                if zero is not None and none is not None and not np.allclose(_host64(zero), _host64(none)):
                    raise GradcheckError("Mismatch in tangent values for output with index: ", index, " when input: ",
                                         inputs[k], " has an undefined tangent value. ", " Got: ", zero,
                                         " but expected: ", none)


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol):
    """Every Jacobian, element by element, against central differences."""
    diff_inputs = _differentiable_inputs(inputs)
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_tensor(o)]
    numerical = [_numerical_jacobian(func, inputs, inp, float_outputs, eps) for inp in diff_inputs]
    if not outputs:
        if any(np.any(j != 0) for per_input in numerical for j in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    differentiable = [k for k, o in enumerate(float_outputs) if o.requires_grad]
    for i, out in enumerate(outputs):
        analytical = _analytical_jacobian(out, diff_inputs, list(_unit_seeds(out)), nondet_tol, check_grad_dtypes)
        for j, (a, inp) in enumerate(zip(analytical, diff_inputs, strict=True)):
            n = numerical[j][differentiable[i]]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch(i, j, tensor(n, dtype=out.dtype), tensor(a, dtype=inp.dtype)))


def _random_unit(rng, n):
    """A vector of ``n`` numbers uniform in [0, 1), scaled to norm 1 (PyTorch's fast-mode vectors)."""
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm else v


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol):
    """``v^T J u`` for random unit vectors u (per input) and v (per output), numerically and analytically."""
    diff_inputs = _differentiable_inputs(inputs)
    rng = np.random.default_rng(0)  # its own generator: the user's random state is left alone
    us = [_random_unit(rng, inp.numel()) for inp in diff_inputs]
    vs = [_random_unit(rng, out.numel()) for out in outputs]
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_tensor(o)]
    jvps = [_numerical_jvp(func, inputs, inp, u, eps) for inp, u in zip(diff_inputs, us, strict=True)]
    if not outputs:
        for per_input in jvps:
            for jvp in per_input:
                if jvp.size and np.abs(jvp).max() > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    differentiable = [k for k, o in enumerate(float_outputs) if o.requires_grad]
    analytical = []  # [output][input]: (v^T J) u
    for out, v in zip(outputs, vs, strict=True):
        vj = _analytical_jacobian(out, diff_inputs, [v], nondet_tol, check_grad_dtypes)
        analytical.append([float(m[:, 0] @ u) for m, u in zip(vj, us, strict=True)])
    for i, u in enumerate(us):
        for j, v in enumerate(vs):
            n = float(v @ jvps[i][differentiable[j]])
            a = analytical[j][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol * u.sum() * v.sum()):
                raise GradcheckError(_mismatch(j, i, n, a) + _slow_mode_report(func, func_out, inputs, outputs, i, j,
                                                                               eps, rtol, atol))


def _slow_mode_report(func, func_out, inputs, outputs, input_idx, output_idx, eps, rtol, atol) -> str:
    """After a fast-mode mismatch: the full Jacobians of that input and output, and whether they agree."""
    inp = _differentiable_inputs(inputs)[input_idx]
    out = outputs[output_idx]
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_tensor(o)]
    k = [m for m, o in enumerate(float_outputs) if o.requires_grad][output_idx]
    numerical = _numerical_jacobian(func, inputs, inp, float_outputs, eps)[k]
    analytical = _stack_rows(_vjps(out, [inp], list(_unit_seeds(out)))[0][0], inp)
    max_diff = float(np.abs(numerical - analytical).max()) if numerical.size else 0.0
    report = (_FAST_MODE_HINT + f"Numerical:\n {tensor(numerical, dtype=out.dtype)}\n"
              f"Analytical:\n{tensor(analytical, dtype=inp.dtype)}\n\n"
              f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if np.allclose(analytical, numerical, rtol=rtol, atol=atol):
        report += _SLOW_WOULD_PASS
    return report


# -- the checks without finite differences -------------------------------------------------------------------
def _check_batched_grad(inputs, output, output_idx) -> None:
    """``autograd.grad(..., is_grads_batched=True)`` on two stacked grad_outputs equals two separate calls."""
    diff_inputs = _differentiable_inputs(inputs)
    rng = np.random.default_rng(1)
    seeds = [rng.standard_normal(output.numel()) for _ in range(2)]
    expected = []
    for seed in seeds:
        grads = autograd_grad(output, diff_inputs, _as_tensor(seed, output), retain_graph=True, allow_unused=True)
        expected.append([np.zeros(inp.numel()) if g is None else _host64(g)
                         for g, inp in zip(grads, diff_inputs, strict=True)])
    stacked = tensor(np.stack(seeds).reshape((2,) + tuple(output.shape)), dtype=output.dtype, device=output.device)
    try:
        result = autograd_grad(output, diff_inputs, stacked, retain_graph=True, allow_unused=True,
                               is_grads_batched=True)
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{_BATCHED_HINT}") from ex
    for input_idx, (res, inp) in enumerate(zip(result, diff_inputs, strict=True)):
        got = np.zeros((2, inp.numel())) if res is None else res._host().astype(np.float64).reshape(2, -1)
        exp = np.stack([e[input_idx] for e in expected])
        if not np.allclose(got, exp):
            shape = (2,) + tuple(inp.shape)
            raise GradcheckError(f"For output {output_idx} and input {input_idx}:\n\n{_BATCHED_HINT}\n\nGot:\n"
                                 f"{tensor(got.reshape(shape))}\n\nExpected:\n{tensor(exp.reshape(shape))}")


def _check_backward_mul_by_grad_output(outputs, inputs) -> None:
    """A zero grad_output gives zero gradients, of each input's dtype, device and size."""
    diff_inputs = _differentiable_inputs(inputs)
    if not outputs:
        return  # no gradient flows: every result would be None
    grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs, strict=True):
        if gi is None:
            continue
        if not (gi._host() == 0).all():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function):
    """The identity, whose backward sends an undefined (None) gradient on (PyTorch's ``UndefinedGrad``)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def _check_undefined_grad(func, inputs) -> None:
    """Backward works, and gives zero or undefined gradients, when the output gradients are undefined."""
    diff_inputs = _differentiable_inputs(inputs)

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by "
                      "default, but it may break existing callers of this function. If this is true for you, you can "
                      'call this function with "check_undefined_grad=False" to disable the feature', stacklevel=4)

    def check(outputs):
        try:
            grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. " + _UNDEFINED_HINT) \
                from e
        for gi in grads:
            if gi is not None and not (gi._host() == 0).all():
                warn_bc_breaking()
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     "undefined or zero. " + _UNDEFINED_HINT)

    first = [_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))]
    to_check = [first]
    if len(first) > 1:  # each output's gradient undefined on its own, too
        for k in range(len(first)):
            fresh = _differentiable_outputs(func(*inputs))
            to_check.append([_UndefinedGrad.apply(o) if i == k else o for i, o in enumerate(fresh)])
    for outputs in to_check:
        if outputs:
            check(outputs)


# -- the public functions ---------------------------------------------------------------------------------------
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Checks the gradients autograd computes for ``func`` at ``inputs`` against finite differences.

    Use float64 inputs with ``requires_grad=True``; the other inputs are held fixed. Inputs are
    perturbed in place, so none may overlap itself in memory (an ``expand``-ed tensor).

    Args:
        func: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of arguments.
        eps: the finite-difference step.
        atol, rtol: the tolerances of the comparison (as ``allclose``).
        raise_exception: raise ``GradcheckError`` (a RuntimeError) on failure; if False, return False.
        nondet_tol: how much two backward passes on the same inputs and grad_outputs may differ.
        check_undefined_grad: check that backward accepts undefined (None) output gradients and, with
            ``check_forward_ad``, that forward mode gives an input whose tangent is zeros the same
            tangents as the input without one.
        check_grad_dtypes: check that each gradient has its input's dtype.
        check_batched_grad: check ``autograd.grad(..., is_grads_batched=True)`` against separate calls.
        check_forward_ad: check the Jacobians of forward-mode AD (``autograd.forward_ad``) too.
        check_batched_forward_grad: check forward mode vmapped over stacked tangents (``retrograd.func.vmap``)
            against one tangent at a time.
        check_backward_ad: run the checks of backward mode.
        fast_mode: compare one random projection ``v^T J u`` of each Jacobian instead of every element.
        masked: for sparse inputs in PyTorch; ignored.

    Returns:
        True if every check passes (False on failure with ``raise_exception=False``).

    Raises:
        GradcheckError: a check failed. ValueError: no input requires grad.

    Example::
        >>> import retrograd as rg
        >>> x = rg.randn(3, dtype=rg.float64, requires_grad=True)
        >>> rg.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                   check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode) -> None:
    """gradcheck's checks, in PyTorch's order; raises GradcheckError on the first failure."""
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    if check_backward_ad:
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if check_forward_ad:
        _check_forward_ad(func, func_out, inputs, eps, rtol, atol, fast_mode)
        if check_undefined_grad:
            _check_undefined_forward_mode(func, inputs)
    if check_batched_forward_grad:
        _check_batched_forward_grad(func, inputs)
    if not check_backward_ad:
        return
    if check_batched_grad:
        for i, out in enumerate(outputs):
            _check_batched_grad(inputs, out, i)
    _check_backward_mul_by_grad_output(outputs, inputs)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs)


def _random_grad_output(out, noncontiguous):
    """A grad_output for ``out``: uniform in [-1, 1), of its dtype (float64 for others), requiring grad."""
    dtype = out.dtype if out.is_floating_point() else _dtype.float64
    shape = tuple(out.shape)
    xp = out.device.backend.xp
    values = xp.asarray(rand(*shape, dtype=dtype, device=out.device)._data * 2 - 1)
    if noncontiguous and values.size > 1:  # the same values, every other element of a buffer twice as large
        buffer = xp.empty(shape + (2,), dtype=values.dtype)
        buffer[..., 0] = values
        values = buffer[..., 0]
    return Tensor._make(values, out.device, requires_grad=True)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Checks second derivatives: gradcheck of the vector-Jacobian product of ``func``.

    The function checked maps ``inputs`` and ``grad_outputs`` to the gradients of ``func``'s
    outputs with respect to its inputs, recorded with ``create_graph=True``; ``grad_outputs``
    (random in [-1, 1) by default, non-contiguous with ``gen_non_contig_grad_outputs``) take
    part in the check, as in PyTorch. The other arguments are gradcheck's.

    Returns:
        True if every check passes (False on failure with ``raise_exception=False``).

    Example::
        >>> import retrograd as rg
        >>> x = rg.randn(3, dtype=rg.float64, requires_grad=True)
        >>> rg.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))
        True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_input_idx = {i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad}

    def new_func(*args):
        ins = args[:len(args) - num_outputs]
        gos = args[len(args) - num_outputs:]
        outputs = _differentiable_outputs(func(*ins))
        diff_ins = tuple(t for i, t in enumerate(ins) if i in diff_input_idx)
        grads = autograd_grad(outputs, diff_ins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)


# -- PyTorch's deprecated Jacobian functions ------------------------------------------------------------------
def _warn_deprecated(name):
    warnings.warn(f"`{name}` was part of PyTorch's private API and not meant to be exposed. It is deprecated and will "
                  "be removed; gradcheck and autograd.functional.jacobian do what it did.", FutureWarning, stacklevel=3)


def _check_grad_out(grad_out, name):
    if grad_out != 1.0:
        raise ValueError(f"Expected grad_out to be 1.0. {name} no longer supports values of grad_out != 1.0.")


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated: per tensor of ``target`` (default: ``inputs``) that requires grad, the Jacobian of
    ``fn(inputs)``'s first output by central differences, of shape (numel(tensor), numel(output)).

    ``fn`` takes the tuple ``inputs`` as its one argument."""
    _warn_deprecated("get_numerical_jacobian")
    _check_grad_out(grad_out, "get_numerical_jacobian")
    inputs = _as_tuple(inputs)
    targets = inputs if target is None else _as_tuple(target)
    call = lambda *args: fn(args)  # noqa: E731
    first = [o for o in _as_tuple(call(*inputs)) if _is_float_tensor(o)][:1]
    return tuple(tensor(_numerical_jacobian(call, inputs, t, first, eps)[0], dtype=t.dtype)
                 for t in _differentiable_inputs(targets))


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated: ``(jacobians, reentrant, correct_grad_sizes, correct_grad_types)``: per input that
    requires grad, the Jacobian of ``output`` by backward passes, of shape (numel(input), numel(output));
    whether a second computation agrees within ``nondet_tol``; whether every gradient had its input's
    size, and dtype."""
    _warn_deprecated("get_analytical_jacobian")
    _check_grad_out(grad_out, "get_analytical_jacobian")
    diff_inputs = _differentiable_inputs(_as_tuple(inputs))
    first, sizes_ok, dtypes_ok = _vjps(output, diff_inputs, _unit_seeds(output))
    second, _, _ = _vjps(output, diff_inputs, _unit_seeds(output))
    jacobians = [(_stack_rows(a, inp), _stack_rows(b, inp)) for a, b, inp in zip(first, second, diff_inputs,
                                                                                  strict=True)]
    reentrant = all(not a.size or np.abs(a - b).max() <= nondet_tol for a, b in jacobians)
    return (tuple(tensor(a, dtype=inp.dtype) for (a, _), inp in zip(jacobians, diff_inputs, strict=True)),
            reentrant, sizes_ok, dtypes_ok)
