"""What a profile is made of: its events, their averages, the table and the Chrome trace.

``FunctionEvent`` is one range (an op call, a backward node, an engine step, a ``record_function``
or a module's forward), ``EventList`` a profile's events in the order they began, with
``key_averages``, ``table`` and ``export_chrome_trace`` laid out as PyTorch's
(torch/autograd/profiler_util.py).
"""
from __future__ import annotations

import enum
import json
import os

__all__ = ["DeviceType", "FunctionEvent", "FunctionEventAvg", "EventList"]


class DeviceType(enum.Enum):
    """Where an event ran (PyTorch's ``torch.autograd.DeviceType``, of which retrograd uses CPU)."""

    CPU = 0
    CUDA = 1


# The kinds of event, and the category each has in a Chrome trace.
OP, BACKWARD, ENGINE, USER, MODULE = "op", "backward", "engine", "user", "module"
_CATEGORY = {OP: "cpu_op", BACKWARD: "cpu_op", ENGINE: "cpu_op", USER: "user_annotation", MODULE: "python_function"}


class FunctionEvent:
    """One recorded range: its name, thread, times (microseconds), and what the profile recorded of it.

    ``sequence_nr`` is the sequence number of the backward node an op call made (-1 for none), or of
    the node a backward event runs; ``fwd_thread`` (backward events) the thread that made the node.
    """

    def __init__(self, id, name, thread, start_us, end_us=None, *, kind=USER, sequence_nr=-1, input_shapes=None,
                 stack=None, args=None, node_id=-1):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.key = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us if end_us is None else end_us
        self.kind = kind
        self.sequence_nr = sequence_nr
        self.fwd_thread = 0
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.args = args or {}
        self.cpu_memory_usage = 0
        self.cpu_parent = None
        self.cpu_children = []
        self.device_type = DeviceType.CPU
        self.device_time_total = 0
        self.count = 1  # as PyTorch's: an event is one call (FunctionEventAvg sums them)
        self.is_async = False

    @property
    def time_range(self):
        return (self.start_us, self.end_us)

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} cpu_time_total="
                f"{self.cpu_time_total:.3f}us sequence_nr={self.sequence_nr} input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key (a name, with its input shapes or source lines if grouped so) summed.

    Made without a key, it takes that of the first event added; ``add`` takes a ``FunctionEvent``
    or another average (itself too), as PyTorch's.
    """

    def __init__(self, key=None, input_shapes=None, stack=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = input_shapes
        self.stack = stack
        self.cpu_parent = None
        self.is_async = False
        self.device_type = DeviceType.CPU

    def add(self, event):
        if self.key is None:
            self.key = event.key
        if self.count == 0 and isinstance(event, FunctionEvent):
            self.cpu_parent = event.cpu_parent
        count = event.count if isinstance(event, FunctionEventAvg) else 1  # read before self is changed
        cpu, self_cpu = event.cpu_time_total, event.self_cpu_time_total
        memory, self_memory = event.cpu_memory_usage, event.self_cpu_memory_usage
        self.count += count
        self.cpu_time_total += cpu
        self.self_cpu_time_total += self_cpu
        self.cpu_memory_usage += memory
        self.self_cpu_memory_usage += self_memory
        return self

    @property
    def cpu_time(self) -> float:
        """The average time of a call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


def _format_time(us) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_share(us, total) -> str:
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


