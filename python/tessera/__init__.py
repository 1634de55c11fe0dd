"""tessera: a tensor library with a C++ core, the Python array API namespace, and
PyTorch-style conveniences.

    >>> import tessera as ts
    >>> x = ts.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> (x @ x.T + 1).shape
    (2, 2)
"""
from __future__ import annotations

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
from ._torch_compat import *  # noqa: E402,F401,F403  (torch-style methods and functions)
from . import _torch_compat_keywords as _torch_keywords  # noqa: E402

globals().update(_torch_keywords.build(globals()))  # torch's keyword names (ts.stack(tensors=))
_torch_keywords.install()

from . import autograd, testing, utils  # noqa: E402
from . import nn, optim, datasets  # noqa: E402
from . import amp  # noqa: E402
from . import onnx  # noqa: E402  (torch.onnx.export; needs the onnx package only when called)
from . import cpu  # noqa: E402  (torch.cpu, with ts.cpu.amp)
from .amp import (autocast, is_autocast_enabled, get_autocast_dtype,  # noqa: E402
                  set_autocast_enabled, set_autocast_dtype)
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


def _guard_public_functions() -> None:
    """AttributeErrors on non-tensor arguments become TypeErrors naming the op (last step)."""
    import sys
    from ._arg_errors import guard_namespace
    for ns in (sys.modules[__name__], linalg, fft, random, Tensor):
        guard_namespace(ns)


# torch's functions of other families in the top-level namespace
from .special import i0, gammainc as igamma, gammaincc as igammac  # noqa: E402,F401
from ._inplace import i0_  # noqa: E402,F401
from .linalg import lu_unpack, _tensor_lu as lu, _legacy_lu_solve as lu_solve  # noqa: E402,F401
from .linalg import matrix_exp  # noqa: E402,F401
from ._stft import stft, istft  # noqa: E402,F401

_guard_public_functions()
