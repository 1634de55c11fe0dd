"""scaled_dot_product_attention. Without a mask tensor and dropout: the fused (flash-style)
tensor-core kernel on CUDA for float16/bfloat16/float32 (csrc/ops/attention.h: no (L, S)
scores); else causal attention through GEMMs on the block lower triangle of the scores
(csrc/ops/attention_causal.h); else matmul, one fused (scaled, optionally causal) softmax
kernel, matmul. The composite path with a mask or dropout."""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

from ... import _C
from ..._C import Tensor
from ...amp import _policy as _amp
from ...autograd.function import Function, FunctionCtx
from ._fused import FUSED_DTYPES, fusable
from .activation import softmax

# Read at each call: _FLASH_ON_CUDA = False turns the CUDA kernel off (A/B timing against
# the matmul path, benchmarks/bench_cuda_attention.py). Tests set _FLASH_ON_CPU to run the
# fused kernel on CPU as well. By default the CPU keeps the matmul + fused softmax path: its
# BLAS matmuls beat the CPU flash kernel's per-row loops (measured: 26 vs 63 ms forward,
# 129 vs 214 ms forward+backward at (8, 6, 256, 64) causal float32 on 2 cores).
_FLASH_ON_CUDA = True
_FLASH_ON_CPU = False
# On CUDA the covered dtypes run the tensor-core kernel (cuda/attention_mma.cu) at every
# size, float32 by 3xTF32 at float32 accuracy (as PyTorch's memory-efficient kernel): one
# kernel each way instead of the GEMM paths' several, and no score tensor. H100, kernel time
# at the char-GPT shape (64, 6, 256, 64) causal, fwd + bwd: bf16 0.17 ms (0.34 ms wall with
# the host, matmul path 0.40), float32 0.12 + 0.32 ms (PyTorch's memory-efficient kernels
# 0.52 ms, its sdpa fwd+bwd 0.78 ms between CUDA events; the old CUDA-core kernel 1.6). In
# the bf16 char-GPT step 10.1-10.4 vs 12.4-13.3 ms.
# The CUDA kernel covers these dtypes (float64 takes the GEMM paths) and head dims.
_FLASH_CUDA_DTYPES = ("float16", "bfloat16", "float32")
_FLASH_MAX_HEAD_DIM = 128
# float32 above this head dim keeps the GEMM paths: at head dim 128 its 3xTF32 backward runs
# one 4-warp block per SM and loses to them ((32, 8, 512, 128) causal: 0.50 + 2.77 ms kernel
# time vs the block path's 2.54 ms wall) -- unless their (N, L, S) float32 score tensor would
# pass _FLASH_MIN_SCORE_BYTES: there the fused kernel trades a little speed for O(L) memory.
_FLASH_MAX_HEAD_DIM_F32 = 64
_FLASH_MIN_SCORE_BYTES = 1 << 30
# Row block of the causal block path (Note [Causal block attention]), a multiple of 64 rows
# (whole GEMM tiles); it applies from two blocks on (L >= 2 * block). Longer L takes larger
# blocks so each product stays at most 8 GEMM calls: with b blocks the GEMMs do
# (b + 1) / (2 b) of the full work.
_CAUSAL_BLOCK = 64
_CAUSAL_MAX_BLOCKS = 8
# 16-bit GEMMs are so fast that the extra GEMM calls cost more host time than they save GPU
# time (H100, char-GPT shape, bf16 fwd+bwd: 0.60 ms blocked vs 0.43 ms full; float32 0.89 vs
# 0.97 ms), and the CPU converts 16-bit operands to float32 per call.
_CAUSAL_DTYPES = ("float32", "float64")
# Whether the path copies q/k/v/grad to contiguous first. Heads split from one projection
# ((B, H, T, D) views whose B and H strides do not merge) otherwise send every block GEMM
# through cuBLAS's pointer-array batched GEMM, with a pointer-table kernel per call.
_CAUSAL_CONTIGUOUS = True


def _ts() -> Any:
    import tessera
    return tessera


def _score_bytes(q: Tensor, k: Tensor) -> int:
    """Bytes of the float32 (..., L, S) score tensor the GEMM paths would build."""
    n = 4 * q.shape[-2] * k.shape[-2]
    for d in q.shape[:-2]:
        n *= d
    return n


def _flash_applies(q: Tensor, k: Tensor, v: Tensor) -> bool:
    """Whether the fused kernel takes q/k/v: floating, one dtype and device, equal (not
    broadcast) batch dims, and a device/dtype/head dim the kernel serves."""
    if q.ndim < 3 or k.ndim != q.ndim or v.ndim != q.ndim:
        return False
    if not (q.dtype == k.dtype == v.dtype and q.device == k.device == v.device):
        return False
    if not (tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2])):
        return False
    dtype, device = str(q.dtype), q.device.type
    if device == "cuda":
        head = max(q.shape[-1], v.shape[-1])
        if not (_FLASH_ON_CUDA and dtype in _FLASH_CUDA_DTYPES and head <= _FLASH_MAX_HEAD_DIM):
            return False
        return (dtype != "float32" or head <= _FLASH_MAX_HEAD_DIM_F32
                or _score_bytes(q, k) > _FLASH_MIN_SCORE_BYTES)
    return device == "cpu" and _FLASH_ON_CPU and dtype in FUSED_DTYPES


