// tessera.dtype objects (one singleton per dtype), promotion queries, finfo/iinfo data.
#include <cfloat>
#include <limits>

#include "python/convert.h"

namespace ts::python {

struct DTypeObj {
  DType d;
};

static py::object g_dtypes[kNumDTypes];

py::object dtype_object(DType d) { return g_dtypes[static_cast<int>(d)]; }

DType to_dtype(py::handle h) {
  if (py::isinstance<DTypeObj>(h)) return h.cast<const DTypeObj&>().d;
  if (py::isinstance<py::str>(h)) {
    const std::string s = h.cast<std::string>();
    for (int i = 0; i < kNumDTypes; ++i)
      if (s == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
    throw py::type_error("dtype: unknown dtype name '" + s + "'");
  }
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::Float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyComplex_Type)) return DType::Complex128;
  const std::string r = py::str(h);
  if (r.rfind("torch.", 0) == 0) return to_dtype(py::str(r.substr(6)));
  try {
    return from_numpy_dtype(py::dtype::from_args(py::reinterpret_borrow<py::object>(h)));
  } catch (py::error_already_set&) {
  }
  throw py::type_error("dtype: expected a tessera dtype (e.g. tessera.float32), got " +
                       py::repr(h).cast<std::string>());
}

void init_dtype(py::module_& m) {
  py::class_<DTypeObj>(m, "dtype", "A tensor element type, e.g. tessera.float32.")
      .def_property_readonly("name", [](const DTypeObj& o) { return dtype_name(o.d); })
      .def_property_readonly("itemsize", [](const DTypeObj& o) { return itemsize(o.d); })
      .def_property_readonly("is_floating_point",
                             [](const DTypeObj& o) { return is_floating(o.d); })
      .def_property_readonly("is_complex", [](const DTypeObj& o) { return is_complex(o.d); })
      .def_property_readonly(
          "is_signed", [](const DTypeObj& o) { return is_signed_int(o.d) || is_inexact(o.d); })
      .def_property_readonly("kind",
                             [](const DTypeObj& o) {
                               return is_bool(o.d)           ? "b"
                                      : is_signed_int(o.d)   ? "i"
                                      : is_unsigned_int(o.d) ? "u"
                                      : is_floating(o.d)     ? "f"
                                                             : "c";
                             })
      .def("__repr__",
           [](const DTypeObj& o) { return std::string("dtype('") + dtype_name(o.d) + "')"; })
      .def("__str__", [](const DTypeObj& o) { return std::string(dtype_name(o.d)); })
      .def("__hash__",
           [](const DTypeObj& o) { return std::hash<int>()(static_cast<int>(o.d) + 7919); })
      .def("__eq__",
           [](const DTypeObj& o, py::handle other) {
             return py::isinstance<DTypeObj>(other) && other.cast<const DTypeObj&>().d == o.d;
           })
      .def("__ne__",
           [](const DTypeObj& o, py::handle other) {
             return !(py::isinstance<DTypeObj>(other) && other.cast<const DTypeObj&>().d == o.d);
           })
      .def(
          "to_complex",
          [](const DTypeObj& o) {
            switch (o.d) {
              case DType::Float32:
              case DType::Complex64:
                return dtype_object(DType::Complex64);
              case DType::Float64:
              case DType::Complex128:
                return dtype_object(DType::Complex128);
              default:
                throw RuntimeError(str("to_complex: no complex counterpart of ", dtype_name(o.d),
                                       "; hint: float32 and float64 have one"));
            }
          },
          "torch.dtype.to_complex(): the complex dtype of this float dtype's precision.")
      .def(
          "to_real",
          [](py::object self) {
            const DType d = self.cast<const DTypeObj&>().d;
            if (d == DType::Complex64) return dtype_object(DType::Float32);
            if (d == DType::Complex128) return dtype_object(DType::Float64);
            return self;
          },
          "torch.dtype.to_real(): the real dtype of this complex dtype's precision (others are "
          "returned as they are).")
      .def("__reduce__", [](const DTypeObj& o) {
        return py::make_tuple(py::module_::import("tessera").attr("_dtype_by_name"),
                              py::make_tuple(dtype_name(o.d)));
      });

  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = static_cast<DType>(i);
    g_dtypes[i] = py::cast(DTypeObj{d});
    g_dtypes[i].inc_ref();
    m.attr(dtype_name(d)) = g_dtypes[i];
  }

  m.def("_to_dtype", [](py::handle h) { return dtype_object(to_dtype(h)); });
  m.def("_numpy_dtype", [](py::handle h) { return numpy_dtype(to_dtype(h)); });
  m.def("_promote_types", [](py::handle a, py::handle b) {
    return dtype_object(promote_types(to_dtype(a), to_dtype(b)));
  });
  m.def("_promote_with_scalar", [](py::handle t, py::handle scalar) {
    Scalar s;
    if (!to_scalar(scalar, s)) throw py::type_error("expected a Python scalar");
    return dtype_object(promote_with_scalar(to_dtype(t), s.kind));
  });
  m.def("_can_cast", [](py::handle a, py::handle b) { return can_cast(to_dtype(a), to_dtype(b)); });
  // (bits, eps, max, min, smallest_normal) for floats, computed in double for the 16-bit types.
  m.def("_finfo", [](py::handle h) {
    const DType d = to_real(to_dtype(h));
    switch (d) {
      case DType::Float16:
        return py::make_tuple(16, 0.0009765625, 65504.0, -65504.0, 6.103515625e-05);
      case DType::BFloat16:
        return py::make_tuple(16, 0.0078125, 3.3895313892515355e38, -3.3895313892515355e38,
                              1.1754943508222875e-38);
      case DType::Float32:
        return py::make_tuple(32, double(FLT_EPSILON), double(FLT_MAX), -double(FLT_MAX),
                              double(FLT_MIN));
      case DType::Float64:
        return py::make_tuple(64, DBL_EPSILON, DBL_MAX, -DBL_MAX, DBL_MIN);
      default:
        throw py::type_error(
            std::string("finfo: expected a floating-point or complex dtype, got ") +
            dtype_name(to_dtype(h)));
    }
  });
  m.def("_iinfo", [](py::handle h) {
    const DType d = to_dtype(h);
    return visit_dtype<kIntSet>(d, "iinfo", [&](auto tag) {
      using T = typename decltype(tag)::type;
      return py::make_tuple(int(sizeof(T) * 8), py::int_(std::numeric_limits<T>::max()),
                            py::int_(std::numeric_limits<T>::min()));
    });
  });
}

}  // namespace ts::python
