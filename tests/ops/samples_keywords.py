"""Samples that pass every argument by keyword: PyTorch's argument names must work as they are.

The PyTorch comparison calls the same lambda on ``torch``, so a misnamed parameter fails on
one side or the other.
"""
import numpy as np

from samples import A, B, I, P, Sample, add

_i = np.array([[0, 1, 1], [1, 0, 0]])
add("add", Sample(lambda m, x, y: m.add(input=x, other=y, alpha=2), A(2, 3), A(3), note="keywords"))
add("sub", Sample(lambda m, x, y: m.sub(input=x, other=y, alpha=2), A(2, 3), A(3), note="keywords"))
add("mul", Sample(lambda m, x, y: m.mul(input=x, other=y), A(2, 3), A(3), note="keywords"))
add("div", Sample(lambda m, x, y: m.div(input=x, other=y), A(2, 3), P(3), note="keywords"))
add("div_rounding", Sample(lambda m, x, y: m.div(input=x, other=y, rounding_mode="floor"), A(3), P(3),
                          note="keywords"))
add("pow",
    Sample(lambda m, x: m.pow(input=x, exponent=2), A(3), note="keywords"),
    Sample(lambda m, x: m.pow(2., exponent=x), A(3), note="keyword exponent, scalar base"))
add("clamp", Sample(lambda m, x: m.clamp(input=x, min=-0.5, max=0.5), A(2, 3), note="keywords"))
add("where", Sample(lambda m, c, x, y: m.where(condition=c, input=x, other=y), B(3), A(3), A(3), note="keywords"))
add("maximum", Sample(lambda m, x, y: m.maximum(input=x, other=y), A(3), A(3), note="keywords"))
add("sum", Sample(lambda m, x: m.sum(input=x, dim=(0, 1), keepdim=True), A(2, 3), note="keywords"))
add("mean", Sample(lambda m, x: m.mean(input=x, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("amax", Sample(lambda m, x: m.amax(input=x, dim=(0, 1), keepdim=True), A(2, 3), note="keywords"))
add("amin", Sample(lambda m, x: m.amin(input=x, dim=0, keepdim=False), A(2, 3), note="keywords"))
add("max_dim", Sample(lambda m, x: m.max(input=x, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("min_dim", Sample(lambda m, x: m.min(input=x, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("argmax", Sample(lambda m, x: m.argmax(input=x, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("argmin", Sample(lambda m, x: m.argmin(input=x, dim=1, keepdim=False), A(2, 3), note="keywords"))
add("prod", Sample(lambda m, x: m.prod(input=x, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("cumsum", Sample(lambda m, x: m.cumsum(input=x, dim=1), A(2, 3), note="keywords"))
add("logsumexp", Sample(lambda m, x: m.logsumexp(input=x, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("softmax", Sample(lambda m, x: m.softmax(input=x, dim=1), A(2, 3), note="keywords"))
add("log_softmax", Sample(lambda m, x: m.log_softmax(input=x, dim=1, dtype=m.float64), A(2, 3), note="keywords"))
add("norm", Sample(lambda m, x: m.norm(input=x, p=3, dim=1, keepdim=True), A(2, 3), note="keywords"))
add("var", Sample(lambda m, x: m.var(input=x, dim=1, correction=0, keepdim=True), A(2, 3), note="keywords"),
    Sample(lambda m, x: m.var(x, dim=1, unbiased=False), A(2, 3), note="unbiased keyword"))
add("std", Sample(lambda m, x: m.std(input=x, dim=(0, 1), correction=1, keepdim=False), A(2, 3), note="keywords"))
add("matmul", Sample(lambda m, x, y: m.matmul(input=x, other=y), A(2, 3), A(3), note="keywords"))
add("mm", Sample(lambda m, x, y: m.mm(input=x, mat2=y), A(2, 3), A(3, 2), note="keywords"))
add("bmm", Sample(lambda m, x, y: m.bmm(input=x, mat2=y), A(1, 2, 3), A(1, 3, 2), note="keywords"))
add("outer", Sample(lambda m, x, y: m.outer(input=x, vec2=y), A(2), A(3), note="keywords"))
add("trace", Sample(lambda m, x: m.trace(input=x), A(2, 2), note="keywords"))
add("reshape", Sample(lambda m, x: m.reshape(input=x, shape=(3, 2)), A(2, 3), note="keywords"))
add("flatten", Sample(lambda m, x: m.flatten(input=x, start_dim=1, end_dim=2), A(2, 3, 2), note="keywords"))
add("transpose", Sample(lambda m, x: m.transpose(input=x, dim0=0, dim1=1), A(2, 3), note="keywords"))
add("permute", Sample(lambda m, x: m.permute(input=x, dims=(1, 0)), A(2, 3), note="keywords"))
add("unsqueeze", Sample(lambda m, x: m.unsqueeze(input=x, dim=0), A(2, 3), note="keywords"))
add("squeeze", Sample(lambda m, x: m.squeeze(input=x, dim=0), A(1, 3), note="keywords"))
add("cat", Sample(lambda m, x, y: m.cat(tensors=[x, y], dim=1), A(2, 1), A(2, 2), note="keywords"))
add("stack", Sample(lambda m, x, y: m.stack(tensors=[x, y], dim=1), A(2), A(2), note="keywords"))
add("split", Sample(lambda m, x: m.split(tensor=x, split_size_or_sections=[1, 2], dim=1), A(2, 3),
                    note="keywords"),
    Sample(lambda m, x: x.split(split_size=2, dim=0), A(3, 2), note="method keywords"))
add("chunk", Sample(lambda m, x: m.chunk(input=x, chunks=2, dim=1), A(2, 4), note="keywords"))
add("gather", Sample(lambda m, x, i: m.gather(input=x, dim=1, index=i), A(2, 3), _i, note="keywords"))
add("scatter_add", Sample(lambda m, x, i, s: m.scatter_add(input=x, dim=1, index=i, src=s), A(2, 3), _i, A(2, 3),
                          note="keywords"))
add("index_select", Sample(lambda m, x, i: m.index_select(input=x, dim=1, index=i), A(2, 3), np.array([2, 0]),
                           note="keywords"))
add("masked_fill", Sample(lambda m, x, b: m.masked_fill(input=x, mask=b, value=0.5), A(2, 3), B(3),
                          note="keywords"))
add("flip", Sample(lambda m, x: m.flip(input=x, dims=(0, 1)), A(2, 3), note="keywords"))
add("roll", Sample(lambda m, x: m.roll(input=x, shifts=1, dims=1), A(2, 3), note="keywords"))
add("tril", Sample(lambda m, x: m.tril(input=x, diagonal=1), A(3, 3), note="keywords"))
add("triu", Sample(lambda m, x: m.triu(input=x, diagonal=-1), A(3, 3), note="keywords"))
add("diagonal", Sample(lambda m, x: m.diagonal(input=x, offset=1, dim1=1, dim2=0), A(3, 3), note="keywords"))
add("expand", Sample(lambda m, x: m.broadcast_to(input=x, size=(2, 3)), A(3), note="keywords"),
    Sample(lambda m, x, y: x.expand_as(other=y), A(3), A(2, 3), note="keywords"))
add("einsum", Sample(lambda m, x, y: m.einsum("ij,jk->ik", x, y), A(2, 3), A(3, 2), note="positional operands"))
