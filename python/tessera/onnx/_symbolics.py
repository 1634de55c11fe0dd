"""ONNX symbolics: for each traced tessera op, the ONNX nodes computing its outputs.

A symbolic is called as ``sym(g, out, *args, **kwargs)`` right after the op ran with those
arguments and returned ``out``; it emits nodes into the :class:`GraphBuilder` ``g`` and binds
every output tensor to the value computing it (with which dims are dynamic). Ops are keyed by
their public name: ``"matmul"`` (``tessera.matmul``), ``"Tensor.view"``, ``"F.linear"``,
``"nn.LSTM"``. Attributes the op's result already tells (output shapes, dtypes, which dims a
reduction kept) are read from ``out`` rather than re-parsed from the many argument forms.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._C import Tensor
from ._graph import GraphBuilder, OnnxExporterError, UnsupportedOperatorError, Value, onnx_dtype

SYMBOLICS: Dict[str, Callable] = {}
INT64_MAX = 2 ** 63 - 1


def register(*names: str) -> Callable[[Callable], Callable]:
    def deco(fn: Callable) -> Callable:
        for n in names:
            SYMBOLICS[n] = fn
        return fn
    return deco


def _given(v: Any) -> bool:
    return v is not None and type(v) is not object  # plain object(): a "not given" sentinel


class Args:
    """Positional-or-keyword lookup over the argument forms an op accepts."""

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.args, self.kwargs = args, kwargs

    def get(self, pos: Optional[int], *names: str, default: Any = None) -> Any:
        for n in names:
            v = self.kwargs.get(n)
            if _given(v):
                return v
        if pos is not None and pos < len(self.args) and _given(self.args[pos]):
            return self.args[pos]
        return default


def _varargs(args: tuple, start: int) -> List[Any]:
    rest = args[start:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        return list(rest[0])
    return list(rest)


def _unsupported(g: GraphBuilder, what: str) -> OnnxExporterError:
    return UnsupportedOperatorError(f"Exporting the operator '{g.current_op}' to ONNX opset "
                                    f"version {g.opset} is not supported: {what}")


def _need_opset(g: GraphBuilder, n: int, onnx_op: str) -> None:
    if g.opset < n:
        raise UnsupportedOperatorError(
            f"Exporting the operator '{g.current_op}' to ONNX opset version {g.opset} is not "
            f"supported: it needs ONNX '{onnx_op}' (opset {n} or later); pass opset_version>={n}")


def _bcast_dyn(vals: Sequence[Optional[Value]], ndim: int) -> List[bool]:
    dyn = [False] * ndim
    for v in vals:
        if v is None:
            continue
        off = ndim - v.ndim
        for i, d in enumerate(v.dyn):
            if d and v.shape[i] != 1:
                dyn[off + i] = True
    return dyn


def _operand(g: GraphBuilder, x: Any, dtype: Any) -> Tuple[str, Optional[Value]]:
    """x (tensor or Python scalar) as a value of tessera dtype ``dtype``."""
    if isinstance(x, Tensor):
        v = g.val(x)
        if v.dtype != dtype:
            return g.node("Cast", [v.name], to=onnx_dtype(dtype)), v
        return v.name, v
    if isinstance(x, (list, tuple)):
        return g.const(np.asarray(x, dtype=np.dtype(dtype.name))), None
    return g.scalar(x, dtype), None


def _tensor_operand(g: GraphBuilder, x: Tensor, dtype: Any) -> Tuple[str, Value]:
    """_operand of a tensor: its Value is always there."""
    name, v = _operand(g, x, dtype)
    assert v is not None
    return name, v


def _alias_or_cast(g: GraphBuilder, out: Tensor, x: Tensor) -> None:
    v = g.val(x)
    if out.dtype == v.dtype:
        g.bind(out, v.name, v.dyn)
    else:
        g.bind(out, g.node("Cast", [v.name], to=onnx_dtype(out.dtype)), v.dyn)


def _axis(a: Any, ndim: int) -> int:
    a = int(a)
    return a + ndim if a < 0 else a


def _promote(a: Any, b: Any) -> Any:
    import tessera
    return tessera.result_type(a, b)


# ---------------------------------------------------------------------- elementwise binary
def _binary(op: str, reverse: bool = False, compare: bool = False, negate: bool = False,
            alpha: bool = False) -> Callable:
    def sym(g: GraphBuilder, out: Any, a: Any, b: Any = None, *rest: Any, **kw: Any) -> None:
        if b is None:
            b = kw.get("other", kw.get("x2", kw.get("exponent")))
        x, y = (b, a) if reverse else (a, b)
        dtype = _promote(x, y) if compare else out.dtype
        xn, xv = _operand(g, x, dtype)
        yn, yv = _operand(g, y, dtype)
        al = kw.get("alpha", rest[0] if rest and alpha else None) if alpha else None
        if al is not None and al != 1:
            yn = g.node("Mul", [yn, g.scalar(al, dtype)])
        mode = kw.get("rounding_mode")
        r = g.node(op, [xn, yn])
        if mode == "floor":
            if not out.dtype.name.startswith(("float", "bfloat")):
                raise _unsupported(g, "integer division with rounding_mode='floor'")
            r = g.node("Floor", [r])
        elif mode is not None:
            raise _unsupported(g, f"rounding_mode={mode!r}")
        if negate:
            r = g.node("Not", [r])
        g.bind(out, r, _bcast_dyn([xv, yv], out.ndim))
    return sym


for _op, _names in {
    "Add": ("add", "Tensor.add", "Tensor.__add__", "Tensor.__radd__", "Tensor.__iadd__"),
    "Sub": ("subtract", "sub", "Tensor.sub", "Tensor.subtract", "Tensor.__sub__",
            "Tensor.__isub__"),
    "Mul": ("multiply", "mul", "Tensor.mul", "Tensor.multiply", "Tensor.__mul__",
            "Tensor.__rmul__", "Tensor.__imul__"),
    "Div": ("divide", "div", "true_divide", "Tensor.div", "Tensor.divide", "Tensor.true_divide",
            "Tensor.__truediv__", "Tensor.__itruediv__"),
    "Pow": ("pow", "Tensor.pow", "Tensor.__pow__"),
    "Max": ("maximum", "Tensor.maximum", "fmax"),
    "Min": ("minimum", "Tensor.minimum", "fmin"),
}.items():
    register(*_names)(_binary(_op, alpha=_op in ("Add", "Sub")))
register("Tensor.__rsub__", "rsub")(_binary("Sub", reverse=True))
register("Tensor.__rtruediv__")(_binary("Div", reverse=True))
register("Tensor.__rpow__")(_binary("Pow", reverse=True))
for _op, _names in {
    "Equal": ("equal", "eq", "Tensor.eq", "Tensor.__eq__"),
    "Less": ("less", "lt", "Tensor.lt", "Tensor.less", "Tensor.__lt__"),
    "LessOrEqual": ("less_equal", "le", "Tensor.le", "Tensor.less_equal", "Tensor.__le__"),
    "Greater": ("greater", "gt", "Tensor.gt", "Tensor.greater", "Tensor.__gt__"),
    "GreaterOrEqual": ("greater_equal", "ge", "Tensor.ge", "Tensor.greater_equal",
                       "Tensor.__ge__"),
}.items():
    register(*_names)(_binary(_op, compare=True))
register("not_equal", "ne", "Tensor.ne", "Tensor.not_equal", "Tensor.__ne__")(
    _binary("Equal", compare=True, negate=True))


def _logical(op: str) -> Callable:
    def sym(g: GraphBuilder, out: Any, a: Any, b: Any = None, **kw: Any) -> None:
        if out.dtype.name != "bool":
            raise _unsupported(g, f"bitwise {op} of {out.dtype.name} tensors")
        import tessera
        xn, xv = _operand(g, a, tessera.bool)
        yn, yv = _operand(g, b if b is not None else kw.get("other"), tessera.bool)
        g.bind(out, g.node(op, [xn, yn]), _bcast_dyn([xv, yv], out.ndim))
    return sym


register("logical_and", "Tensor.logical_and", "bitwise_and", "Tensor.__and__",
         "Tensor.__rand__")(_logical("And"))
register("logical_or", "Tensor.logical_or", "bitwise_or", "Tensor.__or__",
         "Tensor.__ror__")(_logical("Or"))
register("logical_xor", "Tensor.logical_xor", "bitwise_xor", "Tensor.__xor__")(_logical("Xor"))


# ---------------------------------------------------------------------- elementwise unary
def _unary(*ops: str) -> Callable:
    def sym(g: GraphBuilder, out: Any, x: Tensor, *args: Any, **kw: Any) -> None:
        xn, xv = _tensor_operand(g, x, out.dtype if out.dtype.name != "bool" else x.dtype)
        for op in ops:
            xn = g.node(op, [xn])
        g.bind(out, xn, xv.dyn)
    return sym


def _fn_names(base: str, *extra: str) -> Tuple[str, ...]:
    return (base, "Tensor." + base) + extra


for _n, _ops in {"neg": ("Neg",), "negative": ("Neg",), "abs": ("Abs",), "exp": ("Exp",),
                 "log": ("Log",), "sqrt": ("Sqrt",), "sin": ("Sin",), "cos": ("Cos",),
                 "tan": ("Tan",), "tanh": ("Tanh",), "sigmoid": ("Sigmoid",), "erf": ("Erf",),
                 "floor": ("Floor",), "ceil": ("Ceil",), "reciprocal": ("Reciprocal",),
                 "sign": ("Sign",), "relu": ("Relu",), "rsqrt": ("Sqrt", "Reciprocal"),
                 "isnan": ("IsNaN",), "logical_not": ("Not",), "round": ("Round",)}.items():
    register(*_fn_names(_n, "F." + _n))(_unary(*_ops))
register("Tensor.__neg__")(_unary("Neg"))
register("Tensor.__abs__")(_unary("Abs"))
register("Tensor.__invert__", "bitwise_not", "Tensor.bitwise_not")(_unary("Not"))


@register("Tensor.__pos__", "positive", "Tensor.positive", "clone", "Tensor.clone", "detach",
          "Tensor.detach", "Tensor.data", "Tensor.contiguous", "Tensor.cpu", "Tensor.to",
          "Tensor.float", "Tensor.double", "Tensor.half", "Tensor.bfloat16", "Tensor.long",
          "Tensor.int", "Tensor.short", "Tensor.bool", "Tensor.byte", "Tensor.type", "astype",
          "Tensor.astype", "Tensor.requires_grad_", "F.identity")
def _identity(g: GraphBuilder, out: Any, x: Tensor, *args: Any, **kw: Any) -> None:
    if isinstance(out, Tensor):
        _alias_or_cast(g, out, x)


@register("Tensor.type_as")
def _type_as(g: GraphBuilder, out: Tensor, x: Tensor, other: Tensor) -> None:
    _alias_or_cast(g, out, x)


@register("square", "Tensor.square")
def _square(g: GraphBuilder, out: Tensor, x: Tensor, *a: Any, **k: Any) -> None:
    xn, xv = _tensor_operand(g, x, out.dtype)
    g.bind(out, g.node("Mul", [xn, xn]), xv.dyn)


@register("log1p", "Tensor.log1p")
def _log1p(g: GraphBuilder, out: Tensor, x: Tensor, *a: Any, **k: Any) -> None:
    xn, xv = _tensor_operand(g, x, out.dtype)
    g.bind(out, g.node("Log", [g.node("Add", [xn, g.scalar(1, out.dtype)])]), xv.dyn)


# ---------------------------------------------------------------------- activations
def _act(g: GraphBuilder, out: Tensor, x: Tensor, op: str, **attrs: Any) -> None:
    xv = g.val(x)
    g.bind(out, g.node(op, [xv.name], **attrs), xv.dyn)


@register("F.leaky_relu")
def _leaky_relu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _act(g, out, x, "LeakyRelu", alpha=float(Args((x,) + args, kw).get(1, "negative_slope",
                                                                       default=0.01)))


@register("F.elu")
def _elu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _act(g, out, x, "Elu", alpha=float(Args((x,) + args, kw).get(1, "alpha", default=1.0)))


@register("F.selu")
def _selu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _act(g, out, x, "Selu")


@register("F.hardsigmoid")
def _hardsigmoid(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _act(g, out, x, "HardSigmoid", alpha=1.0 / 6, beta=0.5)


@register("F.hardswish")
def _hardswish(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _need_opset(g, 14, "HardSwish")
    _act(g, out, x, "HardSwish")


def _clip(g: GraphBuilder, out: Tensor, x: Tensor, lo: Any, hi: Any) -> None:
    xn, xv = _tensor_operand(g, x, out.dtype)
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        if lo is not None:
            xn = g.node("Max", [xn, _operand(g, lo, out.dtype)[0]])
        if hi is not None:
            xn = g.node("Min", [xn, _operand(g, hi, out.dtype)[0]])
    else:
        xn = g.node("Clip", [xn, "" if lo is None else g.scalar(lo, out.dtype),
                             "" if hi is None else g.scalar(hi, out.dtype)])
    g.bind(out, xn, xv.dyn)


@register("F.hardtanh")
def _hardtanh(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    _clip(g, out, x, a.get(1, "min_val", default=-1.0), a.get(2, "max_val", default=1.0))


@register("F.relu6")
def _relu6(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _clip(g, out, x, 0.0, 6.0)


@register("clip", "clamp", "Tensor.clip", "Tensor.clamp")
def _clamp(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    _clip(g, out, x, a.get(1, "min"), a.get(2, "max"))


@register("clamp_min", "Tensor.clamp_min")
def _clamp_min(g: GraphBuilder, out: Tensor, x: Tensor, lo: Any) -> None:
    _clip(g, out, x, lo, None)


@register("clamp_max", "Tensor.clamp_max")
def _clamp_max(g: GraphBuilder, out: Tensor, x: Tensor, hi: Any) -> None:
    _clip(g, out, x, None, hi)


@register("F.silu")
def _silu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    g.bind(out, g.node("Mul", [xv.name, g.node("Sigmoid", [xv.name])]), xv.dyn)


@register("F.softplus")
def _softplus(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    beta, threshold = float(a.get(1, "beta", default=1.0)), float(a.get(2, "threshold",
                                                                        default=20.0))
    xv = g.val(x)
    bx = xv.name if beta == 1 else g.node("Mul", [xv.name, g.scalar(beta, x.dtype)])
    sp = g.node("Softplus", [bx])
    if beta != 1:
        sp = g.node("Div", [sp, g.scalar(beta, x.dtype)])
    big = g.node("Greater", [bx, g.scalar(threshold, x.dtype)])
    g.bind(out, g.node("Where", [big, xv.name, sp]), xv.dyn)


@register("F.mish")
def _mish(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    sp = g.node("Softplus", [xv.name])
    g.bind(out, g.node("Mul", [xv.name, g.node("Tanh", [sp])]), xv.dyn)


@register("F.logsigmoid")
def _logsigmoid(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    g.bind(out, g.node("Neg", [g.node("Softplus", [g.node("Neg", [xv.name])])]), xv.dyn)


@register("F.softsign")
def _softsign(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _act(g, out, x, "Softsign")


@register("F.tanhshrink")
def _tanhshrink(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    g.bind(out, g.node("Sub", [xv.name, g.node("Tanh", [xv.name])]), xv.dyn)


@register("F.celu")
def _celu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _need_opset(g, 12, "Celu")
    _act(g, out, x, "Celu", alpha=float(Args((x,) + args, kw).get(1, "alpha", default=1.0)))


@register("F.hardshrink", "F.softshrink")
def _shrink(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    lambd = float(Args((x,) + args, kw).get(1, "lambd", default=0.5))
    _act(g, out, x, "Shrink", lambd=lambd,
         bias=lambd if g.current_op == "F.softshrink" else 0.0)


@register("F.threshold")
def _threshold(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    xv = g.val(x)
    big = g.node("Greater", [xv.name, g.scalar(a.get(1, "threshold"), x.dtype)])
    g.bind(out, g.node("Where", [big, xv.name, g.scalar(a.get(2, "value"), x.dtype)]), xv.dyn)


@register("F.prelu")
def _prelu(g: GraphBuilder, out: Tensor, x: Tensor, weight: Tensor) -> None:
    xv = g.val(x)
    wn, _ = _tensor_operand(g, weight, x.dtype)
    if weight.size != 1 and x.ndim >= 2:  # one slope per channel (dim 1)
        wn = g.node("Reshape", [wn, g.i64([weight.size] + [1] * (x.ndim - 2))])
    elif weight.ndim == 1 and x.ndim == 0:
        wn = g.node("Reshape", [wn, g.i64([])])
    big = g.node("Greater", [xv.name, g.scalar(0, x.dtype)])
    g.bind(out, g.node("Where", [big, xv.name, g.node("Mul", [wn, xv.name])]), xv.dyn)


@register("F.rrelu")
def _rrelu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    lower, upper = a.get(1, "lower", default=1.0 / 8), a.get(2, "upper", default=1.0 / 3)
    if a.get(3, "training", default=False):
        raise OnnxExporterError(f"{g.current_op}: rrelu in training mode is random; export the "
                                "model in eval mode (training=TrainingMode.EVAL)")
    _act(g, out, x, "LeakyRelu", alpha=float((lower + upper) / 2))


@register("F.softmin")
def _softmin(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    dim = Args((x,) + args, kw).get(1, "dim")
    if dim is None:
        raise _unsupported(g, "softmin without dim (the implicit dim is deprecated)")
    xn, xv = _tensor_operand(g, x, out.dtype)
    g.bind(out, g.node("Softmax", [g.node("Neg", [xn])], axis=_axis(dim, x.ndim)), xv.dyn)


@register("F.softmax2d")
def _softmax2d(g: GraphBuilder, out: Tensor, x: Tensor) -> None:
    xn, xv = _tensor_operand(g, x, out.dtype)
    g.bind(out, g.node("Softmax", [xn], axis=x.ndim - 3), xv.dyn)


@register("F.glu")
def _glu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    d = _axis(Args((x,) + args, kw).get(1, "dim", default=-1), x.ndim)
    xv = g.val(x)
    h = x.shape[d] // 2
    a = g.node("Slice", [xv.name, g.i64([0]), g.i64([h]), g.i64([d])])
    b = g.node("Slice", [xv.name, g.i64([h]), g.i64([2 * h]), g.i64([d])])
    g.bind(out, g.node("Mul", [a, g.node("Sigmoid", [b])]), xv.dyn)


@register("F.gelu")
def _gelu(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    approx = Args((x,) + args, kw).get(1, "approximate", default="none")
    xv = g.val(x)
    d = x.dtype
    if approx == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = g.node("Mul", [g.node("Mul", [xv.name, xv.name]), xv.name])
        inner = g.node("Add", [xv.name, g.node("Mul", [x3, g.scalar(0.044715, d)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.scalar(math.sqrt(2 / math.pi), d)])])
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        t = g.node("Erf", [g.node("Div", [xv.name, g.scalar(math.sqrt(2.0), d)])])
    half = g.node("Mul", [xv.name, g.scalar(0.5, d)])
    g.bind(out, g.node("Mul", [half, g.node("Add", [t, g.scalar(1.0, d)])]), xv.dyn)


def _softmax_like(op: str) -> Callable:
    def sym(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
        dim = Args((x,) + args, kw).get(1, "dim", "axis")
        if dim is None:
            raise _unsupported(g, "softmax without dim (the implicit dim is deprecated)")
        xn, xv = _tensor_operand(g, x, out.dtype)
        g.bind(out, g.node(op, [xn], axis=_axis(dim, x.ndim)), xv.dyn)
    return sym


register("F.softmax", "softmax", "Tensor.softmax")(_softmax_like("Softmax"))
register("F.log_softmax", "log_softmax", "Tensor.log_softmax")(_softmax_like("LogSoftmax"))


@register("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
          "F.feature_alpha_dropout", "dropout")
def _dropout(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    p, training = a.get(1, "p", default=0.5), a.get(2, "training", default=True)
    if training and p > 0:
        raise OnnxExporterError(f"{g.current_op}: dropout in training mode (p={p}) is random; "
                                "export the model in eval mode (training=TrainingMode.EVAL)")
    _alias_or_cast(g, out, x)


# ---------------------------------------------------------------------- reductions
def _axes_arg(a: Args, ndim: int) -> List[int]:
    dim = a.get(1, "dim", "axis")
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(_axis(d, ndim) for d in dims)


def _reduce_node(g: GraphBuilder, op: str, x: str, axes: List[int], keep: bool) -> str:
    if op == "ReduceSum" or g.opset >= 18:
        return g.node(op, [x, g.i64(axes)], keepdims=int(keep))
    return g.node(op, [x], axes=axes, keepdims=int(keep))


def _reduced_dyn(v: Value, axes: List[int], keep: bool) -> List[bool]:
    if keep:
        return [False if i in axes else d for i, d in enumerate(v.dyn)]
    return [d for i, d in enumerate(v.dyn) if i not in axes]


def _reduction(op: str) -> Callable:
    def sym(g: GraphBuilder, out: Any, x: Tensor, *args: Any, **kw: Any) -> None:
        a = Args((x,) + args, kw)
        other = a.get(None, "other")
        if isinstance(out, tuple):  # (values, indices) of max/min over a dim
            _max_with_indices(g, out, x, a, op)
            return
        if isinstance(other, Tensor) or (len(args) == 1 and isinstance(args[0], Tensor)):
            _binary("Max" if op == "ReduceMax" else "Min")(g, out, x, other if other is not None
                                                            else args[0])
            return
        axes = _axes_arg(a, x.ndim)
        keep = out.ndim == x.ndim and x.ndim > 0 and len(axes) > 0
        xn, xv = _tensor_operand(g, x, out.dtype)
        g.bind(out, _reduce_node(g, op, xn, axes, keep), _reduced_dyn(xv, axes, keep))
    return sym


def _max_with_indices(g: GraphBuilder, out: tuple, x: Tensor, a: Args, op: str) -> None:
    axes = _axes_arg(a, x.ndim)
    keep = out[0].ndim == x.ndim
    xv = g.val(x)
    g.bind(out[0], _reduce_node(g, op, xv.name, axes, keep), _reduced_dyn(xv, axes, keep))
    arg = "ArgMax" if op == "ReduceMax" else "ArgMin"
    g.bind(out[1], g.node(arg, [xv.name], axis=axes[0], keepdims=int(keep)),
           _reduced_dyn(xv, axes, keep))


register("sum", "Tensor.sum")(_reduction("ReduceSum"))
register("mean", "Tensor.mean")(_reduction("ReduceMean"))
register("prod", "Tensor.prod")(_reduction("ReduceProd"))
register("max", "Tensor.max", "amax", "Tensor.amax")(_reduction("ReduceMax"))
register("min", "Tensor.min", "amin", "Tensor.amin")(_reduction("ReduceMin"))
register("logsumexp", "Tensor.logsumexp")(_reduction("ReduceLogSumExp"))


@register("linalg.vector_norm")
def _vector_norm(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    """ReduceL2 / ReduceL1, ReduceMax / ReduceMin of |x| for +-inf, else (sum |x|^p)^(1/p)."""
    a = Args((x,) + args, kw)
    p = a.get(1, "ord", default=2)
    dim = a.get(2, "dim", "axis")
    axes = _axes_arg(Args((x, dim), {}), x.ndim)
    keep = out.ndim == x.ndim and x.ndim > 0 and len(axes) > 0
    xn, xv = _tensor_operand(g, x, out.dtype)
    dyn = _reduced_dyn(xv, axes, keep)
    if p in (1, 2):
        g.bind(out, _reduce_node(g, "ReduceL2" if p == 2 else "ReduceL1", xn, axes, keep), dyn)
    elif p in (math.inf, -math.inf):
        ax = g.node("Abs", [xn])
        g.bind(out, _reduce_node(g, "ReduceMax" if p > 0 else "ReduceMin", ax, axes, keep), dyn)
    elif p != 0:
        powed = g.node("Pow", [g.node("Abs", [xn]), g.scalar(float(p), out.dtype)])
        total = _reduce_node(g, "ReduceSum", powed, axes, keep)
        g.bind(out, g.node("Pow", [total, g.scalar(1.0 / p, out.dtype)]), dyn)
    else:
        raise _unsupported(g, "vector_norm with ord=0 (a count of nonzeros)")


def _argreduce(op: str) -> Callable:
    def sym(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
        a = Args((x,) + args, kw)
        dim = a.get(1, "dim", "axis")
        xv = g.val(x)
        if dim is None:
            flat, _ = g.reshape(xv, [x.size])
            r = g.node(op, [flat], axis=0, keepdims=0)
            if out.ndim:
                r = g.node("Reshape", [r, g.i64([1] * out.ndim)])
            g.bind(out, r, [False] * out.ndim)
            return
        ax = _axis(dim, x.ndim)
        keep = out.ndim == x.ndim
        g.bind(out, g.node(op, [xv.name], axis=ax, keepdims=int(keep)),
               _reduced_dyn(xv, [ax], keep))
    return sym


register("argmax", "Tensor.argmax")(_argreduce("ArgMax"))
register("argmin", "Tensor.argmin")(_argreduce("ArgMin"))


@register("var", "Tensor.var", "std", "Tensor.std")
def _var(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    axes = _axes_arg(a, x.ndim)
    n = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    corr = a.get(None, "correction")
    if corr is None:
        unb = a.get(None, "unbiased")
        corr = (1 if unb else 0) if unb is not None else (1 if g.current_op.startswith("Tensor")
                                                         else 0)
    keep = out.ndim == x.ndim and len(axes) > 0
    xv = g.val(x)
    if any(xv.dyn[i] for i in axes):
        raise _unsupported(g, "var/std over a dynamic axis")
    m = _reduce_node(g, "ReduceMean", xv.name, axes, True)
    d = g.node("Sub", [xv.name, m])
    v = _reduce_node(g, "ReduceMean", g.node("Mul", [d, d]), axes, keep)
    if corr:
        v = g.node("Mul", [v, g.scalar(n / max(n - corr, 0) if n > corr else math.inf, x.dtype)])
    if g.current_op.endswith("std"):
        v = g.node("Sqrt", [v])
    g.bind(out, v, _reduced_dyn(xv, axes, keep))


@register("cumsum", "Tensor.cumsum")
def _cumsum(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    dim = Args((x,) + args, kw).get(1, "dim", "axis", default=0)
    xn, xv = _tensor_operand(g, x, out.dtype)
    g.bind(out, g.node("CumSum", [xn, g.const(np.asarray(_axis(dim, x.ndim), np.int64))]),
           xv.dyn)


# ---------------------------------------------------------------------- shapes and views
@register("reshape", "Tensor.reshape", "Tensor.view", "Tensor.view_as", "Tensor.reshape_as",
          "flatten", "Tensor.flatten", "ravel", "Tensor.ravel", "squeeze", "Tensor.squeeze",
          "unsqueeze", "Tensor.unsqueeze", "expand_dims", "unflatten", "Tensor.unflatten",
          "F.flatten")
def _reshape(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    if out.dtype != x.dtype:
        raise _unsupported(g, "a view as another dtype")
    xv = g.val(x)
    if tuple(out.shape) == xv.shape and not _dim_args(args, kw):
        g.bind(out, xv.name, xv.dyn)
        return
    target = _size_args(args, kw, "shape", "size")
    known: Dict[int, str] = {}
    if target is not None and len(target) == out.ndim:
        known = {j: d.src(g) for j, d in enumerate(target) if _is_dim(d)}
    name, dyn = g.reshape(xv, out.shape, known)
    g.bind(out, name, dyn)


def _is_dim(v: Any) -> bool:
    from ._tracer import DimInt
    return isinstance(v, DimInt)


def _dim_args(args: tuple, kw: dict) -> bool:
    from ._tracer import _dim_ints
    return _dim_ints((args, kw))


def _size_args(args: tuple, kw: dict, *names: str) -> Optional[List[Any]]:
    """The size list of ``f(*sizes)`` / ``f(sizes)`` / ``f(size=...)`` (args after the tensor)."""
    for n in names:
        if isinstance(kw.get(n), (list, tuple)):
            return list(kw[n])
    if args and isinstance(args[0], (list, tuple)):
        return list(args[0])
    ints = []
    for a in args:
        if not isinstance(a, int) or isinstance(a, bool):
            break
        ints.append(a)
    return ints or None


@register("zeros", "ones", "full", "empty", "Tensor.new_zeros", "Tensor.new_ones",
          "Tensor.new_full", "Tensor.new_empty")
def _fill(g: GraphBuilder, out: Tensor, *args: Any, **kw: Any) -> None:
    """A filled tensor whose size was read from a dynamic shape: ConstantOfShape (otherwise a
    constant, folded where used)."""
    name = g.current_op
    rest = args[1:] if name.startswith("Tensor.") else args
    sizes = _size_args(rest, kw, "size", "shape")
    if not sizes or len(sizes) != out.ndim or not any(_is_dim(d) for d in sizes):
        return
    if name.endswith("full"):
        value = kw.get("fill_value", rest[1] if len(rest) > 1 else None)
    else:
        value = 1 if name.endswith("ones") else 0
    import onnx
    tp = onnx.helper.make_tensor("value", onnx_dtype(out.dtype), [1],
                                 [np.asarray(value).astype(np.dtype(out.dtype.name)).item()])
    dims = [d.src(g) if _is_dim(d) else int(d) for d in sizes]
    g.bind(out, g.node("ConstantOfShape", [g.shape_of(dims)], value=tp),
           [_is_dim(d) for d in sizes])


@register("arange")
def _arange(g: GraphBuilder, out: Tensor, *args: Any, **kw: Any) -> None:
    """arange with an end (or start) read from a dynamic shape: Range."""
    a = Args(args, kw)
    if len(args) >= 2 or "end" in kw or "stop" in kw:
        start, end = a.get(0, "start", default=0), a.get(1, "end", "stop")
    else:
        start, end = kw.get("start", 0), a.get(0, "end", "stop")
    step = a.get(2, "step", default=1)
    if not any(_is_dim(v) for v in (start, end, step)):
        return

    def scalar(v: Any) -> str:
        if _is_dim(v):
            s = g.node("Squeeze", [v.src(g), g.i64([0])])
            return s if out.dtype.name == "int64" else g.node("Cast", [s],
                                                              to=onnx_dtype(out.dtype))
        return g.scalar(v, out.dtype)
    g.bind(out, g.node("Range", [scalar(start), scalar(end), scalar(step)]), [True])


def _perm_of(name: str, x: Tensor, args: tuple, kw: dict) -> List[int]:
    n = x.ndim
    if name in ("Tensor.T", "Tensor.t", "t", "Tensor.H"):
        return list(range(n))[::-1]
    if name in ("Tensor.mT", "Tensor.mH", "matrix_transpose"):
        return list(range(n - 2)) + [n - 1, n - 2]
    if name in ("transpose", "Tensor.transpose", "swapaxes", "Tensor.swapaxes", "swapdims",
                "Tensor.swapdims"):
        a = Args((x,) + args, kw)
        d0, d1 = _axis(a.get(1, "dim0", "axis0", "axis1"), n), _axis(a.get(2, "dim1", "axis2"), n)
        p = list(range(n))
        p[d0], p[d1] = p[d1], p[d0]
        return p
    if name in ("moveaxis", "Tensor.moveaxis", "movedim", "Tensor.movedim"):
        a = Args((x,) + args, kw)
        src, dst = a.get(1, "source"), a.get(2, "destination")
        src = [src] if isinstance(src, int) else list(src)
        dst = [dst] if isinstance(dst, int) else list(dst)
        src, dst = [_axis(s, n) for s in src], [_axis(d, n) for d in dst]
        order = [i for i in range(n) if i not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return order
    if name == "Tensor.permute":
        dims = kw.get("dims", None)
        return [_axis(d, n) for d in (dims if dims is not None else _varargs(args, 0))]
    a = Args((x,) + args, kw)  # permute(x, dims), permute_dims(x, axes)
    return [_axis(d, n) for d in a.get(1, "dims", "axes")]


def _permute_sym(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    perm = _perm_of(g.current_op, x, args, kw)
    if perm == list(range(x.ndim)):
        g.bind(out, xv.name, xv.dyn)
        return
    g.bind(out, g.node("Transpose", [xv.name], perm=perm), [xv.dyn[p] for p in perm])


register("transpose", "Tensor.transpose", "swapaxes", "Tensor.swapaxes", "swapdims",
         "Tensor.swapdims", "permute", "Tensor.permute", "permute_dims", "Tensor.T", "Tensor.mT",
         "Tensor.t", "t", "matrix_transpose", "moveaxis", "Tensor.moveaxis", "movedim",
         "Tensor.movedim")(_permute_sym)


@register("expand", "Tensor.expand", "Tensor.expand_as", "broadcast_to", "Tensor.broadcast_to")
def _expand(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    off = out.ndim - x.ndim
    if g.current_op == "Tensor.expand_as":
        ov = g.val(args[0] if args else kw["other"])
        target: List[Any] = [g.dim(ov, i) if d else n for i, (n, d) in
                             enumerate(zip(ov.shape, ov.dyn))]
    else:
        target = _size_args(args, kw, "size", "shape") or []
        target = [t.src(g) if _is_dim(t) else t for t in target]
    if len(target) != out.ndim:
        target = list(out.shape)
    dims: List[Any] = []
    dyn: List[bool] = []
    for j, s in enumerate(out.shape):
        i = j - off
        if isinstance(target[j], str) and not (i >= 0 and xv.dyn[i]):
            dims.append(target[j])  # a size read from a dynamic shape
            dyn.append(True)
        elif i >= 0 and x.shape[i] == s:
            dims.append(1)
            dyn.append(xv.dyn[i])
        else:
            dims.append(int(s))
            dyn.append(False)
            if int(s) in g.dynamic_sizes and int(s) != 1:
                from ._tracer import _warn_baked_size
                _warn_baked_size(g.current_op, (int(s),), {}, stacklevel=4)
    g.bind(out, g.node("Expand", [xv.name, g.shape_of(dims)]), dyn)


@register("concat", "cat", "concatenate")
def _concat(g: GraphBuilder, out: Tensor, xs: Sequence[Tensor], *args: Any, **kw: Any) -> None:
    ax = _axis(Args((xs,) + args, kw).get(1, "dim", "axis", default=0), out.ndim)
    parts = [_tensor_operand(g, t, out.dtype) for t in xs if not (t.ndim == 1 and t.shape[0] == 0
                                                          and out.ndim != 1)]
    dyn = [False] * out.ndim
    for _, v in parts:
        for i, d in enumerate(v.dyn):
            dyn[i] = dyn[i] or d
    g.bind(out, g.node("Concat", [n for n, _ in parts], axis=ax), dyn)


@register("stack")
def _stack(g: GraphBuilder, out: Tensor, xs: Sequence[Tensor], *args: Any, **kw: Any) -> None:
    ax = _axis(Args((xs,) + args, kw).get(1, "dim", "axis", default=0), out.ndim)
    parts = [_tensor_operand(g, t, out.dtype) for t in xs]
    dyn = [False] * (out.ndim - 1)
    for _, v in parts:
        for i, d in enumerate(v.dyn):
            dyn[i] = dyn[i] or d
    ins = [g.node("Unsqueeze", [n, g.i64([ax])]) for n, _ in parts]
    g.bind(out, g.node("Concat", ins, axis=ax), dyn[:ax] + [False] + dyn[ax:])


@register("split", "Tensor.split", "chunk", "Tensor.chunk", "unbind", "Tensor.unbind",
          "tensor_split", "Tensor.tensor_split")
def _split(g: GraphBuilder, out: Sequence[Tensor], x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    unbind = g.current_op.endswith("unbind")
    ax = _axis(a.get(1 if unbind else 2, "dim", "axis", default=0), x.ndim)
    xv = g.val(x)
    if xv.dyn[ax]:
        raise _unsupported(g, f"splitting along the dynamic axis {ax}")
    sizes = [1 if unbind else t.shape[ax] for t in out]
    if len(out) == 1:
        outs = [xv.name]
    else:
        outs = g.node("Split", [xv.name, g.i64(sizes)], n_out=len(out), axis=ax)
    for t, n in zip(out, outs):
        if unbind:
            g.bind(t, g.node("Squeeze", [n, g.i64([ax])]), xv.dyn[:ax] + xv.dyn[ax + 1:])
        else:
            g.bind(t, n, xv.dyn)


@register("Tensor.__getitem__")
def _getitem(g: GraphBuilder, out: Tensor, x: Tensor, key: Any) -> None:
    xv = g.val(x)
    if not isinstance(key, tuple):
        key = (key,)
    consumed = sum(k.ndim if isinstance(k, Tensor) and k.dtype.name == "bool" else 1
                   for k in key if k is not None and k is not Ellipsis)
    cur, shape, dyn = xv.name, list(xv.shape), list(xv.dyn)
    p = 0
    n_tensor = 0
    for k in key:
        if k is Ellipsis:
            p += x.ndim - consumed
        elif k is None:
            cur = g.node("Unsqueeze", [cur, g.i64([p])])
            shape.insert(p, 1)
            dyn.insert(p, False)
            p += 1
        elif isinstance(k, slice):
            start, stop, step = k.start, k.stop, 1 if k.step is None else int(k.step)
            if step <= 0:
                raise _unsupported(g, "a slice with a negative step")
            if (start in (None, 0)) and stop is None and step == 1:
                p += 1
                continue
            st = 0 if start is None else int(start)
            en = INT64_MAX if stop is None else int(stop)
            cur = g.node("Slice", [cur, start.src(g) if _is_dim(start) else g.i64([st]),
                                   stop.src(g) if _is_dim(stop) else g.i64([en]),
                                   g.i64([p]), g.i64([step])])
            n = len(range(*k.indices(shape[p])))
            static = st >= 0 and stop is not None and int(stop) >= 0
            dyn[p] = (dyn[p] and not static) or _is_dim(start) or _is_dim(stop)
            shape[p] = n
            p += 1
        elif isinstance(k, (Tensor, list, np.ndarray)) or (hasattr(k, "__index__")
                                                          and not isinstance(k, bool)):
            if isinstance(k, (Tensor, list, np.ndarray)):
                import tessera
                if not isinstance(k, Tensor):
                    k = tessera.asarray(k)
                if k.dtype.name == "bool":
                    raise _unsupported(g, "indexing with a boolean mask (its result's shape "
                                          "depends on the data)")
                n_tensor += 1
                if n_tensor > 1:
                    raise _unsupported(g, "advanced indexing with more than one index tensor")
                idx, iv = _operand(g, k, tessera.int64)
                kshape, kdyn = list(k.shape), list(iv.dyn) if iv else [False] * k.ndim
            else:
                idx, kshape, kdyn = g.const(np.asarray(int(k), np.int64)), [], []
            cur = g.node("Gather", [cur, idx], axis=p)
            shape[p:p + 1] = kshape
            dyn[p:p + 1] = kdyn
            p += len(kshape)
        else:
            raise _unsupported(g, f"an index of type {type(k).__name__}")
    if tuple(shape) != tuple(out.shape):
        raise _unsupported(g, f"this index (traced shape {tuple(shape)}, tessera gave "
                              f"{tuple(out.shape)})")
    g.bind(out, cur, dyn)


@register("flip", "Tensor.flip")
def _flip(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    dims = kw.get("dims", kw.get("axis"))
    if dims is None:
        dims = _varargs(args, 0) or list(range(x.ndim))
    dims = [_axis(d, x.ndim) for d in ([dims] if isinstance(dims, int) else dims)]
    xv = g.val(x)
    n = len(dims)
    g.bind(out, g.node("Slice", [xv.name, g.i64([-1] * n), g.i64([-INT64_MAX - 1] * n),
                                 g.i64(dims), g.i64([-1] * n)]), xv.dyn)


@register("topk", "Tensor.topk")
def _topk(g: GraphBuilder, out: Any, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    k, ax = int(a.get(1, "k")), _axis(a.get(2, "dim", "axis", default=-1), x.ndim)
    largest, srt = a.get(3, "largest", default=True), a.get(4, "sorted", default=True)
    xv = g.val(x)
    if xv.dyn[ax]:
        raise _unsupported(g, "topk along a dynamic axis")
    vals, idx = g.node("TopK", [xv.name, g.i64([k])], n_out=2, axis=ax, largest=int(largest),
                       sorted=int(srt))
    g.bind(out[0], vals, xv.dyn)
    g.bind(out[1], idx, xv.dyn)


@register("where")
def _where(g: GraphBuilder, out: Tensor, cond: Tensor, x: Any, y: Any) -> None:
    import tessera
    cn, cv = _operand(g, cond, tessera.bool)
    xn, xv = _operand(g, x, out.dtype)
    yn, yv = _operand(g, y, out.dtype)
    g.bind(out, g.node("Where", [cn, xn, yn]), _bcast_dyn([cv, xv, yv], out.ndim))


@register("masked_fill", "Tensor.masked_fill")
def _masked_fill(g: GraphBuilder, out: Tensor, x: Tensor, mask: Tensor, value: Any) -> None:
    _where(g, out, mask, value, x)


@register("tril", "Tensor.tril", "triu", "Tensor.triu")
def _tri(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    _need_opset(g, 14, "Trilu")
    k = Args((x,) + args, kw).get(1, "diagonal", "k", default=0)
    xv = g.val(x)
    g.bind(out, g.node("Trilu", [xv.name, g.i64([int(k)])], upper=int("triu" in g.current_op)),
           xv.dyn)


@register("zeros_like", "ones_like", "full_like", "empty_like")
def _like(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    xv = g.val(x)
    if not any(xv.dyn):
        return  # a constant (folded where used)
    value = np.asarray(0 if "zeros" in g.current_op or "empty" in g.current_op else
                       1 if "ones" in g.current_op else Args((x,) + args, kw).get(1, "fill_value"))
    import onnx
    tp = onnx.helper.make_tensor("value", onnx_dtype(out.dtype), [1], [value.item()])
    g.bind(out, g.node("ConstantOfShape", [g.node("Shape", [xv.name])], value=tp), xv.dyn)


@register("gather", "Tensor.gather", "take_along_dim", "take_along_axis")
def _gather(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    import tessera
    a = Args((x,) + args, kw)
    if g.current_op in ("gather", "Tensor.gather"):
        dim, index = a.get(1, "dim", "axis"), a.get(2, "index")
    else:
        index, dim = a.get(1, "indices", "index"), a.get(2, "dim", "axis")
    xv = g.val(x)
    idx, iv = _operand(g, index, tessera.int64)
    g.bind(out, g.node("GatherElements", [xv.name, idx], axis=_axis(dim, x.ndim)),
           list(iv.dyn) if iv else [False] * out.ndim)


@register("index_select", "Tensor.index_select")
def _index_select(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    import tessera
    a = Args((x,) + args, kw)
    ax = _axis(a.get(1, "dim", "axis"), x.ndim)
    xv = g.val(x)
    idx, iv = _operand(g, a.get(2, "index"), tessera.int64)
    dyn = list(xv.dyn)
    dyn[ax] = bool(iv and iv.dyn[0])
    g.bind(out, g.node("Gather", [xv.name, idx], axis=ax), dyn)


@register("Tensor.repeat", "tile")
def _repeat(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    reps = [int(r) for r in _varargs(args, 0)]
    xv = g.val(x)
    name, dyn = xv.name, list(xv.dyn)
    if len(reps) > x.ndim:
        extra = len(reps) - x.ndim
        name, dyn = g.reshape(xv, [1] * extra + list(x.shape))
    elif len(reps) < x.ndim:
        reps = [1] * (x.ndim - len(reps)) + reps
    g.bind(out, g.node("Tile", [name, g.i64(reps)]), [d and r == 1 for d, r in zip(dyn, reps)])


@register("einsum")
def _einsum(g: GraphBuilder, out: Tensor, eq: str, *ops: Any) -> None:
    xs = _varargs(ops, 0)
    names = [_operand(g, t, out.dtype)[0] for t in xs]
    g.bind(out, g.node("Einsum", names, equation=eq.replace(" ", "")), [False] * out.ndim)


# ---------------------------------------------------------------------- linear algebra
def _matmul_dyn(a: Value, b: Value) -> List[bool]:
    ab = a.dyn[:-2] if a.ndim >= 2 else ()
    bb = b.dyn[:-2] if b.ndim >= 2 else ()
    ash = a.shape[:-2] if a.ndim >= 2 else ()
    bsh = b.shape[:-2] if b.ndim >= 2 else ()
    n = max(len(ab), len(bb))
    batch = _bcast_dyn([Value("", ash, ab, None), Value("", bsh, bb, None)], n)
    return batch + ([a.dyn[-2]] if a.ndim >= 2 else []) + ([b.dyn[-1]] if b.ndim >= 2 else [])


def _matmul(reverse: bool = False) -> Callable:
    def sym(g: GraphBuilder, out: Tensor, a: Tensor, b: Any = None, **kw: Any) -> None:
        if b is None:
            b = kw.get("other", kw.get("mat2"))
        if reverse:
            a, b = b, a
        an, av = _tensor_operand(g, a, out.dtype)
        bn, bv = _tensor_operand(g, b, out.dtype)
        g.bind(out, g.node("MatMul", [an, bn]), _matmul_dyn(av, bv))
    return sym


register("matmul", "Tensor.matmul", "Tensor.__matmul__", "mm", "Tensor.mm", "bmm",
         "Tensor.bmm")(_matmul())
register("Tensor.__rmatmul__")(_matmul(reverse=True))


@register("F.linear")
def _linear(g: GraphBuilder, out: Tensor, x: Tensor, weight: Tensor, bias: Any = None) -> None:
    xv, wv = g.val(x), g.val(weight)
    bn = g.val(bias).name if bias is not None else None
    dyn = list(xv.dyn[:-1]) + [False] if x.ndim else []
    if x.ndim == 2 and weight.ndim == 2:
        g.bind(out, g.node("Gemm", [xv.name, wv.name] + ([bn] if bn else []), transB=1), dyn)
        return
    y = g.node("MatMul", [xv.name, g.node("Transpose", [wv.name], perm=[1, 0])])
    if bn:
        y = g.node("Add", [y, bn])
    g.bind(out, y, dyn)


@register("F.embedding")
def _embedding(g: GraphBuilder, out: Tensor, x: Tensor, weight: Tensor, *args: Any,
               **kw: Any) -> None:
    if Args((x, weight) + args, kw).get(3, "max_norm") is not None:
        raise _unsupported(g, "embedding with max_norm (it renormalizes the weight in place)")
    xv, wv = g.val(x), g.val(weight)
    g.bind(out, g.node("Gather", [wv.name, xv.name], axis=0), list(xv.dyn) + [False])


# ---------------------------------------------------------------------- normalization
@register("F.layer_norm")
def _layer_norm(g: GraphBuilder, out: Tensor, x: Tensor, normalized_shape: Any, *args: Any,
                **kw: Any) -> None:
    a = Args((x, normalized_shape) + args, kw)
    w, b, eps = a.get(2, "weight"), a.get(3, "bias"), float(a.get(4, "eps", default=1e-5))
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    xv = g.val(x)
    axes = list(range(x.ndim - len(ns), x.ndim))
    if g.opset >= 17:
        scale = g.val(w).name if w is not None else g.const(np.ones(ns, np.dtype(x.dtype.name)))
        ins = [xv.name, scale] + ([g.val(b).name] if b is not None else [])
        y = g.node("LayerNormalization", ins, axis=-len(ns), epsilon=eps)
    else:
        mean = _reduce_node(g, "ReduceMean", xv.name, axes, True)
        d = g.node("Sub", [xv.name, mean])
        var = _reduce_node(g, "ReduceMean", g.node("Mul", [d, d]), axes, True)
        y = g.node("Div", [d, g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, x.dtype)])])])
        if w is not None:
            y = g.node("Mul", [y, g.val(w).name])
        if b is not None:
            y = g.node("Add", [y, g.val(b).name])
    g.bind(out, y, xv.dyn)


@register("F.rms_norm")
def _rms_norm(g: GraphBuilder, out: Tensor, x: Tensor, normalized_shape: Any, *args: Any,
              **kw: Any) -> None:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing dims, with basic nodes (the C++ op
    is one call, so the tracer sees no composite inside)."""
    a = Args((x, normalized_shape) + args, kw)
    w, eps = a.get(2, "weight"), a.get(3, "eps")
    if eps is None:
        eps = float(np.finfo(np.dtype(x.dtype.name)).eps) if x.dtype.name != "bfloat16" else 0.0078125
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    xv = g.val(x)
    axes = list(range(x.ndim - len(ns), x.ndim))
    ms = _reduce_node(g, "ReduceMean", g.node("Mul", [xv.name, xv.name]), axes, True)
    y = g.node("Div", [xv.name, g.node("Sqrt", [g.node("Add", [ms, g.scalar(float(eps), x.dtype)])])])
    if w is not None:
        y = g.node("Mul", [y, g.val(w).name])
    g.bind(out, y, xv.dyn)


