"""F.bilinear is the C++ op itself (csrc/ops/nn/bilinear.h, bound in
csrc/python/bind_bilinear.cpp; ts.bilinear is the same object): values and gradients against
torch's (hypothesis over batch shapes, sizes, dtypes, layouts, empty batches), float64
gradcheck, and errors naming the op."""
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


def test_is_the_binding() -> None:
    assert F.bilinear is _C.bilinear is ts.bilinear
    assert list(inspect.signature(F.bilinear).parameters) == ["input1", "input2", "weight",
                                                              "bias"]


@settings(max_examples=40, deadline=None)
@given(st.data(), st.lists(st.integers(0, 3), max_size=2), st.integers(1, 4), st.integers(1, 4),
       st.integers(0, 3), st.booleans(), st.sampled_from(["float32", "float64"]))
def test_values_and_gradients_match_torch(data, batch, in1: int, in2: int, out: int,
                                          with_bias: bool, dtype: str) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    arrs = [strided_views(data.draw, rng.standard_normal(tuple(batch) + (in1,))),
            rng.standard_normal(tuple(batch) + (in2,)), rng.standard_normal((out, in1, in2))]
    if with_bias:
        arrs.append(rng.standard_normal((out,)))
    compare_grads(lambda *a: F.bilinear(*a), lambda *a: TF.bilinear(*a),
                  [a.astype(dtype) for a in arrs], dtype=dtype,
                  rtol=1e-10 if dtype == "float64" else 1e-4)


def test_gradcheck_float64() -> None:
    rng = np.random.default_rng(1)
    xs = [ts.asarray(rng.standard_normal(s), requires_grad=True)
          for s in [(3, 2), (3, 4), (5, 2, 4), (5,)]]
    assert ts.autograd.gradcheck(F.bilinear, tuple(xs))


def test_errors_name_the_op_and_are_torch_class() -> None:
    cases = [((2, 3), (2, 4), (5, 3, 3), r"bilinear: input2 size does not match weight size: "
                                         r"got 4 but expected 3"),
             ((2, 2), (2, 4), (5, 3, 4), r"bilinear: input1 size does not match weight size"),
             ((2, 3), (2, 4), (3, 4), r"bilinear: expected a 3-D weight \(out, in1, in2\)")]
    for s1, s2, sw, match in cases:
        with pytest.raises(ValueError, match=match) as e:
            F.bilinear(ts.zeros(s1), ts.zeros(s2), ts.zeros(sw))
        assert isinstance(e.value, RuntimeError)
        with pytest.raises(RuntimeError):
            TF.bilinear(torch.zeros(s1), torch.zeros(s2), torch.zeros(sw))
