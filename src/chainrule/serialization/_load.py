"""``chainrule.load``: pick the format from the file's first bytes and keep every failure in one
family of exceptions."""

from __future__ import annotations

import os
import pickle
from typing import IO, Any

from ._files import Source, open_source
from ._safetensors_format import load_safetensors, looks_like_safetensors
from ._torch_format import load_legacy, load_zip

FileLike = str | os.PathLike | IO[bytes]


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **kwargs: Any) -> Any:
    """Read what :func:`chainrule.save` wrote, a safetensors file, or a PyTorch ``.pt``/``.pth``
    file (zip archive or legacy stream), without PyTorch and without running pickle code.

    ``f`` is a path or a seekable binary file object (read from its current position); a path
    to a device, a FIFO or a socket is refused before anything is read. ``map_location``,
    ``pickle_module``, ``weights_only`` and ``mmap`` are accepted for compatibility:
    everything loads on the CPU, and loading is always weights-only. A malformed or hostile
    file raises ``pickle.UnpicklingError`` or ``RuntimeError``; see :mod:`chainrule.serialization`
    for exactly what is accepted.

    Example:
        >>> import chainrule as torch, io
        >>> buffer = io.BytesIO()
        >>> torch.save({"w": torch.ones(2)}, buffer)
        >>> _ = buffer.seek(0)
        >>> torch.load(buffer)
        {'w': tensor([1., 1.])}
    """
    with open_source(f) as source:
        try:
            return _load(source)
        except RuntimeError as e:
            if type(e) is RuntimeError:
                raise
            # Our subclasses (a truncated file, a refused archive ...) surface as PyTorch's
            # plain RuntimeError; the message says which.
            raise RuntimeError(str(e)) from None
        except (pickle.UnpicklingError, OSError, MemoryError):
            raise
        except RecursionError:
            raise pickle.UnpicklingError(
                "chainrule.load: the file is nested too deeply") from None
        except Exception as e:
            # Every known malformation has its own message; this is the net under them, so
            # that no KeyError or ValueError from deep inside escapes as if it were a bug.
            raise RuntimeError(
                f"chainrule.load: the file is corrupt ({type(e).__name__}: {e})") from e


def _load(source: Source) -> Any:
    head = source.read_at(0, min(source.size, 16))
    if not head:
        raise RuntimeError(f"chainrule.load: {source.name!r} is empty")
    if head[:4] == b"PK\x03\x04":
        return load_zip(source)
    if looks_like_safetensors(head):
        return load_safetensors(source)
    if head[:1] == b"\x80":
        return load_legacy(source)
    if source.size >= 262 and source.read_at(257, 5) == b"ustar":
        raise RuntimeError(
            "Cannot use ``weights_only=True`` with files saved in the legacy .tar format. "
            "chainrule.load does not read that format (PyTorch before 0.4 wrote it); load it "
            "with PyTorch and re-save it."
        )
    raise RuntimeError(
        f"chainrule.load: {source.name!r} is neither a PyTorch file (zip archive or legacy "
        "stream) nor a safetensors file"
    )
