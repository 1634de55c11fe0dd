"""Statistical, searching and utility functions of the array API 2024.12 (sum, prod, mean,
var, std, max, min, cumulative_sum, cumulative_prod, all, any, diff, argmax, argmin,
count_nonzero, where) and the matching Tensor methods.

Conventions shared by the reductions:

* ``axis`` is None (all axes), an int or a tuple of ints; negative axes count from the end.
  PyTorch's ``dim=`` is accepted as an alias of ``axis=`` and ``keepdim=`` of ``keepdims=``.
  An out-of-range axis raises IndexError, a repeated axis ValueError.
* Result shape: ``x.shape`` without the reduced axes, or with them as size 1 when
  ``keepdims=True``. Reducing a 0-d tensor over ``axis=None`` gives a 0-d tensor.
* Float reductions are pairwise over fixed blocks: float32 sums stay accurate over millions
  of elements, and results are bit-identical for any thread count. float16/bfloat16
  accumulate in float32.
* The reductions themselves, with every argument form (the standard's and PyTorch's), are
  C++ bindings (csrc/python/bind_reduction.cpp; median/kthvalue in csrc/ops/order_stats.cpp):
  ``ts.max(x, axis=1)`` returns values as the standard specifies, ``ts.max(x, 1)`` and
  ``x.max(1)`` PyTorch's (values, indices). So are diff, logsumexp, cummax/cummin, mode,
  quantile/nanquantile, var_mean/std_mean, logcumsumexp, msort, bucketize, bincount, histc,
  cov, corrcoef, trapezoid/trapz and cumulative_trapezoid
  (csrc/ops/statistics.cpp), each Tensor method
  the namespace function itself; torch.norm, dist, renorm, histogram, combinations, gradient
  and Tensor.sum_to_size are too (csrc/python/bind_statistics_torch.cpp). This module only
  gathers the names.
"""
from __future__ import annotations

from ._C import where

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "count_nonzero",
           "argmax", "argmin", "cumulative_sum", "cumulative_prod", "diff", "where"]

# The reductions parse every argument form in their bindings (csrc/python/bind_reduction.cpp),
# for the namespace function and the Tensor method alike: the standard's axis=/keepdims=/
# correction= and PyTorch's positional dim, keepdim, dim=, unbiased=, dtype=, and its
# (values, indices) named tuples (Note [torch reductions vs the standard] below).
from ._C import (sum, prod, mean, var, std, max, min, all, any, count_nonzero,  # noqa: E402,A004
                 argmax, argmin, cumulative_sum, cumulative_prod, cumsum, cumprod, amax, amin,
                 aminmax, median, nanmedian, kthvalue, nansum, nanmean, diff)
# (ops/statistics.h, bound in the same file, Tensor methods the same objects)
from ._C import (logsumexp, cummax, cummin, mode, quantile, nanquantile,  # noqa: E402
                 var_mean, std_mean, logcumsumexp, msort, bucketize, bincount, histc, cov,
                 corrcoef, trapezoid, trapz, cumulative_trapezoid)
# ts.softmax is F.softmax: the C++ op (csrc/python/bind_nn.cpp), which also reads torch.softmax's
# positional dtype
from ._C import softmax, log_softmax  # noqa: E402


# ---- PyTorch's reductions
# PyTorch-style reductions: x.max(dim)/x.min(dim) -> (values, indices), amax/amin,
# aminmax, median/nanmedian, mode, kthvalue, nanmean, nansum, quantile/nanquantile, logsumexp,
# logcumsumexp, cummax/cummin, torch-default var/std methods (unbiased), var_mean/std_mean,
# norm, dist, softmax/log_softmax, bincount, histc, bucketize.
#
# Note [torch reductions vs the standard]: the namespace functions ts.max / ts.min / ts.var /
# ts.std keep the array API semantics (values only; correction=0). The Tensor *methods* follow
# torch, whose behaviour differs: x.max(dim) returns (values, indices) and x.var() is unbiased
# (correction=1) unless told otherwise. Values that come with indices are gathered from the
# input at those indices, so they are differentiable.
_TORCH_NAMES = ["amax", "amin", "aminmax", "median", "nanmedian", "mode", "kthvalue", "nanmean",
                "nansum", "quantile", "nanquantile", "logsumexp", "logcumsumexp", "cummax", "cummin",
                "var_mean", "std_mean", "norm", "dist", "softmax", "log_softmax", "bincount", "histc",
                "bucketize", "cumsum", "cumprod", "msort", "cov", "corrcoef",
                "renorm", "histogram"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES

# torch.norm / dist / renorm / histogram / combinations / gradient, each also the Tensor
# method, and Tensor.sum_to_size: csrc/python/bind_statistics_torch.cpp (ops/statistics_torch.h)
from ._C import norm, dist, renorm, histogram, combinations, gradient  # noqa: E402

_TORCH_NAMES += ["combinations", "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]
__all__ += ["combinations", "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]
