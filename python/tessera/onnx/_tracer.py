"""The recording layer of the ONNX exporter (Note [ONNX tracer]).

While :func:`tracing` is active, and only then, the public op entry points (the functions of
``tessera``, ``tessera.linalg``, ``tessera.fft``, ``tessera.special``, ``tessera.nn.functional``,
the methods and operators of ``Tensor`` and the recurrent modules' ``forward``) are replaced by
one generic wrapper; on exit the originals are put back. The wrapper:

* calls the op unchanged when no traced tensor is among its arguments (constant folding), or
  when it runs inside an op that is being recorded (the outermost op with a symbolic wins);
* for an op with a symbolic (``_symbolics.SYMBOLICS``), runs it and then lets the symbolic
  emit the ONNX nodes computing its outputs from its inputs;
* for an op without one, runs it so that the ops its implementation calls record themselves
  (a composite), and then checks that every tensor it returned is traced, raising
  :class:`UnsupportedOperatorError` naming the op and the opset otherwise.
"""
from __future__ import annotations

import contextlib
import threading
import types
import warnings
from typing import Any, Callable, Dict, Iterator, List, Tuple

from .._C import Tensor
from ._graph import GraphBuilder, UnsupportedOperatorError

_SKIP_TRACE = object()


class TracerWarning(Warning):
    """The trace may not generalize (a tensor turned into a Python value steered it)."""


class _Trace:
    active = False
    thread = 0
    depth = 0
    g: GraphBuilder


_T = _Trace()

# Tensor -> Python conversions: the value is baked into the trace (torch's TracerWarning).
_CONVERSIONS = {"Tensor.item", "Tensor.tolist", "Tensor.numpy", "Tensor.__bool__",
                "Tensor.__int__", "Tensor.__float__", "Tensor.__index__", "Tensor.__array__",
                "Tensor.__complex__"}
# Ops whose result depends only on shapes/arguments, never on the traced values.
_VALUE_FREE = {"Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_full", "Tensor.new_empty",
               "Tensor.new_tensor", "Tensor.size", "Tensor.dim", "Tensor.numel",
               "Tensor.__len__", "Tensor.__repr__", "Tensor.__str__", "Tensor.__format__",
               "Tensor.__hash__", "Tensor.__array_namespace__"}

_DUNDERS = ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
            "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__pow__",
            "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__", "__eq__",
            "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__", "__or__",
            "__ror__", "__xor__", "__invert__", "__getitem__", "__setitem__", "__floordiv__",
            "__rfloordiv__", "__mod__", "__rmod__", "__iter__", "__bool__", "__int__",
            "__float__", "__index__", "__array__", "__complex__")
_PROPERTIES = ("T", "mT", "H", "mH", "data")


class DimInt(int):
    """A size read from a dynamic dim of a traced tensor's ``shape`` (Note [Dynamic dims in
    reshape]): an ordinary int that also knows where the graph holds it at run time, so that
    creation ops, slices and expands given it stay dynamic. Arithmetic on it gives plain ints."""


    value: Any
    axis: int

    def __new__(cls, size: int, value: Any, axis: int) -> "DimInt":
        o = int.__new__(cls, size)
        o.value, o.axis = value, axis
        return o

    def src(self, g: GraphBuilder) -> str:
        """The 1-D int64 graph value [this size]."""
        return g.dim(self.value, self.axis)


def _traced_shape(fget: Callable) -> Callable:
    def shape(self: Tensor) -> Any:
        s = fget(self)
        tr = _T
        if not tr.active or tr.depth or threading.get_ident() != tr.thread:
            return s
        hit = tr.g._vals.get(id(self))
        if hit is None or not any(hit[1].dyn):
            return s
        v = hit[1]
        return tuple(DimInt(n, v, i) if d else n for i, (n, d) in enumerate(zip(s, v.dyn)))
    return shape


def _traced_size(fget: Callable) -> Callable:
    """``x.size`` (the element count, callable like torch's ``size``) whose ``x.size(d)`` /
    ``x.size()`` give DimInts for a traced tensor's dynamic dims; not cached on the tensor."""
    shape_of = _traced_shape(lambda t: tuple(t.shape))

    def size(self: Tensor) -> Any:
        tr = _T
        if tr.active and not tr.depth and threading.get_ident() == tr.thread:
            hit = tr.g._vals.get(id(self))
            if hit is not None and any(hit[1].dyn):
                tr.depth += 1  # the property caches its shape: a plain one
                try:
                    s = fget(self)
                finally:
                    tr.depth -= 1
                fresh = int.__new__(type(s), int(s))
                fresh._shape = shape_of(self)
                return fresh
        return fget(self)
    return size


