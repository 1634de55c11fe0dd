"""ts.save / ts.load and the weights-only allow-list (PyTorch's ``torch.serialization``).

``save`` writes PyTorch's zip checkpoint format (_checkpoint_zip), which ``torch.load``
reads with ``weights_only=True``; a path ending in ``.safetensors`` (or ``metadata=``) gets
the safetensors format (_safetensors). ``load`` tells the formats apart by their content:
a zip archive, a safetensors header, or tessera's older pickle files (``TESSERA-PICKLE``).
With ``weights_only=True`` (the default, as torch 2.6+) the pickle is read by the restricted
unpickler (_weights_only_unpickler) with PyTorch's allow-list plus the user's safe globals.
See docs/design.md, "Checkpoint files".
"""
from __future__ import annotations

import builtins as _builtins
import collections as _collections
import os as _os
import sys as _sys
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

import numpy as _np

from ._C import Tensor
from ._safetensors import load_metadata  # noqa: F401  (public: ts.serialization.load_metadata)

_PathLike = _t.Union[str, "_os.PathLike[str]"]
_SafeGlobal = _t.Union[_t.Callable[..., _t.Any], _t.Tuple[_t.Callable[..., _t.Any], str]]
LEGACY_PICKLE_MAGIC = b"TESSERA-PICKLE\n"  # tessera's own pickle files before the zip format

_safe_globals: set = set()


def add_safe_globals(safe_globals: List[_SafeGlobal]) -> None:
    """Marks globals (classes, functions, or (object, "module.qualname") pairs) as safe for
    ``load(weights_only=True)``, as ``torch.serialization.add_safe_globals``."""
    global _safe_globals
    _safe_globals = _safe_globals.union(set(safe_globals))


def get_safe_globals() -> List[_SafeGlobal]:
    """The globals added with add_safe_globals (and not cleared)."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forgets every global added with add_safe_globals."""
    global _safe_globals
    _safe_globals = set()


