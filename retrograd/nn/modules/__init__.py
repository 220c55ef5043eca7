"""The layers of ``retrograd.nn``."""
from .activation import ELU, GELU, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh
from .activation import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d
from .distance import CosineSimilarity, PairwiseDistance
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,
                   HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
                   MultiLabelSoftMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .misc import AdaptiveAvgPool2d, AvgPool2d, Dropout, Embedding, Flatten, MaxPool2d, Unflatten
from .module import Module, RemovableHandle
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase

__all__ = ["ELU", "GELU", "LeakyReLU", "LogSigmoid", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Softplus",
           "Tanh", "ModuleDict", "ModuleList", "Sequential", "Conv1d", "Conv2d", "CosineSimilarity",
           "PairwiseDistance", "Identity", "Linear", "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss",
           "CrossEntropyLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MarginRankingLoss", "MSELoss", "MultiLabelSoftMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss",
           "SoftMarginLoss", "TripletMarginLoss", "AdaptiveAvgPool2d", "AvgPool2d", "Dropout", "Embedding",
           "Flatten", "MaxPool2d", "Unflatten", "Module", "RemovableHandle", "BatchNorm1d", "BatchNorm2d",
           "LayerNorm", "ParameterDict", "ParameterList"]
__all__ += ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
            "TransformerEncoder", "TransformerEncoderLayer"]
__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
