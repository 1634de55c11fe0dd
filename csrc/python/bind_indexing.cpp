// Bindings for the indexing area (see csrc/ops).
#include "python/convert.h"

namespace ts::python {

void init_indexing(py::module_& m) {}

}  // namespace ts::python
