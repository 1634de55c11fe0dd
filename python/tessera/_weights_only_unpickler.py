"""The restricted unpickler behind ``load(weights_only=True)``: PyTorch's
``torch/_weights_only_unpickler.py`` rebuilt for tessera (see docs/design.md, "Checkpoint
files").

It interprets the pickle opcodes itself instead of subclassing ``pickle.Unpickler``, so no
code path can import a module or look up an attribute by a name from the file:

* ``GLOBAL`` / ``STACK_GLOBAL`` names are mapped from Python 2 (``__builtin__.set`` ->
  ``builtins.set``) first, then looked up as exact ``(module, qualified name)`` pairs in the
  allow-list (PyTorch's, with the ``torch.*`` names resolving to tessera's objects) or in the
  user's safe globals; a dotted name (``__builtins__.get``) never matches, nothing is
  imported, and the modules ``sys``, ``os``, ``posix`` and ``nt`` are refused even if listed.
* ``REDUCE`` / ``NEWOBJ`` call only allowed objects; ``BUILD`` sets state only on tensors'
  OrderedDicts and instances of allowed classes; items go only into lists, dicts and sets.
* Malformed input (truncated data, bad lengths, a wrong stack) raises
  ``pickle.UnpicklingError``; the interpreter does not recurse, so deep nesting cannot
  overflow the C stack.
"""
from __future__ import annotations

import _compat_pickle
import io
import pickle
import struct
from collections import Counter, OrderedDict
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from pickle import UnpicklingError

BLOCKED_MODULES = frozenset({"sys", "os", "posix", "nt"})
# Note [Hashing nested tuples]: hashing a tuple (a dict key, a set item) recurses through the
# tuples inside it in C, without a recursion check and without caching: a key of 100,000
# nested tuples crashes the interpreter (SIGSEGV, torch.load too) and one built from shared
# tuples (t = (t, t), 64 times, a few hundred bytes of pickle) takes 2^64 steps. So the tuples
# the unpickler builds are limited in nesting depth and in the size of their expansion (what a
# hash or an == walks), measured as they are built.
MAX_TUPLE_DEPTH = 1000

# Torch's dtype names (str(torch.<dtype>) without the prefix) that tessera has.
DTYPE_NAMES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
               "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128")
# Legacy typed storage class -> tessera dtype name.
STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
# Names on PyTorch's allow-list whose objects tessera cannot build: a GLOBAL naming one
# raises a clear error instead of "not an allowed global".
_UNSUPPORTED = (
    [("torch", d) for d in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                            "float8_e8m0fnu", "float4_e2m1fn_x2", "complex32", "quint8", "qint8",
                            "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2",
                            "bits8", "bits16", "uint1", "uint2", "uint3", "uint4", "uint5",
                            "uint6", "uint7", "int1", "int2", "int3", "int4", "int5", "int6",
                            "int7", "per_tensor_affine", "per_tensor_symmetric",
                            "per_channel_affine", "per_channel_symmetric",
                            "per_channel_affine_float_qparams", "QInt8Storage", "QUInt8Storage",
                            "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage",
                            "ComplexHalfStorage")]
    + [("torch._utils", f) for f in ("_rebuild_qtensor", "_rebuild_sparse_tensor",
                                     "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor",
                                     "_rebuild_wrapper_subclass",
                                     "_rebuild_device_tensor_from_numpy")])


class MalformedFile(ValueError):
    """A checkpoint's container (zip records, storages, tensor views) is malformed; raised
    through the unpickler unchanged."""


class DeviceUnavailable(RuntimeError):
    """A checkpoint's tensors were saved on a device this process cannot use (and
    map_location does not move them)."""


class StorageType:
    """What a storage class name in a checkpoint (``torch.FloatStorage``,
    ``torch.storage.UntypedStorage``) resolves to: the element dtype of the storage."""

    def __init__(self, name: str, dtype_name: Optional[str]) -> None:
        self.name, self.dtype_name = name, dtype_name

    def __repr__(self) -> str:
        return f"StorageType({self.name})"


