"""What PyTorch programs ask at their start (issue 16, devices): ``torch.cuda`` without CUDA,
``torch.backends`` flags, thread counts, determinism flags, the default device, ``finfo`` and
``iinfo``, and the constants ``pi``, ``e``, ``inf``, ``nan``, ``newaxis``. Each against
PyTorch's CPU build."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from threadpoolctl import threadpool_info

import chainrule

from .conftest import torch

LIBS = {"chainrule": chainrule, "torch": torch}


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).replace("torch.", "chainrule.")
    return "value", value


CUDA_CALLS: dict[str, Callable[[ModuleType], Any]] = {
    "is_available": lambda lib: lib.cuda.is_available(),
    "device_count": lambda lib: lib.cuda.device_count(),
    "is_initialized": lambda lib: lib.cuda.is_initialized(),
    "is_bf16_supported": lambda lib: lib.cuda.is_bf16_supported(),
    "manual_seed": lambda lib: lib.cuda.manual_seed(1),
    "manual_seed_all": lambda lib: lib.cuda.manual_seed_all(1),
    "seed": lambda lib: lib.cuda.seed(),
    "seed_all": lambda lib: lib.cuda.seed_all(),
    "empty_cache": lambda lib: lib.cuda.empty_cache(),
    "memory_allocated": lambda lib: lib.cuda.memory_allocated(),
    "max_memory_allocated": lambda lib: lib.cuda.max_memory_allocated(),
    "memory_reserved": lambda lib: lib.cuda.memory_reserved(),
    "max_memory_reserved": lambda lib: lib.cuda.max_memory_reserved(),
    "synchronize": lambda lib: lib.cuda.synchronize(),
    "current_device": lambda lib: lib.cuda.current_device(),
    "get_device_name": lambda lib: lib.cuda.get_device_name(),
    "get_device_capability": lambda lib: lib.cuda.get_device_capability(),
    "get_device_properties": lambda lib: lib.cuda.get_device_properties(0),
    "init": lambda lib: lib.cuda.init(),
    "ipc_collect": lambda lib: lib.cuda.ipc_collect(),
    "mem_get_info": lambda lib: lib.cuda.mem_get_info(),
    "get_rng_state": lambda lib: lib.cuda.get_rng_state(),
    "set_rng_state": lambda lib: lib.cuda.set_rng_state(lib.ByteTensor(2)),
    "memory_stats": lambda lib: lib.cuda.memory_stats("cpu"),
    "memory_stats_as_nested_dict": lambda lib: lib.cuda.memory_stats_as_nested_dict(),
    "memory_summary": lambda lib: lib.cuda.memory_summary(abbreviated=True),
    "memory_cached": lambda lib: _warned(lib.cuda.memory_cached),
    "max_memory_cached": lambda lib: _warned(lib.cuda.max_memory_cached),
    "reset_peak_memory_stats()": lambda lib: lib.cuda.reset_peak_memory_stats(),
    "reset_peak_memory_stats(0)": lambda lib: lib.cuda.reset_peak_memory_stats(0),
    "reset_peak_memory_stats(cpu)": lambda lib: lib.cuda.reset_peak_memory_stats("cpu"),
    "reset_accumulated_memory_stats": lambda lib: lib.cuda.reset_accumulated_memory_stats(),
    "reset_max_memory_allocated": lambda lib: _warned(lib.cuda.reset_max_memory_allocated),
    "reset_max_memory_cached": lambda lib: _warned(lib.cuda.reset_max_memory_cached),
    "memory_snapshot": lambda lib: lib.cuda.memory_snapshot(),
    "set_device(-1)": lambda lib: lib.cuda.set_device(-1),
    "set_device(0)": lambda lib: lib.cuda.set_device(0),
    "set_device('cuda:1')": lambda lib: lib.cuda.set_device("cuda:1"),
    "set_device('cuda')": lambda lib: lib.cuda.set_device("cuda"),
    "set_device(device('cpu', 0))": lambda lib: lib.cuda.set_device(lib.device("cpu", 0)),
    "set_device(None)": lambda lib: lib.cuda.set_device(None),
    "with device(0)": lambda lib: _enter(lib.cuda.device(0)),
    "with device(-1)": lambda lib: _enter(lib.cuda.device(-1)),
    "ones(device='cuda')": lambda lib: lib.ones(2, device="cuda"),
    "tensor.cuda()": lambda lib: lib.ones(2).cuda(),
    "tensor.to('cuda:0')": lambda lib: lib.ones(2).to("cuda:0"),
}


def _warned(call: Callable[[], Any]) -> Any:
    """What ``call`` gives (or raises: re-raised), and the warnings it gave (category, text,
    the file they point at)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except Exception as error:  # noqa: BLE001 - raised again, with the warnings in it
            warned = [(w.category, str(w.message)) for w in caught]
            raise type(error)(*error.args, warned) from None
    return value, [(w.category, str(w.message), w.filename == __file__) for w in caught]


def _enter(manager: Any) -> str:
    with manager:
        return "entered"


@pytest.mark.parametrize("call", list(CUDA_CALLS))
def test_cuda_without_cuda(call: str) -> None:
    """What PyTorch's CPU build answers, does quietly, or refuses (its errors)."""
    ours = _outcome(lambda: CUDA_CALLS[call](chainrule))
    assert ours == _outcome(lambda: CUDA_CALLS[call](torch))


