"""Loss functions with PyTorch's `reduction=` ('mean' | 'sum' | 'none') semantics."""
from __future__ import annotations

from typing import Any, Optional

from ..._C import Tensor
from ...amp import _policy as _amp
from ...autograd.function import Function, FunctionCtx
from ._fused import CrossEntropy, fusable
from .activation import log_softmax


def _ts() -> Any:
    import tessera
    return tessera


def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    t = _ts()
    if reduction == "mean":
        return t.mean(loss)
    if reduction == "sum":
        return t.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction "
                     "('mean', 'sum' or 'none')")


def _check_same_shape(input: Tensor, target: Tensor, op: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{op}: target size {tuple(target.shape)} must be the same as input "
                         f"size {tuple(input.shape)}")


def _class_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N, d1, ..., C) so classes sit on the last axis."""
    return _ts().moveaxis(x, 1, -1) if x.ndim > 2 else x


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] * weight[target[n]] over (N, C, ...) log-probabilities; 'mean'
    divides by the summed weights of the non-ignored targets."""
    input, target, weight = _amp.cast(_amp.FP32, input, target, weight)
    t = _ts()
    if input.ndim < 1:
        raise ValueError("nll_loss: input must have at least one dimension")
    batched = input.ndim > 1
    if not batched:
        input, target = t.expand_dims(input, axis=0), t.expand_dims(target, axis=0)
    if not t.isdtype(target.dtype, "integral"):
        raise TypeError(f"nll_loss: expected integer class indices as target, got {target.dtype}")
    n_cls = input.shape[1]
    if tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise ValueError(f"nll_loss: target shape {tuple(target.shape)} does not match input "
                         f"shape {tuple(input.shape)}")
    keep = target != ignore_index
    if target.size:
        valid = t.where(keep, target, 0)
        if int(t.min(valid).item()) < 0 or int(t.max(valid).item()) >= n_cls:
            raise IndexError(f"nll_loss: target values must be in [0, {n_cls}) or ignore_index")
    valid = t.where(keep, target, 0)
    kept = keep.astype(input.dtype)
    # Each target's log-probability and weight (0 where ignored), picked by index.
    picked = t.squeeze(t.take_along_axis(_class_last(input), t.expand_dims(valid, axis=-1), axis=-1),
                       axis=-1)
    wt = kept if weight is None else \
        t.reshape(t.take(weight, t.reshape(valid, (-1,)), axis=0), tuple(valid.shape)) * kept
    loss = -picked * wt
    if reduction == "mean":
        return t.sum(loss) / t.sum(wt)
    out = _reduce(loss, reduction, "nll_loss")
    return out if batched or reduction != "none" else out[0]


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over axis 1 (axis 0 for unbatched) + NLL with class indices, or the
    cross entropy with class probabilities when target is floating; PyTorch's formulas
    for weight, ignore_index and label_smoothing."""
    input, target, weight = _amp.cast(_amp.FP32, input, target, weight)
    t = _ts()
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if input.ndim < 1:
        raise ValueError("cross_entropy: input must have at least one dimension (classes)")
    if not t.isdtype(input.dtype, "real floating"):
        raise TypeError(f"cross_entropy: expected floating-point logits, got {input.dtype}")
    if t.isdtype(target.dtype, "integral") and fusable(input, weight):
        return _cross_entropy_fused(input, target, weight, ignore_index, reduction,
                                    label_smoothing)
    cdim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, dim=cdim)
    n_cls = input.shape[cdim]
    if t.isdtype(target.dtype, "real floating"):
        _check_same_shape(input, target, "cross_entropy")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_cls
        prod = logp * target
        if weight is not None:
            prod = prod * t.reshape(weight, (n_cls,) + (1,) * (input.ndim - cdim - 1))
        loss = -t.sum(prod, axis=cdim)
        if reduction == "mean":
            return t.sum(loss) / (loss.size if loss.ndim else 1)
        return _reduce(loss, reduction, "cross_entropy")
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    # The smoothing term: -sum_c w_c log p_c per sample (no one-hot), zero where ignored;
    # 'mean' divides by the nll's denominator (the summed weights of the kept targets).
    keep = (target != ignore_index)
    lp = _class_last(logp if cdim else t.expand_dims(logp, axis=0))
    smooth = -t.sum(lp * weight if weight is not None else lp, axis=-1)
    smooth = t.where(keep if cdim else t.expand_dims(keep, axis=0), smooth, 0)
    if reduction == "mean":
        kept = keep.astype(input.dtype)
        if weight is not None:
            picked = t.take(weight, t.reshape(t.where(keep, target, 0), (-1,)), axis=0)
            denom = t.sum(picked * t.reshape(kept, (-1,)))
        else:
            denom = t.sum(kept)
        ret = t.sum(smooth) / denom
    elif reduction == "sum":
        ret = t.sum(smooth)
    else:
        ret = smooth if cdim else smooth[0]
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_cls)


def _cross_entropy_fused(input: Tensor, target: Tensor, weight: Optional[Tensor],
                        ignore_index: int, reduction: str, label_smoothing: float) -> Tensor:
    """Class-index cross entropy through the fused kernel: classes moved last and rows
    flattened, (rows, C) logits -> per-row losses. No host synchronization: 'mean' divides
    by the summed target weights on the device (bad CUDA targets raise at the next sync)."""
    t = _ts()
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: {reduction!r} is not a valid value for reduction "
                         "('mean', 'sum' or 'none')")
    batched = input.ndim > 1
    n_cls = input.shape[1] if batched else input.shape[0]
    expect = ((input.shape[0],) + tuple(input.shape[2:])) if batched else ()
    if tuple(target.shape) != expect:
        raise ValueError(f"cross_entropy: target shape {tuple(target.shape)} does not match input "
                         f"shape {tuple(input.shape)} (expected {expect})")
    if input.ndim > 2:
        logits = t.reshape(t.moveaxis(input, 1, -1), (-1, n_cls))
    else:
        logits = input if batched else t.reshape(input, (1, n_cls))
    rows = t.reshape(t.astype(target, t.int64, copy=False), (-1,))
    loss, row_weight = CrossEntropy.apply(logits, rows, weight, int(ignore_index),
                                          float(label_smoothing))
    if reduction == "none":
        return t.reshape(loss, expect)
    if reduction == "sum":
        return t.sum(loss)
    return t.sum(loss) / t.sum(row_weight)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    input, target = _amp.cast(_amp.FP32, input, target)
    d = input - target
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    input, target = _amp.cast(_amp.FP32, input, target)
    return _reduce(_ts().abs(input - target), reduction, "l1_loss")


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (L1 when beta == 0)."""
    input, target = _amp.cast(_amp.FP32, input, target)
    t = _ts()
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = t.abs(input - target)
    if beta == 0:
        return _reduce(d, reduction, "smooth_l1_loss")
    loss = t.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    input, target = _amp.cast(_amp.FP32, input, target)
    t = _ts()
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    d = t.abs(input - target)
    loss = t.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction, "huber_loss")


