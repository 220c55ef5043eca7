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
