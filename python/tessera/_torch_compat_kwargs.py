"""torch's extra arguments on namespace functions whose standard signature lacks them:
``add/subtract/sub(x, y, alpha=)``, ``div/divide(x, y, rounding_mode=)``, ``round(x,
decimals=)``, ``tensordot(a, b, dims)``, ``nonzero(x, as_tuple=)``, ``concat(ts_, dim)``,
``count_nonzero(x, dim)``, ``searchsorted(..., right=, side=, out_int32=)``.

As Note [positional dim] (_torch_compat_positional): a call without the torch-only argument
goes to the standard function unchanged; the torch argument can only come from torch-style
code and gets torch's meaning.
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable, Optional

from . import _C
from ._C import Tensor
from ._dtypes import isdtype as _isdtype

__all__ = ["add", "subtract", "sub", "divide", "div", "true_divide", "round", "tensordot",
           "nonzero", "concat", "count_nonzero", "searchsorted", "einsum", "diff"]


class ShapeArgumentError(ValueError, RuntimeError):
    """Operands whose shapes do not fit the call: ValueError as NumPy / the standard raise,
    RuntimeError as torch does, so code written for either catches it."""


EinsumError = ShapeArgumentError


def scaled_by_alpha(name: str, x1: Any, x2: Any, alpha: Any) -> Any:
    """alpha * x2 for add/sub(x1, x2, alpha=) and their in-place twins; a float alpha with
    integral operands raises as in PyTorch."""
    if isinstance(alpha, builtins.float) and _integral(x1) and _integral(x2):
        raise RuntimeError(f"{name}: For integral input tensors, argument alpha must not be a "
                           f"floating point number.")
    return x2 * alpha if not isinstance(x2, Tensor) else _C.multiply(x2, alpha)


def _with_alpha(std: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return std(*args)  # the common call: straight to C++ (which reports bad calls)
        alpha = kwargs.pop("alpha", None)
        if alpha is None or len(args) != 2 or kwargs:
            return std(*args, **kwargs)
        x1, x2 = args
        return std(x1, scaled_by_alpha(name, x1, x2, alpha))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (std.__doc__ or "") + f"\n\n{name}(x1, x2, alpha=a) computes x1 {'+' if name == 'add' else '-'} a * x2 (torch)."
    return fn


def _integral(x: Any) -> builtins.bool:
    return _isdtype(x.dtype, ("integral", "bool")) if isinstance(x, Tensor) \
        else isinstance(x, (builtins.int, builtins.bool))


def _check_integer_divisor(x2: Any) -> None:
    """PyTorch's CPU integer division raises on a zero divisor (a CUDA divisor is not read
    back: that would synchronize; the kernel gives 0 there)."""
    if isinstance(x2, Tensor):
        zero = x2.device.type == "cpu" and builtins.bool(_C._any(_C.equal(x2, 0), None, False))
    else:
        zero = x2 == 0
    if zero:
        raise ZeroDivisionRuntimeError("div: ZeroDivisionError (integer division by zero)")


class ZeroDivisionRuntimeError(ZeroDivisionError, RuntimeError):
    """Integer division by zero in div(rounding_mode=): RuntimeError as PyTorch raises, and a
    ZeroDivisionError as Python's // does."""


def _trunc_divide(x1: Any, x2: Any) -> Any:
    if not (_integral(x1) and _integral(x2)):
        return _C.trunc(_C.divide(x1, x2))
    _check_integer_divisor(x2)
    fq = _C.floor_divide(x1, x2)
    # Integer floor division rounds down; truncation rounds toward zero.
    inexact = _C.not_equal(_C.multiply(fq, x2), x1)
    return _C.where(_C.logical_and(_C.less(fq, 0), inexact), _C.add(fq, 1), fq)


