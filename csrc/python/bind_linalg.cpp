// Bindings of the linalg extension's factorizations (ops/linalg_ext.h) and LinAlgError; the
// Python front with keywords, namedtuples and the composite functions is tessera/linalg.py.
#include "ops/linalg_ext.h"
#include "python/convert.h"

namespace ts::python {

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
}

}  // namespace ts::python
