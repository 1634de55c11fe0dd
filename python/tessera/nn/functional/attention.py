"""scaled_dot_product_attention: the C++ op csrc/ops/nn/attention.h, which picks the path and
records its own autograd node (formulas in csrc/autograd/formulas_nn.cpp). Without a mask: the
fused (flash-style) kernel on CUDA for float16/bfloat16/float32 (no (L, S) scores, dropout
inside the kernel); else causal attention through GEMMs on the block lower triangle of the
scores; else matmul, one fused (scaled, optionally causal) softmax kernel, matmul. With a mask
or dropout off the fused kernel: the composite of ops.

The path settings (which device runs the fused kernel, head-dim limits, the causal row block)
live in C++: ``attention_settings()`` reads them, ``attention_settings(flash_on_cpu=True)``
changes them for a ``with`` block (tests force the CPU reference kernel so), and
``attention_trace()`` records which fused path each call took.
"""
from __future__ import annotations

import contextlib as _contextlib
import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Tuple

from ... import _C
from ..._C import Tensor

scaled_dot_product_attention = _C.scaled_dot_product_attention


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last axis, with 0 (and zero gradients) for rows a mask hid entirely,
    as PyTorch's sdpa gives (the C++ op's safe_softmax, csrc/ops/nn/attention.h), for
    MultiheadAttention with weights. Written with public ops, which tessera.onnx traces."""
    import tessera as t  # the traced public functions
    from .activation import softmax
    if scores.shape[-1] == 0:
        return softmax(scores, dim=-1)
    dead = t.max(scores.detach(), axis=-1, keepdims=True) == -_math.inf
    return t.where(dead, 0.0, softmax(t.where(dead, 0.0, scores), dim=-1))


class _Settings(_contextlib.ContextDecorator):
    def __init__(self, changes: Dict[str, Any]) -> None:
        self._changes = changes
        self._saved: List[Dict[str, Any]] = []

    def __enter__(self) -> Dict[str, Any]:
        self._saved.append(_C._attention_settings())
        _C._set_attention_settings(**self._changes)
        return _C._attention_settings()

    def __exit__(self, *exc: Any) -> None:
        _C._set_attention_settings(**self._saved.pop())


def attention_settings(**changes: Any) -> Any:
    """Without arguments: the current path settings (a dict: flash_on_cuda, flash_on_cpu,
    flash_max_head_dim, flash_max_head_dim_f32, flash_min_score_bytes, causal_block,
    causal_max_blocks, causal_dtypes, causal_contiguous). With keywords: a context manager
    that sets them for its block and restores them after."""
    if not changes:
        return _C._attention_settings()
    return _Settings(changes)


class _Trace(list):
    """The fused paths taken, as (path, device type, block) tuples; read at each use."""

    def _sync(self) -> None:
        self.extend(_C._attention_trace(True))

    def __len__(self) -> int:
        self._sync()
        return list.__len__(self)

    def __iter__(self) -> Iterator[Tuple[str, str, int]]:
        self._sync()
        return list.__iter__(self)

    def __eq__(self, other: object) -> bool:
        self._sync()
        return list.__eq__(self, other)

    def __getitem__(self, i: Any) -> Any:
        self._sync()
        return list.__getitem__(self, i)


@_contextlib.contextmanager
def attention_trace() -> Iterator[List[Tuple[str, str, int]]]:
    """A live list of the fused paths ("flash" or "causal_block", device type, row block) that
    scaled_dot_product_attention calls take inside the block."""
    _C._attention_trace(True)
    calls = _Trace()
    try:
        yield calls
    finally:
        calls._sync()
        _C._attention_trace(False)


def attention_dropout_mask(shape: Tuple[int, ...], p: float, seed: int, offset: int,
                           device: Any = None, dtype: Any = None) -> Tensor:
    """The float mask (N, L, S) of keep / (1 - p) factors that the fused kernels apply for
    (p, seed, offset) (Note [Attention dropout mask] in csrc/ops/random_math.h)."""
    n, L, S = shape
    return _C._attention_dropout_mask(n, L, S, p, seed, offset, dtype, device)
