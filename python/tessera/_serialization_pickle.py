"""torch.save / torch.load semantics for objects that are not flat {name: tensor} dicts
(nested state dicts, optimizer state dicts with int keys, lists, whole modules): the object is
pickled after a magic line (tensors pickle through serialization's copyreg reducer).

``load(weights_only=True)`` (torch's default) unpickles with an allow-list: containers,
numbers, strings, tessera tensors and dtypes, NumPy arrays; anything else (a Module, an
arbitrary class) raises pickle.UnpicklingError as torch does. ``map_location`` moves every
loaded tensor (a device, a device string, a {from: to} dict or a callable, as in torch).
"""
from __future__ import annotations

import builtins
import collections
import io
import pickle
from typing import Any, Callable, Dict, Optional

from ._C import Tensor
from ._torch_compat_parity import TRANSIENT_ATTRS

MAGIC = b"TESSERA-PICKLE\n"

_SAFE_GLOBALS = {
    ("collections", "OrderedDict"), ("collections", "defaultdict"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
    ("builtins", "slice"), ("builtins", "range"), ("builtins", "int"), ("builtins", "float"),
    ("builtins", "bool"), ("builtins", "str"), ("builtins", "bytes"), ("builtins", "tuple"),
    ("builtins", "list"), ("builtins", "dict"), ("builtins", "bytearray"),
    ("tessera.serialization", "_rebuild_tensor"), ("tessera._C", "dtype"),
    ("tessera._dtypes", "_dtype_by_name"), ("tessera", "_dtype_by_name"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"), ("ml_dtypes", "bfloat16"), ("_codecs", "encode"),
}


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS or module.startswith("numpy.dtypes"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed. In tessera (as in PyTorch 2.6+) `weights_only` defaults "
            f"to True; unpickling {module}.{name} is not allowed with weights_only=True. If you "
            f"trust the source of the file, load it with weights_only=False.")


def is_flat_tensor_dict(obj: Any) -> bool:
    """A non-empty-or-empty mapping of str to tensors / arrays: what safetensors holds."""
    from collections.abc import Mapping
    if not isinstance(obj, Mapping):
        return False
    for k, v in obj.items():
        if not isinstance(k, str):
            return False
        if not (isinstance(v, Tensor) or type(v).__module__.startswith(("numpy", "torch"))
                and hasattr(v, "shape")):
            return False
    return True


def pickle_save(obj: Any, f: Any, protocol: int) -> None:
    payload = MAGIC + pickle.dumps(obj, protocol=protocol)
    if hasattr(f, "write"):
        f.write(payload)
    else:
        with open(f, "wb") as fh:
            fh.write(payload)


def read_all(f: Any) -> bytes:
    if hasattr(f, "read"):
        return f.read()
    with open(f, "rb") as fh:
        return fh.read()


def pickle_load(buf: bytes, weights_only: bool, map_location: Any) -> Any:
    body = io.BytesIO(buf[len(MAGIC):])
    obj = _WeightsOnlyUnpickler(body).load() if weights_only else pickle.load(body)
    return apply_map_location(obj, map_location)


def apply_map_location(obj: Any, map_location: Any) -> Any:
    """Moves every tensor in `obj` (recursing into lists, tuples, dicts) per map_location."""
    if map_location is None:
        return obj
    move = _mover(map_location)
    return _walk(obj, move, {})


def _mover(map_location: Any) -> Callable[[Tensor], Tensor]:
    if callable(map_location) and not isinstance(map_location, (str, dict)) \
            and type(map_location).__name__ != "Device":
        def call(t: Tensor) -> Tensor:
            out = map_location(t, str(t.device))
            return t if out is None else out
        return call
    if isinstance(map_location, dict):
        table = {str(k): v for k, v in map_location.items()}
        return lambda t: t.to(table[str(t.device)]) if str(t.device) in table else t
    return lambda t: t.to(map_location)


def _walk(obj: Any, move: Callable[[Tensor], Tensor], memo: Dict[int, Any]) -> Any:
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, Tensor):
        out: Any = move(obj)
        if out is not obj:
            for k, v in obj.__dict__.items():
                if k not in TRANSIENT_ATTRS:
                    setattr(out, k, v)
    elif isinstance(obj, collections.OrderedDict):
        out = type(obj)((k, _walk(v, move, memo)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):
            out._metadata = obj._metadata  # type: ignore[attr-defined]
    elif isinstance(obj, dict):
        out = {k: _walk(v, move, memo) for k, v in obj.items()}
    elif isinstance(obj, list):
        out = [_walk(v, move, memo) for v in obj]
    elif isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        out = tuple(_walk(v, move, memo) for v in obj)
    else:
        out = obj
    memo[id(obj)] = out
    return out


def check_weights_only(value: Optional[bool]) -> bool:
    """torch 2.6+'s default: weights_only=True unless given."""
    if value is None:
        return True
    if not isinstance(value, builtins.bool):
        raise TypeError(f"load: weights_only must be a bool, got {type(value).__name__}")
    return value
