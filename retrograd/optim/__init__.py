"""retrograd.optim: optimizers and learning-rate schedulers with torch.optim's names and numbers."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD",
           "LBFGS", "lr_scheduler"]
