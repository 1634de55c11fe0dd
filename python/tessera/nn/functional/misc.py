"""linear, bilinear, one_hot, embedding, scaled_dot_product_attention, distances."""
from __future__ import annotations

from typing import Any, Optional

from ... import _C
from ..._C import Tensor
from ...amp import _policy as _amp
from .attention import scaled_dot_product_attention  # noqa: F401


def _ts() -> Any:
    import tessera
    return tessera


linear = _C.linear  # the C++ op itself (csrc/python/bind_nn.cpp)


@_amp.op("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Optional[Tensor] = None) -> Tensor:
    """y_k = x1 W_k x2 + b_k, weight (out, in1, in2)."""
    t = _ts()
    rows = t.matmul(t.expand_dims(input1, axis=(-2, -3)), weight)[..., 0, :]  # (..., out, in2)
    y = t.sum(rows * t.expand_dims(input2, axis=-2), axis=-1)
    return y + bias if bias is not None else y


class OneHotError(ValueError, RuntimeError):
    """Class values outside [0, num_classes), or nothing to infer num_classes from:
    ValueError for the bad argument, RuntimeError as PyTorch raises."""


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last axis (classes compared against arange)."""
    t = _ts()
    if not t.isdtype(input.dtype, "integral"):
        raise TypeError(f"one_hot: expected an integer tensor of class indices, got "
                        f"{input.dtype}")
    if num_classes < 0:
        if not input.size:
            raise OneHotError("one_hot: cannot infer the number of classes from an empty "
                              "tensor; pass num_classes")
        num_classes = int(t.max(input).item()) + 1
    if input.size and (int(t.min(input).item()) < 0 or int(t.max(input).item()) >= num_classes):
        raise OneHotError(f"one_hot: class values must be in [0, {num_classes})")
    classes = t.arange(num_classes, dtype=input.dtype)
    return (t.expand_dims(input, axis=-1) == classes).astype(t.int64)


# embedding is the C++ binding (csrc/python/bind_embedding.cpp)
embedding = _C.embedding


# pairwise_distance is the C++ binding (csrc/python/bind_loss.cpp), the op triplet_margin_loss uses
pairwise_distance = _C.pairwise_distance


# cosine_similarity is the C++ binding (csrc/python/bind_similarity.cpp)
cosine_similarity = _C.cosine_similarity
