"""ts.cuda.tunable: tuned GEMMs (PyTorch's ``torch.cuda.tunable`` switch).

Large float32 GEMMs on CUDA (at least 2**30 multiply-adds, full float32 precision) time
cuBLASLt's candidate kernels once per problem (shape, layouts, alignments) and keep the
fastest, as ``cudnn.benchmark`` does for convolutions (docs/design.md, Note [Tuned GEMMs]).
Unlike PyTorch's TunableOp this is on by default: the first GEMM of each new large shape
synchronizes the device and runs about 30 extra GEMMs; later ones cost one lookup. Every
candidate computes in float32, so results agree with cuBLAS's default kernel to float32
rounding, but the kernel chosen (and so the last bits) may differ from run to run: call
``enable(False)`` for bitwise-reproducible runs."""
from __future__ import annotations

from .. import _C

__all__ = ["enable", "is_enabled"]


def enable(val: bool = True) -> None:
    """Turns GEMM tuning on (the default) or off."""
    if not isinstance(val, bool):
        raise TypeError(f"tunable.enable: val must be a bool, got {type(val).__name__}")
    _C._cuda.set_gemm_tuning(val)


def is_enabled() -> bool:
    """Whether large float32 GEMMs on CUDA are tuned."""
    return bool(_C._cuda.get_gemm_tuning())
