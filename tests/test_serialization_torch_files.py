"""``chainrule.load`` of files written by the real ``torch.save``, zip archives and legacy
streams: the same values, dtypes, shapes, strides and storage offsets as ``torch.load``, with
storage sharing kept (an in-place write shows through every tensor of the storage) and
expanded tensors kept as views; memory about the tensors' bytes; and the sources it refuses
(devices, FIFOs, unseekable streams)."""

from __future__ import annotations

import collections
import io
import os
import pickle
import subprocess
import sys
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .hostile_weights import archive, pickled, storage_id, tensor, text, tup
from .test_serialization_hostile import measure_peaks

MiB = 1 << 20


# bfloat16 bit patterns: +-0, 1.5, -2, 3.140625, +-inf, quiet and signalling NaNs of either
# sign with payloads, the smallest and largest subnormals of either sign, the smallest normal
# and the largest finite value.
BF16_PATTERNS = np.array([0x0000, 0x8000, 0x3FC0, 0xC000, 0x4049, 0x7F80, 0xFF80, 0x7FC0,
                          0xFFC1, 0x7F81, 0xFF81, 0x0001, 0x807F, 0x007F, 0x0080, 0x7F7F],
                         np.uint16)


def torch_bf16(bits: np.ndarray):
    """A PyTorch bfloat16 tensor with exactly these bit patterns."""
    return torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16)


def bf16_bits(t) -> np.ndarray:
    """A bfloat16 tensor's elements as uint16 bit patterns, with its shape (a view of the same
    element size, which both libraries allow whatever the strides)."""
    if isinstance(t, chainrule.Tensor):
        assert t.dtype == chainrule.bfloat16
        return t.detach().view(chainrule.int16).numpy().view(np.uint16)
    assert t.dtype == torch.bfloat16
    return t.detach().resolve_neg().view(torch.int16).numpy().view(np.uint16)


def _checkpoint() -> dict:
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    ints = torch.arange(12, dtype=torch.int32)
    bf16 = torch_bf16(BF16_PATTERNS)
    state = OrderedDict(weight=torch.randn(3, 2), bias=torch.zeros(3))
    state._metadata = OrderedDict({"": {"version": 1}})
    return {
        "base": base,
        "view": base[1:, 2:5],                      # storage offset, non-contiguous
        "transposed": base.t(),
        "column": base[:, 3],
        "ints": ints,
        "ints_view": ints[::3],
        "expanded": torch.tensor([7.0]).expand(5, 4),  # stride 0, one element of storage
        "param": torch.nn.Parameter(torch.ones(2, 3)),
        "frozen": torch.nn.Parameter(torch.zeros(1), requires_grad=False),
        "requires_grad": torch.ones(2, requires_grad=True),
        "bytes": torch.tensor([1, 255], dtype=torch.uint8),
        "int8": torch.tensor([-128, 127], dtype=torch.int8),
        "int16": torch.tensor([-3, 300], dtype=torch.int16),
        "int64": torch.tensor([-(2 ** 40), 5]),
        "bools": torch.tensor([True, False, True]),
        "half": torch.tensor([1.5, -2.0, 65504.0], dtype=torch.float16),
        "bf16": bf16,
        "bf16_view": bf16[3::2],
        "complex": torch.tensor([1 + 2j, -3.5j], dtype=torch.complex64),
        "cdouble": torch.tensor([1 - 1j], dtype=torch.complex128),
        "conj": torch.tensor([1 + 2j, 3 - 1j]).conj(),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 2),
        "inf_nan": torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0]),
        "state": state,
        "numbers": [1, -5, 70000, 2 ** 70, 2.5, "three", None, True, b"by", bytearray(b"q"),
                    complex(1, 2)],
        "tuple": (torch.ones(1), 4),
        "set": {1, 2},
        "counter": collections.Counter(a=2),
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "device": torch.device("cpu"),
    }


