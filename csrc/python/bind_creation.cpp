// Bindings for the creation ops: zeros/ones/empty with every argument form (the public
// functions themselves), and the computed-content ops (arange, linspace, eye, tril, triu), whose
// Python wrappers in python/tessera/_creation.py pick default dtypes.
#include "autograd/meta.h"
#include "core/error.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/default_dtype.h"
#include "python/convert.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {
Scalar scalar_arg(py::handle h, const char* op, const char* name) {
  Scalar s;
  if (!to_scalar(h, s))
    throw py::type_error(std::string(op) + ": " + name + " must be a Python number, got " +
                         py::type::handle_of(h).attr("__name__").cast<std::string>());
  return s;
}

std::complex<double> complex_arg(py::handle h, const char* name) {
  const Scalar s = scalar_arg(h, "linspace", name);
  return s.kind == ScalarKind::Complex ? s.c : std::complex<double>(s.to<double>(), 0.0);
}

[[noreturn]] void not_implemented(const std::string& msg) {
  PyErr_SetString(PyExc_NotImplementedError, msg.c_str());
  throw py::error_already_set();
}  // ts.set_default_dtype's (Note [default dtype])

std::string type_name_of(py::handle h) {
  return py::type::handle_of(h).attr("__name__").cast<std::string>();
}

// A size as int64: ValueError naming the op past the range (as the shape helpers say it).
int64_t size_value(py::handle h, const std::string& op) {
  PyObject* v = PyLong_Check(h.ptr()) ? h.inc_ref().ptr() : PyNumber_Index(h.ptr());
  if (!v) throw py::error_already_set();
  py::object owned = py::reinterpret_steal<py::object>(v);
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow)
    throw py::value_error(op + ": dimension " + py::str(owned).cast<std::string>() +
                          " is out of range for a 64-bit size");
  if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
  return n;
}

bool int_like(py::handle h) {
  return PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !py::isinstance<Tensor>(h));
}

// One shape argument: an int or a sequence of ints.
Shape one_shape(py::handle h, const std::string& op) {
  if (int_like(h)) return Shape{size_value(h, op)};
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {  // the common case, without iterators
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(h.ptr());
    PyObject** items = PySequence_Fast_ITEMS(h.ptr());
    Shape out;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!int_like(items[i]))
        throw py::type_error(op + ": shape must be an int or a sequence of ints, got " +
                             py::repr(h).cast<std::string>());
      out.push_back(size_value(items[i], op));
    }
    return out;
  }
  if (py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h) || !py::hasattr(h, "__iter__"))
    throw py::type_error(op + ": shape must be an int or a sequence of ints, got " +
                         type_name_of(h));
  Shape out;
  for (py::handle e : h) {
    if (!int_like(e))
      throw py::type_error(op + ": shape must be an int or a sequence of ints, got " +
                           py::repr(h).cast<std::string>());
    out.push_back(size_value(e, op));
  }
  return out;
}

