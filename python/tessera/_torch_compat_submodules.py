"""A few torch-only Tensor methods and namespace functions attached at import (i0,
igamma/igammac and their in-place twins, the legacy lu/lu_solve/lu_unpack, stft/istft, resize,
volatile). The families' torch functions live in their own modules (linalg.norm and the torch
forms of ts.linalg, fft.fft2, nn.init.dirac_, nn.utils.get_total_norm, testing.make_tensor,
autograd.Variable, utils.swap_tensors, random.fork_rng).
"""
from __future__ import annotations

from typing import Any, Callable

from ._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def _inplace_of(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """x.<name>(...) writes fn(x, ...) into x (its dtype must hold the result)."""
    from ._torch_compat_inplace import InplaceCastError

    def method(self: Tensor, *args: Any) -> Tensor:
        from .autograd import no_grad
        out = fn(self, *args)
        if out.dtype != self.dtype and not _ts().can_cast(out.dtype, self.dtype):
            raise InplaceCastError(f"{name}: result type {out.dtype} can't be cast to the "
                                   f"desired output type {self.dtype}")
        with no_grad():
            self[...] = out
        return self
    method.__name__ = method.__qualname__ = name
    return method


def _i0_(input: Tensor) -> Tensor:
    """In-place i0."""
    from .special import i0
    return _inplace_of(i0, "i0_")(input)


def install() -> None:
    """Attaches the functions above to tessera's submodules (keeping any that exist)."""
    ts = _ts()
    from . import special
    if not hasattr(ts, "i0"):
        ts.i0 = special.i0
        Tensor.i0 = special.i0
        Tensor.i0_ = _i0_
        ts.i0_ = _i0_
    for name, fn in (("igamma", special.gammainc), ("igammac", special.gammaincc)):
        if not hasattr(ts, name):
            setattr(ts, name, fn)
            setattr(Tensor, name, fn)
            setattr(Tensor, name + "_", _inplace_of(fn, name + "_"))
    from .linalg import _legacy_lu_solve, _tensor_lu, lu_unpack
    if not hasattr(ts, "lu_unpack"):
        ts.lu_unpack = lu_unpack
        ts.lu_solve = _legacy_lu_solve
        ts.lu = _tensor_lu
        Tensor.lu = _tensor_lu
        Tensor.lu_solve = _legacy_lu_solve
    if not hasattr(ts, "stft"):
        from ._stft import istft, stft
        ts.stft, ts.istft = stft, istft
        Tensor.stft, Tensor.istft = stft, istft
    if not hasattr(Tensor, "resize"):
        Tensor.resize = lambda self, *sizes: self.clone().resize_(*sizes)
        Tensor.resize_as = lambda self, other: self.clone().resize_as_(other)
        Tensor.volatile = property(lambda self: False,
                                   doc="Removed in torch (always False); kept for old code.")
