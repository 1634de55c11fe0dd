"""The differential-test harness: run the same lambda on tessera and on NumPy (or PyTorch)
with the same inputs and compare values, dtypes and shapes. Most op tests are one line.

    check(lambda m, x, y: m.add(x, y), x_np, y_np)         # m is tessera or numpy
    check_torch(lambda m, x: m.tanh(x), x_np)              # m is tessera or torch
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts

# NumPy dtype names that tessera shares (bfloat16 is checked separately through ml_dtypes).
ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES

TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
       "float64": (1e-12, 1e-14), "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14)}


def to_np(x: Any) -> Any:
    if isinstance(x, ts.Tensor):
        return np.asarray(x.numpy()) if x.dtype != ts.bfloat16 else x.numpy().astype(np.float32)
    return x


def assert_same(got: Any, want: Any, *, rtol: Optional[float] = None, atol: Optional[float] = None,
                check_dtype: bool = True) -> None:
    """got (tessera) equals want (NumPy/PyTorch): dtype, shape and values (NaNs equal)."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol=rtol, atol=atol, check_dtype=check_dtype)
        return
    if hasattr(want, "detach"):  # torch tensor
        want = want.detach().numpy()
    want = np.asarray(want)
    assert isinstance(got, ts.Tensor), f"expected a tessera Tensor, got {type(got)}"
    g = to_np(got)
    if check_dtype:
        assert got.dtype.name == want.dtype.name, f"dtype {got.dtype} != {want.dtype}"
    assert g.shape == want.shape, f"shape {g.shape} != {want.shape}"
    r, a = TOL.get(want.dtype.name, (0, 0))
    np.testing.assert_allclose(g, want, rtol=rtol if rtol is not None else r,
                               atol=atol if atol is not None else a, equal_nan=True)


def check(fn: Callable, *arrays: np.ndarray, **tol: Any) -> None:
    """fn(module, *inputs) on tessera and NumPy; compares the results, or that both raise."""
    try:
        want = fn(np, *arrays)
    except (TypeError, ValueError, IndexError, ZeroDivisionError, FloatingPointError) as e:
        try:
            fn(ts, *[ts.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
        except (TypeError, ValueError, IndexError):
            return
        raise AssertionError(f"NumPy raised {e!r} but tessera did not")
    got = fn(ts, *[ts.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
    assert_same(got, want, **tol)


def check_torch(fn: Callable, *arrays: np.ndarray, **tol: Any) -> None:
    """fn(module, *inputs) on tessera and PyTorch."""
    import torch
    want = fn(torch, *[torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a for a in arrays])
    got = fn(ts, *[ts.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
    assert_same(got, want, **tol)


# ---- hypothesis strategies
def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arrays(dtype: str, shape=None, *, elements=None, **kw):
    """Arrays of `dtype` (finite values unless `elements` says otherwise)."""
    if shape is None:
        shape = shapes(**kw)
    if elements is None:
        if dtype.startswith("float"):
            elements = st.floats(-100, 100, width=16 if dtype == "float16" else 32)
        elif dtype.startswith("complex"):
            elements = st.complex_numbers(max_magnitude=100, allow_nan=False, allow_infinity=False,
                                          width=64 if dtype == "complex64" else 128)
    return hnp.arrays(np.dtype(dtype), shape, elements=elements)


def strided_views(draw, a: np.ndarray) -> np.ndarray:
    """A transposed, negative-step or sliced view of `a` with the same values' layout varied."""
    kind = draw(st.sampled_from(["plain", "transpose", "flip", "step"]))
    if kind == "transpose" and a.ndim >= 2:
        return np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    if kind == "flip" and a.ndim >= 1:
        return np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    if kind == "step" and a.ndim >= 1:
        big = np.repeat(a, 2, axis=-1)
        return big[..., ::2]
    return a


def double_backward_pairs(ts_fn: Callable, torch_fn: Callable, raw: list) -> list:
    """(tessera, torch) pairs of the gradients of fn(*raw).sum() taken with create_graph=True,
    then of the gradients of those gradients' squared norm, for float64 inputs `raw`."""
    import torch
    xs = [ts.asarray(r, requires_grad=True) for r in raw]
    xt = [torch.tensor(r, requires_grad=True) for r in raw]
    gs = ts.autograd.grad(ts_fn(*xs).sum(), xs, create_graph=True)
    gt = torch.autograd.grad(torch_fn(*xt).sum(), xt, create_graph=True)
    pairs = list(zip(gs, gt))
    sum(((a * a).sum() for a in gs), ts.asarray(0.0)).backward()
    sum((b * b).sum() for b in gt).backward()
    return pairs + [(a.grad, b.grad) for a, b in zip(xs, xt)]


def record_applies(monkeypatch, fn_class, record=lambda args: args) -> list:
    """Wraps an autograd Function's apply (for the test's duration) so that every call first
    appends record(args) to the returned list, then runs as before."""
    calls: list = []
    apply = fn_class.apply

    def counted(*args):
        calls.append(record(args))
        return apply(*args)

    monkeypatch.setattr(fn_class, "apply", staticmethod(counted))
    return calls


def same_as_torch(f: Callable[[Any], Any], *, exact_error: bool = False) -> None:
    """f(torch) and f(ts) give the same value, or both raise: tessera's error is an instance of
    torch's class (the same class name with ``exact_error``)."""
    import torch
    out = []
    for m in (torch, ts):
        try:
            out.append(("ok", f(m)))
        except Exception as e:  # noqa: BLE001 - the class is what we compare
            out.append(("err", e))
    if out[0][0] == "err" and out[1][0] == "err":
        want, got = out[0][1], out[1][1]
        if exact_error:
            assert type(got).__name__ == type(want).__name__, (want, got)
        else:
            assert isinstance(got, type(want)), (want, got)
    else:
        assert out[1] == out[0]

