"""Strides, storage offsets and ``as_strided`` against PyTorch (See Note [Strides and storage] in retrograd/_tensor.py).

Each scenario runs with retrograd and with torch on the same numbers.
"""

import numpy as np
import pytest

import retrograd as rg
from errors_like_torch import same_in_both

torch = pytest.importorskip("torch")


def grid(lib, *shape):
    return lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape)


def weights(lib, t):
    return lib.arange(1.0, 1.0 + t.numel(), dtype=lib.float64).reshape(t.shape)


LAYOUTS = {
    "contiguous": lambda lib: grid(lib, 3, 4),
    "transposed": lambda lib: grid(lib, 3, 4).t(),
    "sliced": lambda lib: grid(lib, 3, 4)[1:, 1::2],
    "selected": lambda lib: grid(lib, 3, 4).t()[1],
    "expanded": lambda lib: grid(lib, 3, 1).expand(2, 3, 4),
    "expanded to ones": lambda lib: grid(lib, 3).expand(1, 1, 3),
    "permuted": lambda lib: grid(lib, 2, 3, 4).permute(2, 0, 1),
    "unsqueezed": lambda lib: grid(lib, 3, 4).unsqueeze(1),
    "unsqueezed last, transposed": lambda lib: grid(lib, 3, 4).t().unsqueeze(-1),
    "narrowed column": lambda lib: grid(lib, 3, 4)[:, 1:2],
    "0-d": lambda lib: grid(lib, 3)[2],
    "empty": lambda lib: grid(lib, 0, 3),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_stride_storage_offset_and_contiguity_match_pytorchs(layout):
    def scenario(lib):
        t = LAYOUTS[layout](lib)
        per_dim = [t.stride(d) for d in range(t.dim())] + ([t.stride(-1)] if t.dim() else [])
        return t.stride(), per_dim, t.storage_offset(), t.is_contiguous()
    same_in_both(scenario)


@pytest.mark.parametrize("dim", [2, -3])
def test_stride_of_a_dim_out_of_range_raises_as_pytorch(dim):
    same_in_both(lambda lib: grid(lib, 3, 4).stride(dim))


def test_stride_of_a_0d_tensor_raises_as_pytorch():
    same_in_both(lambda lib: lib.zeros(()).stride(0))


GEOMETRIES = {
    "transposed": ((3, 2), (1, 3), None),
    "overlapping windows": ((4, 3), (1, 1), None),
    "offset": ((2, 2), (3, 1), 1),
    "stride 0": ((3, 2), (0, 1), 2),
    "0-d": ((), (), 4),
    "empty": ((0, 2), (1, 1), None),
}


@pytest.mark.parametrize("geometry", sorted(GEOMETRIES))
def test_as_strided_values_node_and_gradient_match_pytorchs(geometry):
    size, stride, offset = GEOMETRIES[geometry]

    def scenario(lib):
        a = grid(lib, 6).requires_grad_()
        y = a.as_strided(size, stride, offset)
        (y * weights(lib, y)).sum().backward()
        return (y.tolist(), tuple(y.shape), y.stride(), y.storage_offset(), y.grad_fn.name(), y._base is a,
                a.grad.tolist())
    same_in_both(scenario)


VIEWS = {
    "of a slice": lambda t: t[1:].as_strided((2, 2), (1, 1)),
    "of a slice, its own offset": lambda t: t[1:].as_strided((2, 2), (4, 1), 0),
    "of a transpose": lambda t: t.view(3, 4).t().as_strided((2, 3), (4, 1)),
    "of an expanded input": lambda t: t[:3].expand(2, 3).as_strided((2, 2), (1, 1), 0),
    "of an as_strided view": lambda t: t.as_strided((3, 3), (1, 1)).as_strided((2, 2), (2, 1), 1),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_as_strided_of_views_reads_their_storage_as_pytorchs(view):
    def scenario(lib):
        a = grid(lib, 12).requires_grad_()
        y = VIEWS[view](a * 1)
        (y * weights(lib, y)).sum().backward()
        return y.tolist(), y.storage_offset(), y.stride(), y.grad_fn.name(), a.grad.tolist()
    same_in_both(scenario)


@pytest.mark.parametrize("call", [lambda t: t.as_strided((3, 4), (4, 1), 1), lambda t: t.as_strided((3, 4), (-4, 1)),
                                  lambda t: t.as_strided((3, 4, 5), (4, 1)), lambda t: t.as_strided((3, 4), (4, 1), -1),
                                  lambda t: t.as_strided((-3, 4), (4, 1)), lambda t: t.as_strided(3, (1,)),
                                  lambda t: t.as_strided((3,), 1), lambda t: t[1:].as_strided((12,), (1,), 0)],
                         ids=["out of the storage", "negative stride", "lengths differ", "negative offset",
                              "negative size", "an int size", "an int stride", "the whole storage of a slice"])
def test_as_strided_checks_its_geometry_as_pytorch(call):
    same_in_both(lambda lib: call(grid(lib, 12)).tolist())


def test_as_strided_view_shares_memory_and_version_with_its_base():
    def scenario(lib):
        a = lib.zeros(6, dtype=lib.float64)
        v = a.as_strided((2, 2), (2, 1), 1)
        v.fill_(1.0)
        return a.tolist(), a._version, v._version, v._base is a
    assert same_in_both(scenario) == ("ok", ([0.0, 1.0, 1.0, 1.0, 1.0, 0.0], 1, 1, True))


def test_inplace_on_an_as_strided_view_rebases_its_base_as_pytorchs():
    def scenario(lib):
        a = grid(lib, 12).requires_grad_()
        b = a * 1
        v = b.as_strided((2, 3), (3, 1), 2)
        v.mul_(2)
        (b * weights(lib, b)).sum().backward()
        return b.grad_fn.name(), v.grad_fn.name(), a.grad.tolist()
    same_in_both(scenario)


def test_inplace_on_an_as_strided_view_of_a_column_major_base_as_pytorchs():
    def scenario(lib):
        a = grid(lib, 6).requires_grad_()
        b = a.view(2, 3).t() * 1  # a base laid out column by column: the view reads its storage, not its shape
        v = b.as_strided((2,), (1,), 1)
        v.mul_(2)
        (b * weights(lib, b)).sum().backward()
        return b.stride(), a.grad.tolist()
    same_in_both(scenario)


def test_as_strided_view_after_its_base_changed_in_place_as_pytorchs():
    def scenario(lib):
        a = grid(lib, 6).requires_grad_()
        b = a * 1
        v = b.as_strided((2, 2), (1, 2), 1)
        b.mul_(3)
        (v * weights(lib, v)).sum().backward()
        return v.tolist(), v.grad_fn.name(), a.grad.tolist()
    same_in_both(scenario)


def test_as_strided_inplace_gradient_matches_pytorchs():
    def scenario(lib):
        a = grid(lib, 6).requires_grad_()
        x = a * 1
        out = x.as_strided_((2, 2), (1, 3), 1)
        (x * weights(lib, x)).sum().backward()
        return out is x, x.stride(), x.storage_offset(), a.grad.tolist()
    same_in_both(scenario)


def test_as_strided_forward_ad_matches_pytorchs():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            windows = fw.make_dual(grid(lib, 6), grid(lib, 6) + 10).as_strided((2, 2), (1, 1), 1)
            of_slice = fw.make_dual(grid(lib, 6)[2:], grid(lib, 4) + 10).as_strided((2, 2), (1, 1))
            return [fw.unpack_dual(t).tangent.tolist() for t in (windows, of_slice)]
    same_in_both(scenario)


@pytest.mark.parametrize("size, stride, offset", [((3, 3), (1, 1), 1), ((2, 3), (1, 2), 0), ((2, 2), (0, 2), 1)],
                         ids=["overlapping windows", "transposed", "stride 0"])
def test_as_strided_gradcheck(size, stride, offset):
    x = rg.randn(7, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: t.as_strided(size, stride, offset), (x,))
    assert rg.autograd.gradgradcheck(lambda t: t.as_strided(size, stride, offset), (x,))


def test_as_strided_of_an_overlapping_input_gradcheck():
    x = rg.randn(3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: t.expand(2, 3).as_strided((2, 2), (1, 1), 0), (x,))
    assert rg.autograd.gradgradcheck(lambda t: t.expand(2, 3).as_strided((2, 2), (1, 1), 0), (x,))


@pytest.mark.xfail(strict=True, reason="indexing with None gives the new dim NumPy's stride 0 (retrograd/ops/indexing.py)")
def test_stride_of_a_dim_added_by_indexing_with_none_matches_pytorchs():
    same_in_both(lambda lib: grid(lib, 3, 4)[None].stride())


@pytest.mark.xfail(strict=True, reason="from_numpy of a NumPy view keeps the view's owner as its storage")
def test_storage_offset_of_a_tensor_made_from_a_numpy_view_matches_pytorchs():
    same_in_both(lambda lib: lib.from_numpy(np.arange(6.0)[2:]).storage_offset())


def test_as_strided_under_vmap_offsets_each_sample_by_its_place_as_pytorchs():
    def scenario(lib):
        batch = grid(lib, 2, 6)
        windows = lib.func.vmap(lambda t: t.as_strided((2, 2), (1, 1), 1))(batch)
        of_slice = lib.func.vmap(lambda t: t.as_strided((2, 2), (1, 1)))(batch[:, 1:])
        return windows.tolist(), of_slice.tolist()
    same_in_both(scenario)
