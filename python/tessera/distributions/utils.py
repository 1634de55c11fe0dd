"""Helpers the distributions share (torch.distributions.utils): broadcasting parameters,
probabilities <-> logits, clamping and the cached `lazy_property`."""
from __future__ import annotations

import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable

import tessera as ts

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values: Any) -> tuple:
    """The values as tensors broadcast to one shape. Numbers become tensors of the first
    tensor's dtype and device (of the default dtype when all are numbers)."""
    if not all(ts.is_tensor(v) or isinstance(v, _numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "tessera.Tensor or objects implementing __torch_function__.")
    if not all(ts.is_tensor(v) for v in values):
        ref = next((v for v in values if ts.is_tensor(v)), None)
        dtype = ref.dtype if ref is not None else ts.get_default_dtype()
        device = ref.device if ref is not None else None
        values = tuple(v if ts.is_tensor(v) else ts.tensor(v, dtype=dtype, device=device)
                       for v in values)
    return tuple(ts.broadcast_tensors(*values))


def _broadcast_params(*values: Any) -> tuple:
    """(broadcast_all(*values), the batch shape): () when every value is a number."""
    tensors = broadcast_all(*values)
    if all(isinstance(v, _numbers.Number) for v in values):
        return tensors, ts.Size()
    return tensors, tensors[0].size()


def _standard_normal(shape: Any, dtype: Any, device: Any) -> Any:
    return ts.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: Any, dim: int) -> Any:
    """value summed over its `dim` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    """Probabilities from logits: sigmoid for binary (Bernoulli) logits, else softmax over
    the last dim."""
    if is_binary:
        return ts.sigmoid(logits)
    return ts.softmax(logits, dim=-1)


def clamp_probs(probs: Any) -> Any:
    """probs clamped to [eps, 1 - eps] of its dtype (differentiable)."""
    eps = ts.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    """Logits from (clamped) probabilities: log-odds for binary, else log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ts.log(ps_clamped) - ts.log1p(-ps_clamped)
    return ts.log(ps_clamped)


class lazy_property:
    """A property computed once per instance, on first access (with grad enabled, so a
    lazily derived parameter stays differentiable), then stored on the instance."""

    def __init__(self, wrapped: Callable) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with ts.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def tril_matrix_to_vec(mat: Any, diag: int = 0) -> Any:
    """The lower triangle (from diagonal `diag`) of the last two dims, row by row."""
    n = mat.shape[-1]
    rows, cols = ts.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Any, diag: int = 0) -> Any:
    """The inverse of tril_matrix_to_vec: a lower-triangular matrix from its entries."""
    n = int((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag)
                                * (diag + 1)) ** 0.5) / 2 + 1e-5)
    rows, cols = ts.tril_indices(n, n, offset=diag, device=vec.device)
    mat = ts.zeros(tuple(vec.shape[:-1]) + (n, n), dtype=vec.dtype, device=vec.device)
    flat = mat.reshape(tuple(vec.shape[:-1]) + (n * n,))
    idx = (rows * n + cols).expand(tuple(vec.shape[:-1]) + (rows.shape[0],))
    return flat.scatter(-1, idx, vec).reshape(tuple(vec.shape[:-1]) + (n, n))
