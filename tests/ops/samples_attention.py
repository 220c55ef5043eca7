"""Samples of scaled dot-product attention (retrograd/ops/attention.py); format in samples.py.

The calls go through ``m.nn.functional.scaled_dot_product_attention``, the API both libraries share.
"""
import numpy as np

from samples import A, B, Const, Sample, add


def _sdpa(m, *args, **kwargs):
    return m.nn.functional.scaled_dot_product_attention(*args, **kwargs)


def _keep_one(mask):
    """A bool mask with at least one key per query left in."""
    mask = mask.copy()
    mask[..., 0] = True
    return mask


add("scaled_dot_product_attention",
    Sample(lambda m, q, k, v: _sdpa(m, q, k, v), A(2, 3, 4), A(2, 5, 4), A(2, 5, 3)),
    Sample(lambda m, q, k, v: _sdpa(m, q, k, v, is_causal=True), A(1, 2, 4, 3), A(1, 2, 4, 3), A(1, 2, 4, 2),
           note="causal"),
    Sample(lambda m, q, k, v, mask: _sdpa(m, q, k, v, attn_mask=mask), A(2, 3, 4), A(2, 4, 4), A(2, 4, 2),
           _keep_one(B(3, 4)), note="bool mask"),
    Sample(lambda m, q, k, v, mask: _sdpa(m, q, k, v, attn_mask=mask), A(2, 3, 4), A(2, 4, 4), A(2, 4, 2),
           A(2, 1, 4), note="float mask, broadcast, differentiable"),
    Sample(lambda m, q, k, v, mask: _sdpa(m, q, k, v, attn_mask=mask, scale=0.5), A(3, 2), A(4, 2), A(4, 3),
           Const(A(3, 4)), note="2-d, constant float mask, scale"),
    Sample(lambda m, q, k, v: _sdpa(m, q, k, v), A(2, 1, 3, 2), A(1, 2, 4, 2), A(2, 4, 2),
           note="broadcast leading dims"),
    Sample(lambda m, q, k, v: _sdpa(m, q, k, v, enable_gqa=True), A(1, 4, 2, 3), A(1, 2, 3, 3), A(1, 2, 3, 2),
           note="grouped-query attention"),
    Sample(lambda m, q, k, v, mask: _sdpa(m, q, k, v, attn_mask=mask), A(3, 2), A(3, 2), A(3, 2),
           np.array([[True, False, True], [False, False, False], [True, True, True]]),
           note="a fully masked row gives zeros"))
