"""``multi_head_attention_forward``: the computation behind ``nn.MultiheadAttention``.

Composed of public ops in PyTorch's order, so the graph is PyTorch's: the packed in-projection
(one ``linear`` when query, key and value are one tensor), heads split by views, the masks
merged into one additive float mask, then either ``scaled_dot_product_attention``
(``need_weights=False``) or the explicit ``bmm -> softmax -> dropout -> bmm`` that also
returns the attention weights, and the out-projection.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from ..activation import softmax
from ..creation import zeros
from ..fused_products import baddbmm
from ..linalg import bmm, linear
from ..shape import cat
from .attention import scaled_dot_product_attention
from .dropout import dropout
from .padding import pad

__all__ = ["multi_head_attention_forward"]


def _shape_text(shape: Any) -> str:
    return f"torch.Size({list(shape)})"


def check_mha_shapes(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the call is batched (3-d query), with PyTorch's AssertionErrors for shapes that
    fit neither form."""
    qd = query.dim()
    if qd not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor"
        )
    form = "batched (3-D)" if qd == 3 else "unbatched (2-D)"
    if key.dim() != qd or value.dim() != qd:
        raise AssertionError(
            f"For {form} `query`, expected `key` and `value` to be {qd}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != qd - 1:
        raise AssertionError(
            f"For {form} `query`, expected `key_padding_mask` to be `None` or {qd - 1}-D but "
            f"found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {form} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        if qd == 2 and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got "
                    f"{_shape_text(attn_mask.shape)}"
                )
    return qd == 3


def canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A boolean mask as an additive float mask of ``target_type`` (``-inf`` where True); a
    float mask unchanged. Warns, as PyTorch, when the two masks' dtypes differ."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask._data.dtype != np.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. "
            "Use same type for both instead.",
            stacklevel=3,
        )
    if not is_float:
        # (-inf and 0 are exact in every float dtype)
        return wrap(np.where(mask._data, -np.inf, 0.0)).to(target_type)
    return mask


def _dtype_or_none(t: Tensor | None) -> Any:
    return None if t is None else t.dtype


def _split_projection(projected: Tensor, parts: int, embed_dim: int) -> tuple[Tensor, ...]:
    """``(..., parts * E)`` to ``parts`` tensors ``(..., E)``, through one contiguous
    ``(parts, ..., E)`` copy (PyTorch's unflatten / transpose / contiguous)."""
    stacked = projected.unflatten(-1, (parts, embed_dim)).unsqueeze(0).transpose(0, -2)
    stacked = stacked.squeeze(-2).contiguous()
    return tuple(stacked[i] for i in range(parts))


def _project_packed(
    query: Tensor, key: Tensor, value: Tensor, weight: Tensor, bias: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    embed_dim = query.size(-1)
    if key is value and query is key:
        return _split_projection(linear(query, weight, bias), 3, embed_dim)  # type: ignore
    if key is value:
        w_q, w_kv = weight.split([embed_dim, 2 * embed_dim])
        b_q, b_kv = (None, None) if bias is None else bias.split([embed_dim, 2 * embed_dim])
        k, v = _split_projection(linear(key, w_kv, b_kv), 2, embed_dim)
        return linear(query, w_q, b_q), k, v
    w_q, w_k, w_v = weight.chunk(3)
    b_q, b_k, b_v = (None, None, None) if bias is None else bias.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _project_separate(
    query: Tensor, key: Tensor, value: Tensor, weights: tuple[Tensor, ...], bias: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    eq, ek, ev = query.size(-1), key.size(-1), value.size(-1)
    biases = (None, None, None) if bias is None else bias.chunk(3)
    names = ("query", "key", "value")
    for name, w, size in zip(names, weights, (eq, ek, ev), strict=True):
        if tuple(w.shape) != (eq, size):
            raise AssertionError(
                f"expecting {name} weights shape of {(eq, size)}, but got {_shape_text(w.shape)}"
            )
    for name, b in zip(names, biases, strict=True):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(
                f"expecting {name} bias shape of {(eq,)}, but got {_shape_text(b.shape)}"
            )
    return (
        linear(query, weights[0], biases[0]),
        linear(key, weights[1], biases[1]),
        linear(value, weights[2], biases[2]),
    )


def _heads_first(x: Tensor, batch_heads: int, head_dim: int) -> Tensor:
    """``(S, N, E)`` to ``(N * heads, S, head_dim)`` (a view)."""
    return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)


def _check_static(name: str, static: Tensor, batch_heads: int, head_dim: int) -> None:
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of ``(L, N, E)`` queries over ``(S, N, E)`` keys and values (or
    unbatched ``(L, E)``/``(S, E)``); returns the output and, with ``need_weights``, the
    attention weights (averaged over heads when ``average_attn_weights``).

    Example:
        >>> import chainrule as torch
        >>> import chainrule.nn.functional as F
        >>> x, w, b = torch.ones(3, 1, 4), torch.ones(12, 4), torch.zeros(12)
        >>> out, weights = F.multi_head_attention_forward(
        ...     x, x, x, 4, 2, w, b, None, None, False, 0.0, torch.ones(4, 4), None)
        >>> out.shape, weights.shape
        (chainrule.Size([3, 1, 4]), chainrule.Size([1, 3, 3]))
    """
    batched = check_mha_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(
        key_padding_mask, "key_padding_mask", _dtype_or_none(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to "
            "create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the kernel's own causal mask replaces it
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {_shape_text(key.shape[:2])} "
                f"do not match value's {_shape_text(value.shape[:2])}"
            )
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        q, k, v = _project_separate(
            query,
            key,
            value,
            (q_proj_weight, k_proj_weight, v_proj_weight),  # type: ignore
            in_proj_bias,
        )
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(
                f"key shape {_shape_text(key.shape)} does not match value "
                f"shape {_shape_text(value.shape)}"
            )
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _project_packed(query, key, value, in_proj_weight, in_proj_bias)

    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            expected: tuple[int, ...] = (tgt_len, src_len)
        elif attn_mask.dim() == 3:
            expected = (bsz * num_heads, tgt_len, src_len)
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(
                f"The shape of the {attn_mask.dim()}D attn_mask is "
                f"{_shape_text(attn_mask.shape)}, but should be {expected}."
            )
        if attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    batch_heads = bsz * num_heads
    q = _heads_first(q, batch_heads, head_dim)
    if static_k is None:
        k = _heads_first(k, batch_heads, head_dim)
    else:
        _check_static("static_k", static_k, batch_heads, head_dim)
        k = static_k
    if static_v is None:
        v = _heads_first(v, batch_heads, head_dim)
    else:
        _check_static("static_v", static_v, batch_heads, head_dim)
        v = static_v

    if add_zero_attn:
        k = cat([k, zeros((batch_heads, 1, head_dim), dtype=k.dtype)], dim=1)
        v = cat([v, zeros((batch_heads, 1, head_dim), dtype=v.dtype)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        per_head = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        per_head = per_head.reshape(batch_heads, 1, src_len)
        attn_mask = per_head if attn_mask is None else attn_mask + per_head

    if not training:
        dropout_p = 0.0

    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scaled_q = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            scores = baddbmm(attn_mask, scaled_q, k.transpose(-2, -1))
        else:
            scores = bmm(scaled_q, k.transpose(-2, -1))
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not batched:
        out = out.squeeze(1)
    return out, None
