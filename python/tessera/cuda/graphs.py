"""CUDA graphs (``torch.cuda.graphs``): capture a region's kernels once, replay them with one
launch.

Note [CUDA graphs] in csrc/cuda/cuda_graph.h has the rules. In short, as in PyTorch: capture
runs on a side stream; the region's allocations come from a private memory pool whose blocks
no other allocation reuses while the graph lives; every replay reads its inputs from and
writes its outputs to the same (static) tensors, so copy new data into the inputs with
``copy_`` before ``replay()`` and read the outputs after it; random ops (dropout included)
draw fresh numbers at each replay from the default generator (``ts.manual_seed`` reproduces
them); host synchronization (``item()``, ``numpy()``, ``print``, ``synchronize()``) inside
the captured region raises a RuntimeError. Shapes, the kernels chosen and Python control flow
are frozen at capture.
"""
from __future__ import annotations

import gc as _gc
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from .. import _C

_c = _C._cuda

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables"]

_PoolHandle = _t.Tuple[int, int]
_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


def graph_pool_handle() -> _PoolHandle:
    """A new memory-pool handle: graphs captured with ``pool=`` this handle share one private
    pool (capture them in the order they will be replayed)."""
    return (0, int(_c.graph_pool_handle()))


def _pool_id(pool: Any) -> int:
    if pool is None:
        return 0
    if isinstance(pool, tuple) and len(pool) == 2 and all(isinstance(v, int) for v in pool):
        return pool[1]
    raise TypeError(f"CUDAGraph: pool must be a handle from graph_pool_handle() or "
                    f"CUDAGraph.pool(), got {type(pool).__name__}")


class CUDAGraph:
    """A captured CUDA graph: ``capture_begin()``/``capture_end()`` around the work to record
    (on a non-default stream; :class:`graph` does it for you), then ``replay()``."""

    def __init__(self, keep_graph: bool = False) -> None:
        self._handle = int(_c.graph_create())
        self._capture_stream: Any = None

    def capture_begin(self, pool: Optional[_PoolHandle] = None,
                      capture_error_mode: str = "global") -> None:
        """Starts capturing the work queued on the current stream (not the default stream).
        pool: share the private memory pool of another graph / graph_pool_handle().
        capture_error_mode: "global", "thread_local" or "relaxed" (cudaStreamCaptureMode)."""
        if capture_error_mode not in _MODES:
            raise ValueError(f"CUDAGraph.capture_begin: capture_error_mode must be one of "
                             f"{sorted(_MODES)}, got {capture_error_mode!r}")
        from . import current_stream
        s = current_stream()
        self._capture_stream = s
        _c.graph_capture_begin(self._handle, s.device_index, s.cuda_stream, _pool_id(pool),
                               _MODES[capture_error_mode])

    def capture_end(self) -> None:
        """Ends the capture and instantiates the graph (RuntimeError when it was invalidated)."""
        _c.graph_capture_end(self._handle)

    def replay(self) -> None:
        """Launches the captured work on the current stream."""
        _c.graph_replay(self._handle)

    def reset(self) -> None:
        """Drops the captured graph and its reference to the memory pool."""
        _c.graph_reset(self._handle)

    def pool(self) -> _PoolHandle:
        """This graph's memory-pool handle (pass it as another capture's ``pool=``)."""
        return (0, int(_c.graph_pool(self._handle)))

    def __del__(self) -> None:
        h = getattr(self, "_handle", None)
        if h is not None:
            try:
                _c.graph_destroy(h)
            except Exception:
                pass
            self._handle = None


_default_capture_streams: dict = {}


class graph:
    """Context manager capturing its block into `cuda_graph`::

        g = ts.cuda.CUDAGraph()
        with ts.cuda.graph(g):
            static_out = model(static_in)
        static_in.copy_(new_batch); g.replay()   # static_out now holds the new result

    Synchronizes the device, collects garbage and empties the cache first, then captures on
    `stream` (default: a side stream kept per device) into the memory pool `pool`."""

    def __init__(self, cuda_graph: CUDAGraph, pool: Optional[_PoolHandle] = None,
                 stream: Any = None, capture_error_mode: str = "global") -> None:
        if not isinstance(cuda_graph, CUDAGraph):
            raise TypeError(f"ts.cuda.graph: expected a CUDAGraph, got {type(cuda_graph).__name__}")
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_error_mode = capture_error_mode
        self.stream = stream
        self._ctx: Any = None

    def __enter__(self) -> None:
        from . import Stream, current_device, stream as stream_ctx, synchronize, empty_cache
        synchronize()
        _gc.collect()
        empty_cache()
        s = self.stream
        if s is None:
            dev = current_device()
            s = _default_capture_streams.get(dev)
            if s is None:
                s = _default_capture_streams[dev] = Stream(dev)
        self._ctx = stream_ctx(s)
        self._ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is not None:
                # The block failed: drop the half-made capture, keep the block's exception.
                self.cuda_graph.reset()
            else:
                self.cuda_graph.capture_end()
        finally:
            self._ctx.__exit__(None, None, None)


def _flat_tensors(args: Any) -> List[Any]:
    from .. import Tensor
    if isinstance(args, Tensor):
        return [args]
    if isinstance(args, (list, tuple)):
        out: List[Any] = []
        for a in args:
            out.extend(_flat_tensors(a))
        return out
    if isinstance(args, dict):
        return _flat_tensors(list(args.values()))
    return []


