"""The layer functions as PyTorch's top-level namespace spells them: ``torch.conv2d``,
``torch.batch_norm``, ``torch.max_pool2d``, ``torch.dropout``, ``torch.layer_norm`` ...

Most are ``nn.functional``'s functions themselves (PyTorch's ``F.conv2d`` is
``torch.conv2d``). The others take the ATen argument lists PyTorch's top-level functions take:
``torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
cudnn_enabled)``, ``torch.embedding(weight, indices, ...)``, losses with an integer
``reduction`` (0 none, 1 mean, 2 sum), ``stride=[]`` meaning the kernel size, and a required
``train`` for dropout. They build the same graphs as the ``nn.functional`` calls.

Example:
    >>> import chainrule as torch
    >>> torch.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor
from ..ops.nn_ops import _dropout as _dropout_ops  # (the modules: the package's names for
from ..ops.nn_ops import _embedding as _embedding_ops  # dropout and embedding are functions)
from ..ops.nn_ops.affine_grid import affine_grid_generator
from ..ops.nn_ops.ctc import torch_ctc_loss as ctc_loss
from ..ops.nn_ops.grid_sample import grid_sampler, grid_sampler_2d, grid_sampler_3d
from ..ops.nn_ops.margin_losses import triplet_margin_loss_any_margin
from . import functional as F

__all__ = [
    "adaptive_avg_pool1d",
    "affine_grid_generator",
    "adaptive_max_pool1d",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "constant_pad_nd",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "dropout",
    "dropout_",
    "embedding",
    "embedding_renorm_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "group_norm",
    "hardshrink",
    "hinge_embedding_loss",
    "instance_norm",
    "kl_div",
    "layer_norm",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool3d",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
]

# The same functions as nn.functional's.
adaptive_avg_pool1d = F.adaptive_avg_pool1d
bilinear = F.bilinear
celu = F.celu
celu_ = F.celu_
channel_shuffle = F.channel_shuffle
constant_pad_nd = F.constant_pad_nd
conv1d = F.conv1d
conv2d = F.conv2d
conv3d = F.conv3d
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d
conv_transpose3d = F.conv_transpose3d
convolution = F.convolution
cosine_similarity = F.cosine_similarity
hardshrink = F.hardshrink
native_channel_shuffle = F.native_channel_shuffle
pairwise_distance = F.pairwise_distance
pdist = F.pdist
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
prelu = F.prelu
rms_norm = F.rms_norm
selu = F.selu
selu_ = F.selu_
threshold = F.threshold
threshold_ = F.threshold_


def _reduction(reduction: Any, function: str, position: int) -> str:
    """ATen's reduction enum as ``nn.functional``'s string: 1 mean, 2 sum, any other integer
    none (ATen's ``apply_loss_reduction``); PyTorch's TypeError for anything else."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(
            f"{function}(): argument 'reduction' (position {position}) must be int, not "
            f"{type(reduction).__name__}"
        )
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def _stride(stride: Any) -> Any:
    """ATen's ``stride=[]``: the kernel size (``nn.functional``'s ``None``)."""
    if stride is None or (isinstance(stride, Sequence) and len(stride) == 0):
        return None
    return stride


# -- dropout -------------------------------------------------------------------------------------


def _check_p(p: float) -> None:
    # (ATen's check, a RuntimeError printing p as C++ does; nn.functional's is a ValueError)
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout(input, p, train)`` (``input`` itself when not training)."""
    _check_p(p)
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``dropout`` written into ``input``."""
    _check_p(p)
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.alpha_dropout(input, p, train)``."""
    _check_p(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``alpha_dropout`` written into ``input``."""
    _check_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.feature_alpha_dropout(input, p, train)``."""
    _check_p(p)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_alpha_dropout`` written into ``input``."""
    _check_p(p)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    _check_p(p)
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not train or p == 0:
        return input
    mask_shape = tuple(shape[:2]) + (1,) * (len(shape) - 2)
    mask = _dropout_ops._mask(mask_shape, p, input._data.dtype)
    return _dropout_ops._apply(input, mask, inplace)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole channels (dimension 1) of ``input`` with probability ``p``, scaling the rest
    by ``1 / (1 - p)`` (what ``F.dropout1d/2d/3d`` run)."""
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_dropout`` written into ``input``."""
    return _feature_dropout(input, p, train, True)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator: Any = None,
) -> Tensor:
    """``F.rrelu(input, lower, upper, training)``."""
    return F.rrelu(input, lower, upper, training)


