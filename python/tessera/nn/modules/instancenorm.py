"""Instance normalization (torch.nn.modules.instancenorm): InstanceNorm1d/2d/3d."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any

from ..._C import Tensor
from .. import functional as F
from .batchnorm import _BatchNorm
from .batchnorm import _LazyNormBase


def _ts() -> Any:
    import tessera
    return tessera


class _InstanceNorm(_BatchNorm):
    """Per-(sample, channel) normalization; running statistics only with
    track_running_stats=True (used in eval mode)."""

    _nsp = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        x = input
        if x.ndim not in (self._nsp + 1, self._nsp + 2):
            raise ValueError(f"{name}: expected a {self._nsp + 1}-D or {self._nsp + 2}-D input, "
                             f"got shape {tuple(x.shape)}")
        unbatched = x.ndim == self._nsp + 1
        cdim = 0 if unbatched else 1
        if self.affine and x.shape[cdim] != self.num_features:
            raise ValueError(f"{name}: expected input's size at dim={cdim} to match "
                             f"num_features ({self.num_features}), got shape {tuple(x.shape)}")
        if unbatched:
            x = x[None]
        use_input_stats = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            use_input_stats, self.momentum if self.momentum is not None else 0.0,
                            self.eps)
        return y[0] if unbatched else y

class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or (C, L)."""
    _nsp = 1

class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or (C, H, W)."""
    _nsp = 2

class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) or (C, D, H, W)."""
    _nsp = 3


# Written out (not made in a loop) so that the API reference, read statically, lists them.
class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """InstanceNorm1d whose num_features comes from the first input's channel dim."""
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """InstanceNorm2d whose num_features comes from the first input's channel dim."""
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """InstanceNorm3d whose num_features comes from the first input's channel dim."""
    cls_to_become = InstanceNorm3d
