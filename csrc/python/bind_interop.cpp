// Bindings for interop: the buffer protocol, Tensor.__dlpack__/__dlpack_device__, and the
// capsule importer behind tessera.from_dlpack (python/tessera/_interop.py).
#include "interop/dlpack_convert.h"
#include "interop/py_buffer.h"
#include "interop/py_capsule.h"
#include "ops/copy.h"
#include "python/convert.h"

namespace ts::python {

namespace {

int copy_mode(py::handle copy) { return copy.is_none() ? -1 : copy.cast<bool>() ? 1 : 0; }

// A (major, minor) or (device_type, device_id) pair: a 2-sequence of ints (IntEnums included).
std::pair<int64_t, int64_t> int_pair(py::handle h, const char* what) {
  const bool ok = py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h) &&
                  py::len(h) == 2 && py::hasattr(h[py::int_(0)], "__index__") &&
                  py::hasattr(h[py::int_(1)], "__index__");
  if (!ok)
    throw py::type_error(std::string("__dlpack__: ") + what +
                         " must be None or a pair of ints, got " + py::repr(h).cast<std::string>());
  return {h[py::int_(0)].attr("__index__")().cast<int64_t>(),
          h[py::int_(1)].attr("__index__")().cast<int64_t>()};
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
  if (!dl_device.is_none()) {
    const auto [type, id] = int_pair(dl_device, "dl_device");
    const dlpack::DLDevice own = dlpack::to_dl_device(t.device());
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

py::tuple dlpack_device(const Tensor& t) {
  const dlpack::DLDevice d = dlpack::to_dl_device(t.device());
  return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
}

}  // namespace

void init_interop(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  install_buffer_protocol(cls);
  cls.def("__dlpack__", &dlpack_export, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          "Exports the tensor as a DLPack capsule (zero-copy unless copy=True).\n\n"
          "max_version >= (1, 0) gives a 'dltensor_versioned' capsule (read-only tensors are "
          "flagged read-only); None gives a legacy 'dltensor' capsule. stream must be None for "
          "CPU tensors. dl_device must be the tensor's device (BufferError otherwise).");
  cls.def("__dlpack_device__", &dlpack_device,
          "(device_type, device_id) in DLPack's enumeration: (1, 0) for CPU.");
  m.def(
      "_from_dlpack_capsule",
      [](py::handle cap, py::handle copy) { return dlpack::from_capsule(cap, copy_mode(copy)); },
      py::arg("capsule"), py::arg("copy") = py::none(),
      "A tensor over a DLPack capsule's memory; consumes the capsule (renames it 'used_...').");
}

}  // namespace ts::python
