// torch's top-level nn functions whose signatures differ from nn.functional's (torch.dropout's
// positional train, torch.batch_norm's argument order, the enum codes of torch.grid_sampler,
// torch.embedding(weight, indices), the RNN cells, torch.convolution): bound into
// _C._torch_nn, which python/tessera/_nn_ops.py re-exports as ts.<name>. Each reaches the C++
// op nn.functional's binding reaches (ops/nn/*.h, ops/conv.h).
#include <pybind11/stl.h>

#include "core/error.h"
#include "ops/conv.h"
#include "ops/nn/activation_pointwise.h"
#include "ops/nn/dropout.h"
#include "ops/nn/embedding.h"
#include "ops/nn/grid_sample.h"
#include "ops/nn/norm.h"
#include "ops/nn/rnn_cell.h"
#include "ops/random.h"
#include "python/convert.h"

namespace ts::python {
namespace {

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

Generator* generator_of(py::handle h) {
  if (h.is_none()) return nullptr;
  return h.cast<Generator*>();
}

// The RNN cells' signature: (input, hx, w_ih, w_hh, b_ih=None, b_hh=None).
template <class Fn>
void def_cell(py::module_& t, const char* name, const char* doc, Fn fn) {
  t.def(name, fn, py::arg("input"), py::arg("hx"), py::arg("w_ih"), py::arg("w_hh"),
        py::arg("b_ih") = py::none(), py::arg("b_hh") = py::none(), doc);
}

}  // namespace

void init_torch_nn(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  py::module_ t = m.attr("_torch_nn");
  const py::none None;

  // ---- dropouts: torch.dropout(input, p, train) and its siblings (positional train)
  t.def(
      "dropout",
      [](const Tensor& input, double p, bool train) {
        return nn::dropout(input, p, train, false, nullptr);
      },
      py::arg("input"), py::arg("p"), py::arg("train"),
      "dropout(input, p, train)\n--\n\n"
      "torch.dropout: F.dropout with positional arguments (csrc/ops/nn/embedding.h).");
  t.def(
      "feature_dropout",
      [](const Tensor& input, double p, bool train) {
        return nn::feature_dropout(input, p, train, false, 0, "feature_dropout", nullptr);
      },
      py::arg("input"), py::arg("p"), py::arg("train"),
      "feature_dropout(input, p, train)\n--\n\n"
      "Zeroes whole channels of (N, C, *) input with probability p, scaling the rest by\n"
      "1/(1-p) (csrc/ops/nn/dropout.h).");
  for (bool feature : {false, true}) {
    const std::string op = feature ? "feature_alpha_dropout" : "alpha_dropout";
    const std::string doc = op + "(input, p, train)\n--\n\ntorch." + op + ": F." + op +
                            " with positional arguments (csrc/ops/nn/dropout.h).";
    t.def(
        op.c_str(),
        [op, feature](const Tensor& input, double p, bool train) {
          return nn::alpha_dropout(input, p, train, false, feature, op.c_str(), nullptr);
        },
        py::arg("input"), py::arg("p"), py::arg("train"), doc.c_str());
  }

  // ---- normalizations (torch's cudnn flags are accepted and ignored)
  t.def(
      "layer_norm",
      [](const Tensor& input, py::handle normalized_shape, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, double eps, bool) {
        return nn::layer_norm(input, to_shape(normalized_shape, "layer_norm: normalized_shape"),
                              opt(weight), opt(bias), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = None,
      py::arg("bias") = None, py::arg("eps") = 1e-5, py::arg("cudnn_enable") = true,
      "layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, "
      "cudnn_enable=True)\n--\n\ntorch.layer_norm: F.layer_norm (csrc/ops/nn/norm.h).");
  t.def(
      "group_norm",
      [](const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, double eps,
         bool) { return nn::group_norm(input, num_groups, opt(weight), opt(bias), eps); },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = None, py::arg("bias") = None,
      py::arg("eps") = 1e-5, py::arg("cudnn_enabled") = true,
      "group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, "
      "cudnn_enabled=True)\n--\n\ntorch.group_norm: F.group_norm (csrc/ops/nn/norm.h).");
  t.def(
      "batch_norm",
      [](const Tensor& input, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
         const std::optional<Tensor>& running_var, bool training, double momentum, double eps,
         bool) {
        return nn::batch_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias),
                              training, momentum, eps);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("running_mean"),
      py::arg("running_var"), py::arg("training"), py::arg("momentum"), py::arg("eps"),
      py::arg("cudnn_enabled"),
      "batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, "
      "cudnn_enabled)\n--\n\n"
      "torch.batch_norm: F.batch_norm with weight and bias before the running statistics\n"
      "(csrc/ops/batch_norm.h).");
  t.def(
      "instance_norm",
      [](const Tensor& input, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
         const std::optional<Tensor>& running_var, bool use_input_stats, double momentum,
         double eps, bool) {
        return nn::instance_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias),
                                 use_input_stats, momentum, eps);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("running_mean"),
      py::arg("running_var"), py::arg("use_input_stats"), py::arg("momentum"), py::arg("eps"),
      py::arg("cudnn_enabled"),
      "instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, "
      "momentum, eps, cudnn_enabled)\n--\n\n"
      "torch.instance_norm: F.instance_norm with weight and bias before the running\n"
      "statistics (csrc/ops/nn/norm.h).");

  // ---- the rest
  t.def(
      "embedding",
      [](const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
         bool) -> py::object {
        const std::optional<int64_t> pad =
            padding_idx < 0 ? std::nullopt : std::optional<int64_t>(padding_idx);
        if (scale_grad_by_freq)  // F.embedding's form of it
          return py::module_::import("tessera.nn.functional")
              .attr("embedding")(indices, weight, pad, py::arg("scale_grad_by_freq") = true);
        return py::cast(nn::embedding(indices, weight, pad));
      },
      py::arg("weight"), py::arg("indices"), py::arg("padding_idx") = -1,
      py::arg("scale_grad_by_freq") = false, py::arg("sparse") = false,
      "embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)\n--\n\n"
      "torch.embedding: the rows of weight at indices (note the argument order; padding_idx\n"
      "-1 for none; csrc/ops/nn/embedding.h).");
  t.def(
      "grid_sampler",
      [](const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
         bool align_corners) {
        static const char* modes[] = {"bilinear", "nearest", "bicubic"};
        static const char* pads[] = {"zeros", "border", "reflection"};
        TS_CHECK(interpolation_mode >= 0 && interpolation_mode < 3 && padding_mode >= 0 &&
                     padding_mode < 3,
                 ValueError, "grid_sampler: unknown interpolation_mode ", interpolation_mode,
                 " or padding_mode ", padding_mode,
                 "; hint: 0 bilinear, 1 nearest, 2 bicubic; 0 zeros, 1 border, 2 reflection");
        return nn::grid_sample(input, grid, modes[interpolation_mode], pads[padding_mode],
                               align_corners);
      },
      py::arg("input"), py::arg("grid"), py::arg("interpolation_mode"), py::arg("padding_mode"),
      py::arg("align_corners"),
      "grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)\n--\n\n"
      "F.grid_sample with torch's integer codes (0 bilinear, 1 nearest, 2 bicubic; 0 zeros,\n"
      "1 border, 2 reflection; csrc/ops/nn/grid_sample.h).");
  t.def(
      "affine_grid_generator",
      [](const Tensor& theta, const std::vector<int64_t>& size, bool align_corners) {
        return nn::affine_grid(theta, size, align_corners);
      },
      py::arg("theta"), py::arg("size"), py::arg("align_corners"),
      "affine_grid_generator(theta, size, align_corners)\n--\n\n"
      "torch.affine_grid_generator: F.affine_grid (csrc/ops/nn/grid_sample.h).");
  t.def(
      "rrelu",
      [](const Tensor& input, double lower, double upper, bool training, py::handle generator) {
        return nn::rrelu(input, lower, upper, training, false, generator_of(generator));
      },
      py::arg("input"), py::arg("lower") = 1.0 / 8, py::arg("upper") = 1.0 / 3,
      py::arg("training") = false, py::arg("generator") = None,
      "rrelu(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None)\n"
      "--\n\ntorch.rrelu (generator= fifth, no inplace; csrc/ops/nn/activation_pointwise.h).");
  t.def(
      "convolution",
      [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
         py::handle stride, py::handle padding, py::handle dilation, bool transposed,
         py::handle output_padding, int64_t groups) {
        const int nsp = static_cast<int>(weight.ndim()) - 2;
        TS_CHECK(nsp >= 1 && nsp <= 3, ValueError,
                 "convolution: expected a 3-D, 4-D or 5-D weight, got ", weight.ndim(),
                 "-D of shape ", shape_str(weight.shape()));
        const std::string op = (transposed ? "conv_transpose" : "conv") + std::to_string(nsp) + "d";
        const Shape s = to_shape(stride, "convolution: stride");
        const Shape p = to_shape(padding, "convolution: padding");
        const Shape d = to_shape(dilation, "convolution: dilation");
        if (transposed)
          return convolution_transpose(input, weight, opt(bias), s, p,
                                       to_shape(output_padding, "convolution: output_padding"),
                                       groups, d, nsp, op.c_str());
        return convolution(input, weight, opt(bias), s, p, "", d, groups, nsp, op.c_str());
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("transposed"), py::arg("output_padding"), py::arg("groups"),
      "convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, "
      "groups)\n--\n\n"
      "torch.convolution: conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's rank\n"
      "(csrc/ops/conv.h).");
  def_cell(
      t, "lstm_cell",
      "lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)\n--\n\n"
      "One LSTM step: hx is (h, c); gates i, f, g, o from input and h; returns (h', c')\n"
      "(csrc/ops/nn/rnn_cell.h).",
      [](const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih, const Tensor& w_hh,
         const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
        TS_CHECK(hx.size() == 2, ValueError, "lstm_cell: hx must be (h, c), got ", hx.size(),
                 " tensors");
        return nn::lstm_cell(input, hx[0], hx[1], w_ih, w_hh, opt(b_ih), opt(b_hh));
      });
  def_cell(t, "gru_cell",
           "gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)\n--\n\n"
           "One GRU step (torch's gate order r, z, n; csrc/ops/nn/rnn_cell.h).",
           [](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
              const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
             return nn::gru_cell(input, hx, w_ih, w_hh, opt(b_ih), opt(b_hh));
           });
  for (bool relu : {false, true}) {
    const char* name = relu ? "rnn_relu_cell" : "rnn_tanh_cell";
    const char* doc = relu ? "rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)\n--\n\n"
                             "relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh) "
                             "(csrc/ops/nn/rnn_cell.h)."
                           : "rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)\n--\n\n"
                             "tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh) "
                             "(csrc/ops/nn/rnn_cell.h).";
    def_cell(t, name, doc,
             [relu](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                    const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
               return nn::rnn_cell(input, hx, w_ih, w_hh, opt(b_ih), opt(b_hh), relu);
             });
  }
}

}  // namespace ts::python
