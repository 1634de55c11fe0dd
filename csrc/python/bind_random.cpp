// The Generator engine and the fused dropout (ops/random.h); tessera/random.py is the Python
// front (Generator, the state functions); the samplers are bound in bind_random_forms.cpp and
// bind_random_samplers.cpp.
#include "ops/random.h"
#include "python/convert.h"

namespace ts::python {

void init_random(py::module_& m) {
  py::class_<Generator>(m, "_Generator")
      .def(py::init<uint64_t>())
      .def("manual_seed", &Generator::manual_seed)
      .def("initial_seed", &Generator::seed)
      .def("get_state", [](const Generator& g) { return py::make_tuple(g.seed(), g.offset()); })
      .def("set_state", &Generator::set_state)
      .def(
          "next_philox",
          [](Generator& g, py::handle device) {
            const auto [seed, offset] = g.next_philox(to_device(device));
            return py::make_tuple(seed, offset);
          },
          "(seed, offset) for one op call on `device` (Note [Graph-safe RNG] during a CUDA "
          "graph capture)");
  m.def("_default_generator", &default_generator, py::return_value_policy::reference);
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
