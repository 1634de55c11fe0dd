"""``tessera.testing.assert_close``: torch.testing.assert_close's comparison, defaults and
messages for tessera tensors, NumPy arrays, Python scalars and (nested) sequences/mappings."""
from __future__ import annotations

import builtins
import collections.abc
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from ._C import Tensor

__all__ = ["assert_close", "assert_allclose"]

# torch's default (rtol, atol) per dtype name; integer and bool dtypes compare exactly.
_DEFAULT_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
                "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPE = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}

Msg = Optional[Union[str, Callable[[str], str]]]


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and the generated message."""

    def __init__(self, kind: type, message: str) -> None:
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, ""


def _dtype_name(dt: Any) -> str:
    return str(dt).rsplit(".", 1)[-1]


def _tolerances(dtype_name: str, rtol: Optional[float], atol: Optional[float]) -> Tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol  # type: ignore[return-value]
    return _DEFAULT_TOL.get(dtype_name, (0.0, 0.0))


def _mismatch_msg(identifier: str, extra: Optional[str], abs_diff: Any, abs_idx: Any,
                  atol: float, rel_diff: Any, rel_idx: Any, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind: str, diff: Any, idx: Any, tol: float) -> str:
        msg = (f"{kind.title()} difference: {diff}" if idx is None
               else f"Greatest {kind} difference: {diff} at index {idx}")
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _isclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return a == b if rtol == 0 and atol == 0 else \
            np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _tensor_msg(a: np.ndarray, b: np.ndarray, matches: np.ndarray, rtol: float,
                atol: float) -> str:
    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, bf, mf = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if a.dtype.kind in "biu":
        af, bf = af.astype(np.int64), bf.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(af - bf)
        abs_diff[mf] = 0
        rel_diff = abs_diff / np.abs(bf)
        if a.dtype.kind in "biu":  # torch divides integers into the default float32
            rel_diff = rel_diff.astype(np.float32)
        rel_diff[mf] = 0
    # torch.max picks NaN first when present
    ia = int(np.argmax(np.isnan(abs_diff))) if np.isnan(abs_diff).any() else int(np.argmax(abs_diff))
    ir = int(np.argmax(np.isnan(rel_diff))) if np.isnan(rel_diff).any() else int(np.argmax(rel_diff))
    unravel = lambda i: tuple(int(v) for v in np.unravel_index(i, a.shape))  # noqa: E731
    as_py = lambda v: v.item()  # noqa: E731
    return _mismatch_msg("Tensor-likes", extra, as_py(abs_diff[ia]), unravel(ia), atol,
                         as_py(rel_diff[ir]), unravel(ir), rtol)


def _host(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if _dtype_name(t.dtype) == "bfloat16":
            t = t.float()
        return np.asarray(t.numpy())
    return np.asarray(x)


def _compare_tensors(actual: Any, expected: Any, rtol: Optional[float], atol: Optional[float],
                     equal_nan: bool, check_device: bool, check_dtype: bool,
                     check_stride: bool) -> None:
    a_dev = actual.device if isinstance(actual, Tensor) else "cpu"
    e_dev = expected.device if isinstance(expected, Tensor) else "cpu"
    a_dt = _dtype_name(actual.dtype)
    e_dt = _dtype_name(expected.dtype)
    if tuple(actual.shape) != tuple(expected.shape):
        raise _Mismatch(AssertionError, f"The values for attribute 'shape' do not match: "
                        f"{tuple(actual.shape)} != {tuple(expected.shape)}.")
    if check_device and str(a_dev) != str(e_dev):
        raise _Mismatch(AssertionError, f"The values for attribute 'device' do not match: "
                        f"{a_dev} != {e_dev}.")
    if check_dtype and a_dt != e_dt:
        raise _Mismatch(AssertionError, f"The values for attribute 'dtype' do not match: "
                        f"{actual.dtype} != {expected.dtype}.")
    if check_stride and tuple(actual.strides) != tuple(expected.strides):
        raise _Mismatch(AssertionError, f"The values for attribute 'stride()' do not match: "
                        f"{tuple(actual.strides)} != {tuple(expected.strides)}.")
    a, b = _host(actual), _host(expected)
    if a.dtype != b.dtype:  # check_dtype=False: compare in the common dtype
        common = np.result_type(a.dtype, b.dtype)
        a, b = a.astype(common), b.astype(common)
        a_dt = str(common)
    r, t = _tolerances(a_dt, rtol, atol)
    matches = _isclose(a, b, r, t, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_msg(a.item(), b.item(), r, t))
    raise _Mismatch(AssertionError, _tensor_msg(a, b, matches, r, t))


def _is_tensor_like(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray)) or type(x).__module__.startswith("torch")


def _compare_item(key: Any, actual: Any, expected: Any, **kw: Any) -> None:
    try:
        _compare(actual, expected, **kw)
    except _Mismatch as m:
        m.path = f"[{key!r}]" + m.path
        raise


def _compare(actual: Any, expected: Any, **kw: Any) -> None:
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
        return
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        if type(actual).__module__.startswith("torch"):
            actual = actual.detach().cpu().numpy()
        if type(expected).__module__.startswith("torch"):
            expected = expected.detach().cpu().numpy()
        return _compare_tensors(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"],
                                kw["check_device"], kw["check_dtype"], kw["check_stride"])
    if isinstance(actual, builtins.bool) and isinstance(expected, builtins.bool):
        if actual != expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if isinstance(actual, (int, float, complex)) and isinstance(expected, (int, float, complex)) \
            and not isinstance(actual, builtins.bool) and not isinstance(expected, builtins.bool):
        if kw["check_dtype"] and type(actual) is not type(expected):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                            f"{type(expected)}.")
        common = complex if complex in (type(actual), type(expected)) else \
            float if float in (type(actual), type(expected)) else int
        r, t = _tolerances(_NUMBER_DTYPE[common], kw["rtol"], kw["atol"])
        a, e = np.asarray(actual), np.asarray(expected)
        if not _isclose(a, e, r, t, kw["equal_nan"]).all():
            raise _Mismatch(AssertionError, _scalar_msg(actual, expected, r, t))
        return
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) \
            and not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare_item(i, a, e, **kw)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            missing, extra = ek - ak, ak - ek
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            + (f"Missing keys in the actual mapping: {sorted(map(repr, missing))}\n"
                               if missing else "")
                            + (f"Extra keys in the actual mapping: {sorted(map(repr, extra))}"
                               if extra else ""))
        for k in actual:
            _compare_item(k, actual[k], expected[k], **kw)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False, msg: Msg = None) -> None:
    """Asserts ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with equal shapes,
    devices and dtypes (torch.testing.assert_close). Defaults per dtype: float16 (1e-3, 1e-5),
    bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), exact otherwise.
    Inputs may be tensors, NumPy arrays, Python numbers, or sequences / mappings of them.
    Raises AssertionError (TypeError for inputs it cannot compare; ValueError when only one of
    rtol / atol is given). `msg` replaces the message (a callable receives the generated one)."""
    if (rtol is None) != (atol is None):
        _tolerances("float32", rtol, atol)
    try:
        _compare(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    except _Mismatch as m:
        text = m.message
        if m.kind is AssertionError:
            if m.path:
                text += f"\n\nThe failure occurred for item {m.path}"
        if isinstance(msg, str):
            text = msg
        elif callable(msg):
            text = msg(text)
        raise m.kind(text) from None


def assert_allclose(actual: Any, expected: Any, rtol: Optional[float] = None,
                    atol: Optional[float] = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated torch.testing.assert_allclose: assert_close without the dtype check and
    with equal_nan=True."""
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, msg=msg or None)
