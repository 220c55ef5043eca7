"""``torch.autograd.profiler``: PyTorch's legacy profiler API, over ``retrograd.profiler``.

``profile`` here takes the legacy arguments (``enabled``, ``use_kineto``, ``use_cuda``...) and gives
its events as ``function_events``, an ``EventList``; ``str(prof)`` is its table. It records what
``retrograd.profiler.profile`` records (op calls, backward nodes and engine steps,
``record_function`` ranges). It also attaches ``autograd._profiler_enabled`` and
``autograd.kineto_available`` (False: retrograd has no Kineto; ``use_kineto`` changes nothing).
"""
from __future__ import annotations

from .. import autograd as _autograd
from .. import profiler as _profiler
from ..profiler import record_function
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg", "kineto_available"]


def kineto_available() -> bool:
    """Whether PyTorch's Kineto profiler is built in: never in retrograd."""
    return False


def _profiler_enabled() -> bool:
    """Whether a profile is recording now (in any thread)."""
    return bool(_profiler._recorders)


class profile:
    """Profiles the code in its scope, as PyTorch's legacy ``torch.autograd.profiler.profile``.

    Args:
        enabled (bool): False makes it a no-op.
        record_shapes, profile_memory, with_stack, with_modules (bool): as in ``retrograd.profiler.profile``.
        use_cuda, use_device, with_flops, use_kineto, use_cpu, experimental_config, acc_events,
        custom_trace_id_callback: accepted for PyTorch's signature; retrograd records the CPU only.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.profiler import profile
        >>> with profile() as prof:
        ...     y = rg.ones(2) * 2
        >>> [e.name for e in prof.function_events]
        ['aten::mul']
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None, **kwargs):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.entered = False
        self._profile = None
        self._function_events = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._profile = _profiler.profile(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                          with_stack=self.with_stack, with_modules=self.with_modules)
        self._profile.start()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        self._profile.stop()
        self._function_events = self._profile.events()
        return False

    def _events(self) -> EventList:
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._function_events

    @property
    def function_events(self) -> EventList:
        """The events recorded, in the order they began."""
        return self._events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events averaged by name (see ``EventList.key_averages``)."""
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The events as a table (see ``EventList.table``); ``str(prof)`` is its default one."""
        return self._events().table(sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                                    max_name_column_width=max_name_column_width,
                                    max_shapes_column_width=max_shapes_column_width, header=header,
                                    top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path) -> None:
        """Writes the events as Trace Event JSON (see ``EventList.export_chrome_trace``)."""
        self._events().export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        """The time of every event, less that of the events inside it, summed (microseconds)."""
        return self._events().self_cpu_time_total

    def __str__(self):
        return str(self._events())


# The names PyTorch keeps in torch.autograd itself, attached from this layer above it (docs/ARCHITECTURE.md)
_autograd._profiler_enabled = _profiler_enabled
_autograd.kineto_available = kineto_available
