"""Scaled dot-product attention as one op: ``softmax(q @ k^T * scale + mask) @ v``, with its own backward.

Note [Attention as one op]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``scaled_dot_product_attention`` records one node, not a chain of matmul, softmax, masked_fill
and dropout nodes. Its forward returns two outputs: the attention output ``O = (P * D) @ V`` and
the attention weights ``P = softmax(S)`` before dropout (``S = Q @ K^T * scale + mask``, ``D`` the
scaled dropout mask, or none). ``retrograd.nn.functional.scaled_dot_product_attention`` returns
``O``; ``multi_head_attention_forward`` also uses ``P`` (its ``need_weights`` result), which is why
``P`` is a differentiable output. From the gradients ``gO`` and ``gP``::

    dV = (P * D)^T @ gO
    dP = (gO @ V^T) * D + gP
    dS = P * (dP - rowsum(dP * P))        (softmax's backward)
    dQ = dS @ K * scale,  dK = dS^T @ Q * scale,  dmask = dS (a float mask)

The formula reads ``P`` as the saved ``result``, so under ``create_graph=True`` it is written in
retrograd ops on tensors whose history leads back through this very node, and higher derivatives
follow (as PyTorch's softmax backward uses its result). Without ``create_graph`` nothing is
recorded, and the same formula runs on the arrays directly (``_backward_arrays``), which saves
the dispatch of a dozen ops per node; ``gradcheck`` checks that form, ``gradgradcheck`` the other.

A row whose every key is masked out (``-inf`` everywhere) gets weights 0 and output 0, as
PyTorch's math kernel (its "safe softmax"), not NaN. With ``enable_gqa`` the key and value heads
(dim -3) are each used by ``Hq / Hkv`` consecutive query heads; their gradients are summed over
those heads. Leading dims broadcast as in matmul; the engine sums each gradient back to its
input's shape (``validate_outputs``).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode
from ._declarations import defop
from ._rows import fast_rows, row_sum, rows_apply, softmax_rows

__all__ = ["scaled_dot_product_attention", "causal_mask_array"]


def causal_mask_array(xp, length, source_length):
    """The (L, S) bool mask of causal attention: query i sees keys 0..i (top-left aligned), as PyTorch."""
    return xp.tril(xp.ones((length, source_length), dtype=bool))


_CAUSAL = {}  # (backend, L, S, dtype) -> the read-only additive causal mask


def _causal_scores(xp, length, source_length, dtype):
    """The (L, S) additive causal mask, 0 where a key is seen and -inf after it; made once per shape.

    Adding it is several times faster than writing -inf through a boolean ``where``.
    """
    key = (xp.__name__, length, source_length, dtype.str)
    add = _CAUSAL.get(key)
    if add is None:
        add = xp.where(causal_mask_array(xp, length, source_length), dtype.type(0), dtype.type(-xp.inf))
        if xp is np:
            add.flags.writeable = False
        if len(_CAUSAL) > 64:
            _CAUSAL.clear()
        _CAUSAL[key] = add
    return add


def _groups(query_shape, key_shape, enable_gqa):
    """How many query heads share one key/value head (1 without grouped-query attention)."""
    if not enable_gqa or len(query_shape) < 3 or len(key_shape) < 3:
        return 1
    return query_shape[-3] // key_shape[-3]


def _repeat_heads_array(xp, x, groups):
    if groups == 1:
        return x
    return xp.repeat(x, groups, axis=-3)


def _row_sum(xp, s):
    """The sum over the last axis, keeping it, as a product with a vector of ones (one BLAS call)."""
    return xp.matmul(s, xp.ones((s.shape[-1], 1), dtype=s.dtype))


def _attention(xp, tensors, dropout_mask=None, scale=1.0, is_causal=False, enable_gqa=False):
    q, k, v = tensors[0], tensors[1], tensors[2]
    mask = tensors[3] if len(tensors) > 3 else None
    groups = _groups(q.shape, k.shape, enable_gqa)
    k, v = _repeat_heads_array(xp, k, groups), _repeat_heads_array(xp, v, groups)
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))  # a fresh array: everything below works in place
    s *= s.dtype.type(scale)
    if is_causal:
        s += _causal_scores(xp, s.shape[-2], s.shape[-1], s.dtype)
    if mask is not None:
        s += xp.where(mask, s.dtype.type(0), s.dtype.type(-xp.inf)) if mask.dtype == bool else mask
    if xp is np and fast_rows(s):  # See Note [Row reductions as products]
        p = softmax_rows(s, safe=True)
    else:
        top = s.max(axis=-1, keepdims=True)
        dead = top == -xp.inf  # rows with every key masked out: weights 0 (See Note [Attention as one op])
        any_dead = bool(dead.any())
        if any_dead:
            top[dead] = 0
        s -= top
        p = xp.exp(s, out=s)
        total = _row_sum(xp, p)
        if any_dead:
            total[dead] = 1
        p /= total
    o = xp.matmul(p if dropout_mask is None else p * dropout_mask, v)
    return o.astype(q.dtype, copy=False), p.astype(q.dtype, copy=False)


def _sum_heads(x, groups):
    """A gradient for the repeated key/value heads summed back onto the heads themselves."""
    if groups == 1:
        return x
    shape = tuple(x.shape)
    return x.reshape(shape[:-3] + (shape[-3] // groups, groups) + shape[-2:]).sum(-3)


def _backward_arrays(grads, tensors, p, dropout_mask, scale, groups):
    """The formula of Note [Attention as one op] on arrays, for a backward pass that records nothing."""
    q, k, v = (t._data for t in tensors[:3])
    mask = tensors[3] if len(tensors) > 3 else None
    device = tensors[0]._device
    xp = np if device.type == "cpu" else device.backend.xp
    go, gp, p = grads[0]._data, grads[1]._data, p._data
    d = None if dropout_mask is None else dropout_mask._data
    k, v = _repeat_heads_array(xp, k, groups), _repeat_heads_array(xp, v, groups)
    dv = xp.matmul(xp.swapaxes(p if d is None else p * d, -1, -2), go)
    ds = xp.matmul(go, xp.swapaxes(v, -1, -2))  # dP, turned into dS in place
    if d is not None:
        ds *= d
    ds += gp
    if xp is np and fast_rows(ds):  # See Note [Row reductions as products]
        rows_apply(np.subtract, ds, row_sum(ds * p), ds)
    else:
        ds -= _row_sum(xp, ds * p)
    ds *= p
    dq = xp.matmul(ds, k)
    dq *= dq.dtype.type(scale)
    dk = xp.matmul(xp.swapaxes(ds, -1, -2), q)
    dk *= dk.dtype.type(scale)
    out = [Tensor._make(dq, device), _sum_heads(Tensor._make(dk, device), groups),
           _sum_heads(Tensor._make(dv, device), groups)]
    if mask is not None:
        out.append(Tensor._make(ds.astype(mask._data.dtype, copy=False), device)
                   if mask.dtype.is_floating_point else None)
    return out


def _attention_backward(grads, tensors, result, dropout_mask, scale, enable_gqa):
    q, k, v = tensors[0], tensors[1], tensors[2]
    groups = _groups(tuple(q.shape), tuple(k.shape), enable_gqa)
    p = result[1]
    if not grad_mode.is_grad_enabled():
        return _backward_arrays(grads, tensors, p, dropout_mask, scale, groups)
    go, gp = grads[0], grads[1]
    if groups != 1:
        k = k.unsqueeze(-3).expand(tuple(k.shape[:-2]) + (groups,) + tuple(k.shape[-2:])).flatten(-4, -3)
        v = v.unsqueeze(-3).expand(tuple(v.shape[:-2]) + (groups,) + tuple(v.shape[-2:])).flatten(-4, -3)
    pd = p if dropout_mask is None else p * dropout_mask
    dv = pd.mT.matmul(go)
    dp = go.matmul(v.mT)
    if dropout_mask is not None:
        dp = dp * dropout_mask
    dp = dp + gp
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    out = [ds.matmul(k) * scale, _sum_heads(ds.mT.matmul(q) * scale, groups), _sum_heads(dv, groups)]
    if len(tensors) > 3:
        out.append(ds if tensors[3].dtype.is_floating_point else None)
    return out


# See Note [Attention as one op]. ``tensors`` is [query, key, value] or [query, key, value, attn_mask].
scaled_dot_product_attention = defop(
    "scaled_dot_product_attention", _attention, public=False, multi_output=True, lists=("tensors",),
    tensor_args=("tensors", "dropout_mask"), node_name="ScaledDotProductAttention",
    tensors=_attention_backward)

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import defjvp  # noqa: E402


def _repeat_heads(x, groups):
    if groups == 1:
        return x
    return x.repeat_interleave(groups, -3)


def _attention_jvp(tensors_t, tensors, dropout_mask, scale, enable_gqa, result):
    """``S_t = (Q_t K^T + Q K_t^T) scale (+ mask_t)``, ``P_t = P (S_t - rowsum(P S_t))``, ``O_t = (P_t D) V + (P D)
    V_t`` with ``D`` the dropout mask; a fully masked row has P = 0, so its tangents are 0 too."""
    q, k, v = tensors[:3]
    q_t, k_t, v_t = tensors_t[:3]
    groups = _groups(tuple(q.shape), tuple(k.shape), enable_gqa)
    k, k_t, v, v_t = (_repeat_heads(x, groups) for x in (k, k_t, v, v_t))
    p = result[1]
    s_t = (q_t.matmul(k.mT) + q.matmul(k_t.mT)) * scale
    if len(tensors) > 3 and tensors[3].is_floating_point():
        s_t = s_t + tensors_t[3]
    p_t = p * (s_t - (p * s_t).sum(-1, True))
    if dropout_mask is None:
        return p_t.matmul(v) + p.matmul(v_t), p_t
    return (p_t * dropout_mask).matmul(v) + (p * dropout_mask).matmul(v_t), p_t


defjvp(_attention_jvp, "scaled_dot_product_attention")
