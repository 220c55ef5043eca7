"""Optimizer: parameter groups, per-parameter state, and the state_dict format shared by every optimizer.

Note [Optimizer updates]
~~~~~~~~~~~~~~~~~~~~~~~~
Every ``step()`` runs its arithmetic under ``no_grad`` and writes into the parameters and the state
tensors with in-place ops (``add_``, ``mul_``, ``copy_``), so a parameter keeps its identity (modules,
hooks and other optimizers holding it see the new values), its ``_version`` counts the updates, and
no graph is recorded. With ``differentiable=True`` (SGD, Adam, AdamW), as in PyTorch, the step runs
with grad mode on instead (``_update_mode``): the in-place updates are recorded, so the new values
of non-leaf parameters carry a graph back to the old values, the gradients and a tensor ``lr`` that
requires grad (a meta-gradient); the tensors a later step modifies in place are cloned where an op
would save them. The closure, when given, runs under ``enable_grad`` because it computes a loss
and calls ``backward``. State tensors are created lazily, on the first step that sees a gradient.

Note [Optimizer updates on arrays]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each optimizer's update of a parameter has two forms that compute the same bits. The op path,
the definition, is the update written with tensor ops (Note [Optimizer updates]). The array path
(``_arrays_update`` of each optimizer, with the helpers of ``_arrays.py``) calls the NumPy ufuncs
those ops would call, on the same operands in the same order, directly on the arrays of the
parameter, its gradient and its state (``out=``, a scratch array for the intermediate results),
without an op call around each: AdamW on 37 parameters is 444 op calls a step, each paying
several microseconds of call and in-place bookkeeping on top of a small kernel. The array path
runs for one parameter's update when:

- the optimizer's ``_array_updates`` is true (a class attribute; ``opt._array_updates = False``
  forces the op path, which the tests use to compare the two);
- the group is not ``differentiable`` (the step must then be recorded in the graph);
- no interposer is active (Note [Op call interposition] in ops/_call.py: a profiler, forward-mode
  AD, vmap or a non-finite check must see every op call of the step);
- every hyper-parameter the update computes with is a Python float or int (``python_numbers``):
  a tensor ``lr`` (of Adam or SGD, which compute with it as a tensor) or a NumPy scalar takes the
  op path, whose promotion rules apply to them; where the op path itself turns a tensor ``lr``
  into a Python number (``_scalar``), the array path uses that number;
- the parameter, its gradient and its state tensors are of exactly ``Tensor`` or ``nn.Parameter``
  (a subclass may override the methods the op path calls), hold NumPy arrays (a CPU tensor: another
  backend's arrays take the op path) of float32 or float64, one dtype and shape for all but the
  scalar state (step counts and the like: any floating dtype, as loaded); the tensors written are
  writeable (not an expanded view) and not inference tensors; ``plain_arrays`` and
  ``plain_scalar`` check it. Otherwise the op path runs, and raises its errors;
- the update does not make a state tensor from the gradient: SGD's momentum buffer, a clone of the
  first gradient, is made by the op path on the parameter's first step.

Why the results are the same: with grad mode off and no interposer, each op of the op path on
these operands ends in ``run_op`` (or the C op call, which re-states it), whose forward is one
NumPy ufunc on the arrays and the Python scalars (two for ``add`` with an ``alpha`` other than 1:
the product first), in the array's dtype by NumPy's rule for Python scalars, so no promotion
follows; an in-place op then copies that result into its target (``_write_inplace``). The array
path calls the same ufuncs with the same Python scalars, computed by the same Python expressions,
so every intermediate value is rounded as before, bit for bit in float32 and float64 (the tests
compare the two paths on every optimizer and option set). What else an in-place op does, the
array path does too: ``before_inplace_write`` before a tensor's first write of the update (Note
[Mutation of saved tensors]; later writes of the same update find the saved values cloned
already) and one bump of the written tensor's version counter per in-place op of the op path, so
``_version`` moves as PyTorch's does for the same step, and a graph that saved a parameter raises
PyTorch's error on backward after ``step()``. Both paths run under retrograd's quiet
floating-point state (Note [NumPy's floating-point warnings]), set after the closure has run.
Nothing else observes an op call with grad mode off: no node, no hook, no saved tensor. The
paths may mix within one step, parameter by parameter; the step's bookkeeping (state made on the
first step, the step hooks, ``state_dict``) is shared.
"""
from __future__ import annotations

import copy
import functools
from collections import defaultdict
from collections.abc import Iterable

