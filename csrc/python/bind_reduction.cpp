// Bindings for the reduction area (see csrc/ops).
#include "python/convert.h"

namespace ts::python {

void init_reduction(py::module_& m) {}

}  // namespace ts::python
