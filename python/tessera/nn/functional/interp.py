"""F.interpolate and its deprecated aliases (upsample, upsample_nearest, upsample_bilinear):
the C++ bindings themselves (csrc/python/bind_resample.cpp; the op and Note [Separable
resampling by gathered taps] in csrc/ops/nn/resample.cpp)."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from ..._C import interpolate, upsample, upsample_bilinear, upsample_nearest  # noqa: F401

SizeArg = Optional[Union[int, Sequence[int]]]
ScaleArg = Optional[Union[float, Sequence[float]]]
