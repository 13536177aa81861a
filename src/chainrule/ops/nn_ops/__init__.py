"""The op table's entries for layers and losses (``nn.functional`` re-exports them).

One module per kind of layer: ``convolution``, ``pooling``, ``normalization``, ``dropout``,
``embedding``, ``padding``, ``activations`` (with ``activation_backward``, the derivatives of
the piecewise-linear ones as ops), ``losses`` and ``misc`` (bilinear, one-hot, ...).
Each module's ``PRIMITIVES`` are the ops other derivatives call through ``F`` (a convolution's
gradient is a convolution), merged into the derivative namespaces by ``ops/__init__.py``.
"""

from __future__ import annotations

from typing import Any

from . import activation_backward as _activation_backward
from . import activations as _activations
from . import convolution as _convolution
from . import dropout as _dropout
from . import embedding as _embedding
from . import losses as _losses
from . import misc as _misc
from . import normalization as _normalization
from . import padding as _padding
from . import pooling as _pooling

_MODULES = (_activation_backward, _activations, _convolution, _dropout, _embedding, _losses,
            _misc, _normalization, _padding, _pooling)

# Star imports last: ``dropout`` and ``embedding`` are functions here, not the modules.
from .activations import *  # noqa: F403
from .convolution import *  # noqa: F403
from .dropout import *  # noqa: F403
from .embedding import *  # noqa: F403
from .losses import *  # noqa: F403
from .misc import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403

__all__ = [name for module in _MODULES for name in module.__all__]

PRIMITIVES: dict[str, Any] = {}
for _module in _MODULES:
    PRIMITIVES.update(getattr(_module, "PRIMITIVES", {}))
