import numpy as np
import pytest

import retrograd as rg


@pytest.fixture(autouse=True)
def _fresh_state():
    """Each test starts with the default dtype, grad mode and a fixed seed."""
    rg.manual_seed(0)
    np.random.seed(0)
    yield
    rg.set_default_dtype(rg.float32)
    rg.autograd.grad_mode.state.grad_enabled = True


# Where the C modules are built, the "python" variant of a test in this process is, for nearly
# every test, the same run as the one the README's second command makes with RETROGRAD_COMPILED=0:
# with the C switched off, every op call and every pass is the Python code. So this process runs
# the "compiled" variant of each test, and the pure-Python variant runs in the second process. The
# files below keep their in-process "python" variant: they switch the C on and off inside one
# process, compare what the two paths build, or check the modules' entry points, which the
# second process never loads.
_PYTHON_VARIANT_IN_THIS_PROCESS = (
    "tests/autograd/test_compiled_loop.py",
    "tests/autograd/test_memory.py",
    "tests/autograd/test_watchdog.py",
    "tests/ops/test_codegen.py",
    "tests/reliability/",
    "tests/test_compiled_layout.py",
)


def pytest_collection_modifyitems(config, items):
    """Deselects the in-process "python" variant of every test but the files listed above, where
    the C modules are built and wanted (otherwise the "python" variant is the only one that runs)."""
    from retrograd import _C
    if _C.engine_loop is None or _C.op_call is None:
        return
    root = str(config.rootpath)

    def repeated(item):
        path = str(item.path)[len(root) + 1:].replace("\\", "/")
        variant = getattr(item, "callspec", None) and item.callspec.params.get("engine_loop")
        return variant == "python" and not path.startswith(_PYTHON_VARIANT_IN_THIS_PROCESS)

    kept, dropped = [], []
    for item in items:
        (dropped if repeated(item) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(params=["compiled", "python"], autouse=True)
def engine_loop(request):
    """Runs every test with retrograd's C modules, then with the pure-Python code alone.

    See Note [The compiled modules]: the C op call and the engine's compiled loop are switched
    on for the "compiled" variant and off for the "python" one, in this process; tests that start
    processes of their own (tests/distributed) give them ``RETROGRAD_COMPILED=0`` for "python".
    The compiled variant skips where the modules were not built or RETROGRAD_COMPILED=0.
    """
    from retrograd._C import _configure
    saved = rg.is_compiled("engine"), rg.is_compiled("ops")
    if request.param == "compiled":
        if not _configure.use_compiled(True):
            _restore(saved)
            pytest.skip("the C modules are not built, or RETROGRAD_COMPILED=0")
    else:
        _configure.use_compiled(False)
    yield request.param
    _restore(saved)


def _restore(saved):
    from retrograd import _C
    from retrograd.autograd import engine
    engine_on, ops_on = saved
    if _C.op_call is not None:
        _C.op_call.set_enabled(ops_on)
    engine.use_compiled_loop(engine_on)


@pytest.fixture
def expects_compiled():
    """Skips unless the optional C modules should have been built and switched on: a C compiler
    exists and RETROGRAD_COMPILED is not 0. Tests that use it fail if a module is then missing."""
    import shutil
    import sysconfig
    from retrograd import _C
    if not _C.wanted():
        pytest.skip("switched off by RETROGRAD_COMPILED=0")
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler: the pure-Python code is the one in use")


def _slot_fields(obj):
    """Every __slots__ field of ``obj`` by name (``"<unset>"`` for one never set)."""
    names = [n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ()) if not n.startswith("__")]
    return {n: getattr(obj, n, "<unset>") for n in names}


@pytest.fixture
def slot_fields():
    """The function that lists an object's __slots__ fields, for comparing what the compiled
    paths build with what the Python classes build."""
    return _slot_fields
