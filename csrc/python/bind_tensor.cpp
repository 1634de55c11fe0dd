// tessera.Tensor: attributes, conversions to Python numbers, and the core operators.
// Methods with flexible signatures (sum(axis=..., dim=...), reshape(*shape), repr) are added in
// python/tessera/_tensor.py over these.
#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/math.h"
#include "ops/memory_format.h"
#include "ops/rounding.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"
#include "python/input_arg.h"

namespace ts::python {

MemoryFormat memory_format_of(py::handle fmt, const char* op) {
  if (py::isinstance<py::str>(fmt)) return memory_format_from_name(fmt.cast<std::string>(), op);
  if (py::hasattr(fmt, "name") && py::isinstance<py::str>(fmt.attr("name")))
    return memory_format_from_name(fmt.attr("name").cast<std::string>(), op);
  throw TypeError(str(op,
                      ": memory_format must be a tessera memory format (ts.contiguous_format, "
                      "ts.channels_last, ts.channels_last_3d, ts.preserve_format), got ",
                      py::str(py::type::of(fmt).attr("__name__")).cast<std::string>()));
}

namespace {
py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (int64_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

py::object scalar_to_py(const Scalar& s) {
  switch (s.kind) {
    case ScalarKind::Bool:
      return py::bool_(s.i != 0);
    case ScalarKind::Int:
      return s.is_u64 ? py::int_(s.u) : py::int_(s.i);
    case ScalarKind::Float:
      return py::float_(s.d);
    default:
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(s.c.real(), s.c.imag()));
  }
}

Scalar one_element(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw py::type_error(std::string(what) + ": only tensors with one element can be converted, " +
                         "got shape " + shape_str(t.shape()));
  return item(t);
}

// __int__/__index__ must return an exact int: a bool (an int subclass) is deprecated there.
py::int_ exact_int(const py::object& v) {
  PyObject* r = PyNumber_Long(v.ptr());
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::int_>(r);
}
}  // namespace

py::object tensor_item(const Tensor& t) { return scalar_to_py(item(t)); }

namespace {
// Tensor.__new__(Tensor) (and of a subclass) gives an empty float32 tensor, as torch's does:
// pybind11's own tp_new left an object with no C++ tensor behind it, and any use crashed.
newfunc g_pybind11_tp_new = nullptr;
PyObject* tensor_tp_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = g_pybind11_tp_new(type, args, kwargs);
  if (self == nullptr) return nullptr;
  try {
    auto* inst = reinterpret_cast<py::detail::instance*>(self);
    auto v_h = inst->get_value_and_holder(py::detail::get_type_info(typeid(Tensor)));
    v_h.value_ptr() = new Tensor(Tensor::empty(Shape{0}, DType::Float32));
    v_h.type->init_instance(inst, nullptr);
  } catch (const std::exception& e) {
    Py_DECREF(self);
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  return self;
}
}  // namespace

void init_device(py::module_& m) {
  py::class_<Device>(m, "Device", "Where a tensor lives: Device('cpu'), Device('cuda:0').")
      // torch.device's one signature, device(type, index=None): Device('cuda:0'), Device(d),
      // Device('cuda', 0)
      .def(py::init([](py::handle type, py::handle index) {
             if (index.is_none()) return to_device(type);
             // Checked by hand: an int past int16 wrapped around (Device('cuda', 65537) was
             // cuda:1), a negative one was kept, and a bad type got pybind11's text.
             if (!py::isinstance<py::str>(type))
               throw TypeError("device: type must be a str ('cpu' or 'cuda'), got " +
                               type_name(type));
             if (PyBool_Check(index.ptr()) || !PyIndex_Check(index.ptr()))
               throw TypeError("device: index must be an int, got " + type_name(index));
             Device d = parse_device(type.cast<std::string>());
             const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(index.ptr()));
             if (!i) throw py::error_already_set();
             int overflow = 0;
             const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
             if (overflow || v < 0 || v > INT16_MAX)
               throw ValueError(str("device: index ", py::repr(i).cast<std::string>(),
                                    " is out of range (0 to ", INT16_MAX, ")"));
             if (!d.is_cpu()) d.index = static_cast<int16_t>(v);  // one CPU device: cpu:N is cpu
             return d;
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               return d.is_cpu() ? py::none() : py::object(py::int_(d.index));
                             })
      .def("__eq__",
           [](const Device& d, py::handle o) {
             if (py::isinstance<Device>(o)) return d == o.cast<Device>();
             if (py::isinstance<py::str>(o)) {
               try {
                 return d == parse_device(o.cast<std::string>());
               } catch (...) {
                 return false;
               }
             }
             return false;
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      .def("__repr__",
           [](const Device& d) {
             return d.is_cpu() ? std::string("device(type='cpu')")
                               : "device(type='cuda', index=" + std::to_string(d.index) + ")";
           })
      .def("__str__", &Device::str)
      // Pickles as Device('cuda:0') at every protocol (protocols 0 and 1 went through
      // copyreg's fallback, which aborted on the pybind11 object).
      .def("__reduce__", [](const Device& d) {
        return py::make_tuple(py::type::of<Device>(), py::make_tuple(d.str()));
      });
}

void init_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::dynamic_attr(), py::buffer_protocol(),
                         "An n-dimensional array on a device (the array API's array object).");
  {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    g_pybind11_tp_new = type->tp_new;
    type->tp_new = &tensor_tp_new;
    PyType_Modified(type);
    // Tensor.__new__ must be ours too (it resolved to pybind11_object.__new__, which refuses).
    cls.attr("__new__") = py::staticmethod(py::cpp_function(
        [](py::handle type, py::args, py::kwargs) {
          TS_CHECK(
              PyType_Check(type.ptr()) &&
                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type.ptr()),
                                   reinterpret_cast<PyTypeObject*>(py::type::of<Tensor>().ptr())),
              TypeError, "Tensor.__new__(X): X is not a subtype of Tensor");
          PyObject* o = tensor_tp_new(reinterpret_cast<PyTypeObject*>(type.ptr()),
                                      py::tuple().ptr(), nullptr);
          if (o == nullptr) throw py::error_already_set();
          return py::reinterpret_steal<py::object>(o);
        },
        py::name("__new__")));
    // torch.Tensor(*args): PyTorch's legacy constructor (Tensor(2, 3), Tensor([1, 2]),
    // Tensor(size), Tensor(tensor)); the instance __new__ made takes the built tensor's handle
    // (python/tessera/_torch_legacy.py: _tensor_init).
    // (Bound under another name: pybind11 ignores an "__init__" on an instance that tp_new
    // already registered.)
    cls.attr("__init__") = py::cpp_function(
        [](py::handle self, py::args args, py::kwargs kwargs) {
          py::object built =
              py::module_::import("tessera._torch_legacy").attr("_tensor_init")(*args, **kwargs);
          self.cast<Tensor&>() = built.cast<Tensor>();
        },
        py::name("_legacy_init"), py::is_method(cls),
        "Tensor(*sizes) / Tensor(data) / Tensor(size) / Tensor(tensor)\n--\n\n"
        "PyTorch's legacy constructor: an uninitialized tensor of those sizes, or the data "
        "converted, in the default dtype; a tensor argument is returned as it is.");
  }
  cls.def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_property_readonly("ndim", &Tensor::ndim)
      // (x.size, the callable element count: csrc/python/bind_tensor_protocols.cpp)
      // (numel is ts.numel itself: csrc/python/bind_creation.cpp)
      .def("dim", &Tensor::ndim)
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("itemsize", &Tensor::itemsize)
      .def_property_readonly("nbytes", &Tensor::nbytes)
      .def_property_readonly(
          "strides",
          [](const Tensor& t) {
            Shape s;
            for (int64_t v : t.strides()) s.push_back(v * t.itemsize());
            return shape_tuple(s);
          },
          "Strides in bytes, like NumPy's.")
      // (x.stride(dim), x.to, x.type and PyTorch's other conversions and queries:
      // csrc/python/bind_tensor_methods.cpp)
      .def(
          "is_contiguous",
          [](const Tensor& t, py::handle fmt) {
            return fmt.is_none() ? t.is_contiguous()
                                 : is_contiguous_as(t, memory_format_of(fmt, "is_contiguous"));
          },
          py::arg("memory_format") = py::none(),
          "Whether the strides are row-major, or those of memory_format (ts.channels_last: "
          "(N, C, H, W) stored as (N, H, W, C))")
      .def(
          "contiguous",
          [](const Tensor& t, py::handle fmt) {
            return fmt.is_none()
                       ? contiguous_op(t)
                       : to_memory_format(t, memory_format_of(fmt, "contiguous"), "contiguous");
          },
          py::arg("memory_format") = py::none(),
          "This tensor with row-major strides (or memory_format's), copied only if needed")
      // (clone(memory_format=): csrc/python/bind_tensor_protocols.cpp)
      .def("item", &tensor_item)
      .def_property_readonly(
          "T",
          [](const Tensor& t) {
            // The array API standard requires an error for anything but a matrix (PyTorch
            // deprecates x.T on other ranks too).
            if (t.ndim() != 2)
              throw py::value_error("T: expected a 2-dimensional tensor, got shape " +
                                    shape_str(t.shape()) + "; hint: use x.mT or permute_dims");
            return transpose_all(t);
          })
      .def_property_readonly("mT", &matrix_transpose)
      .def_property_readonly("_version", &Tensor::version)
      .def_property_readonly("_offset", &Tensor::offset)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("_storage_ptr",
           [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data); })
      .def("_is_readonly", [](const Tensor& t) { return t.storage()->readonly; })
      // object.__reduce_ex__ uses this at every protocol (copyreg's dispatch table, which
      // serialization.py also fills, is consulted by pickle only and for Tensor only).
      .def("__reduce__",
           [](py::handle self) {
             return py::module_::import("tessera.serialization").attr("_reduce_tensor")(self);
           })
      .def("_storage_nbytes", [](const Tensor& t) { return t.storage()->nbytes; })
      // False once the storage is borrowed or exported (Note [Exported storage]).
      .def("_storage_resizable", [](const Tensor& t) { return t.storage()->resizable; })
      .def("__len__",
           [](const Tensor& t) {
             if (t.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.dim(0);
           })
      .def("__bool__",
           [](const Tensor& t) {
             if (t.numel() != 1)
               throw ts::ValueError("The truth value of a tensor with " +
                                    std::to_string(t.numel()) +
                                    " elements is ambiguous; hint: use any() or all()");
             Scalar s = item(t);
             return s.to<bool>();
           })
      .def("__int__",
           [](const Tensor& t) -> py::object {
             Scalar s = one_element(t, "int()");
             if (s.kind == ScalarKind::Complex)
               throw py::type_error("int(): the tensor is complex");
             return exact_int(scalar_to_py(s));
           })
      .def("__float__",
           [](const Tensor& t) {
             Scalar s = one_element(t, "float()");
             if (s.kind == ScalarKind::Complex)
               throw py::type_error("float(): the tensor is complex");
             return py::float_(scalar_to_py(s));
           })
      .def("__complex__",
           [](const Tensor& t) {
             Scalar s = one_element(t, "complex()");
             return py::reinterpret_steal<py::object>(
                 PyComplex_FromDoubles(s.kind == ScalarKind::Complex ? s.c.real() : s.to<double>(),
                                       s.kind == ScalarKind::Complex ? s.c.imag() : 0.0));
           })
      .def("__index__",
           [](const Tensor& t) {
             if (!is_integral(t.dtype()) && !is_bool(t.dtype()))
               throw py::type_error(
                   std::string("__index__: only integer tensors can be used as an index, got ") +
                   dtype_name(t.dtype()));
             return exact_int(scalar_to_py(one_element(t, "__index__")));
           })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()) >> 4; });

  def_binary_operator(cls, "__add__", "__radd__", "__iadd__", kAdd);
  def_binary_operator(cls, "__sub__", "__rsub__", "__isub__", kSubtract);
  def_binary_operator(cls, "__mul__", "__rmul__", "__imul__", kMultiply);
  def_binary_operator(cls, "__truediv__", "__rtruediv__", "__itruediv__", kDivide);
  def_binary_operator(cls, "__floordiv__", "__rfloordiv__", "__ifloordiv__", floor_divide_def);
  def_binary_operator(cls, "__mod__", "__rmod__", "__imod__", remainder_def);
  def_binary_operator_with(
      cls, "__pow__", "__rpow__", "__ipow__",
      [](const Tensor& a, const Tensor& b) { return pow(a, b); }, &pow_);
  def_binary_operator(cls, "__and__", "__rand__", "__iand__", bitwise_and_def);
  def_binary_operator(cls, "__or__", "__ror__", "__ior__", bitwise_or_def);
  def_binary_operator(cls, "__xor__", "__rxor__", "__ixor__", bitwise_xor_def);
  def_binary_operator(cls, "__lshift__", "__rlshift__", "__ilshift__", bitwise_left_shift_def);
  def_binary_operator(cls, "__rshift__", "__rrshift__", "__irshift__", bitwise_right_shift_def);
  // Comparisons have no reflected forms: Python swaps x < y into y > x itself.
  def_binary_operator(cls, "__eq__", nullptr, nullptr, equal_def);
  def_binary_operator(cls, "__ne__", nullptr, nullptr, not_equal_def);
  def_binary_operator(cls, "__lt__", nullptr, nullptr, less_def);
  def_binary_operator(cls, "__le__", nullptr, nullptr, less_equal_def);
  def_binary_operator(cls, "__gt__", nullptr, nullptr, greater_def);
  def_binary_operator(cls, "__ge__", nullptr, nullptr, greater_equal_def);
  def_unary_operator(cls, "__neg__", kNegative);
  def_unary_operator(cls, "__pos__", positive_def);
  def_unary_operator(cls, "__abs__", abs_def);
  def_unary_operator(cls, "__invert__", bitwise_invert_def);
  cls.def("__matmul__", [](const Tensor& a, py::handle b) -> py::object {
    Tensor o;
    if (!to_operand(b, o)) return not_implemented();
    return py::cast(matmul(a, o));
  });
  cls.def("__rmatmul__", [](const Tensor& a, py::handle b) -> py::object {
    Tensor o;
    if (!to_operand(b, o)) return not_implemented();
    return py::cast(matmul(o, a));
  });
  cls.def("__imatmul__", [](py::object self, py::handle b) -> py::object {
    // NumPy's in-place matmul (PyTorch rebinds `a` instead): recorded like `a = a @ b`.
    const Tensor& a = tensor_or_throw(self, "matmul", "self");
    autograd::check_inplace(a, "matmul");
    assign_inplace_result("matmul", a, matmul(a, operand_or_throw(b, "matmul")));
    return self;
  });
}

}  // namespace ts::python
