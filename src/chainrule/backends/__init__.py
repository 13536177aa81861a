"""``torch.backends``: the flags PyTorch programs set for accelerator libraries, and what is
available. chainrule computes with NumPy on the CPU: no cuDNN, CUDA or MPS (their flags exist,
are settable and change nothing); ``mkl`` and ``openmp`` report what NumPy's BLAS uses."""

from __future__ import annotations

from . import cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
