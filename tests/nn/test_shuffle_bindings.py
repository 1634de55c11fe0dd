"""F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle and F.native_channel_shuffle are the C++
ops themselves (csrc/ops/nn/shuffle.h, bound in csrc/python/bind_shuffle.cpp), and ts.<name> is
the same object: values and gradients against torch's (hypothesis over shapes, dtypes and
layouts, empty tensors), float64 gradcheck, and errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import compare_grads, strided_views

NAMES = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]
PARAM = {"pixel_shuffle": "upscale_factor", "pixel_unshuffle": "downscale_factor",
         "channel_shuffle": "groups", "native_channel_shuffle": "groups"}


@pytest.mark.parametrize("name", NAMES)
def test_is_the_binding_and_the_namespace_twin(name: str) -> None:
    f = getattr(F, name)
    assert f is getattr(_C, name) is getattr(ts, name)
    assert list(inspect.signature(f).parameters) == ["input", PARAM[name]]


def _shape(draw, name: str, r: int):
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    if name == "pixel_shuffle":
        return tuple(lead) + (draw(st.integers(0, 2)) * r * r, draw(st.integers(0, 3)),
                              draw(st.integers(0, 3)))
    if name == "pixel_unshuffle":
        return tuple(lead) + (draw(st.integers(0, 3)), draw(st.integers(0, 2)) * r,
                              draw(st.integers(0, 2)) * r)
    return (draw(st.integers(0, 3)), draw(st.integers(0, 2)) * r) + \
        tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(NAMES), st.integers(1, 3),
       st.sampled_from(["float32", "float64", "int64", "bool", "complex64"]))
def test_values_match_torch(data, name: str, r: int, dtype: str) -> None:
    shape = _shape(data.draw, name, r)
    a = np.random.default_rng(0).standard_normal(shape)
    a = (a > 0) if dtype == "bool" else (a * 5).astype(dtype)
    a = strided_views(data.draw, a)
    got = getattr(F, name)(ts.asarray(a), r)
    want = getattr(TF, name)(torch.tensor(np.ascontiguousarray(a)), r)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name,shape,r", [("pixel_shuffle", (2, 8, 3, 2), 2),
                                          ("pixel_shuffle", (9, 2, 2), 3),
                                          ("pixel_shuffle", (2, 1, 4, 1, 2), 2),
                                          ("pixel_unshuffle", (2, 3, 4, 6), 2),
                                          ("pixel_unshuffle", (1, 2, 1, 6, 3), 3),
                                          ("channel_shuffle", (2, 6, 3), 3),
                                          ("channel_shuffle", (2, 4, 2, 3), 2)])
def test_gradients_match_torch_and_gradcheck(name: str, shape, r: int) -> None:
    a = np.random.default_rng(1).standard_normal(shape)
    compare_grads(lambda x: getattr(F, name)(x, r), lambda x: getattr(TF, name)(x, r), [a])
    compare_grads(lambda x: getattr(F, name)(x, r), lambda x: getattr(TF, name)(x, r), [a],
                  transpose=True)
    x = ts.asarray(a, requires_grad=True)
    assert ts.autograd.gradcheck(lambda t: getattr(F, name)(t, r), (x,))


def test_keyword_forms_and_modules() -> None:
    a = np.random.default_rng(2).standard_normal((1, 4, 2, 2)).astype("float32")
    x = ts.asarray(a)
    np.testing.assert_array_equal(F.pixel_shuffle(input=x, upscale_factor=2).numpy(),
                                  TF.pixel_shuffle(torch.tensor(a), 2).numpy())
    np.testing.assert_array_equal(ts.nn.PixelUnshuffle(2)(x).numpy(),
                                  TF.pixel_unshuffle(torch.tensor(a), 2).numpy())
    np.testing.assert_array_equal(ts.nn.ChannelShuffle(2)(x).numpy(),
                                  torch.nn.ChannelShuffle(2)(torch.tensor(a)).numpy())


@pytest.mark.parametrize("name,shape,r,match", [
    ("pixel_shuffle", (2, 6, 3, 4), 2, r"pixel_shuffle: .*upscale_factor\^2 = 4.*\(2, 6, 3, 4\)"),
    ("pixel_shuffle", (4, 4), 2, r"pixel_shuffle: .*at least 3 dimensions.*\(4, 4\)"),
    ("pixel_shuffle", (1, 4, 2, 2), 0, r"pixel_shuffle: .*positive upscale_factor, but got 0"),
    ("pixel_unshuffle", (2, 3, 5, 6), 2, r"pixel_unshuffle: .*height.*\(2, 3, 5, 6\)"),
    ("pixel_unshuffle", (2, 3, 4, 5), 2, r"pixel_unshuffle: .*width.*\(2, 3, 4, 5\)"),
    ("pixel_unshuffle", (2, 3, 4, 4), -1, r"pixel_unshuffle: .*positive downscale_factor"),
    ("channel_shuffle", (2, 6, 3), 4, r"channel_shuffle: .*groups 4.*\(2, 6, 3\)"),
    ("channel_shuffle", (2, 4), 2, r"channel_shuffle: .*> 2 dims.*\(2, 4\)"),
    ("native_channel_shuffle", (2, 4, 3), 0, r"native_channel_shuffle: .*positive"),
])
def test_errors_name_the_op_and_are_torch_class(name: str, shape, r: int, match: str) -> None:
    a = np.zeros(shape, np.float32)
    with pytest.raises(ValueError, match=match) as e:
        getattr(F, name)(ts.asarray(a), r)
    assert isinstance(e.value, RuntimeError)  # torch's class
    with pytest.raises(RuntimeError):
        getattr(TF, name)(torch.tensor(a), r)


def test_non_int_factor_is_a_type_error_as_torch() -> None:
    # the Python version took int(2.0); torch refuses a float factor
    x = ts.zeros((1, 4, 2, 2))
    with pytest.raises(TypeError, match="pixel_shuffle"):
        F.pixel_shuffle(x, 2.0)
    with pytest.raises(TypeError):
        TF.pixel_shuffle(torch.zeros(1, 4, 2, 2), 2.0)
    with pytest.raises(TypeError, match="channel_shuffle"):
        F.channel_shuffle([[1.0]], 1)
