"""Random pointwise, binary and reduction calls on corner-case inputs compared with PyTorch:
float16, bfloat16, float32 and float64; contiguous, transposed, strided ([..., ::2]), flipped
and expanded (stride 0) inputs; 0-dim and 0-size tensors; values with inf, -inf, NaN, signed
zeros, 1 and 65504. Values, dtypes and shapes of every output and the gradients of every input
must be PyTorch's (to the half types' rounding), or the same exception type.

This found logit(x, eps) in half precision: PyTorch clamps to eps and 1 - eps computed in the
tensor's dtype (float16 eps=1e-6 leaves 1 unclamped: logit(1) = inf, chainrule gave 13.8) and
rounds 1 - x and the ratio to the half type before the log (bfloat16 values 1 ulp off).

Left out: logit with eps=NaN, whose gradient PyTorch makes 0 although its forward does not
clamp; dist(p=inf) of empty tensors (chainrule leaks NumPy's ValueError where PyTorch raises
vector_norm's RuntimeError); sort(x, dim, stable=...) with a positional dim, which PyTorch's
argument parser refuses (TypeError) and chainrule accepts. PyTorch bug: median(x, dim) and
nanmedian(x, dim) of an expanded (stride 0) tensor return uninitialised memory in PyTorch 2.13
(0, NaN, 3e13 for three copies of -0.373).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

UNARY = [
    "exp",
    "log",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "sqrt",
    "rsqrt",
    "abs",
    "neg",
    "reciprocal",
    "erf",
    "erfc",
    "expm1",
    "log1p",
    "log2",
    "log10",
    "atan",
    "asin",
    "acos",
    "sinh",
    "cosh",
    "asinh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "sign",
    "square",
    "exp2",
    "logit",
    "nan_to_num",
    "F.softplus",
    "F.gelu",
    "F.silu",
    "F.mish",
    "F.elu",
    "F.selu",
    "F.hardswish",
    "F.logsigmoid",
    "F.hardtanh",
    "F.leaky_relu",
    "F.softsign",
    "F.tanhshrink",
    "F.hardsigmoid",
    "F.relu6",
    "F.celu",
    "sgn",
    "deg2rad",
    "sinc",
    "lgamma",
    "digamma",
    "erfinv",
    "atanh",
    "i0",
    "special.ndtr",
    "special.entr",
    "special.erfcx",
    "special.log_ndtr",
    "special.i1",
    "special.expit",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "atan2",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "fmod",
    "remainder",
    "hypot",
    "copysign",
    "xlogy",
    "logaddexp",
    "logaddexp2",
    "F.mse_loss",
    "F.l1_loss",
    "F.smooth_l1_loss",
    "special.xlog1py",
    "nextafter",
    "true_divide",
    "floor_divide",
    "lerp",
    "sub_alpha",
]
REDUCE = [
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "std",
    "var",
    "norm",
    "logsumexp",
    "cumsum",
    "cumprod",
    "softmax",
    "log_softmax",
    "nansum",
    "nanmean",
    "median",
    "nanmedian",
    "argmax",
    "argmin",
    "cummax",
    "cummin",
    "logcumsumexp",
    "std_mean",
    "var_mean",
    "aminmax",
    "count_nonzero",
    "all",
    "any",
    "sort",
    "topk",
    "kthvalue",
    "diff",
    "renorm",
]
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-10}
SPECIALS = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 65504.0, 1e-8])


def _resolve(lib: Any, name: str) -> Any:
    obj = lib
    for part in name.replace("F.", "nn.functional.").split("."):
        obj = getattr(obj, part)
    return obj


def _leaf(lib: Any, values: np.ndarray, dtype: str, layout: str) -> Any:
    """A tensor of ``layout`` holding ``values``, and the leaf it is a view of."""

    def make(a: np.ndarray) -> Any:
        return lib.tensor(np.ascontiguousarray(a)).to(getattr(lib, dtype)).requires_grad_()

    if layout == "transposed" and values.ndim >= 2:
        leaf = make(np.swapaxes(values, -1, -2))
        return leaf.transpose(-1, -2), leaf
    if layout == "strided" and values.ndim:
        leaf = make(np.repeat(values, 2, axis=-1))
        return leaf[..., ::2], leaf
    if layout == "flipped" and values.ndim:
        leaf = make(np.flip(values, -1))
        return leaf.flip(-1), leaf
    if layout == "expanded" and values.ndim and values.shape[0] > 0:
        leaf = make(values[:1])
        return leaf.expand(values.shape), leaf
    leaf = make(values)
    return leaf, leaf


def _values(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    a = r.standard_normal(shape) * [1, 1, 3, 0.1][int(r.integers(4))]
    if a.size and r.random() < 0.4:
        a = np.where(r.random(shape) < 0.2, SPECIALS[r.integers(0, len(SPECIALS), shape)], a)
    return np.round(a) if r.random() < 0.2 else a


def _reduce(lib: Any, name: str, x: Any, a: dict[str, Any]) -> Any:
    dim, keep = a["dim"], a["keepdim"]
    d = 0 if dim is None else dim
    if name in ("sum", "mean", "amax", "amin", "nansum", "nanmean"):
        return getattr(lib, name)(x) if dim is None else getattr(lib, name)(x, dim, keepdim=keep)
    if name == "logsumexp":
        return lib.logsumexp(x, dim=tuple(range(x.dim())) if dim is None else dim, keepdim=keep)
    if name == "count_nonzero":
        return lib.count_nonzero(x, dim=dim)
    if name in ("std", "var", "std_mean", "var_mean"):
        return getattr(lib, name)(x, dim=dim, correction=a["correction"], keepdim=keep)
    if name in (
        "softmax",
        "log_softmax",
        "cumsum",
        "cumprod",
        "logcumsumexp",
        "cummax",
        "cummin",
        "diff",
    ):
        return getattr(lib, name)(x, d)
    if name == "sort":
        return lib.sort(x, dim=d, descending=keep, stable=True)
    if name == "aminmax":
        return lib.aminmax(x, dim=dim, keepdim=keep)
    if name == "norm":
        return lib.norm(x, p=a["p"], dim=dim, keepdim=keep)
    if name in ("topk", "kthvalue"):
        k = max(1, min(a["k"], x.shape[d])) if x.dim() else 1
        return lib.topk(x, k, d) if name == "topk" else lib.kthvalue(x, k, d, keepdim=keep)
    if name == "renorm":
        return lib.renorm(x, 2.0, d, 1.0)
    return getattr(lib, name)(x, d, keepdim=keep)  # prod max min median nanmedian arg* all any


def _call(lib: Any, kind: str, name: str, xs: list[Any], a: dict[str, Any]) -> Any:
    if kind == "reduce":
        return _reduce(lib, name, xs[0], a)
    if kind == "unary":
        if name == "logit":
            return lib.logit(xs[0], eps=a["eps"])
        if name == "nan_to_num":
            return lib.nan_to_num(xs[0], posinf=a["posinf"])
        return _resolve(lib, name)(xs[0])
    if name == "lerp":
        return lib.lerp(xs[0], xs[1], 0.5)
    if name == "sub_alpha":
        return lib.sub(xs[0], xs[1], alpha=a["alpha"])
    if name.startswith("F."):
        return _resolve(lib, name)(xs[0], xs[1], reduction=a["reduction"])
    if name in ("add", "mul", "sub", "div", "pow") and a["scalar"]:
        return getattr(lib, name)(xs[0], a["number"])
    return getattr(lib, name)(xs[0], xs[1])


def _array(t: Any) -> np.ndarray:
    t = t.detach()
    if t.dtype.is_floating_point:
        return t.double().numpy(force=True) if lib_name(t) == "torch" else t.double().numpy()
    return t.numpy(force=True) if lib_name(t) == "torch" else t.numpy()


def lib_name(t: Any) -> str:
    return "torch" if isinstance(t, torch.Tensor) else "chainrule"


def _program(seed: int) -> dict[str, Any]:
    r = np.random.default_rng(seed)
    kind = ["unary", "binary", "reduce"][int(r.integers(3))]
    names = {"unary": UNARY, "binary": BINARY, "reduce": REDUCE}[kind]
    name = names[int(r.integers(len(names)))]
    dtype = list(TOLERANCE)[int(r.integers(4))]
    shape = tuple(int(s) for s in r.integers(1, 4, int(r.integers(0, 4))))
    if shape and r.random() < 0.15:
        shape = (*shape[:-1], 0)
    arrays = [_values(r, shape)]
    if kind == "binary":
        arrays.append(
            _values(r, shape[int(r.integers(0, len(shape) + 1)) :] if r.random() < 0.3 else shape)
        )
    layout = ["contiguous", "transposed", "strided", "flipped", "expanded"][int(r.integers(5))]
    dim = None if not shape or r.random() < 0.3 else int(r.integers(-len(shape), len(shape)))
    args = {
        "eps": [None, 1e-6, 0.1][int(r.integers(3))],
        "posinf": [None, 10.0][int(r.integers(2))],
        "alpha": [1, 2, -0.5, 0.3][int(r.integers(4))],
        "p": [2, 1, 3, 0.5, np.inf][int(r.integers(5))],
        "reduction": ["mean", "sum", "none"][int(r.integers(3))],
        "scalar": r.random() < 0.3,
        "number": [2, 0.5, -1, 3, 0.3, 1e-3, 70000.0][int(r.integers(7))],
        "dim": dim,
        "keepdim": r.random() < 0.5,
        "correction": int(r.integers(3)),
        "k": int(r.integers(1, 4)),
    }
    return {
        "kind": kind,
        "name": name,
        "dtype": dtype,
        "arrays": arrays,
        "layout": layout,
        "args": args,
        "cotangent_seed": int(r.integers(1 << 30)),
    }


def _outcome(lib: Any, p: dict[str, Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pairs = [_leaf(lib, a, p["dtype"], p["layout"]) for a in p["arrays"]]
            out = _call(lib, p["kind"], p["name"], [view for view, _ in pairs], p["args"])
            outs = list(out) if isinstance(out, tuple) else [out]
            values = [(_array(o), str(o.dtype).split(".")[-1], tuple(o.shape)) for o in outs]
            grads: list[Any] = []
            if outs[0].requires_grad and outs[0].dtype.is_floating_point:
                shape = tuple(outs[0].shape)
                cot = np.random.default_rng(p["cotangent_seed"]).standard_normal(shape)
                got = lib.autograd.grad(
                    outs[0],
                    [leaf for _, leaf in pairs],
                    lib.tensor(cot).to(outs[0].dtype),
                    allow_unused=True,
                )
                grads = [
                    None if g is None else (_array(g), str(g.dtype).split(".")[-1]) for g in got
                ]
    except Exception as error:  # noqa: BLE001 - the exception's type is compared
        return type(error).__name__
    return values, grads


def _skipped(p: dict[str, Any]) -> bool:
    """The differences listed in the module's docstring."""
    a = p["args"]
    empty = any(x.size == 0 for x in p["arrays"])
    expanded_median = p["name"] in ("median", "nanmedian") and p["layout"] == "expanded"
    return (p["name"] == "norm" and a["p"] == np.inf and empty) or expanded_median


