"""linear, bilinear, one_hot, embedding, scaled_dot_product_attention, pairwise_distance,
cosine_similarity: each the C++ binding itself (csrc/python/)."""
from __future__ import annotations

from ..._C import (linear, bilinear, one_hot, embedding,  # noqa: F401
                   pairwise_distance, cosine_similarity)
from .attention import scaled_dot_product_attention  # noqa: F401
