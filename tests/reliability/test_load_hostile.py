"""retrograd.load on hostile files: bounded memory, and one error type naming what is wrong.

See Note [Bounded loading] in retrograd/serialization.py.
"""
import io
import json
import struct
import tracemalloc
import zipfile
from pickle import UnpicklingError

import numpy as np
import pytest

import retrograd as rg

MiB = 1 << 20


def _npy(array):
    raw = io.BytesIO()
    np.save(raw, array, allow_pickle=False)
    return raw.getvalue()


def _manifest(root):
    return json.dumps({"format": "retrograd", "version": 1, "root": root})


def _tensor_entry(ref=0, dtype="float32", shape=(4,), **extra):
    return {"type": "tensor", "ref": ref, "dtype": dtype, "shape": list(shape), **extra}


def _archive(members, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return buf.getvalue()


def _load_measured(raw):
    """Loads ``raw``, returning (result or exception, peak bytes traced while loading)."""
    tracemalloc.start()
    try:
        try:
            out = rg.load(io.BytesIO(raw))
        except Exception as e:  # noqa: BLE001 - the caller checks the type
            out = e
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _zero_bomb(size):
    """A deflated member of ``size`` zero bytes after a valid header of a 4-float array."""
    info = zipfile.ZipInfo("tensors/0.npy")
    info.compress_type = zipfile.ZIP_DEFLATED
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", _manifest(_tensor_entry()))
        with zf.open(info, "w") as m:
            m.write(_npy(np.zeros(4, np.float32)))
            chunk = bytes(MiB)
            for _ in range(size // MiB):
                m.write(chunk)
    return buf.getvalue()


def test_a_compressed_member_that_inflates_is_refused_before_inflating():
    raw = _zero_bomb(64 * MiB)
    assert len(raw) < MiB
    out, peak = _load_measured(raw)
    assert isinstance(out, UnpicklingError) and "compressed" in str(out)
    assert peak < 4 * MiB


def test_a_compressed_manifest_is_refused():
    raw = _archive({"manifest.json": _manifest([" " * 100_000])}, compression=zipfile.ZIP_DEFLATED)
    with pytest.raises(UnpicklingError, match="'manifest.json' is compressed"):
        rg.load(io.BytesIO(raw))


def test_a_huge_declared_shape_is_refused_before_any_allocation():
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2 ** 40,)})
    raw = _archive({"manifest.json": _manifest(_tensor_entry(shape=[2 ** 40])),
                    "tensors/0.npy": header.getvalue() + bytes(16)})
    assert len(raw) < 1024
    out, peak = _load_measured(raw)
    assert isinstance(out, UnpicklingError), out
    assert "declares 4398046511104 bytes of data but its member holds 16" in str(out)
    assert peak < MiB


def test_a_header_that_disagrees_with_the_manifest_is_refused_before_reading_data():
    raw = _archive({"manifest.json": _manifest(_tensor_entry(shape=[4])),
                    "tensors/0.npy": _npy(np.zeros(8, np.float32))})
    with pytest.raises(UnpicklingError, match=r"tensor 0's array \(float32, \[8\]\) does not match"):
        rg.load(io.BytesIO(raw))


def test_a_member_declaring_more_bytes_than_the_file_holds_is_refused():
    raw = bytearray(_archive({"manifest.json": _manifest(_tensor_entry()),
                              "tensors/0.npy": _npy(np.zeros(4, np.float32))}))
    central = raw.rindex(b"PK\x01\x02")  # the central directory entry of the last member
    struct.pack_into("<II", raw, central + 20, 2 ** 31, 2 ** 31)  # compressed and uncompressed sizes
    with pytest.raises(UnpicklingError, match="'tensors/0.npy' declares 2147483648 bytes, which the"):
        rg.load(io.BytesIO(bytes(raw)))


def _valid_archive():
    buf = io.BytesIO()
    rg.save({"w": rg.arange(6.0).reshape(2, 3), "b": rg.ones(3, dtype=rg.int64), "n": np.arange(4),
             "meta": [rg.float64, rg.Size([2, 3]), "x", 1.5, None]}, buf)
    return buf.getvalue()


def test_every_truncation_raises_unpickling_error():
    raw = _valid_archive()
    for n in range(len(raw)):
        with pytest.raises(UnpicklingError):
            rg.load(io.BytesIO(raw[:n]))


