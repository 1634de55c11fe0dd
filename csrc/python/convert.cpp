#include "python/convert.h"

#include <climits>
#include <cstdio>
#include <fstream>
#include <string>

#include "ops/copy.h"

namespace ts::python {

bool to_scalar(py::handle h, Scalar& out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    out = Scalar::from_bool(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) {
      out = Scalar::from_int(v);
      return true;
    }
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!PyErr_Occurred()) {
        out = Scalar::from_uint(u);
        return true;
      }
      PyErr_Clear();
    }
    throw py::type_error("Python int " + py::repr(h).cast<std::string>() +
                         " is out of the int64/uint64 range");
  }
  if (PyFloat_Check(o)) {
    out = Scalar::from_double(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (PyComplex_Check(o)) {
    out = Scalar::from_complex({PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)});
    return true;
  }
  return false;
}

const Tensor& tensor_or_throw(py::handle h, const char* op, const char* what) {
  if (!py::isinstance<Tensor>(h))
    throw py::type_error(std::string(op) + ": " + what + " must be a Tensor, got " +
                         py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>());
  return h.cast<const Tensor&>();
}

bool to_operand(py::handle h, Tensor& out) {
  if (py::isinstance<Tensor>(h)) {
    out = h.cast<const Tensor&>();
    return true;
  }
  Scalar s;
  if (to_scalar(h, s)) {
    out = wrap_scalar(s);
    return true;
  }
  if (py::isinstance<py::array>(h) || PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) ||
      py::hasattr(h, "__array__")) {
    py::object asarray = py::module_::import("tessera").attr("asarray");
    out = asarray(h).cast<Tensor>();
    return true;
  }
  return false;
}

Tensor operand_or_throw(py::handle h, const char* op) {
  Tensor t;
  bool ok = false;
  try {
    ok = to_operand(h, t);
  } catch (py::error_already_set& e) {  // asarray refused it: say which op was called
    if (!e.matches(PyExc_Exception)) throw;
    py::object type = e.type();
    const std::string msg = std::string(op) + ": " + py::str(e.value()).cast<std::string>();
    PyErr_SetString(type.ptr(), msg.c_str());
    throw py::error_already_set();
  }
  if (!ok)
    throw py::type_error(std::string(op) + ": expected a tensor or a Python number, got " +
                         py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>());
  return t;
}

namespace {
// One dimension of a shape: an int (or __index__) that fits int64, else ValueError naming it.
int64_t dim_value(py::handle e, const char* what) {
  int overflow = 0;
  if (PyLong_CheckExact(e.ptr())) {  // the common case: no new reference
    const long long v = PyLong_AsLongLongAndOverflow(e.ptr(), &overflow);
    if (!overflow) return v;
  }
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(e.ptr()));
  if (!i) throw py::error_already_set();
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow)
    throw py::value_error(std::string(what) + ": dimension " + py::str(i).cast<std::string>() +
                          " is out of range for a 64-bit size");
  return v;
}

[[noreturn]] void throw_not_ints(py::handle h, const char* what) {
  throw py::type_error(std::string(what) + ": expected ints, got " +
                       py::repr(h).cast<std::string>());
}
}  // namespace

// (PyIndex_Check, not hasattr(h, "__index__"): a failed attribute lookup builds and drops an
// AttributeError, which was a tenth of a reshape's time.)
Shape to_shape(py::handle h, const char* what) {
  Shape s;
  PyObject* o = h.ptr();
  if (PyTuple_Check(o) || PyList_Check(o)) {  // the common case, read without an iterator
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); ++i) {
      py::object e = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(o, i));
      if (!PyIndex_Check(e.ptr())) throw_not_ints(h, what);
      s.push_back(dim_value(e, what));
    }
    return s;
  }
  if (PyIndex_Check(o) && !py::isinstance<py::sequence>(h)) {
    s.push_back(dim_value(h, what));
    return s;
  }
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    throw py::type_error(std::string(what) + ": expected an int or a sequence of ints, got " +
                         py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>());
  for (py::handle e : h) {
    if (!PyIndex_Check(e.ptr())) throw_not_ints(h, what);
    s.push_back(dim_value(e, what));
  }
  return s;
}

