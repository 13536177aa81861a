"""``torch.version``: what build this is. chainrule reproduces PyTorch's API of
``__version__`` (a :class:`~chainrule.torch_version.TorchVersion`), on the CPU only: no CUDA,
ROCm or XPU."""

from __future__ import annotations

from .torch_version import PYTORCH_API_VERSION, TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "xpu"]

__version__ = TorchVersion(PYTORCH_API_VERSION)
cuda: str | None = None
hip: str | None = None
xpu: str | None = None
debug = False
git_version = "chainrule"
