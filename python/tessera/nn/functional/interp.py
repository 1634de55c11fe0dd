"""F.interpolate and its deprecated aliases (upsample, upsample_nearest, upsample_bilinear):
the C++ bindings themselves (csrc/python/bind_resample.cpp; the op and Note [Separable
resampling by gathered taps] in csrc/ops/nn/resample.cpp)."""
from __future__ import annotations

import typing as _t

from ..._C import interpolate, upsample, upsample_bilinear, upsample_nearest  # noqa: F401

_SizeArg = _t.Optional[_t.Union[int, _t.Sequence[int]]]
_ScaleArg = _t.Optional[_t.Union[float, _t.Sequence[float]]]
