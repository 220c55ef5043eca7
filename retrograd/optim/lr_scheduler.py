"""Learning-rate schedulers: LRScheduler (the base), StepLR and CosineAnnealingLR, as in torch.optim."""
from __future__ import annotations

import math
import warnings

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR"]

_EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please "
    "use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available.")


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

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates for epoch ``last_epoch``, computed from the current ones (subclasses)."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        """Advances one epoch (or jumps to ``epoch``, deprecated) and sets the groups' learning rates.

        Call it after ``optimizer.step()``.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you "
                "should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure "
                "to do this will result in PyTorch skipping the first value of the learning rate schedule.",
                UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(_EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """The scheduler's state: every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores a state made by ``state_dict``."""
        self.__dict__.update(state_dict)


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
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
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
        groups = self.optimizer.param_groups
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [group["lr"] for group in groups]
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
