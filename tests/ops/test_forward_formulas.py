"""The forward derivatives of the decompositions, embedding_bag, ctc_loss and the fused recurrent layer
(Note [Forward derivatives]) in the cases the op sweep's samples leave out, against PyTorch's forward AD on the
same numbers and against central differences (gradcheck with ``check_forward_ad=True``, float64)."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from retrograd.autograd import gradcheck

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tfwAD  # noqa: E402

_rng = np.random.default_rng(20261202)


def _a(*shape):
    return _rng.standard_normal(shape)


def _tangents(lib, fw, fn, primals, tangents):
    """The tangents of ``fn``'s outputs at ``primals`` along ``tangents`` (arrays), as arrays."""
    with fw.dual_level():
        duals = [fw.make_dual(lib.from_numpy(p.copy()), lib.from_numpy(t.copy())) for p, t in zip(
            primals, tangents, strict=True)]
        outs = fn(lib, *duals)
        return [fw.unpack_dual(o).tangent.detach().numpy() for o in outs]


def _same_tangents_as_torch(fn, *primals):
    tangents = [_a(*p.shape) for p in primals]
    ours, theirs = _tangents(rg, fwAD, fn, primals, tangents), _tangents(torch, tfwAD, fn, primals, tangents)
    for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(o, t, rtol=1e-7, atol=1e-10, err_msg=f"output {k}")
    return ours


# The backward formulas are checked by the op sweep; vmap over the tangents (check_batched_forward_grad) runs
# the per-sample fallback of the ops without a batching rule (Note [Batching rules]).
_FORWARD_ONLY = dict(check_forward_ad=True, check_backward_ad=False, check_batched_forward_grad=True)


def _leaf(*shape):
    return rg.from_numpy(_a(*shape)).requires_grad_(True)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_jvp_of_a_wide_matrix_matches_torch(mode):
    _same_tangents_as_torch(lambda m, a: tuple(m.linalg.qr(a, mode=mode)), _a(2, 2, 4))
    assert gradcheck(lambda a: tuple(rg.linalg.qr(a, mode=mode)), (_leaf(2, 3),), **_FORWARD_ONLY)


@pytest.mark.parametrize("shape,mode", [((3, 2), "r"), ((4, 3), "complete")])
def test_qr_jvp_raises_torchs_error_where_qr_has_no_derivative(shape, mode):
    def outcome(lib, fw):
        with fw.dual_level():
            a = fw.make_dual(lib.from_numpy(_a(*shape)), lib.from_numpy(_a(*shape)))
            with pytest.raises(RuntimeError) as info:
                lib.linalg.qr(a, mode=mode)
        return str(info.value)
    assert outcome(rg, fwAD) == outcome(torch, tfwAD)


@pytest.mark.parametrize("shape", [(3, 2), (2, 2, 3)])
def test_svd_jvp_of_full_matrices_gives_the_extra_vectors_zero_tangents_as_torch(shape):
    # Each squared entry of U and Vh is the same whatever sign the library gave a singular vector.
    k = min(shape[-2:])
    U_t, S_t, Vh_t = _same_tangents_as_torch(
        lambda m, a: (lambda U, S, Vh: (U * U, S, Vh * Vh))(*m.linalg.svd(a, full_matrices=True)), _a(*shape))
    np.testing.assert_array_equal(U_t[..., k:], 0.)
    np.testing.assert_array_equal(Vh_t[..., k:, :], 0.)
    assert gradcheck(lambda a: (lambda U, S, Vh: (U[..., :k] @ Vh[..., :k, :], S))(*rg.linalg.svd(a)),
                     (_leaf(*shape),), **_FORWARD_ONLY)


def test_lstsq_jvp_of_a_batch_matches_torch():
    _same_tangents_as_torch(lambda m, a, b: (m.linalg.lstsq(a, b).solution,), _a(2, 4, 3), _a(2, 4, 2))
    assert gradcheck(lambda a, b: rg.linalg.lstsq(a, b).solution, (_leaf(4, 2), _leaf(4)), **_FORWARD_ONLY)


def test_embedding_bag_ctc_loss_put_and_take_jvps_pass_gradcheck():
    idx, offsets = rg.tensor([0, 2, 1, 2, 3, 1]), rg.tensor([0, 3, 3])
    F = rg.nn.functional
    for mode in ("mean", "max"):
        assert gradcheck(lambda w: F.embedding_bag(idx, w, offsets, mode=mode), (_leaf(4, 2),), **_FORWARD_ONLY)
    assert gradcheck(lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p),
                     (_leaf(4, 2), _leaf(6)), **_FORWARD_ONLY)
    targets = rg.tensor([[1, 2], [2, 0]])
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, [4, 3], [2, 1], reduction="sum"),
                     (_leaf(4, 2, 3),), **_FORWARD_ONLY)
    at = rg.tensor([0, 3, 0])
    assert gradcheck(lambda x, s: (x.put(at, s, accumulate=True), x.take(at)), (_leaf(2, 2), _leaf(3)),
                     **_FORWARD_ONLY)


def _module_pair(name, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(2, 3, **kwargs).double()
    rm = getattr(rg.nn, name)(2, 3, **kwargs).double()
    rm.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return rm, tm


@pytest.mark.parametrize("name,kwargs", [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
                                         ("GRU", dict(num_layers=2)), ("RNN", dict(bidirectional=True))])
def test_recurrent_module_jvp_matches_torch(name, kwargs):
    # Tangents of the input and of h0 through stacked layers and directions.
    rm, tm = _module_pair(name, **kwargs)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    x, h0 = _a(3, 2, 2), _a(layers, 2, kwargs.get("proj_size", 3))

    def run(m, x, h0):
        module = rm if m is rg else tm
        if name == "LSTM":
            out, (h, c) = module(x, (h0, h0[..., :1].expand(layers, 2, 3) * 0.5))
            return out, h, c
        return module(x, h0)
    _same_tangents_as_torch(run, x, h0)


def test_recurrent_layer_jvp_passes_gradcheck_batched_over_tangents():
    rm, _ = _module_pair("GRU")
    assert gradcheck(lambda x, h: rm(x, h), (_leaf(2, 1, 2), _leaf(1, 1, 3)), **_FORWARD_ONLY)


def test_recurrent_layer_tangent_is_differentiable():
    # Reverse over forward: the tangent is made of ordinary ops, so gradcheck can differentiate it in x.
    rm, _ = _module_pair("LSTM")
    v = rg.from_numpy(_a(2, 1, 2))

    def tangent(x):
        return rg.func.jvp(lambda t: rm(t)[0], (x,), (v,))[1]
    assert gradcheck(tangent, (_leaf(2, 1, 2),))
