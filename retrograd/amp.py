"""``retrograd.amp``: PyTorch's automatic mixed precision API, so that training scripts run unchanged.

``autocast("cpu")`` does what PyTorch's CPU autocast does (Note [CPU autocast]): in bfloat16 by default, it
runs the ops of PyTorch's CPU lists that retrograd has in bfloat16 (matmul, linear, convolutions...), some in
float32 (the losses, prod, the LAPACK ops), and widens the inputs of cat and stack to a common dtype. With
``device_type="cuda"`` and no GPU it warns and disables itself, as PyTorch does; a CUDA region casts nothing.

``GradScaler`` is a real loss scaler, as PyTorch's (scale the loss, unscale the gradients, skip
the step on infinite or NaN gradients, grow or back off the scale); it is a pass-through when
disabled, as it is for ``"cuda"`` without a GPU.
"""
from __future__ import annotations

import functools
import threading
import warnings

import numpy as np

from . import cuda
from ._dtype import bfloat16, float16, float32, float64, promote_types
from ._tensor import Tensor
from .autograd.grad_mode import no_grad
from .ops._call import pop_interposer, push_interposer

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype", "custom_fwd",
           "custom_bwd", "autocast_fp32"]

_DEVICE_TYPES = ("cpu", "cuda", "fake", "mps")


class _AutocastState(threading.local):
    """Whether an autocast region is open on this thread, and its dtype, per device type."""

    def __init__(self):
        self.enabled = {}
        self.dtype = {}


_state = _AutocastState()


# Note [CPU autocast]
# ~~~~~~~~~~~~~~~~~~~
# PyTorch's AutocastCPU dispatch key (aten/src/ATen/autocast_mode.cpp) gives some ops a cast policy: the
# "lower precision" ops run with their floating inputs cast to the region's dtype (bfloat16 by default), the
# "fp32" ops with them cast to float32, and the "promote" ops with them cast to the widest among them; float64
# inputs are never cast down, and in-place calls are left alone. Every other op runs in its inputs' dtypes.
# Here the lists are by retrograd's op names (``CPU_POLICY``), applied by an interposer (Note [Op call
# interposition] in ops/_call.py) pushed while any CPU region is open: it looks at this thread's region, so a
# region on one thread leaves another's calls alone, and casts with ``Tensor.to`` (a recorded ToCopy, as
# PyTorch's cached_cast). PyTorch's ops that retrograd writes as composites of other ops take the cast at their
# entry (``autocast_fp32`` on the losses; ``linear`` reaches addmm or matmul). PyTorch also caches a leaf
# weight's cast within a region; retrograd casts each time. That changes one thing computed: a leaf cast twice in
# one region (``mm(z, z)``) has its gradients summed in float32 here, after each cast's backward, where PyTorch's
# one cast sums them in the region's dtype first (tests/autograd/test_pytorch_suite_checkpoint.py).
_LOWER = ("mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "convolution", "convolution_transpose", "prelu",
          "scaled_dot_product_attention")
_FP32 = ("prod", "cdist", "trace", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss", "ctc_loss",
         "reflection_pad", "replication_pad", "max_unpool2d", "linalg_cholesky_ex", "linalg_inv", "linalg_qr",
         "linalg_svd", "linalg_eigh", "linalg_lstsq", "linalg_solve", "linalg_solve_triangular")
_PROMOTE = ("cat", "stack", "index_copy")
CPU_POLICY = {**dict.fromkeys(_LOWER, "lower"), **dict.fromkeys(_FP32, "fp32"), **dict.fromkeys(_PROMOTE, "promote")}


def _castable(t, floor64=True):
    return isinstance(t, Tensor) and t._device.type == "cpu" and t.is_floating_point() and not (
        floor64 and t.dtype is float64)


def _cast_all(values, dtype):
    """``values`` (tensors, lists of them, anything else) with each castable floating tensor in ``dtype``."""
    out = []
    for v in values:
        if type(v) in (list, tuple):
            v = type(v)(t.to(dtype) if _castable(t) and t.dtype is not dtype else t for t in v)
        elif _castable(v) and v.dtype is not dtype:
            v = v.to(dtype)
        out.append(v)
    return out


