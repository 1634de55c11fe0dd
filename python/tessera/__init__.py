"""tessera: a tensor library with a C++ core, the Python array API namespace, and
PyTorch-style conveniences.

    >>> import tessera as ts
    >>> x = ts.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> (x @ x.T + 1).shape
    (2, 2)
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any as _Any

from ._loader import preload_blas as _preload_blas, tame_openmp_spinning as _tame_openmp

_tame_openmp()
_preload_blas()

from . import _C  # noqa: E402
from ._C import Tensor, Device, dtype, __version__  # noqa: E402
from ._C import set_num_threads, get_num_threads  # noqa: E402
from ._dtypes import *  # noqa: E402,F401,F403
from ._dtypes import (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: E402,A004
                      float16, bfloat16, float32, float64, complex64, complex128,
                      result_type, can_cast, finfo, iinfo, isdtype, _dtype_by_name)
from ._creation import *  # noqa: E402,F401,F403
from ._functions import *  # noqa: E402,F401,F403
from . import linalg, random  # noqa: E402
from .random import default_generator  # noqa: E402,F401
from . import fft  # noqa: E402
from . import cuda, backends, accelerator  # noqa: E402

from . import _tensor_methods  # noqa: E402

_tensor_methods.bind()  # the one table of Tensor's Python methods

# PyTorch's functions that belong to no array-API family module (the families' own torch
# functions came with _functions above), its argument forms for the namespace functions
# (Note [positional dim]), and the functions made from Tensor methods (torch.abs_, *_copy)
from ._nn_ops import *  # noqa: E402,F401,F403
from ._config import *  # noqa: E402,F401,F403
from ._transforms import *  # noqa: E402,F401,F403
from ._torch_legacy import *  # noqa: E402,F401,F403
from ._C import clone, detach  # noqa: E402,F401
from ._C._foreach import *  # noqa: E402,F401,F403  (torch._foreach_add_ and the rest)

globals().update(_tensor_methods.method_functions())


def __getattr__(name: str) -> _Any:
    """torch's spellings that would shadow Python's builtins under `from tessera import *`
    (ts.float, ts.int, ts.range, ts.complex, ts.compile), served lazily (PEP 562); and
    ts.distributions and ts.multiprocessing, imported on first use (they add to the time of
    `import tessera`)."""
    lazy = {"float": float32, "int": int32}
    if name in lazy:
        return lazy[name]
    if name == "range":
        from ._creation import _range
        return _range
    if name == "complex":
        from ._elementwise import _complex
        return _complex
    if name in ("distributions", "multiprocessing"):
        import importlib
        return importlib.import_module("." + name, __name__)
    if name == "compile":
        from ._transforms import compile as _compile
        return _compile
    raise AttributeError(f"module 'tessera' has no attribute {name!r}")


from . import autograd, testing, utils  # noqa: E402
from . import func, jit  # noqa: E402  (torch.func's transforms; torch.jit, eager)
from . import nn, optim, datasets  # noqa: E402
from . import amp  # noqa: E402
from . import onnx  # noqa: E402  (torch.onnx.export; needs the onnx package only when called)
from . import cpu  # noqa: E402  (torch.cpu, with ts.cpu.amp)
from .amp import (autocast, is_autocast_enabled, get_autocast_dtype,  # noqa: E402
                  set_autocast_enabled, set_autocast_dtype, is_autocast_cache_enabled,
                  set_autocast_cache_enabled, clear_autocast_cache)
from .serialization import save, load  # noqa: E402
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: E402
                       is_grad_enabled, is_inference_mode_enabled, is_anomaly_enabled,
                       is_anomaly_check_nan_enabled)

__array_api_version__ = "2024.12"

import math as _math  # noqa: E402

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None


def __array_namespace_info__():
    from ._info import Info
    return Info()


def build_config() -> dict:
    """How this tessera was built: version, BLAS, OpenMP, CUDA, compiler."""
    cfg = dict(_C._build_config())
    cfg["num_threads"] = get_num_threads()
    return cfg


# torch's functions of other families in the top-level namespace
from .special import i0, gammainc as igamma, gammaincc as igammac  # noqa: E402,F401
from .linalg import matrix_exp, householder_product as orgqr  # noqa: E402,F401
from ._stft import stft, istft  # noqa: E402,F401
