"""BatchNorm3d, InstanceNorm1d/2d/3d, LocalResponseNorm (PyTorch's buffers, reprs and
state-dict keys)."""
from __future__ import annotations

from typing import Any, Optional

from ..._C import Tensor
from .. import functional as F
from .module import Module
from .normalization import _BatchNorm


def _ts() -> Any:
    import tessera
    return tessera


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W)."""
    _ndims = (5,)


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


class LocalResponseNorm(Module):
    """Normalization over `size` neighbouring channels (AlexNet's LRN)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """PyTorch's legacy cross-map LRN over (N, C, H, W): x * (k + alpha/size * S)^-beta,
    where S sums squares over the channel windows of the legacy running-sum recurrence
    (which differ from LocalResponseNorm's near the ends)."""

    def forward(self, input: Tensor) -> Tensor:
        import numpy as np
        t = _ts()
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: expected a 4-D input (N, C, H, W), got shape "
                             f"{tuple(input.shape)}")
        c = input.shape[1]
        pre = int((self.size - 1) / 2 + 1)
        win = np.zeros((c, c))
        if c:
            win[0, :min(pre, c)] = 1
        for i in range(1, c):  # the recurrence of PyTorch's implementation, as a matrix
            win[i] = win[i - 1]
            if i < c - pre + 1:
                win[i, i + pre - 1] += 1
            if i > pre:
                win[i, i - pre] -= 1
        sq = t.moveaxis(input * input, 1, -1)
        sums = t.moveaxis(t.matmul(sq, t.asarray(win.T, device=input.device).astype(input.dtype)),
                          -1, 1)
        scale = sums * (self.alpha / self.size) + self.k
        return input * scale ** t.asarray(-self.beta, dtype=input.dtype, device=input.device)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over (N, C, *); tessera runs in one process, so the statistics
    are this process's batch (PyTorch's SyncBatchNorm without an initialized process group).
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2-D input (N, C, *), got shape "
                             f"{tuple(input.shape)}")
        self._ndims = (input.ndim,)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """`module` with every BatchNorm*d replaced by a SyncBatchNorm holding the same
        parameters and running statistics."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, (cls, _InstanceNorm)):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module._has_bias)
            out.register_parameter("weight", module.weight)
            out.register_parameter("bias", module.bias)
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                out.register_buffer(name, getattr(module, name))
            out.train(module.training)
        for name, child in list(module._modules.items()):
            if child is not None:
                out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
