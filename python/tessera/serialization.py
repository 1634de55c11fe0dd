"""ts.save / ts.load: state dicts in the safetensors format, written and read by us (other
objects are pickled as torch.save does: _serialization_pickle).

Layout: an 8-byte little-endian header length N, N bytes of JSON
({name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__":
{str: str}}), then the raw little-endian tensor bytes, offsets relative to the end of the
header. Loading maps the file with np.memmap and copies each tensor once into tessera
memory (so the file may be deleted or overwritten afterwards)."""
from __future__ import annotations

import json
import os
from collections import OrderedDict
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from ._C import Tensor

_TO_ST = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
          "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
          "uint16": "U16", "uint32": "U32", "uint64": "U64", "bool": "BOOL",
          "complex64": "C64", "complex128": "C128"}
_FROM_ST = {v: k for k, v in _TO_ST.items()}
_ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
             "U8": 1, "U16": 2, "U32": 4, "U64": 8, "BOOL": 1, "C64": 8, "C128": 16}
PathLike = Union[str, "os.PathLike[str]"]
_KEY_ORDER = "tessera.key_order"


def _ts() -> Any:
    import tessera
    return tessera


def _raw_bytes(t: Tensor) -> bytes:
    """The tensor's elements as C-ordered little-endian bytes (bfloat16 via its uint16
    bit pattern, since NumPy has no bfloat16)."""
    ts = _ts()
    if t.dtype == ts.bfloat16:
        import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy)
    arr = np.ascontiguousarray(t.numpy())
    if arr.dtype.byteorder == ">":
        arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
    return arr.tobytes()