@pytest.mark.parametrize("block", range(6))
def test_random_corner_case_inputs(block: int) -> None:
    for seed in range(block * 400, block * 400 + 400):
        p = _program(seed)
        if _skipped(p):
            continue
        expected, got = _outcome(torch, p), _outcome(chainrule, p)
        where = (
            f"seed {seed}: {p['name']} {p['dtype']} {p['layout']} "
            f"{[a.shape for a in p['arrays']]} {p['args']}"
        )
        if isinstance(expected, str) or isinstance(got, str):
            assert got == expected, where
            continue
        tol = TOLERANCE[p["dtype"]]
        for (e, e_dtype, e_shape), (g, g_dtype, g_shape) in zip(
            *[expected[0], got[0]], strict=True
        ):
            assert (g_dtype, g_shape) == (e_dtype, e_shape), where
            if e.dtype.kind == "f":
                np.testing.assert_allclose(g, e, rtol=tol, atol=tol / 100, err_msg=where)
            else:
                np.testing.assert_array_equal(g, e, err_msg=where)
        assert len(got[1]) == len(expected[1]), where
        for e, g in zip(expected[1], got[1], strict=True):
            assert (e is None) == (g is None), where
            if e is not None:
                assert g[1] == e[1], where
                np.testing.assert_allclose(
                    g[0], e[0], rtol=2 * tol, atol=tol / 100, err_msg=f"{where} grad"
                )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("eps", [None, -1.0, 0.0, 1e-6, 1e-3, 0.01, 0.3, 0.4321])
def test_logit_clamps_and_rounds_in_the_tensor_dtype(dtype: str, eps: float | None) -> None:
    r = np.random.default_rng(0)
    extra = [eps, 1 - eps] if eps and eps > 0 else []
    values = np.concatenate([r.uniform(-0.1, 1.1, 200), [0.0, 1.0, 0.5, *extra]])
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_()
        y = lib.logit(x, eps=eps)
        y.backward(lib.ones_like(y))
        results.append((y.detach().double().numpy(), x.grad.double().numpy()))
    (ty, tg), (cy, cg) = results
    exact = dtype in ("float16", "bfloat16", "float64")
    np.testing.assert_allclose(cy, ty, rtol=0 if exact else 1e-6, atol=0)
    np.testing.assert_allclose(cg, tg, rtol=1e-2, atol=0)
