"""Note [Keyword fast path] (csrc/python/arg_errors.cpp): keyword calls of the reductions and
softmax go through an all-positional twin; every other call reaches the full binding. Both
routes give the same results and errors (a keyword built at run time is not interned, so it
takes the full binding)."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
import tessera.nn.functional as F

x = ts.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))


def slow(**kw):  # the same keywords, not interned: the full binding
    return {"".join(list(k)): v for k, v in kw.items()}


@pytest.mark.parametrize("fn,kw", [
    (ts.sum, dict(axis=1)), (ts.sum, dict(dim=1, keepdim=True, dtype=ts.float64)),
    (ts.mean, dict(axis=(0, 1), keepdims=True)), (ts.max, dict(axis=1)), (ts.max, dict(dim=1)),
    (ts.min, dict(other=ts.zeros(3))), (ts.var, dict(dim=1, unbiased=False)),
    (ts.std, dict(axis=1, correction=1)), (ts.argmax, dict(axis=1)), (F.softmax, dict(dim=0)),
    (F.log_softmax, dict(dim=1, dtype=ts.float64)),
])
def test_fast_and_full_routes_agree(fn, kw):
    fast, full = fn(x, **kw), fn(x, **slow(**kw))
    for a, b in zip(fast if isinstance(fast, tuple) else (fast,),
                    full if isinstance(full, tuple) else (full,)):
        assert a.dtype == b.dtype and np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("call", [
    lambda kw: ts.sum(x, 1, **kw(dim=1)), lambda kw: ts.sum(x, **kw(axsi=1)),
    lambda kw: ts.sum(x, **kw(dim=1, axis=1)), lambda kw: ts.sum(x, **kw(axis=2**70)),
    lambda kw: ts.max(x, **kw(dim=1, other=x)), lambda kw: F.softmax(x, **kw(dim="a")),
    lambda kw: F.softmax(x, **kw(dim=2**70)), lambda kw: ts.sum(**kw(x=x)),
])
def test_fast_and_full_routes_raise_alike(call):
    errors = []
    for kw in (dict, slow):
        with pytest.raises(Exception) as info:
            call(kw)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_methods_are_their_functions_without_bound_methods():
    # x.transpose(...) calls the C++ method through a descriptor (no bound method per call)
    assert type(ts.Tensor.__dict__["transpose"]).__name__ == "tensor_method"
    assert ts.Tensor.transpose is ts.Tensor.__dict__["transpose"].__func__
    assert ts.Tensor.softmax is ts.softmax is F.softmax
    assert np.array_equal(np.asarray(x.transpose(0, 1)), np.asarray(x).T)
    with pytest.raises(TypeError, match="descriptor 'transpose'"):
        ts.Tensor.transpose(3, 0, 1)
