"""PyTorch-style indexing methods: where, masked_scatter, index_fill, index_copy, index_put,
scatter_reduce, put (out of place; the in-place twins come from _inplace)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

from . import _C
from ._C import Tensor
from ._tensor import _dim_index
from .autograd.function import Function, FunctionCtx, once_differentiable

__all__ = ["masked_scatter", "index_fill", "index_copy", "index_put", "scatter_reduce"]

_INT = (_C.int8, _C.int16, _C.int32, _C.int64, _C.uint8)


def _ts() -> Any:
    import tessera
    return tessera


def _index_vec(op: str, index: Any) -> Tensor:
    if not isinstance(index, Tensor):
        index = _ts().asarray(index)
    if index.dtype not in _INT:
        raise RuntimeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    if index.ndim > 1:
        raise IndexError(f"{op}: index must be a vector (at most 1-D), got {index.ndim}-D")
    return _C._reshape(index, (-1,), -1)


def _check_bounds(op: str, index: Tensor, n: int) -> Tensor:
    if index.size and (builtins.bool(_ts().any(index >= n)) or builtins.bool(_ts().any(index < -n))):
        raise IndexError(f"{op}: index out of range for dimension of size {n}")
    return _C.where(index < 0, index + n, index)


def _where_method(self: Tensor, condition: Any, y: Any) -> Tensor:
    """self where condition is True, else y (torch.Tensor.where)."""
    return _C.where(condition, self, y)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """input with the positions where `mask` (broadcast to input) is True filled, in order,
    by the first elements of `source`."""
    if mask.dtype != _C.bool:
        raise RuntimeError(f"masked_scatter: expected mask to have dtype bool, got {mask.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected source ({source.dtype}) to have the same "
                           f"dtype as self ({input.dtype})")
    m = _C._broadcast_to(mask, tuple(input.shape))
    count = int(_ts().sum(m).item())
    src = _C._reshape(source, (-1,), -1)
    if count > src.shape[0]:
        raise RuntimeError(f"masked_scatter: number of elements in source ({src.shape[0]}) < "
                           f"number of ones in mask ({count})")
    if src.shape[0] == 0:
        return input.clone()
    pos = _ts().cumulative_sum(_C._reshape(_C._astype(m, _C.int64, True), (-1,), -1)) - 1
    pos = _C.clamp(pos, 0, src.shape[0] - 1)
    picked = _C._reshape(_ts().take(src, pos, axis=0), tuple(input.shape), -1)
    return _C.where(m, picked, input)


def index_fill(input: Tensor, dim: int, index: Any, value: Any) -> Tensor:
    """input with the slices at `index` along `dim` set to `value` (a number or 0-d tensor)."""
    d = _dim_index("index_fill", dim, input.ndim)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill: only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s)")
    n = input.shape[d] if input.ndim else 1
    idx = _check_bounds("index_fill", _index_vec("index_fill", index), n)
    hit = _ts().zeros((n,), dtype=_C.bool, device=input.device)
    if idx.size:
        hit[idx] = True
    shape = [1] * builtins.max(input.ndim, 1)
    shape[d] = n
    hit = _C._reshape(hit, tuple(shape) if input.ndim else (), -1)
    if not isinstance(value, Tensor):  # a number takes input's dtype (2.5 -> 2 for ints)
        value = _ts().asarray(value, device=input.device)
    return _C.where(hit, _C._astype(value, input.dtype, True), input)


def index_copy(input: Tensor, dim: int, index: Any, source: Tensor) -> Tensor:
    """input with input.select(dim, index[i]) replaced by source.select(dim, i)."""
    d = _dim_index("index_copy", dim, input.ndim)
    idx = _index_vec("index_copy", index)
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_copy: self ({input.dtype}) and source ({source.dtype}) must "
                           "have the same dtype")
    n = input.shape[d] if input.ndim else 1
    expect = list(input.shape)
    if input.ndim:
        expect[d] = idx.shape[0]
    if tuple(source.shape) != tuple(expect) and not (input.ndim == 0 and source.size == 1):
        raise RuntimeError(f"index_copy: source {tuple(source.shape)} must have the shape of self "
                           f"{tuple(input.shape)} with dim {dim} of size {idx.shape[0]}")
    idx = _check_bounds("index_copy", idx, n)
    out = input.clone()
    if input.ndim == 0:
        out[...] = _C._reshape(source, (), -1)
    elif idx.size:
        out[(slice(None),) * d + (idx,)] = source
    return out


def index_put(input: Tensor, indices: Sequence[Any], values: Any,
              accumulate: builtins.bool = False) -> Tensor:
    """input with input[indices] = values (accumulate=True adds instead, summing repeated
    indices)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
    key = tuple(indices)
    v = values if isinstance(values, Tensor) else _ts().asarray(values, dtype=input.dtype)
    if v.dtype != input.dtype:
        raise RuntimeError(f"index_put: values ({v.dtype}) must have the same dtype as self "
                           f"({input.dtype})")
    if not accumulate:
        out = input.clone()
        out[key] = v
        return out
    lin = _ts().arange(input.size, device=input.device)
    pos = _C._reshape(lin, tuple(input.shape), -1)[key]
    vb = _C._broadcast_to(v, tuple(pos.shape))
    flat = _ts().index_add(_C._reshape(input, (-1,), -1), 0, _C._reshape(pos, (-1,), -1),
                           _C._reshape(vb, (-1,), -1))
    return _C._reshape(flat, tuple(input.shape), -1)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: builtins.bool = True) -> Tensor:
    """Reduces src's values into input at `index` along `dim` with reduce in 'sum', 'prod',
    'mean', 'amax', 'amin' (include_self=False leaves input's own values out where something
    is scattered). All are differentiable ('prod' once: no double backward)."""
    reduces = ("sum", "prod", "mean", "amax", "amin")
    if reduce not in reduces:
        raise RuntimeError(f"scatter_reduce: reduce argument must be one of {reduces}, got {reduce!r}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"scatter_reduce: expected self ({input.dtype}) and src ({src.dtype}) "
                           "to have the same dtype")
    d = _dim_index("scatter_reduce", dim, input.ndim)
    ones = _ts().ones_like(src)
    hit = _ts().scatter_add(_ts().zeros_like(input), d, index, ones) > 0
    base = input if include_self else _C.where(hit, 0, input)
    if reduce == "sum":
        return _ts().scatter_add(base, d, index, src)
    if reduce == "mean":
        total = _ts().scatter_add(base, d, index, src)
        cnt = _ts().scatter_add(_ts().ones_like(input) if include_self else
                                _ts().zeros_like(input), d, index, ones)
        cnt = _C.where(cnt == 0, 1, cnt)
        out = total / cnt
        if input.dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            out = _C._astype(_C.floor_divide(total, cnt), input.dtype, True)
        return out
    if reduce == "prod":
        if input.dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            return _ScatterProd.apply(input, src, d, index, include_self, hit)
        if _C.is_grad_enabled() and (input.requires_grad or src.requires_grad):
            raise RuntimeError(f"scatter_reduce: reduce='prod' is not differentiable for "
                               f"{input.dtype} (real floating dtypes only)")
        return _scatter_numpy(input, d, index, src, reduce, include_self, hit)
    return _ScatterExtreme.apply(input, src, d, index, reduce, include_self, hit)


