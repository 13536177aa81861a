"""``import torch`` answered by chainrule: an import hook that hands out chainrule's own modules.

After :func:`install_as_torch`, ``import torch`` gives the ``chainrule`` module object and
``import torch.nn.functional as F`` gives ``chainrule.nn.functional``: the very same module
objects, never a second copy of the package, so classes are shared (``isinstance(x,
torch.Tensor)`` holds for every chainrule tensor) and so is global state (grad mode, the default
dtype, the random generator).

``import functorch`` (the package PyTorch installs next to ``torch``) gives
``chainrule._functorch`` the same way.

How: a finder first in ``sys.meta_path`` answers every ``torch`` / ``torch.<path>`` import by
importing ``chainrule.<path>`` and putting that module into ``sys.modules`` under the ``torch``
name as well (the loader's ``exec_module`` swaps it in; the placeholder module importlib made is
dropped). A name chainrule does not have raises PyTorch's ``ModuleNotFoundError`` ("No module
named 'torch.xyz'"), and the real PyTorch, if installed, is never imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence

from . import torch_version as _torch_version
from ._dtype import REPR_NAMESPACE

__all__ = ["install_as_torch", "is_installed_as_torch", "TorchAliasFinder"]

_ALIAS = "torch"
_REAL = "chainrule"


#: Other packages PyTorch installs, answered by chainrule's version of them.
_PACKAGES = {"functorch": _REAL + "._functorch"}


def _real_name(fullname: str) -> str | None:
    """``chainrule.<path>`` for ``torch.<path>``, and chainrule's ``functorch`` (None for a
    name outside them)."""
    if fullname == _ALIAS:
        return _REAL
    if fullname.startswith(_ALIAS + "."):
        return _REAL + fullname[len(_ALIAS) :]
    head, dot, rest = fullname.partition(".")
    package = _PACKAGES.get(head)
    if package is not None:
        return package + dot + rest
    return None


def _not_found_here(error: ModuleNotFoundError, real: str) -> bool:
    """Whether ``error`` says that ``real`` itself (or a package on its path) does not exist,
    as opposed to a module that exists failing on a missing dependency of its own."""
    missing = error.name or ""
    return missing == real or real.startswith(missing + ".")


def _resolve(real: str) -> types.ModuleType | None:
    """The chainrule module ``real`` (None when chainrule has no such module).

    A module attribute that is not a file of its own (``chainrule.backends.cudnn`` defined in a
    module, not a package) counts too, as ``import torch.x.y`` finds such attributes in PyTorch.
    """
    try:
        return importlib.import_module(real)
    except ModuleNotFoundError as error:
        if not _not_found_here(error, real):
            raise
    parent_name, _, child = real.rpartition(".")
    if not parent_name:
        return None
    parent = _resolve(parent_name) if parent_name not in sys.modules else sys.modules[parent_name]
    found = getattr(parent, child, None) if parent is not None else None
    return found if isinstance(found, types.ModuleType) else None


class TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.<path>`` as ``chainrule`` and ``chainrule.<path>``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec whose loader swaps in the chainrule module; None for other names."""
        real = _real_name(fullname)
        if real is None:
            return None
        module = _resolve(real)
        if module is None:
            return None  # importlib raises "No module named 'torch.<path>'"
        is_package = hasattr(module, "__path__")
        spec = importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)
        spec.loader_state = module
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        """The default placeholder (``exec_module`` replaces it)."""
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        """Put the chainrule module in ``sys.modules`` in place of the placeholder: importlib
        returns what ``sys.modules`` holds once the loader is done, so the importer gets the
        chainrule module itself, with its own ``__name__`` and ``__spec__`` untouched."""
        spec = module.__spec__  # (importlib sets it before calling exec_module)
        sys.modules[module.__name__] = spec.loader_state  # type: ignore[union-attr]


_FINDER = TorchAliasFinder()


def is_installed_as_torch() -> bool:
    """Whether ``import torch`` gives chainrule in this interpreter."""
    return sys.modules.get(_ALIAS) is sys.modules[_REAL] and _FINDER in sys.meta_path


def install_as_torch() -> None:
    """Make ``import torch`` (and every ``import torch.<path>``) give chainrule's own modules.

    From then on reprs name the package ``torch`` (``torch.float64``, ``torch.Size([2])``,
    ``dtype=torch.float64`` in a tensor's repr), so a script prints what it prints under
    PyTorch. Call it before the code that imports ``torch``; calling it again does nothing. If
    the real PyTorch is already imported, its modules cannot be replaced under the code that
    holds them: this raises ``RuntimeError`` and changes nothing.

    Example:
        >>> import chainrule
        >>> chainrule.install_as_torch()  # doctest: +SKIP
        >>> import torch, torch.nn.functional as F  # doctest: +SKIP
        >>> torch is chainrule and F is chainrule.nn.functional  # doctest: +SKIP
        True
    """
    present = sys.modules.get(_ALIAS)
    if present is not None and present is not sys.modules[_REAL]:
        raise RuntimeError(
            "install_as_torch(): the real 'torch' is already imported (from "
            f"{getattr(present, '__file__', '?')}); call install_as_torch() before anything "
            "imports torch, or run the script with 'python -m chainrule run script.py'"
        )
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    REPR_NAMESPACE[0] = _ALIAS  # reprs say torch.float64, torch.Size([2]), as PyTorch's
    package = sys.modules[_REAL]
    # torch.__version__ is the PyTorch API chainrule reproduces (version checks in programs
    # compare it with "2.0" and the like); chainrule's own version stays in __main__/cli.
    package.__version__ = _torch_version.__version__  # type: ignore[attr-defined]
    sys.modules[_ALIAS] = package
    # Modules already imported answer under the torch name too (``sys.modules['torch.nn']``),
    # as code that looks modules up there (pickle, typing.get_type_hints ...) expects.
    prefix = _REAL + "."
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix) and module is not None:
            sys.modules.setdefault(_ALIAS + name[len(_REAL) :], module)
