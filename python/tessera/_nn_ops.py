"""PyTorch's nn ops in the top-level namespace, with torch's top-level signatures
(torch.convolution, torch.dropout(input, p, train), torch.embedding(weight, indices),
torch.layer_norm, torch.batch_norm, the RNN cells, the losses with integer reductions, ...):
each forwards to nn.functional. Functions with the same signature as nn.functional's are
its aliases (made by `functional_aliases`); the losses and pools are C++ bindings."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from . import _C
from ._C import Tensor

# torch.max_pool{1,2,3}d, max_pool1d_with_indices, avg_pool1d, adaptive_avg_pool1d: the
# nn.functional bindings themselves (csrc/python/bind_conv.cpp, bind_pool.cpp; their
# signatures take torch's top-level arguments). torch.adaptive_max_pool1d always returns
# (values, indices): the _with_indices binding.
from ._C import (max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,  # noqa: E402,F401
                 avg_pool1d, adaptive_avg_pool1d)
adaptive_max_pool1d = _C.adaptive_max_pool1d_with_indices

# torch.kl_div, torch.margin_ranking_loss, ...: the C++ losses with the reduction as torch's
# enum (0 none, 1 mean, 2 sum; csrc/python/bind_loss.cpp).
binary_cross_entropy_with_logits = _C._torch_nn.binary_cross_entropy_with_logits
kl_div = _C._torch_nn.kl_div
margin_ranking_loss = _C._torch_nn.margin_ranking_loss
hinge_embedding_loss = _C._torch_nn.hinge_embedding_loss
cosine_embedding_loss = _C._torch_nn.cosine_embedding_loss
triplet_margin_loss = _C._torch_nn.triplet_margin_loss
poisson_nll_loss = _C._torch_nn.poisson_nll_loss

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "affine_grid_generator", "alpha_dropout", "batch_norm", "binary_cross_entropy_with_logits", "convolution", "cosine_embedding_loss", "dropout", "embedding", "feature_alpha_dropout", "feature_dropout", "grid_sampler", "group_norm", "gru_cell", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "lstm_cell", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "poisson_nll_loss", "rms_norm", "rnn_relu_cell", "rnn_tanh_cell", "rrelu", "triplet_margin_loss"]


def _ts() -> Any:
    import tessera
    return tessera


def _F() -> Any:
    from .nn import functional
    return functional


def convolution(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Any,
                padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                groups: int) -> Tensor:
    """torch.convolution: conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's rank."""
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got {weight.ndim}-D")
    F = _F()
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                 output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}


_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """nn.functional.grid_sample with torch's integer codes (0 bilinear, 1 nearest,
    2 bicubic; 0 zeros, 1 border, 2 reflection)."""
    if interpolation_mode not in _INTERP or padding_mode not in _PADDING:
        raise RuntimeError(f"grid_sampler: unknown interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    return _F().grid_sample(input, grid, mode=_INTERP[interpolation_mode],
                            padding_mode=_PADDING[padding_mode], align_corners=align_corners)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return _F().affine_grid(theta, list(size), align_corners=align_corners)


_linear = _C.linear  # x @ w.T + b (b may be None)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """One LSTM step: gates i, f, g, o from input and h; returns (h', c')."""
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c_new = _C.sigmoid(f) * c + _C.sigmoid(i) * _C.tanh(g)
    return _C.sigmoid(o) * _C.tanh(c_new), c_new


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    """One GRU step (torch's gate order r, z, n)."""
    gi = _linear(input, w_ih, b_ih).chunk(3, -1)
    gh = _linear(hx, w_hh, b_hh).chunk(3, -1)
    r = _C.sigmoid(gi[0] + gh[0])
    z = _C.sigmoid(gi[1] + gh[1])
    n = _C.tanh(gi[2] + r * gh[2])
    return (1 - z) * n + z * hx


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    return _C.tanh(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    return _ts().clip(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh), min=0)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.dropout(input, p, train): nn.functional.dropout with positional arguments."""
    return _F().dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().feature_alpha_dropout(input, p, train)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Channel dropout (zeroes whole channels of a (N, C, ...) input)."""
    F = _F()
    return F.dropout1d(input, p, train) if input.ndim in (2, 3) else \
        F.dropout2d(input, p, train) if input.ndim == 4 else F.dropout3d(input, p, train)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.embedding(weight, indices): the rows of weight (note the argument order)."""
    return _F().embedding(indices, weight, padding_idx=None if padding_idx < 0 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    return _C.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
               running_mean: Optional[Tensor], running_var: Optional[Tensor], training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch.batch_norm (note: weight and bias come before the running statistics)."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)


def instance_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                  running_mean: Optional[Tensor], running_var: Optional[Tensor],
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


rms_norm = _C.rms_norm  # torch.rms_norm's signature is F.rms_norm's


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, generator: Any = None) -> Tensor:
    """torch.rrelu (generator= fifth, no inplace): the C++ op (F.rrelu's binding)."""
    return _C.rrelu(input, lower, upper, training, generator=generator)


def _functional_alias(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        return getattr(_F(), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: nn.functional.{name} (same arguments)."
    return fn


_FUNCTIONAL_ALIASES = ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
                       "selu celu cosine_similarity pairwise_distance pdist pixel_shuffle "
                       "pixel_unshuffle channel_shuffle native_channel_shuffle bilinear "
                       "ctc_loss").split()


def functional_aliases() -> Dict[str, Callable[..., Any]]:
    """torch.conv2d, torch.selu, ...: nn.functional's functions of the same signature."""
    return {name: _functional_alias(name) for name in _FUNCTIONAL_ALIASES}
