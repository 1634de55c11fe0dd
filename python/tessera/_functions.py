"""Re-exports of the functions bound in C++ and the thin Python wrappers around the rest of
the array API namespace. One module per family lives beside this file; this one gathers them."""
from __future__ import annotations

from ._C import add, subtract, multiply, divide, negative, conj, matmul  # noqa: F401
from ._linalg_core import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
