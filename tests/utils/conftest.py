import pytest


@pytest.fixture(autouse=True)
def _each_engine_loop(engine_loop):
    """The engine's tests run with both loops (see the engine_loop fixture)."""
