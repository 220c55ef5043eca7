"""Writes retrograd/ops/_mkldnn_ops.py: what PyTorch does with each of retrograd's ops on MKL-DNN tensors.

Every op of the op sweep's samples (tests/ops/samples*.py) is called through torch with its floating inputs
as MKL-DNN float32 tensors (its integer and bool inputs as they are); a sample whose floating inputs cannot
be MKL-DNN (0-d, empty) is left out. Per op, the verdict is ``("ok", layout)`` where some sample ran, with
the layout of that call's tensor results (``"mkldnn"`` where one of them is MKL-DNN, else ``"strided"``),
and the error of the same call with only its first floating input MKL-DNN where it raises one, else the error of its first sample: its type and first sentence (``("NotImplementedError", "Could not run
'aten::<op>.<overload>' with arguments from the 'MkldnnCPU' backend.")`` for an op with no MkldnnCPU kernel). A few Tensor methods that are not ops of the table are probed
too (``EXTRA``). Run it after changing the PyTorch version the project follows;
tests/test_mkldnn_layout.py holds a sample of the table against torch. See Note [The MKL-DNN layout] in
retrograd/ops/mkldnn.py.
"""
import pathlib
import re
import sys
import warnings

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "ops")]  # the samples import retrograd (private ops)
import samples as _samples  # noqa: E402

# Tensor methods that are not ops of the table (no samples), each probed on one MKL-DNN tensor.
EXTRA = {
    "detach": lambda x: x.detach(),
    "detach_": lambda x: x.detach().detach_(),
    "requires_grad_": lambda x: x.requires_grad_(),
}


def mkldnn_inputs(sample, lib=torch, mixed=False):
    """The sample's inputs for ``lib`` (torch or retrograd), floating ones MKL-DNN float32 and requiring grad
    (``Const`` ones not), as the op sweep gives them; None where one cannot be MKL-DNN. ``mixed``: only the first
    floating input MKL-DNN, the others strided (None where there is one floating input only)."""
    out = []
    any_mkldnn = False
    if mixed and sum(np.asarray(getattr(i, "array", i)).dtype.kind == "f" for i in sample.inputs) < 2:
        return None
    for inp in sample.inputs:
        array = inp.array if isinstance(inp, _samples.Const) else np.asarray(inp)
        if array.dtype.kind != "f":
            out.append(lib.from_numpy(array.copy()))
            continue
        if array.ndim == 0 or array.size == 0:
            return None
        t = lib.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
        t = t if mixed and any_mkldnn else t.to_mkldnn()
        out.append(t if isinstance(inp, _samples.Const) else t.requires_grad_())
        any_mkldnn = True
    return out if any_mkldnn else None


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    return [value]


def outcome(call, args, lib=torch):
    """What ``call(*args)`` does in ``lib``: ("ok", layout of its results) or (error type, what it says); None
    where it gave back one of ``args``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(*args)
    except Exception as e:  # noqa: BLE001 - every outcome is recorded
        return (type(e).__name__, re.split(r"(?<=\.)\s", str(e).split("\n")[0], maxsplit=1)[0])
    tensors = [t for t in _flat(result) if isinstance(t, lib.Tensor)]
    if any(t is a for t in tensors for a in args):
        return None  # the call gave back an input (x.float() of a float32 x): it says nothing of the op
    return ("ok", "mkldnn" if any(t.layout == lib._mkldnn for t in tensors) else "strided")


def verdict(name, lib=torch):
    """The table's entry for the op (or EXTRA method) ``name``, or None where no sample can have MKL-DNN inputs;
    with ``lib`` retrograd, what retrograd does on the same calls."""
    if name in EXTRA:
        return outcome(EXTRA[name], [lib.ones(2, 3).to_mkldnn()], lib)
    first = None
    for sample in _samples.SAMPLES[name]:
        args = mkldnn_inputs(sample, lib)
        if args is None or not sample.torch:
            continue
        call = sample.torch_call if lib is torch else sample.call
        seen = outcome(lambda *a: call(lib, *a), args, lib)
        if seen is None:
            continue
        if seen[0] == "ok":
            mixed = mkldnn_inputs(sample, lib, mixed=True)
            refused = mixed and outcome(lambda *a: call(lib, *a), mixed, lib)
            return seen + (refused,) if refused and refused[0] != "ok" else seen
        first = first or seen
    return first


def table():
    entries = {}
    for name in sorted(set(_samples.SAMPLES) | set(EXTRA)):
        seen = verdict(name)
        if seen is not None:
            entries[name] = seen
    return entries


def main():
    torch.manual_seed(0)
    lines = [f'"""What PyTorch {torch.__version__.split("+")[0]} does with each op on MKL-DNN float32 tensors (Note [The '
             'MKL-DNN layout] in ops/mkldnn.py):',
             "written by scripts/mkldnn_op_table.py, do not edit. ``name: (\"ok\", layout of the results[, error with "
             "strided tensors among the inputs])``",
             "or ``(error type, message)``;",
             'an op not listed runs as on a strided tensor."""',
             "MKLDNN_OPS = {"]
    lines += [f"    {name!r}: {entry!r}," for name, entry in table().items()]
    lines.append("}")
    (ROOT / "retrograd" / "ops" / "_mkldnn_ops.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
