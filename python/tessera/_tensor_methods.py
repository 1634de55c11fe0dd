"""The one table that binds Tensor's (and autograd Node's, dtype's) Python-level methods to their
functions (issue 17).

Each function is defined once, in the module of its family; this file only says which name
it answers to, and :func:`bind` sets every name once, at import: no other module sets
attributes on `Tensor` (tests/test_one_definition.py checks it under an import hook). The
in-place methods (x.exp_(), x.fill_(v), x.copy_(y), ...) and torch's elementwise aliases are
C++ (csrc/python/bind_inplace_methods.cpp, Note [torch in-place]); a Python function here
gets only the argument guard (_C._tensor_method) before its one `setattr`.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Dict

from . import _C
from ._C import Node, Tensor, dtype
from . import autograd as _ag
from . import _elementwise as _el
from . import _tensor as _tb
from . import _creation as _tc
from . import _tensor as _t

TENSOR_METHODS: Dict[str, Any] = {
    # (add/sub/subtract/mul/multiply/div/divide/true_divide are the namespace's functions
    # themselves and their in-place forms C++ methods: csrc/python/bind_elementwise.cpp)
    # conversion, printing, devices (_tensor.py)
    "__repr__": _t._repr,
    "__str__": _t._str,
    "__array_namespace__": _t._array_namespace,
    "to_device": _t._to_device,
    "materialize": property(_t._materialize_attr),  # only on nn's lazy placeholders
    "__module__": "tessera",
    "__array_priority__": 1000,  # NumPy defers binary operators to us
    # views and shapes (_tensor.py, _manipulation.py)
    # (reshape and view are C++ methods: csrc/python/bind_core.cpp; permute, transpose /
    # swapaxes / swapdims, flatten, unsqueeze, squeeze, expand, flip, movedim / moveaxis, t,
    # view_as / reshape_as / expand_as: csrc/python/bind_views.cpp)
    # (tril / triu are the namespace's functions: csrc/python/bind_creation.cpp)
    # (the reductions sum, prod, mean, var, std, max, min, all, any, count_nonzero, argmax,
    # argmin, cumsum, cumprod, amax, amin, aminmax, median, nanmedian, kthvalue are C++
    # methods with every argument form: csrc/python/bind_reduction.cpp)
    # (take and the indexing methods below are C++: csrc/python/bind_index_forms.cpp)
    # (gather/scatter/scatter_add/index_select/index_add/masked_fill/masked_select/index_fill/
    # index_copy/nonzero/argwhere and their in-place forms are C++: csrc/python/bind_search.cpp)
    # (sort / argsort / topk are C++: csrc/python/bind_search.cpp)
    # (to / cpu / cuda / is_cuda / is_cpu, type / type_as and the dtype conversions x.float()...,
    # stride / element_size / nelement / ndimension / storage_offset / is_same_size / is_signed /
    # get_device / dim_order / is_set_to / const_data_ptr, adjoint / mH / H are C++ methods:
    # csrc/python/bind_tensor_methods.cpp)
    # torch's conversions and queries (_tensor.py)
    # torch's new_* creation (_creation.py)
    # (new_zeros / new_ones / new_empty / new_full are C++ methods, and is_floating_point /
    # is_complex / is_nonzero / numel the namespace's functions: csrc/python/bind_creation.cpp)
    "new_tensor": _tc._new_tensor,
    # (every in-place method, fill_ / zero_ / copy_ / float_power_ too, and torch's aliases
    # x.arccos, x.greater, ..., x.sigmoid, x.hardshrink, x.prelu, x.matrix_exp, x.unsafe_split
    # are C++ methods: csrc/python/bind_inplace_methods.cpp)
    # torch functions of other families as methods
    # PyTorch's details of the Tensor object (_tensor.py): deprecated forms, metadata-only
    # in-place ops, truth value and item() errors, storages
    # (resize_ / resize_as_ / resize / resize_as / set_ / new / data / conj_physical are C++
    # methods: csrc/python/bind_tensor_methods.cpp)
    "untyped_storage": _tb._untyped_storage,
    "storage": _tb._storage,
    # autograd (autograd/__init__.py)
    "grad": property(_ag._get_grad, _ag._set_grad, _ag._del_grad, _ag._c_grad.__doc__),
    "backward": _ag._tensor_backward,
    "register_hook": _ag._register_hook,
    "register_post_accumulate_grad_hook": _ag._register_post_accumulate_grad_hook,
}


# PyTorch's methods written in Python, as their families define them.
TORCH_METHODS: Dict[str, Any] = {
    # (x.unique / x.unique_consecutive / x.cross are C++: csrc/python/bind_sets.cpp)
    # (x.tile and x.repeat are C++ methods: csrc/python/bind_views.cpp)
}


NODE_METHODS: Dict[str, Any] = {
    "register_hook": _ag._node_register_hook,
    "register_prehook": _ag._node_register_prehook,
}


DTYPE_METHODS: Dict[str, Any] = {}  # (dtype.to_complex / to_real are C++: bind_dtype.cpp)


def _as_method(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`fn` as a Tensor method: a Python function binds as a method itself; builtins such as
    C functions cannot, so they get a forwarding function."""
    if isinstance(fn, types.FunctionType):
        return fn
    c_fn = fn

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return c_fn(self, *args, **kwargs)
    method.__name__, method.__doc__ = name, c_fn.__doc__
    return method