def _walk(ours, theirs, where: str, pairs: list) -> None:
    """Compare two loaded objects; collect the (ours, theirs) tensor pairs."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, chainrule.Tensor), where
        assert type(ours).__name__ == type(theirs).__name__, where
        assert str(ours.dtype) == str(theirs.dtype).replace("torch", "chainrule"), where
        assert tuple(ours.shape) == tuple(theirs.shape), where
        if theirs.dtype == torch.bfloat16:  # numpy() refuses bfloat16 in both: the bits
            np.testing.assert_array_equal(bf16_bits(ours), bf16_bits(theirs), err_msg=where)
        else:
            np.testing.assert_array_equal(ours.detach().numpy(),
                                          theirs.detach().resolve_conj().numpy(), err_msg=where)
        assert ours.stride() == theirs.stride(), where
        if theirs.numel():
            assert ours.storage_offset() == theirs.storage_offset(), where
        assert ours.requires_grad == theirs.requires_grad, where
        pairs.append((where, ours, theirs))
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs), where
        assert list(ours) == list(theirs), where
        assert getattr(ours, "_metadata", None) == getattr(theirs, "_metadata", None), where
        for key in theirs:
            _walk(ours[key], theirs[key], f"{where}[{key!r}]", pairs)
    elif isinstance(theirs, list | tuple):
        assert type(ours).__name__ == type(theirs).__name__, where
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _walk(a, b, f"{where}[{i}]", pairs)
    elif isinstance(theirs, torch.dtype):
        assert ours is getattr(chainrule, str(theirs).split(".")[1]), where
    elif isinstance(theirs, torch.device):
        assert str(ours) == str(theirs), where
    else:
        assert type(ours) is type(theirs) and ours == theirs, where


def _compare(ours, theirs) -> list:
    pairs: list = []
    _walk(ours, theirs, "", pairs)
    # Two tensors share memory after loading exactly when they do in PyTorch.
    for i, (where_a, a, ta) in enumerate(pairs):
        for where_b, b, tb in pairs[i + 1:]:
            same = ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()
            if ta.numel() and tb.numel():
                assert (a.untyped_storage() is b.untyped_storage()) == same, (where_a, where_b)
    return pairs


def _torch_load(path, weights_only: bool = True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(path, weights_only=weights_only)


@pytest.mark.parametrize("layout", ["zip", "legacy", "zip-protocol-4", "zip-protocol-5"])
def test_torch_save_files_load_as_torch_loads_them(layout, tmp_path) -> None:
    path = tmp_path / "checkpoint.pt"
    kwargs = {"legacy": {"_use_new_zipfile_serialization": False},
              "zip-protocol-4": {"pickle_protocol": 4},
              "zip-protocol-5": {"pickle_protocol": 5}}.get(layout, {})
    torch.save(_checkpoint(), path, **kwargs)
    # PyTorch's weights-only unpickler does not read protocols 4/5 (FRAME); its full unpickler
    # is the reference for those files, which this test wrote itself.
    theirs = _torch_load(path, weights_only="protocol" not in layout)
    ours = chainrule.load(path)
    pairs = _compare(ours, theirs)
    assert len(pairs) > 25
    assert ours["expanded"].untyped_storage().nbytes() == 4


@pytest.mark.parametrize("layout", ["zip", "legacy"])
def test_bfloat16_storages_load_as_bfloat16_views_bit_for_bit(layout, tmp_path) -> None:
    """A BFloat16Storage loads as chainrule.bfloat16 with its exact bits (NaN payloads, -0.0,
    infinities, subnormals), every tensor on it a view of the same memory with PyTorch's
    strides and offsets (it was widened to float32 before)."""
    base = torch_bf16(BF16_PATTERNS).reshape(4, 4)
    obj = {"base": base, "block": base[1:, ::2], "transposed": base.t(), "row": base[2],
           "expanded": base[3, 1:2].expand(3, 2), "own": torch_bf16(BF16_PATTERNS[::-1])}
    path = tmp_path / "bf16.pt"
    torch.save(obj, path, **({"_use_new_zipfile_serialization": False}
                             if layout == "legacy" else {}))
    theirs = _torch_load(path)
    ours = chainrule.load(path)
    for key, t in theirs.items():
        assert ours[key].dtype == chainrule.bfloat16, key
        assert ours[key].stride() == t.stride(), key
        assert ours[key].storage_offset() == t.storage_offset(), key
        np.testing.assert_array_equal(bf16_bits(ours[key]), bf16_bits(t), err_msg=key)
        assert np.array_equal(ours[key].float().numpy(), t.float().numpy(), equal_nan=True), key
    storage = ours["base"].untyped_storage()
    assert storage.nbytes() == 32
    for key in ("block", "transposed", "row", "expanded"):
        assert ours[key].untyped_storage() is storage, key
    assert ours["own"].untyped_storage() is not storage
    for loaded in (ours, theirs):  # a write through one tensor shows through the others
        loaded["row"][2] = 2.5
    for key in ("base", "block", "transposed"):
        np.testing.assert_array_equal(bf16_bits(ours[key]), bf16_bits(theirs[key]), err_msg=key)
    assert bf16_bits(ours["block"])[1, 1] == 0x4020


def test_rebuild_tensor_v3_reads_bfloat16_from_an_untyped_storage(tmp_path) -> None:
    """``_rebuild_tensor_v3`` (an UntypedStorage of bytes and a dtype argument, as PyTorch
    writes types without a storage class) with ``torch.bfloat16``: the storage's bytes viewed
    as bfloat16, bit for bit."""
    written = tmp_path / "uint16.pt"
    torch.save(torch.from_numpy(BF16_PATTERNS.copy())[1:].view(3, 5).t(), written)
    path = tmp_path / "v3.pt"
    with zipfile.ZipFile(written) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                assert b"_rebuild_tensor_v3" in data and b"torch\nuint16\n" in data
                data = data.replace(b"torch\nuint16\n", b"torch\nbfloat16\n")
            dst.writestr(info, data)
    theirs = _torch_load(path)
    ours = chainrule.load(path)
    assert ours.dtype == chainrule.bfloat16
    assert ours.stride() == theirs.stride() == (1, 5)
    assert ours.storage_offset() == theirs.storage_offset() == 1
    np.testing.assert_array_equal(bf16_bits(ours), bf16_bits(theirs))
    np.testing.assert_array_equal(bf16_bits(ours), BF16_PATTERNS[1:].reshape(3, 5).T)


def test_plain_values_beyond_pytorchs_weights_only_list(tmp_path) -> None:
    """frozenset and b'' (pickled as ``bytes()``) are data too: chainrule loads them, where
    PyTorch's weights-only unpickler refuses their globals (its full unpickler, on this file
    the test wrote, is the reference)."""
    path = tmp_path / "extras.pt"
    torch.save({"frozen": frozenset({"a", 1}), "empty": b"", "nested": (frozenset(),)}, path)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL (frozenset|bytes) was not an allowed"):
        _torch_load(path)
    assert chainrule.load(path) == _torch_load(path, weights_only=False)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_plain_data_pickles_of_every_protocol_match_pickle_loads(protocol, tmp_path) -> None:
    """Data as Python's own pickle writes it, protocols 2 to 5 (FRAME, MEMOIZE, STACK_GLOBAL,
    BINBYTES, EMPTY_SET/ADDITEMS, FROZENSET, BYTEARRAY8 ...), rebuilt as pickle.loads
    rebuilds it, shared references and a list containing itself included."""
    shared = ["shared"]
    loop: list = [1]
    loop.append(loop)
    value = {
        "ints": [0, 255, 256, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 100, -(2 ** 100)],
        "floats": [0.0, -0.0, 1.5, float("inf"), 1e-310], "text": ["", "ü€😀", "x" * 300],
        "bytes": [b"", b"\x00\xff", b"y" * 300], "bytearray": bytearray(b"ab"),
        "set": {1, "a", (2, 3)}, "frozenset": frozenset({1, frozenset({2})}), "none": None,
        "bools": (True, False), "tuples": ((), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)),
        "complex": complex(1, -2), "ordered": OrderedDict(b=1, a=2),
        "counter": collections.Counter("abca"), "a": shared, "b": shared, "loop": loop,
        "nested": {"k": [{"j": (1, [2, {3: 4}])}]},
    }
    path = tmp_path / "plain.pt"
    path.write_bytes(archive(pickle.dumps(value, protocol=protocol)))
    ours = chainrule.load(path)
    assert ours["a"] is ours["b"] and ours["loop"][1] is ours["loop"]
    del ours["loop"], value["loop"]
    assert ours == value
    assert [type(v) for v in ours.values()] == [type(v) for v in value.values()]


def test_in_place_writes_show_through_shared_storages(tmp_path) -> None:
    path = tmp_path / "shared.pt"
    base = torch.arange(6.0)
    torch.save({"base": base, "tail": base[2:], "square": base[:4].view(2, 2)}, path)
    ours = chainrule.load(path)
    theirs = _torch_load(path)
    versions = []
    for loaded in (ours, theirs):
        before = [t._version for t in loaded.values()]
        loaded["tail"].mul_(10)
        loaded["square"][0, 0] = -1
        versions.append((before, [t._version for t in loaded.values()]))
    np.testing.assert_array_equal(ours["base"].numpy(), theirs["base"].numpy())
    np.testing.assert_array_equal(ours["tail"].numpy(), theirs["tail"].numpy())
    assert ours["base"].tolist() == [-1.0, 1.0, 20.0, 30.0, 40.0, 50.0]
    # Each loaded tensor has its own version counter, starting at 1 (PyTorch's set_).
    assert versions[0] == versions[1] == ([1, 1, 1], [1, 2, 2])


def test_big_endian_archives_are_swapped(tmp_path) -> None:
    """An archive from a big-endian machine (byteorder 'big', every element byte-swapped)
    loads with the same values in both."""
    tensors = {"f32": torch.tensor([1.5, -2.0]), "f64": torch.tensor([3.25], dtype=torch.float64),
               "i16": torch.tensor([-3, 300], dtype=torch.int16),
               "c64": torch.tensor([1 + 2j], dtype=torch.complex64),
               "bf16": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
               "bool": torch.tensor([True, False])}
    little, big = tmp_path / "little.pt", tmp_path / "big.pt"
    torch.save(tensors, little)
    by_key = list(tensors.values())  # torch.save numbers storages in the order it meets them
    with zipfile.ZipFile(little) as src, zipfile.ZipFile(big, "w") as dst:
        for info in src.infolist():
            name, data = info.filename, src.read(info)
            if name.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in name:
                t = by_key[int(name.rsplit("/", 1)[1])]
                unit = t.element_size() // (2 if t.is_complex() else 1)
                if unit > 1:
                    data = np.frombuffer(data, f"u{unit}").byteswap().tobytes()
            dst.writestr(name, data)
    theirs = _torch_load(big)
    assert all(torch.equal(theirs[k], t) for k, t in tensors.items())
    _compare(chainrule.load(big), theirs)


def test_legacy_storage_views(tmp_path) -> None:
    """Legacy storage ids may name a view of a storage (PyTorch < 0.4 wrote them)."""
    view = tup(text("v"), b"J\x01\x00\x00\x00", b"J\x02\x00\x00\x00")
    pid = tup(text("storage"), b"ctorch\nFloatStorage\n", text("0"), text("cpu"),
              b"J\x04\x00\x00\x00", view) + b"Q"
    main = pickled(tensor(pid, 0, (2,), (1,)))
    from .hostile_weights import legacy

    data = np.arange(4, dtype="<f4").tobytes()
    path = tmp_path / "views.pt"
    path.write_bytes(legacy(main, ["0"], [(4, data)]))
    theirs = _torch_load(path)
    ours = chainrule.load(path)
    assert ours.tolist() == theirs.tolist() == [1.0, 2.0]
    assert ours.storage_offset() == theirs.storage_offset() + 1  # chainrule counts from the root


def test_a_storage_is_typed_by_the_first_id_naming_it(tmp_path) -> None:
    """Two ids name storage ``0`` with different types: both tensors see the first type, as in
    PyTorch (which caches storages by key)."""
    path = tmp_path / "retyped.pt"
    first = tensor(storage_id("FloatStorage", numel=4))
    second = tensor(storage_id("IntStorage", numel=4), 2, (2,), (1,))
    path.write_bytes(archive(pickled(first + second + b"\x86"),
                             {"0": np.arange(4, dtype="<f4").tobytes()}))
    ours = chainrule.load(path)
    theirs = _torch_load(path)
    _compare(ours, theirs)
    assert ours[1].dtype == chainrule.float32 and ours[1].tolist() == [2.0, 3.0]


def test_unsupported_dtypes_are_refused_by_name(tmp_path) -> None:
    for dtype in (torch.float8_e5m2, torch.float8_e4m3fn):  # (uint16 loads: see below)
        path = tmp_path / "u.pt"
        torch.save({"w": torch.zeros(2, dtype=dtype)}, path)
        with pytest.raises(pickle.UnpicklingError, match=f"cannot load tensors of type {dtype}"):
            chainrule.load(path)


def test_unsigned_types_load_from_untyped_storages(tmp_path) -> None:
    # PyTorch writes uint16/32/64 with _rebuild_tensor_v3 on an UntypedStorage
    path = tmp_path / "u.pt"
    values = {
        "u16": torch.tensor([0, 1, 65535], dtype=torch.uint16),
        "u32": torch.tensor([0, 2**32 - 1], dtype=torch.uint32),
        "u64": torch.tensor([0, 2**64 - 1], dtype=torch.uint64),
    }
    torch.save(values, path)
    loaded = chainrule.load(path)
    for name, t in values.items():
        assert str(loaded[name].dtype) == str(t.dtype).replace("torch", "chainrule")
        assert loaded[name]._data.tolist() == t.tolist()


def test_a_file_object_is_read_from_its_position() -> None:
    for kwargs in ({}, {"_use_new_zipfile_serialization": False}):
        buffer = io.BytesIO()
        buffer.write(b"junk")
        torch.save({"w": torch.arange(3.0)}, buffer, **kwargs)
        buffer.seek(4)
        assert chainrule.load(buffer)["w"].tolist() == [0.0, 1.0, 2.0]


def test_large_legitimate_pickles_fit_the_object_budget(tmp_path) -> None:
    """The budget on a pickle's Python objects (64 bytes per pickle byte) leaves room for real
    checkpoints, which build 10 to 30: thousands of tensors, long histories, many small dicts."""
    checkpoint = {
        "model": {f"layer{i}.{k}": torch.randn(4, 4) for i in range(2500)
                  for k in ("weight", "bias")},
        "losses": [float(i) / 7 for i in range(100_000)],
        "steps": list(range(100_000)),
        "log": [{"step": i, "tag": str(i), "pair": [i, -i]} for i in range(20_000)],
    }
    path = tmp_path / "big_pickle.pt"
    torch.save(checkpoint, path)
    ours = chainrule.load(path)
    theirs = _torch_load(path)
    assert list(ours["model"]) == list(theirs["model"])
    np.testing.assert_array_equal(ours["model"]["layer2499.bias"].numpy(),
                                  theirs["model"]["layer2499.bias"].numpy())
    assert ours["losses"] == theirs["losses"] and ours["steps"] == theirs["steps"]
    assert ours["log"] == theirs["log"]


def test_memory_of_a_real_load_is_about_its_tensors(tmp_path) -> None:
    """A 16 MiB checkpoint loads at about 16 MiB (the old loader read the whole file, then
    copied every storage, then copied every tensor: about three times)."""
    zip_path, legacy_path = tmp_path / "big.pt", tmp_path / "big_legacy.pt"
    state = {f"layer{i}.weight": torch.randn(256, 1024) for i in range(16)}
    state["tied"] = state["layer0.weight"].t()
    torch.save(state, zip_path)
    torch.save(state, legacy_path, _use_new_zipfile_serialization=False)
    warm = tmp_path / "warm.pt"
    torch.save({"w": torch.ones(2)}, warm)
    peaks = measure_peaks([zip_path, legacy_path], warm)
    tensor_bytes = 16 * 256 * 1024 * 4
    for path in (zip_path, legacy_path):
        assert peaks[str(path)] < 1.1 * tensor_bytes + 2 * MiB, (path.name, peaks[str(path)])


# ----------------------------------------------------------------------------------------------
# sources


def _run_isolated(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter, limited in memory and time: a regression that reads
    a device without end fails there instead of exhausting the machine or hanging the suite."""
    prelude = ("import resource\n"
               "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n")
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=timeout, env=os.environ.copy())