class _BCE(Function):
    """Pointwise BCE with PyTorch's derivatives: d/dp = (p - y) / max(p (1 - p), 1e-12)
    (finite at p in {0, 1}, where the clamped logs would give 0), d/dy = log(1-p) - log p."""

    @staticmethod
    def forward(ctx: FunctionCtx, p: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        t = _ts()
        ctx.save_for_backward(p, y)
        return -(y * t.maximum(t.log(p), -100.0) + (1 - y) * t.maximum(t.log1p(-p), -100.0))

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        t = _ts()
        p, y = ctx.saved_tensors
        gp = g * (p - y) / t.maximum((1 - p) * p, 1e-12)
        gy = g * (t.log1p(-p) - t.log(p))
        return gp, gy


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                         reduction: str = "mean") -> Tensor:
    """-(y log p + (1-y) log(1-p)) with each log clamped at -100, as PyTorch does."""
    input, target, weight = _amp.cast_bce(input, target, weight)
    _check_same_shape(input, target, "binary_cross_entropy")
    loss = _BCE.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Optional[Tensor] = None, reduction: str = "mean",
                                     pos_weight: Optional[Tensor] = None) -> Tensor:
    """(1-y) x + (1 + (pw-1) y) log(1 + exp(-x)), evaluated stably."""
    input, target, weight, pos_weight = _amp.cast(_amp.FP32, input, target, weight, pos_weight)
    t = _ts()
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    softplus_neg = t.log1p(t.exp(-t.abs(input))) + t.maximum(-input, 0)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target * (log target - input) pointwise (input holds log-probabilities);
    'batchmean' divides the sum by the batch size."""
    input, target = _amp.cast(_amp.FP32, input, target)
    t = _ts()
    if log_target:
        loss = t.exp(target) * (target - input)
    else:
        pos = target > 0
        loss = t.where(pos, target * t.log(t.where(pos, target, 1)), 0) - target * input
    if reduction == "batchmean":
        return t.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, "kl_div")


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     eps: float = 1e-8, reduction: str = "mean") -> Tensor:
    input, target = _amp.cast(_amp.FP32, input, target)
    t = _ts()
    if full:
        raise NotImplementedError("poisson_nll_loss: full=True is not supported")
    loss = t.exp(input) - target * input if log_input else input - target * t.log(input + eps)
    return _reduce(loss, reduction, "poisson_nll_loss")


def soft_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    input, target = _amp.cast(_amp.FP32, input, target)
    t = _ts()
    return _reduce(t.log1p(t.exp(-target * input)), reduction, "soft_margin_loss")


def cosine_embedding_loss(x1: Tensor, x2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    x1, x2, target = _amp.cast(_amp.FP32, x1, x2, target)
    t = _ts()
    eps = 1e-12
    cos = t.sum(x1 * x2, axis=-1) / t.sqrt((t.sum(x1 * x1, axis=-1) + eps) * (t.sum(x2 * x2, axis=-1) + eps))
    loss = t.where(target == 1, 1 - cos, t.maximum(cos - margin, 0))
    return _reduce(loss, reduction, "cosine_embedding_loss")
