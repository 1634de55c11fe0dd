// Bindings of embedding (ops/nn/embedding.h) and embedding_bag (ops/nn/embedding_bag.h):
// tessera.nn.functional.embedding and .embedding_bag are these entry points themselves, with
// PyTorch's signatures (Note [Readable signatures]).
#include <pybind11/stl.h>

#include "ops/nn/embedding.h"
#include "ops/nn/embedding_bag.h"
#include "python/convert.h"

namespace ts::python {

void init_embedding(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  const py::object None = py::none();
  m.def("embedding", &nn::embedding_op, py::arg("input"), py::arg("weight"),
        py::arg("padding_idx") = None, py::arg("max_norm") = None, py::arg("norm_type") = 2.0,
        py::arg("scale_grad_by_freq") = false, py::arg("sparse") = false,
        "embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, "
        "scale_grad_by_freq=False, sparse=False)\n--\n\n"
        "Rows of weight (num, dim) at integer input -> input.shape + (dim,), as\n"
        "torch.nn.functional.embedding: the padding row gets no gradient; max_norm renormalizes\n"
        "the looked-up rows of weight in place first; scale_grad_by_freq divides each row's\n"
        "gradient by its index's count in the batch (csrc/ops/nn/embedding.h).");
  m.def("embedding_bag", &nn::embedding_bag, py::arg("input"), py::arg("weight"),
        py::arg("offsets") = None, py::arg("max_norm") = None, py::arg("norm_type") = 2.0,
        py::arg("scale_grad_by_freq") = false, py::arg("mode") = "mean", py::arg("sparse") = false,
        py::arg("per_sample_weights") = None, py::arg("include_last_offset") = false,
        py::arg("padding_idx") = None,
        "embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2.0, "
        "scale_grad_by_freq=False, mode='mean', sparse=False, per_sample_weights=None, "
        "include_last_offset=False, padding_idx=None)\n--\n\n"
        "(B, dim): the sum / mean / max of each bag's embedding rows, as\n"
        "torch.nn.functional.embedding_bag. Bags are the rows of a 2-D input, or the spans of a\n"
        "1-D input that start at offsets. Empty bags give zeros; padding_idx entries are left\n"
        "out (and not counted by the mean); per_sample_weights scale the rows (mode='sum').\n"
        "The C++ op csrc/ops/nn/embedding_bag.h; gradients from its recorded ops.");
}

}  // namespace ts::python
