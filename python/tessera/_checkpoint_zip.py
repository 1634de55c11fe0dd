"""PyTorch's checkpoint format (``torch.save``'s zip file), written and read by tessera.

Layout (see docs/design.md, "Checkpoint files"): a zip archive of uncompressed records under
one folder ``<archive>/``: ``data.pkl`` (the object, pickled with protocol 2 by default;
each tensor pickles as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)`` whose storage is a persistent id ``('storage', torch.FloatStorage,
key, location, numel)``), ``data/<key>`` (each storage's raw bytes, 64-byte aligned in the
file), ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id``.

Reading never trusts the file: record sizes and offsets are checked against the file size,
and every tensor's (offset, size, stride) against its storage, with Python integers (no
overflow) before any view is made.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import sys
import uuid
import zipfile
import zlib
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ._C import Tensor
from ._tensor import TRANSIENT_ATTRS, check_restored_attrs
from ._weights_only_unpickler import (STORAGE_DTYPES, DeviceUnavailable, MalformedFile,
                                      StorageType,
                                      Unpickler, default_allowed_globals, map_python2_name)

ZIP_MAGIC = b"PK\x03\x04"
ALIGNMENT = 64
_DTYPE_TO_STORAGE = {v: k for k, v in STORAGE_DTYPES.items()}
_ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
             "int16": 2, "int8": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
             "bool": 1, "complex64": 8, "complex128": 16}


def _ts() -> Any:
    import tessera
    return tessera


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


# ----------------------------------------------------------------------------- reading
class LoadedStorage:
    """One storage record of a checkpoint: its bytes (a writable copy, or a copy-on-write
    map with mmap=True) and one 1-D tessera tensor per dtype it is viewed as, created on
    first use on the device map_location picks (so views of one storage share memory)."""

    def __init__(self, raw: np.ndarray, location: str, swap: bool,
                 restore: Callable[[Tensor, str], Tensor], name: str) -> None:
        self.raw, self.location, self.swap, self.restore, self.name = raw, location, swap, \
            restore, name
        self._typed: Dict[str, Tensor] = {}

    def typed(self, dtype_name: str) -> Tensor:
        if dtype_name in self._typed:
            return self._typed[dtype_name]
        if dtype_name not in _ITEMSIZE:
            raise pickle.UnpicklingError(f"load: {self.name}: dtype {dtype_name} is not "
                                         f"supported by tessera")
        if self.raw.size % _ITEMSIZE[dtype_name]:
            raise MalformedFile(f"load: {self.name}: a storage of {self.raw.size} bytes cannot "
                             f"hold {dtype_name} elements")
        arr = self.raw.view(_np_dtype(dtype_name))
        if self.swap and arr.dtype.itemsize > 1:
            arr = arr.byteswap()
        if dtype_name == "bool" and self.raw.size and int(self.raw.max()) > 1:
            arr = self.raw != 0  # other bytes than 0/1 are no bool (issue 22)
        t = self.restore(_ts().from_numpy(arr), self.location)
        self._typed[dtype_name] = t
        return t


def _check_int(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise MalformedFile(f"load: tensor {what} must be a non-negative int, got {value!r}")
    return value


def _view(storage: Any, dtype_name: str, offset: Any, size: Any, stride: Any) -> Tensor:
    if not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError(f"load: a tensor's storage must come from the file, "
                                     f"got {type(storage).__name__}")
    if not isinstance(size, tuple) or not isinstance(stride, tuple) or len(size) != len(stride):
        raise MalformedFile(f"load: tensor size {size!r} and stride {stride!r} must be tuples of "
                         f"equal length")
    offset = _check_int(offset, "storage offset")
    size = tuple(_check_int(s, "size") for s in size)
    stride = tuple(_check_int(s, "stride") for s in stride)
    base = storage.typed(dtype_name)
    numel = base.shape[0]
    # Python integers: no overflow however large the numbers in the file are.
    if 0 in size:
        ok = offset <= numel
    else:
        ok = offset + sum((n - 1) * s for n, s in zip(size, stride)) < numel
    if not ok:
        raise MalformedFile(f"load: {storage.name}: tensor of size {list(size)}, stride "
                         f"{list(stride)} and offset {offset} reaches beyond its storage of "
                         f"{numel} {dtype_name} elements")
    return _ts().as_strided(base, size, stride, offset)


def _finish(t: Tensor, requires_grad: Any) -> Tensor:
    if type(requires_grad) is not bool:
        raise MalformedFile(f"load: requires_grad must be a bool, got {requires_grad!r}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    """torch._utils._rebuild_tensor (storage of a legacy typed class)."""
    return _view(storage, _storage_dtype(storage), storage_offset, size, stride)


def rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any,
                      requires_grad: Any, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """torch._utils._rebuild_tensor_v2: a view (offset, size, stride) of a typed storage."""
    return _finish(rebuild_tensor(storage, storage_offset, size, stride), requires_grad)


def rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any,
                      requires_grad: Any, backward_hooks: Any, dtype: Any,
                      metadata: Any = None) -> Tensor:
    """torch._utils._rebuild_tensor_v3: the same over an untyped storage plus a dtype."""
    if type(dtype).__name__ != "dtype" or not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError("load: _rebuild_tensor_v3 needs a storage and a dtype")
    return _finish(_view(storage, str(dtype), storage_offset, size, stride), requires_grad)


def _storage_dtype(storage: Any) -> str:
    if not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError("load: a tensor's storage must come from the file")
    return storage.dtype_name  # type: ignore[attr-defined,no-any-return]


def _set_state(t: Tensor, state: Any) -> Tensor:
    """torch._utils._set_obj_state: instance attributes saved with a tensor."""
    if state is None:
        return t
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is None:
            continue
        try:
            check_restored_attrs(part, "load")
        except ValueError as e:
            raise pickle.UnpicklingError(str(e)) from None
        for k, v in part.items():
            setattr(t, k, v)
    return t


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Tensor:
    """torch._utils._rebuild_parameter."""
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise pickle.UnpicklingError("load: _rebuild_parameter needs a tensor and a bool")
    return _ts().nn.Parameter(data, requires_grad)


def rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any,
                                 state: Any) -> Tensor:
    """torch._utils._rebuild_parameter_with_state."""
    return _set_state(rebuild_parameter(data, requires_grad, backward_hooks), state)


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
    """torch._tensor._rebuild_from_type_v2: a tensor with instance attributes."""
    ts = _ts()
    if func not in (rebuild_tensor, rebuild_tensor_v2, rebuild_tensor_v3, rebuild_parameter,
                    rebuild_parameter_with_state) or not isinstance(args, tuple):
        raise pickle.UnpicklingError(f"load: _rebuild_from_type_v2 cannot call {func!r}")
    if new_type is not ts.Tensor and new_type is not ts.nn.Parameter:
        raise pickle.UnpicklingError(f"load: tensor subclass {new_type!r} is not supported")
    return _set_state(func(*args), state)


def rebuild_device_tensor_from_cpu_tensor(data: Any, dtype: Any, device: Any,
                                          requires_grad: Any) -> Tensor:
    """torch._utils._rebuild_device_tensor_from_cpu_tensor."""
    if not isinstance(data, Tensor) or type(dtype).__name__ != "dtype":
        raise pickle.UnpicklingError("load: _rebuild_device_tensor_from_cpu_tensor needs a "
                                     "tensor and a dtype")
    return _finish(data.to(device=device, dtype=dtype), requires_grad)


class ZipReader:
    """The records of a checkpoint zip, read by offset from the local headers (only stored,
    i.e. uncompressed, records; every offset and size checked against the file size)."""

    def __init__(self, src: Any, name: str, use_mmap: bool) -> None:
        self.name = name
        if isinstance(src, (bytes, bytearray, memoryview)):
            self.data: Any = memoryview(src)
            self.size = len(self.data)
            self.path = None
        else:
            self.path = src
            self.size = os.path.getsize(src)
            self.data = None
        self.mmap = np.memmap(src, dtype=np.uint8, mode="c") if use_mmap and self.size else None
        try:
            fobj = io.BytesIO(self.data) if self.data is not None else open(src, "rb")
            with fobj, zipfile.ZipFile(fobj) as zf:
                infos = zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error, EOFError,
                NotImplementedError, OverflowError, KeyError, IndexError,
                UnicodeDecodeError) as e:
            raise MalformedFile(f"load: {name} is not a valid checkpoint zip archive "
                             f"({type(e).__name__}: {e})") from None
        self.records: Dict[str, zipfile.ZipInfo] = {}
        prefixes = set()
        for info in infos:
            prefixes.add(info.filename.split("/", 1)[0])
            if info.filename in self.records:
                # two records of one name: which one a reader takes differs between tools (a
                # file that shows one tensor to a checker and another to the loader)
                raise MalformedFile(f"load: {name}: the archive holds two records named "
                                    f"{info.filename!r} (a malformed or malicious file)")
            self.records[info.filename] = info
        pkl = [n for n in self.records if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkl) != 1 or len(prefixes) != 1:
            raise MalformedFile(f"load: {name}: a checkpoint holds one folder with a data.pkl "
                             f"record (found {sorted(self.records)[:8]})")
        self.prefix = pkl[0][:-len("data.pkl")]
        self._storage_total = 0  # bytes of the storage records read so far

    def has(self, rec: str) -> bool:
        return self.prefix + rec in self.records

    def _span(self, rec: str) -> Tuple[int, int]:
        info = self.records.get(self.prefix + rec)
        if info is None:
            raise MalformedFile(f"load: {self.name}: the archive has no record {rec!r}")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise MalformedFile(f"load: {self.name}: record {rec!r} is compressed (checkpoint "
                             f"records are stored uncompressed)")
        head = self._bytes(info.header_offset, 30)
        if len(head) != 30 or head[:4] != ZIP_MAGIC:
            raise MalformedFile(f"load: {self.name}: record {rec!r} has no valid local header")
        n_name, n_extra = struct.unpack("<HH", head[26:30])
        start = info.header_offset + 30 + n_name + n_extra
        if start + info.file_size > self.size:
            raise MalformedFile(f"load: {self.name}: record {rec!r} of {info.file_size} bytes at "
                             f"offset {start} reaches beyond the file size {self.size}")
        return start, info.file_size

    def _bytes(self, start: int, n: int) -> bytes:
        if start < 0 or start > self.size:
            return b""
        if self.data is not None:
            return bytes(self.data[start:start + n])
        with open(self.path, "rb") as f:  # type: ignore[arg-type]
            f.seek(start)
            return f.read(n)

    def record(self, rec: str) -> bytes:
        start, n = self._span(rec)
        out = self._bytes(start, n)
        if zlib.crc32(out) != self.records[self.prefix + rec].CRC:
            raise MalformedFile(f"load: {self.name}: record {rec!r} fails its CRC-32 check")
        return out

    def storage(self, rec: str, nbytes: int) -> np.ndarray:
        start, n = self._span(rec)
        if n != nbytes:
            raise MalformedFile(f"load: {self.name}: storage record {rec!r} holds {n} bytes, the "
                             f"pickle declares {nbytes}")
        # The records of a real archive lie one after another, so together they fit in the
        # file; central-directory entries pointing at the same bytes would make a small file
        # load as many copies of them (a zip bomb).
        self._storage_total += n
        if self._storage_total > self.size:
            raise MalformedFile(f"load: {self.name}: the storage records read so far (up to "
                                f"{rec!r}) hold {self._storage_total} bytes, more than the file's "
                                f"{self.size}: the archive's records overlap (a malformed or "
                                f"malicious file)")
        if self.mmap is not None:
            return self.mmap[start:start + n]
        buf = np.empty(n, dtype=np.uint8)  # writable memory the tensor owns, not zero-filled
        if self.data is not None:
            buf[:] = np.frombuffer(self.data, np.uint8, n, start)
        else:
            with open(self.path, "rb") as f:  # type: ignore[arg-type]
                f.seek(start)
                if f.readinto(memoryview(buf)) != n:
                    raise MalformedFile(f"load: {self.name}: record {rec!r} is truncated")
        return buf


def _default_restore(t: Tensor, location: str) -> Tensor:
    ts = _ts()
    if location == "cpu":
        return t if t.device.type == "cpu" else t.to("cpu")
    if location.startswith("cuda"):
        if not ts.cuda.is_available():
            raise DeviceUnavailable(
                "Attempting to deserialize object on a CUDA device but "
                "tessera.cuda.is_available() is False. If you are running on a CPU-only "
                "machine, please use tessera.load with map_location='cpu' to map your "
                "storages to the CPU.")
        return t.to(location)
    raise DeviceUnavailable(f"load: don't know how to restore data location {location!r} "
                       f"(tessera has cpu and cuda)")


def restore_location(map_location: Any) -> Callable[[Tensor, str], Tensor]:
    """torch.serialization._get_restore_location: map_location (None, a str or device, a
    {saved: wanted} dict, or a callable (storage, location) -> storage or None) as a
    function of (1-D storage tensor, saved location)."""
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        table = {str(k): str(v) for k, v in map_location.items()}
        return lambda t, loc: _default_restore(t, table.get(loc, loc))
    if isinstance(map_location, str) or type(map_location).__name__.lower() == "device":
        # a tessera device, or a torch.device from a script written for torch
        where = str(map_location)
        return lambda t, loc: _default_restore(t, where)
    if callable(map_location):
        def call(t: Tensor, loc: str) -> Tensor:
            out = map_location(t, loc)
            if out is None:
                return _default_restore(t, loc)
            if not isinstance(out, Tensor):
                raise TypeError(f"load: map_location returned {type(out).__name__}, expected "
                                f"the storage (a tessera tensor) or None")
            return out
        return call
    raise TypeError(f"load: map_location must be None, a str, a device, a dict or a callable, "
                    f"got {type(map_location).__name__}")


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global, with PyTorch's names of tensor pieces mapped to
    tessera's and other ``torch.*`` names to the ``tessera.*`` object of the same path."""

    def __init__(self, data: bytes, persistent: Callable[[Any], Any], start: int = 0,
                 **kw: Any) -> None:
        self.file = io.BytesIO(data)
        self.file.seek(start)
        super().__init__(self.file, **kw)
        self._persistent = persistent
        self._allowed = default_allowed_globals()

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        module, name = map_python2_name(module, name)
        obj = self._allowed.get((module, name))
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            try:
                return super().find_class("tessera" + module[5:], name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(
                    f"load: {module}.{name} has no tessera counterpart at "
                    f"tessera{module[5:]}.{name}") from None
        return super().find_class(module, name)


def load_zip(src: Any, name: str, map_location: Any, weights_only: bool, use_mmap: bool,
             user_globals: Dict[str, Any], encoding: str = "utf-8") -> Any:
    """torch.serialization._load for a zip checkpoint at a path (or in bytes)."""
    reader = ZipReader(src, name, use_mmap)
    swap = False
    if reader.has("byteorder"):
        order = reader.record("byteorder")
        if order not in (b"little", b"big"):
            raise MalformedFile(f"load: {name}: unknown byte order {order!r}")
        swap = order.decode() != sys.byteorder
    else:
        swap = sys.byteorder != "little"
    restore = restore_location(map_location)
    storages: Dict[str, LoadedStorage] = {}

    def persistent_load(pid: Any) -> LoadedStorage:
        if type(pid) is not tuple or len(pid) != 5:
            raise pickle.UnpicklingError(f"load: {name}: unexpected persistent id {pid!r}")
        kind, stype, key, location, numel = pid
        if isinstance(kind, bytes):
            kind = kind.decode("ascii", "replace")
        if kind != "storage" or not isinstance(stype, StorageType) or type(key) is not str \
                or type(location) is not str or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"load: {name}: bad storage id {pid!r}")
        if stype.dtype_name is None:
            raise pickle.UnpicklingError(f"load: {name}: {stype.name} has no dtype")
        if key in storages:
            return storages[key]
        nbytes = numel * _ITEMSIZE[stype.dtype_name]
        raw = reader.storage(f"data/{key}", nbytes)
        st = LoadedStorage(raw, location, swap, restore, f"{name} (data/{key})")
        st.dtype_name = stype.dtype_name  # type: ignore[attr-defined]
        storages[key] = st
        return st

    data = reader.record("data.pkl")
    if weights_only:
        return Unpickler(data, user_globals=user_globals, persistent_load=persistent_load,
                         encoding=encoding).load()
    return _FullUnpickler(data, persistent_load, encoding=encoding).load()


