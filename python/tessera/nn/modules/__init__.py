"""Layer classes (PyTorch's names, arguments and state-dict layouts)."""
from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import Identity, Linear, Flatten, Unflatten, Embedding  # noqa: F401
from .conv import (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                   MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d,
                   AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool2d)
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm, RMSNorm, GroupNorm  # noqa: F401
from .activation import (ReLU, ReLU6, SiLU, Mish, Hardswish, Hardsigmoid, SELU, Sigmoid,  # noqa: F401
                         LogSigmoid, Tanh, Softsign, Tanhshrink, GELU, ELU, CELU, LeakyReLU,
                         Hardtanh, Softplus, Softmax, LogSoftmax, Softmin, GLU, Dropout,
                         Dropout2d)
from .loss import (PoissonNLLLoss, GaussianNLLLoss, SoftMarginLoss, CosineEmbeddingLoss,  # noqa: F401
                   MarginRankingLoss, HingeEmbeddingLoss, MultiLabelSoftMarginLoss,
                   MultiLabelMarginLoss, MultiMarginLoss, TripletMarginLoss,
                   TripletMarginWithDistanceLoss, CTCLoss)
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .loss import (CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss,  # noqa: F401
                   BCELoss, BCEWithLogitsLoss, KLDivLoss)
from .attention import MultiheadAttention  # noqa: F401
from .transformer import TransformerEncoderLayer, TransformerEncoder  # noqa: F401
from .bilinear import Bilinear  # noqa: F401
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .padding import (ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d,  # noqa: F401
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                      CircularPad2d, CircularPad3d)
from .pooling_more import (MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,  # noqa: F401
                           AdaptiveMaxPool2d, AdaptiveMaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
                           LPPool1d, LPPool2d, LPPool3d, Fold, Unfold, FractionalMaxPool2d,
                           FractionalMaxPool3d)
from .activation_more import PReLU, Threshold, Hardshrink, Softshrink, Softmax2d, RReLU  # noqa: F401
from .pixelshuffle import PixelShuffle, PixelUnshuffle, ChannelShuffle  # noqa: F401
from .normalization_more import (BatchNorm3d, InstanceNorm1d, InstanceNorm2d,  # noqa: F401
                                 InstanceNorm3d, LocalResponseNorm, CrossMapLRN2d,
                                 SyncBatchNorm)
from .dropout_more import Dropout1d, Dropout3d, AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .sparse import EmbeddingBag  # noqa: F401
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .transformer_decoder import TransformerDecoderLayer, TransformerDecoder, Transformer  # noqa: F401
from .conv3d import Conv3d, ConvTranspose3d  # noqa: F401

from .module import (register_module_forward_pre_hook, register_module_forward_hook,  # noqa: F401
                     register_module_full_backward_pre_hook, register_module_full_backward_hook,
                     register_module_backward_hook)
from .lazy import (LazyModuleMixin, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d,  # noqa: F401
                   LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                   LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d,
                   LazyInstanceNorm2d, LazyInstanceNorm3d)
