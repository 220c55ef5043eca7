"""The MKL-DNN layout (Note [The MKL-DNN layout] in retrograd/ops/mkldnn.py), each scenario run with retrograd and
with torch (PyTorch's CPU build has MKL-DNN), which must observe the same: values, layouts, nodes, errors."""
import pathlib
import sys

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
                leaf.grad.to_dense(), a.to_dense() is a, layout(m.detach()), layout(m.data))
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
               m.is_contiguous(), layout(m.reshape(3, 2)), m.reshape(3, 2).to_dense(), m.size(1), m.numel(), m.dim()]
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


# -- the op table (retrograd/ops/_mkldnn_ops.py, written by scripts/mkldnn_op_table.py) --------------------------
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
import mkldnn_op_table as sweep  # noqa: E402
from retrograd.ops._mkldnn_ops import MKLDNN_OPS  # noqa: E402

# retrograd functions composed of other public ops, whose calls reach the table under the names of those ops
# (PyTorch's are ops of their own): what they do on MKL-DNN tensors is what their first refused (or last) op does.
COMPOSED = {
    "convolution": "nn.functional.conv2d unfolds its input first (im2col, which PyTorch refuses); PyTorch runs it",
    "cumprod": "PyTorch refuses it; retrograd's is made of ops PyTorch runs",
    "diff": "PyTorch refuses it; retrograd's is made of ops PyTorch runs",
    "kron": "PyTorch refuses it; retrograd's is made of ops PyTorch runs",
    "matrix_power": "PyTorch refuses it; retrograd's is made of ops PyTorch runs",
    "vander": "PyTorch refuses it; retrograd's is made of ops PyTorch runs",
    "cartesian_prod": "refused by another of its ops than PyTorch's", "combinations": "refused by another op",
    "ctc_loss": "refused by another op", "linalg_cholesky_ex": "refused by another op",
    "logdet": "refused by another op", "meshgrid": "refused by another op", "nanmean": "refused by another op",
    "take_along_dim": "refused by another op", "trapezoid": "refused by another op", "trapz": "refused by another op",
}


def _ours(name):
    seen = sweep.verdict(name, rg)
    if seen is not None and seen[1].startswith("Could not run"):  # our words after PyTorch's first sentence
        seen = (seen[0], seen[1].split(" retrograd's")[0])
    return seen


def test_every_op_does_on_mkldnn_tensors_what_the_table_says():
    differ = {name for name in MKLDNN_OPS if _ours(name) != MKLDNN_OPS[name]}
    assert differ == set(COMPOSED)


def test_the_table_is_what_torch_does_on_a_sample_of_ops():
    names = sorted(MKLDNN_OPS)
    picked = [names[i] for i in np.random.default_rng(13).choice(len(names), 30, replace=False)]
    for name in picked + ["add", "relu", "sum", "view", "reshape", "exp"]:
        assert sweep.verdict(name) == MKLDNN_OPS[name], name


def test_ops_on_mkldnn_tensors_and_their_gradients_match_torch():
    def scenario(lib):
        x = values(lib, 2, 3).to_mkldnn().requires_grad_()
        y = values(lib, 2, 3, seed=1).to_mkldnn().requires_grad_()
        z = (x * y + x).relu()
        out = [layout(z), z.grad_fn.name(), z.to_dense()]
        g = lib.autograd.grad(z.to_dense().sum(), (x, y))
        out += [layout(g[0]), g[0].to_dense(), layout(g[1]), g[1].to_dense()]
        for call in (lambda: x.sum(1), lambda: x.exp(), lambda: x + values(lib, 2, 3), lambda: x.to(lib.float64),
                     lambda: x.t().to_dense(), lambda: x.clone().mul_(y).to_dense(), lambda: x.softmax(0),
                     lambda: x.reshape(3, 2).transpose(0, 1).to_dense(), lambda: x.clone().copy_(values(lib, 2, 3)),
                     lambda: lib.autograd.grad(x.relu(), x, values(lib, 2, 3))):
            try:
                r = call()
                r = r[0] if isinstance(r, tuple) else r
                dense = r if r.layout == lib.strided else r.to_dense()  # float32: to 5 places
                out.append((layout(r), np.round(np.asarray(dense.tolist()), 5).tolist()))
            except Exception as e:  # noqa: BLE001 - the type and first sentence are compared
                out.append((type(e).__name__, str(e).split(". ")[0].split("\n")[0]))
        return out
    assert same_in_both(scenario)[0] == "ok"
