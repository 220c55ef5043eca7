"""Named tuples returned by ops with several results, as ``torch.return_types``."""
from collections import namedtuple

max = namedtuple("max", ["values", "indices"])  # noqa: A001
min = namedtuple("min", ["values", "indices"])  # noqa: A001
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
var_mean = namedtuple("var_mean", ["var", "mean"])
std_mean = namedtuple("std_mean", ["std", "mean"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
cummax = namedtuple("cummax", ["values", "indices"])
cummin = namedtuple("cummin", ["values", "indices"])
aminmax = namedtuple("aminmax", ["min", "max"])
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
triangular_solve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
histogram = namedtuple("histogram", ["hist", "bin_edges"])
