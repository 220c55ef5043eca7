"""What a tensor says of itself (retrograd/ops/queries.py), the casts named after C types, new_empty_strided, and the
errors of tensor_split, dist and the view scatters, against torch on the same tensors.

Values and derivatives of tensor_split, ravel, diagflat, dist and the view scatters are swept with the op table
from tests/ops/samples_views.py.
"""

import pytest
from errors_like_torch import same_error

import retrograd as rg

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sizes_and_kind_match_torch(dtype):
    def facts(lib):
        x = lib.zeros(2, 3, dtype=getattr(lib, dtype))
        return (x.nbytes, x.itemsize, x.is_cpu, x.is_sparse, x.is_sparse_csr, x.is_quantized, x.is_meta,
                x.is_nested, x.is_signed(), lib.is_signed(x), x.is_conj(), x.is_neg(), lib.is_conj(x),
                lib.is_neg(x), x.get_device(), lib.get_device(x), x[:, :2].nbytes)
    assert facts(rg) == facts(torch)


def test_real_tensors_are_their_own_conjugate_and_resolved_forms():
    x = rg.tensor([1.0, -2.0], requires_grad=True)
    for same in (x.conj(), rg.conj(x), x.resolve_conj(), rg.resolve_conj(x), x.resolve_neg(), rg.resolve_neg(x)):
        assert same is x
    t = torch.tensor([1.0, -2.0], requires_grad=True)
    assert t.conj() is t and t.resolve_conj() is t and t.resolve_neg() is t


@pytest.mark.parametrize("cast,dtype", [("byte", "uint8"), ("char", "int8"), ("short", "int16")])
def test_c_type_casts_match_torch(cast, dtype):
    values = [[-1.5, 0.0, 2.7], [100.0, 7.2, -3.0]]
    ours = getattr(rg.tensor(values), cast)()
    theirs = getattr(torch.tensor(values), cast)()
    assert ours.dtype is getattr(rg, dtype) and theirs.dtype is getattr(torch, dtype)
    if dtype != "uint8":  # a negative float to uint8 is undefined in C: the two differ
        assert ours.tolist() == theirs.tolist()
    grads = []
    for lib in (rg, torch):
        x = lib.tensor(values, requires_grad=True)
        y = getattr(x * 2, cast)()
        grads.append((y.requires_grad, y.grad_fn))
    assert grads[0] == grads[1] == (False, None)


def test_same_size_and_nonzero_match_torch():
    for lib in (rg, torch):
        a, b = lib.ones(2, 3), lib.zeros(2, 3)
        assert a.is_same_size(b) and lib.is_same_size(a, b) and not a.is_same_size(b.t())
        assert lib.tensor([2]).is_nonzero() and not lib.is_nonzero(lib.tensor([[0.0]]))
        assert lib.tensor(True).is_nonzero()


def test_new_empty_strided_matches_torch():
    for lib in (rg, torch):
        x = lib.ones(2, dtype=lib.float64)
        y = x.new_empty_strided((2, 3), (1, 2))
        z = x.new_empty_strided((4,), (1,), dtype=lib.int64, requires_grad=False)
        assert (tuple(y.shape), y.stride(), y.dtype, z.dtype) == ((2, 3), (1, 2), lib.float64, lib.int64)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([]).is_nonzero(),
    lambda lib: lib.tensor([1, 2]).is_nonzero(),
    lambda lib: lib.tensor_split(lib.ones(3), 0),
    lambda lib: lib.tensor_split(lib.tensor(1.0), 2),
    lambda lib: lib.tensor_split(lib.ones(3), lib.tensor([[1]])),
    lambda lib: lib.tensor_split(lib.ones(3), lib.tensor([1.0])),
    lambda lib: lib.hsplit(lib.tensor(1.0), 1),
    lambda lib: lib.hsplit(lib.ones(2, 4), 3),
    lambda lib: lib.vsplit(lib.ones(4), 2),
    lambda lib: lib.dsplit(lib.ones(2, 2), 2),
    lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([1, 3])),
    lambda lib: lib.select_scatter(lib.zeros(2, 3), lib.ones(2), 0, 1),
    lambda lib: lib.select_scatter(lib.zeros(2, 3), lib.ones(3), 0, 5),
    lambda lib: lib.slice_scatter(lib.zeros(2, 3), lib.ones(2, 2), 1, 0, 1),
    lambda lib: lib.diagonal_scatter(lib.zeros(2, 3), lib.ones(3)),
], ids=["nonzero of none", "nonzero of two", "no sections", "0-d split", "2-d indices", "float indices",
        "hsplit 0-d", "hsplit indivisible", "vsplit 1-d", "dsplit 2-d", "dist of integers", "select_scatter shape",
        "select_scatter index", "slice_scatter shape", "diagonal_scatter shape"])
def test_errors_match_torch(call):
    same_error(call)


def test_scatters_cast_src_to_the_input_dtype_as_torch():
    for lib in (rg, torch):
        out = lib.select_scatter(lib.zeros(2, 2), lib.tensor([1.5, 2.5], dtype=lib.float64), 0, 1)
        assert out.dtype == lib.float32 and out.tolist() == [[0.0, 0.0], [1.5, 2.5]]