Device& default_device() {
  static Device d{};  // the CPU until ts.set_default_device
  return d;
}

Device to_device(py::handle h) {
  if (h.is_none()) return Device{};
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::str>(h)) return parse_device(h.cast<std::string>());
  if (py::hasattr(h, "type") && py::hasattr(h, "index")) {  // e.g. a torch.device
    const std::string t = py::str(h.attr("type"));
    py::object idx = h.attr("index");
    return parse_device(idx.is_none() ? t : t + ":" + py::str(idx).cast<std::string>());
  }
  throw py::type_error("device: expected 'cpu', 'cuda', 'cuda:N' or a tessera.Device, got " +
                       py::repr(h).cast<std::string>());
}

py::dtype numpy_dtype(DType d) {
  static py::object cache[kNumDTypes];
  py::object& c = cache[static_cast<int>(d)];
  if (!c) {
    if (d == DType::BFloat16) {
      py::object mld;
      try {
        mld = py::module_::import("ml_dtypes");
      } catch (py::error_already_set&) {
        throw py::type_error(
            "bfloat16 has no NumPy dtype without the ml_dtypes package: pip install ml_dtypes, "
            "or convert first with astype(x, tessera.float32)");
      }
      c = py::dtype::from_args(mld.attr("bfloat16"));
    } else {
      c = py::dtype(dtype_name(d));
    }
    c.inc_ref();  // lives for the interpreter's lifetime
  }
  return py::reinterpret_borrow<py::dtype>(c);
}

DType from_numpy_dtype(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'b':
      return DType::Bool;
    case 'i':
      return size == 1   ? DType::Int8
             : size == 2 ? DType::Int16
             : size == 4 ? DType::Int32
                         : DType::Int64;
    case 'u':
      return size == 1   ? DType::UInt8
             : size == 2 ? DType::UInt16
             : size == 4 ? DType::UInt32
                         : DType::UInt64;
    case 'f':
      if (size == 2) return DType::Float16;
      if (size == 4) return DType::Float32;
      if (size == 8) return DType::Float64;
      break;
    case 'c':
      if (size == 8) return DType::Complex64;
      if (size == 16) return DType::Complex128;
      break;
    case 'V':
      if (py::str(dt.attr("name")).cast<std::string>() == "bfloat16") return DType::BFloat16;
      break;
    default:
      break;
  }
  throw py::type_error("asarray: NumPy dtype " + py::str(dt).cast<std::string>() +
                       " has no tessera equivalent");
}

namespace {
// Note [Bool bytes]: a bool element is one byte that must be 0 or 1; kernels load it as C++
// bool, where any other byte is undefined behaviour (sum() counted 2 as 2, ~x of 2 was True).
// tessera normalizes at the boundary instead of in every kernel: an import from NumPy (and so
// from buffers, frombuffer and the file loaders, which go through NumPy) or DLPack checks the
// bytes (an OR over them, at memory speed) and, when one is neither 0 nor 1, imports a
// normalized copy (x != 0, what PyTorch and NumPy compute) or, with copy=False, raises.
// Bytes written into shared memory after the import are the writer's responsibility.
bool bool_bytes_normal(const py::array& arr) {
  if (arr.size() == 0) return true;
  if (arr.flags() & py::array::c_style) {
    const auto* p = static_cast<const uint8_t*>(arr.data());
    uint8_t any = 0;
    for (py::ssize_t i = 0; i < arr.size(); ++i) any |= p[i];
    return any <= 1;
  }
  return !arr.attr("view")("uint8").attr("__gt__")(1).attr("any")().cast<bool>();
}
}  // namespace

