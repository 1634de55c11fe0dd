"""tessera.testing: gradcheck / gradgradcheck (analytical vs central finite differences)."""
from __future__ import annotations

from typing import Any, Callable, Sequence, Tuple, Union

import numpy as np

from ._C import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _tup(x: Any) -> Tuple[Any, ...]:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _host(t: Tensor) -> np.ndarray:
    """A tensor's values as a NumPy array (copied off a device first)."""
    t = t.detach()
    return (t if t.device.type == "cpu" else t.cpu()).numpy()


def _numerical_jacobian(fn: Callable, inputs: Tuple[Any, ...], idx: int, out_index: int, eps: float) -> np.ndarray:
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
            vals.append(_host(out).astype(np.float64).reshape(-1))
        cols.append((vals[0] - vals[1]) / (2 * eps))
    out_size = cols[0].size if cols else 0
    return np.stack(cols, axis=1) if cols else np.zeros((out_size, 0))


def _analytical_jacobian(fn: Callable, inputs: Tuple[Any, ...], idx: int, out_index: int) -> np.ndarray:
    from .autograd import grad
    from ._creation import zeros
    out = _tup(fn(*inputs))[out_index]
    rows = []
    for k in range(out.size):
        e = zeros(out.size, dtype=out.dtype, device=out.device)
        e[k] = 1
        g = grad([out], [inputs[idx]], [e.reshape(out.shape)], retain_graph=True, allow_unused=True)[0]
        rows.append(np.zeros(inputs[idx].size) if g is None else _host(g).astype(np.float64).reshape(-1))
    return np.stack(rows, axis=0) if rows else np.zeros((0, inputs[idx].size))


def gradcheck(fn: Callable, inputs: Union[Tensor, Sequence[Any]], *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Checks fn's gradients w.r.t. every input that requires grad against central finite
    differences. Use float64 inputs. On failure, reports the worst element."""
    ins = _tup(inputs)
    n_out = len(_tup(fn(*ins)))
    for i, x in enumerate(ins):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype.name not in ("float64", "complex128"):
            raise GradcheckError(f"gradcheck: input {i} is {x.dtype}; use float64 for finite differences")
        for o in range(n_out):
            num = _numerical_jacobian(fn, ins, i, o, eps)
            ana = _analytical_jacobian(fn, ins, i, o)
            diff = np.abs(num - ana)
            tol = atol + rtol * np.abs(num)
            if num.shape != ana.shape or (diff > tol).any():
                if num.shape != ana.shape:
                    msg = f"gradcheck: Jacobian shapes differ: numerical {num.shape} vs analytical {ana.shape}"
                else:
                    r, c = np.unravel_index(np.argmax(diff - tol), diff.shape)
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
    """gradcheck of the first derivative (second-order check) via create_graph=True."""
    from .autograd import grad
    from ._creation import asarray
    ins = _tup(inputs)
    outs = _tup(fn(*ins))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(asarray(rng.standard_normal(o.shape), device=o.device).astype(o.dtype)
                             for o in outs)
    gos = _tup(grad_outputs)
    diff_idx = [i for i, x in enumerate(ins) if isinstance(x, Tensor) and x.requires_grad]

    def first(*xs: Any) -> Any:
        # gradcheck calls this with perturbed copies too: differentiate w.r.t. the same slots.
        xs = tuple(x if (i not in diff_idx or x.requires_grad) else x.detach().requires_grad_(True)
                   for i, x in enumerate(xs))
        o = _tup(fn(*xs))
        dx = [xs[i] for i in diff_idx]
        gs = grad(list(o), dx, list(gos), create_graph=True, allow_unused=True)
        from ._creation import zeros_like
        return tuple(zeros_like(x) if g is None else g for g, x in zip(gs, dx))

    return gradcheck(first, ins, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)

from ._assert_close import assert_allclose, assert_close  # noqa: E402

__all__ += ["assert_close", "assert_allclose"]
