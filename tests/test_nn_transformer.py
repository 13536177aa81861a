"""MultiheadAttention, multi_head_attention_forward and the Transformer modules against
PyTorch: the same state_dict keys, shapes and reprs; with PyTorch's weights copied across, the
same outputs and gradients (inputs and every parameter) for each option and mask; PyTorch's
warnings and errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _copy_weights(src: Any, dst: Any) -> None:
    assert list(src.state_dict()) == list(dst.state_dict())
    for (name, a), b in zip(src.state_dict().items(), dst.state_dict().values(), strict=True):
        assert tuple(a.shape) == tuple(b.shape), name
    dst.load_state_dict(
        {k: chainrule.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    )


def _graph(t: Any) -> list[str]:
    """Node names of ``t``'s graph, depth first (AccumulateGrad's namespace dropped)."""
    names, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().split("::")[-1])
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


def _leaf(lib: Any, a: np.ndarray) -> Any:
    return lib.tensor(a, requires_grad=True)


def _compare(
    t_out: Any,
    c_out: Any,
    t_leaves: list[Any],
    c_leaves: list[Any],
    t_mod: Any,
    c_mod: Any,
    tol: float = 1e-10,
) -> None:
    np.testing.assert_allclose(c_out.detach().numpy(), t_out.detach().numpy(), atol=tol)
    for t, c in zip(t_leaves, c_leaves, strict=True):
        np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), atol=tol)
    t_params = dict(t_mod.named_parameters())
    c_params = dict(c_mod.named_parameters())
    assert list(t_params) == list(c_params)
    for name, p in t_params.items():
        np.testing.assert_allclose(
            c_params[name].grad.numpy(), p.grad.numpy(), atol=tol, err_msg=name
        )


_M = np.array([[False, True, False], [False, False, True], [False, False, False]])
_KPM = np.array([[False, False, True], [False, True, True]])
_CAUSAL = np.triu(np.full((3, 3), -np.inf), 1)

MHA_CASES: dict[str, tuple[dict, dict, str]] = {
    "self": ({}, {}, "self"),
    "self_sdpa": ({}, {"need_weights": False}, "self"),
    "per_head_weights": ({}, {"average_attn_weights": False}, "self"),
    "batch_first": ({"batch_first": True}, {}, "self"),
    "batch_first_sdpa": ({"batch_first": True}, {"need_weights": False}, "self"),
    "key_is_value": ({}, {}, "kv"),
    "separate": ({}, {}, "sep"),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, {}, "sep"),
    "kdim_vdim_sdpa": ({"kdim": 3, "vdim": 5}, {"need_weights": False}, "sep"),
    "bias_kv": ({"add_bias_kv": True}, {}, "sep"),
    "zero_attn": ({"add_zero_attn": True}, {}, "sep"),
    "bias_kv_zero_attn_masks": (
        {"add_zero_attn": True, "add_bias_kv": True},
        {"need_weights": False, "attn_mask": _M, "key_padding_mask": _KPM},
        "self",
    ),
    "no_bias": ({"bias": False}, {}, "self"),
    "bool_mask": ({}, {"attn_mask": _M}, "self"),
    "bool_mask_sdpa": ({}, {"attn_mask": _M, "need_weights": False}, "self"),
    "float_mask": ({}, {"attn_mask": np.linspace(-1, 1, 9).reshape(3, 3)}, "self"),
    "mask_3d_sdpa": (
        {},
        {"attn_mask": np.linspace(-1, 1, 36).reshape(4, 3, 3), "need_weights": False},
        "self",
    ),
    "key_padding": ({}, {"key_padding_mask": _KPM}, "self"),
    "key_padding_sdpa": ({}, {"key_padding_mask": _KPM, "need_weights": False}, "self"),
    "both_masks_sdpa": (
        {},
        {"key_padding_mask": _KPM, "attn_mask": _M, "need_weights": False},
        "self",
    ),
    "causal_sdpa": ({}, {"attn_mask": _CAUSAL, "is_causal": True, "need_weights": False}, "self"),
    "causal_weights": ({}, {"attn_mask": _CAUSAL, "is_causal": True}, "self"),
    "dropout_eval": ({"dropout": 0.5}, {}, "self"),
}


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name", sorted(MHA_CASES))
def test_multihead_attention_matches_torch(name: str, batched: bool) -> None:
    kw, call, qkv = MHA_CASES[name]
    if not batched and (
        "key_padding_mask" in call or "attn_mask" in call and np.ndim(call["attn_mask"]) == 3
    ):
        call = {
            k: v for k, v in call.items() if k not in ("key_padding_mask", "attn_mask", "is_causal")
        }
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    t_mod = torch.nn.MultiheadAttention(4, 2, **kw).double()
    c_mod = chainrule.nn.MultiheadAttention(4, 2, **kw).double()
    assert repr(c_mod) == repr(t_mod)
    _copy_weights(t_mod, c_mod)
    if "dropout" in kw:
        t_mod.eval()
        c_mod.eval()
    first = kw.get("batch_first", False)

    def shape(length: int, features: int) -> tuple[int, ...]:
        if not batched:
            return (length, features)
        return (2, length, features) if first else (length, 2, features)

    arrays = [
        rng.standard_normal(shape(3, 4)),
        rng.standard_normal(shape(3, kw.get("kdim", 4))),
        rng.standard_normal(shape(3, kw.get("vdim", 4))),
    ]
    results = []
    for lib, mod in ((torch, t_mod), (chainrule, c_mod)):
        q = _leaf(lib, arrays[0])
        if qkv == "self":
            leaves, args = [q], (q, q, q)
        elif qkv == "kv":
            k = _leaf(lib, arrays[1])
            leaves, args = [q, k], (q, k, k)
        else:
            k, v = _leaf(lib, arrays[1]), _leaf(lib, arrays[2])
            leaves, args = [q, k, v], (q, k, v)
        lib_call = {
            k2: lib.tensor(v2) if isinstance(v2, np.ndarray) else v2 for k2, v2 in call.items()
        }
        out, weights = mod(*args, **lib_call)
        graph = _graph(out)
        loss = (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum()
        if weights is not None:
            loss = loss + (weights * weights).sum()
        loss.backward()
        results.append((out, weights, leaves, graph))
    (t_out, t_w, t_leaves, t_graph), (c_out, c_w, c_leaves, c_graph) = results
    assert c_graph == t_graph
    assert (t_w is None) == (c_w is None)
    if t_w is not None:
        np.testing.assert_allclose(c_w.detach().numpy(), t_w.detach().numpy(), atol=1e-10)
    _compare(t_out, c_out, t_leaves, c_leaves, t_mod, c_mod)
    assert t_out.grad_fn.name() == c_out.grad_fn.name()


def test_multihead_attention_parameters_match_torch() -> None:
    for kw in ({}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}, {"bias": False}):
        t_mod = torch.nn.MultiheadAttention(6, 3, **kw)
        c_mod = chainrule.nn.MultiheadAttention(6, 3, **kw)
        t_shapes = [(k, tuple(v.shape)) for k, v in t_mod.state_dict().items()]
        c_shapes = [(k, tuple(v.shape)) for k, v in c_mod.state_dict().items()]
        assert c_shapes == t_shapes
        for attr in (
            "embed_dim",
            "kdim",
            "vdim",
            "_qkv_same_embed_dim",
            "num_heads",
            "dropout",
            "batch_first",
            "head_dim",
            "add_zero_attn",
        ):
            assert getattr(c_mod, attr) == getattr(t_mod, attr)
        if "bias" not in kw:  # biases start at zero
            assert not c_mod.in_proj_bias.detach().numpy().any()
            assert not c_mod.out_proj.bias.detach().numpy().any()


def _mha_call(**call: Any) -> Any:
    def run(lib: Any) -> Any:
        mod = lib.nn.MultiheadAttention(4, 2)
        x = lib.ones(3, 2, 4)
        args = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in call.items()}
        query = args.pop("query", x)
        out, weights = mod(query, x, x, **args)
        return tuple(out.shape), None if weights is None else tuple(weights.shape)

    return run


MHA_ERRORS = {
    "causal_without_mask": _mha_call(is_causal=True),
    "mask_2d_shape": _mha_call(attn_mask=np.zeros((2, 3), bool)),
    "mask_3d_shape": _mha_call(attn_mask=np.zeros((3, 3, 3), bool)),
    "mask_4d": _mha_call(attn_mask=np.zeros((1, 1, 3, 3), bool)),
    "mask_int": _mha_call(attn_mask=np.zeros((3, 3), np.int64)),
    "padding_shape": _mha_call(key_padding_mask=np.zeros((2, 4), bool)),
    "padding_dims": _mha_call(key_padding_mask=np.zeros((2, 3, 1), bool)),
    "query_4d": _mha_call(query=np.ones((1, 3, 2, 4), np.float32)),
    "embed_dim": _mha_call(query=np.ones((3, 2, 5), np.float32)),
}


@pytest.mark.parametrize("name", sorted(MHA_ERRORS))
def test_multihead_attention_errors_match_torch(name: str) -> None:
    same_outcome(MHA_ERRORS[name])


def test_mismatched_mask_types_warn_as_torch() -> None:
    def run(lib: Any) -> list[str]:
        mod = lib.nn.MultiheadAttention(4, 2)
        x = lib.ones(3, 2, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod(x, x, x, attn_mask=lib.zeros(3, 3), key_padding_mask=lib.zeros(2, 3).bool())
        return [str(w.message) for w in caught]

    assert run(chainrule) == run(torch)
    assert run(chainrule)


def test_constructor_errors_match_torch() -> None:
    same_outcome(lambda lib: lib.nn.MultiheadAttention(5, 2))
    same_outcome(lambda lib: lib.nn.MultiheadAttention(0, 2))
    same_outcome(lambda lib: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"))


LAYER_OPTIONS = [
    {},
    {"norm_first": True},
    {"activation": "gelu"},
    {"batch_first": True},
    {"bias": False},
]


def _pair(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[Any, Any]:
    a = rng.standard_normal(shape)
    return _leaf(torch, a), _leaf(chainrule, a)


def _backward(out: Any, lib: Any) -> None:
    (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()


@pytest.mark.parametrize("kw", LAYER_OPTIONS, ids=str)
def test_encoder_and_decoder_layers_match_torch(kw: dict) -> None:
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_enc = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    c_enc = chainrule.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    assert repr(c_enc) == repr(t_enc)
    _copy_weights(t_enc, c_enc)
    t_src, c_src = _pair(rng, (3, 5, 8) if kw.get("batch_first") else (5, 3, 8))
    mask = np.triu(np.ones((5, 5), bool), 1)
    t_out = t_enc(t_src, src_mask=torch.tensor(mask))
    c_out = c_enc(c_src, src_mask=chainrule.tensor(mask))
    _backward(t_out, torch)
    _backward(c_out, chainrule)
    _compare(t_out, c_out, [t_src], [c_src], t_enc, c_enc)

    t_dec = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    c_dec = chainrule.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    assert repr(c_dec) == repr(t_dec)
    _copy_weights(t_dec, c_dec)
    memory_shape = (5, 4, 8) if kw.get("batch_first") else (4, 3, 8)
    t_tgt, c_tgt = _pair(rng, (5, 3, 8))
    t_mem, c_mem = _pair(rng, memory_shape)
    t_out = t_dec(t_tgt, t_mem)
    c_out = c_dec(c_tgt, c_mem)
    _backward(t_out, torch)
    _backward(c_out, chainrule)
    _compare(t_out, c_out, [t_tgt, t_mem], [c_tgt, c_mem], t_dec, c_dec)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first: bool) -> None:
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first).double()
    c_mod = chainrule.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first).double()
    assert repr(c_mod) == repr(t_mod)
    _copy_weights(t_mod, c_mod)
    src_shape, tgt_shape = ((3, 5, 8), (3, 4, 8)) if batch_first else ((5, 3, 8), (4, 3, 8))
    t_src, c_src = _pair(rng, src_shape)
    t_tgt, c_tgt = _pair(rng, tgt_shape)
    padding = np.zeros((3, 5), bool)
    padding[1, 3:] = True
    outs = []
    for lib, mod, src, tgt in ((torch, t_mod, t_src, t_tgt), (chainrule, c_mod, c_src, c_tgt)):
        causal = lib.nn.Transformer.generate_square_subsequent_mask(4).double()
        out = mod(
            src,
            tgt,
            tgt_mask=causal,
            src_key_padding_mask=lib.tensor(padding),
            memory_key_padding_mask=lib.tensor(padding),
        )
        _backward(out, lib)
        outs.append(out)
    _compare(outs[0], outs[1], [t_src, t_tgt], [c_src, c_tgt], t_mod, c_mod)


def test_encoder_stack_eval_and_causal_detection_match_torch() -> None:
    rng = np.random.default_rng(3)
    t_enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double(),
        2,
        norm=torch.nn.LayerNorm(8).double(),
        enable_nested_tensor=False,
    )
    c_enc = chainrule.nn.TransformerEncoder(
        chainrule.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double(),
        2,
        norm=chainrule.nn.LayerNorm(8).double(),
        enable_nested_tensor=False,
    )
    _copy_weights(t_enc, c_enc)
    t_src, c_src = _pair(rng, (3, 5, 8))
    t_out = t_enc(t_src, mask=torch.nn.Transformer.generate_square_subsequent_mask(5).double())
    c_out = c_enc(c_src, mask=chainrule.nn.Transformer.generate_square_subsequent_mask(5).double())
    _backward(t_out, torch)
    _backward(c_out, chainrule)
    _compare(t_out, c_out, [t_src], [c_src], t_enc, c_enc)
    t_enc.eval()
    c_enc.eval()
    x = rng.standard_normal((3, 5, 8))
    with torch.no_grad(), chainrule.no_grad():
        np.testing.assert_allclose(
            c_enc(chainrule.tensor(x)).numpy(), t_enc(torch.tensor(x)).numpy(), atol=1e-10
        )


def test_square_subsequent_mask_matches_torch() -> None:
    same_outcome(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(4))
    same_outcome(
        lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(3, dtype=lib.float64)
    )


def test_nested_tensor_warning_matches_torch() -> None:
    def run(lib: Any, **kw: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(4, 2, 8, **kw), 2)
        return [str(w.message) for w in caught]

    for kw in (
        {},
        {"batch_first": True},
        {"batch_first": True, "norm_first": True},
        {"batch_first": True, "activation": chainrule.tanh},
    ):
        t_kw = dict(kw)
        if "activation" in t_kw:
            t_kw["activation"] = torch.tanh
        assert run(chainrule, **kw) == run(torch, **t_kw)


def test_transformer_errors_match_torch() -> None:
    def call(src: tuple[int, ...], tgt: tuple[int, ...]) -> Any:
        def run(lib: Any) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = lib.nn.Transformer(8, 2, 1, 1, 16)
            return tuple(model(lib.ones(*src), lib.ones(*tgt)).shape)

        return run

    same_outcome(call((5, 3, 8), (4, 2, 8)))
    same_outcome(call((5, 3, 8), (4, 3, 6)))
    same_outcome(call((5, 8), (4, 8)))
