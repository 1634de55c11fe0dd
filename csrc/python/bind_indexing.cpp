// Tensor.__getitem__ / __setitem__. The key is parsed here straight from the CPython objects
// (no per-item Python allocations): basic keys are a hot path in training loops. Keys holding
// arrays, lists or masks take the advanced path (ops/indexing_advanced.h).
#include "autograd/grad_mode.h"
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/indexing_basic.h"
#include "python/convert.h"

namespace ts::python {

namespace {
[[noreturn]] void unsupported_key(py::handle item) {
  throw py::index_error(
      "only integers, slices (`:`), ellipsis (`...`), None (`newaxis`) and integer or "
      "boolean arrays are valid indices, got " +
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

// A basic item; false when `o` can only be an advanced index (array, list, bool, mask).
bool parse_item(PyObject* o, IndexItem& it) {
  if (PyLong_CheckExact(o)) {
    it.start = int_index(o);
    return true;
  }
  if (PySlice_Check(o)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw py::error_already_set();
    it.kind = IndexItem::Slice;
    it.start = start;
    it.stop = stop;
    it.step = step;
    return true;
  }
  if (o == Py_None) {
    it.kind = IndexItem::NewAxis;
    return true;
  }
  if (o == Py_Ellipsis) {
    it.kind = IndexItem::Ellipsis;
    return true;
  }
  // Booleans are masks in NumPy (advanced indexing), never the ints 0/1.
  if (PyBool_Check(o)) return false;
  py::handle h(o);
  if (py::isinstance<Tensor>(h)) {
    const Tensor& t = h.cast<const Tensor&>();
    if (t.ndim() != 0 || !is_integral(t.dtype())) return false;
    it.start = item(t).to<int64_t>();
    return true;
  }
  if (PyLong_Check(o)) {
    it.start = int_index(o);
    return true;
  }
  // NumPy integer scalars, 0-d integer arrays and other __index__ implementers; anything
  // whose __index__ refuses (arrays with elements, bool scalars) is an advanced index.
  if (PyIndex_Check(o)) {
    py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (v) {
      it.start = int_index(v.ptr());
      return true;
    }
    PyErr_Clear();
  }
  return false;
}

// An advanced index item: a tensor, NumPy array, (nested) list, range or bool scalar.
Tensor parse_array(PyObject* o) {
  py::handle h(o);
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  if (PyFloat_Check(o) || PyComplex_Check(o)) unsupported_key(o);
  if (PyBool_Check(o)) return scalar_tensor(Scalar::from_bool(o == Py_True), DType::Bool);
  if (PyUnicode_Check(o) || PyBytes_Check(o)) unsupported_key(o);
  // A range (x[range(n), y], as PyTorch takes it) indexes as the list of its ints.
  py::object as_list;
  if (PyRange_Check(o)) {
    as_list = py::reinterpret_steal<py::object>(PySequence_List(o));
    if (!as_list) throw py::error_already_set();
    o = as_list.ptr();
    h = as_list;
  }
  Tensor t;
  if (!to_operand(h, t)) unsupported_key(o);
  // An empty list is an empty integer index (its float default dtype says nothing).
  if (t.numel() == 0 && PyList_Check(o) && !is_integral(t.dtype()) && t.dtype() != DType::Bool)
    return Tensor::empty(t.shape(), DType::Int64);
  return t;
}

// A basic key in `k`; false (with `ak` filled) when the key holds an advanced item.
bool parse_key(py::handle key, IndexKey& k, AdvKey& ak) {
  PyObject* o = key.ptr();
  const bool tup = PyTuple_Check(o);
  const Py_ssize_t n = tup ? PyTuple_GET_SIZE(o) : 1;
  auto at = [&](Py_ssize_t i) { return tup ? PyTuple_GET_ITEM(o, i) : o; };
  for (Py_ssize_t i = 0; i < n; ++i) {
    IndexItem it;
    if (parse_item(at(i), it)) {
      k.push_back(it);
      continue;
    }
    for (const IndexItem& b : k) ak.push_back(AdvItem{b, Tensor()});
    for (Py_ssize_t j = i; j < n; ++j) {
      AdvItem a;
      if (!parse_item(at(j), a.item)) a.array = parse_array(at(j));
      ak.push_back(std::move(a));
    }
    return false;
  }
  return true;
}
}  // namespace

void init_indexing(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "__getitem__",
      [](const Tensor& x, py::handle key) {
        IndexKey k;
        AdvKey ak;
        if (parse_key(key, k, ak)) return index_basic(x, k);
        return index_advanced(x, ak);
      },
      "x[key] with NumPy's semantics. Ints, slices, ..., None and tuples of them give a view "
      "sharing x's storage; integer arrays (tensors, NumPy arrays, lists) and boolean masks "
      "give a copy. Advanced-index dims replace the indexed dims in place when the arrays are "
      "adjacent in the key, else they come first.");
  cls.def(
      "__setitem__",
      [](const Tensor& x, py::handle key, py::handle value) {
        IndexKey k;
        AdvKey ak;
        const bool basic = parse_key(key, k, ak);
        Tensor v;
        Scalar s;
        // A Python number must fit x's dtype (Note [Checked scalar writes]); tensors cast.
        if ((PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) ||
             PyComplex_Check(value.ptr())) &&
            to_scalar(value, s))
          check_scalar_fits(s, x.dtype(), "setitem");
        if (!to_operand(value, v))
          throw py::type_error(
              "setitem: the value must be a tensor, a Python number or an array-like, got " +
              py::type::handle_of(value).attr("__name__").cast<std::string>());
        if (basic) {
          {  // torch's x[key] = v copies into the selected view: an expanded one is refused
            autograd::GradModeGuard no_grad(false);
            check_no_internal_overlap(index_basic(x, k), "setitem");
          }
          index_put_basic(x, k, v);
        } else {
          warn_expanded_write(x, "index_put_");  // torch's x[idx] = v is index_put_
          // ... which runs masked_fill_ (warning again) for one bool mask and a 0-d value
          if (ak.size() == 1 && ak[0].array.defined() && ak[0].array.dtype() == DType::Bool &&
              v.ndim() == 0)
            warn_expanded_write(x, "masked_fill_");
          index_put_advanced(x, ak, v);
        }
      },
      "x[key] = value: value is broadcast to the selection and cast to x's dtype; with "
      "repeated indices the last write wins (NumPy).");
}

}  // namespace ts::python
