"""tessera.testing: gradcheck / gradgradcheck (analytical vs central finite differences)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from ._C import Tensor
    from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as _np

from ._C import Tensor as _Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _tup(x: Any) -> Tuple[Any, ...]:
    return (x,) if isinstance(x, _Tensor) else tuple(x)


def _host(t: Tensor) -> _np.ndarray:
    """A tensor's values as a NumPy array (copied off a device first)."""
    t = t.detach()
    return (t if t.device.type == "cpu" else t.cpu()).numpy()


def _numerical_jacobian(fn: Callable, inputs: Tuple[Any, ...], idx: int, out_index: int, eps: float) -> _np.ndarray:
    from ._creation import asarray
    x = inputs[idx]
    base = _host(x).copy()
    flat = base.reshape(-1)
    cols = []
    for k in range(flat.size):
        vals = []
        for sign in (1, -1):
            pert = flat.copy()
            pert[k] += sign * eps
            args = list(inputs)
            args[idx] = asarray(pert.reshape(base.shape), device=x.device)
            out = _tup(fn(*args))[out_index]
            vals.append(_host(out).astype(_np.float64).reshape(-1))
        cols.append((vals[0] - vals[1]) / (2 * eps))
    out_size = cols[0].size if cols else 0
    return _np.stack(cols, axis=1) if cols else _np.zeros((out_size, 0))


def _analytical_jacobian(fn: Callable, inputs: Tuple[Any, ...], idx: int, out_index: int) -> _np.ndarray:
    from .autograd import grad
    from ._creation import zeros
    out = _tup(fn(*inputs))[out_index]
    rows = []
    for k in range(out.size):
        e = zeros(out.size, dtype=out.dtype, device=out.device)
        e[k] = 1
        g = grad([out], [inputs[idx]], [e.reshape(out.shape)], retain_graph=True, allow_unused=True)[0]
        rows.append(_np.zeros(inputs[idx].size) if g is None else _host(g).astype(_np.float64).reshape(-1))
    return _np.stack(rows, axis=0) if rows else _np.zeros((0, inputs[idx].size))


def gradcheck(fn: Callable, inputs: Union[Tensor, Sequence[Any]], *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Checks fn's gradients w.r.t. every input that requires grad against central finite
    differences. Use float64 inputs. On failure, reports the worst element."""
    ins = _tup(inputs)
    n_out = len(_tup(fn(*ins)))
    for i, x in enumerate(ins):
        if not (isinstance(x, _Tensor) and x.requires_grad):
            continue
        if x.dtype.name not in ("float64", "complex128"):
            raise GradcheckError(f"gradcheck: input {i} is {x.dtype}; use float64 for finite differences")
        for o in range(n_out):
            num = _numerical_jacobian(fn, ins, i, o, eps)
            ana = _analytical_jacobian(fn, ins, i, o)
            diff = _np.abs(num - ana)
            tol = atol + rtol * _np.abs(num)
            if num.shape != ana.shape or (diff > tol).any():
                if num.shape != ana.shape:
                    msg = f"gradcheck: Jacobian shapes differ: numerical {num.shape} vs analytical {ana.shape}"
                else:
                    r, c = _np.unravel_index(_np.argmax(diff - tol), diff.shape)
                    msg = (f"gradcheck: Jacobian mismatch for output {o} w.r.t. input {i}: worst at "
                           f"output element {r}, input element {c}: numerical {num[r, c]:.6g} vs "
                           f"analytical {ana[r, c]:.6g} (|diff| {diff[r, c]:.3g} > tol {tol[r, c]:.3g})")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(fn: Callable, inputs: Union[Tensor, Sequence[Any]], grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True) -> bool:
    """gradcheck of the first derivative (second-order check) via create_graph=True, as
    PyTorch's: the first derivative is checked w.r.t. the inputs and the grad_outputs (random
    ones in [-1, 1) that require grad when not given), so a piecewise-linear fn, whose first
    derivative depends on x only through constants, is checked through grad_outputs."""
    from .autograd import grad
    from ._creation import asarray
    ins = _tup(inputs)
    if grad_outputs is None:
        rng = _np.random.default_rng(0)
        grad_outputs = tuple(asarray(rng.uniform(-1, 1, o.shape), device=o.device).astype(o.dtype)
                             .requires_grad_(True) for o in _tup(fn(*ins)))
    gos = _tup(grad_outputs)
    n_out = len(gos)
    diff_in = [i for i, x in enumerate(ins) if isinstance(x, _Tensor) and x.requires_grad]
    diff_go = {i for i, g in enumerate(gos) if isinstance(g, _Tensor) and g.requires_grad}

    def first(*args: Any) -> Any:
        # gradcheck calls this with perturbed copies too: differentiate w.r.t. the same slots.
        xs = tuple(x.detach().requires_grad_(True) if i in diff_in and not x.requires_grad else x
                   for i, x in enumerate(args[:len(args) - n_out]))
        g_o = tuple(g.detach().requires_grad_(True) if i in diff_go and not g.requires_grad else g
                    for i, g in enumerate(args[len(args) - n_out:]))
        gs = grad(list(_tup(fn(*xs))), [xs[i] for i in diff_in], list(g_o), create_graph=True,
                  allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first, ins + gos, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)

from ._assert_close import assert_allclose, assert_close  # noqa: E402

__all__ += ["assert_close", "assert_allclose", "make_tensor"]


def make_tensor(*shape: Any, dtype: Any, device: Any, low: Optional[float] = None,
                high: Optional[float] = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A random tensor of `shape` and `dtype` with values in [low, high): torch's defaults
    are [-9, 9] (floats and signed ints), [0, 10) for uint8, and {False, True} for bool."""
    import tessera as ts  # the namespace's creation and random functions
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    name = str(dtype).rsplit(".", 1)[-1]
    if name == "bool":
        out = ts.rand(shape) > 0.5
    elif ts.isdtype(dtype, "integral"):
        lo = (0 if name.startswith("uint") else -9) if low is None else _math.ceil(low)
        hi = (10 if name.startswith("uint") else 10) if high is None else _math.ceil(high)
        out = ts.randint(lo, max(hi, lo + 1), shape, dtype=dtype)
    else:
        lo = -9.0 if low is None else low
        hi = 9.0 if high is None else high
        real = ts.float64 if ts.isdtype(dtype, "complex floating") else dtype
        out = (ts.rand(shape, dtype=ts.float64) * (hi - lo) + lo).astype(real)
        if ts.isdtype(dtype, "complex floating"):
            im = (ts.rand(shape, dtype=ts.float64) * (hi - lo) + lo)
            out = (out + 1j * im).astype(dtype)
    if exclude_zero:
        tiny = 1 if ts.isdtype(dtype, "integral") else ts.finfo(dtype).tiny
        out = ts.where(out == 0, ts.asarray(tiny, dtype=out.dtype), out) if name != "bool" \
            else ts.ones_like(out)
    if noncontiguous and out.size > 1:
        wide = ts.repeat_interleave(out.reshape(-1), 2).reshape(tuple(shape[:-1]) + (-1,)) \
            if len(shape) else out
        out = wide[..., ::2] if len(shape) else out
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out
