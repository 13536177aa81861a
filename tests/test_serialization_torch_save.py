"""``chainrule.save`` writes PyTorch's zip format: the real ``torch.load(..., weights_only=True)``
reads it, with every dtype, views and shared storages as ``torch.save`` of the same objects
gives them, and the file's pickle is byte for byte the one ``torch.save`` writes for the same
state dict. ``.safetensors`` paths still get safetensors; nothing but data is ever written.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

DTYPES = [
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


def _bits(t: Any) -> bytes:
    """The raw bytes of a chainrule or torch tensor's elements, in logical order."""
    if isinstance(t, torch.Tensor):
        t = t.detach().contiguous()
        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
        return t.numpy().tobytes()
    return np.ascontiguousarray(t.detach()._data).tobytes()


def _pair(m: Any) -> dict[str, Any]:
    """The same structure built with torch or with chainrule (values from NumPy, so equal)."""
    base = m.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6) / 7)
    linear = m.nn.Linear(3, 2)
    with m.no_grad():
        linear.weight.copy_(m.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)))
        linear.bias.copy_(m.from_numpy(np.array([0.5, -1.5], np.float32)))
    shared = m.nn.Parameter(m.ones(3))
    return {
        "base": base,
        "block": base[1:3, ::2],
        "row": base[2],
        "transposed": base.t(),
        "expanded": base[0, :1].expand(5, 3),
        "scalar": base[3, 5],
        "empty": m.zeros(0, 4),
        "state": linear.state_dict(),
        "tied": [shared, shared],
        "requires_grad": m.ones(2, requires_grad=True),
        "nested": {"a": (1, 2.5, "x", None, True), "b": [m.tensor(7), {"c": m.tensor([1, 2])}]},
        "complex": 1 + 2j,
        "dtype": m.float16,
        "size": m.Size([2, 3]),
        "device": m.device("cpu"),
        "bytes": b"\x00\x01",
    }


def _load_ours_with_torch(obj: Any, tmp_path: Path, name: str = "ours.pt") -> Any:
    path = tmp_path / name
    chainrule.save(obj, path)
    return torch.load(path, weights_only=True)


def _describe(value: Any, seen: dict[int, int], storages: dict[int, int]) -> Any:
    """A comparable description: values, dtypes, strides, offsets, which tensors are the same
    object and which share a storage (numbered in order of first appearance)."""
    if isinstance(value, torch.Tensor):
        ident = seen.setdefault(id(value), len(seen))
        storage = storages.setdefault(value.untyped_storage().data_ptr(), len(storages))
        return (
            "tensor",
            type(value).__name__,
            str(value.dtype),
            tuple(value.shape),
            value.stride(),
            value.storage_offset(),
            value.requires_grad,
            ident,
            storage,
            _bits(value),
        )
    if isinstance(value, dict):
        items = [(k, _describe(v, seen, storages)) for k, v in value.items()]
        return (type(value).__name__, items, getattr(value, "_metadata", None))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_describe(v, seen, storages) for v in value])
    return (type(value).__name__, repr(value))


def test_torch_loads_what_chainrule_saves_as_what_torch_saves(tmp_path: Path) -> None:
    ours = _load_ours_with_torch(_pair(chainrule), tmp_path)
    torch.save(_pair(torch), tmp_path / "theirs.pt")
    theirs = torch.load(tmp_path / "theirs.pt", weights_only=True)
    assert _describe(ours, {}, {}) == _describe(theirs, {}, {})


def test_the_pickle_is_byte_for_byte_torch_saves(tmp_path: Path) -> None:
    chainrule.save(_pair(chainrule), tmp_path / "model.pt")
    torch.save(_pair(torch), tmp_path / "ref.pt")
    ours, theirs = zipfile.ZipFile(tmp_path / "model.pt"), zipfile.ZipFile(tmp_path / "ref.pt")
    names = [n.replace("model/", "") for n in ours.namelist()]
    assert names == [n.replace("ref/", "") for n in theirs.namelist()]
    for name in names:
        if name != ".data/serialization_id":
            assert ours.read(f"model/{name}") == theirs.read(f"ref/{name}"), name
    raw = (tmp_path / "model.pt").read_bytes()
    for info in ours.infolist():  # every entry's data starts at a multiple of 64
        (name_length, extra_length) = struct.unpack(
            "<HH", raw[info.header_offset + 26 : info.header_offset + 30]
        )
        assert (info.header_offset + 30 + name_length + extra_length) % 64 == 0
        assert info.compress_type == zipfile.ZIP_STORED


@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_bit_for_bit_both_ways(name: str, tmp_path: Path) -> None:
    values = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e4, 1e-7, 255, 65504, 7])
    theirs = torch.from_numpy(values)
    theirs = (theirs != 0) if name == "bool" else theirs.to(getattr(torch, name))
    if name.startswith("complex"):
        theirs = theirs + 1j * theirs.flip(0)
    ours = chainrule.from_dlpack(theirs.clone())
    assert _bits(ours) == _bits(theirs)
    loaded = _load_ours_with_torch({"x": ours, "view": ours[1::3]}, tmp_path)
    assert loaded["x"].dtype == theirs.dtype and _bits(loaded["x"]) == _bits(theirs)
    assert loaded["view"].untyped_storage().data_ptr() == loaded["x"].untyped_storage().data_ptr()
    assert _bits(loaded["view"]) == _bits(theirs[1::3])
    back = chainrule.load(tmp_path / "ours.pt")
    assert str(back["x"].dtype).split(".")[1] == name and _bits(back["x"]) == _bits(theirs)
    buffer = io.BytesIO()
    torch.save({"x": theirs}, buffer)
    buffer.seek(0)
    assert _bits(chainrule.load(buffer)["x"]) == _bits(theirs)


