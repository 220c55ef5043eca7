"""The workloads, in table order; then those run only on request (``--only``)."""
from .attention import W9, W10
from .chain import W1
from .convnet import W8
from .deep import W5
from .fanin import W3
from .func import JACREV, PERSAMPLE
from .hvp import W4
from .many_small import W6
from .mlp import W2
from .recurrent import W11, W12, W13

WORKLOADS = (W1, W2, W3, W4, W5, W6, W8)
ON_REQUEST = (W9, W10, W11, W12, W13)  # attention and recurrent layers: --only attention,encoder,lstm,lstm2,gru
ON_REQUEST = ON_REQUEST + (PERSAMPLE, JACREV)  # function transforms: --only persample_vmap,jacrev
BY_KEY = {w.key: w for w in WORKLOADS + ON_REQUEST}

__all__ = ["WORKLOADS", "BY_KEY"]
