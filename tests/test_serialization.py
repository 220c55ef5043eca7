"""retrograd.save / load: round trips, and files that would run code are refused."""
import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict
from pickle import UnpicklingError

import numpy as np
import pytest

import retrograd as rg


def _round_trip(obj):
    buf = io.BytesIO()
    rg.save(obj, buf)
    buf.seek(0)
    return rg.load(buf)


@pytest.mark.parametrize("dtype", [rg.float16, rg.float32, rg.float64, rg.int8, rg.uint8, rg.int16, rg.int32,
                                   rg.int64, rg.bool])
def test_tensor_round_trip_keeps_values_dtype_and_shape(dtype):
    data = np.arange(-6, 6).reshape(3, 4) % 3
    t = rg.tensor(data, dtype=dtype)
    out = _round_trip(t)
    assert out.dtype is dtype and out.shape == (3, 4)
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_odd_shapes_and_layouts():
    base = rg.arange(12.0).reshape(3, 4)
    cases = [rg.tensor(2.5), rg.zeros(0, 3), base.t(), base[:, ::2]]
    for t, out in zip(cases, _round_trip(cases), strict=True):
        assert out.shape == t.shape
        np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_requires_grad_is_kept_and_results_are_new_leaves():
    w = rg.randn(2, 3, requires_grad=True)
    y = w * 2
    w_out, y_out, c_out = _round_trip([w, y, rg.ones(1)])
    assert w_out.requires_grad and w_out.is_leaf and w_out.grad_fn is None
    assert y_out.requires_grad and y_out.is_leaf
    assert not c_out.requires_grad
    np.testing.assert_array_equal(y_out.detach().numpy(), y.detach().numpy())


def test_nested_containers_and_scalars():
    obj = {
        "a": [1, 2.5, "x", None, True, False, (3, "y")],
        7: OrderedDict([("k", rg.ones(2)), ("j", {"deep": [rg.zeros(1)]})]),
        "floats": [math.inf, -math.inf, 1e308, -0.0],
        "big": 2 ** 80,
        "meta": (rg.float64, rg.device("cpu"), rg.Size([2, 3])),
        (1, 2): "tuple key",
        "empty": ([], (), {}),
    }
    out = _round_trip(obj)
    assert list(out) == list(obj)
    assert out["a"] == obj["a"] and isinstance(out["a"][6], tuple)
    assert isinstance(out[7], OrderedDict) and list(out[7]) == ["k", "j"]
    assert out[7]["k"].tolist() == [1.0, 1.0] and out[7]["j"]["deep"][0].tolist() == [0.0]
    assert out["floats"] == obj["floats"] and math.copysign(1, out["floats"][3]) == -1
    assert out["big"] == 2 ** 80 and out[(1, 2)] == "tuple key"
    assert out["meta"][0] is rg.float64 and out["meta"][1] == rg.device("cpu")
    assert isinstance(out["meta"][2], rg.Size) and out["meta"][2] == (2, 3)
    assert out["empty"] == ([], (), {})
    nan = _round_trip(float("nan"))
    assert math.isnan(nan)


def test_a_tensor_reached_twice_loads_as_one_tensor():
    shared = rg.ones(3)
    out = _round_trip({"a": shared, "b": [shared], "c": rg.ones(3)})
    assert out["a"] is out["b"][0] and out["a"] is not out["c"]


def test_paths_and_file_objects(tmp_path):
    path = tmp_path / "x.rg"
    rg.save({"w": rg.arange(3.0)}, path)
    assert rg.load(path)["w"].tolist() == [0.0, 1.0, 2.0]
    rg.save([rg.ones(1)], str(path))
    with open(path, "rb") as fh:
        assert rg.load(fh, map_location="cpu")[0].tolist() == [1.0]


def test_optimizer_state_dict_round_trip_resumes_training():
    def make():
        rg.manual_seed(3)
        w = rg.randn(4, dtype=rg.float64, requires_grad=True)
        return w, rg.optim.Adam([w], lr=0.1, amsgrad=True)

    def steps(w, opt, n):
        for _ in range(n):
            opt.zero_grad()
            ((w - 1.0) ** 4).sum().backward()
            opt.step()

    w, opt = make()
    steps(w, opt, 5)
    w2, opt2 = make()
    steps(w2, opt2, 2)
    ckpt = _round_trip({"w": w2.detach(), "optim": opt2.state_dict()})
    w3, opt3 = make()
    with rg.no_grad():
        w3.copy_(ckpt["w"])
    opt3.load_state_dict(ckpt["optim"])
    assert opt3.state[w3]["step"].item() == 2.0
    steps(w3, opt3, 3)
    np.testing.assert_array_equal(w3.detach().numpy(), w.detach().numpy())