def rrelu_(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator: Any = None,
) -> Tensor:
    """``rrelu`` written into ``input``."""
    return F.rrelu_(input, lower, upper, training)


# -- normalisation -------------------------------------------------------------------------------


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """``F.batch_norm`` with ATen's argument order (weight and bias first)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """``F.instance_norm`` with ATen's argument order (weight and bias first)."""
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Tensor:
    """``F.layer_norm`` (``cudnn_enable`` is ignored)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enabled: bool = True,
) -> Tensor:
    """``F.group_norm`` (``cudnn_enabled`` is ignored)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


# -- pooling -------------------------------------------------------------------------------------


def _max_pool(name: str, summary: str) -> Any:
    """``torch.<name>``: ``F.<name>`` with ATen's defaults (``stride=[]`` is the kernel
    size)."""
    pool = getattr(F, name)

    def max_pool(
        input: Tensor,
        kernel_size: Any,
        stride: Any = (),
        padding: Any = 0,
        dilation: Any = 1,
        ceil_mode: bool = False,
    ) -> Any:
        return pool(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    max_pool.__name__ = max_pool.__qualname__ = name
    max_pool.__doc__ = f"``F.{name}``{summary}"
    return max_pool


max_pool1d = _max_pool("max_pool1d", " (``stride=[]`` is the kernel size).")
max_pool2d = _max_pool("max_pool2d", " (``stride=[]`` is the kernel size).")
max_pool3d = _max_pool("max_pool3d", " (``stride=[]`` is the kernel size).")
max_pool1d_with_indices = _max_pool("max_pool1d_with_indices", ": the maxima and their indices.")


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """``F.avg_pool1d`` (``stride=[]`` is the kernel size)."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """The maxima and their indices (``F.adaptive_max_pool1d(..., return_indices=True)``)."""
    return F.adaptive_max_pool1d_with_indices(input, output_size)


# -- embedding -----------------------------------------------------------------------------------


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``F.embedding(indices, weight, ...)`` with ATen's order; a negative ``padding_idx``
    means none."""
    padding = None if padding_idx < 0 else padding_idx
    return F.embedding(indices, weight, padding, None, 2.0, scale_grad_by_freq, sparse)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Rescale the rows of ``input`` named by ``indices`` whose ``norm_type``-norm exceeds
    ``max_norm`` to that norm, in place (what ``F.embedding(..., max_norm=)`` runs first)."""
    _embedding_ops._renorm_rows(input, indices._data, max_norm, norm_type)
    return input


# -- losses (ATen's integer reduction) -----------------------------------------------------------


def kl_div(
    input: Tensor, target: Tensor, reduction: int = 1, *, log_target: bool = False
) -> Tensor:
    """``F.kl_div`` with an integer ``reduction``."""
    return F.kl_div(
        input, target, reduction=_reduction(reduction, "kl_div", 3), log_target=log_target
    )


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    """``F.binary_cross_entropy_with_logits`` with an integer ``reduction``."""
    return F.binary_cross_entropy_with_logits(
        input,
        target,
        weight,
        reduction=_reduction(reduction, "binary_cross_entropy_with_logits", 5),
        pos_weight=pos_weight,
    )


def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int
) -> Tensor:
    """``F.poisson_nll_loss`` with every argument given and an integer ``reduction``."""
    return F.poisson_nll_loss(
        input,
        target,
        log_input,
        full,
        eps=eps,
        reduction=_reduction(reduction, "poisson_nll_loss", 6),
    )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = 1,
) -> Tensor:
    """``F.triplet_margin_loss`` with an integer ``reduction`` and any margin (only the
    functional form requires a positive one)."""
    return triplet_margin_loss_any_margin(
        anchor,
        positive,
        negative,
        margin,
        p,
        eps,
        swap,
        _reduction(reduction, "triplet_margin_loss", 8),
    )


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 1
) -> Tensor:
    """``F.hinge_embedding_loss`` with an integer ``reduction``."""
    return F.hinge_embedding_loss(
        input, target, margin, reduction=_reduction(reduction, "hinge_embedding_loss", 4)
    )


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 1
) -> Tensor:
    """``F.margin_ranking_loss`` with an integer ``reduction``."""
    return F.margin_ranking_loss(
        input1, input2, target, margin, reduction=_reduction(reduction, "margin_ranking_loss", 5)
    )


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 1
) -> Tensor:
    """``F.cosine_embedding_loss`` with an integer ``reduction``."""
    return F.cosine_embedding_loss(
        input1, input2, target, margin, reduction=_reduction(reduction, "cosine_embedding_loss", 5)
    )
