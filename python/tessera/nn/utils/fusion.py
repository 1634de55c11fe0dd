"""Folding an eval-mode BatchNorm into the preceding convolution or linear layer
(torch.nn.utils.fusion): same outputs, one layer fewer."""
from __future__ import annotations

import copy as _copy
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Tuple

from ..._C import Tensor
from ..parameter import Parameter


def _ts() -> Any:
    import tessera
    return tessera


def _defaults(rm: Tensor, w: Optional[Tensor], b: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    t = _ts()
    return (t.ones_like(rm) if w is None else w), (t.zeros_like(rm) if b is None else b)


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Optional[Tensor], bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Optional[Tensor], bn_b: Optional[Tensor],
                         transpose: bool = False) -> Tuple[Parameter, Parameter]:
    """Weight and bias of the convolution that equals conv followed by batch norm (eval):
    W' = W * gamma / sqrt(var + eps) per output channel, b' = (b - mean) gamma / sqrt(var +
    eps) + beta. `transpose`: the output channels are the weight's dim 1."""
    t = _ts()
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    cb = t.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w, bn_b = _defaults(bn_rm, bn_w, bn_b)
    rsqrt = 1 / t.sqrt(bn_rv + bn_eps)
    shape = ((1, -1) if transpose else (-1, 1)) + (1,) * (conv_w.ndim - 2)
    fused_w = (conv_w * t.reshape(bn_w * rsqrt, shape)).astype(w_dtype)
    fused_b = ((cb - bn_rm) * rsqrt * bn_w + bn_b).astype(b_dtype)
    return (Parameter(fused_w.detach(), requires_grad=conv_w.requires_grad),
            Parameter(fused_b.detach(), requires_grad=cb.requires_grad))


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of `conv` with the eval-mode `bn` folded in."""
    if conv.training or bn.training:
        raise ValueError("fuse_conv_bn_eval: fusion only works in eval mode")
    fused = _copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("fuse_conv_bn_eval: the batch norm needs running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Optional[Tensor], bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Optional[Tensor],
                           bn_b: Optional[Tensor]) -> Tuple[Parameter, Parameter]:
    """Weight and bias of the linear layer that equals linear followed by batch norm (eval)."""
    t = _ts()
    lb = t.zeros_like(bn_rm) if linear_b is None else linear_b
    bn_w, bn_b = _defaults(bn_rm, bn_w, bn_b)
    scale = bn_w / t.sqrt(bn_rv + bn_eps)
    fused_w = linear_w * t.expand_dims(scale, axis=-1)
    fused_b = (lb - bn_rm) * scale + bn_b
    return (Parameter(fused_w.detach(), requires_grad=linear_w.requires_grad),
            Parameter(fused_b.detach(), requires_grad=lb.requires_grad))


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of `linear` with the eval-mode `bn` folded in."""
    if linear.training or bn.training:
        raise ValueError("fuse_linear_bn_eval: fusion only works in eval mode")
    if linear.out_features != bn.num_features:
        raise ValueError(f"fuse_linear_bn_eval: linear.out_features ({linear.out_features}) "
                         f"must match bn.num_features ({bn.num_features})")
    fused = _copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
