// Bindings for interop: the buffer protocol, Tensor.__dlpack__/__dlpack_device__, and the
// capsule importer behind tessera.from_dlpack (python/tessera/_interop.py).
#include "core/device_backend.h"
#include "interop/dlpack_convert.h"
#include "python/py_buffer.h"
#include "python/py_capsule.h"
#include "ops/copy.h"
#include "python/convert.h"

namespace ts::python {

namespace {

// copy= of __dlpack__ / from_dlpack: None, True or False (a NumPy bool too); anything else is
// a TypeError rather than its truthiness.
int copy_mode(py::handle copy) {
  if (copy.is_none()) return -1;
  if (copy.ptr() == Py_True) return 1;
  if (copy.ptr() == Py_False) return 0;
  const py::handle np_bool = py::type::handle_of(copy);
  if (py::str(np_bool.attr("__name__")).cast<std::string>().rfind("bool", 0) == 0 &&
      py::hasattr(np_bool, "__module__") &&
      py::str(np_bool.attr("__module__")).cast<std::string>() == "numpy")
    return copy.cast<bool>() ? 1 : 0;
  throw py::type_error("copy must be True, False or None, got " +
                       py::str(np_bool.attr("__name__")).cast<std::string>() + " (" +
                       py::repr(copy).cast<std::string>() + ")");
}

// A (major, minor) or (device_type, device_id) pair: a 2-sequence of ints (IntEnums included).
// PyNumber_Index/PySequence_Fast keep this off Python-level attribute lookups (hot path).
std::pair<int64_t, int64_t> int_pair(py::handle h, const char* what) {
  auto fail = [&]() {
    PyErr_Clear();
    throw py::type_error(std::string("__dlpack__: ") + what +
                         " must be None or a pair of ints, got " + py::repr(h).cast<std::string>());
  };
  if (PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr())) fail();
  auto seq = py::reinterpret_steal<py::object>(PySequence_Fast(h.ptr(), ""));
  if (!seq || PySequence_Fast_GET_SIZE(seq.ptr()) != 2) fail();
  int64_t v[2];
  for (int i = 0; i < 2; ++i) {
    auto idx =
        py::reinterpret_steal<py::object>(PyNumber_Index(PySequence_Fast_GET_ITEM(seq.ptr(), i)));
    if (!idx) fail();
    v[i] = PyLong_AsLongLong(idx.ptr());
    if (v[i] == -1 && PyErr_Occurred()) fail();
  }
  return {v[0], v[1]};
}

// max_version=None (an old consumer) or a (major, minor) below 1.0 asks for a legacy capsule.
bool wants_versioned(py::handle max_version) {
  return !max_version.is_none() && int_pair(max_version, "max_version").first >= 1;
}

// Note [Negative strides]: DLPack allows negative strides and NumPy reads them, but PyTorch
// (through 2.13 at least) aborts the whole process importing them ("Storage size calculation
// overflowed"), and a producer cannot tell who consumes its capsule. Such tensors therefore go
// out as a contiguous copy (flagged IS_COPIED), or BufferError under copy=False.
bool has_negative_stride(const Tensor& t) {
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.dim(d) > 1 && t.strides()[d] < 0) return true;
  return false;
}

// Note [DLPack streams]: a CUDA consumer names the stream it will read on (1: the legacy
// default stream, 2: the per-thread default stream, another integer: a cudaStream_t, -1: no
// synchronization; None means the legacy default). Unless that is the producer's current
// stream, an event recorded on the producer's stream makes the consumer's stream wait for the
// work that writes the data.
void sync_consumer_stream(Device d, py::handle stream) {
  DeviceBackend& b = require_cuda("__dlpack__");
  int64_t s = 1;
  if (!stream.is_none()) {
    TS_CHECK(py::isinstance<py::int_>(stream), TypeError,
             "__dlpack__: stream must be None or an int for a CUDA tensor, got ",
             py::repr(stream).cast<std::string>());
    s = stream.cast<int64_t>();
    TS_CHECK(s == -1 || s >= 1, ValueError, "__dlpack__: stream ", s,
             " is not valid for CUDA (use None, -1, 1, 2 or a stream handle)");
  }
  if (s == -1) return;
  const uintptr_t consumer = s == 1 ? 0 : static_cast<uintptr_t>(s);
  const uintptr_t own = b.current_stream(d.index);
  if (consumer == own) return;
  const uintptr_t e = b.create_event(d.index, false);
  b.record_event(e, d.index, own);
  b.stream_wait_event(d.index, consumer, e);
  b.destroy_event(e);  // CUDA keeps a recorded event alive until the wait has used it
}

