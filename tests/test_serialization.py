"""``chainrule.save``/``load``: safetensors files (round trips, interoperability), PyTorch
``.pt``/``.pth`` archives written by real ``torch.save`` read without unpickling, and malicious
pickles that must be refused without running their payload."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch

import chainrule

from .conftest import torch


def _model(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.Flatten(),
                             lib.nn.Linear(8, 3))


def _same(a, b) -> None:
    assert type(a) is type(b) or (isinstance(a, dict) and isinstance(b, dict))
    if isinstance(a, chainrule.Tensor):
        assert str(a.dtype) == str(b.dtype) and a.shape == b.shape
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b


def test_state_dict_round_trip(tmp_path) -> None:
    model = _model(chainrule)
    model(chainrule.randn(2, 1, 4, 4))  # running statistics move
    state = model.state_dict()
    path = tmp_path / "model.safetensors"
    chainrule.save(state, path)
    loaded = chainrule.load(path)
    assert isinstance(loaded, OrderedDict)
    _same(state, loaded)
    assert loaded._metadata == state._metadata
    restored = _model(chainrule)
    assert repr(restored.load_state_dict(loaded)) == "<All keys matched successfully>"
    x = chainrule.randn(2, 1, 4, 4)
    model.eval()
    restored.eval()
    np.testing.assert_array_equal(model(x).detach().numpy(), restored(x).detach().numpy())


def test_file_is_plain_safetensors_readable_by_other_tools(tmp_path) -> None:
    state = _model(chainrule).state_dict()
    path = tmp_path / "model.safetensors"
    chainrule.save(state, str(path))
    with open(path, "rb") as f:
        assert b"pickle" not in f.read()
    arrays = safetensors.numpy.load_file(path)
    assert sorted(arrays) == sorted(state)
    for k, v in state.items():
        np.testing.assert_array_equal(arrays[k], v.numpy())
    torch_state = safetensors.torch.load_file(path)
    reference = _model(torch)
    reference.load_state_dict(torch_state)
    safetensors.torch.save_file(reference.state_dict(), tmp_path / "from_torch.safetensors")
    loaded = chainrule.load(tmp_path / "from_torch.safetensors")
    assert sorted(loaded) == sorted(state)
    for k in state:
        np.testing.assert_array_equal(loaded[k].numpy(), state[k].numpy())


def test_nested_checkpoint_round_trip_through_a_buffer() -> None:
    param = chainrule.nn.Parameter(chainrule.ones(2))
    checkpoint = {
        "epoch": 7,
        "loss": 0.25,
        "name": "run-1",
        "best": float("inf"),
        "flags": [True, None, (1, 2.5, "x")],
        "tensors": [chainrule.arange(3), chainrule.zeros((), dtype=chainrule.float64)],
        "state": {0: {"step": chainrule.tensor(3.0), "buf": chainrule.ones(2, 2)}},
        "param": param,
        "mask": chainrule.tensor([True, False]),
        "half": chainrule.ones(2, dtype=chainrule.float16),
        "empty": chainrule.zeros(0, 3),
    }
    buffer = io.BytesIO()
    chainrule.save(checkpoint, buffer)
    buffer.seek(0)
    loaded = chainrule.load(buffer)
    _same({k: v for k, v in checkpoint.items() if k != "param"},
          {k: v for k, v in loaded.items() if k != "param"})
    assert isinstance(loaded["param"], chainrule.nn.Parameter) and loaded["param"].requires_grad
    assert list(loaded["state"]) == [0]


def test_save_refuses_objects_that_are_not_data(tmp_path) -> None:
    with pytest.raises(TypeError, match="chainrule.save cannot store objects of type object"):
        chainrule.save({"x": object()}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="cannot store objects of type Linear"):
        chainrule.save(chainrule.nn.Linear(2, 2), tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()


def test_loads_files_written_by_torch_save(tmp_path) -> None:
    reference = _model(torch)
    reference(torch.randn(3, 1, 4, 4))
    path = tmp_path / "model.pt"
    torch.save(reference.state_dict(), path)
    loaded = chainrule.load(path)
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(reference.state_dict())
    for k, v in reference.state_dict().items():
        assert str(loaded[k].dtype) == str(v.dtype).replace("torch", "chainrule")
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())
    assert loaded._metadata == reference.state_dict()._metadata
    model = _model(chainrule)
    assert repr(model.load_state_dict(loaded)) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    model.eval()
    reference.eval()
    np.testing.assert_allclose(model(chainrule.from_numpy(x)).detach().numpy(),
                               reference(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_torch_archive_views_offsets_dtypes_and_containers(tmp_path) -> None:
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    obj = {
        "view": base[1:, 2:5],               # storage offset, non-contiguous strides
        "transposed": base.t(),
        "shared": base,                      # the same storage as the views
        "param": torch.nn.Parameter(torch.ones(2, 3)),
        "frozen": torch.nn.Parameter(torch.zeros(1), requires_grad=False),
        "ints": torch.tensor([1, -2, 3], dtype=torch.int32),
        "bytes": torch.tensor([1, 255], dtype=torch.uint8),
        "bools": torch.tensor([True, False]),
        "half": torch.tensor([1.5, -2.0], dtype=torch.float16),
        "bf16": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 2),
        "numbers": [1, 2.5, "three", None, True],
        "tuple": (torch.ones(1), 4),
        "set": {1, 2},
        "nested": OrderedDict(a={"b": torch.full((2,), 7.0)}),
    }
    path = tmp_path / "mixed.pth"
    torch.save(obj, path)
    loaded = chainrule.load(path)
    for key in ("view", "transposed", "shared", "ints", "bytes", "bools", "half", "scalar",
                "empty"):
        np.testing.assert_array_equal(loaded[key].numpy(), obj[key].numpy(), err_msg=key)
        assert str(loaded[key].dtype) == str(obj[key].dtype).replace("torch", "chainrule")
    assert loaded["bf16"].dtype == chainrule.bfloat16
    assert loaded["bf16"].view(chainrule.int16).tolist() == obj["bf16"].view(torch.int16).tolist()
    assert isinstance(loaded["param"], chainrule.nn.Parameter) and loaded["param"].requires_grad
    assert not loaded["frozen"].requires_grad
    assert loaded["numbers"] == [1, 2.5, "three", None, True]
    assert loaded["set"] == {1, 2} and loaded["tuple"][1] == 4
    assert loaded["nested"]["a"]["b"].tolist() == [7.0, 7.0]


def _malicious_archive(path, payload: bytes) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("evil/data.pkl", payload)
        archive.writestr("evil/byteorder", "little")
        archive.writestr("evil/version", "3\n")


class _RunsCommand:
    """Pickles to ``os.system(command)``: what a malicious checkpoint does."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def test_malicious_pickle_in_a_pt_archive_does_not_run(tmp_path) -> None:
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"weight": _RunsCommand(f"touch {marker}")}, protocol=2)
    path = tmp_path / "evil.pt"
    _malicious_archive(path, payload)
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*GLOBAL "
                       r"(posix|os|nt)\.system whose module (posix|os|nt) is blocked"):
        chainrule.load(path)
    assert not marker.exists()