def _widest(values):
    dtype = None
    for v in values:
        for t in v if type(v) in (list, tuple) else (v,):
            if _castable(t, floor64=False):
                dtype = t.dtype if dtype is None else promote_types(dtype, t.dtype)
    return dtype


class _CpuAutocast:
    """The interposer of CPU autocast regions; see Note [CPU autocast]."""

    def __init__(self):
        self.open = 0  # regions open, on any thread
        self.lock = threading.Lock()

    def interpose(self, op, args, inplace, proceed):
        policy = CPU_POLICY.get(op.name)
        if policy is None or inplace is not None or not _state.enabled.get("cpu"):
            return proceed(op, args, inplace)
        positions = [i for i in op.tensor_pos if i < len(args)]
        picked = [args[i] for i in positions]
        dtype = float32 if policy == "fp32" else _state.dtype.get("cpu", bfloat16) if policy == "lower" \
            else _widest(picked)
        if dtype is None:
            return proceed(op, args, inplace)
        cast = list(args)
        for i, v in zip(positions, _cast_all(picked, dtype) if policy != "promote" else _cast_promoted(picked, dtype),
                        strict=True):
            cast[i] = v
        return proceed(op, tuple(cast), inplace)

    def enter(self):
        with self.lock:
            self.open += 1
            if self.open == 1:
                push_interposer(self)

    def exit(self):
        with self.lock:
            self.open -= 1
            if self.open == 0:
                pop_interposer(self)


def _cast_promoted(values, dtype):
    """``values`` with every floating CPU tensor (float64 too) in ``dtype``, the widest among them."""
    out = []
    for v in values:
        if type(v) in (list, tuple):
            v = type(v)(t.to(dtype) if _castable(t, False) and t.dtype is not dtype else t for t in v)
        elif _castable(v, False) and v.dtype is not dtype:
            v = v.to(dtype)
        out.append(v)
    return out


_cpu_autocast = _CpuAutocast()


