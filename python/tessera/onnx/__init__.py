"""tessera.onnx: export a model to ONNX by tracing its forward pass (PyTorch's
``torch.onnx.export``, with the TorchScript-based exporter's argument semantics).

    >>> import tessera as ts
    >>> model = ts.nn.Sequential(ts.nn.Linear(4, 8), ts.nn.ReLU(), ts.nn.Linear(8, 2))
    >>> ts.onnx.export(model, (ts.randn(3, 4),), "mlp.onnx", input_names=["x"],
    ...                output_names=["y"], dynamic_axes={"x": {0: "batch"}})  # doctest: +SKIP

The graph is built with the ``onnx`` package (``pip install 'tessera[onnx]'``); how the trace
is recorded is described in docs/design.md ("ONNX export").
"""
from __future__ import annotations

import enum as _enum
import inspect as _inspect
import io as _io
import os as _os
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .._C import Tensor
from ._graph import GraphBuilder, OnnxExporterError, UnsupportedOperatorError, onnx_dtype
from ._tracer import TracerWarning, is_in_onnx_export, tracing

__all__ = ["export", "OnnxExporterError", "UnsupportedOperatorError", "TracerWarning",
           "TrainingMode", "is_in_onnx_export"]

_DEFAULT_OPSET = 17
# torch.onnx.export's options that do not change a traced graph here (accepted, no effect).
_TORCH_OPTIONS = {"operator_export_type", "custom_opsets", "export_modules_as_functions",
                  "autograd_inlining", "report", "optimize", "verify", "profile",
                  "dump_exported_program", "artifacts_dir", "fallback", "external_data"}
_MIN_OPSET = 13


class TrainingMode(_enum.IntEnum):
    """Which mode the model is traced in (torch.onnx.TrainingMode)."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def _flatten(obj: Any, out: List[Tensor]) -> None:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _flatten(o, out)
    elif isinstance(obj, _t.Mapping):
        for o in obj.values():
            _flatten(o, out)


def _axes_spec(name: str, spec: Any) -> Dict[int, str]:
    """{axis: dim name} from dynamic_axes' {axis: name} or [axes] forms."""
    if spec is None:
        return {}
    if isinstance(spec, _t.Mapping):
        res = {}
        for ax, dn in spec.items():
            if dn is None:
                continue
            res[int(ax)] = dn if isinstance(dn, str) else getattr(dn, "__name__", None) or \
                f"{name}_dynamic_axes_{int(ax) + 1}"
        return res
    if isinstance(spec, (list, tuple)):
        if all(isinstance(a, int) for a in spec):  # dynamic_axes' list form: generated names
            return {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(spec)}
        return {i: (s if isinstance(s, str) else getattr(s, "__name__", f"{name}_dim_{i}"))
                for i, s in enumerate(spec) if s is not None}  # dynamic_shapes' per-dim form
    raise TypeError(f"onnx.export: dynamic axes for {name!r} must be a dict or a list, "
                    f"got {type(spec).__name__}")


def _dynamic_from_shapes(dynamic_shapes: Any, model: Any, args: tuple, kwargs: dict,
                         input_names: List[str]) -> Dict[str, Dict[int, str]]:
    """dynamic_shapes (keyed by forward's parameter names, or a tuple aligned with args)
    -> {input name: {axis: dim name}}."""
    fwd = model.forward if hasattr(model, "forward") else model
    try:
        params = list(_inspect.signature(fwd).parameters)
    except (TypeError, ValueError):
        params = []
    specs: List[Any] = []
    if isinstance(dynamic_shapes, _t.Mapping):
        bound = {p: i for i, p in enumerate(params)}
        specs = [None] * (len(args) + len(kwargs))
        for k, spec in dynamic_shapes.items():
            if k in bound and bound[k] < len(args):
                specs[bound[k]] = spec
            elif k in kwargs:
                specs[len(args) + list(kwargs).index(k)] = spec
            else:
                raise ValueError(f"onnx.export: dynamic_shapes names {k!r}, which is not an "
                                 f"argument of the model's forward ({params})")
    else:
        specs = list(dynamic_shapes)
    res: Dict[str, Dict[int, str]] = {}
    flat_i = 0
    for a, spec in zip(list(args) + list(kwargs.values()), specs):
        ts_: List[Tensor] = []
        _flatten(a, ts_)
        if len(ts_) == 1 and spec is not None:
            res[input_names[flat_i]] = _axes_spec(input_names[flat_i], spec)
        flat_i += len(ts_)
    return res