def _causal_block(q: Tensor, k: Tensor, v: Tensor) -> int:
    """The row block for the causal block path, or 0 where it does not apply: fusable
    float32/float64 q/k/v of one device with equal batch dims and L >= 2 blocks. Asked only
    where the fused kernel does not apply: on CUDA that leaves float64, float32 head dims
    above 64 (up to a huge score tensor), and _FLASH_ON_CUDA = False."""
    if not (q.ndim >= 3 and k.ndim == q.ndim and v.ndim == q.ndim and fusable(q, k, v)):
        return 0
    if str(q.dtype) not in _CAUSAL_DTYPES:
        return 0
    if not (tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2])):
        return 0
    L, S = q.shape[-2], k.shape[-2]
    block = max(_CAUSAL_BLOCK, -(-L // (_CAUSAL_MAX_BLOCKS * _CAUSAL_BLOCK)) * _CAUSAL_BLOCK)
    return block if S > 0 and L >= 2 * block else 0


class CausalBlockAttention(Function):
    """Causal softmax(scale * q k^T) v for q (..., L, E), k (..., S, E), v (..., S, Ev) with
    equal batch dims, its GEMMs restricted to the block lower triangle of the scores; saves
    the probabilities (..., L, S) as the matmul path does."""

    @staticmethod
    def forward(ctx: FunctionCtx, q: Tensor, k: Tensor, v: Tensor,  # type: ignore[override]
                scale: float, block: int) -> Tensor:
        qkv = (q.contiguous(), k.contiguous(), v.contiguous()) if _CAUSAL_CONTIGUOUS else (q, k, v)
        out, p = _C._causal_block_attention(*qkv, scale, block)
        # The inputs themselves for the create_graph backward (which must reach them), the
        # contiguous copies for the kernels.
        ctx.save_for_backward(q, k, v, p)
        ctx.qkv = qkv
        ctx.meta = (scale, block)
        return out

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        q, k, v, p = ctx.saved_tensors
        scale, block = ctx.meta
        if not _C.is_grad_enabled():
            g = g.contiguous() if _CAUSAL_CONTIGUOUS else g
            dq, dk, dv = _C._causal_block_attention_backward(*ctx.qkv, p, g, scale, block)
        else:
            dq, dk, dv = _flash_grads_composite(q, k, v, g, scale, True)
        return dq, dk, dv, None, None


def _heads(x: Tensor) -> Tensor:
    """(..., R, C) as the kernel's (B, H, R, C) (or (N, R, C) for one leading dim): a view
    wherever the strides allow, so q/k/v split from one projection are read in place."""
    lead = tuple(x.shape[:-2])
    if len(lead) <= 2:
        return x
    return _ts().reshape(x, (math.prod(lead[:-1]), lead[-1]) + tuple(x.shape[-2:]))


def _dropout_draw(p: float, device: Any) -> Tuple[int, int]:
    """(seed, offset) for one fused-attention dropout draw on `device`: the default
    generator's next offset, taken as the dropout op takes it, so ts.manual_seed reproduces the
    mask (during a CUDA graph capture, the graph-safe pair of Note [Graph-safe RNG])."""
    from .dropout import _generator
    seed, offset = _generator().next_philox(device)
    return int(seed), int(offset)


def attention_dropout_mask(shape: Tuple[int, ...], p: float, seed: int, offset: int,
                           device: Any = None, dtype: Any = None) -> Tensor:
    """The float mask (N, L, S) of keep / (1 - p) factors that the fused kernels apply for
    (p, seed, offset) (Note [Attention dropout mask] in csrc/ops/random_math.h)."""
    n, L, S = shape
    return _C._attention_dropout_mask(n, L, S, p, seed, offset, dtype, device)


class FlashAttention(Function):
    """dropout(softmax(scale * q k^T [causal])) v for q (..., L, E), k (..., S, E),
    v (..., S, Ev) with equal batch dims, by the fused kernel; the backward recomputes the
    probabilities from the saved logsumexp and the dropout mask from (seed, offset) (see
    Note [Fused kernels and higher-order gradients] in _fused.py and Note [Attention dropout]
    in csrc/ops/attention.h): no score or mask tensor is stored. On CUDA the output of
    (B, H, L, E) inputs is laid out (B, L, H, Ev), as PyTorch's."""

    @staticmethod
    def forward(ctx: FunctionCtx, q: Tensor, k: Tensor, v: Tensor,  # type: ignore[override]
                scale: float, causal: bool, dropout_p: float = 0.0) -> Tensor:
        seed, offset = _dropout_draw(dropout_p, q.device) if dropout_p > 0.0 else (0, 0)
        out, lse = _C._flash_attention(_heads(q), _heads(k), _heads(v), scale, causal,
                                       dropout_p, seed, offset)
        # The inputs themselves (not their views made here, outside the graph), so that the
        # create_graph backward differentiates through to them.
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.meta = (scale, causal, dropout_p, seed, offset)
        shape = tuple(q.shape[:-1]) + (v.shape[-1],)
        return out if tuple(out.shape) == shape else _ts().reshape(out, shape)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        t = _ts()
        q, k, v, out, lse = ctx.saved_tensors
        scale, causal, dropout_p, seed, offset = ctx.meta
        q4, k4, v4 = _heads(q), _heads(k), _heads(v)
        g4 = t.reshape(g, tuple(out.shape))
        if not _C.is_grad_enabled():
            dq, dk, dv = _C._flash_attention_backward(q4, k4, v4, out, lse, g4, scale, causal,
                                                      dropout_p, seed, offset)
        else:
            mask = None
            if dropout_p > 0.0 and _C._cuda.attention_lse_from_cudnn_dropout(lse):
                raise NotImplementedError(
                    "scaled_dot_product_attention: double backward through dropout is not "
                    "available after cuDNN's fused attention (its dropout mask cannot be "
                    "rebuilt); call ts.backends.cuda.enable_cudnn_sdp(False) before the forward")
            if dropout_p > 0.0:
                n = math.prod(tuple(q.shape[:-2]))
                mask = attention_dropout_mask((n, q.shape[-2], k.shape[-2]), dropout_p, seed,
                                              offset, q.device, q.dtype)
                mask = t.reshape(mask, tuple(q4.shape[:-1]) + (k4.shape[-2],))
            dq, dk, dv = _flash_grads_composite(q4, k4, v4, g4, scale, causal, mask)
        return (t.reshape(dq, tuple(q.shape)), t.reshape(dk, tuple(k.shape)),
                t.reshape(dv, tuple(v.shape)), None, None, None)


def _flash_grads_composite(q: Tensor, k: Tensor, v: Tensor, g: Tensor, scale: float,
                           causal: bool, mask: Optional[Tensor] = None
                           ) -> Tuple[Tensor, Tensor, Tensor]:
    """The same gradients from differentiable ops (for create_graph=True); mask: the dropout
    factors (keep / (1 - p)) of the forward, or None."""
    t = _ts()
    p = _C.attention_softmax(t.matmul(q, k.mT), scale, causal)
    pd = p if mask is None else p * mask.to(p.dtype)
    dv = t.matmul(pd.mT, g)
    dp = t.matmul(g, v.mT)
    if mask is not None:
        dp = dp * mask.to(dp.dtype)
    ds = p * (dp - t.sum(dp * p, axis=-1, keepdims=True)) * scale
    return t.matmul(ds, k), t.matmul(ds.mT, q), dv


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last axis, with 0 (and zero gradients) for rows a mask hid entirely,
    as PyTorch's sdpa gives (its _safe_softmax); plain softmax would give NaN there. Such
    rows are softmaxed as zeros (finite) and then replaced, so no NaN reaches the backward.
    Rows holding NaN stay NaN."""
    t = _ts()
    if scores.shape[-1] == 0:
        return softmax(scores, dim=-1)
    # No data-dependent branch: asking whether any row is dead would synchronize with a GPU.
    dead = t.max(scores.detach(), axis=-1, keepdims=True) == -math.inf
    return t.where(dead, 0.0, softmax(t.where(dead, 0.0, scores), dim=-1))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Optional[Tensor] = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over (..., L, E) x (..., S, E) x (..., S, Ev) -> (..., L, Ev).

    A bool mask keeps True positions; a float mask is added to the scores. is_causal lets
    query i attend to keys j <= i (PyTorch's top-left aligned tril(ones(L, S))). scale
    defaults to 1/sqrt(E); enable_gqa repeats key/value heads to match the query's.
    """
    query, key, value, attn_mask = _amp.cast(_amp.LOWER, query, key, value, attn_mask)
    t = _ts()
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal")
    L, S = query.shape[-2], key.shape[-2]
    if scale is None:
        # Empty head dims give all-zero scores whatever the scale (PyTorch: uniform weights).
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = t.repeat(key, rep, axis=-3)
        value = t.repeat(value, rep, axis=-3)
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError("scaled_dot_product_attention: dropout_p has to be between 0 and 1, "
                         f"but got {dropout_p}")
    if attn_mask is None and _flash_applies(query, key, value):
        return FlashAttention.apply(query, key, value, float(scale), bool(is_causal),
                                    float(dropout_p))
    block = _causal_block(query, key, value) if is_causal and attn_mask is None \
        and dropout_p == 0.0 else 0
    if block:
        return CausalBlockAttention.apply(query, key, value, float(scale), block)
    scores = t.matmul(query, key.mT)
    if attn_mask is None and dropout_p == 0.0 and fusable(scores):
        return t.matmul(_C.attention_softmax(scores, float(scale), bool(is_causal)), value)
    scores = scores * scale
    if is_causal:
        causal = t.tril(t.ones((L, S), dtype=t.bool)).to(scores.device)  # built on the host
        scores = t.where(causal, scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == t.bool:
            scores = t.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
        attn = _safe_softmax(scores)
    else:
        attn = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        from .dropout import dropout
        attn = dropout(attn, dropout_p, True)
    return t.matmul(attn, value)