# ----------------------------------------------------------------------------- writing
class _Global:
    """A global written by name (``torch._utils._rebuild_tensor_v2``, ``torch.float32``):
    the names PyTorch uses, so torch.load resolves them to its own objects."""
    _cache: Dict[Tuple[str, str], "_Global"] = {}

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle requires a callable in a reduce tuple
        raise TypeError("a stand-in for a PyTorch global; not callable")

    @classmethod
    def get(cls, module: str, name: str) -> "_Global":
        key = (module, name)
        if key not in cls._cache:
            cls._cache[key] = cls(module, name)
        return cls._cache[key]


class _StorageRef:
    def __init__(self, key: str, dtype_name: str, location: str, numel: int) -> None:
        self.key, self.dtype_name, self.location, self.numel = key, dtype_name, location, numel


class CheckpointPickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """Pickles like torch.save: tensors as _rebuild_tensor_v2 over persistent storage ids,
    parameters through _rebuild_parameter, dtypes / devices / Size by PyTorch's names."""

    def __init__(self, file: Any, protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: Dict[str, Tuple[Tensor, int]] = {}  # key -> (tensor, numel)
        self._keys: Dict[Tuple[str, int], _StorageRef] = {}
        self._refs: List[_StorageRef] = []  # keeps ids of the refs alive during dump

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageRef:
            if obj.dtype_name in _DTYPE_TO_STORAGE:
                return ("storage", _Global.get("torch", _DTYPE_TO_STORAGE[obj.dtype_name]),
                        obj.key, obj.location, obj.numel)
            # dtypes without a legacy storage class (uint16/32/64): an untyped storage of
            # bytes, the dtype travels in _rebuild_tensor_v3 (as torch writes them)
            return ("storage", _Global.get("torch.storage", "UntypedStorage"), obj.key,
                    obj.location, obj.numel * _ITEMSIZE[obj.dtype_name])
        return None

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        ts = _ts()
        if type(obj) is _Global or type(obj) is type(ts.float32):
            x = self.memo.get(id(obj))
            if x is not None:
                self.write(self.get(x[0]))
                return
            module, name = (obj.module, obj.name) if type(obj) is _Global else ("torch", str(obj))
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj: Any) -> Any:
        ts = _ts()
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is ts.Size:
            return _Global.get("torch", "Size"), (tuple(obj),)
        if type(obj).__name__ == "Device" and type(obj).__module__.startswith("tessera"):
            return _Global.get("torch", "device"), (str(obj),)
        return NotImplemented

    def _storage_ref(self, t: Tensor) -> _StorageRef:
        dt = str(t.dtype)
        if dt not in _ITEMSIZE:
            raise TypeError(f"save: tensors of dtype {dt} cannot be saved "
                            f"(tessera saves {sorted(_ITEMSIZE)})")
        nbytes, ptr = int(t._storage_nbytes()), int(t._storage_ptr())
        dev = t.device
        location = "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"
        ident = (location, ptr)
        ref = self._keys.get(ident) if nbytes else None
        if ref is not None:
            if ref.dtype_name != dt:
                raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                   "same data as different types")
            return ref
        ref = _StorageRef(str(len(self.storages)), dt, location, nbytes // t.element_size())
        self.storages[ref.key] = (t, ref.numel)
        if nbytes:
            self._keys[ident] = ref
        self._refs.append(ref)
        return ref

    def _reduce_tensor(self, t: Tensor) -> Any:
        attrs = getattr(t, "__dict__", {})
        is_param = attrs.get("_is_param") is True
        state = {k: v for k, v in attrs.items()
                 if k not in TRANSIENT_ATTRS and k != "_is_param"}
        hooks: Any = collections.OrderedDict()
        if is_param:
            data = t.detach()
            if state:
                return (_Global.get("torch._utils", "_rebuild_parameter_with_state"),
                        (data, t.requires_grad, hooks, state))
            return _Global.get("torch._utils", "_rebuild_parameter"), (data, t.requires_grad,
                                                                       hooks)
        args = (self._storage_ref(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                bool(t.requires_grad), hooks)
        func = _Global.get("torch._utils", "_rebuild_tensor_v2")
        if str(t.dtype) not in _DTYPE_TO_STORAGE:
            func = _Global.get("torch._utils", "_rebuild_tensor_v3")
            args = args + (t.dtype,)
        if state:
            return (_Global.get("torch._tensor", "_rebuild_from_type_v2"),
                    (func, _Global.get("torch", "Tensor"), args, state))
        return func, args


def _storage_bytes(t: Tensor, numel: int) -> memoryview:
    ts = _ts()
    whole = ts.as_strided(t.detach(), (numel,), (1,), 0)
    if whole.device.type != "cpu":
        whole = whole.to("cpu")
    arr = np.ascontiguousarray(whole.numpy())
    if sys.byteorder != "little":
        arr = arr.byteswap()
    return memoryview(arr.reshape(-1).view(np.uint8))


def _archive_name(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and stem.isascii() and stem.replace("_", "a").replace("-", "a").isalnum():
            return stem
    return "archive"


def save_zip(obj: Any, f: Any, pickle_protocol: int) -> None:
    """torch.save's zip format, to a path or a binary file object."""
    buf = io.BytesIO()
    pickler = CheckpointPickler(buf, pickle_protocol)
    pickler.dump(obj)
    if hasattr(f, "write"):
        _write_archive(f, _archive_name(f), buf.getvalue(), pickler.storages)
    else:
        with open(f, "wb") as fh:
            _write_archive(fh, _archive_name(f), buf.getvalue(), pickler.storages)


def _write_archive(fh: Any, archive: str, pkl: bytes,
                   storages: Dict[str, Tuple[Tensor, int]]) -> None:
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED,
                         allowZip64=True) as zf:
        def record(name: str, data: Any) -> None:
            full = f"{archive}/{name}"
            info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            n = len(data)
            zip64 = n * 1.05 > zipfile.ZIP64_LIMIT
            start = zf.fp.tell() + 30 + len(full.encode("utf-8")) + (20 if zip64 else 0)
            pad = -(start + 4) % ALIGNMENT  # torch's "FB" padding field: aligned data
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            info.file_size = n
            with zf.open(info, mode="w", force_zip64=zip64) as dest:
                dest.write(data)

        record("data.pkl", pkl)
        record(".format_version", b"1")
        record(".storage_alignment", str(ALIGNMENT).encode())
        record("byteorder", b"little")
        for key, (t, numel) in storages.items():
            record(f"data/{key}", _storage_bytes(t, numel))
        record("version", b"3\n")
        record(".data/serialization_id", uuid.uuid4().hex.encode()[:40].ljust(40, b"0"))
