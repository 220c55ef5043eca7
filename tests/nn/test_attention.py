"""scaled_dot_product_attention and nn.MultiheadAttention: one node, PyTorch's results, gradients and errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd import nn

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(1234)


def _pair(*shapes):
    arrays = [_rng.standard_normal(s) for s in shapes]
    return ([rg.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays])


def _close(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-7, atol=atol)


# -- scaled_dot_product_attention -----------------------------------------------------------------------
def test_sdpa_records_one_node_over_the_inputs():
    (q, k, v), _ = _pair((2, 3, 4), (2, 5, 4), (2, 5, 6))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert type(out.grad_fn).__name__ == "ScaledDotProductAttentionBackward0"
    assert [e[0].__class__.__name__ for e in out.grad_fn.next_functions] == ["AccumulateGrad"] * 3


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}, {"mask": "bool"}, {"mask": "float"},
                                    {"mask": "float-broadcast"}])
def test_sdpa_output_and_gradients_equal_torch(kwargs):
    kwargs = dict(kwargs)
    (q, k, v), (tq, tk, tv) = _pair((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6))
    mask = tmask = None
    kind = kwargs.pop("mask", None)
    if kind == "bool":
        m = _rng.random((3, 5)) < 0.6
        m[:, 0] = True
        mask, tmask = rg.tensor(m), torch.tensor(m)
    elif kind is not None:
        m = _rng.standard_normal((3, 5) if kind == "float" else (2, 1, 1, 5))
        mask, tmask = rg.tensor(m, requires_grad=True), torch.tensor(m, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kwargs)
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask, **kwargs)
    _close(out, expected)
    g = _rng.standard_normal(tuple(expected.shape))
    out.backward(rg.tensor(g))
    expected.backward(torch.tensor(g))
    for ours, theirs in zip([q, k, v], [tq, tk, tv], strict=True):
        _close(ours.grad, theirs.grad)
    if kind in ("float", "float-broadcast"):
        _close(mask.grad, tmask.grad)


def test_sdpa_gradcheck_and_gradgradcheck_with_dropout_mask_fixed():
    q, k, v = (rg.randn(*s, dtype=rg.float64, requires_grad=True) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    mask = rg.randn(3, 5, dtype=rg.float64, requires_grad=True)

    def fn(q, k, v, mask):
        rg.manual_seed(0)  # the same dropout mask on every evaluation
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.3)
    assert rg.autograd.gradcheck(fn, (q, k, v, mask))
    assert rg.autograd.gradgradcheck(fn, (q, k, v, mask))


def test_sdpa_grouped_query_attention_equals_torch_and_gradchecks():
    (q, k, v), (tq, tk, tv) = _pair((1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 3))
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True)
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True, is_causal=True)
    _close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for ours, theirs in zip([q, k, v], [tq, tk, tv], strict=True):
        _close(ours.grad, theirs.grad)
    assert rg.autograd.gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                                     tuple(t.detach().requires_grad_() for t in (q, k, v)))


@pytest.mark.parametrize("batch", [(), (2, 4)], ids=["3 rows", "24 rows"])  # 24: Note [Row reductions as products]
def test_sdpa_fully_masked_query_gives_zeros_as_torch(batch):
    (q, k, v), (tq, tk, tv) = _pair(batch + (3, 2), batch + (4, 2), batch + (4, 3))
    m = np.ones((3, 4), dtype=bool)
    m[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=rg.tensor(m))
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(m))
    _close(out, expected)
    assert out[..., 1, :].abs().sum().item() == 0.0
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all()


def test_sdpa_double_backward_equals_torch():
    (q, k, v), (tq, tk, tv) = _pair((2, 3, 4), (2, 3, 4), (2, 3, 2))
    results = []
    for lib, xs in ((rg, (q, k, v)), (torch, (tq, tk, tv))):
        out = lib.nn.functional.scaled_dot_product_attention(*xs, is_causal=True)
        grads = lib.autograd.grad((out * out).sum(), xs, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), xs)
        results.append([g.detach().numpy() for g in second])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-10)


def test_sdpa_dropout_zeroes_whole_weights_and_follows_the_generator():
    q = k = v = rg.ones(1, 1, 50, 4)
    rg.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    rg.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert rg.equal(a, b)
    assert not rg.equal(a, F.scaled_dot_product_attention(q, k, v))
    assert F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).abs().sum().item() == 0.0


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e).split(". ")[0]
    return None


@pytest.mark.parametrize("case", ["1-d", "dtypes", "mask-dtype", "mask-and-causal", "dropout", "embed", "source",
                                  "gqa", "batch", "mask-broadcast", "mask-grows-output"])
def test_sdpa_errors_match_torch(case):
    def call(lib):
        f = lib.nn.functional.scaled_dot_product_attention
        r = lambda *s, dtype=None: lib.ones(*s, dtype=dtype or lib.float32)  # noqa: E731
        if case == "1-d":
            return lambda: f(r(4), r(4), r(4))
        if case == "dtypes":
            return lambda: f(r(2, 3, dtype=lib.float64), r(2, 3), r(2, 3))
        if case == "mask-dtype":
            return lambda: f(r(2, 3), r(2, 3), r(2, 3), attn_mask=r(2, 2, dtype=lib.int64))
        if case == "mask-and-causal":
            return lambda: f(r(2, 3), r(2, 3), r(2, 3), attn_mask=r(2, 2), is_causal=True)
        if case == "dropout":
            return lambda: f(r(2, 3), r(2, 3), r(2, 3), dropout_p=1.5)
        if case == "embed":
            return lambda: f(r(2, 3, 4), r(2, 5, 3), r(2, 5, 6))
        if case == "source":
            return lambda: f(r(2, 3, 4), r(2, 5, 4), r(2, 4, 6))
        if case == "gqa":
            return lambda: f(r(1, 4, 3, 4), r(1, 3, 5, 4), r(1, 3, 5, 4), enable_gqa=True)
        if case == "batch":
            return lambda: f(r(2, 3, 4), r(3, 3, 4), r(3, 3, 4))
        if case == "mask-broadcast":
            return lambda: f(r(2, 3, 4), r(2, 3, 4), r(2, 3, 4), attn_mask=r(5, 3, dtype=lib.bool))
        return lambda: f(r(2, 3, 4), r(3, 4), r(3, 4), attn_mask=r(4, 1, 1, 3, dtype=lib.bool))
    theirs = _error(call(torch))
    assert theirs is not None
    ours = _error(call(rg))
    assert ours is not None and ours[0] is theirs[0] and ours[1] == theirs[1]
    q = rg.randn(2, 3, requires_grad=True)  # and attention still works afterwards
    F.scaled_dot_product_attention(q, q, q).sum().backward()
    assert q.grad is not None


def test_sdpa_scale_default_is_inverse_sqrt_of_embedding():
    q, k, v = rg.randn(3, 4), rg.randn(5, 4), rg.randn(5, 2)
    assert rg.allclose(F.scaled_dot_product_attention(q, k, v),
                       F.scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(4)))


# -- MultiheadAttention ---------------------------------------------------------------------------------
def _copy_into(ours, theirs):
    ours.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


MHA_CONFIGS = [{}, {"batch_first": True}, {"kdim": 5, "vdim": 3}, {"add_bias_kv": True, "add_zero_attn": True},
               {"bias": False}, {"dropout": 0.0, "add_zero_attn": True, "batch_first": True}]


@pytest.mark.parametrize("config", MHA_CONFIGS)
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_multihead_attention_equals_torch_with_masks(config, need_weights, average):
    theirs = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64, **config)
    ours = nn.MultiheadAttention(8, 2, dtype=rg.float64, **config)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy_into(ours, theirs)
    n, length, source = 3, 4, 6
    shape = (lambda s, e: (n, s, e)) if config.get("batch_first") else (lambda s, e: (s, n, e))
    arrays = [_rng.standard_normal(shape(length, 8)), _rng.standard_normal(shape(source, config.get("kdim", 8))),
              _rng.standard_normal(shape(source, config.get("vdim", 8)))]
    padding = _rng.random((n, source)) < 0.3
    padding[:, 0] = False
    attn = _rng.random((length, source)) < 0.2
    attn[:, 0] = False
    args = {"need_weights": need_weights, "average_attn_weights": average}
    outs = []
    for lib, model in ((rg, ours), (torch, theirs)):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out, weights = model(*xs, key_padding_mask=lib.tensor(padding), attn_mask=lib.tensor(attn), **args)
        loss = (out * out).sum() + (0 if weights is None else (weights * weights).sum())
        loss.backward()
        outs.append((out, weights, xs, dict(model.named_parameters())))
    (o, w, xs, ps), (to, tw, txs, tps) = outs
    _close(o, to)
    assert (w is None) == (tw is None)
    if w is not None:
        _close(w, tw)
    for a, b in zip(xs, txs, strict=True):
        _close(a.grad, b.grad)
    for name, p in ps.items():
        _close(p.grad, tps[name].grad)


def test_multihead_attention_self_attention_with_causal_hint_equals_torch():
    theirs = torch.nn.MultiheadAttention(8, 4, batch_first=True, dtype=torch.float64)
    ours = nn.MultiheadAttention(8, 4, batch_first=True, dtype=rg.float64)
    _copy_into(ours, theirs)
    x = _rng.standard_normal((2, 5, 8))
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    o, _ = ours(rg.tensor(x), rg.tensor(x), rg.tensor(x), attn_mask=rg.tensor(mask), is_causal=True,
                need_weights=False)
    t = torch.tensor(x)
    to, _ = theirs(t, t, t, attn_mask=torch.tensor(mask), is_causal=True, need_weights=False)
    _close(o, to)
    o, w = ours(rg.tensor(x), rg.tensor(x), rg.tensor(x), attn_mask=rg.tensor(mask), is_causal=True)
    to, tw = theirs(t, t, t, attn_mask=torch.tensor(mask), is_causal=True)
    _close(o, to)
    _close(w, tw)
    y = rg.tensor(x)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        ours(y, y, y, is_causal=True)


def test_multihead_attention_unbatched_input_equals_torch():
    theirs = torch.nn.MultiheadAttention(6, 3, dtype=torch.float64)
    ours = nn.MultiheadAttention(6, 3, dtype=rg.float64)
    _copy_into(ours, theirs)
    q, k = _rng.standard_normal((4, 6)), _rng.standard_normal((5, 6))
    o, w = ours(rg.tensor(q), rg.tensor(k), rg.tensor(k))
    to, tw = theirs(torch.tensor(q), torch.tensor(k), torch.tensor(k))
    _close(o, to)
    _close(w, tw)


def test_multihead_attention_initialisation_follows_torch():
    m = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    assert tuple(m.in_proj_weight.shape) == (192, 64) and m.q_proj_weight is None
    bound = math.sqrt(6.0 / (64 + 192))  # xavier_uniform_ of the packed (3E, E) weight
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert m.in_proj_bias.abs().sum().item() == 0 and m.out_proj.bias.abs().sum().item() == 0
    assert tuple(m.bias_k.shape) == (1, 1, 64) and m.bias_k.abs().sum().item() > 0
    separate = nn.MultiheadAttention(8, 2, kdim=4, vdim=6)
    assert separate.in_proj_weight is None
    assert [tuple(p.shape) for p in (separate.q_proj_weight, separate.k_proj_weight, separate.v_proj_weight)] == \
        [(8, 8), (8, 4), (8, 6)]
    assert [n for n, _ in separate.named_parameters()] == \
        [n for n, _ in torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=6).named_parameters()]


def test_multihead_attention_constructor_errors_match_torch():
    for args in ((0, 2), (8, 3)):
        with pytest.raises(Exception) as theirs:
            torch.nn.MultiheadAttention(*args)
        with pytest.raises(theirs.type) as ours:
            nn.MultiheadAttention(*args)
        assert str(ours.value) == str(theirs.value)


def test_multihead_attention_forward_errors_match_torch():
    cases = [lambda lib, m: m(lib.ones(4, 2, 8), lib.ones(5, 2, 8), lib.ones(5, 2, 8), attn_mask=lib.ones(3, 5)),
             lambda lib, m: m(lib.ones(4, 2, 8), lib.ones(5, 2, 8), lib.ones(5, 8)),
             lambda lib, m: m(lib.ones(4, 2, 6), lib.ones(5, 2, 6), lib.ones(5, 2, 6)),
             lambda lib, m: m(lib.ones(4, 2, 8), lib.ones(5, 2, 8), lib.ones(5, 2, 8),
                              key_padding_mask=lib.ones(2, 4, dtype=lib.bool)),
             lambda lib, m: m(lib.ones(4, 2, 8), lib.ones(5, 2, 8), lib.ones(5, 2, 8),
                              attn_mask=lib.ones(4, 5, dtype=lib.int64))]
    for case in cases:
        theirs = _error(lambda: case(torch, torch.nn.MultiheadAttention(8, 2)))
        ours = _error(lambda: case(rg, nn.MultiheadAttention(8, 2)))
        assert theirs is not None
        assert ours == (theirs[0], theirs[1].replace("torch.Size", "retrograd.Size"))


def test_multihead_attention_warns_on_mismatched_mask_types_as_torch():
    m = nn.MultiheadAttention(4, 2)
    x = rg.randn(3, 1, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(x, x, x, key_padding_mask=rg.zeros(1, 3, dtype=rg.bool), attn_mask=rg.zeros(3, 3))
    assert any("Support for mismatched key_padding_mask and attn_mask is deprecated" in str(w.message)
               for w in caught)


def test_multihead_attention_dropout_only_in_training():
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = rg.randn(6, 2, 8)
    m.eval()
    a, wa = m(x, x, x)
    b, wb = m(x, x, x)
    assert rg.equal(a, b) and rg.allclose(wa.sum(-1), rg.ones(2, 6))
    m.train()
    rg.manual_seed(0)
    _, w = m(x, x, x, average_attn_weights=False)
    assert (w == 0).any().item()  # the returned weights are the ones after dropout, as PyTorch's
