"""``_logging.set_logs`` and the engine's log of each node it runs (Note [The engine's log]), against torch."""
import logging
import re

import pytest

import retrograd as rg
from retrograd.autograd.observation import Observation

torch = pytest.importorskip("torch")


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append((record.name.partition(".")[2], record.levelname, record.getMessage()))


def _logged(lib, level, run):
    handler, logger = _Records(), logging.getLogger(f"{lib.__name__}.autograd")
    lib._logging.set_logs(autograd=level)
    logger.addHandler(handler)
    try:
        run(lib)
    finally:
        logger.removeHandler(handler)
        lib._logging.set_logs()
    return [(name, levelname, re.sub(r" at 0x[0-9a-f]+", "", message)) for name, levelname, message in handler.messages]


def _two_inputs(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    (x.exp() * 2).sum().backward()
    (y * y).sum().backward()


def test_debug_log_names_each_node_with_its_grad_outputs_as_torchs():
    logged = _logged(rg, logging.DEBUG, _two_inputs)
    assert logged == _logged(torch, logging.DEBUG, _two_inputs)
    assert logged[0] == ("autograd.graph", "DEBUG", "Executing: <SumBackward0 object> with grad_outputs: [f32[]]")


def test_info_level_logs_no_node_and_observes_nothing():
    assert _logged(rg, logging.INFO, _two_inputs) == _logged(torch, logging.INFO, _two_inputs) == []
    assert not Observation.active


def test_set_logs_without_arguments_stops_the_log():
    rg._logging.set_logs(autograd=logging.DEBUG)
    assert Observation.active
    rg._logging.set_logs()
    assert not Observation.active
    assert _logged(rg, None, _two_inputs) == []


@pytest.mark.parametrize("level", ["debug", 5])
def test_unknown_level_raises_torchs_error(level):
    with pytest.raises(ValueError) as theirs:
        torch._logging.set_logs(autograd=level)
    with pytest.raises(ValueError) as ours:
        rg._logging.set_logs(autograd=level)
    torch._logging.set_logs()
    assert str(ours.value) == str(theirs.value)
