"""Differential tests of where(condition, x1, x2) against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts
from harness import ALL_DTYPES, arrays, assert_same, strided_views


@st.composite
def where_inputs(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
    dtype = draw(st.sampled_from(ALL_DTYPES))
    c = strided_views(draw, draw(arrays("bool", st.just(shapes.input_shapes[0]))))
    a = strided_views(draw, draw(arrays(dtype, st.just(shapes.input_shapes[1]))))
    b = strided_views(draw, draw(arrays(dtype, st.just(shapes.input_shapes[2]))))
    return c, a, b


@given(where_inputs())
def test_where(case):
    c, a, b = case
    assert_same(ts.where(ts.asarray(c), ts.asarray(a), ts.asarray(b)), np.where(c, a, b))


@given(where_inputs(), st.sampled_from([0, 2, 1.5, True]))
def test_where_python_scalars_are_weak(case, s):
    c, a, _ = case
    if isinstance(s, float) and a.dtype.kind in "biu" or (s is True and a.dtype != np.bool_):
        return
    if isinstance(s, int) and not isinstance(s, bool) and a.dtype == np.bool_:
        return
    got = ts.where(ts.asarray(c), ts.asarray(a), s)
    assert got.dtype.name == a.dtype.name
    assert_same(got, np.where(c, a, np.asarray(s, dtype=a.dtype)))
    got = ts.where(ts.asarray(c), s, ts.asarray(a))
    assert_same(got, np.where(c, np.asarray(s, dtype=a.dtype), a))


def test_where_promotion_and_condition_dtype():
    c = np.array([1, 0, 2], dtype=np.int32)  # any condition dtype counts as truthiness
    a = np.array([1, 2, 3], dtype=np.int8)
    b = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    got = ts.where(ts.asarray(c), ts.asarray(a), ts.asarray(b))
    assert got.dtype == ts.result_type(ts.int8, ts.float32)
    np.testing.assert_array_equal(got.numpy(), [1, 1.5, 3])
    assert_same(ts.where(True, 1.0, 2.0), np.asarray(1.0, dtype=np.float32))


def test_where_errors():
    with pytest.raises(ValueError, match="where"):
        ts.where(ts.asarray(np.ones(3, bool)), ts.asarray(np.ones(4)), 0.0)
