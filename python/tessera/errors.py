"""The exception classes tessera's core raises besides Python's own.

``TypeError`` and ``ValueError`` here subclass both the builtin of that name and
``RuntimeError`` (Note [Errors that are also RuntimeErrors] in csrc/python/module.cpp), so
``except ValueError`` (NumPy habits) and ``except RuntimeError`` (PyTorch habits) both catch a
bad shape or dtype. ``LinAlgError`` is raised by ``ts.linalg`` for singular or non-convergent
input.
"""
from ._C import TypeError, ValueError  # noqa: A004 - the point of this module

try:
    from ._C import LinAlgError
except ImportError:  # pragma: no cover - every build registers it
    pass

__all__ = ["TypeError", "ValueError", "LinAlgError"]
