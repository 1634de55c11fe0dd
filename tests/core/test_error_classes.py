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
