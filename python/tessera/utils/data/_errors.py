"""Exception types that are both what PyTorch raises and what tessera's conventions ask for,
so ``except AssertionError`` (PyTorch code) and ``except ValueError`` (tessera code) both work."""
from __future__ import annotations


class DataAssertionError(AssertionError, ValueError):
    """A bad argument that PyTorch reports with an ``assert`` (AssertionError)."""


class DataRuntimeError(RuntimeError, ValueError):
    """A bad argument that PyTorch reports as a RuntimeError (e.g. stacking unequal shapes)."""


class DataIndexError(IndexError, ValueError):
    """A bad argument that PyTorch reports as an IndexError (e.g. a 0-d tensor's first dim)."""
