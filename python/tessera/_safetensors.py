"""The safetensors format (Hugging Face's), written and read by tessera.

Layout: an 8-byte little-endian header length N, N bytes of JSON ({name: {"dtype": "F32",
"shape": [...], "data_offsets": [begin, end]}, "__metadata__": {str: str}}), then the raw
little-endian tensor bytes, offsets relative to the end of the header, packed without gaps
or overlaps in offset order.

Reading validates the whole header before touching the data (every malformed file raises
ValueError naming the file and what is wrong; sizes are Python integers, so a declared
shape cannot overflow) and copies each tensor once into tessera memory (or maps it
copy-on-write with mmap=True).
"""
from __future__ import annotations

import json
import os
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._C import Tensor

TO_CODE = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
           "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
           "uint16": "U16", "uint32": "U32", "uint64": "U64", "bool": "BOOL",
           "complex64": "C64", "complex128": "C128"}
FROM_CODE = {v: k for k, v in TO_CODE.items()}
ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
            "U8": 1, "U16": 2, "U32": 4, "U64": 8, "BOOL": 1, "C64": 8, "C128": 16}
KEY_ORDER = "tessera.key_order"
MAX_HEADER = 100_000_000  # the reference implementation's limit


def _ts() -> Any:
    import tessera
    return tessera


def looks_like_safetensors(head: bytes, size: int) -> bool:
    """Content detection: a header length that fits the file, then a JSON object."""
    if len(head) < 9:
        return False
    n = int.from_bytes(head[:8], "little")
    return 2 <= n <= size - 8 and head[8:9] == b"{"  # noqa: PLR2004


def _raw_bytes(t: Tensor) -> bytes:
    """The tensor's elements as C-ordered little-endian bytes."""
    if t.dtype == _ts().bfloat16:
        import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy)
    arr = np.ascontiguousarray(t.cpu().numpy())
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and
                                      np.little_endian is False):
        arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
    return arr.tobytes()


