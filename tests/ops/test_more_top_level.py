"""The top-level names of retrograd/_top_level_more.py and set_printoptions (retrograd/_format.py) against torch on
the same numbers: printing under every print option, the process-wide settings, the deprecation warnings, ranges,
random draws, conversions and histograms."""
import sys
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


@pytest.fixture
def print_defaults():
    yield
    for lib in (rg, torch):
        lib.set_printoptions(profile="default", sci_mode=None)


_VALUES = [[1.0, 10000.0], [1.0, 2e9], [0.5, 1e-5], [1.5, 2.25], [0.0, 0.0], [1.0, float("nan"), 3.0],
           [1.12345, -2.5], [float("inf"), 1.5], [-0.0, 100.0], [float(v) for v in np.arange(12) / 7]]


@pytest.mark.parametrize("options", [{}, {"precision": 2}, {"sci_mode": True}, {"sci_mode": False},
                                     {"threshold": 5, "edgeitems": 2}, {"linewidth": 30}, {"profile": "short"},
                                     {"profile": "full"}, {"precision": 6, "sci_mode": True}],
                         ids=["default", "precision", "sci", "no sci", "threshold", "linewidth", "short", "full",
                              "precision and sci"])
def test_printing_follows_print_options_as_torch(options, print_defaults):
    for lib in (rg, torch):
        lib.set_printoptions(**options)
    for values in _VALUES:
        for dtype in ("float32", "float64"):
            ours = repr(rg.tensor(values, dtype=getattr(rg, dtype)))
            theirs = repr(torch.tensor(values, dtype=getattr(torch, dtype)))
            assert ours.replace("retrograd.", "torch.") == theirs
    assert repr(rg.arange(2000).reshape(2, 1000)) == repr(torch.arange(2000).reshape(2, 1000))


def test_the_full_profile_prints_every_element(print_defaults):
    for lib in (rg, torch):
        lib.set_printoptions(profile="full")
    assert repr(rg.arange(1500)) == repr(torch.arange(1500))
    assert "..." not in repr(rg.arange(1500))


def test_deterministic_settings_read_back_as_torch():
    calls = [lambda lib: lib.use_deterministic_algorithms(True),
             lambda lib: lib.use_deterministic_algorithms(True, warn_only=True),
             lambda lib: lib.set_deterministic_debug_mode("error"),
             lambda lib: lib.set_deterministic_debug_mode(1),
             lambda lib: lib.set_deterministic_debug_mode("default")]
    try:
        for call in calls:
            seen = []
            for lib in (rg, torch):
                call(lib)
                seen.append((lib.are_deterministic_algorithms_enabled(),
                             lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_deterministic_debug_mode()))
            assert seen[0] == seen[1]
    finally:
        for lib in (rg, torch):
            lib.use_deterministic_algorithms(False)


def test_float32_matmul_precision_reads_back_and_refuses_as_torch():
    try:
        for value in ("high", "medium", "highest"):
            rg.set_float32_matmul_precision(value)
            torch.set_float32_matmul_precision(value)
            assert rg.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == value
        with pytest.warns(UserWarning, match="bogus is not one of 'highest', 'high', or 'medium'"):
            rg.set_float32_matmul_precision("bogus")
        assert rg.get_float32_matmul_precision() == "highest"
    finally:
        rg.set_float32_matmul_precision("highest")
        torch.set_float32_matmul_precision("highest")


def _first_line(record):
    return str(record.message).split("\n")[0]