def export(model: Any, args: Union[Tuple[Any, ...], Tensor] = (), f: Any = None, *,
           kwargs: Optional[Dict[str, Any]] = None, export_params: bool = True,
           verbose: Optional[bool] = None, input_names: Optional[Sequence[str]] = None,
           output_names: Optional[Sequence[str]] = None, opset_version: Optional[int] = None,
           dynamic_axes: Optional[Mapping[str, Any]] = None,
           keep_initializers_as_inputs: bool = False, dynamic_shapes: Any = None,
           training: TrainingMode = TrainingMode.EVAL, do_constant_folding: bool = True,
           dynamo: bool = False, **torch_options: Any) -> None:
    """Trace ``model(*args, **kwargs)`` and write the ONNX model to ``f`` (a path or a binary
    file object).

    args: a tensor or a tuple of positional arguments (a trailing dict is taken as keyword
    arguments, as in torch.onnx.export); non-tensor arguments are baked into the graph.
    input_names / output_names: names of the flattened tensor inputs / outputs, in order.
    dynamic_axes: ``{name: {axis: dim_name}}`` or ``{name: [axes]}`` for inputs and outputs;
    dynamic_shapes: ``{forward_arg: {axis: dim_name}}`` (or a tuple aligned with args).
    Dynamic dims are symbolic in the graph; shapes computed from them are read at run time.
    opset_version: 13 up to the installed onnx's newest (default 17). export_params=False
    makes parameters graph inputs instead of initializers. training: EVAL (default) traces
    in eval mode, PRESERVE in the model's own mode. Python control flow is unrolled by the
    trace; converting a traced tensor to a Python value warns (:class:`TracerWarning`).
    Ops without an ONNX mapping raise :class:`UnsupportedOperatorError` naming the op.
    """
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - the extra is installed in CI
        raise ImportError("tessera.onnx.export needs the 'onnx' package: "
                          "pip install 'tessera[onnx]'") from e
    unknown = set(torch_options) - _TORCH_OPTIONS
    if unknown:
        raise TypeError(f"onnx.export() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if dynamo:
        raise NotImplementedError("tessera.onnx.export: dynamo=True is not available; the "
                                  "exporter traces the forward pass (dynamo=False)")
    if f is None:
        raise TypeError("onnx.export: f (a path or a binary file object) is required")
    opset = _DEFAULT_OPSET if opset_version is None else int(opset_version)
    newest = onnx.defs.onnx_opset_version()
    if not _MIN_OPSET <= opset <= newest:
        raise ValueError(f"onnx.export: opset_version={opset} is not supported "
                         f"(supported: {_MIN_OPSET} to {newest})")
    if isinstance(args, Tensor):
        args = (args,)
    elif not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict) and not kwargs:
        args, kwargs = args[:-1], dict(args[-1])

    inputs: List[Tensor] = []
    _flatten((args, kwargs), inputs)
    names_in = list(input_names or [])
    in_names = [names_in[i] if i < len(names_in) else f"input_{i}" for i in range(len(inputs))]
    dyn_spec: Dict[str, Dict[int, str]] = {}
    if dynamic_axes:
        dyn_spec.update({k: _axes_spec(k, v) for k, v in dynamic_axes.items()})
    if dynamic_shapes is not None:
        dyn_spec.update(_dynamic_from_shapes(dynamic_shapes, model, args, kwargs, in_names))
    known = set(in_names) | set(output_names or [])
    for k in dyn_spec:
        if k not in known and not k.startswith("output_"):
            import warnings
            warnings.warn(f"onnx.export: dynamic axes given for {k!r}, which is neither an "
                          "input nor an output name", UserWarning, stacklevel=2)

    params: Dict[int, Tuple[str, Tensor]] = {}
    is_module = hasattr(model, "named_parameters")
    if is_module:
        for n, p in model.named_buffers():
            params.setdefault(id(p), (n, p))
        for n, p in model.named_parameters():
            params.setdefault(id(p), (n, p))
    g = GraphBuilder(opset, params, export_params)

    graph_inputs = []
    for t, name in zip(inputs, in_names):
        axes = dyn_spec.get(name, {})
        for ax in axes:
            if not -t.ndim <= ax < t.ndim:
                raise ValueError(f"onnx.export: dynamic axis {ax} of input {name!r} is out of "
                                 f"range for its shape {tuple(t.shape)}")
        axes = {ax % max(t.ndim, 1): dn for ax, dn in axes.items()}
        g.dynamic_sizes.update(int(t.shape[ax]) for ax in axes)
        if id(t) in params:
            raise ValueError(f"onnx.export: input {name!r} is also a parameter of the model")
        if not g.is_known(t):
            g.bind(t, name, [i in axes for i in range(t.ndim)])
        graph_inputs.append(onnx.helper.make_tensor_value_info(
            name, onnx_dtype(t.dtype), [axes.get(i, s) for i, s in enumerate(t.shape)]))

    was_training = getattr(model, "training", None)
    if is_module and training == TrainingMode.EVAL:
        model.eval()
    elif is_module and training == TrainingMode.TRAINING:
        model.train()
    try:
        with tracing(g, model):
            result = model(*args, **kwargs)
    finally:
        if is_module and was_training is not None:
            model.train(was_training)

    outputs: List[Tensor] = []
    _flatten(result, outputs)
    if not outputs:
        raise OnnxExporterError("onnx.export: the model returned no tensor")
    names_out = list(output_names or [])
    graph_outputs = []
    for i, t in enumerate(outputs):
        name = names_out[i] if i < len(names_out) else f"output_{i}"
        v = g.val(t)
        g.nodes.append(onnx.helper.make_node("Identity", [v.name], [name], name=f"/out_{i}"))
        axes = {ax % max(t.ndim, 1): dn for ax, dn in dyn_spec.get(name, {}).items()}
        dims: List[Any] = []
        for j, s in enumerate(t.shape):
            dims.append(axes[j] if j in axes else (None if v.dyn[j] else int(s)))
        graph_outputs.append(onnx.helper.make_tensor_value_info(name, onnx_dtype(t.dtype),
                                                                dims))
    inits = g.initializers
    extra_inputs = list(g.param_inputs)
    if keep_initializers_as_inputs:
        extra_inputs += [onnx.helper.make_tensor_value_info(
            tp.name, tp.data_type, list(tp.dims)) for tp in inits]
    graph = onnx.helper.make_graph(g.nodes, "main_graph", graph_inputs + extra_inputs,
                                   graph_outputs, initializer=inits)
    opset_id = onnx.helper.make_opsetid("", opset)
    m = onnx.helper.make_model(graph, opset_imports=[opset_id], producer_name="tessera")
    m.ir_version = onnx.helper.find_min_ir_version_for([opset_id])
    if verbose:
        print(onnx.helper.printable_graph(m.graph))
    data = m.SerializeToString()
    if isinstance(f, (str, _os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    elif isinstance(f, _io.IOBase) or hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"onnx.export: f must be a path or a binary file object, got "
                        f"{type(f).__name__}")