def save_safetensors(obj: Any, f: Any, metadata: Optional[Dict[str, str]]) -> None:
    """A flat {str: tensor} dict as safetensors (sorted names, 8-byte aligned header; a
    non-sorted key order is kept in the metadata so load gives the keys back in order)."""
    from .nn.modules.module import to_tensor
    from collections.abc import Mapping
    if not isinstance(obj, Mapping):
        raise TypeError(f"save: the safetensors format holds a dict of tensors, got "
                        f"{type(obj).__name__}")
    header: Dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("save: metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    for name in obj:
        if not isinstance(name, str):
            raise TypeError(f"save: safetensors keys must be str, got {type(name).__name__}")
    if list(obj) != sorted(obj):
        header.setdefault("__metadata__", {})[KEY_ORDER] = json.dumps(list(obj))
    blobs = []
    offset = 0
    for name in sorted(obj):
        t = to_tensor(obj[name]).detach()
        dt = str(t.dtype)
        if dt not in TO_CODE:
            raise TypeError(f"save: dtype {dt} of '{name}' has no safetensors code")
        raw = _raw_bytes(t)
        header[name] = {"dtype": TO_CODE[dt], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * (-len(hbytes) % 8)

    def write(fh: Any) -> None:
        fh.write(len(hbytes).to_bytes(8, "little"))
        fh.write(hbytes)
        for raw in blobs:
            fh.write(raw)
    if hasattr(f, "write"):
        write(f)
    else:
        with open(f, "wb") as fh:
            write(fh)


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _is_int(x: Any) -> bool:
    return type(x) is int and x >= 0


def read_header(name: Any, head: bytes, size: int) -> Tuple[Dict[str, Any], int]:
    """(validated header, data start) from the file's first bytes `head` (at least the
    header) and its total size. Every entry is checked: dtype code, shape and offsets
    (non-negative ints, end - begin == prod(shape) * itemsize, packed in order, ending at
    the end of the file); ValueError names the file and the entry otherwise."""
    if size < 8 or len(head) < 8:
        raise ValueError(f"load: {name} is too short to be a safetensors file ({size} bytes)")
    n = int.from_bytes(head[:8], "little")
    if n > size - 8 or n > MAX_HEADER:
        raise ValueError(f"load: {name}: header length {n} exceeds the file size {size}")
    try:
        header = json.loads(head[8:8 + n].decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"load: {name}: invalid safetensors header ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"load: {name}: the header is not a JSON object")
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError(f"load: {name}: __metadata__ must map str to str")
    base, data_size = 8 + n, size - 8 - n
    entries = []
    for key, info in header.items():
        if key == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise ValueError(f"load: {name}: entry '{key}' is not a JSON object")
        code, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(code, str) or code not in ITEMSIZE:
            raise ValueError(f"load: {name}: '{key}' has unsupported dtype {code!r}")
        if not isinstance(shape, list) or not all(_is_int(s) and s < 2**63 for s in shape) \
                or len(shape) > 64:
            raise ValueError(f"load: {name}: '{key}' has an invalid shape {shape!r} (a list "
                             f"of at most 64 non-negative ints below 2^63)")
        if not isinstance(offs, list) or len(offs) != 2 or not all(_is_int(o) for o in offs):
            raise ValueError(f"load: {name}: '{key}' has invalid data_offsets {offs!r}")
        count = 1
        for s in shape:
            count *= s
        begin, end = offs
        if end < begin or end - begin != count * ITEMSIZE[code]:
            raise ValueError(f"load: {name}: '{key}': data_offsets {offs} do not match shape "
                             f"{shape} of {code} ({count * ITEMSIZE[code]} bytes)")
        entries.append((begin, end, key))
    pos = 0
    for begin, end, key in sorted(entries):
        if begin != pos:
            raise ValueError(f"load: {name}: '{key}': data_offsets start at {begin}, expected "
                             f"{pos} (tensors must be packed without gaps or overlaps)")
        pos = end
    if pos != data_size:
        raise ValueError(f"load: {name}: the tensors hold {pos} bytes but the file has "
                         f"{data_size} bytes of data")
    return header, base


def load_safetensors(src: Any, name: Any, use_mmap: bool) -> "OrderedDict[str, Tensor]":
    """The tensors of a safetensors file (a path, or its bytes) in file order (or the saved
    key order)."""
    ts = _ts()
    if isinstance(src, (bytes, bytearray, memoryview)):
        data = np.frombuffer(src, dtype=np.uint8)
        size = data.size
        head = bytes(data[:8 + min(int.from_bytes(bytes(data[:8]), "little"), MAX_HEADER)]) \
            if size >= 8 else bytes(data)
    else:
        size = os.path.getsize(src)
        with open(src, "rb") as f:
            first = f.read(8)
            n = int.from_bytes(first, "little") if len(first) == 8 else 0
            head = first + (f.read(n) if n <= min(size - 8, MAX_HEADER) else b"")
        data = None
    header, base = read_header(name, head, size)
    order = header.pop("__metadata__", {}).get(KEY_ORDER)
    if data is None and size > base:
        data = np.memmap(src, dtype=np.uint8, mode="c")
    out: "OrderedDict[str, Tensor]" = OrderedDict()
    for key, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        begin, end = info["data_offsets"]
        dt = FROM_CODE[info["dtype"]]
        if end == begin:  # no elements: any shape of int64 sizes, NumPy's limits aside
            out[key] = ts.empty(tuple(info["shape"]), dtype=getattr(ts, dt))
            continue
        arr = _decode(data[base + begin:base + end], dt, copy=not use_mmap)
        out[key] = ts.from_numpy(arr.reshape(info["shape"]))
    if isinstance(order, str):
        try:
            keys = json.loads(order)
        except (ValueError, RecursionError):
            keys = None
        if isinstance(keys, list) and all(type(k) is str for k in keys) \
                and sorted(keys) == sorted(out):
            out = OrderedDict((k, out[k]) for k in keys)
    return out


def _decode(raw: np.ndarray, dt_name: str, copy: bool) -> np.ndarray:
    """The little-endian bytes as a native-order array (an owned copy unless copy=False and
    no conversion is needed); bool bytes other than 0/1 become True."""
    if dt_name == "bfloat16":
        import ml_dtypes
        npdt = np.dtype(ml_dtypes.bfloat16)
    else:
        npdt = np.dtype(dt_name).newbyteorder("<")
    arr = raw.view(npdt)
    if dt_name == "bool" and raw.size and int(raw.max()) > 1:
        return raw != 0
    if npdt.byteorder == "<" and not np.little_endian:
        return arr.astype(npdt.newbyteorder("="))
    # a mapped view is shared only where its dtype's alignment holds (a hand-written header
    # need not pad the data to 8 bytes): else a copy
    return np.array(arr, copy=True) if copy or arr.ctypes.data % arr.dtype.alignment else arr


def load_metadata(path: Any) -> Dict[str, str]:
    """The __metadata__ dict of a .safetensors file ({} when absent; without tessera's own
    key-order entry)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        first = f.read(8)
        n = int.from_bytes(first, "little") if len(first) == 8 else 0
        head = first + (f.read(n) if n <= min(size - 8, MAX_HEADER) else b"")
    meta = dict(read_header(path, head, size)[0].get("__metadata__", {}))
    meta.pop(KEY_ORDER, None)
    return meta
