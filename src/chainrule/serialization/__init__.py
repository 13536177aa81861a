"""``chainrule.save`` / ``chainrule.load``: weights in PyTorch's own format or in safetensors,
read and written without PyTorch. Loading never runs code from a file.

``save`` writes PyTorch's zip format (see :mod:`._torch_save`), which the real
``torch.load(f, weights_only=True)`` reads: tensors as storages with their offsets and strides
(views and tied weights keep sharing), parameters as parameters, state dicts with their
``_metadata``. A path ending in ``.safetensors`` (or :func:`save_safetensors`) writes the
safetensors format instead (see :mod:`._safetensors_format`): tensors as entries (a bfloat16
tensor as ``BF16``, its bits as they are), the nesting of dicts/lists/tuples and which tensors
are parameters as JSON metadata. Either way only data is written (objects that would need code
to rebuild raise ``TypeError``).

What ``load`` accepts
---------------------
Sources
    A path to a regular file, or a seekable binary file object (read from its current
    position). Paths to devices, FIFOs and sockets (directly or through symlinks) are refused
    with ``RuntimeError`` before anything is read; a directory raises ``IsADirectoryError`` and
    a stream that cannot seek ``io.UnsupportedOperation`` (as PyTorch). Every length the file
    declares is compared with the bytes it really has before anything is allocated.

safetensors files (the first 8 bytes a header length, then ``{``)
    As the safetensors library accepts them (header at most 100 MB of UTF-8 JSON, known dtypes,
    byte ranges tiling the data exactly), but duplicate JSON keys are refused. Dtypes: BOOL,
    U8, U16, U32, U64, I8, I16, I32, I64, F16, BF16 (``chainrule.bfloat16``, bit for bit),
    F32, F64, C64 (each also written; complex128 is refused, safetensors has no such type).
    Errors are ``RuntimeError`` with the library's wording ("Error while deserializing: ...").

PyTorch zip archives (``torch.save``, PyTorch >= 1.6)
    Entries must be stored (uncompressed, as ``torch.save`` writes them; PyTorch would also
    inflate compressed ones), with unique names that are plain relative paths (no ``..``),
    non-overlapping data inside the file, all in the folder of the first entry, with a
    ``version`` record between 1 and 10. Each storage ``data/<key>`` must be exactly as long
    as its id declares. See :mod:`._zip` and :mod:`._torch_format`.

Legacy PyTorch streams (``_use_new_zipfile_serialization=False``)
    Magic number, protocol 1001, system information, the object, the storage list and the
    storages, as ``torch.load`` reads them; each storage used must be in the list with the
    declared size. The legacy ``.tar`` format (PyTorch < 0.4) is refused, as PyTorch refuses it
    with ``weights_only=True``.

The pickles (see :mod:`._unpickler`)
    The opcodes ``pickle`` writes for data with protocols 2 to 5 (no ``INST``/``OBJ``/``EXT``,
    no ``PERSID``, no text opcodes of protocol 0). Globals: ``collections.OrderedDict`` and
    ``Counter``; ``set``, ``frozenset``, ``bytearray``, ``bytes()``, ``complex``,
    ``_codecs.encode(str, 'latin1')``; ``torch.Size``, ``torch.device``, the dtypes chainrule
    has (``torch.float32`` ...), the ``<Type>Storage`` classes and ``UntypedStorage``;
    ``torch._utils._rebuild_tensor``,
    ``_rebuild_tensor_v2``, ``_rebuild_tensor_v3``, ``_rebuild_parameter``,
    ``_rebuild_parameter_with_state``, ``torch._tensor._rebuild_from_type_v2`` (plain tensors
    and parameters) and ``torch.nn.Parameter``. Any other global is refused before it is
    resolved (nothing is imported); ``sys``/``os``/``posix``/``nt`` get PyTorch's "blocked"
    message. ``BUILD`` only sets new attribute names (a state dict's ``_metadata``) on an
    ``OrderedDict`` this load built; no other opcode mutates anything but the lists, dicts and
    sets this load built. Tuples and frozensets nest at most 1000 deep (hashing deeper ones
    crashes CPython); lists and dicts may nest deeper. Unlike PyTorch's weights-only
    unpickler, files written with ``pickle_protocol`` 3 to 5 load too.

Tensors
    Views of their storage with the file's offset, sizes and strides (checked as ``set_``
    checks them, with PyTorch's messages), so sharing between tensors of one storage is kept
    and an expanded tensor stays a view of its small storage; where elements alias (a stride 0
    over a size above 1) the view is read-only, as PyTorch refuses in-place writes there. A
    storage is typed by the first storage id naming it (as in PyTorch), read in the file's
    byte order; a bfloat16 storage is ``chainrule.bfloat16`` bit for bit, its tensors views of
    its bytes as for every other dtype. A conjugate or negative bit in a tensor's metadata is
    applied to a copy of just the elements it spans. Loaded tensors are leaves with their own
    version counter at 1, as ``torch.load`` leaves them. Sparse, quantized, nested and
    subclass tensors, tensors with Python attributes, backward hooks, and dtypes chainrule
    lacks (``complex32``, ``float8_*`` ...) are refused; uint16/32/64 load (PyTorch
    writes them on untyped storages with ``_rebuild_tensor_v3``).

Memory
    Storages cost exactly their size in the file (entries cannot overlap, so at most the file's
    size in all); the Python objects of a pickle are charged to a budget of 4 MiB plus 64 bytes
    per pickle byte. So a load needs about the bytes its tensors occupy plus a small multiple of
    the pickle's size, never more than the file can back.

Errors
    A malformed or hostile file raises ``pickle.UnpicklingError`` (the pickle asks for
    something refused; the message starts as PyTorch's: "Weights only load failed.") or
    ``RuntimeError`` (a corrupt archive, storage or tensor geometry; PyTorch's message where it
    has one) and never runs, imports or mutates anything outside the load.
"""

