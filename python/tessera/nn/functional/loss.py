"""Loss functions with PyTorch's `reduction=` ('mean' | 'sum' | 'none') semantics."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ..._C import Tensor
from ...amp import _policy as _amp
from ... import _C


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


# PyTorch's deprecated size_average/reduce pair (replaces `reduction`, with torch's warning
# pointing at the caller of the loss): the binding the C++ losses use too.
_legacy_reduction = _C._legacy_reduction


# The C++ ops themselves (csrc/python/bind_loss.cpp: PyTorch's signatures, the legacy
# size_average/reduce pair, checks, autocast and gradients in csrc/ops/nn/loss*.cpp).
from ..._C import (nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss,  # noqa: E402,F401
                  huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, kl_div,
                  soft_margin_loss, margin_ranking_loss, hinge_embedding_loss)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Optional[bool] = None, eps: float = 1e-8,
                     reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """exp(x) - y x (log_input) or x - y log(x + eps); full adds the Stirling term
    y log y - y + 0.5 log(2 pi y) where y > 1. Input and target broadcast."""
    input, target = _amp.cast("poisson_nll_loss", input, target)
    t = _ts()
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = t.exp(input) - target * input if log_input else input - target * t.log(input + eps)
    if full:
        big = target > 1
        y = t.where(big, target, 2.0)  # keeps the masked-out logs (and their grads) finite
        stirling = y * t.log(y) - y + 0.5 * t.log(2 * math.pi * y)
        loss = loss + t.where(big, stirling, 0.0)
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log max(var, eps) + (x - y)^2 / max(var, eps)) (+ 0.5 log 2 pi when full).
    var has input's shape, or lacks its last axis, or has size 1 on one axis
    (heteroscedastic), or is a float; the eps clamp passes gradients through unchanged
    (PyTorch clamps under no_grad)."""
    t = _ts()  # (no autocast policy of its own: torch's is a Python composite too)
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("gaussian_nll_loss: var has negative entry/entries")
        var = t.full(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): argument 'var' must be Tensor or float, not "
                        f"{type(var).__name__}")
    elif var.size and bool(t.any(var < 0)):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = t.expand_dims(var, axis=-1)
        elif not (len(ishape) == len(vshape)
                  and sum(v for i, v in zip(ishape, vshape) if i != v) == 1):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size {vshape} for input "
                             f"{ishape} (expected the input's shape, it without the last axis, "
                             "or size 1 on one axis)")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"gaussian_nll_loss: {reduction} is not valid")
    with t.no_grad():
        shift = t.maximum(var, eps) - var
    var = var + shift
    loss = 0.5 * (t.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where y == 1, max(0, cos - margin) where y == -1, 0 elsewhere;
    inputs (N, D) with target (N,), or (D,) with a 0-d target."""
    input1, input2, target = _amp.cast("cosine_embedding_loss", input1, input2, target)
    t = _ts()
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.ndim not in (0, 1):
        raise ValueError(f"cosine_embedding_loss: 0D or 1D target tensor expected, got "
                         f"{target.ndim}D")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise ValueError(f"cosine_embedding_loss: {target.ndim}D target tensor expects {want}D "
                         f"input tensors, but found inputs with sizes {tuple(input1.shape)} and "
                         f"{tuple(input2.shape)}")
    eps = 1e-12
    dot = t.sum(input1 * input2, axis=-1)
    mag = (t.sum(input1 * input1, axis=-1) + eps) * (t.sum(input2 * input2, axis=-1) + eps)
    cos = dot / t.sqrt(mag)
    loss = (t.where(target == 1, 1 - cos, 0.0)
            + t.where(target == -1, t.maximum(cos - margin, 0), 0.0))
    return _reduce(loss, reduction, "cosine_embedding_loss")


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                size_average: Optional[bool] = None,
                                reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Per-class logistic loss -(y log s(x) + (1-y) log s(-x)) (times weight), averaged
    over the last (class) axis."""
    from .activation import logsigmoid
    t = _ts()  # (no autocast policy of its own: torch's is a Python composite too)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ValueError("multilabel_soft_margin_loss: input must have a class axis")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = t.sum(loss, axis=-1) / input.shape[-1]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def _check_class_input(op: str, input: Tensor) -> Tensor:
    """(C,) or (N, C) scores as (N, C)."""
    t = _ts()
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"{op}: expected non-empty vector or matrix with optional 0-dim "
                         f"batch size, but got input of shape {tuple(input.shape)}")
    if not t.isdtype(input.dtype, "real floating"):
        raise TypeError(f"{op}: expected floating-point input, got {input.dtype}")
    return input if input.ndim == 2 else t.expand_dims(input, axis=0)


