"""AdaptiveLogSoftmaxWithLoss (Grave et al.'s adaptive softmax; PyTorch's head/tail layout,
so a torch state_dict loads directly)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Sequence

import numpy as _np

from ..._C import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


class _ASMoutput(_t.NamedTuple):
    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """Classes [0, cutoffs[0]) are scored by the head directly; each further cutoff range is
    a cluster whose log-probabilities are the head's cluster score plus a smaller tail
    network's (width in_features // div_value**(i+1))."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        tails = []
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                    Linear(hsz, osz, bias=False, dtype=dtype)))
        self.tail = ModuleList(tails)

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for seq in self.tail:
            for lin in seq:
                lin.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """(N, in) and (N,) targets (or unbatched (in,) and ()) -> (the target log-
        probabilities, their negative mean)."""
        # torch names these input_/target_, so keyword calls must use those names.
        input, target = input_, target_
        t = _ts()
        name = type(self).__name__
        batched = target.ndim == 1
        if target.ndim not in (0, 1) or input.ndim != target.ndim + 1 or \
                (batched and input.shape[0] != target.shape[0]):
            raise ValueError(f"{name}: expected input (N, {self.in_features}) with target (N,) "
                             f"or input ({self.in_features},) with a 0-d target, got "
                             f"{tuple(input.shape)} and {tuple(target.shape)}")
        if input.shape[-1] != self.in_features:
            raise ValueError(f"{name}: input should have {self.in_features} features, got "
                             f"shape {tuple(input.shape)}")
        x = input if batched else t.expand_dims(input, axis=0)
        tg = _np.asarray(target.numpy()).astype(_np.int64).reshape(-1)
        b = tg.shape[0]
        if b and (tg.min() < 0 or tg.max() >= self.n_classes):
            raise IndexError(f"{name}: target values should be in [0, {self.n_classes - 1}], "
                             f"but values in range [{tg.min()}, {tg.max()}] were found")
        gather = tg.copy()  # head column per row: the class, or its cluster's column
        output = t.zeros((b,), dtype=x.dtype, device=x.device)
        for i in range(self.n_clusters):
            lo, hi = self.cutoffs[i], self.cutoffs[i + 1]
            rows = _np.nonzero((tg >= lo) & (tg < hi))[0]
            if rows.size == 0:
                continue
            gather[rows] = self.shortlist_size + i
            r = t.asarray(rows, device=x.device)
            logp = F.log_softmax(self.tail[i](t.take(x, r, axis=0)), dim=1)
            rel = t.asarray((tg[rows] - lo)[:, None], device=x.device)
            local = t.reshape(t.take_along_axis(logp, rel, axis=1), (-1,))
            output = output + t.index_add(t.zeros((b,), dtype=x.dtype, device=x.device), 0, r,
                                          local)
        head = F.log_softmax(self.head(x), dim=1)
        cols = t.asarray(gather[:, None], device=x.device)
        output = output + t.reshape(t.take_along_axis(head, cols, axis=1), (-1,))
        loss = t.mean(-output)
        return _ASMoutput(output if batched else output[0], loss)

    def _get_full_log_prob(self, x: Tensor, head_output: Tensor) -> Tensor:
        t = _ts()
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            logp = F.log_softmax(self.tail[i](x), dim=1)
            parts.append(logp + head[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return t.concat(parts, axis=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """(N, in) -> (N, n_classes) log-probabilities of every class."""
        t = _ts()
        x = input if input.ndim == 2 else t.expand_dims(input, axis=0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if input.ndim == 2 else out[0]

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (argmax of log_prob)."""
        return _ts().argmax(self.log_prob(input), axis=-1)
