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


# one_hot is the C++ binding (csrc/python/bind_distance.cpp)
one_hot = _C.one_hot


# embedding is the C++ binding (csrc/python/bind_embedding.cpp)
embedding = _C.embedding


# pairwise_distance is the C++ binding (csrc/python/bind_loss.cpp), the op triplet_margin_loss uses
pairwise_distance = _C.pairwise_distance


# cosine_similarity is the C++ binding (csrc/python/bind_similarity.cpp)
cosine_similarity = _C.cosine_similarity