def _check_int_target(op: str, target: Tensor) -> None:
    if not _ts().isdtype(target.dtype, "integral"):
        raise TypeError(f"{op}: expected integer class indices as target, got {target.dtype}")


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                           reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C;
    target (input's shape) lists each sample's classes, ended by the first -1."""
    input = _amp.cast("multilabel_margin_loss", input)
    t = _ts()
    op = "multilabel_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x = _check_class_input(op, input)
    _check_int_target(op, target)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: inconsistent target size {tuple(target.shape)} for input of "
                         f"size {tuple(input.shape)}")
    y = t.reshape(target, tuple(x.shape)).astype(t.int64)
    n_cls = x.shape[1]
    if y.size and (int(t.min(y).item()) < -1 or int(t.max(y).item()) >= n_cls):
        raise IndexError(f"{op}: target values must be in [-1, {n_cls}), got "
                         f"[{int(t.min(y).item())}, {int(t.max(y).item())}]")
    # valid[n, k]: target slot k comes before the sample's first -1.
    valid = t.cumulative_prod((y != -1).astype(t.int64), axis=1) > 0
    idx = t.where(valid, y, 0)
    classes = t.arange(n_cls, dtype=t.int64)
    hit = (t.expand_dims(idx, axis=-1) == classes) & t.expand_dims(valid, axis=-1)  # (N, K, C)
    is_target = t.any(hit, axis=1)  # (N, C)
    x_y = t.take_along_axis(x, idx, axis=1)  # (N, K)
    z = t.maximum(1 - t.expand_dims(x_y, axis=-1) + t.expand_dims(x, axis=1), 0)  # (N, K, C)
    keep = t.expand_dims(valid, axis=-1) & ~t.expand_dims(is_target, axis=1)
    loss = t.sum(t.where(keep, z, 0.0), axis=(1, 2)) / n_cls
    if input.ndim == 1:
        loss = loss[0]
    return _reduce(loss, reduction, op)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                      reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge: sum over i != y of w[y] max(0, margin - x[y] + x[i])^p / C,
    p in {1, 2}; input (N, C) with target (N,), or (C,) with a 0-d or (1,) target."""
    input, weight = _amp.cast("multi_margin_loss", input, weight)
    t = _ts()
    op = "multi_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 supported, got {p}")
    x = _check_class_input(op, input)
    _check_int_target(op, target)
    n, n_cls = x.shape
    if target.size != n or target.ndim > 1:
        raise ValueError(f"{op}: inconsistent target size {tuple(target.shape)} for input of "
                         f"size {tuple(input.shape)}")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_cls):
        raise ValueError(f"{op}: weight must be a 1-D tensor of {n_cls} elements, got shape "
                         f"{tuple(weight.shape)}")
    y = t.reshape(target, (n,)).astype(t.int64)
    if n and (int(t.min(y).item()) < 0 or int(t.max(y).item()) >= n_cls):
        raise IndexError(f"{op}: target values must be in [0, {n_cls})")
    col = t.expand_dims(y, axis=-1)
    x_y = t.take_along_axis(x, col, axis=1)
    z = t.maximum(margin - x_y + x, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * t.expand_dims(t.take(weight, y, axis=0), axis=-1)
    z = t.where(t.arange(n_cls, dtype=t.int64) != col, z, 0.0)
    loss = t.sum(z, axis=1) / n_cls
    loss = t.reshape(loss, tuple(target.shape)) if input.ndim == 1 else loss
    return _reduce(loss, reduction, op)


def _check_triplet(op: str, anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(f"{op}: the anchor, positive, and negative tensors are expected to "
                         f"have the same number of dimensions, but got: anchor {anchor.ndim}D, "
                         f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")


def _triplet(dist: Callable[[Tensor, Tensor], Tensor], anchor: Tensor, positive: Tensor,
             negative: Tensor, margin: float, swap: bool) -> Tensor:
    t = _ts()
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = t.minimum(d_neg, dist(positive, negative))
    return t.maximum(margin + d_pos - d_neg, 0)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm distance over the last axis
    (pairwise_distance, eps added to the difference); swap uses min(d(a, n), d(p, n))."""
    from .misc import pairwise_distance
    anchor, positive, negative = _amp.cast("triplet_margin_loss", anchor, positive, negative)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    _check_triplet("triplet_margin_loss", anchor, positive, negative)
    loss = _triplet(lambda a, b: pairwise_distance(a, b, p, eps), anchor, positive, negative,
                    margin, swap)
    return _reduce(loss, reduction, "triplet_margin_loss")


Distance = Callable[[Tensor, Tensor], Tensor]


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Optional[Distance] = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """The triplet loss with any distance (default: pairwise_distance)."""
    from .misc import pairwise_distance
    op = "triplet_margin_with_distance_loss"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    _check_triplet(op, anchor, positive, negative)
    loss = _triplet(distance_function or pairwise_distance, anchor, positive, negative,
                    margin, swap)
    return _reduce(loss, reduction, op)


def _lengths(x: Any, op: str, what: str) -> Tensor:
    t = _ts()
    out = x if isinstance(x, Tensor) else t.asarray(x)
    if not t.isdtype(out.dtype, "integral"):
        raise TypeError(f"{op}: {what} must be integers, got {out.dtype}")
    return t.reshape(out.astype(t.int64), (-1,))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss: -log of the total probability of all
    frame alignments of each target (blanks between and around labels, repeats merged).
    log_probs (T, N, C) (or (T, C) unbatched) are log-probabilities over C classes incl.
    `blank`; targets (N, S) padded or 1-D concatenated (sum of target_lengths);
    input_lengths/target_lengths (N,) ints. 'mean' divides each loss by its target length
    (at least 1) and averages over the batch; zero_infinity zeroes impossible alignments'
    losses and gradients. The gradient is PyTorch's (see _ctc.CTCForward)."""
    from ._ctc import CTCForward, _shift
    log_probs = _amp.cast("ctc_loss", log_probs)
    t = _ts()
    op = "ctc_loss"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction "
                         "('mean', 'sum' or 'none')")
    if not t.isdtype(log_probs.dtype, "real floating"):
        raise TypeError(f"{op}: expected floating-point log_probs, got {log_probs.dtype}")
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise ValueError(f"{op}: log_probs must be (T, N, C) or (T, C), got shape "
                         f"{tuple(log_probs.shape)}")
    if not batched:
        log_probs = t.expand_dims(log_probs, axis=1)  # 1-D targets: one (concatenated) row
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise ValueError(f"{op}: blank must be in label range [0, {C}), got {blank}")
    in_len = _lengths(input_lengths, op, "input_lengths")
    tgt_len = _lengths(target_lengths, op, "target_lengths")
    if in_len.shape[0] != N or tgt_len.shape[0] != N:
        raise ValueError(f"{op}: input_lengths and target_lengths must have batch_size {N} "
                         f"entries, got {in_len.shape[0]} and {tgt_len.shape[0]}")
    lens_in = [int(v) for v in in_len.tolist()]
    lens_tgt = [int(v) for v in tgt_len.tolist()]
    if any(v < 0 or v > T for v in lens_in):
        raise ValueError(f"{op}: input_lengths must be in [0, {T}], got {lens_in}")
    if any(v < 0 for v in lens_tgt):
        raise ValueError(f"{op}: target_lengths must be non-negative, got {lens_tgt}")
    if t.isdtype(targets.dtype, "bool") or t.isdtype(targets.dtype, "complex floating"):
        raise TypeError(f"{op}: expected integer targets, got {targets.dtype}")
    targets = targets.astype(t.int64)
    s_max = max(lens_tgt, default=0)
    if targets.ndim == 2:
        if targets.shape[0] != N or targets.shape[1] < s_max:
            raise ValueError(f"{op}: padded targets must be (N={N}, S >= {s_max}), got shape "
                             f"{tuple(targets.shape)}")
        padded = targets[:, :s_max]
    elif targets.ndim == 1:
        if targets.shape[0] != sum(lens_tgt):
            raise ValueError(f"{op}: concatenated targets must have sum(target_lengths) = "
                             f"{sum(lens_tgt)} entries, got {targets.shape[0]}")
        starts = [sum(lens_tgt[:n]) for n in range(N)]
        total = max(sum(lens_tgt) - 1, 0)  # unused slots read any valid entry (masked below)
        idx = [[min(starts[n] + k, total) for k in range(s_max)] for n in range(N)]
        padded = t.take(targets, t.asarray(idx, dtype=t.int64, device=targets.device).reshape(-1),
                        axis=0).reshape((N, s_max)) if targets.shape[0] else \
            t.zeros((N, s_max), dtype=t.int64, device=targets.device)
    else:
        raise ValueError(f"{op}: targets must be 1-D (concatenated) or 2-D (padded), got "
                         f"shape {tuple(targets.shape)}")
    used = t.arange(s_max, dtype=t.int64, device=padded.device) < t.expand_dims(
        t.asarray(lens_tgt, dtype=t.int64, device=padded.device), axis=-1)
    padded = t.where(used, padded, blank)
    if padded.size and (int(t.min(padded).item()) < 0 or int(t.max(padded).item()) >= C):
        raise IndexError(f"{op}: target labels must be in [0, {C}), got values in "
                         f"[{int(t.min(padded).item())}, {int(t.max(padded).item())}]")
    # Extended labels: blank, l1, blank, l2, ..., blank; a label may be reached from two
    # places back (skipping the blank) unless it repeats the label before it.
    L = 2 * s_max + 1
    ext = t.full((N, L), blank, dtype=t.int64, device=padded.device)
    if s_max:
        ext[:, 1::2] = padded
    skip = (ext != blank) & (ext != _shift(ext, 2, blank))
    dev = log_probs.device
    nll = CTCForward.apply(log_probs, ext, skip, in_len.to(dev), tgt_len.to(dev), zero_infinity)
    if reduction == "mean":
        return t.mean(nll / t.maximum(tgt_len.to(dev), 1).astype(nll.dtype))
    if reduction == "sum":
        return t.sum(nll)
    return nll if batched else nll[0]
