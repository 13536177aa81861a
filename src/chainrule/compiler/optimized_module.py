"""``OptimizedModule``: what ``compile(module)`` returns, as torch.compile's.

A module wrapping the original as its submodule ``_orig_mod`` (so its ``state_dict`` keys
start with ``_orig_mod.``, as PyTorch's do: checkpoints saved from a compiled model load into
either library), whose ``forward`` runs the compiled program; other attributes are read from
and written to the original (``training`` too), and the compiler's own (``code``,
``fallback_reasons``, ``compile_count``...) from the compiled function.
"""

from __future__ import annotations

from collections.abc import Sized
from typing import Any

from chainrule.nn.modules.module import Module

from .compiled import CompiledFunction

__all__ = ["OptimizedModule"]

#: What a compiled function tells about its compilation (read through the module; its cache
#: and latest entry too, for tests and tools).
_COMPILER_ATTRIBUTES = frozenset(
    {
        "code", "fx_code", "graph", "ir_graph", "fallback_reasons", "graph_breaks",
        "compile_count", "_cache", "_last",
    }
)  # fmt: skip


class OptimizedModule(Module):
    """``compile(module)``'s result: call it as the module; ``_orig_mod`` is the module."""

    _opt_mod_attributes = frozenset(
        {"_orig_mod", "_compiled", "forward", "__dict__", "_super_module_initialized"}
    )

    def __init__(self, mod: Module, compiled: CompiledFunction) -> None:
        object.__setattr__(self, "_orig_mod", mod)
        object.__setattr__(self, "_super_module_initialized", False)
        super().__init__()
        object.__setattr__(self, "_super_module_initialized", True)
        del self.__dict__["_orig_mod"]
        self._modules["_orig_mod"] = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The compiled program of the original module's forward."""
        return self.__dict__["_compiled"](*args, **kwargs)

    @property
    def training(self) -> bool:  # type: ignore[override]
        """The original module's training flag."""
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        if self.__dict__.get("_super_module_initialized"):
            self._orig_mod.training = value

    def __len__(self) -> int:
        if isinstance(self._orig_mod, Sized):
            return len(self._orig_mod)
        raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")

    def __getattr__(self, name: str) -> Any:
        modules = self.__dict__.get("_modules")
        if name == "_orig_mod":
            if modules is None or "_orig_mod" not in modules:
                raise AttributeError(name)
            return modules["_orig_mod"]
        if name in _COMPILER_ATTRIBUTES:
            return getattr(self.__dict__["_compiled"], name)
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            super().__setattr__(name, value)
            return
        setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            super().__delattr__(name)
            return
        delattr(self._orig_mod, name)

    def __dir__(self) -> list[str]:
        own = self._orig_mod.__dir__()
        return own + [a for a in super().__dir__() if a not in own]