def _dim_ints(obj: Any) -> bool:
    if isinstance(obj, DimInt):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_dim_ints(o) for o in obj)
    if isinstance(obj, dict):
        return any(_dim_ints(o) for o in obj.values())
    return False


def _tensors(obj: Any) -> Iterator[Tensor]:
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)


# Creation ops: their sizes are Python ints, so a size read from a dynamic dim is baked.
_CREATION = {"arange", "zeros", "ones", "full", "empty", "eye", "tril_indices", "triu_indices",
             "randn", "rand", "randint", "linspace"}


def _warn_baked_size(name: str, args: tuple, kwargs: dict, stacklevel: int = 3) -> None:
    """TracerWarning if a Python int argument equals the traced size of a dynamic axis."""
    sizes = _T.g.dynamic_sizes
    flat: List[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, (list, tuple)):
            for e in o:
                walk(e)
        elif isinstance(o, int) and not isinstance(o, bool):
            flat.append(o)
    walk((args, tuple(kwargs.values())))
    hit = [v for v in flat if v in sizes and not isinstance(v, DimInt)]
    if hit:
        warnings.warn(f"'{name}' was called with the size {hit[0]}, the traced size of a "
                      "dynamic axis: Python ints are recorded as constants, so this tensor "
                      "keeps that size when the model runs with other sizes (derive it from a "
                      "traced tensor instead, e.g. zeros_like / a slice of a parameter)",
                      TracerWarning, stacklevel=stacklevel)


def _has_traced(args: tuple, kwargs: dict) -> bool:
    g = _T.g
    return any(g.is_known(t) for t in _tensors((args, kwargs)))


def _make_wrapper(name: str, fn: Callable, symbolic: Any) -> Callable:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = _T
        if not tr.active or tr.depth or threading.get_ident() != tr.thread:
            return fn(*args, **kwargs)
        if not _has_traced(args, kwargs):
            if name in _CREATION and tr.g.dynamic_sizes:
                if symbolic is not None and _dim_ints((args, kwargs)):
                    out = fn(*args, **kwargs)  # sizes read from dynamic dims: stays dynamic
                    tr.depth += 1
                    try:
                        tr.g.current_op = name
                        symbolic(tr.g, out, *args, **kwargs)
                    finally:
                        tr.depth -= 1
                    return out
                _warn_baked_size(name, args, kwargs)
            return fn(*args, **kwargs)
        if name in _CONVERSIONS:
            warnings.warn(f"Converting a traced tensor to a Python value ({name}) might cause "
                          "the trace to be incorrect: the value is recorded as a constant and "
                          "Python control flow that depends on it is not exported",
                          TracerWarning, stacklevel=2)
            return fn(*args, **kwargs)
        if symbolic is None:
            if name == "Tensor.__setitem__" or (name.endswith("_") and not name.endswith("__")):
                raise UnsupportedOperatorError(
                    f"Exporting the in-place operator '{name}' to ONNX opset version "
                    f"{tr.g.opset} is not supported by tessera.onnx.export; write it out of "
                    "place (e.g. x = x.masked_fill(m, v), ts.where)")
            out = fn(*args, **kwargs)
            if name.startswith("Tensor.new_") and tr.g.dynamic_sizes \
                    and not _dim_ints((args, kwargs)):
                _warn_baked_size(name, args[1:], kwargs)
            if name not in _VALUE_FREE:
                for t in _tensors(out):
                    if not tr.g.is_known(t):
                        raise UnsupportedOperatorError(
                            f"Exporting the operator '{name}' to ONNX opset version "
                            f"{tr.g.opset} is not supported by tessera.onnx.export (it has no "
                            "ONNX mapping, and its implementation calls no traceable op)")
            return out
        tr.depth += 1
        try:
            out = fn(*args, **kwargs)
            tr.g.current_op = name
            symbolic(tr.g, out, *args, **kwargs)
        finally:
            tr.depth -= 1
        return out

    wrapper.__name__ = getattr(fn, "__name__", name)
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


def _public_callables(ns: Any) -> List[Tuple[str, Any]]:
    out = []
    for n in dir(ns):
        if n.startswith("_"):
            continue
        f = getattr(ns, n, None)
        if isinstance(f, (types.FunctionType, types.BuiltinFunctionType)):
            out.append((n, f))
    return out


