// Bindings of cosine_similarity and _scale_grad (ops/nn/similarity.h):
// tessera.nn.functional.cosine_similarity is this entry point itself, with torch's signature (Note
// [Readable signatures]).
#include "ops/nn/similarity.h"
#include "python/convert.h"

namespace ts::python {

void init_similarity(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "cosine_similarity",
      [](const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
        return nn::cosine_similarity(x1, x2, dim, eps);
      },
      py::arg("x1"), py::arg("x2"), py::arg("dim") = 1, py::arg("eps") = 1e-8,
      "cosine_similarity(x1, x2, dim=1, eps=1e-08)\n--\n\n"
      "x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along dim, x1 and x2 broadcast to a\n"
      "common shape first, as torch.nn.functional.cosine_similarity: the clamps' gradient is\n"
      "the identity, so a zero vector's gradient is finite (the C++ op csrc/ops/nn/similarity.h).");
  m.def("_scale_grad", &nn::scale_grad, py::arg("x"), py::arg("scale"),
        "_scale_grad(x, scale)\n--\n\n"
        "A copy of x whose gradient is the incoming one times scale (a constant, broadcast):\n"
        "the gradient scaling of F.embedding(scale_grad_by_freq=True) (csrc/ops/nn/similarity.h).");
}

}  // namespace ts::python
