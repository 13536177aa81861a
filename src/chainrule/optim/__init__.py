"""``chainrule.optim``: optimizers and learning-rate schedules.

Example:
    >>> import chainrule as torch
    >>> model = torch.nn.Linear(2, 1)
    >>> opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    >>> loss = model(torch.ones(4, 2)).pow(2).mean()
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""

from __future__ import annotations

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
