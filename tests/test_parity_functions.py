"""torch top-level functions and Tensor methods that tessera adds for parity, checked against
torch 2.13 (values, dtypes, shapes, exception types and, for assert_close, messages)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import tessera as ts


def _raised(fn: Callable[[], Any]) -> Any:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e)
    return None


def _conv(x: Any, lib: Any) -> Any:
    """A nested structure of NumPy arrays as `lib`'s tensors."""
    if isinstance(x, np.ndarray):
        return ts.asarray(x) if lib is ts else torch.from_numpy(x)
    if isinstance(x, list):
        return [_conv(v, lib) for v in x]
    if isinstance(x, tuple):
        return tuple(_conv(v, lib) for v in x)
    if isinstance(x, dict):
        return {k: _conv(v, lib) for k, v in x.items()}
    return x


f32, f64, i64 = np.float32, np.float64, np.int64
A = np.array
CLOSE_CASES = [
    (A([1., 2., 3.], f32), A([1., 2.5, 3.], f32), {}),
    (A([1., 2.], f32), A([1., 2., 3.], f32), {}),
    (A([1., 2.], f32), A([1., 2.], f64), {}),
    (A([1., 2.], f32), A([1., 2.], f64), {"check_dtype": False}),
    (A(1., f32), 1.0, {}),
    (1.0, 1.0 + 1e-9, {}),
    (1, 1.0, {}),
    (1.0, 2.0, {}),
    ([A(1., f32)], (A(1., f32),), {}),
    ({"a": A(1., f32)}, {"a": A(2., f32)}, {}),
    ([A([1.], f32), A([2.], f32)], [A([1.], f32), A([3.], f32)], {}),
    ([1, 2], [1, 2, 3], {}),
    (A([np.nan], f32), A([np.nan], f32), {}),
    (A([np.nan], f32), A([np.nan], f32), {"equal_nan": True}),
    (A([1, 2], i64), A([1, 3], i64), {}),
    (A([1.], f32), A([1.1], f32), {"rtol": 0.2}),
    (A([1.], f32), A([1.1], f32), {"rtol": 0.2, "atol": 0}),
    (A([1.], f32), A([1.1], f32), {"msg": "custom"}),
    (A([1.], f32), A([1.1], f32), {"msg": lambda m: "pre " + m}),
    (A([True]), A([False]), {}),
    (A([[1., 2.], [3., 4.]], f32), A([[1., 2.], [3., 5.]], f32), {}),
    (A([[1., 2.], [3., 4.]], f64), A([[1., 2.], [3., 4. + 1e-9]], f64), {}),
    (A(1., f32), A(2., f32), {}),
    (None, None, {}),
    (None, 1, {}),
    ("a", "a", {}),
    (True, False, {}),
    (A([1.], f32), A([1.], f32), {"rtol": 1e-3, "atol": 1e-3}),
    (A([0., 1.], f32), A([1e-6, 1.], f32), {}),
    (A([], f32), A([], f32), {}),
    (A([1 + 1j], np.complex64), A([1 + 2j], np.complex64), {}),
]


@pytest.mark.parametrize("case", range(len(CLOSE_CASES)))
def test_assert_close_matches_torch(case: int) -> None:
    a, e, kw = CLOSE_CASES[case]
    want = _raised(lambda: torch.testing.assert_close(_conv(a, torch), _conv(e, torch), **kw))
    got = _raised(lambda: ts.testing.assert_close(_conv(a, ts), _conv(e, ts), **kw))
    if want is None:
        assert got is None
    else:
        assert got is not None and got[0] is want[0]
        if want[0] is AssertionError:
            # Shapes and dtypes print as torch.Size / torch.float32 there: compare up to ':'.
            if "do not match:" in want[1]:
                assert got[1].split(":")[0] == want[1].split(":")[0]
            else:
                assert got[1] == want[1]


def test_assert_close_message_details() -> None:
    with pytest.raises(AssertionError) as info:
        ts.testing.assert_close(ts.asarray([1., 2., 3.]), ts.asarray([1., 2.5, 3.]))
    assert str(info.value) == ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 "
                               "(33.3%)\nGreatest absolute difference: 0.5 at index (1,) (up to "
                               "1e-05 allowed)\nGreatest relative difference: 0.20000000298023224"
                               " at index (1,) (up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]"):
        ts.testing.assert_close({"a": 1.0}, {"a": 2.0})
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        ts.testing.assert_close(ts.ones(1), ts.ones(1), atol=1.0)
    ts.testing.assert_close(ts.ones(2), np.ones(2, np.float32))
    ts.testing.assert_allclose(ts.ones(2), np.ones(2))
