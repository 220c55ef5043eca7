"""Samples of public composite functions (retrograd/ops/composite.py), swept like the registered ops."""
import numpy as np

from samples import A, Sample, add, nc

add("var",
    Sample(lambda m, x: m.var(x), A(2, 3), ref=lambda x: np.var(x, ddof=1)),
    Sample(lambda m, x: x.var(1), A(2, 3), ref=lambda x: np.var(x, 1, ddof=1)),
    Sample(lambda m, x: x.var((0, 2), keepdim=True), A(2, 3, 2), ref=lambda x: np.var(x, (0, 2), ddof=1,
                                                                                        keepdims=True)),
    Sample(lambda m, x: x.var(-1, unbiased=False), nc(A(2, 3)), ref=lambda x: np.var(x, -1)),
    Sample(lambda m, x: m.var(x, 1, correction=0), A(2, 3), ref=lambda x: np.var(x, 1)),
    Sample(lambda m, x: m.var(x, False), A(4), ref=lambda x: np.var(x), note="var(input, unbiased)"),
    Sample(lambda m, x: m.var(x, 0, correction=2), A(4, 2), ref=lambda x: np.var(x, 0, ddof=2)))
add("std",
    Sample(lambda m, x: m.std(x), A(2, 3), ref=lambda x: np.std(x, ddof=1)),
    Sample(lambda m, x: x.std((0, 1), keepdim=True), A(2, 3), ref=lambda x: np.std(x, (0, 1), ddof=1,
                                                                                     keepdims=True)),
    Sample(lambda m, x: x.std(0, correction=0), nc(A(3, 2)), ref=lambda x: np.std(x, 0)))
add("var_mean",
    Sample(lambda m, x: m.var_mean(x, 1), A(2, 3), ref=lambda x: (np.var(x, 1, ddof=1), np.mean(x, 1))))
add("std_mean",
    Sample(lambda m, x: m.std_mean(x, (0, 1), keepdim=True), A(2, 3),
           ref=lambda x: (np.std(x, (0, 1), ddof=1, keepdims=True), np.mean(x, (0, 1), keepdims=True))))
add("square", Sample(lambda m, x: m.square(x), A(2, 3), ref=np.square))
add("chunk",
    Sample(lambda m, x: m.chunk(x, 3, 1), A(2, 5), ref=lambda x: (x[:, :2], x[:, 2:4], x[:, 4:])),
    Sample(lambda m, x: x.chunk(4), A(6), ref=lambda x: (x[:2], x[2:4], x[4:]), note="fewer chunks than asked"))