def test_other_refused_globals_and_raw_pickles(tmp_path) -> None:
    marker = tmp_path / "pwned"
    for payload in (
        pickle.dumps(_RunsCommand(f"touch {marker}"), protocol=4),
        b"cbuiltins\neval\n(Vprint('x')\ntR.",
        pickle.dumps({"module": chainrule.nn.Linear}, protocol=2),
    ):
        _malicious_archive(tmp_path / "evil.pt", payload)
        with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*(GLOBAL "
                           "(posix|os|nt).system whose module|Unsupported global: GLOBAL)"):
            chainrule.load(tmp_path / "evil.pt")
    # A bare pickle is read as a legacy stream (as torch.load reads it): its first global is
    # refused with PyTorch's message before anything is resolved.
    raw = tmp_path / "raw.pkl"
    raw.write_bytes(pickle.dumps(_RunsCommand(f"touch {marker}"), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL (posix|os|nt).system whose module"):
        chainrule.load(raw)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL (posix|os|nt).system whose module"):
        torch.load(raw, weights_only=True)
    assert not marker.exists()


def test_corrupt_tensor_geometry_is_refused(tmp_path) -> None:
    path = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(4)}, path)
    with zipfile.ZipFile(path) as archive:
        entries = {n: archive.read(n) for n in archive.namelist()}
    pkl = next(n for n in entries if n.endswith("data.pkl"))
    # Claim 40 elements in a 4-element storage: reading them would go past its end.
    entries[pkl] = entries[pkl].replace(b"K\x04\x85", b"K(\x85", 1)
    bad = tmp_path / "bad.pt"
    with zipfile.ZipFile(bad, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable"):
        chainrule.load(bad)


def test_not_a_weights_file(tmp_path) -> None:
    path = tmp_path / "text.txt"
    path.write_text("hello world, not weights")
    with pytest.raises(RuntimeError, match="is neither a PyTorch file .* nor a safetensors file"):
        chainrule.load(path)
