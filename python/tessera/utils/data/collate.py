"""Batch assembly (PyTorch's ``torch.utils.data._utils.collate`` semantics).

default_collate turns a list of samples into a batch: tensors are stacked, NumPy arrays and
scalars become tensors of their dtype, Python floats float64, ints int64 (bools bool),
strings stay lists; dicts, namedtuples and sequences are collated member by member (a tuple
sample gives a list, as in PyTorch). default_convert only turns NumPy data into tensors."""
from __future__ import annotations

import collections.abc as _abc
import copy as _copy
import re as _re
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

import numpy as _np

from ..._C import Tensor
from ._errors import DataRuntimeError

np_str_obj_array_pattern = _re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")

_CollateMap = _t.Dict[_t.Union[_t.Type, _t.Tuple[_t.Type, ...]], _t.Callable]


def _ts() -> Any:
    import tessera
    return tessera


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars inside `data` (recursing into mappings, namedtuples and
    sequences; tuples become lists) become tensors; everything else is left unchanged.
    The DataLoader's collate_fn when automatic batching is off (batch_size=None)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_", "bytes_"):
        if isinstance(data, _np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return _ts().asarray(data)
    if isinstance(data, _abc.Mapping):
        try:
            if isinstance(data, _abc.MutableMapping):
                clone = _copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, _abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, _abc.MutableSequence):
                clone = _copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch: List[Any], *, collate_fn_map: Optional[_CollateMap] = None) -> Any:
    """Collates `batch` (a list of samples): an element whose type is a key of
    `collate_fn_map` (exactly, else the first key it is an instance of) is handled by that
    function; mappings, namedtuples and sequences recurse; anything else is a TypeError."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, _abc.Mapping):
        def members() -> Dict[Any, Any]:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
        try:
            if isinstance(elem, _abc.MutableMapping):
                clone = _copy.copy(elem)
                clone.update(members())
                return clone
            return elem_type(members())
        except TypeError:
            return members()
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, _abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed  # a list, as PyTorch returns for tuples
        try:
            if isinstance(elem, _abc.MutableSequence):
                clone = _copy.copy(elem)
                for i, value in enumerate(transposed):
                    clone[i] = value
                return clone
            return elem_type(transposed)
        except TypeError:
            return transposed
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: List[Tensor], *, collate_fn_map: Optional[_CollateMap] = None) -> Tensor:
    """Stacks equally shaped tensors along a new first axis."""
    shape = tuple(batch[0].shape)
    for i, t in enumerate(batch):
        if not isinstance(t, Tensor):  # torch.stack's TypeError (was an AttributeError)
            raise TypeError(f"default_collate: expected Tensor as element {i} of the batch (the "
                            f"first sample is a tensor), but got {type(t).__name__}")
        if tuple(t.shape) != shape:
            raise DataRuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
    return _ts().stack(list(batch), axis=0)


def collate_numpy_array_fn(batch: List[_np.ndarray], *,
                           collate_fn_map: Optional[_CollateMap] = None) -> Any:
    """NumPy arrays become tensors, then are stacked (string/object arrays: TypeError)."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_ts().asarray(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: List[Any], *, collate_fn_map: Optional[_CollateMap] = None) -> Tensor:
    """NumPy scalars become a 1-D tensor of their (promoted) dtype."""
    return _ts().asarray(_np.asarray(batch))


def collate_float_fn(batch: List[float], *, collate_fn_map: Optional[_CollateMap] = None) -> Tensor:
    """Python floats become a float64 tensor."""
    return _ts().asarray(batch, dtype=_ts().float64)


def collate_int_fn(batch: List[int], *, collate_fn_map: Optional[_CollateMap] = None) -> Tensor:
    """Python ints become an int64 tensor (all bools: bool; a float among them: the default
    float dtype), as ``torch.tensor(batch)`` infers."""
    return _ts().asarray(batch)


def collate_str_fn(batch: List[Any], *, collate_fn_map: Optional[_CollateMap] = None) -> List[Any]:
    """Strings and bytes stay the batch list itself."""
    return batch


default_collate_fn_map: _CollateMap = {
    Tensor: collate_tensor_fn,
    _np.ndarray: collate_numpy_array_fn,
    (_np.bool_, _np.number, _np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: List[Any]) -> Any:
    """Collates a list of samples into a batch with PyTorch's rules (see the module doc):
    ``default_collate([(x0, 0), (x1, 1)])`` is ``[stack([x0, x1]), tensor([0, 1])]``."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
