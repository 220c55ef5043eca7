"""The workloads, in table order."""
from .attention import W9, W10
from .chain import W1
from .convnet import W8
from .deep import W5
from .fanin import W3
from .hvp import W4
from .many_small import W6
from .mlp import W2

WORKLOADS = (W1, W2, W3, W4, W5, W6, W8)
BY_KEY = {w.key: w for w in WORKLOADS + (W9, W10)}  # W9, W10: only by name (--only)

__all__ = ["WORKLOADS", "BY_KEY"]
