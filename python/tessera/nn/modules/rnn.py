"""RNN, LSTM, GRU and their cells with PyTorch's parameter names, shapes, gate order
(LSTM: i, f, g, o; GRU: r, z, n), initialization U(-1/sqrt(hidden), 1/sqrt(hidden)) and
input/output conventions, so a torch state_dict loads and reproduces torch's results.

Note [Recurrence over precomputed input projections]
Per layer and direction, the input projection x W_ih^T + b_ih of every timestep is one
matmul over the whole (L, N, H_in) sequence; only h W_hh^T + b_hh stays inside the time
loop. Sequences run in PackedSequence's time-major row layout (a padded batch is the case
of equal batch sizes): step t holds the first batch_sizes[t] rows, and rows whose sequence
has ended keep their last state. The projection is split into timesteps by one split node
(_split_rows: SplitWithSizesBackward0), whose backward concatenates the step gradients
once: slicing x[t] in the loop would give every
step a backward that writes a zero tensor of the full sequence size (O(L^2) work). Outputs
are concatenated once at the end. Everything else is differentiable tessera ops, so
gradients (and create_graph) come from autograd.
"""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, List, Optional, Sequence, Tuple

import numpy as _np

from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _ts() -> Any:
    import tessera
    return tessera


def _split_rows(x: Tensor, sizes: Tuple[int, ...]) -> Sequence[Tensor]:
    """x (R, ...) -> consecutive row blocks of the given sizes: one split node, whose backward
    concatenates the blocks' gradients in one op (Note [Recurrence over precomputed input
    projections])."""
    if len(sizes) == 1:
        return (x,)
    return _ts().split(x, list(sizes), 0)


def _sigmoid(x: Tensor) -> Tensor:
    """sigmoid(x) = (1 + tanh(x/2)) / 2: three ops, no overflow in either tail."""
    return 0.5 * _ts().tanh(0.5 * x) + 0.5


def _linear(x: Tensor, w: Tensor, b: Optional[Tensor]) -> Tensor:
    return F.linear(x, w, b)


# ------------------------------------------------------------------ cell math
def _rnn_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Optional[Tensor], relu: bool) -> Tensor:
    pre = gi + _linear(h, w_hh, b_hh)
    return F.relu(pre) if relu else _ts().tanh(pre)


def _lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Optional[Tensor],
               w_hr: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    t = _ts()
    gates = gi + _linear(h, w_hh, b_hh)
    n = c.shape[-1]
    i = _sigmoid(gates[..., :n])
    f = _sigmoid(gates[..., n:2 * n])
    g = t.tanh(gates[..., 2 * n:3 * n])
    o = _sigmoid(gates[..., 3 * n:])
    c2 = f * c + i * g
    h2 = o * t.tanh(c2)
    if w_hr is not None:
        h2 = _linear(h2, w_hr, None)
    return h2, c2


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Optional[Tensor]) -> Tensor:
    t = _ts()
    gh = _linear(h, w_hh, b_hh)
    n = h.shape[-1]
    r = _sigmoid(gi[..., :n] + gh[..., :n])
    z = _sigmoid(gi[..., n:2 * n] + gh[..., n:2 * n])
    cand = t.tanh(gi[..., 2 * n:] + r * gh[..., 2 * n:])
    return cand + z * (h - cand)  # (1 - z) n + z h


