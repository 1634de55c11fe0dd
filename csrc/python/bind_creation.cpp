// Bindings for the computed-content creation ops (arange, linspace, eye, tril, triu); the
// Python wrappers in python/tessera/_creation.py pick default dtypes.
#include "ops/creation.h"
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
}  // namespace

void init_creation(py::module_& m) {
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
