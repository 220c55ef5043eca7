"""Memory formats (Note [Memory formats] in retrograd/_creation.py) and the gradient layout contract of a leaf's
``.grad`` (Note [The gradient layout contract] in retrograd/autograd/accumulate_grad.py), against PyTorch.

Each scenario runs with retrograd and with torch on the same numbers.
"""
import pickle

import numpy as np
import pytest

import retrograd as rg
from errors_like_torch import outcome

torch = pytest.importorskip("torch")


def _same(ours, theirs):
    """Equal, floats to within a few units in the last place: PyTorch's vectorised kernels (``exp``
    with AVX-512, say) may round differently from NumPy's on some CPUs."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return ours == theirs or abs(ours - theirs) <= 1e-14 * max(abs(ours), abs(theirs))
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return type(ours) is type(theirs) and len(ours) == len(theirs) and all(map(_same, ours, theirs))
    return ours == theirs


def same_in_both(scenario):
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    assert _same(ours, theirs), (ours, theirs)
    return ours


def grid(lib, *shape):
    return lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape)


def values(t):
    return t.detach().numpy().tolist()


LAYOUTS = {
    "contiguous": lambda lib: grid(lib, 2, 3, 4, 5),
    "channels_last": lambda lib: grid(lib, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    "permuted": lambda lib: grid(lib, 2, 3, 4, 5).permute(3, 0, 2, 1),
    "sliced channels_last": lambda lib: grid(lib, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last)[:, :, ::2],
    "transposed, sliced": lambda lib: grid(lib, 4, 6).t()[:, ::2],
    "expanded": lambda lib: grid(lib, 1, 3, 1, 1).expand(2, 3, 2, 2),
    "size-1 channels": lambda lib: grid(lib, 2, 1, 3, 3),
}


def test_the_formats_are_named_objects_of_one_type():
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        fmt = getattr(rg, name)
        assert isinstance(fmt, rg.memory_format)
        assert repr(fmt) == f"retrograd.{name}"
        assert pickle.loads(pickle.dumps(fmt)) is fmt


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_contiguity_in_each_format_matches_pytorchs(layout):
    def scenario(lib):
        t = LAYOUTS[layout](lib)
        return (t.stride(), t.is_contiguous(), t.is_contiguous(memory_format=lib.channels_last),
                t.is_contiguous(memory_format=lib.channels_last_3d), t.is_contiguous(memory_format=lib.preserve_format))
    same_in_both(scenario)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_clone_and_like_factories_preserve_the_layout_as_pytorchs(layout):
    def scenario(lib):
        t = LAYOUTS[layout](lib)
        c = t.clone()
        likes = [f(t).stride() for f in (lib.empty_like, lib.zeros_like, lib.ones_like, lib.rand_like,
                                         lib.randn_like, lambda x: lib.full_like(x, 7.0))]
        return c.stride(), values(c) == values(t), likes, lib.zeros_like(t, memory_format=lib.contiguous_format).stride()
    same_in_both(scenario)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
def test_contiguous_clone_and_to_in_a_format_match_pytorchs(layout, fmt):
    def scenario(lib):
        t = LAYOUTS[layout](lib)
        f = getattr(lib, fmt)
        c, k, m = t.contiguous(memory_format=f), t.clone(memory_format=f), t.to(memory_format=f)
        return ([x.stride() for x in (c, k, m)], c is t, m is t, values(c) == values(t), values(m) == values(t),
                lib.empty_like(t, memory_format=f).stride())
    same_in_both(scenario)


def test_a_channels_last_3d_tensor_matches_pytorchs():
    def scenario(lib):
        t = grid(lib, 2, 3, 2, 2, 2).contiguous(memory_format=lib.channels_last_3d)
        return (t.stride(), t.is_contiguous(memory_format=lib.channels_last_3d), t.clone().stride(),
                lib.empty(2, 3, 2, 2, 2, memory_format=lib.channels_last_3d).stride())
    same_in_both(scenario)


def test_empty_in_a_format_and_empty_strided_match_pytorchs():
    def scenario(lib):
        return (lib.empty(2, 3, 4, 5, memory_format=lib.channels_last).stride(),
                lib.empty((2, 3), memory_format=lib.contiguous_format).stride(),
                lib.empty_strided((2, 3, 4), (1, 2, 6)).stride(), lib.empty_strided((2, 2), (4, 1)).stride(),
                lib.empty_strided((2, 3), (3, 1), dtype=lib.float64).dtype is lib.float64)
    same_in_both(scenario)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.randn(2, 3).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.randn(2, 3, 4, 5).contiguous(memory_format=lib.channels_last_3d),
    lambda lib: lib.randn(2, 3).t().contiguous(memory_format=lib.preserve_format),
    lambda lib: lib.randn(2, 3).clone(memory_format=lib.channels_last),
    lambda lib: lib.randn(2, 3).to(memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, 4, 5, memory_format=lib.preserve_format),
    lambda lib: lib.empty_like(lib.randn(2, 3), memory_format=lib.channels_last),
    lambda lib: lib.randn(2, 3).contiguous(memory_format=3),
    lambda lib: lib.randn(2, 3).is_contiguous(memory_format="channels_last"),
], ids=["contiguous rank", "contiguous 3d rank", "contiguous preserve", "clone rank", "to rank", "empty rank",
        "empty preserve", "empty_like rank", "contiguous not a format", "is_contiguous not a format"])
def test_bad_memory_formats_raise_pytorchs_errors(bad):
    assert same_in_both(bad)[0] != "ok"


def test_ops_keep_working_on_channels_last_tensors_with_their_gradients():
    def scenario(lib):
        x = grid(lib, 2, 3, 2, 2).contiguous(memory_format=lib.channels_last).requires_grad_()
        w = grid(lib, 3, 1, 1).contiguous()
        y = (x * w + x.exp().sum(1, keepdim=True)).relu()
        y.sum().backward()
        return values(y), values(x.grad), x.grad.stride()
    same_in_both(scenario)


def test_to_a_format_is_recorded_as_a_copy_and_its_gradient_flows():
    def scenario(lib):
        x = grid(lib, 2, 3, 2, 2).requires_grad_()
        y = x.to(memory_format=lib.channels_last)
        (y * grid(lib, 2, 3, 2, 2)).sum().backward()
        return type(y.grad_fn).__name__, y.stride(), values(x.grad), x.grad.stride()
    same_in_both(scenario)


@pytest.mark.parametrize("layout", ["channels_last", "permuted"])
def test_a_leaf_grad_gets_its_leafs_strides_whatever_the_gradient(layout):
    def scenario(lib):
        x = LAYOUTS[layout](lib).requires_grad_()
        out = []
        for f in (lambda: x.sum(), lambda: (x * 2).sum(), lambda: (x.contiguous() * 3).sum()):
            x.grad = None
            f().backward()
            out.append(x.grad.stride())
        f().backward()  # into a defined .grad: it keeps its layout
        out.append((x.grad.stride(), values(x.grad) == values(lib.full_like(x, 6.0))))
        return out
    same_in_both(scenario)


def test_a_leaf_grad_with_create_graph_gets_its_leafs_strides_and_a_graph():
    def scenario(lib):
        x = grid(lib, 2, 3, 2, 2).contiguous(memory_format=lib.channels_last).requires_grad_()
        (x * x).sum().backward(create_graph=True)
        g = x.grad
        stride = g.stride()
        (gx,) = lib.autograd.grad(g.sum(), x)
        return stride, g.requires_grad, values(gx)
    same_in_both(scenario)


def test_a_grad_of_a_non_dense_leaf_is_row_major():
    def scenario(lib):
        x = grid(lib, 4, 6)[:, ::2].detach().requires_grad_()
        (x * 2).t().sum().backward()
        return x.grad.stride(), values(x.grad)
    same_in_both(scenario)


def test_clone_in_a_format_passes_gradcheck():
    x = rg.randn(2, 3, 2, 2, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: t.clone(memory_format=rg.channels_last) * 2, (x,))
    assert rg.autograd.gradcheck(lambda t: t.to(memory_format=rg.channels_last).exp(), (x,))