@register("F.group_norm")
def _group_norm(g: GraphBuilder, out: Tensor, x: Tensor, num_groups: int, *args: Any,
                **kw: Any) -> None:
    """(N, C, *) -> (N, G, C/G * prod(*)): mean and biased variance per group, then the
    per-channel affine; written with basic nodes (any opset, dynamic batch kept)."""
    a = Args((x, num_groups) + args, kw)
    w, b, eps = a.get(2, "weight"), a.get(3, "bias"), float(a.get(4, "eps", default=1e-5))
    xv = g.val(x)
    grouped = g.node("Reshape", [xv.name, g.const(np.array([0, int(num_groups), -1], np.int64))])
    mean = _reduce_node(g, "ReduceMean", grouped, [2], True)
    d = g.node("Sub", [grouped, mean])
    var = _reduce_node(g, "ReduceMean", g.node("Mul", [d, d]), [2], True)
    y = g.node("Div", [d, g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, x.dtype)])])])
    y = g.node("Reshape", [y, g.node("Shape", [xv.name])])
    per_channel = np.array([x.shape[1]] + [1] * (x.ndim - 2), np.int64)
    if w is not None:
        y = g.node("Mul", [y, g.node("Reshape", [g.val(w).name, g.const(per_channel)])])
    if b is not None:
        y = g.node("Add", [y, g.node("Reshape", [g.val(b).name, g.const(per_channel)])])
    g.bind(out, y, xv.dyn)


