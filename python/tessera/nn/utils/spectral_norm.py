"""spectral_norm / remove_spectral_norm (torch.nn.utils' hook-based API): module.`name` is
recomputed before every forward as name_orig / sigma, sigma the largest singular value of
name_orig flattened to a matrix, estimated by power iteration on the buffers name_u and
name_v (updated in training mode only, as in PyTorch)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

from ..._C import Tensor
from .weight_norm import _fold_back


def _ts() -> Any:
    import tessera
    return tessera


def _normalize(x: Tensor, eps: float) -> Tensor:
    t = _ts()
    return x / t.maximum(t.sqrt(t.sum(x * x)), eps)


class SpectralNorm:
    """The forward pre-hook that recomputes `name` from name_orig, name_u and name_v."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: expected n_power_iterations to be positive, got "
                             f"{n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        t = _ts()
        w = weight
        if self.dim != 0:
            w = t.moveaxis(w, self.dim, 0)
        return t.reshape(w, (w.shape[0], -1))

    def compute_weight(self, module: Any, do_power_iteration: bool) -> Tensor:
        t = _ts()
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with t.no_grad():
                m = mat.detach()
                for _ in range(self.n_power_iterations):
                    v[...] = _normalize(t.matmul(m.mT, u), self.eps)
                    u[...] = _normalize(t.matmul(m, v), self.eps)
            # clones: the in-place updates of the next forward must not touch this graph
            u, v = u.clone(), v.clone()
        sigma = t.sum(u * t.matmul(mat, v))
        return weight / sigma

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module: Any, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: Optional[int] = None) -> Any:
    """Spectrally normalizes module.`name` (keys name_orig, name_u, name_v); dim defaults to
    1 for transposed convolutions, else 0."""
    t = _ts()
    from ..modules.conv import _ConvTransposeNd
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"spectral_norm: cannot register two spectral_norm hooks on the "
                               f"same parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"spectral_norm: module has no parameter {name!r}")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    with t.no_grad():
        mat = fn.reshape_weight_to_matrix(weight.detach())
        h, w = mat.shape
        u = _normalize(t.randn(h, dtype=weight.dtype, device=weight.device), eps)
        v = _normalize(t.randn(w, dtype=weight.dtype, device=weight.device), eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Any, name: str = "weight") -> Any:
    """Folds the current normalized weight back into a plain parameter `name`."""
    return _fold_back(module, name, SpectralNorm, lambda h, m: h.compute_weight(m, False),
                      ("_orig", "_u", "_v"), "spectral_norm")