def test_a_model_state_dict_restores_in_pytorch(tmp_path: Path) -> None:
    chainrule.manual_seed(0)
    ours = chainrule.nn.Sequential(
        chainrule.nn.Conv2d(1, 2, 3),
        chainrule.nn.BatchNorm2d(2),
        chainrule.nn.ReLU(),
        chainrule.nn.Flatten(),
        chainrule.nn.Linear(8, 3),
    )
    ours(chainrule.randn(4, 1, 4, 4))  # running statistics move
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3),
        torch.nn.BatchNorm2d(2),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 3),
    )
    state = _load_ours_with_torch(ours.state_dict(), tmp_path)
    assert isinstance(state, OrderedDict) and list(state) == list(ours.state_dict())
    assert state._metadata == ours.state_dict()._metadata
    assert repr(theirs.load_state_dict(state)) == "<All keys matched successfully>"
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(
        theirs(torch.from_numpy(x)).detach().numpy(),
        ours(chainrule.from_numpy(x)).detach().numpy(),
        rtol=1e-6,
    )


def test_an_optimizer_checkpoint_loads_in_pytorch(tmp_path: Path) -> None:
    model = chainrule.nn.Linear(2, 1)
    optimizer = chainrule.optim.Adam(model.parameters(), lr=0.1)
    model(chainrule.ones(3, 2)).sum().backward()
    optimizer.step()
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}
    loaded = _load_ours_with_torch(checkpoint, tmp_path)
    reference = torch.nn.Linear(2, 1)
    reference.load_state_dict(loaded["model"])
    torch_optimizer = torch.optim.Adam(reference.parameters(), lr=0.1)
    torch_optimizer.load_state_dict(loaded["optimizer"])
    assert loaded["epoch"] == 3
    state = loaded["optimizer"]["state"][0]
    assert _bits(state["exp_avg"]) == _bits(optimizer.state_dict()["state"][0]["exp_avg"])
    mmapped = torch.load(tmp_path / "ours.pt", weights_only=True, mmap=True)
    assert torch.equal(mmapped["model"]["weight"], loaded["model"]["weight"])


def test_views_of_one_storage_as_different_types_are_refused_as_in_pytorch(tmp_path) -> None:
    errors = []
    for m in (torch, chainrule):
        x = m.ones(4)
        with pytest.raises(RuntimeError) as caught:
            m.save({"a": x, "b": x.view(m.int32)}, tmp_path / f"{m.__name__}.pt")
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_objects_that_are_not_data_are_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "x.pt"
    for bad in ({"x": object()}, chainrule.nn.Linear(2, 2), [len], {"f": lambda: 0}):
        with pytest.raises(TypeError, match="chainrule.save cannot store"):
            chainrule.save(bad, path)
        assert not path.exists()


def test_numpy_scalars_are_written_as_python_numbers(tmp_path: Path) -> None:
    loaded = _load_ours_with_torch(
        {"a": np.float32(2.5), "b": np.int64(3), "c": np.bool_(1)}, tmp_path
    )
    assert loaded == {"a": 2.5, "b": 3, "c": True}
    assert [type(v) for v in loaded.values()] == [float, int, bool]


def test_file_objects_and_archive_names(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    chainrule.save({"w": chainrule.ones(2)}, buffer)
    assert zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist()[0] == "archive/data.pkl"
    buffer.seek(0)
    assert torch.load(buffer, weights_only=True)["w"].tolist() == [1.0, 1.0]

    class Stream(io.RawIOBase):  # write-only, cannot seek
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b: Any) -> int:
            self.data += bytes(b)
            return len(b)

    stream = Stream()
    chainrule.save(chainrule.arange(3), stream)
    assert torch.load(io.BytesIO(bytes(stream.data)), weights_only=True).tolist() == [0, 1, 2]
    chainrule.save(chainrule.ones(1), tmp_path / "a.b.c.pt")
    assert zipfile.ZipFile(tmp_path / "a.b.c.pt").namelist()[0] == "a.b.c/data.pkl"


def test_safetensors_by_extension_and_by_name(tmp_path: Path) -> None:
    state = {"w": chainrule.ones(2, 3)}
    chainrule.save(state, tmp_path / "w.safetensors")
    chainrule.serialization.save_safetensors(state, tmp_path / "w.bin")
    for path in (tmp_path / "w.safetensors", tmp_path / "w.bin"):
        raw = path.read_bytes()
        header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
        assert header["w"]["shape"] == [2, 3], path
        assert chainrule.load(path)["w"].tolist() == [[1.0] * 3] * 2
    assert zipfile.is_zipfile(io.BytesIO(_saved(state)))


def _saved(obj: Any) -> bytes:
    buffer = io.BytesIO()
    chainrule.save(obj, buffer)
    return buffer.getvalue()


def test_unsupported_arguments() -> None:
    with pytest.raises(TypeError, match="pickle_module"):
        chainrule.save(chainrule.ones(1), io.BytesIO(), pickle_module=object())
    with pytest.raises(ValueError, match="zip format only"):
        chainrule.save(chainrule.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)


def test_disable_byteorder_record_as_pytorch(tmp_path: Path) -> None:
    """(PyTorch's archive writer still adds the record, at the end.)"""
    names = []
    for m in (chainrule, torch):
        path = tmp_path / f"{m.__name__}.pt"
        m.save({"w": m.ones(2)}, path, _disable_byteorder_record=True)
        names.append([n.split("/", 1)[1] for n in zipfile.ZipFile(path).namelist()])
        assert torch.load(path, weights_only=True)["w"].tolist() == [1.0, 1.0]
    assert names[0] == names[1]
