"""ts.backends.cudnn: torch.backends.cudnn's switches, steering tessera's CUDA convolutions.

cuDNN 9 is loaded at run time (no link-time dependency): ``libcudnn_graph.so.9`` from the
``nvidia-cudnn-cu13`` wheel (found through the ``nvidia.cudnn`` package), from
``$TESSERA_CUDNN_PATH`` (a file or folder), or from the loader's search path. Where it loads
and ``enabled`` is True, convolutions on CUDA run through it (graph API, one engine cached per
problem); otherwise tessera's own CUDA kernels (im2col + cuBLAS GEMMs, direct depthwise
kernels) run. ``benchmark`` times the candidate engines once per problem, ``deterministic``
keeps only deterministic ones, ``allow_tf32`` (default True, as PyTorch) lets float32
convolutions use TF32 tensor cores on either path. ``last_conv_path()`` tells which
implementation ran the calling thread's last convolution kernel.
"""
from __future__ import annotations

import contextlib as _contextlib
import importlib.util as _importlib_util
import os as _os
import sys as _sys
import types as _types
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Iterator, List, Optional

from .. import _C

__all__ = ["is_available", "version", "is_acceptable", "set_flags", "flags", "enabled",
           "benchmark", "benchmark_limit", "deterministic", "allow_tf32", "last_conv_path",
           "load_error"]

_SWITCHES = ("enabled", "benchmark", "deterministic", "allow_tf32")


def _search_paths() -> List[str]:
    """Folders that may hold cuDNN 9: $TESSERA_CUDNN_PATH, the nvidia-cudnn wheel's lib."""
    paths: List[str] = []
    env = _os.environ.get("TESSERA_CUDNN_PATH")
    if env:
        paths.append(env)
    try:
        spec = _importlib_util.find_spec("nvidia.cudnn")
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        paths.append(_os.path.join(loc, "lib"))
    return paths


if _C._cuda.is_built():
    _C._cuda.cudnn_set_search_paths(_search_paths())


def is_available() -> bool:
    """Whether cuDNN 9 loads (a CUDA build with its headers, a GPU, the library found)."""
    return _C._cuda.cudnn_version() > 0


def version() -> Optional[int]:
    """cuDNN's version as PyTorch reports it (e.g. 92801), None where it does not load."""
    v = _C._cuda.cudnn_version()
    return int(v) if v > 0 else None


def load_error() -> str:
    """Why cuDNN did not load ('' when it did or was not tried yet)."""
    if not _C._cuda.is_built():
        return "this build of tessera has no CUDA backend"
    is_available()  # tries the load
    return str(_C._cuda.cudnn_load_error())


def is_acceptable(tensor: Any) -> bool:
    """Whether cuDNN would take `tensor`: a floating CUDA tensor, with cuDNN on and loaded."""
    from .._C import Tensor
    if not isinstance(tensor, Tensor) or tensor.device.type != "cuda":
        return False
    return (bool(_C._cuda.cudnn_get_flag("enabled")) and is_available()
            and bool(tensor.dtype.is_floating_point))


def last_conv_path() -> str:
    """What ran the calling thread's last convolution kernel: 'cpu', 'cudnn', 'cuda_gemm' or
    'cuda_depthwise' ('none' before the first)."""
    return str(_C._cuda.conv_last_path())


benchmark_limit: Optional[int] = 10
fp32_precision: str = "none"


def set_flags(_enabled: Any = None, _benchmark: Any = None, _benchmark_limit: Any = None,
              _deterministic: Any = None, _allow_tf32: Any = None,
              _fp32_precision: Any = "none") -> tuple:
    """Sets the given switches (None leaves one as it is); returns the previous values."""
    mod = _sys.modules[__name__]
    orig = (mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic,  # type: ignore
            mod.allow_tf32, mod.fp32_precision)  # type: ignore
    for name, v in (("enabled", _enabled), ("benchmark", _benchmark),
                    ("deterministic", _deterministic), ("allow_tf32", _allow_tf32)):
        if v is not None:
            setattr(mod, name, bool(v))
    if _benchmark_limit is not None:
        mod.benchmark_limit = int(_benchmark_limit)
    if _fp32_precision is not None:
        mod.fp32_precision = str(_fp32_precision)
    return orig


@_contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """Sets the switches within a ``with`` block (torch's defaults: all off but allow_tf32)
    and restores them after."""
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                     fp32_precision)
    try:
        yield
    finally:
        set_flags(*orig)


def _switch(name: str) -> property:
    def get(self: _types.ModuleType) -> bool:
        return bool(_C._cuda.cudnn_get_flag(name))

    def set_(self: _types.ModuleType, value: Any) -> None:
        _C._cuda.cudnn_set_flag(name, bool(value))

    return property(get, set_, doc=f"ts.backends.cudnn.{name} (kept in the C++ core)")


class _CudnnModule(_types.ModuleType):
    """This module's type: its switches live in the C++ core, where the kernels read them."""

    enabled = _switch("enabled")
    benchmark = _switch("benchmark")
    deterministic = _switch("deterministic")
    allow_tf32 = _switch("allow_tf32")


_sys.modules[__name__].__class__ = _CudnnModule
