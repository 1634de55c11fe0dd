"""F.pad as a C++ binding (csrc/python/bind_conv.cpp, csrc/ops/nn/pad.cpp): one definition,
PyTorch's signature, values against torch (hypothesis over ranks, modes, negative pads, dtypes,
strided inputs), float64 gradients against torch and finite differences, and the errors."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from tessera.autograd import gradcheck
from harness import compare_grads, randn, randn64, to_np


def test_the_binding_is_the_function() -> None:
    assert F.pad is _C.pad
    assert list(inspect.signature(F.pad).parameters) == list(
        inspect.signature(TF.pad).parameters)
    x = ts.ones((2, 3))
    assert F.pad(x, ()) is x


@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from(["constant", "reflect", "replicate", "circular"]),
       ndim=st.integers(3, 5), side=st.integers(1, 5),
       pads=st.lists(st.integers(-2, 3), min_size=2, max_size=6),
       dtype=st.sampled_from(["float32", "float64"]), flip=st.booleans(),
       value=st.sampled_from([None, 1.5]))
def test_pad_matches_torch(mode, ndim, side, pads, dtype, flip, value) -> None:
    pads = pads[:2 * (len(pads) // 2)]
    if mode != "constant":
        pads = pads[:2 * (ndim - 2)]
    x = randn(*(2, 3) + (side,) * (ndim - 2), dtype=np.dtype(dtype))
    xt, xu = ts.asarray(x), torch.tensor(x)
    if flip:
        xt, xu = ts.flip(xt, axis=-1), torch.flip(xu, [-1])
    kw = {"value": value} if mode == "constant" else {}
    try:
        want = TF.pad(xu, pads, mode=mode, **kw)
    except (RuntimeError, ValueError, NotImplementedError):
        return  # torch refuses; tessera may pad what torch's kernels do not
    got = F.pad(xt, pads, mode=mode, **kw)
    assert got.dtype.name == dtype
    np.testing.assert_array_equal(to_np(got), to_np(want))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(2, 1, 1, 2), (-1, 2, 1, -1), (0, 0, 2, 0)])
def test_pad_gradients(mode, pads) -> None:
    compare_grads(lambda v: F.pad(v, pads, mode=mode), lambda v: TF.pad(v, pads, mode=mode),
                  [randn64(2, 3, 4, 5)])
    x = ts.asarray(randn64(1, 2, 4, 3), requires_grad=True)
    assert gradcheck(lambda v: F.pad(v, pads, mode=mode), (x,))


def test_integer_and_empty_inputs() -> None:
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(to_np(F.pad(ts.asarray(x), (1, 2), value=7)),
                                  to_np(TF.pad(torch.tensor(x), (1, 2), value=7)))
    e = ts.ones((0, 3))
    assert F.pad(e, (1, 1)).shape == (0, 5)


@pytest.mark.parametrize("call,cls,match", [
    (lambda: F.pad(ts.ones((2, 3)), (1, 2, 3)), ValueError, r"pad: padding length 3 must be even"),
    (lambda: F.pad(ts.ones((2, 3)), (1, 1) * 3), ValueError, r"at most 2\*ndim \(4\)"),
    (lambda: F.pad(ts.ones((1, 2, 3)), (3, 0), mode="reflect"), ValueError,
     r"pad: reflect padding \(3, 0\) must be smaller than the dimension size 3"),
    (lambda: F.pad(ts.ones((1, 2, 3)), (4, 0), mode="circular"), ValueError,
     r"pad: circular padding \(4, 0\) exceeds size 3"),
    (lambda: F.pad(ts.ones((1, 2, 3)), (-4, 0)), ValueError, r"crops more than"),
    (lambda: F.pad(ts.ones((1, 2, 3)), (1, 0), mode="wrap"), ValueError, r"pad: unknown mode"),
    (lambda: F.pad(ts.ones((1, 2, 3)), (1, 0), value="x"), TypeError, r"pad: value"),
    (lambda: F.pad("x", (1, 0)), TypeError, r"pad"),
])
def test_errors_name_the_op(call, cls, match) -> None:
    with pytest.raises(cls, match=match):
        call()
