"""Loss functions with PyTorch's `reduction=` ('mean' | 'sum' | 'none') semantics: the C++
bindings themselves (csrc/python/bind_loss.cpp), and ctc_loss."""
from __future__ import annotations

from typing import Any

from ..._C import Tensor
from ...amp import _policy as _amp


def _ts() -> Any:
    import tessera
    return tessera


# The C++ ops themselves (csrc/python/bind_loss.cpp: PyTorch's signatures, the legacy
# size_average/reduce pair, checks, autocast and gradients in csrc/ops/nn/loss*.cpp).
from ..._C import (nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss,  # noqa: E402,F401
                  huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, kl_div,
                  soft_margin_loss, margin_ranking_loss, hinge_embedding_loss, poisson_nll_loss,
                  gaussian_nll_loss, cosine_embedding_loss, multilabel_soft_margin_loss,
                  multilabel_margin_loss, multi_margin_loss, triplet_margin_loss,
                  triplet_margin_with_distance_loss)


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