def autocast_fp32(fn):
    """Runs ``fn`` with its floating CPU tensor arguments in float32 within a CPU autocast region: PyTorch's "fp32"
    policy for an op retrograd writes as a composite (a loss). See Note [CPU autocast]."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _state.enabled.get("cpu"):
            args = _cast_all(args, float32)
            kwargs = dict(zip(kwargs, _cast_all(kwargs.values(), float32), strict=True))
            with autocast("cpu", enabled=False):
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper


def get_autocast_dtype(device_type: str):
    """The dtype of ``device_type``'s autocast regions on this thread: bfloat16 for the CPU, float16 for CUDA
    (PyTorch's defaults), else the one the open region was given."""
    return _state.dtype.get(device_type, float16 if device_type == "cuda" else bfloat16)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` accepts ``device_type``."""
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an autocast region for ``device_type`` is open on this thread (CUDA's by default, as PyTorch)."""
    return _state.enabled.get(device_type, False)


class autocast:
    """Context manager and decorator for a mixed-precision region, as ``torch.autocast``.

    On the CPU, the ops of PyTorch's CPU autocast lists run in ``dtype`` (bfloat16 by default) or in float32, as
    PyTorch's (Note [CPU autocast]); a CUDA region casts nothing.

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"``.
        dtype (dtype, optional): the lower-precision dtype (bfloat16 or float16; default bfloat16 on the CPU).
        enabled (bool): whether the region is on (default True).
        cache_enabled (bool, optional): accepted, as PyTorch's.

    Example::
        >>> import retrograd as rg
        >>> with rg.autocast("cpu"):
        ...     y = rg.ones(2, 2) @ rg.ones(2, 2)
        >>> y.dtype
        retrograd.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type.partition(":")[0] not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of cpu, cuda, fake device type at start of device string: {device_type}")
        self.device = device_type.partition(":")[0]
        self.fast_dtype = dtype if dtype is not None else (float16 if self.device == "cuda" else bfloat16)
        if self.device == "cpu" and self.fast_dtype not in (bfloat16, float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                          "only supports dtype of torch.bfloat16, torch.float16 currently.", stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        if self._enabled and self.device == "cuda" and not cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            self._enabled = False
        self._cache_enabled = cache_enabled
        self._prev = []

    def __enter__(self):
        self._prev.append((_state.enabled.get(self.device, False), _state.dtype.get(self.device)))
        _state.enabled[self.device] = self._enabled
        _state.dtype[self.device] = self.fast_dtype
        if self.device == "cpu":
            _cpu_autocast.enter()
        return self

    def __exit__(self, *exc):
        enabled, dtype = self._prev.pop()
        _state.enabled[self.device] = enabled
        if dtype is None:
            _state.dtype.pop(self.device, None)
        else:
            _state.dtype[self.device] = dtype
        if self.device == "cpu":
            _cpu_autocast.exit()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom Function's forward under autocast, as ``torch.amp.custom_fwd``; it casts nothing."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom Function's backward under autocast, as ``torch.amp.custom_bwd``."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class GradScaler:
    """Scales the loss so that small gradients survive low precision, as ``torch.amp.GradScaler``.

    ``scale(loss)`` multiplies by the scale; ``step(optimizer)`` divides the gradients by it
    (``unscale_``, unless already done) and steps unless a gradient is infinite or NaN;
    ``update()`` halves the scale after a skipped step and doubles it after ``growth_interval``
    steps without one.

    Args:
        device (str): ``"cuda"`` (disabled, with a warning, without a GPU) or ``"cpu"``.
        init_scale (float): the first scale. Default ``2.**16``.
        growth_factor (float): what the scale is multiplied by to grow. Default 2.
        backoff_factor (float): what it is multiplied by after infinite gradients. Default 0.5.
        growth_interval (int): steps without infinite gradients between growths. Default 2000.
        enabled (bool): False makes every method a pass-through.

    Example::
        >>> import retrograd as rg
        >>> p = rg.nn.Parameter(rg.ones(2))
        >>> opt = rg.optim.SGD([p], lr=0.1)
        >>> scaler = rg.amp.GradScaler("cpu")
        >>> scaler.scale((p * 2).sum()).backward()
        >>> scaler.step(opt); scaler.update()
        >>> p
        Parameter containing:
        tensor([0.8000, 0.8000], requires_grad=True)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._scaled = False  # scale() has run, or a state was loaded: PyTorch makes its scale tensor then
        self._per_optimizer = {}  # id(optimizer) -> {"stage": "unscaled"/"stepped", "found_inf": bool}

    def _check_scaled(self, what: str) -> None:
        if not self._scaled:
            raise AssertionError(f"Attempted {what} but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them, nested) multiplied by the scale."""
        if not self._enabled:
            return outputs
        self._scaled = True
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divides the gradients of ``optimizer``'s parameters by the scale, in place, and notes infinities.

        Raises:
            RuntimeError: if called twice for the optimizer since the last ``update()``, or after ``step()``.
        """
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        state = self._per_optimizer.setdefault(id(optimizer), {"stage": None, "found_inf": False})
        if state["stage"] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    grad._data *= inv_scale
                    grad._version_counter.bump()
                    if not np.all(np.isfinite(grad._host())):
                        found_inf = True
        state["stage"] = "unscaled"
        state["found_inf"] = found_inf

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless ``unscale_`` did) and steps, unless one is infinite or NaN.

        Returns:
            What ``optimizer.step`` returns, or None for a skipped step.

        Raises:
            RuntimeError: with a ``closure`` keyword, or if called twice since the last ``update()``.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scaled("step")
        state = self._per_optimizer.setdefault(id(optimizer), {"stage": None, "found_inf": False})
        if state["stage"] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is None:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = "stepped"
        return result

    def update(self, new_scale=None) -> None:
        """Grows or backs off the scale after this iteration's steps (or sets ``new_scale``).

        Raises:
            AssertionError: if no optimizer was unscaled or stepped since the last update.
        """
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self) -> dict:
        """The scaler's state (empty when disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores a ``state_dict()``.

        Raises:
            RuntimeError: for an empty dict (from a disabled scaler).
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
        self._scaled = True