def save(obj: Any, path: Any, metadata: Optional[Dict[str, str]] = None, *,
         pickle_protocol: int = 2) -> None:
    """Writes `obj` to a path or a binary file object. A flat {name: tensor} dict (tessera
    tensors, NumPy arrays or torch tensors) is stored as safetensors (sorted names, 8-byte
    aligned header; the dict's own key order is kept in the metadata for load); anything else (nested or optimizer state dicts, lists, modules) is
    pickled as torch.save does (_serialization_pickle)."""
    from .nn.modules.module import to_tensor
    from . import _serialization_pickle as pk
    if not pk.is_flat_tensor_dict(obj):
        if metadata:
            raise TypeError("save: metadata is only stored with a flat dict of tensors")
        pk.pickle_save(obj, path, pickle_protocol)
        return
    header: Dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("save: metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    if list(obj) != sorted(obj):  # torch.load gives the keys back in the saved order
        header.setdefault("__metadata__", {})[_KEY_ORDER] = json.dumps(list(obj))
    blobs = []
    offset = 0
    for name in sorted(obj):
        if not isinstance(name, str):
            raise TypeError(f"save: keys must be str, got {type(name).__name__}")
        t = to_tensor(obj[name]).detach()
        dt = str(t.dtype)
        if dt not in _TO_ST:
            raise TypeError(f"save: dtype {dt} of '{name}' has no safetensors code")
        raw = _raw_bytes(t)
        header[name] = {"dtype": _TO_ST[dt], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * (-len(hbytes) % 8)
    if hasattr(path, "write"):
        _write_safetensors(path, hbytes, blobs)
    else:
        with open(path, "wb") as f:
            _write_safetensors(f, hbytes, blobs)


def _write_safetensors(f: Any, hbytes: bytes, blobs: list) -> None:
    f.write(len(hbytes).to_bytes(8, "little"))
    f.write(hbytes)
    for raw in blobs:
        f.write(raw)


def _read_header(path: PathLike, data: Optional[np.ndarray] = None) -> Any:
    """(header, data start, total size) of a safetensors file at `path`, or of its bytes
    `data` (a uint8 array) when given."""
    if data is None:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head_bytes = f.read(min(size, 8))
            n = int.from_bytes(head_bytes, "little") if len(head_bytes) == 8 else -1
            body = f.read(n) if 0 <= n <= min(size - 8, 100_000_000) else b""
    else:
        size = data.size
        head_bytes = bytes(data[:8])
        n = int.from_bytes(head_bytes, "little") if len(head_bytes) == 8 else -1
        body = bytes(data[8:8 + n]) if 0 <= n <= min(size - 8, 100_000_000) else b""
    if len(head_bytes) < 8:
        raise ValueError(f"load: {path} is too short to be a safetensors file")
    if n > size - 8 or n > 100_000_000:
        raise ValueError(f"load: {path}: header length {n} exceeds the file size {size}")
    try:
        header = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"load: {path}: invalid safetensors header ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"load: {path}: the header is not a JSON object")
    return header, 8 + n, size


def load(path: Any, map_location: Any = None, *, weights_only: Optional[bool] = None,
         device: Any = None, mmap: Any = None, **pickle_load_args: Any) -> Any:
    """Reads what save wrote, from a path or a binary file object: a safetensors file as an
    ordered {name: tensor} dict (in file order), a pickled object as itself (with torch's
    weights_only=True default: only tensors, containers and plain values unpickle).
    `map_location` (or `device`) moves the loaded tensors."""
    from . import _serialization_pickle as pk
    weights_only = pk.check_weights_only(weights_only)
    where = device if device is not None else map_location
    data: Optional[np.ndarray] = None
    if hasattr(path, "read"):
        buf = path.read()
        if buf.startswith(pk.MAGIC):
            return pk.pickle_load(buf, weights_only, where)
        data = np.frombuffer(buf, dtype=np.uint8)
        name = getattr(path, "name", "<file object>")
    else:
        with open(path, "rb") as f:
            if f.read(len(pk.MAGIC)) == pk.MAGIC:
                return pk.pickle_load(pk.read_all(path), weights_only, where)
        name = path
    out = _load_safetensors(name, data)
    return out if where is None else pk.apply_map_location(out, where)


def _load_safetensors(path: Any, data: Optional[np.ndarray]) -> "OrderedDict[str, Tensor]":
    ts = _ts()
    header, base, size = _read_header(path, data)
    order = header.pop("__metadata__", None) or {}
    order = order.get(_KEY_ORDER) if isinstance(order, dict) else None
    if data is None:
        data = np.memmap(path, dtype=np.uint8, mode="r") if size > base \
            else np.zeros(0, np.uint8)
    out: "OrderedDict[str, Tensor]" = OrderedDict()
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        code, shape = info.get("dtype"), tuple(info.get("shape", ()))
        begin, end = info.get("data_offsets", (0, -1))
        if code not in _FROM_ST:
            raise ValueError(f"load: '{name}' has unsupported dtype {code!r}")
        count = int(np.prod(shape)) if shape else 1
        if end - begin != count * _ITEMSIZE[code] or base + end > size or begin < 0:
            raise ValueError(f"load: '{name}': data_offsets {[begin, end]} do not match shape "
                             f"{list(shape)} of {code} (file size {size})")
        raw = data[base + begin:base + end]
        out[name] = ts.asarray(_decode(raw, _FROM_ST[code]).reshape(shape))
    if order is not None:
        keys = json.loads(order)
        if sorted(keys) == sorted(out):
            out = OrderedDict((k, out[k]) for k in keys)
    return out


def _decode(raw: np.ndarray, dt_name: str) -> np.ndarray:
    """One owned, native-order copy of the mapped little-endian bytes."""
    if dt_name == "bfloat16":
        import ml_dtypes
        return np.array(raw.view("<u2")).view(ml_dtypes.bfloat16)
    npdt = np.dtype(dt_name).newbyteorder("<")
    return raw.view(npdt).astype(npdt.newbyteorder("="), copy=True)


def load_metadata(path: PathLike) -> Dict[str, str]:
    """The __metadata__ dict of a .safetensors file ({} when absent; without tessera's own
    key-order entry)."""
    meta = dict(_read_header(path)[0].get("__metadata__", {}))
    meta.pop(_KEY_ORDER, None)
    return meta


# Note [Pickling tensors through copyreg]
# The core Tensor class has no __reduce__, so copy.deepcopy(module) and pickle fail. A
# copyreg reducer (consulted by both pickle and copy) stores the values as a NumPy array
# plus requires_grad and the instance attributes (e.g. the Parameter marker), so a
# deep-copied Module keeps Parameters as Parameters and shared tensors stay shared
# within one copy (the memo). Storage sharing between distinct views is not preserved.
def _rebuild_tensor(values: np.ndarray, dtype_name: str, requires_grad: bool,
                    attrs: Dict[str, Any], grad: Optional[Tensor] = None) -> Tensor:
    ts = _ts()
    t = ts.asarray(values).astype(getattr(ts, dtype_name))
    if requires_grad:
        t.requires_grad_(True)
    if grad is not None:  # a leaf's .grad travels with it, as in torch's deepcopy and pickle
        t.grad = grad
        t.__dict__.pop("_grad_ref", None)  # the Python layer's identity cache starts empty
    for k, v in attrs.items():
        setattr(t, k, v)
    return t


def _reduce_tensor(t: Tensor) -> Any:
    if str(t.dtype) == "bfloat16":
        import ml_dtypes  # noqa: F401  (NumPy needs it to hold bfloat16)
    values = np.array(t.detach().numpy(), copy=True)
    from ._torch_compat_parity import TRANSIENT_ATTRS
    attrs = {k: v for k, v in getattr(t, "__dict__", {}).items() if k not in TRANSIENT_ATTRS}
    leaf = bool(t.requires_grad and t.is_leaf)
    grad = t.grad if leaf else None
    return _rebuild_tensor, (values, str(t.dtype), leaf, attrs, grad)


def _register_pickling() -> None:
    import copyreg
    copyreg.pickle(Tensor, _reduce_tensor)


_register_pickling()
