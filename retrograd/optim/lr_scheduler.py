"""Learning-rate schedulers with torch.optim.lr_scheduler's names, learning rates, state dicts and warnings."""
from __future__ import annotations

import functools
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"]

_EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please "
    "use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. Please open an issue if you are unable "
    "to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


class LRScheduler:
    """Base class of the schedulers: sets each group's ``"lr"`` from ``get_lr()`` at every ``step()``.

    Construction records ``initial_lr`` in each group and takes a first step (epoch 0).

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        last_epoch (int): the index of the last epoch when resuming (default -1: a fresh start,
            which needs no ``initial_lr`` in the groups).

    Raises:
        TypeError: ``optimizer`` is not an Optimizer.
        KeyError: resuming (``last_epoch != -1``) with a group that has no ``initial_lr``.
    """

    _get_lr_called_within_step = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                                   "with last_epoch >= 0.\nThis typically happens when you resume from a checkpoint "
                                   "without loading the optimizer's state, or pass last_epoch >= 0 to a fresh run.")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """Resets the step count and takes the first step, with ``_is_initial`` set while it runs."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates for epoch ``last_epoch``, computed from the current ones (subclasses)."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set, one per parameter group."""
        return self._last_lr

    def _warn_outside_step(self):
        """Warns, as PyTorch, when ``get_lr`` is called by the user rather than by ``step``."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch=None) -> None:
        """Advances one epoch (or jumps to ``epoch``, deprecated) and sets the groups' learning rates.

        Call it after ``optimizer.step()``.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you "
                "should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure "
                "to do this will result in PyTorch skipping the first value of the learning rate schedule. See more "
                "details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Moves to the next epoch (or to ``epoch``, by the closed form where there is one) and sets the lrs."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def state_dict(self) -> dict:
        """The scheduler's state: every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores a state made by ``state_dict``."""
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler  # the old name, kept by PyTorch


