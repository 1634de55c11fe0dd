// Bindings of the nn ops (ops/nn/: softmax, norms, linear, activations; the losses in
// bind_loss.cpp), which
// tessera.nn.functional's functions call directly, and of the fused kernels under them
// (ops/nn_fused.h: values only, no autograd; tests and benchmarks reach them).
#include <pybind11/stl.h>

#include "ops/batch_norm.h"
#include "ops/linear.h"
#include "ops/nn/activation.h"
#include "ops/nn/embedding.h"
#include "ops/nn/linear.h"
#include "ops/nn/norm.h"
#include "ops/nn/softmax.h"
#include "ops/nn_fused.h"
#include "ops/random.h"
#include "python/convert.h"
#include "python/function_method.h"

namespace ts::python {
namespace {

Window2d window(const std::array<int64_t, 2>& k, const std::array<int64_t, 2>& s,
                const std::array<int64_t, 2>& p, const std::array<int64_t, 2>& d) {
  return Window2d{k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
}

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

py::object opt_out(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

// tessera.nn.functional's fusable(): the fused kernels take floating tensors of one dtype on
// one device (None ignored, anything else refused). In C++ because every fused op asks it on
// each call: 0.3 µs instead of 3.5 µs in Python.
bool fusable(const py::args& xs) {
  const Tensor* first = nullptr;
  for (py::handle h : xs) {
    if (h.is_none()) continue;
    if (!py::isinstance<Tensor>(h)) return false;
    const Tensor& t = h.cast<const Tensor&>();
    if (!first) {
      if (!is_floating(t.dtype())) return false;
      first = &t;
    } else if (t.dtype() != first->dtype() || t.device() != first->device()) {
      return false;
    }
  }
  return first != nullptr;
}

}  // namespace

// arg_errors.cpp: Note [Keyword fast path]
void def_keyword_twin(py::module_& m, const char* name, py::cpp_function twin,
                      const std::vector<std::pair<const char*, py::object>>& params,
                      size_t first_keyword, size_t max_positional, bool refuses = false);

void init_nn(py::module_& m) {
  using A2 = std::array<int64_t, 2>;
  // ---- the ops (arguments parsed here, once; checks, autocast and autograd in the op)
  auto dtype_arg = [](py::handle h) -> std::optional<DType> {
    if (h.is_none()) return std::nullopt;
    return to_dtype(h);
  };
  // nn.functional's entry points themselves (F.softmax is _C.softmax): PyTorch's signatures,
  // readable by inspect.signature (Note [Readable signatures]); non-tensor arguments get
  // PyTorch's TypeError from arg_errors.cpp.
  {
    py::options text_signature;
    text_signature.disable_function_signatures();
    for (bool log : {false, true}) {
      auto fn = [dtype_arg, log](const Tensor& input, std::optional<int64_t> dim, py::handle third,
                                 py::handle dtype) {
        // F.softmax(x, dim, _stacklevel, dtype); torch.softmax(x, dim, dtype): a dtype in
        // third place is torch.softmax's (ts.softmax is this function)
        if (!PyLong_Check(third.ptr())) {
          if (!dtype.is_none())
            throw py::type_error(std::string(log ? "log_softmax" : "softmax") +
                                 ": got dtype both positionally and as a keyword");
          dtype = third;
        }
        return nn::softmax(input, dim, dtype_arg(dtype), log);
      };
      const char* name = log ? "log_softmax" : "softmax";
      m.def(name, fn, py::arg("input"), py::arg("dim") = py::none(), py::arg("_stacklevel") = 3,
            py::arg("dtype") = py::none(),
            log ? "log_softmax(input, dim=None, _stacklevel=3, dtype=None)\n--\n\n"
                  "x - logsumexp(x) along dim (PyTorch's implicit dim when None), any shape, in\n"
                  "dtype if given (the C++ op csrc/ops/nn/softmax.h: one fused pass per row,\n"
                  "gradients of every order)."
                : "softmax(input, dim=None, _stacklevel=3, dtype=None)\n--\n\n"
                  "exp(x) / sum(exp(x)) along dim (PyTorch's implicit dim when None: 0 for 0-, 1-\n"
                  "and 3-D input, else 1), any shape, in dtype if given (the C++ op\n"
                  "csrc/ops/nn/softmax.h: one fused pass per row, gradients of every order).");
      def_keyword_twin(m, name, py::cpp_function(fn, py::name(name)),
                       {{"input", py::object()},
                        {"dim", py::none()},
                        {"_stacklevel", py::int_(3)},
                        {"dtype", py::none()}},
                       0, 4, true);  // input and dim are typed
    }
    bind_functions_as_methods(m, {"softmax", "log_softmax"});  // x.softmax is ts.softmax
    m.def(
        "layer_norm",
        [](const Tensor& input, py::handle normalized_shape, const std::optional<Tensor>& weight,
           const std::optional<Tensor>& bias, double eps) {
          return nn::layer_norm(input, to_shape(normalized_shape, "layer_norm: normalized_shape"),
                                opt(weight), opt(bias), eps);
        },
        py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
        py::arg("bias") = py::none(), py::arg("eps") = 1e-5,
        "layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05)\n--\n\n"
        "Normalizes (*, *normalized_shape) over the trailing normalized_shape dims, then scales\n"
        "by weight and shifts by bias (each of normalized_shape). The C++ op csrc/ops/nn/norm.h:\n"
        "one fused kernel, gradients of every order.");
    m.def(
        "rms_norm",
        [](const Tensor& input, py::handle normalized_shape, const std::optional<Tensor>& weight,
           std::optional<double> eps) {
          return nn::rms_norm(input, to_shape(normalized_shape, "rms_norm: normalized_shape"),
                              opt(weight), eps);
        },
        py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
        py::arg("eps") = py::none(),
        "rms_norm(input, normalized_shape, weight=None, eps=None)\n--\n\n"
        "x / sqrt(mean(x^2) + eps) * weight over the trailing normalized_shape dims; eps\n"
        "defaults to the dtype's machine epsilon (the C++ op csrc/ops/nn/norm.h).");
    m.def(
        "linear",
        [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
          return nn::linear(input, weight, opt(bias));
        },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(),
        "linear(input, weight, bias=None)\n--\n\n"
        "input (..., in_features) @ weight.T + bias, weight (out_features, in_features), bias\n"
        "(out_features,) -> (..., out_features) (the C++ op csrc/ops/nn/linear.h).");
    m.def(
        "gelu",
        [](const Tensor& input, const std::string& approximate) {
          return nn::gelu(input, approximate);
        },
        py::arg("input"), py::arg("approximate") = "none",
        "gelu(input, approximate='none')\n--\n\n"
        "x * Phi(x), any shape; approximate='tanh' uses PyTorch's tanh formula (the C++ op\n"
        "csrc/ops/nn/activation.h: one fused kernel, gradients of every order).");
  }
  m.def("attention_softmax", &nn::attention_softmax, py::arg("scores"), py::arg("scale"),
        py::arg("causal") = false,
        "attention_softmax(scores, scale, causal=False): softmax(scale * scores) over the last "
        "axis of (..., L, S) scores; causal: query i sees keys j <= i (no mask tensor)");

  // ---- the fused kernels (values only)
  m.def("_linear_bias", &linear_bias,
        "x @ w.T + b in one op (the bias fused into the GEMM where the backend can)");
  m.def("_fusable", &fusable,
        "whether the fused kernels take these tensors: floating, one dtype and device");
  m.def("_softmax_last", &softmax_last, "softmax (log_softmax if log) over the last axis");
  m.def("_softmax_last_backward", &softmax_last_backward,
        "input gradient of softmax/log_softmax from its output and output gradient");
  m.def("_attention_softmax", &attention_softmax, py::arg("scores"), py::arg("scale"),
        py::arg("causal"), py::arg("block") = 0,
        "softmax(scale * scores) over the last axis, causal: query i sees keys j <= i");
  m.def("_attention_softmax_backward", &attention_softmax_backward, py::arg("y"), py::arg("gy"),
        py::arg("scale"), py::arg("causal") = false, py::arg("block") = 0,
        "scale * softmax_backward(y, gy): the scores' gradient");
  m.def(
      "_cross_entropy",
      [](const Tensor& x, const Tensor& target, const std::optional<Tensor>& w,
         int64_t ignore_index, double label_smoothing) {
        return cross_entropy_forward(x, target, opt(w), ignore_index, label_smoothing);
      },
      "cross entropy of logits (rows, C) and int64 targets (rows,): (loss, lse, row_weight)");
  m.def(
      "_cross_entropy_backward",
      [](const Tensor& g, const Tensor& x, const Tensor& target, const std::optional<Tensor>& w,
         const Tensor& lse, int64_t ignore_index, double label_smoothing) {
        return cross_entropy_backward(g, x, target, opt(w), lse, ignore_index, label_smoothing);
      },
      "grad logits (rows, C) from the per-row loss gradient (rows,)");
  m.def(
      "_layer_norm",
      [](const Tensor& x, int64_t n, const std::optional<Tensor>& w, const std::optional<Tensor>& b,
         double eps) { return layer_norm_forward(x, n, opt(w), opt(b), eps); },
      "layer norm over the trailing n elements: (y, mean, rstd)");
  m.def(
      "_layer_norm_backward",
      [](const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
         const std::optional<Tensor>& w, bool has_bias) {
        auto [gx, gw, gb] = layer_norm_backward(gy, x, mean, rstd, opt(w), has_bias);
        return py::make_tuple(gx, opt_out(gw), opt_out(gb));
      },
      "(grad_input, grad_weight or None, grad_bias or None)");
  m.def("_gelu", &gelu, "GELU (tanh approximation if tanh_approx)");
  m.def("_gelu_backward", &gelu_backward, "GELU's input gradient");
  m.def("_relu_backward", &relu_backward, "ReLU's input gradient from its output");
  m.def(
      "_im2col",
      [](const Tensor& x, A2 k, A2 s, A2 p, A2 d) { return im2col(x, window(k, s, p, d)); },
      "(N, C, H, W) -> (N, C*kh*kw, Ho*Wo) columns (zero padding)");
  m.def(
      "_col2im",
      [](const Tensor& cols, int64_t c, int64_t h, int64_t w, A2 k, A2 s, A2 p, A2 d) {
        return col2im(cols, c, h, w, window(k, s, p, d));
      },
      "columns -> (N, C, H, W), summing overlapping windows (im2col's adjoint)");
  m.def(
      "_conv2d",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, A2 k, A2 s, A2 p, A2 d) {
        return conv2d_forward(x, w, opt(b), window(k, s, p, d));
      },
      "float32/float64 convolution with groups=1 (zero padding)");
  m.def(
      "_conv2d_backward",
      [](const Tensor& g, const Tensor& x, const Tensor& w, A2 k, A2 s, A2 p, A2 d, bool need_x,
         bool need_w, bool need_b) {
        auto [gx, gw, gb] = conv2d_backward(g, x, w, window(k, s, p, d), need_x, need_w, need_b);
        return py::make_tuple(opt_out(gx), opt_out(gw), opt_out(gb));
      },
      "(grad_input, grad_weight, grad_bias), each None unless asked for");
  m.def(
      "_max_pool2d",
      [](const Tensor& x, A2 k, A2 s, A2 p, A2 d, int64_t oh, int64_t ow) {
        return max_pool2d_with_indices(x, window(k, s, p, d), oh, ow);
      },
      "(values, flat per-plane int64 indices) of 2-D max pooling");
  m.def(
      "_batch_norm",
      [](const Tensor& x, const std::optional<Tensor>& rm, const std::optional<Tensor>& rv,
         const std::optional<Tensor>& w, const std::optional<Tensor>& b, bool training,
         double momentum, double eps) {
        return batch_norm(x, opt(rm), opt(rv), opt(w), opt(b), training, momentum, eps);
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight"),
      py::arg("bias"), py::arg("training"), py::arg("momentum"), py::arg("eps"),
      "PyTorch's F.batch_norm as one fused op (running statistics updated in place)");
  m.def("_max_pool2d_backward", &max_pool2d_backward,
        "scatters the output gradient to the recorded indices of (h, w) planes");
}

}  // namespace ts::python
