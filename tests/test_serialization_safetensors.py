"""``chainrule.load`` of safetensors files: malformed headers raise ``RuntimeError`` with the
safetensors library's wording (never ``JSONDecodeError``, ``KeyError`` or ``RecursionError``),
a malformed chainrule structure is reported as such, valid files of every dtype load as
``safetensors.torch`` loads them, and memory stays about the tensors' bytes."""

from __future__ import annotations

import io
import json
import re
import struct

import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch

import chainrule

from .conftest import torch
from .test_serialization_hostile import measure_peaks
from .test_serialization_torch_files import BF16_PATTERNS, bf16_bits, torch_bf16

MiB = 1 << 20


def _file(header, data: bytes = b"", length: int | None = None) -> bytes:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def _f32(name: str, shape: list[int], begin: int, end: int) -> dict:
    return {name: {"dtype": "F32", "shape": shape, "data_offsets": [begin, end]}}


# (name, file bytes): each malformed as the safetensors library also refuses it.
MALFORMED = [
    ("header_too_large", _file(b"{}", length=10**9)),
    ("header_longer_than_the_file", _file(b"{}    ", length=4000)),
    ("not_utf8", _file(b'{"\xff": 1}')),
    ("not_json", _file(b'{"a": ')),
    (
        "unknown_dtype",
        _file({"a": {"dtype": "X9", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
    ),
    ("shape_does_not_fit", _file(_f32("a", [2], 0, 4), b"\0" * 4)),
    ("hole_before_a_tensor", _file(_f32("a", [1], 4, 8), b"\0" * 8)),
    ("overlapping_tensors", _file({**_f32("a", [1], 0, 4), **_f32("b", [1], 0, 4)}, b"\0" * 4)),
    ("tensor_past_the_end", _file(_f32("a", [4], 0, 16), b"\0" * 4)),
    ("trailing_bytes", _file(_f32("a", [1], 0, 4), b"\0" * 8)),
    ("negative_dimension", _file(_f32("a", [-1], 0, 4), b"\0" * 4)),
    (
        "float_offset",
        _file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0.0, 4]}}, b"\0" * 4),
    ),
    ("size_overflow", _file(_f32("a", [2**62, 2**62], 0, 4), b"\0" * 4)),
    ("non_string_metadata", _file({"__metadata__": {"a": 1}})),
    ("missing_offsets", _file({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4)),
    (
        "deeply_nested",
        _file(b'{"__metadata__": {"x": "y"}, "a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ),
    (
        "huge_integer",
        _file(
            b'{"a": {"dtype": "F32", "shape": [' + b"9" * 5000 + b'], "data_offsets": [0, 4]}}',
            b"\0" * 4,
        ),
    ),
]


def _kind(message: str) -> str:
    """The kind of a safetensors error: its text up to the second colon, without the tensor's
    name (which of two overlapping tensors the library names depends on its hash order)."""
    return re.sub(r"`[^`]*`", "`...`", ":".join(message.split(":")[:2]))


@pytest.mark.parametrize("data", [d for _, d in MALFORMED], ids=[n for n, _ in MALFORMED])
def test_malformed_headers_raise_runtime_error_as_safetensors_words_it(data, tmp_path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(safetensors.SafetensorError) as theirs:
        safetensors.numpy.load(data)
    with pytest.raises(RuntimeError) as ours:
        chainrule.load(path)
    assert type(ours.value) is not json.JSONDecodeError
    message = str(ours.value)
    assert message.startswith("Error while deserializing: ")
    if _kind(str(theirs.value)) != "Error while deserializing: invalid JSON in header":
        assert _kind(message) == _kind(str(theirs.value))
    else:
        assert "invalid JSON in header" in message


def test_too_short_or_not_an_object_is_no_weights_file() -> None:
    for data in (b"\x01\x00", _file(b"[1, 2]  ")):
        with pytest.raises(RuntimeError, match="is neither a PyTorch file .* nor a safetensors"):
            chainrule.load(io.BytesIO(data))


def test_stricter_than_safetensors_where_it_matters() -> None:
    """Duplicate names (the library keeps one of them silently) and dtypes chainrule lacks
    are refused, each with its own message."""
    entry = b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}'
    duplicate = _file(b"{" + entry + b", " + entry + b"}", b"\0" * 4)
    assert list(safetensors.numpy.load(duplicate)) == ["a"]
    with pytest.raises(RuntimeError, match="invalid JSON in header: duplicate key 'a'"):
        chainrule.load(io.BytesIO(duplicate))
    fp8 = _file({"a": {"dtype": "F8_E5M2", "shape": [2], "data_offsets": [0, 2]}}, b"\0" * 2)
    with pytest.raises(
        RuntimeError, match="tensor 'a' has dtype F8_E5M2, which chainrule does not"
    ):
        chainrule.load(io.BytesIO(fp8))


def _with_structure(structure: str, versions: str | None = None) -> bytes:
    metadata = {"format": "pt", "chainrule.structure": structure}
    if versions is not None:
        metadata["chainrule.module_versions"] = versions
    return _file({"__metadata__": metadata, **_f32("t", [1], 0, 4)}, b"\0\0\x80\x3f")


@pytest.mark.parametrize(
    "structure, message",
    [
        ('{"tensor": "missing"}', "names a tensor 'missing' the file does not hold"),
        ('{"dict": [[[1], {"value": 1}]]}', "a dict key is not a number, a string or null"),
        ('{"dict": [[1]]}', "holds something else than pairs"),
        ('{"list": 5}', "a list node does not hold a list"),
        ('{"what": []}', "unknown node"),
        ("[1, 2]", "a node is a list, not an object"),
        ('{"value": [1]}', "a value is a container"),
        ('{"list": [', "invalid JSON in the structure metadata"),
        ('{"list": [' * 100_000 + "]}" * 100_000, "invalid JSON in the structure metadata"),
    ],
)
def test_malformed_structure_metadata(structure, message) -> None:
    with pytest.raises(RuntimeError, match=message):
        chainrule.load(io.BytesIO(_with_structure(structure)))


def test_nested_structure_decodes() -> None:
    """The explicit-stack decoder rebuilds nesting as deep as JSON parsing allows."""
    depth = 300
    structure = '{"list": [' * depth + '{"tensor": "t"}' + "]}" * depth
    loaded = chainrule.load(io.BytesIO(_with_structure(structure)))
    for _ in range(depth):
        (loaded,) = loaded
    assert loaded.tolist() == [1.0]


def test_malformed_module_versions() -> None:
    with pytest.raises(RuntimeError, match="module versions must be a dict of dicts"):
        chainrule.load(io.BytesIO(_with_structure('{"ordered_dict": []}', '{"": 5}')))


def test_every_dtype_loads_as_safetensors_torch_loads_it(tmp_path) -> None:
    tensors = {
        "bool": torch.tensor([True, False]),
        "u8": torch.tensor([0, 255], dtype=torch.uint8),
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "i16": torch.tensor([-3, 300], dtype=torch.int16),
        "i32": torch.tensor([-(2**31), 7], dtype=torch.int32),
        "i64": torch.tensor([-(2**40), 5]),
        "f16": torch.tensor([1.5, 65504.0]).half(),
        "bf16": torch_bf16(BF16_PATTERNS).reshape(2, 8),
        "f32": torch.tensor([float("inf"), float("nan"), -0.0]),
        "f64": torch.tensor([1e-300], dtype=torch.float64),
        "c64": torch.tensor([1 + 2j], dtype=torch.complex64),
        "scalar": torch.tensor(3.0),
        "empty": torch.zeros(0, 3),
    }
    path = tmp_path / "all.safetensors"
    safetensors.torch.save_file(tensors, path)
    theirs = safetensors.torch.load_file(path)
    ours = chainrule.load(path)
    assert sorted(ours) == sorted(theirs)
    for name, t in theirs.items():
        assert str(ours[name].dtype).split(".")[1] == str(t.dtype).split(".")[1], name
        assert tuple(ours[name].shape) == tuple(t.shape), name
        if t.dtype == torch.bfloat16:  # numpy() refuses bfloat16 in both: the bits
            np.testing.assert_array_equal(bf16_bits(ours[name]), bf16_bits(t), err_msg=name)
        else:
            np.testing.assert_array_equal(ours[name].numpy(), t.numpy(), err_msg=name)
    # Each tensor has its own writable buffer, as safetensors.torch gives.
    ours["f32"].add_(1)
    assert ours["f64"].tolist() == [1e-300]


def test_bfloat16_round_trips_bit_for_bit(tmp_path) -> None:
    """chainrule.save writes a bfloat16 tensor as BF16 with its bits, views included (each
    entry laid out contiguously, as safetensors stores them), which PyTorch reads as
    torch.bfloat16 and chainrule.load reads back as chainrule.bfloat16 (it read float32 before)."""
    base = chainrule.from_numpy(BF16_PATTERNS.view(np.int16).copy()).view(chainrule.bfloat16)
    base = base.reshape(4, 4)
    tensors = {
        "base": base,
        "block": base[1:, ::2],
        "transposed": base.t(),
        "expanded": base[3, 1:2].expand(3, 2),
        "scalar": base[0, 1],
        "empty": chainrule.zeros(0, 3, dtype=chainrule.bfloat16),
        "param": chainrule.nn.Parameter(base[2]),
    }
    path = tmp_path / "bf16.safetensors"
    chainrule.save(tensors, path)
    raw = path.read_bytes()
    header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
    assert {k: v["dtype"] for k, v in header.items() if k != "__metadata__"} == dict.fromkeys(
        tensors, "BF16"
    )
    theirs = safetensors.torch.load_file(path)
    ours = chainrule.load(path)
    assert isinstance(ours["param"], chainrule.nn.Parameter)
    for name, t in tensors.items():
        assert theirs[name].dtype == torch.bfloat16, name
        assert ours[name].dtype == chainrule.bfloat16, name
        assert tuple(ours[name].shape) == tuple(theirs[name].shape) == tuple(t.shape), name
        np.testing.assert_array_equal(bf16_bits(theirs[name]), bf16_bits(t), err_msg=name)
        np.testing.assert_array_equal(bf16_bits(ours[name]), bf16_bits(t), err_msg=name)


def test_memory_of_a_safetensors_load_is_about_its_tensors(tmp_path) -> None:
    """A 16 MiB file loads at about 16 MiB (the old loader held the file, the library's copy
    and its own copy: about three times)."""
    path = tmp_path / "big.safetensors"
    chainrule.save({f"w{i}": chainrule.randn(256, 1024) for i in range(16)}, path)
    warm = tmp_path / "warm.safetensors"
    chainrule.save({"w": chainrule.ones(2)}, warm)
    peak = measure_peaks([path], warm)[str(path)]
    assert peak < 1.1 * 16 * MiB + 2 * MiB, peak
