// Bindings of the fused attention kernels (ops/attention.h); tessera.nn.functional's
// FlashAttention Function wraps them. They compute values only.
#include <pybind11/stl.h>

#include "ops/attention.h"
#include "ops/attention_causal.h"
#include "python/convert.h"

namespace ts::python {

void init_attention(py::module_& m) {
  m.def("_flash_attention", &flash_attention, py::arg("q"), py::arg("k"), py::arg("v"),
        py::arg("scale"), py::arg("causal"), py::arg("dropout_p") = 0.0, py::arg("seed") = 0,
        py::arg("offset") = 0,
        "(out, lse) of softmax(scale * q k^T) v for q (N, L, E), k (N, S, E), v (N, S, Ev); "
        "causal: query i sees keys j <= i; dropout_p drops probabilities with the mask of "
        "_attention_dropout_mask(N, L, S, dropout_p, seed, offset)");
  m.def("_flash_attention_backward", &flash_attention_backward, py::arg("q"), py::arg("k"),
        py::arg("v"), py::arg("out"), py::arg("lse"), py::arg("grad_out"), py::arg("scale"),
        py::arg("causal"), py::arg("dropout_p") = 0.0, py::arg("seed") = 0, py::arg("offset") = 0,
        "(dq, dk, dv) of flash attention from its out, lse and grad_out (the forward's "
        "dropout_p, seed and offset regenerate its dropout mask)");
  m.def(
      "_attention_dropout_mask",
      [](int64_t n, int64_t l, int64_t s, double p, uint64_t seed, uint64_t offset,
         py::handle dtype, py::handle device) {
        return attention_dropout_mask(n, l, s, p, seed, offset,
                                      dtype.is_none() ? DType::Float32 : to_dtype(dtype),
                                      to_device(device));
      },
      py::arg("n"), py::arg("l"), py::arg("s"), py::arg("p"), py::arg("seed"), py::arg("offset"),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "The (n, l, s) tensor of keep / (1 - p) factors the fused attention kernels apply for "
      "dropout (p, seed, offset) (Note [Attention dropout mask])");
  m.def("_causal_block_attention", &causal_block_attention, py::arg("q"), py::arg("k"),
        py::arg("v"), py::arg("scale"), py::arg("block"),
        "(out, p) of causal softmax(scale * q k^T) v by GEMMs on the block lower triangle");
  m.def("_causal_block_attention_backward", &causal_block_attention_backward, py::arg("q"),
        py::arg("k"), py::arg("v"), py::arg("p"), py::arg("grad_out"), py::arg("scale"),
        py::arg("block"), "(dq, dk, dv) of causal block attention from its p and grad_out");
}

}  // namespace ts::python
