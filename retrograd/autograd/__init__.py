"""retrograd.autograd: reverse-mode automatic differentiation with PyTorch's semantics.

``backward`` and ``grad`` (``_api.py``) run the engine (``engine.py``) over the graph
(``graph.py``); ``Function`` defines custom nodes; ``functional`` holds the higher-order helpers
(``vjp``, ``jacobian``, ``hessian``...), ``gradcheck`` the finite-difference checks.
"""
from . import grad_mode, graph
from ._api import backward, grad
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled
from .engine import (Engine, get_default_engine, queue_callback, is_checkpoint_valid,
                     set_multithreading_enabled)
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck
from .interrupts import BackwardCancelled, BackwardTimeout
from .saved_variable import SavedTensor  # torch.autograd.SavedTensor, not in its __all__ either
from .watchdog import set_backward_watchdog
from .grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode, is_multithreading_enabled
from .grad_mode import _force_original_view_tracking, _unsafe_preserve_version_counter, is_view_replay_enabled
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "queue_callback", "is_checkpoint_valid", "set_multithreading_enabled",
           "is_multithreading_enabled", "gradcheck", "gradgradcheck", "graph", "functional", "Engine",
           "get_default_engine", "Variable",
           "BackwardCancelled", "BackwardTimeout", "set_backward_watchdog"]
