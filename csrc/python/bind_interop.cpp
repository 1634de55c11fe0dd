// Bindings for the interop area (see csrc/ops).
#include "python/convert.h"

namespace ts::python {

void init_interop(py::module_& m) {}

}  // namespace ts::python
