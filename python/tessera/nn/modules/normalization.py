"""BatchNorm1d/2d, LayerNorm, RMSNorm, GroupNorm."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from ..._C import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


def _affine_params(mod: Module, shape: tuple, affine: bool, bias: bool, dtype: Any) -> None:
    """Registers weight (ones) and bias (zeros) of `shape`, or None for each that is off."""
    t = _ts()
    mod.register_parameter("weight", Parameter(t.ones(shape, dtype=dtype)) if affine else None)
    mod.register_parameter("bias", Parameter(t.zeros(shape, dtype=dtype))
                           if affine and bias else None)


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


class LayerNorm(Module):
    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self._has_bias = bias
        _affine_params(self, self.normalized_shape, elementwise_affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self._has_bias}")


class RMSNorm(Module):
    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: Optional[float] = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_ts().ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        # torch's RMSNorm.forward names its input ``x`` (unlike LayerNorm's ``input``).
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("GroupNorm: num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self._has_bias = bias
        _affine_params(self, (num_channels,), affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self._has_bias}")