class safe_globals:
    """``with safe_globals([...]):`` allows the globals for weights-only loads inside the
    block only (torch.serialization.safe_globals)."""

    def __init__(self, safe_globals: List[_SafeGlobal]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        global _safe_globals
        _safe_globals = _safe_globals - set(self.safe_globals)


def get_unsafe_globals_in_checkpoint(f: Any) -> List[str]:
    """The globals a checkpoint (path or binary file object) names that
    ``load(weights_only=True)`` would refuse with the current safe globals, read from its
    pickle opcodes without running anything (torch.serialization's function of that name)."""
    import pickle
    import pickletools
    from . import _checkpoint_zip
    from ._weights_only_unpickler import default_allowed_globals, map_python2_name
    raw = f.read() if hasattr(f, "read") else open(_os.fspath(f), "rb").read()
    name = str(getattr(f, "name", f))
    if raw.startswith(_checkpoint_zip.ZIP_MAGIC):
        data = _checkpoint_zip.ZipReader(raw, name, False).record("data.pkl")
    elif raw.startswith(LEGACY_PICKLE_MAGIC):
        data = raw[len(LEGACY_PICKLE_MAGIC):]
    else:
        raise ValueError(f"get_unsafe_globals_in_checkpoint: {name} is not a pickled checkpoint")
    allowed = {f"{m}.{n}" for m, n in default_allowed_globals()} | set(_user_globals())
    found: List[str] = []
    strings: List[str] = []
    try:
        for op, arg, _ in pickletools.genops(data):
            if isinstance(arg, str) and "UNICODE" in op.name:
                strings.append(arg)
            if op.name in ("GLOBAL", "STACK_GLOBAL"):
                module, attr = arg.split(" ", 1) if op.name == "GLOBAL" else strings[-2:]
                path = ".".join(map_python2_name(module, attr))
                if path not in allowed and path not in found:
                    found.append(path)
    except (ValueError, IndexError) as e:
        raise pickle.UnpicklingError(f"get_unsafe_globals_in_checkpoint: {name}: malformed "
                                     f"pickle ({e})") from None
    return found


def _legacy_globals() -> Dict[Tuple[str, str], Any]:
    """What tessera's TESSERA-PICKLE files name: tensors were NumPy arrays rebuilt by
    _rebuild_tensor. Allowed (as exact pairs) only when reading such a file."""
    import importlib
    from ._weights_only_unpickler import NotCallable
    rc: Dict[Tuple[str, str], Any] = {
        ("tessera.serialization", "_rebuild_tensor"): _rebuild_tensor,
        ("numpy", "ndarray"): NotCallable(_np.ndarray), ("numpy", "dtype"): _np.dtype,
    }
    for mod in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        rc[(mod, "_reconstruct")] = _empty_array_to_build(m._reconstruct)
        rc[(mod, "scalar")] = m.scalar
    from ._dtypes import _dtype_by_name
    rc[("tessera._dtypes", "_dtype_by_name")] = _dtype_by_name
    rc[("tessera", "_dtype_by_name")] = _dtype_by_name
    try:
        import ml_dtypes
        rc[("ml_dtypes", "bfloat16")] = ml_dtypes.bfloat16
    except ImportError:
        pass
    return rc


def _empty_array_to_build(reconstruct: Any) -> Any:
    """NumPy's _reconstruct as its pickles call it, (ndarray, (0,), b'b'): an empty array that
    BUILD fills (no array of a size from the file before its data is checked)."""
    def _reconstruct(cls: Any, shape: Any, typecode: Any) -> Any:
        if cls is not _np.ndarray or shape not in ((0,), 0):
            import pickle
            raise pickle.UnpicklingError(f"_reconstruct: expected (numpy.ndarray, (0,), ...) as "
                                         f"NumPy pickles arrays, got ({cls!r:.80}, "
                                         f"{shape!r:.80}, ...)")
        return reconstruct(cls, shape, typecode)
    return _reconstruct


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False,
         *, metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes `obj` to a path or a binary file object as torch.save does: PyTorch's zip
    checkpoint (tensors keep their dtype, shape, strides and storage sharing; torch.load
    reads it with weights_only=True). A path ending in ``.safetensors``, or `metadata`,
    writes a flat {str: tensor} dict in the safetensors format instead."""
    from . import _checkpoint_zip, _safetensors
    if pickle_module is not None and pickle_module is not __import__("pickle"):
        raise ValueError("save: tessera pickles with the standard pickle module only")
    if not _use_new_zipfile_serialization:
        raise ValueError("save: tessera writes only the zip checkpoint format "
                         "(_use_new_zipfile_serialization=True)")
    if type(pickle_protocol) is not int or not 2 <= pickle_protocol <= 5:
        raise ValueError(f"save: pickle_protocol must be an int in [2, 5], got "
                         f"{pickle_protocol!r}")
    is_st = isinstance(f, (str, _os.PathLike)) and _os.fspath(f).endswith(".safetensors")
    if metadata is not None or is_st:
        _safetensors.save_safetensors(obj, f, metadata)
    else:
        _checkpoint_zip.save_zip(obj, f, pickle_protocol)


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: Optional[bool] = None, mmap: Optional[bool] = None,
         device: Any = None, **pickle_load_args: Any) -> Any:
    """Reads a checkpoint from a path or a binary file object, as torch.load: PyTorch's zip
    format (written by torch.save or ts.save), a safetensors file (an ordered
    {name: tensor} dict) or tessera's older pickle files, told apart by content.

    weights_only (default True, as torch 2.6+) unpickles only PyTorch's allow-list and the
    globals added with add_safe_globals / safe_globals; anything else raises
    pickle.UnpicklingError. map_location (a device, a str, a {saved: wanted} dict or a
    callable(storage, location)) places the tensors; mmap=True maps the file's tensor data
    copy-on-write instead of reading it (paths only). A malformed file raises ValueError
    (container) or pickle.UnpicklingError (pickle) naming the file."""
    from . import _checkpoint_legacy, _checkpoint_zip, _safetensors
    weights_only = _check_weights_only(weights_only)
    where = device if device is not None else map_location
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(f"load: unexpected arguments {sorted(pickle_load_args)}")
    if pickle_module is not None and pickle_module is not __import__("pickle"):
        raise ValueError("load: tessera unpickles with the standard pickle module only")
    if hasattr(f, "read"):
        if mmap:
            raise ValueError("load: f must be a file path in order to use the mmap argument")
        src: Any = f.read()
        if not isinstance(src, (bytes, bytearray)):
            raise TypeError("load: the file object must be opened in binary mode")
        name = str(getattr(f, "name", "<file object>"))
        head, size = bytes(src[:4096]), len(src)
    else:
        src = _os.fspath(f)
        name = src
        size = _os.path.getsize(src)
        with open(src, "rb") as fh:
            head = fh.read(4096)
    user = _user_globals() if weights_only else {}
    if head.startswith(_checkpoint_zip.ZIP_MAGIC) or head.startswith(b"PK\x05\x06"):
        return _checkpoint_zip.load_zip(src, name, where, weights_only, bool(mmap), user,
                                        encoding)
    if head.startswith(LEGACY_PICKLE_MAGIC):
        data = src if isinstance(src, (bytes, bytearray)) else open(src, "rb").read()
        return _load_legacy_pickle(bytes(data[len(LEGACY_PICKLE_MAGIC):]), weights_only,
                                   where, user, encoding)
    if _safetensors.looks_like_safetensors(head, size) or head[8:9] == b"{" \
            or name.endswith(".safetensors") \
            or (size >= 8 and int.from_bytes(head[:8], "little") <= size - 8):  # the safetensors reader says what is wrong
        out = _safetensors.load_safetensors(src, name, bool(mmap))
        return out if where is None else _map_tensors(out, where)
    if head.startswith(_checkpoint_legacy.PREFIX):
        data = src if isinstance(src, (bytes, bytearray)) else open(src, "rb").read()
        if mmap:
            raise ValueError(f"load: {name}: mmap needs the zip format (PyTorch's legacy "
                             f"format is read into memory)")
        return _checkpoint_legacy.load_legacy(bytes(data), name, where, weights_only, user,
                                              encoding)
    if size < 8:
        raise ValueError(f"load: {name} is too short to be a safetensors file or a "
                         f"checkpoint ({size} bytes)")
    raise ValueError(f"load: {name} is not a checkpoint: neither a zip archive (torch.save), "
                     f"nor a safetensors file (header length "
                     f"{int.from_bytes(head[:8], 'little')} exceeds the file size "
                     f"{size}), nor a tessera pickle")


def _ts() -> Any:
    import tessera
    return tessera


def _user_globals() -> Dict[str, Any]:
    from ._weights_only_unpickler import user_allowed_globals
    return user_allowed_globals(_safe_globals)


def _load_legacy_pickle(data: bytes, weights_only: bool, where: Any, user: Dict[str, Any],
                        encoding: str) -> Any:
    import pickle
    if weights_only:
        from ._weights_only_unpickler import Unpickler
        obj = Unpickler(data, user_globals=user, extra_globals=_legacy_globals(),
                        build_types=(_np.ndarray, _np.dtype), encoding=encoding).load()
    else:
        obj = pickle.loads(data, encoding=encoding)
    return obj if where is None else _map_tensors(obj, where)


def _map_tensors(obj: Any, where: Any) -> Any:
    """map_location for formats without storages: each tensor goes through it (recursing
    into lists, tuples and dicts)."""
    from ._checkpoint_zip import restore_location
    from ._tensor import TRANSIENT_ATTRS
    move = restore_location(where)
    memo: Dict[int, Any] = {}

    def walk(o: Any) -> Any:
        if id(o) in memo:
            return memo[id(o)]
        if isinstance(o, Tensor):
            out: Any = move(o, "cpu" if o.device.type == "cpu" else str(o.device))
            if out is not o:
                for k, v in o.__dict__.items():
                    if k not in TRANSIENT_ATTRS:
                        setattr(out, k, v)
        elif isinstance(o, dict):  # made first, filled after: a dict or list may hold itself
            out = memo[id(o)] = type(o)() if isinstance(o, _collections.OrderedDict) else {}
            for k, v in o.items():
                out[k] = walk(v)
        elif isinstance(o, list):
            out = memo[id(o)] = []
            out.extend(walk(v) for v in o)
        elif isinstance(o, tuple) and not hasattr(o, "_fields"):
            out = tuple(walk(v) for v in o)
        else:
            out = o
        memo[id(o)] = out
        return out
    try:
        return walk(obj)
    except RecursionError:
        raise ValueError(f"load: map_location: the loaded object nests containers deeper than "
                         f"Python's recursion limit ({_sys.getrecursionlimit()}); hint: load "
                         f"without map_location and move the tensors yourself") from None


def _check_weights_only(value: Optional[bool]) -> bool:
    """torch 2.6+'s default: weights_only=True unless given."""
    if value is None:
        return True
    if not isinstance(value, _builtins.bool):
        raise TypeError(f"load: weights_only must be a bool, got {type(value).__name__}")
    return value


# Note [Pickling tensors through copyreg]
# The core Tensor class has no __reduce__, so copy.deepcopy(module) and pickle fail. A
# copyreg reducer (consulted by both pickle and copy) stores the values as a NumPy array
# plus requires_grad and the instance attributes (e.g. the Parameter marker), so a
# deep-copied Module keeps Parameters as Parameters and shared tensors stay shared
# within one copy (the memo). Storage sharing between distinct views is not preserved.
def _rebuild_tensor(values: _np.ndarray, dtype_name: str, requires_grad: bool,
                    attrs: Dict[str, Any], grad: Optional[Tensor] = None,
                    device: str = "cpu") -> Tensor:
    """Unpickles a tensor onto the device it was pickled from (as torch does: not the default
    device), so CUDA tensors travel through pickle, deepcopy and broadcast_object_list."""
    from ._dtypes import _BY_NAME
    from ._tensor import check_restored_attrs
    ts = _ts()
    if dtype_name not in _BY_NAME:
        raise ValueError(f"_rebuild_tensor: unknown dtype name {dtype_name!r}")
    check_restored_attrs(attrs, "_rebuild_tensor")  # _is_param, the Parameter marker, passes
    t = ts.asarray(values, device="cpu").astype(_BY_NAME[dtype_name])
    if device != "cpu":
        t = t.to(device)
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
    values = _np.array(t.detach().cpu().numpy(), copy=True)
    from ._tensor import TRANSIENT_ATTRS
    attrs = {k: v for k, v in getattr(t, "__dict__", {}).items() if k not in TRANSIENT_ATTRS}
    leaf = bool(t.requires_grad and t.is_leaf)
    grad = t.grad if leaf else None
    device = str(t.device)
    if device == "cpu":  # the 5-tuple older tessera versions read too
        return _rebuild_tensor, (values, str(t.dtype), leaf, attrs, grad)
    return _rebuild_tensor, (values, str(t.dtype), leaf, attrs, grad, device)


def _register_pickling() -> None:
    import copyreg
    copyreg.pickle(Tensor, _reduce_tensor)


_register_pickling()
