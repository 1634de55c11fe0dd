"""The graph TensorBoard shows for ``SummaryWriter.add_graph``: the autograd graph of one
forward pass, its op nodes grouped under the module that produced them.

PyTorch traces with TorchScript; tessera has the recorded autograd graph instead: every op that
touched a parameter or a differentiable input is a Node (``grad_fn``) with edges to its inputs.
Forward hooks note which module returned each grad_fn, which gives the nodes their scope
(``Sequential/Linear[0]/LinearBackward0``). Ops on tensors that need no gradient leave no Node,
so they do not appear; the model's inputs are made to require gradients for the trace.
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Tuple

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.versions_pb2 import VersionDef


def _tensors(x: Any) -> List[Any]:
    from ..._C import Tensor
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _tensors(item)]
    if isinstance(x, dict):
        return [t for item in x.values() for t in _tensors(item)]
    return []


def graph(model: Any, args: Any) -> Tuple[GraphDef, RunMetadata]:
    """(GraphDef, RunMetadata) of ``model(*args)``'s autograd graph."""
    from ... import autograd
    from ..._C import Tensor
    if args is None:
        raise ValueError("add_graph: pass input_to_model (the model's inputs) to trace it")
    inputs = list(args) if isinstance(args, (list, tuple)) else [args]
    traced_inputs = [t.detach().requires_grad_(True)
                     if isinstance(t, Tensor) and t.dtype.is_floating_point else t
                     for t in inputs]
    scope_of: Dict[int, str] = {}
    keep: List[Any] = []  # holds the grad_fn wrappers so their ids stay theirs
    param_name = {_leaf_key(p): name for name, p in model.named_parameters()}
    handles = []
    root = type(model).__name__

    def scope(name: str) -> str:
        if not name:
            return root
        parts = name.split(".")
        return "/".join([root] + [f"{type(m).__name__}[{p}]"
                                  for p, m in zip(parts, _walk(model, parts))])

    for name, module in model.named_modules():
        def hook(mod: Any, _inp: Any, out: Any, _s: str = scope(name)) -> None:
            for t in _tensors(out):
                fn = t.grad_fn
                if fn is not None and id(fn) not in scope_of:
                    keep.append(fn)
                    scope_of[id(fn)] = _s
        handles.append(module.register_forward_hook(hook))
    try:
        with autograd.enable_grad():
            out = model(*traced_inputs)
    finally:
        for h in handles:
            h.remove()

    nodes: Dict[int, NodeDef] = {}
    names: Dict[int, str] = {}
    input_ids = {_leaf_key(t): f"input/{i}" for i, t in enumerate(traced_inputs)
                 if isinstance(t, Tensor)}
    counter = [0]
    stack = [t.grad_fn for t in _tensors(out) if t.grad_fn is not None]
    order: List[Any] = []
    seen = set()
    while stack:  # iterative DFS: deep graphs (RNNs) must not hit the recursion limit
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        order.append(fn)
        for nxt, _i in getattr(fn, "next_functions", ()):
            if nxt is not None:
                stack.append(nxt)

    # Outputs' scopes flow down to unscoped nodes (ops inside a module's forward that are not
    # its returned value take the scope of the nearest scoped consumer).
    for fn in order:
        s = scope_of.get(id(fn), root)
        for nxt, _ in getattr(fn, "next_functions", ()):
            if nxt is not None and id(nxt) not in scope_of:
                scope_of[id(nxt)] = s

    for fn in order:
        var = getattr(fn, "variable", None)
        if var is not None:  # a leaf: parameter or input
            key = _leaf_key(var)
            if key in param_name:
                name = f"{root}/{param_name[key]}"
                op = "Parameter"
            else:
                counter[0] += 1
                name = input_ids.get(key, f"{root}/leaf_{counter[0]}")
                op = "IO Node"
            names[id(fn)] = name
            shape = ",".join(str(d) for d in var.shape)
            nodes[id(fn)] = NodeDef(name=name, op=op, attr={
                "_output_shapes": AttrValue(s=f"[{shape}]".encode()),
                "dtype": AttrValue(s=str(var.dtype).encode())})
        else:
            op = fn.name()
            counter[0] += 1
            names[id(fn)] = f"{scope_of.get(id(fn), root)}/{op}_{counter[0]}"
            nodes[id(fn)] = NodeDef(name=names[id(fn)], op=op)
    for fn in order:
        for nxt, _ in getattr(fn, "next_functions", ()):
            if nxt is not None and id(nxt) in names:
                nodes[id(fn)].input.append(names[id(nxt)])
    for i, t in enumerate(_tensors(out)):
        if t.grad_fn is not None:
            n = NodeDef(name=f"output/{i}", op="IO Node", input=[names[id(t.grad_fn)]])
            nodes[-(i + 1)] = n
    gd = GraphDef(node=list(nodes.values()), versions=VersionDef(producer=22))
    meta = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return gd, meta


def _leaf_key(t: Any) -> Tuple[int, Tuple[int, ...], str]:
    """Identity of a leaf tensor across Python wrappers: its memory, shape and dtype."""
    return (t.data_ptr(), tuple(t.shape), str(t.dtype))


def _walk(model: Any, parts: List[str]) -> List[Any]:
    out, m = [], model
    for p in parts:
        m = getattr(m, p)
        out.append(m)
    return out