def _graph_one(fn: Callable, sample_args: Tuple[Any, ...], num_warmup_iters: int,
               pool: Optional[_PoolHandle], allow_unused_input: bool) -> Callable:
    """Graphs fn's forward and backward (Note [CUDA graphs]); returns the graphed callable."""
    from .. import autograd, no_grad, zeros_like, empty_like
    from . import Stream, current_stream, stream as stream_ctx, synchronize
    from ..autograd import Function
    params = [p for p in getattr(fn, "parameters", lambda: [])() if p.requires_grad]
    inputs = list(sample_args)
    diff_inputs = [a for a in _flat_tensors(inputs) if a.requires_grad] + params

    def run_fwd() -> List[Any]:
        out = fn(*inputs)
        return _flat_tensors(out)

    side = Stream()
    side.wait_stream(current_stream())
    with stream_ctx(side):
        for _ in range(num_warmup_iters):
            outs = run_fwd()
            needs = [o for o in outs if o.requires_grad]
            if needs and diff_inputs:
                autograd.grad(needs, diff_inputs, grad_outputs=[zeros_like(o) for o in needs],
                              allow_unused=allow_unused_input)
            del outs, needs
    synchronize()
    fwd_graph, bwd_graph = CUDAGraph(), CUDAGraph()
    with graph(fwd_graph, pool=pool, stream=side):
        static_outputs = run_fwd()
    with no_grad():
        static_grad_outputs = [empty_like(o) if o.requires_grad else None for o in static_outputs]
    needs = [o for o, g in zip(static_outputs, static_grad_outputs) if g is not None]
    grads_in = [g for g in static_grad_outputs if g is not None]
    static_grad_inputs: Sequence[Any] = ()
    if needs and diff_inputs:
        with graph(bwd_graph, pool=fwd_graph.pool(), stream=side):
            static_grad_inputs = autograd.grad(needs, diff_inputs, grad_outputs=grads_in,
                                               allow_unused=allow_unused_input)
    static_inputs = _flat_tensors(inputs)

    n_static = len(static_inputs)

    class Graphed(Function):
        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            with no_grad():  # the static inputs may be leaves that require grad
                for dst, src in zip(static_inputs, args[:n_static]):
                    if dst.data_ptr() != src.data_ptr():
                        dst.copy_(src)
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            with no_grad():
                for dst, g in zip(static_grad_outputs, grads):
                    if dst is not None:
                        if g is None:
                            dst.zero_()
                        else:
                            dst.copy_(g)
            if not static_grad_inputs:
                return tuple(None for _ in range(n_static + len(params)))
            bwd_graph.replay()
            # Copies: the static tensors are overwritten by the next replay, while .grad may
            # keep (and later accumulate into) what backward returns.
            it = iter([None if g is None else g.clone() for g in static_grad_inputs])
            user = [next(it) if a.requires_grad else None for a in static_inputs]
            return tuple(user) + tuple(it)

    def graphed(*args: Any) -> Any:
        flat = _flat_tensors(args)
        if len(flat) != len(static_inputs):
            raise ValueError(f"make_graphed_callables: the graphed callable takes "
                             f"{len(static_inputs)} tensor argument(s) like its sample_args, "
                             f"got {len(flat)}")
        for a, s in zip(flat, static_inputs):
            if tuple(a.shape) != tuple(s.shape) or a.dtype != s.dtype:
                raise ValueError(f"make_graphed_callables: argument of shape {tuple(a.shape)} "
                                 f"and dtype {a.dtype} differs from the sample's "
                                 f"{tuple(s.shape)} / {s.dtype} (graphs have static shapes)")
        outs = Graphed.apply(*flat, *params)
        return outs[0] if len(outs) == 1 else outs

    return graphed


def make_graphed_callables(callables: Union[Callable, Sequence[Callable]],
                           sample_args: Union[Tuple[Any, ...], Sequence[Tuple[Any, ...]]],
                           num_warmup_iters: int = 3, allow_unused_input: bool = False,
                           pool: Optional[_PoolHandle] = None) -> Any:
    """Graphed versions of `callables` (functions or Modules): each one's forward and its
    backward are captured as two CUDA graphs after `num_warmup_iters` warm-up runs on a side
    stream. Calls must use tensors of the sample_args' shapes and dtypes; the returned outputs
    are the graph's static tensors (overwritten by the next call) and backward fills the
    Modules' parameters' .grad. One callable (and a tuple of sample args) in, one out; a tuple
    of callables in, a tuple out."""
    single = callable(callables) and not isinstance(callables, (list, tuple))
    fns = [callables] if single else list(callables)  # type: ignore[arg-type]
    samples = [sample_args] if single else list(sample_args)  # type: ignore[list-item]
    if len(fns) != len(samples):
        raise ValueError(f"make_graphed_callables: {len(fns)} callables but {len(samples)} "
                         f"sample_args tuples")
    for s in samples:
        if not isinstance(s, tuple):
            raise TypeError("make_graphed_callables: sample_args must be a tuple of tensors per "
                            "callable")
        for a in _flat_tensors(s):
            if not a.is_cuda:
                raise ValueError(f"make_graphed_callables: sample arguments must be CUDA "
                                 f"tensors, got one on {a.device}")
    pool = pool if pool is not None else graph_pool_handle()
    out = []
    for fn, s in zip(fns, samples):
        g = _graph_one(fn, s, num_warmup_iters, pool, allow_unused_input)
        if hasattr(fn, "forward") and hasattr(fn, "parameters"):
            fn.forward = g  # the Module keeps its parameters; calls go to the graphs
            out.append(fn)
        else:
            out.append(g)
    return out[0] if single else tuple(out)
