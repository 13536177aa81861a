"""The layer functions in the top-level namespace (``nn/_torch_namespace.py``): ATen's argument
lists (``torch.batch_norm(input, weight, bias, ...)``, integer reductions, ``stride=[]``),
called through ``torch.<name>`` in both libraries. Dropout-like functions run with
``train=False`` or ``p=0`` (their random masks are tested elsewhere); in-place forms write into
a clone of the sample."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _away(points):
    def make(rng, shapes, dtype):
        out = []
        for s in shapes:
            v = rng.uniform(-2.0, 2.0, s)
            for p in points:
                v = np.where(np.abs(v - p) < 0.15, v + 0.3, v)
            out.append(np.asarray(v, dtype=dtype))
        return out

    return make


def _distinct(rng, shapes, dtype):
    out = []
    for s in shapes:
        n = int(np.prod(s))
        out.append(((rng.permutation(n) - n / 2) * (3.0 / n) + 0.013).astype(dtype).reshape(s))
    return out


def _positive_second(rng, shapes, dtype):
    return [
        rng.uniform(-1.5, 1.5, shapes[0]).astype(dtype),
        rng.uniform(0.2, 1.5, shapes[1]).astype(dtype),
    ]


def _signs(lib, shape, dtype):
    return lib.tensor(np.resize([1.0, -1.0, -1.0], shape)).to(dtype)


OPS = [
    OpInfo(
        "torch.conv1d", lambda lib, x, w: lib.conv1d(x, w, None, 2, 1), [((1, 2, 5), (3, 2, 2))]
    ),
    OpInfo(
        "torch.conv2d",
        lambda lib, x, w: lib.conv2d(x, w, None, 1, 1, 1, 1),
        [((1, 2, 3, 3), (2, 2, 2, 2))],
    ),
    OpInfo(
        "torch.conv3d", lambda lib, x, w: lib.conv3d(x, w), [((1, 1, 3, 2, 2), (2, 1, 2, 1, 2))]
    ),
    OpInfo(
        "torch.conv_transpose1d",
        lambda lib, x, w: lib.conv_transpose1d(x, w, None, 2),
        [((1, 2, 3), (2, 2, 2))],
    ),
    OpInfo(
        "torch.conv_transpose2d",
        lambda lib, x, w: lib.conv_transpose2d(x, w),
        [((1, 2, 2, 2), (2, 1, 2, 2))],
    ),
    OpInfo(
        "torch.conv_transpose3d",
        lambda lib, x, w: lib.conv_transpose3d(x, w),
        [((1, 1, 2, 2, 1), (1, 2, 1, 2, 2))],
    ),
    OpInfo(
        "torch.convolution",
        lambda lib, x, w: lib.convolution(x, w, None, [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
        [((1, 2, 3, 3), (2, 2, 2, 2))],
    ),
    OpInfo(
        "torch.layer_norm",
        lambda lib, x, w: lib.layer_norm(x, [3], w, None, 1e-5, True),
        [((2, 3), (3,))],
    ),
    OpInfo("torch.rms_norm", lambda lib, x, w: lib.rms_norm(x, [3], w), [((2, 3), (3,))]),
    OpInfo(
        "torch.max_pool1d",
        lambda lib, x: lib.max_pool1d(x, 2, [], 1),
        [((1, 2, 5),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "torch.max_pool2d",
        lambda lib, x: lib.max_pool2d(x, 2),
        [((1, 2, 4, 4),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "torch.max_pool3d",
        lambda lib, x: lib.max_pool3d(x, [1, 2, 2], [1, 1, 1]),
        [((1, 1, 2, 3, 3),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "torch.max_pool1d_with_indices",
        lambda lib, x: lib.max_pool1d_with_indices(x, 2),
        [((2, 6),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "torch.avg_pool1d", lambda lib, x: lib.avg_pool1d(x, 3, [], 1, True, False), [((1, 2, 5),)]
    ),
    OpInfo(
        "torch.adaptive_avg_pool1d", lambda lib, x: lib.adaptive_avg_pool1d(x, 3), [((1, 2, 5),)]
    ),
    OpInfo(
        "torch.adaptive_max_pool1d",
        lambda lib, x: lib.adaptive_max_pool1d(x, 3),
        [((1, 2, 5),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "torch.embedding",
        # (no padding_idx: its zero gradient is PyTorch's convention, not the derivative;
        # tests/test_torch_nn_aliases.py compares it)
        lambda lib, w: lib.embedding(w, lib.tensor([[0, 2], [3, 2]]), -1, False),
        [((4, 3),)],
    ),
    OpInfo(
        "torch.kl_div",
        lambda lib, x, t: lib.kl_div(x, t, 0),
        [((2, 3), (2, 3))],
        make_inputs=_positive_second,
    ),
    OpInfo(
        "torch.kl_div_log_target",
        lambda lib, x, t: lib.kl_div(x, t, 2, log_target=True),
        [((2, 3), (2, 3))],
    ),
    OpInfo(
        "torch.binary_cross_entropy_with_logits",
        lambda lib, x, t: lib.binary_cross_entropy_with_logits(x, t.sigmoid(), None, None, 1),
        [((2, 3), (2, 3))],
        grad_inputs=(0,),
    ),
    OpInfo(
        "torch.poisson_nll_loss",
        lambda lib, x, t: lib.poisson_nll_loss(x, t, True, False, 1e-8, 2),
        [((2, 3), (2, 3))],
        make_inputs=_positive_second,
        grad_inputs=(0,),
    ),
    OpInfo(
        "torch.triplet_margin_loss",
        lambda lib, a, p, n: lib.triplet_margin_loss(a, p, n, 3.0, 2, 1e-6, False, 0),
        [((3, 4), (3, 4), (3, 4))],
    ),
    OpInfo(
        "torch.hinge_embedding_loss",
        lambda lib, x: lib.hinge_embedding_loss(x, _signs(lib, (2, 3), x.dtype), 1.5, 1),
        [((2, 3),)],
        make_inputs=_away([1.5]),
    ),
    OpInfo(
        "torch.margin_ranking_loss",
        lambda lib, a, b: lib.margin_ranking_loss(a, b, _signs(lib, (5,), a.dtype), 0.1, 2),
        [((5,), (5,))],
        make_inputs=_distinct,
    ),
    OpInfo(
        "torch.cosine_embedding_loss",
        lambda lib, a, b: lib.cosine_embedding_loss(a, b, _signs(lib, (3,), a.dtype), -0.9, 0),
        [((3, 4), (3, 4))],
    ),
    OpInfo(
        "torch.cosine_similarity",
        lambda lib, a, b: lib.cosine_similarity(a, b, 1, 1e-8),
        [((3, 4), (3, 4))],
    ),
    OpInfo(
        "torch.pairwise_distance",
        lambda lib, a, b: lib.pairwise_distance(a, b, 2.0, 1e-6, True),
        [((3, 4), (3, 4))],
    ),
    OpInfo("torch.pdist", lambda lib, x: lib.pdist(x, 2), [((4, 3),)], second_order=False),
    OpInfo(
        "torch.bilinear",
        lambda lib, a, b, w: lib.bilinear(a, b, w, None),
        [((2, 3), (2, 2), (2, 3, 2))],
    ),
    OpInfo("torch.pixel_shuffle", lambda lib, x: lib.pixel_shuffle(x, 2), [((1, 4, 2, 2),)]),
    OpInfo("torch.pixel_unshuffle", lambda lib, x: lib.pixel_unshuffle(x, 2), [((1, 1, 4, 2),)]),
    OpInfo("torch.channel_shuffle", lambda lib, x: lib.channel_shuffle(x, 2), [((1, 4, 2),)]),
    OpInfo(
        "torch.constant_pad_nd", lambda lib, x: lib.constant_pad_nd(x, [1, 2], 0.5), [((2, 3),)]
    ),
    OpInfo(
        "torch.prelu",
        lambda lib, x, w: lib.prelu(x, w),
        [((2, 3, 2), (3,))],
        make_inputs=_away([0.0]),
    ),
    OpInfo("torch.selu", lambda lib, x: lib.selu(x), [((2, 3),)], make_inputs=_away([0.0])),
    OpInfo("torch.celu", lambda lib, x: lib.celu(x, 1.5), [((2, 3),)], make_inputs=_away([0.0])),
    OpInfo(
        "torch.hardshrink",
        lambda lib, x: lib.hardshrink(x, 0.3),
        [((2, 3),)],
        make_inputs=_away([-0.3, 0.3]),
    ),
    OpInfo(
        "torch.threshold",
        lambda lib, x: lib.threshold(x, 0.1, -2.0),
        [((2, 3),)],
        make_inputs=_away([0.1]),
    ),
    OpInfo(
        "torch.rrelu", lambda lib, x: lib.rrelu(x, 0.1, 0.3), [((2, 3),)], make_inputs=_away([0.0])
    ),
    OpInfo("torch.dropout", lambda lib, x: lib.dropout(x, 0.5, False), [((2, 3),)]),
    OpInfo("torch.alpha_dropout", lambda lib, x: lib.alpha_dropout(x, 0.5, False), [((2, 3),)]),
    OpInfo(
        "torch.feature_alpha_dropout",
        lambda lib, x: lib.feature_alpha_dropout(x, 0.5, False),
        [((2, 3, 2),)],
    ),
    OpInfo(
        "torch.feature_dropout", lambda lib, x: lib.feature_dropout(x, 0.0, True), [((2, 3, 2),)]
    ),
    # in-place forms, on a clone of the sample
    OpInfo(
        "torch.selu_", lambda lib, x: lib.selu_(x.clone()), [((2, 3),)], make_inputs=_away([0.0])
    ),
    OpInfo(
        "torch.celu_",
        lambda lib, x: lib.celu_(x.clone(), 1.5),
        [((2, 3),)],
        make_inputs=_away([0.0]),
    ),
    OpInfo(
        "torch.threshold_",
        lambda lib, x: lib.threshold_(x.clone(), 0.1, -2.0),
        [((2, 3),)],
        make_inputs=_away([0.1]),
    ),
    OpInfo("torch.dropout_", lambda lib, x: lib.dropout_(x.clone(), 0.5, False), [((2, 3),)]),
    OpInfo(
        "torch.alpha_dropout_",
        lambda lib, x: lib.alpha_dropout_(x.clone(), 0.5, False),
        [((2, 3),)],
    ),
    OpInfo(
        "torch.feature_alpha_dropout_",
        lambda lib, x: lib.feature_alpha_dropout_(x.clone(), 0.5, False),
        [((2, 3, 2),)],
    ),
    OpInfo(
        "torch.feature_dropout_",
        lambda lib, x: lib.feature_dropout_(x.clone(), 0.0, True),
        [((2, 3, 2),)],
    ),
    OpInfo(
        "torch.embedding_renorm_",
        lambda lib, w: lib.embedding_renorm_(w.detach().clone(), lib.tensor([0, 2]), 1.0, 2.0),
        [((4, 3),)],
        grad=False,
    ),
]
