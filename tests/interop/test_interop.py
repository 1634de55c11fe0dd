"""Zero-copy interop: the buffer protocol, __array__, and DLPack both ways (NumPy, PyTorch, and a
hand-built ctypes producer that checks the ABI and the deleter contract directly)."""
from __future__ import annotations

import array
import ctypes
import enum
import gc
import threading
import weakref

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, arrays, shapes, strided_views

# ---------------------------------------------------------------- helpers


def shares(t: ts.Tensor, a) -> bool:
    """True when tensor `t` and array/torch tensor `a` view the same first element."""
    ptr = a.data_ptr() if isinstance(a, torch.Tensor) else a.__array_interface__["data"][0]
    return t.data_ptr() == ptr


_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Py_buffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
                ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)), ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(Py_buffer), ctypes.c_int]
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(Py_buffer)]


def get_buffer(obj, flags: int) -> dict:
    """PyObject_GetBuffer with explicit PEP 3118 flags (memoryview always asks for everything)."""
    view = Py_buffer()
    _get_buffer(obj, ctypes.byref(view), flags)  # ctypes.pythonapi raises the Python error
    try:
        n = view.ndim
        return {"len": view.len, "format": view.format, "readonly": view.readonly,
                "shape": tuple(view.shape[:n]) if view.shape else None,
                "strides": tuple(view.strides[:n]) if view.strides else None}
    finally:
        _release_buffer(ctypes.byref(view))


def capsule_name(cap) -> str:
    for name in ("dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned"):
        if _capsule_is_valid(cap, name.encode()):
            return name
    raise AssertionError("not a DLPack capsule")


# The DLPack ABI, written independently of csrc/interop/dlpack.h from the published spec.
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


_DELETER_V = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER_V), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]

READ_ONLY, IS_COPIED = 1, 2
DL_CODES = {"bool": (6, 8), "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
            "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
            "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
            "complex64": (5, 64), "complex128": (5, 128)}


def managed(cap) -> DLManagedTensorVersioned:
    return DLManagedTensorVersioned.from_address(_capsule_get_pointer(cap, b"dltensor_versioned"))


class FakeProducer:
    """A DLPack producer built with ctypes over a NumPy buffer: counts deleter calls, and can
    describe any dtype code, device, byte offset, strides (or NULL), flags, version and an
    ndim other than len(shape) (a lying producer)."""

    def __init__(self, base: np.ndarray, shape, strides=None, *, code=2, bits=32, lanes=1,
                 byte_offset=0, flags=0, device=(1, 0), version=(1, 0), legacy=False,
                 null_data=False, null_shape=False, ndim=None):
        self.base = base
        self.deleted = 0
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        dl = DLTensor(None if null_data else base.ctypes.data, DLDevice(*device),
                      len(shape) if ndim is None else ndim,
                      DLDataType(code, bits, lanes), None if null_shape else self._shape,
                      self._strides, byte_offset)
        self.legacy = legacy
        if legacy:
            self._deleter = _DELETER(self._on_delete)
            self.m = DLManagedTensor(dl, None, self._deleter)
        else:
            self._deleter = _DELETER_V(self._on_delete)
            self.m = DLManagedTensorVersioned(version[0], version[1], None, self._deleter, flags, dl)

    def _on_delete(self, _ptr) -> None:
        self.deleted += 1

    def __dlpack__(self, **kwargs):
        name = b"dltensor" if self.legacy else b"dltensor_versioned"
        self.capsule = _capsule_new(ctypes.addressof(self.m), name, None)  # no destructor
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def np_of(dtype: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)


# ---------------------------------------------------------------- buffer protocol

