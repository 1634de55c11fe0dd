"""Layer classes (PyTorch's names, arguments and state-dict layouts), one file per family
as torch.nn.modules (``tessera.nn.modules.<file>.<Name>`` is ``tessera.nn.<Name>`` and
``<Name>.__module__`` names that file, so pickles and safe_globals lists resolve)."""
from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import (Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear,  # noqa: F401
                     LazyLinear)
from .flatten import Flatten, Unflatten  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .conv import (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, LazyConv1d,  # noqa: F401
                   LazyConv2d, LazyConvTranspose1d, LazyConvTranspose2d)
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,  # noqa: F401
                      AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, MaxUnpool1d, MaxUnpool2d,
                      MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d,
                      FractionalMaxPool3d)
from .fold import Fold, Unfold  # noqa: F401
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm,  # noqa: F401
                        LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d)
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,  # noqa: F401
                           LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from .normalization import (LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm,  # noqa: F401
                            CrossMapLRN2d)
from .activation import (ReLU, ReLU6, SiLU, Mish, Hardswish, Hardsigmoid, SELU, Sigmoid,  # noqa: F401
                         LogSigmoid, Tanh, Softsign, Tanhshrink, GELU, ELU, CELU, LeakyReLU,
                         Hardtanh, Softplus, Softmax, LogSoftmax, Softmin, GLU, PReLU, Threshold,
                         Hardshrink, Softshrink, Softmax2d, RReLU, MultiheadAttention)
from .dropout import (Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,  # noqa: F401
                      FeatureAlphaDropout)
from .loss import (PoissonNLLLoss, GaussianNLLLoss, SoftMarginLoss, CosineEmbeddingLoss,  # noqa: F401
                   MarginRankingLoss, HingeEmbeddingLoss, MultiLabelSoftMarginLoss,
                   MultiLabelMarginLoss, MultiMarginLoss, TripletMarginLoss,
                   TripletMarginWithDistanceLoss, CTCLoss)
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .loss import (CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss,  # noqa: F401
                   BCELoss, BCEWithLogitsLoss, KLDivLoss)
from .transformer import (TransformerEncoderLayer, TransformerEncoder,  # noqa: F401
                          TransformerDecoderLayer, TransformerDecoder, Transformer)
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .padding import (ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d,  # noqa: F401
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                      CircularPad2d, CircularPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .channelshuffle import ChannelShuffle  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .conv import Conv3d, ConvTranspose3d, LazyConv3d, LazyConvTranspose3d  # noqa: F401
from .module import (register_module_forward_pre_hook, register_module_forward_hook,  # noqa: F401
                     register_module_full_backward_pre_hook, register_module_full_backward_hook,
                     register_module_backward_hook)
from .lazy import LazyModuleMixin  # noqa: F401