@register("F.local_response_norm")
def _local_response_norm(g: GraphBuilder, out: Tensor, x: Tensor, size: int, *args: Any,
                         **kw: Any) -> None:
    """x / (k + alpha/size * sum of x^2 over [c - size//2, c + (size-1)//2])^beta: the squares
    zero-padded on the channel axis, summed over `size` channel slices (PyTorch's window,
    which ONNX's LRN places differently for even sizes)."""
    a = Args((x, size) + args, kw)
    alpha, beta = float(a.get(2, "alpha", default=1e-4)), float(a.get(3, "beta", default=0.75))
    k = float(a.get(4, "k", default=1.0))
    size, c = int(size), x.shape[1]
    xv = g.val(x)
    begins, ends = [0] * x.ndim, [0] * x.ndim
    begins[1], ends[1] = size // 2, (size - 1) // 2
    sq = g.node("Mul", [xv.name, xv.name])
    padded = g.node("Pad", [sq, g.i64(begins + ends), g.scalar(0.0, x.dtype)], mode="constant")
    acc = None
    for j in range(size):
        part = g.node("Slice", [padded, g.i64([j]), g.i64([j + c]), g.i64([1])])
        acc = part if acc is None else g.node("Add", [acc, part])
    base = g.node("Add", [g.node("Mul", [acc, g.scalar(alpha / size, x.dtype)]),
                          g.scalar(k, x.dtype)])
    g.bind(out, g.node("Div", [xv.name, g.node("Pow", [base, g.scalar(beta, x.dtype)])]),
           xv.dyn)


