"""torch.nn.modules.utils: the argument normalizers custom layers import (_single, _pair,
_triple, _quadruple, _ntuple, _reverse_repeat_tuple)."""
from __future__ import annotations

import collections.abc as _abc
import typing as _t
from itertools import repeat

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Sequence, Tuple

__all__: list = []


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], Tuple[Any, ...]]:
    def parse(x: Any) -> Tuple[Any, ...]:
        if isinstance(x, _abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Sequence[Any], n: int) -> Tuple[Any, ...]:
    """The elements of t reversed, each repeated n times: (1, 2) -> (2, 2, 1, 1) for n=2."""
    return tuple(x for x in reversed(t) for _ in range(n))
