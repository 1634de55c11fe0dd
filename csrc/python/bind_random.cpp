// The fused dropout (ops/random.h); the generator classes and the state functions are bound in
// bind_generator.cpp, the samplers in bind_random_forms.cpp and bind_random_samplers.cpp.
#include "ops/random.h"
#include "python/convert.h"

namespace ts::python {

void init_random(py::module_& m) {
  m.def("_dropout_scale", &dropout_scale);
  m.def(
      "_dropout",
      [](const Tensor& x, double p, Generator& g, bool inplace) {
        auto [y, mask] = dropout(x, p, g, inplace);
        return py::make_tuple(y, mask);
      },
      py::arg("x"), py::arg("p"), py::arg("generator"), py::arg("inplace") = false,
      "(y, mask): y = x * mask / (1 - p) with mask ~ Bernoulli(1 - p) drawn from the generator "
      "(the same mask on every device for one seed); inplace writes y into x");
}

}  // namespace ts::python