class _Unsupported:
    def __init__(self, path: str) -> None:
        self.path = path


class NotCallable:
    """An allowed global the file may name as an argument (``numpy.ndarray`` for
    ``_reconstruct``) but not call through REDUCE or NEWOBJ (``ndarray((2**30,))`` would
    allocate a GiB from a few bytes)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj


def _check_numpy_state(inst: Any, state: Any) -> None:
    """BUILD on a NumPy array or dtype takes only the states NumPy's own pickles of numeric
    data hold: NumPy's __setstate__ trusts its state (an object array given a list shorter
    than its shape keeps NULL items and crashes the interpreter, SIGSEGV), so object dtypes,
    fields and subarrays are refused and the data must be raw bytes of the declared size."""
    import numpy as np
    if isinstance(inst, np.dtype):
        if not isinstance(state, tuple) or len(state) not in (8, 9) \
                or any(x is not None for x in state[2:5]) \
                or not all(type(x) is int and -1 <= x < 2**31 for x in state[5:8]):
            raise UnpicklingError(f"a NumPy dtype's state must be that of a numeric dtype (no "
                                  f"fields or subarrays), got {state!r:.200}")
        return
    if not isinstance(state, tuple) or len(state) != 5:
        raise UnpicklingError("a NumPy array's state must be (version, shape, dtype, "
                              "is_fortran, data)")
    _, shape, dtype, _, data = state
    if not isinstance(shape, tuple) or not all(type(n) is int and n >= 0 for n in shape) \
            or not isinstance(dtype, np.dtype) or dtype.hasobject or dtype.fields is not None \
            or dtype.subdtype is not None or not isinstance(data, (bytes, bytearray)):
        raise UnpicklingError(f"a NumPy array's state must hold a shape of non-negative ints, a "
                              f"numeric dtype and raw bytes (no object arrays), got shape "
                              f"{shape!r:.100}, dtype {dtype!r:.100} and data of type "
                              f"{type(data).__name__}")
    numel = 1
    for n in shape:
        numel *= n
    if numel * dtype.itemsize != len(data):
        raise UnpicklingError(f"a NumPy array of shape {shape} and dtype {dtype} holds "
                              f"{numel * dtype.itemsize} bytes, its data has {len(data)}")


def _bytearray(*args: Any) -> bytearray:
    # bytearray(n) would allocate n bytes on a number from the file: only bytes-like input.
    if not args or not isinstance(args[0], (bytes, bytearray, str)):
        raise UnpicklingError("bytearray can only be rebuilt from bytes")
    return bytearray(*args)


def _encode(obj: Any, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    import _codecs
    if not isinstance(obj, str):
        raise UnpicklingError("_codecs.encode can only encode a str")
    return _codecs.encode(obj, encoding, errors)


def _layout(name: str) -> Any:
    import tessera
    if name != "torch.strided":
        raise UnpicklingError(f"layout {name!r} is not supported by tessera (strided only)")
    return getattr(tessera, "strided", name)


def default_allowed_globals() -> Dict[Tuple[str, str], Any]:
    """PyTorch's weights-only allow-list as exact (module, name) pairs -> tessera objects."""
    import tessera
    from . import _checkpoint_zip as cz
    rc: Dict[Tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("collections", "Counter"): Counter,
        ("torch.nn.parameter", "Parameter"): tessera.nn.Parameter,
        ("torch.serialization", "_get_layout"): _layout,
        ("torch", "Size"): tessera.Size,
        ("torch", "Tensor"): tessera.Tensor,
        ("torch", "device"): tessera.device,
        ("_codecs", "encode"): _encode,
        ("builtins", "bytearray"): _bytearray,
        ("builtins", "set"): set,
        ("builtins", "complex"): complex,
        ("torch._utils", "_rebuild_tensor"): cz.rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): cz.rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): cz.rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): cz.rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): cz.rebuild_parameter_with_state,
        ("torch._utils", "_rebuild_device_tensor_from_cpu_tensor"):
            cz.rebuild_device_tensor_from_cpu_tensor,
        ("torch._tensor", "_rebuild_from_type_v2"): cz.rebuild_from_type_v2,
        ("torch.storage", "UntypedStorage"): StorageType("UntypedStorage", "uint8"),
        ("torch.storage", "TypedStorage"): StorageType("TypedStorage", None),
    }
    for name in DTYPE_NAMES:
        rc[("torch", name)] = getattr(tessera, name)
    for cls, dt in STORAGE_DTYPES.items():
        rc[("torch", cls)] = StorageType(cls, dt)
    for key in _UNSUPPORTED:
        rc[key] = _Unsupported(".".join(key))
    return rc