def div_rounded(x1: Any, x2: Any, rounding_mode: Any) -> Any:
    """div(x1, x2, rounding_mode=) of PyTorch: None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        return _C.divide(x1, x2)
    if rounding_mode == "floor":
        if _integral(x1) and _integral(x2):
            _check_integer_divisor(x2)
        return _C.floor_divide(x1, x2)
    if rounding_mode == "trunc":
        return _trunc_divide(x1, x2)
    raise _C.ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                        f"but found '{rounding_mode}'")  # a ValueError and a RuntimeError


def _with_rounding(std: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return std(*args)
        if "rounding_mode" not in kwargs or len(args) != 2 or len(kwargs) > 1:
            return std(*args, **kwargs)
        return div_rounded(args[0], args[1], kwargs["rounding_mode"])
    fn.__name__ = fn.__qualname__ = name
    return fn


@functools.wraps(_C.divide)
def true_divide(x1: Any, x2: Any, /) -> Any:
    return _C.divide(x1, x2)


true_divide.__name__ = true_divide.__qualname__ = "true_divide"
true_divide.__doc__ = "x1 / x2 (PyTorch's true_divide: divide without rounding_mode)."


def _round(std: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return std(*args)
        decimals = kwargs.pop("decimals", 0)
        if decimals == 0 or len(args) != 1 or kwargs:
            return std(*args, **kwargs)
        from ._torch_compat_keywords import round_decimals
        return round_decimals(args[0], decimals)  # torch's arithmetic (negative decimals too)
    return fn


def _tensordot(std: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(x1: Any, x2: Any, /, *args: Any, **kwargs: Any) -> Any:
        if "dims" in kwargs:
            if "axes" in kwargs or args:
                raise TypeError("tensordot: give the contracted dims once (dims or axes)")
            kwargs["axes"] = kwargs.pop("dims")
        if args:
            if len(args) > 1 or "axes" in kwargs:
                raise TypeError("tensordot: too many arguments")
            kwargs["axes"] = args[0]
        axes = kwargs.get("axes")
        if isinstance(axes, Tensor):
            kwargs["axes"] = int(axes) if axes.ndim == 0 else axes.tolist()
        return std(x1, x2, **kwargs)
    return fn


def _nonzero(std: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(x: Any, /, *, as_tuple: Optional[builtins.bool] = None) -> Any:
        out = std(x)
        if as_tuple is None or as_tuple:
            return out
        # torch's default layout: one row per nonzero element, one column per dim
        from ._manipulation import stack
        return stack(list(out), axis=1)
    return fn


def _axis_positional(std: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(x: Any, *args: Any, **kwargs: Any) -> Any:
        if "dim" in kwargs:
            if "axis" in kwargs:
                raise TypeError(f"{name}: got both dim and axis")
            kwargs["axis"] = kwargs.pop("dim")
        if args:
            if len(args) > 1 or "axis" in kwargs:
                raise TypeError(f"{name}: too many positional arguments")
            kwargs["axis"] = args[0]
        return std(x, **kwargs)
    return fn


def _searchsorted(std: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(sorted_sequence: Any, values: Any, /, *, side: Optional[str] = None,
           sorter: Any = None, right: Optional[builtins.bool] = None,
           out_int32: builtins.bool = False) -> Any:
        if right is not None:
            if side is not None and (side == "right") != right:
                raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                                   "opposites, got side of left while right was True")
            side = "right" if right else "left"
        kw = {"side": side or "left"}
        if sorter is not None:
            kw["sorter"] = sorter
        if isinstance(sorted_sequence, Tensor) and sorted_sequence.ndim > 1 \
                and isinstance(values, Tensor) \
                and tuple(values.shape[:-1]) == tuple(sorted_sequence.shape[:-1]):
            out = _batched_searchsorted(std, sorted_sequence, values, kw)
        else:
            try:
                out = std(sorted_sequence, values, **kw)
            except ValueError as e:
                if "side" in str(e):
                    raise
                raise ShapeArgumentError(str(e)) from None
        return out.astype(_C.int32) if out_int32 else out
    return fn


def _batched_searchsorted(std: Callable[..., Any], seq: Tensor, values: Any, kw: dict) -> Any:
    """torch's N-D form: row r of `values` searched in row r of `seq` (same leading dims;
    other shapes reach the standard function, which asks for a 1-d x1)."""
    from ._manipulation import stack
    rows_s = seq.reshape(-1, seq.shape[-1])
    rows_v = values.reshape(-1, values.shape[-1])
    if rows_s.shape[0] == 0:
        from ._creation import zeros
        return zeros(tuple(values.shape), dtype=_C.int64)
    sorter = kw.pop("sorter", None)
    rows_k = None if sorter is None else sorter.reshape(-1, sorter.shape[-1])
    if rows_k is not None and tuple(sorter.shape) != tuple(seq.shape):
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, "
                           f"but got boundary tensor {tuple(seq.shape)} and got sorter tensor "
                           f"{tuple(sorter.shape)}")
    out = stack([std(rows_s[r], rows_v[r], **kw,
                     **({} if rows_k is None else {"sorter": rows_k[r]}))
                 for r in range(rows_s.shape[0])], axis=0)
    return out.reshape(tuple(values.shape))


def _einsum(std: Callable[..., Any]) -> Callable[..., Any]:
    """einsum(equation, *operands) plus torch's sublist form einsum(op1, [0, 1], op2, [1, 2],
    [0, 2]); equation/operand mismatches raise EinsumError."""
    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], Tensor):
            args = _sublist_to_equation(args)
        try:
            return std(*args, **kwargs)
        except ValueError as e:
            raise EinsumError(str(e)) from None
    return fn


def _sublist_to_equation(args: tuple) -> tuple:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def word(sub: Any) -> str:
        out = []
        for v in sub:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, builtins.int) and 0 <= v < len(letters):
                out.append(letters[v])
            else:
                raise EinsumError(f"einsum(): expected subscript to be within the range [0, 52), "
                                  f"got {v}")
        return "".join(out)
    ops, subs = list(args[0::2]), list(args[1::2])
    out_sub = None
    if len(args) % 2 == 1:
        out_sub = args[-1]
        ops = ops[:-1]
    eq = ",".join(word(s) for s in subs[:len(ops)])
    if out_sub is not None:
        eq += "->" + word(out_sub)
    return (eq, *ops)


def _diff(std: Callable[..., Any]) -> Callable[..., Any]:
    """diff that also takes torch's dim= keyword."""
    @functools.wraps(std)
    def fn(x: Any, *args: Any, **kwargs: Any) -> Any:
        if "dim" in kwargs:
            if "axis" in kwargs:
                raise TypeError("diff: got both dim and axis")
            kwargs["axis"] = kwargs.pop("dim")
            if args:  # torch's diff(x, n, dim=...)
                kwargs["n"] = args[0]
                args = args[1:]
        return std(x, *args, **kwargs)
    return fn