def _patch_table() -> List[Tuple[Any, str, str]]:
    """(owner, attribute, op name) of every entry point the tracer wraps."""
    import tessera
    from tessera import fft, linalg, special
    from tessera.nn import functional as F
    from tessera.nn.modules import rnn
    table: List[Tuple[Any, str, str]] = []
    for ns, prefix in ((tessera, ""), (linalg, "linalg."), (fft, "fft."), (special, "special."),
                       (F, "F.")):
        table += [(ns, n, prefix + n) for n, _ in _public_callables(ns)]
    for n, f in vars(Tensor).items():
        if (not n.startswith("_") and callable(f)
                and not isinstance(f, (type, property, classmethod))) \
                or n in _DUNDERS:
            table.append((Tensor, n, "Tensor." + n))
    from tessera import _C
    table.append((_C, "_conv", "F._convnd"))  # what the Conv modules call
    table.append((_C, "_conv_transpose", "F._conv_transposend"))
    table += [(rnn.LSTM, "forward", "nn.LSTM"), (rnn.GRU, "forward", "nn.GRU"),
              (rnn.RNN, "forward", "nn.RNN")]
    # Modules that call a functional through a class attribute (`_fn = staticmethod(F.relu)`).
    import tessera.nn as nn
    classes = {id(c): c for c in vars(nn).values() if isinstance(c, type)}
    for cls in classes.values():
        fn = vars(cls).get("_fn")
        if isinstance(fn, staticmethod) and getattr(fn.__func__, "__name__", None):
            table.append((cls, "_fn", "F." + fn.__func__.__name__))
    return table


@contextlib.contextmanager
def tracing(g: GraphBuilder, model: Any = None) -> Iterator[None]:
    """Record the public ops called (by this thread) into ``g`` while active. Ops the
    model's modules hold as attributes (``self.activation = F.gelu``) are wrapped too."""
    from ._symbolics import SYMBOLICS
    if _T.active:
        raise RuntimeError("tessera.onnx.export: an export is already running")
    saved: List[Tuple[Any, str, bool, Any]] = []
    by_id: Dict[int, Callable] = {}
    try:
        for owner, attr, name in _patch_table():
            own = attr in vars(owner)
            orig = vars(owner)[attr] if own else getattr(owner, attr)
            if isinstance(orig, staticmethod):
                w = _make_wrapper(name, orig.__func__, SYMBOLICS.get(name))
                setattr(owner, attr, staticmethod(w))
                by_id[id(orig.__func__)] = w
            else:
                w = _make_wrapper(name, orig, SYMBOLICS.get(name))
                setattr(owner, attr, w)
                by_id.setdefault(id(orig), w)
                # An entry point that wraps the implementation (nn.functional's argument
                # checks, functools.wraps): tessera's modules call the implementation by its
                # own name (softmin -> activation.softmax), so that name is rebound too.
                inner = getattr(orig, "__wrapped__", None)
                while inner is not None and id(inner) not in by_id:
                    by_id[id(inner)] = w
                    inner = getattr(inner, "__wrapped__", None)
            saved.append((owner, attr, own, orig))
        # Names bound by `from .activation import softmax` inside tessera's own modules.
        import sys
        for mname, m in list(sys.modules.items()):
            if not (mname == "tessera" or mname.startswith("tessera.")) or m is None \
                    or mname.startswith("tessera._C"):
                continue
            for attr, v in list(vars(m).items()):
                if id(v) in by_id and not attr.startswith("__"):
                    setattr(m, attr, by_id[id(v)])
                    saved.append((m, attr, True, v))
        for mod in (model.modules() if hasattr(model, "modules") else ()):
            for attr, v in list(vars(mod).items()):
                if id(v) in by_id and not attr.startswith("__"):
                    setattr(mod, attr, by_id[id(v)])
                    saved.append((mod, attr, True, v))
        for attr, make in (("shape", _traced_shape), ("size", _traced_size)):
            prop = vars(Tensor).get(attr)  # a property, or a C++ getset descriptor (x.size)
            fget = prop.fget if isinstance(prop, property) else getattr(prop, "__get__", None)
            if fget is not None:
                setattr(Tensor, attr, property(make(fget), getattr(prop, "fset", None),
                                               doc=prop.__doc__))
                saved.append((Tensor, attr, True, prop))
        for attr in _PROPERTIES:
            prop = vars(Tensor).get(attr)
            if isinstance(prop, property) and prop.fget is not None:
                getter = _make_wrapper("Tensor." + attr, prop.fget,
                                       SYMBOLICS.get("Tensor." + attr))
                setattr(Tensor, attr, property(getter, prop.fset))
                saved.append((Tensor, attr, True, prop))
        _T.g, _T.thread, _T.depth, _T.active = g, threading.get_ident(), 0, True
        yield
    finally:
        _T.active = False
        for owner, attr, own, orig in reversed(saved):
            if own:
                setattr(owner, attr, orig)
            else:
                delattr(owner, attr)


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is tracing right now (torch.onnx.is_in_onnx_export)."""
    return _T.active


SymbolicTable = Dict[str, Callable]
