"""The op table's entries for layers and losses (``nn.functional`` re-exports them).

One module per kind of layer: ``convolution``, ``pooling``, ``normalization``, ``dropout``,
``embedding``, ``padding``, ``activations`` (with ``activation_backward``, the derivatives of
the piecewise-linear ones as ops), ``losses`` and ``misc`` (bilinear, one-hot, ...).
Each module's ``PRIMITIVES`` are the ops other derivatives call through ``ops`` (a convolution's
gradient is a convolution), merged into the derivative namespaces by ``ops/__init__.py``.
"""

from __future__ import annotations

from typing import Any

from . import activation_backward as _activation_backward
from . import activations as _activations
from . import affine_grid as _affine_grid
from . import attention as _attention
from . import convolution as _convolution
from . import ctc as _ctc
from . import dropout as _dropout
from . import embedding as _embedding
from . import embedding_bag as _embedding_bag
from . import fold as _fold
from . import fractional_pooling as _fractional_pooling
from . import grid_sample as _grid_sample
from . import local_norms as _local_norms
from . import losses as _losses
from . import margin_losses as _margin_losses
from . import misc as _misc
from . import multi_head_attention as _multi_head_attention
from . import multi_margin_losses as _multi_margin_losses
from . import normalization as _normalization
from . import packing as _packing
from . import padding as _padding
from . import pdist as _pdist
from . import pooling as _pooling
from . import random_activations as _random_activations
from . import shuffle as _shuffle
from . import unpooling as _unpooling
from . import upsampling as _upsampling

_MODULES = (_activation_backward, _activations, _affine_grid, _attention, _convolution, _ctc,
            _dropout, _embedding, _embedding_bag, _fold, _fractional_pooling, _grid_sample,
            _local_norms, _losses, _margin_losses, _misc, _multi_head_attention,
            _multi_margin_losses, _normalization, _packing, _padding, _pdist, _pooling,
            _random_activations, _shuffle, _unpooling, _upsampling)

# Star imports last: ``dropout`` and ``embedding`` are functions here, not the modules.
from .activations import *  # noqa: F403
from .affine_grid import *  # noqa: F403
from .attention import *  # noqa: F403
from .convolution import *  # noqa: F403
from .ctc import *  # noqa: F403
from .dropout import *  # noqa: F403
from .embedding import *  # noqa: F403
from .embedding_bag import *  # noqa: F403
from .fold import *  # noqa: F403
from .fractional_pooling import *  # noqa: F403
from .grid_sample import *  # noqa: F403
from .local_norms import *  # noqa: F403
from .losses import *  # noqa: F403
from .margin_losses import *  # noqa: F403
from .misc import *  # noqa: F403
from .multi_head_attention import *  # noqa: F403
from .multi_margin_losses import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pdist import *  # noqa: F403
from .pooling import *  # noqa: F403
from .random_activations import *  # noqa: F403
from .shuffle import *  # noqa: F403
from .unpooling import *  # noqa: F403
from .upsampling import *  # noqa: F403

# Literal lists, one per module (the modules' own ``__all__``, in ``_MODULES`` order): mypy
# reads no other form, and ``from ..ops.nn_ops import *`` in ``nn.functional`` would hide
# the ops from it. tests/test_typing.py checks that they match.
__all__ = [  # activations
    "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "softplus", "hardtanh", "relu6",
    "logsigmoid", "hardswish", "hardsigmoid", "mish", "softsign", "tanhshrink", "softmin",
    "threshold", "glu", "prelu", "hardshrink", "softshrink"
]
__all__ += [  # affine_grid
    "affine_grid"
]
__all__ += [  # attention
    "scaled_dot_product_attention"
]
__all__ += [  # convolution
    "convolution", "convolution_backward_input", "convolution_backward_weight", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"
]
__all__ += [  # ctc
    "ctc_loss"
]
__all__ += [  # dropout
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"
]
__all__ += [  # embedding
    "embedding", "embedding_backward"
]
__all__ += [  # embedding_bag
    "embedding_bag"
]
__all__ += [  # fold
    "unfold", "fold"
]
__all__ += [  # fractional_pooling
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices"
]
__all__ += [  # grid_sample
    "grid_sample"
]
__all__ += [  # local_norms
    "rms_norm", "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d"
]
__all__ += [  # losses
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"
]
__all__ += [  # margin_losses
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "poisson_nll_loss", "gaussian_nll_loss"
]
__all__ += [  # misc
    "bilinear", "one_hot", "normalize", "cosine_similarity", "pairwise_distance"
]
__all__ += [  # multi_head_attention
    "multi_head_attention_forward"
]
__all__ += [  # multi_margin_losses
    "multi_margin_loss", "multilabel_margin_loss"
]
__all__ += [  # normalization
    "batch_norm", "layer_norm", "group_norm", "instance_norm"
]
__all__ += [  # padding
    "pad", "constant_pad_nd"
]
__all__ += [  # pdist
    "pdist"
]
__all__ += [  # pooling
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices"
]
__all__ += [  # random_activations
    "rrelu", "rrelu_", "feature_alpha_dropout", "gumbel_softmax"
]
__all__ += [  # shuffle
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"
]
__all__ += [  # unpooling
    "max_unpool1d", "max_unpool2d", "max_unpool3d"
]
__all__ += [  # upsampling
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"
]

PRIMITIVES: dict[str, Any] = {}
for _module in _MODULES:
    PRIMITIVES.update(getattr(_module, "PRIMITIVES", {}))
