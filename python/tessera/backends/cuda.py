"""ts.backends.cuda: ``matmul.allow_tf32`` (default False, like PyTorch)."""
from __future__ import annotations

from .. import _C


class _MatmulSettings:
    """float32 matmuls on CUDA may use TF32 tensor cores when ``allow_tf32`` is True (about
    10 bits of mantissa in the products, float32 accumulation)."""

    @property
    def allow_tf32(self) -> bool:
        return _C._cuda.get_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _C._cuda.set_allow_tf32(bool(value))


matmul = _MatmulSettings()


def is_built() -> bool:
    return _C._cuda.is_built()
