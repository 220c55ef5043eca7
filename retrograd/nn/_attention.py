"""Attention for ``retrograd.nn.functional``: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both record the attention itself as one node (Note [Attention as one op] in ops/attention.py);
this module checks arguments the way PyTorch does and builds the masks and the projections
around it from registered ops.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _creation
from .._dtype import type_meta_name
from .._random import default_generator as _default_generator
from ..ops import addmm as _addmm, attention as _attention, cat as _cat

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

def _type_name(t):
    """The C++ type name PyTorch's attention checks print (a typeid name, not a ScalarType name)."""
    return type_meta_name(t._data.dtype)


def _broadcast_shape(a, b):
    """The broadcast of shapes ``a`` and ``b``; a RuntimeError with PyTorch's message where they do not broadcast."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for d, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {d}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    """PyTorch's checks of scaled_dot_product_attention; returns the (..., L, S) shape of the weights."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_type_name(query)} key.dtype: {_type_name(key)} and value.dtype: {_type_name(value)} "
                           f"instead.")
    if attn_mask is not None:
        if not (attn_mask.dtype.name in ("bool", "float32") or attn_mask.dtype == query.dtype):
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_type_name(attn_mask)} and  query.dtype: {_type_name(query)} "
                               f"instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    q_shape, k_shape, v_shape = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if enable_gqa and len(q_shape) >= 3 and len(k_shape) >= 3 and q_shape[-3] != k_shape[-3]:
        if q_shape[-3] % k_shape[-3] or k_shape[-3] != v_shape[-3]:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        k_shape = k_shape[:-3] + (q_shape[-3],) + k_shape[-2:]
        v_shape = v_shape[:-3] + (q_shape[-3],) + v_shape[-2:]
    batch = _broadcast_shape(q_shape[:-2], k_shape[:-2])
    flat = math.prod(batch)
    if q_shape[-1] != k_shape[-1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{flat}, {q_shape[-1]}] "
                           f"but got: [{flat}, {k_shape[-1]}].")
    _broadcast_shape(batch, v_shape[:-2])
    if v_shape[-2] != k_shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{flat}, {k_shape[-2]}] "
                           f"but got: [{flat}, {v_shape[-2]}].")
    weights = batch + (q_shape[-2], k_shape[-2])  # the scores' shape (value's batch dims broadcast only the output)
    if attn_mask is not None:
        full = _broadcast_shape(weights, tuple(attn_mask.shape))
        if full != weights:
            raise RuntimeError(f"output with shape {list(weights)} doesn't match the broadcast shape {list(full)}")
    return weights


def _dropout_mask(shape, p, like):
    """The scaled keep-mask of dropout with probability ``p`` (0 or 1 / (1 - p)), from the default generator."""
    dtype = like._data.dtype
    if p == 1.0:
        return _creation.tensor(np.zeros(shape, dtype=dtype), device=like.device)
    scale = np.asarray(1.0 / (1.0 - p), dtype=dtype)
    return _creation.drawn(lambda size: [(_default_generator.np.random(size) >= p) * scale], shape, like.dtype,
                           like.device)[0]