// zeros/ones/empty in every form: the standard's one shape argument, torch's sizes as varargs,
// shape= / size=, dtype=, device=, requires_grad=; torch's layout/pin_memory/memory_format/out
// checked (memory_format is a no-op for a new contiguous tensor). With `like` (x.new_zeros),
// dtype and device default to like's.
Tensor create(const char* op_name, int fill, const py::args& size, const py::kwargs& kw,
              const Tensor* like = nullptr) {
  const std::string op = op_name;
  py::handle shape, dtype, device, requires_grad;
  for (auto item : kw) {
    const std::string k = py::str(item.first);
    py::handle v = item.second;
    if (k == "shape" || k == "size") {
      if (shape) throw py::type_error(op + ": got the size both as shape= and as size=");
      shape = v;
    } else if (k == "dtype") {
      dtype = v;
    } else if (k == "device") {
      device = v;
    } else if (k == "requires_grad") {
      requires_grad = v;
    } else if (k == "layout" || k == "pin_memory") {
      if (!v.is_none() && PyObject_IsTrue(v.ptr()))
        not_implemented(op + ": layout= and pin_memory=True are not supported");
    } else if (k == "out") {
      if (!v.is_none()) not_implemented(op + ": out= is not supported");
    } else if (k != "memory_format") {
      throw py::type_error(op + ": unexpected keyword argument '" + k + "'");
    }
  }
  Shape sh;
  if (shape) {
    if (size.size() > 0)
      throw py::type_error(op + ": got the size both positionally and as a keyword");
    sh = one_shape(shape, op);
  } else if (size.size() == 1) {
    sh = one_shape(size[0], op);
  } else if (size.size() == 0) {
    throw py::type_error(op + ": missing the size (e.g. " + op + "(2, 3) or " + op + "((2, 3)))");
  } else {
    for (py::handle n : size) {
      if (PyBool_Check(n.ptr()) || !int_like(n))
        throw py::type_error(op + ": sizes must be ints, got " + type_name_of(n));
      sh.push_back(size_value(n, op));
    }
  }
  const bool no_dtype = !dtype || dtype.is_none(), no_device = !device || device.is_none();
  const DType dt = !no_dtype ? to_dtype(dtype) : like ? like->dtype() : default_float_dtype();
  Tensor t;
  try {
    const Device dev =
        no_device && like ? like->device() : creation_device(device ? device : py::none());
    t = Tensor::empty(sh, dt, dev);
  } catch (const ValueError& e) {  // the shape and device checks do not know the op
    throw ValueError(op + ": " + e.what());
  } catch (const RuntimeError& e) {
    throw RuntimeError(op + ": " + e.what());
  } catch (const TypeError& e) {
    throw TypeError(op + ": " + e.what());
  }
  if (fill >= 0) fill_(t, Scalar::from_int(fill));
  if (requires_grad && PyObject_IsTrue(requires_grad.ptr())) autograd::set_requires_grad(t, true);
  return t;
}

}  // namespace

void init_creation(py::module_& m) {
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    for (auto [name, fill] : {std::pair{"zeros", 0}, {"ones", 1}, {"empty", -1}}) {
      const std::string doc = std::string(name) +
                              "(shape, *, dtype=None, device=None, requires_grad=False)\n--\n\n" +
                              (fill < 0 ? std::string("An uninitialized tensor of shape")
                                        : "A tensor of shape filled with " + std::to_string(fill)) +
                              " (" + name + "((2, 3)), " + name +
                              "(2, 3), size=); dtype defaults to the default\n"
                              "float dtype (ts.set_default_dtype), device to the default device.";
      m.def(
          name,
          [name = std::string(name), fill](const py::args& size, const py::kwargs& kw) {
            return create(name.c_str(), fill, size, kw);
          },
          doc.c_str());
      // x.new_zeros / new_ones / new_empty: the same forms, dtype and device from x
      const std::string method = "new_" + std::string(name);
      const std::string mdoc =
          method + "($self, *size, dtype=None, device=None, requires_grad=False)\n--\n\n" +
          (fill < 0 ? std::string("An uninitialized tensor of size")
                    : "A tensor of size filled with " + std::to_string(fill)) +
          " with this tensor's dtype and device (unless given).";
      py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"))
          .def(
              method.c_str(),
              [method, fill](const Tensor& self, const py::args& size, const py::kwargs& kw) {
                return create(method.c_str(), fill, size, kw, &self);
              },
              mdoc.c_str());
    }
  }
  m.def("_arange", [](py::handle start, py::handle stop, py::handle step, py::handle dtype,
                      py::handle device) {
    return arange(scalar_arg(start, "arange", "start"), scalar_arg(stop, "arange", "stop"),
                  scalar_arg(step, "arange", "step"), to_dtype(dtype), creation_device(device));
  });
  m.def("_linspace", [](py::handle start, py::handle stop, py::handle num, py::handle dtype,
                        bool endpoint, py::handle device) {
    return linspace(complex_arg(start, "start"), complex_arg(stop, "stop"),
                    int_arg(num, "linspace", "num"), to_dtype(dtype), endpoint,
                    creation_device(device));
  });
  m.def("_eye", [](py::handle n_rows, py::handle n_cols, py::handle k, py::handle dtype,
                   py::handle device) {
    return eye(int_arg(n_rows, "eye", "n_rows"), int_arg(n_cols, "eye", "n_cols"),
               int_arg(k, "eye", "k"), to_dtype(dtype), creation_device(device));
  });
  m.def("_tril", [](const Tensor& x, py::handle k) { return tril(x, int_arg(k, "tril", "k")); });
  m.def("_triu", [](const Tensor& x, py::handle k) { return triu(x, int_arg(k, "triu", "k")); });
}

}  // namespace ts::python
