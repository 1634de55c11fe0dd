"""Bad input raises a clear, typed error: never a crash, a hang, a garbage result, an
AttributeError from inside a wrapper, or pybind11's "incompatible function arguments" dump.

Two parts: a curated table of (call, exception type, message regex) for the cases fixed while
fuzzing (benchmarks/fuzz_bad_input.py is the crash-guarded explorer), and an in-process sweep
of every public callable with junk arguments that cannot allocate or loop (None, str, object).
"""
from __future__ import annotations

import inspect
import math
import re
import types

import pytest

import tessera as ts

ALLOWED = (TypeError, ValueError, IndexError, RuntimeError, MemoryError, NotImplementedError)


def x23():
    return ts.ones((2, 3))


CASES = [
    # pybind11 overload failures: one line naming the op, the argument types and signature
    (lambda: ts.exp(x23(), 3), TypeError, r"^exp\(\): invalid argument types \(Tensor, int\)"),
    (lambda: ts.add(x23(), x23(), 1, 2), TypeError, r"^add\(\): invalid argument types"),
    (lambda: ts.exp(), TypeError, r"^exp\(\): missing required arguments"),
    (lambda: ts.exp(x=x23()), TypeError, r"^exp\(\): got an unexpected keyword argument 'x'"),
    (lambda: x23().exp(1), TypeError, r"^Tensor\.exp\(\): invalid argument types \(int\)"),
    (lambda: x23().clone(memory_format=3), TypeError,
     r"clone\(\): memory_format must be a tessera memory format .*got int"),
    (lambda: x23().clone(memory_fmt=3), TypeError,
     r"got an unexpected keyword argument 'memory_fmt'"),
    (lambda: ts._C._sort(x23(), "a", False), TypeError,
     r"^sort\(\): invalid argument types \(Tensor, str, bool\)"),
    (lambda: ts._C._sort(x23(), 0, descending=True), TypeError,
     r"^sort\(\): got an unexpected keyword argument 'descending'"),
    (lambda: ts._C._sort(x23(), 2**70, False), ValueError,
     r"^sort\(\): integer argument 1180591620717411303424 is out of range"),
    (lambda: ts.get_num_threads(1), TypeError, r"^get_num_threads\(\): invalid argument types"),
    # Python wrappers reading .ndim/.dtype of a non-tensor
    (lambda: ts.amax(None), TypeError, r"^amax: argument 1 must be a tensor, got NoneType"),
    (lambda: ts.softmax("abc", 0), TypeError,  # (F.softmax's C++ op: torch's own wording)
     r"^softmax\(\): argument 'input' \(position 1\) must be Tensor, not str"),
    (lambda: ts.cat(["a", "b"]), TypeError, r"^cat: argument 1 \(a sequence\) must be tensors"),
    (lambda: x23().expand_as(None), TypeError,  # a C++ method (bind_views.cpp)
     r"^expand_as: argument 1 must be a tensor, got NoneType"),
    (lambda: ts.linalg.matrix_exp(object()) if hasattr(ts.linalg, "matrix_exp")
     else ts.matrix_exp(object()), TypeError, r"matrix_exp: argument 1 must be a tensor"),
    # hangs found by the fuzzer
    (lambda: ts.mvlgamma(x23(), 2**62), ValueError, r"^mvlgamma: p=\d+ is too large"),
    (lambda: ts.mvlgamma(x23(), 1.5), TypeError, r"^mvlgamma: p must be an int, got float"),
    (lambda: ts.mvlgamma(x23(), math.nan), TypeError, r"^mvlgamma: p must be an int"),
    (lambda: ts.tensor_split(x23(), 2**62), ValueError, r"^tensor_split: \d+ sections"),
    # OverflowError / garbage results
    (lambda: ts.split(x23(), math.inf), TypeError, r"^split: split_size must be an int"),
    (lambda: ts.hsplit(x23(), math.inf), TypeError, r"^hsplit: .*must be an int"),
    # (histc's binding: pybind11's conversion errors, named by arg_errors.cpp)
    (lambda: ts.histc(x23(), 2**70), ValueError,
     r"^histc\(\): integer argument \d+ is out of range"),
    (lambda: ts.histc(x23(), 1.5), TypeError,
     r"^histc\(\): invalid argument types \(Tensor, float\)"),
    (lambda: ts.chain_matmul("abc"), TypeError, r"^chain_matmul: matrix 0 must be a 2-D tensor"),
    (lambda: ts.chain_matmul(ts.ones(3)), ValueError, r"^chain_matmul: matrix 0 .* 1-D"),
    (lambda: ts.random.permutation(x23(), dtype="bogus"), TypeError, r"bogus"),
    (lambda: ts.random.permutation(x23(), device="cuda"), RuntimeError, r"CUDA"),
    (lambda: ts.chunk(x23(), None), TypeError, r"^chunk: chunks must be an int, got NoneType"),
    (lambda: ts.zeros((0,)).chunk(2**62), ValueError, r"^chunk: \d+ empty chunks"),
    (lambda: ts.polygamma(1.5, x23()), TypeError, r"^polygamma: n must be an int"),
    (lambda: x23().tile(math.inf), TypeError, r"^tile: reps must be an int, got float"),
    (lambda: x23().record_stream(None), TypeError, r"^record_stream: argument 1 has an "
     r"unsupported type NoneType"),
    (lambda: x23().record_stream(x23()), TypeError, r"^record_stream: argument 1 cannot be a "
     r"tensor"),
    # sizes beyond int64 / absurd sizes / negative sizes
    (lambda: ts.zeros(2**70), ValueError, r"^zeros: .*dimension \d+ is out of range"),
    (lambda: ts.reshape(x23(), (2, 2**70)), ValueError, r"^reshape: .*out of range"),
    (lambda: ts.eye(2**70), ValueError, r"^eye: integer argument out of range"),
    (lambda: ts.zeros((2**31, 2**31)), ValueError, r"^zeros: .*too large"),
    (lambda: ts.ones(2**62), ValueError, r"^ones: .*too large"),
    (lambda: ts.empty((2, -3)), ValueError, r"^empty: negative dimension in shape \(2, -3\)"),
    (lambda: ts.zeros(math.nan), TypeError, r"^zeros: "),
    # a string where a number belongs is a type error, named by the op
    (lambda: x23().normal_("abc"), TypeError, r"^normal_: expected a number, got str"),
    (lambda: ts.random.uniform("abc"), TypeError, r"^uniform: expected a number, got str"),
    # messages from inner calls get the public op's name in front
    (lambda: ts.rand(math.nan), TypeError, r"^rand: "),
    (lambda: ts.full((2,), x23()), ValueError, r"^full: "),
    # devices: no CUDA here is a RuntimeError saying so
    (lambda: ts.zeros(2, device="cuda"), RuntimeError, r"^zeros: .*CUDA is not available"),
    (lambda: ts.asarray([1.0], device="cuda"), RuntimeError, r"^asarray: .*CUDA is not available"),
    (lambda: x23().to("cuda"), RuntimeError, r"^to: .*CUDA is not available"),
    # a float where an int belongs is a TypeError, not silently truncated
    (lambda: ts.narrow(x23(), 0, 1.5, 1), TypeError, r"^narrow: start must be an int"),
    (lambda: ts.narrow(x23(), 0, math.inf, 1), TypeError, r"^narrow: start must be an int"),
    (lambda: ts.rot90(x23(), 1.5), TypeError, r"^rot90: k must be an int, got float"),
    (lambda: ts.rot90(x23(), math.nan), TypeError, r"^rot90: k must be an int"),
    (lambda: ts.tril_indices(3.5, 3), TypeError, r"^tril_indices: row must be an int"),
    (lambda: ts.triu_indices(3, 3, 2**70), ValueError, r"^triu_indices: offset=\d+ is out of"),
    (lambda: ts.tril_indices(2**40, 2**40), RuntimeError, r"^tril_indices: .*overflowed"),
    # operators and indexing follow Python/NumPy
    (lambda: x23() + "abc", TypeError, r"unsupported operand"),
    (lambda: x23()["a"], IndexError, r"only integers, slices"),
    (lambda: x23()[2**70], IndexError, r"out of bounds"),
    (lambda: x23()[:, 7], IndexError, r"index 7 is out of bounds for axis 1 with size 3"),
    (lambda: x23().__setitem__(0, object()), TypeError, r"^setitem: the value must be"),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_curated(i):
    call, exc, pattern = CASES[i]
    with pytest.raises(exc) as info:
        call()
    assert re.search(pattern, str(info.value)), str(info.value)
    assert "incompatible function arguments" not in str(info.value)


def test_random_permutation_places_a_tensor_copy():
    out = ts.random.permutation(x23(), dtype=ts.float64)
    assert out.dtype == ts.float64 and out.shape == (2, 3)


def test_catch_all_overload_leaves_converting_calls_alone():
    """The catch-all refuses pybind11's no-conversion pass, so arguments that need the
    converting pass (a NumPy int for an int64 parameter, an int for a double) still bind."""
    import numpy as np
    assert ts._C._sort(x23(), np.int64(1), False).shape == (2, 3)
    assert ts.clamp(x23(), 0, 1).tolist() == x23().tolist()
    assert "Overloaded" not in (ts._C.exp.__doc__ or "")  # help() shows the real signature


def test_overflow_errors_are_also_value_or_type_errors():
    with pytest.raises(OverflowError) as info:
        ts.asarray([2**64])
    assert isinstance(info.value, ValueError) and str(info.value).startswith("asarray")
    with pytest.raises(TypeError):
        ts.split(x23(), math.inf)


def test_int_arguments_still_accept_integer_tensors():
    assert ts.narrow(x23(), 0, ts.asarray(1), 1).shape == (1, 3)
    assert ts.rot90(x23(), 3).shape == (3, 2)
    assert ts.tril_indices(3, 3, 1).shape == (2, 8)


def test_random_fills_float_with_mantissa_range():
    y = ts.zeros(1000).random_()
    assert float(y.max()) <= 2**24 and float(y.min()) >= 0 and float(y.max()) > 1


def test_polygamma_huge_n_is_signed_inf_like_torch():
    y = ts.polygamma(200, ts.asarray([0.5, 2.0], dtype=ts.float64))
    assert y.tolist() == [-math.inf, -math.inf]
    assert ts.polygamma(201, ts.asarray([2.0])).tolist() == [math.inf]


def test_mvlgamma_still_sums_terms():
    import numpy as np
    from math import lgamma, log, pi
    x = ts.asarray([3.0, 4.5], dtype=ts.float64)
    want = [sum(lgamma(v - i / 2) for i in range(3)) + 3 * 2 / 4 * log(pi) for v in (3.0, 4.5)]
    np.testing.assert_allclose(np.asarray(ts.mvlgamma(x, 3)), want, rtol=1e-12)


# ---- the sweep ------------------------------------------------------------------------------

JUNK = [None, "abc", object()]
# Callables for which some junk argument is a valid input (predicates, state queries, factories
# whose every parameter is optional, dtype introspection on names).
ACCEPTS_JUNK = {
    "is_tensor", "is_nonzero", "build_config", "get_default_device", "get_default_dtype",
    "get_num_threads", "get_rng_state", "initial_seed", "is_autocast_enabled",
    "get_autocast_dtype", "is_grad_enabled", "seed", "manual_seed", "set_default_device",
    "set_default_dtype", "set_autocast_enabled", "set_autocast_dtype", "set_rng_state",
    "set_num_threads", "save", "load", "from_dlpack", "asarray", "as_tensor", "tensor",
    "result_type", "isdtype", "can_cast", "finfo", "iinfo", "broadcast_shapes", "einsum",
    "numel", "from_numpy", "is_storage", "typename", "vmap", "set_float32_matmul_precision",
}


def _public_callables():
    out = []
    for prefix, mod in (("", ts), ("linalg.", ts.linalg), ("fft.", ts.fft),
                        ("random.", ts.random)):
        for n in sorted(dir(mod)):
            f = getattr(mod, n)
            if (n.startswith("_") or inspect.ismodule(f) or isinstance(f, type)
                    or not callable(f) or getattr(f, "__module__", "") == "typing"):
                continue
            if n in ACCEPTS_JUNK:
                continue
            out.append((prefix + n, f))
    return out


def _check_raised(name, e):
    assert isinstance(e, ALLOWED), f"{name}: {type(e).__name__}: {e}"
    msg = str(e)
    assert "incompatible function arguments" not in msg, f"{name}: pybind11 dump: {msg}"
    assert msg, f"{name}: empty message"


@pytest.mark.parametrize("name,f", _public_callables(), ids=lambda v: v if isinstance(v, str)
                         else "")
def test_sweep_first_argument_junk(name, f):
    """f(junk) and f(junk, x) raise a typed error; only None (a default for many optional
    parameters) may be accepted."""
    for junk in JUNK:
        for args in ((junk,), (junk, x23())):
            try:
                f(*args)
            except BaseException as e:  # noqa: BLE001 - the type is what is checked
                _check_raised(name, e)
            else:
                if junk is not None and not _succeeds_on_junk(name, args):
                    pytest.fail(f"{name}{tuple(type(a).__name__ for a in args)} returned "
                                f"instead of raising")


# (name, argument-count) pairs where junk in position 0 is legitimately accepted: creation
# functions whose first argument may be None-like only in torch style, etc.
_JUNK_OK = {
    ("random.seed", 1),
}


def _succeeds_on_junk(name, args):
    return (name, len(args)) in _JUNK_OK


def _methods():
    x = x23()
    out = []
    for n in sorted(dir(ts.Tensor)):
        if n.startswith("_"):
            continue
        try:
            if callable(getattr(x, n)):
                out.append(n)
        except Exception:  # noqa: BLE001 - properties that refuse on this tensor
            pass
    return out


@pytest.mark.parametrize("name", _methods())
def test_sweep_methods_junk(name):
    """x.method(junk, junk) never crashes and raises only the allowed types without dumps."""
    for junk in JUNK:
        try:
            getattr(x23(), name)(junk, junk)
        except BaseException as e:  # noqa: BLE001
            _check_raised("Tensor." + name, e)


def test_sweep_keyword_typo():
    """A misspelt keyword raises TypeError naming it, for every public function that takes
    keywords at all."""
    bad = []
    for name, f in _public_callables():
        try:
            f(x23(), axsi=0)
        except TypeError as e:
            if "axsi" not in str(e) and "missing" not in str(e):
                bad.append(f"{name}: {e}")
        except BaseException as e:  # noqa: BLE001
            bad.append(f"{name}: {type(e).__name__}: {e}")
        else:
            bad.append(f"{name}: accepted axsi=0")
    assert not bad, "\n".join(bad)


def test_guard_keeps_signatures_and_identity():
    # (a Python function the guard wraps; amax, quantile, histogram and unique, the former
    # samples, are C++ bindings now)
    f = ts.constant_pad_nd
    assert f.__name__ == "constant_pad_nd" and inspect.signature(f).parameters
    assert isinstance(f, types.FunctionType)
    assert ts.linalg.matmul is not None


@pytest.mark.parametrize("call", [
    lambda F, x: F.adaptive_avg_pool1d(x, 2 ** 62),
    lambda F, x: F.adaptive_avg_pool1d(x, 2 ** 70),
    lambda F, x: F.adaptive_max_pool1d(x, 2 ** 62),
    lambda F, x: F.adaptive_avg_pool1d(x, (2 ** 31, 2 ** 31)),
    lambda F, x: F.adaptive_avg_pool1d(x, -1),
    lambda F, x: F.avg_pool1d(x, 2 ** 62),
    lambda F, x: F.max_pool1d(x, 9),
    lambda F, x: F.adaptive_avg_pool2d(x[None], (2 ** 62, 1)),
])
def test_pooling_with_absurd_sizes_fails_fast(call):
    # These built one window per output element in Python (a hang) before the size checks.
    import tessera.nn.functional as F
    x = ts.ones((2, 3, 4))
    with pytest.raises((ValueError, MemoryError)):
        call(F, x)


def test_torch_reduction_enum_and_poisson_argument_errors():
    x = ts.ones(3)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        ts.kl_div(x, x, reduction=-1)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        ts.hinge_embedding_loss(x, x, reduction=2 ** 62)
    with pytest.raises(TypeError, match="must be a tensor"):
        ts.poisson(3)
    assert float(ts.kl_div(x, x, reduction=2)) == float(ts.nn.functional.kl_div(x, x, reduction="sum"))
