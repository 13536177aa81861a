"""DLPack: ``Tensor.__dlpack__``/``__dlpack_device__``, ``chainrule.from_dlpack`` and
``chainrule.utils.dlpack``, zero-copy to and from NumPy and the real PyTorch, compared with
``torch.from_dlpack`` on the same producers.

"Shared" is checked by writing on one side and reading on the other, both directions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule
from chainrule._dtype import BFLOAT16

NUMPY_DTYPES = [
    np.bool_,
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]
TORCH_DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def _layouts(base: np.ndarray) -> dict[str, np.ndarray]:
    """Contiguous, transposed, sliced with steps, 0-d, empty and expanded arrays of ``base``'s
    type (views of one buffer where NumPy makes views)."""
    grid = base.reshape(3, 4)
    return {
        "contiguous": grid,
        "transposed": grid.T,
        "stepped": grid[::2, 1::2],
        "0-d": grid[1, 2, ...],
        "empty": grid[:0],
        "expanded": np.broadcast_to(grid[:, :1], (3, 5)),
    }


def _values(dtype: Any) -> np.ndarray:
    if dtype is np.bool_:
        return np.arange(12) % 3 != 2
    return (np.arange(12) + 1).astype(dtype)


def _writable(a: np.ndarray) -> bool:
    return a.flags.writeable and a.size > 0


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_numpy_arrays_as_pytorch_and_shared(dtype: Any) -> None:
    for name, array in _layouts(_values(dtype)).items():
        ours = chainrule.from_dlpack(array)
        theirs = torch.from_dlpack(array)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1], name
        assert ours.shape == theirs.shape and ours.stride() == theirs.stride(), name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)
        assert ours.is_leaf and not ours.requires_grad and ours.grad_fn is None
        assert np.shares_memory(ours.numpy(), array) or array.size == 0, name
        if _writable(array):  # a write on the NumPy side shows in the tensor
            first = (0,) * array.ndim
            old = array[first].copy()
            array[first] = np.zeros((), dtype)
            assert ours[first].item() == array[first].item() != old.item(), name
            array[first] = old


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_from_chainrule_tensors_as_from_pytorch_tensors(dtype: Any) -> None:
    for name, array in _layouts(_values(dtype)).items():
        ours = chainrule.from_numpy(np.array(array))  # (a tensor that owns its memory)
        theirs = torch.from_numpy(np.array(array))
        if name == "expanded":
            ours = chainrule.from_numpy(np.array(array[:, :1])).expand(3, 5)
            theirs = torch.from_numpy(np.array(array[:, :1])).expand(3, 5)
        out_ours, out_theirs = np.from_dlpack(ours), np.from_dlpack(theirs)
        assert out_ours.dtype == out_theirs.dtype and out_ours.shape == out_theirs.shape
        assert out_ours.strides == out_theirs.strides, name
        np.testing.assert_array_equal(out_ours, out_theirs, err_msg=name)
        assert out_ours.flags.writeable == out_theirs.flags.writeable, name
        if ours.numel() and name != "expanded":  # a write on the NumPy side shows in the tensor
            first = (0,) * out_ours.ndim
            out_ours[first] = 0
            assert ours[first].item() == 0, name


@pytest.mark.parametrize("name", TORCH_DTYPES)
def test_to_and_from_pytorch_share_memory(name: str) -> None:
    theirs_dtype = getattr(torch, name)
    source = torch.arange(1, 13).reshape(3, 4) % 5
    source = source.to(theirs_dtype) if name != "bool" else source == 0
    for layout, view in {
        "contiguous": source,
        "transposed": source.T,
        "stepped": source[::2, 1::2],
        "expanded": source[:, :1].expand(3, 5),
        "0-d": source[1, 2],
        "empty": source[:0],
    }.items():
        ours = chainrule.from_dlpack(view)
        assert str(ours.dtype).split(".")[1] == name, layout
        assert ours.shape == view.shape and ours.stride() == view.stride(), layout
        back = torch.from_dlpack(ours)
        assert back.dtype == view.dtype, layout
        assert back.stride() == view.stride() or view.numel() == 0, layout  # (NumPy's empty)
        assert back.data_ptr() == view.data_ptr() or view.numel() == 0, layout
        assert torch.equal(back, view), layout
        if view.numel() and layout != "expanded":
            one = torch.ones((), dtype=theirs_dtype)
            first = (0,) * view.ndim
            view[first] = one  # PyTorch writes, chainrule reads
            assert ours[first].item() == one.item(), layout
            ours[first] = chainrule.zeros((), dtype=ours.dtype)  # and the other way
            assert view[first].item() == 0, layout


def test_bfloat16_bits_cross_unchanged() -> None:
    bits = np.array([0x3FC0, 0xFF80, 0x7FC1, 0x0001, 0x8000], np.uint16)  # 1.5, -inf, NaN ...
    ours = chainrule.from_numpy(bits.copy()).view(chainrule.bfloat16)
    theirs = torch.from_dlpack(ours)
    assert theirs.dtype == torch.bfloat16
    assert theirs.view(torch.int16).numpy().view(np.uint16).tolist() == bits.tolist()
    back = chainrule.from_dlpack(theirs)
    assert back.dtype == chainrule.bfloat16 and back._data.dtype == BFLOAT16
    assert back._data.view(np.uint16).tolist() == bits.tolist()
    # NumPy has no bfloat16: its error for ours is its error for PyTorch's
    errors = []
    for t in (ours, theirs):
        with pytest.raises(Exception) as caught:
            np.from_dlpack(t)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]


def _error(call: Any) -> tuple[type, str]:
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return type(e), str(e)
    raise AssertionError("no error")


REFUSED = {
    "requires_grad": lambda m: m.ones(2, requires_grad=True).__dlpack__(),
    "requires_grad via numpy": lambda m: np.from_dlpack(m.ones(2, requires_grad=True)),
    "requires_grad via from_dlpack": lambda m: m.from_dlpack(m.ones(2, requires_grad=True)),
    "conjugate bit": lambda m: m.tensor([1j]).conj().__dlpack__(),
    "conjugate bit via numpy": lambda m: np.from_dlpack(m.tensor([1j]).conj()),
    "requires_grad before stream": lambda m: m.ones(2, requires_grad=True).__dlpack__(stream=1),
    "stream on the CPU": lambda m: m.ones(2).__dlpack__(stream=1),
    "a list": lambda m: m.from_dlpack([1, 2]),
    "None": lambda m: m.from_dlpack(None),
    "a consumed capsule": lambda m: [
        m.from_dlpack(c) for c in [m.utils.dlpack.to_dlpack(m.ones(1))] * 2
    ],
    "to_dlpack of a non-tensor": lambda m: m.utils.dlpack.to_dlpack(np.ones(2)),
    "device cuda": lambda m: m.from_dlpack(np.ones(2), device="cuda"),
    "device meta": lambda m: m.from_dlpack(np.ones(2), device="meta"),
    "big-endian array": lambda m: m.from_dlpack(np.ones(2, ">f8")),
    "longdouble array": lambda m: m.from_dlpack(np.ones(2, np.longdouble)),
    "object array": lambda m: m.from_dlpack(np.ones(2, object)),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refusals_are_pytorchs(name: str) -> None:
    ours = _error(lambda: REFUSED[name](chainrule))
    theirs = _error(lambda: REFUSED[name](torch))
    assert ours == theirs


def test_capsules_and_device_as_pytorch() -> None:
    for kwargs in (
        {},
        {"max_version": (1, 0)},
        {"max_version": (0, 8)},
        {"max_version": (2, 3)},
        {"copy": False},
        {"stream": None},
        {"stream": -1},
        {"dl_device": (1, 0)},
    ):
        ours = repr(chainrule.ones(2).__dlpack__(**kwargs)).split('"')[1]
        theirs = repr(torch.ones(2).__dlpack__(**kwargs)).split('"')[1]
        assert ours == theirs, kwargs
    assert chainrule.ones(1).__dlpack_device__() == torch.ones(1).__dlpack_device__()
    ours_type = type(chainrule.ones(1).__dlpack_device__()[0])
    assert [(k, int(v)) for k, v in ours_type.__members__.items()] == [
        (k, int(v)) for k, v in torch.utils.dlpack.DLDeviceType.__members__.items()
    ]
    assert chainrule.utils.dlpack.DLDeviceType is ours_type
    assert chainrule.from_dlpack is chainrule.utils.dlpack.from_dlpack


def test_to_dlpack_exports_a_tensor_that_requires_grad_as_pytorch() -> None:
    x = chainrule.ones(3, requires_grad=True)
    y = torch.from_dlpack(chainrule.utils.dlpack.to_dlpack(x))
    assert not y.requires_grad
    y[0] = 4.0
    assert x.detach().tolist() == [4.0, 1.0, 1.0]


def test_copy_true_does_not_share() -> None:
    a = np.arange(3.0)
    t = chainrule.from_dlpack(a, copy=True)
    a[0] = 7.0
    assert t.tolist() == [0.0, 1.0, 2.0]
    x = chainrule.arange(3.0)
    b = np.from_dlpack(x, copy=True)
    b[0] = 7.0
    assert x.tolist() == [0.0, 1.0, 2.0]
    y = torch.from_dlpack(chainrule.from_dlpack(torch.ones(2), copy=True))
    assert y.tolist() == [1.0, 1.0]


def test_a_read_only_source_imports_writable_as_in_pytorch() -> None:
    a = np.arange(4.0)
    a.flags.writeable = False
    ours, theirs = chainrule.from_dlpack(a), torch.from_dlpack(a)
    ours[0] = 1.0  # PyTorch ignores the read-only flag; so does chainrule
    theirs[1] = 1.0
    assert ours.tolist() == theirs.tolist() == [1.0, 1.0, 2.0, 3.0]


def test_imported_tensors_join_autograd() -> None:
    x = chainrule.from_dlpack(np.array([1.0, 2.0])).requires_grad_()
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_negative_strides_are_refused() -> None:
    """PyTorch's import aborts the whole process on them (so no comparison): chainrule refuses
    with BufferError, and takes the copy."""
    with pytest.raises(BufferError, match="negative strides"):
        chainrule.from_dlpack(np.arange(3.0)[::-1])
    assert chainrule.from_dlpack(np.arange(3.0)[::-1].copy()).tolist() == [2.0, 1.0, 0.0]


def test_a_tensor_on_negative_steps_is_exported_as_a_copy() -> None:
    t = chainrule.from_numpy(np.arange(4.0))
    t._data = t._data[::-1]  # a NumPy view with a negative step, as internal code could make
    assert torch.from_dlpack(t).tolist() == [3.0, 2.0, 1.0, 0.0]
