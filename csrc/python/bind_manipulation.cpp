// Bindings for the manipulation area (see csrc/ops).
#include "python/convert.h"

namespace ts::python {

void init_manipulation(py::module_& m) {}

}  // namespace ts::python