def _tensor_table() -> Dict[str, Any]:
    """Every Python-level attribute of Tensor, each computed once: the table above and the
    families' torch methods written in Python (_linalg_core.METHODS, TORCH_METHODS); every
    public Python function is bound through _C._tensor_method, which raises PyTorch's
    TypeErrors for a non-tensor where it annotates a Tensor (Note [Tensor methods written in
    Python])."""
    from . import _linalg_core as lc
    from ._arg_checks import tensor_checks
    final: Dict[str, Any] = dict(TENSOR_METHODS)
    for table in (lc.METHODS, TORCH_METHODS):
        for name, fn in table.items():
            final[name] = _as_method(fn, name)
    for name, fn in list(final.items()):
        # (the namespace functions bound as methods as they are, x.add is ts.add, are not:
        # their errors come from the C++ op they reach)
        if (not name.startswith("_") and isinstance(fn, types.FunctionType)
                and not getattr(fn, "__wrapped_by_arg_errors__", False)):
            final[name] = _C._tensor_method(fn, name, tuple(
                (-1 if pos is None else pos, pname, optional)
                for pos, pname, optional in tensor_checks(fn)))
    return final


def bind() -> None:
    """Sets each name of the tables on Tensor, Node and dtype (once, at import)."""
    for cls, table in ((Tensor, _tensor_table()), (Node, NODE_METHODS), (dtype, DTYPE_METHODS)):
        for name, value in table.items():
            setattr(cls, name, value)


# ---- the namespace functions made from Tensor methods: torch.abs_(x) is x.abs_(),
# torch.adjoint(x) is x.adjoint(), torch.permute_copy(x, ...) is x.permute(...) copied
_INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ "
    "erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_ "
    "log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ "
    "sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ selu_ celu_ "
    "threshold_ resize_as_ conj_physical_ as_strided_").split()


_METHOD_FUNCTIONS = ("adjoint is_same_size is_signed is_conj is_neg is_inference resolve_conj "
                     "resolve_neg get_device conj_physical").split()


_COPY_FUNCTIONS = ("alias as_strided detach diagonal expand permute select squeeze t transpose "
                   "unbind unfold unsqueeze view view_as_real view_as_complex split "
                   "split_with_sizes").split()


def _method_function(name: str) -> Callable[..., Any]:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: the same as ``input.{name}(...)``."
    return fn


def _copy_function(name: str) -> Callable[..., Any]:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}_copy(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if name in ("alias", "view_as_real", "view_as_complex"):
            if args or kwargs:
                raise TypeError(f"{name}_copy() takes 1 positional argument (input), got "
                                f"{1 + len(args)} and keywords {sorted(kwargs)}")
            out = input.clone() if name == "alias" else getattr(_el, name)(input)
        else:
            out = getattr(input, name)(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(o.clone() for o in out) if isinstance(out, tuple) else \
                [o.clone() for o in out]
        return out if name == "alias" else out.clone()
    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__doc__ = f"``torch.{name}_copy``: ``input.{name}(...)`` copied into new memory."
    return fn


def method_functions() -> Dict[str, Callable[..., Any]]:
    """The method twins (torch.abs_, torch.permute_copy...) and nn.functional aliases, made
    once the Tensor methods are bound."""
    from ._nn_ops import functional_aliases
    out: Dict[str, Callable[..., Any]] = {}
    for name in _INPLACE_FUNCTIONS + _METHOD_FUNCTIONS:
        if hasattr(Tensor, name):
            out[name] = _method_function(name)
    for name in _COPY_FUNCTIONS:
        out[name + "_copy"] = _copy_function(name)
    out.update(functional_aliases())
    return out
