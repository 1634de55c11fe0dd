// Tensor.__getitem__ / __setitem__ for basic keys. The key is parsed here straight from the
// CPython objects (no per-item Python allocations): this is a hot path in training loops.
#include "ops/copy.h"
#include "ops/indexing_basic.h"
#include "python/convert.h"

namespace ts::python {

namespace {
[[noreturn]] void unsupported_key(py::handle item) {
  throw py::index_error(
      "only integers, slices (`:`), ellipsis (`...`), None (`newaxis`) and integer scalar "
      "tensors are valid indices, got " +
      py::repr(py::type::handle_of(item).attr("__name__")).cast<std::string>());
}

int64_t int_index(PyObject* o) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow)
    throw py::index_error("index " + py::repr(o).cast<std::string>() + " is out of bounds");
  return v;
}

IndexItem parse_item(PyObject* o) {
  IndexItem it;
  if (PyLong_CheckExact(o)) {
    it.start = int_index(o);
    return it;
  }
  if (PySlice_Check(o)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw py::error_already_set();
    it.kind = IndexItem::Slice;
    it.start = start;
    it.stop = stop;
    it.step = step;
    return it;
  }
  if (o == Py_None) {
    it.kind = IndexItem::NewAxis;
    return it;
  }
  if (o == Py_Ellipsis) {
    it.kind = IndexItem::Ellipsis;
    return it;
  }
  // Booleans are masks in NumPy (advanced indexing), never the ints 0/1.
  if (PyBool_Check(o)) unsupported_key(o);
  py::handle h(o);
  if (py::isinstance<Tensor>(h)) {
    const Tensor& t = h.cast<const Tensor&>();
    if (t.ndim() != 0 || !is_integral(t.dtype())) unsupported_key(o);
    it.start = item(t).to<int64_t>();
    return it;
  }
  if (PyLong_Check(o)) {
    it.start = int_index(o);
    return it;
  }
  // NumPy integer scalars, 0-d integer arrays and other __index__ implementers; anything
  // whose __index__ refuses (arrays with elements, bool scalars) is an unsupported key.
  if (PyIndex_Check(o)) {
    py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (v) {
      it.start = int_index(v.ptr());
      return it;
    }
    PyErr_Clear();
  }
  unsupported_key(o);
}

IndexKey parse_key(py::handle key) {
  IndexKey k;
  PyObject* o = key.ptr();
  if (PyTuple_Check(o)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < n; ++i) k.push_back(parse_item(PyTuple_GET_ITEM(o, i)));
  } else {
    k.push_back(parse_item(o));
  }
  return k;
}
}  // namespace

void init_indexing(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "__getitem__", [](const Tensor& x, py::handle key) { return index_basic(x, parse_key(key)); },
      "x[key] for ints, slices, ..., None and tuples of them: a view sharing x's storage.");
  cls.def(
      "__setitem__",
      [](const Tensor& x, py::handle key, py::handle value) {
        const IndexKey k = parse_key(key);
        Tensor v;
        if (!to_operand(value, v))
          throw py::type_error(
              "setitem: the value must be a tensor, a Python number or an array-like, got " +
              py::type::handle_of(value).attr("__name__").cast<std::string>());
        index_put_basic(x, k, v);
      },
      "x[key] = value: value is broadcast to the selection and cast to x's dtype.");
}

}  // namespace ts::python
