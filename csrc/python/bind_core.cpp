// Creation primitives, copies/casts, NumPy exchange, views and the linalg core.
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/views.h"
#include "python/convert.h"

namespace ts::python {

namespace {

// Tensor.reshape(*shape) / view(*shape): torch's varargs sizes, one sequence, or the keyword
// (shape= / size=).
py::handle shape_from_args(const char* op, const char* kw_name, const py::args& sizes,
                           const py::kwargs& kw, py::handle& dtype) {
  py::handle keyword;
  for (auto item : kw) {
    const std::string k = py::str(item.first);
    if (k == kw_name) {
      keyword = item.second;
    } else if (std::string(op) == "view" && k == "dtype") {
      dtype = item.second;
    } else {
      throw py::type_error(std::string(op) + "() got an unexpected keyword argument '" + k + "'");
    }
  }
  if (keyword && sizes.size() > 0)
    throw py::type_error(std::string(op) + "() got multiple values for argument '" + kw_name + "'");
  if (keyword) return keyword;
  if (sizes.size() == 1 && !PyIndex_Check(sizes[0].ptr())) return sizes[0];
  return sizes;
}

}  // namespace

void init_core(py::module_& m) {
  {
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
    cls.def(
        "reshape",
        [](const Tensor& self, const py::args& sizes, py::handle shape) {
          if (!shape.is_none()) {
            if (sizes.size() > 0)
              throw py::type_error("reshape() got multiple values for argument 'shape'");
            return reshape(self, to_shape(shape, "reshape"), -1);
          }
          if (sizes.size() == 1 && !PyIndex_Check(sizes[0].ptr()))
            return reshape(self, to_shape(sizes[0], "reshape"), -1);
          return reshape(self, to_shape(sizes, "reshape"), -1);
        },
        py::kw_only(), py::arg("shape") = py::none(),
        "reshape(*shape) -> Tensor: a view with that shape where the strides allow, else a "
        "copy (sizes as varargs, one sequence, or shape=; one -1 is inferred).");
    cls.def(
        "view",
        [](const Tensor& self, const py::args& sizes, const py::kwargs& kw) {
          py::handle dtype;
          py::handle shape = shape_from_args("view", "size", sizes, kw, dtype);
          if (dtype) {
            if (sizes.size() > 0 || kw.contains("size"))
              throw py::type_error("view() takes either size= or dtype=, not both");
          } else if (sizes.size() == 1 && py::type::handle_of(sizes[0]).is(
                                              py::type::handle_of(dtype_object(DType::Float32)))) {
            dtype = sizes[0];
          }
          if (dtype) {
            const DType dt = to_dtype(dtype);
            return dt == self.dtype() ? reshape(self, self.shape(), 0) : view_dtype(self, dt);
          }
          return view(self, to_shape(shape, "view"));
        },
        "view(self, /, *shape)\n--\n\n"
        "A view with that shape (RuntimeError where the strides do not allow one); "
        "view(dtype) reinterprets the bytes as another dtype.");
  }
  // ---- creation primitives (ts.empty/zeros/ones/full in Python parse the arguments)
  m.def("_empty", [](py::handle shape, py::handle dtype, py::handle device) {
    return Tensor::empty(to_shape(shape, "empty"), to_dtype(dtype), creation_device(device));
  });
  m.def("_full", [](py::handle shape, py::handle value, py::handle dtype, py::handle device) {
    Scalar s;
    if (!to_scalar(value, s))
      throw py::type_error("full: fill_value must be a Python bool, int, float or complex, got " +
                           py::repr(value).cast<std::string>());
    const DType dt = to_dtype(dtype);
    check_scalar_fits(s, dt, "full");  // PyTorch's overflow rule (Note [Checked scalar writes])
    Tensor t = Tensor::empty(to_shape(shape, "full"), dt, creation_device(device));
    fill_(t, s);
    return t;
  });
  m.def("_set_default_device", [](py::handle d) { default_device() = to_device(d); });
  m.def("_get_default_device", [] { return default_device(); });
  m.def("_scalar_tensor", [](py::handle value, py::handle dtype) {
    Scalar s;
    if (!to_scalar(value, s)) throw py::type_error("expected a Python scalar");
    return scalar_tensor(s, to_dtype(dtype));
  });
  m.def("_wrap_scalar", [](py::handle value) {
    Scalar s;
    if (!to_scalar(value, s)) throw py::type_error("expected a Python scalar");
    return wrap_scalar(s);
  });

  // ---- NumPy exchange
  m.def(
      "_from_numpy", [](py::array a, int copy) { return from_numpy(a, copy); }, py::arg("array"),
      py::arg("copy"));
  m.def("_to_numpy",
        [](py::object self) { return to_numpy(self, tensor_or_throw(self, "numpy", "self")); });

  // ---- copies and casts
  m.def("_astype", [](const Tensor& x, py::handle dtype, bool copy) {
    return astype_op(x, to_dtype(dtype), copy);
  });
  m.def("_copy_", [](const Tensor& dst, const Tensor& src) { copy_(dst, src); });
  m.def("_fill_", [](const Tensor& dst, py::handle value) {
    Scalar s;
    if (!to_scalar(value, s)) throw py::type_error("fill_: expected a Python number");
    check_scalar_fits(s, dst.dtype(), "fill_");
    fill_(dst, s);
  });
  m.def("_clone", [](const Tensor& x) { return clone_op(x); });
  m.def("_contiguous", &contiguous_op);

  // ---- views
  m.def("_reshape", [](const Tensor& x, py::handle shape, int copy) {
    return reshape(x, to_shape(shape, "reshape"), copy);
  });
  m.def("_permute_dims", [](const Tensor& x, py::handle axes) {
    return permute_dims(x, to_shape(axes, "permute_dims"));
  });
  m.def("_expand_dims", &expand_dims);
  m.def("_squeeze",
        [](const Tensor& x, py::handle axes) { return squeeze(x, to_shape(axes, "squeeze")); });
  m.def("_broadcast_to", [](const Tensor& x, py::handle shape) {
    return broadcast_to(x, to_shape(shape, "broadcast_to"));
  });
  m.def("_flip", [](const Tensor& x, py::handle axes) {
    return axes.is_none() ? flip_all(x) : flip(x, to_shape(axes, "flip"));
  });
  m.def("_moveaxis", [](const Tensor& x, py::handle s, py::handle d) {
    return moveaxis(x, to_shape(s, "moveaxis"), to_shape(d, "moveaxis"));
  });
  m.def("_diagonal", &diagonal);
  m.def("view_as_real", &view_as_real, py::arg("input"),
        "A complex tensor's values as (..., 2) floats (real, "
        "imag): a view, so writes reach input. Shapes: (...) complex -> (..., 2) real. "
        "Differentiable (ViewAsRealBackward0).");
  m.def("view_as_complex", &view_as_complex, py::arg("input"),
        "A (..., 2) float32/float64 tensor's pairs as "
        "complex values: a view (the last dim must have stride 1, the other strides and the "
        "offset must be even). Shapes: (..., 2) real -> (...) complex. Differentiable.");
  m.def("_view_dtype",
        [](const Tensor& x, py::handle dtype) { return view_dtype(x, to_dtype(dtype)); });
  m.def("_as_strided", [](const Tensor& x, py::handle shape, py::handle strides, int64_t offset) {
    const Shape s = to_shape(shape, "as_strided"), st = to_shape(strides, "as_strided");
    // From Python any geometry may come: it must stay inside x's storage (PyTorch's check),
    // or reads and writes through it would reach memory the tensor does not own.
    TS_CHECK(offset >= 0, RuntimeError, "as_strided: Negative storage offset ", offset);
    check_in_storage(s, st, offset, x.itemsize(), x.storage()->nbytes, "as_strided");
    return x.as_strided(s, st, offset);
  });

  // ---- linalg core
  m.def(
      "matmul",
      [](py::handle a, py::handle b) {
        return matmul(operand_or_throw(a, "matmul"), operand_or_throw(b, "matmul"));
      },
      py::arg("x1"), py::arg("x2"), py::pos_only(),
      "Matrix product with NumPy's rules for 1-D operands and broadcast batch dims.\n"
      "(..., m, k) @ (..., k, n) -> (..., m, n).");
}

}  // namespace ts::python
