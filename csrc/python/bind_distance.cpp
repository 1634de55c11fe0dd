// Bindings of pdist and one_hot (ops/nn/distance.h): tessera.nn.functional's pdist and one_hot
// (and ts.pdist) are these entry points themselves, with PyTorch's signatures (Note [Readable
// signatures]).
#include "ops/nn/distance.h"
#include "python/convert.h"

namespace ts::python {

void init_distance(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def("pdist", &nn::pdist, py::arg("input"), py::arg("p") = 2.0,
        "pdist(input, p=2.0)\n--\n\n"
        "The p-norm distances between the rows of a floating (N, M) input for all pairs i < j\n"
        "in row-major order, shape (N (N - 1) / 2,), as torch.nn.functional.pdist: zero\n"
        "distances get a zero gradient (csrc/ops/nn/distance.h).");
  m.def("one_hot", &nn::one_hot, py::arg("input"), py::arg("num_classes") = -1,
        "one_hot(input, num_classes=-1)\n--\n\n"
        "int64 one-hot encoding of integer class indices along a new last axis, as\n"
        "torch.nn.functional.one_hot; num_classes=-1 infers max + 1 (csrc/ops/nn/distance.h).");
}

}  // namespace ts::python
