"""DLPack on NumPy arrays: capsules out of an array and arrays out of a producer, zero-copy.

NumPy speaks DLPack itself (``ndarray.__dlpack__``, ``np.from_dlpack``); this module adds what a
tensor library needs on top, as PyTorch does it:

* bfloat16 (NumPy has no such type: chainrule's is ml_dtypes'). Out, the array's bits go as
  uint16 and the capsule's type code is set to DLPack's ``kDLBfloat``; in, a ``kDLBfloat``
  capsule is read as uint16 and viewed as bfloat16. Same memory both ways.
* Writable memory: PyTorch has no read-only tensors, so it exports its tensors writable and
  ignores the read-only flag of what it imports. A read-only array (an expanded tensor's
  stride-0 view) is exported through a writable alias of the same memory, and the read-only
  flag of an imported capsule is cleared, as PyTorch's import ignores it.
* Capsules: a DLPack capsule (``to_dlpack``'s result) is accepted where a producer is, once;
  anything else gets PyTorch's "invalid capsule" error.

The capsule structures (``DLManagedTensor`` and ``DLManagedTensorVersioned`` of dlpack.h) are
read and patched with ``ctypes`` before the consumer takes ownership, never after.
"""

from __future__ import annotations

import ctypes
import enum
from typing import Any

import numpy as np

from ._dtype import BFLOAT16

__all__ = ["DLDeviceType", "export", "import_array", "CPU_DEVICE"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (``torch.utils.dlpack.DLDeviceType``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


CPU_DEVICE = (DLDeviceType.kDLCPU, 0)

_CUDA_LIKE = {
    DLDeviceType.kDLCUDA,
    DLDeviceType.kDLCUDAHost,
    DLDeviceType.kDLCUDAManaged,
    DLDeviceType.kDLROCM,
    DLDeviceType.kDLROCMHost,
}

# dlpack.h's type codes
_KDL_UINT = 1
_KDL_BFLOAT = 4
_READ_ONLY_FLAG = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

_LEGACY_NAME = b"dltensor"
_VERSIONED_NAME = b"dltensor_versioned"

INVALID_CAPSULE = (
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
    "once, so you might have already constructed a tensor from it once."
)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_CapsuleType = type(np.empty(0).__dlpack__())


def _managed(capsule: Any) -> tuple[Any, Any]:
    """(the DLTensor, the versioned struct or None) of an unconsumed capsule, else None."""
    if type(capsule) is not _CapsuleType:
        return None, None
    if _api.PyCapsule_IsValid(capsule, _VERSIONED_NAME):
        address = _api.PyCapsule_GetPointer(capsule, _VERSIONED_NAME)
        versioned = _DLManagedTensorVersioned.from_address(address)
        return versioned.dl_tensor, versioned
    if _api.PyCapsule_IsValid(capsule, _LEGACY_NAME):
        address = _api.PyCapsule_GetPointer(capsule, _LEGACY_NAME)
        return _DLManagedTensor.from_address(address).dl_tensor, None
    return None, None


class _Interface:
    """An ``__array_interface__`` onto another array's memory, writable (keeps it alive)."""

    def __init__(self, array: np.ndarray) -> None:
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface
        self._keep = array


def _writable_alias(array: np.ndarray) -> np.ndarray:
    return np.asarray(_Interface(array))


def export(
    array: np.ndarray,
    *,
    stream: Any = None,
    max_version: Any = None,
    dl_device: Any = None,
    copy: bool | None = None,
) -> Any:
    """A DLPack capsule of ``array``'s memory (of a copy with ``copy=True``), as
    ``Tensor.__dlpack__`` hands it out."""
    if stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    if dl_device is not None and int(dl_device[0]) != DLDeviceType.kDLCPU:
        raise BufferError(
            f"chainrule tensors live on the CPU and cannot be exported to DLPack device "
            f"{tuple(dl_device)}"
        )
    if copy or any(step < 0 for step in array.strides):
        # (a NumPy view with negative steps, which no PyTorch tensor has, goes as a copy:
        # PyTorch's import would abort the process on it)
        array = array.copy()
    bfloat16 = array.dtype == BFLOAT16
    if bfloat16:
        array = array.view(np.uint16)
    if not array.flags.writeable:
        array = _writable_alias(array)
    if max_version is not None and tuple(max_version) >= (1, 0):
        capsule = array.__dlpack__(max_version=tuple(max_version))
    else:
        capsule = array.__dlpack__()
    if bfloat16:
        tensor, _ = _managed(capsule)
        tensor.dtype.code = _KDL_BFLOAT
    return capsule


class _Capsule:
    """A producer handing out one prepared capsule (``np.from_dlpack`` wants a producer)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return CPU_DEVICE


def _check_device(device_type: int) -> None:
    if device_type == DLDeviceType.kDLCPU:
        return
    if device_type in _CUDA_LIKE:
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(
        f"chainrule runs on the CPU only: cannot import from DLPack device "
        f"{DLDeviceType(device_type)!r}"
    )


def import_array(source: Any, copy: bool | None = None) -> np.ndarray:
    """The array a DLPack producer (or an unconsumed capsule) shares, as ``torch.from_dlpack``
    reads it: zero-copy unless ``copy=True``."""
    if hasattr(source, "__dlpack__"):
        device = source.__dlpack_device__()
        _check_device(int(device[0]))
        try:
            capsule = source.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer of DLPack before 1.0 takes no max_version
            capsule = source.__dlpack__()
    else:
        capsule = source
    tensor, versioned = _managed(capsule)
    if tensor is None:
        raise RuntimeError(INVALID_CAPSULE)
    _check_device(int(tensor.device.device_type))
    if versioned is not None:
        versioned.flags &= ~_READ_ONLY_FLAG  # PyTorch's import ignores it: tensors are writable
    bfloat16 = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) == (_KDL_BFLOAT, 16, 1)
    if bfloat16:
        tensor.dtype.code = _KDL_UINT
    array = np.from_dlpack(_Capsule(capsule))
    if any(step < 0 for step in array.strides):
        # (PyTorch's import aborts the process on such a capsule; tensors never have them)
        raise BufferError(
            "chainrule.from_dlpack: the DLPack tensor has negative strides, which tensors "
            "cannot have; make a copy of it first (NumPy: array.copy())"
        )
    if bfloat16:
        array = array.view(BFLOAT16)
    return array.copy() if copy else array
