"""The workloads, in table order; then those run only on request (``--only``)."""
from .attention import W9, W10
from .chain import W1
from .charlstm import W14
from .convnet import W8
from .deep import W5
from .fanin import W3
from .functional import W17, W18
from .gpt import W15
from .func import JACFWD, JACREV, VMAP_JACFWD
from .hvp import W4, W27
from .lorenz import W16
from .many_small import W6
from .mlp import W2, W21
from .persample import W19, W20
from .profiling_off import PROFILING_OFF
from .programs import W22, W23, W24
from .recurrent import W11, W12, W13

WORKLOADS = (W1, W2, W3, W4, W5, W6, W8)
ON_REQUEST = (W9, W10, W11, W12, W13)  # attention and recurrent layers: --only attention,encoder,lstm,lstm2,gru
# What the profiler and debugging aids leave behind once off (retrograd alone): --only profiling_off.
ON_REQUEST += (PROFILING_OFF,)
# Real-model steps and functional transforms: --only models (all of them), or by key.
MODELS = (W14, W15, W16, W17, W18, W19, W20, W21, W22, W23, W24, JACREV)
TRANSFORMS = (JACFWD, W27, VMAP_JACFWD)  # more of the function transforms against torch.func: --only func (with W20, W25)
BY_KEY = {w.key: w for w in WORKLOADS + ON_REQUEST + MODELS + TRANSFORMS}
# Names that ``--only`` expands to several workloads.
GROUPS = {"models": tuple(w.key for w in MODELS), "programs": (W22.key, W23.key, W24.key),
          "func": (W20.key, JACREV.key, JACFWD.key, W27.key, VMAP_JACFWD.key)}


def select(keys):
    """The workloads named by ``keys`` (workload keys or GROUPS names), in the order given, without repeats."""
    chosen = []
    for key in keys:
        for k in GROUPS.get(key, (key,)):
            if BY_KEY[k] not in chosen:
                chosen.append(BY_KEY[k])
    return chosen


__all__ = ["WORKLOADS", "MODELS", "BY_KEY", "GROUPS", "select"]
