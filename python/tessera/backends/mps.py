"""ts.backends.mps: Apple's Metal backend, which tessera does not have."""
from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether MPS can be used: never in tessera."""
    return False


def is_built() -> bool:
    """Whether tessera was built with MPS: never."""
    return False
