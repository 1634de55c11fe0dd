"""Loss functions with PyTorch's `reduction=` ('mean' | 'sum' | 'none') semantics: the C++
bindings themselves (csrc/python/bind_loss.cpp)."""
from __future__ import annotations

# The C++ ops themselves (csrc/python/bind_loss.cpp: PyTorch's signatures, the legacy
# size_average/reduce pair, checks, autocast and gradients in csrc/ops/nn/loss*.cpp).
from ..._C import (nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss,  # noqa: F401
                  huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, kl_div,
                  soft_margin_loss, margin_ranking_loss, hinge_embedding_loss, poisson_nll_loss,
                  gaussian_nll_loss, cosine_embedding_loss, multilabel_soft_margin_loss,
                  multilabel_margin_loss, multi_margin_loss, triplet_margin_loss,
                  triplet_margin_with_distance_loss, ctc_loss)