// Note [DLPack export]: per the array API spec, stream must be None on CPU; dl_device may only
// name the tensor's own device (no cross-device copies in a CPU build); copy=True exports a
// copy flagged IS_COPIED; copy=False never copies. A legacy capsule cannot say "read-only",
// so a read-only tensor goes out as a copy when copying is allowed, else BufferError.
// Negative strides likewise (Note [Negative strides]).
py::capsule dlpack_export(const Tensor& t, py::handle stream, py::handle max_version,
                          py::handle dl_device, py::handle copy) {
  const int mode = copy_mode(copy);
  const bool versioned = wants_versioned(max_version);
  if (!stream.is_none() && t.device().is_cpu())
    throw py::value_error("__dlpack__: stream must be None for a CPU tensor, got " +
                          py::repr(stream).cast<std::string>());
  if (!t.device().is_cpu()) sync_consumer_stream(t.device(), stream);
  if (!dl_device.is_none()) {
    const auto [type, id] = int_pair(dl_device, "dl_device");
    const dlpack::DLDevice own = dlpack::to_dl_device(t.device());
    if (type == dlpack::kDLCPU && !t.device().is_cpu() && mode != 0) {
      // A copy to the host on request (the spec allows a cross-device copy unless copy=False).
      return dlpack::to_capsule(to_device(t, Device{}), versioned, dlpack::kFlagIsCopied);
    }
    if (type != own.device_type || id != own.device_id)
      throw py::buffer_error("__dlpack__: cannot export a tensor on " + t.device().str() +
                             " to DLPack device (" + std::to_string(type) + ", " +
                             std::to_string(id) + "); hint: move it with x.to(device) first");
  }
  Tensor src = t;
  uint64_t flags = 0;
  const bool readonly = t.storage()->readonly;
  const bool negative = has_negative_stride(t);
  if (mode == 1 || (readonly && !versioned) || negative) {
    if (mode == 0)
      throw py::buffer_error(
          negative ? "__dlpack__: copy=False but the tensor has negative strides, which tessera "
                     "exports only as a copy (see Note [Negative strides]); hint: allow a copy"
                   : "__dlpack__: the tensor is read-only and a legacy (unversioned) DLPack "
                     "capsule cannot mark it so; hint: request max_version=(1, 0) or allow a copy");
    src = clone(t);
    flags |= dlpack::kFlagIsCopied;
  } else if (readonly) {
    flags |= dlpack::kFlagReadOnly;
  }
  return dlpack::to_capsule(src, versioned, flags);
}

// Note [Fast __dlpack__]: consumers always call __dlpack__ with keywords, and pybind11's
// keyword dispatch costs ~1 us, ten times the export itself. A plain METH_FASTCALL method
// parses the four keyword-only arguments directly.
PyObject* dlpack_fastcall(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  try {
    if (nargs != 0) throw py::type_error("__dlpack__() takes only keyword arguments");
    static const char* const names[] = {"stream", "max_version", "dl_device", "copy"};
    py::handle values[4] = {Py_None, Py_None, Py_None, Py_None};
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, i);
      int k = 0;
      while (k < 4 && PyUnicode_CompareWithASCIIString(key, names[k]) != 0) ++k;
      if (k == 4)
        throw py::type_error("__dlpack__() got an unexpected keyword argument " +
                             py::repr(key).cast<std::string>());
      values[k] = args[i];
    }
    // The Tensor lives in `self` (a reference, not a temporary, whatever GCC 13's
    // -Wdangling-reference guesses from the handle temporary).
    const py::handle h(self);
    const Tensor& t = h.cast<const Tensor&>();
    return dlpack_export(t, values[0], values[1], values[2], values[3]).release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyMethodDef dlpack_method_def = {
    "__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&dlpack_fastcall)),
    METH_FASTCALL | METH_KEYWORDS,
    "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
    "Exports the tensor as a DLPack capsule (zero-copy unless copy=True).\n\n"
    "max_version >= (1, 0) gives a 'dltensor_versioned' capsule (read-only tensors are flagged "
    "read-only); None gives a legacy 'dltensor' capsule. stream must be None for CPU tensors. "
    "dl_device must be the tensor's device (BufferError otherwise)."};

py::tuple dlpack_device(const Tensor& t) {
  const dlpack::DLDevice d = dlpack::to_dl_device(t.device());
  return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
}

}  // namespace

void init_interop(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  install_buffer_protocol(cls);
  auto descr = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &dlpack_method_def));
  if (!descr) throw py::error_already_set();
  cls.attr("__dlpack__") = descr;
  cls.def("__dlpack_device__", &dlpack_device,
          "(device_type, device_id) in DLPack's enumeration: (1, 0) for CPU.");
  m.def(
      "_from_dlpack_capsule",
      [](py::handle cap, py::handle copy) { return dlpack::from_capsule(cap, copy_mode(copy)); },
      py::arg("capsule"), py::arg("copy") = py::none(),
      "A tensor over a DLPack capsule's memory; consumes the capsule (renames it 'used_...').");
}

}  // namespace ts::python
