"""An integer zero divisor against torch (CPU): every spelling of floor division, remainder,
div(rounding_mode=) and fmod (function, method, operator, in place, reflected, a Python number,
a 0-d tensor, broadcast, non-contiguous) raises torch's RuntimeError("ZeroDivisionError") -
tessera's ZeroDivisionError, which is also a RuntimeError - naming the op; floating divisors
still give inf/nan, and divisors without a zero the values torch gives."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from tessera import errors
import torch
from harness import arrays, assert_same, shapes

INTS = ["int8", "int16", "int32", "int64", "uint8"]

CALLS = {
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "floordiv": lambda m, a, b: a // b,
    "rfloordiv": lambda m, a, b: 7 // b,
    "floor_divide_": lambda m, a, b: a.clone().floor_divide_(b),
    "ifloordiv": lambda m, a, b: a.clone().__ifloordiv__(b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "mod": lambda m, a, b: a % b,
    "rmod": lambda m, a, b: 7 % b,
    "remainder_": lambda m, a, b: a.clone().remainder_(b),
    "imod": lambda m, a, b: a.clone().__imod__(b),
    "remainder_number": lambda m, a, b: m.remainder(5, b),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "divide_trunc": lambda m, a, b: a.divide(b, rounding_mode="trunc"),
    "div_trunc_": lambda m, a, b: a.clone().div_(b, rounding_mode="trunc"),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "fmod_": lambda m, a, b: a.clone().fmod_(b),
}
DIVISORS = {
    "tensor": lambda m, dt: m.asarray(np.array([1, 0, 2]), dtype=getattr(m, dt)),
    "zero_d": lambda m, dt: m.asarray(np.array(0), dtype=getattr(m, dt)),
    "number": lambda m, dt: 0,
    "broadcast": lambda m, dt: m.asarray(np.array([0]), dtype=getattr(m, dt)),
    "noncontig": lambda m, dt: m.asarray(np.array([[1, 5], [0, 6], [2, 7]]), dtype=getattr(m, dt)).t()[0],
    "bool_false": lambda m, dt: m.asarray(np.array([True, False, True])),
}


# A number divisor with a number dividend is Python's own arithmetic: not a tessera call.
PAIRS = [(c, d) for c in CALLS for d in DIVISORS
         if not (d == "number" and c in ("rfloordiv", "rmod", "remainder_number"))]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("call,divisor", PAIRS)
def test_zero_divisor_raises_like_torch(call, divisor, dtype):

    def f(m):
        a = m.asarray(np.array([5, 7, 0]), dtype=getattr(m, dtype))
        return CALLS[call](m, a, DIVISORS[divisor](m, dtype)).tolist()

    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(torch)
    with pytest.raises(errors.ZeroDivisionError, match="ZeroDivisionError|division by zero"):
        f(ts)


@pytest.mark.parametrize("call", ["floor_divide_", "remainder_", "div_trunc_", "ifloordiv"])
def test_inplace_zero_divisor_leaves_self_unchanged(call):
    x = ts.asarray([5, 7, 9])
    op = {"floor_divide_": lambda: x.floor_divide_(ts.asarray([1, 0, 2])),
          "remainder_": lambda: x.remainder_(ts.asarray([1, 0, 2])),
          "div_trunc_": lambda: x.div_(ts.asarray([1, 0, 2]), rounding_mode="trunc"),
          "ifloordiv": lambda: x.__ifloordiv__(0)}[call]
    with pytest.raises(RuntimeError, match=r"^\w+_?: ZeroDivisionError"):
        op()
    assert x.tolist() == [5, 7, 9]


def test_error_names_the_op():
    a, z = ts.asarray([4, 5]), ts.asarray([0, 1])
    for call, name in [(lambda: a // z, "floor_divide"), (lambda: a % z, "remainder"),
                       (lambda: ts.fmod(a, z), "fmod"), (lambda: a.remainder_(z), "remainder_"),
                       (lambda: ts.div(a, z, rounding_mode="trunc"), "div")]:
        with pytest.raises(errors.ZeroDivisionError, match=rf"^{name}: .*int64"):
            call()


@given(st.sampled_from(INTS + ["float32", "float64"]), st.sampled_from(INTS + ["float32"]),
       shapes(0, 2, 0, 3), st.data())
def test_floor_divide_remainder_match_torch(da, db, shape, data):
    lo = lambda d, n: 0 if d == "uint8" else -n
    a = data.draw(arrays(da, shape, elements=st.integers(lo(da, 20), 20) if da[0] in "iu" else
                         st.floats(-20, 20, width=32)))
    b = data.draw(arrays(db, shape, elements=st.integers(lo(db, 3), 3) if db[0] in "iu" else
                         st.floats(-3, 3, width=32)))
    for fn in (lambda m, x, y: m.floor_divide(x, y), lambda m, x, y: m.remainder(x, y),
               lambda m, x, y: x // y, lambda m, x, y: x % y, lambda m, x, y: m.fmod(x, y),
               lambda m, x, y: m.div(x, y, rounding_mode="trunc")):
        # the standard's floor division by an infinite operand is a deliberate difference;
        # these inputs stay finite
        try:
            want = fn(torch, torch.asarray(a), torch.asarray(b))
        except RuntimeError:
            with pytest.raises(errors.ZeroDivisionError):
                fn(ts, ts.asarray(a), ts.asarray(b))
            continue
        assert_same(fn(ts, ts.asarray(a), ts.asarray(b)), want)
