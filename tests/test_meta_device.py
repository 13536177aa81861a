"""The meta device against PyTorch: factories with ``device="meta"`` and under
``with torch.device("meta")``, ops giving meta results of PyTorch's shapes, dtypes and strides
(with their grad_fn), modules made on the meta device, ``load_state_dict(assign=True)`` and
``to_empty``, repr, and PyTorch's errors for reading data or mixing devices."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import torch

import chainrule


def _outcome(run: Callable[[], Any]) -> Any:
    try:
        r = run()
    except Exception as e:  # noqa: BLE001 (type and message are compared)
        return (type(e).__name__, str(e).replace("chainrule", "torch"))
    if isinstance(r, tuple):
        return tuple(_describe(x) for x in r)
    return _describe(r)


def _describe(r: Any) -> Any:
    if not hasattr(r, "shape") or not hasattr(r, "stride"):
        return repr(r).replace("chainrule", "torch")
    fn = r.grad_fn
    return (
        str(r.device),
        tuple(r.shape),
        str(r.dtype).split(".")[-1],
        r.stride(),
        r.is_contiguous(),
        r.requires_grad,
        None if fn is None else type(fn).__name__,
        repr(r).replace("chainrule", "torch"),
    )


CASES: dict[str, Callable[[Any], Any]] = {
    "rand": lambda L: L.rand(2, 3, device="meta"),
    "randn-size": lambda L: L.randn((4, 5), device=L.device("meta")),
    "zeros-int": lambda L: L.zeros(2, dtype=L.int64, device="meta"),
    "ones-grad": lambda L: L.ones(3, device="meta", requires_grad=True),
    "empty-2d": lambda L: L.empty(0, 3, device="meta"),
    "full": lambda L: L.full((2, 2), 7, device="meta"),
    "tensor": lambda L: L.tensor([[1.0, 2.0]], device="meta"),
    "tensor-0d": lambda L: L.tensor(3.0, device="meta"),
    "arange": lambda L: L.arange(5, device="meta"),
    "randint": lambda L: L.randint(0, 5, (3,), device="meta"),
    "empty-strided": lambda L: L.empty_strided((2, 3), (1, 2), device="meta"),
    "huge": lambda L: L.rand(2**10, 3, 2**16, 2**16, device="meta"),
    "zeros-like": lambda L: L.zeros_like(L.rand(2, 3, device="meta").t()),
    "empty-like-to-meta": lambda L: L.empty_like(L.ones(2, 3), device="meta"),
    "new-zeros": lambda L: L.rand(2, device="meta").new_zeros(3),
    "new-ones-float64": lambda L: L.ones(2).new_ones(2, dtype=L.float64, device="meta"),
    "add": lambda L: L.rand(2, 3, device="meta") + 1,
    "add-0d-cpu": lambda L: L.rand(2, 3, device="meta") + L.tensor(1.0),
    "mul-grad": lambda L: L.rand(2, 3, device="meta", requires_grad=True) * 2,
    "sum": lambda L: L.rand(2, 3, device="meta").sum(),
    "mean-dim": lambda L: L.rand(2, 3, device="meta").mean(1, keepdim=True),
    "int-division": lambda L: L.zeros(4, dtype=L.int64, device="meta") / 2,
    "transpose": lambda L: L.rand(2, 3, device="meta").t(),
    "t-contiguous": lambda L: L.rand(2, 3, device="meta").t().contiguous(),
    "permute": lambda L: L.rand(2, 3, 4, device="meta").permute(2, 0, 1),
    "getitem": lambda L: L.rand(2, 3, device="meta")[0],
    "getitem-slice": lambda L: L.rand(4, 3, device="meta")[1::2],
    "getitem-index": lambda L: L.rand(2, 3, device="meta")[L.tensor([0], device="meta")],
    "flatten": lambda L: L.flatten(L.rand(2, 3, 4, device="meta"), 1),
    "view": lambda L: L.rand(2, 6, device="meta").view(3, 4),
    "matmul": lambda L: L.rand(2, 3, device="meta") @ L.rand(3, 4, device="meta"),
    "max": lambda L: L.rand(2, 3, device="meta").max(),
    "relu": lambda L: L.relu(L.rand(2, 3, device="meta", requires_grad=True)),
    "softmax": lambda L: L.softmax(L.rand(2, 3, device="meta"), 1),
    "cat": lambda L: L.cat([L.rand(2, 3, device="meta"), L.rand(1, 3, device="meta")]),
    "to-meta": lambda L: L.ones(2).to("meta"),
    "to-meta-kw": lambda L: L.ones(2, requires_grad=True).to(device="meta"),
    "copy-into-meta": lambda L: L.rand(2, 3, device="meta").copy_(L.ones(2, 3)),
    "conv": lambda L: L.nn.functional.conv2d(
        L.rand(2, 3, 10, 10, device="meta"), L.rand(5, 3, 2, 2, device="meta")
    ),
    "conv-huge": lambda L: L.nn.Conv2d(3, 5, 2, device="meta")(
        L.rand(2**10, 3, 2**16, 2**16, device="meta")
    ),
    "conv-transposed": lambda L: L.nn.functional.conv_transpose2d(
        L.rand(1, 4, 5, 5, device="meta"), L.rand(4, 2, 3, 3, device="meta"), stride=2
    ),
    "max-pool": lambda L: L.nn.functional.max_pool2d(L.rand(2, 3, 8, 8, device="meta"), 2),
    "max-pool-indices": lambda L: L.nn.functional.max_pool2d(
        L.rand(2, 3, 8, 8, device="meta"), 2, return_indices=True
    ),
    "linear-module": lambda L: L.nn.Linear(2, 3, device="meta")(L.randn(4, 2, device="meta")),
    "linear-weight": lambda L: L.nn.Linear(2, 3, device="meta").weight,
    "parameter": lambda L: L.nn.Parameter(L.zeros(2, device="meta")),
    "batchnorm-buffer": lambda L: L.nn.BatchNorm1d(3, device="meta").running_mean,
    "layernorm": lambda L: L.nn.LayerNorm(3, device="meta")(L.rand(2, 3, device="meta")),
    # data access and devices
    "item": lambda L: L.zeros(1, device="meta").item(),
    "bool": lambda L: bool(L.zeros(1, device="meta")),
    "float": lambda L: float(L.zeros(1, device="meta")),
    "tolist": lambda L: L.zeros(2, device="meta").tolist(),
    "numpy": lambda L: L.zeros(2, device="meta").numpy(),
    "cpu": lambda L: L.zeros(2, device="meta").cpu(),
    "to-cpu": lambda L: L.zeros(2, device="meta").to("cpu"),
    "copy-out": lambda L: L.ones(2).copy_(L.zeros(2, device="meta")),
    "mixed-meta-first": lambda L: L.rand(2, 3, device="meta") + L.ones(2, 3),
    "mixed-cpu-first": lambda L: L.ones(2, 3) * L.rand(2, 3, device="meta"),
    "nonzero": lambda L: L.rand(2, 3, device="meta").nonzero(),
    "masked-select": lambda L: L.masked_select(
        L.rand(2, 3, device="meta"), L.ones(2, 3, dtype=L.bool, device="meta")
    ),
    "unique": lambda L: L.unique(L.rand(2, 3, device="meta")),
    "equal": lambda L: L.equal(L.rand(2, device="meta"), L.rand(2, device="meta")),
    "allclose": lambda L: L.allclose(L.rand(2, device="meta"), L.rand(2, device="meta")),
    "bincount": lambda L: L.bincount(L.zeros(2, dtype=L.int64, device="meta")),
    "device-props": lambda L: (
        L.rand(1, device="meta").is_meta,
        L.rand(1, device="meta").is_cpu,
        L.rand(1).is_meta,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_meta_as_pytorch(case: str) -> None:
    assert _outcome(lambda: CASES[case](chainrule)) == _outcome(lambda: CASES[case](torch))


def _in_device_context(L: Any) -> Any:
    seen = [str(L.get_default_device())]
    with L.device("meta") as entered:
        seen.append(repr(entered))
        seen += [str(L.ones(2).device), str(L.tensor([1.0]).device), str(L.arange(3).device)]
        seen.append(str(L.get_default_device()))
        net = L.nn.Sequential(
            L.nn.Conv2d(3, 6, 5),
            L.nn.ReLU(),
            L.nn.MaxPool2d(2),
            L.nn.Flatten(),
            L.nn.Linear(6 * 14 * 14, 10),
        )
        x = L.randn((1024, 3, 32, 32))
        with L.device("cpu"):
            seen.append(str(L.ones(1).device))
        seen.append(str(L.ones(1).device))
    seen.append(str(L.ones(1).device))
    out = net(x)
    seen.append(_describe(out))
    seen += [str(p.device) for p in net.parameters()]
    return seen


def test_device_context_manager() -> None:
    assert _in_device_context(chainrule) == _in_device_context(torch)


def test_set_default_device_meta() -> None:
    def run(L: Any) -> Any:
        L.set_default_device("meta")
        try:
            return [str(L.zeros(2).device), str(L.get_default_device())]
        finally:
            L.set_default_device(None)

    assert run(chainrule) == run(torch)
    assert str(chainrule.zeros(1).device) == "cpu"


def _load_assign(L: Any, tmp_path: Any) -> Any:
    class Some(L.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linears = L.nn.ModuleList([L.nn.Linear(1, 1) for _ in range(3)])

    L.manual_seed(0)
    m = Some()
    state = m.state_dict()
    with L.device("meta"):
        meta_m = Some()
    seen = [_describe(meta_m.linears[0].weight)]
    meta_m.load_state_dict(state, assign=True)
    w = meta_m.linears[0].weight
    seen += [
        str(w.device),
        w.requires_grad,
        type(w).__name__,
        w.detach().tolist() == m.linears[0].weight.detach().tolist(),
    ]
    with L.device("meta"):
        empty_m = Some()
    empty_m.to_empty(device="cpu")
    seen += [str(p.device) for p in empty_m.parameters()]
    seen += [tuple(p.shape) for p in empty_m.parameters()]
    return seen


def test_load_state_dict_assign_and_to_empty(tmp_path: Any) -> None:
    assert _load_assign(chainrule, tmp_path) == _load_assign(torch, tmp_path)


def test_repr_wraps_as_pytorch() -> None:
    def run(L: Any) -> str:
        conv = L.nn.Conv2d(3, 5, 2, device="meta")
        out = conv(L.rand(2**10, 3, 2**16, 2**16, device="meta"))
        return re.sub("chainrule", "torch", repr(out) + str(conv.weight))

    assert run(chainrule) == run(torch)


def test_meta_tensors_take_no_memory() -> None:
    t = chainrule.rand(2**20, 2**20, device="meta")
    assert t._data.strides == (0, 0)  # (one element behind any shape)
    assert t.stride() == (2**20, 1)
