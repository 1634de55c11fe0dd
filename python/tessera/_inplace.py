"""Tensor's in-place methods (x.exp_(), x.clamp_(), x.copy_(y), x.fill_(v), x.zero_(), ...):
the write-back rule shared by all of them, and the ones that are not an op and a write.

Note [torch in-place]: every in-place method computes its out-of-place result and writes it
back into ``self``:

* the result dtype must be castable to self's dtype under torch's rule (no float -> int,
  no complex -> real, nothing but bool -> bool), else RuntimeError naming the op;
* the result shape must be self's shape (an operand cannot broadcast self bigger);
* a leaf that requires grad raises RuntimeError while grad mode is on (as in torch);
* the write goes through ``__setitem__`` when autograd is recording, so it records the
  in-place node (CopySlices for views: the base's gradient is rebased), bumps the version
  counter and writes through non-contiguous views; otherwise a raw copy (still bumping the
  version counter). When autograd records, the op reads a clone of self, so a backward
  formula that saved self never sees the overwritten values.

Each method returns self.
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable

from . import _C
from ._C import Tensor
from ._C import TypeError as InplaceCastError, ValueError as InplaceShapeError
from ._dtypes import bool as bool_, complex64, complex128, float16, bfloat16, float32, float64

_FLOATS = (float16, bfloat16, float32, float64)
_COMPLEX = (complex64, complex128)


def torch_can_cast(src: Any, dst: Any) -> builtins.bool:
    """torch's canCast: the in-place/out= rule (not the array API's can_cast)."""
    if src in _COMPLEX and dst not in _COMPLEX:
        return False
    if src in _FLOATS + _COMPLEX and dst not in _FLOATS + _COMPLEX:
        return False
    return not (src != bool_ and dst == bool_)


def _recording(*tensors: Any) -> builtins.bool:
    return _C.is_grad_enabled() and builtins.any(
        isinstance(t, Tensor) and t.requires_grad for t in tensors)


def check_leaf(self: Tensor, op: str) -> None:
    """RuntimeError when `self` is a leaf requiring grad and autograd records (torch's rule)."""
    if self.requires_grad and self.is_leaf and _C.is_grad_enabled():
        raise RuntimeError(f"{op}: a leaf tensor that requires grad is being used in an in-place "
                           "operation; hint: wrap it in `with ts.no_grad():` or use the "
                           "out-of-place op")


def write(self: Tensor, out: Any, op: str) -> Tensor:
    """Writes the out-of-place result `out` into self (Note [torch in-place]); returns self."""
    if isinstance(out, Tensor):
        if not torch_can_cast(out.dtype, self.dtype):
            raise InplaceCastError(f"{op}: result type {out.dtype} can't be cast to the desired "
                                   f"output type {self.dtype}")
        if tuple(out.shape) != tuple(self.shape):
            raise InplaceShapeError(f"{op}: output with shape {tuple(self.shape)} doesn't match "
                                    f"the broadcast shape {tuple(out.shape)}")
        if out.device != self.device:
            out = out.to(self.device)
    if _recording(self, out):
        _C._check_view_write(self, isinstance(out, Tensor) and out.requires_grad, op)
        self[...] = out
    elif isinstance(out, Tensor):
        _C._copy_(self, out)
    else:
        _C._fill_(self, out)
    return self


# The modules whose torch methods still get `named_errors` (issue 17: they are being moved;
# every other method raises its final error, naming itself, on its own). The generated
# in-place twins (make_inplace) get it too, until each in-place method is an op of its own.
NAMED_ERRORS_MODULES = frozenset({
    "tessera.random", "tessera._indexing", "tessera._tensor", "tessera._statistical",
    "tessera._elementwise", "tessera.linalg", "tessera._nn_ops"})


def named_errors(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` whose errors name the op `name` first (an error raised by an underlying op keeps
    its type and message, prefixed by `name`); only for NAMED_ERRORS_MODULES' functions."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, IndexError, RuntimeError) as e:
            msg = str(e)
            if msg.startswith(name):
                raise
            try:
                err = type(e)(f"{name}: {msg}")
            except Exception:  # noqa: BLE001 - an exception type with another signature
                raise e from None
            raise err from e
    return call


def make_inplace(name: str, fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The in-place method `name` from the out-of-place `fn(self, *args, **kw)`."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check_leaf(self, name)
        src = self.clone() if _recording(self, *args, *kwargs.values()) else self
        return write(self, fn(src, *args, **kwargs), name)
    method.__name__ = name
    method.__doc__ = f"In-place {name[:-1]} (torch.Tensor.{name}); returns self."
    return named_errors(name, method)  # (the twin's name on its origin's errors: still layered)


# ---- the in-place methods that are not an op followed by a write
def _fill(self: Tensor, value: Any, op: str) -> Tensor:
    """Fills self with `value` (a number or a 0-d tensor); returns self. Errors name `op`."""
    check_leaf(self, op)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{op}: only supports a 0-dimension value tensor, but got "
                               f"tensor with {value.ndim} dimensions")
        if not _recording(self, value):
            value = value.item()
        else:
            return write(self, _C._broadcast_to(value.to(self.device).astype(self.dtype),
                                                tuple(self.shape)), op)
    if not isinstance(value, (builtins.bool, builtins.int, builtins.float, builtins.complex)) \
            and not hasattr(value, "__index__") and not hasattr(value, "__float__"):
        raise TypeError(f"{op}: value must be a number or a 0-d tensor, got {type(value).__name__}")
    if isinstance(value, builtins.complex) and self.dtype not in _COMPLEX:
        raise RuntimeError(f"{op}: cannot fill a {self.dtype} tensor with a complex value")
    return write(self, value, op)


def _fill_(self: Tensor, value: Any) -> Tensor:
    """Fills self with `value` (a number or a 0-d tensor); returns self."""
    return _fill(self, value, "fill_")


def _zero_(self: Tensor) -> Tensor:
    """Fills self with zeros; returns self."""
    return _fill(self, 0, "zero_")


def _copy_(self: Tensor, src: Any, non_blocking: builtins.bool = False) -> Tensor:
    """Copies `src` (broadcast to self's shape, cast to self's dtype, any device) into self;
    returns self. Differentiable with respect to src."""
    check_leaf(self, "copy_")
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    if src.device != self.device:
        src = src.to(self.device, non_blocking=non_blocking)
    if tuple(src.shape) != tuple(self.shape):
        lead = self.ndim - src.ndim
        if lead < 0 or builtins.any(n not in (1, self.shape[lead + i])
                                    for i, n in enumerate(src.shape)):
            raise InplaceShapeError(f"copy_: the src tensor of shape {tuple(src.shape)} must be "
                                    f"broadcastable to the self tensor of shape "
                                    f"{tuple(self.shape)}")
        src = _C._broadcast_to(src, tuple(self.shape))
    if src.dtype != self.dtype:
        if src.dtype in _COMPLEX and self.dtype not in _COMPLEX:
            src = _C.real(src)  # torch discards the imaginary part (with a warning)
        src = _C._astype(src, self.dtype, True)
    return write(self, src, "copy_")


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: self must already be float64 (complex128), as in torch."""
    from ._elementwise import float_power
    want = complex128 if self.dtype in _COMPLEX or isinstance(exponent, builtins.complex) or (
        isinstance(exponent, Tensor) and exponent.dtype in _COMPLEX) else float64
    if self.dtype != want:
        raise InplaceCastError(f"float_power_: the base given to float_power_ has dtype "
                               f"{self.dtype} but the operation's result requires dtype {want}")
    return make_inplace("float_power_", float_power)(self, exponent)


def inplace_of(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """x.<name>(...) writes fn(x, ...) into x (its dtype must hold the result)."""
    def method(self: Tensor, *args: Any) -> Tensor:
        from ._dtypes import can_cast
        from .autograd import no_grad
        out = fn(self, *args)
        if out.dtype != self.dtype and not can_cast(out.dtype, self.dtype):
            raise InplaceCastError(f"{name}: result type {out.dtype} can't be cast to the "
                                   f"desired output type {self.dtype}")
        with no_grad():
            self[...] = out
        return self
    method.__name__ = method.__qualname__ = name
    return method