FORMATS = {"bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B",
           "uint16": "H", "uint32": "I", "uint64": "Q", "float16": "e", "float32": "f",
           "float64": "d", "complex64": "Zf", "complex128": "Zd"}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_buffer_format_shape_strides(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = ts.asarray(a, copy=True)
    m = memoryview(t)
    assert m.format == FORMATS[dtype]
    assert m.shape == (2, 3) and m.strides == (3 * a.itemsize, a.itemsize)
    assert m.itemsize == a.itemsize and not m.readonly and m.nbytes == a.nbytes
    back = np.asarray(m)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    back[1, 2] = back[0, 0]  # the buffer is the tensor's memory
    np.testing.assert_array_equal(t.numpy()[1, 2], a[0, 0])


@given(st.data())
def test_buffer_strided_views(data):
    a = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES)), shapes()))
    v = strided_views(data.draw, a)
    t = ts.asarray(v)
    m = memoryview(t)
    assert m.shape == v.shape and m.strides == v.strides
    np.testing.assert_array_equal(np.asarray(m), v)


def test_buffer_transposed_and_flipped():
    t = ts.asarray(np.arange(12.0).reshape(3, 4), copy=True)
    tt = ts.permute_dims(t, (1, 0))
    assert memoryview(tt).strides == (8, 32)
    np.testing.assert_array_equal(np.asarray(tt), np.arange(12.0).reshape(3, 4).T)
    f = ts.flip(t, axis=1)
    assert memoryview(f).strides == (32, -8)
    np.testing.assert_array_equal(np.asarray(f), np.arange(12.0).reshape(3, 4)[:, ::-1])
    assert memoryview(tt).tobytes() == np.arange(12.0).reshape(3, 4).T.tobytes()


def test_buffer_contiguity_requests():
    t = ts.asarray(np.arange(6.0).reshape(2, 3), copy=True)
    flat = np.frombuffer(t, dtype=np.float64)  # PyBUF_SIMPLE: needs C-contiguous memory
    flat[0] = 42.0
    assert t.numpy()[0, 0] == 42.0
    with pytest.raises(BufferError, match="contiguous"):
        np.frombuffer(ts.permute_dims(t, (1, 0)), dtype=np.float64)
    f = ts.flip(t, axis=1)
    PyBUF_STRIDES, PyBUF_C, PyBUF_F, PyBUF_ANY = 0x18, 0x38, 0x58, 0x98
    assert get_buffer(f, PyBUF_STRIDES)["strides"] == (24, -8)
    for flags in (PyBUF_C, PyBUF_F, PyBUF_ANY, 0):
        with pytest.raises(BufferError, match="contiguous"):
            get_buffer(f, flags)
    tt = ts.permute_dims(t, (1, 0))
    assert get_buffer(tt, PyBUF_F)["strides"] == (8, 24)
    assert get_buffer(tt, PyBUF_ANY)["shape"] == (3, 2)
    with pytest.raises(BufferError, match="C-contiguous"):
        get_buffer(tt, PyBUF_C)
    simple = get_buffer(t, 0)  # PyBUF_SIMPLE: no shape, strides or format
    assert simple["shape"] is None and simple["strides"] is None and simple["format"] is None
    assert simple["len"] == 48


def test_buffer_zero_d_and_empty():
    m = memoryview(ts.asarray(3.5))
    assert m.ndim == 0 and m.shape == () and np.asarray(m) == np.float32(3.5)
    e = memoryview(ts.zeros((0, 3)))
    assert e.shape == (0, 3) and e.nbytes == 0 and np.asarray(e).shape == (0, 3)


def test_buffer_readonly():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = ts.asarray(a)
    m = memoryview(t)
    assert m.readonly
    with pytest.raises(TypeError):
        m[0] = 1.0
    assert not np.asarray(t).flags.writeable
    with pytest.raises((BufferError, TypeError)):
        ctypes.c_char.from_buffer(t)  # asks for a writable buffer


def test_buffer_bfloat16_raises_with_hint():
    t = ts.asarray([1.0, 2.0]).astype(ts.bfloat16)
    with pytest.raises(BufferError, match="bfloat16.*hint"):
        memoryview(t)
    # NumPy falls back to __array__ (ml_dtypes) for it.
    np.testing.assert_array_equal(np.asarray(t).astype(np.float32), [1.0, 2.0])


