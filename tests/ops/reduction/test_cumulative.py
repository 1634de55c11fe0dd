"""Differential tests of cumulative_sum, cumulative_prod and diff against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, NUMERIC_DTYPES, arrays, assert_same, shapes, strided_views


@st.composite
def scan_inputs(draw, dtypes, small=False):
    dtype = draw(st.sampled_from(dtypes))
    elements = None
    if small and dtype != "bool":
        elements = st.integers(0 if dtype[0] == "u" else -2, 2)
    a = strided_views(draw, draw(arrays(dtype, shapes(min_dims=1, max_dims=3, max_side=6),
                                        elements=elements)))
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    return a, axis, draw(st.booleans())


def _tol(a: np.ndarray, want: np.ndarray):
    if want.dtype.kind not in "fc":
        return {}
    eps = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-14, "complex64": 2e-6,
           "complex128": 1e-14}[want.dtype.name]
    scale = float(np.sum(np.abs(a.astype(np.complex128)))) if a.size else 0.0
    return {"rtol": eps, "atol": eps * (scale + 1) * 4}


@given(scan_inputs(ALL_DTYPES))
def test_cumulative_sum(case):
    a, axis, initial = case
    want = np.cumulative_sum(a, axis=axis, include_initial=initial)
    got = ts.cumulative_sum(ts.asarray(a), axis=axis, include_initial=initial)
    assert_same(got, want, **_tol(a, want))


@given(scan_inputs(ALL_DTYPES, small=True))
def test_cumulative_prod(case):
    a, axis, initial = case
    want = np.cumulative_prod(a, axis=axis, include_initial=initial)
    got = ts.cumulative_prod(ts.asarray(a), axis=axis, include_initial=initial)
    assert_same(got, want, **({"rtol": 1e-2, "atol": 1e-2} if a.dtype == np.float16 else {}))


def test_cumulative_options():
    a = np.arange(1, 7, dtype=np.int8)
    t = ts.asarray(a)
    assert_same(ts.cumulative_sum(t), np.cumulative_sum(a))  # 1-D: axis may be omitted
    assert_same(ts.cumulative_sum(t, dtype=ts.int8), np.cumulative_sum(a, dtype=np.int8))
    assert_same(ts.cumulative_prod(t, dtype=ts.float32, include_initial=True),
                np.cumulative_prod(a, dtype=np.float32, include_initial=True))
    big = np.full(3000, 1.0, np.float16)  # float32 running sum: exact past float16's 2048
    assert ts.cumulative_sum(ts.asarray(big)).numpy()[-1] == np.float16(3000)
    m = np.arange(12.0).reshape(3, 4)
    assert_same(ts.asarray(m).cumsum(dim=0), np.cumsum(m, axis=0))
    e = np.zeros((0, 3), np.float32)
    assert_same(ts.cumulative_sum(ts.asarray(e), axis=0, include_initial=True),
                np.cumulative_sum(e, axis=0, include_initial=True))


def test_cumulative_errors():
    with pytest.raises(ValueError, match="cumulative_sum: axis must be given"):
        ts.cumulative_sum(ts.asarray(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="cumulative_prod: expected a tensor with at least one"):
        ts.cumulative_prod(ts.asarray(np.float32(1)))
    with pytest.raises(IndexError, match="cumulative_sum: axis 2 is out of bounds"):
        ts.cumulative_sum(ts.asarray(np.zeros((2, 3))), axis=2)


@st.composite
def diff_inputs(draw):
    dtype = draw(st.sampled_from(["bool"] + NUMERIC_DTYPES))
    a = strided_views(draw, draw(arrays(dtype, shapes(min_dims=1, max_dims=3, max_side=5))))
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    n = draw(st.integers(0, 3))
    ends = []
    for _ in range(2):
        kind = draw(st.sampled_from(["none", "scalar", "array"]))
        if kind == "scalar":
            ends.append(draw(st.sampled_from([1, 0])) if dtype != "bool" else True)
        elif kind == "array":
            s = list(a.shape)
            s[axis] = draw(st.integers(0, 2))
            ends.append(draw(arrays(dtype, st.just(tuple(s)))))
        else:
            ends.append(None)
    return a, axis, n, ends[0], ends[1]


@given(diff_inputs())
def test_diff(case):
    a, axis, n, pre, app = case
    kw = {k: v for k, v in (("prepend", pre), ("append", app)) if v is not None}
    # Python numbers are weak in tessera (NumPy's diff makes them int64 arrays first)
    kw = {k: np.asarray(v, dtype=a.dtype) if not isinstance(v, np.ndarray) else v
          for k, v in kw.items()}
    tkw = {k: ts.asarray(v) if isinstance(v, np.ndarray) and v.ndim else v.item()
           if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    with np.errstate(all="ignore"):
        want = np.diff(a, n=n, axis=axis, **kw)
    got = ts.diff(ts.asarray(a), axis=axis, n=n, **tkw)
    assert_same(got, want)


def test_diff_errors():
    with pytest.raises(ValueError, match="diff: expected a tensor with at least one"):
        ts.diff(ts.asarray(np.float32(1)))
    with pytest.raises(ValueError, match="diff: order n must be non-negative"):
        ts.diff(ts.asarray(np.zeros(3)), n=-1)
    with pytest.raises(ValueError, match="diff: prepend of shape"):
        ts.diff(ts.asarray(np.zeros((2, 3))), axis=1, prepend=ts.asarray(np.zeros((3, 1))))
    with pytest.raises(IndexError, match="diff: axis"):
        ts.diff(ts.asarray(np.zeros(3)), axis=1)
