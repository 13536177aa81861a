"""The ``nn`` layers, one module per kind (``linear``, ``conv``, ``pooling`` ...)."""

from __future__ import annotations

from . import (
    activation,
    adaptive,
    attention,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    lazy,
    linear,
    local_norms,
    loss,
    margin_losses,
    module,
    normalization,
    padding,
    pooling,
    random_activations,
    rnn,
    shuffle,
    sparse,
    transformer,
    unpooling,
    upsampling,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .attention import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .local_norms import *  # noqa: F403
from .loss import *  # noqa: F403
from .margin_losses import *  # noqa: F403
from .module import Module
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .random_activations import *  # noqa: F403
from .rnn import *  # noqa: F403
from .shuffle import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .unpooling import *  # noqa: F403
from .upsampling import *  # noqa: F403

# Literal lists, one per module (the modules' own ``__all__``, in this order): mypy reads no
# other form, and ``from .modules import *`` in ``nn`` would hide the layers from it.
# tests/test_typing.py checks that they match.
__all__ = ["Module"]
__all__ += [  # activation
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid",
    "Softplus", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "Hardtanh", "Hardswish",
    "Hardsigmoid", "LogSigmoid", "Softsign", "Tanhshrink", "Threshold", "GLU", "PReLU",
    "Hardshrink", "Softshrink"
]
__all__ += [  # adaptive
    "AdaptiveLogSoftmaxWithLoss"
]
__all__ += [  # attention
    "MultiheadAttention"
]
__all__ += [  # container
    "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"
]
__all__ += [  # conv
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"
]
__all__ += [  # distance
    "CosineSimilarity", "PairwiseDistance"
]
__all__ += [  # dropout
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"
]
__all__ += [  # flatten
    "Flatten", "Unflatten"
]
__all__ += [  # fold
    "Fold", "Unfold"
]
__all__ += [  # lazy
    "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"
]
__all__ += [  # linear
    "Identity", "Linear", "Bilinear"
]
__all__ += [  # local_norms
    "RMSNorm", "LocalResponseNorm", "LPPool1d", "LPPool2d", "LPPool3d"
]
__all__ += [  # loss
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"
]
__all__ += [  # margin_losses
    "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "SoftMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"
]
__all__ += [  # normalization
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LayerNorm", "GroupNorm"
]
__all__ += [  # padding
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"
]
__all__ += [  # pooling
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"
]
__all__ += [  # random_activations
    "RReLU", "FeatureAlphaDropout"
]
__all__ += [  # rnn
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"
]
__all__ += [  # shuffle
    "PixelShuffle", "PixelUnshuffle", "ChannelShuffle"
]
__all__ += [  # sparse
    "Embedding", "EmbeddingBag"
]
__all__ += [  # transformer
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer"
]
__all__ += [  # unpooling
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"
]
__all__ += [  # upsampling
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"
]
