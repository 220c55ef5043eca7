"""Writes retrograd/_aten_ops.txt, PyTorch's op names (``torch.ops.aten``), from the installed torch.

Run it after changing the PyTorch version the project follows; tests/autograd/test_checkpoint_selective.py
holds the file against torch. See Note [PyTorch's op names] in retrograd/_ops.py.
"""
import collections
import pathlib

import torch


def aten_names() -> dict:
    """Each op name of ``torch.ops.aten`` and its overload names, in the order ``overloads()`` gives them."""
    names = collections.defaultdict(list)
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::"):
            names[schema.name[len("aten::"):]].append(schema.overload_name or "default")
    return dict(sorted(names.items()))


def main():
    path = pathlib.Path(__file__).resolve().parents[1] / "retrograd" / "_aten_ops.txt"
    lines = [f"# PyTorch {torch.__version__.split('+')[0]}'s op names (torch.ops.aten) and their overloads, one op a "
             "line; written by scripts/write_aten_names.py"]
    lines += [" ".join([name, *overloads]) for name, overloads in aten_names().items()]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
