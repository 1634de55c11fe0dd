// Binding of bilinear (ops/nn/bilinear.h): tessera.nn.functional.bilinear and ts.bilinear are
// this entry point itself, with PyTorch's signature (Note [Readable signatures]).
#include <pybind11/stl.h>

#include "ops/nn/bilinear.h"
#include "python/convert.h"

namespace ts::python {

void init_bilinear(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def("bilinear", &nn::bilinear, py::arg("input1"), py::arg("input2"), py::arg("weight"),
        py::arg("bias") = py::none(),
        "bilinear(input1, input2, weight, bias=None)\n--\n\n"
        "y_k = x1 W_k x2 + b_k for weight (out, in1, in2), as torch.nn.functional.bilinear\n"
        "(csrc/ops/nn/bilinear.h).");
}

}  // namespace ts::python
