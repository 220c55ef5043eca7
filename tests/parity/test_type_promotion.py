"""PyTorch's type promotion for the binary ops: tensors of each dtype (n-d and 0-d) and Python scalars.

The result dtype must equal ``torch.result_type`` (bool for comparisons) and PyTorch's own result,
values included; where PyTorch rejects a combination, so must we.
"""
import itertools

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]


def _operands():
    """(label, retrograd operand, torch operand) for every tensor kind and Python scalar."""
    out = []
    base = np.array([1, 2, 3])
    for name in DTYPES:
        arr = base.astype(name) if name != "bool" else np.array([True, False, True])
        out.append((f"{name}[3]", rg.tensor(arr), torch.tensor(arr)))
        zero = arr[1].copy().reshape(())
        out.append((f"{name}[]", rg.tensor(zero), torch.tensor(zero)))
    out += [("True", True, True), ("2", 2, 2), ("2.5", 2.5, 2.5)]
    return out


OPERANDS = _operands()
PAIRS = [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS)
         if not (isinstance(a[1], (bool, int, float)) and isinstance(b[1], (bool, int, float)))]
BINARY = {
    "add": lambda m, a, b: m.add(a, b),
    "sub": lambda m, a, b: m.sub(a, b),
    "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: m.div(a, b),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "pow": lambda m, a, b: m.pow(a, b),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "where": lambda m, a, b: m.where(m.tensor([True, False, True]), a, b),
    "eq": lambda m, a, b: m.eq(a, b),
    "lt": lambda m, a, b: m.lt(a, b),
    "bitwise_and": lambda m, a, b: m.bitwise_and(a, b),
    "operators": lambda m, a, b: (a * b + a) - b if not isinstance(a, (bool, int, float)) else a * b,
}


def _torch_only(a, b):
    return not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_result_dtype_matches_torch(op):
    fn = BINARY[op]
    mismatches = []
    raised = []  # combinations PyTorch rejects with a RuntimeError
    for (la, ra, ta), (lb, rb, tb) in PAIRS:
        if op in ("maximum", "minimum") and not (isinstance(ta, torch.Tensor) and isinstance(tb, torch.Tensor)):
            continue  # PyTorch's signature takes tensors only
        try:
            expected = fn(torch, ta, tb)
        except (RuntimeError, TypeError, NotImplementedError) as exc:
            if isinstance(exc, RuntimeError) and not isinstance(exc, NotImplementedError):
                raised.append((la, lb, ra, rb, str(exc).split(".")[0]))
            continue
        with np.errstate(all="ignore"):
            got = fn(rg, ra, rb)
        want = str(expected.dtype).replace("torch.", "")
        if got.dtype.name != want:
            mismatches.append(f"{op}({la}, {lb}): {got.dtype.name} != {want}")
            continue
        if op not in ("eq", "lt", "where"):
            assert want == str(torch.result_type(ta, tb)).replace("torch.", "") or op.startswith("div") \
                or op in ("operators",)
        np.testing.assert_allclose(got.numpy().astype(np.float64), expected.numpy().astype(np.float64),
                                   rtol=1e-3, equal_nan=True, err_msg=f"{op}({la}, {lb})")
    for la, lb, ra, rb, message in raised:
        try:
            fn(rg, ra, rb)
        except RuntimeError:
            continue
        mismatches.append(f"{op}({la}, {lb}) should raise RuntimeError: {message}")
    assert not mismatches, "\n".join(mismatches)


def test_result_type_of_zero_dim_and_scalars():
    """The categories: dimensioned tensors win within a category, 0-d tensors over scalars."""
    cases = [
        (rg.tensor([1], dtype=rg.int32), rg.tensor(1, dtype=rg.int64), rg.int32),
        (rg.tensor([1], dtype=rg.int32), rg.tensor(1.0, dtype=rg.float64), rg.float64),
        (rg.tensor([1.0], dtype=rg.float16), rg.tensor(1.0, dtype=rg.float64), rg.float16),
        (rg.tensor([1], dtype=rg.uint8), 100, rg.uint8),
        (rg.tensor([True]), 2, rg.int64),
        (rg.tensor([True]), 2.5, rg.float32),
        (rg.tensor(1, dtype=rg.int32), 2.5, rg.float32),
        (rg.tensor([1], dtype=rg.int64), rg.tensor(1.0, dtype=rg.float16), rg.float16),
    ]
    for a, b, want in cases:
        assert rg.add(a, b).dtype is want, (a, b)
        ta = torch.from_numpy(a.numpy()) if isinstance(a, rg.Tensor) else a
        tb = torch.from_numpy(np.asarray(b.numpy())) if isinstance(b, rg.Tensor) else b
        assert str(torch.result_type(ta, tb)) == f"torch.{want.name}"


def test_default_dtype_governs_int_true_division():
    rg.set_default_dtype(rg.float64)
    assert rg.div(rg.tensor([1, 2]), 2).dtype is rg.float64
    assert (rg.tensor([1, 2]) * 0.5).dtype is rg.float64


def test_python_int_beyond_the_dtype_wraps_like_pytorch():
    torch = pytest.importorskip("torch")
    for op in ("add", "mul", "sub"):
        ours = getattr(rg, op)(rg.tensor([250, 3], dtype=rg.uint8), 1000)
        theirs = getattr(torch, op)(torch.tensor([250, 3], dtype=torch.uint8), 1000)
        assert ours.dtype is rg.uint8 and ours.tolist() == theirs.tolist()
    x = rg.tensor([100], dtype=rg.int8)
    x.add_(300)
    t = torch.tensor([100], dtype=torch.int8)
    t.add_(300)
    assert x.tolist() == t.tolist()