@pytest.mark.parametrize("call,key,first", [
    (lambda: rg.cholesky(rg.eye(2)), ("cholesky", "cholesky"),
     "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch release."),
    (lambda: rg.lu(rg.eye(2)), ("lu", "lu"),
     "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in a "
     "future PyTorch release."),
    (lambda: rg.lu_solve(rg.ones(2, 1), *rg.linalg.lu_factor(rg.eye(2))), ("lu", "lu_solve"),
     "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch release."),
], ids=["cholesky", "lu", "lu_solve"])
def test_old_linear_algebra_names_warn_once_as_torch_2_13(call, key, first):
    """The first lines are torch 2.13's (its warnings are once a process, so not caught again here)."""
    module = sys.modules[f"retrograd.ops.{key[0]}"]
    module._warned.discard(key[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
        call()
    deprecations = [w for w in caught if "is deprecated" in str(w.message)]
    assert len(deprecations) == 1 and deprecations[0].category is UserWarning
    assert _first_line(deprecations[0]) == first


def test_range_includes_its_end_and_warns_as_torch():
    for args, kwargs in [((1, 4), {}), ((0, 1, 0.25), {}), ((3, 0, -1), {}), ((0, 3), {"dtype": "int64"}),
                         ((0.5, 2.6, 0.7), {"dtype": "float64"})]:
        found = []
        for lib in (rg, torch):
            kw = {k: getattr(lib, v) for k, v in kwargs.items()}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = lib.range(*args, **kw)
            found.append((out.tolist(), str(out.dtype).split(".")[-1], [(w.category, str(w.message)) for w in caught]))
        assert found[0] == found[1]


def test_randint_like_draws_in_its_range_with_the_input_dtype():
    rg.manual_seed(0)
    for like, args in [(rg.zeros(3, 40), (5,)), (rg.zeros(2, 50, dtype=rg.int32), (2, 6))]:
        out = rg.randint_like(like, *args)
        theirs = torch.randint_like(torch.zeros(like.shape, dtype=getattr(torch, str(like.dtype).split(".")[-1])),
                                    *args)
        assert out.dtype is like.dtype and str(theirs.dtype).split(".")[-1] == str(out.dtype).split(".")[-1]
        low, high = (0, args[0]) if len(args) == 1 else args
        values = np.asarray(out.numpy())
        assert tuple(out.shape) == tuple(like.shape) and values.min() >= low and values.max() < high
        assert set(np.unique(values)) == set(range(low, high))  # every value drawn, none outside
    assert rg.randint_like(rg.zeros(2), 3, dtype=rg.int64).dtype is rg.int64


def test_asarray_shares_memory_where_it_can():
    a = np.array([1.0, 2.0])
    shared, copied = rg.asarray(a), rg.asarray(a, copy=True)
    a[0] = 5.0
    assert shared.tolist() == [5.0, 2.0] and copied.tolist() == [1.0, 2.0]
    t = rg.tensor([1.0, 2.0])
    assert rg.asarray(t) is t and rg.asarray(t, copy=True) is not t
    assert rg.asarray(t, dtype=rg.float64).dtype is rg.float64
    assert rg.asarray([1, 2]).dtype is rg.int64 and rg.asarray(a, dtype=rg.float32).dtype is rg.float32
    assert rg.asarray(a, requires_grad=True).requires_grad
    for lib in (rg, torch):
        with pytest.raises(ValueError):
            lib.asarray(lib.tensor([1.0]), dtype=lib.float64, copy=False)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.histogram(x, bins=4, range=(0.0, 3.0)),
    lambda lib, x: lib.histogram(x, 5),
    lambda lib, x: x.histogram(lib.tensor([0.0, 1.0, 2.5, 3.0], dtype=x.dtype), weight=x * 2, density=True),
    lambda lib, x: lib.histogram(x, bins=3, density=True),
    lambda lib, x: lib.histogram(x[:1], bins=2),
], ids=["range", "count", "edges, weights, density", "density", "one value"])
def test_histogram_matches_torch(call):
    values = np.array([1.0, 2.0, 1.0, 0.2, 2.9, 1.7, 3.0])
    for dtype in ("float32", "float64"):
        ours = call(rg, rg.tensor(values, dtype=getattr(rg, dtype)))
        theirs = call(torch, torch.tensor(values, dtype=getattr(torch, dtype)))
        assert type(ours).__name__ == type(theirs).__name__ == "histogram"
        for o, t in zip(ours, theirs, strict=True):
            assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6)


def test_typename_is_complex_and_ger_as_torch():
    assert rg.typename(rg.zeros(2)) == "retrograd.FloatTensor" and torch.typename(torch.zeros(2)) == \
        "torch.FloatTensor"
    assert rg.typename(rg.zeros(2, dtype=rg.int64)) == "retrograd.LongTensor"
    for obj in (3, "a", 2.5, None, [1]):
        assert rg.typename(obj) == torch.typename(obj)
    assert rg.typename(rg.nn.Linear(1, 1)) == "retrograd.nn.modules.linear.Linear"
    assert rg.is_complex(rg.zeros(1)) is False and rg.zeros(1).is_complex() is False
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0, 0.5])
    np.testing.assert_array_equal(rg.tensor(a).ger(rg.tensor(b)).numpy(), torch.tensor(a).ger(torch.tensor(b)).numpy())
