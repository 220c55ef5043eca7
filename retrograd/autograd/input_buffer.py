"""InputBuffer: sums the gradients that reach one node over several edges."""
from __future__ import annotations

from .._device import cpu as _cpu
from . import grad_mode

_grad_state = grad_mode.state


# Note [The version of a summed gradient]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A gradient's ``_version`` counts the in-place writes PyTorch's engine makes into it, which users
# see on a leaf's ``.grad``. With grad mode off, PyTorch's InputBuffer adds a second gradient into
# the first in place (``add_``) where it holds the only reference to one of them, as it does to the
# fresh result of a formula, and makes a new tensor (version 0) where it holds neither, as when one
# formula hands the same gradient to two edges (``x + x``). Here the first sum is a new tensor and
# later ones are added into it in place; each counts as PyTorch's in-place add (a version more),
# except the sum of a gradient with itself. In grad mode (``create_graph``) sums are out of place in
# both. AccumulateGrad's copy of a gradient it cannot take (a new tensor, then ``copy_``) counts one
# too (``clone_obey_contract`` in accumulate_grad.py). The compiled loop does the same.


class InputBuffer:
    """One gradient slot per node input; the node runs once every producer has reported."""

    __slots__ = ("buffer", "owned", "device")

    def __init__(self, size: int):
        self.buffer = [None] * size
        self.owned = None  # slots holding a sum this buffer made, which it may add to in place
        self.device = _cpu  # the first non-CPU gradient's device: picks the queue the node runs on

    def add(self, pos: int, grad) -> None:
        """Adds ``grad`` into slot ``pos``: the first is stored by reference, later ones are summed.

        Sums are out of place, except into a sum this buffer made itself while grad mode is
        off: that memory is not shared with anyone, so adding in place is safe. See Note [The
        version of a summed gradient].
        """
        if grad is None:
            return
        buffer = self.buffer
        old = buffer[pos]
        if old is None:
            buffer[pos] = grad
            if self.device is _cpu and grad._device is not _cpu:
                self.device = grad._device
            return
        owned = self.owned
        if owned is not None and pos in owned and not _grad_state.grad_enabled:
            old._data += grad._data
            old._version_counter.bump()
            return
        total = buffer[pos] = old + grad
        if not _grad_state.grad_enabled:
            if old is not grad:
                total._version_counter.bump()
            if owned is None:
                owned = self.owned = set()
            owned.add(pos)

    def __len__(self):
        return len(self.buffer)