def test_buffer_keeps_tensor_alive():
    t = ts.asarray(np.arange(1000.0), copy=True)
    w = weakref.ref(t)
    m = memoryview(t)
    del t
    gc.collect()
    assert w() is not None
    assert m[999] == 999.0
    m.release()
    gc.collect()
    assert w() is None


# ---------------------------------------------------------------- __array__ and asarray


def test_array_protocol_shares_and_copies():
    t = ts.asarray(np.arange(4.0), copy=True)
    a = np.asarray(t)
    a[0] = 7.0
    assert t.numpy()[0] == 7.0
    c = np.array(t)
    c[1] = -1.0
    assert t.numpy()[1] == 1.0
    assert np.shares_memory(t.__array__(), np.asarray(t))
    assert not np.shares_memory(t.__array__(copy=True), np.asarray(t))


def test_numpy_method_shares_unless_forced():
    t = ts.asarray([1.0, 2.0])
    assert np.shares_memory(t.numpy(), np.asarray(t))
    f = t.numpy(force=True)
    f[0] = 9.0
    assert t.numpy()[0] == 1.0


def test_array_protocol_dtype_and_copy_false():
    t = ts.asarray([1.5, 2.5])
    np.testing.assert_array_equal(t.__array__(np.float64), [1.5, 2.5])
    assert t.__array__(np.float64).dtype == np.float64
    assert np.shares_memory(t.__array__(np.float32, copy=False), np.asarray(t))
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(np.float64, copy=False)
    with pytest.raises(ValueError):
        np.asarray(t, dtype=np.float64, copy=False)
    b = t.astype(ts.bfloat16)
    np.testing.assert_array_equal(b.__array__(np.float32), [1.5, 2.5])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_asarray_numpy_shares_memory(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = ts.asarray(a)
    assert shares(t, a) and t.shape == (2, 3)
    a[1, 1] = a[0, 1]
    assert t.numpy()[1, 1] == a[0, 1]
    assert not shares(ts.asarray(a, copy=True), a)


def test_asarray_buffer_objects():
    ba = bytearray(b"\x01\x02\x03")
    t = ts.asarray(ba)
    assert t.dtype == ts.uint8 and t.shape == (3,)
    ba[0] = 9
    assert t.numpy()[0] == 9
    arr = array.array("d", [1.0, 2.0])
    ta = ts.asarray(arr)
    arr[1] = 5.0
    assert ta.dtype == ts.float64 and ta.numpy()[1] == 5.0
    tm = ts.asarray(memoryview(ts.asarray([1, 2, 3])))
    assert tm.dtype == ts.int64 and tm.numpy().tolist() == [1, 2, 3]
    tb = ts.asarray(b"ab")
    assert tb._is_readonly()


# ---------------------------------------------------------------- DLPack export


def test_dlpack_device():
    assert ts.asarray([1.0]).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("max_version,name", [(None, "dltensor"), ((0, 8), "dltensor"),
                                              ((1, 0), "dltensor_versioned"),
                                              ((1, 3), "dltensor_versioned"),
                                              ((2, 0), "dltensor_versioned")])
def test_dlpack_capsule_kind(max_version, name):
    cap = ts.asarray([1.0]).__dlpack__(max_version=max_version)
    assert capsule_name(cap) == name
    if name == "dltensor_versioned":
        m = managed(cap)
        assert (m.major, m.minor) == (1, 0)


@pytest.mark.parametrize("dtype", ALL_DTYPES + ["bfloat16"])
def test_dlpack_export_abi(dtype):
    src = ts.asarray(np.arange(6).reshape(2, 3).astype(np_of(dtype) if dtype != "bfloat16" else np.float32))
    t = ts.permute_dims(src.astype(getattr(ts, dtype)), (1, 0))
    cap = t.__dlpack__(max_version=(1, 0))
    m = managed(cap)
    dl = m.dl_tensor
    assert (dl.device.device_type, dl.device.device_id) == (1, 0)
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (*DL_CODES[dtype], 1)
    assert dl.ndim == 2 and [dl.shape[0], dl.shape[1]] == [3, 2]
    assert [dl.strides[0], dl.strides[1]] == [1, 3]  # elements, not bytes
    assert dl.data + dl.byte_offset == t.data_ptr()
    assert m.flags == 0


def test_dlpack_export_flags():
    a = np.arange(3.0)
    a.flags.writeable = False
    ro = ts.asarray(a)
    assert managed(ro.__dlpack__(max_version=(1, 0))).flags == READ_ONLY
    t = ts.asarray([1.0, 2.0])
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    m = managed(cap)
    assert m.flags == IS_COPIED and m.dl_tensor.data != t.data_ptr()
    assert managed(ro.__dlpack__(max_version=(1, 0), copy=True)).flags == IS_COPIED
    # a legacy capsule cannot say read-only: a copy when allowed, BufferError when not
    cap = ro.__dlpack__()
    dl = DLManagedTensor.from_address(_capsule_get_pointer(cap, b"dltensor")).dl_tensor
    assert dl.data != a.ctypes.data and dl.shape[0] == 3
    assert not np.shares_memory(np.from_dlpack(_Legacy(ro)), a)
    with pytest.raises(BufferError, match="read-only"):
        ro.__dlpack__(copy=False)


class _Legacy:
    """Wraps a producer so consumers see an old-style __dlpack__ (no keywords)."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, stream=None):
        return self.x.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def test_dlpack_export_argument_errors():
    t = ts.asarray([1.0, 2.0])
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=-1)
    with pytest.raises(BufferError, match="device"):
        t.__dlpack__(dl_device=(2, 0))
    assert capsule_name(t.__dlpack__(max_version=(1, 0), dl_device=(1, 0))) == "dltensor_versioned"
    with pytest.raises(BufferError, match="device"):
        t.__dlpack__(dl_device=(1, 1))
    for bad in (1, (1,), ("a", 0), "1.0"):
        with pytest.raises(TypeError, match="max_version"):
            t.__dlpack__(max_version=bad)
    with pytest.raises(TypeError, match="dl_device"):
        t.__dlpack__(dl_device="cpu")

    class CPU(enum.IntEnum):
        kDLCPU = 1

    assert capsule_name(t.__dlpack__(max_version=[1, 0], dl_device=(CPU.kDLCPU, 0))) == "dltensor_versioned"
    with pytest.raises(TypeError):
        t.__dlpack__(None)  # keyword-only


def test_dlpack_negative_strides_export_a_copy():
    t = ts.asarray(np.arange(5.0), copy=True)
    f = ts.flip(t)
    m = managed(f.__dlpack__(max_version=(1, 0)))
    assert m.flags == IS_COPIED and m.dl_tensor.strides[0] == 1
    np.testing.assert_array_equal(torch.from_dlpack(f).numpy(), [4.0, 3.0, 2.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.from_dlpack(f), [4.0, 3.0, 2.0, 1.0, 0.0])
    with pytest.raises(BufferError, match="negative strides"):
        f.__dlpack__(max_version=(1, 0), copy=False)


def test_unconsumed_capsule_releases_tensor():
    a = np.arange(4.0)
    w = weakref.ref(a)
    t = ts.asarray(a)
    del a
    caps = [t.__dlpack__(max_version=(1, 0)), t.__dlpack__()]
    del t
    gc.collect()
    assert w() is not None  # the capsules' managed tensors keep the storage alive
    del caps
    gc.collect()
    assert w() is None


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_to_numpy_via_dlpack(dtype):
    t = ts.asarray(np.arange(6).reshape(2, 3).astype(dtype), copy=True)
    for view in (t, ts.permute_dims(t, (1, 0))):
        n = np.from_dlpack(view)
        assert n.dtype == np.dtype(dtype) and shares(view, n)
        np.testing.assert_array_equal(n, view.numpy())
    n = np.from_dlpack(t)
    n[0, 0] = n[1, 2]
    assert t.numpy()[0, 0] == n[1, 2]


TORCH_DTYPES = ALL_DTYPES + ["bfloat16"]


def _ts_of(dtype: str, shape=(2, 3)) -> ts.Tensor:
    base = np.arange(int(np.prod(shape))).reshape(shape)
    if dtype == "bfloat16":
        return ts.asarray(base.astype(np.float32)).astype(ts.bfloat16)
    return ts.asarray(base.astype(dtype), copy=True)


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_to_torch_shares_memory(dtype):
    t = _ts_of(dtype)
    for view in (t, ts.permute_dims(t, (1, 0)), ts.asarray(np.arange(10.0)[::3])):
        x = torch.from_dlpack(view)
        assert x.data_ptr() == view.data_ptr() and tuple(x.shape) == view.shape
        assert x.stride() == view.stride()
    x = torch.from_dlpack(t)
    assert str(x.dtype) == f"torch.{dtype}"
    x[0, 0] = x[1, 2]
    assert ts.asarray(x[0, 0]).item() == ts.asarray(x[1, 2]).item()
    assert torch.equal(torch.from_dlpack(t)[0, 0], x[1, 2])


@given(st.data())
def test_round_trips_hypothesis(data):
    """ts -> NumPy/PyTorch -> ts over drawn dtypes, shapes (0-d, empty) and strided views."""
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    v = strided_views(data.draw, data.draw(arrays(dtype, shapes())))
    t = ts.asarray(v)
    n = np.from_dlpack(t)
    x = torch.from_dlpack(t)
    np.testing.assert_array_equal(n, v)
    np.testing.assert_array_equal(x.numpy(), v)
    assert ts.from_dlpack(n).shape == v.shape and ts.from_dlpack(x).shape == v.shape
    np.testing.assert_array_equal(ts.from_dlpack(x).numpy(), v)
    if v.size > 1 and all(s >= 0 for s in v.strides):  # zero-copy all the way
        assert x.data_ptr() == t.data_ptr() == ts.from_dlpack(x).data_ptr()
        assert n.ctypes.data == t.data_ptr() == ts.from_dlpack(n).data_ptr()


def test_to_torch_zero_d_and_empty():
    x = torch.from_dlpack(ts.asarray(2.5))
    assert x.shape == () and x.item() == 2.5
    e = torch.from_dlpack(ts.zeros((0, 4)))
    assert e.shape == (0, 4)


def test_exported_memory_outlives_producer():
    t = ts.asarray(np.arange(1000.0), copy=True)
    x = torch.from_dlpack(t)
    n = np.from_dlpack(t)
    del t
    gc.collect()
    assert x[999].item() == 999.0 and n[999] == 999.0
    x[0] = -5.0
    assert n[0] == -5.0


# ---------------------------------------------------------------- DLPack import


@given(st.data())
def test_from_numpy_dlpack(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    a = data.draw(arrays(dtype, shapes()))
    v = strided_views(data.draw, a)
    t = ts.from_dlpack(v)
    assert t.shape == v.shape and t.dtype == getattr(ts, dtype)
    np.testing.assert_array_equal(t.numpy(), v)
    if v.size:  # zero-copy, negative strides included
        assert shares(t, v) and t.strides == v.strides


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_from_torch_dlpack(dtype):
    x = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    for view in (x, x.T, x[:, 1::2], x[1], x[0, 0], x[:0]):
        t = ts.from_dlpack(view)
        assert t.shape == tuple(view.shape) and t.dtype == getattr(ts, dtype)
        assert t.stride() == view.stride()
        if view.numel():
            assert t.data_ptr() == view.data_ptr()
        got = t.astype(ts.float32).numpy() if dtype == "bfloat16" else t.numpy()
        want = view.float().numpy() if dtype == "bfloat16" else view.numpy()
        np.testing.assert_array_equal(got, want)


def test_from_torch_write_through_both_ways():
    x = torch.zeros(4)
    t = ts.from_dlpack(x)
    x[1] = 3.0
    assert t.numpy()[1] == 3.0
    np.asarray(t)[2] = 7.0  # write through tessera's memory
    assert x[2].item() == 7.0
    ts._C._fill_(t, 1.5)
    assert torch.equal(x, torch.full((4,), 1.5))


def test_round_trip_keeps_the_same_memory():
    t = ts.asarray(np.arange(6.0).reshape(2, 3), copy=True)
    back = ts.from_dlpack(torch.from_dlpack(t))
    assert back.data_ptr() == t.data_ptr()
    back2 = ts.from_dlpack(np.from_dlpack(ts.permute_dims(t, (1, 0))))
    assert back2.data_ptr() == t.data_ptr() and back2.stride() == (1, 3)
    x = torch.arange(5)
    assert torch.from_dlpack(ts.from_dlpack(x)).data_ptr() == x.data_ptr()


def test_producer_deleted_consumer_lives():
    x = torch.arange(1000, dtype=torch.float64)
    t = ts.from_dlpack(x)
    del x
    gc.collect()
    assert t.numpy()[999] == 999.0
    a = np.arange(1000.0)
    w = weakref.ref(a)
    t2 = ts.from_dlpack(a)
    del a
    gc.collect()
    assert w() is not None and t2.numpy()[500] == 500.0
    del t2
    gc.collect()
    assert w() is None  # NumPy's deleter ran once the last view died


def test_broadcast_zero_strides_both_ways():
    b = ts.broadcast_to(ts.asarray([1.0, 2.0, 3.0]), (4, 3))
    x = torch.from_dlpack(b)
    assert x.stride() == (0, 1) and x.data_ptr() == b.data_ptr()
    assert np.from_dlpack(b).strides == (0, 4)
    t = ts.from_dlpack(torch.arange(3.0).expand(4, 3))
    assert t.stride() == (0, 1)
    np.testing.assert_array_equal(t.numpy(), np.broadcast_to(np.arange(3.0), (4, 3)))


def test_last_view_dies_in_another_thread():
    a = np.arange(8.0)
    w = weakref.ref(a)
    box = [ts.from_dlpack(a)]
    del a
    th = threading.Thread(target=box.clear)  # NumPy's deleter then runs in that thread
    th.start()
    th.join()
    gc.collect()
    assert w() is None


def test_readonly_import():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = ts.from_dlpack(a)
    assert t._is_readonly() and shares(t, a)
    with pytest.raises(ValueError, match="read-only"):
        ts._C._fill_(t, 0.0)


def test_from_dlpack_copy_semantics():
    x = torch.arange(4.0)
    t = ts.from_dlpack(x, copy=True)
    assert t.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])
    assert ts.from_dlpack(x, copy=False).data_ptr() == x.data_ptr()
    assert ts.from_dlpack(x, device="cpu").data_ptr() == x.data_ptr()
    if not ts.cuda.is_available():  # a CPU-only build refuses the device
        with pytest.raises(RuntimeError, match="not available"):
            ts.from_dlpack(x, device="cuda")
    t0 = ts.asarray([1.0])
    alias = ts.from_dlpack(t0)
    assert alias is not t0 and alias.data_ptr() == t0.data_ptr()
    assert ts.from_dlpack(t0, copy=True).data_ptr() != t0.data_ptr()


def test_from_dlpack_legacy_producer_and_capsule():
    a = np.arange(4.0)
    t = ts.from_dlpack(_Legacy(a))
    assert shares(t, a)
    t2 = ts.from_dlpack(_Legacy(a), copy=True)
    assert not shares(t2, a)
    cap = a.__dlpack__(max_version=(1, 0))
    t3 = ts.from_dlpack(cap)
    assert shares(t3, a) and capsule_name(cap) == "used_dltensor_versioned"
    with pytest.raises(ValueError, match="already consumed"):
        ts.from_dlpack(cap)
    cap = a.__dlpack__()
    ts.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"


def test_from_dlpack_errors():
    with pytest.raises(AttributeError, match="__dlpack__"):
        ts.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="PyCapsule"):
        ts._C._from_dlpack_capsule(object())


def test_asarray_routes_dlpack_producers():
    x = torch.arange(6.0).reshape(2, 3)
    t = ts.asarray(x)
    assert t.data_ptr() == x.data_ptr()
    assert ts.asarray(x, copy=True).data_ptr() != x.data_ptr()
    assert ts.asarray(x, dtype=ts.float64).dtype == ts.float64
    with pytest.raises(ValueError, match="copy=False"):
        ts.asarray(x, dtype=ts.float64, copy=False)


# ---------------------------------------------------------------- the ctypes producer


@pytest.mark.parametrize("dtype", ALL_DTYPES + ["bfloat16"])
def test_fake_producer_dtypes_and_deleter_once(dtype):
    base = np.arange(6).astype(np_of(dtype))
    code, bits = DL_CODES[dtype]
    p = FakeProducer(base, (2, 3), None, code=code, bits=bits)  # NULL strides: C-contiguous
    t = ts.from_dlpack(p)
    assert t.shape == (2, 3) and t.stride() == (3, 1) and t.dtype == getattr(ts, dtype)
    assert capsule_name(p.capsule) == "used_dltensor_versioned"
    view = ts.permute_dims(t, (1, 0))
    del t
    gc.collect()
    assert p.deleted == 0
    want = base.reshape(2, 3).T.astype(np.float64)
    np.testing.assert_array_equal(view.astype(ts.float64).numpy(), want)
    del view
    gc.collect()
    assert p.deleted == 1


def test_fake_producer_byte_offset_negative_strides_readonly():
    base = np.arange(10, dtype=np.float32)
    p = FakeProducer(base, (3,), (-2,), byte_offset=8 * 4, flags=READ_ONLY)
    t = ts.from_dlpack(p)
    np.testing.assert_array_equal(t.numpy(), [8.0, 6.0, 4.0])
    assert t._is_readonly() and t.stride() == (-2,)
    del t
    gc.collect()
    assert p.deleted == 1
    legacy = FakeProducer(base, (2, 2), (1, 2), legacy=True)
    tl = ts.from_dlpack(legacy)
    np.testing.assert_array_equal(tl.numpy(), [[0.0, 2.0], [1.0, 3.0]])
    del tl
    gc.collect()
    assert legacy.deleted == 1


def test_fake_producer_null_data_and_shape():
    empty = FakeProducer(np.zeros(1, np.float32), (0, 3), None, null_data=True)
    t = ts.from_dlpack(empty)
    assert t.shape == (0, 3) and t.numpy().shape == (0, 3) and (t + 1.0).shape == (0, 3)
    del t
    gc.collect()
    assert empty.deleted == 1
    scalar = FakeProducer(np.full(1, 2.5, np.float32), (), None, null_shape=True)
    t0 = ts.from_dlpack(scalar)
    assert t0.shape == () and t0.item() == 2.5
    bad = FakeProducer(np.zeros(2, np.float32), (2,), None, null_shape=True)
    with pytest.raises(ValueError, match="shape is NULL"):
        ts.from_dlpack(bad)
    assert bad.deleted == 0 and capsule_name(bad.capsule) == "dltensor_versioned"


def test_fake_producer_misaligned_is_copied():
    base = np.arange(8, dtype=np.float32)
    p = FakeProducer(base, (3,), (1,), byte_offset=2)  # not a multiple of 4 bytes
    with pytest.raises(ValueError, match="aligned"):
        ts.from_dlpack(p, copy=False)
    assert capsule_name(p.capsule) == "dltensor_versioned" and p.deleted == 0
    t = ts.from_dlpack(p)
    want = np.frombuffer(base.tobytes()[2:14], dtype=np.float32)
    np.testing.assert_array_equal(t.numpy(), want)
    assert p.deleted == 1  # the copy needs the producer no more


@pytest.mark.parametrize("kw,err,match", [
    (dict(code=2, bits=8), TypeError, "no tessera equivalent"),
    (dict(code=3, bits=64), TypeError, "no tessera equivalent"),
    (dict(lanes=4), TypeError, "lanes"),
    pytest.param(dict(device=(2, 0)), RuntimeError, "CUDA",
                 marks=pytest.mark.skipif(ts.cuda.is_available(),
                                          reason="a CUDA build imports CUDA producers")),
    (dict(device=(4, 0)), RuntimeError, "does not support"),
    (dict(version=(2, 0)), BufferError, "DLPack 2.0"),
])
def test_fake_producer_errors_leave_capsule_unconsumed(kw, err, match):
    p = FakeProducer(np.zeros(4, np.float32), (4,), (1,), **kw)
    with pytest.raises(err, match=match):
        ts.from_dlpack(p)
    assert capsule_name(p.capsule) == "dltensor_versioned" and p.deleted == 0


# ---------------------------------------------------------------- aliases across imports


@pytest.mark.parametrize("importer", [ts.asarray, ts.from_dlpack])
@pytest.mark.parametrize("window", ["reversed", "shifted_right", "shifted_left", "every_other"])
def test_copy_from_an_imported_alias_of_itself(importer, window):
    """copy_ sees overlap by address: an import of x's own memory has its own Storage."""
    x = ts.arange(12).astype(ts.float64)
    a = np.asarray(x)
    want = np.arange(12.0)
    if window == "reversed":
        dst, src = x, importer(a[::-1])
        want = want[::-1].copy()
    elif window == "shifted_right":
        dst, src = x[1:], importer(a[:-1])
        want[1:] = np.arange(11.0)
    elif window == "shifted_left":
        dst, src = x[:-1], importer(a[1:])
        want[:-1] = np.arange(1.0, 12.0)
    else:
        dst, src = x[::2], importer(a[1::2].copy() if importer is ts.from_dlpack else a[1::2])
        want[::2] = np.arange(1.0, 12.0, 2)
    dst.copy_(src)
    np.testing.assert_array_equal(np.asarray(x), want)


@pytest.mark.parametrize("key", [np.s_[::-1], np.s_[::2], np.s_[1:, ::-3], np.s_[::-1, 2:]])
def test_asarray_of_a_strided_numpy_view_spans_its_bytes(key):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = base[key]
    t = ts.asarray(v)
    assert shares(t, v) and t.tolist() == v.tolist()
    # The storage starts at the view's lowest element and ends at its highest.
    ptrs = [v.ctypes.data + int(np.dot(idx, v.strides)) for idx in np.ndindex(v.shape)]
    s = t.untyped_storage()
    assert s.data_ptr() == min(ptrs) and s.nbytes() == max(ptrs) + 4 - min(ptrs)
    # as_strided over the whole storage from its start reads exactly those bytes, and no more.
    n = s.nbytes() // 4
    flat = np.frombuffer(
        (ctypes.c_float * n).from_address(s.data_ptr()), dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(t.as_strided((n,), (1,), 0)), flat)
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.as_strided((n + 1,), (1,), 0)


def test_as_strided_stays_inside_the_storage():
    x = ts.arange(6.0)
    assert x.as_strided((2, 3), (3, 1)).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert x[2:].as_strided((2,), (2,)).tolist() == [2, 4]
    assert x.as_strided((0,), (1,), 100).shape == (0,)
    for size, stride, off in [((10,), (1,), 0), ((2,), (1,), 5), ((3, 2), (2, 1), 1)]:
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.as_strided(size, stride, off)


def test_from_dlpack_of_a_tessera_tensor_is_a_new_detached_alias():
    w = ts.ones((3,), requires_grad=True)
    r = ts.from_dlpack(w)
    assert r is not w and not r.requires_grad and r.data_ptr() == w.data_ptr()
    r.requires_grad_()
    assert w.requires_grad and w.is_leaf
    c = ts.from_dlpack(w, copy=True)
    assert c.data_ptr() != w.data_ptr() and not c.requires_grad and c.tolist() == [1.0] * 3