def user_allowed_globals(entries: Iterable[Any]) -> Dict[str, Any]:
    """add_safe_globals entries -> {"module.qualname": object}, as torch keys them (an entry
    is an object, named by its __module__ and __qualname__, or an (object, "full.path")
    pair)."""
    rc: Dict[str, Any] = {}
    for f in entries:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(f[1])}")
            rc[f[1]] = f[0]
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


def map_python2_name(module: str, name: str) -> Tuple[str, str]:
    """Python 2 names (protocol 0-2 pickles) -> Python 3's, as pickle.Unpickler does with
    fix_imports (and torch's _read_global_instruction)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    if module in _compat_pickle.IMPORT_MAPPING:
        return _compat_pickle.IMPORT_MAPPING[module], name
    return module, name


def _hint(module: str, name: str) -> str:
    path = f"{module}.{name}"
    shown = name if module == "builtins" else path
    return (f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
            f"use `tessera.serialization.add_safe_globals([{shown}])` or the "
            f"`tessera.serialization.safe_globals([{shown}])` context manager to allowlist "
            f"this global if you trust this class/function.")


class Unpickler:
    """A pickle interpreter that resolves globals only through the allow-lists.

    `user_globals` maps "module.qualname" to objects (add_safe_globals);
    `extra_globals` maps exact (module, name) pairs (tessera's own older files);
    `persistent_load(pid)` resolves BINPERSID ids (storages); `build_types` are the extra
    types (besides allowed classes) whose instances BUILD may update."""

    def __init__(self, data: bytes, *, user_globals: Optional[Dict[str, Any]] = None,
                 extra_globals: Optional[Dict[Tuple[str, str], Any]] = None,
                 persistent_load: Optional[Callable[[Any], Any]] = None,
                 build_types: Tuple[type, ...] = (), encoding: str = "utf-8",
                 start: int = 0) -> None:
        self._file = io.BytesIO(data)
        self._file.seek(start)
        self._size = len(data)
        self.allowed = default_allowed_globals()
        if extra_globals:
            self.allowed.update(extra_globals)
        self.user = dict(user_globals or {})
        self.persistent_load = persistent_load
        self.build_types = build_types
        self.encoding = encoding
        ids = {id(v) for v in self.allowed.values() if not isinstance(v, NotCallable)} \
            | {id(v) for v in self.user.values()}
        self._callable_ids = ids
        self.memo: Dict[int, Any] = {}
        # id -> (tuple, depth, expanded size) of the nested tuples built (Note [Hashing nested
        # tuples]); an expansion may exceed the data only by a bounded factor.
        self._nested: Dict[int, Tuple[tuple, int, int]] = {}
        self._max_expansion = 4 * self._size + (1 << 20)

    # -- reading helpers: every length is checked against what is left of the data
    def _read(self, n: int) -> bytes:
        if n < 0 or n > self._size - self._file.tell():
            raise UnpicklingError(f"pickle data was truncated (wanted {n} bytes)")
        return self._file.read(n)

    def _readline(self) -> bytes:
        line = self._file.readline()
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated (no newline)")
        return line[:-1]

    def _unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    def _resolve(self, module: str, name: str) -> Any:
        module, name = map_python2_name(module, name)
        if module in BLOCKED_MODULES or module.split(".")[0] in BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {module}.{name} whose "
                                  f"module {module} is blocked.")
        obj = self.allowed.get((module, name))
        if obj is None:  # only ever an object the user listed, never an attribute lookup
            obj = self.user.get(f"{module}.{name}")
        if obj is None:
            raise UnpicklingError(_hint(module, name))
        if isinstance(obj, _Unsupported):
            raise UnpicklingError(f"{obj.path} is on PyTorch's allow-list but tessera cannot "
                                  f"load it (no such dtype, layout or tensor kind in tessera)")
        return obj.obj if isinstance(obj, NotCallable) else obj

    @property
    def position(self) -> int:
        """Where in the data the next pickle starts (after load)."""
        return self._file.tell()

    def _allowed_callable(self, obj: Any) -> bool:
        return id(obj) in self._callable_ids

    def load(self) -> Any:
        try:
            return self._load()
        except (UnpicklingError, DeviceUnavailable, MalformedFile):
            raise
        except (IndexError, KeyError, struct.error, UnicodeDecodeError, EOFError, TypeError,
                ValueError, OverflowError, AttributeError, MemoryError, RuntimeError,
                LookupError) as e:  # LookupError: an unknown codec named by the file
            raise UnpicklingError(f"malformed pickle data ({type(e).__name__}: {e})") from None

    def _tuple(self, items: Iterable[Any]) -> tuple:
        t = tuple(items)
        depth, size = 1, len(t)
        for x in t:
            if type(x) is tuple:
                _, d, n = self._nested.get(id(x), (x, 1, len(x)))
                depth, size = max(depth, d + 1), size + n
        if depth > 1:
            if depth > MAX_TUPLE_DEPTH or size > self._max_expansion:
                raise UnpicklingError(
                    f"tuples nested {depth} deep, {size} items when expanded (at most "
                    f"{MAX_TUPLE_DEPTH} deep and {self._max_expansion} items for "
                    f"{self._size} bytes of pickle): hashing or comparing them would crash or "
                    f"hang (a malformed or malicious file)")
            self._nested[id(t)] = (t, depth, size)
        return t

    def _pop_mark(self) -> List[Any]:
        if not self.metastack:
            raise UnpicklingError("pickle data has no MARK for this opcode")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _load(self) -> Any:  # noqa: C901 (one opcode per branch, as pickle.py)
        self.metastack: List[List[Any]] = []
        self.stack: List[Any] = []
        memo = self.memo
        while True:
            key = self._file.read(1)
            if not key:
                raise UnpicklingError("pickle data was truncated (no STOP)")
            op = key[0]
            stack = self.stack
            if op == pickle.PROTO[0]:
                proto = self._read(1)[0]
                if proto > 5:
                    raise UnpicklingError(f"unsupported pickle protocol: {proto}")
            elif op == pickle.FRAME[0]:
                self._read(8)  # frames are only a buffering hint
            elif op == pickle.STOP[0]:
                if not stack:
                    raise UnpicklingError("pickle data has an empty stack at STOP")
                return stack.pop()
            elif op in (pickle.GLOBAL[0], pickle.STACK_GLOBAL[0]):
                if op == pickle.GLOBAL[0]:
                    module = self._readline().decode("utf-8")
                    name = self._readline().decode("utf-8")
                else:
                    name, module = stack.pop(), stack.pop()
                    if type(module) is not str or type(name) is not str:
                        raise UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self._resolve(module, name))
            elif op == pickle.REDUCE[0]:
                args = stack.pop()
                func = stack[-1]
                if not self._allowed_callable(func) or isinstance(func, StorageType):
                    raise UnpicklingError(f"Trying to call reduce for unrecognized function "
                                          f"{func!r}")
                if type(args) is not tuple:
                    raise UnpicklingError("REDUCE arguments must be a tuple")
                stack[-1] = func(*args)
            elif op in (pickle.NEWOBJ[0], pickle.NEWOBJ_EX[0]):
                kwargs = stack.pop() if op == pickle.NEWOBJ_EX[0] else {}
                args = stack.pop()
                cls = stack.pop()
                if type(args) is not tuple or type(kwargs) is not dict:
                    raise UnpicklingError("NEWOBJ arguments must be a tuple")
                import tessera
                if cls is tessera.nn.Parameter:
                    stack.append(tessera.nn.Parameter(*args, **kwargs))
                elif cls is tessera.Tensor and not args and not kwargs:
                    stack.append(tessera.empty((0,)))
                elif isinstance(cls, type) and self._allowed_callable(cls) \
                        and not _is_extension_type(cls):
                    stack.append(cls.__new__(cls, *args, **kwargs))
                else:
                    raise UnpicklingError(f"Can only create new object for nn.Parameter or "
                                          f"classes allowlisted via `add_safe_globals` but got "
                                          f"{cls!r}")
            elif op == pickle.BUILD[0]:
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == pickle.MARK[0]:
                self.metastack.append(stack)
                self.stack = []
            elif op == pickle.POP[0]:
                stack.pop()
            elif op == pickle.POP_MARK[0]:
                self._pop_mark()
            elif op == pickle.DUP[0]:
                stack.append(stack[-1])
            elif op == pickle.APPEND[0]:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(stack[-1])}")
                stack[-1].append(item)
            elif op == pickle.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise UnpicklingError(
                        f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == pickle.SETITEM[0]:
                v, k = stack.pop(), stack.pop()
                self._check_dict("SETITEM")
                self.stack[-1][k] = v
            elif op == pickle.SETITEMS[0]:
                items = self._pop_mark()
                self._check_dict("SETITEMS")
                if len(items) % 2:
                    raise UnpicklingError("SETITEMS needs key/value pairs")
                for i in range(0, len(items), 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == pickle.ADDITEMS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not set:
                    raise UnpicklingError(f"Can only add items to sets, but got "
                                          f"{type(self.stack[-1])}")
                self.stack[-1].update(items)
            elif op == pickle.FROZENSET[0]:
                items = self._pop_mark()
                self.stack.append(frozenset(items))
            elif op == pickle.TUPLE[0]:
                items = self._pop_mark()
                self.stack.append(self._tuple(items))
            elif op == pickle.LIST[0]:
                items = self._pop_mark()
                self.stack.append(list(items))
            elif op == pickle.DICT[0]:
                items = self._pop_mark()
                if len(items) % 2:
                    raise UnpicklingError("DICT needs key/value pairs")
                self.stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
            elif op in (pickle.TUPLE1[0], pickle.TUPLE2[0], pickle.TUPLE3[0]):
                n = op - pickle.TUPLE1[0] + 1
                if len(stack) < n:
                    raise UnpicklingError("stack underflow")
                stack[-n:] = [self._tuple(stack[-n:])]
            elif op == pickle.NONE[0]:
                stack.append(None)
            elif op == pickle.NEWFALSE[0]:
                stack.append(False)
            elif op == pickle.NEWTRUE[0]:
                stack.append(True)
            elif op == pickle.EMPTY_TUPLE[0]:
                stack.append(())
            elif op == pickle.EMPTY_LIST[0]:
                stack.append([])
            elif op == pickle.EMPTY_DICT[0]:
                stack.append({})
            elif op == pickle.EMPTY_SET[0]:
                stack.append(set())
            elif op == pickle.BININT[0]:
                stack.append(self._unpack("<i"))
            elif op == pickle.BININT1[0]:
                stack.append(self._read(1)[0])
            elif op == pickle.BININT2[0]:
                stack.append(self._unpack("<H"))
            elif op == pickle.LONG1[0]:
                stack.append(pickle.decode_long(self._read(self._read(1)[0])))
            elif op == pickle.LONG4[0]:
                n = self._unpack("<i")
                if n > 1024:  # no checkpoint needs integers of more than 8192 bits
                    raise UnpicklingError(f"LONG4 of {n} bytes is too long")
                stack.append(pickle.decode_long(self._read(n)))
            elif op == pickle.BINFLOAT[0]:
                stack.append(self._unpack(">d"))
            elif op in (pickle.BINUNICODE[0], pickle.SHORT_BINUNICODE[0],
                        pickle.BINUNICODE8[0]):
                n = (self._unpack("<I") if op == pickle.BINUNICODE[0] else
                     self._read(1)[0] if op == pickle.SHORT_BINUNICODE[0] else
                     self._unpack("<Q"))
                stack.append(str(self._read(n), "utf-8", "surrogatepass"))
            elif op in (pickle.SHORT_BINSTRING[0], pickle.BINSTRING[0]):
                n = self._read(1)[0] if op == pickle.SHORT_BINSTRING[0] else self._unpack("<i")
                data = self._read(n)
                stack.append(data if self.encoding == "bytes" else
                             data.decode(self.encoding, "strict"))
            elif op in (pickle.SHORT_BINBYTES[0], pickle.BINBYTES[0], pickle.BINBYTES8[0],
                        pickle.BYTEARRAY8[0]):
                n = (self._read(1)[0] if op == pickle.SHORT_BINBYTES[0] else
                     self._unpack("<I") if op == pickle.BINBYTES[0] else self._unpack("<Q"))
                data = self._read(n)
                stack.append(bytearray(data) if op == pickle.BYTEARRAY8[0] else data)
            elif op == pickle.BINPERSID[0]:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(f"persistent_load id must be tuple or int, but got "
                                          f"{type(pid)}")
                if type(pid) is tuple and (not pid or _ascii(pid[0]) != "storage"):
                    raise UnpicklingError("Only persistent_load of storage is allowed")
                if self.persistent_load is None:
                    raise UnpicklingError("unsupported persistent id encountered")
                stack.append(self.persistent_load(pid))
            elif op in (pickle.BINGET[0], pickle.LONG_BINGET[0]):
                i = self._read(1)[0] if op == pickle.BINGET[0] else self._unpack("<I")
                if i not in memo:
                    raise UnpicklingError(f"memo key {i} not found")
                stack.append(memo[i])
            elif op in (pickle.BINPUT[0], pickle.LONG_BINPUT[0]):
                i = self._read(1)[0] if op == pickle.BINPUT[0] else self._unpack("<I")
                memo[i] = stack[-1]
            elif op == pickle.MEMOIZE[0]:
                memo[len(memo)] = stack[-1]
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    def _check_dict(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")

    def _build(self, inst: Any, state: Any) -> None:
        cls = type(inst)
        import numpy as np
        if isinstance(inst, (np.ndarray, np.dtype)):
            _check_numpy_state(inst, state)
        if cls is OrderedDict:
            if not isinstance(state, dict):
                raise UnpicklingError("OrderedDict state must be a dict")
            inst.__dict__.update(state)
        elif (self._allowed_callable(cls) and not _is_extension_type(cls)) \
                or isinstance(inst, self.build_types):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                if not isinstance(state, dict):
                    raise UnpicklingError("BUILD state must be a dict")
                inst.__dict__.update(state)
            if slotstate:
                if not isinstance(slotstate, dict):
                    raise UnpicklingError("BUILD slot state must be a dict")
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {cls}")


def _ascii(x: Any) -> Any:
    return x.decode("ascii") if isinstance(x, bytes) else x


def _is_extension_type(cls: type) -> bool:
    """A C++ (pybind11) class: its __new__ without __init__ or a second __setstate__ would
    leave or make an object with no C++ value behind it."""
    return type(cls).__name__ == "pybind11_type"
