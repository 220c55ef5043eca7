"""The MKL-DNN layout (Note [The MKL-DNN layout] in retrograd/ops/mkldnn.py), each scenario run with retrograd and
with torch (PyTorch's CPU build has MKL-DNN), which must observe the same: values, layouts, nodes, errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
if not torch.backends.mkldnn.is_available():
    pytest.skip("this PyTorch is built without MKL-DNN", allow_module_level=True)

from autograd.test_pytorch_suite_basics import same_in_both  # noqa: E402


def values(lib, *shape, seed=0, dtype=None):
    data = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(data.tolist(), dtype=dtype or lib.float32)


def layout(t):
    return repr(t.layout).replace("torch.", "retrograd.")


def raised(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type is compared
        return type(e).__name__
    return "no error"


def test_conversions_and_their_nodes_match_torch():
    def scenario(lib):
        a = values(lib, 2, 3).requires_grad_()
        m = a.to_mkldnn()
        seen = []
        m.register_hook(lambda g: seen.append(layout(g)))
        d = m.to_dense()
        leaf = values(lib, 3, seed=2).to_mkldnn().requires_grad_()
        back = leaf.to_dense()
        nodes = (m.grad_fn.name(), m.grad_fn._saved_self is a, m.grad_fn.next_functions[0][0].name(),
                 d.grad_fn.name(), back.grad_fn.name(), back.grad_fn._saved_self is leaf,
                 layout(back.grad_fn._saved_self))
        (d * values(lib, 2, 3, seed=1)).sum().backward()
        (back * 2).sum().backward()
        (leaf.to_dense() * 3).sum().backward()
        return (layout(m), m.is_mkldnn, a.is_mkldnn, m.dtype == lib.float32, tuple(m.shape), m.requires_grad,
                m.is_leaf, nodes, layout(d), seen, layout(a.grad), a.grad, leaf.is_leaf, layout(leaf.grad),
                leaf.grad.to_dense(), a.to_dense() is a)
    assert same_in_both(scenario)[0] == "ok"


def first_sentence(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type and first sentence are compared
        return type(e).__name__, str(e).split(". ")[0].split("\n")[0]
    return "ok"


def test_dtypes_it_takes_and_refuses_match_torch():
    def scenario(lib):
        kinds = (lib.float32, lib.bfloat16, lib.float16, lib.uint8, lib.int8, lib.float64, lib.int32, lib.bool)
        out = []
        for dt in kinds:
            out.append(first_sentence(lambda: lib.ones(2, dtype=dt).to_mkldnn()))
            out.append(first_sentence(lambda: lib.ones(2).to_mkldnn(dt)))
            out.append(raised(lambda: lib.ones(2).to_mkldnn().to_dense(dt)))
        out.append(first_sentence(lambda: lib.ones(2).to_mkldnn().to_mkldnn()))
        out.append(first_sentence(lambda: lib.ones(2, dtype=lib.uint8).to_mkldnn().requires_grad_()))
        bf = lib.ones(2).to_mkldnn(lib.bfloat16)
        return out, repr(bf.dtype).replace("torch.", "retrograd."), layout(bf), bf.to_dense(lib.float32)
    assert same_in_both(scenario)[0] == "ok"


def test_what_reads_memory_is_refused_as_torch_refuses_it():
    def scenario(lib):
        m = values(lib, 2, 3).to_mkldnn()
        out = [m.stride(), m.stride(1), values(lib, 2, 3, 4).to_mkldnn().stride(), m.storage_offset(),
               m.is_contiguous(), m.size(1), m.numel(), m.dim()]
        for call in (lambda: m.view(3, 2), lambda: m[0], lambda: m.__setitem__(0, 1.0), lambda: m.numpy(),
                     lambda: m.tolist(), lambda: m.data_ptr(), lambda: lib.ones(1).to_mkldnn().item()):
            out.append(first_sentence(call))
        return out
    assert same_in_both(scenario)[0] == "ok"


def test_repr_names_the_layout_as_torch():
    def scenario(lib):
        a = lib.tensor([1.0, -2.5]).requires_grad_()
        return [repr(t).replace("torch.", "retrograd.") for t in (
            a.to_mkldnn(), lib.ones(2, 2).to_mkldnn(), lib.ones(2).to_mkldnn(lib.bfloat16),
            lib.ones(2, dtype=lib.uint8).to_mkldnn(), lib.ones(2).to_mkldnn().requires_grad_())]
    assert same_in_both(scenario)[0] == "ok"


def test_gradcheck_through_both_conversions_in_float32():
    # the conversions are the identity on values: gradcheck of a function through both of them, in float32
    # (MKL-DNN has no float64), against finite differences
    x = rg.tensor([0.5, -1.0, 2.0]).requires_grad_()
    y = rg.tensor([1.5, 0.25, -0.75]).to_mkldnn().requires_grad_()
    with pytest.warns(UserWarning):
        assert rg.autograd.gradcheck(lambda a, b: (a.to_mkldnn().to_dense() * b.to_dense()).exp(), (x, y),
                                     eps=1e-2, atol=1e-2, rtol=1e-2)
