"""AdaptiveLogSoftmaxWithLoss: the efficient softmax approximation of Grave et al. (a head
over the frequent classes plus one token per tail cluster, each cluster a low-rank
projection), with PyTorch's parameter layout, outputs and errors."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, List, Sequence

from ..._C import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _ts() -> Any:
    import tessera
    return tessera


class AdaptiveLogSoftmaxWithLoss(Module):
    """Classes [0, cutoffs[0]) live in the head; cluster i holds [cutoffs[i], cutoffs[i+1])
    (the last ends at n_classes) behind a projection to in_features // div_value**(i+1).
    forward(input (N, in_features) or (in_features,), target (N,) or ()) returns
    (output: each target's log-probability, loss: mean negative log-likelihood)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of "
                             "length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of "
                             "unique, positive integers sorted in an increasing order, where "
                             "each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs: List[int] = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = dict(device=device, dtype=dtype)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for proj in self.tail:
            for layer in proj:
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        t = _ts()
        name = type(self).__name__
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise ValueError(f"{name}: input and target should have the same size in the "
                                 "batch dimension")
            if input_.ndim != 2:
                raise ValueError(f"{name}: 1D target tensor expects 2D input tensors, but "
                                 f"found inputs with size {tuple(input_.shape)}")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise ValueError(f"{name}: 0D target tensor expects 1D input tensors, but "
                                 f"found inputs with size {tuple(input_.shape)}")
        else:
            raise ValueError(f"{name}: 0D or 1D target tensor expected, multi-target not "
                             "supported")
        batched = target_.ndim > 0
        x = input_ if batched else t.expand_dims(input_, axis=0)
        target = [int(v) for v in t.reshape(target_, (-1,)).tolist()]
        n = len(target)
        if n and (min(target) < 0 or max(target) > self.n_classes - 1):
            raise IndexError(f"{name}: target values should be in [0, {self.n_classes - 1}], "
                             f"but values in range [{min(target)}, {max(target)}] were found")
        bounds = [0] + self.cutoffs
        cluster = [next(i for i in range(len(bounds) - 1) if bounds[i] <= y < bounds[i + 1])
                   for y in target]
        dev = x.device
        head_index = [y if c == 0 else self.shortlist_size + c - 1 for y, c in zip(target, cluster)]
        head_lp = F.log_softmax(self.head(x), dim=1)
        out = t.squeeze(t.take_along_axis(
            head_lp, t.asarray([[h] for h in head_index], dtype=t.int64, device=dev), axis=1),
            axis=1) if n else t.zeros((0,), dtype=head_lp.dtype, device=dev)
        # Each tail cluster runs on its own rows; the pieces are put back in row order.
        rows = [r for r in range(n) if cluster[r] == 0]
        pieces = [t.zeros((len(rows),), dtype=out.dtype, device=dev)]
        for c in range(1, len(bounds) - 1):
            idx = [r for r in range(n) if cluster[r] == c]
            if not idx:
                continue
            sub = t.take(x, t.asarray(idx, dtype=t.int64, device=dev), axis=0)
            lp = F.log_softmax(self.tail[c - 1](sub), dim=1)
            rel = t.asarray([[target[r] - bounds[c]] for r in idx], dtype=t.int64, device=dev)
            pieces.append(t.squeeze(t.take_along_axis(lp, rel, axis=1), axis=1))
            rows += idx
        if n:
            order = t.argsort(t.asarray(rows, dtype=t.int64, device=dev))
            out = out + t.take(t.concat(pieces), order, axis=0)
        loss = t.mean(-out)
        return _ASMoutput(out if batched else out[0], loss)

    def _get_full_log_prob(self, x: Tensor, head_output: Tensor) -> Tensor:
        t = _ts()
        head_lp = F.log_softmax(head_output, dim=1)
        parts = [head_lp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            lp = F.log_softmax(self.tail[i](x), dim=1)
            parts.append(lp + head_lp[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return t.concat(parts, axis=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class: (N, n_classes) or (n_classes,)."""
        t = _ts()
        batched = input.ndim == 2
        x = input if batched else t.expand_dims(input, axis=0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out[0]

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the head decides unless a cluster wins)."""
        t = _ts()
        batched = input.ndim == 2
        x = input if batched else t.expand_dims(input, axis=0)
        head_output = self.head(x)
        best = t.argmax(head_output, axis=1)
        outside = best >= self.shortlist_size
        if bool(t.any(outside)):
            full = t.argmax(self._get_full_log_prob(x, head_output), axis=1)
            best = t.where(outside, full, best)
        return best if batched else best[0]
