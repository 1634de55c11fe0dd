"""tessera.nn.functional: stateless layers, activations and losses (PyTorch's names and
argument conventions), written over differentiable tessera ops."""
from .activation import (relu, relu6, hardtanh, leaky_relu, elu, celu, selu, sigmoid,  # noqa: F401
                         logsigmoid, tanh, softplus, silu, mish, hardsigmoid, hardswish,
                         softsign, tanhshrink, erf, erfc, gelu, softmax, log_softmax, softmin,
                         logsumexp, glu)
# The C++ bindings themselves (csrc/python/bind_conv.cpp, bind_nn.cpp, bind_norm.cpp,
# bind_dropout.cpp: PyTorch's signatures; checks, autocast and gradients in csrc/ops).
from ..._C import (pad, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                   conv_transpose3d, batch_norm, layer_norm, rms_norm, group_norm, instance_norm,
                   local_response_norm, normalize, dropout, dropout1d, dropout2d, dropout3d,
                   alpha_dropout, feature_alpha_dropout)
from .misc import (linear, bilinear, one_hot, embedding,  # noqa: F401
                   scaled_dot_product_attention, pairwise_distance, cosine_similarity)
from .loss import (gaussian_nll_loss, margin_ranking_loss, hinge_embedding_loss,  # noqa: F401
                   multilabel_soft_margin_loss, multilabel_margin_loss, multi_margin_loss,
                   triplet_margin_loss, triplet_margin_with_distance_loss, ctc_loss)
from .loss import (nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss,  # noqa: F401
                   binary_cross_entropy, binary_cross_entropy_with_logits, kl_div,
                   poisson_nll_loss, soft_margin_loss, cosine_embedding_loss)
from .interp import interpolate, upsample, upsample_nearest, upsample_bilinear  # noqa: F401
from .pooling import (max_pool1d, max_pool2d, max_pool3d, avg_pool1d, avg_pool2d,  # noqa: F401
                      avg_pool3d, max_pool1d_with_indices, max_pool2d_with_indices,
                      max_pool3d_with_indices, adaptive_avg_pool1d, adaptive_avg_pool2d,
                      adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
                      adaptive_max_pool3d, adaptive_max_pool1d_with_indices,
                      adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices,
                      max_unpool1d, max_unpool2d, max_unpool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                      unfold, fold)
from .activation import (threshold, hardshrink, softshrink, prelu, rrelu,  # noqa: F401
                         softmax2d, relu_, elu_, celu_, selu_, leaky_relu_, hardtanh_,
                         threshold_, rrelu_)
from ..._C import (pixel_shuffle, pixel_unshuffle, channel_shuffle,  # noqa: F401
                   native_channel_shuffle)  # csrc/python/bind_shuffle.cpp
from ..._C import embedding_bag  # noqa: F401  (csrc/python/bind_embedding.cpp)
from .grid_sample import affine_grid, grid_sample  # noqa: F401
from ..._C import gumbel_softmax, pdist  # noqa: F401  (C++ bindings)
from ..._C import (fractional_max_pool2d, fractional_max_pool3d,  # noqa: F401
                   fractional_max_pool2d_with_indices,
                   fractional_max_pool3d_with_indices)  # csrc/python/bind_fractional_pool.cpp
