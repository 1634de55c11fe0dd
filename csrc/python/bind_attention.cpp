// Bindings of attention: the op scaled_dot_product_attention (ops/nn/attention.h: picks the
// fused, causal-block, fused-softmax or composite path and records its own node), its path
// settings and trace, and the fused kernels themselves (values only).
#include <pybind11/stl.h>

#include "ops/attention.h"
#include "ops/attention_causal.h"
#include "ops/nn/attention.h"
#include "python/convert.h"

namespace ts::python {

namespace {

py::dict settings_dict() {
  const nn::AttentionSettings& s = nn::attention_settings();
  py::list dtypes;
  for (DType d : s.causal_dtypes) dtypes.append(dtype_name(d));
  py::dict out;
  out["flash_on_cuda"] = s.flash_on_cuda;
  out["flash_on_cpu"] = s.flash_on_cpu;
  out["flash_max_head_dim"] = s.flash_max_head_dim;
  out["flash_max_head_dim_f32"] = s.flash_max_head_dim_f32;
  out["flash_min_score_bytes"] = s.flash_min_score_bytes;
  out["causal_block"] = s.causal_block;
  out["causal_max_blocks"] = s.causal_max_blocks;
  out["causal_dtypes"] = py::tuple(dtypes);
  out["causal_contiguous"] = s.causal_contiguous;
  out["math_sdp"] = s.math_sdp;
  out["flash_sdp"] = s.flash_sdp;
  out["mem_efficient_sdp"] = s.mem_efficient_sdp;
  return out;
}

void set_settings(const py::kwargs& kw) {
  nn::AttentionSettings s = nn::attention_settings();  // all or nothing
  for (auto kv : kw) {
    const std::string k = py::str(kv.first);
    py::handle v = kv.second;
    if (k == "flash_on_cuda") s.flash_on_cuda = v.cast<bool>();
    else if (k == "flash_on_cpu") s.flash_on_cpu = v.cast<bool>();
    else if (k == "flash_max_head_dim") s.flash_max_head_dim = v.cast<int64_t>();
    else if (k == "flash_max_head_dim_f32") s.flash_max_head_dim_f32 = v.cast<int64_t>();
    else if (k == "flash_min_score_bytes") s.flash_min_score_bytes = v.cast<int64_t>();
    else if (k == "causal_block") {
      s.causal_block = v.cast<int64_t>();
      TS_CHECK(s.causal_block > 0, ValueError, "_set_attention_settings: causal_block must be > 0");
    } else if (k == "causal_max_blocks") s.causal_max_blocks = v.cast<int64_t>();
    else if (k == "causal_dtypes") {
      s.causal_dtypes.clear();
      for (py::handle d : v) s.causal_dtypes.push_back(to_dtype(d));
    } else if (k == "causal_contiguous") s.causal_contiguous = v.cast<bool>();
    else if (k == "math_sdp") s.math_sdp = v.cast<bool>();
    else if (k == "flash_sdp") s.flash_sdp = v.cast<bool>();
    else if (k == "mem_efficient_sdp") s.mem_efficient_sdp = v.cast<bool>();
    else
      throw py::type_error("_set_attention_settings(): unknown setting '" + k + "'");
  }
  nn::attention_settings() = s;
}

}  // namespace

void init_attention(py::module_& m) {
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    m.def(
        "scaled_dot_product_attention",
        [](const Tensor& query, const Tensor& key, const Tensor& value,
           const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
           std::optional<double> scale, bool enable_gqa) {
          return nn::scaled_dot_product_attention(query, key, value,
                                                  attn_mask ? *attn_mask : Tensor(), dropout_p,
                                                  is_causal, scale, enable_gqa);
        },
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
        py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("scale") = py::none(),
        py::arg("enable_gqa") = false,
        "scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, "
        "is_causal=False, scale=None, enable_gqa=False)\n--\n\n"
        "softmax(q k^T * scale + mask) v over (..., L, E) x (..., S, E) x (..., S, Ev) -> "
        "(..., L, Ev).\n\n"
        "A bool mask keeps True positions; a float mask is added to the scores. is_causal lets\n"
        "query i attend to keys j <= i (PyTorch's top-left aligned tril(ones(L, S))). scale\n"
        "defaults to 1/sqrt(E); enable_gqa repeats key/value heads to match the query's;\n"
        "dropout_p drops attention probabilities (the default generator's mask, replayed by\n"
        "the backward). Fused kernels where they apply (csrc/ops/nn/attention.h).");
  }
  m.def("_attention_settings", &settings_dict,
        "the path settings of scaled_dot_product_attention (ops/nn/attention.h)");
  m.def("_set_attention_settings", &set_settings,
        "changes path settings of scaled_dot_product_attention (keywords of _attention_settings)");
  m.def(
      "_attention_trace",
      [](bool on) {
        py::list out;
        for (const auto& c : nn::attention_trace())
          out.append(py::make_tuple(c.path, c.device.type == DeviceType::CUDA ? "cuda" : "cpu",
                                    c.block));
        nn::set_attention_trace(on);
        return out;
      },
      py::arg("on"),
      "the fused attention paths taken since the last call, as (path, device type, block); "
      "keeps recording while on");
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
