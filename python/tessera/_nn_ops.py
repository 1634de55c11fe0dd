"""PyTorch's nn ops in the top-level namespace, with torch's top-level signatures
(torch.convolution, torch.dropout(input, p, train), torch.embedding(weight, indices),
torch.layer_norm, torch.batch_norm, the RNN cells, the losses with integer reductions, ...):
the C++ bindings of _C._torch_nn (csrc/python/bind_torch_nn.cpp, bind_loss.cpp). Functions
with the same signature as nn.functional's are its bindings themselves (the pools, rms_norm,
conv2d, ...; `functional_aliases` names the rest)."""
from __future__ import annotations

from typing import Any, Callable, Dict

from . import _C

# torch.max_pool{1,2,3}d, max_pool1d_with_indices, avg_pool1d, adaptive_avg_pool1d: the
# nn.functional bindings themselves (csrc/python/bind_conv.cpp, bind_pool.cpp; their
# signatures take torch's top-level arguments). torch.adaptive_max_pool1d always returns
# (values, indices): the _with_indices binding.
from ._C import (max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,  # noqa: E402,F401
                 avg_pool1d, adaptive_avg_pool1d, rms_norm)
# torch's own signatures (csrc/python/bind_torch_nn.cpp); the losses with the reduction as
# torch's enum (0 none, 1 mean, 2 sum; csrc/python/bind_loss.cpp).
from ._C._torch_nn import (affine_grid_generator, alpha_dropout, batch_norm,  # noqa: F401
                           binary_cross_entropy_with_logits, convolution, cosine_embedding_loss,
                           ctc_loss,
                           dropout, embedding, feature_alpha_dropout, feature_dropout,
                           grid_sampler, group_norm, gru_cell, hinge_embedding_loss,
                           instance_norm, kl_div, layer_norm, lstm_cell, margin_ranking_loss,
                           poisson_nll_loss, rnn_relu_cell, rnn_tanh_cell, rrelu,
                           triplet_margin_loss)
adaptive_max_pool1d = _C.adaptive_max_pool1d_with_indices

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "affine_grid_generator", "alpha_dropout", "batch_norm", "binary_cross_entropy_with_logits", "convolution", "cosine_embedding_loss", "ctc_loss", "dropout", "embedding", "feature_alpha_dropout", "feature_dropout", "grid_sampler", "group_norm", "gru_cell", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "lstm_cell", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "poisson_nll_loss", "rms_norm", "rnn_relu_cell", "rnn_tanh_cell", "rrelu", "triplet_margin_loss"]

# torch.conv2d, torch.pdist, ...: nn.functional's bindings of the same signature
_BOUND_ALIASES = ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
                  "selu celu cosine_similarity pairwise_distance pdist pixel_shuffle "
                  "pixel_unshuffle channel_shuffle native_channel_shuffle bilinear").split()


def functional_aliases() -> Dict[str, Callable[..., Any]]:
    """torch.conv2d, torch.selu, ...: nn.functional's bindings of the same signature."""
    return {name: getattr(_C, name) for name in _BOUND_ALIASES}
