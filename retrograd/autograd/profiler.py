"""``torch.autograd.profiler``: PyTorch's legacy profiler API, over ``retrograd.profiler``.

``profile`` here takes the legacy arguments (``enabled``, ``use_kineto``, ``use_cuda``...) and gives
its events as ``function_events``, an ``EventList``; ``str(prof)`` is its table. It records what
``retrograd.profiler.profile`` records (op calls, backward nodes and engine steps,
``record_function`` ranges). ``emit_itt`` makes the same calls, nodes and ranges ITT ranges
(``retrograd.profiler.itt``) for Intel VTune Profiler. It also attaches ``autograd._profiler_enabled``
and ``autograd.kineto_available`` (False: retrograd has no Kineto; ``use_kineto`` changes nothing).
"""
from __future__ import annotations

from .. import autograd as _autograd
from .. import profiler as _profiler
from ..profiler import itt as _itt
from ..profiler import record_function
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "emit_itt", "EventList", "FunctionEvent", "FunctionEventAvg", "kineto_available"]


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
        if any(type(r) is _ITTRanges for r in _profiler._recorders):
            raise RuntimeError(_ALREADY_ENABLED)
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


_ALREADY_ENABLED = "Profiler is already enabled on this thread."
_NO_ITT = "Can't use ITT profiler - PyTorch was compiled without ITT (retrograd needs the 'itt' extra, ittapi)"


class _ITTRanges:
    """What ``emit_itt`` records: each op call, backward node, engine step and ``record_function`` range as an
    ITT range of the thread that runs it, named as the profiler names its events (``aten::add``,
    ``AddBackward0``...). Its ranges nest as the profiler's events do, on each thread."""

    # an op call (Note [Op call interposition])
    def interpose(self, op, args, inplace, proceed):
        _itt.range_push("aten::" + op.name + ("_" if inplace is not None else ""))
        try:
            return proceed(op, args, inplace)
        finally:
            _itt.range_pop()

    def composite_range(self, name, args):
        _itt.range_push("aten::" + name)
        return self

    # the engine (Note [Observing the engine]) and record_function
    def begin(self, name, node, grads, args):
        _itt.range_push(name)

    def open(self, name, kind, input_shapes=None, sequence_nr=-1, args=None):
        _itt.range_push(name)

    def end(self, token) -> None:
        _itt.range_pop()

    def close(self, token=None) -> None:
        _itt.range_pop()


class emit_itt:
    """Makes every op call and backward node an ITT range while active, for Intel VTune Profiler
    (PyTorch's ``torch.autograd.profiler.emit_itt``).

    Run the program under VTune (``vtune <flags> python script.py``) to see the ranges on its
    timeline, named as the profiler names its events (``aten::mul``, ``MulBackward0``,
    ``record_function`` names). Outside VTune the ranges cost a fraction of a microsecond each.
    Needs ``ittapi`` (the ``itt`` extra), as PyTorch needs a build with ITT.

    Args:
        enabled (bool): False makes it a no-op.
        record_shapes (bool): accepted for PyTorch's signature; as there, a range's name is the op's
            either way.

    Raises:
        RuntimeError: on entering it twice, inside an ``autograd.profiler.profile`` or another
            ``emit_itt``, or without ittapi.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.profiler import itt
        >>> if itt.is_available():
        ...     with rg.autograd.profiler.emit_itt():
        ...         y = rg.ones(2) * 2
    """

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self._ranges = None

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        if _profiler._recorders:
            raise RuntimeError(_ALREADY_ENABLED)
        if not _itt.is_available():
            raise RuntimeError(_NO_ITT)
        self._ranges = _ITTRanges()
        _profiler._activate(self._ranges)
        return self

    def __exit__(self, *exc):
        if not self.enabled or self._ranges is None:
            return False
        _profiler._deactivate(self._ranges)
        self._ranges = None
        return False


# The names PyTorch keeps in torch.autograd itself, attached from this layer above it (docs/ARCHITECTURE.md)
_autograd._profiler_enabled = _profiler_enabled
_autograd.kineto_available = kineto_available
