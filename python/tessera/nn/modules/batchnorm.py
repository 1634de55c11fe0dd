"""Batch normalization (torch.nn.modules.batchnorm): BatchNorm1d/2d/3d, SyncBatchNorm."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Sequence

from ..._C import Tensor
from .. import functional as F
from .module import Module
from .normalization import _affine_params
from .. import init
from .._uninitialized import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin, _no_grad


def _ts() -> Any:
    import tessera
    return tessera


class _BatchNorm(Module):
    _ndims: Sequence[int] = ()
    _version = 2  # torch's: version 1 state dicts lack num_batches_tracked

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: Any,
                              *args: Any) -> None:
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats \
                and key not in state_dict:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        t = _ts()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self._has_bias = bias
        _affine_params(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", t.zeros((num_features,), dtype=dtype))
            self.register_buffer("running_var", t.ones((num_features,), dtype=dtype))
            self.register_buffer("num_batches_tracked", t.zeros((), dtype=t.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with _ts().no_grad():
                self.running_mean[...] = 0
                self.running_var[...] = 1
                self.num_batches_tracked[...] = 0

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._ndims:
            raise ValueError(f"{type(self).__name__}: expected {' or '.join(map(str, self._ndims))}"
                             f"-D input, got shape {tuple(input.shape)}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with _ts().no_grad():
                self.num_batches_tracked[...] = self.num_batches_tracked + 1
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / int(self.num_batches_tracked.item())
        # Batch statistics in training, or always when no running stats are tracked.
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L)."""
    _ndims = (2, 3)

class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W)."""
    _ndims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W)."""
    _ndims = (5,)

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
        from .instancenorm import _InstanceNorm
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


class _LazyNormBase(LazyModuleMixin):
    """num_features from the first input's dim 1 (torch's _LazyNormBase)."""

    def __init__(self, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        from ... import zeros, int64
        super().__init__(0, eps, momentum, False, False)  # type: ignore[call-arg]
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = zeros((), dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            self.reset_running_stats()  # type: ignore[attr-defined]
            if self.affine:
                init.ones_(self.weight)
                init.zeros_(self.bias)

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with _no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()

# Written out (not made in a loop) so that the API reference, read statically, lists them.
class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """BatchNorm1d whose num_features comes from the first input's dim 1."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """BatchNorm2d whose num_features comes from the first input's dim 1."""
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """BatchNorm3d whose num_features comes from the first input's dim 1."""
    cls_to_become = BatchNorm3d
