"""``torch.autograd.profiler_util``'s names: the events of a profile, their averages and lists.

They are those of ``retrograd.profiler`` (profiler/_events.py); this module gives them the place
PyTorch's legacy profiler API (``autograd.profiler``) imports them from.
"""
from __future__ import annotations

from ..profiler._events import DeviceType, EventList, FunctionEvent, FunctionEventAvg, _format_time

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "_format_time"]
