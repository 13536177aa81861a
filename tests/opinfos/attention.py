"""Attention (``ops/nn_ops/attention.py``): ``scaled_dot_product_attention`` on both of
PyTorch's CPU paths (the math composition and the fused kernel, whose backward PyTorch does not
differentiate again), and ``multi_head_attention_forward``."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _causal_bool(lib, length, source):
    return lib.tensor(np.tril(np.ones((length, source), bool)))


def _mha(lib, x, w_in, w_out, need_weights):
    out, weights = _f(lib).multi_head_attention_forward(
        x, x, x, 4, 2, w_in, None, None, None, False, 0.0, w_out, None, need_weights=need_weights
    )
    return out if weights is None else (out, weights)


OPS = [
    OpInfo(
        "F.scaled_dot_product_attention",
        lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(q, k, v),
        [((2, 3, 4), (2, 5, 4), (2, 5, 6)), ((3, 4), (5, 4), (5, 4))],
    ),
    OpInfo(
        "F.scaled_dot_product_attention_mask",
        lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(
            q, k, v, attn_mask=_causal_bool(lib, 3, 5), scale=0.7
        ),
        [((2, 3, 4), (2, 5, 4), (2, 5, 6))],
    ),
    OpInfo(
        "F.scaled_dot_product_attention_float_mask",
        lambda lib, q, k, v, m: _f(lib).scaled_dot_product_attention(q, k, v, attn_mask=m),
        [((2, 3, 4), (2, 5, 4), (2, 5, 6), (3, 5))],
    ),
    OpInfo(
        "F.scaled_dot_product_attention_gqa",
        lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True
        ),
        [((4, 3, 2), (2, 3, 2), (2, 3, 5))],
    ),
    # The fused kernel (4-d, equal head sizes): PyTorch's backward has no derivative.
    OpInfo(
        "F.scaled_dot_product_attention_flash",
        lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(q, k, v),
        [((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4))],
        second_order=False,
    ),
    OpInfo(
        "F.scaled_dot_product_attention_flash_causal_gqa",
        lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(
            q, k, v, is_causal=True, scale=0.4, enable_gqa=True
        ),
        [((1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2))],
        second_order=False,
    ),
    OpInfo(
        "F.scaled_dot_product_attention_flash_mask",
        lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(
            q, k, v, attn_mask=_causal_bool(lib, 3, 5)
        ),
        [((2, 1, 3, 4), (2, 1, 5, 4), (2, 1, 5, 4))],
        second_order=False,
    ),
    OpInfo(
        "F.multi_head_attention_forward",
        lambda lib, x, w_in, w_out: _mha(lib, x, w_in, w_out, True),
        [((3, 2, 4), (12, 4), (4, 4))],
    ),
    OpInfo(
        "F.multi_head_attention_forward_sdpa",
        lambda lib, x, w_in, w_out: _mha(lib, x, w_in, w_out, False),
        [((3, 2, 4), (12, 4), (4, 4))],
        second_order=False,
    ),
]
