"""``chainrule.optim``: optimizers and learning-rate schedules.

Example:
    >>> import chainrule as torch
    >>> model = torch.nn.Linear(2, 1)
    >>> opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    >>> loss = model(torch.ones(4, 2)).pow(2).mean()
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""

from __future__ import annotations

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .swap_in_state import swap_in_optimizer_params_and_state

__all__ = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "lr_scheduler",
    "swa_utils",
    "swap_in_optimizer_params_and_state",
]
