"""The exception classes tessera's core raises besides Python's own.

``TypeError`` and ``ValueError`` here subclass both the builtin of that name and
``RuntimeError`` (Note [Errors that are also RuntimeErrors] in csrc/python/module.cpp), so
``except ValueError`` (NumPy habits) and ``except RuntimeError`` (PyTorch habits) both catch a
bad shape or dtype. ``ZeroDivisionError`` (integer division by zero in ``div(...,
rounding_mode=)`` on the CPU, as PyTorch) is a ``ZeroDivisionError`` and a ``RuntimeError``.
``LinAlgError`` is raised by ``ts.linalg`` for singular or non-convergent
input. ``IntRangeError`` (an int beyond what a dtype or parameter holds) is an
``OverflowError`` (NumPy's class) and a ``ValueError``. ``CudaNotCompiledError`` (CUDA asked of a
build without the CUDA backend) is an ``AssertionError``, as PyTorch's "Torch not compiled with
CUDA enabled", and a ``RuntimeError``.
"""
from ._C import (CudaNotCompiledError, IntRangeError, TypeError, ValueError,  # noqa: A004
                 ZeroDivisionError)

try:
    from ._C import LinAlgError
except ImportError:  # pragma: no cover - every build registers it
    pass

__all__ = ["TypeError", "ValueError", "ZeroDivisionError", "IntRangeError", "LinAlgError",
           "CudaNotCompiledError"]
