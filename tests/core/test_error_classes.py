"""The core's TypeError/ValueError are also RuntimeErrors (tessera.errors), so NumPy-style and
PyTorch-style error handling both catch them; they pickle (DataLoader workers re-raise them)."""
from __future__ import annotations

import pickle

import pytest

import tessera as ts
import tessera.errors as errors


@pytest.mark.parametrize("bad", [
    lambda: ts.zeros(2) + ts.zeros(3),                  # shapes
    lambda: ts.matmul(ts.zeros((2, 3)), ts.zeros((2, 3))),
    lambda: ts.reshape(ts.zeros(6), (4, 2)),
    lambda: ts.max(ts.zeros(0)),                        # empty reduction
])
def test_value_errors_are_runtime_errors(bad):
    with pytest.raises(ValueError) as info:
        bad()
    assert isinstance(info.value, RuntimeError)
    assert type(info.value) is errors.ValueError


@pytest.mark.parametrize("bad", [
    lambda: ts.zeros(2, dtype=ts.bool) - ts.zeros(2, dtype=ts.bool),
    lambda: ts.bitwise_and(ts.zeros(2), ts.zeros(2)),
    lambda: ts.floor(ts.zeros(2, dtype=ts.complex64)),
])
def test_type_errors_are_runtime_errors(bad):
    with pytest.raises(RuntimeError) as info:
        bad()
    assert isinstance(info.value, TypeError) and type(info.value) is errors.TypeError


def test_error_classes_pickle_and_name_themselves():
    for cls in (errors.ValueError, errors.TypeError):
        e = pickle.loads(pickle.dumps(cls("op: message")))
        assert type(e) is cls and str(e) == "op: message"
    assert errors.ValueError.__module__ == "tessera.errors"
    assert issubclass(errors.LinAlgError, ValueError) and issubclass(errors.LinAlgError,
                                                                      RuntimeError)


# Functions that raise their final error themselves (issue 17: no namespace guard re-classes
# them): class and message, naming the op and the argument as torch does.
_x = ts.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("call,cls,match", [
    (lambda: ts.unique("abc"), TypeError,
     r"unique\(\): argument 'input' \(position 1\) must be Tensor, not str"),
    (lambda: ts.unique_consecutive(None), TypeError,
     r"unique_consecutive\(\): argument 'input' \(position 1\) must be Tensor, not NoneType"),
    (lambda: ts.cross(_x, 1.5), TypeError,
     r"cross\(\): argument 'other' \(position 2\) must be Tensor, not float"),
    (lambda: ts.to_dlpack(None), TypeError,
     r"to_dlpack\(\): argument 'tensor' \(position 1\) must be Tensor, not NoneType"),
    (lambda: ts.unsafe_chunk("abc", 2), TypeError,
     r"unsafe_chunk\(\): argument 'input' \(position 1\) must be Tensor, not str"),
    (lambda: ts.unsafe_split_with_sizes(_x, None), TypeError,
     r"unsafe_split_with_sizes\(\): argument 'split_sizes' must be tuple of ints, not NoneType"),
    (lambda: ts.hann_window(1.5), TypeError,
     r"hann_window\(\): argument 'window_length' \(position 1\) must be int, not float"),
    (lambda: ts.kaiser_window(4, "abc"), TypeError,
     r"kaiser_window\(\): argument 'periodic' \(position 2\) must be bool, not str"),
    (lambda: ts.constant_pad_nd(_x, "abc"), TypeError,
     r"constant_pad_nd\(\): argument 'pad' must be tuple of ints, not str"),
    (lambda: ts.nuclear_norm(_x, 1.5), TypeError,
     r"nuclear_norm\(\): argument 'dim' must be tuple of ints, not float"),
    (lambda: ts.matrix_rank(1.5), TypeError,
     r"matrix_rank\(\): argument 'input' \(position 1\) must be Tensor, not float"),
])
def test_python_functions_raise_their_final_class(call, cls, match):
    with pytest.raises(cls, match=match):
        call()


def test_inplace_errors_are_tessera_errors():
    """In-place dtype/shape refusals raise tessera.errors' classes (TypeError / ValueError that
    are RuntimeErrors, as torch's) naming the method, with no re-classing wrapper."""
    xi = ts.arange(6).reshape(2, 3)
    with pytest.raises(errors.TypeError, match=r"^exp_: result type float32 can't be cast"):
        xi.exp_()
    with pytest.raises(errors.ValueError, match=r"^copy_: the src tensor of shape \(4,\) must be "
                                                r"broadcastable"):
        ts.zeros((2, 3)).copy_(ts.ones(4))
    with pytest.raises(errors.TypeError, match=r"^float_power_: the base given"):
        xi.float_power_(2)
    leaf = ts.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^zero_: a view of a leaf"):
        leaf[1:].zero_()


@pytest.mark.parametrize("call,cls,match", [
    (lambda: ts.rand(2, 2**70), errors.ValueError,
     r"^rand: integer argument out of range for a 64-bit integer \(size=\d+\)"),
    (lambda: ts.randint(2**70, (2,)), errors.ValueError,
     r"^randint: integer argument out of range for a 64-bit integer \(high=\d+\)"),
    (lambda: ts.tril(ts.ones((2, 3)), 2**70), errors.ValueError,
     r"^tril: integer argument out of range for a 64-bit integer \(diagonal=\d+\)"),
    (lambda: ts.sort(ts.ones((2, 3)), 2**70), errors.ValueError,
     r"^sort: integer argument out of range for a 64-bit integer \(dim=\d+\)"),
    (lambda: ts.rand(2, True), errors.TypeError, r"^rand: size must be an int, got bool"),
    (lambda: ts.topk(ts.ones(3), 1.5), errors.TypeError, r"^topk: k must be an int, got float"),
])
def test_one_int_parser(call, cls, match):
    """Every binding reads integer arguments with int_arg.h's parser: TypeError for non-ints
    and bools, ValueError past int64, both naming the op and the parameter."""
    with pytest.raises(cls, match=match):
        call()
