"""The scenario of PyTorch's test/autograd/test_logging.py, class TestAutogradLogging, written again and run with
retrograd and torch on the same numbers. See test_pytorch_suite_basics.py for the method.

With ``_logging.set_logs(autograd=logging.DEBUG)`` PyTorch's engine logs each node it runs, in order, to the
``torch.autograd`` loggers; retrograd's do the same (Note [The engine's log] in retrograd/_logging.py).
"""
import logging

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")

NODES = ["CloneBackward0", "SumBackward0", "DivBackward0", "MulBackward0", "AccumulateGrad"]


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_debug_log_names_each_node_the_engine_runs_in_order():
    def scenario(lib):
        handler, logger = _Records(), logging.getLogger(f"{lib.__name__}.autograd")
        lib._logging.set_logs(autograd=logging.DEBUG)
        logger.addHandler(handler)
        try:
            a = randn(lib, 10, requires_grad=True)
            b = a.mul(2).div(3).sum()
            lib.autograd.backward((b, b.clone()))
        finally:
            logger.removeHandler(handler)
            lib._logging.set_logs()
        return [[name for name in NODES if name in r.getMessage()] for r in handler.records]
    assert same_in_both(scenario) == ("ok", [[name] for name in NODES])
