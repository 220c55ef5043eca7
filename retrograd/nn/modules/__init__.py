"""The layers of ``retrograd.nn``."""
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, RReLU, SiLU,
                         Sigmoid, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign,
                         Tanh, Tanhshrink, Threshold)
from .activation import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .fold import Fold, Unfold
from .distance import CosineSimilarity, PairwiseDistance
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CTCLoss, CrossEntropyLoss, GaussianNLLLoss,
                   HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
                   MultiLabelSoftMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .misc import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, Embedding, EmbeddingBag, FeatureAlphaDropout,
                   Flatten, Unflatten)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d,
                      MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .module import Module, RemovableHandle
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d, LayerNorm, LocalResponseNorm, RMSNorm)
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d,
                   LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                   LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase

__all__ = ["ELU", "GELU", "LeakyReLU", "LogSigmoid", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Softplus",
           "Tanh", "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "Mish", "PReLU",
           "ReLU6", "RReLU", "Softmax2d", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "ModuleDict",
           "ModuleList", "Sequential", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "CosineSimilarity",
           "PairwiseDistance", "Identity", "Linear", "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss",
           "CrossEntropyLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MarginRankingLoss", "MSELoss", "MultiLabelSoftMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss",
           "SoftMarginLoss", "TripletMarginLoss", "AdaptiveAvgPool2d", "AvgPool2d", "Dropout", "Embedding", "Flatten",
           "MaxPool2d", "Unflatten", "Module", "RemovableHandle", "BatchNorm1d", "BatchNorm2d", "LayerNorm",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle",
           "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "MaxPool1d", "MaxUnpool2d",
           "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LocalResponseNorm", "RMSNorm", "EmbeddingBag", "AlphaDropout", "Dropout1d", "Dropout2d",
           "Dropout3d", "FeatureAlphaDropout", "CTCLoss"]
__all__ += ["ParameterDict", "ParameterList"]
__all__ += ["Conv3d", "ConvTranspose3d", "Fold", "Unfold", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
            "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d", "BatchNorm3d"]
__all__ += ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
            "TransformerEncoder", "TransformerEncoderLayer"]
__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
__all__ += ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]

from .linear import Bilinear  # noqa: E402
from .channelshuffle import ChannelShuffle  # noqa: E402
from .loss import MultiLabelMarginLoss, MultiMarginLoss, TripletMarginWithDistanceLoss  # noqa: E402
__all__ += ["Bilinear", "ChannelShuffle", "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss"]