from __future__ import annotations

import os
from typing import IO, Any

from ._load import load
from ._safetensors_format import save as save_safetensors
from ._torch_save import save_torch

__all__ = ["save", "load", "save_safetensors"]


def save(
    obj: Any,
    f: str | os.PathLike | IO[bytes],
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Write ``obj`` (a tensor, a state dict, a checkpoint of dicts/lists/tuples of tensors and
    numbers ...) to ``f``, a path or a binary file object, as ``torch.save`` does.

    The format is PyTorch's zip archive, which ``torch.load(f, weights_only=True)`` and
    :func:`chainrule.load` read; a path ending in ``.safetensors`` gets the safetensors format
    (:func:`save_safetensors`). Tensors that share memory (views, tied weights) still share it
    after loading. ``pickle_module`` and ``_use_new_zipfile_serialization=False`` (PyTorch's
    legacy format) are not supported: the archive is always written with Python's pickle
    protocol ``pickle_protocol`` (2 by default, as PyTorch), holding only data.

    Example:
        >>> import chainrule as torch, io
        >>> buffer = io.BytesIO()
        >>> torch.save({"w": torch.ones(2)}, buffer)
        >>> _ = buffer.seek(0)
        >>> torch.load(buffer)
        {'w': tensor([1., 1.])}
    """
    if pickle_module is not None:
        raise TypeError(
            "chainrule.save: pickle_module is not supported (the file holds only "
            "data, written with Python's own pickle protocol)"
        )
    if not _use_new_zipfile_serialization:
        raise ValueError(
            "chainrule.save writes PyTorch's zip format only "
            "(_use_new_zipfile_serialization=False is not supported)"
        )
    if isinstance(f, str | os.PathLike) and os.fsdecode(os.fspath(f)).endswith(".safetensors"):
        save_safetensors(obj, f)
        return
    save_torch(obj, f, pickle_protocol, byteorder_first=not _disable_byteorder_record)