class RNNBase(Module):
    """Multi-layer (optionally bidirectional) recurrence over (L, N, H_in) input
    ((N, L, H_in) with batch_first, or unbatched (L, H_in))."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if mode not in _GATES:
            raise ValueError(f"{name}: unknown mode {mode!r}")
        if (not isinstance(dropout, (int, float)) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing "
                             f"the probability of an element being zeroed, got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(f"{name}: hidden_size ({hidden_size}) and num_layers ({num_layers}) "
                             f"must be positive")
        if proj_size < 0 or (proj_size and (mode != "LSTM" or proj_size >= hidden_size)):
            raise ValueError(f"{name}: proj_size ({proj_size}) must be 0, or (LSTM only) "
                             f"positive and smaller than hidden_size ({hidden_size})")
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        t = _ts()
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names: List[str] = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real_hidden * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate, layer_in)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                for pname, shape in shapes:
                    setattr(self, pname + sfx, Parameter(t.empty(shape, dtype=dtype)))
                    self._flat_weights_names.append(pname + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / _math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """PyTorch compacts cuDNN weights here; tessera's layout needs nothing."""

    @property
    def all_weights(self) -> List[List[Tensor]]:
        per = 2 + (2 if self.bias else 0) + (1 if self.proj_size > 0 else 0)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -------------------------------------------------------------- forward
    def _layer_params(self, layer: int, d: int) -> Tuple[Any, ...]:
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        g = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return g("weight_ih"), g("weight_hh"), g("bias_ih"), g("bias_hh"), g("weight_hr")

    def _check_hidden(self, h: Tensor, expected: Tuple[int, ...], what: str) -> None:
        if tuple(h.shape) != expected:
            raise ValueError(f"{type(self).__name__}: expected {what} of shape {expected}, got "
                             f"{tuple(h.shape)}")

    def _prepare(self, input: Tensor, hx: Any) -> Tuple[Tensor, bool, Any]:
        """Input as (L, N, H_in), whether it was unbatched, and the initial states as
        (layers*dirs, N, H) tensors (zeros when hx is None)."""
        t = _ts()
        name = type(self).__name__
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: expected a 2-D (unbatched) or 3-D input, got shape "
                             f"{tuple(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: input.size(-1) must be equal to input_size "
                             f"{self.input_size}, got input shape {tuple(input.shape)}")
        unbatched = input.ndim == 2
        x = t.expand_dims(input, axis=1) if unbatched else (
            t.permute_dims(input, (1, 0, 2)) if self.batch_first else input)
        n = x.shape[1]
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_shape = (self.num_layers * dirs, n, real_hidden)
        c_shape = (self.num_layers * dirs, n, self.hidden_size)
        is_lstm = self.mode == "LSTM"
        if hx is None:
            h0 = t.zeros(h_shape, dtype=x.dtype, device=x.device)
            states: Any = (h0, t.zeros(c_shape, dtype=x.dtype, device=x.device)) if is_lstm else h0
            return x, unbatched, states
        if is_lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ValueError(f"{name}: hx must be a tuple (h_0, c_0)")
            h0, c0 = hx
            if unbatched:
                h0, c0 = t.expand_dims(h0, axis=1), t.expand_dims(c0, axis=1)
            self._check_hidden(h0, h_shape, "h_0")
            self._check_hidden(c0, c_shape, "c_0")
            return x, unbatched, (h0, c0)
        if isinstance(hx, (tuple, list)):
            raise ValueError(f"{name}: hx must be a tensor, not a tuple")
        h0 = t.expand_dims(hx, axis=1) if unbatched else hx
        self._check_hidden(h0, h_shape, "hidden state h_0")
        return x, unbatched, h0

    def _direction(self, data: Tensor, sizes: Tuple[int, ...], layer: int, d: int, h: Tensor,
                   c: Optional[Tensor]) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """One layer and direction over packed rows `data` (sum(sizes), H_in): the output
        rows in the same layout, and the final h (and c) of every sequence."""
        t = _ts()
        w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, d)
        steps = _split_rows(_linear(data, w_ih, b_ih), sizes)  # one projection for all steps
        full = h.shape[0]
        order = range(len(steps) - 1, -1, -1) if d else range(len(steps))
        outs: List[Any] = [None] * len(steps)
        for i in order:
            n = sizes[i]
            hp, cp = (h, c) if n == full else (h[:n], None if c is None else c[:n])
            if self.mode == "LSTM":
                hn, cn = _lstm_step(steps[i], hp, cp, w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                hn, cn = _gru_step(steps[i], hp, w_hh, b_hh), None
            else:
                hn, cn = _rnn_step(steps[i], hp, w_hh, b_hh, self.mode == "RNN_RELU"), None
            outs[i] = hn
            if n == full:
                h, c = hn, cn
            else:  # finished sequences (the rows past n) keep their state
                h = t.concat([hn, h[n:]], axis=0)
                c = None if c is None else t.concat([cn, c[n:]], axis=0)
        return t.concat(outs, axis=0), h, c

    def _run(self, data: Tensor, sizes: Tuple[int, ...], h0: Tensor,
             c0: Optional[Tensor]) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """All layers over packed rows; returns the last layer's rows, h_n and c_n."""
        t = _ts()
        dirs = 2 if self.bidirectional else 1
        hs, cs = [], []
        x = data
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                out, h, c = self._direction(x, sizes, layer, d, h0[k],
                                            None if c0 is None else c0[k])
                outs.append(out)
                hs.append(h)
                cs.append(c)
            x = outs[0] if dirs == 1 else t.concat(outs, axis=-1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, t.stack(hs, axis=0), (t.stack(cs, axis=0) if c0 is not None else None)

    def forward(self, input: Any, hx: Any = None) -> Tuple[Any, Any]:
        from ..utils.rnn import PackedSequence
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        t = _ts()
        x, unbatched, states = self._prepare(input, hx)
        is_lstm = self.mode == "LSTM"
        h0, c0 = states if is_lstm else (states, None)
        if x.shape[0] == 0:
            raise ValueError(f"{type(self).__name__}: expected a sequence of at least one "
                             f"timestep, got input shape {tuple(input.shape)}")
        steps, n = x.shape[0], x.shape[1]
        data = t.reshape(x, (steps * n, x.shape[2]))
        out, h_n, c_n = self._run(data, (n,) * steps, h0, c0)
        out = t.reshape(out, (steps, n, out.shape[-1]))
        if unbatched:
            out, h_n = out[:, 0], h_n[:, 0]
            c_n = None if c_n is None else c_n[:, 0]
        elif self.batch_first:
            out = t.permute_dims(out, (1, 0, 2))
        return (out, (h_n, c_n)) if is_lstm else (out, h_n)

    def _forward_packed(self, seq: Any, hx: Any) -> Tuple[Any, Any]:
        """A PackedSequence in, a PackedSequence out; states are permuted into the packed
        (sorted) batch order and back, as PyTorch does."""
        t = _ts()
        name = type(self).__name__
        data = seq.data
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected packed data of shape (*, {self.input_size}), got "
                             f"{tuple(data.shape)}")
        from ..utils.rnn import check_batch_sizes
        sizes = tuple(int(v) for v in check_batch_sizes(name, seq.batch_sizes, data.shape[0]))
        n = sizes[0]
        sidx, uidx = seq.sorted_indices, seq.unsorted_indices
        dirs = 2 if self.bidirectional else 1
        is_lstm = self.mode == "LSTM"
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = t.zeros((self.num_layers * dirs, n, real_hidden), dtype=data.dtype,
                         device=data.device)
            c0 = t.zeros((self.num_layers * dirs, n, self.hidden_size), dtype=data.dtype,
                         device=data.device) if is_lstm else None
        else:
            h0, c0 = (hx if is_lstm else (hx, None))
            self._check_hidden(h0, (self.num_layers * dirs, n, real_hidden), "h_0")
            if is_lstm:
                self._check_hidden(c0, (self.num_layers * dirs, n, self.hidden_size), "c_0")
            if sidx is not None:
                h0 = t.take(h0, sidx, axis=1)
                c0 = None if c0 is None else t.take(c0, sidx, axis=1)
        out, h_n, c_n = self._run(data, sizes, h0, c0)
        if uidx is not None:
            h_n = t.take(h_n, uidx, axis=1)
            c_n = None if c_n is None else t.take(c_n, uidx, axis=1)
        packed = type(seq)(out, seq.batch_sizes, sidx, uidx)
        return (packed, (h_n, c_n)) if is_lstm else (packed, h_n)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, *, proj_size: int = 0) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r} (use 'tanh' or 'relu')")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h_0, c_0)) -> (output, (h_n, c_n)); with
    proj_size > 0 the hidden state is projected by weight_hr."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit (PyTorch's form: n = tanh(W_in x + b_in + r (W_hn h + b_hn)))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, proj_size: int = 0) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)