from .. import _dtype
from .._creation import tensor
from .._tensor import Tensor
from ..autograd import grad_mode
from ..backends.numpy_backend import FP_QUIET, FP_STATE
from ..ops._call import interposition
from ..utils.hooks import HookDict, add_hook
from ._arrays import python_numbers

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a default that every parameter group must provide (as ``torch.optim.optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class of all optimizers, as ``torch.optim.Optimizer``.

    Args:
        params (iterable): tensors to optimize, ``(name, tensor)`` pairs, or dicts defining
            parameter groups (each with a ``"params"`` entry and optional per-group options).
        defaults (dict): the options used by groups that do not set them.

    Raises:
        TypeError: ``params`` is a single tensor, or holds something other than tensors.
        ValueError: the parameter list is empty, or a parameter appears in two groups.

    Example::
        >>> import retrograd as rg
        >>> w = rg.zeros(2, requires_grad=True)
        >>> opt = rg.optim.SGD([w], lr=0.5)
        >>> (w - 1).pow(2).sum().backward(); opt.step(); w
        tensor([1., 1.], requires_grad=True)
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self._step_pre_hooks = HookDict()
        self._step_post_hooks = HookDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__module__}.{type(params).__name__}")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # -- groups ---------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Adds a group of parameters, with its own options, to ``param_groups``.

        Args:
            param_group (dict): ``{"params": tensors, **options}``; missing options take the defaults.

        Raises:
            TypeError: the params are a set, or not tensors.
            ValueError: a parameter is not a leaf, a required option is missing, or a parameter is
                already in another group.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        group = dict(param_group)
        if params and all(isinstance(p, tuple) and len(p) == 2 for p in params):
            group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__module__}.{type(p).__name__}")
            if not (self.defaults.get("differentiable", False) or p.is_leaf):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{name}")
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        if self.param_groups and ("param_names" in group) != ("param_names" in self.param_groups[0]):
            raise ValueError("all optimizer param groups with named parameters must have names, or none of them")
        self.param_groups.append(group)

    # -- gradients ------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every optimized tensor.

        Args:
            set_to_none (bool): set ``.grad`` to None (the default, cheaper) instead of filling
                it with zeros in place.
        """
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if grad._node is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                with grad_mode.no_grad():
                    grad.zero_()

    def step(self, closure=None):
        """Performs one update of every parameter that has a gradient (see the subclasses).

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        raise NotImplementedError

    def register_step_pre_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs)``, run before each ``step``; it may return
        ``(new_args, new_kwargs)`` to replace the step's arguments.

        Returns:
            A handle whose ``remove()`` unregisters the hook.
        """
        return add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs)``, run after each ``step``.

        Returns:
            A handle whose ``remove()`` unregisters the hook.
        """
        return add_hook(self._step_post_hooks, hook)

    def _eval_closure(self, closure):
        """Runs the closure with grad mode on. See Note [Optimizer updates]."""
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    def _update_mode(self):
        """What a step's arithmetic runs under (``_StepMode``): grad mode on with ``differentiable=True``, else
        off. See Note [Optimizer updates]."""
        return _StepMode(bool(self.defaults.get("differentiable", False)))

    # See Note [Optimizer updates on arrays]; False forces the op path.
    _array_updates = True

    def _arrays_allowed(self, group, *hypers) -> bool:
        """Whether the group's updates may run on the arrays, given the hyper-parameters they compute with.

        The parameters, gradients and states are checked one by one (``plain_arrays``). See Note
        [Optimizer updates on arrays].
        """
        return (self._array_updates and not group.get("differentiable", False) and not interposition.stack
                and python_numbers(hypers))

    def _grad_of(self, p, group, weight_decay=0):
        """The gradient the op path's update of ``p`` uses.

        The gradient is negated when the group maximizes, then gets ``weight_decay * p`` added (the
        L2 penalty) when ``weight_decay`` is nonzero; the parameter's own ``.grad`` is never changed.
        It is made when the loop reaches ``p``, so a parameter listed twice in a group is decayed with
        its value after the first update, as in PyTorch's for-loop implementations.
        """
        grad = -p._grad if group.get("maximize", False) else p._grad
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        return grad

    def _state_of(self, p, group):
        """The state of ``p``, made on its first step (see Note [Optimizer updates]): ``"step"``, a
        scalar tensor of ``_scalar_dtype()`` as in PyTorch's state dicts, then the buffers
        ``_init_state`` adds."""
        state = self.state[p]
        if not state:
            state["step"] = tensor(0.0, dtype=_scalar_dtype())
            self._init_state(state, p, group)
        return state

    def _stepped_state(self, p, group):
        """The state of ``p`` (``_state_of``) with its ``"step"`` count advanced by one."""
        state = self._state_of(p, group)
        state["step"].add_(1)
        return state

    def _init_state(self, state, p, group):
        """Adds a subclass's buffers for ``p`` to its new ``state``; none by default."""

    # -- state dict -----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Returns the optimizer's state as ``{"state": {index: {...}}, "param_groups": [...]}``.

        Parameters are replaced by their index in the order of ``param_groups``, so the dict can be
        loaded into an optimizer built over other tensors of the same shapes. The state tensors are
        the live ones (not copies), as in PyTorch.
        """
        index_of: dict[int, int] = {}
        start = 0
        packed_groups = []
        for group in self.param_groups:
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(packed["params"])
            packed_groups.append(packed)
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Loads a dict made by ``state_dict``, cast to each parameter's dtype and device.

        The loaded state tensors are copies, so two optimizers loaded from the same dict never
        share (and corrupt) each other's state. ``"step"`` entries keep their own dtype.

        Raises:
            ValueError: the number of groups or of parameters in a group differs.
        """
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, sg in zip(groups, saved_groups, strict=True):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
        id_map = {old: p for g, sg in zip(groups, saved_groups, strict=True)
                  for old, p in zip(sg["params"], g["params"], strict=True)}
        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {k: _cast_state(param, v, k) for k, v in value.items()}
            else:
                state[key] = value
        new_groups = []
        for g, sg in zip(groups, saved_groups, strict=True):
            sg["params"] = g["params"]
            if "param_names" in g and "param_names" not in sg:
                sg["param_names"] = g["param_names"]
            new_groups.append(sg)
        self.state = state
        self.param_groups = new_groups
        for group in self.param_groups:  # dicts saved by older versions may lack newer options
            for name, default in self.defaults.items():
                if default is not required:
                    group.setdefault(name, default)

    # -- printing -------------------------------------------------------------------------------
    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key not in ("params", "param_names"):
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._step_pre_hooks = HookDict()
        self._step_post_hooks = HookDict()


