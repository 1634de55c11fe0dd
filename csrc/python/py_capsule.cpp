#include "python/py_capsule.h"

#include "interop/dlpack_convert.h"
#include "ops/copy.h"

namespace ts::dlpack {

namespace {

// Note [Capsule ownership]: the producer's capsule owns the managed tensor until a consumer
// renames it to "used_..."; the destructor therefore deletes only an unrenamed capsule. It may
// run while an exception is being raised, so it must leave the error indicator as it was.
template <class M>
void destroy_unconsumed(PyObject* cap, const char* name) {
  if (!PyCapsule_IsValid(cap, name)) return;  // consumed: the consumer owns it now
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  auto* m = static_cast<M*>(PyCapsule_GetPointer(cap, name));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, tb);
}

void versioned_destructor(PyObject* cap) {
  destroy_unconsumed<DLManagedTensorVersioned>(cap, kVersionedCapsuleName);
}
void legacy_destructor(PyObject* cap) { destroy_unconsumed<DLManagedTensor>(cap, kCapsuleName); }

// The producer's deleter is a C function that may touch Python objects (NumPy's does): run it
// with the GIL, which the last view's destruction may not hold (e.g. in a worker thread).
template <class M>
std::function<void()> deleter_call(M* m) {
  return [m]() {
    if (!m->deleter) return;
    if (!Py_IsInitialized()) {  // interpreter gone: the memory dies with the process anyway
      return;
    }
    py::gil_scoped_acquire gil;
    m->deleter(m);
  };
}

Tensor finish(Tensor t, int copy, bool producer_copied) {
  return copy == 1 && !producer_copied ? clone(t) : t;
}

}  // namespace

py::capsule to_capsule(const Tensor& t, bool versioned, uint64_t flags) {
  if (versioned) {
    DLManagedTensorVersioned* m = export_versioned(t, flags);
    PyObject* cap = PyCapsule_New(m, kVersionedCapsuleName, &versioned_destructor);
    if (!cap) {
      m->deleter(m);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::capsule>(cap);
  }
  DLManagedTensor* m = export_legacy(t);
  PyObject* cap = PyCapsule_New(m, kCapsuleName, &legacy_destructor);
  if (!cap) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

Tensor from_capsule(py::handle capsule, int copy) {
  PyObject* cap = capsule.ptr();
  TS_CHECK(PyCapsule_CheckExact(cap), TypeError, "from_dlpack: expected a DLPack PyCapsule, got ",
           Py_TYPE(cap)->tp_name);
  const bool allow_copy = copy != 0;
  if (PyCapsule_IsValid(cap, kVersionedCapsuleName)) {
    auto* m =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedCapsuleName));
    if (m->version.major != kMajorVersion)
      throw py::buffer_error(str("from_dlpack: the producer exported DLPack ", m->version.major,
                                 ".", m->version.minor, "; tessera reads DLPack ", kMajorVersion,
                                 ".x"));
    const bool copied = (m->flags & kFlagIsCopied) != 0;
    Tensor t =
        import_tensor(m->dl_tensor, (m->flags & kFlagReadOnly) != 0, allow_copy, deleter_call(m),
                      [cap]() { PyCapsule_SetName(cap, kUsedVersionedCapsuleName); });
    return finish(std::move(t), copy, copied);
  }
  if (PyCapsule_IsValid(cap, kCapsuleName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kCapsuleName));
    Tensor t = import_tensor(m->dl_tensor, false, allow_copy, deleter_call(m),
                             [cap]() { PyCapsule_SetName(cap, kUsedCapsuleName); });
    return finish(std::move(t), copy, false);
  }
  const char* name = PyCapsule_GetName(cap);
  PyErr_Clear();
  const std::string n = name ? name : "<unnamed>";
  TS_CHECK(
      n != kUsedCapsuleName && n != kUsedVersionedCapsuleName, ValueError,
      "from_dlpack: this DLPack capsule was already consumed (a capsule can be imported once)");
  throw TypeError(str(
      "from_dlpack: expected a capsule named 'dltensor' or 'dltensor_versioned', got '", n, "'"));
}

}  // namespace ts::dlpack
