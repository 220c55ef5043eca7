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


@pytest.fixture(params=["compiled", "python"])
def engine_loop(request):
    """Runs a test with the engine's compiled per-node loop, then with the pure-Python one.

    See Note [The compiled loop]. The compiled variant skips where the extension was not built.
    """
    from retrograd.autograd import engine
    was_compiled = engine._loop is not None
    if request.param == "compiled":
        if not engine.use_compiled_loop(True):
            pytest.skip("the compiled engine loop is not built")
    else:
        engine.use_compiled_loop(False)
    yield request.param
    engine.use_compiled_loop(was_compiled)


@pytest.fixture
def expects_compiled():
    """Skips unless the optional C modules should have been built and switched on: a C compiler
    exists and RETROGRAD_COMPILED is not 0. Tests that use it fail if a module is then missing."""
    import shutil
    import sysconfig
    from retrograd.autograd import engine
    if not engine.compiled_enabled():
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
