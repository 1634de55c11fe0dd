// Bindings of the linalg extension's factorizations (ops/linalg_ext.h) and LinAlgError; the
// Python front with keywords, namedtuples and the composite functions is tessera/linalg.py.
#include "ops/linalg_composite.h"
#include "ops/linalg_ext.h"
#include "python/convert.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

// fn(x, rtol) with rtol None (max(M, N) * eps), a number or a tensor broadcasting against the
// batch.
void def_rtol(py::module_& m, const char* name, const char* op,
              Tensor (*fn)(const Tensor&, const std::optional<Tensor>&), const char* doc) {
  m.def(
      name,
      [fn, op](py::handle x, py::handle rtol) {
        return fn(operand_or_throw(x, op), rtol.is_none()
                                               ? std::nullopt
                                               : std::optional<Tensor>(operand_or_throw(rtol, op)));
      },
      py::arg("x"), py::arg("rtol") = py::none(), doc);
}

}  // namespace

void init_linalg(py::module_& m) {
  // Registered after the generic translators, so it is tried first (pybind11 tries the most
  // recently registered translator first) and LinAlgError wins over its ValueError base.
  // Both bases: NumPy's LinAlgError is a ValueError, torch's a RuntimeError, so code written
  // for either catches it.
  py::register_exception<LinAlgError>(
      m, "LinAlgError",
      py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError)));
  m.def("_linalg_cholesky", &cholesky, "Cholesky factor of Hermitian positive-definite matrices");
  m.def("_linalg_det", &det);
  m.def("_linalg_slogdet", &slogdet);
  m.def("_linalg_eigh", &eigh);
  m.def("_linalg_eigvalsh", &eigvalsh);
  m.def("_linalg_inv", &inv);
  m.def("_linalg_solve", &solve);
  m.def("_linalg_qr", &qr);
  m.def("_linalg_svd", &svd);
  m.def("_linalg_svdvals", &svdvals);
  def_rtol(m, "_linalg_pinv", "pinv", &pinv,
           "Moore-Penrose pseudo-inverse (..., M, N) -> (..., N, M) via the SVD");
  def_rtol(m, "_linalg_matrix_rank", "matrix_rank", &matrix_rank,
           "number of singular values above rtol * the largest, int64 (...)");
  m.def(
      "_linalg_vector_norm_inf",
      [](const Tensor& x, py::handle axes, bool keepdims, bool largest) {
        return vector_norm_inf(x, axes.is_none() ? Axes() : Axes(to_shape(axes, "axis")), keepdims,
                               largest);
      },
      py::arg("x"), py::arg("axes"), py::arg("keepdims"), py::arg("largest"),
      "max (largest) or min of |x| over axes, with PyTorch's gradient");
  m.def(
      "_linalg_matrix_power",
      [](py::handle x, py::handle n) {
        return matrix_power(operand_or_throw(x, "matrix_power"), int_arg(n, "matrix_power", "n"));
      },
      py::arg("x"), py::arg("n"), "x @ x @ ... (n times); n = 0 identities, n < 0 the inverse's");
  m.def(
      "_linalg_multi_dot",
      [](py::handle tensors) {
        bool ok = py::isinstance<py::list>(tensors) || py::isinstance<py::tuple>(tensors);
        if (ok)
          for (py::handle t : tensors) ok = ok && py::isinstance<Tensor>(t);
        if (!ok)
          throw py::type_error(
              std::string("linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of "
                          "Tensors, not ") +
              py::type::handle_of(tensors).attr("__name__").cast<std::string>());
        std::vector<Tensor> xs;
        for (py::handle t : tensors) xs.push_back(t.cast<const Tensor&>());
        return multi_dot(xs);
      },
      py::arg("tensors"), "A @ B @ ... of 2-D tensors (first/last may be 1-D)");
}

}  // namespace ts::python
