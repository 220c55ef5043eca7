"""The errors that name a dtype, against PyTorch's: its kernels print a ScalarType (``Long``), a C++ type
(``long int``) or a legacy tensor type (``torch.LongTensor``) depending on the check, and retrograd takes each
from the one table of ``retrograd._dtype`` (``scalar_type_name``, ``type_meta_name``, ``tensor_type_name``).
Each call runs with retrograd and torch, for every pair of dtypes; both must succeed or raise the same error
type and first sentence."""
import re
import warnings

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _t(lib, dt, *shape):
    return lib.ones(*shape, dtype=getattr(lib, dt))


CALLS = {
    "put_": lambda lib, a, b: _t(lib, a, 3).put_(lib.tensor([0]), _t(lib, b, 1)),
    "take index": lambda lib, a, b: lib.take(_t(lib, b, 3), _t(lib, a, 1)),
    "index_reduce": lambda lib, a, b: lib.index_reduce(_t(lib, a, 3), 0, lib.tensor([0]), _t(lib, b, 1), "amax"),
    "index_reduce index": lambda lib, a, b: lib.index_reduce(_t(lib, b, 3), 0, _t(lib, a, 1), _t(lib, b, 1),
                                                             "amax"),
    "index_reduce 2-d index": lambda lib, a, b: lib.index_reduce(_t(lib, b, 3), 0, _t(lib, a, 1, 1),
                                                                 _t(lib, b, 1), "amax"),
    "gather index": lambda lib, a, b: lib.gather(_t(lib, b, 3), 0, _t(lib, a, 1)),
    "mm": lambda lib, a, b: lib.mm(_t(lib, a, 2, 2), _t(lib, b, 2, 2)),
    "mm of one dtype": lambda lib, a, b: lib.mm(_t(lib, a, 2, 2), _t(lib, a, 2, 2)),
    "bmm": lambda lib, a, b: lib.bmm(_t(lib, a, 1, 2, 2), _t(lib, b, 1, 2, 2)),
    "mv": lambda lib, a, b: lib.mv(_t(lib, a, 2, 2), _t(lib, b, 2)),
    "dot": lambda lib, a, b: lib.dot(_t(lib, a, 2), _t(lib, b, 2)),
    "addmm": lambda lib, a, b: lib.addmm(_t(lib, a, 2, 2), _t(lib, b, 2, 2), _t(lib, b, 2, 2)),
    "addmv": lambda lib, a, b: lib.addmv(_t(lib, a, 2), _t(lib, b, 2, 2), _t(lib, b, 2)),
    "baddbmm": lambda lib, a, b: lib.baddbmm(_t(lib, a, 1, 2, 2), _t(lib, b, 1, 2, 2), _t(lib, b, 1, 2, 2)),
    "set_": lambda lib, a, b: _t(lib, a, 2).set_(_t(lib, b, 2)),
    "attention": lambda lib, a, b: lib.nn.functional.scaled_dot_product_attention(
        _t(lib, a, 1, 2, 2), _t(lib, b, 1, 2, 2), _t(lib, a, 1, 2, 2)) if a != b else None,
    "attention mask": lambda lib, a, b: lib.nn.functional.scaled_dot_product_attention(
        _t(lib, "float64", 1, 2, 2), _t(lib, "float64", 1, 2, 2), _t(lib, "float64", 1, 2, 2),
        attn_mask=_t(lib, a, 2, 2)),
    "masked_fill mask": lambda lib, a, b: _t(lib, b, 2).masked_fill(_t(lib, a, 2), 1),
    "masked_scatter mask": lambda lib, a, b: _t(lib, b, 2).masked_scatter(_t(lib, a, 2), _t(lib, b, 2)),
    "embedding indices": lambda lib, a, b: lib.nn.functional.embedding(_t(lib, a, 2), _t(lib, b, 3, 2)),
    "nll_loss target": lambda lib, a, b: lib.nn.functional.nll_loss(_t(lib, "float64", 2, 3), _t(lib, a, 2)),
    "cross_entropy target": lambda lib, a, b: lib.nn.functional.cross_entropy(_t(lib, "float32", 2, 3),
                                                                              _t(lib, a, 2)),
    "lerp": lambda lib, a, b: lib.lerp(_t(lib, a, 2), _t(lib, b, 2), 0.5),
    "lerp weight": lambda lib, a, b: lib.lerp(_t(lib, a, 2), _t(lib, a, 2), _t(lib, b, 2)),
}


def _outcome(lib, call, a, b):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # index_reduce is in beta; masked_scatter's uint8 mask is deprecated
            CALLS[call](lib, a, b)
        return "ok"
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return type(e).__name__, re.split(r"(?<=[a-z]\.)\s", str(e).replace("torch.", "retrograd."), maxsplit=1)[0]


@pytest.mark.parametrize("call", sorted(CALLS))
def test_errors_name_dtypes_as_pytorchs(call):
    pairs = [(a, b) for a in DTYPES for b in ("float32", "float64", "int64")]
    assert [_outcome(rg, call, a, b) for a, b in pairs] == [_outcome(torch, call, a, b) for a, b in pairs]