def _scatter_numpy(input: Tensor, d: int, index: Tensor, src: Tensor, reduce: str,
                   include_self: builtins.bool, hit: Tensor) -> Tensor:
    """scatter_reduce's prod / amax / amin values (not differentiable by themselves)."""
    import numpy as np
    a = np.array(np.asarray(input.detach().cpu()))
    s = np.asarray(src.detach().cpu())
    ix = np.asarray(index.cpu()).astype(np.int64)
    hits = np.asarray(hit.cpu())
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    if not include_self:
        ident = {"prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
        if a.dtype.kind != "f" and reduce != "prod":
            info = np.iinfo(a.dtype)
            ident = info.min if reduce == "amax" else info.max
        a[hits] = ident
    grids = list(np.meshgrid(*[np.arange(n) for n in ix.shape], indexing="ij"))
    grids[d] = ix
    ufunc.at(a, tuple(grids), s[tuple(slice(0, n) for n in ix.shape)])
    return _ts().asarray(a, device=input.device)


class _ScatterExtreme(Function):
    """scatter_reduce amax/amin; the gradient goes evenly to every input/src value equal to
    the result (torch's rule for ties)."""

    @staticmethod
    def forward(ctx: FunctionCtx, input: Tensor, src: Tensor, d: int, index: Tensor,  # type: ignore[override]
                reduce: str, include_self: builtins.bool, hit: Tensor) -> Tensor:
        out = _scatter_numpy(input, d, index, src, reduce, include_self, hit)
        ctx.save_for_backward(input, src, out, index, hit)
        ctx.d, ctx.include_self = d, include_self
        return out

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        input, src, out, index, hit = ctx.saved_tensors
        d = ctx.d
        picked = _ts().gather(out, d, index)
        src_hit = src[tuple(slice(0, n) for n in index.shape)] == picked
        self_hit = (input == out) if ctx.include_self else (input == out) & ~hit
        count = _ts().scatter_add(_C._astype(self_hit, g.dtype, True), d, index,
                                  _C._astype(src_hit, g.dtype, True))
        share = g / _C.where(count == 0, 1, count)
        g_in = _C.where(self_hit, share, 0)
        g_src_part = _C.where(src_hit, _ts().gather(share, d, index), 0)
        g_src = _ts().zeros_like(src)
        g_src[tuple(slice(0, n) for n in index.shape)] = g_src_part
        return g_in, g_src, None, None, None, None, None


class _ScatterProd(Function):
    """scatter_reduce 'prod' with torch's scatter_reduce_backward: products of the other
    factors are recomputed with zeros masked to 1, so a single zero factor still gets the
    product of the rest (not 0 / 0)."""

    @staticmethod
    def forward(ctx: FunctionCtx, input: Tensor, src: Tensor, d: int, index: Tensor,  # type: ignore[override]
                include_self: builtins.bool, hit: Tensor) -> Tensor:
        out = _scatter_numpy(input, d, index, src, "prod", include_self, hit)
        ctx.save_for_backward(input, src, out, index, hit)
        ctx.d, ctx.include_self = d, include_self
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        input, src, out, index, hit = ctx.saved_tensors
        d, include_self = ctx.d, ctx.include_self
        ts = _ts()
        part = tuple(slice(0, n) for n in index.shape)
        g_in = g_src = None
        if ctx.needs_input_grad[0]:
            masked_self = _C.where(input == 0, 1, input)
            masked_self_result = _scatter_numpy(masked_self, d, index, src, "prod",
                                                include_self, hit)
            g_in = g * masked_self_result / masked_self
            if not include_self:  # input's own values were left out where hit
                g_in = _C.where(hit, 0, g_in)
        if ctx.needs_input_grad[1]:
            s = src[part]
            src_zero = s == 0
            n_zeros = ts.gather(ts.scatter_add(ts.zeros_like(g), d, index,
                                               _C._astype(src_zero, g.dtype, True)), d, index)
            single_zero = src_zero & (n_zeros == 1)
            masked_src = _C.where(single_zero, 1, s)
            full = src.clone()
            full[part] = masked_src
            masked_src_result = _scatter_numpy(input, d, index, full, "prod", include_self,
                                               hit)
            part_g = _C.where(single_zero, ts.gather(g * masked_src_result, d, index),
                              ts.gather(g * out, d, index) / _C.where(src_zero, 1, s))
            g_src = ts.zeros_like(src)
            g_src[part] = part_g
        return g_in, g_src, None, None, None, None


METHODS = {"where": _where_method, "masked_scatter": masked_scatter, "index_fill": index_fill,
           "index_copy": index_copy, "index_put": index_put, "scatter_reduce": scatter_reduce}
