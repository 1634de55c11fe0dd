"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations (the
modern API; checkpoints store parametrizations.weight.original0/original1, or
parametrizations.weight.original with the power-iteration vectors under .0._u / .0._v)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Tuple

from ..._C import Tensor
from ..modules.module import Module
from .parametrize import register_parametrization
from .weight_norm import _norm_except_dim


def _ts() -> Any:
    import tessera
    return tessera


class _WeightNorm(Module):
    def __init__(self, dim: Optional[int] = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> Tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: Optional[int] = 0) -> Module:
    """Parametrizes module.`name` as g * v / ||v|| (originals g, v)."""
    weight = getattr(module, name)
    if dim is not None and dim != -1:
        if not -weight.ndim <= dim < weight.ndim:
            raise ValueError(f"weight_norm: dim {dim} is out of range for a {weight.ndim}-D "
                             f"parameter")
        dim %= weight.ndim
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


def _normalize(x: Tensor, eps: float) -> Tensor:
    t = _ts()
    return x / t.maximum(t.sqrt(t.sum(x * x)), eps)


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        t = _ts()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = mat.shape
            self.register_buffer("_u", _normalize(t.randn(h, dtype=weight.dtype,
                                                          device=weight.device), eps))
            self.register_buffer("_v", _normalize(t.randn(w, dtype=weight.dtype,
                                                          device=weight.device), eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        t = _ts()
        w = t.moveaxis(weight, self.dim, 0) if self.dim != 0 else weight
        return t.reshape(w, (w.shape[0], -1))

    def _power_method(self, mat: Tensor, iters: int) -> None:
        t = _ts()
        with t.no_grad():
            m = mat.detach()
            for _ in range(iters):
                self._u[...] = _normalize(t.matmul(m, self._v), self.eps)
                self._v[...] = _normalize(t.matmul(m.mT, self._u), self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        t = _ts()
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = t.sum(u * t.matmul(mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: Optional[int] = None) -> Module:
    """Parametrizes module.`name` as W / sigma(W) (power iteration in training); dim
    defaults to 1 for transposed convolutions, else 0."""
    from ..modules.conv import _ConvTransposeNd
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    return register_parametrization(module, name,
                                    _SpectralNorm(weight, n_power_iterations, dim, eps))


_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(Q: Tensor) -> bool:
    t = _ts()
    n, k = Q.shape[-2], Q.shape[-1]
    eye = t.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * t.finfo(Q.dtype).eps
    return bool(t.allclose(Q.mH @ Q, eye, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition with the signs that make R's diagonal positive."""
    t = _ts()
    Q, R = t.linalg.qr(A)
    return Q * t.sgn(R.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2)


class _Orthogonal(Module):
    """Maps an unconstrained (..., n, k) tensor to one with orthonormal columns (rows when
    n < k): the matrix exponential or Cayley map of a skew-symmetric matrix built from its
    lower triangle, or a product of Householder reflectors; with use_trivialization the
    result is multiplied by the buffer `base`, reset by right_inverse (the dynamic
    trivialization of Lezcano-Casado)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        t = _ts()
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:  # embed the tall matrix in a square one
                X = t.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == "matrix_exp":
                Q = t.matrix_exp(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^{-1}
                Id = t.eye(n, dtype=A.dtype, device=A.device)
                Q = t.linalg.solve(t.add(Id, A, alpha=-0.5), t.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = t.linalg.householder_product(A, tau)
            # X's diagonal holds the signs (+-1) of Q's columns, not differentiated
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        t = _ts()
        with t.no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            if n < k:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                raise NotImplementedError(
                    "orthogonal(orthogonal_map='householder', use_trivialization=False): "
                    "assigning needs the reflectors of geqrf, which tessera does not provide; "
                    "use the default use_trivialization=True")
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete Q to an n x n orthogonal matrix
                N = t.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(t.cat([Q, N], dim=-1))
            self.base = Q
            # -Id: householder(zeros(m, n)) == eye(m, n) with these signs
            neg_Id = t.zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: Optional[str] = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrizes module.`name` (a matrix or batch of matrices) to have orthonormal columns
    (rows when it is wide) through orthogonal_map: "matrix_exp" or "cayley" (the default for
    square or complex matrices) or "householder" (else)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} "
                         "dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    return register_parametrization(module, name, orth, unsafe=True)
