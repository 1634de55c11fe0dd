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
