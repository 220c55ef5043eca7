"""Module: the base class of layers, holding parameters, buffers and child modules by name."""
from __future__ import annotations

from collections import OrderedDict, namedtuple

from ... import _dtype
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...utils.hooks import RemovableHandle
from ..parameter import Parameter

__all__ = ["Module", "RemovableHandle"]

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class of neural-network layers, as ``torch.nn.Module``.

    Assigning a ``Parameter``, a ``Module`` or (through ``register_buffer``) a buffer to an
    attribute registers it by name, which ``parameters()``, ``state_dict()``, ``to()``,
    ``train()``/``eval()`` and ``__repr__`` then walk.

    Example::
        >>> import retrograd as rg
        >>> class Net(rg.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = rg.nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x)
        >>> [name for name, _ in Net().named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # -- calling -----------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        for hook in tuple(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook):
        """Registers ``hook(module, args)``, run before ``forward``; it may return replacement args.

        Returns:
            A ``RemovableHandle``.
        """
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook):
        """Registers ``hook(module, args, output)``, run after ``forward``; it may return a replacement output.

        Returns:
            A ``RemovableHandle``.
        """
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    # -- registration --------------------------------------------------------------------------------
    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__module__}.{type(value).__name__}' as parameter "
                                f"'{name}' (retrograd.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__module__}.{type(value).__name__}' as child module "
                                f"'{name}' (retrograd.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__module__}.{type(value).__name__}' as buffer "
                                f"'{name}' (retrograd.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _remove_from(self, name):
        d = self.__dict__
        d.pop(name, None)
        for key in ("_parameters", "_buffers", "_modules"):
            d[key].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            table = d.get(key)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if name in d[key]:
                del d[key][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name, param):
        """Adds ``param`` (a Parameter, or None) under ``name``.

        Raises:
            TypeError: if ``param`` is neither a Parameter nor None.
            KeyError: if ``name`` is empty, contains ".", or is already an attribute.
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(type(self), name) or (name in self.__dict__ and name not in self._parameters):
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__module__}.{type(param).__name__}' object to parameter "
                            f"'{name}' (retrograd.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (state that is not a parameter, e.g. running statistics) under ``name``.

        Args:
            name: the buffer's name.
            tensor: a Tensor, or None.
            persistent: whether it is part of ``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(type(self), name) or (name in self.__dict__ and name not in self._buffers):
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__module__}.{type(tensor).__name__}' object to buffer "
                            f"'{name}' (retrograd Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Adds a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__module__}.{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(type(self), name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    # -- traversal -------------------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Yields ``(name, module)`` for this module and every descendant, each once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """Yields ``(name, module)`` for the direct children, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, value in get(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Yields ``(name, parameter)``, dotted names, shared parameters once.

        Example::
            >>> import retrograd as rg
            >>> [n for n, _ in rg.nn.Linear(2, 3).named_parameters()]
            ['weight', 'bias']
        """
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and gradients ------------------------------------------------------------------------------
    def train(self, mode=True):
        """Sets training mode (affects Dropout, BatchNorm) here and in every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of every parameter: to None (default) or to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                with grad_mode.no_grad():
                    g.zero_()

    def apply(self, fn):
        """Calls ``fn`` on every descendant (children first), then on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- conversion ----------------------------------------------------------------------------------------
    def _apply(self, fn):
        for m in self.children():
            m._apply(fn)
        with grad_mode.no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                p.data = new  # keeps the Parameter object, so optimizers holding it stay valid
                if p._grad is not None:
                    p._grad = fn(p._grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``.

        Integer buffers keep their dtype. Returns self.
        """
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            out = t
            if dtype is not None and t.is_floating_point():
                out = out.to(dtype)
            if device is not None:
                out = out.to(device)
            return out
        return self._apply(convert)

    def float(self):
        return self._apply(lambda t: t.to(_dtype.float32) if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.to(_dtype.float64) if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.to(_dtype.float16) if t.is_floating_point() else t)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    # -- state_dict -----------------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by dotted name (detached unless ``keep_vars``).

        Example::
            >>> import retrograd as rg
            >>> list(rg.nn.Linear(2, 3).state_dict())
            ['weight', 'bias']
        """
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and persistent buffers from ``state_dict``.

        Args:
            state_dict: a mapping from dotted names to tensors (as ``state_dict()`` returns).
            strict: require the keys to match exactly.
            assign: replace the tensors instead of copying into them.

        Returns:
            ``(missing_keys, unexpected_keys)``, a named tuple.

        Raises:
            RuntimeError: on missing or unexpected keys (when ``strict``) or mismatched shapes,
                listing every problem, as PyTorch.
        """
        missing, unexpected, errors = [], [], []
        expected = set()
        for mod_prefix, module in self.named_modules():
            pre = mod_prefix + "." if mod_prefix else ""
            local = [(n, p, True) for n, p in module._parameters.items() if p is not None]
            local += [(n, b, False) for n, b in module._buffers.items()
                      if b is not None and n not in module._non_persistent_buffers_set]
            for name, current, is_param in local:
                key = pre + name
                expected.add(key)
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                    continue
                if tuple(value.shape) != tuple(current.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {current.shape}.")
                    continue
                with grad_mode.no_grad():
                    if assign:
                        if is_param:
                            setattr(module, name, Parameter(value.detach(), current.requires_grad))
                        else:
                            module._buffers[name] = value
                    else:
                        current.copy_(value)
        for key in state_dict:
            if key not in expected:
                unexpected.append(key)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- printing ---------------------------------------------------------------------------------------------
    def extra_repr(self):
        """The text between the parentheses of this module's repr line; override in layers."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for name, module in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
