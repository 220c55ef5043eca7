"""What a workload is: sizes, a unit to report in, and one builder per framework."""
from __future__ import annotations

__all__ = ["Workload", "Skip"]


class Skip(Exception):
    """Raised by a builder when its framework cannot run the workload; the message says why."""


class Workload:
    """One benchmark, written once per framework.

    A builder ``build(params) -> step`` does all set-up; ``step()`` runs one timed sample and
    returns a value (usually a gradient) that the runner compares across frameworks. The
    ``torch`` builder serves both PyTorch columns (1 thread and default threads).

    Args:
        key: short name (``--only`` selects by it).
        title: the table's row title, e.g. ``"W1 chain"``.
        description: one sentence on what a sample does.
        sizes: ``{"full": {...}, "quick": {...}}`` keyword parameters for the builders.
        unit: what the reported time is per, e.g. ``"step"``; ``count`` (a parameter name, or
            1) says how many units one sample holds.
        repeats: default number of samples per framework (``--repeats`` overrides).
        rtol, atol: tolerance of the cross-framework check against the NumPy floor.
    """

    def __init__(self, key, title, description, sizes, unit="run", count=1, repeats=5, rtol=1e-7, atol=1e-9):
        self.key = key
        self.title = title
        self.description = description
        self.sizes = sizes
        self.unit = unit
        self.count = count
        self.repeats = repeats
        self.rtol = rtol
        self.atol = atol
        self.builders = {}
        self.notes = {}

    def params(self, quick: bool) -> dict:
        return dict(self.sizes["quick" if quick else "full"])

    def units_per_sample(self, params) -> int:
        return params[self.count] if isinstance(self.count, str) else self.count

    def impl(self, framework: str):
        """Decorator registering the builder of ``framework``."""
        def register(fn):
            self.builders[framework] = fn
            return fn
        return register

    def builder_for(self, framework: str):
        return self.builders.get("torch" if framework == "torch1" else framework)