def _group_values(optimizer, key):
    """Each group's ``key``, a tensor value copied (so later in-place updates of the group leave it alone)."""
    return [group[key].clone() if isinstance(group[key], Tensor) else group[key] for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    """Sets a group's ``key``, in place where the group holds a tensor (a tensor ``lr``)."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _per_group(name, optimizer, value):
    """One value per parameter group: a list or tuple is checked for length, a single value repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
    else:
        value = [value] * len(optimizer.param_groups)
    return [v.clone() if isinstance(v, Tensor) else v for v in value]


class StepLR(LRScheduler):
    """Multiplies each group's learning rate by ``gamma`` every ``step_size`` epochs, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        step_size (int): the period of the decay, in epochs.
        gamma (float): the decay factor (default 0.1).
        last_epoch (int): the last epoch when resuming (default -1).

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> for _ in range(4): opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneals each learning rate along a cosine from its initial value to ``eta_min`` in ``T_max`` epochs.

    ``lr_t = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``, computed
    recursively from the current learning rate as PyTorch does (so changes made to ``lr``
    between steps carry on), and rising again after ``T_max`` (SGDR without restarts).

    Args:
        optimizer (Optimizer): the optimizer.
        T_max (int): the number of epochs of a half period.
        eta_min (float): the minimum learning rate (default 0).
        last_epoch (int): the last epoch when resuming (default -1).

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and t > 0:
            return self._get_closed_form_lr()
        if (t - 1 - T) % (2 * T) == 0:  # the bottom of the cosine: restart the climb from base_lr's scale
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (group["lr"] - eta_min)
                + eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


def _lambdas(optimizer, lr_lambda):
    """One multiplier function per parameter group (a single one is shared by all)."""
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaState:
    """The state_dict of a scheduler holding ``lr_lambdas``: a callable object's attributes are saved,
    a plain function is saved as None (it cannot be pickled reliably), as in PyTorch."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved, strict=False):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_LambdaState, LRScheduler):
    """Sets each learning rate to its initial value times ``lr_lambda(epoch)``, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        lr_lambda (callable or list): a function of the epoch, or one per parameter group.
        last_epoch (int): the last epoch when resuming (default -1).

    Raises:
        ValueError: a list of functions whose length is not the number of groups.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
        >>> for _ in range(3): opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.125]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Multiplies each learning rate by ``lr_lambda(epoch)`` at every epoch after the first, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        lr_lambda (callable or list): a function of the epoch, or one per parameter group.
        last_epoch (int): the last epoch when resuming (default -1).

    Raises:
        ValueError: a list of functions whose length is not the number of groups.
        TypeError: an ``lr_lambda`` that is not callable.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
        >>> for _ in range(2): opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


class MultiStepLR(LRScheduler):
    """Multiplies each learning rate by ``gamma`` at each milestone epoch, as ``torch``'s.

    A milestone listed twice multiplies by ``gamma`` twice.

    Args:
        optimizer (Optimizer): the optimizer.
        milestones (iterable of int): the epochs of the decays.
        gamma (float): the decay factor (default 0.1).
        last_epoch (int): the last epoch when resuming (default -1).

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
        >>> for _ in range(3): opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiplies each learning rate by ``factor`` until epoch ``total_iters``, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        factor (float): the factor, in [0, 1] (default 1/3).
        total_iters (int): the epoch at which the factor is lifted (default 5).
        last_epoch (int): the last epoch when resuming (default -1).

    Raises:
        ValueError: ``factor`` outside [0, 1].

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> lrs = []
        >>> for _ in range(3): lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
        >>> lrs
        [0.5, 0.5, 1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales each learning rate by a factor going linearly from ``start_factor`` to ``end_factor``
    over ``total_iters`` epochs, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        start_factor (float): the first factor, in (0, 1] (default 1/3).
        end_factor (float): the last factor, in [0, 1] (default 1.0).
        total_iters (int): the number of epochs of the ramp (default 5).
        last_epoch (int): the last epoch when resuming (default -1).

    Raises:
        ValueError: a factor out of its range.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> lrs = []
        >>> for _ in range(3): lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
        >>> lrs
        [0.5, 0.75, 1.0]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies each learning rate by ``gamma`` every epoch, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        gamma (float): the decay factor.
        last_epoch (int): the last epoch when resuming (default -1).

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> for _ in range(2): opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decays each learning rate as ``(1 - epoch / total_iters) ** power`` down to 0, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        total_iters (int): the epoch at which the rate reaches 0 (default 5).
        power (float): the power of the polynomial (default 1.0).
        last_epoch (int): the last epoch when resuming (default -1).

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
        >>> for _ in range(2): opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        t, T = self.last_epoch, self.total_iters
        decay = ((1.0 - t / T) / (1.0 - (t - 1) / T)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


def _check_members(owner, optimizer, schedulers):
    """Checks the schedulers a SequentialLR or ChainedScheduler combines, with PyTorch's errors."""
    name = type(owner).__name__
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs "
                             f"to be specified when calling `step`, but got one at index {i} in the given schedulers "
                             "sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is different "
                             f"from {type(optimizer).__name__}.")


class _CompositeState:
    """The state_dict of a scheduler made of others: its own attributes and each member's state_dict."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        members = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, saved in zip(self._schedulers, members, strict=False):
            scheduler.load_state_dict(saved)


class SequentialLR(_CompositeState, LRScheduler):
    """Runs ``schedulers`` one after another, switching at each milestone epoch, as ``torch``'s.

    At a milestone the next scheduler starts from epoch 0 (its closed form at 0); the learning
    rates are reset to the groups' ``initial_lr`` at construction.

    Args:
        optimizer (Optimizer): the optimizer all the schedulers belong to.
        schedulers (list): the schedulers, in order.
        milestones (list of int): the epochs of the switches, one fewer than the schedulers.
        last_epoch (int): the last epoch when resuming (default -1).

    Raises:
        ValueError: no schedulers, a ReduceLROnPlateau, a scheduler of another optimizer, or the
            wrong number of milestones.
        TypeError: a member without an ``optimizer``.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> warmup = rg.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
        >>> decay = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = rg.optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
        >>> lrs = []
        >>> for _ in range(4): lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
        >>> [round(lr, 4) for lr in lrs]
        [0.1, 0.1, 1.0, 0.5]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got no scheduler.")
        _check_members(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()  # the members' constructors each took a step; undo them
        first = self._schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None):
        """Moves every member (and the members of composite members) one epoch back."""
        stack = [self if sched is None else sched]
        while stack:
            s = stack.pop()
            if hasattr(s, "_schedulers"):
                stack.extend(reversed(s._schedulers))
            elif hasattr(s, "last_epoch"):
                s.last_epoch -= 1

    def step(self):
        """Advances one epoch with the scheduler whose turn it is (restarting it at its milestone)."""
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_CompositeState, LRScheduler):
    """Steps every scheduler of ``schedulers`` at each ``step()``, so their changes compose, as ``torch``'s.

    Args:
        schedulers (sequence): the schedulers, stepped in order.
        optimizer (Optimizer, optional): their optimizer (default: the first scheduler's).

    Raises:
        ValueError: no schedulers, a ReduceLROnPlateau, or a scheduler of another optimizer.
        TypeError: a member without an ``optimizer``.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> s1 = rg.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> s2 = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = rg.optim.lr_scheduler.ChainedScheduler([s1, s2])
        >>> lrs = []
        >>> for _ in range(3): lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
        >>> lrs
        [0.5, 0.25, 0.25]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self):
        """Steps every member, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the learning rates by ``factor`` once a metric has stopped improving for
    ``patience`` epochs, as ``torch``'s.

    Args:
        optimizer (Optimizer): the optimizer.
        mode (str): ``"min"`` (lower is better, the default) or ``"max"``.
        factor (float): the reduction factor, below 1 (default 0.1).
        patience (int): epochs without improvement tolerated before a reduction (default 10).
        threshold (float): the least change that counts as an improvement (default 1e-4).
        threshold_mode (str): ``"rel"`` (relative to the best, the default) or ``"abs"``.
        cooldown (int): epochs to wait after a reduction before counting again (default 0).
        min_lr (float or list): the floor of the learning rates, or one per group (default 0).
        eps (float): a reduction smaller than this is skipped (default 1e-8).

    Raises:
        ValueError: ``factor >= 1``, an unknown mode or threshold mode, or ``min_lr`` of the wrong length.
        TypeError: ``optimizer`` is not an Optimizer.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
        >>> for loss in [3.0, 2.0, 2.0, 2.0]: opt.step(); sched.step(loss)
        >>> sched.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        """Forgets the best value, the bad epochs and the cooldown."""
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        """Whether a reduction happened less than ``cooldown`` epochs ago."""
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        """Records this epoch's metric and reduces the learning rates after ``patience`` bad epochs.

        Args:
            metrics (float): the metric (a one-element tensor works too).
            epoch (int, optional): deprecated; sets the epoch number.
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown are not counted
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        """Multiplies every group's lr by ``factor``, not below its ``min_lr`` nor by less than ``eps``."""
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                                   f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                                   "param group being added to the optimizer. Please modify the `min_lrs` field to "
                                   "match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    def _is_better(self, a, best):
        """Whether ``a`` improves on ``best`` by more than the threshold."""
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" else a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        """Checks and sets the comparison options."""
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restores a state made by ``state_dict``."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


def _cycle_momentum_setup(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """Checks that the optimizer has a momentum (or a beta1) and, on a fresh start, sets it to
    ``max_momentum`` and records both bounds in each group, as CyclicLR and OneCycleLR do."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    base = _per_group("base_momentum", optimizer, base_momentum)
    top = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m, b, group in zip(top, base, optimizer.param_groups, strict=True):
            _set_momentum(scheduler, group, m)
            group["max_momentum"] = m
            group["base_momentum"] = b
    return base, top


def _set_momentum(scheduler, group, momentum):
    """Sets a group's momentum, or the first of its betas for Adam-like optimizers."""
    if scheduler.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class CyclicLR(LRScheduler):
    """Cycles each learning rate between ``base_lr`` and ``max_lr`` (and the momentum inversely),
    as ``torch``'s (Smith, "Cyclical Learning Rates for Training Neural Networks").

    Step it after every batch. Each cycle rises for ``step_size_up`` steps and falls for
    ``step_size_down``; the amplitude is scaled by ``mode`` (``"triangular"``: constant,
    ``"triangular2"``: halved each cycle, ``"exp_range"``: ``gamma ** step``) or by ``scale_fn``.

    Args:
        optimizer (Optimizer): the optimizer.
        base_lr (float or list): the lower bound of each cycle, per group.
        max_lr (float or list): the upper bound of each cycle, per group.
        step_size_up (int): steps of the rising half (default 2000).
        step_size_down (int, optional): steps of the falling half (default ``step_size_up``).
        mode (str): ``"triangular"`` (default), ``"triangular2"`` or ``"exp_range"``.
        gamma (float): the base of ``"exp_range"`` (default 1.0).
        scale_fn (callable, optional): a custom amplitude scale, replacing ``mode``.
        scale_mode (str): whether ``scale_fn`` takes the ``"cycle"`` (default) or the ``"iterations"``.
        cycle_momentum (bool): cycle the momentum between ``max_momentum`` and ``base_momentum`` (default True).
        base_momentum (float or list): the lower momentum bound (default 0.8).
        max_momentum (float or list): the upper momentum bound (default 0.9).
        last_epoch (int): the index of the last batch when resuming (default -1).

    Raises:
        ValueError: an unknown mode without ``scale_fn``, per-group lists of the wrong length, or
            ``cycle_momentum`` with an optimizer that has no momentum.
        TypeError: ``optimizer`` is not an Optimizer.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
        >>> sched = rg.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
        >>> lrs = []
        >>> for _ in range(5): lrs.append(round(sched.get_last_lr()[0], 4)); opt.step(); sched.step()
        >>> lrs
        [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _cycle_momentum_setup(self, optimizer, base_momentum,
                                                                            max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        """Picks the amplitude scale of ``mode`` (and the scale mode it implies) unless ``scale_fn`` was given."""
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = _triangular_scale
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _triangular2_scale
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = functools.partial(_exp_range_scale, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude scale at ``x`` (a cycle number or an iteration, per ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self):
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        # scale_fn is called once per group and per momentum, as PyTorch calls it (it may keep state).
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            momenta = [max_m - (max_m - base_m) * scale_factor * self.scale_fn(at)
                       for base_m, max_m in zip(self.base_momentums, self.max_momentums, strict=True)]
            for group, momentum in zip(self.optimizer.param_groups, momenta, strict=True):
                _set_momentum(self, group, momentum)
        return lrs

    def state_dict(self):
        """The scheduler's state; a custom ``scale_fn`` is saved as its attributes (None for a function)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Restores a state made by ``state_dict``."""
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _triangular_scale(x):
    """CyclicLR's ``"triangular"`` amplitude: constant."""
    return 1.0


def _triangular2_scale(x):
    """CyclicLR's ``"triangular2"`` amplitude: halved every cycle."""
    return 1 / (2.0 ** (x - 1))


def _exp_range_scale(gamma, x):
    """CyclicLR's ``"exp_range"`` amplitude: ``gamma ** iteration``."""
    return gamma ** x


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from each initial learning rate to ``eta_min``, restarted every ``T_i``
    epochs, with ``T_i`` multiplied by ``T_mult`` at each restart (SGDR), as ``torch``'s.

    ``step(epoch)`` with a fractional epoch sets the position within the cycle (for stepping
    after every batch).

    Args:
        optimizer (Optimizer): the optimizer.
        T_0 (int): the length of the first cycle.
        T_mult (int): the growth of the cycle length at each restart (default 1).
        eta_min (float): the minimum learning rate (default 0).
        last_epoch (int): the last epoch when resuming (default -1).

    Raises:
        ValueError: ``T_0`` not a positive integer, ``T_mult`` not an integer >= 1, ``eta_min`` not a
            number, or a negative ``epoch`` given to ``step``.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
        >>> lrs = []
        >>> for _ in range(4): lrs.append(round(sched.get_last_lr()[0], 4)); opt.step(); sched.step()
        >>> lrs
        [1.0, 0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advances one epoch, or moves to ``epoch`` (which may be fractional), restarting where due.

        Raises:
            ValueError: a negative ``epoch``.
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:  # the index n of the cycle holding epoch, from the sum of the geometric lengths
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy: each learning rate climbs from ``max_lr / div_factor`` to ``max_lr``, then
    anneals to ``initial_lr / final_div_factor`` over ``total_steps`` steps (the momentum moves
    inversely), as ``torch``'s (Smith and Topin, "Super-Convergence").

    Step it after every batch; stepping more than ``total_steps`` times raises.

    Args:
        optimizer (Optimizer): the optimizer.
        max_lr (float or list): the peak learning rate, per group.
        total_steps (int, optional): the number of steps; else ``epochs * steps_per_epoch``.
        epochs (int, optional): the number of epochs.
        steps_per_epoch (int, optional): the number of steps per epoch.
        pct_start (float): the fraction of the steps spent climbing (default 0.3).
        anneal_strategy (str): ``"cos"`` (default) or ``"linear"``.
        cycle_momentum (bool): cycle the momentum inversely (default True).
        base_momentum (float or list): the momentum at the peak lr (default 0.85).
        max_momentum (float or list): the momentum at the ends (default 0.95).
        div_factor (float): ``initial_lr = max_lr / div_factor`` (default 25).
        final_div_factor (float): ``min_lr = initial_lr / final_div_factor`` (default 1e4).
        three_phase (bool): come back down to ``initial_lr`` symmetrically before annealing to
            ``min_lr`` (default False).
        last_epoch (int): the index of the last batch when resuming (default -1).

    Raises:
        ValueError: no way to know the total steps, a non-positive count, ``pct_start`` outside
            [0, 1] or not a float, an unknown ``anneal_strategy``, per-group lists of the wrong
            length, or ``cycle_momentum`` with an optimizer that has no momentum.
        TypeError: ``optimizer`` is not an Optimizer.

    Example::
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
        >>> sched = rg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="linear")
        >>> lrs = []
        >>> for _ in range(5): lrs.append(round(sched.get_last_lr()[0], 4)); opt.step(); sched.step()
        >>> lrs
        [0.04, 0.8571, 0.5714, 0.2857, 0.0]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        up_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                       "max_momentum"),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _cycle_momentum_setup(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        """The value ``pct`` of the way from ``start`` to ``end``, along a half cosine or a line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        self._warn_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(self, group, self._anneal_func(group[phase["start_momentum"]],
                                                                     group[phase["end_momentum"]], pct))
                    break
                start_step = phase["end_step"]
        return lrs


def _phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
    """One phase of OneCycleLR: the step it ends at and the group keys it goes from and to."""
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr, "start_momentum": start_momentum,
            "end_momentum": end_momentum}
