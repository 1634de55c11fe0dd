"""PyTorch's legacy checkpoint format (torch.save before 1.6, or with
``_use_new_zipfile_serialization=False``), read by tessera.

Layout: five things one after another: a pickled magic number, the protocol version (1001),
a sys-info dict (byte order, type sizes), the object's pickle (storages as persistent ids
``('storage', torch.FloatStorage, key, location, numel, view_metadata)``), a pickled list
of storage keys, then for each key an 8-byte element count and the storage's raw bytes.
The tensors are built over zeroed buffers while the object unpickles, and the buffers are
filled in place afterwards, so views keep sharing their storage. Every count is checked
against the file size before anything is allocated.
"""
from __future__ import annotations

import pickle
import sys
from typing import Any, Dict, List

import numpy as np

from ._checkpoint_zip import _ITEMSIZE, LoadedStorage, _default_restore, _np_dtype
from ._weights_only_unpickler import MalformedFile, StorageType, Unpickler

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
PREFIX = b"\x80\x02\x8a\x0a" + MAGIC_NUMBER.to_bytes(10, "little")


def load_legacy(data: bytes, name: str, map_location: Any, weights_only: bool,
                user_globals: Dict[str, Any], encoding: str = "utf-8") -> Any:
    """torch.serialization._legacy_load for a file's bytes."""
    from .serialization import _map_tensors
    pos = 0

    def next_pickle(**kw: Any) -> Any:
        nonlocal pos
        u = Unpickler(data, start=pos, encoding=encoding, **kw)
        obj = u.load()
        pos = u.position
        return obj

    if next_pickle() != MAGIC_NUMBER:
        raise MalformedFile(f"load: {name}: invalid magic number; corrupt file?")
    version = next_pickle()
    if version != PROTOCOL_VERSION:
        raise MalformedFile(f"load: {name}: invalid legacy protocol version {version!r}")
    info = next_pickle()
    little = info.get("little_endian", True) if isinstance(info, dict) else True
    swap = bool(little) != (sys.byteorder == "little")
    storages: Dict[str, LoadedStorage] = {}
    locations: List[str] = []
    declared = 0  # bytes of all storages so far: together they must fit in the file

    def persistent_load(pid: Any) -> LoadedStorage:
        if type(pid) is not tuple or len(pid) != 6:
            raise pickle.UnpicklingError(f"load: {name}: unexpected persistent id {pid!r}")
        kind, stype, key, location, numel, view = pid
        if isinstance(kind, bytes):
            kind = kind.decode("ascii", "replace")
        if isinstance(location, bytes):
            location = location.decode("ascii", "replace")
        if kind != "storage" or not isinstance(stype, StorageType) or stype.dtype_name is None \
                or type(key) is not str or type(location) is not str or type(numel) is not int \
                or numel < 0:
            raise pickle.UnpicklingError(f"load: {name}: bad storage id {pid!r}")
        if view is not None:
            raise pickle.UnpicklingError(f"load: {name}: storage views (PyTorch < 0.4 files) "
                                         f"are not supported")
        if key in storages:
            return storages[key]
        nonlocal declared
        nbytes = numel * _ITEMSIZE[stype.dtype_name]
        declared += nbytes
        if declared > len(data):  # all storages together, not each: no N file-sized buffers
            raise MalformedFile(f"load: {name}: storage {key} declares {numel} elements; with "
                                f"the storages before it that is {declared} bytes, more than "
                                f"the file's {len(data)}")
        st = LoadedStorage(np.zeros(nbytes, np.uint8), location, False,
                           lambda t, loc: t, f"{name} (storage {key})")
        st.dtype_name = stype.dtype_name  # type: ignore[attr-defined]
        storages[key] = st
        locations.append(location)
        return st

    result = next_pickle(user_globals=user_globals if weights_only else {},
                         persistent_load=persistent_load) if weights_only else \
        _full_pickle(data, pos, persistent_load, encoding)
    if not weights_only:
        result, pos = result
    keys = next_pickle()
    if not isinstance(keys, list):
        raise MalformedFile(f"load: {name}: the storage key list is missing")
    filled = set()
    for key in keys:
        st = storages.get(key)
        if st is None:
            raise MalformedFile(f"load: {name}: storage key {key!r} was not in the pickle")
        if key in filled:  # its data twice: which copy a reader keeps differs between tools
            raise MalformedFile(f"load: {name}: storage key {key!r} is listed twice")
        filled.add(key)
        count = int.from_bytes(data[pos:pos + 8], "little")
        size = _ITEMSIZE[st.dtype_name]  # type: ignore[attr-defined]
        if pos + 8 > len(data) or count * size != st.raw.size \
                or pos + 8 + st.raw.size > len(data):
            raise MalformedFile(f"load: {name}: storage {key} data does not match its declared "
                             f"size or is truncated")
        st.raw[:] = np.frombuffer(data, np.uint8, st.raw.size, pos + 8)
        pos += 8 + st.raw.size
        if swap and size > 1:
            st.raw.view(_np_dtype(st.dtype_name)).byteswap(inplace=True)  # type: ignore
        if st.dtype_name == "bool":  # type: ignore[attr-defined]
            np.not_equal(st.raw, 0, out=st.raw.view(np.bool_))
    missing = [k for k in storages if k not in filled]
    if missing:  # they would load as zeros (torch: uninitialized memory)
        raise MalformedFile(f"load: {name}: storage(s) {missing[:8]} have no data in the file (a "
                            f"truncated or malformed file)")
    if map_location is not None:
        return _map_tensors(result, map_location)
    for loc in locations:
        if loc != "cpu":
            return _map_tensors(result, lambda t, _: _default_restore(t, loc))
    return result


def _full_pickle(data: bytes, pos: int, persistent_load: Any, encoding: str) -> Any:
    from ._checkpoint_zip import _FullUnpickler
    u = _FullUnpickler(data, persistent_load, start=pos, encoding=encoding)
    return u.load(), u.file.tell()
