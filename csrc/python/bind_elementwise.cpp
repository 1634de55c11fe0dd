// The elementwise functions of the array API namespace.
#include "ops/arithmetic.h"
#include "python/elementwise_binding.h"

namespace ts::python {

void init_elementwise(py::module_& m) {
  def_binary_function(m, kAdd, "x1 + x2, broadcasting; Python scalars are weak.");
  def_binary_function(m, kSubtract, "x1 - x2, broadcasting.");
  def_binary_function(m, kMultiply, "x1 * x2, broadcasting.");
  def_binary_function(m, kDivide, "x1 / x2 (true division; integers divide in float32).");
  def_unary_function(m, kNegative, "-x.");
  m.def("conj", [](py::handle x) { return conj(operand_or_throw(x, "conj")); }, py::arg("x"),
        py::pos_only(), "Complex conjugate (real inputs are returned unchanged).");
}

}  // namespace ts::python
