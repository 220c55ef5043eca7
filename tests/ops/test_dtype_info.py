"""finfo, iinfo, bfloat16, result_type, can_cast and promote_types against PyTorch's."""
from __future__ import annotations

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
ALL = FLOATS + INTS + ["bool"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_has_every_attribute_of_pytorch_s(name):
    ours, theirs = rg.finfo(getattr(rg, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert str(ours) == str(theirs)


def test_finfo_without_a_type_describes_the_default_dtype():
    assert rg.finfo().dtype == torch.finfo().dtype == "float32"


@pytest.mark.parametrize("name", INTS)
def test_iinfo_has_every_attribute_of_pytorch_s(name):
    ours, theirs = rg.iinfo(getattr(rg, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("call", [lambda m: m.finfo(m.int32), lambda m: m.iinfo(m.float32),
                                  lambda m: m.iinfo(m.bool)], ids=["finfo int", "iinfo float", "iinfo bool"])
def test_info_of_the_wrong_kind_raises_as_pytorch(call):
    errors = []
    for m in (rg, torch):
        with pytest.raises(TypeError) as info:
            call(m)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("b", ALL)
def test_promote_types_and_can_cast_match_pytorch(a, b):
    assert rg.promote_types(getattr(rg, a), getattr(rg, b)).name == str(
        torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]
    assert rg.can_cast(getattr(rg, a), getattr(rg, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


def _operands(m):
    return [m.tensor([1, 2]), m.tensor([1], dtype=m.int8), m.tensor(1.), m.tensor([1.], dtype=m.float16),
            m.tensor([True]), m.tensor(3), m.tensor(2.5, dtype=m.float64), m.tensor([1.5], dtype=m.bfloat16),
            m.tensor(0.5, dtype=m.bfloat16), 1, 2.5, True]


def test_result_type_matches_pytorch_on_tensors_and_numbers():
    ours, theirs = _operands(rg), _operands(torch)
    for i in range(len(ours)):
        for j in range(len(ours)):
            expected = str(torch.result_type(theirs[i], theirs[j])).split(".")[-1]
            assert rg.result_type(ours[i], ours[j]).name == expected, (i, j)