def test_every_bit_flip_loads_or_raises_unpickling_error():
    raw = _valid_archive()
    expected = rg.load(io.BytesIO(raw))
    loaded = 0
    for i in range(len(raw)):
        flipped = bytearray(raw)
        flipped[i] ^= 1 << (i % 8)
        try:
            out = rg.load(io.BytesIO(bytes(flipped)))
        except UnpicklingError:
            continue
        loaded += 1  # a flip outside what zipfile checks (a timestamp, a version field) changes nothing
        assert _same(out, expected), i
    assert 0 < loaded < len(raw) // 2  # the data is CRC-checked: a flip there never loads


def _same(a, b):
    if isinstance(a, rg.Tensor):
        return isinstance(b, rg.Tensor) and a.dtype is b.dtype and np.array_equal(a.numpy(), b.numpy())
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("entry,message", [
    (_tensor_entry(dtype=["float32"]), "unsupported dtype"),
    (_tensor_entry(dtype="complex1024"), "unsupported dtype"),
    (_tensor_entry(device=["cpu"]), "malformed device"),
    (_tensor_entry(device="tpu:7"), "malformed device"),
    (_tensor_entry(ref=-1), "lacks the array of tensor -1"),
    (_tensor_entry(ref="0"), "malformed tensor entry"),
    ({"type": "size", "items": [2, "x"]}, "malformed Size"),
    ({"type": "size", "items": [2.5]}, "malformed Size"),
    ({"type": "size", "items": "23"}, "a container without a list of items"),
    ({"type": "dtype", "name": ["float32"]}, "unsupported dtype"),
    ({"type": "device", "name": 3}, "malformed device"),
    ({"type": "device", "name": "nowhere"}, "malformed device"),
    ({"type": "dict", "items": [[{"type": "list", "items": []}, 1]]}, "unhashable dict key of type list"),
    ({"type": "dict", "items": [[1]]}, "malformed dict entry"),
    ({"type": "float", "value": "1e999"}, "malformed float"),
    ({"type": "list", "items": [_tensor_entry(), _tensor_entry(shape=[2, 2])]}, "disagree on its dtype or shape"),
    (_tensor_entry(dtype="int64", requires_grad=True), "marked requires_grad"),
])
def test_a_malformed_manifest_entry_raises_unpickling_error_naming_it(entry, message):
    dtype = np.int64 if entry.get("dtype") == "int64" else np.float32
    raw = _archive({"manifest.json": _manifest(entry), "tensors/0.npy": _npy(np.zeros(4, dtype))})
    with pytest.raises(UnpicklingError, match=message):
        rg.load(io.BytesIO(raw))


def test_a_manifest_nested_past_the_limit_is_refused():
    root = {"type": "list", "items": []}
    for _ in range(300):
        root = {"type": "list", "items": [root]}
    raw = _archive({"manifest.json": _manifest(root)})
    with pytest.raises(UnpicklingError, match="nests containers more than 256 deep"):
        rg.load(io.BytesIO(raw))


def test_json_nested_past_the_parsers_limit_is_refused():
    raw = _archive({"manifest.json": "[" * 100_000 + "]" * 100_000})
    with pytest.raises(UnpicklingError, match="not readable JSON"):
        rg.load(io.BytesIO(raw))


def test_what_save_stores_load_reads_back_at_the_nesting_limit():
    deep = []
    for _ in range(255):
        deep = [deep]
    buf = io.BytesIO()
    rg.save(deep, buf)
    buf.seek(0)
    out = rg.load(buf)
    for _ in range(255):
        (out,) = out
    assert out == []
    with pytest.raises(ValueError, match="nested more than 256 deep"):
        rg.save([deep], io.BytesIO())


def test_tensor_dict_keys_save_and_load_back():
    key = rg.ones(1)
    buf = io.BytesIO()
    rg.save({key: 1, "k": key}, buf)
    buf.seek(0)
    out = rg.load(buf)
    (loaded_key,) = [k for k in out if not isinstance(k, str)]
    assert out[loaded_key] == 1 and out["k"] is loaded_key


def test_loading_a_large_tensor_takes_about_its_size():
    buf = io.BytesIO()
    rg.save(rg.arange(16 * MiB // 8, dtype=rg.float64), buf)
    out, peak = _load_measured(buf.getvalue())
    np.testing.assert_array_equal(out.numpy(), np.arange(16 * MiB // 8, dtype=np.float64))
    assert peak < 1.25 * 16 * MiB  # the array, and a buffer of a few chunks: no second copy