@register("F.normalize")
def _normalize(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    """x / max(vector_norm(x, p, dim, keepdim), eps)."""
    a = Args((x,) + args, kw)
    p, eps = float(a.get(1, "p", default=2.0)), float(a.get(3, "eps", default=1e-12))
    axes = _axes_arg(Args((x, a.get(2, "dim", default=1)), {}), x.ndim)
    xv = g.val(x)
    if p in (1, 2):
        norm = _reduce_node(g, "ReduceL2" if p == 2 else "ReduceL1", xv.name, axes, True)
    elif p in (math.inf, -math.inf):
        norm = _reduce_node(g, "ReduceMax" if p > 0 else "ReduceMin",
                            g.node("Abs", [xv.name]), axes, True)
    elif p != 0:
        powed = g.node("Pow", [g.node("Abs", [xv.name]), g.scalar(p, x.dtype)])
        norm = g.node("Pow", [_reduce_node(g, "ReduceSum", powed, axes, True),
                              g.scalar(1.0 / p, x.dtype)])
    else:
        raise _unsupported(g, "normalize with p=0 (a count of nonzeros)")
    g.bind(out, g.node("Div", [xv.name, g.node("Max", [norm, g.scalar(eps, x.dtype)])]), xv.dyn)


@register("F.instance_norm")
def _instance_norm(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    w, b = a.get(3, "weight"), a.get(4, "bias")
    if not a.get(5, "use_input_stats", default=True):
        _batch_norm(g, out, x, a.get(1, "running_mean"), a.get(2, "running_var"), w, b, False,
                    0.0, a.get(7, "eps", default=1e-5))
        return
    c = x.shape[1]
    dt = np.dtype(x.dtype.name)
    xv = g.val(x)
    scale = g.val(w).name if w is not None else g.const(np.ones(c, dt))
    bias = g.val(b).name if b is not None else g.const(np.zeros(c, dt))
    g.bind(out, g.node("InstanceNormalization", [xv.name, scale, bias],
                       epsilon=float(a.get(7, "eps", default=1e-5))), xv.dyn)


@register("F.batch_norm")
def _batch_norm(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    a = Args((x,) + args, kw)
    rm, rv, w, b = (a.get(i, n) for i, n in ((1, "running_mean"), (2, "running_var"),
                                             (3, "weight"), (4, "bias")))
    if a.get(5, "training", default=False) or rm is None or rv is None:
        raise OnnxExporterError(f"{g.current_op}: batch norm with batch statistics (training "
                                "mode or no running stats) cannot be exported; export in eval "
                                "mode")
    eps = float(a.get(7, "eps", default=1e-5))
    c = x.shape[1]
    dt = np.dtype(x.dtype.name)
    xv = g.val(x)
    scale = g.val(w).name if w is not None else g.const(np.ones(c, dt))
    bias = g.val(b).name if b is not None else g.const(np.zeros(c, dt))
    g.bind(out, g.node("BatchNormalization", [xv.name, scale, bias, g.val(rm).name,
                                              g.val(rv).name], epsilon=eps), xv.dyn)


# ---------------------------------------------------------------------- convolution, pooling
def _tup(v: Any, n: int) -> List[int]:
    return [int(v)] * n if isinstance(v, int) else [int(e) for e in v]


def _conv(nd: int) -> Callable:
    def sym(g: GraphBuilder, out: Tensor, x: Tensor, weight: Tensor, *args: Any,
            **kw: Any) -> None:
        a = Args((x, weight) + args, kw)
        b = a.get(2, "bias")
        stride, dil = _tup(a.get(3, "stride", default=1), nd), _tup(a.get(5, "dilation",
                                                                          default=1), nd)
        pad, groups = a.get(4, "padding", default=0), int(a.get(6, "groups", default=1))
        k = list(weight.shape[2:])
        if x.ndim != nd + 2:
            raise _unsupported(g, f"unbatched ({x.ndim}-D) input")
        if pad == "valid":
            pads = [0] * (2 * nd)
        elif pad == "same":
            tot = [d * (kk - 1) for d, kk in zip(dil, k)]
            pads = [t // 2 for t in tot] + [t - t // 2 for t in tot]
        else:
            p = _tup(pad, nd)
            pads = p + p
        xv = g.val(x)
        ins = [xv.name, g.val(weight).name] + ([g.val(b).name] if b is not None else [])
        y = g.node("Conv", ins, kernel_shape=k, strides=stride, pads=pads, dilations=dil,
                   group=groups)
        g.bind(out, y, [xv.dyn[0]] + [False] * (out.ndim - 1))
    return sym


register("F.conv1d")(_conv(1))
register("F.conv2d")(_conv(2))
register("F.conv3d")(_conv(3))


@register("F._conv_transposend")
def _conv_transposend(g: GraphBuilder, out: Tensor, x: Tensor, weight: Tensor, bias: Any,
                      stride: Any, padding: Any, output_padding: Any, groups: int, dilation: Any,
                      nsp: int, op: str = "") -> None:
    if x.ndim != nsp + 2:
        raise _unsupported(g, f"unbatched ({x.ndim}-D) input")
    p = _tup(padding, nsp)
    xv = g.val(x)
    ins = [xv.name, g.val(weight).name] + ([g.val(bias).name] if bias is not None else [])
    y = g.node("ConvTranspose", ins, kernel_shape=list(weight.shape[2:]),
               strides=_tup(stride, nsp), pads=p + p, dilations=_tup(dilation, nsp),
               output_padding=_tup(output_padding, nsp), group=int(groups))
    g.bind(out, y, [xv.dyn[0]] + [False] * (out.ndim - 1))


@register("F._convnd")
def _convnd(g: GraphBuilder, out: Tensor, x: Tensor, weight: Tensor, bias: Any, stride: Any,
            padding: Any, dilation: Any, groups: int, nsp: int, op: str = "",
            padding_mode: str = "zeros") -> None:
    if padding_mode != "zeros":
        raise _unsupported(g, f"convolution with padding_mode={padding_mode!r}")
    _conv(nsp)(g, out, x, weight, bias, stride, padding, dilation, groups)


def _pool(nd: int, op: str) -> Callable:
    def sym(g: GraphBuilder, out: Any, x: Tensor, *args: Any, **kw: Any) -> None:
        a = Args((x,) + args, kw)
        k = _tup(a.get(1, "kernel_size"), nd)
        stride = a.get(2, "stride")
        stride = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
            else _tup(stride, nd)
        p = _tup(a.get(3, "padding", default=0), nd)
        xv = g.val(x)
        if x.ndim != nd + 2:
            raise _unsupported(g, f"unbatched ({x.ndim}-D) input")
        if op == "MaxPool":
            if a.get(6, "return_indices", default=False):
                raise _unsupported(g, "max pooling with return_indices=True")
            y = g.node("MaxPool", [xv.name], kernel_shape=k, strides=stride, pads=p + p,
                       dilations=_tup(a.get(4, "dilation", default=1), nd),
                       ceil_mode=int(bool(a.get(5, "ceil_mode", default=False))))
        else:
            if a.get(6, "divisor_override") is not None:
                raise _unsupported(g, "avg_pool with divisor_override")
            y = g.node("AveragePool", [xv.name], kernel_shape=k, strides=stride, pads=p + p,
                       ceil_mode=int(bool(a.get(4, "ceil_mode", default=False))),
                       count_include_pad=int(bool(a.get(5, "count_include_pad", default=True))))
        g.bind(out, y, [xv.dyn[0]] + [False] * (out.ndim - 1))
    return sym


for _nd in (1, 2):
    register(f"F.max_pool{_nd}d")(_pool(_nd, "MaxPool"))
    register(f"F.avg_pool{_nd}d")(_pool(_nd, "AveragePool"))


def _adaptive(nd: int, op: str) -> Callable:
    def sym(g: GraphBuilder, out: Any, x: Tensor, *args: Any, **kw: Any) -> None:
        if isinstance(out, tuple):
            raise _unsupported(g, "adaptive max pooling with return_indices=True")
        if x.ndim != nd + 2:
            raise _unsupported(g, f"unbatched ({x.ndim}-D) input")
        xv = g.val(x)
        ins, outs = list(x.shape[2:]), list(out.shape[2:])
        if all(o == 1 for o in outs):
            y = g.node("Global" + op, [xv.name])
        elif all(i % o == 0 for i, o in zip(ins, outs)):
            k = [i // o for i, o in zip(ins, outs)]
            y = g.node(op, [xv.name], kernel_shape=k, strides=k)
        else:
            raise _unsupported(g, f"adaptive pooling from {ins} to {outs} (ONNX pools have "
                                  "fixed windows: the input size must be a multiple of the "
                                  "output size)")
        g.bind(out, y, [xv.dyn[0]] + [False] * (out.ndim - 1))
    return sym


for _nd in (1, 2):
    register(f"F.adaptive_avg_pool{_nd}d")(_adaptive(_nd, "AveragePool"))
    register(f"F.adaptive_max_pool{_nd}d")(_adaptive(_nd, "MaxPool"))


@register("F.pad")
def _pad(g: GraphBuilder, out: Tensor, x: Tensor, pad: Sequence[int], *args: Any,
         **kw: Any) -> None:
    a = Args((x, pad) + args, kw)
    mode, value = a.get(2, "mode", default="constant"), a.get(3, "value", default=0)
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                 "circular": "wrap"}.get(mode)
    if onnx_mode is None or (onnx_mode == "wrap" and g.opset < 19):
        raise _unsupported(g, f"pad mode {mode!r}")
    begins, ends = [0] * x.ndim, [0] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        begins[d], ends[d] = int(pad[2 * i]), int(pad[2 * i + 1])
    xv = g.val(x)
    ins = [xv.name, g.i64(begins + ends)]
    if onnx_mode == "constant":
        ins.append(g.scalar(value or 0, x.dtype))
    dyn = [d and begins[i] == 0 and ends[i] == 0 for i, d in enumerate(xv.dyn)]
    g.bind(out, g.node("Pad", ins, mode=onnx_mode), dyn)


@register("F.interpolate", "F.upsample")
def _interpolate(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    """Resize with PyTorch's coordinate conventions: nearest floors asymmetric source positions,
    nearest-exact rounds half-pixel ones, (bi/tri)linear and bicubic (a = -0.75) map pixel
    centres, or corners with align_corners."""
    a = Args((x,) + args, kw)
    sf, mode = a.get(2, "scale_factor"), a.get(3, "mode", default="nearest")
    ac, recompute = bool(a.get(4, "align_corners")), a.get(5, "recompute_scale_factor")
    if mode == "area" or a.get(6, "antialias"):
        raise _unsupported(g, "interpolate with mode='area' or antialias=True")
    xv = g.val(x)
    ins, outs = list(x.shape[2:]), list(out.shape[2:])
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        attrs: dict = dict(mode="nearest", nearest_mode="round_prefer_ceil" if exact else "floor",
                           coordinate_transformation_mode="half_pixel" if exact else "asymmetric")
        # torch's 2-D nearest copies / halves the index for outputs of 1x / 2x the input
        shortcut = not exact and x.ndim == 4 and any(o in (i, 2 * i) for i, o in zip(ins, outs))
    else:
        attrs = dict(mode="cubic" if mode == "bicubic" else "linear",
                     coordinate_transformation_mode="align_corners" if ac else "pytorch_half_pixel",
                     cubic_coeff_a=-0.75 if mode == "bicubic" else None)
        shortcut = False
    if sf is not None and not recompute and not shortcut and not ac:
        per = list(sf) if isinstance(sf, (list, tuple)) else [sf] * len(ins)
        rin = [xv.name, "", g.const(np.asarray([1.0, 1.0] + [float(v) for v in per], np.float32))]
    else:
        sizes = g.node("Concat", [g.dim(xv, 0), g.dim(xv, 1), g.i64(outs)], axis=0)
        rin = [xv.name, "", "", sizes]
    g.bind(out, g.node("Resize", rin, **attrs), list(xv.dyn[:2]) + [False] * len(outs))


# ---------------------------------------------------------------------- attention
@register("F.scaled_dot_product_attention")
def _sdpa(g: GraphBuilder, out: Tensor, q: Tensor, k: Tensor, v: Tensor, *args: Any,
          **kw: Any) -> None:
    a = Args((q, k, v) + args, kw)
    mask, dropout_p = a.get(3, "attn_mask"), float(a.get(4, "dropout_p", default=0.0))
    causal, scale = bool(a.get(5, "is_causal", default=False)), a.get(6, "scale")
    if dropout_p > 0:
        raise OnnxExporterError(f"{g.current_op}: dropout_p={dropout_p} is random; export "
                                "with dropout_p=0 (eval mode)")
    if k.ndim >= 3 and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        raise _unsupported(g, "grouped-query attention (enable_gqa)")
    qv, kv, vv = g.val(q), g.val(k), g.val(v)
    d = q.dtype
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    perm = list(range(k.ndim - 2)) + [k.ndim - 1, k.ndim - 2]
    s = g.node("MatMul", [qv.name, g.node("Transpose", [kv.name], perm=perm)])
    s = g.node("Mul", [s, g.scalar(scale, d)])
    def neg() -> str:
        return g.scalar(-math.inf, d)
    if causal:
        if qv.dyn[-2] or kv.dyn[-2]:
            rows = g.node("Range", [g.scalar(0, _i64()), _scalar_dim(g, qv, q.ndim - 2),
                                    g.scalar(1, _i64())])
            cols = g.node("Range", [g.scalar(0, _i64()), _scalar_dim(g, kv, k.ndim - 2),
                                    g.scalar(1, _i64())])
            keep = g.node("GreaterOrEqual", [g.node("Unsqueeze", [rows, g.i64([1])]),
                                             g.node("Unsqueeze", [cols, g.i64([0])])])
        else:
            L, S = q.shape[-2], k.shape[-2]
            keep = g.const(np.tril(np.ones((L, S), dtype=bool)))
        s = g.node("Where", [keep, s, neg()])
    if mask is not None:
        mv = g.val(mask)
        if mask.dtype.name == "bool":
            s = g.node("Where", [mv.name, s, neg()])
        else:
            s = g.node("Add", [s, _operand(g, mask, d)[0]])
    p = g.node("Softmax", [s], axis=-1)
    g.bind(out, g.node("MatMul", [p, vv.name]), list(qv.dyn[:-1]) + [vv.dyn[-1]])


def _i64() -> Any:
    import tessera
    return tessera.int64


def _scalar_dim(g: GraphBuilder, v: Value, i: int) -> str:
    return g.node("Squeeze", [g.dim(v, i), g.i64([0])])


# ---------------------------------------------------------------------- recurrent modules
_GATE_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}  # torch's -> ONNX's


def _recurrent(g: GraphBuilder, out: Any, mod: Any, input: Any, hx: Any = None) -> None:
    mode = mod.mode if hasattr(mod, "mode") else type(mod).__name__
    mode = "RNN" if mode.startswith("RNN") else mode
    if not isinstance(input, Tensor):
        raise _unsupported(g, "packed sequences")
    if getattr(mod, "proj_size", 0):
        raise _unsupported(g, "LSTM with proj_size > 0")
    if input.ndim != 3:
        raise _unsupported(g, "unbatched (2-D) input")
    if mod.training and mod.dropout > 0 and mod.num_layers > 1:
        raise OnnxExporterError(f"{g.current_op}: dropout between layers in training mode "
                                f"(dropout={mod.dropout}) is random; export in eval mode")
    H, L = mod.hidden_size, mod.num_layers
    D = 2 if mod.bidirectional else 1
    order = _GATE_ORDER[mode]
    G = len(order) if mode != "RNN" else 1
    xv = g.val(input)
    x = xv.name
    if mod.batch_first:
        x = g.node("Transpose", [x], perm=[1, 0, 2])
    seq_dyn, batch_dyn = (xv.dyn[1], xv.dyn[0]) if mod.batch_first else (xv.dyn[0], xv.dyn[1])
    h0 = c0 = None
    if hx is not None:
        h0, c0 = (hx if mode == "LSTM" else (hx, None))

    def reorder(t: Tensor) -> str:
        v = g.val(t).name
        if G == 1:
            return v
        parts = g.node("Split", [v, g.i64([H] * G)], n_out=G, axis=0)
        return g.node("Concat", [parts[i] for i in order], axis=0)

    def per_dir(name: str, layer: int) -> List[str]:
        return [reorder(getattr(mod, f"{name}_l{layer}{'_reverse' if d else ''}"))
                for d in range(D)]

    def stack(parts: List[str]) -> str:
        us = [g.node("Unsqueeze", [p, g.i64([0])]) for p in parts]
        return us[0] if len(us) == 1 else g.node("Concat", us, axis=0)

    hs, cs = [], []
    for layer in range(L):
        W = stack(per_dir("weight_ih", layer))
        R = stack(per_dir("weight_hh", layer))
        ins = [x, W, R]
        if mod.bias:
            bi, bh = per_dir("bias_ih", layer), per_dir("bias_hh", layer)
            ins.append(stack([g.node("Concat", [i, h], axis=0) for i, h in zip(bi, bh)]))
        else:
            ins.append("")
        ins.append("")  # sequence_lens
        for st in (h0, c0) if mode == "LSTM" else (h0,):
            if st is None:
                ins.append("")
            else:
                ins.append(g.node("Slice", [g.val(st).name, g.i64([layer * D]),
                                            g.i64([(layer + 1) * D]), g.i64([0])]))
        while ins and ins[-1] == "":
            ins.pop()
        attrs: Dict[str, Any] = {"hidden_size": H,
                                 "direction": "bidirectional" if D == 2 else "forward"}
        if mode == "GRU":
            attrs["linear_before_reset"] = 1
        if mode == "RNN":
            attrs["activations"] = ["Relu" if mod.nonlinearity == "relu" else "Tanh"] * D
        n_out = 3 if mode == "LSTM" else 2
        outs = g.node(mode, ins, n_out=n_out, **attrs)
        y = g.node("Transpose", [outs[0]], perm=[0, 2, 1, 3])  # (seq, batch, D, H)
        x = g.node("Reshape", [y, g.i64([0, 0, -1])])
        hs.append(outs[1])
        if mode == "LSTM":
            cs.append(outs[2])
    y = g.node("Transpose", [x], perm=[1, 0, 2]) if mod.batch_first else x
    output, state = out
    g.bind(output, y, [batch_dyn, seq_dyn, False] if mod.batch_first else
           [seq_dyn, batch_dyn, False])
    sdyn = [False, batch_dyn, False]
    cat = (lambda ps: ps[0] if len(ps) == 1 else g.node("Concat", ps, axis=0))
    if mode == "LSTM":
        g.bind(state[0], cat(hs), sdyn)
        g.bind(state[1], cat(cs), sdyn)
    else:
        g.bind(state, cat(hs), sdyn)


register("nn.LSTM", "nn.GRU", "nn.RNN")(_recurrent)


@register("pixel_shuffle", "F.pixel_shuffle", "pixel_unshuffle", "F.pixel_unshuffle",
          "channel_shuffle", "F.channel_shuffle", "native_channel_shuffle",
          "F.native_channel_shuffle")
def _shuffle(g: GraphBuilder, out: Tensor, x: Tensor, *args: Any, **kw: Any) -> None:
    """Reshape, Transpose, Reshape: the ops' own decomposition (csrc/ops/nn/shuffle.cpp). The
    leading dims are copied (Reshape's 0), so they stay dynamic."""
    op = g.current_op.split(".")[-1]
    f = int(args[0] if args else next(iter(kw.values())))
    xv = g.val(x)
    if op.endswith("channel_shuffle"):
        n, lead = 1, [0]
        mid = [f, x.shape[1] // f] + list(x.shape[2:])
        tail = [1, 0] + list(range(2, x.ndim))
    else:
        n = x.ndim - 3
        lead = [0] * n
        c, h, w = x.shape[-3:]
        if op == "pixel_shuffle":
            mid, tail = [c // (f * f), f, f, h, w], [0, 3, 1, 4, 2]
        else:
            mid, tail = [c, h // f, f, w // f, f], [0, 2, 4, 1, 3]
    y = g.node("Reshape", [xv.name, g.i64(lead + mid)])
    y = g.node("Transpose", [y], perm=list(range(n)) + [n + p for p in tail])
    y = g.node("Reshape", [y, g.i64(lead + list(out.shape[n:]))])
    g.bind(out, y, list(xv.dyn[:n]) + [False] * (out.ndim - n))
