"""InputBuffer: sums the gradients that reach one node over several edges."""
from __future__ import annotations

from .._device import cpu as _cpu
from . import grad_mode

_grad_state = grad_mode.state


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
        off: that memory is not shared with anyone, so adding in place is safe.
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
            return
        buffer[pos] = old + grad
        if not _grad_state.grad_enabled:
            if owned is None:
                owned = self.owned = set()
            owned.add(pos)

    def __len__(self):
        return len(self.buffer)