def test_a_symlink_to_dev_zero_is_refused_before_reading(tmp_path) -> None:
    link = tmp_path / "zero.pt"
    link.symlink_to("/dev/zero")
    done = _run_isolated(
        "import chainrule\n"
        f"try:\n    chainrule.load({str(link)!r})\n"
        "except RuntimeError as e:\n    print('refused:', e)\n")
    assert done.returncode == 0, done.stderr[-1000:]
    assert "is a character device, not a regular file" in done.stdout


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path) -> None:
    fifo = tmp_path / "weights.pt"
    os.mkfifo(fifo)
    done = _run_isolated(
        "import chainrule, os\n"
        "before = len(os.listdir('/proc/self/fd'))\n"
        "for _ in range(20):\n"
        f"    try:\n        chainrule.load({str(fifo)!r})\n"
        "    except RuntimeError as e:\n        message = str(e)\n"
        "print('refused:', message)\n"
        "print('descriptors leaked:', len(os.listdir('/proc/self/fd')) - before)\n",
        timeout=30)
    assert done.returncode == 0, done.stderr[-1000:]
    assert "is a FIFO, not a regular file" in done.stdout
    assert "descriptors leaked: 0" in done.stdout


def test_device_and_pipe_file_objects_are_refused() -> None:
    done = _run_isolated(
        "import chainrule\n"
        "with open('/dev/zero', 'rb') as zero:\n"
        "    try:\n        chainrule.load(zero)\n"
        "    except RuntimeError as e:\n        print('refused:', e)\n")
    assert done.returncode == 0, done.stderr[-1000:]
    assert "is a character device, not a regular file" in done.stdout
    read, write = os.pipe()
    os.write(write, b"PK\x03\x04")
    os.close(write)
    with os.fdopen(read, "rb") as pipe, pytest.raises(RuntimeError, match="is a FIFO"):
        chainrule.load(pipe)


def test_directories_and_unseekable_streams_raise_as_in_pytorch(tmp_path) -> None:
    with pytest.raises(IsADirectoryError):
        torch.load(tmp_path, weights_only=True)
    with pytest.raises(IsADirectoryError):
        chainrule.load(tmp_path)

    class Unseekable(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            return 0

    with pytest.raises(io.UnsupportedOperation) as theirs:
        torch.load(Unseekable(), weights_only=True)
    with pytest.raises(io.UnsupportedOperation) as ours:
        chainrule.load(Unseekable())
    assert str(ours.value) == str(theirs.value)


def test_valid_archive_built_by_hand_matches_torch(tmp_path) -> None:
    """The corpus's own archive writer makes files PyTorch reads as chainrule does (so the
    hostile files differ from valid ones only where they mean to)."""
    path = tmp_path / "hand.pt"
    path.write_bytes(archive(pickled(tensor(storage_id(), 1, (2,), (2,))),
                             {"0": np.arange(4, dtype="<f4").tobytes()}))
    assert chainrule.load(path).tolist() == _torch_load(path).tolist() == [1.0, 3.0]