def test_unsupported_objects_are_refused_on_save():
    with pytest.raises(TypeError, match="retrograd.save cannot store an object of type builtins.set"):
        _round_trip({1, 2})
    with pytest.raises(TypeError, match="cannot store a NumPy array of dtype object"):
        _round_trip([np.array([{}, 1], dtype=object)])
    with pytest.raises(TypeError, match=r"cannot store a whole nn.Module \(Linear\): save its state_dict\(\)"):
        _round_trip({"model": rg.nn.Linear(2, 2)})


def test_numpy_arrays_and_scalars_round_trip_as_numpy():
    value = {"a": np.arange(6, dtype=np.int16).reshape(2, 3), "b": [np.float64(2.5), np.array(True)],
             "c": np.array(["x", "yz"]), "t": rg.ones(2)}
    out = _round_trip(value)
    assert type(out["a"]) is np.ndarray and out["a"].dtype == np.int16
    np.testing.assert_array_equal(out["a"], value["a"])
    assert type(out["b"][0]) is np.float64 and out["b"][0] == 2.5
    assert out["b"][1].shape == () and out["b"][1].dtype == np.bool_ and bool(out["b"][1])
    np.testing.assert_array_equal(out["c"], value["c"])
    assert isinstance(out["t"], rg.Tensor)


def test_a_non_contiguous_array_round_trips():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(_round_trip(a), a)


def test_tensors_as_dict_keys_round_trip():
    key = rg.tensor([1.0])
    out = _round_trip({key: 1, "w": [key]})
    (loaded_key, one), (_, w) = out.items()
    assert isinstance(loaded_key, rg.Tensor) and one == 1 and w[0] is loaded_key  # one tensor, as saved


def test_an_array_entry_that_does_not_match_its_file_is_refused():
    manifest = {"format": "retrograd", "version": 1,
                "root": {"type": "ndarray", "ref": 0, "dtype": "<f8", "shape": [3], "scalar": False}}
    raw = io.BytesIO()
    np.save(raw, np.zeros(2), allow_pickle=False)
    f = _archive(manifest, [raw.getvalue()])
    with pytest.raises(UnpicklingError, match="does not match its manifest entry"):
        rg.load(f)


# -- crafted files -----------------------------------------------------------------------------------
class _Exploit:
    """Pickles into a call that creates a marker file, the classic unpickling attack."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _archive(manifest, arrays=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for i, raw in enumerate(arrays):
            zf.writestr(f"tensors/{i}.npy", raw)
    buf.seek(0)
    return buf


def test_a_pickle_file_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    payload = io.BytesIO(pickle.dumps({"w": _Exploit(str(marker))}))
    with pytest.raises(UnpicklingError, match="not a retrograd archive"):
        rg.load(payload)
    assert not marker.exists()


def test_an_object_array_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    raw = io.BytesIO()
    np.save(raw, np.array([_Exploit(str(marker))], dtype=object), allow_pickle=True)
    manifest = {"format": "retrograd", "version": 1,
                "root": {"type": "tensor", "ref": 0, "dtype": "float32", "shape": [1]}}
    with pytest.raises(UnpicklingError, match="tensor 0 is not a plain array"):
        rg.load(_archive(manifest, [raw.getvalue()]))
    assert not marker.exists()


@pytest.mark.parametrize("root", [
    {"type": "__reduce__", "callable": "os.system", "args": ["echo hi"]},
    {"type": "list", "items": [{"type": "pickle", "data": "gASVAAAAAAAAAACMAm9zlC4="}]},
    {"type": "tensor", "ref": 0, "dtype": "object", "shape": [1]},
    {"type": "dtype", "name": "os.system"},
    {"no": "tag"},
])
def test_unknown_or_malformed_entries_are_refused(root):
    with pytest.raises(UnpicklingError, match="retrograd.load: "):
        rg.load(_archive({"format": "retrograd", "version": 1, "root": root}))


def test_a_manifest_that_disagrees_with_its_array_is_refused():
    raw = io.BytesIO()
    np.save(raw, np.zeros(3, dtype=np.float64))
    manifest = {"format": "retrograd", "version": 1,
                "root": {"type": "tensor", "ref": 0, "dtype": "float32", "shape": [3]}}
    with pytest.raises(UnpicklingError, match="does not match its manifest entry"):
        rg.load(_archive(manifest, [raw.getvalue()]))


def test_torch_save_files_are_refused(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2)}, path)  # a zip too, but of pickles
    with pytest.raises(UnpicklingError, match="retrograd.load: "):
        rg.load(path)
    assert os.path.getsize(path) > 0


def test_module_state_dict_round_trip_keeps_parameters_and_order():
    nn = pytest.importorskip("retrograd.nn")
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    state = _round_trip(net.state_dict())
    assert list(state) == list(net.state_dict())
    fresh = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    fresh.load_state_dict(state)
    x = rg.randn(5, 3)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), net(x).detach().numpy())
    param = _round_trip(net[0].weight)
    assert isinstance(param, nn.Parameter) and param.requires_grad and param.is_leaf
