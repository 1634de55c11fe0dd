"""Activation functions (PyTorch's, with their `inplace=` and trailing-underscore forms), the
softmax family and erf/GELU: each is the C++ op's binding itself (csrc/ops/nn/activation*.h,
csrc/python/bind_activation.cpp and bind_nn.cpp: signatures, docstrings, in-place handling,
errors; gradients from the C++ formula table)."""
from __future__ import annotations

from ... import _C

# the C++ ops (csrc/ops/nn/activation_pointwise.h; relu and gelu have fused kernels)
sigmoid, logsigmoid, softplus, softsign, tanhshrink = (
    _C.sigmoid, _C.logsigmoid, _C.softplus, _C.softsign, _C.tanhshrink)
relu, relu6, elu, celu, selu, leaky_relu, hardtanh = (
    _C.relu, _C.relu6, _C.elu, _C.celu, _C.selu, _C.leaky_relu, _C.hardtanh)
silu, mish, hardsigmoid, hardswish, threshold, rrelu = (
    _C.silu, _C.mish, _C.hardsigmoid, _C.hardswish, _C.threshold, _C.rrelu)
hardshrink, softshrink, prelu, glu, softmax2d = (
    _C.hardshrink, _C.softshrink, _C.prelu, _C.glu, _C.softmax2d)
relu_, elu_, celu_, selu_, leaky_relu_, hardtanh_, threshold_, rrelu_ = (
    _C.relu_, _C.elu_, _C.celu_, _C.selu_, _C.leaky_relu_, _C.hardtanh_, _C.threshold_,
    _C.rrelu_)


from ..._C._functional import tanh  # noqa: E402  (csrc/python/bind_activation.cpp)
erf, erfc = _C.erf, _C.erfc  # csrc/ops/special.h
gelu = _C.gelu
softmax, log_softmax, softmin = _C.softmax, _C.log_softmax, _C.softmin
logsumexp = _C.logsumexp  # ts.logsumexp itself (csrc/ops/statistics.cpp)
