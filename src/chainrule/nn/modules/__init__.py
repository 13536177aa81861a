"""The ``nn`` layers, one module per kind (``linear``, ``conv``, ``pooling`` ...)."""

from __future__ import annotations

from . import (
    activation,
    container,
    conv,
    distance,
    dropout,
    flatten,
    linear,
    loss,
    module,
    normalization,
    padding,
    pooling,
    rnn,
    sparse,
)
from .activation import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403

__all__ = ["Module"]
for _m in (activation, container, conv, distance, dropout, flatten, linear, loss,
           normalization, padding, pooling, rnn, sparse):
    __all__ += _m.__all__
