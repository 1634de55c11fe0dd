"""PyTorch-style conveniences beside the array API namespace: attaches torch's Tensor methods
at import and gathers torch's top-level functions for ``tessera``'s namespace.

One module per concern: _creation (varargs sizes, new_*, *_like), _inplace (Note [torch in-place]), _math
(elementwise), _special (lgamma/digamma/erfinv), _shape, _reduce (Note [torch reductions vs
the standard]), _linalg, _indexing.

Where torch and the standard disagree the namespace *functions* keep the standard (ts.max,
ts.var, ts.repeat, ts.where...); the Tensor *methods* follow torch, as the standard specifies
no such methods.
"""
from __future__ import annotations

import functools
import sys
import types
from typing import Any, Callable, Dict

from ._C import Tensor
from . import _tensor_methods
from . import (_inplace, _elementwise as _math,
               _manipulation as _shape, _statistical as _reduce,
               _linalg_core as _linalg, _indexing,
               _torch_compat_positional as _positional,
               _tensor as _basics, _nn_ops, _config, _transforms,
               _torch_legacy as _legacy, _torch_compat_kwargs as _kwargs)
from ._dtypes import float32 as _float32, int32 as _int32
from ._elementwise import *  # noqa: F401,F403
from ._sets import unique, unique_consecutive  # noqa: F401
from ._manipulation import *  # noqa: F401,F403
from ._statistical import *  # noqa: F401,F403
from ._linalg_core import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._torch_compat_positional import *  # noqa: F401,F403  (Note [positional dim])
from ._nn_ops import *  # noqa: F401,F403
from ._config import *  # noqa: F401,F403
from ._transforms import *  # noqa: F401,F403
from ._torch_legacy import *  # noqa: F401,F403
from ._torch_compat_kwargs import *  # noqa: F401,F403  (torch's extra keywords)


def clone(input: Tensor) -> Tensor:
    """A copy of input (differentiable)."""
    return input.clone()


def detach(input: Tensor) -> Tensor:
    """input without autograd history (shares memory)."""
    return input.detach()


from . import _sets  # noqa: E402
__all__ = (_math._TORCH_NAMES + _shape._TORCH_NAMES + _reduce._TORCH_NAMES
           + _linalg._TORCH_NAMES + _indexing._TORCH_NAMES + _sets._TORCH_NAMES
           + ["clone", "detach"])
__all__ = list(dict.fromkeys(__all__ + _positional.__all__
                             + _nn_ops.__all__ + _config.__all__ + _transforms.__all__
                             + _legacy.__all__ + _kwargs.__all__))

# torch's dtype spellings ts.float / ts.int (ts.long, ts.double, ... exist in _dtypes) are
# served by the package's module __getattr__ (PEP 562) so that `from tessera import *` does
# not shadow the builtins float and int.
from ._creation import _range  # noqa: E402
from ._elementwise import _complex  # noqa: E402
_LAZY_ATTRS = {"float": _float32, "int": _int32, "range": _range, "complex": _complex,
               "compile": _transforms.compile}


def _package_getattr(name: str) -> Any:
    if name in _LAZY_ATTRS:
        return _LAZY_ATTRS[name]
    raise AttributeError(f"module 'tessera' has no attribute {name!r}")


sys.modules[__name__.rsplit(".", 1)[0]].__getattr__ = _package_getattr  # type: ignore[attr-defined]

# In-place methods that change metadata, not values, are not generated.
_METADATA_ONLY = {"squeeze", "unsqueeze", "t", "transpose", "swapaxes", "swapdims",
                  "conj_physical"}


def _wrap_method(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`fn` as a Tensor method whose errors name the method (a Python function binds as a
    method itself; builtins such as C functions cannot, so they get a forwarding function)."""
    if not isinstance(fn, types.FunctionType):
        c_fn = fn

        def fn(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            return c_fn(self, *args, **kwargs)
        fn.__name__, fn.__doc__ = name, c_fn.__doc__
    return _inplace.named_errors(name, fn)


def _install() -> None:
    methods: Dict[str, Callable[..., Any]] = {}
    for mod in (_math, _shape, _reduce, _linalg, _indexing):
        methods.update(mod.METHODS)
    methods.update(_tensor_methods.TORCH_METHODS)
    for name, fn in methods.items():
        setattr(Tensor, name, fn if name in _math.HOT else _wrap_method(fn, name))
    twins = [n for n in _math.METHODS if n not in _math.NO_INPLACE]
    twins += ["subtract", "divide", "true_divide"]  # (bound by the table)
    twins += [n for n in _math.INPLACE_OF_EXISTING if n not in _METADATA_ONLY]
    twins += _linalg.INPLACE + _tensor_methods.TORCH_INPLACE_TWINS + ["masked_scatter", "index_fill", "index_copy", "index_put",
                                "scatter_reduce"]
    for name in twins:
        if hasattr(Tensor, name) and not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _inplace.make_inplace(name + "_", getattr(Tensor, name)))


def _name_errors_of_functions() -> None:
    """The exported functions' errors name them first (Note [torch in-place] explains
    named_errors); inspect.signature still sees the original signature."""
    g = globals()
    for name in __all__:
        fn = g[name]
        # wrappers of the namespace's own functions (functools.wraps) keep their errors
        if isinstance(fn, types.FunctionType) and not hasattr(fn, "__wrapped__"):
            g[name] = functools.wraps(fn)(_inplace.named_errors(name, fn))


_install()
_basics.wrap_inplace_cast_errors()  # after every in-place method exists
_made = _tensor_methods.method_functions()  # needs the methods _install attached
globals().update(_made)
__all__ += [n for n in _made if n not in __all__]
_name_errors_of_functions()