def _c_named(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a wrapper of a C++ function as already naming its op in errors (so the
    namespace's argument-error guard adds no second Python layer on this hot path)."""
    fn.__wrapped_by_arg_errors__ = True  # type: ignore[attr-defined]
    return fn


def _build() -> dict:
    from . import _indexing, _linalg_core, _manipulation, _searching, _statistical
    from . import _einsum as _einsum_mod, _torch_compat_positional as _positional
    return {
        "add": _c_named(_with_alpha(_C.add, "add")),
        "subtract": _c_named(_with_alpha(_C.subtract, "subtract")),
        "sub": _c_named(_with_alpha(_C.subtract, "sub")),
        "divide": _c_named(_with_rounding(_C.divide, "divide")),
        "div": _c_named(_with_rounding(_C.divide, "div")),
        "true_divide": _c_named(true_divide), "round": _c_named(_round(_C.round)), "tensordot": _tensordot(_linalg_core.tensordot),
        "nonzero": _nonzero(_indexing.nonzero),
        "concat": _axis_positional(_manipulation.concat, "concat"),
        "count_nonzero": _axis_positional(_statistical.count_nonzero, "count_nonzero"),
        "searchsorted": _searchsorted(_searching.searchsorted),
        "einsum": _einsum(_einsum_mod.einsum), "diff": _diff(_positional.diff),
    }


globals().update(_build())