@pytest.mark.parametrize("flag", [
    "cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic", "cudnn.allow_tf32",
    "cudnn.benchmark_limit", "cudnn.is_available()", "cudnn.version()",
    "cudnn.is_acceptable(ones)", "cuda.is_built()", "cuda.matmul.allow_tf32",
    "cuda.matmul.allow_fp16_reduced_precision_reduction",
    "cuda.matmul.allow_bf16_reduced_precision_reduction", "mps.is_available()",
    "mps.is_built()", "mkldnn.enabled",
])
def test_backend_flags(flag: str) -> None:
    values = [eval(f"lib.backends.{flag}", {"lib": lib, "ones": lib.ones(1)})
              for lib in LIBS.values()]
    assert values[0] == values[1]


def test_backend_flags_are_settable_and_restored() -> None:
    for lib in LIBS.values():
        cudnn = lib.backends.cudnn
        with cudnn.flags(enabled=False, benchmark=True):
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, True, False)
        assert (cudnn.enabled, cudnn.benchmark) == (True, False)
        cudnn.benchmark = True
        try:
            assert cudnn.benchmark is True
        finally:
            cudnn.benchmark = False
        with lib.backends.mkldnn.flags(enabled=False):
            assert lib.backends.mkldnn.enabled is False
        assert lib.backends.mkldnn.enabled is True


def test_libraries_reported_are_numpys() -> None:
    """mkl and openmp say what NumPy's BLAS uses (PyTorch says what it was built with);
    oneDNN is not used."""
    pools = threadpool_info()
    assert chainrule.backends.mkl.is_available() == any(
        p.get("internal_api") == "mkl" for p in pools)
    assert chainrule.backends.openmp.is_available() == any(
        p.get("user_api") == "openmp" for p in pools)
    assert chainrule.backends.mkldnn.is_available() is False


@pytest.fixture
def _threads() -> Iterator[None]:
    before = (chainrule.get_num_threads(), torch.get_num_threads())
    yield
    chainrule.set_num_threads(before[0])
    torch.set_num_threads(before[1])


@pytest.mark.usefixtures("_threads")
def test_num_threads_sets_the_blas_pool() -> None:
    available = chainrule.get_num_threads()
    chainrule.set_num_threads(1)
    assert chainrule.get_num_threads() == 1
    assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    chainrule.set_num_threads(2)
    assert chainrule.get_num_threads() == min(2, available)


@pytest.mark.usefixtures("_threads")
@pytest.mark.parametrize("value", [0, -1, 1.5, "2"])
@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
def test_thread_count_errors(name: str, value: Any) -> None:
    ours = _outcome(lambda: getattr(chainrule, name)(value))
    theirs = _outcome(lambda: getattr(torch, name)(value))
    assert ours[0] == theirs[0] == "RuntimeError"
    if name == "set_num_threads":  # (PyTorch's interop one complains about being set twice)
        assert ours == theirs


@pytest.fixture
def _determinism() -> Iterator[None]:
    yield
    for lib in LIBS.values():
        lib.use_deterministic_algorithms(False)


DETERMINISM = [
    ("use", (True,), {}), ("use", (False,), {"warn_only": True}), ("use", (1,), {}),
    ("mode", ("warn",), {}), ("mode", ("error",), {}), ("mode", ("default",), {}),
    ("mode", (2,), {}), ("mode", (5,), {}), ("mode", ("x",), {}), ("mode", (1,), {}),
]


@pytest.mark.usefixtures("_determinism")
def test_deterministic_algorithm_flags() -> None:
    """A sequence of settings reads back as PyTorch's, with PyTorch's errors."""
    seen: dict[str, list[Any]] = {}
    for name, lib in LIBS.items():
        record = seen[name] = []
        for what, args, kwargs in DETERMINISM:
            setter = (lib.use_deterministic_algorithms if what == "use"
                      else lib.set_deterministic_debug_mode)
            record.append(_outcome(lambda s=setter, a=args, k=kwargs: s(*a, **k)))
            record.append((lib.are_deterministic_algorithms_enabled(),
                           lib.is_deterministic_algorithms_warn_only_enabled(),
                           lib.get_deterministic_debug_mode()))
    assert seen["chainrule"] == seen["torch"]


def test_default_device() -> None:
    assert chainrule.get_default_device() == chainrule.device("cpu")
    assert repr(chainrule.get_default_device()) == repr(torch.get_default_device())
    chainrule.set_default_device("cpu")
    chainrule.set_default_device(None)
    # PyTorch accepts "cuda" and fails at the next tensor; chainrule refuses at once, with
    # PyTorch's error.
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        chainrule.set_default_device("cuda")
    assert chainrule.get_default_device() == chainrule.device("cpu")


@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16", "float32", "float64",
                                   "complex64", "complex128", "int32", "bool", "str"])
def test_finfo(dtype: str | None) -> None:
    def make(lib: ModuleType) -> Any:
        arg = "float32" if dtype == "str" else (None if dtype is None else getattr(lib, dtype))
        info = lib.finfo(arg) if arg is not None else lib.finfo()
        return (repr(info), info.bits, info.eps, info.max, info.min, info.tiny,
                info.smallest_normal, info.resolution, info.dtype, type(info.max).__name__,
                info == lib.finfo(getattr(lib, info.dtype)))

    assert _outcome(lambda: make(chainrule)) == _outcome(lambda: make(torch))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "bool", "float32"])
def test_iinfo(dtype: str) -> None:
    def make(lib: ModuleType) -> Any:
        info = lib.iinfo(getattr(lib, dtype))
        return repr(info), info.bits, info.max, info.min, info.dtype, type(info.max).__name__

    assert _outcome(lambda: make(chainrule)) == _outcome(lambda: make(torch))


def test_constants() -> None:
    assert (chainrule.pi, chainrule.e, chainrule.inf, chainrule.newaxis) == (
        torch.pi, torch.e, torch.inf, torch.newaxis)
    assert math.isnan(chainrule.nan) and math.isnan(torch.nan)
    x = chainrule.ones(3)
    assert x[chainrule.newaxis].shape == (1, 3)
