"""Layer and loss ops (``ops/nn_ops``): convolution, pooling, normalisation, embedding, padding,
activations and losses, called through ``nn.functional`` in both libraries.

Shapes are tiny (the gradcheck perturbs every element, to second order). Inputs of functions
with kinks (max pooling, the piecewise activations, L1-like losses) keep away from them.

A bias's gradient (a sum of the output gradient) does not depend on the inputs: ours is a
constant, PyTorch's is an output of the node that also computes the other gradients. Entries
with a bias therefore check the bias to first order (``*_bias``) and the other inputs to second
order. ``padding_idx`` and ``scale_grad_by_freq`` define an embedding gradient that is not the
derivative (PyTorch's convention), so those entries skip the finite-difference check.
"""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _distinct(rng, shapes, dtype):
    """Distinct values at least 0.05 apart (no max-pool ties), shuffled."""
    out = []
    for s in shapes:
        n = int(np.prod(s)) if s else 1
        values = (rng.permutation(n) - n / 2) * (3.0 / max(n, 1)) + 0.013
        out.append(values.astype(dtype).reshape(s))
    return out


def _away_from(points):
    def make(rng, shapes, dtype):
        out = []
        for s in shapes:
            v = rng.uniform(-2.5, 2.5, s)
            for p in points:
                near = np.abs(v - p) < 0.15
                v = np.where(near, v + 0.3, v)
            out.append(np.asarray(v, dtype=dtype))
        return out

    return make


def _logits_and_classes(classes_axis=1, ignore=False):
    def make(rng, shapes, dtype):
        x_shape, t_shape = shapes
        x = rng.standard_normal(x_shape).astype(dtype)
        n_classes = x_shape[classes_axis] if len(x_shape) > 1 else x_shape[0]
        t = rng.integers(0, n_classes, t_shape).astype(np.int64)
        if ignore and t.size > 1:
            t.reshape(-1)[1] = -100
        return [x, t]

    return make


def _logits_and_probabilities(rng, shapes, dtype):
    x_shape, t_shape = shapes
    x = rng.standard_normal(x_shape).astype(dtype)
    t = rng.uniform(0.1, 1.0, t_shape)
    t = (t / t.sum(axis=1 if len(t_shape) > 1 else 0, keepdims=True)).astype(dtype)
    return [x, t]


def _probabilities_pair(rng, shapes, dtype):
    return [rng.uniform(0.1, 0.9, s).astype(dtype) for s in shapes]


def _pair_away(rng, shapes, dtype):
    """Input and target whose differences stay away from 0 and +-1 (the L1/Huber kinks)."""
    a = rng.uniform(-2, 2, shapes[0])
    step = rng.choice([-1.0, 1.0], size=shapes[1]) * rng.choice([0.4, 1.6], size=shapes[1])
    b = np.broadcast_to(a, np.broadcast_shapes(shapes[0], shapes[1]))
    b = (b - step)[tuple(slice(0, s) for s in shapes[1])] if shapes[0] == shapes[1] else None
    if b is None:
        b = rng.uniform(-2, 2, shapes[1])
    return [a.astype(dtype), np.asarray(b, dtype=dtype)]


def _indices_and_weight(rng, shapes, dtype):
    idx_shape, w_shape = shapes
    idx = rng.integers(0, w_shape[0], idx_shape).astype(np.int64)
    idx.reshape(-1)[0] = idx.reshape(-1)[-1]  # a repeated index: gradients add up
    return [idx, rng.standard_normal(w_shape).astype(dtype)]


def _batch_norm_train(lib, x, w, b):
    return _f(lib).batch_norm(x, None, None, w, b, training=True)


def _batch_norm_eval(lib, x, w, b):
    # (through float32: PyTorch reads no bfloat16 array)
    mean = lib.from_numpy(np.linspace(-0.5, 0.5, x.shape[1], dtype=np.float32)).to(x.dtype)
    var = lib.from_numpy(np.linspace(0.5, 2.0, x.shape[1], dtype=np.float32)).to(x.dtype)
    return _f(lib).batch_norm(x, mean, var, w, b, training=False)


CONV2D = [((2, 3, 5, 5), (4, 3, 3, 3), (4,))]

