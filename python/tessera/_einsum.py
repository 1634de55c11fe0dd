"""einsum: NumPy/PyTorch subscripts, contracted pairwise through matmul.

Parsing and planning are Python (cheap, once per call); all arithmetic goes through tessera
ops: repeated labels in one operand become diagonal views, labels only one operand still
carries are summed away, and each pairwise contraction is one batched matmul, pairs chosen
greedily by the smallest intermediate (as opt_einsum's "greedy" does).
"""
from __future__ import annotations

import builtins
import functools
import math
import string
from typing import Any, Dict, List, Sequence, Tuple

from . import _C
from ._C import Tensor

__all__ = ["einsum"]

Label = Any  # a letter, or ("...", k) for the k-th broadcast dim counted from the right


def _ns() -> Any:
    import sys
    return sys.modules[__package__]


def _parse_term(term: str, ndim: int, where: str) -> List[Label]:
    """Labels of one operand, with its ellipsis expanded to ndim - (named labels) dims."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: invalid subscripts {where!r}: at most one '...' per operand")
    head, ell, tail = term.partition("...")
    for c in head + tail:
        if c not in string.ascii_letters:
            raise ValueError(f"einsum: invalid subscript {c!r} in {where!r} (letters only)")
    named = len(head) + len(tail)
    if (ell and named > ndim) or (not ell and named != ndim):
        raise ValueError(f"einsum: subscripts {term!r} do not match an operand of {ndim} dims")
    k = ndim - named if ell else 0
    return list(head) + [("...", k - 1 - i) for i in range(k)] + list(tail)


@functools.lru_cache(maxsize=256)
def _parse(subscripts: str, shapes: Tuple[Tuple[int, ...], ...]) -> Tuple[Tuple[Tuple[Label, ...], ...], Tuple[Label, ...]]:
    """(labels of each operand, output labels); cached, as models call einsum in loops."""
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts in {subscripts!r} but "
                         f"{len(shapes)} operands")
    ins = [_parse_term(t, len(sh), subscripts) for t, sh in zip(terms, shapes)]
    nell = max((sum(isinstance(l, tuple) for l in labels) for labels in ins), default=0)
    ell_labels = [("...", nell - 1 - i) for i in range(nell)]
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise ValueError(f"einsum: invalid output subscripts {rhs!r}")
        head, ell, tail = rhs.partition("...")
        out = list(head) + (ell_labels if ell else []) + list(tail)
        seen = set()
        for c in out:
            if c in seen:
                raise ValueError(f"einsum: output subscript {c!r} repeated in {subscripts!r}")
            seen.add(c)
            if not isinstance(c, tuple) and not any(c in labels for labels in ins):
                raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
            if not isinstance(c, tuple) and c not in string.ascii_letters:
                raise ValueError(f"einsum: invalid subscript {c!r}")
    else:  # implicit: broadcast dims, then letters appearing once, alphabetically
        counts: Dict[Label, int] = {}
        for labels in ins:
            for l in labels:
                if not isinstance(l, tuple):
                    counts[l] = counts.get(l, 0) + 1
        out = ell_labels + sorted(c for c, n in counts.items() if n == 1)
    return tuple(tuple(labels) for labels in ins), tuple(out)


def _take_diagonals(x: Tensor, labels: List[Label]) -> Tuple[Tensor, List[Label]]:
    """Repeated labels within one operand -> the diagonal (a view, moved to the end)."""
    while True:
        for i, l in enumerate(labels):
            j = labels.index(l, i + 1) if labels.count(l) > 1 else -1
            if j > 0:
                if x.shape[i] != x.shape[j]:
                    raise ValueError(f"einsum: repeated subscript {l!r} has sizes {x.shape[i]} "
                                     f"and {x.shape[j]}")
                x = _C._diagonal(x, 0, i, j)
                labels = [m for k, m in enumerate(labels) if k not in (i, j)] + [l]
                break
        else:
            return x, labels


def _sum_out(x: Tensor, labels: List[Label], keep: set) -> Tuple[Tensor, List[Label]]:
    """Sums over the labels nobody else needs."""
    drop = tuple(i for i, l in enumerate(labels) if l not in keep)
    if not drop:
        return x, labels
    return _ns().sum(x, axis=drop), [l for l in labels if l in keep]


def _contract(a: Tensor, la: List[Label], b: Tensor, lb: List[Label],
              keep: set) -> Tuple[Tensor, List[Label]]:
    """One pairwise contraction as a batched matmul (batch, a-free, b-free, summed labels)."""
    t = _ns()
    batch = [l for l in la if l in lb and l in keep]
    summed = [l for l in la if l in lb and l not in keep]
    fa = [l for l in la if l not in lb]
    fb = [l for l in lb if l not in la]
    # A size-1 summed dim on one side broadcasts against the other: sum that side first.
    for l in list(summed):
        na, nb = a.shape[la.index(l)], b.shape[lb.index(l)]
        if na != nb:
            if 1 not in (na, nb):
                raise ValueError(f"einsum: subscript {l!r} has sizes {na} and {nb}")
            if na == 1:
                b = t.sum(b, axis=lb.index(l), keepdims=True)
            else:
                a = t.sum(a, axis=la.index(l), keepdims=True)
    pa = t.permute_dims(a, tuple(la.index(l) for l in batch + fa + summed))
    pb = t.permute_dims(b, tuple(lb.index(l) for l in batch + summed + fb))
    nbatch = len(batch)
    sa, sb = tuple(pa.shape), tuple(pb.shape)
    ma = math.prod(sa[nbatch:nbatch + len(fa)])
    k = math.prod(sa[nbatch + len(fa):])
    nb = math.prod(sb[nbatch + len(summed):])
    r = t.matmul(t.reshape(pa, sa[:nbatch] + (ma, k)), t.reshape(pb, sb[:nbatch] + (k, nb)))
    shape = tuple(r.shape[:nbatch]) + sa[nbatch:nbatch + len(fa)] + sb[nbatch + len(summed):]
    return t.reshape(r, shape), batch + fa + fb


def _size_of(labels: List[Label], sizes: Dict[Label, int]) -> int:
    return math.prod(sizes[l] for l in labels)


def einsum(subscripts: str, /, *operands: Tensor, optimize: Any = True) -> Tensor:
    """Einstein summation, e.g. einsum('bij,bjk->bik', a, b), einsum('ii', a) (trace),
    einsum('...ij->...ji', a); implicit output (labels appearing once, alphabetically) when
    there is no '->'. Operands promote to a common dtype, as in NumPy; PyTorch's single list
    of operands is accepted too, and its sublist form einsum(op1, [0, 1], op2, [1, 2], [0, 2]).
    `optimize` is accepted for NumPy compatibility: the contraction order is always chosen
    greedily. Equation/operand mismatches raise tessera.errors.ValueError (also a
    RuntimeError)."""
    if isinstance(subscripts, Tensor):  # torch's sublist form einsum(op1, [0, 1], op2, [1, 2])
        subscripts, *ops = _sublist_to_equation((subscripts,) + operands)
        operands = tuple(ops)
    try:
        return _einsum(subscripts, operands)
    except ValueError as e:  # equation/operand mismatches: a ValueError and a RuntimeError
        if isinstance(e, _C.ValueError):
            raise
        raise _C.ValueError(str(e)) from None


def _einsum(subscripts: str, operands: Tuple[Any, ...]) -> Tensor:
    t = _ns()
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(subscripts, str):
        raise TypeError("einsum: subscripts must be a string such as 'ij,jk->ik'")
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    xs = [x if isinstance(x, Tensor) else t.asarray(x) for x in operands]
    ins, out = _parse(subscripts, tuple(tuple(x.shape) for x in xs))
    out = list(out)
    dtype = t.result_type(*xs)
    ops = []
    sizes: Dict[Label, int] = {}
    for x, labels in zip(xs, ins):
        x, labels = _take_diagonals(x, list(labels))
        for l, n in zip(labels, x.shape):
            if sizes.get(l, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: subscript {l!r} has sizes {sizes[l]} and {n}")
            if n != 1 or l not in sizes:
                sizes[l] = n
        ops.append((x, labels))
    outset = set(out)

    def needed(skip: Sequence[int]) -> set:
        keep = set(outset)
        for i, (_, labels) in enumerate(ops):
            if i not in skip:
                keep.update(labels)
        return keep

    ops = [_sum_out(x, labels, needed([i])) for i, (x, labels) in enumerate(ops)]
    while len(ops) > 1:
        best = None
        for i in range(len(ops)):
            for j in range(i + 1, len(ops)):
                keep = needed([i, j])
                res = [l for l in dict.fromkeys(ops[i][1] + ops[j][1]) if l in keep]
                cost = _size_of(res, sizes)
                if best is None or cost < best[0]:
                    best = (cost, i, j, keep)
        _, i, j, keep = best
        merged = _contract(*ops[i], *ops[j], keep)
        ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [merged]
        ops[-1] = _sum_out(*ops[-1], needed([len(ops) - 1]))
    x, labels = _sum_out(*ops[0], outset)
    r = t.permute_dims(x, tuple(labels.index(l) for l in out))
    target = tuple(sizes[l] for l in out)
    if tuple(r.shape) != target:  # size-1 broadcast dims that no other operand widened
        r = t.broadcast_to(r, target)
    return r.astype(dtype, copy=False) if r.dtype != dtype else r


def _sublist_to_equation(args: tuple) -> tuple:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def word(sub: Any) -> str:
        out = []
        for v in sub:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, builtins.int) and 0 <= v < len(letters):
                out.append(letters[v])
            else:
                raise _C.ValueError(f"einsum(): expected subscript to be within the range [0, 52), "
                                  f"got {v}")
        return "".join(out)
    ops, subs = list(args[0::2]), list(args[1::2])
    out_sub = None
    if len(args) % 2 == 1:
        out_sub = args[-1]
        ops = ops[:-1]
    eq = ",".join(word(s) for s in subs[:len(ops)])
    if out_sub is not None:
        eq += "->" + word(out_sub)
    return (eq, *ops)
