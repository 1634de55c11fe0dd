"""The ONNX graph under construction while a forward pass is traced (Note [ONNX tracer]).

Every tensor the trace knows is mapped, by object identity, to a :class:`Value`: the ONNX
name holding it, its concrete shape at trace time, and which of its dims are dynamic (vary
with a dynamic axis of an input). Tensors the trace does not know are constants (folded into
initializers); parameters and buffers become initializers named as in ``state_dict``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _C
from .._C import Tensor

Dim = Union[int, str]  # a static size, or the name of a 1-D int64 value holding it


class OnnxExporterError(RuntimeError):
    """The model cannot be exported as traced (an unsupported op, a training-only op, ...)."""


class UnsupportedOperatorError(OnnxExporterError):
    """A tessera op has no ONNX mapping at the requested opset."""


_ONNX_DTYPES = {"bool": 9, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "uint8": 2,
                "uint16": 4, "uint32": 12, "uint64": 13, "float16": 10, "bfloat16": 16,
                "float32": 1, "float64": 11, "complex64": 14, "complex128": 15}


def onnx_dtype(dt: Any) -> int:
    """The TensorProto element type of a tessera dtype."""
    return _ONNX_DTYPES[dt.name]


def to_numpy(t: Tensor) -> np.ndarray:
    """A contiguous NumPy copy of ``t`` (any device; bfloat16 as float32)."""
    if t.device.type != "cpu":
        t = _C._to_device(t, "cpu", False)
    if t.dtype.name == "bfloat16":
        t = _C._astype(t, _C.float32, True)
    return np.array(_C._to_numpy(t), order="C", copy=True)  # (ascontiguousarray makes 0-d 1-d)


class Value:
    __slots__ = ("name", "shape", "dyn", "dtype")

    def __init__(self, name: str, shape: Sequence[int], dyn: Sequence[bool], dtype: Any) -> None:
        self.name, self.shape, self.dyn, self.dtype = name, tuple(shape), tuple(dyn), dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


class GraphBuilder:
    """Nodes, initializers and the tensor -> Value map of one export."""

    def __init__(self, opset: int, params: Dict[int, Tuple[str, Tensor]],
                 export_params: bool) -> None:
        import onnx
        self.onnx = onnx
        self.opset = opset
        self.nodes: List[Any] = []
        self.initializers: List[Any] = []
        self.param_inputs: List[Any] = []  # export_params=False: parameters as graph inputs
        self._params = params
        self._export_params = export_params
        self._vals: Dict[int, Tuple[Tensor, Value]] = {}
        self._stale: Dict[int, str] = {}  # id -> the in-place op that changed its memory
        self._consts: Dict[Tuple[str, Tuple[int, ...], bytes], str] = {}
        self._dims: Dict[Tuple[str, int], str] = {}
        self._n = 0
        self.current_op = "?"
        self.dynamic_sizes: set = set()  # traced sizes of the inputs' dynamic dims

    # ------------------------------------------------------------------ names and values
    def fresh(self, hint: str) -> str:
        self._n += 1
        return f"/{hint}_{self._n}"

    def is_known(self, t: Any) -> bool:
        return isinstance(t, Tensor) and (id(t) in self._vals or id(t) in self._params)

    def bind(self, t: Tensor, name: str, dyn: Sequence[bool]) -> Value:
        """Record that tensor ``t`` is computed by the graph value ``name``."""
        dyn = tuple(bool(d) for d in dyn)
        if len(dyn) != t.ndim:
            raise OnnxExporterError(f"internal error binding {self.current_op}: dims {dyn} for "
                                    f"a tensor of shape {tuple(t.shape)}")
        old = self._vals.get(id(t))
        if old is not None and old[1].name != name:  # an in-place write (Note [ONNX tracer])
            ptr = t._storage_ptr()
            for k, (other, _) in self._vals.items():
                if other is not t and other._storage_ptr() == ptr:
                    self._stale[k] = self.current_op
        v = Value(name, t.shape, dyn, t.dtype)
        self._vals[id(t)] = (t, v)
        return v

    def val(self, t: Tensor) -> Value:
        """The Value of ``t``: traced, a parameter (initializer) or a constant (initializer)."""
        hit = self._vals.get(id(t))
        if hit is not None:
            if id(t) in self._stale:
                raise OnnxExporterError(
                    f"{self.current_op}: a tensor of shape {tuple(t.shape)} is used after "
                    f"'{self._stale[id(t)]}' wrote in place into a tensor sharing its memory (a "
                    "view); the ONNX graph cannot express the aliasing: write it out of place")
            return hit[1]
        if id(t) in self._params:
            pname, _ = self._params[id(t)]
            tp = self._tensor_proto(to_numpy(t), pname, t.dtype)
            if self._export_params:
                self.initializers.append(tp)
            else:
                self.param_inputs.append(self.onnx.helper.make_tensor_value_info(
                    pname, onnx_dtype(t.dtype), list(t.shape)))
            return self.bind(t, pname, [False] * t.ndim)
        if t.requires_grad or t.grad_fn is not None:
            raise OnnxExporterError(
                f"{self.current_op}: an input tensor of shape {tuple(t.shape)} was computed from "
                "the model's parameters or inputs by an op the exporter did not see (a private "
                "or _C function called directly?); it cannot be exported as a constant")
        return self.bind(t, self.const(to_numpy(t), t.dtype), [False] * t.ndim)

    def _tensor_proto(self, a: np.ndarray, name: str, dtype: Any) -> Any:
        nh = self.onnx.numpy_helper
        if dtype is not None and dtype.name == "bfloat16":
            return self.onnx.helper.make_tensor(name, self.onnx.TensorProto.BFLOAT16, a.shape,
                                                a.astype(np.float32).ravel().tolist())
        return nh.from_array(a, name)

    def const(self, a: Any, dtype: Any = None) -> str:
        """An initializer holding array ``a`` (deduplicated by content)."""
        a = np.asarray(a)
        if not a.flags.c_contiguous:
            a = a.copy()
        key = (str(a.dtype) + (dtype.name if dtype is not None else ""), a.shape, a.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self.fresh("Constant")
            self.initializers.append(self._tensor_proto(a, name, dtype))
            self._consts[key] = name
        return name

    def i64(self, vals: Sequence[int]) -> str:
        return self.const(np.asarray(list(vals), dtype=np.int64))

    def scalar(self, v: Any, dtype: Any) -> str:
        """A 0-d constant of tessera dtype ``dtype`` (a weak Python scalar takes it)."""
        if dtype.name == "bfloat16":
            return self.node("Cast", [self.const(np.asarray(v, np.float32))], to=16)
        return self.const(np.asarray(v, dtype=np.dtype(dtype.name)))

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> Any:
        """Append a node; returns its output name (or list of names when n_out != 1)."""
        outs = [self.fresh(op) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.onnx.helper.make_node(op, list(inputs), outs,
                                                     name=outs[0].replace("/", "/n_"), **attrs))
        return outs[0] if n_out == 1 else outs

    # ------------------------------------------------------------------ shapes
    def dim(self, v: Value, i: int) -> str:
        """A 1-D int64 value [size of dim i of v] read from the graph at run time."""
        key = (v.name, i)
        if key not in self._dims:
            if self.opset >= 15:
                self._dims[key] = self.node("Shape", [v.name], start=i, end=i + 1)
            else:
                self._dims[key] = self.node("Gather", [self.node("Shape", [v.name]), self.i64([i])],
                                            axis=0)
        return self._dims[key]

    def shape_of(self, dims: Sequence[Dim]) -> str:
        """A 1-D int64 shape value from static sizes and run-time dim values."""
        if all(isinstance(d, int) for d in dims):
            return self.i64(dims)  # type: ignore[arg-type]
        parts: List[str] = []
        run: List[int] = []
        for d in dims:
            if isinstance(d, int):
                run.append(d)
                continue
            if run:
                parts.append(self.i64(run))
                run = []
            parts.append(d)
        if run:
            parts.append(self.i64(run))
        return parts[0] if len(parts) == 1 else self.node("Concat", parts, axis=0)

    def dyn_dims(self, v: Value) -> List[Dim]:
        """v's dims: static sizes, run-time values where dynamic."""
        return [self.dim(v, i) if d else s for i, (s, d) in enumerate(zip(v.shape, v.dyn))]

    def product(self, dims: Sequence[Dim]) -> Dim:
        static = 1
        run: Optional[str] = None
        for d in dims:
            if isinstance(d, int):
                static *= d
            else:
                run = d if run is None else self.node("Mul", [run, d])
        if run is None:
            return static
        return run if static == 1 else self.node("Mul", [run, self.i64([static])])

    def reshape(self, x: Value, shape: Sequence[int],
                known: Optional[Dict[int, str]] = None) -> Tuple[str, List[bool]]:
        """Reshape x to the concrete ``shape`` seen at trace time, keeping dynamic dims
        dynamic: the dims are grouped as the reshape merges or splits them, and a group holding
        a dynamic input dim gives a run-time size (Note [Dynamic dims in reshape]). ``known``:
        output dims whose run-time size the caller has (sizes read from a dynamic shape)."""
        shape = [int(s) for s in shape]
        known = known or {}
        if not any(x.dyn) and not known:
            return self.node("Reshape", [x.name, self.i64(shape)]), [False] * len(shape)
        groups = _group_dims(list(x.shape), shape)
        out: List[Optional[Dim]] = [None] * len(shape)
        dyn = [False] * len(shape)
        grouped: Dict[int, Tuple[List[int], int]] = {}  # dynamic out dim -> (input dims, rest)
        for gi, gj in groups:
            if any(j in known for j in gj):  # the caller's sizes decide this group
                for j in gj:
                    out[j] = known.get(j, shape[j])
                    dyn[j] = j in known
                continue
            if not any(x.dyn[i] for i in gi):
                for j in gj:
                    out[j] = shape[j]
                continue
            big = [j for j in gj if shape[j] != 1] or gj[:1]
            if not big:
                continue
            for j in gj:
                out[j] = shape[j]
            dyn[big[0]] = True
            rest = int(np.prod([shape[j] for j in gj if j != big[0]], dtype=np.int64))
            grouped[big[0]] = (gi, rest)
        n_dyn = sum(dyn)
        if n_dyn == 0:
            return self.node("Reshape", [x.name, self.i64(shape)]), dyn
        if n_dyn == 1:  # one unknown: -1 lets Reshape compute it
            spec = [-1 if dyn[j] else shape[j] for j in range(len(shape))]
            return self.node("Reshape", [x.name, self.i64(spec)]), dyn
        dims_out: List[Dim] = []
        for j, d in enumerate(out):
            if j in grouped:  # product of the group's input dims / the static rest
                gi, rest = grouped[j]
                total = self.product([self.dim(x, i) if x.dyn[i] else x.shape[i] for i in gi])
                d = total if rest == 1 else total // rest if isinstance(total, int) else \
                    self.node("Div", [total, self.i64([rest])])
            dims_out.append(shape[j] if d is None else d)
        return self.node("Reshape", [x.name, self.shape_of(dims_out)]), dyn