class _StepMode:
    """What a step's arithmetic runs under: grad mode (``set_grad_enabled(differentiable)``) and, where
    the array path may run, retrograd's quiet floating-point state. See Note [Optimizer updates on arrays]."""

    __slots__ = ("grad", "quiet", "token")

    def __init__(self, differentiable):
        self.grad = grad_mode.set_grad_enabled(differentiable)
        self.quiet = not differentiable
        self.token = None

    def __enter__(self):
        self.grad.__enter__()
        if self.quiet:
            self.token = FP_STATE.set(FP_QUIET)
        return self

    def __exit__(self, *exc):
        if self.token is not None:
            FP_STATE.reset(self.token)
            self.token = None
        return self.grad.__exit__(*exc)


def _with_step_hooks(step):
    """Wraps a subclass's ``step`` so that it runs the step hooks and marks the optimizer stepped."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in tuple(self._step_pre_hooks.values()):
            replaced = hook(self, args, kwargs)
            if replaced is not None:
                if not (isinstance(replaced, tuple) and len(replaced) == 2):
                    raise RuntimeError(f"optimizer step pre-hook must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {replaced}.")
                args, kwargs = replaced
        result = step(self, *args, **kwargs)
        self._opt_called = True  # lets an LR scheduler warn when it is stepped before the optimizer
        for hook in tuple(self._step_post_hooks.values()):
            hook(self, args, kwargs)
        return result
    return wrapper


def _cast_state(param, value, key):
    """A copy of one state entry on the parameter's device (and dtype, for floating state)."""
    if isinstance(value, Tensor):
        if key == "step":
            return value.clone()
        if param.is_floating_point() and value.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device, copy=True)
        return value.to(device=param.device, copy=True)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return type(value)(_cast_state(param, v, key) for v in value)
    return value


def _check_hyper(value, message):
    """Raises ValueError(message) if a hyper-parameter is negative (NaN passes, as in PyTorch)."""
    if isinstance(value, Tensor):
        value = value.item()
    if value < 0:
        raise ValueError(message)


def _scalar_dtype():
    """The dtype of the scalar state (step counts and the like): float64 when that is the default
    dtype, else float32, as PyTorch's non-fused optimizers."""
    return _dtype.float64 if _dtype.get_default_dtype() == _dtype.float64 else _dtype.float32


def _check_lr(lr):
    """Raises ValueError for a tensor ``lr`` of more than one element or a negative ``lr``, as PyTorch."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check_hyper(lr, f"Invalid learning rate: {lr}")


def _check_betas(betas):
    """Raises ValueError unless both betas lie in [0, 1), naming the first one that does not."""
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor):
            beta = beta.item()
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _scalar(value):
    """A hyper-parameter as a Python number (a one-element tensor ``lr`` or beta gives its value)."""
    return value.item() if isinstance(value, Tensor) else value


def _lerp_(start, end, weight):
    """``start += weight * (end - start)`` in place, rounded as ``torch.lerp_`` rounds (its two formulas)."""
    if weight < 0.5:
        return start.add_(end - start, alpha=weight)
    return start.copy_(end - (end - start).mul_(1 - weight))


def _check_fused(fused, foreach, differentiable):
    """Raises PyTorch's RuntimeError for ``fused`` with ``differentiable`` or with ``foreach``."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_differentiable(name, differentiable):
    """Refuses differentiable=True for an optimizer whose updates retrograd does not record (all but SGD, Adam, AdamW).

    ``foreach``, ``fused`` and ``capturable`` are accepted and change nothing: they choose among
    PyTorch kernels that compute the same numbers (``capturable`` keeps the scalars on the device
    for CUDA graphs, which retrograd does not capture; PyTorch refuses it for CPU parameters).
    """
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True is not supported by retrograd")