OPS = [
    # -- convolution ---------------------------------------------------------------------------
    OpInfo("conv2d", lambda lib, x, w, b: _f(lib).conv2d(x, w, b), CONV2D, grad_inputs=[0, 1]),
    OpInfo("conv2d_bias", lambda lib, x, w, b: _f(lib).conv2d(x, w, b), CONV2D,
           second_order=False),
    OpInfo("conv2d_stride_pad", lambda lib, x, w, b: _f(lib).conv2d(x, w, b, 2, 1), CONV2D,
           grad_inputs=[0, 1]),
    OpInfo("conv2d_dilation", lambda lib, x, w: _f(lib).conv2d(x, w, dilation=2, padding=(1, 2)),
           [((1, 2, 6, 6), (3, 2, 2, 2))]),
    OpInfo("conv2d_groups", lambda lib, x, w, b: _f(lib).conv2d(x, w, b, groups=2),
           [((2, 4, 4, 4), (6, 2, 2, 2), (6,))], grad_inputs=[0, 1]),
    OpInfo("conv2d_same", lambda lib, x, w: _f(lib).conv2d(x, w, padding="same"),
           [((1, 2, 4, 4), (2, 2, 3, 2))]),
    OpInfo("conv2d_unbatched", lambda lib, x, w: _f(lib).conv2d(x, w, stride=(1, 2)),
           [((2, 5, 5), (3, 2, 3, 3))]),
    OpInfo("conv1d", lambda lib, x, w, b: _f(lib).conv1d(x, w, b, stride=2, padding=1),
           [((2, 3, 7), (4, 3, 3), (4,))], grad_inputs=[0, 1]),
    OpInfo("conv3d", lambda lib, x, w: _f(lib).conv3d(x, w, padding=1),
           [((1, 2, 3, 3, 3), (2, 2, 2, 2, 2))]),
    OpInfo("conv_transpose2d",
           lambda lib, x, w, b: _f(lib).conv_transpose2d(x, w, b, stride=2, padding=1,
                                                         output_padding=1),
           [((2, 3, 3, 3), (3, 2, 3, 3), (2,))], grad_inputs=[0, 1]),
    OpInfo("conv_transpose2d_bias",
           lambda lib, x, w, b: _f(lib).conv_transpose2d(x, w, b, stride=2),
           [((1, 3, 2, 2), (3, 2, 2, 2), (2,))], second_order=False),
    OpInfo("conv_transpose2d_groups",
           lambda lib, x, w: _f(lib).conv_transpose2d(x, w, groups=2, dilation=2),
           [((1, 4, 3, 3), (4, 1, 2, 2))]),
    OpInfo("conv_transpose1d", lambda lib, x, w: _f(lib).conv_transpose1d(x, w, stride=3),
           [((2, 2, 4), (2, 3, 2))]),
    # output_padding >= stride (allowed with dilation): positions no input reaches.
    OpInfo("conv_transpose2d_output_padding_past_stride",
           lambda lib, x, w: _f(lib).conv_transpose2d(x, w, dilation=2, output_padding=1),
           [((1, 2, 3, 3), (2, 2, 2, 2))]),
    # -- pooling -------------------------------------------------------------------------------
    OpInfo("max_pool2d", lambda lib, x: _f(lib).max_pool2d(x, 2), [((2, 3, 4, 4),)],
           make_inputs=_distinct),
    OpInfo("max_pool2d_overlap",
           lambda lib, x: _f(lib).max_pool2d(x, 3, stride=1, padding=1),
           [((1, 2, 4, 5),)], make_inputs=_distinct),
    OpInfo("max_pool2d_ceil_dilation",
           lambda lib, x: _f(lib).max_pool2d(x, 2, stride=2, dilation=2, ceil_mode=True),
           [((1, 2, 7, 6),)], make_inputs=_distinct),
    OpInfo("max_pool2d_indices",
           lambda lib, x: _f(lib).max_pool2d(x, (2, 3), return_indices=True),
           [((2, 4, 6),)], make_inputs=_distinct),
    OpInfo("max_pool1d", lambda lib, x: _f(lib).max_pool1d(x, 3, stride=2, padding=1),
           [((2, 3, 7),)], make_inputs=_distinct),
    OpInfo("avg_pool2d", lambda lib, x: _f(lib).avg_pool2d(x, 2), [((2, 3, 4, 4),)]),
    OpInfo("avg_pool2d_pad_ceil",
           lambda lib, x: _f(lib).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
           [((1, 2, 6, 5),)]),
    OpInfo("avg_pool2d_exclude_pad",
           lambda lib, x: _f(lib).avg_pool2d(x, 3, stride=2, padding=1,
                                             count_include_pad=False),
           [((1, 2, 5, 5),)]),
    OpInfo("avg_pool2d_divisor", lambda lib, x: _f(lib).avg_pool2d(x, 2, divisor_override=3),
           [((1, 2, 4, 4),)]),
    OpInfo("avg_pool1d", lambda lib, x: _f(lib).avg_pool1d(x, 2), [((2, 3, 6),)]),
    OpInfo("adaptive_avg_pool2d", lambda lib, x: _f(lib).adaptive_avg_pool2d(x, (2, 3)),
           [((2, 3, 5, 7),)]),
    OpInfo("adaptive_avg_pool2d_1", lambda lib, x: _f(lib).adaptive_avg_pool2d(x, 1),
           [((2, 3, 4, 4),)]),
    OpInfo("adaptive_avg_pool1d", lambda lib, x: _f(lib).adaptive_avg_pool1d(x, 3),
           [((2, 3, 7),)]),
    OpInfo("adaptive_max_pool2d", lambda lib, x: _f(lib).adaptive_max_pool2d(x, (2, 3)),
           [((1, 2, 5, 7),)], make_inputs=_distinct),
    # 3-D pooling (the shapes keep the finite-difference checks small)
    OpInfo("max_pool3d", lambda lib, x: _f(lib).max_pool3d(x, 2), [((1, 2, 4, 4, 3),)],
           make_inputs=_distinct),
    OpInfo("max_pool3d_overlap_pad",
           lambda lib, x: _f(lib).max_pool3d(x, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 1)),
           [((2, 3, 4, 3),)], make_inputs=_distinct),
    OpInfo("max_pool3d_ceil_dilation",
           lambda lib, x: _f(lib).max_pool3d(x, 2, stride=2, dilation=(2, 1, 2), ceil_mode=True),
           [((1, 1, 5, 4, 5),)], make_inputs=_distinct),
    OpInfo("max_pool3d_indices",
           lambda lib, x: _f(lib).max_pool3d(x, (1, 2, 2), return_indices=True),
           [((1, 2, 3, 4, 4),)], make_inputs=_distinct),
    OpInfo("avg_pool3d", lambda lib, x: _f(lib).avg_pool3d(x, 2), [((1, 2, 4, 4, 2),)]),
    OpInfo("avg_pool3d_pad_ceil_exclude",
           lambda lib, x: _f(lib).avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True,
                                             count_include_pad=False),
           [((2, 4, 5, 3),)]),
    OpInfo("avg_pool3d_divisor",
           lambda lib, x: _f(lib).avg_pool3d(x, (2, 1, 2), stride=1, divisor_override=3),
           [((1, 1, 3, 3, 3),)]),
    OpInfo("adaptive_avg_pool3d", lambda lib, x: _f(lib).adaptive_avg_pool3d(x, (2, 3, 2)),
           [((1, 2, 5, 4, 3),)]),
    OpInfo("adaptive_avg_pool3d_1", lambda lib, x: _f(lib).adaptive_avg_pool3d(x, 1),
           [((2, 2, 2, 3, 2),)]),
    OpInfo("adaptive_avg_pool2d_1_channels_last",
           lambda lib, x: _f(lib).adaptive_avg_pool2d(
               x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2), 1), [((2, 3, 2, 3),)]),
    OpInfo("adaptive_avg_pool3d_1_channels_last",
           lambda lib, x: _f(lib).adaptive_avg_pool3d(
               x.permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3), 1),
           [((1, 3, 2, 2, 2),)]),
    OpInfo("adaptive_avg_pool3d_none",
           lambda lib, x: _f(lib).adaptive_avg_pool3d(x, (None, 2, 3)), [((2, 3, 4, 5),)]),
    OpInfo("adaptive_max_pool3d", lambda lib, x: _f(lib).adaptive_max_pool3d(x, (2, 3, 2)),
           [((1, 2, 5, 4, 3),)], make_inputs=_distinct),
    OpInfo("adaptive_max_pool3d_indices",
           lambda lib, x: _f(lib).adaptive_max_pool3d(x, 2, return_indices=True),
           [((2, 3, 3, 5),)], make_inputs=_distinct),
    OpInfo("F.max_pool3d_with_indices",
           lambda lib, x: _f(lib).max_pool3d_with_indices(x, 2, 1), [((1, 2, 3, 3, 2),)],
           make_inputs=_distinct),
    OpInfo("F.adaptive_max_pool3d_with_indices",
           lambda lib, x: _f(lib).adaptive_max_pool3d_with_indices(x, (2, 1, 2)),
           [((1, 2, 3, 3, 4),)], make_inputs=_distinct),
    # -- normalisation -------------------------------------------------------------------------
    OpInfo("batch_norm_train", _batch_norm_train,
           [((4, 3, 2, 2), (3,), (3,)), ((5, 2), (2,), (2,))], rtol=1e-3, atol=1e-4,
           grad_inputs=[0, 1]),
    OpInfo("batch_norm_train_bias", _batch_norm_train, [((4, 3, 2), (3,), (3,))],
           rtol=1e-3, atol=1e-4, second_order=False),
    OpInfo("batch_norm_eval", _batch_norm_eval, [((3, 2, 2), (2,), (2,))], grad_inputs=[0, 1]),
    OpInfo("batch_norm_eval_bias", _batch_norm_eval, [((3, 2, 2), (2,), (2,))],
           second_order=False),
    OpInfo("layer_norm", lambda lib, x, w, b: _f(lib).layer_norm(x, (4,), w, b),
           [((3, 4), (4,), (4,))], rtol=1e-3, atol=1e-4, grad_inputs=[0, 1]),
    OpInfo("layer_norm_bias", lambda lib, x, w, b: _f(lib).layer_norm(x, (4,), w, b),
           [((3, 4), (4,), (4,))], rtol=1e-3, atol=1e-4, second_order=False),
    OpInfo("layer_norm_2d_noaffine", lambda lib, x: _f(lib).layer_norm(x, (2, 3)),
           [((2, 2, 3),)], rtol=1e-3, atol=1e-4),
    OpInfo("group_norm", lambda lib, x, w, b: _f(lib).group_norm(x, 2, w, b),
           [((2, 4, 3), (4,), (4,))], rtol=1e-3, atol=1e-4, grad_inputs=[0, 1]),
    OpInfo("group_norm_bias", lambda lib, x, w, b: _f(lib).group_norm(x, 2, w, b),
           [((2, 4, 3), (4,), (4,))], rtol=1e-3, atol=1e-4, second_order=False),
    # -- embedding, padding, bilinear ----------------------------------------------------------
    OpInfo("embedding", lambda lib, i, w: _f(lib).embedding(i, w), [((2, 3), (5, 4))],
           make_inputs=_indices_and_weight),
    OpInfo("embedding_padding_idx", lambda lib, i, w: _f(lib).embedding(i, w, padding_idx=1),
           [((4,), (3, 2))], make_inputs=_indices_and_weight, gradcheck=False),
    OpInfo("embedding_scale_grad_by_freq",
           lambda lib, i, w: _f(lib).embedding(i, w, scale_grad_by_freq=True),
           [((5,), (3, 2))], make_inputs=_indices_and_weight, gradcheck=False),
    OpInfo("pad_constant", lambda lib, x: _f(lib).pad(x, (1, 2, 0, 1), value=0.5),
           [((2, 3, 4),)]),
    OpInfo("pad_negative", lambda lib, x: _f(lib).pad(x, (-1, 2)), [((2, 4),)]),
    OpInfo("pad_reflect", lambda lib, x: _f(lib).pad(x, (2, 1, 1, 2), mode="reflect"),
           [((1, 2, 4, 4),)]),
    OpInfo("pad_replicate", lambda lib, x: _f(lib).pad(x, (2, 1), mode="replicate"),
           [((2, 3, 4),)]),
    OpInfo("bilinear", lambda lib, a, b, w, c: _f(lib).bilinear(a, b, w, c),
           [((3, 2), (3, 4), (5, 2, 4), (5,)), ((2, 3, 2), (2, 3, 4), (5, 2, 4), (5,))],
           grad_inputs=[0, 1, 2]),
    OpInfo("bilinear_bias", lambda lib, a, b, w, c: _f(lib).bilinear(a, b, w, c),
           [((3, 2), (3, 4), (5, 2, 4), (5,))], second_order=False),
    # -- activations ---------------------------------------------------------------------------
    OpInfo("gelu", lambda lib, x: _f(lib).gelu(x), [((3, 4),)]),
    OpInfo("gelu_tanh", lambda lib, x: _f(lib).gelu(x, approximate="tanh"), [((3, 4),)]),
    OpInfo("silu", lambda lib, x: _f(lib).silu(x), [((3, 4),)]),
    OpInfo("mish", lambda lib, x: _f(lib).mish(x), [((3, 4),)]),
    OpInfo("elu", lambda lib, x: _f(lib).elu(x, 0.7), [((3, 4),)], make_inputs=_away_from([0])),
    OpInfo("selu", lambda lib, x: _f(lib).selu(x), [((3, 4),)], make_inputs=_away_from([0])),
    OpInfo("celu", lambda lib, x: _f(lib).celu(x, 1.5), [((3, 4),)],
           make_inputs=_away_from([0])),
    OpInfo("leaky_relu", lambda lib, x: _f(lib).leaky_relu(x, 0.2), [((3, 4),)],
           make_inputs=_away_from([0])),
    OpInfo("softplus", lambda lib, x: _f(lib).softplus(x, 2.0, 3.0), [((3, 4),)],
           make_inputs=_away_from([1.5])),
    OpInfo("hardtanh", lambda lib, x: _f(lib).hardtanh(x, -1.0, 1.5), [((3, 4),)],
           make_inputs=_away_from([-1.0, 1.5])),
    OpInfo("relu6", lambda lib, x: _f(lib).relu6(x * 4), [((3, 4),)],
           make_inputs=_away_from([0, 1.5])),
    OpInfo("logsigmoid", lambda lib, x: _f(lib).logsigmoid(x), [((3, 4),)]),
    OpInfo("hardswish", lambda lib, x: _f(lib).hardswish(x * 2), [((3, 4),)],
           make_inputs=_away_from([-1.5, 1.5])),
    # PyTorch has no double backward for hardsigmoid.
    OpInfo("hardsigmoid", lambda lib, x: _f(lib).hardsigmoid(x * 2), [((3, 4),)],
           make_inputs=_away_from([-1.5, 1.5]), second_order=False),
    OpInfo("softsign", lambda lib, x: _f(lib).softsign(x), [((3, 4),)],
           make_inputs=_away_from([0])),
    OpInfo("tanhshrink", lambda lib, x: _f(lib).tanhshrink(x), [((3, 4),)]),
    OpInfo("softmin", lambda lib, x: _f(lib).softmin(x, 1), [((3, 4),)]),
    OpInfo("threshold", lambda lib, x: _f(lib).threshold(x, 0.5, -2.0), [((3, 4),)],
           make_inputs=_away_from([0.5])),
    OpInfo("hardshrink", lambda lib, x: _f(lib).hardshrink(x), [((3, 4),)],
           make_inputs=_away_from([-0.5, 0.5])),
    OpInfo("softshrink", lambda lib, x: _f(lib).softshrink(x, 0.7), [((3, 4),)],
           make_inputs=_away_from([-0.7, 0.7])),
    OpInfo("glu", lambda lib, x: _f(lib).glu(x, 1), [((3, 4),)]),
    OpInfo("prelu", lambda lib, x, w: _f(lib).prelu(x, w), [((2, 3, 4), (3,)), ((3, 4), (1,))],
           make_inputs=_away_from([0])),
    OpInfo("Tensor.hardshrink", lambda lib, x: x.hardshrink(0.3), [((3, 4),)],
           make_inputs=_away_from([-0.3, 0.3])),
    OpInfo("Tensor.prelu", lambda lib, x, w: x.prelu(w), [((2, 3, 4), (3,))],
           make_inputs=_away_from([0])),
    # -- losses --------------------------------------------------------------------------------
    OpInfo("cross_entropy", lambda lib, x, t: _f(lib).cross_entropy(x, t),
           [((4, 5), (4,))], make_inputs=_logits_and_classes()),
    OpInfo("cross_entropy_none_ignore",
           lambda lib, x, t: _f(lib).cross_entropy(x, t, reduction="none"),
           [((4, 5), (4,))], make_inputs=_logits_and_classes(ignore=True)),
    OpInfo("cross_entropy_weight_smoothing",
           lambda lib, x, t: _f(lib).cross_entropy(
               x, t, weight=lib.linspace(0.5, 1.5, 5, dtype=x.dtype), label_smoothing=0.2,
               ignore_index=-100),
           [((4, 5), (4,))], make_inputs=_logits_and_classes(ignore=True)),
    OpInfo("cross_entropy_smoothing_sum",
           lambda lib, x, t: _f(lib).cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
           [((3, 4), (3,))], make_inputs=_logits_and_classes()),
    OpInfo("cross_entropy_2d", lambda lib, x, t: _f(lib).cross_entropy(x, t),
           [((2, 3, 2, 2), (2, 2, 2))], make_inputs=_logits_and_classes()),
    OpInfo("cross_entropy_1d_input", lambda lib, x, t: _f(lib).cross_entropy(x, t),
           [((4,), ())], make_inputs=_logits_and_classes(classes_axis=0)),
    OpInfo("cross_entropy_3d_none",
           lambda lib, x, t: _f(lib).cross_entropy(x, t, reduction="none"),
           [((2, 3, 4), (2, 4))], make_inputs=_logits_and_classes()),
    OpInfo("cross_entropy_probabilities", lambda lib, x, t: _f(lib).cross_entropy(x, t),
           [((3, 4), (3, 4))], make_inputs=_logits_and_probabilities, grad_inputs=[0]),
    OpInfo("cross_entropy_probabilities_weight_smoothing",
           lambda lib, x, t: _f(lib).cross_entropy(
               x, t, weight=lib.linspace(0.5, 1.5, 4, dtype=x.dtype), label_smoothing=0.3,
               reduction="none"),
           [((3, 4), (3, 4))], make_inputs=_logits_and_probabilities, grad_inputs=[0]),
    OpInfo("nll_loss_weight_sum",
           lambda lib, x, t: _f(lib).nll_loss(x, t, lib.linspace(1.0, 2.0, 5, dtype=x.dtype),
                                              reduction="sum"),
           [((4, 5), (4,))], make_inputs=_logits_and_classes()),
    OpInfo("mse_loss", lambda lib, x, y: _f(lib).mse_loss(x, y), [((3, 4), (3, 4))]),
    OpInfo("mse_loss_none", lambda lib, x, y: _f(lib).mse_loss(x, y, reduction="none"),
           [((3, 4), (3, 4))]),
    OpInfo("mse_loss_sum", lambda lib, x, y: _f(lib).mse_loss(x, y, reduction="sum"),
           [((3, 4), (3, 4))]),
    OpInfo("l1_loss", lambda lib, x, y: _f(lib).l1_loss(x, y), [((3, 4), (3, 4))],
           make_inputs=_pair_away),
    OpInfo("smooth_l1_loss", lambda lib, x, y: _f(lib).smooth_l1_loss(x, y, beta=1.0),
           [((3, 4), (3, 4))], make_inputs=_pair_away),
    OpInfo("huber_loss", lambda lib, x, y: _f(lib).huber_loss(x, y, reduction="sum", delta=1.0),
           [((3, 4), (3, 4))], make_inputs=_pair_away),
    OpInfo("binary_cross_entropy",
           lambda lib, x, y: _f(lib).binary_cross_entropy(x, y), [((3, 4), (3, 4))],
           make_inputs=_probabilities_pair),
    OpInfo("binary_cross_entropy_weight_none",
           lambda lib, x, y: _f(lib).binary_cross_entropy(
               x, y, weight=lib.linspace(0.5, 1.0, 4, dtype=x.dtype), reduction="none"),
           [((3, 4), (3, 4))], make_inputs=_probabilities_pair),
    OpInfo("kl_div_batchmean",
           lambda lib, x, y: _f(lib).kl_div(x, y, reduction="batchmean"),
           [((3, 4), (3, 4))], make_inputs=_probabilities_pair),
    OpInfo("kl_div_log_target",
           lambda lib, x, y: _f(lib).kl_div(x, y, reduction="sum", log_target=True),
           [((3, 4), (3, 4))]),
]
