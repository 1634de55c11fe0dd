// Binding of gumbel_softmax (ops/nn/gumbel_softmax.h): tessera.nn.functional.gumbel_softmax is
// this entry point itself, with PyTorch's signature (Note [Readable signatures]).
#include "ops/nn/gumbel_softmax.h"
#include "python/convert.h"

namespace ts::python {

void init_gumbel_softmax(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def("gumbel_softmax", &nn::gumbel_softmax, py::arg("logits"), py::arg("tau") = 1.0,
        py::arg("hard") = false, py::arg("eps") = 1e-10, py::arg("dim") = -1,
        "gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1)\n--\n\n"
        "softmax((logits + g) / tau) along dim with g ~ Gumbel(0, 1), as\n"
        "torch.nn.functional.gumbel_softmax; with hard=True the value is the one-hot argmax and\n"
        "the gradient the soft sample's (straight-through); eps is unused\n"
        "(csrc/ops/nn/gumbel_softmax.h).");
}

}  // namespace ts::python