def _group_dims(a: List[int], b: List[int]) -> List[Tuple[List[int], List[int]]]:
    """Pairs (dims of a, dims of b) whose products match, in order, as a reshape from a to b
    merges or splits them; size-1 dims form groups of their own."""
    groups: List[Tuple[List[int], List[int]]] = []
    i = j = 0
    n, m = len(a), len(b)
    while i < n or j < m:
        if i < n and j < m and a[i] == b[j]:
            groups.append(([i], [j]))
            i += 1
            j += 1
        elif j < m and b[j] == 1:
            groups.append(([], [j]))
            j += 1
        elif i < n and a[i] == 1:
            groups.append(([i], []))
            i += 1
        elif i < n and j < m:
            gi, gj = [i], [j]
            pa, pb = a[i], b[j]
            i += 1
            j += 1
            while pa != pb:
                if pa < pb and i < n:
                    pa *= a[i]
                    gi.append(i)
                    i += 1
                elif pb < pa and j < m:
                    pb *= b[j]
                    gj.append(j)
                    j += 1
                else:  # not a merge/split pattern: one group of everything left
                    gi += list(range(i, n))
                    gj += list(range(j, m))
                    i, j = n, m
                    break
            groups.append((gi, gj))
        else:
            groups.append((list(range(i, n)), list(range(j, m))))
            break
    return groups
