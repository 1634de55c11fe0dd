"""The functions the Python namespace guard (_arg_errors.guarded, removed) and nn.functional's
require_tensor_args wrapped: a non-tensor argument where a tensor belongs raises, from the op
itself, a TypeError naming the op (torch's class; einsum's missing operands stay torch's
ValueError)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import errors
from tessera import linalg
from tessera.nn import functional as F

TOP = ["clone", "detach", "frexp", "gradient", "norm", "histogram", "combinations", "stft",
       "istft", "float_power", "gcd", "lcm", "polar", "unravel_index", "channel_shuffle",
       "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle", "group_norm", "pdist"]
LINALG = sorted(n for n in dir(linalg) if not n.startswith("_") and callable(getattr(linalg, n))
                and not isinstance(getattr(linalg, n), type))
CASES = ([(n, getattr(ts, n)) for n in TOP] + [(f"linalg.{n}", getattr(linalg, n)) for n in LINALG]
         + [("tanh", F.tanh)])
JUNK = [None, "x", object()]


@pytest.mark.parametrize("name,fn", CASES, ids=[n for n, _ in CASES])
def test_non_tensor_first_argument_is_a_type_error_naming_the_op(name, fn) -> None:
    op = name.split(".")[-1]
    for junk in JUNK:
        with pytest.raises(TypeError, match=op):
            fn(junk)


def test_einsum_operands() -> None:
    x = ts.ones(2)
    for bad in JUNK:
        with pytest.raises(TypeError, match=r"einsum\(\): expected a tensor as operand 1"):
            ts.einsum("i,i", x, bad)
        with pytest.raises(TypeError, match=r"einsum\(\): expected a tensor as operand 0"):
            ts.einsum("i", [bad])
    with pytest.raises(TypeError):
        torch.einsum("i,i", torch.ones(2), None)
    # array-likes stay operands (NumPy's einsum); no operand at all is torch's ValueError
    assert float(ts.einsum("i,i", [1.0, 2.0], np.array([3.0, 4.0]))) == 11.0
    for lib in (ts, torch):
        with pytest.raises(ValueError, match="einsum"):
            lib.einsum(None)


def test_functional_tanh_takes_tensors_only() -> None:
    for bad in ["a", 1.5, [1.0, 2.0], np.ones(3), None]:
        with pytest.raises(TypeError, match=r"^tanh\(\): argument 'input' \(position 1\) must be "
                                            r"Tensor, not "):
            F.tanh(bad)
    x = ts.asarray([0.5, -1.0], dtype=ts.float64)
    np.testing.assert_allclose(F.tanh(x).numpy(), np.tanh(x.numpy()))
    assert F.tanh(input=x).shape == (2,)


def test_state_functions_name_themselves() -> None:
    for fn, name in ((ts.manual_seed, "manual_seed"), (ts.set_rng_state, "set_rng_state"),
                     (ts.random.fork_rng, "fork_rng")):
        with pytest.raises(TypeError, match=name):
            fn("x")


def test_int_range_error_is_overflow_and_value_error() -> None:
    assert issubclass(errors.IntRangeError, OverflowError)
    assert issubclass(errors.IntRangeError, ValueError)
    with pytest.raises(errors.IntRangeError):
        ts.asarray([2 ** 70])


@pytest.mark.parametrize("name,param", [("eigh", "UPLO"), ("eigvalsh", "UPLO"), ("qr", "mode")])
def test_string_options_of_the_wrong_type_are_torchs_type_error(name, param) -> None:
    x = ts.eye(3)
    for bad in (None, 1):
        with pytest.raises(TypeError):
            getattr(torch.linalg, name)(torch.eye(3), bad)
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument '{param}' \(position 2\) "
                                            rf"must be str, not {type(bad).__name__}"):
            getattr(linalg, name)(x, bad)
