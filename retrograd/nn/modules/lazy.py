"""The Lazy modules: layers whose input size is read from their first input, as PyTorch's.

A Lazy module holds ``UninitializedParameter``s and ``UninitializedBuffer``s until its first forward, whose
pre-hook calls ``initialize_parameters(*args)``: it materializes them from the input's shape and runs the
layer's own initialization. Once nothing is left uninitialized, the hooks go and the module becomes its
``cls_to_become`` (a ``LazyLinear`` becomes a ``Linear``). Loading a state_dict of real tensors materializes
the parameters from their shapes first; the state_dict of a Lazy module holds the uninitialized objects.
"""
from __future__ import annotations

import itertools

from ... import _creation, _dtype
from ...autograd import grad_mode
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d)

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Makes a module's parameters wait for its first input; see the module docstring."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """As Module's, with the uninitialized parameters and buffers saved as they are."""
        for name, t in itertools.chain(self._parameters.items(), ((k, b) for k, b in self._buffers.items()
                                                                   if k not in self._non_persistent_buffers_set)):
            if t is not None:
                destination[prefix + name] = t if keep_vars or is_lazy(t) else t.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Materializes each uninitialized parameter or buffer that ``state_dict`` holds a real tensor for."""
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            value = state_dict.get(prefix + name)
            if t is not None and value is not None and is_lazy(t) and not is_lazy(value):
                with grad_mode.no_grad():
                    t.materialize(value.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Materializes the parameters from the first forward's arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module (not its children) is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last size of its first input.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.LazyLinear(3)
        >>> m
        LazyLinear(in_features=0, out_features=3, bias=True)
        >>> m(rg.ones(2, 5)).shape, m
        (retrograd.Size([2, 3]), Linear(in_features=5, out_features=3, bias=True))
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params() and self.in_features == 0:  # loaded from a state_dict, as PyTorch
            self.in_features = self.weight.shape[1]  # (whose convolutions and norms keep their 0 then)
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """The convolutions: ``in_channels`` is the channel size of the first input (batched or not)."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            n = self._n
            if input.dim() not in (n + 1, n + 2):
                raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                                   f"{type(self).__name__}, but got input of size: {input.shape}")
            self.in_channels = input.shape[1] if input.dim() == n + 2 else input.shape[0]
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            with grad_mode.no_grad():
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(base, doc):
    class LazyConv(_LazyConvMixin, base):
        __doc__ = doc
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device,
                             dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    return LazyConv


def _lazy_conv_transpose(base, doc):
    class LazyConvTranspose(_LazyConvMixin, base):
        __doc__ = doc
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = "Lazy" + base.__name__
    return LazyConvTranspose


LazyConv1d = _lazy_conv(Conv1d, "A ``Conv1d`` whose ``in_channels`` is the channel size of its first input.")
LazyConv2d = _lazy_conv(Conv2d, """A ``Conv2d`` whose ``in_channels`` is the channel size of its first input.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.LazyConv2d(4, 3, padding=1)
        >>> m
        LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        >>> _ = m(rg.ones(1, 2, 5, 5)); m
        Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """)
LazyConv3d = _lazy_conv(Conv3d, "A ``Conv3d`` whose ``in_channels`` is the channel size of its first input.")
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, "A ``ConvTranspose1d`` whose ``in_channels`` is the "
                                                            "channel size of its first input.")
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, "A ``ConvTranspose2d`` whose ``in_channels`` is the "
                                                            "channel size of its first input.")
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, "A ``ConvTranspose3d`` whose ``in_channels`` is the "
                                                            "channel size of its first input.")


class _LazyNormMixin(LazyModuleMixin):
    """The batch and instance norms: ``num_features`` is the channel size of the first input."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=_dtype.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with grad_mode.no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None and is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(base, doc):
    class LazyNorm(_LazyNormMixin, base):
        __doc__ = doc
        cls_to_become = base

    LazyNorm.__name__ = LazyNorm.__qualname__ = "Lazy" + base.__name__
    return LazyNorm


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, """A ``BatchNorm1d`` whose ``num_features`` is read from its first input.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.LazyBatchNorm1d()
        >>> _ = m(rg.randn(4, 3)); m
        BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "A ``BatchNorm2d`` whose ``num_features`` is read from its first input.")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "A ``BatchNorm3d`` whose ``num_features`` is read from its first input.")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, "An ``InstanceNorm1d`` whose ``num_features`` is read from its "
                                                "first input.")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, "An ``InstanceNorm2d`` whose ``num_features`` is read from its "
                                                "first input.")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, "An ``InstanceNorm3d`` whose ``num_features`` is read from its "
                                                "first input.")
