#include "python/py_buffer.h"

#include <cstring>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace ts::python {

namespace {

// Shape and strides (in bytes) the Py_buffer points into, and the storage that holds its
// memory (Note [Exported storage]); lives in view->internal until the consumer releases it.
struct BufferGeometry {
  BufferGeometry(int64_t n, StoragePtr s)
      : shape(new Py_ssize_t[n ? n : 1]), strides(new Py_ssize_t[n ? n : 1]),
        storage(std::move(s)) {}
  std::unique_ptr<Py_ssize_t[]> shape, strides;
  StoragePtr storage;
};

int fail(Py_buffer* view, PyObject* type, const std::string& msg) {
  view->obj = nullptr;
  PyErr_SetString(type, msg.c_str());
  return -1;
}

// Honors the consumer's flags the way PEP 3118 asks: refuse a writable view of read-only
// memory, and refuse a request for contiguity (or for no strides) the geometry cannot meet.
int check_request(Py_buffer* view, int flags, bool readonly) {
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && readonly)
    return fail(view, PyExc_BufferError,
                "buffer: the tensor is read-only, so it cannot export a writable buffer");
  struct {
    int flag;
    char order;
    const char* name;
  } req[] = {{PyBUF_C_CONTIGUOUS, 'C', "C-contiguous"},
             {PyBUF_F_CONTIGUOUS, 'F', "Fortran-contiguous"},
             {PyBUF_ANY_CONTIGUOUS, 'A', "contiguous"}};
  for (auto& r : req) {
    if ((flags & r.flag) == r.flag) {
      if (!PyBuffer_IsContiguous(view, r.order))
        return fail(view, PyExc_BufferError,
                    std::string("buffer: a ") + r.name +
                        " buffer was requested but the tensor is not; hint: use x.contiguous()");
      return 0;
    }
  }
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    if (!PyBuffer_IsContiguous(view, 'C'))
      return fail(view, PyExc_BufferError,
                  "buffer: the consumer cannot take strides and the tensor is not C-contiguous; "
                  "hint: use x.contiguous()");
    view->strides = nullptr;
  }
  if ((flags & PyBUF_ND) != PyBUF_ND) view->shape = nullptr;
  return 0;
}

extern "C" int tensor_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  if (view == nullptr) {
    PyErr_SetString(PyExc_BufferError, "buffer: NULL view");
    return -1;
  }
  std::memset(view, 0, sizeof(Py_buffer));
  const Tensor* tp = nullptr;
  try {
    tp = &py::handle(obj).cast<const Tensor&>();
  } catch (const std::exception& e) {
    return fail(view, PyExc_BufferError, std::string("buffer: ") + e.what());
  }
  const Tensor& t = *tp;
  if (!t.device().is_cpu())
    return fail(view, PyExc_BufferError,
                "buffer: the tensor is on " + t.device().str() +
                    "; only CPU tensors export buffers; hint: x.to('cpu')");
  const char* format = buffer_format(t.dtype());
  if (!format)
    return fail(view, PyExc_BufferError,
                "buffer: bfloat16 has no buffer-protocol format; hint: use np.asarray(x) "
                "(ml_dtypes), DLPack (torch.from_dlpack(x)), or x.astype(tessera.float32)");
  auto* geom = new BufferGeometry(t.ndim(), t.storage());
  for (int64_t d = 0; d < t.ndim(); ++d) {
    geom->shape[d] = t.dim(d);
    geom->strides[d] = t.strides()[d] * t.itemsize();
  }
  view->buf = t.data_ptr();
  view->itemsize = t.itemsize();
  view->len = t.nbytes();
  view->readonly = t.storage()->readonly ? 1 : 0;
  view->ndim = static_cast<int>(t.ndim());
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? const_cast<char*>(format) : nullptr;
  view->shape = geom->shape.get();
  view->strides = geom->strides.get();
  view->internal = geom;
  if (check_request(view, flags, t.storage()->readonly) != 0) {
    delete geom;
    return -1;
  }
  // The exported memory lives as long as the buffer (geom->storage), whatever the tensor does.
  t.storage()->resizable = false;
  view->obj = obj;
  Py_INCREF(obj);
  return 0;
}

extern "C" void tensor_releasebuffer(PyObject*, Py_buffer* view) {
  delete static_cast<BufferGeometry*>(view->internal);
  view->internal = nullptr;
}

}  // namespace

const char* buffer_format(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return "?";
    case DType::Int8:
      return "b";
    case DType::Int16:
      return "h";
    case DType::Int32:
      return "i";
    case DType::Int64:
      return "q";
    case DType::UInt8:
      return "B";
    case DType::UInt16:
      return "H";
    case DType::UInt32:
      return "I";
    case DType::UInt64:
      return "Q";
    case DType::Float16:
      return "e";
    case DType::BFloat16:
      return nullptr;
    case DType::Float32:
      return "f";
    case DType::Float64:
      return "d";
    case DType::Complex64:
      return "Zf";
    case DType::Complex128:
      return "Zd";
  }
  return nullptr;
}

void install_buffer_protocol(py::handle tensor_type) {
  auto* type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  // pybind11 created the type with py::buffer_protocol(), so tp_as_buffer points into the heap
  // type; we replace its slots to control error messages and read-only handling ourselves.
  if (!type->tp_as_buffer) throw std::runtime_error("Tensor type lacks buffer slots");
  type->tp_as_buffer->bf_getbuffer = &tensor_getbuffer;
  type->tp_as_buffer->bf_releasebuffer = &tensor_releasebuffer;
}

}  // namespace ts::python
