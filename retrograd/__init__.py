"""retrograd: a readable reverse-mode automatic differentiation engine with PyTorch's autograd semantics.

Example::
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2., 3.], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""
from . import _runtime  # noqa: F401 - the process-wide settings of Note [Collector thresholds] and friends
from ._runtime import set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads
from ._dtype import (dtype, float16, float32, float64, int8, uint8, int16, int32, int64, bool, half, float,
                     double, short, int, long, get_default_dtype, set_default_dtype, promote_types)
from ._dtype import bfloat16, finfo, iinfo, can_cast, result_type
from ._device import device
from ._size import Size
from ._tensor import Tensor
from ._creation import (tensor, as_tensor, from_numpy, zeros, ones, full, empty, zeros_like, ones_like,
                        full_like, empty_like, arange, linspace, eye, rand, randn, randint, rand_like, randn_like,
                        randperm, scalar_tensor)
from ._creation import (empty_strided, memory_format, contiguous_format, channels_last, channels_last_3d,
                        preserve_format, layout, strided, _mkldnn)
from . import _format  # noqa: F401 - prints tensors
from ._random import Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state
from . import autograd
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode,
                                 is_inference_mode_enabled)
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from ._errors import set_warn_always, is_warn_always_enabled
from . import ops as _ops
from .ops import *  # noqa: F401,F403 - the public op functions
from .ops._tensor_types import TYPES as _TENSOR_TYPES
globals().update(_TENSOR_TYPES)  # FloatTensor, LongTensor...: See Note [Legacy tensor types]
from .ops.foreach import *  # noqa: F401,F403 - PyTorch's _foreach_* ops
from .ops import (add, sub, mul, div, neg, pow, exp, log, log1p, expm1, sqrt, rsqrt, abs, sign, sin, cos, tan,
                  tanh, sigmoid, relu, clamp, maximum, minimum, where, sum, mean, var, std, prod, max, min, amax,
                  amin, argmax, argmin, norm, matmul, mm, bmm, outer, einsum, reshape, view, flatten, transpose,
                  permute, t, unsqueeze, squeeze, expand, broadcast_to, cat, stack, split, chunk, gather,
                  scatter_add, index_select, masked_fill, softmax, log_softmax, logsumexp, cumsum, flip, roll, tril,
                  triu, diagonal, trace, clone, eq, ne, lt, le, gt, ge)
from .autograd import functional as _functional  # noqa: F401 - above the ops it uses
from .autograd import debug as _debug  # noqa: F401 - above the ops it uses; attaches explain, explain_mode
from .autograd import forward_ad as _forward_ad  # noqa: F401 - above the ops it uses
from . import func  # noqa: F401 - torch.func's transforms
from . import special
from . import linalg
from ._lobpcg import lobpcg
from . import utils
from . import nn
from .nn.functional import threshold, threshold_  # noqa: F401 - torch.threshold, torch.threshold_
from ._top_level import *  # noqa: F401,F403 - torch.conv2d, torch.layer_norm, torch.svd...: Note [Top-level names of functional ops]
from ._top_level_more import *  # noqa: F401,F403 - torch.bilinear, torch.column_stack, torch.histogram...
from . import func
from .utils import checkpoint as _checkpoint_module  # noqa: F401
from .utils import hooks as _hooks_module  # noqa: F401
from .utils import data as _data_module  # noqa: F401
from . import optim
from . import distributions
from . import profiler
from .autograd import profiler as _autograd_profiler  # noqa: F401 - the legacy API; attaches autograd._profiler_enabled
from . import _logging
from .autograd import nonfinite as _nonfinite  # noqa: F401 - above nn, which it uses; attaches detect_nonfinite
from . import backends, cuda, amp
from .amp import autocast
from .serialization import save, load

from ._C import _configure as _compiled_modules
from ._C._configure import is_compiled

_compiled_modules.install()  # See Note [The compiled modules]

from . import overrides
from . import _C, _overrides
# torch._C's switches of __torch_function__, and the Tensor methods written in Python that look for it on self
# (the ops' own look for it in their public functions): Note [Where __torch_function__ is checked].
_C.DisableTorchFunctionSubclass = _overrides.DisableTorchFunctionSubclass
_C.DisableTorchFunction = _overrides.DisableTorchFunction
_C._disabled_torch_function_impl = _overrides.disabled_torch_function_impl
_overrides.wrap_tensor_methods(("view_as", "reshape_as", "detach_", "requires_grad_", "retain_grad", "register_hook",
                                "numpy", "tolist", "__setitem__"))
_overrides.wrap_while_modes(("backward", "detach", "item", "__getitem__"))
detach, detach_ = Tensor.detach, Tensor.detach_  # torch.detach(x) is x.detach(): the methods, once wrapped

clip = clamp
absolute = abs
multiply = mul
subtract = sub
divide = true_divide = div
negative = neg

__version__ = "0.1.0"

def is_tensor(obj) -> bool:
    """True if ``obj`` is a retrograd Tensor."""
    return isinstance(obj, Tensor)


def numel(input) -> int:
    return input.numel()


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_inference(input) -> bool:
    """Returns True if ``input`` is an inference tensor (Note [Inference tensors]).

    Args:
        input (Tensor): the tensor to ask.

    Raises:
        TypeError: ``input`` is not a Tensor.

    Example::
        >>> import retrograd as rg
        >>> with rg.inference_mode():
        ...     x = rg.ones(2)
        >>> rg.is_inference(x), rg.is_inference(x.view(-1)), rg.is_inference(rg.ones(2))
        (True, True, False)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()