# ------------------------------------------------------------------ cells
class RNNCellBase(Module):
    """The base of RNNCell, LSTMCell and GRUCell: input_size, hidden_size, bias and the
    weight_ih / weight_hh / bias_ih / bias_hh parameters, initialized
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    _gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        t = _ts()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self._gates * hidden_size
        self.weight_ih = Parameter(t.empty((g, input_size), dtype=dtype))
        self.weight_hh = Parameter(t.empty((g, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(t.empty((g,), dtype=dtype))
            self.bias_hh = Parameter(t.empty((g,), dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / _math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def _batched(self, input: Tensor,
                 hx: Optional[Tensor]) -> Tuple[Tensor, Optional[Tensor], bool]:
        name = type(self).__name__
        t = _ts()
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input of shape (N, {self.input_size}) or "
                             f"({self.input_size},), got {tuple(input.shape)}")
        unbatched = input.ndim == 1
        x = t.expand_dims(input, axis=0) if unbatched else input
        if hx is not None:
            h = t.expand_dims(hx, axis=0) if unbatched and hx.ndim == 1 else hx
            if tuple(h.shape) != (x.shape[0], self.hidden_size):
                raise ValueError(f"{name}: expected hidden state of shape "
                                 f"{(x.shape[0], self.hidden_size)}, got {tuple(hx.shape)}")
            hx = h
        return x, hx, unbatched

    def _zeros(self, x: Tensor) -> Tensor:
        return _ts().zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r} (use 'tanh' or "
                             f"'relu')")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        x, h, unbatched = self._batched(input, hx)
        h = self._zeros(x) if h is None else h
        out = _rnn_step(_linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        self.nonlinearity == "relu")
        return out[0] if unbatched else out


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)) -> (h', c')."""
    _gates = 4

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None
                ) -> Tuple[Tensor, Tensor]:
        x, h, unbatched = self._batched(input, None if hx is None else hx[0])
        if hx is None:
            h, c = self._zeros(x), self._zeros(x)
        else:
            _, c, _ = self._batched(input, hx[1])
        h2, c2 = _lstm_step(_linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh,
                            self.bias_hh, None)
        return (h2[0], c2[0]) if unbatched else (h2, c2)


class GRUCell(RNNCellBase):
    """One GRU step: forward(input, h) -> h'."""
    _gates = 3

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        x, h, unbatched = self._batched(input, hx)
        h = self._zeros(x) if h is None else h
        out = _gru_step(_linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out[0] if unbatched else out
