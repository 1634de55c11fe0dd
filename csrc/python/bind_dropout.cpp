// Bindings of the dropouts (ops/nn/embedding.h's dropout, ops/nn/dropout.h): F.dropout,
// dropout1d/2d/3d, alpha_dropout and feature_alpha_dropout are these entry points themselves,
// with PyTorch's signatures (Note [Readable signatures]). The input is taken as a Python object
// so that a call that returns it (eval mode, p = 0, inplace) returns the same object.
#include "ops/nn/dropout.h"
#include "ops/nn/embedding.h"
#include "python/convert.h"

namespace ts::python {
namespace {

py::object same_or_new(const py::object& input, const Tensor& x, Tensor y) {
  return y.impl() == x.impl() ? input : py::cast(std::move(y));
}

}  // namespace

void init_dropout(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  m.def(
      "dropout",
      [](const py::object& input, double p, bool training, bool inplace) {
        const Tensor& x = tensor_or_throw(input, "dropout", "input");
        return same_or_new(input, x, nn::dropout(x, p, training, inplace, nullptr));
      },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true, py::arg("inplace") = false,
      "dropout(input, p=0.5, training=True, inplace=False)\n--\n\n"
      "Zeroes each element with probability p and scales the rest by 1/(1-p) (training only;\n"
      "p = 1 gives zeros), any shape. The mask is drawn on x's device from the counter-based\n"
      "generator (the same mask on every device for one seed; the C++ op\n"
      "csrc/ops/nn/embedding.h). With inplace, x itself is overwritten and returned.");
  const char* feature_docs[] = {
      "dropout1d(input, p=0.5, training=True, inplace=False)\n--\n\n"
      "Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the\n"
      "rest by 1/(1-p) (the C++ op csrc/ops/nn/dropout.h).",
      "dropout2d(input, p=0.5, training=True, inplace=False)\n--\n\n"
      "Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability p, scaling\n"
      "the rest by 1/(1-p) (the C++ op csrc/ops/nn/dropout.h).",
      "dropout3d(input, p=0.5, training=True, inplace=False)\n--\n\n"
      "Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p,\n"
      "scaling the rest by 1/(1-p) (the C++ op csrc/ops/nn/dropout.h).",
  };
  for (int nsp : {1, 2, 3}) {
    const std::string op = "dropout" + std::to_string(nsp) + "d";
    m.def(
        op.c_str(),
        [op, nsp](const py::object& input, double p, bool training, bool inplace) {
          const Tensor& x = tensor_or_throw(input, op.c_str(), "input");
          return same_or_new(
              input, x, nn::feature_dropout(x, p, training, inplace, nsp, op.c_str(), nullptr));
        },
        py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true,
        py::arg("inplace") = false, feature_docs[nsp - 1]);
  }
  for (bool feature : {false, true}) {
    const std::string op = feature ? "feature_alpha_dropout" : "alpha_dropout";
    const std::string doc =
        op + "(input, p=0.5, training=False, inplace=False)\n--\n\n" +
        (feature ? "alpha_dropout of whole channels of (N, C, *) input"
                 : "Dropout that keeps SELU's zero mean and unit variance: dropped values become\n"
                   "SELU's negative saturation, then an affine map restores the statistics") +
        " (the C++ op\ncsrc/ops/nn/dropout.h).";
    m.def(
        op.c_str(),
        [op, feature](const py::object& input, double p, bool training, bool inplace) {
          const Tensor& x = tensor_or_throw(input, op.c_str(), "input");
          return same_or_new(
              input, x, nn::alpha_dropout(x, p, training, inplace, feature, op.c_str(), nullptr));
        },
        py::arg("input"), py::arg("p") = 0.5, py::arg("training") = false,
        py::arg("inplace") = false, doc.c_str());
  }
}

}  // namespace ts::python