def _format_memory(nbytes) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class EventList(list):
    """A profile's events, in the order they began."""

    def __init__(self, events=(), profile_memory=False):
        super().__init__(events)
        self.profile_memory = profile_memory

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events averaged by name (and by input shapes, or by the top source lines, if asked).

        Returns:
            An ``EventList`` of ``FunctionEventAvg``, in the order each key first appears.
        """
        groups = {}
        for e in self:
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n:
                key += tuple(e.stack[:group_by_stack_n])
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None,
                    e.stack[:group_by_stack_n] if group_by_stack_n else None)
            avg.add(e)
        return EventList(groups.values(), self.profile_memory)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def _populate_cpu_children(self) -> None:
        """Sets each event's ``cpu_parent`` and ``cpu_children`` from the time ranges, per thread: an event's
        parent is the innermost one, begun before it, whose range holds its own (as PyTorch's EventList does
        for events made by hand; a profile's events already know theirs)."""
        threads = {}
        for e in self:
            if not e.is_async:
                threads.setdefault(e.thread, []).append(e)
        for events in threads.values():
            events.sort(key=lambda e: (e.start_us, -e.end_us))
            open_ranges = []
            for e in events:
                while open_ranges and not (open_ranges[-1].start_us <= e.start_us and
                                           e.end_us <= open_ranges[-1].end_us):
                    open_ranges.pop()
                if open_ranges:
                    e.cpu_parent = open_ranges[-1]
                    open_ranges[-1].cpu_children.append(e)
                open_ranges.append(e)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's profiler prints them: one row each, the column headers its own.

        Args:
            sort_by (str, optional): an attribute to sort by, largest first (``"cpu_time_total"``,
                ``"self_cpu_time_total"``, ``"cpu_time"``, ``"count"``, ``"cpu_memory_usage"``...).
            row_limit (int): the most rows shown.
            top_level_events_only (bool): only rows whose (first) event has no parent.
        """
        return _build_table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path) -> None:
        """Writes the events as Trace Event JSON (chrome://tracing, Perfetto), backward nodes linked to
        the op calls that made them by ``fwdbwd`` flow events."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(chrome_trace(self), f)


def _override_unit(us, unit) -> str:
    if unit == "s":
        return f"{us / 1e6:.3f}s"
    if unit == "ms":
        return f"{us / 1e3:.3f}ms"
    if unit == "us":
        return f"{us:.3f}us"
    return _format_time(us)


def _build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width, max_shapes_column_width,
                 header, top_level_events_only, time_unit) -> str:
    if not events:
        return ""
    profile_memory = getattr(events, "profile_memory", False)
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width or 1 << 30)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [(name_width, ">")] + [(12, ">")] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append((shapes_width, ">"))
    if has_stack:
        src_width = max(len(line) for e in events for line in (e.stack or [""])) + 4
        src_width = min(src_width, max_src_column_width or src_width)
        headers.append("Source Location")
        widths.append((src_width, "<"))
    row_format = "".join("{: " + align + str(w) + "}  " for w, align in widths)
    sep = "".join("-" * w + "  " for w, _ in widths)
    line_length = sum(w + 2 for w, _ in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total), _override_unit(e.self_cpu_time_total, time_unit),
               _format_share(e.cpu_time_total, total), _override_unit(e.cpu_time_total, time_unit),
               _override_unit(getattr(e, "cpu_time", e.cpu_time_total), time_unit)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(getattr(e, "count", 1))
        if has_shapes:
            shapes = str(e.input_shapes)
            row.append(shapes[:shapes_width - 3] + "..." if len(shapes) > shapes_width else shapes)
        if has_stack:
            row.append((e.stack or [""])[0][:src_width])
        out.append(row_format.format(*row))
        for line in (e.stack or [])[1:] if has_stack else ():
            out.append(row_format.format(*([""] * (len(headers) - 1) + [line[:src_width]])))
    out += [sep, f"Self CPU time total: {_format_time(total)}"]
    return "\n".join(out) + "\n"


def chrome_trace(events) -> dict:
    """The Trace Event JSON object of ``events`` (FunctionEvents), as PyTorch's profiler writes it."""
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    for tid in sorted({e.thread for e in events}):
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"thread {tid}"}})
    made = {}  # sequence number -> the op call that made the node
    for e in events:
        if e.kind == OP and e.sequence_nr >= 0:
            made.setdefault(e.sequence_nr, e)
    flow = 0
    for e in events:
        args = {"External id": e.id}
        if e.kind in (OP, BACKWARD):
            args["Sequence number"] = e.sequence_nr
        if e.kind == BACKWARD:
            args["Fwd thread id"] = e.fwd_thread
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        for k, v in e.args.items():
            args[k] = v
        trace.append({"ph": "X", "cat": _CATEGORY[e.kind], "name": e.name, "pid": pid, "tid": e.thread,
                      "ts": e.start_us, "dur": e.cpu_time_total, "args": args})
        if e.cpu_memory_usage:
            trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid,
                          "tid": e.thread, "ts": e.end_us, "args": {"Bytes": e.cpu_memory_usage, "Device Type": 0}})
        fwd = made.get(e.sequence_nr) if is_node_event(e) else None
        if fwd is not None:
            flow += 1
            trace.append({"ph": "s", "id": flow, "pid": pid, "tid": fwd.thread, "ts": fwd.start_us, "cat": "fwdbwd",
                          "name": "fwdbwd"})
            trace.append({"ph": "f", "id": flow, "pid": pid, "tid": e.thread, "ts": e.start_us, "cat": "fwdbwd",
                          "name": "fwdbwd", "bp": "e"})
    return {"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": trace}


def is_node_event(e) -> bool:
    """Whether ``e`` is a backward node's own range (not its ``evaluate_function`` range)."""
    return e.kind == BACKWARD and not e.name.startswith("autograd::engine::")
