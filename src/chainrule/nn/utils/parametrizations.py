"""``nn.utils.parametrizations``: weight norm, spectral norm and orthogonal matrices as
parametrizations (``nn.utils.parametrize``), PyTorch's current API for them.

* ``weight_norm``: ``weight = g * v / ||v||`` with the norm over every dimension but ``dim``;
  ``g`` and ``v`` are stored as ``original0`` and ``original1``.
* ``spectral_norm``: ``weight / sigma``, ``sigma`` the largest singular value of the weight
  (seen as a matrix with ``dim`` first), estimated by power iteration whose vectors ``_u`` and
  ``_v`` are buffers, refined on each training-mode access.
* ``orthogonal``: an orthogonal (unitary) matrix from an unconstrained one, by the matrix
  exponential, the Cayley map or Householder reflections.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

from ..._finfo import finfo
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.creation import eye, randn, zeros_like
from ...ops.linalg import mv, vdot
from ...ops.linalg_decomp import geqrf, linalg_householder_product, linalg_solve, matrix_exp
from ...ops.nn_ops.misc import normalize
from ...ops.pointwise import add, allclose
from ...ops.shape import cat
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions
    (``dim=-1``: the norm of the whole tensor, a 0-d tensor), as PyTorch's
    ``norm_except_dim(v, 2, dim)``."""
    if dim == -1:
        return v.norm(2)
    dim = dim % v.ndim
    others = tuple(d for d in range(v.ndim) if d != dim)
    if not others:
        return v.abs()
    return v.norm(2, dim=others, keepdim=True)


class _WeightNorm(Module):
    """``g * v / norm_except_dim(v, dim)`` from ``(g, v)``; its right inverse splits a weight
    into its norms and itself."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over all dimensions but
    ``dim``; ``dim=None``: over the whole tensor). ``g`` and ``v`` become
    ``module.parametrizations.<name>.original0`` and ``original1``.

    Example:
        >>> m = weight_norm(nn.Linear(20, 40), name="weight")  # doctest: +SKIP
        >>> m.parametrizations.weight.original0.size()  # doctest: +SKIP
        torch.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """``weight / sigma`` with ``sigma`` estimated by power iteration (vectors ``_u``, ``_v``);
    a 1-d weight is just normalized."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            order = (self.dim, *(d for d in range(weight.ndim) if d != self.dim))
            weight = weight.permute(*order)
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # The vectors are updated in place (``out=``), so a forward that runs twice in one
        # step (or a module copied by DataParallel-style code) sees the latest estimate.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by
    ``n_power_iterations`` power-iteration steps per training-mode access. ``dim`` (default 0,
    1 for transposed convolutions) is the output dimension.

    Example:
        >>> snm = spectral_norm(nn.Linear(20, 40))  # doctest: +SKIP
        >>> snm.parametrizations.weight.original.size()  # doctest: +SKIP
        torch.Size([40, 20])
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.size(-2), Q.size(-1)
    identity = eye(k, dtype=Q.dtype)
    tolerance = 10.0 * n * finfo(Q.dtype).eps
    return bool(allclose(Q.mH @ Q, identity, atol=tolerance))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of ``A = QR`` (``A`` tall) with ``diag(R)`` real and non-negative."""
    X, tau = geqrf(A)
    Q = linalg_householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """An orthogonal matrix (or batch) from an unconstrained one. With ``use_trivialization``
    the result is ``base @ map(X)``, ``base`` a buffer set by assignments (so assigning any
    orthogonal matrix is exact)."""

    base: Tensor

    def __init__(
        self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == _OrthMaps.householder:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg_householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                identity = eye(n, dtype=A.dtype)
                Q = linalg_solve(add(identity, A, alpha=-0.5), add(identity, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != _OrthMaps.householder:
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential "
                    "or the Cayley parametrizations when use_trivialization=False."
                )
            A, tau = geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            extra = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, extra], dim=-1))
        self.base = Q
        neg_identity = zeros_like(Q_init)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (unitary).

    ``orthogonal_map``: ``"matrix_exp"`` (default for square or complex matrices),
    ``"cayley"`` or ``"householder"`` (default otherwise).

    Example:
        >>> orth_linear = orthogonal(nn.Linear(20, 40))  # doctest: +SKIP
        >>> Q = orth_linear.weight  # doctest: +SKIP
        >>> torch.dist(Q.T @ Q, torch.eye(20))  # doctest: +SKIP
        tensor(4.0332e-07)
    """
    weight: Any = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
