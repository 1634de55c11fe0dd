"""torch.stft / torch.istft (and the Tensor methods): bound in C++ with every keyword torch takes
(csrc/python/bind_stft.cpp; the ops, made of differentiable index_select framing/padding, the
FFTs and index_add overlap-add, in csrc/ops/stft.cpp)."""
from ._C import stft, istft

__all__ = ["stft", "istft"]
