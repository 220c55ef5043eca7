"""The engine stress script, with small numbers (the full run is `python scripts/stress_engine.py`)."""
import importlib.util
import pathlib

import pytest

pytestmark = pytest.mark.timeout(120)


def test_stress_small():
    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "stress_engine.py"
    spec = importlib.util.spec_from_file_location("stress_engine", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.run(threads=4, passes=10, depth=25)
