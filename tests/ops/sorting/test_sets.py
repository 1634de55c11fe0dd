"""unique_* and isin vs NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import arrays, assert_same, shapes, strided_views

DTYPES = ["bool", "int8", "int32", "int64", "uint16", "uint64", "float16", "float32", "float64"]


def _elements(dtype):
    if dtype.startswith("float"):
        return st.sampled_from([0.0, -0.0, 1.0, -2.5, np.inf, np.nan, 3.0])
    if dtype == "bool":
        return None
    return st.integers(0, 5)


def _np_unique_nan_distinct(a):
    """NumPy's unique with every NaN kept distinct (the standard's rule)."""
    return np.unique(a.ravel(), return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=False)


@given(st.sampled_from(DTYPES), st.data())
def test_unique_all_matches_numpy(dtype, data):
    a = data.draw(arrays(dtype, shapes(0, 3, 0, 6), elements=_elements(dtype)))
    a = strided_views(data.draw, a)
    x = ts.asarray(a)
    values, index, inverse, counts = _np_unique_nan_distinct(a)
    r = ts.unique_all(x)
    assert type(r).__name__ == "UniqueAllResult"
    assert_same(r.values, values)
    assert_same(r.counts, counts.astype(np.int64))
    assert_same(r.inverse_indices, inverse.reshape(a.shape).astype(np.int64))
    # first occurrence of each value (NumPy's index is also the first occurrence)
    assert_same(r.indices, index.astype(np.int64))
    assert_same(ts.unique_values(x), values)
    c = ts.unique_counts(x)
    assert_same(c.values, values)
    assert_same(c.counts, counts.astype(np.int64))
    i = ts.unique_inverse(x)
    assert_same(i.inverse_indices, inverse.reshape(a.shape).astype(np.int64))
    assert_same(r.values[r.inverse_indices], a)


def test_each_nan_is_distinct_and_signed_zero_merges():
    x = ts.asarray([np.nan, 1.0, np.nan, -0.0, 0.0])
    r = ts.unique_counts(x)
    assert r.counts.tolist() == [2, 1, 1, 1]
    assert np.isnan(r.values.numpy()[2:]).all()


def test_scatter_permutation_and_large_unique():
    from tessera import _C
    perm = np.random.default_rng(0).permutation(100000)
    vals = np.arange(100000)
    want = np.empty_like(vals)
    want[perm] = vals
    assert_same(_C._scatter_permutation(ts.asarray(perm), ts.asarray(vals)), want)
    with pytest.raises(IndexError):
        _C._scatter_permutation(ts.asarray([0, 2]), ts.asarray([1, 2]))
    with pytest.raises(ValueError):
        _C._scatter_permutation(ts.asarray([0, 1]), ts.asarray([1, 2, 3]))
    a = np.random.default_rng(1).integers(0, 1000, 300000).astype(np.int32)
    r = ts.unique_all(ts.asarray(a))
    v, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    assert_same(r.values, v)
    assert_same(r.indices, i)
    assert_same(r.inverse_indices, inv)
    assert_same(r.counts, c)


def test_unique_errors():
    with pytest.raises(TypeError):
        ts.unique_values([1, 2])


@given(st.sampled_from(DTYPES), st.data())
def test_isin_matches_numpy(dtype, data):
    a = data.draw(arrays(dtype, shapes(0, 3, 0, 5), elements=_elements(dtype)))
    bt = data.draw(st.sampled_from([dtype, "int16", "float64"]))
    b = data.draw(arrays(bt, shapes(0, 2, 0, 5), elements=_elements(bt)))
    for invert in (False, True):
        assert_same(ts.isin(ts.asarray(a), ts.asarray(b), invert=invert), np.isin(a, b, invert=invert))


def test_isin_complex_and_scalars():
    a = np.array([1 + 1j, 2, 3j])
    assert_same(ts.isin(ts.asarray(a), ts.asarray([3j, 5])), np.isin(a, [3j, 5]))
    assert_same(ts.isin(ts.asarray([1, 2, 3]), 2), np.isin([1, 2, 3], 2))
