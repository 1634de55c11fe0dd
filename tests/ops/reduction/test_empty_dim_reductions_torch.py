"""max/min/amax/amin/argmax/argmin along an empty dim against torch: PyTorch's IndexError
"Expected reduction dim d to have non-zero size" naming the op; along a non-empty dim of an
empty tensor they return an empty result; over everything tessera keeps NumPy's ValueError
(a RuntimeError too, torch's class there)."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import same_as_torch

OPS = {
    "max": lambda m, x, d: m.max(x, d)[0],
    "min": lambda m, x, d: x.min(dim=d).values,
    "amax": lambda m, x, d: m.amax(x, d),
    "amin": lambda m, x, d: x.amin(dim=d, keepdim=True),
    "argmax": lambda m, x, d: m.argmax(x, d),
    "argmin": lambda m, x, d: x.argmin(dim=d),
}


@given(st.lists(st.integers(0, 2), min_size=1, max_size=3).filter(lambda s: 0 in s),
       st.sampled_from(["float32", "int64"]), st.sampled_from(sorted(OPS)), st.data())
def test_empty_dim_matches_torch(shape, dtype, op, data):
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    same_as_torch(lambda m: OPS[op](m, m.zeros(shape, dtype=getattr(m, dtype)), d).tolist(),
                  exact_error=True)


@pytest.mark.parametrize("op", sorted(OPS))
def test_message_names_op_and_dim(op):
    with pytest.raises(IndexError, match=rf"{op}\(\): Expected reduction dim 1 to have non-zero"):
        OPS[op](ts, ts.zeros((2, 0)), 1)


def test_full_reduction_of_empty_raises_runtime_error():
    for f in (lambda: ts.zeros((0, 3)).max(), lambda: ts.zeros(0).amin()):
        with pytest.raises(RuntimeError):
            f()