def _attend(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """The attention op's two outputs (output, weights before dropout) and the dropout mask (or None)."""
    weights_shape = _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    drop = _dropout_mask(weights_shape, dropout_p, query) if dropout_p > 0.0 else None
    tensors = [query, key, value] if attn_mask is None else [query, key, value, attn_mask]
    out, weights = _attention.scaled_dot_product_attention(tensors, drop, float(scale), bool(is_causal),
                                                           bool(enable_gqa))
    return out, weights, drop


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value``, with dropout on the weights, as one autograd node.

    Args:
        query: (..., L, E).
        key: (..., S, E).
        value: (..., S, Ev). Leading dims broadcast.
        attn_mask: optional, broadcastable to (..., L, S): a bool mask (True: take part in attention) or a
            float mask added to the scores.
        dropout_p: dropout probability on the attention weights (from the default generator).
        is_causal: mask out keys after each query (a lower-triangular mask, top-left aligned); no
            ``attn_mask`` then.
        scale: the scores' factor, default ``1 / sqrt(E)``.
        enable_gqa: grouped-query attention: key and value may have fewer heads (dim -3) than query.

    Returns:
        A tensor of shape (..., L, Ev). A query whose every key is masked out gets zeros.

    Raises:
        RuntimeError: on mismatched shapes or dtypes, or a mask with ``is_causal``, with PyTorch's messages.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> q = k = v = rg.ones(2, 3, 4)
        >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
        retrograd.Size([2, 3, 4])
    """
    return _attend(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)[0]


# -- multi-head attention -------------------------------------------------------------------------------
def _linear(input, weight, bias):
    """``input @ weight.T + bias`` as one matrix product over the flattened leading dims (PyTorch's addmm):
    its backward is two products, without the batched weight gradient summed over the batch."""
    if input.dim() > 2:
        lead = tuple(input.shape[:-1])
        return _linear(input.reshape(-1, input.shape[-1]), weight, bias).reshape(lead + (weight.shape[0],))
    if bias is not None:
        return _addmm(bias, input, weight.t())
    return input.matmul(weight.t())


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's shape checks of multi-head attention; returns whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         f"tensor")


def _canonical_mask(mask, mask_name, other_dtype, other_name, target_dtype):
    """A bool mask as an additive float one (-inf where True), a float mask as it is, as PyTorch's MHA."""
    if mask is None:
        return None
    if mask.dtype.name != "bool" and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if other_dtype is not None and mask.dtype != other_dtype:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      f"instead.", stacklevel=3)
    if mask.dtype.is_floating_point:
        return mask
    return _creation.zeros(tuple(mask.shape), dtype=target_dtype, device=mask.device).masked_fill(mask, float("-inf"))


def _in_projection_packed(q, k, v, w, b):
    """The query, key and value projections by one packed (3E, E) weight: one product where q is k is v."""
    e = q.shape[-1]
    if k is v:
        if q is k:
            return _linear(q, w, b).chunk(3, -1)
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        return (_linear(q, w_q, b_q),) + tuple(_linear(k, w_kv, b_kv).chunk(2, -1))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _pad_last(mask):
    """``mask`` with one more column of zeros (the added key of bias_kv or add_zero_attn)."""
    zeros = _creation.zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype, device=mask.device)
    return _cat([mask, zeros], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention of ``nn.MultiheadAttention``, on (L, N, E) inputs or unbatched (L, E), as PyTorch's.

    Args: as ``torch.nn.functional.multi_head_attention_forward``: the projections (packed
    ``in_proj_weight`` or, with ``use_separate_proj_weight``, ``q/k/v_proj_weight``), the biases added
    to key and value, ``add_zero_attn``, dropout on the weights, the output projection, and the masks
    (``key_padding_mask`` (N, S), ``attn_mask`` (L, S) or (N * num_heads, L, S); bool: True is masked out).

    Returns:
        ``(attn_output, attn_weights)``: (L, N, E), and with ``need_weights`` the weights (N, L, S),
        averaged over heads with ``average_attn_weights`` else (N, num_heads, L, S); otherwise None.

    Raises:
        AssertionError, RuntimeError: on mismatched shapes or masks, with PyTorch's messages.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint says the mask is causal: the attention op builds it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (_linear(query, q_proj_weight, b_q), _linear(key, k_proj_weight, b_k),
                   _linear(value, v_proj_weight, b_v))
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _cat([k, bias_k.repeat(1, bsz, 1)])
        v = _cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz * num_heads, head_dim, "static_k")
    v = _heads(v, static_v, bsz * num_heads, head_dim, "static_v")
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = _cat([k, _creation.zeros(zeros, dtype=k.dtype, device=k.device)], 1)
        v = _cat([v, _creation.zeros(zeros, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights and is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    if attn_mask is not None:
        is_causal = False  # the hint's mask is at hand: attend with it, as PyTorch does here
    # One attention node for both of PyTorch's paths (weights or not); See Note [Attention as one op]
    out, weights, drop = _attend(q, k, v, attn_mask, dropout_p, is_causal, None, False)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    if drop is not None:
        weights = weights * drop
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights


def _heads(x, static, batch_heads, head_dim, name):
    """Key or value as (N * num_heads, S, head_dim): ``x`` split into heads, or the given ``static`` one."""
    if static is None:
        return x.reshape(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static
