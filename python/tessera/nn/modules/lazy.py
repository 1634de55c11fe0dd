"""Lazy modules (torch.nn's LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*): the input size is inferred on the first forward.

Until then the weights are UninitializedParameter placeholders (nn/_uninitialized.py). The
first call runs ``initialize_parameters(input)`` from a forward pre-hook, materializes the
placeholders in place (an optimizer built earlier keeps them), runs ``reset_parameters`` and
turns the module into its regular class (``cls_to_become``: LazyLinear becomes Linear), as
torch's LazyModuleMixin. Loading a state dict into a lazy module materializes the placeholders
with the loaded shapes.
"""
from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional

from ..._C import Tensor
from .. import init
from .._uninitialized import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .conv3d import Conv3d, ConvTranspose3d
from .linear import Linear
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d
from .normalization_more import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d


def _no_grad() -> Any:
    from ...autograd import no_grad
    return no_grad()


class LazyModuleMixin:
    """Mixin (listed first) for modules whose parameters' shapes come from the first input:
    subclasses implement ``initialize_parameters(*args, **kwargs)``."""

    cls_to_become: Optional[type] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._load_hook = self._register_load_state_dict_pre_hook(  # type: ignore[attr-defined]
            self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        # Placeholders are saved as themselves (torch: detach would lose the marker).
        for name, param in self._parameters.items():  # type: ignore[attr-defined]
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():  # type: ignore[attr-defined]
            if buf is not None and name not in self._non_persistent_buffers:  # type: ignore
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: Dict[str, Any], prefix: str, local_metadata: Any,
                        strict: bool, missing_keys: List[str], unexpected_keys: List[str],
                        error_msgs: List[str]) -> None:
        """Materializes each placeholder that the state dict gives a real tensor for."""
        for name, param in itertools.chain(self._parameters.items(),  # type: ignore
                                           self._buffers.items()):  # type: ignore
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with _no_grad():
                        param.materialize(tuple(value.shape))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materializes the placeholders from the first input (subclasses implement it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether some parameter or buffer of this module is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(
            self._parameters.values(), self._buffers.values()))  # type: ignore[attr-defined]

    def _infer_parameters(self, module: Module, args: Any, kwargs: Any = None) -> None:
        """The forward pre-hook: initializes, removes the hooks, becomes cls_to_become."""
        module.initialize_parameters(*args, **(kwargs or {}))  # type: ignore[attr-defined]
        if module.has_uninitialized_params():  # type: ignore[attr-defined]
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")  # type: ignore
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:  # type: ignore[attr-defined]
            module.__class__ = module.cls_to_become  # type: ignore[attr-defined]

    def _replicate_for_data_parallel(self) -> None:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is inferred from the first input's last dimension."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with _no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input: dim 1 when batched, dim 0 when unbatched."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:  # type: ignore
            super().reset_parameters()  # type: ignore[misc]

    def _get_in_channels(self, input: Tensor) -> int:
        nd = self._nsp + 1  # type: ignore[attr-defined]
        if input.ndim not in (nd, nd + 1):
            raise RuntimeError(f"Expected {nd}D (unbatched) or {nd + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"{tuple(input.shape)}")
        return input.shape[1] if input.ndim == nd + 1 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:  # type: ignore[attr-defined]
            raise ValueError("in_channels must be divisible by groups")
        k = tuple(self.kernel_size)  # type: ignore[attr-defined]
        g, out = self.groups, self.out_channels  # type: ignore[attr-defined]
        shape = (self.in_channels, out // g) + k if self._transposed \
            else (out, self.in_channels // g) + k  # type: ignore[attr-defined]
        with _no_grad():
            self.weight.materialize(shape)  # type: ignore[attr-defined]
            if self.bias is not None:  # type: ignore[attr-defined]
                self.bias.materialize((out,))  # type: ignore[attr-defined]
            self.reset_parameters()


def _lazy_conv_init(mod: Module, out_channels: int, bias: bool, device: Any,
                    dtype: Any) -> None:
    mod.weight = UninitializedParameter(device=device, dtype=dtype)
    mod.out_channels = out_channels
    if bias:
        mod.bias = UninitializedParameter(device=device, dtype=dtype)


def _lazy_class(mixin: type, base: type, attrs: Dict[str, Any]) -> type:
    """The class Lazy<base>: `mixin` first, becoming `base` after the first forward."""
    name = "Lazy" + base.__name__
    attrs = dict(attrs, cls_to_become=base, __module__=__name__, __qualname__=name,
                 __doc__=f"{base.__name__} whose input size (in_features / in_channels / "
                         f"num_features) comes from the first input.")
    return type(name, (mixin, base), attrs)


def _lazy_conv(base: type) -> type:
    """LazyConv{1,2,3}d: torch's signature without in_channels."""

    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                      padding_mode)
        _lazy_hooks(self)
        _lazy_conv_init(self, out_channels, bias, device, dtype)

    return _lazy_class(_LazyConvXdMixin, base, {"__init__": __init__})


def _lazy_conv_transpose(base: type) -> type:
    """LazyConvTranspose{1,2,3}d: torch's signature without in_channels."""

    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                      dilation, padding_mode)
        _lazy_hooks(self)
        _lazy_conv_init(self, out_channels, bias, device, dtype)

    return _lazy_class(_LazyConvXdMixin, base, {"__init__": __init__})


def _lazy_hooks(mod: Any) -> None:
    """The two hooks LazyModuleMixin.__init__ registers (for classes whose __init__ calls the
    regular base's __init__ directly)."""
    mod._load_hook = mod._register_load_state_dict_pre_hook(mod._lazy_load_hook)
    mod._initialize_hook = mod.register_forward_pre_hook(mod._infer_parameters,
                                                         with_kwargs=True)


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


def _lazy_norm(base: type) -> type:
    return _lazy_class(_LazyNormBase, base, {})


LazyConv1d, LazyConv2d, LazyConv3d = map(_lazy_conv, (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = map(
    _lazy_conv_transpose, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = map(
    _lazy_norm, (BatchNorm1d, BatchNorm2d, BatchNorm3d))
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = map(
    _lazy_norm, (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
