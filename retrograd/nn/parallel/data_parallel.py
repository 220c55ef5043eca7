"""DataParallel: PyTorch's single-process data parallelism, as it behaves where no accelerator is available.

Note [DataParallel without a GPU]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch's ``DataParallel`` on a machine without an accelerator keeps the module, sets
``device_ids`` to ``[]`` (it ignores the ``device_ids``, ``output_device`` and ``dim`` given) and
runs the module itself on each call, on the calling thread, so that a script written for GPUs runs
unchanged. retrograd does the same. The module is a child named ``module``, so the state_dict's
keys are the module's prefixed with ``module.``. Where a GPU is available, the replication over
devices (scatter, replicate, parallel_apply, gather) is not implemented: the constructor raises.
"""
from __future__ import annotations

from ... import cuda
from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Runs ``module`` over a batch split across GPUs; with no GPU, runs ``module`` itself.

    See Note [DataParallel without a GPU].

    Args:
        module (Module): the module to run.
        device_ids (list of int or device, optional): the GPUs to use (ignored without one).
        output_device (int or device, optional): where outputs are gathered (ignored without a GPU).
        dim (int): the dimension inputs are split along (ignored without a GPU). Default: 0.

    Raises:
        NotImplementedError: a GPU is available (replication over devices is not implemented).

    Example::
        >>> import retrograd as rg
        >>> net = rg.nn.DataParallel(rg.nn.Linear(2, 3))
        >>> net(rg.ones(4, 2)).shape, net.device_ids
        (retrograd.Size([4, 3]), [])
        >>> sorted(net.state_dict())
        ['module.bias', 'module.weight']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if cuda.is_available():
            raise NotImplementedError("retrograd's DataParallel does not replicate a module over GPUs; it runs the "
                                      "module itself only where no GPU is available")
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
