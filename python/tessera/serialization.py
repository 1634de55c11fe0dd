"""ts.save / ts.load: state dicts in the safetensors format, written and read by us.

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


def save(obj: Mapping[str, Any], path: PathLike, metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes a flat {name: tensor} dict (tessera tensors, NumPy arrays or torch tensors)
    as a .safetensors file; tensors are stored in sorted-name order, 8-byte aligned header."""
    from .nn.modules.module import to_tensor
    if not isinstance(obj, Mapping):
        raise TypeError(f"save: expected a dict of tensors (a state dict), got {type(obj).__name__}")
    header: Dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("save: metadata must map str to str")
        header["__metadata__"] = dict(metadata)
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
    with open(path, "wb") as f:
        f.write(len(hbytes).to_bytes(8, "little"))
        f.write(hbytes)
        for raw in blobs:
            f.write(raw)


def _read_header(path: PathLike) -> Any:
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"load: {path} is too short to be a safetensors file")
        n = int.from_bytes(head, "little")
        if n > size - 8 or n > 100_000_000:
            raise ValueError(f"load: {path}: header length {n} exceeds the file size {size}")
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"load: {path}: invalid safetensors header ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"load: {path}: the header is not a JSON object")
    return header, 8 + n, size


def load(path: PathLike, device: Any = None) -> "OrderedDict[str, Tensor]":
    """Reads a .safetensors file into an ordered {name: tensor} dict (in file order)."""
    ts = _ts()
    header, base, size = _read_header(path)
    header.pop("__metadata__", None)
    data = np.memmap(path, dtype=np.uint8, mode="r") if size > base else np.zeros(0, np.uint8)
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
        t = ts.asarray(_decode(raw, _FROM_ST[code]).reshape(shape))
        out[name] = t if device is None else t.to(device)
    return out


def _decode(raw: np.ndarray, dt_name: str) -> np.ndarray:
    """One owned, native-order copy of the mapped little-endian bytes."""
    if dt_name == "bfloat16":
        import ml_dtypes
        return np.array(raw.view("<u2")).view(ml_dtypes.bfloat16)
    npdt = np.dtype(dt_name).newbyteorder("<")
    return raw.view(npdt).astype(npdt.newbyteorder("="), copy=True)


def load_metadata(path: PathLike) -> Dict[str, str]:
    """The __metadata__ dict of a .safetensors file ({} when absent)."""
    return dict(_read_header(path)[0].get("__metadata__", {}))


# Note [Pickling tensors through copyreg]
# The core Tensor class has no __reduce__, so copy.deepcopy(module) and pickle fail. A
# copyreg reducer (consulted by both pickle and copy) stores the values as a NumPy array
# plus requires_grad and the instance attributes (e.g. the Parameter marker), so a
# deep-copied Module keeps Parameters as Parameters and shared tensors stay shared
# within one copy (the memo). Storage sharing between distinct views is not preserved.
def _rebuild_tensor(values: np.ndarray, dtype_name: str, requires_grad: bool,
                    attrs: Dict[str, Any]) -> Tensor:
    ts = _ts()
    t = ts.asarray(values).astype(getattr(ts, dtype_name))
    if requires_grad:
        t.requires_grad_(True)
    for k, v in attrs.items():
        setattr(t, k, v)
    return t


def _reduce_tensor(t: Tensor) -> Any:
    if str(t.dtype) == "bfloat16":
        import ml_dtypes  # noqa: F401  (NumPy needs it to hold bfloat16)
    values = np.array(t.detach().numpy(), copy=True)
    attrs = dict(getattr(t, "__dict__", {}))
    return _rebuild_tensor, (values, str(t.dtype), bool(t.requires_grad and t.is_leaf), attrs)


def _register_pickling() -> None:
    import copyreg
    copyreg.pickle(Tensor, _reduce_tensor)


_register_pickling()