namespace {
// Note [Foreign memory]: NumPy builds an array over any address an object's
// __array_interface__ names without looking at it; reading a bogus one (a small integer, a
// never-mapped range, a shape or strides running past the object's memory) crashes the
// interpreter, in NumPy too. So an array whose memory no NumPy array owns and that hangs off a
// foreign object (its base chain ends neither at an owning ndarray nor at a buffer exporter
// or capsule, whose memory its C code manages) is checked against the process's memory map
// before tessera reads or shares it: every byte it reaches must be mapped readable, and memory
// mapped read-only makes a read-only tensor even when the object claimed it writable.

// 0: some byte of [lo, hi) is not mapped readable; 1: all readable; 2: all readable and
// writable. Without /proc/self/maps there is no way to tell: 2 (NumPy's own trust).
int mapped_access(uintptr_t lo, uintptr_t hi) {
  std::ifstream maps("/proc/self/maps");
  if (!maps) return 2;
  std::string line;
  uintptr_t need = lo;
  int access = 2;
  while (need < hi && std::getline(maps, line)) {  // the lines are sorted by address
    unsigned long long s = 0, e = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %4s", &s, &e, perms) != 3 || e <= need) continue;
    if (s > need || perms[0] != 'r') return 0;
    if (perms[1] != 'w') access = 1;
    need = static_cast<uintptr_t>(e);
  }
  return need >= hi ? access : 0;
}

// Checks (Note [Foreign memory]) the memory of `arr` when a foreign object lends it; may clear
// its writeable flag.
void check_foreign_memory(py::array& arr, const char* op) {
  if (arr.size() == 0) return;
  const auto& api = py::detail::npy_api::get();
  PyObject* a = arr.ptr();
  PyObject* owner = nullptr;
  for (;;) {
    const auto* proxy = py::detail::array_proxy(a);
    if (proxy->flags & py::detail::npy_api::NPY_ARRAY_OWNDATA_) return;
    owner = proxy->base;
    if (!owner || !api.PyArray_Check_(owner)) break;
    a = owner;
  }
  if (owner && PyCapsule_CheckExact(owner)) return;
  Shape shape;
  Strides bytes;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    shape.push_back(arr.shape(d));
    bytes.push_back(arr.strides(d));
  }
  const auto start0 = reinterpret_cast<uintptr_t>(arr.data());
  int64_t lo = 0, hi = 0;
  uintptr_t start = 0, end = 0;
  TS_CHECK(strided_extent(shape, bytes, 0, &lo, &hi), ValueError, op, ": the array's shape ",
           shape_str(shape), " and byte strides ", shape_str(bytes), " span more than 2^63 bytes");
  const bool in_space = !__builtin_add_overflow(start0, lo, &start) &&
                        !__builtin_add_overflow(start0, hi, &end) &&
                        !__builtin_add_overflow(end, static_cast<uintptr_t>(arr.itemsize()), &end);
  if (owner && PyObject_CheckBuffer(owner)) {
    // A buffer exporter manages its memory, but NumPy takes an __array_interface__ whose data
    // is a buffer without comparing the shape with the buffer's length (a (2**20,) float64
    // array over an 8-byte bytearray): the array must lie inside the buffer.
    Py_buffer view;
    if (PyObject_GetBuffer(owner, &view, PyBUF_SIMPLE) == 0) {
      const auto buf = reinterpret_cast<uintptr_t>(view.buf);
      const auto len = static_cast<uintptr_t>(view.len);
      const bool inside = in_space && start >= buf && end >= start && end - buf <= len;
      PyBuffer_Release(&view);
      TS_CHECK(inside, ValueError, op, ": an array of shape ", shape_str(shape),
               " and byte strides ", shape_str(bytes), " reaches outside the ", len,
               " bytes of the ", Py_TYPE(owner)->tp_name,
               " that holds its data; hint: its __array_interface__ names a wrong shape, "
               "strides or buffer");
      return;
    }
    PyErr_Clear();  // not a simple buffer: the memory map decides below
  }
  const int access = in_space ? mapped_access(start, end) : 0;
  if (access == 0) {
    char where[64];
    std::snprintf(where, sizeof where, "%#llx", static_cast<unsigned long long>(start0));
    throw ValueError(str(op, ": the memory of an object of type ",
                         owner ? Py_TYPE(owner)->tp_name : "ndarray", " (data pointer ", where,
                         ", shape ", shape_str(shape), ", byte strides ", shape_str(bytes),
                         ") is not valid memory: not all of it is mapped readable in this "
                         "process; hint: its __array_interface__ names a wrong data pointer, "
                         "shape or strides"));
  }
  if (access == 1 && arr.writeable())
    py::detail::array_proxy(arr.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
}
}  // namespace

