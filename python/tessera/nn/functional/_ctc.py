"""CTC (connectionist temporal classification) negative log-likelihood: the forward (alpha)
and backward (beta) recursions in log space over the blank-extended label sequence,
vectorized over the batch and the extended positions, one step per time frame."""
from __future__ import annotations

from typing import Any, List, Tuple

from ..._C import Tensor
from ...autograd.function import Function, FunctionCtx


def _ts() -> Any:
    import tessera
    return tessera


def _shift(x: Tensor, k: int, fill: Any, toward_end: bool = True) -> Tensor:
    """x moved k places along the last axis (toward higher indices, or lower), `fill` in
    the vacated places."""
    t = _ts()
    k = min(k, x.shape[-1])
    pad = t.full(tuple(x.shape[:-1]) + (k,), fill, dtype=x.dtype, device=x.device)
    if toward_end:
        return t.concat([pad, x[..., :x.shape[-1] - k]], axis=-1)
    return t.concat([x[..., k:], pad], axis=-1)


class CTCForward(Function):
    """(log_probs (T, N, C), extended labels (N, L), allow_skip (N, L), input lengths (N,),
    target lengths (N,), zero_infinity) -> per-sample NLL (N,). The gradient is PyTorch's:
    exp(lp) - exp(log sum_{s: l'_s = c} alpha_t(s) beta_t(s) + nll - lp) for t < T_n
    (which is the gradient w.r.t. the logits when lp = log_softmax(logits))."""

    @staticmethod
    def forward(ctx: FunctionCtx, log_probs: Tensor, ext: Tensor,  # type: ignore[override]
                skip: Tensor, in_len: Tensor, tgt_len: Tensor, zero_infinity: bool) -> Tensor:
        t = _ts()
        T, N, _ = log_probs.shape
        L = ext.shape[1]
        ninf = float("-inf")
        lp_ext = t.take_along_axis(log_probs, t.broadcast_to(t.expand_dims(ext, axis=0), (T, N, L)),
                                   axis=2)  # (T, N, L)
        pos = t.arange(L, dtype=t.int64, device=log_probs.device)
        live = t.expand_dims(in_len, axis=-1)  # (N, 1)
        alphas: List[Tensor] = []
        a = t.full((N, L), ninf, dtype=log_probs.dtype, device=log_probs.device)
        for step in range(T):
            if step == 0:
                new = t.where(pos < 2, lp_ext[0], ninf)
            else:
                s2 = t.where(skip, _shift(a, 2, ninf), ninf)
                new = t.logaddexp(t.logaddexp(a, _shift(a, 1, ninf)), s2) + lp_ext[step]
            a = t.where(step < live, new, a)
            alphas.append(a)
        last = 2 * tgt_len  # the final blank; the final label sits just before it
        end = t.squeeze(t.take_along_axis(a, t.expand_dims(last, axis=-1), axis=1), axis=1)
        lab = t.squeeze(t.take_along_axis(a, t.expand_dims(t.maximum(last - 1, 0), axis=-1),
                                          axis=1), axis=1)
        ll = t.where(tgt_len > 0, t.logaddexp(end, lab), end)
        # No frames: the empty labelling has probability 1, any other 0.
        ll = t.where(in_len == 0, t.where(tgt_len == 0, 0.0, ninf), ll).astype(log_probs.dtype)
        nll = -ll
        if zero_infinity:
            nll = t.where(t.isinf(nll), 0.0, nll).astype(log_probs.dtype)
        ctx.save_for_backward(log_probs, ext, skip, in_len, tgt_len, -ll)
        ctx.alphas = t.stack(alphas, axis=0) if T else t.zeros((0, N, L), dtype=log_probs.dtype)
        ctx.lp_ext = lp_ext
        ctx.zero_infinity = zero_infinity
        return nll

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Tensor) -> Tuple[Any, ...]:  # type: ignore[override]
        t = _ts()
        log_probs, ext, skip, in_len, tgt_len, nll = ctx.saved_tensors
        T, N, C = log_probs.shape
        L = ext.shape[1]
        ninf = float("-inf")
        lp_ext = ctx.lp_ext
        pos = t.arange(L, dtype=t.int64, device=log_probs.device)
        last = t.expand_dims(2 * tgt_len, axis=-1)
        init_mask = (pos == last) | ((pos == last - 1) & (last > 0))
        skip_up = _shift(skip, 2, False, toward_end=False)  # may beta(s) come from s + 2?
        ends = t.expand_dims(in_len - 1, axis=-1)
        betas: List[Tensor] = [None] * T  # type: ignore[list-item]
        b = t.full((N, L), ninf, dtype=log_probs.dtype, device=log_probs.device)
        for step in range(T - 1, -1, -1):
            s2 = t.where(skip_up, _shift(b, 2, ninf, toward_end=False), ninf)
            new = t.logaddexp(t.logaddexp(b, _shift(b, 1, ninf, toward_end=False)), s2) \
                + lp_ext[step]
            start = t.where(init_mask, lp_ext[step], ninf)
            b = t.where(step == ends, start, t.where(step < ends, new, ninf))
            betas[step] = b
        if not T:
            return (t.zeros_like(log_probs),) + (None,) * 5
        ab = ctx.alphas + t.stack(betas, axis=0)  # (T, N, L)
        m = t.max(ab, axis=2, keepdims=True)
        m = t.where(t.isfinite(m), m, 0.0)
        acc = t.zeros((T, N, C), dtype=log_probs.dtype, device=log_probs.device)
        acc.scatter_add_(2, t.broadcast_to(t.expand_dims(ext, axis=0), (T, N, L)), t.exp(ab - m))
        lcab = t.log(acc) + m
        g = t.exp(log_probs) - t.exp(lcab + t.reshape(nll, (1, N, 1)) - log_probs)
        frames = t.reshape(t.arange(T, dtype=t.int64, device=log_probs.device), (T, 1, 1))
        keep = frames < t.reshape(in_len, (1, N, 1))
        if ctx.zero_infinity:
            keep = keep & t.reshape(~t.isinf(nll), (1, N, 1))
        g = t.where(keep, g, 0.0) * t.reshape(grad, (1, N, 1))
        return (g.astype(log_probs.dtype),) + (None,) * 5