Tensor from_numpy(py::array arr, int copy, const char* op) {
  check_foreign_memory(arr, op);
  const DType dt = from_numpy_dtype(arr.dtype());
  if (dt == DType::Bool && !bool_bytes_normal(arr)) {
    TS_CHECK(copy != 0, ValueError,
             "asarray: copy=False but the bool array holds bytes other "
             "than 0 and 1 (e.g. a uint8 array viewed as bool); tessera imports such data only "
             "as a normalized copy (x != 0); hint: pass arr != 0");
    arr = py::array(arr.attr("view")("uint8").attr("__ne__")(0));
    copy = 1;
  }
  const int64_t isz = itemsize(dt);
  Shape shape;
  Strides strides;
  bool aligned = (reinterpret_cast<uintptr_t>(arr.data()) % isz) == 0;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    shape.push_back(arr.shape(d));
    const int64_t sb = arr.strides(d);
    if (sb % isz != 0) aligned = false;
    strides.push_back(sb / isz);
  }
  const bool native = arr.dtype().attr("byteorder").cast<std::string>() != ">";
  if (copy != 1 && aligned && native) {
    // Zero-copy: the storage keeps the array alive; the release runs under the GIL. It spans
    // the bytes the view reaches, from its lowest element (negative strides reach below
    // arr.data(), steps beyond arr.nbytes()).
    // (np.lib.stride_tricks.as_strided makes any geometry: the arithmetic is checked.)
    const bool empty = arr.size() == 0;
    int64_t lo = 0, hi = 0, span = 0, lo_bytes = 0;
    if (!empty)
      TS_CHECK(strided_extent(shape, strides, 0, &lo, &hi) && mul_ok(lo, isz, &lo_bytes) &&
                   !__builtin_sub_overflow(hi, lo, &span) && add_ok(span, 1, &span) &&
                   mul_ok(span, isz, &span),
               ValueError, "asarray: the array's shape ", shape_str(shape), " and strides ",
               shape_str(strides), " span more than 2^63 bytes");
    char* first = static_cast<char*>(const_cast<void*>(arr.data())) + lo_bytes;
    PyObject* ref = arr.ptr();
    Py_INCREF(ref);
    auto storage = std::make_shared<Storage>(first, span, Device{}, [ref]() {
      py::gil_scoped_acquire g;
      Py_DECREF(ref);
    });
    storage->readonly = !arr.writeable();
    return Tensor::view_of(storage, shape, strides, empty ? 0 : -lo, dt);
  }
  TS_CHECK(copy != 0, ValueError, "asarray: copy=False but this array (",
           native ? "misaligned" : "non-native byte order", ") can only be imported by copying");
  py::array c = arr;
  if (!native) c = py::array(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
  c = py::array::ensure(c, py::array::c_style);
  Tensor out = Tensor::empty(shape, dt);
  if (out.nbytes()) std::memcpy(out.data_ptr(), c.data(), out.nbytes());
  return out;
}

py::array to_numpy(py::handle self_obj, const Tensor& t) {
  TS_CHECK(t.device().is_cpu(), TypeError, "numpy: the tensor is on ", t.device().str(),
           "; copy it to the host first with x.to('cpu')");
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(s * t.itemsize());
  // The array's base owns the storage itself, not the tensor: t.set_() or t.data = ... may
  // give the tensor other memory while the array still reads this (Note [Exported storage]).
  t.storage()->resizable = false;
  py::capsule owner(new StoragePtr(t.storage()),
                    [](void* p) { delete static_cast<StoragePtr*>(p); });
  py::array a(numpy_dtype(t.dtype()), shape, strides, t.data_ptr(), owner);
  if (t.storage()->readonly)
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace ts::python
